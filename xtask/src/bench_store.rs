//! `cargo xtask bench-store`: the profile store on this machine. N profiles
//! (the corpus's Go CPU profiles in turn, each under one of 10 services and
//! 100 hosts) added with `protoprof store add`, one command per host: bytes
//! on disk against the same profiles as `.pb.gz`, the ingest rate, and a
//! merged `top` over a tenth and over all of them, against `go tool pprof
//! -top` given the same files (it merges them as it loads them) and DuckDB
//! over the same Parquet.
//!
//! ```text
//! cargo xtask bench-store [--profiles 1000]
//! ```

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::bench::{corpus_dir, run};

/// Go CPU profiles of the corpus with the same sample types, so that any
/// selection of them merges.
const PROFILES: [&str; 4] = [
    "pprof/go/go-cpu.pb.gz",
    "pprof/real/go-cpu.pb.gz",
    "pprof/real/go-cpu-span-id-labels.pb.gz",
    "pprof/real/go-cpu-labels-exemplars.pb.gz",
];
const HOSTS: usize = 100;
const SERVICES: usize = 10;

pub fn bench_store(root: &Path, args: &[&str]) -> Result<()> {
    let count = match args {
        [] => 1000,
        ["--profiles", n] => n.parse().context("--profiles")?,
        _ => bail!("usage: cargo xtask bench-store [--profiles N]"),
    };
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let build = ["build", "--quiet", "--release", "-p", "protoprof-cli"];
    run(Command::new(&cargo).current_dir(root).args(build))?;
    let protoprof = crate::bench::release_dir(root).join("protoprof");
    let dir = root.join("target/bench/store");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let corpus = corpus_dir(root);
    let file_of = |i: usize| corpus.join(PROFILES[i % PROFILES.len()]);
    let input_bytes: u64 = (0..count)
        .map(|i| std::fs::metadata(file_of(i)).map_or(0, |m| m.len()))
        .sum();
    let store = dir.join("fleet");
    let started = Instant::now();
    for host in 0..HOSTS {
        let files: Vec<PathBuf> = (host..count).step_by(HOSTS).map(file_of).collect();
        if files.is_empty() {
            continue;
        }
        let mut add = Command::new(&protoprof);
        add.args(["store", "add"]).arg(&store);
        add.args(["--service", &format!("svc-{}", host % SERVICES)]);
        add.args(["--resource", &format!("host.name=host-{host}")]);
        run(add.args(&files).stdout(std::process::Stdio::null()))?;
    }
    let ingest = started.elapsed().as_secs_f64();
    let stored = directory_bytes(&store);
    let service_files: Vec<PathBuf> = (0..count)
        .filter(|i| (i % HOSTS) % SERVICES == 1)
        .map(file_of)
        .collect();
    let all_files: Vec<PathBuf> = (0..count).map(file_of).collect();
    let mut rows = vec![
        format!(
            "| profiles | {count} ({} as .pb.gz) |",
            megabytes(input_bytes)
        ),
        format!(
            "| store on disk | {} ({:.0}% of the .pb.gz) |",
            megabytes(stored),
            100.0 * stored as f64 / input_bytes as f64
        ),
        format!(
            "| `store add` ({HOSTS} commands) | {:.1} s: {:.0} profiles/s, {:.1} MB/s of .pb.gz |",
            ingest,
            count as f64 / ingest,
            input_bytes as f64 / 1e6 / ingest
        ),
    ];
    let selector = r#"service.name="svc-1""#;
    for (what, select, files) in [
        ("a tenth", Some(selector), &service_files),
        ("all", None, &all_files),
    ] {
        rows.extend(query_rows(root, &protoprof, &store, (what, select, files))?);
    }
    let table = format!(
        "| measure | this machine |\n|---|---|\n{}\n",
        rows.join("\n")
    );
    print!("{table}");
    std::fs::write(root.join("target/bench/bench-store.md"), &table)?;
    Ok(())
}

/// `top` of the selection through the store, through `go tool pprof` on the
/// same files, and DuckDB's top functions over the store: the best of
/// three runs each.
fn query_rows(
    root: &Path,
    protoprof: &Path,
    store: &Path,
    (what, select, files): (&str, Option<&str>, &[PathBuf]),
) -> Result<Vec<String>> {
    let mut ours = Command::new(protoprof);
    ours.args(["top", "-n", "10", "--store"]).arg(store);
    if let Some(select) = select {
        ours.args(["--select", select]);
    }
    let mut go = Command::new("go");
    go.args(["tool", "pprof", "-top", "-nodecount=10"])
        .args(files);
    let mut rows = vec![
        format!(
            "| `top --store`, {what} ({} profiles) | {} |",
            files.len(),
            best_of_three(&mut ours)?
        ),
        format!(
            "| `go tool pprof -top`, the same files | {} |",
            best_of_three(&mut go)?
        ),
    ];
    if select.is_none() {
        let python = std::env::var_os("PROTOPROF_STORE_PYTHON")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                let home = std::env::var_os("HOME").unwrap_or_default();
                PathBuf::from(home).join(".cache/protoprof/python-store/bin/python")
            });
        let mut duckdb = Command::new(python);
        duckdb.arg(root.join("tools/python-store/store_totals.py"));
        duckdb.arg("duckdb").arg(store).args(["10", "cpu"]);
        rows.push(format!(
            "| DuckDB, top 10 functions of all | {} |",
            best_of_three(&mut duckdb)?
        ));
    }
    Ok(rows)
}

/// The shortest wall time of three runs, as text.
fn best_of_three(command: &mut Command) -> Result<String> {
    let mut best = f64::MAX;
    for _ in 0..3 {
        let started = Instant::now();
        run(command)?;
        best = best.min(started.elapsed().as_secs_f64());
    }
    Ok(format!("{best:.2} s"))
}

fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

fn directory_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            match entry.metadata() {
                Ok(m) if m.is_dir() => pending.push(entry.path()),
                Ok(m) => total += m.len(),
                Err(_) => {}
            }
        }
    }
    total
}
