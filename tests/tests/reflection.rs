//! Tools can find any message by its full protobuf name and decode with it.

use protobuf::Message;
use protoprof_model_meta::Schema;
use protoprof_model_pprof::perftools::profiles::Profile;
use protoprof_tests::{corpus_dir, read_profile_bytes};

static ALL: [&Schema; 3] = [
    &protoprof_model_pprof::SCHEMA,
    &protoprof_model_otlp::SCHEMA,
    &protoprof_model_relay::SCHEMA,
];

fn find(full_name: &str) -> Option<protobuf::reflect::MessageDescriptor> {
    ALL.iter().find_map(|s| s.message_by_full_name(full_name))
}

#[test]
fn every_message_is_found_by_its_full_name() {
    let mut count = 0;
    for schema in ALL {
        for message in schema.messages() {
            let found = schema
                .message_by_full_name(message.full_name())
                .expect("found");
            assert_eq!(found.full_name(), message.full_name());
            count += 1;
        }
    }
    // pprof 8; OTLP 41 (common 6, resource 1, pprofextended 10, profiles 4,
    // collector 3, v1development 14 and its collector 3); relay 10 (core 3,
    // discovery 6, rpc 1). Map entries are not types.
    assert_eq!(count, 59);
    assert!(find(".envoy.service.discovery.v3.Resource.CacheControl").is_some());
    assert!(find("perftools.profiles.Nope").is_none());
    assert!(find("perftools.profile.Profile").is_none());
}

#[test]
fn dynamic_decode_by_name_equals_typed_decode() {
    let Some(corpus) = corpus_dir() else { return };
    let bytes = read_profile_bytes(&corpus.join("pprof/real/go-heap.pb.gz"));
    let descriptor = find("perftools.profiles.Profile").expect("Profile");
    let dynamic = descriptor.parse_from_bytes(&bytes).expect("dynamic decode");
    let typed = Profile::parse_from_bytes(&bytes).expect("typed decode");
    assert!(descriptor.eq(&*dynamic, &typed));
    let samples = descriptor.field_by_name("sample").unwrap();
    assert_eq!(samples.get_repeated(&*dynamic).len(), typed.sample.len());
    assert!(!typed.sample.is_empty());
}

#[test]
fn service_table_gives_grpc_paths_and_streaming() {
    let relay = protoprof_model_relay::SCHEMA
        .service("quilkin.relay.v1alpha1.AggregatedControlPlaneDiscoveryService")
        .expect("relay service");
    let paths: Vec<String> = relay.methods.iter().map(|m| m.grpc_path(relay)).collect();
    assert_eq!(
        paths,
        [
            "/quilkin.relay.v1alpha1.AggregatedControlPlaneDiscoveryService/StreamAggregatedResources",
            "/quilkin.relay.v1alpha1.AggregatedControlPlaneDiscoveryService/DeltaAggregatedResources",
            "/quilkin.relay.v1alpha1.AggregatedControlPlaneDiscoveryService/SubscribeDeltaResources",
        ]
    );
    // Reversed roles: the client streams responses up.
    assert_eq!(
        relay.methods[0].input,
        "envoy.service.discovery.v3.DiscoveryResponse"
    );
    assert!(relay
        .methods
        .iter()
        .all(|m| m.client_streaming && m.server_streaming));

    let export = protoprof_model_otlp::SCHEMA
        .service("opentelemetry.proto.collector.profiles.v1experimental.ProfilesService")
        .expect("export service");
    let method = &export.methods[0];
    assert_eq!(
        method.grpc_path(export),
        "/opentelemetry.proto.collector.profiles.v1experimental.ProfilesService/Export"
    );
    assert!(!method.client_streaming && !method.server_streaming);
    // Every request and response type of every service resolves to a message.
    for schema in ALL {
        for service in schema.services {
            for m in service.methods {
                assert!(
                    find(m.input).is_some() && find(m.output).is_some(),
                    "{}",
                    m.name
                );
            }
        }
    }
}
