//! OTLP/JSON straight to protobuf bytes: the reader of `json.rs` without
//! its tree. serde_json's streaming parser hands each key and value to
//! code that knows, from the message descriptors, the field it is and
//! writes it on the wire; the bytes are then decoded as binary input is,
//! views included. A document of gigabytes needs its own size and the
//! bytes (about a third of it), not a boxed value per field.
//!
//! The rules are those of `json.rs` (see its module comment). Whatever this
//! path does not take — a syntax or type error, a map field, a group, a
//! key given twice, nesting past the limit — makes it return `None`, and
//! the caller parses with `json.rs`, which reads the same documents the
//! same way and reports errors with their paths.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

use protobuf::descriptor::field_descriptor_proto::Type;
use protobuf::reflect::{MessageDescriptor, RuntimeFieldType};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::binary::wire::{len_field_size, write_tag, write_varint, FIXED32, FIXED64, LEN, VARINT};
use crate::json::document::{is_hex_name, unbase64, unhex};

/// Transcodes OTLP/JSON `text` into the wire form of `descriptor`'s
/// message, or `None` when it cannot be read this way (see the module
/// comment; `json::parse` then reads it, or says what is wrong).
///
/// ```
/// use protobuf::{Message, MessageFull};
/// use protoprof_codec::json_to_binary;
/// use protoprof_model_otlp::opentelemetry::proto::profiles::v1development::ProfilesData;
///
/// let text = r#"{"dictionary": {"stringTable": ["", "cpu"]}}"#;
/// let bytes = json_to_binary(text, &ProfilesData::descriptor(), 100).unwrap();
/// let data = ProfilesData::parse_from_bytes(&bytes).unwrap();
/// assert_eq!(data.dictionary.string_table, ["", "cpu"]);
/// ```
pub fn to_binary(text: &str, descriptor: &MessageDescriptor, max_depth: u32) -> Option<Vec<u8>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let schema = Schema::for_message(descriptor)?;
    let mut out = Vec::with_capacity(text.len() / 3);
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let seed = MessageSeed {
        schema: &schema,
        message: 0,
        out: &mut out,
        depth: 0,
        max_depth,
    };
    seed.deserialize(&mut deserializer).ok()?;
    deserializer.end().ok()?;
    Some(out)
}

/// Every message reachable from a root: its fields by JSON and proto name.
struct Schema {
    messages: Vec<MessageFields>,
}

#[derive(Default)]
struct MessageFields {
    /// (name, field position): JSON names and proto names.
    by_name: Vec<(String, usize)>,
    fields: Vec<Field>,
}

impl MessageFields {
    /// The field a key names (messages have few fields: a scan beats a
    /// hash).
    fn position(&self, key: &str) -> Option<usize> {
        self.by_name
            .iter()
            .find(|(name, _)| name == key)
            .map(|&(_, at)| at)
    }
}

struct Field {
    number: u32,
    kind: Kind,
    repeated: bool,
}

enum Kind {
    Message(usize),
    String,
    Bytes {
        hex: bool,
    },
    Bool,
    Enum(protobuf::reflect::EnumDescriptor),
    /// Varint integers: (minimum, maximum, zigzag).
    Varint(i128, i128, bool),
    /// Fixed-width integers: (minimum, maximum, bytes).
    Fixed(i128, i128, u8),
    Float,
    Double,
}

impl Schema {
    /// Built once per root type; `None` for schemas with maps or groups.
    fn for_message(root: &MessageDescriptor) -> Option<Arc<Schema>> {
        static CACHE: OnceLock<Mutex<HashMap<String, Option<Arc<Schema>>>>> = OnceLock::new();
        let cache = CACHE.get_or_init(Default::default);
        let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .entry(root.full_name().to_string())
            .or_insert_with(|| Schema::build(root).map(Arc::new))
            .clone()
    }

    fn build(root: &MessageDescriptor) -> Option<Schema> {
        let mut index: HashMap<String, usize> = HashMap::new();
        let mut pending = vec![root.clone()];
        index.insert(root.full_name().to_string(), 0);
        let mut messages = Vec::new();
        while let Some(descriptor) = pending.pop() {
            let position = index[descriptor.full_name()];
            let mut fields = MessageFields::default();
            for field in descriptor.fields() {
                let repeated = match field.runtime_field_type() {
                    RuntimeFieldType::Singular(_) => false,
                    RuntimeFieldType::Repeated(_) => true,
                    RuntimeFieldType::Map(..) => return None,
                };
                let kind = match field.proto().type_() {
                    Type::TYPE_MESSAGE => {
                        let nested = field
                            .proto()
                            .type_name()
                            .trim_start_matches('.')
                            .to_string();
                        let next = index.len();
                        let at = *index.entry(nested).or_insert_with(|| {
                            pending.push(match field.runtime_field_type() {
                                RuntimeFieldType::Singular(t) | RuntimeFieldType::Repeated(t) => {
                                    match t {
                                        protobuf::reflect::RuntimeType::Message(m) => m,
                                        _ => unreachable!("a message field"),
                                    }
                                }
                                RuntimeFieldType::Map(..) => unreachable!("maps returned above"),
                            });
                            next
                        });
                        Kind::Message(at)
                    }
                    Type::TYPE_GROUP => return None,
                    t => scalar_kind(t, field.name(), &field)?,
                };
                let entry = fields.fields.len();
                fields.by_name.push((field.json_name().to_string(), entry));
                if field.name() != field.json_name() {
                    fields.by_name.push((field.name().to_string(), entry));
                }
                fields.fields.push(Field {
                    number: field.number() as u32,
                    kind,
                    repeated,
                });
            }
            if messages.len() <= position {
                messages.resize_with(position + 1, MessageFields::default);
            }
            messages[position] = fields;
        }
        Some(Schema { messages })
    }
}

fn scalar_kind(t: Type, name: &str, field: &protobuf::reflect::FieldDescriptor) -> Option<Kind> {
    let (i32min, i32max) = (i128::from(i32::MIN), i128::from(i32::MAX));
    let (i64min, i64max) = (i128::from(i64::MIN), i128::from(i64::MAX));
    Some(match t {
        Type::TYPE_STRING => Kind::String,
        Type::TYPE_BYTES => Kind::Bytes {
            hex: is_hex_name(name),
        },
        Type::TYPE_BOOL => Kind::Bool,
        Type::TYPE_ENUM => match field.runtime_field_type() {
            RuntimeFieldType::Singular(protobuf::reflect::RuntimeType::Enum(e))
            | RuntimeFieldType::Repeated(protobuf::reflect::RuntimeType::Enum(e)) => Kind::Enum(e),
            _ => return None,
        },
        Type::TYPE_INT32 => Kind::Varint(i32min, i32max, false),
        Type::TYPE_SINT32 => Kind::Varint(i32min, i32max, true),
        Type::TYPE_UINT32 => Kind::Varint(0, i128::from(u32::MAX), false),
        Type::TYPE_INT64 => Kind::Varint(i64min, i64max, false),
        Type::TYPE_SINT64 => Kind::Varint(i64min, i64max, true),
        Type::TYPE_UINT64 => Kind::Varint(0, i128::from(u64::MAX), false),
        Type::TYPE_FIXED32 => Kind::Fixed(0, i128::from(u32::MAX), 4),
        Type::TYPE_SFIXED32 => Kind::Fixed(i32min, i32max, 4),
        Type::TYPE_FIXED64 => Kind::Fixed(0, i128::from(u64::MAX), 8),
        Type::TYPE_SFIXED64 => Kind::Fixed(i64min, i64max, 8),
        Type::TYPE_FLOAT => Kind::Float,
        Type::TYPE_DOUBLE => Kind::Double,
        Type::TYPE_MESSAGE | Type::TYPE_GROUP => return None,
    })
}

/// Writes `tag`, then what `content` writes, length-prefixed.
fn length_delimited<E>(
    out: &mut Vec<u8>,
    number: u32,
    content: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
) -> Result<(), E> {
    write_tag(out, number, LEN);
    let at = out.len();
    out.push(0); // the length, one byte if it fits
    content(out)?;
    let len = out.len() - at - 1;
    if len < 0x80 {
        out[at] = len as u8;
    } else {
        let mut prefix = Vec::with_capacity(10);
        write_varint(&mut prefix, len as u64);
        out.splice(at..at + 1, prefix);
    }
    Ok(())
}

/// One message: an object.
struct MessageSeed<'a> {
    schema: &'a Schema,
    message: usize,
    out: &'a mut Vec<u8>,
    /// The length of the path `json.rs` would have here (a key, or an
    /// array index, per step), which its depth limit bounds.
    depth: u32,
    max_depth: u32,
}

impl<'de> DeserializeSeed<'de> for MessageSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for MessageSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        if self.depth > self.max_depth {
            return Err(de::Error::custom("too deep"));
        }
        let fields = &self.schema.messages[self.message];
        if fields.fields.len() > 128 {
            return Err(de::Error::custom("more fields than the key check holds"));
        }
        let mut seen = 0u128;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            let Some(at) = fields.position(&key) else {
                // A key that names no field: `json::parse` reads the
                // document, and says what it drops (or renames).
                return Err(de::Error::custom("a key that names no field"));
            };
            if seen & 1 << at != 0 {
                return Err(de::Error::custom("a key given twice"));
            }
            seen |= 1 << at;
            map.next_value_seed(FieldSeed {
                schema: self.schema,
                field: &fields.fields[at],
                out: &mut *self.out,
                depth: self.depth + 1, // the key
                max_depth: self.max_depth,
            })?;
        }
        Ok(())
    }
}

/// One field's value: `null`, an array for repeated fields, else one value.
struct FieldSeed<'a> {
    schema: &'a Schema,
    field: &'a Field,
    out: &'a mut Vec<u8>,
    depth: u32,
    max_depth: u32,
}

impl FieldSeed<'_> {
    fn value(&mut self) -> ValueSeed<'_> {
        ValueSeed {
            schema: self.schema,
            field: self.field,
            out: &mut *self.out,
            depth: self.depth,
            max_depth: self.max_depth,
            packed: false,
        }
    }

    fn packable(&self) -> bool {
        !matches!(
            self.field.kind,
            Kind::Message(_) | Kind::String | Kind::Bytes { .. }
        )
    }
}

impl<'de> DeserializeSeed<'de> for FieldSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for FieldSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a field value")
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(()) // null: absent
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        if !self.field.repeated {
            return Err(de::Error::custom("an array for a singular field"));
        }
        self.depth += 1; // the element's index
        if !self.packable() {
            while seq.next_element_seed(self.value())?.is_some() {}
            return Ok(());
        }
        let (number, start) = (self.field.number, self.out.len());
        let (schema, field, depth, max_depth) =
            (self.schema, self.field, self.depth, self.max_depth);
        length_delimited::<A::Error>(self.out, number, |out| loop {
            let element = ValueSeed {
                schema,
                field,
                out: &mut *out,
                depth,
                max_depth,
                packed: true,
            };
            if seq.next_element_seed(element)?.is_none() {
                return Ok(());
            }
        })?;
        if self.out.len() == start + len_field_size(number, 0) {
            self.out.truncate(start); // an empty list: nothing on the wire
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(mut self, map: A) -> Result<(), A::Error> {
        if self.field.repeated {
            return Err(de::Error::custom("an object for a repeated field"));
        }
        self.value().visit_map(map)
    }

    fn visit_bool<E: de::Error>(mut self, v: bool) -> Result<(), E> {
        self.singular()?.visit_bool(v)
    }

    fn visit_i64<E: de::Error>(mut self, v: i64) -> Result<(), E> {
        self.singular()?.visit_i64(v)
    }

    fn visit_u64<E: de::Error>(mut self, v: u64) -> Result<(), E> {
        self.singular()?.visit_u64(v)
    }

    fn visit_f64<E: de::Error>(mut self, v: f64) -> Result<(), E> {
        self.singular()?.visit_f64(v)
    }

    fn visit_str<E: de::Error>(mut self, v: &str) -> Result<(), E> {
        self.singular()?.visit_str(v)
    }
}

impl FieldSeed<'_> {
    fn singular<E: de::Error>(&mut self) -> Result<ValueSeed<'_>, E> {
        match self.field.repeated {
            true => Err(E::custom("a single value for a repeated field")),
            false => Ok(self.value()),
        }
    }
}

/// One value of a field, written with its tag (or bare, in a packed run).
struct ValueSeed<'a> {
    schema: &'a Schema,
    field: &'a Field,
    out: &'a mut Vec<u8>,
    depth: u32,
    max_depth: u32,
    /// An element of a packed run: no tag, and no strings or messages.
    packed: bool,
}

impl ValueSeed<'_> {
    fn tag(&mut self, wire_type: u8) {
        if !self.packed {
            write_tag(self.out, self.field.number, wire_type);
        }
    }

    fn integer<E: de::Error>(&mut self, value: i128) -> Result<(), E> {
        let field = self.field;
        match &field.kind {
            Kind::Varint(min, max, _) | Kind::Fixed(min, max, _)
                if !(*min..=*max).contains(&value) =>
            {
                Err(E::custom("out of range"))
            }
            Kind::Varint(_, _, zigzag) => {
                self.tag(VARINT);
                let wire = match *zigzag {
                    true => ((value << 1) ^ (value >> 127)) as u64,
                    false => value as u64, // negative: two's complement, 10 bytes
                };
                write_varint(self.out, wire);
                Ok(())
            }
            Kind::Fixed(_, _, 4) => {
                self.tag(FIXED32);
                self.out.extend_from_slice(&(value as u32).to_le_bytes());
                Ok(())
            }
            Kind::Fixed(..) => {
                self.tag(FIXED64);
                self.out.extend_from_slice(&(value as u64).to_le_bytes());
                Ok(())
            }
            Kind::Enum(_) if i32::try_from(value).is_ok() => {
                self.tag(VARINT);
                write_varint(self.out, value as i64 as u64);
                Ok(())
            }
            Kind::Bool => Err(E::custom("a number for a bool")),
            Kind::Float | Kind::Double => self.float(value as f64),
            _ => Err(E::custom("a number for this field")),
        }
    }

    fn float<E: de::Error>(&mut self, value: f64) -> Result<(), E> {
        match self.field.kind {
            Kind::Float => {
                self.tag(FIXED32);
                self.out.extend_from_slice(&(value as f32).to_le_bytes());
            }
            Kind::Double => {
                self.tag(FIXED64);
                self.out.extend_from_slice(&value.to_le_bytes());
            }
            _ if value.fract() == 0.0 && value.abs() < 1e38 => {
                return self.integer(value as i128);
            }
            _ => return Err(E::custom("not an integer")),
        }
        Ok(())
    }

    fn text<E: de::Error>(&mut self, v: &str) -> Result<(), E> {
        let (number, field) = (self.field.number, self.field);
        match &field.kind {
            Kind::String if !self.packed => length_delimited(self.out, number, |out| {
                out.extend_from_slice(v.as_bytes());
                Ok(())
            }),
            Kind::Bytes { hex } if !self.packed => {
                let bytes = match *hex {
                    true => unhex(v),
                    false => unbase64(v),
                }
                .ok_or_else(|| E::custom("bad bytes"))?;
                length_delimited(self.out, number, |out| {
                    out.extend_from_slice(&bytes);
                    Ok(())
                })
            }
            Kind::Bool if v == "true" || v == "false" => self.boolean(v == "true"),
            Kind::Enum(e) => match e.value_by_name(v) {
                Some(value) => self.integer(i128::from(value.value())),
                None => Err(E::custom("not a value of the enum")),
            },
            Kind::Float | Kind::Double => {
                let value = match v {
                    "NaN" => f64::NAN,
                    "Infinity" => f64::INFINITY,
                    "-Infinity" => f64::NEG_INFINITY,
                    other => other.parse().map_err(E::custom)?,
                };
                self.float(value)
            }
            Kind::Varint(..) | Kind::Fixed(..) => {
                let value = v.trim().parse::<i128>().map_err(E::custom)?;
                self.integer(value)
            }
            _ => Err(E::custom("a string for this field")),
        }
    }

    fn boolean<E: de::Error>(&mut self, v: bool) -> Result<(), E> {
        if !matches!(self.field.kind, Kind::Bool) {
            return Err(E::custom("a bool for this field"));
        }
        self.tag(VARINT);
        self.out.push(u8::from(v));
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a value")
    }

    fn visit_bool<E: de::Error>(mut self, v: bool) -> Result<(), E> {
        self.boolean(v)
    }

    fn visit_i64<E: de::Error>(mut self, v: i64) -> Result<(), E> {
        self.integer(i128::from(v))
    }

    fn visit_u64<E: de::Error>(mut self, v: u64) -> Result<(), E> {
        self.integer(i128::from(v))
    }

    fn visit_f64<E: de::Error>(mut self, v: f64) -> Result<(), E> {
        self.float(v)
    }

    fn visit_str<E: de::Error>(mut self, v: &str) -> Result<(), E> {
        self.text(v)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        let Kind::Message(message) = self.field.kind else {
            return Err(de::Error::custom("an object for a scalar field"));
        };
        let number = self.field.number;
        let (schema, depth, max_depth) = (self.schema, self.depth, self.max_depth);
        length_delimited(self.out, number, |out| {
            MessageSeed {
                schema,
                message,
                out,
                depth,
                max_depth,
            }
            .visit_map(map)
        })
    }
}
