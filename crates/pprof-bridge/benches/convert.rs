//! Conversion against decoding of the same profile: pprof -> OTLP must cost
//! no more than decoding the pprof. Inputs: a 10 MB synthetic profile, and
//! `target/synth/synth-100MB.pb` when `cargo xtask gen-profiles` wrote it.
//! Run: `cargo bench -p protoprof-pprof-bridge`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use protobuf::Message;
use protoprof_model_pprof::perftools::profiles::Profile;
use protoprof_pprof_bridge::{otlp_to_pprof, pprof_to_otlp, ProfileId, ToOtlpOptions};

fn benches(c: &mut Criterion) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let inputs = protoprof_synth::bench_inputs(&root);
    let options = ToOtlpOptions {
        profile_id: ProfileId::Fixed([1; 16]),
        ..Default::default()
    };
    let mut group = c.benchmark_group("convert");
    group.sample_size(10);
    for (name, bytes) in inputs {
        let profile = Profile::parse_from_bytes(&bytes).unwrap();
        let otlp = pprof_to_otlp(&profile, &options).unwrap();
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function(BenchmarkId::new("decode pprof", &name), |b| {
            b.iter(|| Profile::parse_from_bytes(&bytes).unwrap())
        });
        group.bench_function(BenchmarkId::new("pprof to OTLP", &name), |b| {
            b.iter(|| pprof_to_otlp(&profile, &options).unwrap())
        });
        group.bench_function(BenchmarkId::new("OTLP to pprof", &name), |b| {
            b.iter(|| otlp_to_pprof(&otlp).unwrap())
        });
        group.bench_function(BenchmarkId::new("pprof to OTLP + encode", &name), |b| {
            b.iter(|| {
                pprof_to_otlp(&profile, &options)
                    .unwrap()
                    .write_to_bytes()
                    .unwrap()
            })
        });
    }
    group.finish();
}

criterion_group!(convert, benches);
criterion_main!(convert);
