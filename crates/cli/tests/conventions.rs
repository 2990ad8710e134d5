//! The conventions docs/cli.md states, checked on every command they apply
//! to: no output replaces an input (however the path is spelled), a `.gz`
//! output name means gzip, a closed pipe ends a command quietly, errors are
//! one line in one format, a URL argument is named as such, and `diff`
//! compares only what pprof would.

mod common;

use common::{ok, run};
use std::io::Read;
use std::process::Stdio;

use protobuf::Message;
use protoprof_model_pprof::perftools::profiles::Profile;
use protoprof_tests::corpus_dir;

/// A directory with the bundled example profile as `cpu.pb.gz`, its text
/// form as `cpu.txt`, and a second profile `after.pb.gz`.
fn workdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let examples = protoprof_tests::workspace_root().join("examples");
    std::fs::copy(examples.join("cpu.pb.gz"), dir.path().join("cpu.pb.gz")).unwrap();
    std::fs::copy(examples.join("cpu-2.pb.gz"), dir.path().join("after.pb.gz")).unwrap();
    let text = ok(dir.path(), &["decode", "cpu.pb.gz"]);
    std::fs::write(dir.path().join("cpu.txt"), text).unwrap();
    dir
}

/// Every command that writes a file refuses to write over one of its
/// inputs, named the same, as `./name`, through a symbolic link or a hard
/// link, and leaves it as it was.
#[test]
fn no_command_writes_over_its_input() {
    let dir = workdir();
    let d = dir.path();
    std::os::unix::fs::symlink("cpu.pb.gz", d.join("link.pb.gz")).unwrap();
    std::fs::hard_link(d.join("cpu.pb.gz"), d.join("hard.pb.gz")).unwrap();
    std::os::unix::fs::symlink("cpu.txt", d.join("link.txt")).unwrap();
    let profile_spellings = ["cpu.pb.gz", "./cpu.pb.gz", "link.pb.gz", "hard.pb.gz"];
    let text_spellings = ["cpu.txt", "./cpu.txt", "link.txt"];
    let writers: Vec<(Vec<&str>, &[&str])> = vec![
        (vec!["decode", "cpu.pb.gz", "-o"], &profile_spellings),
        (
            vec!["decode", "--raw", "cpu.pb.gz", "-o"],
            &profile_spellings,
        ),
        (
            vec![
                "encode",
                "--type",
                "perftools.profiles.Profile",
                "cpu.txt",
                "-o",
            ],
            &text_spellings,
        ),
        (vec!["flamegraph", "cpu.pb.gz", "-o"], &profile_spellings),
        (
            vec!["flamegraph", "after.pb.gz", "--base", "cpu.pb.gz", "-o"],
            &profile_spellings,
        ),
        (
            vec!["convert", "--to", "otlp", "cpu.pb.gz", "-o"],
            &profile_spellings,
        ),
        (
            vec!["merge", "after.pb.gz", "cpu.pb.gz", "-o"],
            &profile_spellings,
        ),
    ];
    let before = (
        std::fs::read(d.join("cpu.pb.gz")).unwrap(),
        std::fs::read(d.join("cpu.txt")).unwrap(),
    );
    for (command, spellings) in &writers {
        for output in spellings.iter() {
            let args = [&command[..], &[output]].concat();
            let (status, _, stderr) = run(d, &args);
            assert_eq!(status, 2, "{args:?}: {stderr}");
            assert!(
                stderr.starts_with("protoprof: error: ")
                    && stderr.contains("refusing to overwrite")
                    && stderr.lines().count() == 1,
                "{args:?}: {stderr}"
            );
            assert_eq!(
                std::fs::read(d.join("cpu.pb.gz")).unwrap(),
                before.0,
                "{args:?}"
            );
            assert_eq!(
                std::fs::read(d.join("cpu.txt")).unwrap(),
                before.1,
                "{args:?}"
            );
        }
    }
    // --in-place is how convert is asked to replace its input.
    ok(
        d,
        &[
            "convert",
            "--to",
            "otlp",
            "cpu.pb.gz",
            "-o",
            "cpu.pb.gz",
            "--in-place",
        ],
    );
    assert_ne!(std::fs::read(d.join("cpu.pb.gz")).unwrap(), before.0);
}

/// An output named `*.gz` is written with gzip, as pprof writes it; other
/// names as they were.
#[test]
fn outputs_named_gz_are_gzip() {
    let dir = workdir();
    let d = dir.path();
    let is_gzip = |name: &str| {
        std::fs::read(d.join(name))
            .unwrap()
            .starts_with(&[0x1f, 0x8b])
    };
    let commands: [&[&str]; 6] = [
        &[
            "encode",
            "--type",
            "perftools.profiles.Profile",
            "cpu.txt",
            "-o",
            "e.pb.gz",
        ],
        &["convert", "--to", "otlp", "cpu.pb.gz", "-o", "c.otlp.pb.gz"],
        &["merge", "cpu.pb.gz", "after.pb.gz", "-o", "m.pb.gz"],
        &["decode", "cpu.pb.gz", "-o", "d.txt.gz"],
        &["flamegraph", "cpu.pb.gz", "-o", "f.svg.gz"],
        &[
            "encode",
            "--type",
            "perftools.profiles.Profile",
            "cpu.txt",
            "-o",
            "plain.pb",
        ],
    ];
    for args in commands {
        ok(d, args);
        let output = args[args.len() - 1];
        assert_eq!(is_gzip(output), output.ends_with(".gz"), "{args:?}");
    }
    // What was written reads back as what was meant.
    let encoded =
        Profile::parse_from_bytes(&protoprof_tests::read_profile_bytes(&d.join("e.pb.gz")))
            .unwrap();
    let plain = Profile::parse_from_bytes(&std::fs::read(d.join("plain.pb")).unwrap()).unwrap();
    assert_eq!(encoded, plain);
    assert_eq!(
        ok(d, &["top", "m.pb.gz"]),
        ok(d, &["top", "cpu.pb.gz", "after.pb.gz"])
    );
}

/// Every command that prints ends quietly when standard output is closed
/// early (`| head`), with no panic and the status it would have had.
#[test]
fn a_closed_pipe_ends_every_command_quietly() {
    let dir = workdir();
    let d = dir.path();
    let commands: [&[&str]; 14] = [
        &["completions", "bash"],
        &["--help"],
        &["inspect", "cpu.pb.gz"],
        &["view", "cpu.pb.gz"],
        &["decode", "cpu.pb.gz"],
        &["decode", "--raw", "cpu.pb.gz"],
        &["top", "cpu.pb.gz"],
        &["traces", "cpu.pb.gz"],
        &["tags", "cpu.pb.gz"],
        &["peek", "main", "cpu.pb.gz"],
        &["folded", "cpu.pb.gz"],
        &["diff", "cpu.pb.gz", "after.pb.gz"],
        &["validate", "cpu.pb.gz"],
        &["convert", "--to", "otlp", "cpu.pb.gz", "-o", "-"],
    ];
    for args in commands {
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("protoprof"))
            .args(args)
            .current_dir(d)
            .env("PAGER", "cat")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The reader goes away before the command writes.
        drop(child.stdout.take());
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
    }
}

/// Usage errors are one line in the format of every error, naming the help
/// to read; a URL protoprof cannot fetch is named as a URL, not as a
/// missing file.
#[test]
fn errors_are_one_line() {
    let dir = workdir();
    let d = dir.path();
    let cases: [(&[&str], &str); 5] = [
        (&["top", "--bogus", "cpu.pb.gz"], "protoprof top --help"),
        (&["top"], "<FILE>"),
        (&["frobnicate"], "protoprof --help"),
        (
            &["top", "--granularity", "words", "cpu.pb.gz"],
            "possible values",
        ),
        (
            &["top", "ftp://127.0.0.1/debug/pprof/profile"],
            "fetches http://, https:// and https+insecure:// URLs",
        ),
    ];
    for (args, says) in cases {
        let (status, stdout, stderr) = run(d, args);
        assert_eq!(status, 2, "{args:?}");
        assert!(stdout.is_empty(), "{args:?}: {stdout}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.starts_with("protoprof: error: "),
            "{args:?}: {stderr}"
        );
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    // A write that cannot happen names the output, not a temporary file.
    let (status, _, stderr) = run(d, &["decode", "cpu.pb.gz", "-o", "missing-dir/out.txt"]);
    assert_eq!(status, 2);
    assert_eq!(
        stderr,
        "protoprof: error: missing-dir/out.txt: No such file or directory (os error 2)\n"
    );
    // validate names a file it cannot read once, on standard error, and
    // goes on with the others.
    let (status, stdout, stderr) = run(d, &["validate", "missing.pb", "cpu.pb.gz"]);
    assert_eq!(status, 2);
    assert_eq!(stderr.matches("missing.pb").count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("protoprof: error: missing.pb: "),
        "{stderr}"
    );
    assert!(stdout.contains("cpu.pb.gz: valid"), "{stdout}");
}

/// `diff` refuses profiles pprof would not compare (different sample
/// types), and prints units, totals and shares like the other reports.
#[test]
fn diff_compares_only_comparable_profiles() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = workdir();
    let d = dir.path();
    let heap = corpus.join("pprof/go/go-heap.pb.gz");
    let cpu = corpus.join("pprof/go/go-cpu.pb.gz");
    let (status, stdout, stderr) = run(d, &["diff", heap.to_str().unwrap(), cpu.to_str().unwrap()]);
    assert_eq!(status, 1, "{stdout}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(stderr.contains("cannot compare"), "{stderr}");
    // The same refusal as top --diff-base gives.
    let (status, _, _) = run(
        d,
        &[
            "top",
            "--diff-base",
            heap.to_str().unwrap(),
            cpu.to_str().unwrap(),
        ],
    );
    assert_eq!(status, 1);
    let text = ok(d, &["diff", "-n", "3", "cpu.pb.gz", "after.pb.gz"]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "Type: cpu");
    assert_eq!(lines[1], "Base: cpu.pb.gz, total 3190ms");
    assert!(lines[2].starts_with("New: after.pb.gz, total "), "{text}");
    assert!(lines[3].starts_with("Showing 3 of "), "{text}");
    // main.mix fell from 740ms to 260ms: -480ms, 15.05% of the base's total.
    assert!(
        lines
            .iter()
            .any(|l| l.contains("-480ms") && l.contains("-15.05%") && l.ends_with("main.mix")),
        "{text}"
    );
    let json: serde_json::Value = serde_json::from_str(&ok(
        d,
        &["diff", "--format", "json", "cpu.pb.gz", "after.pb.gz"],
    ))
    .unwrap();
    assert_eq!(json["sample_type"], "cpu");
    assert_eq!(json["unit"], "nanoseconds");
    assert_eq!(json["base_total"], 3_190_000_000i64);
}

/// A filter that matches nothing is said, as pprof says it, rather than
/// leaving an empty report to speak for itself; so is a tag filter read as
/// a range.
#[test]
fn filters_that_match_nothing_are_said() {
    let dir = workdir();
    let d = dir.path();
    let (status, _, stderr) = run(d, &["top", "--focus", "no_such_function", "cpu.pb.gz"]);
    assert_eq!(status, 0);
    assert_eq!(stderr, "protoprof: Focus expression matched no samples\n");
    let (_, _, stderr) = run(
        d,
        &[
            "folded",
            "--ignore",
            "zzz",
            "--hide",
            "main\\.burn",
            "cpu.pb.gz",
        ],
    );
    assert_eq!(stderr, "protoprof: Ignore expression matched no samples\n");
    let (_, _, stderr) = run(d, &["traces", "--tagfocus", "1kb", "cpu.pb.gz"]);
    assert!(stderr.contains("interpreted '1kb' as a range"), "{stderr}");
    assert!(
        stderr.contains("TagFocus expression matched no samples"),
        "{stderr}"
    );
    // Filters that match say nothing.
    let (_, _, stderr) = run(
        d,
        &[
            "top",
            "--focus",
            "main",
            "--tagfocus",
            "phase=.",
            "cpu.pb.gz",
        ],
    );
    assert_eq!(stderr, "");
}

/// `inspect` names the form truthfully (a legacy profile is not "binary
/// protobuf") and shows OTLP resource attributes apart from the scope.
#[test]
fn inspect_says_what_the_input_is() {
    let dir = workdir();
    let d = dir.path();
    ok(
        d,
        &[
            "convert",
            "--to",
            "otlp",
            "--resource",
            "service.name=checkout",
            "cpu.pb.gz",
            "-o",
            "cpu.otlp.pb",
        ],
    );
    let text = ok(d, &["inspect", "cpu.otlp.pb"]);
    assert!(
        text.contains("  resource 0: service.name=\"checkout\"\n"),
        "{text}"
    );
    assert!(
        text.contains("    scope protoprof: cpu/nanoseconds samples 176"),
        "{text}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&ok(d, &["inspect", "--format", "json", "cpu.otlp.pb"])).unwrap();
    assert_eq!(
        json["otlp_v1development"]["resource_attributes"][0][0],
        "service.name=\"checkout\""
    );
    let text = ok(d, &["inspect", "cpu.pb.gz"]);
    assert!(text.contains("(binary protobuf)"), "{text}");
    let Some(legacy) = protoprof_tests::legacy_testdata() else {
        return; // no Go (and not under CI)
    };
    for name in [
        "cppbench.cpu",
        "go.crc32.cpu",
        "cppbench.contention",
        "gobench.heap",
        "go.godoc.thread",
        "java.cpu",
    ] {
        let path = legacy.join(name);
        if !path.exists() {
            continue;
        }
        let text = ok(d, &["inspect", path.to_str().unwrap()]);
        assert!(
            text.contains("(legacy format, not protobuf"),
            "{name}: {text}"
        );
        assert!(!text.contains("binary protobuf"), "{name}: {text}");
    }
}

/// Every command has examples in its help, and every option and argument a
/// description (a line of `-h` that names an option and says nothing more
/// is one without).
#[test]
fn every_option_is_described_and_every_command_has_examples() {
    let dir = workdir();
    let d = dir.path();
    let commands = [
        "inspect",
        "view",
        "decode",
        "encode",
        "edit",
        "convert",
        "validate",
        "top",
        "traces",
        "tags",
        "peek",
        "folded",
        "flamegraph",
        "diff",
        "merge",
        "frames",
        "completions",
        "relay serve",
        "relay push",
        "relay watch",
        "tree",
        "list",
        "callgraph",
        "callgrind",
        "serve",
        "filter",
        "send",
        "receive",
    ];
    let bare = regex_lite_bare_option;
    for command in commands {
        let mut args: Vec<&str> = command.split(' ').collect();
        args.push("-h");
        let help = ok(d, &args);
        assert!(help.contains("Example"), "{command}: no example\n{help}");
        // One name per concept: inputs are FILE everywhere.
        assert!(!help.contains("<FILES>"), "{command}: {help}");
        let lines: Vec<&str> = help.lines().collect();
        let indent = |l: &str| l.len() - l.trim_start().len();
        // clap puts a description on the next line, deeper, when the
        // options are wide.
        let undescribed: Vec<&str> = (0..lines.len())
            .filter(|&i| bare(lines[i]))
            .filter(|&i| {
                lines
                    .get(i + 1)
                    .is_none_or(|next| next.trim().is_empty() || indent(next) <= indent(lines[i]))
            })
            .map(|i| lines[i])
            .collect();
        assert!(undescribed.is_empty(), "{command}: {undescribed:?}");
    }
}

/// `  -o, --output <FILE>` or `  <FILE>` with nothing after it.
fn regex_lite_bare_option(line: &str) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    let names_option = |w: &&str| w.starts_with('-') || (w.starts_with('<') && w.ends_with('>'));
    let value = |w: &&str| w.starts_with('<') || w.starts_with('[');
    let indent = line.len() - line.trim_start().len();
    // Options stand 2 or 6 columns in; deeper lines continue a description.
    (2..=6).contains(&indent)
        && !words.is_empty()
        && names_option(&words[0])
        && words
            .iter()
            .all(|w| names_option(w) || value(w) || w.ends_with(','))
}

/// Each global section of the help is listed where it applies: no limits,
/// URLs or schemas for `completions`, no user schemas for `merge`; every
/// option's text is its own (`--tagshow` once began with
/// `--granularity`'s), and `<SHELL>` is described.
#[test]
fn help_shows_each_section_where_it_applies() {
    let dir = workdir();
    let d = dir.path();
    let sections = ["Limits:", "Inputs from URLs:", "Your own schemas:"];
    let shown = |args: &[&str]| -> Vec<&'static str> {
        let help = ok(d, args);
        sections
            .into_iter()
            .filter(|s| help.lines().any(|l| l == *s))
            .collect()
    };
    assert_eq!(shown(&["completions", "--help"]), Vec::<&str>::new());
    assert_eq!(
        shown(&["merge", "--help"]),
        ["Limits:", "Inputs from URLs:"]
    );
    assert_eq!(shown(&["top", "-h"]), ["Limits:", "Inputs from URLs:"]);
    assert_eq!(shown(&["decode", "--help"]), sections);
    assert_eq!(
        shown(&["help", "relay", "watch"]),
        ["Limits:", "Your own schemas:"]
    );
    let completions = ok(d, &["completions", "--help"]);
    assert!(completions.contains("<SHELL>  The shell"), "{completions}");
    assert!(!completions.contains("--otlp-revision"), "{completions}");
    let top = ok(d, &["top", "--help"]);
    // The label filters of the label reports are listed there only.
    assert!(!top.contains("--tagshow"), "{top}");
    let tags = ok(d, &["tags", "--help"]);
    let tagshow = tags
        .lines()
        .find(|l| l.contains("--tagshow <REGEX>"))
        .unwrap();
    assert!(tagshow.contains("Show only the labels"), "{tagshow}");
    let granularity = top.lines().find(|l| l.contains("--granularity <")).unwrap();
    assert!(
        granularity.contains("Name (and merge) frames"),
        "{granularity}"
    );
    // Hidden is not refused: a section given where it means nothing is
    // accepted, as before.
    let (status, _, stderr) = run(d, &["completions", "--max-depth", "5", "bash"]);
    assert_eq!(status, 0, "{stderr}");
}
