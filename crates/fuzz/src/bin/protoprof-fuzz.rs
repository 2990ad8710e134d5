//! protoprof-fuzz [--seconds N] [--seed S] [--out DIR] SEED_DIR...
//!
//! Mutates every file below the seed directories and runs all decoders on
//! each mutation until the time is up. A panicking input is written to the
//! output directory (default `fuzz-crashes/`) and the run exits 1.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use protoprof_fuzz::{mutate, run_all, Rng};

fn main() -> Result<()> {
    let mut seconds = 60u64;
    let mut seed = 1u64;
    let mut out = PathBuf::from("fuzz-crashes");
    let mut dirs = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--seconds" => seconds = args.next().context("--seconds N")?.parse()?,
            "--seed" => seed = args.next().context("--seed S")?.parse()?,
            "--out" => out = args.next().context("--out DIR")?.into(),
            dir => dirs.push(PathBuf::from(dir)),
        }
    }
    if dirs.is_empty() {
        bail!("usage: protoprof-fuzz [--seconds N] [--seed S] [--out DIR] SEED_DIR...");
    }
    let mut seeds = Vec::new();
    let mut pending = dirs;
    while let Some(path) = pending.pop() {
        if path.is_dir() {
            pending.extend(
                std::fs::read_dir(&path)?
                    .map(|e| e.map(|e| e.path()))
                    .collect::<Result<Vec<_>, _>>()?,
            );
        } else if std::fs::metadata(&path)?.len() <= 2 << 20 {
            seeds.push(std::fs::read(&path)?);
        }
    }
    if seeds.is_empty() {
        bail!("no seed files found");
    }
    std::panic::set_hook(Box::new(|_| {}));
    let mut rng = Rng::new(seed);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut runs = 0u64;
    while Instant::now() < deadline {
        let input = mutate(&seeds[rng.below(seeds.len())], &mut rng);
        if let Some(target) = run_all(&input) {
            std::fs::create_dir_all(&out)?;
            let path = out.join(format!("{target}-{seed}-{runs}.bin"));
            std::fs::write(&path, &input)?;
            bail!(
                "target `{target}` panicked; input saved to {}",
                path.display()
            );
        }
        runs += 1;
    }
    println!("{runs} inputs from {} seeds, no panic", seeds.len());
    Ok(())
}
