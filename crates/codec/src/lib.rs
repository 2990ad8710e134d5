//! Every wire form of protoprof's schemas.
//!
//! The folders say what the code is about:
//! - [`binary`]: protobuf, raw or gzip-compressed (auto-detected), with
//!   structural checks, limits, precise errors and UTF-8 repair;
//! - [`pprof`]: pprof with its samples left in the input bytes, read one at
//!   a time ([`pprof::view`]: validation, conversion and analysis of large
//!   profiles);
//! - [`otlp`]: OTLP Profiles views, the v1development wire revisions and
//!   their upgrade, the Collector file exporter's streams;
//! - [`legacy`]: the pre-protobuf profile formats `go tool pprof` reads;
//! - [`json`]: OTLP/JSON (hex ids, integer enums, 64-bit integers as strings),
//!   and the plain proto3 JSON mapping for the user's own schemas;
//! - [`user`]: the user's own schemas (`.proto` files or descriptor sets),
//!   their messages by name, and input ranked against them.
//!
//! and the files beside them are the concerns every form shares or has one
//! file for: [`detect`] and [`auto`] (what an input is, and decoding it as
//! that), [`text`] (protobuf text format, unknown fields included),
//! [`frame`] (gRPC length-prefixed and varint-delimited streams), [`raw`]
//! (schema-less decoding into a field-number tree), [`gzip`], [`registry`]
//! (every message of the schemas by full name), [`limits`] and [`error`].
//!
//! Reading never panics on bad input and never allocates more than the
//! input (or the configured [`Limits`]) allows; errors say what is wrong and
//! at which byte offset and field path.

#![warn(missing_docs)]

pub mod auto;
pub mod binary;
pub mod detect;
pub mod error;
pub mod exporter_stream;
pub mod form;
pub mod frame;
pub mod gzip;
pub mod json;
pub mod legacy;
pub mod limits;
mod messages;
pub mod otlp;
pub mod pprof;
mod pruned;
pub mod raw;
pub mod registry;
pub mod text;
pub mod user;
pub mod wire_revision;

// The module paths from before the folders, kept so that callers' imports
// stay valid.
#[doc(hidden)]
pub use legacy::{
    contention as legacy_contention, count as legacy_count, cpu as legacy_cpu, heap as legacy_heap,
    java as legacy_java, thread as legacy_thread,
};
#[doc(hidden)]
pub use otlp::{
    development_view, experimental_view, revision as otlp_revision, upgrade as otlp_upgrade,
};
#[doc(hidden)]
pub use pprof::view as pprof_view;

pub use auto::{
    decode_any, decode_any_view, decode_json, decode_view_in_form, AutoDecoded, AutoView,
};
pub use binary::{encode, encode_to, DecodeOptions, Decoded, EncodeOptions};
pub use development_view::DevelopmentView;
pub use error::{CodecError, Warning, WarningKind, WireProblem};
pub use experimental_view::ExperimentalView;
pub use json::to_binary::to_binary as json_to_binary;
pub use limits::Limits;
pub use messages::{decode, decode_dynamic, decode_reader};
pub use pprof_view::{decode_pprof_view, write_pprof_source, EncodedSamples, PprofView};
pub use protoprof_model_meta::{Fields, ProfileSetSamples, SampleSource, TableSource};

/// The model types most callers decode, re-exported for convenience.
pub use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental::ProfilesData as OtlpProfilesData;
pub use protoprof_model_pprof::perftools::profiles::Profile as PprofProfile;
