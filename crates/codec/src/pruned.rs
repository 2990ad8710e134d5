//! A small copy of a large binary message that keeps its structure, for
//! telling types and revisions apart.
//!
//! Detection (`detect.rs`) reads which fields a message has, with which wire
//! types, nested how, and its first samples; not its bulk. A 100 MB OTLP
//! profile is a few kinds of record repeated a million times, and all of it
//! sits in one top-level field, so a prefix of whole top-level fields is the
//! whole message. [`pruned`] keeps, in every message, the first
//! [`KEPT_PER_NUMBER`] occurrences of each field number and drops the rest;
//! the submessages it keeps are pruned alike and written with their new
//! lengths. The copy is a well-formed message of the same type with every
//! field number the input has at every level it prunes: a dictionary after
//! a million samples, or a `Profile` field after them, still tells the
//! revision.
//!
//! Only payloads larger than [`PRUNED_ABOVE`] that read as fields are taken
//! for submessages. Text can read as fields too (`x` is a tag, then a
//! one-byte varint), and would be pruned like a message: the copy only
//! guides detection, and the decode that follows reads the input itself.
//! A payload as large that does not read as fields — a packed run, such as
//! v1experimental's `location_indices`, 80 MB of a 107 MB profile of
//! distinct stacks — is cut where its values still read whole
//! (`cut_point`). Every other field is copied as it is.

use std::collections::HashMap;

use crate::binary::wire::{self, LEN};

/// Occurrences of one field number kept in one message: more than the 64
/// samples `otlp::revision::identify` votes with.
const KEPT_PER_NUMBER: u32 = 256;

/// Smaller payloads are copied whole.
const PRUNED_ABOVE: usize = 64 << 10;

/// `bytes` with repeated fields cut down at every level, down to
/// `depth_limit` levels of nesting, in at most `max_len` bytes; `None` when
/// nothing would be dropped, the copy would be longer (a large field that
/// is not a message: a packed run, say), or `bytes` does not read as fields.
pub(crate) fn pruned(bytes: &[u8], depth_limit: u32, max_len: usize) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    match prune_into(bytes, depth_limit, max_len, &mut out)? {
        Pruned::Fields { dropped: true } => Some(out),
        Pruned::Fields { dropped: false } | Pruned::NotFields => None,
    }
}

/// What [`prune_into`] made of a message.
enum Pruned {
    /// It read as fields, and some were dropped or not.
    Fields { dropped: bool },
    /// A field did not read: what was appended is to be thrown away.
    NotFields,
}

/// Appends the fields of `message` to `out`, pruned; `None` once `out`
/// would pass `max_len`. Whether `message` reads as fields is found on the
/// way, so each large payload is scanned once.
fn prune_into(
    message: &[u8],
    depth_left: u32,
    max_len: usize,
    out: &mut Vec<u8>,
) -> Option<Pruned> {
    let mut counts = FieldCounts::default();
    let (mut start, mut dropped) = (0, false);
    for field in wire::fields(message) {
        let Ok(field) = field else {
            return Some(Pruned::NotFields);
        };
        let whole = &message[start..field.end];
        start = field.end;
        if counts.add(field.number) > KEPT_PER_NUMBER {
            dropped = true;
            continue;
        }
        let payload = field.value;
        let prunable = field.wire_type == LEN && payload.len() > PRUNED_ABOVE && depth_left > 0;
        let mut kept = Vec::new();
        let room = max_len.checked_sub(out.len())?;
        let pruned = match prunable {
            true => Some(prune_into(payload, depth_left - 1, room, &mut kept)?),
            false => None,
        };
        let cut = match pruned {
            Some(Pruned::NotFields) => cut_point(payload),
            _ => None,
        };
        if let Some(Pruned::Fields { dropped: true }) = pruned {
            wire::write_len_prefix(out, field.number, kept.len());
            out.extend_from_slice(&kept);
            dropped = true;
        } else if let Some(cut) = cut {
            wire::write_len_prefix(out, field.number, cut);
            out.extend_from_slice(&payload[..cut]);
            dropped = true;
        } else if whole.len() <= room {
            out.extend_from_slice(whole);
        } else {
            return None;
        }
        if out.len() > max_len {
            return None;
        }
    }
    Some(Pruned::Fields { dropped })
}

/// Where a large payload that is not fields (a packed run, a string) can
/// be cut and still read as what it was: at most [`PRUNED_ABOVE`] bytes, a
/// multiple of 8 (a packed run of fixed-width values keeps whole values),
/// after a byte below 0x80 (a packed run of varints keeps whole varints,
/// and UTF-8 is cut between characters). `None` when no such point is near
/// (then the payload is kept whole, as before).
fn cut_point(payload: &[u8]) -> Option<usize> {
    (1..=PRUNED_ABOVE / 8)
        .rev()
        .take(256)
        .map(|words| words * 8)
        .find(|&cut| payload[cut - 1] < 0x80)
}

/// How often each field number has been seen in one message.
#[derive(Default)]
struct FieldCounts {
    /// Numbers below 32, the usual ones, without hashing.
    low: [u32; 32],
    high: HashMap<u32, u32>,
}

impl FieldCounts {
    /// Counts one more `number`; the count so far.
    fn add(&mut self, number: u32) -> u32 {
        let count = match self.low.get_mut(number as usize) {
            Some(count) => count,
            None => self.high.entry(number).or_default(),
        };
        *count = count.saturating_add(1);
        *count
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::binary::wire::{write_tag, write_varint, VARINT};

    fn varint_field(out: &mut Vec<u8>, number: u32, value: u64) {
        write_tag(out, number, VARINT);
        write_varint(out, value);
    }

    fn len_field(out: &mut Vec<u8>, number: u32, payload: &[u8]) {
        wire::write_len_prefix(out, number, payload.len());
        out.extend_from_slice(payload);
    }

    /// (number, wire type, payload) of each field.
    fn fields(bytes: &[u8]) -> Vec<(u32, u8, Vec<u8>)> {
        wire::fields(bytes)
            .map(|f| f.unwrap())
            .map(|f| (f.number, f.wire_type, f.value.to_vec()))
            .collect()
    }

    /// A message like a profile: a large field 1 holding 100,000 samples
    /// (field 2) and then a field 9, then a small field 2 and a large
    /// payload that is not fields.
    fn profile_like() -> Vec<u8> {
        let mut inner = Vec::new();
        for i in 0..100_000 {
            let mut sample = Vec::new();
            varint_field(&mut sample, 1, i);
            len_field(&mut inner, 2, &sample);
        }
        varint_field(&mut inner, 9, 7);
        let mut message = Vec::new();
        len_field(&mut message, 1, &inner);
        len_field(&mut message, 2, b"small");
        len_field(&mut message, 3, &[0xff; 100_000]);
        message
    }

    #[test]
    fn keeps_every_field_number_and_the_first_occurrences() {
        let message = profile_like();
        let pruned = pruned(&message, 4, 1 << 20).expect("samples dropped");
        assert!(pruned.len() < 10_000 + 100_000, "{}", pruned.len());
        let top = fields(&pruned);
        let numbers: Vec<u32> = top.iter().map(|f| f.0).collect();
        assert_eq!(numbers, [1, 2, 3]);
        assert_eq!(top[1].2, b"small");
        // A long payload that does not read as fields, and has no byte
        // ending a varint to be cut after, is kept whole.
        assert_eq!(top[2].2, [0xff; 100_000]);
        let inner = fields(&top[0].2);
        assert_eq!(inner.len(), KEPT_PER_NUMBER as usize + 1);
        assert_eq!(inner.last().unwrap().0, 9, "the field after the samples");
        for (i, sample) in inner[..KEPT_PER_NUMBER as usize].iter().enumerate() {
            let mut expected = Vec::new();
            varint_field(&mut expected, 1, i as u64);
            assert_eq!((sample.0, &sample.2), (2, &expected));
        }
    }

    #[test]
    fn small_or_unreadable_messages_are_left_alone() {
        let mut small = Vec::new();
        for i in 0..KEPT_PER_NUMBER as u64 {
            varint_field(&mut small, 1, i);
        }
        assert_eq!(pruned(&small, 4, 1 << 20), None);
        let mut broken = profile_like();
        broken.push(0x0b); // wire type 3: a group, which nothing here has
        assert_eq!(pruned(&broken, 4, 1 << 20), None);
    }

    #[test]
    fn a_copy_past_its_length_limit_is_given_up() {
        let message = profile_like();
        let whole = pruned(&message, 4, 1 << 20).unwrap().len();
        assert_eq!(pruned(&message, 4, whole).map(|p| p.len()), Some(whole));
        // The 100,000-byte payload that is not fields cannot be cut.
        assert_eq!(pruned(&message, 4, whole - 1), None);
        assert_eq!(pruned(&message, 4, 50_000), None);
    }

    /// A long packed run is cut after a whole value, at a multiple of 8
    /// bytes; the field is kept.
    #[test]
    fn a_long_packed_run_is_cut_between_values() {
        // Two-byte varints (0x80 | low, high), and a group tag (0x0b)
        // every 1000 bytes, so that the run does not read as fields.
        let mut run: Vec<u8> = (0..100_000u32)
            .flat_map(|i| [0x80 | (i % 128) as u8, 1])
            .collect();
        for i in (999..run.len()).step_by(1000) {
            run[i - 1] = 0x8b;
            run[i] = 0x0b;
        }
        let mut message = Vec::new();
        len_field(&mut message, 15, &run);
        varint_field(&mut message, 9, 7);
        let pruned = pruned(&message, 4, 1 << 20).expect("the run cut");
        let top = fields(&pruned);
        assert_eq!((top[0].0, top[1].0), (15, 9));
        let cut = &top[0].2;
        assert!(
            cut.len() <= PRUNED_ABOVE && cut.len() % 8 == 0,
            "{}",
            cut.len()
        );
        assert!(cut.len() > PRUNED_ABOVE - 256 * 8);
        assert_eq!(&run[..cut.len()], &cut[..]);
        assert!(cut.last().unwrap() < &0x80);
    }

    #[test]
    fn depth_limit_stops_the_descent() {
        let message = profile_like();
        // Depth 0: only the top level, where nothing repeats.
        assert_eq!(pruned(&message, 0, 1 << 20), None);
    }

    #[test]
    fn counts_high_field_numbers_too() {
        let mut counts = FieldCounts::default();
        assert_eq!(counts.add(1), 1);
        assert_eq!(counts.add(1), 2);
        assert_eq!(counts.add(1_000_000), 1);
        assert_eq!(counts.add(1_000_000), 2);
        assert_eq!(counts.add(31), 1);
        assert_eq!(counts.add(32), 1);
    }
}
