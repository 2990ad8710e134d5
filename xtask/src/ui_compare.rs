//! `cargo xtask ui-compare`: the first screen of the flame graph in
//! `protoprof serve`, `go tool pprof -http` and speedscope, on the same
//! profile at the same size, as headless Chromium draws them. The
//! screenshots go to `target/ui-compare/`; docs/ui.md shows copies.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

/// The speedscope release drawn (npm's `speedscope`).
const SPEEDSCOPE: &str = "speedscope@1.25.0";
/// The window, as the browser tests' first screen.
const WINDOW: &str = "--window-size=1600,1000";

/// A server stopped on drop.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub fn ui_compare(root: &Path, args: &[&str]) -> Result<()> {
    let corpus = crate::bench::corpus_dir(root);
    let profile = match args {
        [] => corpus.join("pprof/real/go-cpu.pb.gz"),
        [file] => PathBuf::from(file),
        _ => bail!("usage: cargo xtask ui-compare [PROFILE]"),
    };
    let out = root.join("target/ui-compare");
    let site = speedscope_site(&out, &profile)?;
    let protoprof = crate::bench::release_protoprof(root)?;
    let ports = [free_port()?, free_port()?, free_port()?];
    let _servers = [
        start(
            Command::new(protoprof)
                .args(["serve", "--listen", &format!("127.0.0.1:{}", ports[0])])
                .arg(&profile),
        )?,
        start(
            Command::new("go")
                .args([
                    "tool",
                    "pprof",
                    &format!("-http=127.0.0.1:{}", ports[1]),
                    "-no_browser",
                ])
                .arg(&profile)
                .env("HOME", &out),
        )?,
        start(
            Command::new("python3")
                .args([
                    "-m",
                    "http.server",
                    "--bind",
                    "127.0.0.1",
                    &ports[2].to_string(),
                    "--directory",
                ])
                .arg(&site),
        )?,
    ];
    let title = profile
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let pages = [
        (
            "protoprof",
            format!("http://127.0.0.1:{}/ui/flamegraph", ports[0]),
        ),
        (
            "pprof",
            format!("http://127.0.0.1:{}/ui/flamegraph", ports[1]),
        ),
        (
            "speedscope",
            format!(
                "http://127.0.0.1:{}/index.html#profileURL=%2Fprofile&title={title}",
                ports[2]
            ),
        ),
    ];
    for ((name, url), port) in pages.iter().zip(ports) {
        wait_for(port)?;
        let shot = out.join(format!("compare-{name}.png"));
        screenshot(url, &shot)?;
        println!("{}", shot.display());
    }
    Ok(())
}

/// speedscope's release from npm, with the profile beside it as `/profile`.
fn speedscope_site(out: &Path, profile: &Path) -> Result<PathBuf> {
    let release = out.join("node_modules/speedscope/dist/release");
    if !release.join("index.html").exists() {
        std::fs::create_dir_all(out)?;
        crate::bench::run(
            Command::new("npm")
                .args(["install", "--silent", "--prefix"])
                .arg(out)
                .arg(SPEEDSCOPE),
        )?;
    }
    std::fs::copy(profile, release.join("profile"))
        .with_context(|| profile.display().to_string())?;
    Ok(release)
}

fn start(command: &mut Command) -> Result<Running> {
    let child = command.stdout(Stdio::null()).stderr(Stdio::null()).spawn();
    Ok(Running(child.with_context(|| format!("{command:?}"))?))
}

fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

fn wait_for(port: u16) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(120);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if Instant::now() > deadline {
            bail!("nothing listens on {port}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

/// Chromium's own screenshot of `url`, once the page had ten seconds of
/// its time to draw.
fn screenshot(url: &str, shot: &Path) -> Result<()> {
    let browser = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .context("no Chromium on PATH")?;
    let status = Command::new(browser)
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            WINDOW,
        ])
        .arg("--virtual-time-budget=10000")
        .arg(format!("--screenshot={}", shot.display()))
        .arg(url)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()?;
    if !status.success() || !shot.exists() {
        bail!("chromium drew no {}", shot.display());
    }
    Ok(())
}
