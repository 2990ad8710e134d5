//! Reading one message of the OTLP views (a sample, a stack) faster than
//! rust-protobuf when its bytes are the plain encoding of known fields, and
//! exactly as rust-protobuf reads it otherwise: what `development_view` and
//! `experimental_view` share.

use protobuf::{CodedInputStream, Message};

use crate::binary::wire::{read_len, read_varint, FIXED64, LEN, VARINT};
use crate::otlp::nested_samples::SampleRange;
use crate::pprof::samples;

/// A message the fast readers take; others go to rust-protobuf.
pub(crate) trait FastRead: Message {
    /// Reads `bytes` into `self` (cleared) as rust-protobuf would, or
    /// `None` for anything but the plain encoding of known fields.
    fn read_fast(&mut self, bytes: &[u8]) -> Option<()>;
}

/// Decodes one message into `buffer`, as the whole model's parse would:
/// the fast reader when it takes the bytes, rust-protobuf otherwise.
pub(crate) fn read_message<M: FastRead>(bytes: &[u8], buffer: &mut M) -> protobuf::Result<()> {
    buffer.clear();
    if buffer.read_fast(bytes).is_some() {
        return Ok(());
    }
    read_with_protobuf(bytes, buffer)
}

/// Decodes one message into `buffer` (cleared) with rust-protobuf.
pub(crate) fn read_with_protobuf<M: Message>(bytes: &[u8], buffer: &mut M) -> protobuf::Result<()> {
    buffer.clear();
    let mut stream = CodedInputStream::from_bytes(bytes);
    buffer.merge_from(&mut stream)?;
    stream.check_eof()
}

/// The messages at `ranges` of `bytes`, each read by `read` into one buffer
/// and cloned: a clone's vectors are allocated at their length, where a
/// message read in place keeps the room its vectors grew to.
pub(crate) fn read_each<M: Message + Clone>(
    bytes: &[u8],
    ranges: &[SampleRange],
    read: impl Fn(&[u8], &mut M) -> protobuf::Result<()>,
) -> protobuf::Result<Vec<M>> {
    let mut buffer = M::new();
    let mut read_one = |&(start, end): &SampleRange| {
        read(&bytes[start as usize..end as usize], &mut buffer)?;
        Ok(buffer.clone())
    };
    ranges.iter().map(&mut read_one).collect()
}

/// A 64-bit varint, as rust-protobuf reads `uint64` and `int64`.
pub(crate) fn uint64(bytes: &[u8], pos: &mut usize, end: usize) -> Option<u64> {
    read_varint(bytes, pos, end).ok()
}

/// An `int32` as rust-protobuf reads it (a 64-bit varint that must fit).
pub(crate) fn int32(bytes: &[u8], pos: &mut usize, end: usize) -> Option<i32> {
    i32::try_from(read_varint(bytes, pos, end).ok()? as i64).ok()
}

/// A `uint32` as rust-protobuf reads it (a varint that must fit: a larger
/// one is an error there, so `None` here).
pub(crate) fn uint32(bytes: &[u8], pos: &mut usize, end: usize) -> Option<u32> {
    u32::try_from(read_varint(bytes, pos, end).ok()?).ok()
}

/// Repeated `int32`: one varint, or a packed run.
pub(crate) fn int32s(
    bytes: &[u8],
    pos: &mut usize,
    wire_type: u8,
    out: &mut Vec<i32>,
) -> Option<()> {
    if wire_type != LEN {
        return varints(bytes, pos, wire_type, out, |v| i32::try_from(v as i64).ok());
    }
    // Packed: the word-at-a-time reader of pprof's samples (most of a
    // stack table's bytes go through here), noting any value out of range.
    let run_end = read_len(bytes, pos, bytes.len()).ok()?;
    let out_of_range = std::cell::Cell::new(false);
    let out_of_range_ref = &out_of_range;
    samples::packed_run(&bytes[*pos..run_end], out, move |v| {
        let value = i32::try_from(v as i64);
        out_of_range_ref.set(out_of_range_ref.get() | value.is_err());
        value.unwrap_or(0)
    })?;
    *pos = run_end;
    (!out_of_range.get()).then_some(())
}

/// Repeated `int64`: one varint, or a packed run read by the word-at-a-time
/// reader (a v1development sample's values, one per timestamp, are most of
/// its bytes).
pub(crate) fn int64s(
    bytes: &[u8],
    pos: &mut usize,
    wire_type: u8,
    out: &mut Vec<i64>,
) -> Option<()> {
    if wire_type != LEN {
        return varints(bytes, pos, wire_type, out, |v| Some(v as i64));
    }
    let run_end = read_len(bytes, pos, bytes.len()).ok()?;
    // At most a value per byte: room for them at once (most values are a
    // byte or two), the room bounded for long runs.
    out.reserve((run_end - *pos).min(4096));
    samples::packed_run(&bytes[*pos..run_end], out, |v| v as i64)?;
    *pos = run_end;
    Some(())
}

/// Repeated `fixed64`: one value, or a packed run whose length is a
/// multiple of 8 (any other length is rust-protobuf's error to report).
pub(crate) fn fixed64s(
    bytes: &[u8],
    pos: &mut usize,
    wire_type: u8,
    out: &mut Vec<u64>,
) -> Option<()> {
    let end = match wire_type {
        FIXED64 => *pos + 8,
        LEN => read_len(bytes, pos, bytes.len()).ok()?,
        _ => return None,
    };
    let run = bytes.get(*pos..end)?;
    if run.len() % 8 != 0 {
        return None;
    }
    out.extend(
        run.chunks_exact(8)
            .map(|word| u64::from_le_bytes(word.try_into().expect("chunks of 8"))),
    );
    *pos = end;
    Some(())
}

/// One varint (wire type varint) or a packed run (wire type LEN).
pub(crate) fn varints<T>(
    bytes: &[u8],
    pos: &mut usize,
    wire_type: u8,
    out: &mut Vec<T>,
    from: impl Fn(u64) -> Option<T>,
) -> Option<()> {
    let end = match wire_type {
        VARINT => {
            out.push(from(read_varint(bytes, pos, bytes.len()).ok()?)?);
            return Some(());
        }
        LEN => read_len(bytes, pos, bytes.len()).ok()?,
        _ => return None,
    };
    while *pos < end {
        out.push(from(read_varint(bytes, pos, end).ok()?)?);
    }
    Some(())
}
