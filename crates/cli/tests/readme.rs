//! README.md's `console` blocks, run in order in a scratch directory laid
//! out as its tour says, each command's output compared with what the
//! README shows (ids, peer ports and the receiver's port masked), so the
//! README cannot drift from what the commands print.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use common::free_port;

/// A command of a block and the lines the README shows after it.
struct Step {
    command: String,
    expected: Vec<String>,
}

/// Blocks not run here, by a word of their first command, and why.
const NOT_RUN: [(&str, &str); 1] = [(
    "gcc ",
    "a gperftools CPU profile's samples differ from run to run; crates/cli/tests/symbolize.rs \
     runs that flow against upstream pprof",
)];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `console` blocks of `readme`, each as its steps.
fn console_blocks(readme: &str) -> Vec<Vec<Step>> {
    let mut blocks = Vec::new();
    let mut current: Option<Vec<Step>> = None;
    for line in readme.lines() {
        match (&mut current, line) {
            (None, "```console") => current = Some(Vec::new()),
            (Some(_), "```") => blocks.push(current.take().unwrap()),
            (Some(steps), line) => match line.strip_prefix("$ ") {
                Some(command) => steps.push(Step {
                    command: command.to_string(),
                    expected: Vec::new(),
                }),
                None => steps
                    .last_mut()
                    .expect("a console block starts with a command")
                    .expected
                    .push(line.to_string()),
            },
            (None, _) => {}
        }
    }
    blocks
}

/// What differs from run to run, masked alike in the README and the
/// output: profile ids, loopback ports (a peer's, the receiver's).
fn masked(text: &str) -> String {
    let ids = regex::Regex::new(r"\b[0-9a-f]{32}\b").unwrap();
    let ports = regex::Regex::new(r"127\.0\.0\.1:\d+").unwrap();
    let text = ids.replace_all(text, "<id>");
    ports.replace_all(&text, "127.0.0.1:<port>").into_owned()
}

/// A command started with `&`: its output lines as they come.
struct Background {
    child: Child,
    lines: Receiver<String>,
}

impl Background {
    fn start(shell: &mut Command) -> Background {
        let mut child = shell
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (send, lines) = mpsc::channel();
        for pipe in [
            Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
            Box::new(child.stderr.take().unwrap()),
        ] {
            let send = send.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                    let _ = send.send(line);
                }
            });
        }
        Background { child, lines }
    }

    /// The next line, waited for.
    fn line(&self) -> String {
        self.lines
            .recv_timeout(Duration::from_secs(60))
            .expect("the background command printed its first line")
    }

    /// What it printed until it ended (it ends after its `--count`).
    fn rest(mut self) -> Vec<String> {
        for _ in 0..600 {
            if self.child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let mut out = Vec::new();
        while let Ok(line) = self.lines.recv_timeout(Duration::from_millis(500)) {
            out.push(line);
        }
        out
    }
}

/// `command` run by bash in `dir`, with `protoprof` on the `PATH`, its
/// standard error beside its output as a terminal shows them.
fn shell(dir: &Path, command: &str) -> Command {
    let bin = Path::new(env!("CARGO_BIN_EXE_protoprof")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut shell = Command::new("bash");
    shell
        .args(["-c", command])
        .current_dir(dir)
        .env("PATH", path)
        .env("TZ", "UTC")
        .env("HOME", dir)
        .env_remove("NO_COLOR")
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .env_remove("OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT");
    shell
}

/// The tour's scratch directory: the example profiles copied in.
fn tour_directory() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let examples = workspace().join("examples");
    for entry in std::fs::read_dir(&examples).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with(".pb.gz") || name.starts_with("index-record.") {
            std::fs::copy(&path, dir.path().join(&name)).unwrap();
        }
    }
    dir
}

#[test]
fn the_readme_console_blocks_print_what_the_readme_shows() {
    let readme = std::fs::read_to_string(workspace().join("README.md")).unwrap();
    let blocks = console_blocks(&readme);
    assert!(
        blocks.len() >= 5,
        "README.md's console blocks: {}",
        blocks.len()
    );
    let dir = tour_directory();
    let port = free_port().to_string();
    let mut failures = Vec::new();
    let mut ran = 0;
    for block in &blocks {
        let first = &block[0].command;
        if let Some((_, why)) = NOT_RUN.iter().find(|(word, _)| first.contains(word)) {
            eprintln!("not run: `{first}`: {why}");
            continue;
        }
        let mut background: Option<Background> = None;
        for step in block {
            let command = step.command.replace(":4318", &format!(":{port}"));
            let actual = match command.strip_suffix(" &") {
                Some(started) => {
                    let started = Background::start(&mut shell(dir.path(), started));
                    let first = started.line();
                    background = Some(started);
                    vec![first]
                }
                None => {
                    let output = shell(dir.path(), &command).output().unwrap();
                    let mut lines = background.take().map(Background::rest).unwrap_or_default();
                    let stderr = String::from_utf8_lossy(&output.stderr);
                    let stdout = String::from_utf8_lossy(&output.stdout);
                    lines.extend(stderr.lines().chain(stdout.lines()).map(str::to_string));
                    lines
                }
            };
            ran += 1;
            // A blank line between commands only sets them apart.
            let shown = step.expected.join("\n");
            let (expected, actual) = (masked(shown.trim_end()), masked(&actual.join("\n")));
            if expected != actual {
                failures.push(format!(
                    "$ {}\n--- README.md shows:\n{expected}\n--- it prints:\n{actual}",
                    step.command
                ));
            }
        }
    }
    eprintln!("ran {ran} commands of README.md");
    assert!(ran >= 20, "ran {ran} commands of README.md");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    serve_commands_serve(&readme, dir.path());
}

/// The `protoprof serve --store …` commands the README's prose gives,
/// run after its blocks (whose stores they read): each serves its page.
fn serve_commands_serve(readme: &str, dir: &Path) {
    use std::io::{Read, Write};
    let commands = regex::Regex::new(r"`(protoprof serve --store [^`]*)`").unwrap();
    let mut served = 0;
    for found in commands.captures_iter(readme) {
        let command = format!("exec {} --listen 127.0.0.1:0", &found[1]);
        let started = Background::start(&mut shell(dir, &command));
        let line = started.line();
        let url = line
            .rsplit_once(' ')
            .map(|(_, url)| url.trim_end_matches('/'));
        let address = url.and_then(|u| u.strip_prefix("http://"));
        let address = address.unwrap_or_else(|| panic!("`{}`: {line}", &found[1]));
        let mut stream = std::net::TcpStream::connect(address).unwrap();
        let request =
            format!("GET /api/meta HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        assert!(
            response.starts_with("HTTP/1.1 200"),
            "`{}`: {response}",
            &found[1]
        );
        drop(started);
        served += 1;
    }
    assert!(
        served >= 1,
        "README.md names no `protoprof serve --store` command"
    );
}

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
