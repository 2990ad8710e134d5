//! `cargo xtask bench-symbolize`: `protoprof symbolize` next to
//! `llvm-symbolizer --inlining` (the tool pprof runs) and upstream pprof
//! (`pprof -symbolize=local -proto`, which runs it), on one large binary
//! with DWARF and an unsymbolized profile of N distinct addresses in its
//! code. The binary is upstream pprof itself (`tools/pprof-upstream`, a Go
//! program of about 20 MB whose DWARF Go compresses), unless `--binary`
//! names another ELF executable linked at a fixed address.
//!
//! Each round runs the three one after the other; the table gives each
//! one's median wall time and peak RSS (GNU time's), and is also written
//! to `target/bench/bench-symbolize.md`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::bench::{go_build, release_protoprof, run, time_process};

struct Options {
    addresses: usize,
    rounds: usize,
    binary: Option<PathBuf>,
}

fn parse_options(args: &[&str]) -> Result<Options> {
    let mut options = Options {
        addresses: 10_000,
        rounds: 5,
        binary: None,
    };
    let mut args = args.iter();
    while let Some(&arg) = args.next() {
        let mut value = || args.next().copied().context(format!("{arg} needs a value"));
        match arg {
            "--addresses" => options.addresses = value()?.parse()?,
            "--rounds" => options.rounds = value()?.parse()?,
            "--binary" => options.binary = Some(PathBuf::from(value()?)),
            other => bail!("bench-symbolize: unknown argument {other}"),
        }
    }
    Ok(options)
}

pub fn bench_symbolize(root: &Path, args: &[&str]) -> Result<()> {
    let options = parse_options(args)?;
    let dir = root.join("target/bench/symbolize");
    fs::create_dir_all(&dir)?;
    let pprof = root.join("target/go-bin/pprof-upstream");
    go_build(root, &root.join("tools/pprof-upstream"), &pprof)?;
    let binary = options.binary.clone().unwrap_or_else(|| pprof.clone());
    let protoprof = release_protoprof(root)?;
    let addresses = sample_addresses(&binary, options.addresses)?;
    let profile = dir.join("unsymbolized.pb");
    write_profile(&protoprof, &binary, &addresses, &dir, &profile)?;
    let address_list = dir.join("addresses.txt");
    let list: String = addresses.iter().map(|a| format!("0x{a:x}\n")).collect();
    fs::write(&address_list, list)?;

    let jobs = jobs(&protoprof, &pprof, &binary, &profile, &address_list, &dir);
    let mut times: Vec<Vec<u128>> = vec![Vec::new(); jobs.len()];
    let mut peaks = vec![0u64; jobs.len()];
    for round in 0..options.rounds {
        for (j, (name, program, args)) in jobs.iter().enumerate() {
            let (ns, kb) = time_process(program, args).with_context(|| name.to_string())?;
            times[j].push(ns);
            peaks[j] = peaks[j].max(kb);
        }
        eprintln!("round {}/{} done", round + 1, options.rounds);
    }
    let size_mb = fs::metadata(&binary)?.len() as f64 / 1e6;
    let mut table = format!(
        "{} addresses of {} ({size_mb:.1} MB), {} rounds\n\n\
         | symbolizer | median | peak RSS |\n|---|---|---|\n",
        addresses.len(),
        binary.display(),
        options.rounds
    );
    for (j, (name, _, _)) in jobs.iter().enumerate() {
        times[j].sort_unstable();
        let median = times[j][times[j].len() / 2] as f64 / 1e9;
        table.push_str(&format!(
            "| {name} | {median:.2} s | {} MB |\n",
            peaks[j] / 1024
        ));
    }
    println!("{table}");
    fs::write(root.join("target/bench/bench-symbolize.md"), table)?;
    Ok(())
}

/// The three runs: name, program, arguments.
fn jobs(
    protoprof: &Path,
    pprof: &Path,
    binary: &Path,
    profile: &Path,
    address_list: &Path,
    dir: &Path,
) -> Vec<(&'static str, PathBuf, Vec<std::ffi::OsString>)> {
    let os = |parts: &[&dyn AsRef<std::ffi::OsStr>]| -> Vec<std::ffi::OsString> {
        parts.iter().map(|p| p.as_ref().to_owned()).collect()
    };
    let input = format!("--obj={}", binary.display());
    let script = format!(
        "exec llvm-symbolizer --inlining --output-style=JSON {input} < {}",
        address_list.display()
    );
    vec![
        (
            "protoprof symbolize",
            protoprof.to_path_buf(),
            os(&[&"symbolize", &profile, &"-o", &dir.join("protoprof.pb")]),
        ),
        (
            "llvm-symbolizer --inlining (one process, every address)",
            PathBuf::from("/bin/sh"),
            os(&[&"-c", &script]),
        ),
        (
            "upstream pprof -symbolize=local -proto (runs llvm-symbolizer)",
            pprof.to_path_buf(),
            os(&[
                &"-symbolize=local",
                &"-proto",
                &"-output",
                &dir.join("pprof.pb.gz"),
                &profile,
            ]),
        ),
    ]
}

/// `count` distinct addresses spread over the binary's functions (`nm`'s
/// text symbols with sizes), the same ones every run.
fn sample_addresses(binary: &Path, count: usize) -> Result<Vec<u64>> {
    let symbols = run(Command::new("nm")
        .args(["-S", "--defined-only"])
        .arg(binary))?;
    let mut ranges = Vec::new();
    for line in symbols.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if let [address, size, "T" | "t", _] = f[..] {
            let start = u64::from_str_radix(address, 16)?;
            let size = u64::from_str_radix(size, 16)?;
            if size > 0 {
                ranges.push((start, size));
            }
        }
    }
    if ranges.is_empty() {
        bail!("{}: no function symbols with sizes", binary.display());
    }
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut addresses = std::collections::BTreeSet::new();
    while addresses.len() < count {
        let (start, size) = ranges[next() as usize % ranges.len()];
        addresses.insert(start + next() % size);
    }
    Ok(addresses.into_iter().collect())
}

/// An unsymbolized pprof profile of `addresses` in `binary` (mapped at its
/// link addresses: the executable segment's own), one sample each.
fn write_profile(
    protoprof: &Path,
    binary: &Path,
    addresses: &[u64],
    dir: &Path,
    profile: &Path,
) -> Result<()> {
    let (offset, vaddr, size) = text_segment(binary)?;
    let mut text = String::from("sample_type { type: 1 unit: 2 }\n");
    for n in 1..=addresses.len() {
        text.push_str(&format!("sample {{ location_id: {n} value: 1 }}\n"));
    }
    text.push_str(&format!(
        "mapping {{ id: 1 memory_start: {vaddr} memory_limit: {} file_offset: {offset} filename: 3 }}\n",
        vaddr + size
    ));
    for (n, a) in addresses.iter().enumerate() {
        text.push_str(&format!(
            "location {{ id: {} mapping_id: 1 address: {a} }}\n",
            n + 1
        ));
    }
    text.push_str(&format!(
        "string_table: \"\" string_table: \"samples\" string_table: \"count\" string_table: {:?}\n",
        binary.display().to_string()
    ));
    let source = dir.join("unsymbolized.txtpb");
    fs::write(&source, text)?;
    run(Command::new(protoprof)
        .args(["encode", "--type", "perftools.profiles.Profile"])
        .arg(&source)
        .arg("-o")
        .arg(profile))
    .map(drop)
}

/// The executable LOAD segment's (offset, vaddr, memsz), as `readelf` reads it.
fn text_segment(binary: &Path) -> Result<(u64, u64, u64)> {
    let headers = run(Command::new("readelf").arg("-lW").arg(binary))?;
    let line = headers
        .lines()
        .find(|l| l.trim_start().starts_with("LOAD") && l.contains(" R E "))
        .context("no executable LOAD segment")?;
    let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16);
    let f: Vec<&str> = line.split_whitespace().collect();
    Ok((hex(f[1])?, hex(f[2])?, hex(f[5])?))
}
