//! What the symbolization tests share: a C program built with `gcc -O2
//! -g`, its addresses, and `llvm-symbolizer`'s frames at them.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use protoprof_model_pprof::perftools::profiles::{Location, Mapping, Profile};
use protoprof_symbolize::{BinarySearch, Demangle, Options};

pub const PROGRAM: &str = r#"
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
pub const LOADED_AT: u64 = 0x5555_5555_4000;

pub fn tools_present() -> bool {
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

pub fn run(command: &mut Command) -> String {
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
pub fn build(dir: &Path) -> PathBuf {
    std::fs::write(dir.join("prog.c"), PROGRAM).unwrap();
    run(Command::new("gcc")
        .current_dir(dir)
        .args(["-O2", "-g", "-o", "prog", "prog.c"]));
    dir.join("prog")
}

/// The executable LOAD segment's (offset, vaddr, memsz), as `readelf` reads it.
pub fn text_segment(binary: &Path) -> (u64, u64, u64) {
    let headers = run(Command::new("readelf").arg("-lW").arg(binary));
    let line = headers
        .lines()
        .find(|l| l.trim_start().starts_with("LOAD") && l.contains(" R E "))
        .unwrap();
    let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
    let f: Vec<&str> = line.split_whitespace().collect();
    (hex(f[1]), hex(f[2]), hex(f[5]))
}

pub fn build_id(binary: &Path) -> String {
    let notes = run(Command::new("readelf").arg("-n").arg(binary));
    notes
        .lines()
        .find_map(|l| l.trim().strip_prefix("Build ID: "))
        .unwrap()
        .to_string()
}

/// Every fourth byte of `work` and `main`, as file addresses (from `nm`).
pub fn file_addresses(binary: &Path) -> Vec<u64> {
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
pub fn oracle(binary: &Path, addresses: &[u64]) -> Vec<Vec<(String, String, i64, i64)>> {
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
pub fn profile(file: &str, build_id: &str, segment: (u64, u64, u64), addresses: &[u64]) -> Profile {
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
pub fn frames_of(p: &Profile) -> Vec<Vec<(String, String, i64, i64)>> {
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

pub fn options(dirs: Vec<PathBuf>, debug_root: &Path) -> Options {
    Options {
        demangle: Demangle::None,
        search: BinarySearch {
            dirs,
            debug_root: debug_root.to_path_buf(),
            debuginfod: None,
        },
        ..Options::default()
    }
}
