//! Every message of protoprof's schemas, by full protobuf name.

use protobuf::descriptor::field_descriptor_proto::{Label, Type};
use protobuf::reflect::{FieldDescriptor, MessageDescriptor, ReflectValueRef};
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

/// A singular field's value when it counts as present, as protoc counts
/// it: a proto3 field without presence (no `optional`, not in a oneof,
/// not a message) is absent at its default value, even when the wire or
/// the text gave that value explicitly.
pub(crate) fn present_value<'a>(
    field: &FieldDescriptor,
    value: Option<ReflectValueRef<'a>>,
) -> Option<ReflectValueRef<'a>> {
    let value = value?;
    if has_implicit_presence(field) && is_default(&value) {
        return None;
    }
    Some(value)
}

fn has_implicit_presence(field: &FieldDescriptor) -> bool {
    let proto = field.proto();
    proto.label() == Label::LABEL_OPTIONAL
        && !proto.has_oneof_index()
        && proto.type_() != Type::TYPE_MESSAGE
        && proto.type_() != Type::TYPE_GROUP
        && field
            .containing_message()
            .file_descriptor()
            .proto()
            .syntax()
            == "proto3"
}

fn is_default(value: &ReflectValueRef) -> bool {
    match value {
        ReflectValueRef::U32(v) => *v == 0,
        ReflectValueRef::U64(v) => *v == 0,
        ReflectValueRef::I32(v) => *v == 0,
        ReflectValueRef::I64(v) => *v == 0,
        // -0.0 is not the default: its bits differ, and protoc prints it.
        ReflectValueRef::F32(v) => v.to_bits() == 0,
        ReflectValueRef::F64(v) => v.to_bits() == 0,
        ReflectValueRef::Bool(v) => !*v,
        ReflectValueRef::String(v) => v.is_empty(),
        ReflectValueRef::Bytes(v) => v.is_empty(),
        ReflectValueRef::Enum(_, v) => *v == 0,
        ReflectValueRef::Message(_) => false,
    }
}
