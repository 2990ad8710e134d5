//! `cargo xtask bench-protoc`: the text format of a large message, printed by
//! `protoc --decode` and by `protoprof decode` with the same `.proto` file
//! loaded as a user schema (and, for reference, with the built-in type).
//! The outputs are checked equal before anything is timed; the table gives
//! each command's median wall time, throughput and peak RSS.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context, Result};

/// Options of the task.
struct Options {
    sizes: Vec<usize>,
    rounds: usize,
}

fn parse_options(args: &[&str]) -> Result<Options> {
    let mut options = Options {
        sizes: vec![10, 100],
        rounds: 3,
    };
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let value = rest
            .next()
            .with_context(|| format!("{arg} needs a value"))?;
        match *arg {
            "--sizes" => options.sizes = crate::bench::parse_sizes(value)?,
            "--rounds" => options.rounds = value.parse().context("--rounds")?,
            other => bail!("unknown option {other}"),
        }
    }
    Ok(options)
}

/// One way of printing the text of a message: a program, its arguments,
/// and whether the input comes on standard input.
struct Printer {
    name: &'static str,
    program: PathBuf,
    args: Vec<String>,
    stdin: bool,
}

pub fn bench_protoc(root: &Path, args: &[&str]) -> Result<()> {
    let options = parse_options(args)?;
    let protoprof = crate::bench::release_protoprof(root)?;
    let proto = root.join("proto");
    let printers = [
        Printer {
            name: "protoc --decode (3.21, Debian)",
            program: "protoc".into(),
            args: vec![
                format!("-I{}", proto.display()),
                "--decode=perftools.profiles.Profile".into(),
                "perftools/profiles/profile.proto".into(),
            ],
            stdin: true,
        },
        Printer {
            name: "protoprof decode --proto (user schema)",
            program: protoprof.clone(),
            args: vec![
                "-I".into(),
                proto.display().to_string(),
                "--proto".into(),
                "perftools/profiles/profile.proto".into(),
                "decode".into(),
                "--type".into(),
                "perftools.profiles.Profile".into(),
            ],
            stdin: false,
        },
        Printer {
            name: "protoprof decode (built-in type)",
            program: protoprof,
            args: vec!["decode".into()],
            stdin: false,
        },
    ];
    let mut table =
        String::from("| input | command | median | MB/s | peak RSS |\n|---|---|---|---|---|\n");
    for mb in &options.sizes {
        let input = synthetic_profile(root, *mb)?;
        let bytes = std::fs::metadata(&input)?.len();
        check_same_text(&printers, &input)?;
        for printer in &printers {
            let mut times = Vec::new();
            let mut rss = 0;
            for _ in 0..options.rounds {
                let (nanos, kb) = time_printer(printer, &input)?;
                times.push(nanos);
                rss = rss.max(kb);
            }
            times.sort_unstable();
            let median = times[times.len() / 2] as f64 / 1e9;
            table.push_str(&format!(
                "| synth-{mb}MB.pb ({bytes} bytes) | {} | {median:.2} s | {:.1} | {} MB |\n",
                printer.name,
                bytes as f64 / 1e6 / median,
                rss / 1024
            ));
        }
    }
    println!("{table}");
    let out = root.join("target/bench/bench-protoc.md");
    std::fs::create_dir_all(out.parent().unwrap())?;
    std::fs::write(&out, table)?;
    println!("written to {}", out.display());
    Ok(())
}

/// `target/synth/synth-<mb>MB.pb`, made when missing.
fn synthetic_profile(root: &Path, mb: usize) -> Result<PathBuf> {
    let path = root.join(format!("target/synth/synth-{mb}MB.pb"));
    if !path.exists() {
        super::synth::gen_profiles(root, &["--sizes", &mb.to_string()])?;
    }
    Ok(path)
}

/// `command` given `input` as the printer takes it: on standard input or
/// as its last argument.
fn with_input<'c>(
    command: &'c mut Command,
    printer: &Printer,
    input: &Path,
) -> Result<&'c mut Command> {
    if printer.stdin {
        command.stdin(Stdio::from(std::fs::File::open(input)?));
    } else {
        command.arg(input).stdin(Stdio::null());
    }
    Ok(command)
}

/// Every printer prints the same text (compared by hash, not kept).
fn check_same_text(printers: &[Printer], input: &Path) -> Result<()> {
    use std::hash::{Hash, Hasher};
    let mut first: Option<(&str, (usize, u64))> = None;
    for printer in printers {
        let mut command = Command::new(&printer.program);
        command.args(&printer.args);
        let output = with_input(&mut command, printer, input)?
            .stderr(Stdio::null())
            .output()?;
        if !output.status.success() {
            bail!("{} failed on {}", printer.name, input.display());
        }
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        output.stdout.hash(&mut hasher);
        let digest = (output.stdout.len(), hasher.finish());
        match &first {
            None => first = Some((printer.name, digest)),
            Some((name, expected)) if *expected != digest => {
                bail!(
                    "{} and {name} print different text for {}",
                    printer.name,
                    input.display()
                )
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// Wall time (ns) and peak RSS (KiB, through GNU time) of one run, its
/// output thrown away.
fn time_printer(printer: &Printer, input: &Path) -> Result<(u128, u64)> {
    let mut timed = Command::new("/usr/bin/time");
    timed
        .args(["-f", "%M"])
        .arg(&printer.program)
        .args(&printer.args);
    with_input(&mut timed, printer, input)?;
    let start = Instant::now();
    let output = timed
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()?;
    let elapsed = start.elapsed().as_nanos();
    if !output.status.success() {
        bail!("{} failed", printer.name);
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let rss = stderr
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or(0);
    Ok((elapsed, rss))
}
