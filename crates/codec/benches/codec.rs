//! Decode and encode throughput of every binary path, against rust-protobuf's
//! own parse as the baseline.
//!
//! Inputs: a 10 MB synthetic profile (always), `target/synth/synth-100MB.pb`
//! when `cargo xtask gen-profiles` has written it, and a real Go heap profile
//! from `$PROTOPROF_CORPUS` when set. Run: `cargo bench -p protoprof-codec`.

use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use protobuf::Message;
use protoprof_codec::{decode, encode, json, DecodeOptions, EncodeOptions, PprofProfile};

fn inputs() -> Vec<(String, Vec<u8>)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut inputs = protoprof_synth::bench_inputs(&root);
    if let Some(corpus) = std::env::var_os("PROTOPROF_CORPUS") {
        // Relative to the workspace root, as the README writes it.
        if let Ok(bytes) =
            std::fs::read(root.join(corpus).join("pprof/real/go-heap-uncompressed.pb"))
        {
            inputs.push(("go-heap-100KB".into(), bytes));
        }
    }
    inputs
}

fn benches(c: &mut Criterion) {
    let options = DecodeOptions::default();
    for (name, raw) in inputs() {
        let gz = encode(
            &PprofProfile::parse_from_bytes(&raw).unwrap(),
            &EncodeOptions {
                gzip_level: Some(6),
            },
        )
        .unwrap();
        let message: PprofProfile = PprofProfile::parse_from_bytes(&raw).unwrap();
        let json_text = json::print(&message, false);
        let mut group = c.benchmark_group("decode");
        group.throughput(Throughput::Bytes(raw.len() as u64));
        if raw.len() > 50 << 20 {
            group.sample_size(10);
        }
        group.bench_function(BenchmarkId::new("rust-protobuf parse", &name), |b| {
            b.iter(|| PprofProfile::parse_from_bytes(&raw).unwrap())
        });
        group.bench_function(BenchmarkId::new("protoprof binary", &name), |b| {
            b.iter(|| decode::<PprofProfile>(&raw, &options).unwrap())
        });
        group.bench_function(BenchmarkId::new("protoprof gzip", &name), |b| {
            b.iter(|| decode::<PprofProfile>(&gz, &options).unwrap())
        });
        if raw.len() < 50 << 20 {
            group.bench_function(BenchmarkId::new("protoprof OTLP/JSON", &name), |b| {
                let descriptor = <PprofProfile as protobuf::MessageFull>::descriptor();
                b.iter(|| json::parse(&json_text, &descriptor, 100).unwrap())
            });
        }
        group.finish();

        let mut group = c.benchmark_group("encode");
        group.throughput(Throughput::Bytes(raw.len() as u64));
        if raw.len() > 50 << 20 {
            group.sample_size(10);
        }
        group.bench_function(BenchmarkId::new("binary", &name), |b| {
            b.iter(|| message.write_to_bytes().unwrap())
        });
        group.bench_function(BenchmarkId::new("gzip level 6", &name), |b| {
            b.iter(|| {
                encode(
                    &message,
                    &EncodeOptions {
                        gzip_level: Some(6),
                    },
                )
                .unwrap()
            })
        });
        if raw.len() < 50 << 20 {
            group.bench_function(BenchmarkId::new("OTLP/JSON", &name), |b| {
                b.iter(|| json::print(&message, false))
            });
        }
        group.finish();
    }
}

criterion_group!(codec, benches);
criterion_main!(codec);
