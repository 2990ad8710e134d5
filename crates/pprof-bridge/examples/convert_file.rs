//! Decodes a pprof file and converts it to OTLP (and, with `--back`, to
//! pprof again); for peak-memory measurements with `/usr/bin/time -v`.
//! `--decode-only` stops after decoding, for the baseline; `REPEAT=n`
//! converts n times (for profilers).
//!
//! cargo run --release -p protoprof-pprof-bridge --example convert_file -- [--decode-only|--back] FILE

use protobuf::Message;
use protoprof_model_pprof::perftools::profiles::Profile;
use protoprof_pprof_bridge::{otlp_to_pprof, pprof_to_otlp, ToOtlpOptions};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args.iter().find(|a| !a.starts_with("--")).expect("a file");
    let profile =
        Profile::parse_from_bytes(&std::fs::read(path).expect("readable")).expect("pprof");
    if args.iter().any(|a| a == "--decode-only") {
        println!("{} samples", profile.sample.len());
        return;
    }
    let repeat: usize = std::env::var("REPEAT")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(1);
    for _ in 1..repeat {
        drop(pprof_to_otlp(&profile, &ToOtlpOptions::default()).expect("convertible"));
    }
    let otlp = pprof_to_otlp(&profile, &ToOtlpOptions::default()).expect("convertible");
    let samples = otlp.resource_profiles[0].scope_profiles[0].profiles[0]
        .profile
        .sample
        .len();
    if args.iter().any(|a| a == "--back") {
        drop(profile);
        let back = otlp_to_pprof(&otlp).expect("convertible");
        println!("{samples} samples, back: {}", back.value[0].sample.len());
    } else {
        println!("{samples} samples");
    }
}
