//! protoprof-synth [--sizes MB,MB,...] [--seed N] [--shape shared|distinct] [--out DIR]
//!
//! Writes synthetic pprof profiles, raw and gzipped, as `synth-<N>MB.pb` and
//! `synth-<N>MB.pb.gz` (default sizes 1,10,100; default directory
//! `target/synth`); `--shape distinct` writes `distinct-<N>MB.pb(.gz)`,
//! every stack its own. Run through `cargo xtask gen-profiles`.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use protobuf::Message;
use protoprof_synth::{profile, Shape, Stacks};

fn main() -> Result<()> {
    let mut sizes = vec![1usize, 10, 100];
    let mut seed = 1u64;
    let mut dir = PathBuf::from("target/synth");
    let mut stacks = Stacks::SharedPaths;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--sizes" => {
                let list = args.next().context("--sizes MB,MB,...")?;
                sizes = list.split(',').map(|s| s.trim().parse()).collect::<Result<_, _>>()?;
            }
            "--seed" => seed = args.next().context("--seed N")?.parse()?,
            "--out" => dir = args.next().context("--out DIR")?.into(),
            "--shape" => {
                stacks = match args.next().as_deref() {
                    Some("shared") => Stacks::SharedPaths,
                    Some("distinct") => Stacks::Distinct,
                    _ => bail!("--shape shared|distinct"),
                }
            }
            other => bail!("unknown argument {other}; usage: protoprof-synth [--sizes MB,...] [--seed N] [--shape shared|distinct] [--out DIR]"),
        }
    }
    std::fs::create_dir_all(&dir)?;
    for mb in sizes {
        let (shape, name) = match stacks {
            Stacks::SharedPaths => (Shape::of_size(mb << 20, seed), "synth"),
            Stacks::Distinct => (Shape::distinct_of_size(mb << 20, seed), "distinct"),
        };
        let bytes = profile(&shape).write_to_bytes()?;
        let raw = dir.join(format!("{name}-{mb}MB.pb"));
        std::fs::write(&raw, &bytes)?;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&bytes)?;
        let gz = gz.finish()?;
        std::fs::write(dir.join(format!("{name}-{mb}MB.pb.gz")), &gz)?;
        println!(
            "{}: {} samples, {} locations, {} bytes ({} gzipped)",
            raw.display(),
            shape.samples,
            shape.locations,
            bytes.len(),
            gz.len()
        );
    }
    Ok(())
}
