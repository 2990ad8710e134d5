//! The relay against an independent gRPC stack: Python grpcio with Envoy's
//! generated xDS classes (`tools/python-xds/xds_proxy.py`) subscribes through
//! Envoy's ADS, in state of the world and in delta, and reads the clusters
//! with Envoy's own `Cluster` class.

mod common;

use std::process::Command;

use common::TestRelay;
use protobuf::well_known_types::any::Any;
use protobuf::MessageField;
use protoprof_model_relay::envoy::service::discovery::v3::Resource;
use protoprof_relay::push::Upstream;
use protoprof_relay::{Limits, NamedResource};

const ENVOY_CLUSTER: &str = "type.googleapis.com/envoy.config.cluster.v3.Cluster";

/// An `envoy.config.cluster.v3.Cluster` with only its name (field 1).
fn cluster(resource_name: &str, cluster_name: &str) -> NamedResource {
    let mut value = vec![0x0a, cluster_name.len() as u8];
    value.extend_from_slice(cluster_name.as_bytes());
    NamedResource::from_delta(Resource {
        name: resource_name.into(),
        resource: MessageField::some(Any {
            type_url: ENVOY_CLUSTER.into(),
            value,
            ..Any::default()
        }),
        ..Resource::default()
    })
}

fn python_proxy(python: &std::path::Path, address: &str, delta: bool) -> serde_json::Value {
    let script = protoprof_tests::workspace_root().join("tools/python-xds/xds_proxy.py");
    let mut command = Command::new(python);
    command.arg(script).args([
        "--relay",
        address,
        "--type-url",
        ENVOY_CLUSTER,
        "--count",
        "2",
    ]);
    if delta {
        command.arg("--delta");
    }
    let output = command.output().expect("python runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("JSON from the Python proxy")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_xds_client_subscribes_through_ads() {
    let Some(python) = protoprof_tests::python_xds() else {
        return;
    };
    let relay = TestRelay::start(Limits::default()).await;
    let mut a = Upstream::default();
    a.add(cluster("backend", "backend-from-a"));
    a.add(cluster("frontend", "frontend-from-a"));
    let mut b = Upstream::default();
    b.add(cluster("backend", "backend-from-b"));
    let _a = relay.hold(a, false).await;
    let _b = relay.hold(b, true).await;

    let expected = serde_json::json!({"backend": "backend-from-b", "frontend": "frontend-from-a"});
    for delta in [false, true] {
        let address = relay.address.clone();
        let python = python.clone();
        let seen = tokio::task::spawn_blocking(move || python_proxy(&python, &address, delta))
            .await
            .unwrap();
        assert_eq!(seen["resources"], expected, "delta {delta}: {seen}");
    }
    // The Python proxy ACKed every response: no NACK was logged.
    let nacks: Vec<_> = relay
        .events()
        .into_iter()
        .filter(|e| matches!(e, protoprof_relay::Event::NackReceived { .. }))
        .collect();
    assert!(nacks.is_empty(), "{nacks:?}");
}
