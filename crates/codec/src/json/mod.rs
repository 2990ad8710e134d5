//! OTLP/JSON: the OpenTelemetry protocol's JSON encoding, which differs from
//! the plain proto3 JSON mapping (hex ids, integer enums, 64-bit integers as
//! strings). See "OTLP/JSON rules" in `docs/codec.md` for each rule.
//!
//! - `document`: a whole document read into and printed from a tree (its
//!   items are this module's: [`parse`], [`print()`], [`message_value`], ...);
//! - `to_binary`: OTLP/JSON straight to protobuf bytes, without the tree
//!   (`crate::json_to_binary`);
//! - `skeleton`: what detection reads of a JSON document;
//! - [`proto3`] and [`proto3_parse`] (with `well_known`): the plain proto3
//!   JSON mapping, printed and read, well-known types included, for the
//!   user's own schemas.

pub(crate) mod document;
pub mod proto3;
pub mod proto3_parse;
pub(crate) mod skeleton;
pub(crate) mod to_binary;
pub(crate) mod well_known;

pub use document::*;
