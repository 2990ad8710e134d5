//! OTLP on the wire, against a real OpenTelemetry Collector
//! (`tools/otelcol`: core v0.165.0 and contrib's file exporter, built by
//! the test from pinned Go modules and kept in `target/go-bin`), all on
//! loopback:
//!
//! - `protoprof send` → Collector → file exporter: the file holds what
//!   was sent, for every corpus profile;
//! - Collector OTLP exporters (gRPC and HTTP) → `protoprof receive`: the
//!   kept requests are what the Collector was given;
//! - the same bad requests to the Collector and to `receive` get the same
//!   status and body;
//! - a rule broken is answered with `partial_success`, retries honour
//!   `Retry-After`, large inputs are split, a flood is survived.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{outcome, protoprof};
use protobuf::Message;
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development::ProfilesData;
use protoprof_model_pprof::perftools::profiles::Profile;
use protoprof_net::send::{requests_of, PayloadOptions};
use protoprof_pprof_bridge::development_to_pprof_each;
use protoprof_tests::{corpus_dir, files_under, workspace_root};

/// The Collector's profiles pipeline is alpha, behind this gate.
const PROFILES_GATE: &str = "--feature-gates=+service.profilesSupport";

/// Builds `tools/otelcol` into `target/go-bin/otelcol` unless a build newer
/// than its sources is there; `None` (a skip, a failure under CI) without Go.
fn otelcol_binary() -> Option<PathBuf> {
    let runs = Command::new("go")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !protoprof_tests::available_or_skip(runs, "the Collector tests need go") {
        return None;
    }
    // One build at a time: the tests of this file run in parallel.
    static BUILD: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = BUILD.lock().unwrap_or_else(|e| e.into_inner());
    let root = workspace_root();
    let binary = root.join("target/go-bin/otelcol");
    let sources = root.join("tools/otelcol");
    let modified = |path: &Path| std::fs::metadata(path).and_then(|m| m.modified()).ok();
    let newest_source = ["main.go", "go.mod", "go.sum"]
        .iter()
        .filter_map(|name| modified(&sources.join(name)))
        .max();
    if modified(&binary).is_some_and(|built| Some(built) > newest_source) {
        return Some(binary);
    }
    let mut go = Command::new("go");
    go.args(["build", "-o"])
        .arg(&binary)
        .arg(".")
        .current_dir(&sources);
    go.env("GOFLAGS", "-mod=readonly -modcacherw");
    if std::env::var_os("GOCACHE").is_none() {
        go.env("GOCACHE", root.join("target/go-cache"));
    }
    if std::env::var_os("GOMODCACHE").is_none() && std::env::var_os("HOME").is_none() {
        go.env("GOMODCACHE", root.join("target/go-mod"));
    }
    let status = go.status().expect("go build");
    assert!(status.success(), "go build tools/otelcol");
    Some(binary)
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn wait_for_port(port: u16, child: &mut Child, log: &Path) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(status)) = child.try_wait() {
            let log = std::fs::read_to_string(log).unwrap_or_default();
            panic!("the Collector exited ({status}):\n{log}");
        }
        assert!(Instant::now() < deadline, "nothing listens on {port}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A running Collector with the OTLP receiver on `grpc` and `http`; it
/// stops when dropped.
struct Collector {
    child: Child,
    dir: tempfile::TempDir,
    grpc: u16,
    http: u16,
}

impl Drop for Collector {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Collector {
    /// `exporters` is the YAML of the `exporters:` section (given the
    /// Collector's own directory); every one of them is in the profiles
    /// pipeline.
    fn start(exporters: impl FnOnce(&Path) -> String, names: &[&str]) -> Option<Collector> {
        let binary = otelcol_binary()?;
        let dir = tempfile::tempdir().unwrap();
        let exporters = exporters(dir.path());
        let (grpc, http) = (free_port(), free_port());
        let config = format!(
            "receivers:\n  otlp:\n    protocols:\n      grpc:\n        endpoint: 127.0.0.1:{grpc}\n      \
             http:\n        endpoint: 127.0.0.1:{http}\nexporters:\n{exporters}\nservice:\n  telemetry:\n    \
             metrics:\n      level: none\n  pipelines:\n    profiles:\n      receivers: [otlp]\n      \
             exporters: [{}]\n",
            names.join(", ")
        );
        let config_path = dir.path().join("config.yaml");
        std::fs::write(&config_path, config).unwrap();
        let log = dir.path().join("collector.log");
        let mut child = Command::new(binary)
            .arg("--config")
            .arg(&config_path)
            .arg(PROFILES_GATE)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("the Collector starts");
        wait_for_port(grpc, &mut child, &log);
        wait_for_port(http, &mut child, &log);
        Some(Collector {
            child,
            dir,
            grpc,
            http,
        })
    }

    /// A Collector writing what it receives to a file (`format: proto`).
    fn with_file_exporter() -> Option<(Collector, PathBuf)> {
        let exporters = |dir: &Path| {
            let out = dir.join("file-exporter.pb");
            format!(
                "  file:\n    path: {}\n    format: proto\n    flush_interval: 100ms",
                out.display()
            )
        };
        let collector = Collector::start(exporters, &["file"])?;
        let out = collector.dir.path().join("file-exporter.pb");
        Some((collector, out))
    }
}

/// A running `protoprof receive` on free ports; stops when dropped.
struct Receive {
    child: Child,
    grpc: String,
    http: String,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Drop for Receive {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Receive {
    fn start(dir: &Path, args: &[&str]) -> Receive {
        let binary = assert_cmd::cargo::cargo_bin("protoprof");
        let mut child = Command::new(binary)
            .args(["receive", "--grpc", "127.0.0.1:0", "--http", "127.0.0.1:0"])
            .args(args)
            .current_dir(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let (sender, lines) = std::sync::mpsc::channel();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let address = || {
            let line = lines
                .recv_timeout(Duration::from_secs(20))
                .expect("a listening line");
            line.rsplit_once(' ').expect("… on ADDRESS").1.to_string()
        };
        let (grpc, http) = (address(), address());
        Receive {
            child,
            grpc,
            http,
            lines,
        }
    }

    /// The next `n` request lines.
    fn requests(&self, n: usize) -> Vec<String> {
        (0..n)
            .map(|_| {
                self.lines
                    .recv_timeout(Duration::from_secs(30))
                    .expect("a request line")
            })
            .collect()
    }
}

/// The corpus profiles `send` takes: every pprof profile and every OTLP
/// v1development file, but the one pprof profile the bridge refuses (its
/// functions share id 0), which `send` must refuse too.
fn corpus_profiles(corpus: &Path) -> Vec<PathBuf> {
    let mut files = files_under(&corpus.join("pprof"));
    files.extend(files_under(&corpus.join("otlp/v1development")));
    files.retain(|f| !f.ends_with("dotnet-multi-function-id-0.pb"));
    files.sort();
    files
}

/// What `send` sends for `path`, request by request.
fn sent_for(path: &Path, max_request_bytes: usize) -> Vec<Result<Vec<(String, Profile)>, String>> {
    let options = PayloadOptions {
        max_request_bytes,
        ..PayloadOptions::default()
    };
    let bytes = std::fs::read(path).unwrap();
    requests_of(&path.display().to_string(), bytes, &options)
        .unwrap()
        .iter()
        .filter(|r| r.samples > 0)
        .map(|r| normalized(&r.bytes))
        .collect()
}

/// What a request says, in a form that does not depend on how it was
/// written: each profile as the lossless bridge makes it pprof, its
/// profile id cleared (the bridge gives each conversion a random one).
///
/// The Collector writes the same content differently: pdata moves inline
/// attribute keys and string values into the string table
/// (`key_strindex`, `string_value_strindex`) and leaves out the all-zero
/// ids of the link table's first entry.
///
/// A request the bridge cannot convert (the corpus's corrupted stack
/// index) is its conversion error: the same broken index at the same path.
fn normalized(bytes: &[u8]) -> Result<Vec<(String, Profile)>, String> {
    let mut data = ProfilesData::parse_from_bytes(bytes).unwrap();
    for resource in &mut data.resource_profiles {
        for scope in &mut resource.scope_profiles {
            for profile in &mut scope.profiles {
                profile.profile_id.clear();
            }
        }
    }
    let each = development_to_pprof_each(&data).map_err(|e| format!("{e:?}"))?;
    Ok(each
        .into_iter()
        .map(|(name, converted)| (name, converted.value))
        .collect())
}

/// The messages of a file in the file exporter's framing (4-byte
/// big-endian length, message), once `n` are there.
fn framed_messages(path: &Path, n: usize) -> Vec<Vec<u8>> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let bytes = std::fs::read(path).unwrap_or_default();
        let mut messages = Vec::new();
        let mut rest = &bytes[..];
        while rest.len() >= 4 {
            let length = u32::from_be_bytes(rest[..4].try_into().unwrap()) as usize;
            if rest.len() < 4 + length {
                break;
            }
            messages.push(rest[4..4 + length].to_vec());
            rest = &rest[4 + length..];
        }
        if messages.len() >= n || Instant::now() > deadline {
            return messages;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn send(dir: &Path, args: &[&str]) -> (i32, String, String) {
    outcome(protoprof(dir).arg("send").args(args).output().unwrap())
}

#[test]
fn what_send_gives_the_collector_is_what_its_file_exporter_writes() {
    let Some(corpus) = corpus_dir() else { return };
    let Some((collector, out)) = Collector::with_file_exporter() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let files = corpus_profiles(&corpus);
    let endpoint = format!("http://127.0.0.1:{}", collector.http);
    let mut args = vec!["--endpoint".to_string(), endpoint];
    args.extend(files.iter().map(|f| f.display().to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (status, stdout, stderr) = send(dir.path(), &args);
    assert_eq!(status, 0, "{stdout}{stderr}");
    assert_eq!(
        stdout.matches(": accepted").count(),
        files.len(),
        "{stdout}"
    );
    let expected: Vec<_> = files.iter().flat_map(|f| sent_for(f, 20 << 20)).collect();
    // The Collector drops a request without samples before its pipeline;
    // `sent_for` leaves those out.
    let written = framed_messages(&out, expected.len());
    assert_eq!(
        written.len(),
        expected.len(),
        "messages in the file exporter's output"
    );
    for (n, (written, expected)) in written.iter().zip(&expected).enumerate() {
        assert!(
            normalized(written) == *expected,
            "message {n} differs from what was sent"
        );
    }
}

#[test]
fn each_protocol_and_compression_reaches_the_collector() {
    let Some(corpus) = corpus_dir() else { return };
    let Some((collector, out)) = Collector::with_file_exporter() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = corpus.join("pprof/go/go-heap.pb.gz");
    let file = file.to_str().unwrap();
    let http = format!("http://127.0.0.1:{}", collector.http);
    let grpc = format!("127.0.0.1:{}", collector.grpc);
    let runs: [&[&str]; 4] = [
        &["--endpoint", &grpc, "--protocol", "grpc"],
        &[
            "--endpoint",
            &grpc,
            "--protocol",
            "grpc",
            "--compression",
            "gzip",
        ],
        &["--endpoint", &http, "--protocol", "http/json"],
        &[
            "--endpoint",
            &http,
            "--protocol",
            "http/json",
            "--compression",
            "gzip",
        ],
    ];
    for args in runs {
        let (status, stdout, stderr) = send(dir.path(), &[args, &[file]].concat());
        assert_eq!(status, 0, "send {args:?}: {stdout}{stderr}");
    }
    // The variables of an SDK exporter, instead of options.
    let output = protoprof(dir.path())
        .args(["send", file])
        .env(
            "OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT",
            format!("{http}/v1development/profiles"),
        )
        .env("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip")
        .env("OTEL_EXPORTER_OTLP_HEADERS", "x-tenant=team%20a")
        .output()
        .unwrap();
    let (status, stdout, stderr) = outcome(output);
    assert_eq!(status, 0, "{stdout}{stderr}");
    let expected = sent_for(Path::new(file), 20 << 20);
    let written = framed_messages(&out, 5);
    assert_eq!(written.len(), 5);
    for written in &written {
        assert!(
            normalized(written) == expected[0],
            "a protocol changed the profile"
        );
    }
}

#[test]
fn the_collectors_exporters_deliver_to_receive_what_it_was_given() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let kept = dir.path().join("kept.pb");
    let receive = Receive::start(dir.path(), &["--out-framed", kept.to_str().unwrap()]);
    let exporters = format!(
        "  otlp_grpc:\n    endpoint: {}\n    tls:\n      insecure: true\n  otlp_http:\n    endpoint: http://{}",
        receive.grpc, receive.http
    );
    let Some(collector) = Collector::start(|_| exporters, &["otlp_grpc", "otlp_http"]) else {
        return;
    };
    let files = [
        corpus.join("pprof/real/java-jfr-cpu.pb.gz"),
        corpus.join("otlp/v1development/v1development-1.10-ebpf-export-request.pb"),
    ];
    let endpoint = format!("http://127.0.0.1:{}", collector.http);
    for file in &files {
        let (status, stdout, stderr) = send(
            dir.path(),
            &["--endpoint", &endpoint, file.to_str().unwrap()],
        );
        assert_eq!(status, 0, "{stdout}{stderr}");
    }
    // Each request, once over gRPC and once over HTTP, in either order.
    let lines = receive.requests(4);
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("gRPC ")).count(),
        2,
        "{lines:?}"
    );
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("HTTP ")).count(),
        2,
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .all(|l| l.ends_with(&format!("valid (kept in {})", kept.display()))),
        "{lines:?}"
    );
    let expected: Vec<_> = files.iter().flat_map(|f| sent_for(f, 20 << 20)).collect();
    let mut kept = framed_messages(&kept, 4)
        .iter()
        .map(|m| normalized(m))
        .collect::<Vec<_>>();
    assert_eq!(kept.len(), 4);
    for expected in &expected {
        let found = kept.iter().filter(|k| *k == expected).count();
        assert_eq!(
            found, 2,
            "a request the Collector was given arrived {found} times, not twice"
        );
    }
    kept.clear();
}

/// An HTTP/1.1 exchange on a fresh connection: (status, content type,
/// body). Written by hand so that any request, however wrong, can be sent.
fn exchange(address: &str, head: &str, body: &[u8]) -> (u16, String, Vec<u8>) {
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let request = format!(
        "{head}\r\nHost: {address}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    // A server may answer and close before reading a body it refuses.
    let _ = stream.write_all(body);
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let split = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a response head");
    let head = String::from_utf8_lossy(&answer[..split]).into_owned();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let content_type = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-type:")
                .map(|v| v.trim().to_string())
        })
        .unwrap_or_default();
    (status, content_type, answer[split + 4..].to_vec())
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    protoprof_codec::gzip::compress(bytes, 6).unwrap()
}

/// The first bytes of a `google.rpc.Status` with `code`, and its message.
fn status_code_and_message(body: &[u8]) -> (u8, String) {
    assert_eq!(body[0], 0x08, "a google.rpc.Status: {body:?}");
    (body[1], String::from_utf8_lossy(&body[4..]).into_owned())
}

#[test]
fn receive_answers_bad_requests_as_the_collector_does() {
    let Some(corpus) = corpus_dir() else { return };
    let Some(collector) = Collector::start(|_| "  nop:".to_string(), &["nop"]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let receive = Receive::start(dir.path(), &["--max-request-size", "1MiB"]);
    let valid =
        std::fs::read(corpus.join("otlp/v1development/v1development-1.10-ebpf-export-request.pb"))
            .unwrap();
    let path = "/v1development/profiles";
    let post = |ct: &str, extra: &str| format!("POST {path} HTTP/1.1\r\nContent-Type: {ct}{extra}");
    let protobuf = post("application/x-protobuf", "");
    let json = post("application/json", "");
    let gzipped = post("application/x-protobuf", "\r\nContent-Encoding: gzip");
    let brotli = post("application/x-protobuf", "\r\nContent-Encoding: br");
    let truncated_gzip = gzip(&valid)[..100].to_vec();
    let bomb = gzip(&vec![0u8; 2 << 20]);
    let big = vec![0u8; (1 << 20) + 1];
    let cases: Vec<(&str, String, Vec<u8>)> = vec![
        ("valid", protobuf.clone(), valid.clone()),
        ("valid, gzip", gzipped.clone(), gzip(&valid)),
        ("empty", protobuf.clone(), Vec::new()),
        ("empty JSON", json.clone(), b"{}".to_vec()),
        ("garbage", protobuf.clone(), b"garbage!".to_vec()),
        ("garbage JSON", json.clone(), b"xx".to_vec()),
        (
            "truncated",
            protobuf.clone(),
            valid[..valid.len() / 2].to_vec(),
        ),
        ("text/plain", post("text/plain", ""), b"x".to_vec()),
        (
            "no content type",
            format!("POST {path} HTTP/1.1"),
            valid.clone(),
        ),
        ("GET", format!("GET {path} HTTP/1.1"), Vec::new()),
        (
            "PUT",
            format!("PUT {path} HTTP/1.1\r\nContent-Type: application/x-protobuf"),
            valid.clone(),
        ),
        (
            "another path",
            "POST /v1/profiles HTTP/1.1\r\nContent-Type: application/x-protobuf".into(),
            valid.clone(),
        ),
        ("brotli", brotli, valid.clone()),
        ("truncated gzip", gzipped.clone(), truncated_gzip),
        ("gzip bomb", gzipped, bomb),
        ("too large", protobuf, big),
    ];
    let collector_http = format!("127.0.0.1:{}", collector.http);
    for (name, head, body) in &cases {
        // The Collector's limit is 20 MiB; receive's is set to 1 MiB here:
        // the bodies too large for receive are made 20× larger for the Collector.
        let collector_body = match *name {
            "too large" => vec![0u8; (20 << 20) + 1],
            "gzip bomb" => gzip(&vec![0u8; 21 << 20]),
            _ => body.clone(),
        };
        let theirs = exchange(&collector_http, head, &collector_body);
        let ours = exchange(&receive.http, head, body);
        assert_eq!(ours.0, theirs.0, "{name}: status");
        assert_eq!(
            ours.1,
            theirs.1.replace("; charset=utf-8", ""),
            "{name}: content type"
        );
        match (theirs.0, theirs.1.as_str()) {
            // Decoding errors are said in each decoder's words.
            (400, "application/x-protobuf") => {
                assert_eq!(
                    status_code_and_message(&ours.2).0,
                    status_code_and_message(&theirs.2).0,
                    "{name}"
                );
                if matches!(*name, "brotli" | "too large" | "gzip bomb") {
                    assert_eq!(ours.2, theirs.2, "{name}: body");
                }
            }
            (400, _) => assert!(
                String::from_utf8_lossy(&ours.2).starts_with("{\"code\":3,"),
                "{name}"
            ),
            _ => assert_eq!(ours.2, theirs.2, "{name}: body"),
        }
    }
}
