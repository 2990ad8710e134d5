//! Strings that are not UTF-8. Real pprof files have them (Go's encoder
//! writes bytes as they are); rust-protobuf rejects them. By default they are
//! replaced lossily, each repair reported with its path; strict mode rejects
//! the first one.

use std::borrow::Cow;

use crate::binary::layout::{FieldKind, Layouts};
use crate::binary::wire::{
    read_len, read_tag, read_varint, skip_fixed, write_varint, Occurrences, FIXED32, FIXED64, LEN,
    VARINT,
};
use crate::error::{CodecError, Warning, WarningKind};

/// An invalid string: its byte offset and field path.
pub struct BadString {
    pub offset: usize,
    pub path: String,
}

/// Rewrites `bytes` with every invalid string of a known string field
/// replaced by its lossy UTF-8 form, and lists what was replaced. The input
/// has passed the structural scan, so nesting is bounded and lengths fit.
pub fn repair(bytes: &[u8], layouts: &Layouts) -> (Vec<u8>, Vec<BadString>) {
    let mut out = Vec::with_capacity(bytes.len() + 64);
    let mut bad = Vec::new();
    rewrite(
        bytes,
        0,
        bytes.len(),
        Layouts::ROOT,
        layouts,
        "",
        &mut out,
        &mut bad,
    );
    (out, bad)
}

#[allow(clippy::too_many_arguments)]
fn rewrite(
    bytes: &[u8],
    start: usize,
    end: usize,
    layout: usize,
    layouts: &Layouts,
    path: &str,
    out: &mut Vec<u8>,
    bad: &mut Vec<BadString>,
) {
    let mut counts = Occurrences::default();
    let mut pos = start;
    while pos < end {
        let tag_start = pos;
        let Ok((number, wire_type)) = read_tag(bytes, &mut pos, end) else {
            break;
        };
        let value_start = pos;
        let index = counts.next(number);
        let field = layouts.messages[layout].field(number);
        let value_end = match wire_type {
            VARINT => read_varint(bytes, &mut pos, end)
                .map(|_| pos)
                .unwrap_or(end),
            FIXED64 => skip_fixed(&mut pos, end, 8).map(|_| pos).unwrap_or(end),
            FIXED32 => skip_fixed(&mut pos, end, 4).map(|_| pos).unwrap_or(end),
            LEN => read_len(bytes, &mut pos, end).unwrap_or(end),
            _ => end, // groups: copied through as they are
        };
        match (field, wire_type) {
            (Some(f), LEN) if matches!(f.kind, FieldKind::String | FieldKind::Message(_)) => {
                let payload = &bytes[pos..value_end];
                let here = if f.repeated {
                    format!(
                        "{path}{}{}[{index}]",
                        if path.is_empty() { "" } else { "." },
                        f.name
                    )
                } else {
                    format!("{path}{}{}", if path.is_empty() { "" } else { "." }, f.name)
                };
                out.extend_from_slice(&bytes[tag_start..value_start]);
                match f.kind {
                    FieldKind::String => {
                        let text = String::from_utf8_lossy(payload);
                        if let Cow::Owned(_) = text {
                            bad.push(BadString {
                                offset: pos,
                                path: here,
                            });
                        }
                        write_varint(out, text.len() as u64);
                        out.extend_from_slice(text.as_bytes());
                    }
                    FieldKind::Message(nested) => {
                        let mut inner = Vec::with_capacity(payload.len());
                        rewrite(
                            bytes, pos, value_end, nested, layouts, &here, &mut inner, bad,
                        );
                        write_varint(out, inner.len() as u64);
                        out.extend_from_slice(&inner);
                    }
                    _ => unreachable!(),
                }
            }
            _ => out.extend_from_slice(&bytes[tag_start..value_end]),
        }
        pos = value_end;
    }
}

/// Warnings for the repaired strings.
pub fn warnings(bad: &[BadString]) -> Vec<Warning> {
    bad.iter()
        .map(|b| Warning {
            offset: Some(b.offset as u64),
            path: b.path.clone(),
            kind: WarningKind::InvalidUtf8Repaired,
        })
        .collect()
}

/// The strict-mode error for an invalid string.
pub fn error(bad: BadString) -> CodecError {
    CodecError::InvalidUtf8 {
        offset: bad.offset as u64,
        path: bad.path,
    }
}
