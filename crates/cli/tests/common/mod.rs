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
