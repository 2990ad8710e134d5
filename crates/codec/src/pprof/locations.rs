//! A fast reader for pprof's `Location` messages, beside the one for
//! samples (`samples.rs`).
//!
//! rust-protobuf grows each location's `line` vector one push at a time,
//! which reserves four lines for a location that has one: with a few
//! hundred thousand locations that is most of what a decoded profile holds
//! besides its samples (docs/performance-log.md, issue 14). Here each
//! location's lines are allocated at their exact number.
//!
//! As for samples, only what rust-protobuf reads the same way is accepted;
//! anything else (an unknown field, another wire type, an `is_folded` that
//! is not 0 or 1, any malformation) returns `None` and the whole input
//! takes the ordinary parse.

use protoprof_model_pprof::fields::perftools::profiles::{line as line_field, location};
use protoprof_model_pprof::perftools::profiles::{Line, Location};

use crate::binary::wire::{self, read_len, read_tag, read_varint};

/// Reads one `Location` message; `lines` is scratch space, reused between
/// calls.
pub(crate) fn read_location(bytes: &[u8], lines: &mut Vec<Line>) -> Option<Location> {
    let (end, mut pos, mut read) = (bytes.len(), 0, Location::new());
    lines.clear();
    while pos < end {
        match read_tag(bytes, &mut pos, end).ok()? {
            (location::LINE, wire::LEN) => {
                let line_end = read_len(bytes, &mut pos, end).ok()?;
                lines.push(read_line(&bytes[pos..line_end])?);
                pos = line_end;
            }
            (number, wire::VARINT) => {
                let value = read_varint(bytes, &mut pos, end).ok()?;
                match number {
                    location::ID => read.id = value,
                    location::MAPPING_ID => read.mapping_id = value,
                    location::ADDRESS => read.address = value,
                    location::IS_FOLDED if value <= 1 => read.is_folded = value == 1,
                    _ => return None,
                }
            }
            _ => return None,
        }
    }
    // Allocated at the exact number of lines; `lines` keeps its capacity.
    read.line = Vec::with_capacity(lines.len());
    read.line.append(lines);
    Some(read)
}

fn read_line(bytes: &[u8]) -> Option<Line> {
    let mut line = Line::new();
    wire::varint_fields(bytes, |number, value| {
        match number {
            line_field::FUNCTION_ID => line.function_id = value,
            line_field::LINE => line.line = value as i64,
            line_field::COLUMN => line.column = value as i64,
            _ => return None,
        }
        Some(())
    })?;
    Some(line)
}

#[cfg(test)]
mod tests {
    use protobuf::Message;

    use super::*;

    fn read(location: &Location) -> Option<Location> {
        read_location(&location.write_to_bytes().unwrap(), &mut Vec::new())
    }

    #[test]
    fn reads_what_rust_protobuf_writes_with_lines_at_their_exact_number() {
        let line = |function_id, line, column| Line {
            function_id,
            line,
            column,
            ..Default::default()
        };
        let location = Location {
            id: u64::MAX,
            mapping_id: 3,
            address: 0x7fff_0000_1234,
            line: vec![
                line(1, -5, 7),
                line(2, 40, 0),
                line(300, i64::MIN, i64::MAX),
            ],
            is_folded: true,
            ..Default::default()
        };
        let read = read(&location).unwrap();
        assert_eq!(read, location);
        assert_eq!(read.line.capacity(), 3);
        assert_eq!(self::read(&Location::new()).unwrap(), Location::new());
    }

    #[test]
    fn declines_what_rust_protobuf_reads_otherwise() {
        let declined = |bytes: &[u8]| read_location(bytes, &mut Vec::new()).is_none();
        // An unknown field (kept by rust-protobuf as an unknown field).
        assert!(declined(&[0x30, 1]));
        // A known field with another wire type (likewise).
        assert!(declined(&[0x0d, 1, 2, 3, 4]));
        // is_folded as 2, an unknown field inside a line, a cut-off line.
        assert!(declined(&[0x28, 2]));
        assert!(declined(&[0x22, 2, 0x28, 1]));
        assert!(declined(&[0x22, 4, 0x08, 1]));
        assert!(!declined(&[0x28, 1, 0x22, 2, 0x08, 1]));
    }
}
