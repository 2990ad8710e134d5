//! The structural pass every binary decode makes before rust-protobuf parses.
//!
//! rust-protobuf accepts some broken input silently (a message cut inside its
//! last packed field decodes as if complete) and its errors carry no
//! position. This pass walks the bytes once, iteratively (no recursion, so
//! deep nesting cannot overflow the stack), guided by the message layouts:
//! every tag, varint, fixed value and length is checked against the bytes
//! left in its enclosing message, depth is bounded, and wire-type surprises
//! are reported as warnings. Field paths are computed only for what is
//! reported ([`path_at`]), so the common path stays a tight loop.

use crate::binary::layout::{FieldKind, FieldLayout, Layouts};
use crate::binary::wire::{
    read_len, read_tag, read_varint, skip_fixed, Occurrences, END_GROUP, FIXED32, FIXED64, LEN,
    START_GROUP, VARINT,
};
use crate::error::{WarningKind, WireProblem};

/// A warning before its path is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawWarning {
    pub offset: usize,
    pub kind: WarningKind,
}

/// An error at a byte offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanError {
    pub offset: usize,
    pub problem: WireProblem,
}

struct Frame {
    layout: usize,
    end: usize,
    /// Singular non-message fields seen so far (numbers below 64).
    seen: u64,
    /// Counts of repeats, for the singular fields seen more than once.
    repeats: Vec<(u32, u32, usize)>,
}

impl Frame {
    fn new(layout: usize, end: usize) -> Self {
        Frame {
            layout,
            end,
            seen: 0,
            repeats: Vec::new(),
        }
    }
}

/// What a successful scan found.
#[derive(Debug, Default)]
pub struct ScanReport {
    /// At most `max_warnings` warnings.
    pub warnings: Vec<RawWarning>,
    /// Warnings past `max_warnings`, counted only.
    pub suppressed: usize,
    /// Field occurrences the layouts declare, at every depth.
    pub known_fields: u64,
    /// Field occurrences they do not declare (or with another wire type).
    pub unknown_fields: u64,
    /// String fields that are not UTF-8, or mostly control characters:
    /// strings only a repair (or a misreading) makes of them.
    pub implausible_strings: u64,
}

/// How many message levels [`scan`] looks into.
pub const TOP_LEVEL: u32 = 1;
pub const ALL_LEVELS: u32 = u32::MAX;

/// How [`scan`] reads.
#[derive(Debug, Clone, Copy)]
pub struct ScanOptions {
    /// Deepest nesting accepted.
    pub max_depth: u32,
    /// Warnings kept; the rest are counted.
    pub max_warnings: usize,
    /// How many message levels to look into (1: the top level only; its
    /// fields' payloads are bounds-checked but not read).
    pub descend: u32,
    /// Count string fields that are not text ([`ScanReport::implausible_strings`]):
    /// detection weighs it; decoding, which repairs or rejects strings
    /// itself, need not pay for it.
    pub check_strings: bool,
}

/// Checks the structure of `bytes` as a message of `layouts`' root type.
pub fn scan(
    bytes: &[u8],
    layouts: &Layouts,
    options: &ScanOptions,
) -> Result<ScanReport, ScanError> {
    let ScanOptions {
        max_depth,
        max_warnings,
        descend,
        check_strings,
    } = *options;
    let (mut known_fields, mut unknown_fields, mut implausible_strings) = (0u64, 0u64, 0u64);
    let mut warnings = Vec::new();
    let mut suppressed = 0usize;
    let mut warn = |warning: RawWarning| {
        if warnings.len() < max_warnings {
            warnings.push(warning);
        } else {
            suppressed += 1;
        }
    };
    let mut stack: Vec<Frame> = vec![Frame::new(Layouts::ROOT, bytes.len())];
    let mut pos = 0usize;
    while let Some(frame) = stack.last_mut() {
        if pos == frame.end {
            let done = stack.pop().expect("a frame is open");
            report_repeats(&done, &mut warn);
            continue;
        }
        let tag_start = pos;
        let end = frame.end;
        let fail = |problem| ScanError {
            offset: tag_start,
            problem,
        };
        let (number, wire_type) = read_tag(bytes, &mut pos, end).map_err(fail)?;
        let layout = &layouts.messages[frame.layout];
        let field = layout.field(number);
        match field {
            Some(f) if f.accepts(wire_type) => known_fields += 1,
            _ => unknown_fields += 1,
        }
        if let Some(field) = field {
            if !field.accepts(wire_type) {
                warn(RawWarning {
                    offset: tag_start,
                    kind: WarningKind::WrongWireType {
                        field: number,
                        expected: field.wire_type(),
                        found: wire_type,
                    },
                });
            } else if !field.repeated && !matches!(field.kind, FieldKind::Message(_)) {
                note_singular(frame, number, tag_start);
            }
        }
        match wire_type {
            VARINT => {
                read_varint(bytes, &mut pos, end).map_err(fail)?;
            }
            FIXED64 => skip_fixed(&mut pos, end, 8).map_err(fail)?,
            FIXED32 => skip_fixed(&mut pos, end, 4).map_err(fail)?,
            LEN => {
                let payload_end = read_len(bytes, &mut pos, end).map_err(fail)?;
                match field {
                    Some(FieldLayout {
                        kind: FieldKind::Message(nested),
                        ..
                    }) => {
                        if stack.len() as u32 > max_depth {
                            return Err(fail(WireProblem::DepthExceeded { limit: max_depth }));
                        }
                        if (stack.len() as u32) < descend {
                            let nested = *nested;
                            stack.push(Frame::new(nested, payload_end));
                            continue;
                        }
                    }
                    Some(field) => {
                        let payload = &bytes[pos..payload_end];
                        let plausible =
                            check_payload(payload, field, check_strings).map_err(fail)?;
                        implausible_strings += u64::from(!plausible);
                    }
                    None => {}
                }
                pos = payload_end;
            }
            START_GROUP => {
                warn(RawWarning {
                    offset: tag_start,
                    kind: WarningKind::GroupDropped { field: number },
                });
                skip_group(
                    bytes,
                    &mut pos,
                    end,
                    number,
                    max_depth.saturating_sub(stack.len() as u32),
                )
                .map_err(|(offset, problem)| ScanError { offset, problem })?
            }
            END_GROUP => return Err(fail(WireProblem::UnexpectedEndGroup(number))),
            _ => unreachable!("read_tag rejects wire types 6 and 7"),
        }
    }
    Ok(ScanReport {
        warnings,
        suppressed,
        known_fields,
        unknown_fields,
        implausible_strings,
    })
}

/// Checks a length-delimited payload that is not a message: a packed run
/// must hold whole values; a string, when `check_strings`, is `false` when
/// it is not text.
fn check_payload(
    payload: &[u8],
    field: &FieldLayout,
    check_strings: bool,
) -> Result<bool, WireProblem> {
    match field.kind {
        FieldKind::Scalar(width) if field.repeated => {
            check_packed(payload, 0, payload.len(), width).map(|()| true)
        }
        FieldKind::String if check_strings => Ok(plausible_string(payload)),
        _ => Ok(true),
    }
}

/// UTF-8 that is mostly text: at most one byte in eight an ASCII control
/// character other than tab, newline and carriage return. Binary data read
/// as a string field (a misread message) fails this almost always.
fn plausible_string(bytes: &[u8]) -> bool {
    // Counted branch-free, a chunk at a time, so the compiler vectorises
    // it: detection runs this over every string of the input.
    let is_control = |b: u8| {
        let low = b < 0x20 && b != b'\t' && b != b'\n' && b != b'\r';
        u32::from(low | (b == 0x7f))
    };
    let controls: usize = bytes
        .chunks(256)
        .map(|chunk| chunk.iter().map(|&b| is_control(b)).sum::<u32>() as usize)
        .sum();
    controls * 8 <= bytes.len() && std::str::from_utf8(bytes).is_ok()
}

fn note_singular(frame: &mut Frame, number: u32, offset: usize) {
    if number >= 64 {
        return;
    }
    let bit = 1u64 << number;
    if frame.seen & bit == 0 {
        frame.seen |= bit;
        return;
    }
    match frame.repeats.iter_mut().find(|(n, _, _)| *n == number) {
        Some(entry) => {
            entry.1 += 1;
            entry.2 = offset;
        }
        None => frame.repeats.push((number, 2, offset)),
    }
}

fn report_repeats(frame: &Frame, warn: &mut impl FnMut(RawWarning)) {
    for &(field, count, offset) in &frame.repeats {
        warn(RawWarning {
            offset,
            kind: WarningKind::RepeatedSingularField { field, count },
        });
    }
}

/// A packed payload must hold whole values: a multiple of the width for
/// fixed types, and for varints, a last byte that ends a varint.
fn check_packed(bytes: &[u8], start: usize, end: usize, width: u8) -> Result<(), WireProblem> {
    let len = end - start;
    let whole = match width {
        FIXED32 => len % 4 == 0,
        FIXED64 => len % 8 == 0,
        _ => len == 0 || bytes[end - 1] < 0x80,
    };
    if whole {
        Ok(())
    } else {
        Err(WireProblem::TruncatedPacked)
    }
}

/// Skips the rest of a group whose start tag was just read, iteratively.
pub(crate) fn skip_group(
    bytes: &[u8],
    pos: &mut usize,
    end: usize,
    number: u32,
    depth_left: u32,
) -> Result<(), (usize, WireProblem)> {
    let mut open = vec![number];
    while let Some(&innermost) = open.last() {
        if open.len() as u32 > depth_left {
            return Err((*pos, WireProblem::DepthExceeded { limit: depth_left }));
        }
        if *pos >= end {
            return Err((*pos, WireProblem::UnterminatedGroup(innermost)));
        }
        let at = *pos;
        let (n, wire_type) = read_tag(bytes, pos, end).map_err(|p| (at, p))?;
        match wire_type {
            VARINT => {
                read_varint(bytes, pos, end).map_err(|p| (at, p))?;
            }
            FIXED64 => skip_fixed(pos, end, 8).map_err(|p| (at, p))?,
            FIXED32 => skip_fixed(pos, end, 4).map_err(|p| (at, p))?,
            LEN => *pos = read_len(bytes, pos, end).map_err(|p| (at, p))?,
            START_GROUP => open.push(n),
            END_GROUP if n == innermost => {
                open.pop();
            }
            _ => return Err((at, WireProblem::UnexpectedEndGroup(n))),
        }
    }
    Ok(())
}

/// The field path of the value at `offset`, e.g. `sample[3].location_id[1]`;
/// empty at the top level. Walks from the start; meant for reporting only.
pub fn path_at(bytes: &[u8], layouts: &Layouts, offset: usize) -> String {
    let mut path = String::new();
    let mut layout = Layouts::ROOT;
    let (mut pos, mut end) = (0usize, bytes.len());
    let mut counts = Occurrences::default();
    while pos < end && pos <= offset {
        let tag_start = pos;
        let Ok((number, wire_type)) = read_tag(bytes, &mut pos, end) else {
            break;
        };
        let value_end = match wire_type {
            VARINT => read_varint(bytes, &mut pos, end).map(|_| pos).ok(),
            FIXED64 => skip_fixed(&mut pos, end, 8).map(|_| pos).ok(),
            FIXED32 => skip_fixed(&mut pos, end, 4).map(|_| pos).ok(),
            LEN => read_len(bytes, &mut pos, end).ok(),
            _ => None,
        };
        let index = counts.next(number);
        let field = layouts.messages[layout].field(number);
        let contains = value_end.is_none_or(|value_end| offset < value_end) && offset >= tag_start;
        if !contains {
            pos = value_end.expect("a complete value");
            continue;
        }
        if !path.is_empty() {
            path.push('.');
        }
        match field {
            Some(f) => {
                path.push_str(&f.name);
                if f.repeated {
                    let element = match (wire_type, f.kind) {
                        (LEN, FieldKind::Scalar(width)) => {
                            index_in_packed(bytes, pos, offset, width)
                        }
                        _ => index,
                    };
                    path.push_str(&format!("[{element}]"));
                }
            }
            None => path.push_str(&format!("<field {number}>")),
        }
        match (field.map(|f| f.kind), wire_type, value_end) {
            (Some(FieldKind::Message(nested)), LEN, Some(payload_end)) if offset >= pos => {
                layout = nested;
                end = payload_end;
                counts = Occurrences::default();
            }
            _ => return path,
        }
    }
    path
}

/// Which element of a packed payload starting at `start` holds `offset`.
fn index_in_packed(bytes: &[u8], start: usize, offset: usize, width: u8) -> usize {
    if offset < start {
        return 0;
    }
    match width {
        FIXED32 => (offset - start) / 4,
        FIXED64 => (offset - start) / 8,
        _ => bytes[start..offset.min(bytes.len())]
            .iter()
            .filter(|b| **b < 0x80)
            .count(),
    }
}
