//! `cargo xtask bench-web`: the time from starting the web UI on a profile
//! to a complete flame graph, and the server's peak memory, for
//! `protoprof serve` and `go tool pprof -http` on the same synthetic
//! profiles. protoprof's time covers everything its page fetches before it
//! draws the flame graph (the page, its script and styles, `/api/meta`,
//! `/api/flamegraph` and `/api/top`); pprof's, its flame graph page, which
//! carries the graph's data.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

struct Options {
    sizes: Vec<usize>,
    rounds: usize,
    /// Only the servers whose name holds this text (`--only protoprof`: a
    /// size pprof cannot open in this machine's memory).
    only: String,
}

fn parse_options(args: &[&str]) -> Result<Options> {
    let mut options = Options {
        sizes: vec![10, 100],
        rounds: 3,
        only: String::new(),
    };
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let value = rest
            .next()
            .with_context(|| format!("{arg} needs a value"))?;
        match *arg {
            "--sizes" => options.sizes = crate::bench::parse_sizes(value)?,
            "--rounds" => options.rounds = value.parse().context("--rounds")?,
            "--only" => options.only = value.to_string(),
            other => bail!("unknown option {other}"),
        }
    }
    Ok(options)
}

/// How a server is started on a file and a port.
type StartCommand = Box<dyn Fn(&Path, u16) -> Command>;

/// A web UI under test: how to start it on a file and a port, and what a
/// browser fetches before the flame graph is drawn.
struct Server {
    name: &'static str,
    start: StartCommand,
    paths: &'static [&'static str],
    /// Fetched together after `paths`, as the page fetches them.
    together: &'static [&'static str],
}

pub fn bench_web(root: &Path, args: &[&str]) -> Result<()> {
    let options = parse_options(args)?;
    let protoprof = crate::bench::release_protoprof(root)?;
    let pprof = go_pprof()?;
    let servers = [
        Server {
            name: "protoprof serve",
            start: Box::new(move |file, port| {
                let mut c = Command::new(&protoprof);
                // Inputs past 512 MiB inflated are refused unless allowed.
                c.args(["--max-inflated-size", "4GiB", "--max-input-size", "4GiB"])
                    .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
                    .arg(file);
                c
            }),
            paths: &[
                "/ui/flamegraph",
                "/ui/app.js",
                "/ui/flame.js",
                "/ui/store.js",
                "/ui/message.js",
                "/ui/app.css",
                "/api/meta",
            ],
            together: &["/api/flamegraph", "/api/top"],
        },
        Server {
            name: "go tool pprof -http",
            start: Box::new(move |file, port| {
                let mut c = Command::new(&pprof);
                c.arg(format!("-http=127.0.0.1:{port}"))
                    .arg("-no_browser")
                    .arg(file)
                    .env("HOME", std::env::temp_dir());
                c
            }),
            paths: &["/ui/flamegraph"],
            together: &[],
        },
    ];
    let synth = root.join("target/synth");
    let missing: Vec<String> = options
        .sizes
        .iter()
        .filter(|mb| !synth.join(format!("synth-{mb}MB.pb.gz")).exists())
        .map(|mb| mb.to_string())
        .collect();
    if !missing.is_empty() {
        crate::synth::gen_profiles(root, &["--sizes", &missing.join(","), "--shape", "shared"])?;
    }
    println!(
        "| input | server | first flame graph (median of {}) | and the top table | bytes sent | peak RSS |",
        options.rounds
    );
    println!("|---|---|---|---|---|---|");
    for mb in &options.sizes {
        let file = synth.join(format!("synth-{mb}MB.pb.gz"));
        for server in servers.iter().filter(|s| s.name.contains(&options.only)) {
            let (mut flame, mut all) = (Vec::new(), Vec::new());
            let (mut bytes, mut peak) = (0, 0);
            for _ in 0..options.rounds {
                let run = first_flame_graph(server, &file)?;
                flame.push(run.flame);
                all.push(run.elapsed);
                (bytes, peak) = (run.bytes, peak.max(run.peak_kb));
            }
            let median = |times: &mut Vec<Duration>| {
                times.sort();
                times[times.len() / 2].as_secs_f64()
            };
            println!(
                "| synth-{mb}MB.pb.gz | {} | {:.2} s | {:.2} s | {} kB | {} MB |",
                server.name,
                median(&mut flame),
                median(&mut all),
                bytes / 1024,
                peak / 1024
            );
        }
    }
    Ok(())
}

/// The pprof binary `go tool pprof` runs.
fn go_pprof() -> Result<PathBuf> {
    let out = Command::new("go")
        .args(["tool", "-n", "pprof"])
        .output()
        .context("go tool -n pprof")?;
    let path = String::from_utf8(out.stdout)?.trim().to_string();
    if path.is_empty() {
        bail!("go tool -n pprof printed no path");
    }
    Ok(PathBuf::from(path))
}

struct Run {
    /// Until the flame graph's data was in (for pprof, its page).
    flame: Duration,
    /// Until everything the view asks for was in.
    elapsed: Duration,
    bytes: usize,
    peak_kb: u64,
}

fn first_flame_graph(server: &Server, file: &Path) -> Result<Run> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let started = Instant::now();
    let child = (server.start)(file, port)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("starting {}", server.name))?;
    let mut child = KillOnDrop(child);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Some(status) = child.0.try_wait()? {
            bail!("{} stopped before it listened: {status}", server.name);
        }
        if started.elapsed() > Duration::from_secs(600) {
            bail!("{} did not listen", server.name);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut bytes = 0;
    for path in server.paths {
        bytes += get(port, path).with_context(|| format!("{} {path}", server.name))?;
    }
    let mut flame = started.elapsed();
    // The first of `together` is the flame graph's data.
    let together: Vec<_> = server
        .together
        .iter()
        .map(|path| std::thread::spawn(move || get(port, path).map(|b| (b, started.elapsed()))))
        .collect();
    for (n, fetch) in together.into_iter().enumerate() {
        let (fetched, at) = fetch
            .join()
            .map_err(|_| anyhow::anyhow!("a fetch panicked"))??;
        bytes += fetched;
        if n == 0 {
            flame = at;
        }
    }
    let elapsed = started.elapsed();
    let peak_kb = peak_rss_kb(child.0.id())?;
    let _ = child.0.kill();
    Ok(Run {
        flame,
        elapsed,
        bytes,
        peak_kb,
    })
}

struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The body's length of a `GET` answered 200.
fn get(port: u16, path: &str) -> Result<usize> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer)?;
    let head_end = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .context("no header end")?;
    let status = String::from_utf8_lossy(&answer[..answer.len().min(15)]).into_owned();
    if !status.contains(" 200") {
        bail!("answered {status}");
    }
    Ok(answer.len() - head_end - 4)
}

/// The process's peak resident memory (`VmHWM`), in kB.
fn peak_rss_kb(pid: u32) -> Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .context("no VmHWM")?;
    Ok(line.split_whitespace().nth(1).context("VmHWM")?.parse()?)
}
