//! `cargo xtask gen-profiles`: synthetic profiles for benchmarks, written
//! under `target/synth/` (never committed).
//!
//! The generator lives in `protoprof-synth`, which depends on a generated
//! model crate; xtask runs it through cargo instead of linking it, because
//! xtask must build even when the generated code is stale.

use std::path::Path;

use anyhow::{bail, Context, Result};

pub fn gen_profiles(root: &Path, args: &[&str]) -> Result<()> {
    let out = root.join("target/synth");
    let status = crate::cargo::cargo(root)
        .args([
            "run",
            "--quiet",
            "--release",
            "-p",
            "protoprof-synth",
            "--bin",
            "protoprof-synth",
            "--",
        ])
        .arg("--out")
        .arg(&out)
        .args(args)
        .status()
        .context("running protoprof-synth")?;
    if !status.success() {
        bail!("protoprof-synth failed ({status})");
    }
    Ok(())
}
