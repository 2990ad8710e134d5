//! Symbolization of a real binary: a C program built here with `gcc -O2
//! -g` (a function inlined twice into another), addresses across its
//! code made into an unsymbolized pprof profile as a PIE loaded at a
//! runtime address, and every frame checked against `llvm-symbolizer
//! --inlining` (the tool pprof runs) on the same file addresses. Then the
//! same with the binary stripped and its debug file in a build-id
//! directory (where pprof finds no base), and with a build id that is not
//! the binary's.

use std::path::{Path, PathBuf};
use std::process::Command;

use protoprof_model_pprof::perftools::profiles::{Location, Mapping, Profile};
use protoprof_symbolize::{symbolize, BinarySearch, Demangle, How, Options};

const PROGRAM: &str = r#"
#include <stdio.h>
#include <stdlib.h>
static inline int square(int x) { return x * x; }
static inline int sum_squares(int n) {
  int s = 0;
  for (int i = 0; i < n; i++) s += square(i ^ n);
  return s;
}
__attribute__((noinline)) int work(int n) { return sum_squares(n) + sum_squares(n / 3); }
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1000;
  printf("%d\n", work(n));
  return 0;
}
"#;

/// Where the executable segment is loaded in the profile's process.
const LOADED_AT: u64 = 0x5555_5555_4000;

fn tools_present() -> bool {
    let runs = |tool: &str| {
        Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let all = [
        "gcc",
        "llvm-symbolizer",
        "readelf",
        "nm",
        "objcopy",
        "strip",
    ]
    .iter()
    .all(|t| runs(t));
    protoprof_tests::available_or_skip(
        all,
        "symbolization tests need gcc, llvm-symbolizer and binutils",
    )
}

fn run(command: &mut Command) -> String {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// `prog`, built in `dir`.
fn build(dir: &Path) -> PathBuf {
    std::fs::write(dir.join("prog.c"), PROGRAM).unwrap();
    run(Command::new("gcc")
        .current_dir(dir)
        .args(["-O2", "-g", "-o", "prog", "prog.c"]));
    dir.join("prog")
}

/// The executable LOAD segment's (offset, vaddr, memsz), as `readelf` reads it.
fn text_segment(binary: &Path) -> (u64, u64, u64) {
    let headers = run(Command::new("readelf").arg("-lW").arg(binary));
    let line = headers
        .lines()
        .find(|l| l.trim_start().starts_with("LOAD") && l.contains(" R E "))
        .unwrap();
    let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
    let f: Vec<&str> = line.split_whitespace().collect();
    (hex(f[1]), hex(f[2]), hex(f[5]))
}

fn build_id(binary: &Path) -> String {
    let notes = run(Command::new("readelf").arg("-n").arg(binary));
    notes
        .lines()
        .find_map(|l| l.trim().strip_prefix("Build ID: "))
        .unwrap()
        .to_string()
}

/// Every fourth byte of `work` and `main`, as file addresses (from `nm`).
fn file_addresses(binary: &Path) -> Vec<u64> {
    let symbols = run(Command::new("nm").arg("-S").arg(binary));
    let mut out = Vec::new();
    for line in symbols.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if let [address, size, "T", "work" | "main"] = f[..] {
            let (start, size) = (
                u64::from_str_radix(address, 16).unwrap(),
                u64::from_str_radix(size, 16).unwrap(),
            );
            out.extend((start..start + size).step_by(4));
        }
    }
    assert!(out.len() > 20, "{symbols}");
    out
}

/// `llvm-symbolizer --inlining`'s frames at each address: (function,
/// file, line, column), innermost first.
fn oracle(binary: &Path, addresses: &[u64]) -> Vec<Vec<(String, String, i64, i64)>> {
    let input: String = addresses.iter().map(|a| format!("0x{a:x}\n")).collect();
    let mut child = Command::new("llvm-symbolizer")
        .args(["--inlining", "--no-demangle"])
        .arg(format!("--obj={}", binary.display()))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let text = String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap();
    text.split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .map(|block| {
            let lines: Vec<&str> = block.lines().collect();
            lines
                .chunks(2)
                .map(|pair| {
                    let mut place = pair[1].rsplitn(3, ':');
                    let column = place.next().unwrap().parse().unwrap();
                    let line = place.next().unwrap().parse().unwrap();
                    (
                        pair[0].to_string(),
                        place.next().unwrap().to_string(),
                        line,
                        column,
                    )
                })
                .collect()
        })
        .collect()
}

/// An unsymbolized profile: one location per address, in one mapping of
/// `file` with `build_id`, loaded at [`LOADED_AT`].
fn profile(file: &str, build_id: &str, segment: (u64, u64, u64), addresses: &[u64]) -> Profile {
    let (offset, vaddr, size) = segment;
    let mut p = Profile::new();
    p.string_table = vec![String::new(), file.to_string(), build_id.to_string()];
    let mut m = Mapping::new();
    (m.id, m.filename, m.build_id, m.file_offset) = (1, 1, 2, offset);
    m.memory_start = LOADED_AT + (vaddr & !0xfff);
    m.memory_limit = m.memory_start + size;
    p.mapping.push(m);
    for (i, a) in addresses.iter().enumerate() {
        let mut l = Location::new();
        (l.id, l.mapping_id, l.address) = (i as u64 + 1, 1, LOADED_AT + a);
        p.location.push(l);
    }
    p
}

/// Each location's frames as (name, file, line, column).
fn frames_of(p: &Profile) -> Vec<Vec<(String, String, i64, i64)>> {
    let string = |i: i64| p.string_table[i as usize].clone();
    p.location
        .iter()
        .map(|l| {
            l.line
                .iter()
                .map(|line| {
                    let f = p
                        .function
                        .iter()
                        .find(|f| f.id == line.function_id)
                        .unwrap();
                    (
                        string(f.system_name),
                        string(f.filename),
                        line.line,
                        line.column,
                    )
                })
                .collect()
        })
        .collect()
}

fn options(dirs: Vec<PathBuf>, debug_root: &Path) -> Options {
    Options {
        demangle: Demangle::None,
        search: BinarySearch {
            dirs,
            debug_root: debug_root.to_path_buf(),
        },
        ..Options::default()
    }
}

#[test]
fn frames_equal_llvm_symbolizers_inline_chains() {
    if !tools_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let binary = build(dir.path());
    let addresses = file_addresses(&binary);
    let expected = oracle(&binary, &addresses);
    assert!(
        expected.iter().any(|f| f.len() >= 3),
        "no address inside the twice-inlined square"
    );
    let mut p = profile(
        binary.to_str().unwrap(),
        &build_id(&binary),
        text_segment(&binary),
        &addresses,
    );
    let report = symbolize(&mut p, &options(Vec::new(), dir.path()));
    let mapping = &report.mappings[0];
    assert_eq!(
        mapping.found.as_ref().unwrap().how,
        How::MappingPath,
        "{}",
        report.text()
    );
    assert_eq!(mapping.found.as_ref().unwrap().build_id_matched, Some(true));
    assert_eq!(
        (mapping.addresses, mapping.resolved),
        (addresses.len(), addresses.len())
    );
    assert_eq!(frames_of(&p), expected);
    let m = &p.mapping[0];
    assert!(m.has_functions && m.has_filenames && m.has_line_numbers && m.has_inline_frames);
    // Symbolized once: left as it is unless forced.
    let again = symbolize(&mut p, &options(Vec::new(), dir.path()));
    assert!(again.mappings[0]
        .skipped
        .as_deref()
        .unwrap()
        .contains("already symbolized"));
}

#[test]
fn a_stripped_binarys_debug_file_is_found_by_build_id_and_used() {
    if !tools_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let binary = build(dir.path());
    let (addresses, id) = (file_addresses(&binary), build_id(&binary));
    let expected = oracle(&binary, &addresses);
    // The debug file alone in PPROF_BINARY_PATH's build-id layout; the
    // mapping's path is the stripped executable, which has no DWARF.
    let binaries = dir.path().join("binaries");
    let debug = binaries.join(&id[..2]).join(format!("{}.debug", &id[2..]));
    std::fs::create_dir_all(debug.parent().unwrap()).unwrap();
    run(Command::new("objcopy")
        .arg("--only-keep-debug")
        .arg(&binary)
        .arg(&debug));
    let stripped = dir.path().join("prog.stripped");
    run(Command::new("strip").arg("-o").arg(&stripped).arg(&binary));
    let mut p = profile(
        stripped.to_str().unwrap(),
        &id,
        text_segment(&binary),
        &addresses,
    );
    let report = symbolize(&mut p, &options(vec![binaries], dir.path()));
    let found = report.mappings[0].found.as_ref().unwrap();
    assert_eq!(
        (found.how, &found.path),
        (How::BuildIdDebugFile, &debug),
        "{}",
        report.text()
    );
    assert_eq!(frames_of(&p), expected);
}

#[test]
fn a_file_of_another_build_is_passed_over_and_said_so() {
    if !tools_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let binary = build(dir.path());
    let addresses = file_addresses(&binary);
    let other = "0123456789abcdef0123456789abcdef01234567";
    let mut p = profile(
        binary.to_str().unwrap(),
        other,
        text_segment(&binary),
        &addresses,
    );
    let report = symbolize(&mut p, &options(Vec::new(), dir.path()));
    let mapping = &report.mappings[0];
    assert!(mapping.found.is_none());
    assert_eq!(mapping.resolved, 0);
    assert!(
        mapping.passed_over[0].why.contains("is not the mapping's"),
        "{}",
        report.text()
    );
    assert!(p.location.iter().all(|l| l.line.is_empty()));
    assert!(report.text().contains("no file found"), "{}", report.text());
}

#[test]
fn a_gnu_debuglink_is_followed_when_its_crc_matches() {
    if !tools_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let binary = build(dir.path());
    let (addresses, id) = (file_addresses(&binary), build_id(&binary));
    let expected = oracle(&binary, &addresses);
    // A stripped executable that names its debug file beside it.
    let debug = dir.path().join("prog.debug");
    run(Command::new("objcopy")
        .arg("--only-keep-debug")
        .arg(&binary)
        .arg(&debug));
    let stripped = dir.path().join("prog.stripped");
    run(Command::new("strip")
        .arg("-g")
        .arg("-o")
        .arg(&stripped)
        .arg(&binary));
    run(Command::new("objcopy")
        .current_dir(dir.path())
        .arg("--add-gnu-debuglink=prog.debug")
        .arg(&stripped));
    let segment = text_segment(&binary);
    let mut p = profile(stripped.to_str().unwrap(), &id, segment, &addresses);
    let report = symbolize(&mut p, &options(Vec::new(), dir.path()));
    let found = report.mappings[0].found.as_ref().unwrap();
    assert_eq!(
        found.debug_file.as_deref(),
        Some(debug.as_path()),
        "{}",
        report.text()
    );
    assert_eq!(frames_of(&p), expected);
    // The debug file changed since the link was made: its CRC no longer
    // matches, and it is not read (the symbol table's names are).
    let mut bytes = std::fs::read(&debug).unwrap();
    bytes.push(0);
    std::fs::write(&debug, bytes).unwrap();
    let mut p = profile(stripped.to_str().unwrap(), &id, segment, &addresses);
    let report = symbolize(&mut p, &options(Vec::new(), dir.path()));
    assert_eq!(report.mappings[0].found.as_ref().unwrap().debug_file, None);
    assert!(
        p.location.iter().all(|l| l.line.len() <= 1),
        "inline frames without DWARF"
    );
}
