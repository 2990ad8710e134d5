//! `cargo xtask codegen`: `proto/` -> the model crates.
//!
//! Flow: assign every .proto under `proto/` to one model crate by its path,
//! parse each crate's files (plus the support files they import) with
//! rust-protobuf's pure parser, run protobuf-codegen into `src/pb/`, and emit
//! with `quote`: `src/lib.rs` (the package tree), `src/pb/mod.rs`,
//! `src/meta.rs` (the schema tables), and where they apply `src/refs.rs`
//! (reference walkers), `src/samples.rs` (`SampleSource`), `src/fields.rs`
//! (field-number constants) and `src/strings.rs` (string-table lookups).
//! Everything under a model crate's `src/` is generated; `--check` regenerates
//! into a temporary directory and compares.

mod emit;
mod fields;
mod rust_names;
mod samples;
mod schema;
mod walkers;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// A model crate and the proto files it owns.
pub struct ModelCrate {
    /// Directory below the workspace root.
    pub dir: &'static str,
    /// Cargo package name.
    pub package: &'static str,
    /// Proto files whose path (relative to `proto/`) starts with one of these.
    pub owns: &'static [&'static str],
    /// First paragraph of the crate's documentation.
    pub doc: &'static str,
    /// A doc example for the crate's front page (compiled and run by `cargo test`).
    pub example: Option<&'static str>,
}

pub const MODEL_CRATES: &[ModelCrate] = &[
    ModelCrate {
        dir: "crates/model-pprof",
        package: "protoprof-model-pprof",
        owns: &["perftools/"],
        doc: "Typed Rust models of pprof's profile format (`perftools.profiles`).",
        example: Some(PPROF_EXAMPLE),
    },
    ModelCrate {
        dir: "crates/model-otlp",
        package: "protoprof-model-otlp",
        owns: &["opentelemetry/"],
        doc: "Typed Rust models of OpenTelemetry Profiles: `common/v1`, `resource/v1`, \
              `profiles/v1experimental`, `profiles/v1development` (the Alpha, v1.10/v1.11) and the \
              collector's export service messages of both.",
        example: None,
    },
    ModelCrate {
        dir: "crates/model-relay",
        package: "protoprof-model-relay",
        owns: &["quilkin/", "envoy/", "google/rpc/"],
        doc:
            "Typed Rust models of the Quilkin relay (Manager Discovery Service) and the Envoy xDS \
              messages it streams, with `google.rpc.Status`.",
        example: None,
    },
];

/// The pprof model's front-page example (also the README's).
const PPROF_EXAMPLE: &str = r#"use protobuf::Message;
use protoprof_model_meta::StringTable;
use protoprof_model_pprof::fields::perftools::profiles::sample;
use protoprof_model_pprof::perftools::profiles::{Profile, ValueType};

let bytes = Profile {
    sample_type: vec![ValueType { type_: 1, unit: 2, ..Default::default() }],
    string_table: ["", "cpu", "nanoseconds"].map(String::from).to_vec(),
    ..Default::default()
}
.write_to_bytes()?;
let profile = Profile::parse_from_bytes(&bytes)?;
assert_eq!(profile.string(profile.sample_type[0].unit), "nanoseconds");
// Which fields point where, from the schema itself:
for reference in protoprof_model_pprof::SCHEMA.references_of("perftools.profiles.Sample") {
    println!("{} -> {}", reference.field, reference.table.field);
}
// Field numbers, for code that reads the wire by hand:
assert_eq!(sample::LOCATION_ID, 1);
# Ok::<(), protobuf::Error>(())"#;

/// Proto files that annotate the schemas; compiled into every crate that imports them.
const SUPPORT_PREFIX: &str = "protoprof/";

/// Regenerates the model crates in place.
pub fn write(root: &Path) -> Result<()> {
    let generated = generate(root)?;
    for (krate, files) in MODEL_CRATES.iter().zip(&generated) {
        let src = root.join(krate.dir).join("src");
        for stale in list_files(&src)?
            .into_iter()
            .filter(|p| !files.contains_key(p))
        {
            fs::remove_file(src.join(&stale))
                .with_context(|| format!("removing {}", stale.display()))?;
            println!("removed {}/src/{}", krate.dir, stale.display());
        }
        for (relative, contents) in files {
            let path = src.join(relative);
            if fs::read(&path).ok().as_deref() == Some(contents.as_bytes()) {
                continue;
            }
            fs::create_dir_all(path.parent().expect("files sit in src/"))?;
            fs::write(&path, contents).with_context(|| format!("writing {}", path.display()))?;
            println!("wrote {}/src/{}", krate.dir, relative.display());
        }
    }
    Ok(())
}

/// Fails, naming each file, when the checked-in model crates differ from a fresh generation.
pub fn check(root: &Path) -> Result<()> {
    let generated = generate(root)?;
    let mut problems = Vec::new();
    for (krate, files) in MODEL_CRATES.iter().zip(&generated) {
        let src = root.join(krate.dir).join("src");
        let on_disk = list_files(&src)?;
        for relative in on_disk.iter().filter(|p| !files.contains_key(*p)) {
            problems.push(format!(
                "{}/src/{}: not generated any more (stale)",
                krate.dir,
                relative.display()
            ));
        }
        for (relative, contents) in files {
            let shown = format!("{}/src/{}", krate.dir, relative.display());
            match fs::read(src.join(relative)) {
                Err(_) => problems.push(format!("{shown}: missing")),
                Ok(bytes) if bytes != contents.as_bytes() => problems.push(format!(
                    "{shown}: differs (generated from {})",
                    emit::source_of(contents)
                )),
                Ok(_) => {}
            }
        }
    }
    if problems.is_empty() {
        println!("model crates are up to date with proto/");
        return Ok(());
    }
    for problem in &problems {
        eprintln!("{problem}");
    }
    bail!(
        "{} generated file(s) are stale; run `cargo xtask codegen` and commit the result",
        problems.len()
    )
}

/// Generated files of one crate: path relative to `src/` -> contents.
type CrateFiles = BTreeMap<PathBuf, String>;

/// Generates every model crate in memory, in `MODEL_CRATES` order.
fn generate(root: &Path) -> Result<Vec<CrateFiles>> {
    let proto_dir = root.join("proto");
    let all_protos = list_files(&proto_dir)?
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "proto"))
        .map(|p| slash_path(&p))
        .collect::<Vec<_>>();
    let owned = assign_to_crates(&all_protos)?;
    let scratch = tempfile::tempdir().context("creating a scratch directory")?;
    MODEL_CRATES
        .iter()
        .zip(owned)
        .map(|(krate, inputs)| {
            let parsed = schema::parse(&proto_dir, &inputs, SUPPORT_PREFIX)
                .with_context(|| format!("reading the protos of {}", krate.package))?;
            let out_dir = scratch.path().join(krate.package);
            fs::create_dir_all(&out_dir)?;
            let runs = parsed
                .files
                .iter()
                .map(|f| f.codegen_run)
                .max()
                .unwrap_or(0);
            for run in 0..=runs {
                let files: Vec<String> = parsed
                    .files
                    .iter()
                    .filter(|f| f.codegen_run == run)
                    .map(|f| f.path.clone())
                    .collect();
                let run_dir = out_dir.join(format!("run{run}"));
                fs::create_dir_all(&run_dir)?;
                run_protobuf_codegen(&proto_dir, &files, &run_dir)?;
            }
            emit::crate_files(krate, &parsed, &out_dir)
                .with_context(|| format!("emitting {}", krate.package))
        })
        .collect()
}

/// Every non-support proto file belongs to exactly one crate.
fn assign_to_crates(protos: &[String]) -> Result<Vec<Vec<String>>> {
    let mut owned = vec![Vec::new(); MODEL_CRATES.len()];
    for proto in protos.iter().filter(|p| !p.starts_with(SUPPORT_PREFIX)) {
        let owners: Vec<usize> = MODEL_CRATES
            .iter()
            .enumerate()
            .filter(|(_, k)| k.owns.iter().any(|prefix| proto.starts_with(prefix)))
            .map(|(i, _)| i)
            .collect();
        match owners.as_slice() {
            [one] => owned[*one].push(proto.clone()),
            [] => bail!("proto/{proto} belongs to no model crate (see MODEL_CRATES in xtask)"),
            _ => bail!("proto/{proto} is claimed by several model crates"),
        }
    }
    Ok(owned)
}

fn run_protobuf_codegen(proto_dir: &Path, files: &[String], out_dir: &Path) -> Result<()> {
    protobuf_codegen::Codegen::new()
        .pure()
        .include(proto_dir)
        .inputs(files.iter().map(|f| proto_dir.join(f)))
        .out_dir(out_dir)
        // BTreeMap: map entries encode in key order, deterministically.
        .customize(
            protobuf_codegen::Customize::default()
                .gen_mod_rs(false)
                .btreemaps(true),
        )
        .run()
        .context("protobuf-codegen failed")
}

/// Files below `dir`, relative to it, sorted; empty when `dir` does not exist.
fn list_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(relative) = pending.pop() {
        let entries = match fs::read_dir(dir.join(&relative)) {
            Ok(entries) => entries,
            Err(err)
                if err.kind() == std::io::ErrorKind::NotFound
                    && relative.as_os_str().is_empty() =>
            {
                return Ok(out)
            }
            Err(err) => {
                return Err(err)
                    .with_context(|| format!("listing {}", dir.join(&relative).display()))
            }
        };
        for entry in entries {
            let entry = entry?;
            let path = relative.join(entry.file_name());
            if entry.file_type()?.is_dir() {
                pending.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// A relative path with `/` separators, as protobuf names files.
fn slash_path(path: &Path) -> String {
    path.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}
