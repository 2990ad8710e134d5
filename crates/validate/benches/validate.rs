//! Validation against decoding of the same profile: validating must cost
//! less than decoding. Inputs: a 10 MB synthetic profile, and
//! `target/synth/synth-100MB.pb` when `cargo xtask gen-profiles` wrote it.
//! Run: `cargo bench -p protoprof-validate`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use protobuf::Message;
use protoprof_model_pprof::perftools::profiles::Profile;
use protoprof_validate::{validate_pprof, Options};

fn benches(c: &mut Criterion) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let inputs = protoprof_synth::bench_inputs(&root);
    let mut group = c.benchmark_group("pprof");
    group.sample_size(10);
    for (name, bytes) in inputs {
        let profile = Profile::parse_from_bytes(&bytes).unwrap();
        let report = validate_pprof(&profile, &Options::default());
        assert!(report.diagnostics.is_empty(), "{}", report.render_human());
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function(BenchmarkId::new("decode", &name), |b| {
            b.iter(|| Profile::parse_from_bytes(&bytes).unwrap())
        });
        group.bench_function(BenchmarkId::new("validate", &name), |b| {
            b.iter(|| validate_pprof(&profile, &Options::default()))
        });
    }
    group.finish();
}

criterion_group!(validate, benches);
criterion_main!(validate);
