//! `protoprof pprof` against `go tool pprof`, byte for byte:
//! - a table of real flag lines (`-list`, `-tags -tagfocus`, `-dot`,
//!   `-base`, `-diff_base`, `-peek -cum`, `-compact_labels`, `-raw`,
//!   `-callgrind`, `-symbolize=none`, `-symbolize=demangle=…`,
//!   `-divide_by`, `-drop_negative`), images drawn by Graphviz (`-png`,
//!   `-pdf`, `-ps`, `-gif`), `-svg` (but for its pan-and-zoom script, ours),
//!   and `-proto`, whose output reads the same in `go tool pprof -raw` as
//!   pprof's own;
//! - `-raw` of every real profile of the corpus;
//! - the interactive shell driven through standard input (`top 5`,
//!   `focus=main`, `list`, `peek`, `tags`, `granularity=lines`, `quit`):
//!   what is printed after each prompt.

mod common;

use std::path::{Path, PathBuf};

use common::{ok, protoprof, run};
use protoprof_tests::corpus_dir;

/// `go tool pprof` in `dir`, with `dir` as its home and times in UTC.
fn go_pprof_command(dir: &Path) -> std::process::Command {
    let mut go = std::process::Command::new("go");
    go.args(["tool", "pprof"])
        .current_dir(dir)
        .env("HOME", dir)
        .env("TZ", "UTC");
    go
}

/// `go tool pprof ARGS` in `dir` (UTC times), with `stdin` as its input:
/// (status, stdout).
fn go_pprof(dir: &Path, args: &[&str], stdin: &str) -> (bool, Vec<u8>) {
    let mut go = go_pprof_command(dir);
    go.args(args);
    let output = assert_cmd::Command::from_std(go)
        .write_stdin(stdin)
        .output()
        .unwrap();
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
    // Names pprof simplifies (`<T as Trait>::f`), unless told not to symbolize.
    let rust = real("rust-cpu.pb.gz");
    let base = format!("-base={}", heap.display());
    let diff_base = format!("-diff_base={}", real("go-heap-delta.pb.gz").display());
    let delta = real("go-heap-delta.pb.gz");
    let heap_as_diff_base = format!("-diff_base={}", heap.display());
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
        (vec!["-top", "-divide_by=nan"], &cpu),
        (vec!["-top", "-divide_by=-inf"], &cpu),
        (vec!["-top", "-focus=-runtime|main"], &cpu),
        (vec!["-tags", "-divide_by=2"], &cpu),
        (vec!["-list=main.work", "-divide_by=1e6"], &cpu),
        (vec!["-dot", "-divide_by=100"], &cpu),
        (vec!["-peek=.", "-divide_by=10"], &cpu),
        (vec!["-top", "-drop_negative", &diff_base], &heap),
        (vec!["-top", "-mean"], &heap),
        (vec!["-comments", "-add_comment=from the test"], &cpu),
        (vec!["-top", "-add_comment=from the test"], &cpu),
        (vec!["-top", "-nodecount=3", "-trim=false"], &cpu),
        (vec!["-top", "-nodecount=3", "-nodecount=5"], &cpu),
        (vec!["-dot", "-trim=false"], &cpu),
        (vec!["-top", "-nodecount=200", "-symbolize=none"], &rust),
        (vec!["-top", "-nodecount=200"], &rust),
        (vec!["-raw", "-symbolize=none"], &rust),
        // A demangling mode forces itself on every name, simplified ones too.
        (
            vec!["-top", "-nodecount=12", "-symbolize=demangle=full"],
            &rust,
        ),
        (
            vec!["-top", "-nodecount=12", "-symbolize=demangle=templates"],
            &rust,
        ),
        (vec!["-raw", "-symbolize=demangle=none"], &rust),
        (vec!["-traces", "-symbolize=local:demangle=full"], &cpu),
        (vec!["-peek=.", "-mean"], &heap),
        (vec!["-dot", "-drop_negative", &diff_base], &heap),
        // Edges of weight 0 (samples of value 0 with a divisor): pprof's
        // entropy score is NaN, which Go turns into i64::MIN.
        (vec!["-dot", "-mean"], &heap),
        // Only the total of a -list is a mean.
        (vec!["-list=main", "-mean"], &cpu),
        // No label box for the diff base's marking label.
        (vec!["-dot", &heap_as_diff_base], &delta),
    ];
    for (flags, file) in cases {
        let mut args = flags.clone();
        args.push(file.to_str().unwrap());
        let (go_ok, theirs) = go_pprof(d, &args, "");
        assert!(go_ok, "go tool pprof {args:?}");
        let ours = [&["pprof"][..], &args].concat();
        assert_eq!(ok(d, &ours), String::from_utf8_lossy(&theirs), "{flags:?}");
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

/// Images drawn by the same Graphviz from the same DOT: pprof's bytes
/// (`-png`, `-pdf`, `-ps`, `-gif`; but for the second Cairo dates a PDF or
/// PostScript file with), and `-svg` but for its pan-and-zoom script.
#[test]
fn images_are_what_go_tool_pprof_draws() {
    let Some((corpus, dir)) = setup() else { return };
    let d = dir.path();
    let cpu = corpus.join("pprof/real/go-cpu-labels-exemplars.pb.gz");
    let dot = std::process::Command::new("dot").arg("-V").output().is_ok();
    if protoprof_tests::available_or_skip(dot, "Graphviz's dot") {
        for flag in ["-png", "-pdf", "-ps", "-gif"] {
            let args = [flag, "-nodecount=10", cpu.to_str().unwrap()];
            let (go_ok, theirs) = go_pprof(d, &args, "");
            assert!(go_ok, "{flag}");
            let ours = protoprof(d).arg("pprof").args(args).output().unwrap();
            assert!(ours.status.success(), "{flag}");
            let same = undated(&ours.stdout) == undated(&theirs);
            assert!(same, "{flag}: {} bytes", ours.stdout.len());
        }
        // `-svg`: pprof's bytes, but for the pan-and-zoom script (ours).
        let without_script = |svg: &str| -> String {
            let (head, rest) = svg.split_once("<![CDATA[").expect("a script");
            let (_, tail) = rest.split_once("]]>").expect("closed");
            format!("{head}{tail}")
        };
        for flags in [&["-svg"][..], &["-svg", "-nodecount=5", "-focus=main"]] {
            let args = [flags, &["-output=g.svg", cpu.to_str().unwrap()]].concat();
            let (go_ok, _) = go_pprof(d, &args, "");
            assert!(go_ok, "{flags:?}");
            let theirs = std::fs::read_to_string(d.join("g.svg")).unwrap();
            ok(d, &[&["pprof"][..], &args].concat());
            let ours = std::fs::read_to_string(d.join("g.svg")).unwrap();
            assert!(ours.contains("getElementById(\"viewport\")"), "our script");
            assert_eq!(without_script(&ours), without_script(&theirs), "{flags:?}");
        }
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

/// `-call_tree`: a node per call path, in the call graph and in callgrind's
/// file. pprof orders nodes of equal weight as its maps happen to iterate,
/// so its own output varies from run to run; compared here up to that
/// order: DOT's statements with each node named by its label, callgrind's
/// costs and calls with names and addresses written out in full.
#[test]
fn call_trees_are_pprofs_up_to_the_order_of_equal_nodes() {
    let Some((corpus, dir)) = setup() else { return };
    let d = dir.path();
    let cpu = corpus.join("pprof/real/go-cpu-labels-exemplars.pb.gz");
    let heap = corpus.join("pprof/real/go-heap.pb.gz");
    let cases: [(&[&str], &Path); 10] = [
        (&["-dot"], &cpu),
        (&["-dot", "-nodecount=10"], &cpu),
        (&["-dot", "-nodefraction=0"], &cpu),
        (&["-dot", "-lines"], &cpu),
        (&["-dot", "-focus=main"], &cpu),
        (&["-dot"], &heap),
        (&["-dot", "-nodecount=10"], &heap),
        (&["-dot", "-nodefraction=0"], &heap),
        (&["-callgrind"], &cpu),
        (&["-callgrind"], &heap),
    ];
    for (flags, file) in cases {
        let args = [&["-call_tree"], flags, &[file.to_str().unwrap()]].concat();
        let (go_ok, theirs) = go_pprof(d, &args, "");
        assert!(go_ok, "{args:?}");
        let theirs = String::from_utf8(theirs).unwrap();
        let ours = ok(d, &[&["pprof"][..], &args].concat());
        let canonical = match flags[0] {
            "-dot" => dot_statements,
            _ => callgrind_records,
        };
        assert_eq!(canonical(&ours), canonical(&theirs), "{args:?}");
    }
    let plain = ok(d, &["pprof", "-dot", cpu.to_str().unwrap()]);
    let tree = ok(d, &["pprof", "-dot", "-call_tree", cpu.to_str().unwrap()]);
    assert_ne!(dot_statements(&plain), dot_statements(&tree));
}

/// DOT's lines, sorted, with each node id (`N3`, `NN3_0`) replaced by its
/// node's label and the `id` attributes left out.
fn dot_statements(dot: &str) -> Vec<String> {
    let node = regex::Regex::new(r#"^(N\d+) \[label="((?:[^"\\]|\\.)*)""#).unwrap();
    let labels: std::collections::HashMap<String, String> = (dot.lines())
        .filter_map(|l| node.captures(l))
        .map(|c| (c[1].to_string(), c[2].to_string()))
        .collect();
    let id = regex::Regex::new(r"\bNN?(\d+)(_\d+)?\b").unwrap();
    let id_attribute = regex::Regex::new(r#" id="node\d+""#).unwrap();
    let mut lines: Vec<String> = (dot.lines())
        .map(|l| {
            let l = id_attribute.replace_all(l, "");
            let named = id.replace_all(&l, |c: &regex::Captures| {
                let label = labels
                    .get(&format!("N{}", &c[1]))
                    .map_or("?", String::as_str);
                format!("<{label}>{}", c.get(2).map_or("", |m| m.as_str()))
            });
            named.into_owned()
        })
        .collect();
    lines.sort();
    lines
}

/// A callgrind file's costs (`object file function address line cost`)
/// and calls (the caller's cost, then the callee's file, function, address,
/// line and cost), sorted: names given in full for their `(N)` references,
/// pprof's `[i/n]` numbering of a name's instances left out, and addresses
/// made absolute (a relative one is from the previous cost line's).
fn callgrind_records(text: &str) -> Vec<String> {
    use std::collections::HashMap;
    fn name(table: &mut HashMap<String, String>, value: &str) -> String {
        let (reference, name) = match value.split_once(' ') {
            Some((r, n)) => (r, Some(n)),
            None => (value, None),
        };
        if let Some(n) = name {
            table.insert(reference.to_string(), n.to_string());
        }
        let full = table.get(reference).cloned().unwrap_or_default();
        match full.rsplit_once(" [") {
            Some((base, n)) if n.ends_with(']') => base.to_string(),
            _ => full,
        }
    }
    let address = |token: &str, previous: Option<u64>| -> u64 {
        let previous = previous.unwrap_or(0);
        match token {
            "*" => previous,
            t if t.starts_with('+') => previous.wrapping_add(t[1..].parse::<u64>().unwrap()),
            t if t.starts_with('-') => previous.wrapping_sub(t[1..].parse::<u64>().unwrap()),
            t => u64::from_str_radix(t.trim_start_matches("0x"), 16).unwrap(),
        }
    };
    let (mut objects, mut files, mut functions) = Default::default();
    let (mut ob, mut fl, mut func) = (String::new(), String::new(), String::new());
    let (mut callee, mut call) = ((String::new(), String::new()), String::new());
    let (mut previous, mut this): (Option<u64>, Option<u64>) = (None, None);
    let (mut cost_line, mut records) = (String::new(), Vec::new());
    for line in text.lines() {
        let words: Vec<&str> = line.split(' ').collect();
        if let Some(v) = line.strip_prefix("ob=") {
            ob = name(&mut objects, v);
        } else if let Some(v) = line.strip_prefix("fl=") {
            fl = name(&mut files, v);
        } else if let Some(v) = line.strip_prefix("fn=") {
            func = name(&mut functions, v);
        } else if let Some(v) = line.strip_prefix("cfl=") {
            callee.0 = name(&mut files, v);
        } else if let Some(v) = line.strip_prefix("cfn=") {
            callee.1 = name(&mut functions, v);
        } else if words.len() == 3 && words[0] == "calls=0" {
            // pprof writes a call's address from the node before its caller's.
            call = format!("{:x} {}", address(words[1], previous), words[2]);
        } else if words.len() == 3 && words[0] == "*" && words[1] == "*" {
            records.push(format!(
                "{cost_line} -> {} {} {call} {}",
                callee.0, callee.1, words[2]
            ));
        } else if words.len() == 3 && words[0].starts_with(['0', '+', '-', '*']) {
            previous = this;
            let at = address(words[0], previous);
            this = Some(at);
            cost_line = format!("{ob}|{fl}|{func} {at:x} {} {}", words[1], words[2]);
            records.push(cost_line.clone());
        } else if !line.is_empty() {
            records.push(line.to_string());
        }
    }
    records.sort();
    records
}

/// A profile's time in the local zone, as pprof prints it (`TZ` here):
/// the zone's abbreviation in report headers, the offset too in `-raw`.
#[test]
fn times_are_printed_in_the_local_zone() {
    let Some((corpus, dir)) = setup() else { return };
    let d = dir.path();
    let cpu = corpus.join("pprof/real/go-cpu.pb.gz");
    for zone in ["Asia/Kolkata", "America/St_Johns", "UTC"] {
        for flag in ["-top", "-raw"] {
            let theirs = go_pprof_command(d)
                .args([flag, cpu.to_str().unwrap()])
                .env("TZ", zone)
                .output()
                .unwrap();
            assert!(theirs.status.success());
            let ours = protoprof(d)
                .args(["pprof", flag, cpu.to_str().unwrap()])
                .env("TZ", zone)
                .output()
                .unwrap();
            assert!(ours.status.success());
            let (ours, theirs) = (String::from_utf8(ours.stdout).unwrap(), theirs.stdout);
            assert_eq!(ours, String::from_utf8_lossy(&theirs), "{zone} {flag}");
            let time = ours.lines().find(|l| l.starts_with("Time: ")).unwrap();
            if zone != "UTC" {
                assert!(!time.contains("UTC"), "{time}");
            }
        }
    }
}

/// A `-weblist` page's parts that do not depend on the order pprof meets
/// addresses without a binary in (a Go map's): the page outside its
/// `asm` blocks, and each block's distinct `file:line` notes. The style
/// sheet and the script are protoprof's own and left out.
fn weblist_parts(page: &str) -> (String, Vec<Vec<String>>) {
    let mut outside = String::new();
    let mut blocks = Vec::new();
    let mut rest = page;
    while let Some(at) = rest.find("<span class=asm>") {
        outside.push_str(&rest[..at]);
        let end = rest[at..].find("\n</span>").expect("closed") + at + "\n</span>".len();
        let mut notes: Vec<String> = rest[at..end]
            .split("<span class=unimportant>")
            .skip(1)
            .filter_map(|n| n.split_once("</span>").map(|(n, _)| n.to_string()))
            .collect();
        notes.sort();
        notes.dedup();
        blocks.push(notes);
        rest = &rest[end..];
    }
    outside.push_str(rest);
    let outside = (outside.split("<style").next().unwrap_or("").to_string())
        + outside.split("</script>").last().unwrap_or("");
    (outside, blocks)
}

/// `-weblist` of Go profiles whose binaries are not here: the lines of
/// each function with their values and the inlined calls under them, as
/// upstream pprof writes them (its order of such calls changes from run
/// to run). Not `go tool pprof`: its older copy counts a recursive
/// function's samples once per frame (`main.recurseDeep` at 1528%).
#[test]
fn weblist_without_binaries_lists_what_upstream_pprof_lists() {
    let Some((corpus, dir)) = setup() else { return };
    let Some(upstream) = protoprof_tests::go_tool("pprof-upstream") else {
        return;
    };
    let d = dir.path();
    let example = protoprof_tests::workspace_root().join("examples/cpu.pb.gz");
    let cpu = corpus.join("pprof/real/go-cpu-labels-exemplars.pb.gz");
    let heap = corpus.join("pprof/real/go-heap.pb.gz");
    // Not the whole CPU profile: two functions share a line in it, and
    // which of them names the range depends on that map order.
    let lines: [(&[&str], &Path); 5] = [
        (&["-weblist=main\\."], &example),
        (&["-weblist=.", "-mean"], &example),
        (&["-weblist=runtime\\."], &cpu),
        (&["-weblist=main\\.", "-focus=slow"], &cpu),
        (&["-weblist=main", "-sample_index=alloc_space"], &heap),
    ];
    let mut asm_blocks = 0;
    for (flags, file) in lines {
        let file = file.to_str().unwrap();
        let args = [flags, &["-output=page.html", file]].concat();
        let done = std::process::Command::new(&upstream)
            .current_dir(d)
            .args(&args)
            .env("HOME", d)
            .env("TZ", "UTC")
            .status()
            .unwrap();
        assert!(done.success(), "{flags:?}");
        let theirs = std::fs::read_to_string(d.join("page.html")).unwrap();
        ok(d, &[&["pprof"][..], &args].concat());
        let ours = std::fs::read_to_string(d.join("page.html")).unwrap();
        let (outside, blocks) = weblist_parts(&ours);
        assert!(outside.contains("<h2>"), "{flags:?}: {ours}");
        asm_blocks += blocks.len();
        assert_eq!((outside, blocks), weblist_parts(&theirs), "{flags:?}");
    }
    assert!(asm_blocks > 20, "{asm_blocks}");
}
