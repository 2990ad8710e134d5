//! Protobuf text format, for reading, diffing and hand editing.
//!
//! Our own printer and parser over reflection, because rust-protobuf's
//! parser cannot read back the unknown fields its printer writes. Unknown
//! fields use protoc's notation: `100: 42` (varint), `101: 0x0000002a`
//! (fixed32: 8 hex digits), `102: 0x000000000000002a` (fixed64: 16),
//! `103: "bytes"` (length-delimited). Fields print in number order, map
//! entries sorted by key, so the output is stable and a round trip
//! text -> binary -> text is exact.

use std::fmt::Write as _;

use protobuf::reflect::{
    FieldDescriptor, MessageDescriptor, ReflectFieldRef, ReflectValueBox, ReflectValueRef,
    RuntimeFieldType, RuntimeType,
};
use protobuf::{MessageDyn, UnknownValueRef};

use crate::binary::wire::{FIXED32, FIXED64, LEN, VARINT};

use crate::error::CodecError;
use crate::registry::{fields_in_number_order, present_value};

/// Prints a message in text format, one field per line.
pub fn print(message: &dyn MessageDyn) -> String {
    let mut out = String::new();
    print_message(message, 0, &mut out, &mut |_| {});
    out
}

/// [`print()`] written to `writer` as it is made, a top-level value at a
/// time: the text of a large message is several times its size, and need
/// not be whole in memory. Fails only as `writer` fails.
pub fn print_to(message: &dyn MessageDyn, writer: &mut dyn std::io::Write) -> std::io::Result<()> {
    const FLUSH_AT: usize = 1 << 20;
    let mut out = String::new();
    let mut result = Ok(());
    print_message(message, 0, &mut out, &mut |text: &mut String| {
        if text.len() >= FLUSH_AT && result.is_ok() {
            result = writer.write_all(text.as_bytes());
            text.clear();
        }
    });
    result?;
    writer.write_all(out.as_bytes())
}

/// Prints `message`'s fields into `out`, calling `after_value` after each
/// of its values (not those of nested messages).
fn print_message(
    message: &dyn MessageDyn,
    indent: usize,
    out: &mut String,
    after_value: &mut dyn FnMut(&mut String),
) {
    let descriptor = message.descriptor_dyn();
    for field in fields_in_number_order(&descriptor) {
        match field.get_reflect(message) {
            ReflectFieldRef::Optional(value) => {
                if let Some(value) = present_value(&field, value.value()) {
                    print_field(field.name(), value, indent, out);
                    after_value(out);
                }
            }
            ReflectFieldRef::Repeated(values) => {
                for i in 0..values.len() {
                    print_field(field.name(), values.get(i), indent, out);
                    after_value(out);
                }
            }
            ReflectFieldRef::Map(map) => {
                let mut entries: Vec<(ReflectValueRef, ReflectValueRef)> =
                    (&map).into_iter().collect();
                entries.sort_by_key(|(k, _)| map_key_order(k));
                for (key, value) in entries {
                    push_indent(out, indent);
                    out.push_str(field.name());
                    out.push_str(" {\n");
                    print_field("key", key, indent + 1, out);
                    print_field("value", value, indent + 1, out);
                    push_indent(out, indent);
                    out.push_str("}\n");
                    after_value(out);
                }
            }
        }
    }
    let mut unknown: Vec<(u32, UnknownValueRef)> = message.unknown_fields_dyn().iter().collect();
    unknown.sort_by_key(|(number, _)| *number);
    for (number, value) in unknown {
        let value = match value {
            UnknownValueRef::Varint(v) => UnknownValue::Varint(v),
            UnknownValueRef::Fixed32(v) => UnknownValue::Fixed32(v),
            UnknownValueRef::Fixed64(v) => UnknownValue::Fixed64(v),
            UnknownValueRef::LengthDelimited(b) => UnknownValue::LengthDelimited(b),
        };
        print_unknown(number, value, indent, out);
        after_value(out);
    }
}

/// An unknown field's value, as protoc prints it.
pub(crate) enum UnknownValue<'a> {
    Varint(u64),
    Fixed32(u32),
    Fixed64(u64),
    LengthDelimited(&'a [u8]),
}

/// Deepest nesting printed inside an unknown field; deeper payloads print
/// as strings (protoc has the same budget).
const UNKNOWN_NESTING: usize = 100;

/// One unknown field in protoc's notation: varints in decimal, fixed32 and
/// fixed64 as 8 and 16 hex digits, and a length-delimited payload as a
/// block of fields when it parses as a message (as protoc guesses), else as
/// a string. The block is chosen only when it writes back to the same
/// bytes, so text -> binary stays exact.
pub(crate) fn print_unknown(number: u32, value: UnknownValue, indent: usize, out: &mut String) {
    let pad = "  ".repeat(indent);
    match value {
        UnknownValue::Varint(v) => writeln!(out, "{pad}{number}: {v}"),
        UnknownValue::Fixed32(v) => writeln!(out, "{pad}{number}: 0x{v:08x}"),
        UnknownValue::Fixed64(v) => writeln!(out, "{pad}{number}: 0x{v:016x}"),
        UnknownValue::LengthDelimited(b) => match unknown_fields_of(b, indent) {
            Some(fields) => {
                writeln!(out, "{pad}{number} {{").unwrap();
                for (inner, value) in fields {
                    print_unknown(inner, value, indent + 1, out);
                }
                writeln!(out, "{pad}}}")
            }
            None => writeln!(out, "{pad}{number}: \"{}\"", escape_bytes(b)),
        },
    }
    .unwrap();
}

/// The fields of a payload that is a well-formed, canonically encoded
/// message without groups; `None` otherwise.
fn unknown_fields_of(payload: &[u8], indent: usize) -> Option<Vec<(u32, UnknownValue<'_>)>> {
    if payload.is_empty() || indent >= UNKNOWN_NESTING {
        return None;
    }
    let mut fields = Vec::new();
    let mut rewritten = Vec::with_capacity(payload.len());
    for field in crate::binary::wire::fields(payload) {
        let field = field.ok()?;
        let value = match field.wire_type {
            VARINT => UnknownValue::Varint(varint_of(field.value)?),
            FIXED32 => UnknownValue::Fixed32(u32::from_le_bytes(field.value.try_into().ok()?)),
            FIXED64 => UnknownValue::Fixed64(u64::from_le_bytes(field.value.try_into().ok()?)),
            LEN => UnknownValue::LengthDelimited(field.value),
            _ => return None,
        };
        write_unknown(&mut rewritten, field.number, &value);
        fields.push((field.number, value));
    }
    (rewritten == payload).then_some(fields)
}

fn varint_of(bytes: &[u8]) -> Option<u64> {
    let mut pos = 0;
    crate::binary::wire::read_varint(bytes, &mut pos, bytes.len()).ok()
}

fn write_unknown(out: &mut Vec<u8>, number: u32, value: &UnknownValue) {
    let (wire_type, body): (u8, Vec<u8>) = match value {
        UnknownValue::Varint(v) => {
            let mut body = Vec::new();
            protoprof_model_meta::wire::write_varint(&mut body, *v);
            (VARINT, body)
        }
        UnknownValue::Fixed32(v) => (FIXED32, v.to_le_bytes().to_vec()),
        UnknownValue::Fixed64(v) => (FIXED64, v.to_le_bytes().to_vec()),
        UnknownValue::LengthDelimited(b) => {
            let mut body = Vec::with_capacity(b.len() + 5);
            protoprof_model_meta::wire::write_varint(&mut body, b.len() as u64);
            body.extend_from_slice(b);
            (LEN, body)
        }
    };
    protoprof_model_meta::wire::write_varint(out, (u64::from(number) << 3) | u64::from(wire_type));
    out.extend_from_slice(&body);
}

/// Map keys are integers, booleans or strings; order them naturally.
pub(crate) fn map_key_order(key: &ReflectValueRef) -> (i128, String) {
    match key {
        ReflectValueRef::String(s) => (0, s.to_string()),
        ReflectValueRef::Bool(b) => (i128::from(*b), String::new()),
        ReflectValueRef::I32(v) => (i128::from(*v), String::new()),
        ReflectValueRef::I64(v) => (i128::from(*v), String::new()),
        ReflectValueRef::U32(v) => (i128::from(*v), String::new()),
        ReflectValueRef::U64(v) => (i128::from(*v), String::new()),
        _ => (0, String::new()),
    }
}

fn print_field(name: &str, value: ReflectValueRef, indent: usize, out: &mut String) {
    push_indent(out, indent);
    out.push_str(name);
    match value {
        ReflectValueRef::Message(m) => {
            out.push_str(" {\n");
            print_message(&*m, indent + 1, out, &mut |_| {});
            push_indent(out, indent);
            out.push_str("}\n");
        }
        scalar => {
            out.push_str(": ");
            push_scalar(out, &scalar);
            out.push('\n');
        }
    }
}

/// Two spaces per level, written in place: a large message has millions of
/// lines, and a fresh string per line was a tenth of printing it.
pub(crate) fn push_indent(out: &mut String, indent: usize) {
    const SPACES: &str = "                                                                ";
    let mut left = 2 * indent;
    while left > 0 {
        let n = left.min(SPACES.len());
        out.push_str(&SPACES[..n]);
        left -= n;
    }
}

pub(crate) fn push_scalar(out: &mut String, value: &ReflectValueRef) {
    match value {
        ReflectValueRef::U32(v) => write!(out, "{v}").unwrap(),
        ReflectValueRef::U64(v) => write!(out, "{v}").unwrap(),
        ReflectValueRef::I32(v) => write!(out, "{v}").unwrap(),
        ReflectValueRef::I64(v) => write!(out, "{v}").unwrap(),
        ReflectValueRef::F32(v) => out.push_str(&protoc_float(*v)),
        ReflectValueRef::F64(v) => out.push_str(&protoc_double(*v)),
        ReflectValueRef::Bool(v) => out.push_str(if *v { "true" } else { "false" }),
        ReflectValueRef::String(s) => push_quoted(out, s.as_bytes()),
        ReflectValueRef::Bytes(b) => push_quoted(out, b),
        ReflectValueRef::Enum(descriptor, number) => match descriptor.value_by_number(*number) {
            Some(v) => out.push_str(v.name()),
            None => write!(out, "{number}").unwrap(),
        },
        ReflectValueRef::Message(_) => unreachable!("messages print as blocks"),
    }
}

fn push_quoted(out: &mut String, bytes: &[u8]) {
    out.push('"');
    for &b in bytes {
        push_escaped_byte(out, b);
    }
    out.push('"');
}

/// A double as protoc prints it: C's `%.15g`, or `%.17g` when 15 digits
/// do not read back as the same value; `inf`, `-inf` and `nan` by name.
pub fn protoc_double(value: f64) -> String {
    if let Some(named) = non_finite(value) {
        return named.into();
    }
    let short = format_g(value, 15);
    if short.parse::<f64>().ok() == Some(value) {
        short
    } else {
        format_g(value, 17)
    }
}

/// A float as protoc prints it: `%.6g`, or `%.9g` when 6 digits do not
/// read back as the same float. protoc's check reads a subnormal float
/// back as a failure (C's `strtof` reports underflow), so subnormals always
/// take 9 digits (`2.1019477e-44`).
pub fn protoc_float(value: f32) -> String {
    if let Some(named) = non_finite(f64::from(value)) {
        return named.into();
    }
    if value != 0.0 && value.abs() < f32::MIN_POSITIVE {
        return format_g(f64::from(value), 9);
    }
    let short = format_g(f64::from(value), 6);
    if short.parse::<f32>().ok() == Some(value) {
        short
    } else {
        format_g(f64::from(value), 9)
    }
}

fn non_finite(value: f64) -> Option<&'static str> {
    if value.is_nan() {
        Some("nan")
    } else if value.is_infinite() {
        Some(if value > 0.0 { "inf" } else { "-inf" })
    } else {
        None
    }
}

/// C's `%.{precision}g` for a finite value: scientific notation when the
/// exponent is below -4 or at least the precision, trailing zeros removed.
fn format_g(value: f64, precision: usize) -> String {
    if value == 0.0 {
        return if value.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let scientific = format!("{value:.*e}", precision - 1);
    let (mantissa, exponent) = scientific.split_once('e').expect("`e` formatting");
    let exponent: i32 = exponent.parse().expect("an integer exponent");
    if exponent < -4 || exponent >= precision as i32 {
        let mantissa = trim_fraction(mantissa);
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.abs())
    } else {
        let decimals = (precision as i32 - 1 - exponent).max(0) as usize;
        trim_fraction(&format!("{value:.decimals$}")).to_string()
    }
}

fn trim_fraction(number: &str) -> &str {
    if number.contains('.') {
        number.trim_end_matches('0').trim_end_matches('.')
    } else {
        number
    }
}

/// C-style escapes for bytes; printable ASCII stays as it is.
pub fn escape_bytes(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        push_escaped_byte(&mut out, b);
    }
    out
}

fn push_escaped_byte(out: &mut String, b: u8) {
    match b {
        b'\n' => out.push_str("\\n"),
        b'\r' => out.push_str("\\r"),
        b'\t' => out.push_str("\\t"),
        b'"' => out.push_str("\\\""),
        b'\'' => out.push_str("\\'"),
        b'\\' => out.push_str("\\\\"),
        0x20..=0x7e => out.push(b as char),
        _ => write!(out, "\\{b:03o}").unwrap(),
    }
}

/// Parses text format into a new message of type `descriptor`. Nesting is
/// bounded by `max_depth`.
pub fn parse(
    text: &str,
    descriptor: &MessageDescriptor,
    max_depth: u32,
) -> Result<Box<dyn MessageDyn>, CodecError> {
    let mut parser = Parser {
        text: text.as_bytes(),
        pos: 0,
        max_depth,
    };
    let mut message = descriptor.new_instance();
    parser.message_body(&mut *message, None, 0)?;
    Ok(message)
}

struct Parser<'a> {
    text: &'a [u8],
    pos: usize,
    max_depth: u32,
}

/// A scalar token.
enum Token {
    Ident(String),
    Number(String),
    Str(Vec<u8>),
}

impl Parser<'_> {
    fn error(&self, detail: impl Into<String>) -> CodecError {
        let before = &self.text[..self.pos.min(self.text.len())];
        let line = before.iter().filter(|b| **b == b'\n').count() as u32 + 1;
        let column = (before.len()
            - before
                .iter()
                .rposition(|b| *b == b'\n')
                .map_or(0, |p| p + 1)) as u32
            + 1;
        CodecError::Text {
            line,
            column,
            detail: detail.into(),
        }
    }

    fn skip_space(&mut self) {
        while self.pos < self.text.len() {
            match self.text[self.pos] {
                b' ' | b'\t' | b'\r' | b'\n' => self.pos += 1,
                b'#' => {
                    while self.pos < self.text.len() && self.text[self.pos] != b'\n' {
                        self.pos += 1;
                    }
                }
                _ => break,
            }
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.text.get(self.pos).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn word(&mut self) -> String {
        let start = self.pos;
        while self.pos < self.text.len()
            && (self.text[self.pos].is_ascii_alphanumeric()
                || matches!(self.text[self.pos], b'_' | b'.' | b'+' | b'-'))
        {
            // A sign only starts a number or follows an exponent.
            if matches!(self.text[self.pos], b'+' | b'-')
                && self.pos > start
                && !matches!(self.text[self.pos - 1], b'e' | b'E')
            {
                break;
            }
            self.pos += 1;
        }
        String::from_utf8_lossy(&self.text[start..self.pos]).into_owned()
    }

    fn message_body(
        &mut self,
        message: &mut dyn MessageDyn,
        close: Option<u8>,
        depth: u32,
    ) -> Result<(), CodecError> {
        if depth > self.max_depth {
            return Err(self.error(format!(
                "nesting deeper than the limit of {}",
                self.max_depth
            )));
        }
        let descriptor = message.descriptor_dyn();
        loop {
            match (self.peek(), close) {
                (None, None) => return Ok(()),
                (None, Some(c)) => {
                    return Err(self.error(format!("expected `{}` before the end", c as char)))
                }
                (Some(c), Some(want)) if c == want => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => {}
            }
            let name_at = self.pos;
            let name = self.word();
            if name.is_empty() {
                return Err(self.error("expected a field name"));
            }
            let field = descriptor.field_by_name(&name).or_else(|| {
                name.parse::<u32>()
                    .ok()
                    .and_then(|n| descriptor.field_by_number(n))
            });
            match field {
                Some(field) => self.field_value(message, &field, depth)?,
                None => match name.parse::<u32>() {
                    Ok(number) if number > 0 => self.unknown_value(message, number, depth)?,
                    _ => {
                        self.pos = name_at;
                        return Err(
                            self.error(format!("{} has no field `{name}`", descriptor.full_name()))
                        );
                    }
                },
            }
            if !self.eat(b',') {
                self.eat(b';');
            }
        }
    }

    fn field_value(
        &mut self,
        message: &mut dyn MessageDyn,
        field: &FieldDescriptor,
        depth: u32,
    ) -> Result<(), CodecError> {
        let is_message = match field.runtime_field_type() {
            RuntimeFieldType::Singular(t) | RuntimeFieldType::Repeated(t) => {
                matches!(t, RuntimeType::Message(_))
            }
            RuntimeFieldType::Map(..) => true,
        };
        let had_colon = self.eat(b':');
        if !had_colon && !is_message {
            return Err(self.error(format!("expected `:` after `{}`", field.name())));
        }
        if self.eat(b'[') {
            if self.eat(b']') {
                return Ok(());
            }
            loop {
                self.one_value(message, field, depth)?;
                if self.eat(b']') {
                    return Ok(());
                }
                if !self.eat(b',') {
                    return Err(self.error("expected `,` or `]` in a list"));
                }
            }
        }
        self.one_value(message, field, depth)
    }

    fn one_value(
        &mut self,
        message: &mut dyn MessageDyn,
        field: &FieldDescriptor,
        depth: u32,
    ) -> Result<(), CodecError> {
        match field.runtime_field_type() {
            RuntimeFieldType::Singular(t) => {
                let value = self.value_of(&t, depth)?;
                field.set_singular_field(message, value);
            }
            RuntimeFieldType::Repeated(t) => {
                let value = self.value_of(&t, depth)?;
                field.mut_repeated(message).push(value);
            }
            RuntimeFieldType::Map(key_type, value_type) => {
                let close = self.open_block()?;
                let (mut key, mut value) = (None, None);
                while !self.eat(close) {
                    let name = self.word();
                    let target = match name.as_str() {
                        "key" => (&key_type, &mut key),
                        "value" => (&value_type, &mut value),
                        other => {
                            return Err(self.error(format!(
                                "a map entry has `key` and `value`, not `{other}`"
                            )))
                        }
                    };
                    let colon = self.eat(b':');
                    if !colon && !matches!(target.0, RuntimeType::Message(_)) {
                        return Err(self.error("expected `:`"));
                    }
                    *target.1 = Some(self.value_of(target.0, depth)?);
                    if !self.eat(b',') {
                        self.eat(b';');
                    }
                }
                let key = key.unwrap_or_else(|| default_value(&key_type));
                let value = value.unwrap_or_else(|| default_value(&value_type));
                field.mut_map(message).insert(key, value);
            }
        }
        Ok(())
    }

    fn open_block(&mut self) -> Result<u8, CodecError> {
        if self.eat(b'{') {
            Ok(b'}')
        } else if self.eat(b'<') {
            Ok(b'>')
        } else {
            Err(self.error("expected `{`"))
        }
    }

    fn value_of(
        &mut self,
        runtime: &RuntimeType,
        depth: u32,
    ) -> Result<ReflectValueBox, CodecError> {
        if let RuntimeType::Message(descriptor) = runtime {
            let close = self.open_block()?;
            let mut nested = descriptor.new_instance();
            self.message_body(&mut *nested, Some(close), depth + 1)?;
            return Ok(ReflectValueBox::Message(nested));
        }
        let at = self.pos;
        let token = self.token()?;
        let bad = |this: &mut Self, what: &str| {
            this.pos = at;
            this.error(format!("expected {what}"))
        };
        Ok(match (runtime, token) {
            (RuntimeType::String, Token::Str(bytes)) => match String::from_utf8(bytes) {
                Ok(s) => ReflectValueBox::String(s),
                Err(_) => return Err(bad(self, "a UTF-8 string")),
            },
            (RuntimeType::VecU8, Token::Str(bytes)) => ReflectValueBox::Bytes(bytes),
            (RuntimeType::Bool, Token::Ident(w)) | (RuntimeType::Bool, Token::Number(w)) => {
                match w.as_str() {
                    "true" | "t" | "True" | "1" => ReflectValueBox::Bool(true),
                    "false" | "f" | "False" | "0" => ReflectValueBox::Bool(false),
                    _ => return Err(bad(self, "true or false")),
                }
            }
            (RuntimeType::Enum(e), Token::Ident(w)) => match e.value_by_name(&w) {
                Some(v) => ReflectValueBox::Enum(e.clone(), v.value()),
                None => return Err(bad(self, &format!("a value of {}", e.full_name()))),
            },
            (RuntimeType::Enum(e), Token::Number(w)) => {
                match parse_int(&w).and_then(|v| i32::try_from(v).ok()) {
                    Some(v) => ReflectValueBox::Enum(e.clone(), v),
                    None => return Err(bad(self, "an enum number")),
                }
            }
            (RuntimeType::I32, Token::Number(w)) => int(&w)
                .map(ReflectValueBox::I32)
                .ok_or_else(|| bad(self, "an int32"))?,
            (RuntimeType::I64, Token::Number(w)) => int(&w)
                .map(ReflectValueBox::I64)
                .ok_or_else(|| bad(self, "an int64"))?,
            (RuntimeType::U32, Token::Number(w)) => int(&w)
                .map(ReflectValueBox::U32)
                .ok_or_else(|| bad(self, "a uint32"))?,
            (RuntimeType::U64, Token::Number(w)) => int(&w)
                .map(ReflectValueBox::U64)
                .ok_or_else(|| bad(self, "a uint64"))?,
            (RuntimeType::F64, Token::Number(w) | Token::Ident(w)) => parse_float(&w)
                .map(ReflectValueBox::F64)
                .ok_or_else(|| bad(self, "a number"))?,
            (RuntimeType::F32, Token::Number(w) | Token::Ident(w)) => parse_float(&w)
                .map(|v| ReflectValueBox::F32(v as f32))
                .ok_or_else(|| bad(self, "a number"))?,
            _ => return Err(bad(self, "a value of the field's type")),
        })
    }

    fn unknown_value(
        &mut self,
        message: &mut dyn MessageDyn,
        number: u32,
        depth: u32,
    ) -> Result<(), CodecError> {
        let mut bytes = Vec::new();
        let value = self.unknown_field(number, &mut bytes, depth)?;
        let unknown = message.mut_unknown_fields_dyn();
        match value {
            UnknownValue::Varint(v) => unknown.add_varint(number, v),
            UnknownValue::Fixed32(v) => unknown.add_fixed32(number, v),
            UnknownValue::Fixed64(v) => unknown.add_fixed64(number, v),
            UnknownValue::LengthDelimited(_) => unknown.add_length_delimited(number, bytes),
        }
        Ok(())
    }

    /// One unknown field's value after its number: `: 42`, `: 0x…`, `: "…"`
    /// or a `{ … }` block of unknown fields, whose encoding is left in
    /// `payload` (a string's bytes too).
    fn unknown_field<'p>(
        &mut self,
        number: u32,
        payload: &'p mut Vec<u8>,
        depth: u32,
    ) -> Result<UnknownValue<'p>, CodecError> {
        let had_colon = self.eat(b':');
        if matches!(self.peek(), Some(b'{' | b'<')) {
            if depth > self.max_depth {
                return Err(self.error(format!(
                    "nesting deeper than the limit of {}",
                    self.max_depth
                )));
            }
            let close = self.open_block()?;
            while !self.eat(close) {
                let at = self.pos;
                let inner = self
                    .word()
                    .parse::<u32>()
                    .ok()
                    .filter(|n| (1..1 << 29).contains(n));
                let Some(inner) = inner else {
                    self.pos = at;
                    return Err(self.error("expected a field number inside an unknown field"));
                };
                let mut nested = Vec::new();
                let value = self.unknown_field(inner, &mut nested, depth + 1)?;
                let value = match value {
                    UnknownValue::LengthDelimited(_) => UnknownValue::LengthDelimited(&nested),
                    scalar => scalar,
                };
                write_unknown(payload, inner, &value);
                if !self.eat(b',') {
                    self.eat(b';');
                }
            }
            return Ok(UnknownValue::LengthDelimited(payload));
        }
        if !had_colon {
            return Err(self.error(format!("expected `:` or `{{` after unknown field {number}")));
        }
        let at = self.pos;
        match self.token()? {
            Token::Str(bytes) => {
                *payload = bytes;
                Ok(UnknownValue::LengthDelimited(payload))
            }
            Token::Number(w) => {
                let hex_digits = w.strip_prefix("0x").map(str::len);
                match (hex_digits, parse_int(&w)) {
                    (Some(8), Some(v)) => Ok(UnknownValue::Fixed32(v as u32)),
                    (Some(16), Some(v)) => Ok(UnknownValue::Fixed64(v as u64)),
                    (_, Some(v)) if v >= 0 => Ok(UnknownValue::Varint(v as u64)),
                    (_, Some(v)) => Ok(UnknownValue::Varint(v as i64 as u64)),
                    (_, None) => {
                        self.pos = at;
                        Err(self.error("expected an integer"))
                    }
                }
            }
            Token::Ident(_) => {
                self.pos = at;
                Err(self.error("expected a number, a string or a block for an unknown field"))
            }
        }
    }

    fn token(&mut self) -> Result<Token, CodecError> {
        match self.peek() {
            Some(b'"') | Some(b'\'') => {
                // Adjacent strings concatenate.
                let mut bytes = Vec::new();
                while let Some(q @ (b'"' | b'\'')) = self.peek() {
                    self.pos += 1;
                    self.string_body(q, &mut bytes)?;
                }
                Ok(Token::Str(bytes))
            }
            Some(c) if c.is_ascii_digit() || c == b'-' || c == b'+' || c == b'.' => {
                let mut w = String::new();
                if matches!(c, b'-' | b'+') {
                    w.push(c as char);
                    self.pos += 1;
                }
                w.push_str(&self.word());
                Ok(Token::Number(w))
            }
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => Ok(Token::Ident(self.word())),
            Some(c) => Err(self.error(format!("unexpected `{}`", c as char))),
            None => Err(self.error("unexpected end of input")),
        }
    }

    fn string_body(&mut self, quote: u8, out: &mut Vec<u8>) -> Result<(), CodecError> {
        loop {
            let Some(&c) = self.text.get(self.pos) else {
                return Err(self.error("unterminated string"));
            };
            self.pos += 1;
            match c {
                c if c == quote => return Ok(()),
                b'\n' => return Err(self.error("newline inside a string")),
                b'\\' => {
                    let Some(&e) = self.text.get(self.pos) else {
                        return Err(self.error("unterminated escape"));
                    };
                    self.pos += 1;
                    match e {
                        b'n' => out.push(b'\n'),
                        b'r' => out.push(b'\r'),
                        b't' => out.push(b'\t'),
                        b'a' => out.push(7),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'v' => out.push(11),
                        b'?' | b'"' | b'\'' | b'\\' => out.push(e),
                        b'0'..=b'7' => {
                            let mut v = u32::from(e - b'0');
                            for _ in 0..2 {
                                match self.text.get(self.pos) {
                                    Some(&d @ b'0'..=b'7') => {
                                        v = v * 8 + u32::from(d - b'0');
                                        self.pos += 1;
                                    }
                                    _ => break,
                                }
                            }
                            out.push(
                                u8::try_from(v)
                                    .map_err(|_| self.error("octal escape above \\377"))?,
                            );
                        }
                        b'x' => {
                            let start = self.pos;
                            while self.pos < self.text.len()
                                && self.pos - start < 2
                                && self.text[self.pos].is_ascii_hexdigit()
                            {
                                self.pos += 1;
                            }
                            let digits = std::str::from_utf8(&self.text[start..self.pos]).unwrap();
                            out.push(
                                u8::from_str_radix(digits, 16)
                                    .map_err(|_| self.error("bad \\x escape"))?,
                            );
                        }
                        b'u' | b'U' => self.unicode_escape(e, out)?,
                        other => {
                            return Err(self.error(format!("unknown escape `\\{}`", other as char)))
                        }
                    }
                }
                c => out.push(c),
            }
        }
    }
}

impl Parser<'_> {
    /// After `\u` (four hex digits) or `\U` (eight, at most 10ffff): the
    /// code point in UTF-8, as protoc's tokenizer reads it; a `\u` high
    /// surrogate followed by a `\u` low one is one code point, and a lone
    /// surrogate is written as its three bytes, as protoc writes it.
    fn unicode_escape(&mut self, kind: u8, out: &mut Vec<u8>) -> Result<(), CodecError> {
        let digits = if kind == b'u' { 4 } else { 8 };
        let mut code = self.hex_digits(digits).ok_or_else(|| {
            self.error(match kind {
                b'u' => "expected four hex digits for \\u escape sequence",
                _ => "expected eight hex digits up to 10ffff for \\U escape sequence",
            })
        })?;
        if code > 0x10ffff {
            return Err(
                self.error("expected eight hex digits up to 10ffff for \\U escape sequence")
            );
        }
        let is_trail = |c: u32| (0xdc00..0xe000).contains(&c);
        if (0xd800..0xdc00).contains(&code) && self.text[self.pos..].starts_with(b"\\u") {
            let before = self.pos;
            self.pos += 2;
            match self.hex_digits(4).filter(|&t| is_trail(t)) {
                Some(trail) => code = 0x10000 + ((code - 0xd800) << 10) + (trail - 0xdc00),
                None => self.pos = before,
            }
        }
        push_code_point(code, out);
        Ok(())
    }

    /// Exactly `n` hex digits at the cursor, read; `None` (nothing read)
    /// when there are fewer.
    fn hex_digits(&mut self, n: usize) -> Option<u32> {
        let digits = self.text.get(self.pos..self.pos + n)?;
        let digits = std::str::from_utf8(digits).ok()?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        self.pos += n;
        u32::from_str_radix(digits, 16).ok()
    }
}

/// `code` in UTF-8; a surrogate (which `char` cannot hold) as the three
/// bytes the same arithmetic gives.
fn push_code_point(code: u32, out: &mut Vec<u8>) {
    match char::from_u32(code) {
        Some(c) => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        None => out.extend_from_slice(&[
            0xe0 | (code >> 12) as u8,
            0x80 | ((code >> 6) & 0x3f) as u8,
            0x80 | (code & 0x3f) as u8,
        ]),
    }
}

/// The value a field of this type has when it is absent.
pub(crate) fn default_value(runtime: &RuntimeType) -> ReflectValueBox {
    match runtime {
        RuntimeType::I32 => ReflectValueBox::I32(0),
        RuntimeType::I64 => ReflectValueBox::I64(0),
        RuntimeType::U32 => ReflectValueBox::U32(0),
        RuntimeType::U64 => ReflectValueBox::U64(0),
        RuntimeType::F32 => ReflectValueBox::F32(0.0),
        RuntimeType::F64 => ReflectValueBox::F64(0.0),
        RuntimeType::Bool => ReflectValueBox::Bool(false),
        RuntimeType::String => ReflectValueBox::String(String::new()),
        RuntimeType::VecU8 => ReflectValueBox::Bytes(Vec::new()),
        RuntimeType::Enum(e) => ReflectValueBox::Enum(e.clone(), e.default_value().value()),
        RuntimeType::Message(m) => ReflectValueBox::Message(m.new_instance()),
    }
}

fn parse_int(word: &str) -> Option<i128> {
    let (negative, digits) = match word.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, word.strip_prefix('+').unwrap_or(word)),
    };
    let value = if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        i128::from_str_radix(hex, 16).ok()?
    } else if digits.len() > 1 && digits.starts_with('0') {
        i128::from_str_radix(&digits[1..], 8).ok()?
    } else {
        digits.parse::<i128>().ok()?
    };
    Some(if negative { -value } else { value })
}

fn int<T: TryFrom<i128>>(word: &str) -> Option<T> {
    parse_int(word).and_then(|v| T::try_from(v).ok())
}

fn parse_float(word: &str) -> Option<f64> {
    let lower = word.to_ascii_lowercase();
    let trimmed = lower
        .strip_suffix('f')
        .filter(|s| !s.ends_with("in"))
        .unwrap_or(&lower);
    match trimmed {
        "inf" | "infinity" | "+inf" | "+infinity" => Some(f64::INFINITY),
        "-inf" | "-infinity" => Some(f64::NEG_INFINITY),
        "nan" | "-nan" | "+nan" => Some(f64::NAN),
        _ => trimmed
            .parse::<f64>()
            .ok()
            .or_else(|| parse_int(trimmed).map(|v| v as f64)),
    }
}

#[cfg(test)]
mod protoc_forms {
    use super::*;
    use protobuf::MessageFull;

    #[test]
    fn floats_print_as_cs_g_format() {
        assert_eq!(protoc_double(0.1), "0.1");
        assert_eq!(protoc_double(1e20), "1e+20");
        assert_eq!(protoc_double(1e-7), "1e-07");
        assert_eq!(protoc_double(100_000_000.0), "100000000");
        assert_eq!(protoc_double(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(protoc_double(-0.0), "-0");
        assert_eq!(protoc_double(f64::NEG_INFINITY), "-inf");
        assert_eq!(protoc_float(0.1), "0.1");
        assert_eq!(protoc_float(123_456_789.0), "123456792");
        assert_eq!(protoc_float(3.4e38), "3.4e+38");
        assert_eq!(protoc_float(f32::NAN), "nan");
        // Subnormal floats take 9 digits, as protoc 3.21 prints them; a
        // subnormal double still reads back from 15.
        assert_eq!(protoc_float(2.1e-44), "2.1019477e-44");
        assert_eq!(protoc_float(1.5e-39), "1.50000032e-39");
        assert_eq!(protoc_float(-1e-38), "-9.99999935e-39");
        assert_eq!(protoc_double(5e-320), "4.99994433591342e-320");
    }

    /// The payload of unknown field `number` as text.
    fn unknown(payload: &[u8]) -> String {
        let mut out = String::new();
        print_unknown(1, UnknownValue::LengthDelimited(payload), 0, &mut out);
        out
    }

    #[test]
    fn an_unknown_payload_prints_as_a_block_only_when_it_writes_back_the_same() {
        assert_eq!(unknown(&[0x08, 0x96, 0x01]), "1 {\n  1: 150\n}\n");
        assert_eq!(unknown(b""), "1: \"\"\n");
        // A non-minimal varint would come back shorter: a string.
        assert_eq!(unknown(&[0x08, 0x80, 0x00]), "1: \"\\010\\200\\000\"\n");
        // Where protoc prints a block and protoprof a string (docs/codec.md):
        // a group, and a tag whose varint has bits past 32.
        assert_eq!(unknown(&[0x0b, 0x0c]), "1: \"\\013\\014\"\n");
        assert_eq!(
            unknown(&[0xf8, 0xff, 0xff, 0xff, 0x7f, 0x00]),
            "1: \"\\370\\377\\377\\377\\177\\000\"\n"
        );
    }

    #[test]
    fn an_unknown_block_reads_back_to_its_bytes() {
        let descriptor = protoprof_model_pprof::perftools::profiles::Label::descriptor();
        let text = "100 {\n  1: 150\n  2: \"x\"\n  3 {\n    5: 0x00000001\n  }\n}\n";
        let message = parse(text, &descriptor, 10).unwrap();
        assert_eq!(print(&*message), text);
    }
}
