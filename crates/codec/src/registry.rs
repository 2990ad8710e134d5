//! Every message of protoprof's schemas, by full protobuf name.

use protobuf::reflect::{FieldDescriptor, MessageDescriptor};
use protoprof_model_meta::Schema;

use crate::error::CodecError;

/// The schemas of the three model crates.
pub static SCHEMAS: [&Schema; 3] = [
    &protoprof_model_pprof::SCHEMA,
    &protoprof_model_otlp::SCHEMA,
    &protoprof_model_relay::SCHEMA,
];

/// The descriptor of a message by full name (a leading `.` is allowed).
pub fn message_descriptor(full_name: &str) -> Result<MessageDescriptor, CodecError> {
    SCHEMAS
        .iter()
        .find_map(|schema| schema.message_by_full_name(full_name))
        .ok_or_else(|| CodecError::UnknownMessageType(full_name.to_string()))
}

/// Full names of every message of the schemas, sorted.
pub fn message_names() -> Vec<String> {
    let mut names: Vec<String> = SCHEMAS
        .iter()
        .flat_map(|s| s.messages())
        .map(|m| m.full_name().to_string())
        .collect();
    names.sort();
    names
}

/// A message type's fields in number order, as text format and OTLP/JSON
/// print them.
pub(crate) fn fields_in_number_order(descriptor: &MessageDescriptor) -> Vec<FieldDescriptor> {
    let mut fields: Vec<FieldDescriptor> = descriptor.fields().collect();
    fields.sort_by_key(|f| f.number());
    fields
}
