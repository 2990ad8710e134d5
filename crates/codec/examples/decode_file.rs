//! Decodes one pprof file and prints what it holds; for peak-memory
//! measurements (`/usr/bin/time -v`). `--raw` uses rust-protobuf's parse alone.
//!
//! cargo run --release -p protoprof-codec --example decode_file -- [--raw] FILE

use protobuf::Message;
use protoprof_codec::{decode, DecodeOptions, PprofProfile};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let raw = args.iter().any(|a| a == "--raw");
    let path = args.iter().find(|a| !a.starts_with("--")).expect("a file");
    let bytes = std::fs::read(path).expect("readable file");
    let profile = if raw {
        PprofProfile::parse_from_bytes(&bytes).expect("valid profile")
    } else {
        decode::<PprofProfile>(&bytes, &DecodeOptions::default())
            .expect("valid profile")
            .message
    };
    println!(
        "{} samples, {} locations, input {} bytes",
        profile.sample.len(),
        profile.location.len(),
        bytes.len()
    );
}
