//! `cargo xtask bench-compare`: protoprof next to Go's pprof and prost, on
//! the same bytes, for each size; the pipelines take turns, round after
//! round, each right after the pipelines it is compared with.
//!
//! Builds `protoprof-bench` (protoprof's pipelines and prost), the
//! `protoprof` CLI and `bench/go` (Go's reference implementation, GOPATH
//! mode against Debian's sources; installed with apt-get when missing), makes
//! the synthetic inputs when missing, and prints a table of medians,
//! throughput (MB/s of uncompressed pprof), peak RSS and ratios. The table
//! is also written to `target/bench/bench-compare.md`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context, Result};

/// Go's `Write` compresses; the uncompressed write is the stricter comparison.
const CONVERT_VERSUS: &[&str] = &[
    "Go ParseData + Write (gzip)",
    "Go ParseData + WriteUncompressed",
];

/// How a pipeline is run.
enum Job {
    /// `program op input inner` prints "median_ns peak_rss_kb".
    Runner {
        program: PathBuf,
        op: &'static str,
        input: PathBuf,
    },
    /// A whole process timed: the `protoprof` CLI (`program` none) or
    /// another program (Go's pprof tool) with these arguments, reading
    /// `input` (peak RSS is shown as a multiple of its size).
    Process {
        program: Option<PathBuf>,
        args: Vec<std::ffi::OsString>,
        input: PathBuf,
    },
}

struct Planned {
    name: &'static str,
    versus: &'static [&'static str],
    job: Job,
}

/// One invocation of a runner: the median of its `inner` repetitions and
/// the process's peak RSS.
fn measure(program: &Path, op: &str, input: &Path, inner: usize) -> Result<(u128, u64)> {
    let out = run(Command::new(program)
        .arg(op)
        .arg(input)
        .arg(inner.to_string()))?;
    let mut fields = out.split_whitespace().map(str::parse::<u128>);
    match (fields.next(), fields.next()) {
        (Some(Ok(ns)), Some(Ok(kb))) => Ok((ns, kb as u64)),
        _ => bail!("{} {op}: unexpected output {out:?}", program.display()),
    }
}

/// One measured pipeline.
struct Row {
    size_mb: usize,
    /// Bytes of the uncompressed pprof input.
    input_bytes: u64,
    name: &'static str,
    /// Each round's time, in round order (`times[r]` of two rows were
    /// measured in the same round, one right after the other when compared).
    times: Vec<u128>,
    median_ns: u128,
    peak_rss_kb: u64,
    /// The rows this one is compared with, by name.
    versus: &'static [&'static str],
}

impl Row {
    /// How many times faster this row ran than `other`: the median over
    /// rounds of the two rows' ratio in the same round.
    fn paired_speed(&self, other: &Row) -> f64 {
        let mut ratios: Vec<f64> = (self.times.iter().zip(&other.times))
            .map(|(&mine, &theirs)| theirs as f64 / mine as f64)
            .collect();
        ratios.sort_by(f64::total_cmp);
        ratios.get(ratios.len() / 2).copied().unwrap_or(f64::NAN)
    }
}

/// Which runner measures a row.
#[derive(Clone, Copy)]
enum Program {
    Go,
    Protoprof,
}

/// Which form of a size's input a row reads.
#[derive(Clone, Copy)]
enum Input {
    Raw,
    Gzip,
    Otlp,
    /// OTLP v1development: a real export (the corpus's eBPF capture) with
    /// its resources repeated up to the size.
    Development,
}

/// The runner rows, in table order: name, rows compared with, runner, op, input.
const RUNNER_ROWS: &[(&str, &[&str], Program, &str, Input)] = &[
    ("Go ParseData", &[], Program::Go, "parse", Input::Raw),
    (
        "Go ParseData + CheckValid",
        &[],
        Program::Go,
        "parse-check",
        Input::Raw,
    ),
    (
        "Go ParseData + Write (gzip)",
        &[],
        Program::Go,
        "parse-write",
        Input::Raw,
    ),
    (
        "Go ParseData + WriteUncompressed",
        &[],
        Program::Go,
        "parse-write-raw",
        Input::Raw,
    ),
    (
        "prost decode",
        &[],
        Program::Protoprof,
        "prost-decode",
        Input::Raw,
    ),
    (
        "prost decode + encode",
        &[],
        Program::Protoprof,
        "prost-decode-encode",
        Input::Raw,
    ),
    (
        "rust-protobuf decode",
        &["prost decode"],
        Program::Protoprof,
        "rust-protobuf-decode",
        Input::Raw,
    ),
    (
        "protoprof decode",
        &["prost decode"],
        Program::Protoprof,
        "decode",
        Input::Raw,
    ),
    (
        "protoprof decode + validate",
        &["Go ParseData + CheckValid"],
        Program::Protoprof,
        "decode-validate",
        Input::Raw,
    ),
    // Not compared with prost: a view does not build the samples.
    (
        "protoprof view decode",
        &[],
        Program::Protoprof,
        "view-decode",
        Input::Raw,
    ),
    (
        "protoprof view decode + validate",
        &["Go ParseData + CheckValid"],
        Program::Protoprof,
        "view-validate",
        Input::Raw,
    ),
    (
        "protoprof pprof→OTLP + encode",
        CONVERT_VERSUS,
        Program::Protoprof,
        "convert-encode",
        Input::Raw,
    ),
    (
        "protoprof view pprof→OTLP + encode",
        CONVERT_VERSUS,
        Program::Protoprof,
        "view-convert-encode",
        Input::Raw,
    ),
    (
        "protoprof pprof→v1development + encode",
        CONVERT_VERSUS,
        Program::Protoprof,
        "to-dev-encode",
        Input::Raw,
    ),
    (
        "protoprof view pprof→v1development + encode",
        CONVERT_VERSUS,
        Program::Protoprof,
        "view-to-dev-encode",
        Input::Raw,
    ),
    (
        "protoprof OTLP→pprof + encode",
        &[],
        Program::Protoprof,
        "otlp-to-pprof-encode",
        Input::Otlp,
    ),
    (
        "protoprof decode (gzip input)",
        &["protoprof decode"],
        Program::Protoprof,
        "decode-gzip",
        Input::Gzip,
    ),
    (
        "protoprof decode + encode gzip",
        &["Go ParseData + Write (gzip)"],
        Program::Protoprof,
        "encode-gzip",
        Input::Raw,
    ),
    (
        "opentelemetry-proto (prost) v1development decode",
        &[],
        Program::Protoprof,
        "dev-prost-decode",
        Input::Development,
    ),
    (
        "protoprof v1development decode",
        &["opentelemetry-proto (prost) v1development decode"],
        Program::Protoprof,
        "dev-decode",
        Input::Development,
    ),
    (
        "protoprof v1development decode + validate",
        &["opentelemetry-proto (prost) v1development decode"],
        Program::Protoprof,
        "dev-validate",
        Input::Development,
    ),
    (
        "protoprof v1development→pprof + encode",
        &[],
        Program::Protoprof,
        "dev-to-pprof-encode",
        Input::Development,
    ),
];

/// The programs a run measures.
struct Tools {
    go: PathBuf,
    /// Go's pprof tool (`$(go env GOTOOLDIR)/pprof`), when there is one.
    go_pprof: Option<PathBuf>,
    runner: PathBuf,
    cli: PathBuf,
    bench_dir: PathBuf,
}

/// One size's input in each form.
struct Inputs {
    raw: PathBuf,
    gz: PathBuf,
    otlp: PathBuf,
    development: PathBuf,
    /// The pprof's v1development conversion (the CLI's default OTLP).
    converted: PathBuf,
    /// That as OTLP/JSON, for sizes up to 10 MB (JSON is ten times larger).
    json: Option<PathBuf>,
}

/// What `bench-compare` was asked for.
struct CompareOptions {
    sizes: Vec<usize>,
    /// Only the pipelines whose name contains this.
    rows: Option<String>,
    /// The synthetic profiles' file prefix: `synth` (stacks sharing call
    /// paths) or `distinct` (every stack its own; `--shape distinct`).
    shape: &'static str,
}

pub fn bench_compare(root: &Path, args: &[&str]) -> Result<()> {
    let options = parse_options(args)?;
    let sizes = options.sizes.clone();
    let tools = prepare(root, &sizes, options.shape)?;
    let mut rows = Vec::new();
    for &mb in &sizes {
        let inputs = size_inputs(root, &tools, mb, options.shape)?;
        // Rounds run every pipeline once each, in turn, so a burst of load
        // from elsewhere on the (shared) machine lands on one sample of
        // several pipelines, not on all samples of one. Within a round a
        // runner times `inner` repetitions and reports their median; the
        // table shows the median over rounds. Go's timings vary by up to
        // 25% between runs (GC): medians of at least 5.
        let (rounds, inner) = match mb {
            0..=2 => (7, 3),
            3..=20 => (5, 2),
            _ => (5, 1),
        };
        // (Each runner also makes one untimed run first: timings are of a
        // warm process. The CLI rows are whole processes, cold.)
        let size_of = |path: &Path| -> Result<u64> {
            Ok(fs::metadata(path)
                .with_context(|| path.display().to_string())?
                .len())
        };
        let mut plan = plan(&tools, &inputs);
        // Rows whose name contains one of the comma-separated --rows texts,
        // and the rows those compare against.
        let chosen = |name: &str| {
            options
                .rows
                .as_ref()
                .is_none_or(|only| only.split(',').any(|o| name.contains(o)))
        };
        let versus: Vec<&str> = plan
            .iter()
            .filter(|p| chosen(p.name))
            .flat_map(|p| p.versus.iter().copied())
            .collect();
        plan.retain(|p| chosen(p.name) || versus.contains(&p.name));
        let samples = measure_rounds(&plan, &tools, rounds, inner)?;
        for (planned, (times, peak_rss_kb)) in plan.into_iter().zip(samples) {
            let mut sorted = times.clone();
            sorted.sort_unstable();
            let input_bytes = match &planned.job {
                Job::Runner { input, .. } => size_of(input)?,
                Job::Process { input, .. } => size_of(input)?,
            };
            rows.push(Row {
                size_mb: mb,
                input_bytes,
                name: planned.name,
                median_ns: sorted[sorted.len() / 2],
                times,
                peak_rss_kb,
                versus: planned.versus,
            });
        }
    }
    let table = render(&rows, &sizes, options.shape);
    print!("{table}");
    std::fs::write(tools.bench_dir.join("bench-compare.md"), &table)?;
    Ok(())
}

fn parse_options(args: &[&str]) -> Result<CompareOptions> {
    let mut options = CompareOptions {
        sizes: vec![1usize, 10, 100],
        rows: None,
        shape: "synth",
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match *arg {
            "--sizes" => options.sizes = parse_sizes(args.next().context("--sizes MB,MB")?)?,
            "--rows" => options.rows = Some(args.next().context("--rows TEXT")?.to_string()),
            "--shape" => {
                options.shape = match args.next().copied() {
                    Some("shared") => "synth",
                    Some("distinct") => "distinct",
                    _ => bail!("--shape shared|distinct"),
                }
            }
            other => bail!("bench-compare: unknown argument {other}"),
        }
    }
    Ok(options)
}

/// Builds the runners and the CLI and makes the synthetic inputs that are missing.
fn prepare(root: &Path, sizes: &[usize], shape: &str) -> Result<Tools> {
    run(crate::cargo::cargo(root).args([
        "build",
        "--quiet",
        "--release",
        "-p",
        "protoprof-bench",
        "-p",
        "protoprof-cli",
    ]))?;
    let bench_dir = root.join("target/bench");
    std::fs::create_dir_all(&bench_dir)?;
    let go = build_go(root, &bench_dir)?;
    let synth = root.join("target/synth");
    let missing: Vec<String> = sizes
        .iter()
        .filter(|mb| !synth.join(format!("{shape}-{mb}MB.pb.gz")).exists())
        .map(|mb| mb.to_string())
        .collect();
    if !missing.is_empty() {
        let shape = if shape == "synth" { "shared" } else { shape };
        let sizes = missing.join(",");
        super::synth::gen_profiles(root, &["--sizes", &sizes, "--shape", shape])?;
    }
    let release = release_dir(root);
    let go_pprof = Command::new("go")
        .args(["env", "GOTOOLDIR"])
        .output()
        .ok()
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()).join("pprof"))
        .filter(|p| p.exists());
    Ok(Tools {
        go,
        go_pprof,
        runner: release.join("protoprof-bench"),
        cli: release.join("protoprof"),
        bench_dir,
    })
}

/// The inputs of one size; the OTLP one is converted by the CLI when missing.
fn size_inputs(root: &Path, tools: &Tools, mb: usize, shape: &str) -> Result<Inputs> {
    let synth = root.join("target/synth");
    let inputs = Inputs {
        raw: synth.join(format!("{shape}-{mb}MB.pb")),
        gz: synth.join(format!("{shape}-{mb}MB.pb.gz")),
        // v1experimental: the OTLP rows read it as such.
        otlp: synth.join(format!("{shape}-{mb}MB.v1experimental.pb")),
        development: synth.join(format!("ebpf-{mb}MB.v1development.pb")),
        converted: synth.join(format!("{shape}-{mb}MB.v1development.pb")),
        json: (mb <= 10).then(|| synth.join(format!("{shape}-{mb}MB.v1development.json"))),
    };
    let outputs = [
        (Some(&inputs.converted), "binary"),
        (inputs.json.as_ref(), "json"),
    ];
    for (output, format) in outputs {
        let Some(output) = output.filter(|o| !o.exists()) else {
            continue;
        };
        run(Command::new(&tools.cli)
            .args([
                "convert",
                "--to",
                "otlp",
                "--deterministic-id",
                "--format",
                format,
            ])
            .arg(&inputs.raw)
            .arg("-o")
            .arg(output))?;
    }
    if !inputs.development.exists() {
        let capture =
            corpus_dir(root).join("otlp/v1development/v1development-1.10-ebpf-export-request.pb");
        let bytes = fs::read(&capture).with_context(|| {
            format!(
                "{} (the v1development rows need the corpus)",
                capture.display()
            )
        })?;
        fs::write(&inputs.development, repeat_resources(&bytes, mb << 20)?)?;
    }
    if !inputs.otlp.exists() {
        run(Command::new(&tools.cli)
            .args(["convert", "--to", "otlp", "--deterministic-id"])
            .args(["--otlp-version", "v1experimental"])
            .arg(&inputs.gz)
            .arg("-o")
            .arg(&inputs.otlp))?;
    }
    Ok(inputs)
}

/// `--sizes`' value: megabytes, comma-separated (`10,100`).
pub(crate) fn parse_sizes(value: &str) -> Result<Vec<usize>> {
    value
        .split(',')
        .map(|s| {
            s.parse()
                .with_context(|| format!("--sizes: `{s}` is not a number of megabytes"))
        })
        .collect()
}

/// The corpus: `$PROTOPROF_CORPUS` (relative to the workspace root) or
/// `../shared/corpus`.
pub(crate) fn corpus_dir(root: &Path) -> PathBuf {
    root.join(std::env::var("PROTOPROF_CORPUS").unwrap_or_else(|_| "../shared/corpus".into()))
}

/// A v1development export of about `size` bytes: `capture`'s top-level
/// `resource_profiles` (field 1) repeated, its dictionary (field 2) once.
/// Copied on the wire, so every profile still points into the one
/// dictionary and the message stays valid.
pub(crate) fn repeat_resources(capture: &[u8], size: usize) -> Result<Vec<u8>> {
    let (mut resources, mut rest) = (Vec::new(), Vec::new());
    let mut pos = 0;
    while pos < capture.len() {
        let start = pos;
        let tag = read_varint(capture, &mut pos)?;
        anyhow::ensure!(
            tag & 7 == 2,
            "top-level field {} is not length-delimited",
            tag >> 3
        );
        let len = read_varint(capture, &mut pos)? as usize;
        pos += len;
        anyhow::ensure!(pos <= capture.len(), "the capture is cut short");
        let target = if tag >> 3 == 1 {
            &mut resources
        } else {
            &mut rest
        };
        target.extend_from_slice(&capture[start..pos]);
    }
    let mut out = Vec::with_capacity(size + capture.len());
    while out.len() < size.saturating_sub(rest.len()) {
        out.extend_from_slice(&resources);
    }
    out.extend_from_slice(&rest);
    Ok(out)
}

fn read_varint(bytes: &[u8], pos: &mut usize) -> Result<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*pos).context("a varint cut short")?;
        *pos += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    anyhow::bail!("a varint longer than 10 bytes")
}

/// Every pipeline of one size: the runner rows, then whole CLI processes.
fn plan(tools: &Tools, inputs: &Inputs) -> Vec<Planned> {
    let mut plan: Vec<Planned> = RUNNER_ROWS
        .iter()
        .map(|&(name, versus, program, op, input)| Planned {
            name,
            versus,
            job: Job::Runner {
                program: match program {
                    Program::Go => tools.go.clone(),
                    Program::Protoprof => tools.runner.clone(),
                },
                op,
                input: match input {
                    Input::Raw => inputs.raw.clone(),
                    Input::Gzip => inputs.gz.clone(),
                    Input::Otlp => inputs.otlp.clone(),
                    Input::Development => inputs.development.clone(),
                },
            },
        })
        .collect();
    let out = tools.bench_dir.join("out.pb");
    let gz = inputs.gz.clone().into_os_string();
    let convert = |version: &str| -> Vec<std::ffi::OsString> {
        let args = ["convert", "--to", "otlp", "--otlp-version", version];
        let mut args: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
        args.extend([gz.clone(), "-o".into(), out.clone().into()]);
        args
    };
    let otlp = inputs.otlp.clone().into_os_string();
    let on = |args: &[&str], input: &std::ffi::OsString| -> Vec<std::ffi::OsString> {
        let mut v: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
        v.push(input.clone());
        v
    };
    let mut to_pprof = on(
        &["convert", "--to", "pprof", "-o"],
        &out.clone().into_os_string(),
    );
    to_pprof.push(otlp.clone());
    // The same commands on the pprof (gzip) and on its v1experimental
    // conversion: issue 14 asks OTLP input to be within 1.5x of pprof's.
    let cli_runs: [(&'static str, Vec<std::ffi::OsString>, &PathBuf); 7] = [
        (
            "CLI validate (gzip file)",
            on(&["validate"], &gz),
            &inputs.gz,
        ),
        (
            "CLI convert --to otlp (v1experimental)",
            convert("v1experimental"),
            &inputs.gz,
        ),
        (
            "CLI convert --to otlp (v1development)",
            convert("v1development"),
            &inputs.gz,
        ),
        ("CLI top", on(&["top", "-n", "10"], &gz), &inputs.gz),
        (
            "CLI on OTLP: validate",
            on(&["validate"], &otlp),
            &inputs.otlp,
        ),
        (
            "CLI on OTLP: top",
            on(&["top", "-n", "10"], &otlp),
            &inputs.otlp,
        ),
        ("CLI on OTLP: convert --to pprof", to_pprof, &inputs.otlp),
    ];
    for (name, args, input) in cli_runs {
        plan.push(Planned {
            name,
            versus: &[],
            job: Job::Process {
                program: None,
                args,
                input: input.clone(),
            },
        });
    }
    analysis_rows(&mut plan, tools, &inputs.gz);
    otlp_input_rows(&mut plan, tools, inputs);
    plan
}

/// What a row of [`otlp_input_rows`] is compared with: the pprof command
/// for its v1development twin, Go for validate and convert on pprof,
/// CPython's `json.loads` for the JSON rows (issue 14's targets).
fn otlp_input_versus(name: &str) -> &'static [&'static str] {
    match name {
        "CLI on pprof: validate" => &["Go ParseData + CheckValid"],
        "CLI on pprof: convert --to otlp" => &["Go ParseData + WriteUncompressed"],
        "CLI encode --from json" | "CLI decode --to json" => {
            &["CPython json.loads (v1development JSON)"]
        }
        "CLI on v1development: validate" => &["CLI on pprof: validate"],
        "CLI on v1development: top" => &["CLI on pprof: top"],
        "CLI on v1development: folded" => &["CLI on pprof: folded"],
        "CLI on v1development: inspect" => &["CLI on pprof: inspect"],
        "CLI on v1development: convert --to pprof" => &["CLI on pprof: convert --to otlp"],
        "CLI on v1development: flamegraph" => &["CLI on pprof: flamegraph"],
        "CLI on v1experimental: validate" => &["CLI on pprof: validate"],
        "CLI on v1experimental: top" => &["CLI on pprof: top"],
        "CLI on v1experimental: folded" => &["CLI on pprof: folded"],
        "CLI on v1experimental: inspect" => &["CLI on pprof: inspect"],
        "CLI on v1experimental: convert --to pprof" => &["CLI on pprof: convert --to otlp"],
        "CLI on v1experimental: flamegraph" => &["CLI on pprof: flamegraph"],
        _ => &[],
    }
}

/// The commands issue 14 asks to run on OTLP within 1.5x of pprof, on the
/// raw pprof and on its v1development and v1experimental conversions; OTLP/JSON read and
/// written, next to CPython's `json.loads` on the same bytes.
fn otlp_input_rows(plan: &mut Vec<Planned>, tools: &Tools, inputs: &Inputs) {
    let (process, args) = (otlp_input_row, with_file);
    let out = tools.bench_dir.join("out.pb");
    let out = out.to_str().unwrap_or("out.pb");
    let svg = tools.bench_dir.join("out.svg");
    let svg = svg.to_str().unwrap_or("out.svg");
    // (pprof row, v1development row, v1experimental row, arguments on the
    // OTLP files); pprof has no `convert --to pprof`: its mirror,
    // `--to otlp`, stands beside it.
    let rows: [(&'static str, [&'static str; 2], &[&str]); 6] = [
        (
            "CLI on pprof: validate",
            [
                "CLI on v1development: validate",
                "CLI on v1experimental: validate",
            ],
            &["validate"],
        ),
        (
            "CLI on pprof: top",
            ["CLI on v1development: top", "CLI on v1experimental: top"],
            &["top", "-n", "10"],
        ),
        (
            "CLI on pprof: folded",
            [
                "CLI on v1development: folded",
                "CLI on v1experimental: folded",
            ],
            &["folded"],
        ),
        (
            "CLI on pprof: inspect",
            [
                "CLI on v1development: inspect",
                "CLI on v1experimental: inspect",
            ],
            &["inspect"],
        ),
        (
            "CLI on pprof: flamegraph",
            [
                "CLI on v1development: flamegraph",
                "CLI on v1experimental: flamegraph",
            ],
            &["flamegraph", "-o", svg],
        ),
        (
            "CLI on pprof: convert --to otlp",
            [
                "CLI on v1development: convert --to pprof",
                "CLI on v1experimental: convert --to pprof",
            ],
            &["convert", "--to", "pprof", "-o", out],
        ),
    ];
    for (pprof_name, [dev_name, exp_name], dev_args) in rows {
        let pprof_args = match dev_args[0] {
            "convert" => vec!["convert", "--to", "otlp", "-o", out],
            _ => dev_args.to_vec(),
        };
        plan.push(process(
            pprof_name,
            None,
            args(&pprof_args, &inputs.raw),
            &inputs.raw,
        ));
        plan.push(process(
            dev_name,
            None,
            args(dev_args, &inputs.converted),
            &inputs.converted,
        ));
        plan.push(process(
            exp_name,
            None,
            args(dev_args, &inputs.otlp),
            &inputs.otlp,
        ));
    }
    json_rows(plan, tools, inputs);
}

/// OTLP/JSON read and written, next to CPython's `json.loads` on the same
/// bytes.
fn json_rows(plan: &mut Vec<Planned>, tools: &Tools, inputs: &Inputs) {
    let (process, args) = (otlp_input_row, with_file);
    let out = tools.bench_dir.join("out.pb");
    let out = out.to_str().unwrap_or("out.pb");
    let Some(json) = &inputs.json else { return };
    let loads = "import json, sys; json.loads(open(sys.argv[1], 'rb').read())";
    plan.push(process(
        "CPython json.loads (v1development JSON)",
        Some("python3".into()),
        args(&["-c", loads], json),
        json,
    ));
    let encode = [
        "encode",
        "--type",
        "opentelemetry.proto.profiles.v1development.ProfilesData",
        "-o",
        out,
    ];
    plan.push(process(
        "CLI encode --from json",
        None,
        args(&encode, json),
        json,
    ));
    let json_out = tools.bench_dir.join("out.json");
    let decode = [
        "decode",
        "--to",
        "json",
        "-o",
        json_out.to_str().unwrap_or("out.json"),
    ];
    plan.push(process(
        "CLI decode --to json",
        None,
        args(&decode, &inputs.converted),
        json,
    ));
}

/// A row of [`otlp_input_rows`]: `program` (ours when `None`) run with
/// `args` on `input`.
fn otlp_input_row(
    name: &'static str,
    program: Option<PathBuf>,
    args: Vec<std::ffi::OsString>,
    input: &Path,
) -> Planned {
    Planned {
        name,
        versus: otlp_input_versus(name),
        job: Job::Process {
            program,
            args,
            input: input.to_path_buf(),
        },
    }
}

/// Arguments `a`, then `file`.
fn with_file(a: &[&str], file: &Path) -> Vec<std::ffi::OsString> {
    let mut v: Vec<std::ffi::OsString> = a.iter().map(Into::into).collect();
    v.push(file.into());
    v
}

/// A protoprof row's name, the Go row it is compared with, our arguments
/// and Go's.
type AnalysisRow = (
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
    &'static [&'static str],
);

/// `top` with a filter and at line granularity, next to Go's pprof tool
/// with the same options, both whole processes (issue 12's targets).
fn analysis_rows(plan: &mut Vec<Planned>, tools: &Tools, gz: &Path) {
    let rows: [AnalysisRow; 3] = [
        (
            "CLI top --focus",
            &["go tool pprof -top -focus"],
            &["top", "-n", "10", "--focus", "Handler1"],
            &["-top", "-nodecount=10", "-focus=Handler1"],
        ),
        (
            "CLI top --tagfocus",
            &["go tool pprof -top -tagfocus"],
            &["top", "-n", "10", "--tagfocus", "worker-1"],
            &["-top", "-nodecount=10", "-tagfocus=worker-1"],
        ),
        (
            "CLI top --granularity lines",
            &["go tool pprof -top -lines"],
            &["top", "-n", "10", "--granularity", "lines"],
            &["-top", "-nodecount=10", "-lines"],
        ),
    ];
    let go_names = [
        "go tool pprof -top -focus",
        "go tool pprof -top -tagfocus",
        "go tool pprof -top -lines",
    ];
    for ((name, versus, ours, theirs), go_name) in rows.into_iter().zip(go_names) {
        let args = |a: &[&str]| -> Vec<std::ffi::OsString> {
            let mut v: Vec<std::ffi::OsString> = a.iter().map(Into::into).collect();
            v.push(gz.into());
            v
        };
        if let Some(go_pprof) = &tools.go_pprof {
            plan.push(Planned {
                name: go_name,
                versus: &[],
                job: Job::Process {
                    program: Some(go_pprof.clone()),
                    args: args(theirs),
                    input: gz.to_path_buf(),
                },
            });
        }
        plan.push(Planned {
            name,
            versus,
            job: Job::Process {
                program: None,
                args: args(ours),
                input: gz.to_path_buf(),
            },
        });
    }
}

/// Each pipeline's times (in round order) and peak RSS over `rounds`
/// rounds.
///
/// Within a round, a pipeline runs right after those it is compared with
/// ([`paired_order`]), and every other round runs in the reverse order: on
/// a shared machine whose speed drifts by tens of percent over a minute,
/// the two sides of a comparison then meet the same machine, and
/// [`Row::paired_speed`] compares them round by round.
fn measure_rounds(
    plan: &[Planned],
    tools: &Tools,
    rounds: usize,
    inner: usize,
) -> Result<Vec<(Vec<u128>, u64)>> {
    let mut samples: Vec<(Vec<u128>, u64)> = vec![(Vec::new(), 0); plan.len()];
    let order = paired_order(plan);
    for round in 0..rounds {
        let turn: Box<dyn Iterator<Item = &usize>> = match round % 2 {
            0 => Box::new(order.iter()),
            _ => Box::new(order.iter().rev()),
        };
        for &i in turn {
            let (planned, (times, rss)) = (&plan[i], &mut samples[i]);
            let (ns, kb) = match &planned.job {
                Job::Runner { program, op, input } => measure(program, op, input, inner)?,
                Job::Process { program, args, .. } => {
                    // Each run writes a new output file, as a user's would.
                    for written in ["out.pb", "out.json", "out.svg"] {
                        let _ = std::fs::remove_file(tools.bench_dir.join(written));
                    }
                    time_process(program.as_ref().unwrap_or(&tools.cli), args)?
                }
            };
            times.push(ns);
            *rss = (*rss).max(kb);
        }
    }
    Ok(samples)
}

/// The plan's positions in the order a round runs them: each pipeline
/// right after the pipelines it is compared with (and those after theirs).
/// A pipeline others are compared with waits for the first of them, so
/// that it runs next to it; the others that compare with it follow later.
fn paired_order(plan: &[Planned]) -> Vec<usize> {
    let position = |name: &str| plan.iter().position(|p| p.name == name);
    let compared: Vec<bool> = (plan.iter())
        .map(|p| plan.iter().any(|q| q.versus.contains(&p.name)))
        .collect();
    let mut order = Vec::with_capacity(plan.len());
    let mut placed = vec![false; plan.len()];
    fn place(
        i: usize,
        plan: &[Planned],
        position: &dyn Fn(&str) -> Option<usize>,
        placed: &mut [bool],
        order: &mut Vec<usize>,
    ) {
        if std::mem::replace(&mut placed[i], true) {
            return;
        }
        for j in plan[i].versus.iter().filter_map(|v| position(v)) {
            place(j, plan, position, placed, order);
        }
        order.push(i);
    }
    for i in (0..plan.len()).filter(|&i| !compared[i]) {
        place(i, plan, &position, &mut placed, &mut order);
    }
    // Pipelines compared with each other only (a cycle), if any.
    for i in 0..plan.len() {
        place(i, plan, &position, &mut placed, &mut order);
    }
    order
}

/// Where `cargo build --release` puts binaries: under `CARGO_TARGET_DIR`
/// when it is set (as `.ci/run` sets it), else the workspace's `target/`.
/// The `protoprof` binary, built in release first.
pub(crate) fn release_protoprof(root: &Path) -> Result<PathBuf> {
    run(crate::cargo::cargo(root).args(["build", "--quiet", "--release", "-p", "protoprof-cli"]))?;
    Ok(release_dir(root).join("protoprof"))
}

pub(crate) fn release_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
        .join("release")
}

pub(crate) fn run(command: &mut Command) -> Result<String> {
    let output = command
        .output()
        .with_context(|| format!("running {command:?}"))?;
    if !output.status.success() {
        bail!(
            "{command:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Builds bench/go: a module pinning github.com/google/pprof (its go.mod),
/// downloaded through the Go module proxy once per machine.
fn build_go(root: &Path, bench_dir: &Path) -> Result<PathBuf> {
    let binary = bench_dir.join("pprofbench");
    go_build(root, &root.join("bench/go"), &binary)?;
    Ok(binary)
}

/// `go build -o binary .` in the Go module `dir` (its go.mod pins what it
/// uses), with the project's build cache.
pub(crate) fn go_build(root: &Path, dir: &Path, binary: &Path) -> Result<()> {
    let have_go = Command::new("go")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have_go {
        bail!("{} needs go (1.26 or newer) on PATH", dir.display());
    }
    let mut go = Command::new("go");
    go.current_dir(dir)
        .args(["build", "-o"])
        .arg(binary)
        .arg(".")
        .env("GOFLAGS", "-mod=readonly");
    if std::env::var_os("GOCACHE").is_none() {
        go.env("GOCACHE", root.join("target/go-cache"));
    }
    run(&mut go).map(drop)
}

/// Wall time of one run of a whole process, and its peak RSS (through
/// `/usr/bin/time` when present; 0 otherwise).
pub(crate) fn time_process(program: &Path, args: &[std::ffi::OsString]) -> Result<(u128, u64)> {
    let gnu_time = Path::new("/usr/bin/time");
    let mut command = if gnu_time.exists() {
        let mut c = Command::new(gnu_time);
        c.args(["-f", "%M"]).arg(program);
        c
    } else {
        Command::new(program)
    };
    let start = Instant::now();
    let output = command.args(args).output()?;
    let elapsed = start.elapsed().as_nanos();
    if !output.status.success() {
        bail!(
            "{} failed: {}",
            program.display(),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let rss = stderr
        .lines()
        .last()
        .and_then(|l| l.trim().parse::<u64>().ok())
        .unwrap_or(0);
    Ok((elapsed, rss))
}

fn render(rows: &[Row], sizes: &[usize], shape: &str) -> String {
    let mut out = String::new();
    for &mb in sizes {
        let of_size: Vec<&Row> = rows.iter().filter(|r| r.size_mb == mb).collect();
        let Some(first) = of_size.first() else {
            continue;
        };
        out.push_str(&format!(
            "\n### {shape}-{mb}MB ({} bytes of pprof; v1development rows: the eBPF capture repeated to {mb} MB)\n\n\
             | pipeline | median | MB/s | peak RSS (× input, × prost decode) | speed vs (each round's ratio, median; ratio of medians) |\n\
             |---|---|---|---|---|\n",
            first.input_bytes
        ));
        for r in &of_size {
            // Each row against its own input and its own format's prost decode.
            let prost = if r.name.contains("v1development") {
                "opentelemetry-proto (prost) v1development decode"
            } else {
                "prost decode"
            };
            let prost_rss = of_size
                .iter()
                .find(|o| o.name == prost)
                .map(|o| o.peak_rss_kb as f64);
            let input = r.input_bytes as f64;
            let ms = r.median_ns as f64 / 1e6;
            let mbps = input / 1e6 / (r.median_ns as f64 / 1e9);
            let rss = r.peak_rss_kb as f64;
            let rss_vs = match prost_rss {
                Some(prost) => format!("{:.1}×, {:.2}×", rss * 1024.0 / input, rss / prost),
                None => format!("{:.1}×", rss * 1024.0 / input),
            };
            let ratio = r
                .versus
                .iter()
                .filter_map(|v| of_size.iter().find(|o| o.name == *v))
                .map(|o| {
                    let medians = o.median_ns as f64 / r.median_ns as f64;
                    format!(
                        "{:.2}× {} (medians {medians:.2}×)",
                        r.paired_speed(o),
                        o.name
                    )
                })
                .collect::<Vec<_>>()
                .join("; ");
            out.push_str(&format!(
                "| {} | {ms:.1} ms | {mbps:.0} | {} MB ({rss_vs}) | {ratio} |\n",
                r.name,
                r.peak_rss_kb / 1024
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn planned(name: &'static str, versus: &'static [&'static str]) -> Planned {
        Planned {
            name,
            versus,
            job: Job::Process {
                program: None,
                args: Vec::new(),
                input: PathBuf::new(),
            },
        }
    }

    #[test]
    fn each_pipeline_runs_right_after_those_it_is_compared_with() {
        let plan = [
            planned("go", &[]),
            planned("pprof top", &[]),
            planned("pprof validate", &["go"]),
            planned("otlp top", &["pprof top"]),
            planned("json", &["python"]),
            planned("otlp validate", &["pprof validate", "missing"]),
            planned("python", &[]),
        ];
        // pprof top, then otlp top; python, then json; go, then pprof
        // validate, then otlp validate; each position once.
        assert_eq!(paired_order(&plan), [1, 3, 6, 4, 0, 2, 5]);
    }

    #[test]
    fn paired_speed_is_the_median_of_same_round_ratios() {
        let row = |times: &[u128]| Row {
            size_mb: 1,
            input_bytes: 1,
            name: "row",
            times: times.to_vec(),
            median_ns: 0,
            peak_rss_kb: 0,
            versus: &[],
        };
        // The machine was slow in rounds 1 and 2 for both rows, and in
        // round 3 for one: each round but that one has `slow` at half the
        // speed of `fast`; their medians are six times apart.
        let fast = row(&[100, 300, 300, 100, 100]);
        let slow = row(&[200, 600, 600, 600, 200]);
        assert_eq!(slow.paired_speed(&fast), 0.5);
        assert_eq!(fast.paired_speed(&slow), 2.0);
    }
}
