//! Messages of the user's own schemas: `.proto` files parsed in pure Rust
//! or a binary `FileDescriptorSet`, looked up by full name, and input
//! ranked against every message they declare.
//!
//! The messages are rust-protobuf dynamic messages, so everything the codec
//! does over reflection (binary, text format, framed streams) works for
//! them as for the built-in types; JSON follows the plain proto3 mapping
//! ([`crate::json::proto3`]).

pub mod decode;
pub mod detect;
pub mod encode;
pub mod load;
pub mod parse;
pub mod print_binary;

pub use decode::{decode, identify, Identified, UserDecoded};
pub use detect::{rank, Ranked};
pub use encode::encode;
pub use load::{SchemaError, SchemaSet, SchemaSources};
pub use print_binary::print_binary;
