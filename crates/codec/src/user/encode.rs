//! A dynamic message of a user's schema to binary, canonically as protoc
//! writes it: fields in number order, repeated scalars packed where the
//! schema packs them (proto3's default, or `[packed = true]`), map entries
//! sorted by key (protoc's `--deterministic_output`), unknown fields last in
//! number order. rust-protobuf writes dynamic maps and unknown fields in
//! hash order, so the same message could give other bytes on each run.

use protobuf::descriptor::field_descriptor_proto::Type;
use protobuf::reflect::{FieldDescriptor, ReflectFieldRef, ReflectValueRef};
use protobuf::{MessageDyn, UnknownValueRef};

use crate::binary::wire::{FIXED32, FIXED64, LEN, VARINT};
use crate::registry::{fields_in_number_order, present_value};
use protoprof_model_meta::wire::{write_len_prefix, write_tag, write_varint};

/// The canonical encoding of `message`.
pub fn encode(message: &dyn MessageDyn) -> Vec<u8> {
    let mut out = Vec::new();
    write_message(message, &mut out);
    out
}

fn write_message(message: &dyn MessageDyn, out: &mut Vec<u8>) {
    for field in fields_in_number_order(&message.descriptor_dyn()) {
        let number = field.number() as u32;
        match field.get_reflect(message) {
            ReflectFieldRef::Optional(value) => {
                if let Some(value) = present_value(&field, value.value()) {
                    write_value(&field, number, &value, out);
                }
            }
            ReflectFieldRef::Repeated(values) if values.is_empty() => {}
            ReflectFieldRef::Repeated(values) if is_packed(&field) => {
                let mut body = Vec::new();
                for value in &values {
                    write_bare(&field, &value, &mut body);
                }
                write_len(number, &body, out);
            }
            ReflectFieldRef::Repeated(values) => {
                for value in &values {
                    write_value(&field, number, &value, out);
                }
            }
            ReflectFieldRef::Map(map) => {
                let mut entries: Vec<(ReflectValueRef, ReflectValueRef)> =
                    (&map).into_iter().collect();
                entries.sort_by_cached_key(|(key, _)| crate::text::map_key_order(key));
                let (key_field, value_field) = entry_fields(&field);
                for (key, value) in entries {
                    let mut body = Vec::new();
                    write_value(&key_field, 1, &key, &mut body);
                    write_value(&value_field, 2, &value, &mut body);
                    write_len(number, &body, out);
                }
            }
        }
    }
    let mut unknown: Vec<(u32, UnknownValueRef)> = message.unknown_fields_dyn().iter().collect();
    unknown.sort_by_key(|(number, _)| *number);
    for (number, value) in unknown {
        match value {
            UnknownValueRef::Varint(v) => {
                write_tag(out, number, VARINT);
                write_varint(out, v);
            }
            UnknownValueRef::Fixed32(v) => {
                write_tag(out, number, FIXED32);
                out.extend_from_slice(&v.to_le_bytes());
            }
            UnknownValueRef::Fixed64(v) => {
                write_tag(out, number, FIXED64);
                out.extend_from_slice(&v.to_le_bytes());
            }
            UnknownValueRef::LengthDelimited(b) => write_len(number, b, out),
        }
    }
}

/// Whether a repeated field's values go in one packed run.
fn is_packed(field: &FieldDescriptor) -> bool {
    let proto = field.proto();
    if matches!(
        proto.type_(),
        Type::TYPE_STRING | Type::TYPE_BYTES | Type::TYPE_MESSAGE | Type::TYPE_GROUP
    ) {
        return false;
    }
    match proto.options.as_ref().and_then(|o| o.packed) {
        Some(packed) => packed,
        None => {
            field
                .containing_message()
                .file_descriptor()
                .proto()
                .syntax()
                == "proto3"
        }
    }
}

/// The `key` and `value` fields of a map field's entry message.
fn entry_fields(field: &FieldDescriptor) -> (FieldDescriptor, FieldDescriptor) {
    let entry_name = field.proto().type_name().trim_start_matches('.');
    let entry = field
        .containing_message()
        .nested_messages()
        .find(|m| m.full_name() == entry_name)
        .expect("a map's entry is nested in its message");
    let part = |n| {
        entry
            .field_by_number(n)
            .expect("map entries have key and value")
    };
    (part(1), part(2))
}

fn wire_type(field: &FieldDescriptor) -> u8 {
    match field.proto().type_() {
        Type::TYPE_DOUBLE | Type::TYPE_FIXED64 | Type::TYPE_SFIXED64 => FIXED64,
        Type::TYPE_FLOAT | Type::TYPE_FIXED32 | Type::TYPE_SFIXED32 => FIXED32,
        Type::TYPE_STRING | Type::TYPE_BYTES | Type::TYPE_MESSAGE | Type::TYPE_GROUP => LEN,
        _ => VARINT,
    }
}

/// One value with its tag.
fn write_value(field: &FieldDescriptor, number: u32, value: &ReflectValueRef, out: &mut Vec<u8>) {
    match value {
        ReflectValueRef::Message(m) => {
            let mut body = Vec::new();
            write_message(&**m, &mut body);
            write_len(number, &body, out);
        }
        ReflectValueRef::String(s) => write_len(number, s.as_bytes(), out),
        ReflectValueRef::Bytes(b) => write_len(number, b, out),
        scalar => {
            write_tag(out, number, wire_type(field));
            write_bare(field, scalar, out);
        }
    }
}

/// A scalar's bytes, without a tag (as packed runs hold them).
fn write_bare(field: &FieldDescriptor, value: &ReflectValueRef, out: &mut Vec<u8>) {
    let kind = field.proto().type_();
    match (kind, value) {
        (Type::TYPE_SINT32, ReflectValueRef::I32(v)) => {
            write_varint(out, ((v << 1) ^ (v >> 31)) as u32 as u64)
        }
        (Type::TYPE_SINT64, ReflectValueRef::I64(v)) => {
            write_varint(out, ((v << 1) ^ (v >> 63)) as u64)
        }
        (Type::TYPE_SFIXED32, ReflectValueRef::I32(v)) => out.extend_from_slice(&v.to_le_bytes()),
        (Type::TYPE_SFIXED64, ReflectValueRef::I64(v)) => out.extend_from_slice(&v.to_le_bytes()),
        (Type::TYPE_FIXED32, ReflectValueRef::U32(v)) => out.extend_from_slice(&v.to_le_bytes()),
        (Type::TYPE_FIXED64, ReflectValueRef::U64(v)) => out.extend_from_slice(&v.to_le_bytes()),
        (_, ReflectValueRef::F32(v)) => out.extend_from_slice(&v.to_le_bytes()),
        (_, ReflectValueRef::F64(v)) => out.extend_from_slice(&v.to_le_bytes()),
        // int32 and enums are sign-extended to ten bytes, as protobuf has it.
        (_, ReflectValueRef::I32(v)) => write_varint(out, i64::from(*v) as u64),
        (_, ReflectValueRef::Enum(_, v)) => write_varint(out, i64::from(*v) as u64),
        (_, ReflectValueRef::I64(v)) => write_varint(out, *v as u64),
        (_, ReflectValueRef::U32(v)) => write_varint(out, u64::from(*v)),
        (_, ReflectValueRef::U64(v)) => write_varint(out, *v),
        (_, ReflectValueRef::Bool(v)) => write_varint(out, u64::from(*v)),
        (_, other) => unreachable!("{other:?} is not a scalar"),
    }
}

fn write_len(number: u32, body: &[u8], out: &mut Vec<u8>) {
    write_len_prefix(out, number, body.len());
    out.extend_from_slice(body);
}
