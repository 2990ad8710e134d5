//! Where a field path's bytes are in the message's binary encoding: its
//! tag's offset and its end, found by reading tags along the path (an
//! element of a packed field is the bytes of its value alone).

use protobuf::reflect::{MessageDescriptor, RuntimeFieldType, RuntimeType};
use protobuf::rt::WireType;
use protobuf::CodedInputStream;
use serde::Serialize;

use super::path::{self, Step};

/// Most bytes of a field sent to the byte view.
const SHOWN: usize = 4096;

/// A field's bytes.
#[derive(Debug, Serialize)]
pub(crate) struct Bytes {
    pub(crate) path: String,
    /// Offset of the first byte (its tag's, unless a packed element).
    pub(crate) offset: usize,
    pub(crate) length: usize,
    /// The first bytes, as hex pairs.
    pub(crate) hex: String,
}

/// One occurrence of a field at one level.
#[derive(Clone, Copy)]
struct Occurrence {
    tag_at: usize,
    payload: (usize, usize),
    wire_type: WireType,
}

/// The bytes of the field `steps` names in `bytes`, a `root` message.
pub(crate) fn locate(
    bytes: &[u8],
    root: &MessageDescriptor,
    steps: &[Step],
) -> Result<Bytes, String> {
    let mut range = (0, bytes.len());
    let mut descriptor = root.clone();
    for (n, step) in steps.iter().enumerate() {
        let at = || path::render(&steps[..=n]);
        let field = path::field_named(&descriptor, &step.field)?;
        let number = field.number() as u32;
        let occurrences =
            occurrences(bytes, range, number).map_err(|e| format!("{}: {e}", at()))?;
        let element = match field.runtime_field_type() {
            RuntimeFieldType::Map(..) => {
                return Err(format!("{}: the byte view does not open maps", at()))
            }
            RuntimeFieldType::Singular(t) => (occurrences.last().map(whole), t),
            RuntimeFieldType::Repeated(t) => match step.index {
                None => (span(&occurrences), t),
                Some(i) => (nth(bytes, &occurrences, i, &t, fixed_width(&field)), t),
            },
        };
        let (Some(found), element_type) = element else {
            return Err(format!(
                "{}: not in the encoding (a default value is not written)",
                at()
            ));
        };
        range = found.1;
        if n + 1 < steps.len() {
            let RuntimeType::Message(next) = element_type else {
                return Err(format!("{}: not a message", at()));
            };
            descriptor = next;
        } else {
            range = found.0;
        }
    }
    let shown = &bytes[range.0..range.1.min(range.0 + SHOWN)];
    Ok(Bytes {
        path: path::render(steps),
        offset: range.0,
        length: range.1 - range.0,
        hex: shown
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .join(" "),
    })
}

/// (whole occurrence, payload) of one occurrence.
type Found = ((usize, usize), (usize, usize));

fn whole(o: &Occurrence) -> Found {
    ((o.tag_at, o.payload.1), o.payload)
}

/// All occurrences of a repeated field, as one span.
fn span(occurrences: &[Occurrence]) -> Option<Found> {
    let (first, last) = (occurrences.first()?, occurrences.last()?);
    Some((
        (first.tag_at, last.payload.1),
        (first.tag_at, last.payload.1),
    ))
}

/// Element `index` of a repeated field: the `index`-th occurrence, or a
/// value inside a packed run.
fn nth(
    bytes: &[u8],
    occurrences: &[Occurrence],
    index: usize,
    element: &RuntimeType,
    width: Option<u32>,
) -> Option<Found> {
    let packable = !matches!(
        element,
        RuntimeType::Message(_) | RuntimeType::String | RuntimeType::VecU8
    );
    let mut seen = 0;
    for o in occurrences {
        if packable && o.wire_type == WireType::LengthDelimited {
            let values = packed_values(bytes, o.payload, width)?;
            if index < seen + values.len() {
                let value = values[index - seen];
                return Some((value, value));
            }
            seen += values.len();
        } else if seen == index {
            return Some(whole(o));
        } else {
            seen += 1;
        }
    }
    None
}

/// The byte ranges of the values of a packed run.
fn packed_values(
    bytes: &[u8],
    payload: (usize, usize),
    width: Option<u32>,
) -> Option<Vec<(usize, usize)>> {
    let mut input = CodedInputStream::from_bytes(&bytes[payload.0..payload.1]);
    let mut values = Vec::new();
    while !input.eof().ok()? {
        let start = payload.0 + input.pos() as usize;
        match width {
            Some(w) => input.skip_raw_bytes(w).ok()?,
            None => {
                input.read_raw_varint64().ok()?;
            }
        }
        values.push((start, payload.0 + input.pos() as usize));
    }
    Some(values)
}

/// The width of a fixed-width scalar's values; `None` for varints.
fn fixed_width(field: &protobuf::reflect::FieldDescriptor) -> Option<u32> {
    use protobuf::descriptor::field_descriptor_proto::Type;
    match field.proto().type_() {
        Type::TYPE_DOUBLE | Type::TYPE_FIXED64 | Type::TYPE_SFIXED64 => Some(8),
        Type::TYPE_FLOAT | Type::TYPE_FIXED32 | Type::TYPE_SFIXED32 => Some(4),
        _ => None,
    }
}

/// Every occurrence of field `number` in the message at `range`.
fn occurrences(
    bytes: &[u8],
    range: (usize, usize),
    number: u32,
) -> Result<Vec<Occurrence>, String> {
    let mut input = CodedInputStream::from_bytes(&bytes[range.0..range.1]);
    let mut found = Vec::new();
    let wire_error = |e: protobuf::Error| e.to_string();
    loop {
        let tag_at = range.0 + input.pos() as usize;
        let Some(tag) = input.read_raw_tag_or_eof().map_err(wire_error)? else {
            return Ok(found);
        };
        let wire_type =
            WireType::new(tag & 7).ok_or_else(|| format!("bad wire type at {tag_at}"))?;
        let start = range.0 + input.pos() as usize;
        if wire_type == WireType::LengthDelimited {
            let length = input.read_raw_varint64().map_err(wire_error)?;
            let start = range.0 + input.pos() as usize;
            let length =
                u32::try_from(length).map_err(|_| format!("length too long at {tag_at}"))?;
            input.skip_raw_bytes(length).map_err(wire_error)?;
            if tag >> 3 == number {
                found.push(Occurrence {
                    tag_at,
                    payload: (start, start + length as usize),
                    wire_type,
                });
            }
            continue;
        }
        input.skip_field(wire_type).map_err(wire_error)?;
        if tag >> 3 == number {
            let end = range.0 + input.pos() as usize;
            found.push(Occurrence {
                tag_at,
                payload: (start, end),
                wire_type,
            });
        }
    }
}
