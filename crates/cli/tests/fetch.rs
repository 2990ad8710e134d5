//! Profiles fetched from a running program: a real Go `net/http/pprof`
//! server (`tools/pprof-server`, built by the test into `target/go-bin`),
//! on loopback, read by `protoprof` as `go tool pprof` reads it.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};

use common::{outcome, protoprof};
use protoprof_tests::workspace_root;

/// A running `tools/pprof-server`; it stops when dropped (its standard
/// input closes).
struct PprofServer {
    child: Child,
    _stdin: ChildStdin,
    http: String,
    https: String,
    mtls: String,
    tls_dir: tempfile::TempDir,
}

impl Drop for PprofServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts a server serving `files` at `/fixed/<name>`, or `None` without Go.
fn start_server(files: &[&Path]) -> Option<PprofServer> {
    let binary = protoprof_tests::go_tool("pprof-server")?;
    let tls_dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(binary)
        .arg("-tls-dir")
        .arg(tls_dir.path())
        .args(files)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("pprof-server starts");
    let stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut url = || {
        let line = lines.next().expect("a listener line").unwrap();
        line.split_once(' ').expect("NAME URL").1.to_string()
    };
    let (http, https, mtls) = (url(), url(), url());
    Some(PprofServer {
        child,
        _stdin: stdin,
        http,
        https,
        mtls,
        tls_dir,
    })
}

/// Runs `protoprof` with `home` as `$HOME` (saved copies go to
/// `home/pprof`); returns (status, stdout, stderr).
fn fetching(home: &Path, args: &[&str]) -> (i32, String, String) {
    let output = protoprof(home)
        .args(args)
        .env("HOME", home)
        .env_remove("PPROF_TMPDIR")
        .output()
        .unwrap();
    outcome(output)
}

/// The standard output of a run that must succeed.
fn fetched_ok(home: &Path, args: &[&str]) -> String {
    let (status, stdout, stderr) = fetching(home, args);
    assert_eq!(status, 0, "protoprof {}: {stderr}", args.join(" "));
    stdout
}

fn example(name: &str) -> PathBuf {
    workspace_root().join("examples").join(name)
}

/// The saved copies in `dir/pprof` (`$HOME/pprof`).
fn saved(home: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(home.join("pprof"))
        .map(|entries| entries.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    files.sort();
    files
}

#[test]
fn top_of_a_url_equals_go_tool_pprof_top_of_it() {
    let cpu = example("cpu.pb.gz");
    let Some(server) = start_server(&[&cpu]) else {
        return;
    };
    let url = format!("{}/fixed/cpu.pb.gz", server.http);
    let (go_home, our_home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let go = Command::new("go")
        .args(["tool", "pprof", "-top", &url])
        .env("HOME", go_home.path())
        .env_remove("PPROF_TMPDIR")
        .env("TZ", "UTC")
        .output()
        .unwrap();
    assert!(
        go.status.success(),
        "{}",
        String::from_utf8_lossy(&go.stderr)
    );
    let ours = protoprof(our_home.path())
        .args(["top", &url])
        .env("HOME", our_home.path())
        .env_remove("PPROF_TMPDIR")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&ours.stderr);
    assert!(ours.status.success(), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&ours.stdout),
        String::from_utf8_lossy(&go.stdout)
    );
    assert!(
        stderr.contains(&format!("Fetching profile over HTTP from {url}\n")),
        "{stderr}"
    );
    // The copy: pprof's name, the bytes as served.
    let (theirs, mine) = (saved(go_home.path()), saved(our_home.path()));
    assert_eq!(mine.len(), 1, "{stderr}");
    assert_eq!(mine[0].file_name(), theirs[0].file_name());
    assert!(
        stderr.contains(&format!("Saved profile in {}\n", mine[0].display())),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(&mine[0]).unwrap(),
        std::fs::read(&cpu).unwrap()
    );
}

#[test]
fn net_http_pprof_endpoints_are_read_and_checked() {
    let Some(server) = start_server(&[]) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let at = |path: &str| format!("{}/debug/pprof/{path}", server.http);
    let with_home = |args: &[&str]| fetching(home.path(), args);
    // A heap profile validates, and so does a one-second CPU profile.
    let (status, stdout, stderr) = with_home(&["validate", &at("heap")]);
    assert_eq!(status, 0, "{stdout}{stderr}");
    // pprof's bare host:port/path is fetched over HTTP.
    let bare = at("heap").replacen("http://", "", 1);
    let (status, _, stderr) = with_home(&["inspect", &bare]);
    assert_eq!(status, 0, "{stderr}");
    assert!(
        stderr.contains(&format!("from http://{bare}\n")),
        "{stderr}"
    );
    let (status, stdout, stderr) = with_home(&["inspect", "--seconds", "1", &at("profile")]);
    assert_eq!(status, 0, "{stderr}");
    assert!(
        stdout.contains("samples/count") && stdout.contains("cpu/nanoseconds"),
        "{stdout}"
    );
    assert!(
        stderr.contains("?seconds=1\n") && stderr.contains("Please wait... (1s)"),
        "{stderr}"
    );
    // Go's debug=1 text form of the goroutine profile is a legacy count profile.
    let (status, stdout, stderr) = with_home(&["top", &at("goroutine?debug=1")]);
    assert_eq!(status, 0, "{stderr}");
    assert!(stdout.contains("Type: goroutine"), "{stdout}");
    let names: Vec<String> = saved(home.path())
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().any(|n| n.starts_with(
            "pprof.pprof-server.alloc_objects.alloc_space.inuse_objects.inuse_space."
        )),
        "{names:?}"
    );
    assert!(
        names
            .iter()
            .any(|n| n.starts_with("pprof.pprof-server.samples.cpu.")),
        "{names:?}"
    );
}

/// As `go tool pprof`: a bare `host:port` is the server's CPU profile
/// (`/debug/pprof/profile`, with `--seconds`); the `/debug/pprof/` index
/// page is an unrecognized profile format, and no copy of it is saved.
#[test]
fn a_server_alone_is_its_cpu_profile_and_a_page_is_no_profile() {
    let Some(server) = start_server(&[]) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let host_port = server.http.replacen("http://", "", 1);
    let args = ["inspect", "--seconds", "1", &host_port];
    let (status, stdout, stderr) = fetching(home.path(), &args);
    assert_eq!(status, 0, "{stderr}");
    let expected = format!("from http://{host_port}/debug/pprof/profile?seconds=1\n");
    assert!(stderr.contains(&expected), "{stderr}");
    assert!(stdout.contains("cpu/nanoseconds"), "{stdout}");
    let saved_before = saved(home.path()).len();
    let index = format!("{}/debug/pprof/", server.http);
    let (status, _, stderr) = fetching(home.path(), &["top", &index]);
    assert_eq!(status, 2, "{stderr}");
    assert!(stderr.contains("unrecognized profile format"), "{stderr}");
    assert!(!stderr.contains("Saved profile"), "{stderr}");
    assert_eq!(saved(home.path()).len(), saved_before);
}

#[test]
fn a_failed_fetch_says_what_the_server_said() {
    let Some(server) = start_server(&[]) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let url = format!("{}/debug/pprof/nonexistent", server.http);
    let (status, _, stderr) = fetching(home.path(), &["top", &url]);
    assert_eq!(status, 2, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{url}: server response: 404 Not Found - Unknown profile"
        )),
        "{stderr}"
    );
    // Nothing listens on a port the server just gave up.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let (status, _, stderr) = fetching(
        home.path(),
        &["top", &format!("http://{closed}/debug/pprof/heap")],
    );
    assert_eq!(status, 2);
    assert!(stderr.contains("http fetch:"), "{stderr}");
    // An answer larger than the input limit is cut off, not read whole.
    let (status, _, stderr) = fetching(
        home.path(),
        &[
            "top",
            "--max-input-size",
            "100",
            &format!("{}/debug/pprof/heap", server.http),
        ],
    );
    assert_eq!(status, 2);
    assert!(
        stderr.contains("larger than the input limit of 100 bytes"),
        "{stderr}"
    );
    // A profile that takes longer than the timeout.
    let (status, _, stderr) = fetching(
        home.path(),
        &[
            "top",
            "--timeout",
            "1",
            &format!("{}/debug/pprof/profile?seconds=20", server.http),
        ],
    );
    assert_eq!(status, 2);
    assert!(stderr.contains("timeout"), "{stderr}");
    // edit writes its input back, which a URL cannot take.
    let (status, _, stderr) = fetching(
        home.path(),
        &["edit", &format!("{}/debug/pprof/heap", server.http)],
    );
    assert_eq!(status, 2);
    assert!(stderr.contains("edit changes a file"), "{stderr}");
}

#[test]
fn https_with_the_servers_ca_a_client_certificate_or_no_check() {
    let Some(server) = start_server(&[&example("cpu.pb.gz")]) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let pem = |name: &str| {
        server
            .tls_dir
            .path()
            .join(name)
            .to_string_lossy()
            .into_owned()
    };
    let https = format!("{}/fixed/cpu.pb.gz", server.https);
    let mtls = format!("{}/fixed/cpu.pb.gz", server.mtls);
    let insecure = https.replacen("https://", "https+insecure://", 1);
    // The test CA is no WebPKI root: refused without --tls-ca.
    let (status, _, stderr) = fetching(home.path(), &["inspect", &https]);
    assert_eq!(status, 2);
    assert!(stderr.contains("http fetch:"), "{stderr}");
    fetched_ok(
        home.path(),
        &["inspect", "--tls-ca", &pem("ca.pem"), &https],
    );
    fetched_ok(home.path(), &["inspect", &insecure]);
    // The mTLS listener wants a client certificate of its CA.
    let (status, _, _) = fetching(home.path(), &["inspect", "--tls-ca", &pem("ca.pem"), &mtls]);
    assert_eq!(status, 2);
    fetched_ok(
        home.path(),
        &[
            "inspect",
            "--tls-ca",
            &pem("ca.pem"),
            "--tls-cert",
            &pem("client.pem"),
            "--tls-key",
            &pem("client-key.pem"),
            &mtls,
        ],
    );
    let (status, _, stderr) = fetching(
        home.path(),
        &["inspect", "--tls-ca", &pem("client-key.pem"), &https],
    );
    assert_eq!(status, 2);
    assert!(stderr.contains("holds no PEM certificate"), "{stderr}");
}

/// The shell fetches its source once, as pprof's does, and greets with the
/// profile's labels as pprof does; each command reads the copy (a CPU
/// profile would otherwise be taken again for every report).
#[test]
fn the_shell_fetches_its_source_once_and_greets_as_pprof() {
    let cpu = example("cpu.pb.gz");
    let Some(server) = start_server(&[&cpu]) else {
        return;
    };
    let url = format!("{}/fixed/cpu.pb.gz", server.http);
    let script = "top 3\ntraces\ntop 2\nquit\n";
    let (go_home, our_home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut go = Command::new("go");
    go.args(["tool", "pprof", &url])
        .env("HOME", go_home.path())
        .env_remove("PPROF_TMPDIR")
        .env("TZ", "UTC");
    let go = assert_cmd::Command::from_std(go)
        .write_stdin(script)
        .output()
        .unwrap();
    assert!(go.status.success());
    let ours = protoprof(our_home.path())
        .args(["pprof", &url])
        .env("HOME", our_home.path())
        .env_remove("PPROF_TMPDIR")
        .write_stdin(script)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&ours.stderr);
    assert!(ours.status.success(), "{stderr}");
    assert_eq!(
        stderr.matches("Fetching profile over HTTP").count(),
        1,
        "{stderr}"
    );
    assert_eq!(saved(our_home.path()).len(), 1, "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&ours.stdout),
        String::from_utf8_lossy(&go.stdout)
    );
    // The greeting: what pprof prints after fetching, before its prompt.
    let greeting = |stderr: &str| -> String {
        let after = stderr
            .split_once("Saved profile in ")
            .map_or("", |(_, rest)| rest);
        let after = after.split_once('\n').map_or("", |(_, rest)| rest);
        after
            .split("Entering interactive mode")
            .next()
            .unwrap_or("")
            .to_string()
    };
    let theirs = greeting(&String::from_utf8_lossy(&go.stderr));
    assert!(
        theirs.starts_with("File: ") || theirs.starts_with("Type: "),
        "{theirs}"
    );
    assert_eq!(greeting(&stderr), theirs);
}
