//! Protobuf wire primitives: varints, tags and wire types, bounds-checked.

use crate::error::WireProblem;

// Writing and the wire constants are shared with the other layers.
pub use protoprof_model_meta::wire::{
    len_field_size, optional_size, packed_payload, write_len_prefix, write_optional, write_packed,
    write_tag, write_varint, END_GROUP, FIXED32, FIXED64, LEN, MAX_FIELD_NUMBER, START_GROUP,
    VARINT,
};

/// Reads a varint at `*pos`, not reading at or past `end`.
#[inline(always)]
pub fn read_varint(bytes: &[u8], pos: &mut usize, end: usize) -> Result<u64, WireProblem> {
    // Tags, lengths and small values are one byte: that case inline, the
    // rest in a call.
    if *pos < end {
        if let Some(&byte) = bytes.get(*pos).filter(|&&b| b < 0x80) {
            *pos += 1;
            return Ok(u64::from(byte));
        }
    }
    read_long_varint(bytes, pos, end)
}

#[inline(never)]
fn read_long_varint(bytes: &[u8], pos: &mut usize, end: usize) -> Result<u64, WireProblem> {
    let mut value = 0u64;
    for i in 0..10 {
        if *pos >= end {
            return Err(WireProblem::TruncatedVarint);
        }
        let byte = bytes[*pos];
        *pos += 1;
        if i == 9 && byte > 1 {
            return Err(if byte & 0x80 != 0 {
                WireProblem::VarintTooLong
            } else {
                WireProblem::VarintOverflow
            });
        }
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte < 0x80 {
            return Ok(value);
        }
    }
    Err(WireProblem::VarintTooLong)
}

/// Reads a tag: (field number, wire type), rejecting number 0, numbers past
/// the maximum and the non-existent wire types 6 and 7.
#[inline]
pub fn read_tag(bytes: &[u8], pos: &mut usize, end: usize) -> Result<(u32, u8), WireProblem> {
    let tag = read_varint(bytes, pos, end)?;
    let number = tag >> 3;
    let wire_type = (tag & 7) as u8;
    if number == 0 {
        return Err(WireProblem::FieldNumberZero);
    }
    if number > MAX_FIELD_NUMBER {
        return Err(WireProblem::FieldNumberTooLarge(number));
    }
    if wire_type > FIXED32 {
        return Err(WireProblem::InvalidWireType(wire_type));
    }
    Ok((number as u32, wire_type))
}

/// Skips a fixed-width value of `width` bytes.
#[inline]
pub fn skip_fixed(pos: &mut usize, end: usize, width: u8) -> Result<(), WireProblem> {
    let available = end - *pos;
    if available < usize::from(width) {
        return Err(WireProblem::TruncatedFixed {
            needed: width,
            available: available as u64,
        });
    }
    *pos += usize::from(width);
    Ok(())
}

/// Reads a length prefix and checks it against what is left before `end`.
/// Returns the end of the length-delimited payload.
#[inline]
pub fn read_len(bytes: &[u8], pos: &mut usize, end: usize) -> Result<usize, WireProblem> {
    let claimed = read_varint(bytes, pos, end)?;
    let available = (end - *pos) as u64;
    if claimed > available {
        return Err(WireProblem::LengthExceedsInput { claimed, available });
    }
    Ok(*pos + claimed as usize)
}

/// Skips one value of a scalar or length-delimited wire type ending before
/// `end`; `None` for groups and for anything malformed.
#[inline]
pub fn skip_value(bytes: &[u8], pos: &mut usize, end: usize, wire_type: u8) -> Option<()> {
    match wire_type {
        VARINT => read_varint(bytes, pos, end).map(drop).ok(),
        FIXED64 => skip_fixed(pos, end, 8).ok(),
        FIXED32 => skip_fixed(pos, end, 4).ok(),
        LEN => {
            *pos = read_len(bytes, pos, end).ok()?;
            Some(())
        }
        _ => None,
    }
}

/// Reads a message whose fields are all varints, handing each field's
/// number and value to `set`, in order: `None` for another wire type, a
/// malformed field, or a field `set` declines (`None`). The fast readers'
/// small messages (labels, lines) are read this way.
#[inline]
pub fn varint_fields(bytes: &[u8], mut set: impl FnMut(u32, u64) -> Option<()>) -> Option<()> {
    let (end, mut pos) = (bytes.len(), 0);
    while pos < end {
        let (number, wire_type) = read_tag(bytes, &mut pos, end).ok()?;
        if wire_type != VARINT {
            return None;
        }
        set(number, read_varint(bytes, &mut pos, end).ok()?)?;
    }
    Some(())
}

/// Whether `run` (a packed run of varints) holds `N` continuation bytes in
/// a row, so a varint of more than `N` bytes, found 8 bytes at a time: in
/// one word (for `N` up to 8) or across words. The views check runs with
/// it when they are built, without decoding them.
#[inline]
pub fn has_continuation_run<const N: u32>(run: &[u8]) -> bool {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Continuation bytes in a row at the end of the words seen so far.
    let mut streak = 0;
    for chunk in run.chunks(8) {
        // Padding bytes (zero) end any streak.
        let continued = le_word(chunk) & HIGH;
        if N <= 8 && (1..N).fold(continued, |run, k| run & continued >> (8 * k)) != 0 {
            return true;
        }
        let stops = !continued & HIGH;
        if streak + stops.trailing_zeros() / 8 >= N {
            return true;
        }
        streak = match stops {
            0 => streak + 8,
            _ => stops.leading_zeros() / 8,
        };
    }
    false
}

/// Up to 8 bytes as a little-endian word, zero-padded. Fewer than 8 are
/// joined in a loop: `copy_from_slice` of a length the compiler does not
/// know is a call to `memcpy`, which for the last bytes of every packed run
/// cost 5% of validating a profile of distinct stacks.
#[inline]
pub fn le_word(bytes: &[u8]) -> u64 {
    match <[u8; 8]>::try_from(bytes) {
        Ok(eight) => u64::from_le_bytes(eight),
        Err(_) => (bytes.iter().rev()).fold(0, |word, &b| word << 8 | u64::from(b)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn varint(bytes: &[u8]) -> Result<u64, WireProblem> {
        read_varint(bytes, &mut 0, bytes.len())
    }

    /// Every run of continuation bytes, of every length, at every offset
    /// in runs of up to 20 bytes: found exactly when it is long enough.
    #[test]
    fn continuation_runs_are_found_in_and_across_words() {
        let longest = |run: &[u8]| {
            let (mut longest, mut current) = (0, 0);
            for &b in run {
                current = if b >= 0x80 { current + 1 } else { 0 };
                longest = longest.max(current);
            }
            longest
        };
        for len in 0..=20 {
            for start in 0..len {
                for streak in 0..=len - start {
                    let mut run = vec![0x01u8; len];
                    run[start..start + streak].fill(0x80);
                    assert_eq!(longest(&run), streak);
                    assert_eq!(has_continuation_run::<4>(&run), streak >= 4, "{run:?}");
                    assert_eq!(has_continuation_run::<9>(&run), streak >= 9, "{run:?}");
                }
            }
        }
    }

    #[test]
    fn varints() {
        assert_eq!(varint(&[0x00]), Ok(0));
        assert_eq!(varint(&[0xac, 0x02]), Ok(300));
        let max = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(varint(&max), Ok(u64::MAX));
        let overflow = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f];
        assert_eq!(varint(&overflow), Err(WireProblem::VarintOverflow));
        let eleven = [
            0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00,
        ];
        assert_eq!(varint(&eleven), Err(WireProblem::VarintTooLong));
        assert_eq!(varint(&[0x80, 0x80]), Err(WireProblem::TruncatedVarint));
        let mut out = Vec::new();
        write_varint(&mut out, 300);
        assert_eq!(out, [0xac, 0x02]);
    }

    #[test]
    fn tags_and_lengths() {
        assert_eq!(read_tag(&[0x08], &mut 0, 1), Ok((1, VARINT)));
        assert_eq!(
            read_tag(&[0x00], &mut 0, 1),
            Err(WireProblem::FieldNumberZero)
        );
        assert_eq!(
            read_tag(&[0x0f], &mut 0, 1),
            Err(WireProblem::InvalidWireType(7))
        );
        let bytes = [0x05, 1, 2];
        assert_eq!(
            read_len(&bytes, &mut 0, 3),
            Err(WireProblem::LengthExceedsInput {
                claimed: 5,
                available: 2
            })
        );
    }
}

/// How often each field number has occurred so far in one message: the
/// index of a repeated field's next element, for field paths. (FxHash: the
/// walks that need it visit every field of an input.)
#[derive(Default)]
pub(crate) struct Occurrences(rustc_hash::FxHashMap<u32, usize>);

impl Occurrences {
    /// The index of this occurrence of field `number`, counting from 0.
    pub fn next(&mut self, number: u32) -> usize {
        let count = self.0.entry(number).or_insert(0);
        *count += 1;
        *count - 1
    }
}

/// One field of a message as it sits in the bytes.
pub(crate) struct WireField<'a> {
    /// The field number.
    pub number: u32,
    /// The wire type.
    pub wire_type: u8,
    /// The payload of a length-delimited field; the encoded value otherwise.
    pub value: &'a [u8],
    /// The offset just past the field.
    pub end: usize,
}

/// Every top-level field of `bytes`, or the codec's error for the first
/// that does not parse, naming `path` (the message's field path).
pub(crate) fn all_fields<'a>(
    bytes: &'a [u8],
    path: &str,
) -> Result<Vec<WireField<'a>>, crate::error::CodecError> {
    fields(bytes)
        .collect::<Result<_, _>>()
        .map_err(|(offset, problem)| crate::error::CodecError::Wire {
            offset: offset as u64,
            path: path.to_string(),
            problem,
        })
}

/// The top-level fields of `bytes`, in order. A field that does not parse,
/// or a group (which these walks do not enter), ends the walk with its
/// byte offset and problem.
pub(crate) fn fields(
    bytes: &[u8],
) -> impl Iterator<Item = Result<WireField<'_>, (usize, WireProblem)>> {
    let mut pos = 0;
    let mut failed = false;
    std::iter::from_fn(move || {
        if failed || pos >= bytes.len() {
            return None;
        }
        let (at, end) = (pos, bytes.len());
        let field = read_tag(bytes, &mut pos, end).and_then(|(number, wire_type)| {
            let start = pos;
            let value = match wire_type {
                VARINT => read_varint(bytes, &mut pos, end).map(|_| start..pos)?,
                FIXED64 => skip_fixed(&mut pos, end, 8).map(|_| start..pos)?,
                FIXED32 => skip_fixed(&mut pos, end, 4).map(|_| start..pos)?,
                LEN => {
                    let payload_end = read_len(bytes, &mut pos, end)?;
                    let payload = pos..payload_end;
                    pos = payload_end;
                    payload
                }
                other => return Err(WireProblem::InvalidWireType(other)),
            };
            Ok(WireField {
                number,
                wire_type,
                value: &bytes[value],
                end: pos,
            })
        });
        failed = field.is_err();
        Some(field.map_err(|problem| (at, problem)))
    })
}
