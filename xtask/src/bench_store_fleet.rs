//! `cargo xtask bench-store-fleet`: a fleet's store as continuous
//! profiling fills it for a month. S services on H hosts each send one
//! profile every M minutes for D days (4 × 6 every 10 minutes for 30 days:
//! 103,680 profiles). Half the services send the corpus's real Go CPU
//! profiles (`bench-store`'s four, in turn), half synthetic ones (`gen-profiles
//! --fleet`: each service version's code its own); each host's profiles
//! start a few seconds apart from the others'. Each day is added as a
//! daily job would (`store add` per service and host, `host.name` as a
//! resource attribute), then the store compacted. Measured:
//! - the store's size against the `.pb.gz`;
//! - `top --store` of one hour in the middle, in the month's store and in a
//!   store of that day alone (the goal: within 1.5×);
//! - `top --store` of one service for the month, and of everything, and
//!   `store series` of everything per hour and per host and day, from the
//!   rollups and with `--no-rollups` (the two must print the same);
//! - each query's peak memory.
//!
//! ```text
//! cargo xtask bench-store-fleet [--services 4] [--hosts 6] [--every-minutes 10] [--days 30]
//! ```

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::bench::{corpus_dir, run};
use crate::bench_store::{later_by, megabytes, time_nanos, PROFILES};
use crate::bench_store_spread::{one_hour, stored_row, timed, write_table};

const NANOS_PER_DAY: u64 = 86_400_000_000_000;
const NANOS_PER_MINUTE: u64 = 60_000_000_000;
/// Synthetic profiles made, each sent again and again.
const SYNTHETIC: usize = 120;

/// The fleet's shape.
struct Shape {
    services: u64,
    hosts: u64,
    every_minutes: u64,
    days: u64,
}

pub fn bench_store_fleet(root: &Path, args: &[&str]) -> Result<()> {
    let shape = shape_of(args)?;
    let build = ["build", "--quiet", "--release", "-p", "protoprof-cli"];
    run(crate::cargo::cargo(root).args(build))?;
    let protoprof = crate::bench::release_dir(root).join("protoprof");
    let dir = root.join("target/bench/fleet");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let sources = sources(root)?;
    // The month ends on the last day over two hours ago: every day of it
    // is over (a store blocks a day an hour after its end), as a month of
    // a fleet's profiles is once it is stored (days to come stay hours),
    // whatever the time the benchmark starts.
    let today = (std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_nanos() as u64
        - 2 * 60 * NANOS_PER_MINUTE)
        / NANOS_PER_DAY;
    let start = (today - shape.days) * NANOS_PER_DAY;
    let month = dir.join("month");
    let one_day = dir.join("day");
    let middle_day = shape.days / 2;
    let (mut input_bytes, mut profiles) = (0u64, 0u64);
    let started = Instant::now();
    let (mut ingest, mut compaction) = (0.0, 0.0);
    for day in 0..shape.days {
        let files = dir.join(format!("files/{day:03}"));
        let written = write_day(&sources, &shape, start, day, &files)?;
        input_bytes += written.iter().map(|w| w.bytes).sum::<u64>();
        profiles += written.len() as u64;
        let adding = Instant::now();
        add_day(&protoprof, &month, &written)?;
        ingest += adding.elapsed().as_secs_f64();
        // A daily job compacts what it added: the day before, now over,
        // becomes a block (`store add` reads the ids the store holds, so
        // its cost follows the files the store has).
        let compacting = Instant::now();
        run(Command::new(&protoprof)
            .args(["store", "compact"])
            .arg(&month)
            .stdout(std::process::Stdio::null()))?;
        compaction += compacting.elapsed().as_secs_f64();
        if day == middle_day {
            add_day(&protoprof, &one_day, &written)?;
        }
        // The files of every other day are not kept: a month is large.
        if day != middle_day {
            std::fs::remove_dir_all(&files)?;
        }
    }
    let prepared = started.elapsed().as_secs_f64();
    run(Command::new(&protoprof)
        .args(["store", "compact"])
        .arg(&one_day))?;
    let (stored_files, stored) = crate::bench_store::directory_usage(&month);
    let hour = start + middle_day * NANOS_PER_DAY + 12 * 60 * NANOS_PER_MINUTE;
    let hour_range = [hour.to_string(), (hour + 60 * NANOS_PER_MINUTE).to_string()];
    let mut rows = vec![
        format!(
            "| profiles | {profiles}: {} services × {} hosts, one every {} minutes, {} days ({} as .pb.gz) |",
            shape.services, shape.hosts, shape.every_minutes, shape.days, megabytes(input_bytes)
        ),
        stored_row(stored, stored_files, input_bytes),
        format!("| `store add`, a command per day, service and host | {ingest:.0} s |"),
        format!("| `store compact` after each day's adds | {compaction:.0} s in all ({prepared:.0} s with writing the files) |"),
    ];
    let stores = [("the month's store", &month), ("its day's store", &one_day)];
    rows.extend(one_hour(
        &protoprof,
        &stores,
        (&hour_range[0], &hour_range[1]),
    )?);
    let top: &[&str] = &["top", "-n", "10", "--store"];
    let service: &[&str] = &["--select", r#"service.name="svc-0""#];
    let series: &[&str] = &["store", "series"];
    let wide = [
        ("`top --store`, one service", (top, service)),
        ("`top --store`, everything", (top, &[][..])),
        (
            "`store series --step 1h`, everything",
            (series, &["--step", "1h"][..]),
        ),
        (
            "`store series --step 1d --group-by host.name`",
            (series, &["--step", "1d", "--group-by", "host.name"][..]),
        ),
    ];
    for (what, args) in wide {
        rows.extend(month_read(&protoprof, &month, what, args, shape.days)?);
    }
    let day_files = dir.join(format!("files/{middle_day:03}"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(&day_files)?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()?;
    files.sort();
    let mut ours = Command::new(&protoprof);
    ours.args(["top", "-n", "10"]).args(&files);
    rows.push(format!(
        "| `protoprof top` of the middle day's {} files | {} |",
        files.len(),
        timed(&mut ours)?
    ));
    let mut day_store = Command::new(&protoprof);
    day_store.args(["top", "-n", "10", "--store"]).arg(&one_day);
    rows.push(format!(
        "| `top --store` of its day's store, all of it | {} |",
        timed(&mut day_store)?
    ));
    write_table(root, "bench-store-fleet.md", &rows)
}

/// A read of the whole month, `what` in the table, `args` before the
/// store's directory and after it, from the rollups and from the raw rows
/// (`--no-rollups`): two rows, once both print the same.
fn month_read(
    protoprof: &Path,
    month: &Path,
    what: &str,
    (before, after): (&[&str], &[&str]),
    days: u64,
) -> Result<Vec<String>> {
    let mut rows = Vec::new();
    let mut printed = Vec::new();
    for raw in [false, true] {
        let mut read = Command::new(protoprof);
        read.args(before).arg(month).args(after);
        if raw {
            read.arg("--no-rollups");
        }
        let out = read.output()?;
        if !out.status.success() {
            bail!("{read:?}: {}", String::from_utf8_lossy(&out.stderr));
        }
        printed.push(out.stdout);
        let how = if raw {
            "`--no-rollups`"
        } else {
            "from the rollups"
        };
        rows.push(format!(
            "| {what}, all {days} days, {how} | {} |",
            timed(&mut read)?
        ));
    }
    if printed[0] != printed[1] {
        bail!("{what}: the rollups' answer differs from the raw rows'");
    }
    Ok(rows)
}

fn shape_of(args: &[&str]) -> Result<Shape> {
    let mut shape = Shape {
        services: 4,
        hosts: 6,
        every_minutes: 10,
        days: 30,
    };
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        let value: u64 = (args.next())
            .with_context(|| format!("{flag} needs a value"))?
            .parse()
            .with_context(|| flag.to_string())?;
        match *flag {
            "--services" => shape.services = value,
            "--hosts" => shape.hosts = value,
            "--every-minutes" => shape.every_minutes = value,
            "--days" => shape.days = value,
            _ => bail!(
                "usage: cargo xtask bench-store-fleet [--services N] [--hosts N] [--every-minutes N] [--days N]"
            ),
        }
    }
    if shape.services < 2 || shape.hosts == 0 || shape.every_minutes == 0 || shape.days == 0 {
        bail!("--services must be at least 2 (real and synthetic), the others at least 1");
    }
    Ok(shape)
}

/// The profiles services send, encoded: real ones and synthetic ones.
struct Sources {
    real: Vec<Vec<u8>>,
    synthetic: Vec<Vec<u8>>,
}

fn sources(root: &Path) -> Result<Sources> {
    let corpus = corpus_dir(root);
    let mut real = Vec::new();
    for file in PROFILES {
        real.push(gunzip(&corpus.join(file))?);
    }
    let dir = crate::bench_store::synthetic_fleet_dir(root, SYNTHETIC)?;
    let manifest = std::fs::read_to_string(dir.join("fleet.tsv")).context("fleet.tsv")?;
    let mut synthetic = Vec::new();
    for line in manifest.lines().skip(1) {
        let file = line.split('\t').next().context("fleet.tsv")?;
        synthetic.push(gunzip(&dir.join(file))?);
    }
    Ok(Sources { real, synthetic })
}

fn gunzip(file: &Path) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    let opened = std::fs::File::open(file).with_context(|| file.display().to_string())?;
    std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(opened), &mut bytes)?;
    Ok(bytes)
}

/// One profile file written for a day: whose it is.
struct Written {
    file: PathBuf,
    service: u64,
    host: u64,
    bytes: u64,
}

/// Writes day `day`'s profiles of every service and host into `dir`.
fn write_day(
    sources: &Sources,
    shape: &Shape,
    start: u64,
    day: u64,
    dir: &Path,
) -> Result<Vec<Written>> {
    std::fs::create_dir_all(dir)?;
    let ticks = 24 * 60 / shape.every_minutes;
    let mut written = Vec::new();
    for service in 0..shape.services {
        for host in 0..shape.hosts {
            for tick in 0..ticks {
                let n = (day * ticks + tick) as usize + host as usize;
                let source = match service < shape.services / 2 {
                    true => &sources.real[n % sources.real.len()],
                    false => {
                        &sources.synthetic[(n + service as usize * 7) % sources.synthetic.len()]
                    }
                };
                let at = start
                    + day * NANOS_PER_DAY
                    + tick * shape.every_minutes * NANOS_PER_MINUTE
                    + host * 3_000_000_000
                    + service * 500_000_000;
                let profile = later_by(source, at.wrapping_sub(time_nanos(source)?))?;
                let file = dir.join(format!("s{service}-h{host}-{tick:04}.pb.gz"));
                let mut gz =
                    flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
                gz.write_all(&profile)?;
                let bytes = gz.finish()?;
                std::fs::write(&file, &bytes)?;
                written.push(Written {
                    file,
                    service,
                    host,
                    bytes: bytes.len() as u64,
                });
            }
        }
    }
    Ok(written)
}

/// `store add` of a day's files to `store`, one command per service and host.
fn add_day(protoprof: &Path, store: &Path, written: &[Written]) -> Result<()> {
    let mut pairs: Vec<(u64, u64)> = written.iter().map(|w| (w.service, w.host)).collect();
    pairs.dedup();
    for (service, host) in pairs {
        let files = written
            .iter()
            .filter(|w| (w.service, w.host) == (service, host))
            .map(|w| &w.file);
        let mut add = Command::new(protoprof);
        add.args(["store", "add"]).arg(store);
        add.args(["--service", &format!("svc-{service}")]);
        add.args(["--resource", &format!("host.name=host-{host}")]);
        run(add.args(files).stdout(std::process::Stdio::null()))?;
    }
    Ok(())
}
