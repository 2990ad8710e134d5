//! pprof (`perftools.profiles.Profile`) with its samples left in the input
//! bytes, and the fast readers behind it.
//!
//! - [`view`]: `PprofView`, the profile decoded but for its samples, which
//!   are read one at a time (validation, conversion and analysis of large
//!   profiles), and `EncodedSamples`, a view built from converted samples;
//! - `samples` and `locations`: the fast paths for pprof's `Sample` and
//!   `Location`, which must give what rust-protobuf gives, and the samples'
//!   direct encoder;
//! - `sample_summary`: what a view's check finds for validation;
//! - `halves`: checks shared between two threads, which the OTLP views
//!   use too.
//!
//! The OTLP views read their samples with the readers here; nothing here
//! reads OTLP.

pub(crate) mod halves;
pub(crate) mod locations;
pub(crate) mod sample_summary;
pub(crate) mod samples;
pub mod view;
