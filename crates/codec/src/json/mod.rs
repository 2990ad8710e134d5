//! OTLP/JSON: the OpenTelemetry protocol's JSON encoding, which differs from
//! the plain proto3 JSON mapping (hex ids, integer enums, 64-bit integers as
//! strings). See "OTLP/JSON rules" in `docs/codec.md` for each rule.
//!
//! - `document`: a whole document read into and printed from a tree (its
//!   items are this module's: [`parse`], [`print()`], [`message_value`], ...);
//! - `to_binary`: OTLP/JSON straight to protobuf bytes, without the tree
//!   (`crate::json_to_binary`);
//! - `skeleton`: what detection reads of a JSON document.
//!
//! The plain proto3 JSON mapping, for the user's own schemas, is
//! [`crate::user::proto3`].

pub(crate) mod document;
pub(crate) mod skeleton;
pub(crate) mod to_binary;

pub use document::*;
