//! Reading the proto3 JSON mapping into a message of a user's schema:
//! `json_name` or the field's own name as keys, integers as numbers or
//! strings, enums by name or number, bytes as standard or URL-safe base64,
//! `null` as the default, and the well-known types' own forms. Unlike
//! OTLP/JSON, a key that names no field is an error, as the mapping's
//! parsers have it.

use protobuf::reflect::{
    FieldDescriptor, MessageDescriptor, ReflectValueBox, RuntimeFieldType, RuntimeType,
};
use protobuf::MessageDyn;
use serde_json::Value;

use crate::error::CodecError;
use crate::json::document::{kind, unbase64};
use crate::user::well_known::{self, join, json_error as error};
use crate::user::SchemaSet;

/// Parses proto3 JSON as a message of type `descriptor`; `Any` payloads are
/// resolved in `schemas`. Nesting is bounded by `max_depth`.
pub fn parse(
    text: &str,
    descriptor: &MessageDescriptor,
    schemas: &SchemaSet,
    max_depth: u32,
) -> Result<Box<dyn MessageDyn>, CodecError> {
    let value = crate::json::document::tree(text)?;
    let mut message = descriptor.new_instance();
    let mut filler = Filler { schemas, max_depth };
    filler.fill(&mut *message, &value, "", 0)?;
    Ok(message)
}

struct Filler<'s> {
    schemas: &'s SchemaSet,
    max_depth: u32,
}

impl Filler<'_> {
    fn fill(
        &mut self,
        message: &mut dyn MessageDyn,
        value: &Value,
        path: &str,
        depth: u32,
    ) -> Result<(), CodecError> {
        if depth > self.max_depth {
            return Err(error(
                path,
                format!("nesting deeper than the limit of {}", self.max_depth),
            ));
        }
        if parse_well_known(self, message, value, path, depth)? {
            return Ok(());
        }
        let Value::Object(members) = value else {
            return Err(error(
                path,
                format!("expected an object, found {}", kind(value)),
            ));
        };
        let descriptor = message.descriptor_dyn();
        for (key, item) in members {
            let Some(field) = field_by_key(&descriptor, key) else {
                return Err(error(
                    path,
                    format!("{} has no field `{key}`", descriptor.full_name()),
                ));
            };
            if item.is_null() && !is_value_field(&field) {
                continue;
            }
            self.field(message, &field, item, &join(path, key), depth)?;
        }
        Ok(())
    }

    fn field(
        &mut self,
        message: &mut dyn MessageDyn,
        field: &FieldDescriptor,
        value: &Value,
        path: &str,
        depth: u32,
    ) -> Result<(), CodecError> {
        match field.runtime_field_type() {
            RuntimeFieldType::Singular(t) => {
                let boxed = self.element(&t, field, value, path, depth)?;
                field.set_singular_field(message, boxed);
            }
            RuntimeFieldType::Repeated(t) => {
                let Value::Array(items) = value else {
                    return Err(error(
                        path,
                        format!("expected an array, found {}", kind(value)),
                    ));
                };
                let mut boxed = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    boxed.push(self.element(&t, field, item, &format!("{path}[{i}]"), depth)?);
                }
                let mut repeated = field.mut_repeated(message);
                for item in boxed {
                    repeated.push(item);
                }
            }
            RuntimeFieldType::Map(key_type, value_type) => {
                let Value::Object(entries) = value else {
                    return Err(error(
                        path,
                        format!("expected an object, found {}", kind(value)),
                    ));
                };
                for (key, item) in entries {
                    let at = format!("{path}[{key}]");
                    let key = map_key(&key_type, key, &at)?;
                    let item = self.element(&value_type, field, item, &at, depth)?;
                    field.mut_map(message).insert(key, item);
                }
            }
        }
        Ok(())
    }

    fn element(
        &mut self,
        runtime: &RuntimeType,
        field: &FieldDescriptor,
        value: &Value,
        path: &str,
        depth: u32,
    ) -> Result<ReflectValueBox, CodecError> {
        match runtime {
            RuntimeType::Message(descriptor) => {
                let mut inner = descriptor.new_instance();
                self.fill(&mut *inner, value, path, depth + 1)?;
                Ok(ReflectValueBox::Message(inner))
            }
            RuntimeType::Enum(descriptor) => {
                if descriptor.full_name() == "google.protobuf.NullValue" {
                    return Ok(ReflectValueBox::Enum(descriptor.clone(), 0));
                }
                let number = match value {
                    Value::String(name) => descriptor.value_by_name(name).map(|v| v.value()),
                    Value::Number(n) => n.as_i64().and_then(|n| i32::try_from(n).ok()),
                    _ => None,
                };
                let number = number.ok_or_else(|| {
                    error(
                        path,
                        format!("{value} is not a value of {}", descriptor.full_name()),
                    )
                })?;
                Ok(ReflectValueBox::Enum(descriptor.clone(), number))
            }
            scalar => self.typed_scalar(scalar, value, path).map_err(|e| match e {
                CodecError::Json { .. } => e,
                other => error(path, format!("{} ({other})", field.name())),
            }),
        }
    }

    /// The value of a singular scalar field (what wrappers hold).
    fn scalar(
        &mut self,
        field: &FieldDescriptor,
        value: &Value,
        path: &str,
    ) -> Result<ReflectValueBox, CodecError> {
        let RuntimeFieldType::Singular(t) = field.runtime_field_type() else {
            return Err(error(path, "expected a singular field".into()));
        };
        self.element(&t, field, value, path, 0)
    }

    fn typed_scalar(
        &self,
        runtime: &RuntimeType,
        value: &Value,
        path: &str,
    ) -> Result<ReflectValueBox, CodecError> {
        let wrong = || error(path, format!("{value} is not a {runtime}"));
        Ok(match runtime {
            RuntimeType::I32 => ReflectValueBox::I32(integer(value).ok_or_else(wrong)?),
            RuntimeType::I64 => ReflectValueBox::I64(integer(value).ok_or_else(wrong)?),
            RuntimeType::U32 => ReflectValueBox::U32(integer(value).ok_or_else(wrong)?),
            RuntimeType::U64 => ReflectValueBox::U64(integer(value).ok_or_else(wrong)?),
            RuntimeType::F32 => {
                let v = float(value).ok_or_else(wrong)?;
                if v.is_finite() && v.abs() > f64::from(f32::MAX) {
                    return Err(wrong());
                }
                ReflectValueBox::F32(v as f32)
            }
            RuntimeType::F64 => ReflectValueBox::F64(float(value).ok_or_else(wrong)?),
            RuntimeType::Bool => ReflectValueBox::Bool(value.as_bool().ok_or_else(wrong)?),
            RuntimeType::String => {
                ReflectValueBox::String(value.as_str().ok_or_else(wrong)?.into())
            }
            RuntimeType::VecU8 => {
                ReflectValueBox::Bytes(value.as_str().and_then(unbase64).ok_or_else(wrong)?)
            }
            RuntimeType::Enum(_) | RuntimeType::Message(_) => return Err(wrong()),
        })
    }

    /// A `Struct` from a JSON object.
    fn fill_struct(
        &mut self,
        message: &mut dyn MessageDyn,
        value: &Value,
        path: &str,
        depth: u32,
    ) -> Result<(), CodecError> {
        let wrapped = serde_json::json!({ "fields": value });
        if !value.is_object() {
            return Err(error(
                path,
                format!("expected an object, found {}", kind(value)),
            ));
        }
        self.fill_plain(message, &wrapped, path, depth)
    }

    /// A `ListValue` from a JSON array.
    fn fill_list(
        &mut self,
        message: &mut dyn MessageDyn,
        value: &Value,
        path: &str,
        depth: u32,
    ) -> Result<(), CodecError> {
        if !value.is_array() {
            return Err(error(
                path,
                format!("expected an array, found {}", kind(value)),
            ));
        }
        self.fill_plain(
            message,
            &serde_json::json!({ "values": value }),
            path,
            depth,
        )
    }

    /// A `Value` from any JSON.
    fn fill_value(
        &mut self,
        message: &mut dyn MessageDyn,
        value: &Value,
        path: &str,
        depth: u32,
    ) -> Result<(), CodecError> {
        let (name, inner) = match value {
            Value::Null => ("null_value", Value::from(0)),
            Value::Bool(_) => ("bool_value", value.clone()),
            Value::Number(_) => ("number_value", value.clone()),
            Value::String(_) => ("string_value", value.clone()),
            Value::Array(_) => ("list_value", value.clone()),
            Value::Object(_) => ("struct_value", value.clone()),
        };
        let descriptor = message.descriptor_dyn();
        let field = descriptor.field_by_name(name).expect("a kind of Value");
        self.field(message, &field, &inner, path, depth + 1)
    }

    /// An `Any` from `{"@type": …, fields…}` (or `"value"` for a
    /// well-known payload), its type found in the loaded schemas.
    fn fill_any(
        &mut self,
        message: &mut dyn MessageDyn,
        value: &Value,
        path: &str,
        depth: u32,
    ) -> Result<(), CodecError> {
        let Value::Object(members) = value else {
            return Err(error(
                path,
                format!("expected an object, found {}", kind(value)),
            ));
        };
        if members.is_empty() {
            return Ok(());
        }
        let Some(Value::String(type_url)) = members.get("@type") else {
            return Err(error(path, "an Any without its \"@type\"".into()));
        };
        let descriptor = self.schemas.message_of_type_url(type_url).ok_or_else(|| {
            error(
                path,
                format!("Any of type `{type_url}`, which the loaded schemas do not declare"),
            )
        })?;
        let mut inner = descriptor.new_instance();
        if well_known::is_well_known(&descriptor) {
            let payload = members.get("value").unwrap_or(&Value::Null);
            self.fill(&mut *inner, payload, path, depth + 1)?;
        } else {
            let mut rest = members.clone();
            rest.remove("@type");
            self.fill(&mut *inner, &Value::Object(rest), path, depth + 1)?;
        }
        let bytes = inner
            .write_to_bytes_dyn()
            .map_err(|e| error(path, format!("Any payload does not encode: {e}")))?;
        let any = message.descriptor_dyn();
        let set = |message: &mut dyn MessageDyn, name: &str, value: ReflectValueBox| {
            any.field_by_name(name)
                .expect("Any's fields")
                .set_singular_field(message, value);
        };
        set(
            message,
            "type_url",
            ReflectValueBox::String(type_url.clone()),
        );
        set(message, "value", ReflectValueBox::Bytes(bytes));
        Ok(())
    }

    /// A message filled as an ordinary message (no well-known form).
    fn fill_plain(
        &mut self,
        message: &mut dyn MessageDyn,
        value: &Value,
        path: &str,
        depth: u32,
    ) -> Result<(), CodecError> {
        let Value::Object(members) = value else {
            unreachable!("callers wrap the value in an object")
        };
        let descriptor = message.descriptor_dyn();
        for (key, item) in members {
            let field = descriptor
                .field_by_name(key)
                .expect("the wrapper's own field");
            self.field(message, &field, item, path, depth + 1)?;
        }
        Ok(())
    }
}

fn field_by_key(descriptor: &MessageDescriptor, key: &str) -> Option<FieldDescriptor> {
    descriptor
        .fields()
        .find(|f| f.json_name() == key)
        .or_else(|| descriptor.field_by_name(key))
}

/// A `google.protobuf.Value` field takes `null` as a value (its null kind).
fn is_value_field(field: &FieldDescriptor) -> bool {
    match field.runtime_field_type() {
        RuntimeFieldType::Singular(RuntimeType::Message(m)) => {
            m.full_name() == "google.protobuf.Value"
        }
        _ => false,
    }
}

fn map_key(runtime: &RuntimeType, key: &str, path: &str) -> Result<ReflectValueBox, CodecError> {
    let wrong = || error(path, format!("map key `{key}` is not a {runtime}"));
    let number = Value::String(key.to_string());
    Ok(match runtime {
        RuntimeType::String => ReflectValueBox::String(key.to_string()),
        RuntimeType::Bool => match key {
            "true" => ReflectValueBox::Bool(true),
            "false" => ReflectValueBox::Bool(false),
            _ => return Err(wrong()),
        },
        RuntimeType::I32 => ReflectValueBox::I32(integer(&number).ok_or_else(wrong)?),
        RuntimeType::I64 => ReflectValueBox::I64(integer(&number).ok_or_else(wrong)?),
        RuntimeType::U32 => ReflectValueBox::U32(integer(&number).ok_or_else(wrong)?),
        RuntimeType::U64 => ReflectValueBox::U64(integer(&number).ok_or_else(wrong)?),
        _ => return Err(wrong()),
    })
}

/// An integer given as a JSON number (integral, possibly written with an
/// exponent) or as a string holding one.
fn integer<T: TryFrom<i128>>(value: &Value) -> Option<T> {
    let wide: i128 = match value {
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(v), _) => i128::from(v),
            (_, Some(v)) => i128::from(v),
            _ => whole(n.as_f64()?)?,
        },
        Value::String(s) => match s.parse::<i128>() {
            Ok(v) => v,
            Err(_) => whole(s.parse::<f64>().ok()?)?,
        },
        _ => return None,
    };
    T::try_from(wide).ok()
}

fn whole(v: f64) -> Option<i128> {
    (v.is_finite() && v.fract() == 0.0 && v.abs() < 2e38).then_some(v as i128)
}

fn float(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => match s.as_str() {
            "NaN" => Some(f64::NAN),
            "Infinity" => Some(f64::INFINITY),
            "-Infinity" => Some(f64::NEG_INFINITY),
            s => s.parse().ok().filter(|v: &f64| v.is_finite()),
        },
        _ => None,
    }
}

/// Fills a well-known message from its JSON form; `false` for any other
/// message (the caller fills it field by field).
fn parse_well_known(
    filler: &mut Filler,
    message: &mut dyn MessageDyn,
    value: &Value,
    path: &str,
    depth: u32,
) -> Result<bool, CodecError> {
    let descriptor = message.descriptor_dyn();
    let name = descriptor.full_name().to_string();
    match name.as_str() {
        "google.protobuf.Timestamp" => {
            let (seconds, nanos) = well_known::parse_timestamp(well_known::text_of(value, path)?)
                .ok_or_else(|| {
                well_known::json_error(path, format!("{value} is not an RFC 3339 timestamp"))
            })?;
            well_known::set_pair(message, seconds, nanos);
        }
        "google.protobuf.Duration" => {
            let (seconds, nanos) = well_known::parse_duration(well_known::text_of(value, path)?)
                .ok_or_else(|| {
                    well_known::json_error(path, format!("{value} is not a duration like \"1.5s\""))
                })?;
            well_known::set_pair(message, seconds, nanos);
        }
        "google.protobuf.FieldMask" => {
            let paths = descriptor.field_by_name("paths").expect("FieldMask.paths");
            let mut repeated = paths.mut_repeated(message);
            for part in well_known::text_of(value, path)?
                .split(',')
                .filter(|p| !p.is_empty())
            {
                repeated.push(ReflectValueBox::String(well_known::snake_case(part)));
            }
        }
        "google.protobuf.Struct" => filler.fill_struct(message, value, path, depth)?,
        "google.protobuf.ListValue" => filler.fill_list(message, value, path, depth)?,
        "google.protobuf.Value" => filler.fill_value(message, value, path, depth)?,
        "google.protobuf.Any" => filler.fill_any(message, value, path, depth)?,
        _ if well_known::WRAPPERS.contains(&name.as_str()) => {
            let field = descriptor
                .field_by_name("value")
                .expect("wrappers have a value field");
            let boxed = filler.scalar(&field, value, path)?;
            field.set_singular_field(message, boxed);
        }
        _ => return Ok(false),
    }
    Ok(true)
}
