//! Schema-less decoding (like `protoc --decode_raw`): any protobuf bytes as a
//! tree of field numbers, with a best guess at what each length-delimited
//! payload holds.

use std::fmt::Write as _;

use crate::binary::wire::{
    read_len, read_tag, read_varint, skip_fixed, END_GROUP, FIXED32, FIXED64, LEN, START_GROUP,
    VARINT,
};
use crate::error::{CodecError, WireProblem};

/// One field occurrence.
#[derive(Debug, Clone, PartialEq)]
pub struct RawField {
    /// The field number.
    pub number: u32,
    /// Byte offset of the tag.
    pub offset: usize,
    /// The value, as best guessed without a schema.
    pub value: RawValue,
}

/// A field value read without a schema.
#[derive(Debug, Clone, PartialEq)]
pub enum RawValue {
    /// Wire type 0.
    Varint(u64),
    /// Wire type 1.
    Fixed64(u64),
    /// Wire type 5.
    Fixed32(u32),
    /// A length-delimited payload that parses as a message.
    Message(Vec<RawField>),
    /// A length-delimited payload that is printable UTF-8.
    String(String),
    /// A length-delimited payload of whole varints (a packed array, probably).
    Packed(Vec<u64>),
    /// Any other length-delimited payload.
    Bytes(Vec<u8>),
    /// A group (deprecated wire types 3 and 4) and its fields.
    Group(Vec<RawField>),
}

/// How a length-delimited payload is read without a schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// protoprof's best guess: printable text stays text, runs of whole
    /// varints are lists.
    Guessed,
    /// As `protoc --decode_raw`: a message whenever the payload parses as
    /// one, else a string.
    Protoc,
}

/// Decodes `bytes` as a message of unknown type, each payload guessed at
/// (see [`RawValue`]). Payloads nest at most `max_depth` levels; deeper
/// ones stay bytes.
pub fn decode_raw(bytes: &[u8], max_depth: u32) -> Result<Vec<RawField>, CodecError> {
    decode_reading(bytes, max_depth, Reading::Guessed)
}

/// Decodes `bytes` as `protoc --decode_raw` does: a length-delimited
/// payload is a message whenever it parses as one, else a string (never
/// text over a message, never a list of varints); [`render`] then prints
/// what protoc prints.
pub fn decode_raw_as_protoc(bytes: &[u8]) -> Result<Vec<RawField>, CodecError> {
    decode_reading(bytes, PROTOC_UNKNOWN_NESTING, Reading::Protoc)
}

/// How deep protoc's text printer reads length-delimited payloads as
/// messages (`kUnknownFieldRecursionLimit`); deeper ones print as strings.
const PROTOC_UNKNOWN_NESTING: u32 = 10;

/// How deep groups nest in protoc's parse (its default recursion limit).
const PROTOC_GROUP_NESTING: u32 = 100;

fn decode_reading(
    bytes: &[u8],
    max_depth: u32,
    reading: Reading,
) -> Result<Vec<RawField>, CodecError> {
    parse_fields(bytes, 0, (max_depth, reading)).map_err(|(offset, problem)| CodecError::Wire {
        offset: offset as u64,
        path: "(schema-less)".to_string(),
        problem,
    })
}

fn parse_fields(
    bytes: &[u8],
    base: usize,
    (depth_left, reading): (u32, Reading),
) -> Result<Vec<RawField>, (usize, WireProblem)> {
    let mut fields = Vec::new();
    let mut pos = 0;
    let mut groups: Vec<(u32, usize, Vec<RawField>)> = Vec::new();
    while pos < bytes.len() {
        let at = pos;
        let fail = |p| (base + at, p);
        let (number, wire_type) = match reading {
            Reading::Guessed => read_tag(bytes, &mut pos, bytes.len()),
            Reading::Protoc => read_tag_as_protoc(bytes, &mut pos),
        }
        .map_err(fail)?;
        let value = match wire_type {
            VARINT => RawValue::Varint(
                match reading {
                    Reading::Guessed => read_varint(bytes, &mut pos, bytes.len()),
                    Reading::Protoc => read_varint_as_protoc(bytes, &mut pos),
                }
                .map_err(fail)?,
            ),
            FIXED64 => {
                skip_fixed(&mut pos, bytes.len(), 8).map_err(fail)?;
                RawValue::Fixed64(u64::from_le_bytes(bytes[pos - 8..pos].try_into().unwrap()))
            }
            FIXED32 => {
                skip_fixed(&mut pos, bytes.len(), 4).map_err(fail)?;
                RawValue::Fixed32(u32::from_le_bytes(bytes[pos - 4..pos].try_into().unwrap()))
            }
            LEN => {
                let end = read_len(bytes, &mut pos, bytes.len()).map_err(fail)?;
                let payload = &bytes[pos..end];
                let value = match reading {
                    Reading::Guessed => guess(payload, base + pos, depth_left),
                    Reading::Protoc => as_protoc_reads(payload, base + pos, depth_left),
                };
                pos = end;
                value
            }
            START_GROUP => {
                let limit = match reading {
                    Reading::Guessed => depth_left,
                    Reading::Protoc => PROTOC_GROUP_NESTING,
                };
                if groups.len() as u32 >= limit {
                    return Err(fail(WireProblem::DepthExceeded { limit }));
                }
                groups.push((number, at, std::mem::take(&mut fields)));
                continue;
            }
            END_GROUP => match groups.pop() {
                Some((open, offset, outer)) if open == number => {
                    let inner = std::mem::replace(&mut fields, outer);
                    fields.push(RawField {
                        number,
                        offset: base + offset,
                        value: RawValue::Group(inner),
                    });
                    continue;
                }
                _ => return Err(fail(WireProblem::UnexpectedEndGroup(number))),
            },
            _ => unreachable!("read_tag rejects wire types 6 and 7"),
        };
        fields.push(RawField {
            number,
            offset: base + at,
            value,
        });
    }
    if let Some((number, offset, _)) = groups.pop() {
        return Err((base + offset, WireProblem::UnterminatedGroup(number)));
    }
    Ok(fields)
}

/// Best guess for a payload: a message if it parses as one (and is not
/// better read as text), else printable text, else whole varints, else bytes.
pub(crate) fn guess(payload: &[u8], base: usize, depth_left: u32) -> RawValue {
    let text = std::str::from_utf8(payload)
        .ok()
        .filter(|s| is_printable(s));
    if depth_left > 1 && !payload.is_empty() {
        if let Ok(fields) = parse_fields(payload, base, (depth_left - 1, Reading::Guessed)) {
            // Short ASCII words often parse as messages by accident.
            if text.is_none()
                || fields
                    .iter()
                    .all(|f| matches!(f.value, RawValue::Message(_)))
            {
                return RawValue::Message(fields);
            }
        }
    }
    if let Some(text) = text {
        return RawValue::String(text.to_string());
    }
    if let Some(values) = packed_varints(payload) {
        return RawValue::Packed(values);
    }
    RawValue::Bytes(payload.to_vec())
}

/// A payload as protoc prints it: a message when its fields parse (their
/// own payloads are judged the same way, one level less of `budget` each),
/// else bytes, printed as a string.
fn as_protoc_reads(payload: &[u8], base: usize, budget: u32) -> RawValue {
    if budget > 0 && !payload.is_empty() {
        if let Ok(fields) = parse_fields(payload, base, (budget - 1, Reading::Protoc)) {
            return RawValue::Message(fields);
        }
    }
    RawValue::Bytes(payload.to_vec())
}

/// A varint as protoc reads one: at most 10 bytes, bits past 64 dropped.
fn read_varint_as_protoc(bytes: &[u8], pos: &mut usize) -> Result<u64, WireProblem> {
    let mut value = 0u64;
    for (i, &byte) in bytes[*pos..].iter().take(10).enumerate() {
        value |= u64::from(byte & 0x7f)
            .checked_shl(7 * i as u32)
            .unwrap_or(0);
        if byte < 0x80 {
            *pos += i + 1;
            return Ok(value);
        }
    }
    match bytes.len() - *pos >= 10 {
        true => Err(WireProblem::VarintTooLong),
        false => Err(WireProblem::TruncatedVarint),
    }
}

/// A tag as protoc reads one: its varint cut to 32 bits.
fn read_tag_as_protoc(bytes: &[u8], pos: &mut usize) -> Result<(u32, u8), WireProblem> {
    let tag = read_varint_as_protoc(bytes, pos)? as u32;
    let (number, wire_type) = (tag >> 3, (tag & 7) as u8);
    if number == 0 {
        return Err(WireProblem::FieldNumberZero);
    }
    if wire_type > FIXED32 {
        return Err(WireProblem::InvalidWireType(wire_type));
    }
    Ok((number, wire_type))
}

/// Whether [`guess`] reads `payload` as a message, without building it:
/// for detection, which looks at a few fields of inputs of any size. Groups
/// (which [`guess`] follows) count as not parsing here.
pub(crate) fn reads_as_message(payload: &[u8], depth_left: u32) -> bool {
    if depth_left <= 1 || payload.is_empty() {
        return false;
    }
    let fields = crate::binary::wire::fields(payload);
    let printable = std::str::from_utf8(payload).is_ok_and(is_printable);
    if !printable {
        return fields.into_iter().all(|f| f.is_ok());
    }
    // Short ASCII words often parse as messages by accident.
    fields
        .into_iter()
        .all(|f| f.is_ok_and(|f| f.wire_type == LEN && reads_as_message(f.value, depth_left - 1)))
}

fn is_printable(text: &str) -> bool {
    text.chars()
        .all(|c| !c.is_control() || matches!(c, '\n' | '\r' | '\t'))
}

fn packed_varints(payload: &[u8]) -> Option<Vec<u64>> {
    if payload.is_empty() || payload[payload.len() - 1] >= 0x80 {
        return None;
    }
    let mut values = Vec::new();
    let mut pos = 0;
    while pos < payload.len() {
        values.push(read_varint(payload, &mut pos, payload.len()).ok()?);
    }
    Some(values)
}

/// Renders a tree in `protoc --decode_raw`'s notation (a list of varints,
/// which only [`decode_raw`] guesses, is protoprof's, marked as a guess).
pub fn render(fields: &[RawField]) -> String {
    let mut out = String::new();
    render_into(fields, 0, &mut out);
    out
}

fn render_into(fields: &[RawField], indent: usize, out: &mut String) {
    let pad = "  ".repeat(indent);
    for field in fields {
        let n = field.number;
        match &field.value {
            RawValue::Varint(v) => writeln!(out, "{pad}{n}: {v}").unwrap(),
            RawValue::Fixed64(v) => writeln!(out, "{pad}{n}: 0x{v:016x}").unwrap(),
            RawValue::Fixed32(v) => writeln!(out, "{pad}{n}: 0x{v:08x}").unwrap(),
            RawValue::String(s) => writeln!(
                out,
                "{pad}{n}: \"{}\"",
                crate::text::escape_bytes(s.as_bytes())
            )
            .unwrap(),
            RawValue::Bytes(b) => {
                writeln!(out, "{pad}{n}: \"{}\"", crate::text::escape_bytes(b)).unwrap()
            }
            RawValue::Packed(values) => {
                let list: Vec<String> = values.iter().map(u64::to_string).collect();
                writeln!(out, "{pad}{n}: [{}]  # packed varints?", list.join(", ")).unwrap()
            }
            RawValue::Message(inner) | RawValue::Group(inner) => {
                writeln!(out, "{pad}{n} {{").unwrap();
                render_into(inner, indent + 1, out);
                writeln!(out, "{pad}}}").unwrap();
            }
        }
    }
}
