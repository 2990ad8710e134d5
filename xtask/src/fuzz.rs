//! `cargo xtask fuzz`: builds `protoprof-fuzz` with SanitizerCoverage's
//! inline 8-bit counters and runs its campaign. The flags are stable `-C`
//! options; the build gets its own target directory so that it never mixes
//! with ordinary builds, and an explicit `--target` so that build scripts
//! and proc macros (which have no counter runtime) stay uninstrumented.

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};

const COVERAGE_FLAGS: &[&str] = &[
    "-Cpasses=sancov-module",
    "-Cllvm-args=-sanitizer-coverage-level=3",
    "-Cllvm-args=-sanitizer-coverage-inline-8bit-counters",
    "-Cdebug-assertions",
    "-Coverflow-checks",
];

/// Builds the instrumented fuzzer and runs it with `args` (the binary's
/// seeds default to `$PROTOPROF_CORPUS` or `../shared/corpus`).
pub fn fuzz(root: &Path, args: &[&str]) -> Result<()> {
    let host = host_triple()?;
    let target_dir = root.join("target/fuzz");
    let status = Command::new(env!("CARGO"))
        .current_dir(root)
        .args([
            "build",
            "--release",
            "-p",
            "protoprof-fuzz",
            "--target",
            &host,
        ])
        .arg("--target-dir")
        .arg(&target_dir)
        .env("RUSTFLAGS", COVERAGE_FLAGS.join(" "))
        .status()
        .context("running cargo build")?;
    if !status.success() {
        bail!("building the instrumented fuzzer failed");
    }
    let binary = target_dir.join(&host).join("release/protoprof-fuzz");
    // From the workspace root, where the binary's default seed directory
    // (the corpus) and crash directory are relative to.
    let status = Command::new(binary)
        .current_dir(root)
        .args(args)
        .status()
        .context("running protoprof-fuzz")?;
    if !status.success() {
        bail!("the campaign found panics (or could not run); see above");
    }
    Ok(())
}

fn host_triple() -> Result<String> {
    let output = Command::new("rustc")
        .arg("-vV")
        .output()
        .context("running rustc -vV")?;
    let text = String::from_utf8(output.stdout)?;
    text.lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(str::to_string)
        .context("rustc -vV names no host")
}
