//! protoprof-synth [--sizes MB,MB,...] [--seed N] [--shape shared|distinct] [--out DIR]
//! protoprof-synth --fleet N [--out DIR]
//!
//! Writes synthetic pprof profiles, raw and gzipped, as `synth-<N>MB.pb` and
//! `synth-<N>MB.pb.gz` (default sizes 1,10,100; default directory
//! `target/synth`); `--shape distinct` writes `distinct-<N>MB.pb(.gz)`,
//! every stack its own. `--fleet N` writes N profiles of a fleet instead
//! (see `fleet`). Run through `cargo xtask gen-profiles`.

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
    let mut fleet = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--sizes" => {
                let list = args.next().context("--sizes MB,MB,...")?;
                sizes = list.split(',').map(|s| s.trim().parse()).collect::<Result<_, _>>()?;
            }
            "--seed" => seed = args.next().context("--seed N")?.parse()?,
            "--out" => dir = args.next().context("--out DIR")?.into(),
            "--fleet" => fleet = Some(args.next().context("--fleet N")?.parse()?),
            "--shape" => {
                stacks = match args.next().as_deref() {
                    Some("shared") => Stacks::SharedPaths,
                    Some("distinct") => Stacks::Distinct,
                    _ => bail!("--shape shared|distinct"),
                }
            }
            other => bail!("unknown argument {other}; usage: protoprof-synth [--sizes MB,...] [--seed N] [--shape shared|distinct] [--out DIR] | --fleet N [--out DIR]"),
        }
    }
    std::fs::create_dir_all(&dir)?;
    if let Some(count) = fleet {
        return write_fleet(&dir.join("fleet"), count);
    }
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

const SERVICES: usize = 10;
const HOSTS: usize = 100;
const VERSIONS: usize = 3;

/// `count` profiles of a fleet under `dir`: 10 services on 100 hosts (host
/// h runs service h % 10 at version h % 3), each host sending a gzipped
/// profile every 10 s from 2026-11-27T00:00Z. A service version's code is
/// its own (`fleet_profile`); samples differ per profile. `fleet.tsv`
/// says each file's service, host and version.
fn write_fleet(dir: &std::path::Path, count: usize) -> Result<()> {
    const START: i64 = 1_795_737_600_000_000_000;
    std::fs::create_dir_all(dir)?;
    let mut manifest = String::from("file\tservice\thost\tversion\n");
    let mut bytes = 0;
    for n in 0..count {
        let host = n % HOSTS;
        let (service, version) = (host % SERVICES, host % VERSIONS);
        let shape = Shape {
            samples: 500,
            locations: 2_000,
            functions: 800,
            paths: 400,
            mean_depth: 24,
            stacks: Stacks::SharedPaths,
            seed: (service * VERSIONS + version) as u64 + 1,
        };
        let time = START + (n / HOSTS) as i64 * 10_000_000_000;
        let p = protoprof_synth::fleet_profile(&shape, n as u64 + 1_000_003, time);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&p.write_to_bytes()?)?;
        let gz = gz.finish()?;
        let name = format!("host-{host}-{n}.pb.gz");
        bytes += gz.len();
        std::fs::write(dir.join(&name), gz)?;
        manifest += &format!("{name}\tsvc-{service}\thost-{host}\t2.{version}\n");
    }
    std::fs::write(dir.join("fleet.tsv"), manifest)?;
    println!("{}: {count} profiles, {bytes} bytes gzipped", dir.display());
    Ok(())
}
