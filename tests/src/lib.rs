//! Helpers shared by protoprof's cross-crate tests: finding the shared corpus
//! and schemas, and reading corpus files.
//!
//! `PROTOPROF_CORPUS` names the corpus directory (`.ci/run` sets it to
//! `../shared/corpus`); `PROTOPROF_SCHEMAS` names the schema facts
//! (default: `schemas/` beside the corpus). When a variable is set, the
//! directory must exist. When it is unset, tests that need it are skipped
//! with a message, except under CI (`CI=true`), where that is an error.

pub mod arbitrary;
pub mod schema_facts;

use std::io::Read;
use std::path::{Path, PathBuf};

/// The corpus directory, or `None` (after saying so) outside CI when unset.
pub fn corpus_dir() -> Option<PathBuf> {
    required_dir("PROTOPROF_CORPUS", None)
}

/// The directory of schema facts (`shared/schemas`).
pub fn schemas_dir() -> Option<PathBuf> {
    let beside_corpus =
        std::env::var_os("PROTOPROF_CORPUS").map(|c| Path::new(&c).join("../schemas"));
    required_dir("PROTOPROF_SCHEMAS", beside_corpus)
}

fn required_dir(variable: &str, fallback: Option<PathBuf>) -> Option<PathBuf> {
    let dir = match std::env::var_os(variable).map(PathBuf::from).or(fallback) {
        // cargo runs tests from the package directory; a relative path is
        // meant from the workspace root, where the README's command runs.
        Some(dir) if dir.is_relative() => workspace_root().join(dir),
        Some(dir) => dir,
        None if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("{variable} is not set; CI must point it at the shared directory")
        }
        None => {
            eprintln!("skipping: {variable} is not set (see README.md)");
            return None;
        }
    };
    assert!(
        dir.is_dir(),
        "{variable} points at {}, which is not a directory",
        dir.display()
    );
    Some(dir)
}

/// The workspace root: the nearest directory at or above the working
/// directory (a package's root, as `cargo test` runs tests) whose
/// `Cargo.toml` declares the workspace. Found when the tests run, not when
/// they are built: a test binary built in one clone may be reused by
/// another sharing the target directory, and must read its own files.
pub fn workspace_root() -> PathBuf {
    let here = std::env::current_dir().expect("a working directory");
    let declares_workspace = |dir: &Path| {
        std::fs::read_to_string(dir.join("Cargo.toml")).is_ok_and(|t| t.contains("[workspace]"))
    };
    match here.ancestors().find(|dir| declares_workspace(dir)) {
        Some(root) => root.to_path_buf(),
        // Run from elsewhere: where this crate was built.
        None => Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("tests/ sits in the workspace")
            .to_path_buf(),
    }
}

/// Every file below `dir`, sorted.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(current) = pending.pop() {
        let entries = std::fs::read_dir(&current)
            .unwrap_or_else(|e| panic!("listing {}: {e}", current.display()));
        for entry in entries {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                pending.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Largest inflated size the tests accept; real corpus profiles are far smaller.
pub const MAX_INFLATED_BYTES: u64 = 64 << 20;

/// A corpus file's protobuf bytes: gunzipped (every member) when it starts
/// with the gzip magic, as-is otherwise.
pub fn read_profile_bytes(path: &Path) -> Vec<u8> {
    let raw = std::fs::read(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    if !raw.starts_with(&[0x1f, 0x8b]) {
        return raw;
    }
    let mut inflated = Vec::new();
    flate2::read::MultiGzDecoder::new(raw.as_slice())
        .take(MAX_INFLATED_BYTES + 1)
        .read_to_end(&mut inflated)
        .unwrap_or_else(|e| panic!("gunzipping {}: {e}", path.display()));
    assert!(
        inflated.len() as u64 <= MAX_INFLATED_BYTES,
        "{} inflates past the test limit",
        path.display()
    );
    inflated
}

/// Bytes from a hex string with optional spaces, for readable golden vectors.
pub fn hex(text: &str) -> Vec<u8> {
    let digits: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    assert!(digits.len().is_multiple_of(2), "odd number of hex digits");
    digits
        .chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).expect("hex digit"))
        .collect()
}

/// Whether something a test needs is there (`available`). Under `CI=true`
/// its absence fails the test, since `.ci/run` installs everything the
/// tests need; elsewhere the test is skipped, saying `skipping: {missing}`.
pub fn available_or_skip(available: bool, missing: &str) -> bool {
    if !available {
        assert!(
            !std::env::var("CI").is_ok_and(|v| v == "true"),
            "{missing} under CI (.ci/run installs it)"
        );
        eprintln!("skipping: {missing}");
    }
    available
}

/// Whether `go` runs; a skip (a failure under `CI=true`) when it does not.
pub fn go_available(what: &str) -> bool {
    let runs = std::process::Command::new("go")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    available_or_skip(runs, &format!("{what} needs go (1.26 or newer) on PATH"))
}

/// A `go` command in `dir` with the project's caches: the build cache in
/// `target/go-cache` unless `GOCACHE` says otherwise, and the module cache
/// in `target/go-mod` when there is no `HOME` (Go's default is under it).
pub fn go_command(dir: &Path) -> std::process::Command {
    let root = workspace_root();
    let mut go = std::process::Command::new("go");
    go.current_dir(dir)
        .env("GOFLAGS", "-mod=readonly -modcacherw")
        .env("GO111MODULE", "on");
    if std::env::var_os("GOCACHE").is_none() {
        go.env("GOCACHE", root.join("target/go-cache"));
    }
    if std::env::var_os("GOMODCACHE").is_none() && std::env::var_os("HOME").is_none() {
        go.env("GOMODCACHE", root.join("target/go-mod"));
    }
    go
}

/// The Go program of the module in `tools/<name>` (its own `go.mod`
/// pinning what it uses), built into `target/go-bin/<name>` unless a build
/// newer than its sources is there. `None` without Go (a skip; under
/// `CI=true` a failure). One build at a time across the test's threads.
pub fn go_tool(name: &str) -> Option<PathBuf> {
    static BUILD: std::sync::Mutex<()> = std::sync::Mutex::new(());
    if !go_available(&format!("tools/{name}")) {
        return None;
    }
    let _one = BUILD.lock().unwrap_or_else(|e| e.into_inner());
    let root = workspace_root();
    let sources = root.join("tools").join(name);
    let binary = root.join("target/go-bin").join(name);
    let modified = |path: &Path| std::fs::metadata(path).and_then(|m| m.modified()).ok();
    let newest_source = std::fs::read_dir(&sources)
        .unwrap_or_else(|e| panic!("{}: {e}", sources.display()))
        .filter_map(|entry| modified(&entry.ok()?.path()))
        .max();
    if modified(&binary).is_some_and(|built| Some(built) > newest_source) {
        return Some(binary);
    }
    let output = go_command(&sources)
        .args(["build", "-o"])
        .arg(&binary)
        .arg(".")
        .output()
        .expect("go build");
    assert!(
        output.status.success(),
        "go build tools/{name}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(binary)
}

/// Runs Go's reference parser (`profile.Parse` + `CheckValid`, through
/// `tools/go-pprof-check`, github.com/google/pprof at the version its
/// go.mod pins) on `files`. `None` without Go (outside CI; under `CI=true`
/// that is an error). Returns the lines of files that failed.
pub fn go_pprof_check(files: &[PathBuf]) -> Option<Vec<String>> {
    let binary = go_tool("go-pprof-check")?;
    let output = std::process::Command::new(binary)
        .args(files)
        .current_dir(workspace_root())
        .output()
        .expect("go-pprof-check runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let failures: Vec<String> = stdout
        .lines()
        .filter(|l| !l.ends_with(": ok"))
        .map(String::from)
        .collect();
    assert!(
        output.status.success() || !failures.is_empty(),
        "go-pprof-check failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        stdout.lines().count(),
        files.len(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(failures)
}

/// A Python interpreter with grpcio and Envoy's generated xDS classes
/// (`tools/python-xds/requirements.txt`): `PROTOPROF_PYTHON`, else the
/// virtual environment `.ci/run` makes in `target/python-xds`. `None` when
/// there is none (outside CI; under `CI=true` that is an error).
pub fn python_xds() -> Option<PathBuf> {
    let python = std::env::var_os("PROTOPROF_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target/python-xds/bin/python"));
    let ready = std::process::Command::new(&python)
        .args(["-c", "import grpc, envoy.service.discovery.v3.ads_pb2_grpc"])
        .output()
        .is_ok_and(|o| o.status.success());
    let missing = format!(
        "the Python xDS interop needs {} with grpcio and xds-protos \
         (python3 -m venv target/python-xds && target/python-xds/bin/pip install -r tools/python-xds/requirements.txt)",
        python.display()
    );
    if !available_or_skip(ready, &missing) {
        return None;
    }
    Some(python)
}

/// A Python interpreter with DuckDB, PySpark and moto's S3 server
/// (`tools/python-store/requirements.txt`), the engines no one here wrote
/// that the store's layout is checked with, and object storage for it: `PROTOPROF_STORE_PYTHON` (which
/// `.ci/run` sets), else the virtual environment `target/python-store`.
/// `None` when there is none (outside CI; under `CI=true` that is an error).
pub fn python_store() -> Option<PathBuf> {
    let python = std::env::var_os("PROTOPROF_STORE_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target/python-store/bin/python"));
    let ready = std::process::Command::new(&python)
        .args(["-c", "import duckdb, pyspark, moto.server"])
        .output()
        .is_ok_and(|o| o.status.success());
    let missing = format!(
        "the store's engine checks need {} with duckdb, pyspark and moto[server] \
         (python3 -m venv target/python-store && target/python-store/bin/pip install -r tools/python-store/requirements.txt)",
        python.display()
    );
    if !available_or_skip(ready, &missing) {
        return None;
    }
    Some(python)
}

/// moto's S3 server (beside `python`, from [`python_store`]) on a free
/// loopback port, with `bucket` made: its process, to kill when done, and
/// its address.
pub fn moto_with_bucket(python: &std::path::Path, bucket: &str) -> (std::process::Child, String) {
    use std::io::{Read, Write};
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port();
    let server = std::process::Command::new(python.with_file_name("moto_server"))
        .args(["-H", "127.0.0.1", "-p", &port.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("moto_server starts");
    let address = format!("127.0.0.1:{port}");
    let started = std::time::Instant::now();
    let mut stream = loop {
        match std::net::TcpStream::connect(&address) {
            Ok(stream) => break stream,
            Err(_) if started.elapsed().as_secs() < 30 => {
                std::thread::sleep(std::time::Duration::from_millis(100))
            }
            Err(e) => panic!("moto_server on {address}: {e}"),
        }
    };
    let create = format!(
        "PUT /{bucket} HTTP/1.1\r\nHost: {address}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    stream
        .write_all(create.as_bytes())
        .expect("moto_server answers");
    let mut answer = String::new();
    stream
        .read_to_string(&mut answer)
        .expect("moto_server answers");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    (server, address)
}

/// pprof's own test inputs for the legacy profile formats (each beside
/// its `.string`, the parse pprof expects): `profile/testdata` of
/// github.com/google/pprof at the version `tools/go-pprof-check/go.mod`
/// pins, from the Go module cache (downloaded once per machine). `None`
/// without Go (outside CI; under `CI=true` that is an error).
pub fn legacy_testdata() -> Option<PathBuf> {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    if let Some(dir) = DIR.get() {
        return Some(dir.clone());
    }
    if !go_available("pprof's legacy test inputs") {
        return None;
    }
    let output = go_command(&workspace_root().join("tools/go-pprof-check"))
        .args(["mod", "download", "-json", "github.com/google/pprof"])
        .output()
        .expect("go mod download");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "go mod download github.com/google/pprof: {text}"
    );
    let module: serde_json::Value = serde_json::from_str(&text).expect("go mod download -json");
    let dir = PathBuf::from(module["Dir"].as_str().expect("the module's Dir"));
    Some(DIR.get_or_init(|| dir.join("profile/testdata")).clone())
}

/// pprof's legacy test inputs in [`legacy_testdata`]: every format it
/// reads (CPU, heap, growth, Go count, contention, thread, Java).
pub const LEGACY_INPUTS: [&str; 14] = [
    "cppbench.cpu",
    "go.crc32.cpu",
    "gobench.cpu",
    "gobench.heap",
    "cppbench.heap",
    "cppbench.growth",
    "go.godoc.thread",
    "cppbench.contention",
    "cppbench.thread",
    "cppbench.thread.all",
    "cppbench.thread.none",
    "java.cpu",
    "java.heap",
    "java.contention",
];

/// Debian's `protoc` (package `protobuf-compiler`) and the directory that
/// holds Google's well-known `.proto` files (`libprotobuf-dev`'s
/// `/usr/include`), as `.ci/run` installs them. `None` when either is
/// missing (outside CI; under `CI=true` that is an error).
pub fn protoc() -> Option<Protoc> {
    let program = PathBuf::from(std::env::var_os("PROTOC").unwrap_or_else(|| "protoc".into()));
    let include = PathBuf::from("/usr/include");
    let runs = std::process::Command::new(&program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let ready = runs && include.join("google/protobuf/descriptor.proto").is_file();
    let missing = "the comparison with protoc needs protoc and /usr/include/google/protobuf \
                   (apt-get install protobuf-compiler libprotobuf-dev)";
    available_or_skip(ready, missing).then_some(Protoc { program, include })
}

/// Where `protoc` and Google's `.proto` files are.
pub struct Protoc {
    /// The `protoc` program.
    pub program: PathBuf,
    /// The directory holding `google/protobuf/*.proto`.
    pub include: PathBuf,
}

impl Protoc {
    /// `protoc` with `-I` for each of `proto_paths` and for the well-known
    /// types, run on `stdin`; its standard output, or its error.
    pub fn run(
        &self,
        proto_paths: &[&Path],
        args: &[&str],
        stdin: &[u8],
    ) -> Result<Vec<u8>, String> {
        use std::io::Write as _;
        let mut command = std::process::Command::new(&self.program);
        for dir in proto_paths {
            command.arg(format!("-I{}", dir.display()));
        }
        command
            .arg(format!("-I{}", self.include.display()))
            .args(args);
        let mut child = command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| e.to_string())?;
        let mut input = child.stdin.take().expect("piped");
        let bytes = stdin.to_vec();
        let writer = std::thread::spawn(move || input.write_all(&bytes));
        let output = child.wait_with_output().map_err(|e| e.to_string())?;
        let _ = writer.join();
        match output.status.success() {
            true => Ok(output.stdout),
            false => Err(String::from_utf8_lossy(&output.stderr).into_owned()),
        }
    }
}

/// A browser for the web UI's tests: Chromium and its chromedriver
/// (Debian's `chromium` and `chromium-driver`, which `.ci/run` installs;
/// `PROTOPROF_CHROMIUM` and `PROTOPROF_CHROMEDRIVER` name others).
pub struct Chromium {
    /// The browser.
    pub browser: PathBuf,
    /// Its WebDriver server.
    pub driver: PathBuf,
}

/// [`Chromium`] when both programs are there; `None` when not (outside CI;
/// under `CI=true` that is an error).
pub fn chromium() -> Option<Chromium> {
    let find = |variable: &str, names: &[&str]| -> Option<PathBuf> {
        if let Some(path) = std::env::var_os(variable) {
            return Some(PathBuf::from(path));
        }
        let paths = std::env::var_os("PATH")?;
        std::env::split_paths(&paths)
            .flat_map(|dir| names.iter().map(move |n| dir.join(n)))
            .find(|p| p.is_file())
    };
    let browser = find(
        "PROTOPROF_CHROMIUM",
        &["chromium", "chromium-browser", "google-chrome"],
    );
    let driver = find("PROTOPROF_CHROMEDRIVER", &["chromedriver"]);
    match (browser, driver) {
        (Some(browser), Some(driver)) => Some(Chromium { browser, driver }),
        _ => {
            available_or_skip(
                false,
                "the web UI's browser tests need chromium and chromedriver",
            );
            None
        }
    }
}
