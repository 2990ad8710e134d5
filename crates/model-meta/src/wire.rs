//! Protobuf wire-format writing: the primitives the codec and the bridge's
//! direct encoder share, and the one count of a packed run the codec and
//! [`crate::IndexTable`] share. Reading, with its bounds checks and error
//! reporting, lives in the codec.

/// Wire type of varint fields.
pub const VARINT: u8 = 0;
/// Wire type of 64-bit fixed-width fields.
pub const FIXED64: u8 = 1;
/// Wire type of length-delimited fields (bytes, strings, messages, packed runs).
pub const LEN: u8 = 2;
/// Wire type that opens a group (deprecated).
pub const START_GROUP: u8 = 3;
/// Wire type that closes a group (deprecated).
pub const END_GROUP: u8 = 4;
/// Wire type of 32-bit fixed-width fields.
pub const FIXED32: u8 = 5;

/// Largest field number protobuf allows.
pub const MAX_FIELD_NUMBER: u64 = (1 << 29) - 1;

/// The number of varints in a packed run when it is well formed: its bytes
/// below 0x80, where each varint ends, counted a word at a time.
pub fn varint_count(run: &[u8]) -> usize {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut words = run.chunks_exact(8);
    let ends = |word: &[u8]| {
        let word = u64::from_le_bytes(word.try_into().expect("8 bytes"));
        (!word & HIGH).count_ones() as usize
    };
    let whole: usize = words.by_ref().map(ends).sum();
    whole + words.remainder().iter().filter(|&&b| b < 0x80).count()
}

/// The number of bytes `value` takes as a varint (1 to 10).
#[inline]
pub fn varint_size(value: u64) -> usize {
    // 7 bits a byte, at least one byte.
    (64 - (value | 1).leading_zeros() as usize).div_ceil(7)
}

/// Appends `value` as a varint.
#[inline]
pub fn write_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Appends the tag of field `number` with `wire_type`.
#[inline]
pub fn write_tag(out: &mut Vec<u8>, number: u32, wire_type: u8) {
    write_varint(out, u64::from(number) << 3 | u64::from(wire_type));
}

/// The number of bytes the tag of field `number` takes.
#[inline]
pub fn tag_size(number: u32) -> usize {
    varint_size(u64::from(number) << 3)
}

/// Appends the tag and length prefix of a length-delimited field whose
/// payload is `payload` bytes; the payload follows.
#[inline]
pub fn write_len_prefix(out: &mut Vec<u8>, number: u32, payload: usize) {
    write_tag(out, number, LEN);
    write_varint(out, payload as u64);
}

/// The size of a length-delimited field of `payload` bytes, tag included.
#[inline]
pub fn len_field_size(number: u32, payload: usize) -> usize {
    tag_size(number) + varint_size(payload as u64) + payload
}

/// The bytes of a packed run's values (0: the run is left out).
pub fn packed_payload(values: impl Iterator<Item = u64>) -> usize {
    values.map(varint_size).sum()
}

/// A packed run's field size, tag included (0 when empty: left out).
#[inline]
pub fn packed_size(number: u32, payload: usize) -> usize {
    match payload {
        0 => 0,
        payload => len_field_size(number, payload),
    }
}

/// Appends a packed run of varints whose values take `payload` bytes
/// ([`packed_payload`]); nothing when empty, as proto3 leaves it out.
pub fn write_packed(
    out: &mut Vec<u8>,
    number: u32,
    payload: usize,
    values: impl Iterator<Item = u64>,
) {
    if payload == 0 {
        return;
    }
    write_len_prefix(out, number, payload);
    for v in values {
        write_varint(out, v);
    }
}

/// Appends a packed run of varints that `write` appends (with
/// [`write_varint`]), for a run whose size is not known until it is
/// written: the length prefix is fixed up afterwards, as short as
/// [`write_packed`] writes it. Nothing when `write` appends nothing, as
/// proto3 leaves an empty run out; nothing either, and `write`'s error
/// returned, when it fails.
pub fn write_packed_with<E>(
    out: &mut Vec<u8>,
    number: u32,
    write: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
) -> Result<(), E> {
    let start = out.len();
    write_tag(out, number, LEN);
    // Room for a one-byte prefix: a run below 128 bytes, a stack of
    // tens of locations, is written where it ends up.
    out.push(0);
    let payload_start = out.len();
    if let Err(error) = write(out) {
        out.truncate(start);
        return Err(error);
    }
    let payload = out.len() - payload_start;
    if payload == 0 {
        out.truncate(start);
        return Ok(());
    }
    let mut prefix = Vec::with_capacity(10);
    write_varint(&mut prefix, payload as u64);
    out.splice(payload_start - 1..payload_start, prefix);
    Ok(())
}

/// A proto3 varint scalar's size, tag included (0 when zero: left out).
#[inline]
pub fn optional_size(number: u32, v: u64) -> usize {
    match v {
        0 => 0,
        v => tag_size(number) + varint_size(v),
    }
}

/// Appends a proto3 varint scalar; nothing when zero, as proto3 leaves it
/// out.
#[inline]
pub fn write_optional(out: &mut Vec<u8>, number: u32, v: u64) {
    if v != 0 {
        write_tag(out, number, VARINT);
        write_varint(out, v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_match_what_is_written() {
        for value in [
            0,
            1,
            127,
            128,
            16_383,
            16_384,
            u64::from(u32::MAX),
            u64::MAX,
        ] {
            let mut out = Vec::new();
            write_varint(&mut out, value);
            assert_eq!(out.len(), varint_size(value), "{value}");
        }
        for number in [1, 15, 16, 2047, 2048, MAX_FIELD_NUMBER as u32] {
            let mut out = Vec::new();
            write_tag(&mut out, number, LEN);
            assert_eq!(out.len(), tag_size(number), "{number}");
        }
        let mut out = Vec::new();
        write_len_prefix(&mut out, 2, 300);
        assert_eq!(out, [0x12, 0xac, 0x02]);
        assert_eq!(len_field_size(2, 300), 3 + 300);
    }

    /// Every run of every length up to three words, wherever varints of
    /// every length end: the count is the number written.
    #[test]
    fn varints_are_counted_at_every_length_and_position() {
        let values = [0, 300, u64::MAX, 127, 16_384, 1, u64::from(u32::MAX)];
        for n in 0..=24 {
            let mut run = Vec::new();
            for &v in values.iter().cycle().take(n) {
                write_varint(&mut run, v);
            }
            assert_eq!(varint_count(&run), n, "{run:?}");
        }
    }

    /// A run written by [`write_packed_with`] is what [`write_packed`]
    /// writes of the same values, whatever the length prefix's size, after
    /// what `out` held; an empty run or an error leaves `out` as it was.
    #[test]
    fn packed_runs_written_as_they_come_match_sized_runs() {
        for n in [0, 1, 5, 127, 128, 200, 16_383, 16_384, 20_000] {
            let values: Vec<u64> = (0..n as u64).map(|i| i % 3).collect();
            let mut sized = vec![7u8];
            let payload = packed_payload(values.iter().copied());
            write_packed(&mut sized, 9, payload, values.iter().copied());
            let mut streamed = vec![7u8];
            let written = write_packed_with(&mut streamed, 9, |out| {
                values.iter().for_each(|&v| write_varint(out, v));
                Ok::<(), ()>(())
            });
            assert_eq!((written, streamed), (Ok(()), sized), "{n} values");
        }
        let mut out = vec![7u8];
        let failed = write_packed_with(&mut out, 9, |out| {
            write_varint(out, 3);
            Err("miss")
        });
        assert_eq!((failed, out), (Err("miss"), vec![7u8]));
    }
}
