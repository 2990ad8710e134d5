//! A table of 32-bit indices a source holds apart from the message:
//! v1experimental's `location_indices`, most of a message of distinct
//! stacks, which rust-protobuf decodes into 8 bytes an entry beside the
//! input's 1 to 3 (docs/performance-log.md, issue 14). It is either left where
//! the input holds it, as one packed run of varints, or decoded into 32
//! bits an entry, when samples read each entry many times.

use crate::threads::both;

/// A table of indices below 2^32: a packed run of varints with the byte
/// offset of every [`IndexTable::STRIDE`]th entry, so that a slice is read
/// from the nearest offset rather than from the run's start, or the
/// entries decoded. Made by a source that has checked the run
/// ([`IndexTable::index`]); reading one never fails in range.
#[derive(Debug, Clone, Copy)]
pub struct IndexTable<'a> {
    inner: Inner<'a>,
}

#[derive(Debug, Clone, Copy)]
enum Inner<'a> {
    Packed {
        run: &'a [u8],
        offsets: &'a [u32],
        len: usize,
        largest: u32,
    },
    Decoded(&'a [u32]),
}

/// What [`IndexTable::index`] finds of a packed run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunIndex {
    /// The byte offset of every [`IndexTable::STRIDE`]th entry.
    pub offsets: Vec<u32>,
    /// The number of entries.
    pub len: usize,
    /// The largest entry (0 when there are none).
    pub largest: u32,
}

impl<'a> IndexTable<'a> {
    /// Entries between two recorded offsets.
    pub const STRIDE: usize = 16;

    /// The run `run`, as [`Self::index`] has found it.
    ///
    /// # Panics
    /// When the index does not hold one offset per [`Self::STRIDE`] entries.
    pub fn packed(run: &'a [u8], index: &'a RunIndex) -> Self {
        let RunIndex {
            offsets,
            len,
            largest,
        } = index;
        assert_eq!(
            offsets.len(),
            len.div_ceil(Self::STRIDE),
            "one offset a stride"
        );
        let inner = Inner::Packed {
            run,
            offsets,
            len: *len,
            largest: *largest,
        };
        IndexTable { inner }
    }

    /// Entries already decoded.
    pub fn decoded(values: &'a [u32]) -> Self {
        IndexTable {
            inner: Inner::Decoded(values),
        }
    }

    /// The entries of `run`, decoded; `None` as for [`Self::index`]. A
    /// large run is decoded in two halves, on two threads.
    pub fn decode(run: &[u8]) -> Option<Vec<u32>> {
        u32::try_from(run.len()).ok()?;
        let (first, second) = halves(run);
        let counts = (Self::count(first), Self::count(second));
        let mut values = vec![0; counts.0 + counts.1];
        let (first_values, second_values) = values.split_at_mut(counts.0);
        let decoded = both(
            !second.is_empty(),
            || decode_into(first, first_values),
            || decode_into(second, second_values),
        );
        decoded.0.and(decoded.1).map(|()| values)
    }

    /// The offsets of `run`, its number of entries and its largest;
    /// `None` when it is not a packed run of varints below 2^32 each, in at
    /// most 10 bytes (what rust-protobuf reads as `int64`, and fits 32 bits
    /// unsigned), or is 4 GiB or more. A large run is read in two halves,
    /// on two threads.
    pub fn index(run: &[u8]) -> Option<RunIndex> {
        u32::try_from(run.len()).ok()?;
        let (first, second) = halves(run);
        let counts = (Self::count(first), Self::count(second));
        // The first half's offsets are made with room for the second's.
        let room = |entries: usize| entries.div_ceil(Self::STRIDE) + 1;
        let (first, second) = both(
            !second.is_empty(),
            || index_from(first, (0, 0), room(counts.0 + counts.1)),
            || index_from(second, (counts.0, first.len()), room(counts.1)),
        );
        let (mut first, second) = (first?, second?);
        first.offsets.extend(second.offsets);
        Some(RunIndex {
            offsets: first.offsets,
            len: first.len + second.len,
            largest: first.largest.max(second.largest),
        })
    }

    /// The number of entries of `run` when it is well formed (one a byte
    /// below 0x80, where each varint ends), without decoding them.
    pub fn count(run: &[u8]) -> usize {
        crate::wire::varint_count(run)
    }

    /// The largest entry; `None` when there are none.
    pub fn largest(&self) -> Option<u32> {
        match self.inner {
            _ if self.is_empty() => None,
            Inner::Packed { largest, .. } => Some(largest),
            Inner::Decoded(values) => values.iter().copied().max(),
        }
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        match self.inner {
            Inner::Packed { len, .. } => len,
            Inner::Decoded(values) => values.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Loads the memory that entry `start` lies in (nothing when it is past
    /// the table), so that reading it soon after finds it cached: loads
    /// made one after another overlap, where reading entries as they are
    /// needed waits for each. Returns what was loaded, for the caller to
    /// keep from the optimizer (`std::hint::black_box`).
    #[inline]
    pub fn warm(&self, start: usize) -> u32 {
        match self.inner {
            Inner::Packed { run, offsets, .. } => {
                let offset = offsets.get(start / Self::STRIDE).map_or(0, |&o| o as usize);
                run.get(offset).map_or(0, |&b| u32::from(b))
            }
            Inner::Decoded(values) => values.get(start).copied().unwrap_or(0),
        }
    }

    /// Entries `start..end` where the table holds them decoded; `None` when
    /// it does not, or the range is not within it ([`Self::read`] them).
    #[inline]
    pub fn decoded_slice(&self, start: usize, end: usize) -> Option<&'a [u32]> {
        match self.inner {
            Inner::Decoded(values) => values.get(start..end),
            Inner::Packed { .. } => None,
        }
    }

    /// Appends entries `start..end` to `out`; `false` (and nothing
    /// appended) when the range is not within the table.
    pub fn read(&self, start: usize, end: usize, out: &mut Vec<u32>) -> bool {
        if let Some(values) = self.decoded_slice(start, end) {
            out.extend_from_slice(values);
            return true;
        }
        out.reserve(end.saturating_sub(start));
        self.read_each(start, end, |value| out.push(value))
    }

    /// Calls `f` with entries `start..end`, in order; `false` (and no
    /// call) when the range is not within the table. A packed table's
    /// entries go straight from the run to `f`, with no vector between.
    #[inline]
    pub fn read_each(&self, start: usize, end: usize, mut f: impl FnMut(u32)) -> bool {
        if start > end || end > self.len() {
            return false;
        }
        let (run, offsets) = match self.inner {
            Inner::Packed { run, offsets, .. } => (run, offsets),
            Inner::Decoded(values) => {
                values[start..end].iter().for_each(|&v| f(v));
                return true;
            }
        };
        let mut pos = offsets.get(start / Self::STRIDE).map_or(0, |&o| o as usize);
        // Skipped: a varint ends at each byte below 0x80.
        let mut to_skip = start % Self::STRIDE;
        while to_skip > 0 {
            to_skip -= usize::from(run[pos] < 0x80);
            pos += 1;
        }
        for _ in start..end {
            let (value, next) = checked_varint(run, pos);
            f(value);
            pos = next;
        }
        true
    }

    /// Calls `f` with each entry's position and value, in order.
    pub fn for_each(&self, mut f: impl FnMut(usize, u32)) {
        let (run, len) = match self.inner {
            Inner::Packed { run, len, .. } => (run, len),
            Inner::Decoded(values) => {
                values.iter().enumerate().for_each(|(i, &v)| f(i, v));
                return;
            }
        };
        let mut pos = 0;
        for i in 0..len {
            let (value, next) = checked_varint(run, pos);
            f(i, value);
            pos = next;
        }
    }
}

/// From this many bytes on, a run is read in two halves on two threads.
const PARALLEL_BYTES: usize = 1 << 20;

/// `run` cut after the first varint that ends past its middle: two runs of
/// whole varints, which read as `run` reads (a varint ends at each byte
/// below 0x80). The second is empty for a run below [`PARALLEL_BYTES`].
fn halves(run: &[u8]) -> (&[u8], &[u8]) {
    if run.len() < PARALLEL_BYTES {
        return (run, &[]);
    }
    let middle = run.len() / 2;
    let end = run[middle..].iter().position(|&b| b < 0x80);
    run.split_at(end.map_or(run.len(), |p| middle + p + 1))
}

/// [`IndexTable::index`] of a part of a run that follows `before.0`
/// entries in `before.1` bytes: offsets are of the whole run's entries,
/// kept with room for `room`.
fn index_from(run: &[u8], before: (usize, usize), room: usize) -> Option<RunIndex> {
    let (entries_before, bytes_before) = before;
    let stride = IndexTable::STRIDE;
    let mut offsets = Vec::with_capacity(room);
    let mut largest = 0u32;
    let len = each_entry(run, |n, pos, value| {
        if (entries_before + n) % stride == 0 {
            offsets.push((bytes_before + pos) as u32);
        }
        largest = largest.max(value);
    })?;
    Some(RunIndex {
        offsets,
        len,
        largest,
    })
}

/// Decodes `run` into `out`, which has room for exactly its entries.
fn decode_into(run: &[u8], out: &mut [u32]) -> Option<()> {
    let mut slots = out.iter_mut();
    each_entry(run, |_, _, value| {
        if let Some(slot) = slots.next() {
            *slot = value;
        }
    })?;
    Some(())
}

/// Calls `f` with the number, position and value of each entry of `run`;
/// the number of entries, or `None` as for [`IndexTable::index`].
fn each_entry(run: &[u8], mut f: impl FnMut(usize, usize, u32)) -> Option<usize> {
    u32::try_from(run.len()).ok()?;
    let (mut n, mut pos) = (0, 0);
    while pos < run.len() {
        let (value, next) = varint(run, pos)?;
        f(n, pos, u32::try_from(value).ok()?);
        pos = next;
        n += 1;
    }
    Some(n)
}

/// The varint at `pos` and the position after it; `None` when cut off or
/// longer than 10 bytes. One to three bytes (indices below 2^21, most of
/// a table) are read without a loop.
#[inline]
fn varint(run: &[u8], pos: usize) -> Option<(u64, usize)> {
    let byte = |i: usize| run.get(pos + i).map(|&b| u64::from(b));
    let b0 = byte(0)?;
    if b0 < 0x80 {
        return Some((b0, pos + 1));
    }
    let b1 = byte(1)?;
    if b1 < 0x80 {
        return Some(((b0 & 0x7f) | b1 << 7, pos + 2));
    }
    let b2 = byte(2)?;
    if b2 < 0x80 {
        return Some(((b0 & 0x7f) | (b1 & 0x7f) << 7 | b2 << 14, pos + 3));
    }
    long_varint(run, pos)
}

/// [`varint`] of any length, a byte at a time.
fn long_varint(run: &[u8], mut pos: usize) -> Option<(u64, usize)> {
    let mut value = 0u64;
    for shift in (0..70).step_by(7) {
        let byte = *run.get(pos)?;
        pos += 1;
        value |= u64::from(byte & 0x7f).checked_shl(shift).unwrap_or(0);
        if byte < 0x80 {
            return Some((value, pos));
        }
    }
    None
}

/// The varint at `pos` of a run [`IndexTable::index`] has accepted (so
/// below 2^32, in at most 10 bytes), and the position after it: one load
/// and one branch a byte, and no check but the slice's.
#[inline]
fn checked_varint(run: &[u8], mut pos: usize) -> (u32, usize) {
    let mut byte = run[pos];
    let mut value = u64::from(byte & 0x7f);
    let mut shift = 0;
    while byte >= 0x80 {
        pos += 1;
        shift += 7;
        byte = run[pos];
        // Past 64 bits only zero groups remain (the value fits 32).
        if shift < 64 {
            value |= u64::from(byte & 0x7f) << shift;
        }
    }
    (value as u32, pos + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::write_varint;

    fn run_of(values: &[u64]) -> Vec<u8> {
        let mut run = Vec::new();
        for &v in values {
            write_varint(&mut run, v);
        }
        run
    }

    #[test]
    fn every_slice_reads_as_the_values() {
        let values: Vec<u64> = (0..200u64).map(|i| (i * 7919) % 70_000).collect();
        let run = run_of(&values);
        let index = IndexTable::index(&run).unwrap();
        let len = index.len;
        assert_eq!(index.largest as u64, *values.iter().max().unwrap());
        let table = IndexTable::packed(&run, &index);
        assert_eq!(table.largest(), Some(index.largest));
        assert_eq!(table.len(), 200);
        for start in 0..=200 {
            for end in [start, start + 1, start + 33, 200] {
                let mut out = Vec::new();
                let expected = values.get(start..end.min(200));
                assert_eq!(
                    table.read(start, end.min(200), &mut out),
                    expected.is_some()
                );
                let expected: Vec<u32> = expected.unwrap().iter().map(|&v| v as u32).collect();
                assert_eq!(out, expected, "{start}..{end}");
                let mut each = Vec::new();
                assert!(table.read_each(start, end.min(200), |v| each.push(v)));
                assert_eq!(each, expected, "{start}..{end}, one at a time");
            }
        }
        let mut out = Vec::new();
        assert!(!table.read(5, 201, &mut out) && !table.read(6, 5, &mut out) && out.is_empty());
        assert!(!table.read_each(5, 201, |_| panic!("past the table")));
        let mut all = Vec::new();
        table.for_each(|i, v| all.push((i, u64::from(v))));
        assert_eq!(all, values.iter().copied().enumerate().collect::<Vec<_>>());
        // Decoded, the same table.
        let decoded = IndexTable::decode(&run).unwrap();
        assert_eq!((decoded.len(), IndexTable::count(&run)), (len, len));
        let same = IndexTable::decoded(&decoded);
        assert_eq!(same.largest(), table.largest());
        for (start, end) in [(0, 0), (3, 40), (17, 200), (199, 200)] {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            assert!(table.read(start, end, &mut a) && same.read(start, end, &mut b));
            assert_eq!(a, b);
            assert_eq!(same.decoded_slice(start, end), Some(&a[..]));
            assert_eq!(table.decoded_slice(start, end), None, "packed");
        }
        assert_eq!(same.decoded_slice(150, 201), None);
        // Warming loads what is there and nothing past the table.
        assert_eq!(same.warm(3), values[3] as u32);
        assert_eq!((same.warm(200), table.warm(usize::MAX)), (0, 0));
        assert_eq!(table.warm(0), u32::from(run[0]));
        let mut again = Vec::new();
        same.for_each(|i, v| again.push((i, u64::from(v))));
        assert_eq!(again, all);
    }

    /// A run read in two halves gives what it gives read whole: the same
    /// offsets, entries and largest, and the same refusals, wherever the
    /// bad varint lies.
    #[test]
    fn large_runs_read_in_halves_as_whole() {
        let values: Vec<u64> = (0..700_000u64).map(|i| (i * 7919) % 3_000_000).collect();
        let run = run_of(&values);
        assert!(run.len() >= 2 * PARALLEL_BYTES);
        let index = IndexTable::index(&run).unwrap();
        assert_eq!(Some(index.clone()), index_from(&run, (0, 0), 0));
        assert_eq!(
            index.offsets.capacity(),
            index.offsets.len().max(1) + 1,
            "no regrowth"
        );
        assert_eq!(
            index.offsets.len(),
            values.len().div_ceil(IndexTable::STRIDE)
        );
        let decoded = IndexTable::decode(&run).unwrap();
        assert!(decoded
            .iter()
            .zip(&values)
            .all(|(&d, &v)| u64::from(d) == v));
        assert_eq!(
            (IndexTable::count(&run), decoded.len()),
            (values.len(), values.len())
        );
        for bad_at in [10, values.len() / 2, values.len() - 1] {
            let mut values = values.clone();
            values[bad_at] = 1 << 32;
            let run = run_of(&values);
            assert!(IndexTable::index(&run).is_none() && IndexTable::decode(&run).is_none());
        }
        let cut = &run[..run.len() - 1];
        let cut = [cut, &[0x80]].concat();
        assert!(IndexTable::index(&cut).is_none() && IndexTable::decode(&cut).is_none());
    }

    #[test]
    fn runs_that_are_not_32_bit_varints_are_refused() {
        assert!(IndexTable::index(&run_of(&[1, u64::from(u32::MAX)])).is_some());
        assert!(IndexTable::index(&run_of(&[1, 1 << 32])).is_none());
        assert!(IndexTable::index(&run_of(&[(-1i64) as u64])).is_none());
        assert!(IndexTable::index(&[0x80]).is_none()); // cut off
        assert!(IndexTable::index(&[0xff; 11]).is_none()); // too long
        for refused in [run_of(&[1, 1 << 32]), vec![0x80], vec![0xff; 11]] {
            assert_eq!(IndexTable::decode(&refused), None);
        }
        let empty = IndexTable::index(&[]).unwrap();
        assert_eq!((empty.len, empty.offsets.len()), (0, 0));
        assert_eq!(IndexTable::packed(&[], &empty).largest(), None);
        // Every length of varint, and a non-minimal one (10 bytes for 1).
        let long = [0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00];
        let lengths = run_of(&[1, 300, 70_000, 1 << 22, u64::from(u32::MAX)]);
        let run = [&lengths[..], &long[..]].concat();
        let index = IndexTable::index(&run).unwrap();
        let mut all = Vec::new();
        IndexTable::packed(&run, &index).for_each(|_, v| all.push(v));
        assert_eq!(all, [1, 300, 70_000, 1 << 22, u32::MAX, 1]);
    }
}
