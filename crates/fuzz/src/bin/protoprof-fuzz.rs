//! The fuzzing campaign: `cargo xtask fuzz` builds this binary with coverage
//! counters and runs it; run directly, it mutates blindly.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Parser;
use protoprof_fuzz::campaign::{self, Budget, CampaignConfig, TargetReport};
use protoprof_fuzz::{coverage, TARGETS};

/// Runs each target on mutations of the seed files until its budget is spent.
#[derive(Parser)]
#[command(name = "protoprof-fuzz")]
struct Args {
    /// Files or directories whose files seed every target (default:
    /// `$PROTOPROF_CORPUS`, else `../shared/corpus`).
    seeds: Vec<PathBuf>,
    /// Only these targets (repeatable; default all).
    #[arg(long = "target", value_name = "NAME")]
    targets: Vec<String>,
    /// Executions per target.
    #[arg(long)]
    runs: Option<u64>,
    /// Seconds per target.
    #[arg(long)]
    seconds: Option<u64>,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where panicking inputs are saved, one directory per target.
    #[arg(long, default_value = "tests/fuzz-regressions")]
    crashes: PathBuf,
    /// Where inputs that reach new coverage are kept between campaigns.
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// Seed files larger than this are skipped.
    #[arg(long, default_value_t = 64 << 10)]
    max_seed_size: u64,
    /// Inputs longer than this are not kept in the corpus (smaller inputs
    /// run faster; the seeds still bring the large structures).
    #[arg(long, default_value_t = 64 << 10)]
    max_len: usize,
    /// Print the summary as a Markdown table.
    #[arg(long)]
    markdown: bool,
}

fn main() -> Result<()> {
    let args = Args::parse();
    let roots = if args.seeds.is_empty() {
        let corpus =
            std::env::var_os("PROTOPROF_CORPUS").unwrap_or_else(|| "../shared/corpus".into());
        vec![PathBuf::from(corpus)]
    } else {
        args.seeds.clone()
    };
    let seeds = read_seeds(&roots, args.max_seed_size)?;
    if seeds.is_empty() {
        bail!(
            "no seed files of at most {} bytes found",
            args.max_seed_size
        );
    }
    let budget = Budget {
        runs: args.runs,
        time: args.seconds.map(Duration::from_secs),
    };
    if budget.runs.is_none() && budget.time.is_none() {
        bail!("give --runs N, --seconds N or both");
    }
    let config = CampaignConfig {
        budget,
        seed: args.seed,
        crash_dir: args.crashes.clone(),
        corpus_dir: args.corpus.clone(),
        max_kept_len: args.max_len,
    };
    eprintln!(
        "{} seeds; {}",
        seeds.len(),
        if coverage::instrumented() {
            format!("{} edges instrumented", coverage::edge_count())
        } else {
            "no coverage counters: blind mutation (build with `cargo xtask fuzz`)".into()
        }
    );
    campaign::capture_panics();
    let mut reports = Vec::new();
    for &(name, target) in TARGETS {
        if !args.targets.is_empty() && !args.targets.iter().any(|t| t == name) {
            continue;
        }
        let report = campaign::run_target(name, target, &seeds, &config, &mut |r| {
            eprintln!("  {}", line(r))
        })?;
        eprintln!("{}", line(&report));
        reports.push(report);
    }
    print_summary(&reports, args.markdown);
    let findings: usize = reports.iter().map(|r| r.findings.len()).sum();
    if findings > 0 {
        bail!(
            "{findings} distinct panics; inputs saved under {}",
            args.crashes.display()
        );
    }
    Ok(())
}

fn read_seeds(roots: &[PathBuf], max_size: u64) -> Result<Vec<Vec<u8>>> {
    let mut seeds = Vec::new();
    let mut pending = roots.to_vec();
    while let Some(path) = pending.pop() {
        if path.is_dir() {
            let entries = std::fs::read_dir(&path).with_context(|| path.display().to_string())?;
            for entry in entries {
                pending.push(entry?.path());
            }
        } else if std::fs::metadata(&path)?.len() <= max_size {
            seeds.push(std::fs::read(&path)?);
        }
    }
    Ok(seeds)
}

fn line(r: &TargetReport) -> String {
    format!(
        "{}: {} runs in {:.0?} ({:.0}/s), {} of {} edges, {} features, corpus {}, slowest {:.1?}, {} panics",
        r.target,
        r.runs,
        r.elapsed,
        r.runs as f64 / r.elapsed.as_secs_f64().max(1e-9),
        r.edges.0,
        r.edges.1,
        r.features,
        r.corpus_len,
        r.slowest,
        r.findings.len()
    )
}

fn print_summary(reports: &[TargetReport], markdown: bool) {
    if markdown {
        println!("| target | executions | time | exec/s | edges covered | features | corpus | slowest run | panics |");
        println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    }
    for r in reports {
        if markdown {
            println!(
                "| {} | {} | {:.0?} | {:.0} | {} | {} | {} | {:.1?} | {} |",
                r.target,
                r.runs,
                r.elapsed,
                r.runs as f64 / r.elapsed.as_secs_f64().max(1e-9),
                r.edges.0,
                r.features,
                r.corpus_len,
                r.slowest,
                r.findings.len()
            );
        } else {
            println!("{}", line(r));
        }
        for finding in &r.findings {
            println!(
                "  panic: {} (input {})",
                finding.message,
                finding.saved_to.display()
            );
        }
    }
}
