//! protoprof-bench OP FILE REPS
//!
//! Times one pipeline on the bytes of FILE (read once, not timed), REPS
//! times after one untimed run, and prints "median_ns peak_rss_kb" (peak
//! resident set from /proc/self/status).
//! Driven by `cargo xtask bench-compare`.

mod prost_pprof;

use std::time::Instant;

use protobuf::Message;
use protoprof_codec::{
    decode, decode_pprof_view, DecodeOptions, EncodeOptions, OtlpProfilesData, PprofProfile,
    SampleSource,
};
use protoprof_pprof_bridge::{
    otlp_to_pprof, pprof_to_development, pprof_to_development_bytes, pprof_to_otlp,
    pprof_to_otlp_bytes, ProfileId, ToDevelopmentOptions, ToOtlpOptions,
};

const OPS: &str =
    "prost-decode prost-decode-encode rust-protobuf-decode decode view-decode decode-validate view-validate convert-encode view-convert-encode \
                   otlp-to-pprof-encode decode-gzip encode-gzip \
                   dev-prost-decode dev-decode dev-validate dev-to-pprof-encode \
                   to-dev-encode view-to-dev-encode dev-view-decode dev-view-to-pprof-encode dev-detect";

fn run(op: &str, bytes: &[u8]) -> usize {
    let options = DecodeOptions::default();
    let pprof = || {
        decode::<PprofProfile>(bytes, &options)
            .expect("pprof")
            .message
    };
    let to_otlp = ToOtlpOptions {
        profile_id: ProfileId::Fixed([1; 16]),
        ..Default::default()
    };
    let to_development = ToDevelopmentOptions {
        profile_id: ProfileId::Fixed([1; 16]),
        ..Default::default()
    };
    match op {
        "prost-decode" => <prost_pprof::Profile as prost::Message>::decode(bytes)
            .expect("prost")
            .sample
            .len(),
        "prost-decode-encode" => {
            let p = <prost_pprof::Profile as prost::Message>::decode(bytes).expect("prost");
            prost::Message::encode_to_vec(&p).len()
        }
        "rust-protobuf-decode" => PprofProfile::parse_from_bytes(bytes)
            .expect("pprof")
            .sample
            .len(),
        "decode" | "decode-gzip" => pprof().sample.len(),
        "view-decode" => decode_pprof_view(bytes, &options)
            .expect("pprof")
            .message
            .sample_count(),
        "view-validate" => {
            let view = decode_pprof_view(bytes, &options).expect("pprof").message;
            protoprof_validate::validate_pprof(&view, &Default::default())
                .diagnostics
                .len()
                + view.sample_count()
        }
        "decode-validate" => {
            let p = pprof();
            protoprof_validate::validate_pprof(&p, &Default::default())
                .diagnostics
                .len()
                + p.sample.len()
        }
        "view-convert-encode" => {
            let view = decode_pprof_view(bytes, &options).expect("pprof").message;
            pprof_to_otlp_bytes(&view, &to_otlp)
                .expect("convertible")
                .len()
        }
        "convert-encode" => pprof_to_otlp(&pprof(), &to_otlp)
            .expect("convertible")
            .write_to_bytes()
            .expect("encode")
            .len(),
        "to-dev-encode" => pprof_to_development(&pprof(), &to_development)
            .expect("convertible")
            .value
            .write_to_bytes()
            .expect("encode")
            .len(),
        "view-to-dev-encode" => {
            let view = decode_pprof_view(bytes, &options).expect("pprof").message;
            pprof_to_development_bytes(&view, &to_development)
                .expect("convertible")
                .value
                .len()
        }
        "otlp-to-pprof-encode" => {
            let data = decode::<OtlpProfilesData>(bytes, &options)
                .expect("otlp")
                .message;
            otlp_to_pprof(&data).expect("convertible").value[0]
                .write_to_bytes()
                .expect("encode")
                .len()
        }
        "encode-gzip" => protoprof_codec::encode(
            &pprof(),
            &EncodeOptions {
                gzip_level: Some(6),
            },
        )
        .expect("encode")
        .len(),
        "dev-prost-decode"
        | "dev-decode"
        | "dev-validate"
        | "dev-to-pprof-encode"
        | "dev-view-decode"
        | "dev-view-to-pprof-encode"
        | "dev-detect" => development(op, bytes),
        other => panic!("unknown op {other}; ops: {OPS}"),
    }
}

/// OTLP v1development export requests: OpenTelemetry's own prost types
/// (the `opentelemetry-proto` crate) next to protoprof's model.
fn development(op: &str, bytes: &[u8]) -> usize {
    use opentelemetry_proto::tonic::collector::profiles::v1development as theirs;
    use protoprof_model_otlp::opentelemetry::proto::profiles::v1development::ProfilesData;
    if op == "dev-prost-decode" {
        let request =
            <theirs::ExportProfilesServiceRequest as prost::Message>::decode(bytes).expect("prost");
        return request.resource_profiles.len();
    }
    if op == "dev-detect" {
        let detection = protoprof_codec::detect::detect_payload(bytes, false, &Default::default());
        return detection.map_or(0, |d| d.candidates.len());
    }
    if let Some(op) = op.strip_prefix("dev-view-") {
        return development_view(op, bytes);
    }
    let data = decode::<ProfilesData>(bytes, &DecodeOptions::default())
        .expect("v1development")
        .message;
    match op {
        "dev-validate" => {
            protoprof_validate::validate_development_data(&data, &Default::default())
                .diagnostics
                .len()
                + data.resource_profiles.len()
        }
        "dev-to-pprof-encode" => protoprof_pprof_bridge::development_to_pprof(&data)
            .expect("convertible")
            .value
            .write_to_bytes()
            .expect("encode")
            .len(),
        _ => data.resource_profiles.len(),
    }
}

/// v1development read through the codec's view: samples left in the bytes.
fn development_view(op: &str, bytes: &[u8]) -> usize {
    let view = match protoprof_codec::decode_any_view(bytes, None, &DecodeOptions::default()) {
        Ok(protoprof_codec::AutoView::Development(view)) => view.message,
        _ => panic!("not v1development"),
    };
    if op == "decode" {
        return view.data().resource_profiles.len();
    }
    let mut samples = protoprof_codec::EncodedSamples::new();
    let converted =
        protoprof_pprof_bridge::development_to_pprof_with(view.data(), &view, &mut |s| {
            samples.push(s)
        })
        .expect("convertible");
    drop(view);
    samples
        .into_view(converted.value)
        .encode()
        .expect("encode")
        .len()
}

fn peak_rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [op, file, reps] = &args[..] else {
        eprintln!("usage: protoprof-bench OP FILE REPS\nops: {OPS}");
        std::process::exit(2);
    };
    let bytes = std::fs::read(file).expect("readable input");
    let reps: usize = reps.parse().expect("a number of repetitions");
    // One untimed run first: the timed runs see a warm process (memory the
    // allocator already has), as a long-running collector would.
    std::hint::black_box(run(op, std::hint::black_box(&bytes)));
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps {
        let start = Instant::now();
        std::hint::black_box(run(op, std::hint::black_box(&bytes)));
        times.push(start.elapsed().as_nanos());
    }
    times.sort_unstable();
    println!("{} {}", times[times.len() / 2], peak_rss_kb());
}
