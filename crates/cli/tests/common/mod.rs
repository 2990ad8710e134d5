//! Running the `protoprof` binary as a user would, for the CLI's test files.

// Each test file uses some of these.
#![allow(dead_code)]

use std::path::Path;

use assert_cmd::Command;

/// `protoprof` in `dir`, with colour decided as on a terminal-less run, no
/// pager, and times in UTC (as the tests run `go tool pprof`).
pub fn protoprof(dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("protoprof").unwrap();
    cmd.current_dir(dir)
        .env_remove("NO_COLOR")
        .env("PAGER", "cat")
        .env("TZ", "UTC");
    cmd
}

/// Runs and returns (status, stdout, stderr).
pub fn run(dir: &Path, args: &[&str]) -> (i32, String, String) {
    outcome(protoprof(dir).args(args).output().unwrap())
}

/// (status, stdout, stderr) of a finished run.
pub fn outcome(output: std::process::Output) -> (i32, String, String) {
    (
        output.status.code().expect("exited"),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The standard output of a run that must succeed.
pub fn ok(dir: &Path, args: &[&str]) -> String {
    let (status, stdout, stderr) = run(dir, args);
    assert_eq!(status, 0, "protoprof {}: {stderr}", args.join(" "));
    stdout
}

/// A loopback port nothing listens on (as of now).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A running `protoprof receive --store`, on a free HTTP port.
pub struct Receiving {
    pub child: std::process::Child,
    pub address: String,
}

impl Receiving {
    pub fn start(dir: &Path, store: &str, address: &str) -> Receiving {
        use std::io::BufRead;
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("protoprof"))
            .args(["receive", "--http", address, "--store", store])
            .current_dir(dir)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        let address = line
            .trim()
            .rsplit_once(' ')
            .expect("… on ADDRESS")
            .1
            .to_string();
        // Later lines are not read: the pipe's buffer takes them.
        std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
        Receiving { child, address }
    }

    /// `send FILE` to it; whether the receiver acknowledged it.
    pub fn send(dir: &Path, address: &str, file: &str) -> bool {
        let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("protoprof"))
            .args(["send", file, "--endpoint", &format!("http://{address}")])
            .args(["--resource", "service.name=checkout"])
            .env("OTEL_EXPORTER_OTLP_TIMEOUT", "3000")
            .current_dir(dir)
            .output()
            .unwrap();
        out.status.success()
    }
}

impl Drop for Receiving {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
