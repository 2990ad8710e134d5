//! `protoprof pprof` against `go tool pprof`, byte for byte:
//! - a table of real flag lines (`-list`, `-tags -tagfocus`, `-dot`,
//!   `-base`, `-diff_base`, `-peek -cum`, `-compact_labels`, `-raw`,
//!   `-callgrind`, `-symbolize=none`, `-divide_by`, `-drop_negative`), images drawn by Graphviz (`-png`,
//!   `-pdf`, `-ps`, `-gif`), and `-proto`, whose output reads the same in
//!   `go tool pprof -raw` as pprof's own;
//! - `-raw` of every real profile of the corpus;
//! - the interactive shell driven through standard input (`top 5`,
//!   `focus=main`, `list`, `peek`, `tags`, `granularity=lines`, `quit`):
//!   what is printed after each prompt.

mod common;

use std::path::{Path, PathBuf};
use std::process::Stdio;

use common::{ok, protoprof, run};
use protoprof_tests::corpus_dir;

/// `go tool pprof ARGS` in `dir` (UTC times), with `stdin` as its input:
/// (status, stdout).
fn go_pprof(dir: &Path, args: &[&str], stdin: &str) -> (bool, Vec<u8>) {
    let mut child = std::process::Command::new("go")
        .args(["tool", "pprof"])
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .env("TZ", "UTC")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    (output.status.success(), output.stdout)
}

/// The corpus and a directory to work in, when Go is here (or CI says it
/// must be).
fn setup() -> Option<(PathBuf, tempfile::TempDir)> {
    let corpus = corpus_dir()?;
    protoprof_tests::go_pprof_check(&[])?;
    Some((corpus, tempfile::tempdir().unwrap()))
}

#[test]
fn flag_lines_print_what_go_tool_pprof_prints() {
    let Some((corpus, dir)) = setup() else { return };
    let d = dir.path();
    let real = |name: &str| corpus.join("pprof/real").join(name);
    let cpu = real("go-cpu-labels-exemplars.pb.gz");
    let heap = real("go-heap.pb.gz");
    let base = format!("-base={}", heap.display());
    let diff_base = format!("-diff_base={}", real("go-heap-delta.pb.gz").display());
    let cases: Vec<(Vec<&str>, &Path)> = vec![
        (vec!["-list=main.work"], &cpu),
        (vec!["-tags", "-tagfocus=function=slow"], &cpu),
        (vec!["-dot", "-nodecount=12"], &cpu),
        (vec!["-peek=.", "-cum"], &heap),
        (
            vec!["-top", "-compact_labels", "-sample_index=alloc_space"],
            &heap,
        ),
        (vec!["-top", &base], &heap),
        (vec!["-top", &diff_base], &heap),
        (vec!["-traces", "-symbolize=none"], &cpu),
        (vec!["-callgrind"], &cpu),
        (vec!["-raw", "-focus=main"], &cpu),
        (vec!["-top", "-divide_by=1000"], &cpu),
        (vec!["-top", "-divide_by=-2"], &cpu),
        (vec!["-tags", "-divide_by=2"], &cpu),
        (vec!["-list=main.work", "-divide_by=1e6"], &cpu),
        (vec!["-dot", "-divide_by=100"], &cpu),
        (vec!["-peek=.", "-divide_by=10"], &cpu),
        (vec!["-top", "-drop_negative", &diff_base], &heap),
        (vec!["-top", "-mean"], &heap),
        (vec!["-peek=.", "-mean"], &heap),
        (vec!["-dot", "-drop_negative", &diff_base], &heap),
    ];
    for (flags, file) in cases {
        let mut args = flags.clone();
        args.push(file.to_str().unwrap());
        let (go_ok, theirs) = go_pprof(d, &args, "");
        assert!(go_ok, "go tool pprof {args:?}");
        let ours = [&["pprof"][..], &args].concat();
        assert_eq!(ok(d, &ours), String::from_utf8_lossy(&theirs), "{flags:?}");
    }
    // Images, drawn by the same Graphviz from the same DOT: the same bytes.
    let dot = std::process::Command::new("dot").arg("-V").output().is_ok();
    if protoprof_tests::available_or_skip(dot, "Graphviz's dot") {
        for flag in ["-png", "-pdf", "-ps", "-gif"] {
            let args = [flag, "-nodecount=10", cpu.to_str().unwrap()];
            let (go_ok, theirs) = go_pprof(d, &args, "");
            assert!(go_ok, "{flag}");
            let ours = protoprof(d).arg("pprof").args(args).output().unwrap();
            assert!(ours.status.success(), "{flag}");
            assert!(ours.stdout == theirs, "{flag}: {} bytes", ours.stdout.len());
        }
    }
    // `-proto`: gzipped pprof on standard output, read alike by pprof.
    // `-topproto`: the top rows as a profile, read alike by pprof too.
    let proto_lines: [(&[&str], &Path); 7] = [
        (&["-proto"], &cpu),
        (&["-proto", "-focus=main", "-hide=runtime"], &cpu),
        (&["-proto", "-divide_by=4"], &cpu),
        (&["-topproto"], &cpu),
        (&["-topproto", "-nodecount=5", "-lines"], &cpu),
        (&["-topproto", "-addresses", "-cum"], &cpu),
        (&["-topproto", "-filefunctions", "-mean"], &heap),
    ];
    for (flags, file) in proto_lines {
        let mut args = flags.to_vec();
        args.push(file.to_str().unwrap());
        let ours = protoprof(d).arg("pprof").args(&args).output().unwrap();
        assert!(ours.status.success());
        assert_eq!(&ours.stdout[..2], b"\x1f\x8b", "gzip");
        std::fs::write(d.join("ours.pb.gz"), &ours.stdout).unwrap();
        std::fs::write(d.join("theirs.pb.gz"), go_pprof(d, &args, "").1).unwrap();
        let raw = |f: &str| go_pprof(d, &["-raw", f], "").1;
        assert_eq!(raw("ours.pb.gz"), raw("theirs.pb.gz"), "{flags:?}");
    }
}

/// Every real profile of the corpus but two: one pprof refuses (function
/// ids 0, which protoprof reads, with a warning) and one of invalid UTF-8
/// (which protoprof prints replaced, with a warning).
#[test]
fn raw_prints_every_real_profile_as_go_tool_pprof_does() {
    let Some((corpus, dir)) = setup() else { return };
    let d = dir.path();
    let mut files = protoprof_tests::files_under(&corpus.join("pprof/real"));
    files.extend(protoprof_tests::files_under(&corpus.join("pprof/go")));
    let mut compared = 0;
    for file in files {
        let name = file.file_name().unwrap().to_str().unwrap();
        if name.contains("function-id-0") || name.contains("invalid-utf8") {
            continue;
        }
        let file = file.to_str().unwrap();
        let (go_ok, theirs) = go_pprof(d, &["-raw", file], "");
        assert!(go_ok, "{name}");
        let (status, ours, stderr) = run(d, &["pprof", "-raw", file]);
        assert_eq!(status, 0, "{name}: {stderr}");
        assert_eq!(ours, String::from_utf8_lossy(&theirs), "{name}");
        compared += 1;
    }
    assert!(compared >= 30, "{compared} profiles compared");
}

/// The shell on `file` with `script` on standard input: pprof's standard
/// output and ours.
fn shell_outputs(d: &Path, file: &Path, script: &str) -> (String, String) {
    let file = file.to_str().unwrap();
    let (go_ok, theirs) = go_pprof(d, &[file], script);
    assert!(go_ok);
    let ours = protoprof(d)
        .args(["pprof", file])
        .write_stdin(script)
        .output()
        .unwrap();
    assert!(
        ours.status.success(),
        "{}",
        String::from_utf8_lossy(&ours.stderr)
    );
    (
        String::from_utf8_lossy(&ours.stdout).into_owned(),
        String::from_utf8_lossy(&theirs).into_owned(),
    )
}

#[test]
fn the_shell_prints_what_pprofs_prints_after_each_prompt() {
    let Some((corpus, dir)) = setup() else { return };
    let d = dir.path();
    let cpu = corpus.join("pprof/real/go-cpu-labels-exemplars.pb.gz");
    let script = "top 5\nfocus=main\ntop 3\ntraces\nfocus=\ntop10 -runtime\n\
                  tree 3\npeek main.work\nlist main.work\ntags\ntags foo\n\
                  granularity=lines\ntop 4\nsort=cum\ntop 3\nquit\n";
    let (ours, theirs) = shell_outputs(d, &cpu, script);
    assert!(ours.matches("(pprof) ").count() >= 16, "{ours}");
    assert_eq!(ours, theirs);

    let heap = corpus.join("pprof/real/go-heap.pb.gz");
    let script = "sample_index=alloc_space\ntop 5\nsample_index=inuse_objects\ntop 3 runtime\n";
    let (ours, theirs) = shell_outputs(d, &heap, script);
    assert_eq!(ours, theirs, "ended by the end of input");

    // What the shell refuses is said on standard error, and it goes on.
    let out = protoprof(d)
        .args(["pprof", heap.to_str().unwrap()])
        .write_stdin("frobnicate\nnodecount\ntop 1\n")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("unrecognized command or option: frobnicate"),
        "{stderr}"
    );
    assert!(stderr.contains("nodecount is an option"), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("flat%"));
}

/// `-web`, `-eog`, `-evince`, `-gv` and `-kcachegrind`: the report pprof's
/// `-svg`, `-pdf`, `-ps` and `-callgrind` write, handed in a temporary
/// file to the viewer pprof runs (`$BROWSER` first for `-web`; `gv` with
/// `--noantialias`). Stand-in viewers here keep a copy of what they got.
#[test]
fn viewers_are_given_the_report_in_a_file() {
    let Some(corpus) = corpus_dir() else { return };
    let dot = std::process::Command::new("dot").arg("-V").output().is_ok();
    if !protoprof_tests::available_or_skip(dot, "Graphviz's dot") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bin = d.join("bin");
    std::fs::create_dir(&bin).unwrap();
    for viewer in ["eog", "evince", "gv", "kcachegrind", "my-browser"] {
        let script = format!(
            "#!/bin/sh\necho \"$@\" > '{dir}/{viewer}.args'\nfor a; do last=$a; done\ncp \"$last\" '{dir}/{viewer}.got'\n",
            dir = d.display()
        );
        let path = bin.join(viewer);
        std::fs::write(&path, script).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let cpu = corpus.join("pprof/real/go-cpu-labels-exemplars.pb.gz");
    let cpu = cpu.to_str().unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let pprof = |flag: &str| {
        let out = protoprof(d)
            .args(["pprof", flag, cpu])
            .env("PATH", &path)
            .env("BROWSER", "my-browser")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{flag}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    for (flag, viewer, same_as) in [
        ("-web", "my-browser", "-svg"),
        ("-eog", "eog", "-svg"),
        ("-evince", "evince", "-pdf"),
        ("-gv", "gv", "-ps"),
        ("-kcachegrind", "kcachegrind", "-callgrind"),
    ] {
        assert!(pprof(flag).is_empty(), "{flag} prints nothing");
        let got = std::fs::read(d.join(format!("{viewer}.got"))).unwrap();
        let same = undated(&got) == undated(&pprof(same_as));
        assert!(same, "{flag}: {} bytes", got.len());
        let args = std::fs::read_to_string(d.join(format!("{viewer}.args"))).unwrap();
        let file = args.split_whitespace().last().unwrap();
        assert!(
            !Path::new(file).exists(),
            "{flag}: the temporary file is removed"
        );
    }
    let gv = std::fs::read_to_string(d.join("gv.args")).unwrap();
    assert!(gv.starts_with("--noantialias "), "{gv}");
}

/// A drawing without the creation time Cairo writes into PDF and PostScript.
fn undated(bytes: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for mark in [&b"/CreationDate ("[..], b"%%CreationDate: "] {
        if let Some(at) = out.windows(mark.len()).position(|w| w == mark) {
            let from = at + mark.len();
            let end = (out[from..].iter())
                .position(|&b| b == b')' || b == b'\n')
                .map_or(out.len(), |n| from + n);
            out.drain(from..end);
        }
    }
    out
}
