//! debuginfod: elfutils' own server (Debian's `debuginfod`, serving a
//! directory on loopback) holds the debug file of the program of
//! `common`, which is nowhere else. A profile whose binary is not on disk
//! is symbolized from it by build id, frames equal to `llvm-symbolizer
//! --inlining`'s on the program; the file is kept in elfutils' cache layout
//! and used from there once the server is gone; a build id the server
//! does not have is said, nothing is symbolized, and the miss is cached as
//! elfutils caches it (not asked again until `cache_miss_s` has passed).

mod common;

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use protoprof_model_pprof::perftools::profiles::Profile;
use protoprof_symbolize::{symbolize, Debuginfod, How, Options};

/// The server, stopped when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The status line's code of `GET path` on loopback's `port`.
fn status(port: u16, path: &str) -> Option<u16> {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    let request = format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).ok()?;
    std::str::from_utf8(&head[9..12]).ok()?.parse().ok()
}

/// `debuginfod` serving `dir` on a free loopback port, once it serves
/// `id`'s debug file.
fn serve(dir: &Path, db: &Path, id: &str) -> (Server, u16) {
    let port = free_port();
    let child = Command::new("debuginfod")
        .args(["-F", "-d"])
        .arg(db)
        .args(["-p", &port.to_string()])
        .arg(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let server = Server(child);
    let deadline = Instant::now() + Duration::from_secs(60);
    let path = format!("/buildid/{id}/debuginfo");
    while status(port, &path) != Some(200) {
        assert!(Instant::now() < deadline, "debuginfod never served {path}");
        std::thread::sleep(Duration::from_millis(200));
    }
    (server, port)
}

fn options(url: &str, cache: &Path, debug_root: &Path) -> Options {
    let mut options = common::options(Vec::new(), debug_root);
    options.search.debuginfod = Some(Debuginfod {
        urls: vec![url.to_string()],
        cache: cache.to_path_buf(),
        timeout: Duration::from_secs(20),
    });
    options
}

#[test]
fn a_binary_that_is_nowhere_here_is_symbolized_from_debuginfod() {
    let present = Command::new("debuginfod").arg("--version").output().is_ok();
    if !tools_present() || !protoprof_tests::available_or_skip(present, "debuginfod (elfutils)") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let binary = build(d);
    let id = build_id(&binary);
    let served = d.join("served");
    std::fs::create_dir_all(&served).unwrap();
    run(Command::new("objcopy")
        .arg("--only-keep-debug")
        .arg(&binary)
        .arg(served.join("prog.debug")));
    let addresses = file_addresses(&binary);
    let expected = oracle(&binary, &addresses);
    let (server, port) = serve(&served, &d.join("db.sqlite"), &id);
    let url = format!("http://127.0.0.1:{port}");
    let cache = d.join("cache");
    // The mapping's path is nowhere: only debuginfod has the file.
    let gone = "/nonexistent/prog";
    let mut p = profile(gone, &id, text_segment(&binary), &addresses);
    let report = symbolize(&mut p, &options(&url, &cache, d));
    let mapping = &report.mappings[0];
    let found = mapping
        .found
        .as_ref()
        .unwrap_or_else(|| panic!("{}", report.text()));
    assert_eq!(found.how, How::Debuginfod);
    assert_eq!(found.path, cache.join(&id).join("debuginfo"));
    assert_eq!(mapping.resolved, addresses.len(), "{}", report.text());
    assert_eq!(frames_of(&p), expected);

    // From the cache once the server is gone.
    drop(server);
    let mut again = profile(gone, &id, text_segment(&binary), &addresses);
    let report = symbolize(&mut again, &options(&url, &cache, d));
    assert_eq!(frames_of(&again), expected, "{}", report.text());

    // A build id no server has: said, and nothing symbolized.
    let (server, port) = serve(&served, &d.join("db2.sqlite"), &id);
    let url = format!("http://127.0.0.1:{port}");
    let other = "0123456789abcdef0123456789abcdef01234567";
    let mut p = profile(gone, other, text_segment(&binary), &addresses);
    let report = symbolize(&mut p, &options(&url, &cache, d));
    let mapping = &report.mappings[0];
    assert!(mapping.found.is_none());
    let said: Vec<&str> = mapping.passed_over.iter().map(|p| p.why.as_str()).collect();
    assert!(said.iter().any(|w| w.contains("404")), "{said:?}");
    assert!(frames_of(&p).iter().all(|f| f.is_empty()));

    // The miss is remembered as elfutils remembers it (an empty file), so
    // the servers are not asked again: not even a stopped one.
    let marker = cache.join(other).join("debuginfo");
    assert_eq!(std::fs::metadata(&marker).map(|m| m.len()).ok(), Some(0));
    drop(server);
    let asked = |p: &mut Profile| {
        let report = symbolize(p, &options(&url, &cache, d));
        let said: Vec<String> = (report.mappings[0].passed_over.iter())
            .map(|p| format!("{}: {}", p.path.display(), p.why))
            .collect();
        said.join("; ")
    };
    let said = asked(&mut profile(gone, other, text_segment(&binary), &addresses));
    assert!(said.contains("cached miss"), "{said}");
    assert!(!said.contains("127.0.0.1"), "{said}");
    // Once the miss is older than elfutils' `cache_miss_s`, they are.
    std::fs::write(cache.join("cache_miss_s"), "0\n").unwrap();
    let said = asked(&mut profile(gone, other, text_segment(&binary), &addresses));
    assert!(said.contains("127.0.0.1"), "{said}");
}
