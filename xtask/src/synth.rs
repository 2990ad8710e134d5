//! `cargo xtask gen-profiles`: synthetic profiles for benchmarks, written
//! under `target/synth/` (never committed).

use std::io::Write;
use std::path::Path;

use anyhow::{bail, Context, Result};
use protobuf::Message;
use protoprof_synth::{profile, Shape};

pub fn gen_profiles(root: &Path, args: &[&str]) -> Result<()> {
    let mut sizes = vec![1usize, 10, 100];
    let mut seed = 1u64;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match *arg {
            "--sizes" => {
                let list = args.next().context("--sizes MB,MB,...")?;
                sizes = list
                    .split(',')
                    .map(|s| s.trim().parse())
                    .collect::<Result<_, _>>()?;
            }
            "--seed" => seed = args.next().context("--seed N")?.parse()?,
            other => bail!("gen-profiles: unknown argument {other}"),
        }
    }
    let dir = root.join("target/synth");
    std::fs::create_dir_all(&dir)?;
    for mb in sizes {
        let shape = Shape::of_size(mb << 20, seed);
        let bytes = profile(&shape).write_to_bytes()?;
        let raw = dir.join(format!("synth-{mb}MB.pb"));
        std::fs::write(&raw, &bytes)?;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&bytes)?;
        let gz = gz.finish()?;
        std::fs::write(dir.join(format!("synth-{mb}MB.pb.gz")), &gz)?;
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
