//! `cargo xtask bench-store`: the profile store on this machine, over two
//! fleets of N profiles each (10 services on 100 hosts):
//! - `synthetic`: `cargo xtask gen-profiles --fleet N`, each service
//!   version's code its own and every profile's samples its own, with the
//!   service, host and version as labels;
//! - `corpus`: the corpus's Go CPU profiles in turn, each repeat a copy
//!   of its own (its time a nanosecond later than the one before), as a
//!   store keeps one copy of a profile it is given twice.
//!
//! Each fleet is added with `protoprof store add`, one command per host.
//! Measured: bytes on disk against the same profiles as `.pb.gz`, the
//! ingest rate, and a merged `top` over a tenth (one service) and over all
//! of them, against `go tool pprof -top` given the same files (it merges
//! them as it loads them) and DuckDB over the same Parquet.
//!
//! ```text
//! cargo xtask bench-store [--profiles 1000] [--source synthetic|corpus|both]
//! ```

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::bench::{corpus_dir, run};

/// Go CPU profiles of the corpus with the same sample types, so that any
/// selection of them merges.
pub(crate) const PROFILES: [&str; 4] = [
    "pprof/go/go-cpu.pb.gz",
    "pprof/real/go-cpu.pb.gz",
    "pprof/real/go-cpu-span-id-labels.pb.gz",
    "pprof/real/go-cpu-labels-exemplars.pb.gz",
];
const HOSTS: usize = 100;
const SERVICES: usize = 10;

/// One profile of a fleet and where it runs.
struct Member {
    file: PathBuf,
    service: String,
    host: String,
    version: Option<String>,
}

pub fn bench_store(root: &Path, args: &[&str]) -> Result<()> {
    let (mut count, mut sources) = (1000, vec!["synthetic", "corpus"]);
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        let value = args
            .next()
            .with_context(|| format!("{flag} needs a value"))?;
        match (*flag, *value) {
            ("--profiles", n) => count = n.parse().context("--profiles")?,
            ("--source", "both") => sources = vec!["synthetic", "corpus"],
            ("--source", one @ ("synthetic" | "corpus")) => sources = vec![one],
            _ => bail!(
                "usage: cargo xtask bench-store [--profiles N] [--source synthetic|corpus|both]"
            ),
        }
    }
    let build = ["build", "--quiet", "--release", "-p", "protoprof-cli"];
    run(crate::cargo::cargo(root).args(build))?;
    let protoprof = crate::bench::release_dir(root).join("protoprof");
    let mut tables = String::new();
    for source in sources {
        let fleet = match source {
            "synthetic" => synthetic_fleet(root, count)?,
            _ => corpus_fleet(root, count)?,
        };
        let rows = measure(root, &protoprof, source, &fleet)?;
        let table = format!(
            "{source} fleet:\n\n| measure | this machine |\n|---|---|\n{}\n\n",
            rows.join("\n")
        );
        print!("{table}");
        tables += &table;
    }
    std::fs::write(root.join("target/bench/bench-store.md"), &tables)?;
    Ok(())
}

/// The corpus's Go CPU profiles in turn, profile i on host i % 100: the
/// k-th repeat of a file on a host is its k-th copy.
fn corpus_fleet(root: &Path, count: usize) -> Result<Vec<Member>> {
    let corpus = corpus_dir(root);
    let dir = root.join("target/bench/corpus-fleet");
    std::fs::create_dir_all(&dir)?;
    let mut raw = Vec::new();
    for file in PROFILES {
        let unzipped = Command::new("gzip")
            .arg("-dc")
            .arg(corpus.join(file))
            .output()?;
        if !unzipped.status.success() {
            bail!(
                "gzip -dc {file}: {}",
                String::from_utf8_lossy(&unzipped.stderr)
            );
        }
        raw.push(unzipped.stdout);
    }
    let mut members = Vec::with_capacity(count);
    for i in 0..count {
        let (n, copy) = (i % PROFILES.len(), i / HOSTS);
        let file = dir.join(format!("{n}-{copy}.pb.gz"));
        if !file.exists() {
            gzip_to(&file, &later_by(&raw[n], copy as u64)?)?;
        }
        members.push(Member {
            file,
            service: format!("svc-{}", (i % HOSTS) % SERVICES),
            host: format!("host-{}", i % HOSTS),
            version: None,
        });
    }
    Ok(members)
}

/// An encoded pprof profile whose `time_nanos` (field 9) is `nanos`
/// later: the field rewritten where it is (pprof refuses a profile that
/// has it twice), or added.
pub(crate) fn later_by(profile: &[u8], nanos: u64) -> Result<Vec<u8>> {
    let found = time_field(profile)?;
    let (start, end, time) = found.unwrap_or((profile.len(), profile.len(), 0));
    let mut out = profile[..start].to_vec();
    out.push(9 << 3);
    let mut value = time.wrapping_add(nanos);
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
    out.extend_from_slice(&profile[end..]);
    Ok(out)
}

/// An encoded pprof profile's `time_nanos` (0 when it has none).
pub(crate) fn time_nanos(profile: &[u8]) -> Result<u64> {
    Ok(time_field(profile)?.map_or(0, |(_, _, time)| time))
}

/// Where an encoded pprof profile's last `time_nanos` field starts and
/// ends, and its value.
fn time_field(profile: &[u8]) -> Result<Option<(usize, usize, u64)>> {
    let mut at = 0;
    let mut found = None;
    while at < profile.len() {
        let start = at;
        let tag = varint(profile, &mut at)?;
        match tag & 7 {
            0 if tag >> 3 == 9 => {
                let time = varint(profile, &mut at)?;
                found = Some((start, at, time));
            }
            0 => drop(varint(profile, &mut at)?),
            1 => at += 8,
            2 => at += usize::try_from(varint(profile, &mut at)?)?,
            5 => at += 4,
            other => bail!("wire type {other} in a pprof profile"),
        }
    }
    Ok(found)
}

/// `bytes` gzipped (by `gzip -n`) into `file`.
pub(crate) fn gzip_to(file: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let mut gzip = Command::new("gzip")
        .args(["-c", "-n"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::fs::File::create(file)?)
        .spawn()?;
    gzip.stdin
        .take()
        .context("gzip's input")?
        .write_all(bytes)?;
    if !gzip.wait()?.success() {
        bail!("gzip -c into {}", file.display());
    }
    Ok(())
}

/// The varint at `at`, which it moves past.
fn varint(bytes: &[u8], at: &mut usize) -> Result<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*at).context("a truncated varint")?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Ok(value);
        }
    }
    bail!("a varint longer than 10 bytes")
}

/// `count` profiles from `cargo xtask gen-profiles --fleet`, made once.
/// `target/synth/fleet`, holding `count` profiles of `gen-profiles
/// --fleet`: made again when it holds another number, or the generator
/// changed since it was made.
pub(crate) fn synthetic_fleet_dir(root: &Path, count: usize) -> Result<std::path::PathBuf> {
    let dir = root.join("target/synth/fleet");
    let manifest = dir.join("fleet.tsv");
    let lines = |text: &str| text.lines().count().saturating_sub(1);
    let made = std::fs::read_to_string(&manifest).unwrap_or_default();
    let modified = |path: &Path| std::fs::metadata(path).and_then(|m| m.modified()).ok();
    let generator = modified(&root.join("crates/synth/src/lib.rs"));
    let stale = modified(&manifest).is_none_or(|made| generator.is_some_and(|g| g > made));
    if lines(&made) != count || stale {
        let _ = std::fs::remove_dir_all(&dir);
        crate::synth::gen_profiles(root, &["--fleet", &count.to_string()])?;
    }
    Ok(dir)
}

fn synthetic_fleet(root: &Path, count: usize) -> Result<Vec<Member>> {
    let dir = synthetic_fleet_dir(root, count)?;
    let text = std::fs::read_to_string(dir.join("fleet.tsv")).context("fleet.tsv")?;
    text.lines()
        .skip(1)
        .map(|line| match line.split('\t').collect::<Vec<_>>()[..] {
            [file, service, host, version] => Ok(Member {
                file: dir.join(file),
                service: service.into(),
                host: host.into(),
                version: Some(version.into()),
            }),
            _ => bail!("fleet.tsv: bad line {line:?}"),
        })
        .collect()
}

/// The store's figures for `fleet`, as table rows.
fn measure(root: &Path, protoprof: &Path, source: &str, fleet: &[Member]) -> Result<Vec<String>> {
    let dir = root.join("target/bench/store");
    std::fs::create_dir_all(&dir)?;
    let store = dir.join(source);
    let _ = std::fs::remove_dir_all(&store);
    let input_bytes: u64 = fleet
        .iter()
        .map(|m| std::fs::metadata(&m.file).map_or(0, |m| m.len()))
        .sum();
    let started = Instant::now();
    for host in 0..HOSTS {
        let members: Vec<&Member> = fleet.iter().skip(host).step_by(HOSTS).collect();
        let Some(first) = members.first() else {
            continue;
        };
        let mut add = Command::new(protoprof);
        add.args(["store", "add"]).arg(&store);
        add.args(["--service", &first.service]);
        add.args(["--resource", &format!("host.name={}", first.host)]);
        if let Some(version) = &first.version {
            add.args(["--resource", &format!("service.version={version}")]);
        }
        add.args(members.iter().map(|m| &m.file));
        run(add.stdout(std::process::Stdio::null()))?;
    }
    let ingest = started.elapsed().as_secs_f64();
    let (_, stored) = directory_usage(&store);
    let count = fleet.len();
    let service_files: Vec<PathBuf> = fleet
        .iter()
        .filter(|m| m.service == "svc-1")
        .map(|m| m.file.clone())
        .collect();
    let all_files: Vec<PathBuf> = fleet.iter().map(|m| m.file.clone()).collect();
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
        rows.extend(query_rows(root, protoprof, &store, (what, select, files))?);
    }
    Ok(rows)
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

/// The shortest wall time of three runs, as text; one run when it takes
/// more than a minute (`go tool pprof` over 10,000 synthetic profiles
/// takes about five).
fn best_of_three(command: &mut Command) -> Result<String> {
    let mut best = f64::MAX;
    for _ in 0..3 {
        let started = Instant::now();
        run(command)?;
        best = best.min(started.elapsed().as_secs_f64());
        if best > 60.0 {
            return Ok(format!("{best:.1} s (one run)"));
        }
    }
    Ok(format!("{best:.2} s"))
}

pub(crate) fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

/// The files under `dir`, at any depth, and their bytes.
pub(crate) fn directory_usage(dir: &Path) -> (usize, u64) {
    let (mut files, mut bytes) = (0, 0);
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            match entry.metadata() {
                Ok(m) if m.is_dir() => pending.push(entry.path()),
                Ok(m) => (files, bytes) = (files + 1, bytes + m.len()),
                Err(_) => {}
            }
        }
    }
    (files, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_is_the_profile_with_a_later_time() {
        // time_nanos 300 (a two-byte varint), a string, a repeated varint.
        let profile = [0x48, 0xac, 0x02, 0x32, 0x01, b'a', 0x18, 0x07];
        let copy = later_by(&profile, 2).unwrap();
        assert_eq!(copy, [0x48, 0xae, 0x02, 0x32, 0x01, b'a', 0x18, 0x07]);
        let added = later_by(&profile[3..], 5).unwrap();
        assert_eq!(added, [0x32, 0x01, b'a', 0x18, 0x07, 0x48, 0x05]);
        assert!(later_by(&[0x48, 0x80], 1).is_err());
    }
}
