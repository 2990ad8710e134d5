//! `cargo xtask bench-store-spread`: a store as continuous profiling fills
//! it, profiles spread over days. One real Go CPU profile of the corpus
//! (`pprof/real/go-cpu.pb.gz`) stored N times, one copy every
//! `DAYS × 24 h / N` (1,200 over 30 days: one every 36 minutes), one
//! service, added one day at a time (`store add` of each day's files, as a
//! daily job would), then `store compact`. Measured against the same
//! profiles as files:
//! - the store's size against the `.pb.gz`;
//! - `top --store` of one hour in the middle of the range, beside the same
//!   hour in a store of that day alone (the goal: within 1.5×);
//! - `top --store` of the whole range, beside `top` of the files and
//!   `go tool pprof -top` of them;
//! - each query's peak memory (GNU time's maximum RSS).
//!
//! ```text
//! cargo xtask bench-store-spread [--profiles 1200] [--days 30]
//! ```

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::bench::{corpus_dir, run};
use crate::bench_store::{gzip_to, later_by, megabytes};

const NANOS_PER_DAY: u64 = 86_400_000_000_000;

pub fn bench_store_spread(root: &Path, args: &[&str]) -> Result<()> {
    let (mut count, mut days) = (1200usize, 30u64);
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        let value = args
            .next()
            .with_context(|| format!("{flag} needs a value"))?;
        match *flag {
            "--profiles" => count = value.parse().context("--profiles")?,
            "--days" => days = value.parse().context("--days")?,
            _ => bail!("usage: cargo xtask bench-store-spread [--profiles N] [--days D]"),
        }
    }
    if count == 0 || days == 0 {
        bail!("--profiles and --days must be at least 1");
    }
    let build = ["build", "--quiet", "--release", "-p", "protoprof-cli"];
    run(crate::cargo::cargo(root).args(build))?;
    let protoprof = crate::bench::release_dir(root).join("protoprof");
    let dir = root.join("target/bench/spread");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("files"))?;
    let (files, start) = copies(root, &dir.join("files"), count, days)?;
    let by_day = |day: u64| -> Vec<&PathBuf> {
        (files.iter())
            .filter(|(t, _)| (t - start) / NANOS_PER_DAY == day)
            .map(|(_, f)| f)
            .collect()
    };
    let month = dir.join("month");
    let started = Instant::now();
    for day in 0..days {
        add(&protoprof, &month, &by_day(day))?;
    }
    let ingest = started.elapsed().as_secs_f64();
    run(Command::new(&protoprof)
        .args(["store", "compact"])
        .arg(&month))?;
    // The hour in the middle of the range, and a store of its day alone.
    let middle_day = days / 2;
    let hour = start + middle_day * NANOS_PER_DAY + 12 * 3_600_000_000_000;
    let one_day = dir.join("day");
    add(&protoprof, &one_day, &by_day(middle_day))?;
    run(Command::new(&protoprof)
        .args(["store", "compact"])
        .arg(&one_day))?;
    let input_bytes: u64 = files.iter().map(|(_, f)| size_of(f)).sum();
    let (stored_files, stored) = crate::bench_store::directory_usage(&month);
    let range = |from: u64, to: u64| vec![from.to_string(), to.to_string()];
    let mut rows = vec![
        format!(
            "| profiles | {count} over {days} days ({} as .pb.gz) |",
            megabytes(input_bytes)
        ),
        stored_row(stored, stored_files, input_bytes),
        format!("| `store add`, a command a day | {ingest:.1} s |"),
    ];
    let hour_range = range(hour, hour + 3_600_000_000_000);
    let stores = [("the month's store", &month), ("its day's store", &one_day)];
    rows.extend(one_hour(
        &protoprof,
        &stores,
        (&hour_range[0], &hour_range[1]),
    )?);
    let mut whole = Command::new(&protoprof);
    whole.args(["top", "-n", "10", "--store"]).arg(&month);
    rows.push(format!(
        "| `top --store`, all {days} days | {} |",
        timed(&mut whole)?
    ));
    let paths: Vec<&PathBuf> = files.iter().map(|(_, f)| f).collect();
    let mut ours = Command::new(&protoprof);
    ours.args(["top", "-n", "10"]).args(&paths);
    rows.push(format!(
        "| `protoprof top` of the {count} files | {} |",
        timed(&mut ours)?
    ));
    let mut go = Command::new("go");
    go.args(["tool", "pprof", "-top", "-nodecount=10"])
        .args(&paths);
    rows.push(format!(
        "| `go tool pprof -top` of the files | {} |",
        timed(&mut go)?
    ));
    write_table(root, "bench-store-spread.md", &rows)
}

/// The table row of a compacted store's size, against its profiles'
/// `.pb.gz`.
pub(crate) fn stored_row(stored: u64, files: usize, input_bytes: u64) -> String {
    format!(
        "| store on disk, compacted | {} ({:.0}% of the .pb.gz), {files} files |",
        megabytes(stored),
        100.0 * stored as f64 / input_bytes as f64,
    )
}

/// Prints `rows` as a table of measures, and writes it to
/// `target/bench/NAME`.
pub(crate) fn write_table(root: &Path, name: &str, rows: &[String]) -> Result<()> {
    let table = format!(
        "| measure | this machine |\n|---|---|\n{}\n",
        rows.join("\n")
    );
    print!("{table}");
    std::fs::write(root.join("target/bench").join(name), &table)?;
    Ok(())
}

/// Table rows of `top --store` of the hour `[from, to]` in each store
/// (what it is, where): its time and peak memory.
pub(crate) fn one_hour(
    protoprof: &Path,
    stores: &[(&str, &PathBuf)],
    (from, to): (&str, &str),
) -> Result<Vec<String>> {
    let mut rows = Vec::new();
    for (what, store) in stores {
        let mut top = Command::new(protoprof);
        top.args(["top", "-n", "10", "--store"]).arg(store);
        top.args(["--from", from, "--to", to]);
        rows.push(format!(
            "| `top --store`, one hour, {what} | {} |",
            timed(&mut top)?
        ));
    }
    Ok(rows)
}

/// The corpus's Go CPU profile `count` times, one copy every `days × 24 h
/// / count` from its own time, as `dir/<n>.pb.gz`: each one's time and file.
fn copies(root: &Path, dir: &Path, count: usize, days: u64) -> Result<(Vec<(u64, PathBuf)>, u64)> {
    let source = corpus_dir(root).join("pprof/real/go-cpu.pb.gz");
    let unzipped = Command::new("gzip").arg("-dc").arg(&source).output()?;
    if !unzipped.status.success() {
        bail!(
            "gzip -dc {}: {}",
            source.display(),
            String::from_utf8_lossy(&unzipped.stderr)
        );
    }
    let raw = unzipped.stdout;
    let start = crate::bench_store::time_nanos(&raw)?;
    let step = days * NANOS_PER_DAY / count as u64;
    let mut files = Vec::with_capacity(count);
    for n in 0..count as u64 {
        let file = dir.join(format!("{n}.pb.gz"));
        gzip_to(&file, &later_by(&raw, n * step)?)?;
        files.push((start + n * step, file));
    }
    Ok((files, start))
}

/// `store add` of `files` to `store` (nothing when there are none).
fn add(protoprof: &Path, store: &Path, files: &[&PathBuf]) -> Result<()> {
    if files.is_empty() {
        return Ok(());
    }
    let mut add = Command::new(protoprof);
    add.args(["store", "add"])
        .arg(store)
        .args(["--service", "checkout"]);
    run(add.args(files).stdout(std::process::Stdio::null()))?;
    Ok(())
}

/// The best of three wall times of `command`, and its peak RSS, as text.
pub(crate) fn timed(command: &mut Command) -> Result<String> {
    let mut best = f64::MAX;
    let mut peak = 0u64;
    for _ in 0..3 {
        let mut measured = Command::new("/usr/bin/time");
        measured
            .args(["-f", "%M"])
            .arg(command.get_program())
            .args(command.get_args());
        let started = Instant::now();
        let out = measured.stdout(std::process::Stdio::null()).output()?;
        let elapsed = started.elapsed().as_secs_f64();
        if !out.status.success() {
            bail!("{:?}: {}", command, String::from_utf8_lossy(&out.stderr));
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        let kilobytes = stderr
            .lines()
            .last()
            .and_then(|l| l.trim().parse::<u64>().ok());
        if elapsed < best {
            (best, peak) = (elapsed, kilobytes.unwrap_or(0));
        }
    }
    Ok(format!("{best:.2} s, {} MB", peak / 1000))
}

fn size_of(file: &Path) -> u64 {
    std::fs::metadata(file).map_or(0, |m| m.len())
}
