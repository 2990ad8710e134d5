//! Leaving the samples (and other big repeated fields) of nested messages
//! in the input bytes: the split behind the OTLP views.
//!
//! An OTLP message holds its profiles three or four messages deep, and each
//! profile holds its samples. [`split`] copies everything but the samples
//! into a new buffer (lengths of the enclosing messages rewritten), and
//! records where each profile's samples lie in the input. The copy holds
//! the tables and headers only, so decoding it with rust-protobuf is cheap;
//! the samples are decoded one at a time when they are read.
//!
//! Anything the split cannot mirror exactly — a group, a malformed value, a
//! singular message on the path repeated (rust-protobuf would merge the
//! two), an input past 4 GiB — makes it return `None`, and the caller
//! decodes the ordinary way.

use protobuf::reflect::MessageDescriptor;
use protobuf::MessageFull;

use crate::binary::message::{decode_inflated, parse_message, DecodeOptions, Decoded};
use crate::binary::wire::{read_len, read_tag, skip_value, write_varint, LEN};
use crate::error::CodecError;
use crate::limits::Limits;

/// Decodes inflated `bytes` of `descriptor`'s type for a view: the checks,
/// limits, warnings and errors of [`crate::decode`], the message made by
/// `split` (without what it leaves apart, and that) when it is `bytes`
/// itself that is parsed, and parsed whole otherwise (nothing apart): the
/// ranges a split records index `bytes`, not a copy with invalid UTF-8
/// repaired.
pub(crate) fn decode_split<M: MessageFull, A>(
    bytes: &[u8],
    gzipped: bool,
    descriptor: &MessageDescriptor,
    options: &DecodeOptions,
    split: impl Fn(&[u8], &Limits) -> Option<(M, A)>,
) -> Result<Decoded<(M, Option<A>)>, CodecError> {
    let parsed_at = bytes.as_ptr();
    decode_inflated(bytes, gzipped, descriptor, options, |parsed, limits| {
        if parsed.as_ptr() == parsed_at {
            if let Some((message, apart)) = split(parsed, limits) {
                return Ok((message, Some(apart)));
            }
        }
        parse_message(parsed, limits).map(|message| (message, None))
    })
}

/// Where one sample's message lies in the input: `start..end` (32-bit, as
/// in `pprof::samples`).
pub(crate) type SampleRange = (u32, u32);

/// One message on the way from the root to the profiles.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Step {
    /// The field holding the next message down.
    pub number: u32,
    /// Whether that field is singular (a second occurrence would merge).
    pub singular: bool,
}

/// A repeated field of messages to leave in the bytes, and the way to the
/// messages that hold it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Target<'p> {
    /// From the root to the holding messages.
    pub path: &'p [Step],
    /// The field, in each holding message.
    pub field: u32,
}

/// The input without the targets' fields, and where their messages are.
#[derive(Debug)]
pub(crate) struct Split {
    /// The input with every target field removed.
    pub rest: Vec<u8>,
    /// Per target: for each holding message, in message order, the ranges
    /// of its messages in the input.
    pub found: Vec<Vec<Vec<SampleRange>>>,
}

/// What the walk needs beside the bytes.
struct Walk<'p> {
    targets: &'p [Target<'p>],
    found: Vec<Vec<Vec<SampleRange>>>,
}

/// Splits `bytes` (see the module comment); at most 8 targets.
pub(crate) fn split(bytes: &[u8], targets: &[Target]) -> Option<Split> {
    u32::try_from(bytes.len()).ok()?;
    assert!(targets.len() <= 8, "at most 8 targets");
    let mut walk = Walk {
        targets,
        found: vec![Vec::new(); targets.len()],
    };
    let mut rest = Vec::new();
    let all = (1u8 << targets.len()) - 1;
    walk.message(bytes, (0, bytes.len()), 0, all, &mut rest)?;
    Some(Split {
        rest,
        found: walk.found,
    })
}

impl Walk<'_> {
    /// Targets (of those in `active`) whose holding messages have `number`
    /// as their field at `depth`.
    fn descending(&self, active: u8, depth: usize, number: u32) -> (u8, bool) {
        let (mut mask, mut singular) = (0, false);
        for (t, target) in self.targets.iter().enumerate() {
            let step = target.path.get(depth);
            if active & (1 << t) != 0 && step.is_some_and(|s| s.number == number) {
                mask |= 1 << t;
                singular |= step.is_some_and(|s| s.singular);
            }
        }
        (mask, singular)
    }

    /// The target (of those in `active`) whose holding messages are at
    /// `depth` and hold `number`.
    fn held(&self, active: u8, depth: usize, number: u32) -> Option<usize> {
        self.targets.iter().enumerate().position(|(t, target)| {
            active & (1 << t) != 0 && target.path.len() == depth && target.field == number
        })
    }

    /// Copies the message at `start..end`, `depth` steps down, into `out`,
    /// for the targets in `active`.
    fn message(
        &mut self,
        bytes: &[u8],
        (start, end): (usize, usize),
        depth: usize,
        active: u8,
        out: &mut Vec<u8>,
    ) -> Option<()> {
        let mut pos = start;
        let mut seen_singular = 0u64;
        while pos < end {
            let field_start = pos;
            let (number, wire_type) = read_tag(bytes, &mut pos, end).ok()?;
            let tag_end = pos;
            if wire_type != LEN {
                skip_value(bytes, &mut pos, end, wire_type)?;
                out.extend_from_slice(&bytes[field_start..pos]);
                continue;
            }
            let value_end = read_len(bytes, &mut pos, end).ok()?;
            if let Some(t) = self.held(active, depth, number) {
                let holder = self.found[t].last_mut().expect("pushed on entry");
                holder.push((pos as u32, value_end as u32));
            } else if let (mask @ 1.., singular) = self.descending(active, depth, number) {
                // rust-protobuf merges a repeated singular message: not mirrored.
                if singular {
                    let bit = 1u64.checked_shl(number)?;
                    if seen_singular & bit != 0 {
                        return None;
                    }
                    seen_singular |= bit;
                }
                for (t, target) in self.targets.iter().enumerate() {
                    if mask & (1 << t) != 0 && target.path.len() == depth + 1 {
                        self.found[t].push(Vec::new());
                    }
                }
                let mut inner = Vec::new();
                self.message(bytes, (pos, value_end), depth + 1, mask, &mut inner)?;
                out.extend_from_slice(&bytes[field_start..tag_end]);
                write_varint(out, inner.len() as u64);
                out.extend_from_slice(&inner);
            } else {
                out.extend_from_slice(&bytes[field_start..value_end]);
            }
            pos = value_end;
        }
        Some(())
    }
}
