//! Messages of the user's own schemas: `.proto` files parsed in pure Rust
//! or a binary `FileDescriptorSet`, looked up by full name, and input
//! ranked against every message they declare.
//!
//! The messages are rust-protobuf dynamic messages, so everything the codec
//! does over reflection (binary, text format, framed streams) works for
//! them as for the built-in types; JSON follows the plain proto3 mapping
//! ([`proto3`] prints it and [`proto3_parse`] reads it, well-known types
//! included, with `well_known`).

pub mod decode;
pub mod detect;
pub mod encode;
pub mod load;
pub mod parse;
pub mod print_binary;
pub mod proto3;
pub mod proto3_parse;
pub(crate) mod well_known;

pub use decode::{decode, identify, Identified, UserDecoded};
pub use detect::{rank, Ranked};
pub use encode::encode;
pub use load::{SchemaError, SchemaSet, SchemaSources};
pub use print_binary::print_binary;
