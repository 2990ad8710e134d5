//! `protoprof symbolize` on programs built here.
//!
//! - A C++ program (`g++ -O2 -g`, a function template in a namespace): an
//!   unsymbolized profile of it (made with `protoprof encode` from text),
//!   symbolized, reads in `go tool pprof` as in protoprof's own reports,
//!   names demangled as pprof shows them; the report says what was found;
//!   bad modes are one line.
//! - A C program profiled by gperftools (`LD_PRELOAD=libprofiler.so.0`, a
//!   legacy CPU profile of raw addresses): symbolized, its stacks equal
//!   upstream pprof's (built from its pinned module, `tools/pprof-upstream`,
//!   with `llvm-symbolizer` on PATH), inline frames included; every report
//!   symbolizes it alike when it reads it (`--symbolize`, on by default);
//!   its `-disasm` is upstream pprof's, byte for byte; so is `-weblist`'s
//!   page but for its style sheet and script, and a C++ program's profile
//!   reads alike (`-raw`) in pprof's demangling modes.

mod common;

use std::path::Path;
use std::process::Command;

use common::{ok, protoprof, run};

const PROGRAM: &str = r#"
#include <cstdio>
#include <cstdlib>
namespace shapes {
template <typename T> __attribute__((noinline)) T area(T side) {
  T total = 0;
  for (int i = 0; i < 1000; i++) total += side * side / (i + 1);
  return total;
}
}
int main(int argc, char **argv) {
  double side = argc > 1 ? atof(argv[1]) : 2.0;
  printf("%f %d\n", shapes::area<double>(side), shapes::area<int>((int)side));
  return 0;
}
"#;

fn tools(dir: &Path) -> bool {
    let present = ["g++", "nm", "readelf"].iter().all(|t| {
        Command::new(t)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    protoprof_tests::available_or_skip(present, "symbolize's tests need g++ and binutils")
        && protoprof_tests::go_available("go tool pprof -traces")
        && dir.is_dir()
}

fn output(command: &mut Command) -> String {
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The text of an unsymbolized profile: one sample in each template
/// instance, the binary mapped as a PIE's text at 0x555555555000.
fn unsymbolized(binary: &Path) -> String {
    let symbols = output(Command::new("nm").arg(binary));
    let address = |mangled: &str| {
        let line = symbols.lines().find(|l| l.ends_with(mangled)).unwrap();
        u64::from_str_radix(line.split_whitespace().next().unwrap(), 16).unwrap()
    };
    let notes = output(Command::new("readelf").arg("-n").arg(binary));
    let id = notes
        .lines()
        .find_map(|l| l.trim().strip_prefix("Build ID: "))
        .unwrap();
    let base = 0x5555_5555_4000u64;
    let (double, int) = (
        address("_ZN6shapes4areaIdEET_S1_"),
        address("_ZN6shapes4areaIiEET_S1_"),
    );
    format!(
        "sample_type {{ type: 1 unit: 2 }}\n\
         sample {{ location_id: 1 value: 7 }}\n\
         sample {{ location_id: 2 value: 3 }}\n\
         mapping {{ id: 1 memory_start: {} memory_limit: {} file_offset: 4096 filename: 3 build_id: 4 }}\n\
         location {{ id: 1 mapping_id: 1 address: {} }}\n\
         location {{ id: 2 mapping_id: 1 address: {} }}\n\
         string_table: \"\" string_table: \"samples\" string_table: \"count\" string_table: {:?} string_table: \"{id}\"\n",
        base + 0x1000,
        base + 0x3000,
        base + double + 8,
        base + int + 8,
        binary.display().to_string(),
    )
}

#[test]
fn a_symbolized_profile_reads_alike_in_go_tool_pprof() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    if !tools(d) {
        return;
    }
    std::fs::write(d.join("area.cc"), PROGRAM).unwrap();
    output(
        Command::new("g++")
            .current_dir(d)
            .args(["-O2", "-g", "-o", "area", "area.cc"]),
    );
    std::fs::write(d.join("in.txtpb"), unsymbolized(&d.join("area"))).unwrap();
    ok(
        d,
        &[
            "encode",
            "--type",
            "perftools.profiles.Profile",
            "in.txtpb",
            "-o",
            "in.pb",
        ],
    );

    let report = ok(d, &["symbolize", "in.pb", "-o", "out.pb.gz"]);
    assert!(report.contains("2 of 2 addresses from"), "{report}");
    assert!(report.contains("build id matched"), "{report}");
    let ours = ok(d, &["traces", "out.pb.gz"]);
    let go = output(
        Command::new("go")
            .current_dir(d)
            .args(["tool", "pprof", "-traces", "out.pb.gz"])
            .env("HOME", d),
    );
    let frames = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with("  "))
            .map(|l| l.trim().to_string())
            .collect()
    };
    assert_eq!(frames(&ours), frames(&go));
    // Demangled as pprof shows names: no parameters, no template arguments.
    assert!(
        frames(&ours).iter().any(|f| f.ends_with("shapes::area")),
        "{ours}"
    );

    // The report as JSON; and what full demangling keeps.
    let json = ok(
        d,
        &[
            "symbolize",
            "--format",
            "json",
            "--demangle",
            "full",
            "in.pb",
            "-o",
            "full.pb",
        ],
    );
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["mappings"][0]["resolved"], 2);
    assert_eq!(report["mappings"][0]["found"]["how"], "mapping-path");
    let full = ok(d, &["traces", "full.pb"]);
    assert!(
        full.contains("double shapes::area<double>(double)"),
        "{full}"
    );

    // Off: the profile is written as it was read.
    ok(
        d,
        &["symbolize", "--symbolize", "none", "in.pb", "-o", "none.pb"],
    );
    assert_eq!(
        std::fs::read(d.join("none.pb")).unwrap(),
        std::fs::read(d.join("in.pb")).unwrap()
    );
    let (status, _, stderr) = run(
        d,
        &["symbolize", "--symbolize", "remote", "in.pb", "-o", "x.pb"],
    );
    assert_eq!((status, stderr.lines().count()), (2, 1), "{stderr}");
}

const SPIN: &str = r#"
#include <stdio.h>
#include <stdlib.h>
static inline double square(double x) { return x * x; }
static inline double sum_squares(long n) {
  double s = 0;
  for (long i = 0; i < n; i++) s += square((double)(i ^ n)) / (i + 1);
  return s;
}
__attribute__((noinline)) double work(long n) { return sum_squares(n) + sum_squares(n / 3); }
__attribute__((noinline)) double other(long n) { double s = 0; for (long i = 1; i < n; i++) s += 1.0 / i; return s; }
int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 100000000;
  printf("%f %f\n", work(n), other(n));
  return 0;
}
"#;

const PROFILER: &str = "/usr/lib/x86_64-linux-gnu/libprofiler.so.0";

/// A directory with `spin` built and profiled by gperftools into
/// `spin.prof`, and upstream pprof; `None` (the test skipped) without
/// gperftools, the compilers or Go.
fn profiled_spin() -> Option<(tempfile::TempDir, std::path::PathBuf)> {
    let dir = tempfile::tempdir().unwrap();
    let have = Path::new(PROFILER).exists() && tools(dir.path());
    if !protoprof_tests::available_or_skip(have, "gperftools' libprofiler (libgoogle-perftools4)") {
        return None;
    }
    let pprof = protoprof_tests::go_tool("pprof-upstream")?;
    profile_spin(dir.path());
    Some((dir, pprof))
}

/// `spin` built in `d` and profiled by gperftools into `spin.prof`.
fn profile_spin(d: &Path) {
    std::fs::write(d.join("spin.c"), SPIN).unwrap();
    output(
        Command::new("gcc")
            .current_dir(d)
            // Functions start 1 KiB apart: upstream pprof's -weblist drops
            // what lies within 500 bytes of the mapping's start.
            .args([
                "-O2",
                "-g",
                "-falign-functions=1024",
                "-o",
                "spin",
                "spin.c",
            ]),
    );
    output(
        // Ten times the default work: about 500 samples, so that some
        // fall on `square`'s inlined multiplication in every run.
        Command::new(d.join("spin"))
            .arg("1000000000")
            .env("LD_PRELOAD", PROFILER)
            .env("CPUPROFILE", d.join("spin.prof"))
            .env("CPUPROFILE_FREQUENCY", "500"),
    );
}

/// A C++ program: function templates (one inlined into the other), a
/// member function, each instance at its own address.
const SPIN_CPP: &str = r#"
#include <cstdio>
#include <cstdlib>
namespace calc {
template <typename T> static inline T square(T x) { return x * x; }
template <typename T> __attribute__((noinline)) T sum(long n) {
  T s = 0;
  for (long i = 0; i < n; i++) s += square<T>((T)(i ^ n)) / (T)(i + 1);
  return s;
}
struct Worker {
  __attribute__((noinline)) double run(long n) { return sum<double>(n) + sum<float>(n / 2); }
};
}
int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 100000000;
  calc::Worker w;
  printf("%f\n", w.run(n));
  return 0;
}
"#;

/// `spin_cpp` built in `d` with `g++ -O2 -g` and profiled by gperftools
/// into `spin_cpp.prof`.
fn profile_spin_cpp(d: &Path) {
    std::fs::write(d.join("spin_cpp.cc"), SPIN_CPP).unwrap();
    output(Command::new("g++").current_dir(d).args([
        "-O2",
        "-g",
        "-falign-functions=1024",
        "-o",
        "spin_cpp",
        "spin_cpp.cc",
    ]));
    output(
        Command::new(d.join("spin_cpp"))
            .env("LD_PRELOAD", PROFILER)
            .env("CPUPROFILE", d.join("spin_cpp.prof"))
            .env("CPUPROFILE_FREQUENCY", "500"),
    );
}

/// A C++ program profiled by gperftools reads as upstream pprof reads it:
/// `-raw` byte for byte (mangled system names, demangled names, inline
/// frames of template instances), in pprof's demangling modes, and its
/// `-weblist` page.
#[test]
fn a_gperftools_profile_of_cpp_reads_as_upstream_pprof_reads_it() {
    let Some((dir, pprof)) = profiled_spin() else {
        return;
    };
    let d = dir.path();
    profile_spin_cpp(d);
    let lines: [&[&str]; 5] = [
        &["-raw"],
        &["-raw", "-symbolize=demangle=full"],
        &["-raw", "-symbolize=demangle=templates"],
        &["-traces", "-symbolize=demangle=none"],
        &["-top", "-lines"],
    ];
    for flags in lines {
        let args = [flags, &["spin_cpp.prof"]].concat();
        let upstream = output(
            Command::new(&pprof)
                .current_dir(d)
                .args(&args)
                .env("HOME", d)
                .env("TZ", "UTC"),
        );
        let ours = ok(d, &[&["pprof"][..], &args].concat());
        assert_eq!(ours, upstream, "{flags:?}");
    }
    let full = ok(
        d,
        &[
            "pprof",
            "-traces",
            "-symbolize=demangle=full",
            "spin_cpp.prof",
        ],
    );
    assert!(full.contains("float calc::sum<float>(long)"), "{full}");
    let args = ["-weblist=calc", "-output=page.html", "spin_cpp.prof"];
    let ours = weblist_like_upstream(d, &pprof, &args);
    assert!(ours.contains("<h2>calc::Worker::run</h2>"), "{ours}");
}

/// Each trace's frames that are the program's own functions.
fn program_frames(traces: &str) -> Vec<Vec<String>> {
    let ours = ["square", "sum_squares", "work", "other", "main"];
    traces
        .split("-----------+")
        .map(|t| {
            t.lines()
                .filter_map(|l| l.split_whitespace().rev().find(|w| !w.starts_with('(')))
                .filter(|f| ours.contains(f))
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .filter(|t| !t.is_empty())
        .collect()
}

#[test]
fn a_gperftools_profile_symbolizes_as_upstream_pprof_does() {
    let Some((dir, pprof)) = profiled_spin() else {
        return;
    };
    let d = dir.path();
    let report = ok(d, &["symbolize", "spin.prof", "-o", "spin.pb.gz"]);
    assert!(
        report.contains(&format!("addresses from {}", d.join("spin").display())),
        "{report}"
    );
    let ours = ok(d, &["traces", "spin.pb.gz"]);
    let upstream = output(
        Command::new(&pprof)
            .current_dir(d)
            .args(["-traces", "spin", "spin.prof"])
            .env("HOME", d),
    );
    let frames = program_frames(&ours);
    // `sum_squares` inlined into `work` (and `square` into it, when a
    // sample falls on its multiplication: not every run has one).
    assert!(
        frames.iter().any(|t| t.len() >= 3),
        "no inline frames: {ours}"
    );
    assert_eq!(
        frames,
        program_frames(&upstream),
        "ours:\n{ours}\nupstream:\n{upstream}"
    );
    // libc's own frames come from its debug file, found by build id.
    assert!(ours.contains("__libc_start_call_main"), "{ours}");
    // Each function's start line (`s=`), as llvm-symbolizer gives upstream
    // pprof: the program's functions and libc's, inline frames included.
    let raw = |text: &str| -> Vec<String> {
        let section = text.split("Locations\n").nth(1).unwrap_or("");
        let section = section.split("Mappings\n").next().unwrap_or("");
        (section.lines())
            .map(|l| l.split_once(" M=").map_or(l.trim(), |(_, rest)| rest))
            .map(|l| {
                l.split_once(' ').map_or(
                    l,
                    |(m, rest)| if m.parse::<u32>().is_ok() { rest } else { l },
                )
            })
            .filter(|l| l.contains(" s="))
            .map(str::to_string)
            .collect()
    };
    let upstream_raw = output(
        Command::new(&pprof)
            .current_dir(d)
            .args(["-raw", "spin.prof"])
            .env("HOME", d)
            .env("TZ", "UTC"),
    );
    let ours_raw = ok(d, &["pprof", "-raw", "spin.prof"]);
    let start_lines = |frames: Vec<String>| -> Vec<String> {
        let ours = [
            "square",
            "sum_squares",
            "work",
            "other",
            "main",
            "__libc_start_call_main",
        ];
        (frames.into_iter())
            .filter(|f| ours.iter().any(|name| f.starts_with(&format!("{name} "))))
            .collect()
    };
    let theirs = start_lines(raw(&upstream_raw));
    assert!(
        theirs
            .iter()
            .any(|f| f.starts_with("square ") && !f.ends_with(" s=0")),
        "{upstream_raw}"
    );
    assert_eq!(start_lines(raw(&ours_raw)), theirs, "{ours_raw}");
    // The whole profile too: libc's outermost frame named by its own
    // symbol table (`__libc_start_main`, not its DWARF's `_impl`), as
    // llvm-symbolizer names it.
    assert_eq!(ours_raw, upstream_raw);

    // Every report symbolizes what it reads, as pprof does, unless told not to.
    let by_default = ok(d, &["traces", "spin.prof"]);
    assert_eq!(program_frames(&by_default), frames, "{by_default}");
    let off = ok(d, &["traces", "--symbolize", "none", "spin.prof"]);
    assert!(program_frames(&off).is_empty(), "{off}");
    let names_only = ok(d, &["traces", "--symbolize", "fastlocal", "spin.prof"]);
    assert!(
        program_frames(&names_only)
            .iter()
            .all(|t| !t.contains(&"square".to_string())),
        "fastlocal reads no inline frames: {names_only}"
    );
    assert!(names_only.contains("work"), "{names_only}");
}

/// The eBPF profiler's real exports: symbolized in place and written back
/// as OTLP of the same form. None of their binaries is here, so every
/// native frame is left as it was, each mapping counted, and the message
/// written is the message read (compared as text: the input's own bytes
/// need not be canonical); v1.7 is written as the current revision.
#[test]
fn ebpf_exports_are_symbolized_in_place_and_written_back_as_otlp() {
    let Some(corpus) = protoprof_tests::corpus_dir() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let captures = corpus.join("otlp/v1development");
    for (name, native_mappings, native_addresses) in [
        ("v1development-1.10-ebpf-export-request.pb", 5, 34),
        ("v1development-1.10-ebpf-export-request.json", 5, 34),
        (
            "v1development-1.7-ebpf-unsymbolized-export-request.pb",
            30,
            249,
        ),
    ] {
        let input = captures.join(name);
        let input = input.to_str().unwrap();
        let out = d.join(format!("out-{name}"));
        let json = ok(
            d,
            &[
                "symbolize",
                "--format",
                "json",
                input,
                "-o",
                out.to_str().unwrap(),
            ],
        );
        let report: serde_json::Value = serde_json::from_str(&json).unwrap();
        let tried: Vec<&serde_json::Value> = (report["mappings"].as_array().unwrap().iter())
            .filter(|m| m["skipped"].is_null())
            .collect();
        assert_eq!(tried.len(), native_mappings, "{name}: {json}");
        assert!(tried
            .iter()
            .all(|m| m["found"].is_null() && m["resolved"] == 0));
        let addresses: u64 = (tried.iter())
            .map(|m| m["addresses"].as_u64().unwrap())
            .sum();
        assert_eq!(addresses, native_addresses, "{name}");
        let text = |file: &str| ok(d, &["decode", file]);
        assert_eq!(text(out.to_str().unwrap()), text(input), "{name}");
        let first = std::fs::read(&out).unwrap()[0];
        assert_eq!(
            first == b'{',
            name.ends_with(".json"),
            "{name}: the input's form"
        );
    }
}

/// `-disasm` of a gperftools profile: what upstream pprof prints (it runs
/// `llvm-nm` and `llvm-objdump` as protoprof does), byte for byte, for a
/// function, every function, Intel syntax, a focus and a scale; and the
/// same message when nothing matches.
#[test]
fn disasm_prints_what_upstream_pprof_prints() {
    let Some((dir, pprof)) = profiled_spin() else {
        return;
    };
    let d = dir.path();
    let lines: [&[&str]; 6] = [
        &["-disasm=work"],
        &["-disasm=."],
        &["-disasm=work", "-intel_syntax"],
        &["-disasm=.", "-focus=other"],
        &["-disasm=other", "-divide_by=2"],
        &["-disasm", "sum_squares|work"],
    ];
    for flags in lines {
        let args = [flags, &["spin.prof"]].concat();
        let upstream = output(
            Command::new(&pprof)
                .current_dir(d)
                .args(&args)
                .env("HOME", d),
        );
        assert!(upstream.contains("ROUTINE"), "{flags:?}: {upstream}");
        let ours = ok(d, &[&["pprof"][..], &args].concat());
        assert_eq!(ours, upstream, "{flags:?}");
    }
    let (status, stdout, stderr) = run(d, &["pprof", "-disasm=nothing_here", "spin.prof"]);
    assert_ne!(status, 0);
    assert!(stdout.is_empty());
    assert!(
        stderr.contains("no matches found for regexp nothing_here"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

/// The page without its style sheet and script (protoprof's own).
fn without_style_and_script(page: &str) -> String {
    let mut out = String::new();
    let mut rest = page;
    while let Some(at) = rest
        .find("<style")
        .into_iter()
        .chain(rest.find("<script"))
        .min()
    {
        out.push_str(&rest[..at]);
        let close = match rest[at..].starts_with("<style") {
            true => "</style>",
            false => "</script>",
        };
        let end = rest[at..].find(close).expect("closed") + close.len();
        rest = &rest[at + end..];
    }
    out.push_str(rest);
    out
}

/// `protoprof pprof ARGS` (which write `page.html` in `d`) gives upstream
/// pprof's page but for the style sheet and script; that page, stripped.
/// pprof's page can change from run to run where it iterates a Go map, so
/// one of a few of its runs is to match; a mismatch is kept in
/// `target/weblist-mismatch/` (the profile and both pages).
fn weblist_like_upstream(d: &Path, pprof: &Path, args: &[&str]) -> String {
    ok(d, &[&["pprof"][..], args].concat());
    let ours = std::fs::read_to_string(d.join("page.html")).unwrap();
    assert!(ours.contains("function pprof_toggle_asm"), "{args:?}");
    let ours = without_style_and_script(&ours);
    let mut upstream = String::new();
    for _ in 0..4 {
        let mut run = Command::new(pprof);
        output(run.current_dir(d).args(args).env("HOME", d));
        upstream = without_style_and_script(&std::fs::read_to_string(d.join("page.html")).unwrap());
        if upstream == ours {
            return ours;
        }
    }
    let kept = protoprof_tests::workspace_root().join("target/weblist-mismatch");
    std::fs::create_dir_all(&kept).unwrap();
    let profile = args.last().expect("a profile");
    std::fs::copy(d.join(profile), kept.join(profile)).unwrap();
    std::fs::write(kept.join("ours.html"), &ours).unwrap();
    std::fs::write(kept.join("upstream.html"), &upstream).unwrap();
    assert_eq!(ours, upstream, "{args:?}");
    ours
}

/// `-weblist` of a gperftools profile: upstream pprof's page (it runs
/// `llvm-objdump` and `llvm-symbolizer`; protoprof reads the line tables
/// itself) but for the style sheet and script, for a function, one only
/// inlined, every function (libc's from its debug file, when installed),
/// a file, Intel syntax, a focus, a hidden function and a scale; the
/// browser is given the page when no file is named.
#[test]
fn weblist_pages_are_upstream_pprofs() {
    let Some((dir, pprof)) = profiled_spin() else {
        return;
    };
    let d = dir.path();
    let lines: [&[&str]; 8] = [
        &["-weblist=work"],
        &["-weblist=square"],
        &["-weblist=."],
        &["-weblist=spin.c"],
        &["-weblist=other", "-intel_syntax"],
        &["-weblist=.", "-focus=other"],
        &["-weblist=main", "-hide=work"],
        &["-weblist", "sum_squares", "-divide_by=2"],
    ];
    for flags in lines {
        let args = [flags, &["-output=page.html", "spin.prof"]].concat();
        let ours = weblist_like_upstream(d, &pprof, &args);
        assert!(ours.contains("<h2>"), "{flags:?}: {ours}");
    }
    let browser = d.join("browser");
    let script = format!(
        "#!/bin/sh
cp \"$1\" '{}'\n",
        d.join("shown.html").display()
    );
    std::fs::write(&browser, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).unwrap();
    let shown = protoprof(d)
        .env("BROWSER", &browser)
        .args(["pprof", "-weblist=work", "spin.prof"])
        .output()
        .unwrap();
    assert!(shown.status.success(), "{shown:?}");
    let page = std::fs::read_to_string(d.join("shown.html")).unwrap();
    assert!(page.contains("<h2>work</h2>"), "{page}");
    let (status, stdout, stderr) = run(d, &["pprof", "-weblist=nothing_here", "spin.prof"]);
    assert_ne!(status, 0);
    assert!(stdout.is_empty());
    assert!(
        stderr.contains("no matches found for regexp: nothing_here"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

/// pprof's `[binary] profile` form: a profile whose binary has moved is
/// symbolized from the one named first, as upstream pprof does it.
#[test]
fn a_binary_named_before_the_profile_is_the_one_symbolized() {
    let Some((dir, pprof)) = profiled_spin() else {
        return;
    };
    let d = dir.path();
    std::fs::create_dir(d.join("moved")).unwrap();
    std::fs::rename(d.join("spin"), d.join("moved/spin-1.2")).unwrap();
    let args = ["-traces", "moved/spin-1.2", "spin.prof"];
    let upstream = output(
        Command::new(&pprof)
            .current_dir(d)
            .args(args)
            .env("HOME", d),
    );
    let ours = ok(d, &[&["pprof"][..], &args].concat());
    let frames = program_frames(&ours);
    assert!(
        frames.iter().any(|t| t.contains(&"work".to_string())),
        "{ours}"
    );
    assert_eq!(frames, program_frames(&upstream));
    // Without it the moved binary is not found.
    let (_, alone, _) = run(d, &["pprof", "-traces", "spin.prof"]);
    assert!(program_frames(&alone).is_empty(), "{alone}");
    let raw = ok(d, &["pprof", "-raw", "moved/spin-1.2", "spin.prof"]);
    assert!(raw.contains(" moved/spin-1.2 "), "{raw}");
}

/// A kernel-like image: linked at the kernel's addresses, with `_text` and
/// `_stext` where a kernel has them (neither at the segment's start).
const KERNEL: &str = r#"
asm(".text\n.skip 128\n.globl _text\n_text:\n.skip 64\n.globl _stext\n_stext:\n");
static inline int helper(int x) { return x * 3 + (x >> 2); }
__attribute__((noinline)) int do_work(int n) {
  int s = 0;
  for (int i = 0; i < n; i++) s += helper(i ^ n);
  return s;
}
__attribute__((noinline)) int do_other(int n) { return do_work(n) * 2 + 1; }
void start_kernel(void) {
  volatile int sink = do_other(100);
  (void)sink;
  for (;;) {}
}
"#;

/// A profile of `vmlinux` (at `symbols`' addresses, moved by a KASLR
/// slide) as perf records the kernel: a mapping named `name` that starts
/// at the runtime address of `relocation`, with file offset `offset`
/// (`None`: the start, as perf gives it).
fn kernel_profile(
    (name, relocation): (&str, &str),
    offset: Option<u64>,
    symbols: &str,
    build_id: &str,
) -> String {
    let at = |symbol: &str| {
        let line = symbols
            .lines()
            .find(|l| l.ends_with(&format!(" {symbol}")))
            .unwrap();
        u64::from_str_radix(line.split_whitespace().next().unwrap(), 16).unwrap()
    };
    let slide = 0x1e00_0000u64;
    let start = at(relocation) + slide;
    format!(
        "sample_type {{ type: 1 unit: 2 }}\n\
         sample {{ location_id: 1 location_id: 2 value: 7 }}\n\
         sample {{ location_id: 2 value: 3 }}\n\
         mapping {{ id: 1 memory_start: {start} memory_limit: {} file_offset: {} filename: 3 build_id: 4 }}\n\
         location {{ id: 1 mapping_id: 1 address: {} }}\n\
         location {{ id: 2 mapping_id: 1 address: {} }}\n\
         string_table: \"\" string_table: \"samples\" string_table: \"count\" string_table: {name:?} string_table: \"{build_id}\"\n",
        start + 0x1000,
        offset.unwrap_or(start),
        at("do_work") + 0x10 + slide,
        at("do_other") + 0x8 + slide,
    )
}

/// The kernel's mapping as perf records it (`[kernel.kallsyms]`, or
/// `[kernel.kallsyms]_text` when it starts at `_text`): the image is found
/// by its build id in `PPROF_BINARY_PATH` (`<dir>/<build id>/vmlinux`),
/// placed by its relocation symbol, and symbolized as upstream pprof
/// symbolizes it (`-raw`, byte for byte, the mapping named by the file).
#[test]
fn a_kernel_image_is_symbolized_as_upstream_pprof_symbolizes_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    if !tools(d) {
        return;
    }
    let Some(pprof) = protoprof_tests::go_tool("pprof-upstream") else {
        return;
    };
    std::fs::write(d.join("kernel.c"), KERNEL).unwrap();
    output(Command::new("gcc").current_dir(d).args([
        "-O2",
        "-g",
        "-ffreestanding",
        "-nostdlib",
        "-static",
        "-no-pie",
        "-fno-pie",
        "-mcmodel=kernel",
        "-Wl,-Ttext-segment=0xffffffff81000000",
        "-Wl,--build-id",
        "-Wl,-e,start_kernel",
        "-o",
        "vmlinux",
        "kernel.c",
    ]));
    let symbols = output(Command::new("nm").arg(d.join("vmlinux")));
    let notes = output(Command::new("readelf").arg("-n").arg(d.join("vmlinux")));
    let id = (notes.lines())
        .find_map(|l| l.trim().strip_prefix("Build ID: "))
        .unwrap();
    let binaries = d.join("binaries");
    std::fs::create_dir_all(binaries.join(id)).unwrap();
    std::fs::copy(d.join("vmlinux"), binaries.join(id).join("vmlinux")).unwrap();
    let cases = [
        (("[kernel.kallsyms]_stext", "_stext"), None),
        (("[kernel.kallsyms]_text", "_text"), None),
        (("[kernel.kallsyms]", "_stext"), Some(0)),
    ];
    for (name, offset) in cases {
        let text = kernel_profile(name, offset, &symbols, id);
        std::fs::write(d.join("k.txtpb"), text).unwrap();
        let encode = ["encode", "--type", "perftools.profiles.Profile"];
        ok(d, &[&encode[..], &["k.txtpb", "-o", "k.pb"]].concat());
        let upstream = output(
            Command::new(&pprof)
                .current_dir(d)
                .args(["-raw", "k.pb"])
                .env("HOME", d)
                .env("TZ", "UTC")
                .env("PPROF_BINARY_PATH", &binaries),
        );
        assert!(upstream.contains(" do_work "), "{name:?}: {upstream}");
        let ours = protoprof(d)
            .env("PPROF_BINARY_PATH", &binaries)
            .args(["pprof", "-raw", "k.pb"])
            .output()
            .unwrap();
        let ours = String::from_utf8(ours.stdout).unwrap();
        assert_eq!(ours, upstream, "{name:?}");
    }
}
