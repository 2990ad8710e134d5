//! The relay under load: management servers upstreaming, proxies watching.
//!
//! Starts `protoprof relay serve` as its own process (so its peak RSS is the
//! relay's alone), subscribes the proxies (delta, the relay's
//! `SubscribeDeltaResources`), then has every management server upstream
//! its resources at once and holds the streams. Reports how long the relay
//! took to ACK everything (ingest) and until every proxy held the whole
//! merge (fan-out), then how long one server leaving takes to reach every
//! proxy, and the relay's peak RSS. Clients share the 2-core machine with
//! the relay, so the figures are for the whole system.
//!
//! `cargo build --release -p protoprof-cli -p protoprof-bench && target/release/relay-bench
//! [--servers 100] [--resources 1000] [--proxies 1000]` (docs/PERFORMANCE.md).

use std::io::{BufRead, BufReader};
use std::ops::ControlFlow;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use protobuf::well_known_types::any::Any;
use protobuf::MessageField;
use protoprof_model_relay::envoy::service::discovery::v3::Resource;
use protoprof_relay::push::{push, PushEvent, PushOptions, Upstream};
use protoprof_relay::watch::{watch, Update, WatchOptions};
use protoprof_relay::NamedResource;
use tokio::sync::{mpsc, oneshot};

const TYPE_URL: &str = "type.googleapis.com/quilkin.config.v1alpha1.Cluster";

struct Shape {
    servers: usize,
    resources: usize,
    proxies: usize,
}

fn parse_args() -> Shape {
    let mut shape = Shape {
        servers: 100,
        resources: 1000,
        proxies: 1000,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    for pair in args.chunks(2) {
        let value = || {
            pair.get(1)
                .and_then(|v| v.parse().ok())
                .expect("a number after each option")
        };
        match pair[0].as_str() {
            "--servers" => shape.servers = value(),
            "--resources" => shape.resources = value(),
            "--proxies" => shape.proxies = value(),
            other => {
                panic!("unknown option {other}; options: --servers N --resources N --proxies N")
            }
        }
    }
    shape
}

/// About 100 bytes of cluster: a name and padding in an unknown field.
fn resource(name: &str) -> NamedResource {
    let mut value = vec![0x0a, name.len() as u8];
    value.extend_from_slice(name.as_bytes());
    value.extend_from_slice(&[0x7a, 80]);
    value.extend(std::iter::repeat_n(b'x', 80));
    NamedResource::from_delta(Resource {
        name: name.into(),
        resource: MessageField::some(Any {
            type_url: TYPE_URL.into(),
            value,
            ..Any::default()
        }),
        ..Resource::default()
    })
}

impl Shape {
    /// A tenth of each server's names are the same on every server, with the
    /// same content: the merge has overlaps to resolve, and a proxy's count of
    /// what it holds stays exact.
    fn shared(&self) -> usize {
        self.resources / 10
    }

    /// Each server's names of its own.
    fn own(&self) -> usize {
        self.resources - self.shared()
    }
}

fn upstream_of(server: usize, shape: &Shape) -> Upstream {
    let mut upstream = Upstream::default();
    for i in 0..shape.resources {
        let name = if i < shape.shared() {
            format!("shared-{i}")
        } else {
            format!("s{server}-r{i}")
        };
        upstream.add(resource(&name));
    }
    upstream
}

fn merged_size(shape: &Shape) -> u64 {
    (shape.shared() + shape.servers * shape.own()) as u64
}

/// The relay's log goes to target/relay-bench.log.
fn relay_log() -> Stdio {
    std::fs::File::create("target/relay-bench.log").map_or(Stdio::null(), Stdio::from)
}

/// The relay as a child process; its address.
fn start_relay() -> (std::process::Child, String) {
    let exe = std::env::current_exe().expect("own path");
    let protoprof = exe.with_file_name("protoprof");
    let mut child = Command::new(&protoprof)
        .args([
            "relay",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--max-streams",
            "100000",
        ])
        .args(["--max-message-bytes", "268435456", "--type-url", TYPE_URL])
        .stdout(Stdio::piped())
        .stderr(relay_log())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "{}: {e} (build it with cargo build --release -p protoprof-cli)",
                protoprof.display()
            )
        });
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    let address = line.trim().trim_start_matches("listening on ").to_string();
    (child, address)
}

/// User + system CPU seconds of a process (Linux: /proc/PID/stat, in clock ticks of 1/100 s).
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after_name = stat.rsplit(')').next().unwrap_or("");
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // Fields 14 and 15 of stat (utime, stime) are 11 and 12 after the name.
    (ticks(11) + ticks(12)) / 100.0
}

fn peak_rss_mb(pid: u32) -> (f64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |key: &str| {
        status
            .lines()
            .find(|l| l.starts_with(key))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<f64>().ok())
            .map_or(0.0, |kb| kb / 1024.0)
    };
    (field("VmHWM:"), field("VmRSS:"))
}

/// A proxy counting what it holds; `reached` is told each time it comes to
/// hold `target` resources, `first` when its first update arrives.
fn spawn_proxy(
    address: String,
    target: Arc<AtomicU64>,
    reached: mpsc::UnboundedSender<()>,
    first: mpsc::UnboundedSender<()>,
) {
    tokio::spawn(async move {
        let options = WatchOptions {
            type_urls: vec![TYPE_URL.into()],
            delta: true,
            via_ads: false,
            identifier: "bench-proxy".into(),
        };
        let (mut started, mut held) = (false, 0u64);
        let mut on_update = |update: &Update| {
            if let Update::Delta(r) = update {
                let added = r.message.resources.len() as u64;
                let removed = r.message.removed_resources.len() as u64;
                held = held + added - removed;
                if !started {
                    started = true;
                    let _ = first.send(());
                }
                if held == target.load(Ordering::Relaxed) && (added > 0 || removed > 0) {
                    let _ = reached.send(());
                }
            }
            ControlFlow::Continue(())
        };
        let _ = watch(&address, &options, &mut on_update).await;
    });
}

async fn wait_n(receiver: &mut mpsc::UnboundedReceiver<()>, n: usize) {
    for _ in 0..n {
        tokio::time::timeout(Duration::from_secs(300), receiver.recv())
            .await
            .expect("in time")
            .expect("open");
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let shape = parse_args();
    let (mut relay, address) = start_relay();
    let total = merged_size(&shape);
    let target = Arc::new(AtomicU64::new(total));
    let (reached_tx, mut reached) = mpsc::unbounded_channel();
    let (first_tx, mut first) = mpsc::unbounded_channel();
    let started = Instant::now();
    for _ in 0..shape.proxies {
        spawn_proxy(
            address.clone(),
            target.clone(),
            reached_tx.clone(),
            first_tx.clone(),
        );
    }
    wait_n(&mut first, shape.proxies).await;
    let subscribed = started.elapsed();

    let (acked_tx, mut acked) = mpsc::unbounded_channel();
    let mut leave = Vec::new();
    let start = Instant::now();
    for server in 0..shape.servers {
        let (stop, stopped) = oneshot::channel::<()>();
        leave.push(stop);
        let (address, acked_tx, upstream) = (
            address.clone(),
            acked_tx.clone(),
            upstream_of(server, &shape),
        );
        tokio::spawn(async move {
            let options = PushOptions {
                delta: true,
                hold: true,
                identifier: format!("bench-server-{server}"),
            };
            let mut on_event = |e: &PushEvent| {
                if matches!(e, PushEvent::Acked { .. }) {
                    let _ = acked_tx.send(());
                }
            };
            let until = async {
                let _ = stopped.await;
            };
            // The stream ends in error when the relay is stopped at the end.
            let _ = push(&address, &upstream, &options, until, &mut on_event).await;
        });
    }
    wait_n(&mut acked, shape.servers).await;
    let ingest = start.elapsed();
    wait_n(&mut reached, shape.proxies).await;
    let fan_out = start.elapsed();

    // One server leaves: its own resources disappear from every proxy.
    assert!(shape.own() > 0, "--resources must be at least 2");
    target.store(total - shape.own() as u64, Ordering::Relaxed);
    let leave_start = Instant::now();
    let _ = leave.pop().expect("a server").send(());
    wait_n(&mut reached, shape.proxies).await;
    let left = leave_start.elapsed();
    let (peak, rss) = peak_rss_mb(relay.id());
    let relay_cpu = cpu_seconds(relay.id());
    let _ = relay.kill();
    let _ = relay.wait();

    let resources = (shape.servers * shape.resources) as f64;
    let delivered = total as f64 * shape.proxies as f64;
    println!("| servers × resources | proxies | merged | subscribe | ingest (all ACKed) | fan-out (every proxy holds the merge) | one server leaves | relay CPU | relay peak RSS (now) |");
    println!("|---|---|---|---|---|---|---|---|---|");
    println!(
        "| {} × {} | {} | {} | {:.2} s | {:.2} s ({:.0} resources/s) | {:.2} s ({:.0} resource deliveries/s) | {:.2} s | {:.1} s | {:.0} MB ({:.0} MB) |",
        shape.servers, shape.resources, shape.proxies, total,
        subscribed.as_secs_f64(),
        ingest.as_secs_f64(), resources / ingest.as_secs_f64(),
        fan_out.as_secs_f64(), delivered / fan_out.as_secs_f64(),
        left.as_secs_f64(), relay_cpu, peak, rss,
    );
}
