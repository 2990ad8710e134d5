//! The plain proto3 JSON mapping, for messages of the user's schemas:
//! `json_name` keys, 64-bit integers as strings, enums by name, bytes as
//! base64, fields at their default left out (unless they have presence),
//! and the well-known types in their own forms (`well_known`): Timestamp
//! and Duration as strings, wrappers as their value, Struct as any JSON,
//! FieldMask as a string, Any as its message with `@type`, resolved by type
//! URL from the loaded schemas.
//!
//! Unknown fields have no JSON form: [`print()`] counts them so the caller
//! can say what JSON leaves out.

use base64::Engine as _;
use protobuf::reflect::{ReflectFieldRef, ReflectValueBox, ReflectValueRef};
use protobuf::MessageDyn;
use serde_json::{Map, Number, Value};

use crate::error::CodecError;
use crate::registry::{fields_in_number_order, present_value};
use crate::user::well_known::{self, join};
use crate::user::SchemaSet;

/// A message printed as proto3 JSON, and how many unknown fields (at any
/// depth) it does not carry.
#[derive(Debug)]
pub struct Printed {
    /// The JSON text.
    pub text: String,
    /// Unknown fields left out.
    pub unknown_fields_left_out: usize,
}

/// Prints `message` as proto3 JSON (indented when `pretty`). `Any` payloads
/// are resolved in `schemas`; one whose type is not there is an error, as
/// in every implementation of the mapping.
pub fn print(
    message: &dyn MessageDyn,
    schemas: &SchemaSet,
    pretty: bool,
) -> Result<Printed, CodecError> {
    let mut printer = Printer {
        schemas,
        unknown_fields: 0,
    };
    let value = printer.message(message, "")?;
    let text = if pretty {
        serde_json::to_string_pretty(&value)
    } else {
        serde_json::to_string(&value)
    }
    .expect("a JSON tree always serializes");
    Ok(Printed {
        text,
        unknown_fields_left_out: printer.unknown_fields,
    })
}

struct Printer<'s> {
    schemas: &'s SchemaSet,
    unknown_fields: usize,
}

impl Printer<'_> {
    /// A message's JSON: its well-known form, or an object of its fields.
    fn message(&mut self, message: &dyn MessageDyn, path: &str) -> Result<Value, CodecError> {
        if let Some(value) = print_well_known(self, message, path)? {
            return Ok(value);
        }
        Ok(Value::Object(self.fields(message, path)?))
    }

    /// The fields of `message` as JSON members (what an `Any` adds its
    /// `@type` to).
    fn fields(
        &mut self,
        message: &dyn MessageDyn,
        path: &str,
    ) -> Result<Map<String, Value>, CodecError> {
        self.unknown_fields += message.unknown_fields_dyn().iter().count();
        let mut object = Map::new();
        for field in fields_in_number_order(&message.descriptor_dyn()) {
            let at = join(path, field.name());
            let value = match field.get_reflect(message) {
                ReflectFieldRef::Optional(value) => match present_value(&field, value.value()) {
                    Some(value) => self.value(value, &at)?,
                    None => continue,
                },
                ReflectFieldRef::Repeated(values) if values.is_empty() => continue,
                ReflectFieldRef::Repeated(values) => {
                    let mut items = Vec::with_capacity(values.len());
                    for (i, item) in values.into_iter().enumerate() {
                        items.push(self.value(item, &format!("{at}[{i}]"))?);
                    }
                    Value::Array(items)
                }
                ReflectFieldRef::Map(map) if map.is_empty() => continue,
                ReflectFieldRef::Map(map) => {
                    let mut entries = Map::new();
                    // Keys in order, as protoc's deterministic output
                    // sorts them: a map's own order changes run to run.
                    let mut sorted: Vec<_> = (&map).into_iter().collect();
                    sorted.sort_by_cached_key(|(key, _)| crate::text::map_key_order(key));
                    for (key, item) in sorted {
                        let key = map_key(&key);
                        let item = self.value(item, &format!("{at}[{key}]"))?;
                        entries.insert(key, item);
                    }
                    Value::Object(entries)
                }
            };
            object.insert(field.json_name().to_string(), value);
        }
        Ok(object)
    }

    fn value(&mut self, value: ReflectValueRef, path: &str) -> Result<Value, CodecError> {
        Ok(match value {
            ReflectValueRef::Message(m) => self.message(&*m, path)?,
            ReflectValueRef::Enum(descriptor, number) => {
                if descriptor.full_name() == "google.protobuf.NullValue" {
                    return Ok(Value::Null);
                }
                match descriptor.value_by_number(number) {
                    Some(v) => Value::String(v.name().to_string()),
                    None => Value::from(number),
                }
            }
            scalar => scalar_value(&scalar),
        })
    }
}

/// A scalar's JSON: 64-bit integers as strings, floats as numbers (or
/// `"NaN"`, `"Infinity"`, `"-Infinity"`), bytes as base64.
fn scalar_value(value: &ReflectValueRef) -> Value {
    match value {
        ReflectValueRef::U32(v) => Value::from(*v),
        ReflectValueRef::I32(v) => Value::from(*v),
        ReflectValueRef::U64(v) => Value::String(v.to_string()),
        ReflectValueRef::I64(v) => Value::String(v.to_string()),
        ReflectValueRef::F32(v) => float_value(f64::from(*v), crate::text::protoc_float(*v)),
        ReflectValueRef::F64(v) => float_value(*v, crate::text::protoc_double(*v)),
        ReflectValueRef::Bool(v) => Value::Bool(*v),
        ReflectValueRef::String(s) => Value::String(s.to_string()),
        ReflectValueRef::Bytes(b) => {
            Value::String(base64::engine::general_purpose::STANDARD.encode(b))
        }
        ReflectValueRef::Enum(_, number) => Value::from(*number),
        ReflectValueRef::Message(_) => unreachable!("messages are printed by Printer::message"),
    }
}

/// A float as a JSON number written in its shortest form for its width.
fn float_value(value: f64, shortest: String) -> Value {
    if value.is_nan() {
        return Value::String("NaN".into());
    }
    if value.is_infinite() {
        return Value::String(if value > 0.0 { "Infinity" } else { "-Infinity" }.into());
    }
    // The text form is the shortest that reads back as the same float
    // (`0.1` for a float 0.1, not 0.10000000149011612).
    shortest
        .parse::<f64>()
        .ok()
        .and_then(Number::from_f64)
        .map_or(Value::Null, Value::Number)
}

/// Map keys are JSON strings whatever their protobuf type.
fn map_key(key: &ReflectValueRef) -> String {
    match key {
        ReflectValueRef::String(s) => s.to_string(),
        ReflectValueRef::Bool(b) => b.to_string(),
        ReflectValueRef::I32(v) => v.to_string(),
        ReflectValueRef::I64(v) => v.to_string(),
        ReflectValueRef::U32(v) => v.to_string(),
        ReflectValueRef::U64(v) => v.to_string(),
        other => format!("{other:?}"),
    }
}

/// The JSON of a well-known message, or `None` for any other message.
fn print_well_known(
    printer: &mut Printer,
    message: &dyn MessageDyn,
    path: &str,
) -> Result<Option<Value>, CodecError> {
    let descriptor = message.descriptor_dyn();
    let name = descriptor.full_name();
    let value = match name {
        "google.protobuf.Timestamp" => Value::String(well_known::timestamp_text(message, path)?),
        "google.protobuf.Duration" => Value::String(well_known::duration_text(message, path)?),
        "google.protobuf.FieldMask" => Value::String(well_known::field_mask_text(message)),
        "google.protobuf.Struct" => struct_value(printer, message, path)?,
        "google.protobuf.ListValue" => list_value(printer, message, path)?,
        "google.protobuf.Value" => value_value(printer, message, path)?,
        "google.protobuf.Any" => any_value(printer, message, path)?,
        _ if well_known::WRAPPERS.contains(&name) => {
            let value = well_known::field(message, "value").expect("wrappers have a value field");
            scalar_value(&value.as_value_ref())
        }
        _ => return Ok(None),
    };
    Ok(Some(value))
}

fn struct_value(
    printer: &mut Printer,
    message: &dyn MessageDyn,
    path: &str,
) -> Result<Value, CodecError> {
    let descriptor = message.descriptor_dyn();
    let fields = descriptor.field_by_name("fields").expect("Struct.fields");
    let mut object = Map::new();
    let map = fields.get_map(message);
    let mut sorted: Vec<_> = (&map).into_iter().collect();
    sorted.sort_by_cached_key(|(key, _)| crate::text::map_key_order(key));
    for (key, value) in sorted {
        let (ReflectValueRef::String(key), ReflectValueRef::Message(value)) = (key, value) else {
            continue;
        };
        let value = printer.message(&*value, &format!("{path}[{key}]"))?;
        object.insert(key.to_string(), value);
    }
    Ok(Value::Object(object))
}

fn list_value(
    printer: &mut Printer,
    message: &dyn MessageDyn,
    path: &str,
) -> Result<Value, CodecError> {
    let descriptor = message.descriptor_dyn();
    let values = descriptor
        .field_by_name("values")
        .expect("ListValue.values");
    let mut items = Vec::new();
    for (i, value) in values.get_repeated(message).into_iter().enumerate() {
        if let ReflectValueRef::Message(value) = value {
            items.push(printer.message(&*value, &format!("{path}[{i}]"))?);
        }
    }
    Ok(Value::Array(items))
}

/// A `Value`: whichever of its oneof is set; none set is an error, as in
/// every implementation.
fn value_value(
    printer: &mut Printer,
    message: &dyn MessageDyn,
    path: &str,
) -> Result<Value, CodecError> {
    let descriptor = message.descriptor_dyn();
    for field in descriptor.fields() {
        let Some(value) = field.get_singular(message) else {
            continue;
        };
        return Ok(match value {
            ReflectValueRef::Enum(..) => Value::Null,
            ReflectValueRef::Message(m) => printer.message(&*m, path)?,
            ReflectValueRef::F64(v) if !v.is_finite() => {
                return Err(well_known::json_error(
                    path,
                    format!("Value holds {v}, which JSON has no number for"),
                ))
            }
            scalar => scalar_value(&scalar),
        });
    }
    Err(well_known::json_error(
        path,
        "a Value with no kind set".into(),
    ))
}

/// An `Any`: its message's JSON with `@type` first, or for a well-known
/// message, `{"@type": …, "value": its JSON}`.
fn any_value(
    printer: &mut Printer,
    message: &dyn MessageDyn,
    path: &str,
) -> Result<Value, CodecError> {
    let type_url = match well_known::field(message, "type_url") {
        Some(ReflectValueBox::String(url)) => url,
        _ => String::new(),
    };
    let bytes = match well_known::field(message, "value") {
        Some(ReflectValueBox::Bytes(bytes)) => bytes,
        _ => Vec::new(),
    };
    if type_url.is_empty() && bytes.is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    let Some(descriptor) = printer.schemas.message_of_type_url(&type_url) else {
        return Err(well_known::json_error(
            path,
            format!("Any of type `{type_url}`, which the loaded schemas do not declare; load its .proto to print it as JSON"),
        ));
    };
    let mut inner = descriptor.new_instance();
    inner.merge_from_bytes_dyn(&bytes).map_err(|e| {
        well_known::json_error(
            path,
            format!("Any of type `{type_url}` does not decode: {e}"),
        )
    })?;
    let mut object = Map::new();
    object.insert("@type".into(), Value::String(type_url));
    if well_known::is_well_known(&descriptor) {
        object.insert("value".into(), printer.message(&*inner, path)?);
    } else {
        object.extend(printer.fields(&*inner, path)?);
    }
    Ok(Value::Object(object))
}
