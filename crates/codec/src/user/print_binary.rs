//! Binary protobuf of a user's type printed as text format straight from
//! the bytes, without decoding it into a message: a dynamic message takes
//! several times its encoding in memory, and its text is made from the
//! bytes as well. The text is what [`crate::text::print`] prints of the
//! message [`crate::user::parse::merge`] reads (a test holds the two
//! equal): fields in number order, the last value of a singular scalar,
//! every occurrence of a singular message merged, map entries by key (the
//! last of a key winning), unknown fields and wrong wire types after the
//! known fields, in number order.

use std::io::Write;

use protobuf::reflect::{
    FieldDescriptor, MessageDescriptor, ReflectValueBox, RuntimeFieldType, RuntimeType,
};

use crate::binary::layout::Layouts;
use crate::binary::scan::{self, ScanOptions, ALL_LEVELS};
use crate::binary::wire::{
    read_len, read_tag, read_varint, skip_value, FIXED32, FIXED64, LEN, START_GROUP, VARINT,
};
use crate::error::{CodecError, Warning, WarningKind, WireProblem};
use crate::limits::Limits;
use crate::registry::{fields_in_number_order, present_value};
use crate::text::{map_key_order, print_unknown, push_indent, push_scalar, UnknownValue};
use crate::user::parse::{accepts, element_type, is_packable, scalar, wire_type_of};

/// Text is written out once this much has gathered.
const FLUSH_AT: usize = 1 << 20;

/// Prints `bytes`, a message of type `descriptor`, to `writer`. The
/// structure is checked first (errors name the byte and the field path), so
/// nothing is written for input that does not decode.
pub fn print_binary(
    bytes: &[u8],
    descriptor: &MessageDescriptor,
    limits: &Limits,
    writer: &mut dyn Write,
) -> Result<Vec<Warning>, CodecError> {
    let layouts = Layouts::for_message(descriptor);
    let options = ScanOptions {
        max_depth: limits.max_depth,
        max_warnings: 0,
        descend: ALL_LEVELS,
        check_strings: false,
    };
    scan::scan(bytes, &layouts, &options).map_err(|error| CodecError::Wire {
        offset: error.offset as u64,
        path: scan::path_at(bytes, &layouts, error.offset),
        problem: error.problem,
    })?;
    let mut printer = Printer {
        out: String::new(),
        writer,
        warnings: Vec::new(),
        max_depth: limits.max_depth,
    };
    printer.message(descriptor, &[bytes], 0, 0)?;
    printer.flush(0)?;
    Ok(printer.warnings)
}

struct Printer<'w> {
    out: String,
    writer: &'w mut dyn Write,
    warnings: Vec<Warning>,
    max_depth: u32,
}

/// One field occurrence: its number, wire type, and the value's bytes (the
/// varint or fixed bytes, or the payload of a length-delimited value).
struct Occurrence<'b> {
    number: u32,
    wire_type: u8,
    value: &'b [u8],
}

fn truncated(problem: WireProblem) -> CodecError {
    CodecError::Wire {
        offset: 0,
        path: String::new(),
        problem,
    }
}

/// The occurrences in `parts` (the payloads of one message, merged in
/// order), groups skipped.
fn occurrences<'b>(parts: &[&'b [u8]]) -> Result<(Vec<Occurrence<'b>>, Vec<u32>), CodecError> {
    let (mut found, mut groups) = (Vec::new(), Vec::new());
    for part in parts {
        let mut pos = 0;
        while pos < part.len() {
            let (number, wire_type) = read_tag(part, &mut pos, part.len()).map_err(truncated)?;
            let start = pos;
            if wire_type == START_GROUP {
                // The scan checked the structure and its depth already.
                scan::skip_group(part, &mut pos, part.len(), number, u32::MAX)
                    .map_err(|(_, problem)| truncated(problem))?;
                groups.push(number);
                continue;
            }
            skip_value(part, &mut pos, part.len(), wire_type)
                .ok_or(truncated(WireProblem::TruncatedPacked))?;
            let value = match wire_type {
                LEN => {
                    let mut at = start;
                    let end = read_len(part, &mut at, part.len()).map_err(truncated)?;
                    &part[at..end]
                }
                _ => &part[start..pos],
            };
            found.push(Occurrence {
                number,
                wire_type,
                value,
            });
        }
    }
    Ok((found, groups))
}

impl Printer<'_> {
    fn flush(&mut self, at_least: usize) -> Result<(), CodecError> {
        if self.out.len() >= at_least {
            self.writer.write_all(self.out.as_bytes())?;
            self.out.clear();
        }
        Ok(())
    }

    fn warn(&mut self, kind: WarningKind) {
        self.warnings.push(Warning {
            offset: None,
            path: String::new(),
            kind,
        });
    }

    /// Prints the message whose encoding is `parts` (several when a
    /// singular message field came more than once: protobuf merges them).
    fn message(
        &mut self,
        descriptor: &MessageDescriptor,
        parts: &[&[u8]],
        indent: usize,
        depth: u32,
    ) -> Result<(), CodecError> {
        if depth > self.max_depth {
            return Err(truncated(WireProblem::DepthExceeded {
                limit: self.max_depth,
            }));
        }
        let (found, groups) = occurrences(parts)?;
        for field in groups {
            self.warn(WarningKind::GroupDropped { field });
        }
        let mut unknown: Vec<&Occurrence> = Vec::new();
        let mut known: Vec<Vec<(usize, &Occurrence)>> = Vec::new();
        let fields = fields_in_number_order(descriptor);
        known.resize_with(fields.len(), Vec::new);
        for (index, occurrence) in found.iter().enumerate() {
            let place = fields.binary_search_by_key(&(occurrence.number as i32), |f| f.number());
            match place {
                Ok(i) if accepts(&fields[i], occurrence.wire_type) => {
                    known[i].push((index, occurrence))
                }
                Ok(i) => {
                    self.warn(WarningKind::WrongWireType {
                        field: occurrence.number,
                        expected: wire_type_of(&fields[i]),
                        found: occurrence.wire_type,
                    });
                    unknown.push(occurrence);
                }
                Err(_) => unknown.push(occurrence),
            }
        }
        keep_last_of_each_oneof(&fields, &mut known);
        for (field, occurrences) in fields.iter().zip(&known) {
            if !occurrences.is_empty() {
                let occurrences: Vec<&Occurrence> = occurrences.iter().map(|(_, o)| *o).collect();
                self.field(field, &occurrences, indent, depth)?;
            }
        }
        // As rust-protobuf keeps them: by number, and within a number
        // fixed32, fixed64, varint, then length-delimited values.
        let rank = |w: u8| match w {
            FIXED32 => 0,
            FIXED64 => 1,
            VARINT => 2,
            _ => 3,
        };
        unknown.sort_by_key(|o| (o.number, rank(o.wire_type)));
        for occurrence in unknown {
            print_unknown(
                occurrence.number,
                unknown_value(occurrence),
                indent,
                &mut self.out,
            );
            self.after_value(indent)?;
        }
        Ok(())
    }

    fn after_value(&mut self, indent: usize) -> Result<(), CodecError> {
        if indent == 0 {
            self.flush(FLUSH_AT)?;
        }
        Ok(())
    }

    fn field(
        &mut self,
        field: &FieldDescriptor,
        occurrences: &[&Occurrence],
        indent: usize,
        depth: u32,
    ) -> Result<(), CodecError> {
        match field.runtime_field_type() {
            RuntimeFieldType::Singular(RuntimeType::Message(descriptor)) => {
                let parts: Vec<&[u8]> = occurrences.iter().map(|o| o.value).collect();
                self.open(field.name(), indent);
                self.message(&descriptor, &parts, indent + 1, depth + 1)?;
                self.close(indent);
            }
            RuntimeFieldType::Singular(_) => {
                let last = occurrences.last().expect("at least one");
                let value = self.scalar(field, last.value);
                if present_value(field, Some(value.as_value_ref())).is_some() {
                    self.line(field.name(), &value, indent);
                }
            }
            RuntimeFieldType::Repeated(element) => {
                for occurrence in occurrences {
                    self.repeated(field, &element, occurrence, indent, depth)?;
                }
            }
            RuntimeFieldType::Map(..) => self.map(field, occurrences, indent, depth)?,
        }
        self.after_value(indent)
    }

    fn repeated(
        &mut self,
        field: &FieldDescriptor,
        element: &RuntimeType,
        occurrence: &Occurrence,
        indent: usize,
        depth: u32,
    ) -> Result<(), CodecError> {
        if let RuntimeType::Message(descriptor) = element {
            self.open(field.name(), indent);
            self.message(descriptor, &[occurrence.value], indent + 1, depth + 1)?;
            self.close(indent);
            return self.after_value(indent);
        }
        if occurrence.wire_type == LEN && is_packable(field) {
            let (run, own) = (occurrence.value, wire_type_of(field));
            let mut pos = 0;
            while pos < run.len() {
                let at = pos;
                skip_value(run, &mut pos, run.len(), own)
                    .ok_or(truncated(WireProblem::TruncatedPacked))?;
                let value = self.scalar(field, &run[at..pos]);
                self.line(field.name(), &value, indent);
                self.after_value(indent)?;
            }
            return Ok(());
        }
        let value = self.scalar(field, occurrence.value);
        self.line(field.name(), &value, indent);
        self.after_value(indent)
    }

    /// A map's entries sorted by key, the last entry of a key winning.
    fn map(
        &mut self,
        field: &FieldDescriptor,
        occurrences: &[&Occurrence],
        indent: usize,
        depth: u32,
    ) -> Result<(), CodecError> {
        let RuntimeType::Message(entry) = element_type(field) else {
            unreachable!("a map field's element is its entry message")
        };
        let (key_field, value_field) = (
            entry.field_by_number(1).expect("key"),
            entry.field_by_number(2).expect("value"),
        );
        let mut entries: Vec<(ReflectValueBox, Vec<&[u8]>)> = Vec::new();
        for occurrence in occurrences {
            let (found, _) = occurrences_of_entry(occurrence.value)?;
            let key = found
                .iter()
                .rev()
                .find(|o| o.number == 1 && o.wire_type == wire_type_of(&key_field))
                .map_or_else(
                    || default_of(&key_field),
                    |o| self.scalar(&key_field, o.value),
                );
            let values: Vec<&[u8]> = found
                .iter()
                .filter(|o| o.number == 2 && o.wire_type == wire_type_of(&value_field))
                .map(|o| o.value)
                .collect();
            entries.retain(|(k, _)| *k != key);
            entries.push((key, values));
        }
        entries.sort_by_key(|(k, _)| map_key_order(&k.as_value_ref()));
        for (key, values) in entries {
            self.open(field.name(), indent);
            self.line("key", &key, indent + 1);
            self.map_value(&value_field, &values, indent + 1, depth)?;
            self.close(indent);
            self.after_value(indent)?;
        }
        Ok(())
    }

    fn map_value(
        &mut self,
        field: &FieldDescriptor,
        values: &[&[u8]],
        indent: usize,
        depth: u32,
    ) -> Result<(), CodecError> {
        match element_type(field) {
            // The last value of a message type wins whole, as a map entry
            // is inserted whole.
            RuntimeType::Message(descriptor) => {
                self.open("value", indent);
                let last: Vec<&[u8]> = values.last().into_iter().copied().collect();
                self.message(&descriptor, &last, indent + 1, depth + 2)?;
                self.close(indent);
            }
            _ => {
                let value = match values.last() {
                    Some(raw) => self.scalar(field, raw),
                    None => default_of(field),
                };
                self.line("value", &value, indent);
            }
        }
        Ok(())
    }

    fn scalar(&mut self, field: &FieldDescriptor, raw: &[u8]) -> ReflectValueBox {
        let (value, repaired) = scalar(field, raw);
        if repaired {
            self.warn(WarningKind::InvalidUtf8Repaired);
        }
        value
    }

    fn line(&mut self, name: &str, value: &ReflectValueBox, indent: usize) {
        push_indent(&mut self.out, indent);
        self.out.push_str(name);
        self.out.push_str(": ");
        push_scalar(&mut self.out, &value.as_value_ref());
        self.out.push('\n');
    }

    fn open(&mut self, name: &str, indent: usize) {
        push_indent(&mut self.out, indent);
        self.out.push_str(name);
        self.out.push_str(" {\n");
    }

    fn close(&mut self, indent: usize) {
        push_indent(&mut self.out, indent);
        self.out.push_str("}\n");
    }
}

/// Setting a member of a oneof clears the others: of each oneof only the
/// member set last stays, with what came after the others' last values.
fn keep_last_of_each_oneof(fields: &[FieldDescriptor], known: &mut [Vec<(usize, &Occurrence)>]) {
    let oneof_of = |f: &FieldDescriptor| f.containing_oneof().map(|o| o.name().to_string());
    for (i, field) in fields.iter().enumerate() {
        let Some(oneof) = oneof_of(field) else {
            continue;
        };
        let others_last = fields
            .iter()
            .enumerate()
            .filter(|(j, other)| *j != i && oneof_of(other).as_deref() == Some(oneof.as_str()))
            .filter_map(|(j, _)| known[j].last().map(|(index, _)| *index))
            .max();
        if let Some(cut) = others_last {
            known[i].retain(|(index, _)| *index > cut);
        }
    }
}

fn occurrences_of_entry(payload: &[u8]) -> Result<(Vec<Occurrence<'_>>, Vec<u32>), CodecError> {
    occurrences(&[payload])
}

fn default_of(field: &FieldDescriptor) -> ReflectValueBox {
    crate::text::default_value(&element_type(field))
}

fn unknown_value<'b>(occurrence: &Occurrence<'b>) -> UnknownValue<'b> {
    let raw = occurrence.value;
    match occurrence.wire_type {
        VARINT => {
            let mut pos = 0;
            UnknownValue::Varint(read_varint(raw, &mut pos, raw.len()).unwrap_or_default())
        }
        FIXED32 => UnknownValue::Fixed32(u32::from_le_bytes(raw.try_into().unwrap_or_default())),
        FIXED64 => UnknownValue::Fixed64(u64::from_le_bytes(raw.try_into().unwrap_or_default())),
        _ => UnknownValue::LengthDelimited(raw),
    }
}
