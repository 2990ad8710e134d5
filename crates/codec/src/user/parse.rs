//! Binary protobuf into a dynamic message of a user's schema, read over
//! reflection as protoc reads it: a known field with another wire type is
//! kept as an unknown field (rust-protobuf's dynamic messages refuse the
//! whole message), a singular message field given twice is merged, packed
//! and unpacked repeated fields are both read, and invalid UTF-8 in a
//! string is repaired with a warning. Errors name the byte and the path.

use protobuf::descriptor::field_descriptor_proto::Type;
use protobuf::reflect::{FieldDescriptor, ReflectValueBox, RuntimeFieldType, RuntimeType};
use protobuf::MessageDyn;

use crate::binary::wire::{
    read_len, read_tag, read_varint, skip_fixed, skip_value, END_GROUP, FIXED32, FIXED64, LEN,
    START_GROUP, VARINT,
};
use crate::error::{CodecError, Warning, WarningKind, WireProblem};

/// Reads `bytes` into `message`, nesting at most `max_depth` levels; what
/// was accepted but changed is in the returned warnings.
pub fn merge(
    message: &mut dyn MessageDyn,
    bytes: &[u8],
    max_depth: u32,
) -> Result<Vec<Warning>, CodecError> {
    let mut reader = Reader {
        bytes,
        max_depth,
        warnings: Vec::new(),
    };
    let root = FieldPath {
        parent: None,
        name: "",
    };
    reader.message(message, 0, bytes.len(), &root, 0)?;
    Ok(reader.warnings)
}

/// Where a value is, for errors and warnings: made into text only when one
/// is reported (a string per field was a tenth of reading).
struct FieldPath<'a> {
    parent: Option<&'a FieldPath<'a>>,
    name: &'a str,
}

impl FieldPath<'_> {
    fn render(&self) -> String {
        let mut names = vec![self.name];
        let mut at = self.parent;
        while let Some(path) = at {
            names.push(path.name);
            at = path.parent;
        }
        let names: Vec<&str> = names.into_iter().rev().filter(|n| !n.is_empty()).collect();
        names.join(".")
    }
}

struct Reader<'b> {
    bytes: &'b [u8],
    max_depth: u32,
    warnings: Vec<Warning>,
}

/// The wire type a field's values have when not packed.
pub(crate) fn wire_type_of(field: &FieldDescriptor) -> u8 {
    match field.proto().type_() {
        Type::TYPE_DOUBLE | Type::TYPE_FIXED64 | Type::TYPE_SFIXED64 => FIXED64,
        Type::TYPE_FLOAT | Type::TYPE_FIXED32 | Type::TYPE_SFIXED32 => FIXED32,
        Type::TYPE_STRING | Type::TYPE_BYTES | Type::TYPE_MESSAGE => LEN,
        Type::TYPE_GROUP => START_GROUP,
        _ => VARINT,
    }
}

/// Whether `field` reads a value of `wire_type`: its own, or a packed run
/// of a repeated scalar (groups are never read).
pub(crate) fn accepts(field: &FieldDescriptor, wire_type: u8) -> bool {
    let own = wire_type_of(field);
    own != START_GROUP && (wire_type == own || (wire_type == LEN && is_packable(field)))
}

pub(crate) fn is_packable(field: &FieldDescriptor) -> bool {
    matches!(field.runtime_field_type(), RuntimeFieldType::Repeated(_))
        && !matches!(wire_type_of(field), LEN | START_GROUP)
}

impl Reader<'_> {
    fn wire_error(&self, offset: usize, path: &FieldPath, problem: WireProblem) -> CodecError {
        CodecError::Wire {
            offset: offset as u64,
            path: path.render(),
            problem,
        }
    }

    fn message(
        &mut self,
        message: &mut dyn MessageDyn,
        start: usize,
        end: usize,
        path: &FieldPath,
        depth: u32,
    ) -> Result<(), CodecError> {
        if depth > self.max_depth {
            let problem = WireProblem::DepthExceeded {
                limit: self.max_depth,
            };
            return Err(self.wire_error(start, path, problem));
        }
        let descriptor = message.descriptor_dyn();
        let mut pos = start;
        while pos < end {
            let at = pos;
            let (number, wire_type) =
                read_tag(self.bytes, &mut pos, end).map_err(|p| self.wire_error(at, path, p))?;
            let value_start = pos;
            match wire_type {
                START_GROUP => {
                    self.skip_group(number, &mut pos, end, path)?;
                    self.warn(at, path, WarningKind::GroupDropped { field: number });
                    continue;
                }
                END_GROUP => {
                    return Err(self.wire_error(at, path, WireProblem::UnexpectedEndGroup(number)))
                }
                _ => {}
            }
            skip_value(self.bytes, &mut pos, end, wire_type).ok_or_else(|| {
                let mut probe = value_start;
                let problem = match wire_type {
                    VARINT => read_varint(self.bytes, &mut probe, end).err(),
                    LEN => read_len(self.bytes, &mut probe, end).err(),
                    width => {
                        skip_fixed(&mut probe, end, if width == FIXED64 { 8 } else { 4 }).err()
                    }
                };
                self.wire_error(at, path, problem.unwrap_or(WireProblem::TruncatedPacked))
            })?;
            let field = descriptor.field_by_number(number);
            match field {
                Some(field) if accepts(&field, wire_type) => {
                    let at_path = FieldPath {
                        parent: Some(path),
                        name: field.name(),
                    };
                    self.field(
                        message,
                        &field,
                        wire_type,
                        (value_start, pos),
                        &at_path,
                        depth,
                    )?;
                }
                known => {
                    if let Some(field) = known {
                        let kind = WarningKind::WrongWireType {
                            field: number,
                            expected: wire_type_of(&field),
                            found: wire_type,
                        };
                        self.warn(at, path, kind);
                    }
                    self.unknown(message, number, wire_type, value_start, pos);
                }
            }
        }
        Ok(())
    }

    fn warn(&mut self, offset: usize, path: &FieldPath, kind: WarningKind) {
        self.warnings.push(Warning {
            offset: Some(offset as u64),
            path: path.render(),
            kind,
        });
    }

    fn skip_group(
        &self,
        number: u32,
        pos: &mut usize,
        end: usize,
        path: &FieldPath,
    ) -> Result<(), CodecError> {
        let start = *pos;
        let mut open = vec![number];
        while let Some(&inner) = open.last() {
            let at = *pos;
            if at >= end {
                return Err(self.wire_error(start, path, WireProblem::UnterminatedGroup(number)));
            }
            let (n, wire_type) =
                read_tag(self.bytes, pos, end).map_err(|p| self.wire_error(at, path, p))?;
            match wire_type {
                START_GROUP if open.len() as u32 >= self.max_depth => {
                    let problem = WireProblem::DepthExceeded {
                        limit: self.max_depth,
                    };
                    return Err(self.wire_error(at, path, problem));
                }
                START_GROUP => open.push(n),
                END_GROUP if n == inner => {
                    open.pop();
                }
                END_GROUP => {
                    return Err(self.wire_error(at, path, WireProblem::UnexpectedEndGroup(n)))
                }
                _ => skip_value(self.bytes, pos, end, wire_type)
                    .ok_or_else(|| self.wire_error(at, path, WireProblem::TruncatedPacked))?,
            }
        }
        Ok(())
    }

    fn unknown(
        &self,
        message: &mut dyn MessageDyn,
        number: u32,
        wire_type: u8,
        start: usize,
        end: usize,
    ) {
        let value = &self.bytes[start..end];
        let unknown = message.mut_unknown_fields_dyn();
        match wire_type {
            VARINT => {
                let mut pos = 0;
                let v = read_varint(value, &mut pos, value.len()).unwrap_or_default();
                unknown.add_varint(number, v);
            }
            FIXED32 => unknown.add_fixed32(number, u32::from_le_bytes(le::<4>(value))),
            FIXED64 => unknown.add_fixed64(number, u64::from_le_bytes(le::<8>(value))),
            _ => {
                let mut pos = 0;
                let payload_start = read_len(value, &mut pos, value.len())
                    .map(|_| pos)
                    .unwrap_or(0);
                unknown.add_length_delimited(number, value[payload_start..].to_vec());
            }
        }
    }

    fn field(
        &mut self,
        message: &mut dyn MessageDyn,
        field: &FieldDescriptor,
        wire_type: u8,
        (start, end): (usize, usize),
        path: &FieldPath,
        depth: u32,
    ) -> Result<(), CodecError> {
        match field.runtime_field_type() {
            RuntimeFieldType::Singular(RuntimeType::Message(_)) => {
                let payload = self.payload(start, end);
                let nested = field.mut_message(message);
                self.message(nested, payload, end, path, depth + 1)
            }
            RuntimeFieldType::Singular(_) => {
                let value = self.value(field, wire_type, start, end, path, depth)?;
                field.set_singular_field(message, value);
                Ok(())
            }
            RuntimeFieldType::Repeated(_) if wire_type == LEN && is_packable(field) => {
                let mut values = Vec::new();
                let (mut pos, own) = (self.payload(start, end), wire_type_of(field));
                while pos < end {
                    let at = pos;
                    skip_value(self.bytes, &mut pos, end, own)
                        .ok_or_else(|| self.wire_error(at, path, WireProblem::TruncatedPacked))?;
                    values.push(self.value(field, own, at, pos, path, depth)?);
                }
                let mut repeated = field.mut_repeated(message);
                values.into_iter().for_each(|v| repeated.push(v));
                Ok(())
            }
            RuntimeFieldType::Repeated(_) => {
                let value = self.value(field, wire_type, start, end, path, depth)?;
                field.mut_repeated(message).push(value);
                Ok(())
            }
            RuntimeFieldType::Map(key_type, value_type) => {
                let (key, value) =
                    self.map_entry(field, (&key_type, &value_type), start, end, path, depth)?;
                field.mut_map(message).insert(key, value);
                Ok(())
            }
        }
    }

    /// Where a length-delimited value's payload starts.
    fn payload(&self, start: usize, end: usize) -> usize {
        let mut pos = start;
        read_len(self.bytes, &mut pos, end)
            .map(|_| pos)
            .unwrap_or(end)
    }

    /// One value of `field` (`start..end` holds it whole: a varint, fixed
    /// bytes, or a length and its payload).
    fn value(
        &mut self,
        field: &FieldDescriptor,
        wire_type: u8,
        start: usize,
        end: usize,
        path: &FieldPath,
        depth: u32,
    ) -> Result<ReflectValueBox, CodecError> {
        if let Type::TYPE_MESSAGE | Type::TYPE_GROUP = field.proto().type_() {
            let RuntimeType::Message(descriptor) = element_type(field) else {
                unreachable!("a message field has a message type")
            };
            let mut nested = descriptor.new_instance();
            let payload = self.payload(start, end);
            self.message(&mut *nested, payload, end, path, depth + 1)?;
            return Ok(ReflectValueBox::Message(nested));
        }
        let raw = match wire_type {
            LEN => &self.bytes[self.payload(start, end)..end],
            _ => &self.bytes[start..end],
        };
        let (value, repaired) = scalar(field, raw);
        if repaired {
            self.warn(start, path, WarningKind::InvalidUtf8Repaired);
        }
        Ok(value)
    }

    fn map_entry(
        &mut self,
        field: &FieldDescriptor,
        (key_type, value_type): (&RuntimeType, &RuntimeType),
        start: usize,
        end: usize,
        path: &FieldPath,
        depth: u32,
    ) -> Result<(ReflectValueBox, ReflectValueBox), CodecError> {
        let RuntimeType::Message(entry) = element_type(field) else {
            unreachable!("a map field's element is its entry message")
        };
        // Entries cannot be instances of their own; their two fields are
        // read one by one (the last of each wins, as for any field).
        let (mut key, mut value) = (None, None);
        let mut pos = self.payload(start, end);
        while pos < end {
            let at = pos;
            let (number, wire_type) =
                read_tag(self.bytes, &mut pos, end).map_err(|p| self.wire_error(at, path, p))?;
            let value_start = pos;
            skip_value(self.bytes, &mut pos, end, wire_type)
                .ok_or_else(|| self.wire_error(at, path, WireProblem::TruncatedPacked))?;
            let part = entry
                .field_by_number(number)
                .filter(|f| wire_type_of(f) == wire_type);
            match (number, part) {
                (1, Some(f)) => {
                    key = Some(self.value(&f, wire_type, value_start, pos, path, depth + 1)?)
                }
                (2, Some(f)) => {
                    value = Some(self.value(&f, wire_type, value_start, pos, path, depth + 1)?)
                }
                _ => {}
            }
        }
        let key = key.unwrap_or_else(|| crate::text::default_value(key_type));
        let value = value.unwrap_or_else(|| crate::text::default_value(value_type));
        Ok((key, value))
    }
}

/// A scalar value of `field` from its encoding (`raw`: the varint or fixed
/// bytes, or a string's or bytes' payload), and whether a string had to be
/// repaired (invalid UTF-8, replaced lossily).
pub(crate) fn scalar(field: &FieldDescriptor, raw: &[u8]) -> (ReflectValueBox, bool) {
    let varint = || {
        let mut pos = 0;
        read_varint(raw, &mut pos, raw.len()).unwrap_or_default()
    };
    let value = match field.proto().type_() {
        Type::TYPE_INT32 => ReflectValueBox::I32(varint() as i32),
        Type::TYPE_INT64 => ReflectValueBox::I64(varint() as i64),
        Type::TYPE_UINT32 => ReflectValueBox::U32(varint() as u32),
        Type::TYPE_UINT64 => ReflectValueBox::U64(varint()),
        Type::TYPE_SINT32 => ReflectValueBox::I32(zigzag(varint()) as i32),
        Type::TYPE_SINT64 => ReflectValueBox::I64(zigzag(varint())),
        Type::TYPE_BOOL => ReflectValueBox::Bool(varint() != 0),
        Type::TYPE_ENUM => match element_type(field) {
            RuntimeType::Enum(e) => ReflectValueBox::Enum(e, varint() as i32),
            _ => unreachable!("an enum field has an enum type"),
        },
        Type::TYPE_FIXED32 => ReflectValueBox::U32(u32::from_le_bytes(le::<4>(raw))),
        Type::TYPE_SFIXED32 => ReflectValueBox::I32(i32::from_le_bytes(le::<4>(raw))),
        Type::TYPE_FLOAT => ReflectValueBox::F32(f32::from_le_bytes(le::<4>(raw))),
        Type::TYPE_FIXED64 => ReflectValueBox::U64(u64::from_le_bytes(le::<8>(raw))),
        Type::TYPE_SFIXED64 => ReflectValueBox::I64(i64::from_le_bytes(le::<8>(raw))),
        Type::TYPE_DOUBLE => ReflectValueBox::F64(f64::from_le_bytes(le::<8>(raw))),
        Type::TYPE_BYTES => ReflectValueBox::Bytes(raw.to_vec()),
        Type::TYPE_STRING => {
            return match std::str::from_utf8(raw) {
                Ok(text) => (ReflectValueBox::String(text.to_string()), false),
                Err(_) => (
                    ReflectValueBox::String(String::from_utf8_lossy(raw).into_owned()),
                    true,
                ),
            }
        }
        Type::TYPE_MESSAGE | Type::TYPE_GROUP => unreachable!("messages are not scalars"),
    };
    (value, false)
}

/// A map entry's element type or a field's own: what its values are.
pub(crate) fn element_type(field: &FieldDescriptor) -> RuntimeType {
    match field.runtime_field_type() {
        RuntimeFieldType::Singular(t) | RuntimeFieldType::Repeated(t) => t,
        RuntimeFieldType::Map(..) => {
            let entry = field
                .proto()
                .type_name()
                .trim_start_matches('.')
                .to_string();
            let descriptor = field
                .containing_message()
                .nested_messages()
                .find(|m| m.full_name() == entry)
                .expect("a map's entry is nested in its message");
            RuntimeType::Message(descriptor)
        }
    }
}

fn zigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

fn le<const N: usize>(raw: &[u8]) -> [u8; N] {
    let mut out = [0; N];
    out.copy_from_slice(&raw[raw.len() - N..]);
    out
}
