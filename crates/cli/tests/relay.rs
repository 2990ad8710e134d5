//! `protoprof relay serve`, `push` and `watch` against each other, as three
//! processes on loopback: what a person runs in three terminals.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use protobuf::well_known_types::any::Any;
use protobuf::{Message, MessageField};
use protoprof_model_relay::envoy::config::core::v3::ControlPlane;
use protoprof_model_relay::envoy::service::discovery::v3::{DiscoveryResponse, Resource};

const PLANE: &str = "type.googleapis.com/envoy.config.core.v3.ControlPlane";

fn protoprof() -> Command {
    Command::new(assert_cmd::cargo::cargo_bin("protoprof"))
}

/// A child process that is interrupted (SIGINT) and reaped when dropped.
struct Running(Child);

impl Running {
    fn interrupt(&mut self) {
        let _ = Command::new("kill")
            .args(["-INT", &self.0.id().to_string()])
            .status();
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
        }
        let _ = self.0.wait();
    }
}

/// Reads lines of a child's standard output until one satisfies `wanted`.
fn wait_for_line(child: &mut Child, wanted: impl Fn(&str) -> bool) -> String {
    let stdout = child.stdout.as_mut().expect("piped stdout");
    let mut reader = BufReader::new(stdout);
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut line = String::new();
    while Instant::now() < deadline {
        line.clear();
        if reader.read_line(&mut line).expect("readable stdout") == 0 {
            panic!("the process ended before printing the line wanted");
        }
        if wanted(line.trim_end()) {
            return line.trim_end().to_string();
        }
    }
    panic!("no such line within 30 s");
}

fn plane(identifier: &str, name: Option<&str>) -> Any {
    let any = Any::pack(&ControlPlane {
        identifier: identifier.into(),
        ..ControlPlane::default()
    })
    .unwrap();
    match name {
        None => any,
        Some(name) => Any::pack(&Resource {
            name: name.into(),
            resource: MessageField::some(any),
            ..Resource::default()
        })
        .unwrap(),
    }
}

fn response_file(dir: &std::path::Path, file: &str, resources: Vec<Any>) -> std::path::PathBuf {
    let response = DiscoveryResponse {
        type_url: PLANE.into(),
        resources,
        ..DiscoveryResponse::default()
    };
    let path = dir.join(file);
    std::fs::write(&path, response.write_to_bytes().unwrap()).unwrap();
    path
}

fn serve() -> (Running, String) {
    serve_with(&[])
}

fn serve_with(extra: &[&str]) -> (Running, String) {
    let mut relay = protoprof()
        .args(["relay", "serve", "--listen", "127.0.0.1:0"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("protoprof relay serve");
    let line = wait_for_line(&mut relay, |l| l.starts_with("listening on "));
    let address = line.trim_start_matches("listening on ").to_string();
    (Running(relay), address)
}

fn watch(address: &str, extra: &[&str]) -> Vec<serde_json::Value> {
    let output = protoprof()
        .args([
            "relay",
            "watch",
            "--relay",
            address,
            "--type-url",
            PLANE,
            "--format",
            "json",
        ])
        .args(extra)
        .output()
        .expect("protoprof relay watch");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect()
}

fn names(update: &serde_json::Value) -> Vec<(String, String)> {
    update["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let name = r["name"].as_str().unwrap().to_string();
            let identifier = r["message"]["identifier"]
                .as_str()
                .unwrap_or("")
                .to_string();
            (name, identifier)
        })
        .collect()
}

#[test]
fn serve_push_and_watch_work_against_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let (mut relay, address) = serve();
    let a = response_file(
        dir.path(),
        "a.pb",
        vec![plane("a-1", Some("one")), plane("a-2", Some("two"))],
    );
    let b = response_file(dir.path(), "b.pb", vec![plane("b-2", Some("two"))]);

    let mut push_a = Running(
        protoprof()
            .args(["relay", "push", "--relay", &address, "--hold"])
            .arg(&a)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    wait_for_line(&mut push_a.0, |l| l.starts_with("ACK "));
    let mut push_b = Running(
        protoprof()
            .args(["relay", "push", "--relay", &address, "--delta", "--hold"])
            .arg(&b)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    wait_for_line(&mut push_b.0, |l| l.starts_with("ACK "));

    let capture = dir.path().join("capture.bin");
    let sotw = watch(
        &address,
        &["--count", "1", "--capture", capture.to_str().unwrap()],
    );
    let merged = vec![("one".into(), "a-1".into()), ("two".into(), "b-2".into())];
    assert_eq!(names(&sotw[0]), merged);
    let delta = watch(&address, &["--count", "1", "--delta"]);
    assert_eq!(names(&delta[0]), merged);

    // The capture is gRPC frames that `frames` decodes, and that push replays.
    let frames = protoprof()
        .args(["frames", "--format", "json", "--decode"])
        .arg(&capture)
        .output()
        .unwrap();
    assert!(
        frames.status.success(),
        "{}",
        String::from_utf8_lossy(&frames.stderr)
    );
    let listed: serde_json::Value = serde_json::from_slice(&frames.stdout).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(
        listed[0]["type"],
        "envoy.service.discovery.v3.DiscoveryResponse"
    );

    // B leaves: its copy of "two" goes and A's comes back.
    push_b.interrupt();
    assert!(push_b.0.wait().unwrap().success());
    let after = watch(&address, &["--count", "1"]);
    assert_eq!(
        names(&after[0]),
        vec![("one".into(), "a-1".into()), ("two".into(), "a-2".into())]
    );

    relay.interrupt();
    assert!(relay.0.wait().unwrap().success());
    let mut log = String::new();
    std::io::Read::read_to_string(relay.0.stderr.as_mut().unwrap(), &mut log).unwrap();
    assert!(
        log.contains("management server (delta)") && log.contains("shutting down"),
        "{log}"
    );
    drop(push_a);
}

#[test]
fn push_reports_a_nack_with_status_1_and_refuses_broken_files_with_2() {
    let dir = tempfile::tempdir().unwrap();
    let (_relay, address) = serve_with(&["--max-resources-per-server", "1"]);
    let one = response_file(dir.path(), "one.pb", vec![plane("a", Some("a"))]);
    let ok = protoprof()
        .args(["relay", "push", "--relay", &address])
        .arg(&one)
        .output()
        .unwrap();
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert!(String::from_utf8_lossy(&ok.stdout).contains(&format!("ACK {PLANE}")));

    let two = response_file(
        dir.path(),
        "two.pb",
        vec![plane("a", Some("a")), plane("b", Some("b"))],
    );
    let nacked = protoprof()
        .args(["relay", "push", "--relay", &address])
        .arg(&two)
        .output()
        .unwrap();
    assert_eq!(nacked.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&nacked.stdout);
    assert!(
        stdout.contains(&format!("NACK {PLANE}: relay limit: 2 resources")),
        "{stdout}"
    );

    // A wrapper that does not decode is refused before anything is sent.
    let broken = Any {
        type_url: "type.googleapis.com/envoy.service.discovery.v3.Resource".into(),
        value: vec![0x12, 0xff],
        ..Any::default()
    };
    let bad = response_file(dir.path(), "bad.pb", vec![broken]);
    let refused = protoprof()
        .args(["relay", "push", "--relay", &address])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("resources[0]"));
}

#[test]
fn push_to_nothing_says_where_it_could_not_connect() {
    let dir = tempfile::tempdir().unwrap();
    let file = response_file(dir.path(), "a.pb", vec![plane("a", None)]);
    let output = protoprof()
        .args(["relay", "push", "--relay", "127.0.0.1:1", "--timeout", "10"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("127.0.0.1:1") && stderr.contains("cannot connect"),
        "{stderr}"
    );
}

/// A resource type protoprof does not ship, decoded by `watch` from the
/// user's `.proto` file (`--proto`): here `shop.v1.Item` of the tests'
/// schema, pushed as the relay carries any type.
#[test]
fn watch_decodes_a_resource_type_of_the_users_schema() {
    const ITEM: &str = "type.googleapis.com/shop.v1.Item";
    let dir = tempfile::tempdir().unwrap();
    let (_relay, address) = serve();
    // shop.v1.Item { id: 7 name: "widget" }, encoded by hand.
    let item = [&[0x08, 0x07, 0x12, 0x06][..], b"widget"].concat();
    let resource = Resource {
        name: "widget".into(),
        resource: MessageField::some(Any {
            type_url: ITEM.into(),
            value: item,
            ..Any::default()
        }),
        ..Resource::default()
    };
    let response = DiscoveryResponse {
        type_url: ITEM.into(),
        resources: vec![Any::pack(&resource).unwrap()],
        ..DiscoveryResponse::default()
    };
    let file = dir.path().join("items.pb");
    std::fs::write(&file, response.write_to_bytes().unwrap()).unwrap();
    let mut push = Running(
        protoprof()
            .args(["relay", "push", "--relay", &address, "--hold"])
            .arg(&file)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    wait_for_line(&mut push.0, |l| l.starts_with("ACK "));
    let schemas = protoprof_tests::workspace_root().join("crates/cli/tests/schemas");
    let proto = schemas.join("shop/kinds.proto");
    let output = protoprof()
        .arg("-I")
        .arg(&schemas)
        .arg("--proto")
        .arg(&proto)
        .args(["relay", "watch", "--relay", &address, "--type-url", ITEM])
        .args(["--format", "json", "--count", "1"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let update: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let message = &update["resources"][0]["message"];
    assert_eq!(
        message,
        &serde_json::json!({"id": 7, "name": "widget"}),
        "{update}"
    );
}
