//! Golden wire bytes written by hand from the protobuf encoding rules: each
//! message encodes to exactly these bytes, and the bytes decode back to it.

use protobuf::well_known_types::any::Any;
use protobuf::{Message, MessageField};
use protoprof_model_otlp::opentelemetry::proto::common::v1::{any_value, AnyValue, KeyValue};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental as otlp;
use protoprof_model_pprof::perftools::profiles as pprof;
use protoprof_model_relay::envoy::config::core::v3::ControlPlane;
use protoprof_model_relay::envoy::service::discovery::v3::{
    DeltaDiscoveryRequest, DiscoveryRequest, DiscoveryResponse,
};
use protoprof_model_relay::google::rpc::Status;
use protoprof_tests::hex;

/// Encode equals `golden`, and decoding `golden` gives `message` back.
fn assert_golden<M: Message + PartialEq + std::fmt::Debug>(message: &M, golden: &[u8]) {
    let encoded = message.write_to_bytes().expect("encode");
    assert_eq!(encoded, golden, "encoding of {message:?}");
    let decoded = M::parse_from_bytes(golden).expect("decode golden bytes");
    assert_eq!(&decoded, message);
}

fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn pprof_string_table_only() {
    let profile = pprof::Profile {
        string_table: strings(&["", "cpu"]),
        ..Default::default()
    };
    // Field 6, length-delimited (tag 0x32): "" then "cpu".
    assert_golden(&profile, &hex("32 00  32 03 63 70 75"));
}

#[test]
fn pprof_profile_with_sample_and_location() {
    let profile = pprof::Profile {
        sample_type: vec![pprof::ValueType {
            type_: 1,
            unit: 2,
            ..Default::default()
        }],
        sample: vec![pprof::Sample {
            location_id: vec![1, 2],
            value: vec![10, -1],
            ..Default::default()
        }],
        location: vec![pprof::Location {
            id: 1,
            address: 0x1000,
            ..Default::default()
        }],
        string_table: strings(&["", "cpu", "nanoseconds"]),
        time_nanos: 1,
        ..Default::default()
    };
    let golden = hex(concat!(
        "0a 04 08 01 10 02",                            // sample_type {type 1, unit 2}
        "12 11 0a 02 01 02",                            // sample: location_id packed [1, 2]
        "      12 0b 0a ff ff ff ff ff ff ff ff ff 01", //   value packed [10, -1 as 10 bytes]
        "22 05 08 01 18 80 20",                         // location {id 1, address 0x1000}
        "32 00 32 03 63 70 75",                         // string_table "", "cpu"
        "32 0b 6e 61 6e 6f 73 65 63 6f 6e 64 73",       //   "nanoseconds"
        "48 01",                                        // time_nanos 1 (field 9, varint)
    ));
    assert_golden(&profile, &golden);
}

#[test]
fn pprof_location_with_inlined_line_and_no_mapping() {
    let location = pprof::Location {
        id: 1,
        mapping_id: 0, // proto3 default: not written
        line: vec![pprof::Line {
            function_id: 1,
            line: 42,
            column: 7,
            ..Default::default()
        }],
        is_folded: true,
        ..Default::default()
    };
    assert_golden(&location, &hex("08 01  22 06 08 01 10 2a 18 07  28 01"));
}

#[test]
fn pprof_label_and_mapping() {
    let label = pprof::Label {
        key: 3,
        num: -5,
        num_unit: 4,
        ..Default::default()
    };
    assert_golden(
        &label,
        &hex("08 03  18 fb ff ff ff ff ff ff ff ff 01  20 04"),
    );
    let mapping = pprof::Mapping {
        id: 1,
        memory_start: 0x400000,
        memory_limit: 0x500000,
        filename: 2,
        has_functions: true,
        ..Default::default()
    };
    assert_golden(
        &mapping,
        &hex("08 01  10 80 80 80 02  18 80 80 c0 02  28 02  38 01"),
    );
}

#[test]
fn otlp_profile_container() {
    let container = otlp::ProfileContainer {
        profile_id: (1..=16).collect(),
        start_time_unix_nano: 1000,
        end_time_unix_nano: 2000,
        attributes: vec![KeyValue {
            key: "service.name".into(),
            value: MessageField::some(AnyValue {
                value: Some(any_value::Value::StringValue("demo".into())),
                ..Default::default()
            }),
            ..Default::default()
        }],
        profile: MessageField::some(otlp::Profile {
            string_table: strings(&[""]),
            ..Default::default()
        }),
        ..Default::default()
    };
    let golden = hex(concat!(
        "0a 10 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f 10", // profile_id, 16 bytes
        "11 e8 03 00 00 00 00 00 00",                            // start, fixed64 LE
        "19 d0 07 00 00 00 00 00 00",                            // end, fixed64 LE
        "22 16 0a 0c 73 65 72 76 69 63 65 2e 6e 61 6d 65",       // attributes: key "service.name"
        "      12 06 0a 04 64 65 6d 6f",                         //   value {string_value "demo"}
        "42 02 32 00",                                           // profile {string_table [""]}
    ));
    assert_golden(&container, &golden);
}

#[test]
fn otlp_profile_with_tables_and_stack_slice() {
    let profile = otlp::Profile {
        sample_type: vec![otlp::ValueType {
            type_: 1,
            unit: 2,
            aggregation_temporality:
                otlp::AggregationTemporality::AGGREGATION_TEMPORALITY_CUMULATIVE.into(),
            ..Default::default()
        }],
        sample: vec![otlp::Sample {
            locations_start_index: 0,
            locations_length: 2,
            value: vec![5],
            attributes: vec![0],
            ..Default::default()
        }],
        location: vec![
            otlp::Location {
                address: 0x10,
                ..Default::default()
            },
            otlp::Location {
                address: 0x20,
                line: vec![otlp::Line::default()],
                ..Default::default()
            },
        ],
        location_indices: vec![0, 1],
        function: vec![otlp::Function {
            name: 1,
            ..Default::default()
        }],
        attribute_table: vec![KeyValue {
            key: "thread".into(),
            value: MessageField::some(AnyValue {
                value: Some(any_value::Value::IntValue(7)),
                ..Default::default()
            }),
            ..Default::default()
        }],
        link_table: vec![otlp::Link {
            trace_id: vec![0xaa; 16],
            span_id: vec![0xbb; 8],
            ..Default::default()
        }],
        string_table: strings(&["", "main"]),
        ..Default::default()
    };
    let golden = hex(concat!(
        "0a 06 08 01 10 02 18 02",       // sample_type, temporality CUMULATIVE (2)
        "12 08 12 01 05 40 02 52 01 00", // sample: value [5], locations_length 2, attributes [0]
        "22 02 18 10",                   // location {address 0x10}
        "22 04 18 20 22 00",             // location {address 0x20, line [{}]}
        "2a 02 10 01",                   // function {name 1}
        "32 00 32 04 6d 61 69 6e",       // string_table "", "main"
        "7a 02 00 01",                   // location_indices (15) packed [0, 1]
        "82 01 0c 0a 06 74 68 72 65 61 64 12 02 18 07", // attribute_table (16): thread = 7
        "92 01 1c 0a 10 aa aa aa aa aa aa aa aa aa aa aa aa aa aa aa aa", // link_table (18)
        "         12 08 bb bb bb bb bb bb bb bb",
    ));
    assert_golden(&profile, &golden);
}

#[test]
fn relay_discovery_request_nack() {
    let request = DiscoveryRequest {
        version_info: "1".into(),
        resource_names: strings(&["a"]),
        type_url: "t".into(),
        response_nonce: "n".into(),
        error_detail: MessageField::some(Status {
            code: 3,
            message: "bad".into(),
            ..Default::default()
        }),
        ..Default::default()
    };
    let golden = hex("0a 01 31  1a 01 61  22 01 74  2a 01 6e  32 07 08 03 12 03 62 61 64");
    assert_golden(&request, &golden);
}

#[test]
fn relay_delta_request_with_map() {
    let mut request = DeltaDiscoveryRequest {
        type_url: "t".into(),
        ..Default::default()
    };
    request
        .initial_resource_versions
        .insert("a".into(), "1".into());
    // Map entries are messages {key = 1, value = 2} in field 5.
    assert_golden(&request, &hex("12 01 74  2a 06 0a 01 61 12 01 31"));
}

#[test]
fn relay_discovery_response_with_any() {
    const URL: &str = "type.googleapis.com/envoy.config.core.v3.ControlPlane";
    let control_plane = ControlPlane {
        identifier: "cp".into(),
        ..Default::default()
    };
    let response = DiscoveryResponse {
        resources: vec![Any::pack(&control_plane).expect("pack")],
        type_url: URL.into(),
        nonce: "7".into(),
        ..Default::default()
    };
    assert_eq!(URL.len(), 0x35);
    let golden = [
        &hex("12 3d 0a 35")[..], // resources[0]: Any {type_url (53 bytes)
        URL.as_bytes(),
        &hex("12 04 0a 02 63 70 22 35"), //   value ControlPlane{identifier "cp"}}, type_url
        URL.as_bytes(),
        &hex("2a 01 37"), // nonce "7"
    ]
    .concat();
    assert_golden(&response, &golden);
    let unpacked = response.resources[0]
        .unpack::<ControlPlane>()
        .expect("unpack");
    assert_eq!(unpacked, Some(control_plane));
}
