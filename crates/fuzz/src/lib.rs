//! Fuzz targets for every decoder, validator and bridge direction, and a
//! coverage-guided fuzzer that runs on stable Rust.
//!
//! cargo-fuzz needs a nightly toolchain; this harness does not. `cargo xtask
//! fuzz` builds the `protoprof-fuzz` binary with LLVM's SanitizerCoverage
//! counters (stable `-C` flags) and runs a campaign per target: mutations of
//! the corpus that reach new edges are kept and mutated further, and an
//! input that panics is saved where the test suite replays it. The test
//! suite also runs a few thousand deterministic mutations through every
//! target.

#![warn(missing_docs)]

pub mod campaign;
pub mod coverage;
pub mod mutate;
pub mod targets;

pub use mutate::{mutate, Rng};
pub use targets::{target, Target, LIMITS, TARGETS};

/// Runs every target on `input`; the name of the first that panics and its
/// message. Install [`campaign::capture_panics`] first for the message.
pub fn run_all(input: &[u8]) -> Option<(&'static str, String)> {
    TARGETS.iter().find_map(|&(name, target)| {
        campaign::run_once(target, input).map(|message| (name, message))
    })
}
