//! Every wire form of protoprof's schemas.
//!
//! - [`detect`] and [`auto`]: what an input is, and decoding it as that.
//! - [`binary`]: protobuf, raw or gzip-compressed (auto-detected), with
//!   structural checks, limits, precise errors and UTF-8 repair.
//! - [`pprof_view`]: pprof with its samples left in the input bytes, read
//!   one at a time (validation, conversion and analysis of large profiles).
//! - [`json`]: OTLP/JSON (hex ids, integer enums, 64-bit integers as strings).
//! - [`text`]: protobuf text format, unknown fields included.
//! - [`frame`]: gRPC length-prefixed and varint-delimited streams.
//! - [`raw`]: schema-less decoding into a field-number tree.
//! - [`registry`]: every message of the schemas by full name.
//!
//! Reading never panics on bad input and never allocates more than the
//! input (or the configured [`Limits`]) allows; errors say what is wrong and
//! at which byte offset and field path.

#![warn(missing_docs)]

pub mod auto;
pub mod binary;
pub mod detect;
pub mod development_view;
pub mod error;
pub mod experimental_view;
pub mod exporter_stream;
mod fast_read;
pub mod frame;
pub mod gzip;
mod halves;
pub mod json;
mod json_skeleton;
mod json_wire;
mod layout;
pub mod legacy_contention;
pub mod legacy_count;
pub mod legacy_cpu;
pub mod legacy_heap;
pub mod legacy_java;
mod legacy_maps;
pub mod legacy_thread;
pub mod limits;
mod nested_samples;
mod otlp_legacy;
pub mod otlp_revision;
pub mod otlp_upgrade;
mod pprof_locations;
mod pprof_samples;
pub mod pprof_view;
mod pruned;
pub mod raw;
pub mod registry;
mod sample_summary;
mod scan;
pub mod text;
mod utf8;
mod wire;

pub use auto::{decode_any, decode_any_view, decode_json, AutoDecoded, AutoView};
pub use binary::{
    decode, decode_dynamic, decode_reader, encode, encode_to, DecodeOptions, Decoded, EncodeOptions,
};
pub use development_view::DevelopmentView;
pub use error::{CodecError, Warning, WarningKind, WireProblem};
pub use experimental_view::ExperimentalView;
pub use json_wire::to_binary as json_to_binary;
pub use limits::Limits;
pub use pprof_view::{decode_pprof_view, write_pprof_source, EncodedSamples, PprofView};
pub use protoprof_model_meta::{Fields, ProfileSetSamples, SampleSource, TableSource};

/// The model types most callers decode, re-exported for convenience.
pub use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental::ProfilesData as OtlpProfilesData;
pub use protoprof_model_pprof::perftools::profiles::Profile as PprofProfile;
