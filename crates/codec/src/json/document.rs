//! OTLP/JSON: the OpenTelemetry protocol's JSON encoding, which differs from
//! the plain proto3 JSON mapping. See "OTLP/JSON rules" in `docs/codec.md` for each rule.
//!
//! Output: lowerCamelCase keys; `trace_id`, `span_id` and `profile_id` as
//! lowercase hex; enums as integers; 64-bit integers as decimal strings;
//! other bytes as base64; fields at their default value left out.
//! Input: lowerCamelCase or original names; ids as hex; enums as integers
//! or names; 64-bit integers as numbers or strings; unknown keys dropped
//! with a warning (and v1.8.0's profile key names read as today's);
//! `null` as absent; a leading UTF-8 byte order mark skipped.

use std::cell::RefCell;
use std::io::Write;
use std::rc::Rc;

use base64::Engine as _;
use protobuf::reflect::{
    FieldDescriptor, MessageDescriptor, ReflectFieldRef, ReflectRepeatedRef, ReflectValueBox,
    ReflectValueRef, RuntimeFieldType, RuntimeType,
};
use protobuf::MessageDyn;
use rustc_hash::FxHashMap;
use serde_json::{Map, Number, Value};

use crate::error::{CodecError, Warning, WarningKind};
use crate::registry::fields_in_number_order;

/// Bytes fields that OTLP/JSON writes as hex instead of base64.
const HEX_FIELDS: [&str; 3] = ["trace_id", "span_id", "profile_id"];

fn is_hex_field(field: &FieldDescriptor) -> bool {
    is_hex_name(field.name())
}

/// Whether a bytes field of this name is written as hex.
pub(crate) fn is_hex_name(name: &str) -> bool {
    HEX_FIELDS.contains(&name)
}

/// Prints a message as OTLP/JSON; `pretty` indents it. Written as the
/// message is walked: the text of [`message_value`], without the tree.
pub fn print(message: &dyn MessageDyn, pretty: bool) -> String {
    let mut text = Vec::new();
    print_to(message, pretty, &mut text).expect("a message always serializes");
    String::from_utf8(text).expect("serde_json writes UTF-8")
}

/// [`print()`] written to `out` as it is made (give it a buffered writer),
/// without the whole text in memory. Fails only as `out` fails.
pub fn print_to(
    message: &dyn MessageDyn,
    pretty: bool,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let orders = FieldOrders::default();
    let json = MessageJson(message, &orders);
    let mut chunks = Chunks {
        buffer: Vec::with_capacity(CHUNK + CHUNK / 4),
        out,
    };
    let written = match pretty {
        true => serde_json::to_writer_pretty(&mut chunks, &json),
        false => serde_json::to_writer(&mut chunks, &json),
    };
    written.map_err(std::io::Error::from)?;
    chunks.out.write_all(&chunks.buffer)
}

/// Bytes gathered before a write to the output.
const CHUNK: usize = 1 << 16;

/// serde_json writes a token at a time; tokens gathered here, through
/// calls the compiler can inline, reach the output (a `dyn Write`) a chunk
/// at a time. Writing them straight through took a third of the time.
struct Chunks<'a> {
    buffer: Vec<u8>,
    out: &'a mut dyn Write,
}

impl Write for Chunks<'_> {
    #[inline]
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.write_all(bytes)?;
        Ok(bytes.len())
    }

    #[inline]
    fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        // Most tokens are a few bytes (indentation two at a time): copied
        // in a loop, not through a call to memcpy each.
        match bytes.len() {
            0..=8 => self.buffer.extend(bytes.iter().copied()),
            _ => self.buffer.extend_from_slice(bytes),
        }
        if self.buffer.len() >= CHUNK {
            self.out.write_all(&self.buffer)?;
            self.buffer.clear();
        }
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A message serialized as [`message_value`] builds it: fields in number
/// order, defaults left out, values as [`scalar`] writes them.
struct MessageJson<'a>(&'a dyn MessageDyn, &'a FieldOrders);

/// One value of `field`.
struct ValueJson<'a>(&'a FieldDescriptor, ReflectValueRef<'a>, &'a FieldOrders);

/// The values of a repeated field, as an array.
struct RepeatedJson<'a>(&'a FieldDescriptor, ReflectRepeatedRef<'a>, &'a FieldOrders);

/// Each message type's fields in number order, sorted once per type
/// rather than once per message (a million samples are a million
/// messages of one type).
#[derive(Default)]
struct FieldOrders(RefCell<FxHashMap<MessageDescriptor, Rc<[FieldDescriptor]>>>);

impl FieldOrders {
    fn of(&self, descriptor: MessageDescriptor) -> Rc<[FieldDescriptor]> {
        let mut orders = self.0.borrow_mut();
        let fields = (orders.entry(descriptor))
            .or_insert_with_key(|descriptor| fields_in_number_order(descriptor).into());
        Rc::clone(fields)
    }
}

impl serde::Serialize for MessageJson<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let MessageJson(message, orders) = *self;
        let mut map = serializer.serialize_map(None)?;
        for field in orders.of(message.descriptor_dyn()).iter() {
            match field.get_reflect(message) {
                ReflectFieldRef::Optional(v) => {
                    if let Some(v) = v.value() {
                        map.serialize_entry(field.json_name(), &ValueJson(field, v, orders))?;
                    }
                }
                ReflectFieldRef::Repeated(values) if values.is_empty() => {}
                ReflectFieldRef::Repeated(values) => {
                    map.serialize_entry(field.json_name(), &RepeatedJson(field, values, orders))?;
                }
                ReflectFieldRef::Map(m) if m.is_empty() => {}
                // Maps are rare (none in the profile schemas): this
                // message's tree, as `message_value` builds it.
                ReflectFieldRef::Map(_) => {
                    let Value::Object(tree) = message_value(message) else {
                        unreachable!("a message is an object")
                    };
                    map.serialize_entry(field.json_name(), &tree[field.json_name()])?;
                }
            }
        }
        map.end()
    }
}

impl serde::Serialize for RepeatedJson<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let RepeatedJson(field, values, orders) = self;
        let mut seq = serializer.serialize_seq(Some(values.len()))?;
        for i in 0..values.len() {
            seq.serialize_element(&ValueJson(field, values.get(i), orders))?;
        }
        seq.end()
    }
}

impl serde::Serialize for ValueJson<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let ValueJson(field, value, orders) = self;
        match value {
            ReflectValueRef::Message(m) => MessageJson(&**m, orders).serialize(serializer),
            ReflectValueRef::U32(v) => serializer.serialize_u32(*v),
            ReflectValueRef::I32(v) => serializer.serialize_i32(*v),
            ReflectValueRef::U64(v) => serializer.collect_str(v),
            ReflectValueRef::I64(v) => serializer.collect_str(v),
            ReflectValueRef::F32(v) => float(f64::from(*v)).serialize(serializer),
            ReflectValueRef::F64(v) => float(*v).serialize(serializer),
            ReflectValueRef::Bool(v) => serializer.serialize_bool(*v),
            ReflectValueRef::String(s) => serializer.serialize_str(s),
            ReflectValueRef::Bytes(b) if is_hex_field(field) => serializer.serialize_str(&hex(b)),
            ReflectValueRef::Bytes(b) => {
                serializer.serialize_str(&base64::engine::general_purpose::STANDARD.encode(b))
            }
            ReflectValueRef::Enum(_, number) => serializer.serialize_i32(*number),
        }
    }
}

/// A message as a JSON value.
pub fn message_value(message: &dyn MessageDyn) -> Value {
    let mut object = Map::new();
    for field in fields_in_number_order(&message.descriptor_dyn()) {
        let value = match field.get_reflect(message) {
            ReflectFieldRef::Optional(v) => match v.value() {
                Some(v) => scalar_or_message(&field, v),
                None => continue,
            },
            ReflectFieldRef::Repeated(values) if values.is_empty() => continue,
            ReflectFieldRef::Repeated(values) => Value::Array(
                (0..values.len())
                    .map(|i| scalar_or_message(&field, values.get(i)))
                    .collect(),
            ),
            ReflectFieldRef::Map(map) if map.is_empty() => continue,
            ReflectFieldRef::Map(map) => {
                let mut entries: Vec<(String, Value)> = (&map)
                    .into_iter()
                    .map(|(k, v)| (map_key(&k), scalar_or_message(&field, v)))
                    .collect();
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                Value::Object(entries.into_iter().collect())
            }
        };
        object.insert(field.json_name().to_string(), value);
    }
    Value::Object(object)
}

fn map_key(key: &ReflectValueRef) -> String {
    match key {
        ReflectValueRef::String(s) => s.to_string(),
        other => match scalar(None, other.clone()) {
            Value::String(s) => s,
            v => v.to_string(),
        },
    }
}

fn scalar_or_message(field: &FieldDescriptor, value: ReflectValueRef) -> Value {
    match value {
        ReflectValueRef::Message(m) => message_value(&*m),
        other => scalar(Some(field), other),
    }
}

fn float(value: f64) -> Value {
    if value.is_nan() {
        Value::String("NaN".into())
    } else if value.is_infinite() {
        Value::String(if value > 0.0 { "Infinity" } else { "-Infinity" }.into())
    } else {
        Number::from_f64(value).map(Value::Number).expect("finite")
    }
}

fn scalar(field: Option<&FieldDescriptor>, value: ReflectValueRef) -> Value {
    match value {
        ReflectValueRef::U32(v) => Value::from(v),
        ReflectValueRef::I32(v) => Value::from(v),
        ReflectValueRef::U64(v) => Value::String(v.to_string()),
        ReflectValueRef::I64(v) => Value::String(v.to_string()),
        ReflectValueRef::F32(v) => float(f64::from(v)),
        ReflectValueRef::F64(v) => float(v),
        ReflectValueRef::Bool(v) => Value::Bool(v),
        ReflectValueRef::String(s) => Value::String(s.to_string()),
        ReflectValueRef::Bytes(b) if field.is_some_and(is_hex_field) => Value::String(hex(b)),
        ReflectValueRef::Bytes(b) => {
            Value::String(base64::engine::general_purpose::STANDARD.encode(b))
        }
        ReflectValueRef::Enum(_, number) => Value::from(number),
        ReflectValueRef::Message(_) => unreachable!("handled by scalar_or_message"),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Parses OTLP/JSON into a new message of type `descriptor`.
pub fn parse(
    text: &str,
    descriptor: &MessageDescriptor,
    max_depth: u32,
) -> Result<Box<dyn MessageDyn>, CodecError> {
    parse_with_warnings(text, descriptor, max_depth).map(|(message, _)| message)
}

/// [`parse()`], with a warning for every key that names no field of its
/// message (its value is dropped: OTLP receivers ignore such keys, but a
/// reader should know what it lost) and for the key names of an older
/// OTLP profiles v1development revision read as today's (v1.8.0's
/// `sample` and `line`, renamed `samples` and `lines` in v1.9.0). JSON of
/// v1.7.0 or older, whose profiles have no such renaming, is an error.
pub fn parse_with_warnings(
    text: &str,
    descriptor: &MessageDescriptor,
    max_depth: u32,
) -> Result<(Box<dyn MessageDyn>, Vec<Warning>), CodecError> {
    let value = tree(text)?;
    let mut message = descriptor.new_instance();
    let mut reader = Reader {
        max_depth,
        path: Vec::new(),
        warnings: Vec::new(),
        renamed: Vec::new(),
    };
    reader.fill(&mut *message, &value)?;
    let mut warnings = reader.warnings;
    if !reader.renamed.is_empty() {
        let keys = reader.renamed.iter().map(|(old, _)| *old).collect();
        warnings.insert(
            0,
            Warning {
                offset: None,
                path: String::new(),
                kind: WarningKind::JsonKeysOfOlderRevision { keys },
            },
        );
    }
    Ok((message, warnings))
}

/// OTLP profiles v1development keys that v1.9.0 renamed: (message, key in
/// v1.8.0, field today).
const RENAMED_KEYS: [(&str, &str, &str); 2] = [
    (
        "opentelemetry.proto.profiles.v1development.Profile",
        "sample",
        "samples",
    ),
    (
        "opentelemetry.proto.profiles.v1development.Location",
        "line",
        "lines",
    ),
];

/// Keys of OTLP profiles v1development v1.4.0 to v1.7.0 that later
/// revisions dropped: JSON with them holds samples as location slices,
/// which no renaming turns into stacks.
const KEYS_OF_V1_7_AND_OLDER: [&str; 4] = [
    "locationsStartIndex",
    "locationsLength",
    "locationIndices",
    "attributeUnits",
];

struct Reader {
    max_depth: u32,
    /// The path being read, for errors.
    path: Vec<String>,
    /// Keys dropped, as warnings.
    warnings: Vec<Warning>,
    /// Older revisions' keys read as today's fields: (old key, field).
    renamed: Vec<(&'static str, &'static str)>,
}

impl Reader {
    fn error(&self, detail: impl Into<String>) -> CodecError {
        let mut path = String::new();
        for part in &self.path {
            if !part.starts_with('[') && !path.is_empty() {
                path.push('.');
            }
            path.push_str(part);
        }
        CodecError::Json {
            path,
            line: 0,
            column: 0,
            detail: detail.into(),
        }
    }

    fn fill(&mut self, message: &mut dyn MessageDyn, value: &Value) -> Result<(), CodecError> {
        if self.path.len() as u32 > self.max_depth {
            return Err(self.error(format!(
                "nesting deeper than the limit of {}",
                self.max_depth
            )));
        }
        let Value::Object(object) = value else {
            return Err(self.error(format!("expected an object, found {}", kind(value))));
        };
        let descriptor = message.descriptor_dyn();
        for (key, value) in object {
            let field = descriptor
                .field_by_name_or_json_name(key)
                .or_else(|| self.renamed_field(&descriptor, key));
            // Unknown keys are dropped, as OTLP receivers drop them, and
            // said so.
            let Some(field) = field else {
                self.unknown_key(&descriptor, key)?;
                continue;
            };
            if value.is_null() {
                continue;
            }
            self.path.push(key.clone());
            self.field(message, &field, value)?;
            self.path.pop();
        }
        Ok(())
    }

    /// The field an older revision's `key` names in `descriptor`'s
    /// message, noted for the warning.
    fn renamed_field(
        &mut self,
        descriptor: &MessageDescriptor,
        key: &str,
    ) -> Option<FieldDescriptor> {
        let (_, old, field) = RENAMED_KEYS
            .iter()
            .find(|(message, old, _)| *old == key && descriptor.full_name() == *message)?;
        if !self.renamed.iter().any(|(seen, _)| seen == old) {
            self.renamed.push((old, field));
        }
        descriptor.field_by_name(field)
    }

    /// A key that names no field: a warning, or, for the keys of OTLP
    /// v1development v1.7.0 and older, an error (see [`parse_with_warnings`]).
    fn unknown_key(&mut self, descriptor: &MessageDescriptor, key: &str) -> Result<(), CodecError> {
        let development = descriptor.full_name().contains(".profiles.v1development.");
        if development && KEYS_OF_V1_7_AND_OLDER.contains(&key) {
            self.path.push(key.to_string());
            let error = self.error(
                "OTLP/JSON of opentelemetry-proto v1.7.0 or older (samples as location \
                 slices): not read; protoprof reads these revisions in binary form",
            );
            self.path.pop();
            return Err(error);
        }
        self.path.push(key.to_string());
        let CodecError::Json { path, .. } = self.error("") else {
            unreachable!("Reader::error makes JSON errors")
        };
        self.path.pop();
        self.warnings.push(Warning {
            offset: None,
            path,
            kind: WarningKind::UnknownJsonKey {
                message: descriptor.full_name().to_string(),
            },
        });
        Ok(())
    }

    fn field(
        &mut self,
        message: &mut dyn MessageDyn,
        field: &FieldDescriptor,
        value: &Value,
    ) -> Result<(), CodecError> {
        match field.runtime_field_type() {
            RuntimeFieldType::Singular(t) => {
                let v = self.value(field, &t, value)?;
                field.set_singular_field(message, v);
            }
            RuntimeFieldType::Repeated(t) => {
                let Value::Array(items) = value else {
                    return Err(self.error(format!("expected an array, found {}", kind(value))));
                };
                for (i, item) in items.iter().enumerate() {
                    self.path.push(format!("[{i}]"));
                    let v = self.value(field, &t, item)?;
                    field.mut_repeated(message).push(v);
                    self.path.pop();
                }
            }
            RuntimeFieldType::Map(key_type, value_type) => {
                let Value::Object(entries) = value else {
                    return Err(self.error(format!("expected an object, found {}", kind(value))));
                };
                for (k, v) in entries {
                    self.path.push(format!("[{k:?}]"));
                    let key = self.value(field, &key_type, &Value::String(k.clone()))?;
                    let value = self.value(field, &value_type, v)?;
                    field.mut_map(message).insert(key, value);
                    self.path.pop();
                }
            }
        }
        Ok(())
    }

    fn value(
        &mut self,
        field: &FieldDescriptor,
        runtime: &RuntimeType,
        value: &Value,
    ) -> Result<ReflectValueBox, CodecError> {
        let wrong =
            |this: &Self, what: &str| this.error(format!("expected {what}, found {}", kind(value)));
        Ok(match runtime {
            RuntimeType::Message(descriptor) => {
                let mut nested = descriptor.new_instance();
                self.fill(&mut *nested, value)?;
                ReflectValueBox::Message(nested)
            }
            RuntimeType::String => match value {
                Value::String(s) => ReflectValueBox::String(s.clone()),
                _ => return Err(wrong(self, "a string")),
            },
            RuntimeType::VecU8 => match value {
                Value::String(s) if is_hex_field(field) => ReflectValueBox::Bytes(
                    unhex(s)
                        .ok_or_else(|| self.error(format!("expected hex digits, found {s:?}")))?,
                ),
                Value::String(s) => ReflectValueBox::Bytes(
                    unbase64(s)
                        .ok_or_else(|| self.error(format!("expected base64, found {s:?}")))?,
                ),
                _ => return Err(wrong(self, "a string")),
            },
            RuntimeType::Bool => match value {
                Value::Bool(b) => ReflectValueBox::Bool(*b),
                Value::String(s) if s == "true" || s == "false" => {
                    ReflectValueBox::Bool(s == "true")
                }
                _ => return Err(wrong(self, "true or false")),
            },
            RuntimeType::Enum(e) => match value {
                Value::String(name) => match e.value_by_name(name) {
                    Some(v) => ReflectValueBox::Enum(e.clone(), v.value()),
                    None => {
                        return Err(
                            self.error(format!("{name:?} is not a value of {}", e.full_name()))
                        )
                    }
                },
                _ => ReflectValueBox::Enum(e.clone(), self.integer(value)?),
            },
            RuntimeType::I32 => ReflectValueBox::I32(self.integer(value)?),
            RuntimeType::I64 => ReflectValueBox::I64(self.integer(value)?),
            RuntimeType::U32 => ReflectValueBox::U32(self.integer(value)?),
            RuntimeType::U64 => ReflectValueBox::U64(self.integer(value)?),
            RuntimeType::F64 => ReflectValueBox::F64(self.float(value)?),
            RuntimeType::F32 => ReflectValueBox::F32(self.float(value)? as f32),
        })
    }

    /// An integer from a JSON number or a decimal string, in range for `T`.
    fn integer<T: TryFrom<i128>>(&self, value: &Value) -> Result<T, CodecError> {
        let wide: Option<i128> = match value {
            Value::Number(n) => n
                .as_i64()
                .map(i128::from)
                .or_else(|| n.as_u64().map(i128::from))
                .or_else(|| {
                    n.as_f64()
                        .filter(|f| f.fract() == 0.0 && f.abs() < 1e38)
                        .map(|f| f as i128)
                }),
            Value::String(s) => s.trim().parse::<i128>().ok(),
            _ => None,
        };
        let wide =
            wide.ok_or_else(|| self.error(format!("expected an integer, found {}", kind(value))))?;
        T::try_from(wide).map_err(|_| self.error(format!("{wide} is out of range for this field")))
    }

    fn float(&self, value: &Value) -> Result<f64, CodecError> {
        match value {
            Value::Number(n) => n.as_f64().ok_or_else(|| self.error("number out of range")),
            Value::String(s) => match s.as_str() {
                "NaN" => Ok(f64::NAN),
                "Infinity" => Ok(f64::INFINITY),
                "-Infinity" => Ok(f64::NEG_INFINITY),
                other => other
                    .parse::<f64>()
                    .map_err(|_| self.error(format!("expected a number, found {other:?}"))),
            },
            _ => Err(self.error(format!("expected a number, found {}", kind(value)))),
        }
    }
}

/// What a JSON value is, for errors (`expected an array, found a string`).
pub(crate) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A JSON document's tree, a leading UTF-8 byte order mark skipped; a
/// syntax error says its line and column.
pub(crate) fn tree(text: &str) -> Result<Value, CodecError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    serde_json::from_str(text).map_err(|e| CodecError::Json {
        path: String::new(),
        line: e.line(),
        column: e.column(),
        detail: e.to_string(),
    })
}

pub(crate) fn unhex(text: &str) -> Option<Vec<u8>> {
    if text.len() % 2 != 0 {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

pub(crate) fn unbase64(text: &str) -> Option<Vec<u8>> {
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    [STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD]
        .iter()
        .find_map(|engine| engine.decode(text).ok())
}
