//! Fuzz targets for every decoder, and a mutator for seeds.
//!
//! cargo-fuzz needs a nightly toolchain; this harness runs on stable: the
//! `protoprof-fuzz` binary mutates corpus files for as long as it is asked
//! to and keeps any input that makes a decoder panic. The test suite runs a
//! few thousand deterministic mutations through the same targets.

use protoprof_codec::detect::detect;
use protoprof_codec::frame::{FrameReader, Framing};
use protoprof_codec::{
    decode, decode_any, decode_pprof_view, json, raw, registry, text, DecodeOptions, Fields,
    Limits, SampleSource,
};

/// Limits small enough that a fuzz run's memory stays low.
pub const LIMITS: Limits = Limits {
    max_input_bytes: 8 << 20,
    max_inflated_bytes: 16 << 20,
    max_depth: 100,
    max_frame_bytes: 1 << 20,
};

fn options() -> DecodeOptions {
    DecodeOptions {
        limits: LIMITS,
        allow_empty: true,
        ..Default::default()
    }
}

/// A decoder under test: it may fail, never panic.
pub type Target = fn(&[u8]);

/// Every decoder of the codec, by name.
pub const TARGETS: &[(&str, Target)] = &[
    ("pprof", |b| {
        drop(decode::<protoprof_codec::PprofProfile>(b, &options()))
    }),
    ("otlp", |b| {
        drop(decode::<protoprof_codec::OtlpProfilesData>(b, &options()))
    }),
    ("relay", |b| {
        let descriptor =
            registry::message_descriptor("envoy.service.discovery.v3.DeltaDiscoveryRequest")
                .unwrap();
        drop(protoprof_codec::decode_dynamic(b, &descriptor, &options()))
    }),
    ("pprof_view", |b| {
        // Differential: the view reads every sample, and holds what the
        // model decode reads.
        let Ok(decoded) = decode_pprof_view(b, &options()) else {
            return;
        };
        let view = decoded.message;
        let mut buffer = Default::default();
        for i in 0..view.sample_count() {
            view.sample_fields(
                i,
                Fields::only(&[protoprof_model_pprof::fields::perftools::profiles::sample::LABEL]),
                &mut buffer,
            );
            view.value_count(i);
        }
        let model = decode::<protoprof_codec::PprofProfile>(b, &options())
            .expect("what the view decodes, the model decodes");
        assert!(
            view.into_profile() == model.message,
            "view and model differ"
        );
    }),
    ("detect", |b| drop(detect(b, &LIMITS))),
    ("decode_any", |b| drop(decode_any(b, None, &options()))),
    ("raw", |b| {
        drop(raw::decode_raw(b, LIMITS.max_depth).map(|fields| raw::render(&fields)))
    }),
    ("text", |b| {
        if let Ok(s) = std::str::from_utf8(b) {
            let descriptor = registry::message_descriptor("perftools.profiles.Profile").unwrap();
            if let Ok(message) = text::parse(s, &descriptor, LIMITS.max_depth) {
                // What was read prints and reads back.
                text::parse(&text::print(&*message), &descriptor, LIMITS.max_depth)
                    .expect("own text output reads back");
            }
        }
    }),
    ("json", |b| {
        if let Ok(s) = std::str::from_utf8(b) {
            let descriptor = registry::message_descriptor(
                "opentelemetry.proto.profiles.v1experimental.ProfilesData",
            )
            .unwrap();
            drop(json::parse(s, &descriptor, LIMITS.max_depth).map(|m| json::print(&*m, false)));
        }
    }),
    ("frames", |b| {
        for framing in [Framing::Grpc, Framing::VarintDelimited] {
            FrameReader::new(b, framing, LIMITS.max_frame_bytes)
                .take(1000)
                .for_each(drop);
        }
    }),
];

pub use protoprof_synth::Rng;

/// Values that sit on varint and wire-type boundaries.
const INTERESTING: [u8; 10] = [0x00, 0x01, 0x02, 0x07, 0x08, 0x0f, 0x7f, 0x80, 0xfe, 0xff];

/// One to four random edits of `seed`: bit flips, boundary bytes, inserted,
/// removed or repeated ranges, truncation.
pub fn mutate(seed: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut out = seed.to_vec();
    for _ in 0..1 + rng.below(4) {
        let len = out.len();
        match rng.below(7) {
            0 if len > 0 => {
                let i = rng.below(len);
                out[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                out[i] = INTERESTING[rng.below(INTERESTING.len())];
            }
            2 => {
                let i = rng.below(len + 1);
                let bytes: Vec<u8> = (0..1 + rng.below(8))
                    .map(|_| INTERESTING[rng.below(INTERESTING.len())])
                    .collect();
                out.splice(i..i, bytes);
            }
            3 if len > 1 => {
                let i = rng.below(len);
                let n = 1 + rng.below((len - i).min(16));
                out.drain(i..i + n);
            }
            4 if len > 1 => {
                let i = rng.below(len);
                let n = 1 + rng.below((len - i).min(64));
                let copy = out[i..i + n].to_vec();
                let at = rng.below(len + 1);
                out.splice(at..at, copy);
            }
            5 if len > 0 => out.truncate(rng.below(len)),
            _ => {
                let i = rng.below(len + 1);
                out.insert(i, rng.next_u64() as u8);
            }
        }
    }
    out
}

/// Runs every target on `input`; returns the name of the first that panics.
pub fn run_all(input: &[u8]) -> Option<&'static str> {
    TARGETS.iter().find_map(|(name, target)| {
        std::panic::catch_unwind(|| target(input))
            .is_err()
            .then_some(*name)
    })
}
