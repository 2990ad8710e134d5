//! `cargo xtask bench-receive`: OTLP profiles through a receiver, on this
//! machine. `protoprof receive` (every request decoded and validated;
//! once more with `--store`, each request written to a profile store)
//! against the OpenTelemetry Collector's `otlpreceiver` with a nop
//! exporter (`tools/otelcol`), both over OTLP/HTTP on loopback: requests/s
//! and MB/s for eBPF-shaped exports of each size, each receiver's CPU time
//! per request and peak memory, and its peak memory and answers under a
//! flood; and `protoprof store add` of the same exports as files, one
//! process each.
//!
//! ```text
//! cargo xtask bench-receive [--sizes 1,10] [--megabytes 400] [--clients 4] [--flood 64]
//! ```

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::bench::{corpus_dir, go_build, repeat_resources, run};

/// What to measure.
struct Plan {
    sizes: Vec<usize>,
    /// Megabytes sent per measurement (the requests are of one size).
    megabytes: usize,
    clients: usize,
    /// Clients of the flood, each sending 10 MB requests.
    flood: usize,
}

fn plan(args: &[&str]) -> Result<Plan> {
    let mut plan = Plan {
        sizes: vec![1, 10],
        megabytes: 400,
        clients: 4,
        flood: 64,
    };
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        let value = args
            .next()
            .with_context(|| format!("{flag} needs a value"))?;
        match *flag {
            "--sizes" => plan.sizes = crate::bench::parse_sizes(value)?,
            "--megabytes" => plan.megabytes = value.parse().context("--megabytes")?,
            "--clients" => plan.clients = value.parse().context("--clients")?,
            "--flood" => plan.flood = value.parse().context("--flood")?,
            other => bail!("unknown option {other}"),
        }
    }
    Ok(plan)
}

pub fn bench_receive(root: &Path, args: &[&str]) -> Result<()> {
    let plan = plan(args)?;
    let (protoprof, otelcol) = build(root)?;
    println!(
        "| receiver | export | requests | clients | requests/s | MB/s | CPU per request | peak RSS |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for &mb in &plan.sizes {
        let body = export(root, mb)?;
        let requests = (plan.megabytes / mb).max(plan.clients);
        let receivers = [
            Receiver::Protoprof,
            Receiver::ProtoprofStore,
            Receiver::Collector,
        ];
        for receiver in receivers {
            let server = Server::start(receiver, &protoprof, &otelcol)?;
            let load = Load {
                body: &body,
                requests,
                clients: plan.clients,
            };
            let cpu_before = server.cpu_seconds();
            let result = load.run(server.port)?;
            let cpu = server.cpu_seconds() - cpu_before;
            let rss = server.peak_rss_kb();
            let seconds = result.elapsed.as_secs_f64();
            println!(
                "| {} | {:.1} MB | {} | {} | {:.1} | {:.0} | {:.1} ms | {} MB |",
                receiver.name(),
                body.len() as f64 / 1e6,
                result.ok,
                plan.clients,
                result.ok as f64 / seconds,
                (result.ok * body.len()) as f64 / 1e6 / seconds,
                cpu * 1e3 / result.ok.max(1) as f64,
                rss / 1024
            );
            if result.refused > 0 {
                bail!("{} refused {} requests", receiver.name(), result.refused);
            }
        }
    }
    store_add(root, &plan, &protoprof)?;
    flood(root, &plan, (&protoprof, &otelcol))
}

/// `protoprof store add` of each size's export as a file (its profiles
/// given times of their own, as a request's are), into a new store, three
/// times: the median's profiles/s and MB/s.
fn store_add(root: &Path, plan: &Plan, protoprof: &Path) -> Result<()> {
    println!();
    println!("| store add | export | profiles | seconds (median of 3) | profiles/s | MB/s |");
    println!("|---|---|---|---|---|---|");
    for &mb in &plan.sizes {
        let body = export(root, mb)?;
        let times = ProfileTimes::of(&body);
        let dir = tempfile::tempdir()?;
        let file = dir.path().join("export.pb");
        std::fs::write(&file, times.request(&body, 0))?;
        let mut seconds = Vec::new();
        for n in 0..3 {
            let store = dir.path().join(format!("store-{n}"));
            let started = Instant::now();
            let mut command = Command::new(protoprof);
            command.arg("store").arg("add").arg(&store).arg(&file);
            run(command.stdout(Stdio::null()))?;
            seconds.push(started.elapsed().as_secs_f64());
        }
        seconds.sort_by(f64::total_cmp);
        let (median, profiles) = (seconds[1], times.offsets.len());
        println!(
            "| {} MB | {:.1} MB | {profiles} | {median:.3} | {:.0} | {:.1} |",
            mb,
            body.len() as f64 / 1e6,
            profiles as f64 / median,
            body.len() as f64 / 1e6 / median
        );
    }
    Ok(())
}

/// `plan.flood` clients at once, each sending 10 MB exports, three each:
/// the peak memory and how many were refused (503/429).
fn flood(root: &Path, plan: &Plan, (protoprof, otelcol): (&Path, &Path)) -> Result<()> {
    let body = export(root, 10)?;
    println!();
    println!("| receiver under a flood | clients | accepted | refused | peak RSS |");
    println!("|---|---|---|---|---|");
    for receiver in [Receiver::Protoprof, Receiver::Collector] {
        let server = Server::start(receiver, protoprof, otelcol)?;
        let load = Load {
            body: &body,
            requests: plan.flood * 3,
            clients: plan.flood,
        };
        let result = load.run(server.port)?;
        println!(
            "| {} | {} | {} | {} | {} MB |",
            receiver.name(),
            plan.flood,
            result.ok,
            result.refused,
            server.peak_rss_kb() / 1024
        );
    }
    Ok(())
}

/// Builds the release CLI and the Collector.
fn build(root: &Path) -> Result<(PathBuf, PathBuf)> {
    run(crate::cargo::cargo(root).args(["build", "--quiet", "--release", "-p", "protoprof-cli"]))?;
    let otelcol = root.join("target/go-bin/otelcol");
    go_build(root, &root.join("tools/otelcol"), &otelcol)?;
    Ok((crate::bench::release_dir(root).join("protoprof"), otelcol))
}

/// An eBPF-shaped v1development export of about `mb` MB (the corpus's
/// capture, its resources repeated), made once.
fn export(root: &Path, mb: usize) -> Result<Vec<u8>> {
    let path = root.join(format!("target/synth/ebpf-{mb}MB.v1development.pb"));
    if !path.exists() {
        let capture =
            corpus_dir(root).join("otlp/v1development/v1development-1.10-ebpf-export-request.pb");
        let bytes = std::fs::read(&capture).with_context(|| capture.display().to_string())?;
        std::fs::create_dir_all(path.parent().unwrap())?;
        std::fs::write(&path, repeat_resources(&bytes, mb << 20)?)?;
    }
    std::fs::read(&path).with_context(|| path.display().to_string())
}

#[derive(Clone, Copy)]
enum Receiver {
    Protoprof,
    /// `receive --store`: each request also written to a profile store
    /// and synced before the answer.
    ProtoprofStore,
    Collector,
}

impl Receiver {
    fn name(self) -> &'static str {
        match self {
            Receiver::Protoprof => "protoprof receive (validating)",
            Receiver::ProtoprofStore => "protoprof receive --store (validating, synced)",
            Receiver::Collector => "Collector otlpreceiver → nop",
        }
    }
}

/// A receiver process on a free loopback port; killed when dropped.
struct Server {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn start(receiver: Receiver, protoprof: &Path, otelcol: &Path) -> Result<Server> {
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let dir = tempfile::tempdir()?;
        let address = format!("127.0.0.1:{port}");
        let mut command = match receiver {
            Receiver::Protoprof => {
                let mut c = Command::new(protoprof);
                c.args(["receive", "--http", &address, "--max-request-size", "64MiB"]);
                c
            }
            Receiver::ProtoprofStore => {
                let mut c = Command::new(protoprof);
                c.args(["receive", "--http", &address, "--max-request-size", "64MiB"]);
                c.arg("--store").arg(dir.path().join("store"));
                c
            }
            Receiver::Collector => {
                let config = dir.path().join("config.yaml");
                std::fs::write(&config, collector_config(&address))?;
                let mut c = Command::new(otelcol);
                c.arg("--config").arg(&config);
                c.arg("--feature-gates=+service.profilesSupport");
                c
            }
        };
        let child = command
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(&address).is_err() {
            if Instant::now() > deadline {
                bail!("{} did not listen on {address}", receiver.name());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(Server {
            child,
            port,
            _dir: dir,
        })
    }

    /// The CPU time the process has used so far (user and system, all its
    /// threads), in seconds: `utime` and `stime` of `/proc/PID/stat`, in
    /// Linux's clock ticks of 1/100 s.
    fn cpu_seconds(&self) -> f64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id()));
        let stat = stat.unwrap_or_default();
        // Fields after the command, which is in parentheses and may hold
        // spaces: the state is field 3, utime 14 and stime 15.
        let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        let fields: Vec<&str> = after.split_whitespace().collect();
        let ticks = |n: usize| fields.get(n - 3).and_then(|f| f.parse::<u64>().ok());
        (ticks(14).unwrap_or(0) + ticks(15).unwrap_or(0)) as f64 / 100.0
    }

    /// The process's peak resident set so far (`VmHWM`), in kB.
    fn peak_rss_kb(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()));
        status
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }
}

fn collector_config(address: &str) -> String {
    format!(
        "receivers:\n  otlp:\n    protocols:\n      http:\n        endpoint: {address}\n        \
         max_request_body_size: 67108864\nexporters:\n  nop:\nservice:\n  telemetry:\n    metrics:\n      \
         level: none\n  pipelines:\n    profiles:\n      receivers: [otlp]\n      exporters: [nop]\n"
    )
}

/// `requests` posts of `body` from `clients` threads, each request's
/// profiles made its own (see [`ProfileTimes`]).
struct Load<'a> {
    body: &'a [u8],
    requests: usize,
    clients: usize,
}

/// Where each profile's `time_unix_nano` is in an export made by
/// repeating a capture's resources. Every copy of a profile says the same,
/// and a store keeps a profile once: a store receiving the same export
/// over and over would store only the first. Each request's copy of the
/// export gets times of its own (a nanosecond apart), so every profile of
/// every request is a profile to store, as in a fleet's exports.
struct ProfileTimes {
    offsets: Vec<usize>,
    time: u64,
}

/// A `Profile.time_unix_nano` on the wire: field 3, fixed64.
const TIME_TAG: u8 = 3 << 3 | 1;

impl ProfileTimes {
    /// The most frequent fixed64 after a field-3 tag that reads as a time
    /// between 2001 and 2100: the capture's profiles' time.
    fn of(body: &[u8]) -> ProfileTimes {
        let plausible = 1_000_000_000_000_000_000..4_102_444_800_000_000_000;
        let mut counts = std::collections::HashMap::<u64, Vec<usize>>::new();
        for at in 0..body.len().saturating_sub(9) {
            if body[at] == TIME_TAG {
                let value = u64::from_le_bytes(body[at + 1..at + 9].try_into().unwrap());
                if plausible.contains(&value) {
                    counts.entry(value).or_default().push(at + 1);
                }
            }
        }
        let (time, offsets) = counts
            .into_iter()
            .max_by_key(|(time, offsets)| (offsets.len(), *time))
            .unwrap_or_default();
        ProfileTimes { offsets, time }
    }

    /// `body` with request `n`'s times.
    fn request(&self, body: &[u8], n: usize) -> Vec<u8> {
        let mut out = body.to_vec();
        let first = self.time + (n * self.offsets.len()) as u64;
        for (k, &at) in self.offsets.iter().enumerate() {
            out[at..at + 8].copy_from_slice(&(first + k as u64).to_le_bytes());
        }
        out
    }
}

struct LoadResult {
    ok: usize,
    refused: usize,
    elapsed: Duration,
}

impl Load<'_> {
    fn run(&self, port: u16) -> Result<LoadResult> {
        let url = format!("http://127.0.0.1:{port}/v1development/profiles");
        let (next, ok, refused) = (
            AtomicUsize::new(0),
            AtomicUsize::new(0),
            AtomicUsize::new(0),
        );
        let times = ProfileTimes::of(self.body);
        let started = Instant::now();
        std::thread::scope(|scope| {
            for _ in 0..self.clients {
                scope.spawn(|| {
                    let agent: ureq::Agent = ureq::Agent::config_builder()
                        .http_status_as_error(false)
                        .build()
                        .into();
                    loop {
                        let n = next.fetch_add(1, Ordering::SeqCst);
                        if n >= self.requests {
                            break;
                        }
                        let body = times.request(self.body, n);
                        let answer = agent
                            .post(&url)
                            .content_type("application/x-protobuf")
                            .send(&body[..]);
                        match answer.map(|r| r.status().as_u16()) {
                            Ok(200) => ok.fetch_add(1, Ordering::SeqCst),
                            _ => refused.fetch_add(1, Ordering::SeqCst),
                        };
                    }
                });
            }
        });
        Ok(LoadResult {
            ok: ok.into_inner(),
            refused: refused.into_inner(),
            elapsed: started.elapsed(),
        })
    }
}
