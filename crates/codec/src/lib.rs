//! Every wire form of protoprof's schemas.
//!
//! - [`binary`]: protobuf, raw or gzip-compressed (auto-detected), with
//!   structural checks, limits, precise errors and UTF-8 repair.
//!
//! Reading never panics on bad input and never allocates more than the
//! input (or the configured [`Limits`]) allows; errors say what is wrong and
//! at which byte offset and field path.

pub mod binary;
pub mod error;
pub mod gzip;
mod layout;
pub mod limits;
mod scan;
mod utf8;
mod wire;

pub use binary::{
    decode, decode_dynamic, decode_reader, encode, encode_to, DecodeOptions, Decoded, EncodeOptions,
};
pub use error::{CodecError, Warning, WarningKind, WireProblem};
pub use limits::Limits;
