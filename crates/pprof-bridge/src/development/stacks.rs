//! Numbering pprof stacks for v1development's stack table without copying
//! them.
//!
//! A stack in the table is written once, long after it is numbered, so the
//! table keeps no copy of it: only the first sample that has it (whose
//! `location_id`s are read again to compare a repeat and to write the
//! entry) and the size of its packed `location_indices`. For a profile whose
//! stacks are all distinct, a copy would be as large as the input's
//! stacks; this is two `u32`s per stack and a hash entry.

use protoprof_model_meta::threads::both;
use protoprof_model_meta::wire::{
    len_field_size, packed_size, varint_size, write_len_prefix, write_varint,
};
use protoprof_model_meta::{Fields, IdIndex};
use protoprof_model_otlp::fields::opentelemetry::proto::profiles::v1development::{
    profiles_dictionary, stack,
};
use protoprof_model_pprof::fields::perftools::profiles::sample;
use protoprof_model_pprof::perftools::profiles as pprof;
use protoprof_model_pprof::samples::ProfileSamples;

use crate::development::key_numbering::{
    batches, fx_hash, KeyBatch, KeyHash, KeyNumbering, Numbered,
};
use crate::error::{unresolved, BridgeError};

/// The location table's ids: each id's position.
pub(crate) struct Locations {
    positions: IdIndex<u32>,
    /// Whether the ids are the positions plus one (1, 2, 3, … as Go writes
    /// them): a stack's location indices are then its ids.
    ids_are_indices: bool,
    /// The number of locations.
    count: u64,
}

impl Locations {
    /// The ids of `table`; an error names an id given twice.
    pub fn new(table: &[pprof::Location]) -> Result<Self, BridgeError> {
        Ok(Locations {
            positions: crate::tables::id_positions(table.iter().map(|l| l.id), "location")?,
            ids_are_indices: (table.iter().enumerate()).all(|(i, l)| l.id == i as u64 + 1),
            count: table.len() as u64,
        })
    }
}

impl Default for Locations {
    fn default() -> Self {
        Locations {
            positions: IdIndex::default(),
            ids_are_indices: true,
            count: 0,
        }
    }
}

const LOCATIONS: Fields = Fields::only(&[sample::LOCATION_ID]);

/// From this many samples on, stacks are numbered on a second thread.
const PARALLEL_SAMPLES: usize = protoprof_model_meta::threads::PARALLEL_ITEMS;

/// The v1development stack index of each sample, and the table they index:
/// entry 0 the empty stack, then each distinct stack in the order samples
/// first have it.
#[derive(Default)]
pub(crate) struct DevelopmentStacks {
    /// Per sample: its stack's index in the table.
    pub indices: Vec<i32>,
    /// Per entry after 0: the first sample with that stack.
    first_sample: Vec<u32>,
    /// Per entry after 0: its packed `location_indices` payload size.
    payloads: Vec<u32>,
    locations: Locations,
}

/// What reading a stack's key needs: a sample to decode into and bytes to
/// encode into, when the source does not hold the ids packed.
#[derive(Default)]
struct KeyBuffers {
    sample: pprof::Sample,
    encoded: Vec<u8>,
}

/// Sample `i`'s stack key when the input holds it ([`stack_key`]).
fn input_stack_key<S: ProfileSamples>(source: &S, i: usize) -> Option<&[u8]> {
    let run = source.field_run(i, sample::LOCATION_ID)?;
    packed_run_payload(run, sample::LOCATION_ID).filter(|payload| is_shortest(payload))
}

/// Sample `i`'s stack as its key: the location ids as packed varints in
/// their shortest form, so that two stacks are equal exactly when their
/// keys are. The input's own bytes when it holds them so (one packed run,
/// as pprof encoders write them); encoded into `buffers` otherwise.
fn stack_key<'k, S: ProfileSamples>(
    source: &'k S,
    i: usize,
    buffers: &'k mut KeyBuffers,
) -> &'k [u8] {
    if let Some(payload) = input_stack_key(source, i) {
        return payload;
    }
    let ids = &source
        .sample_fields(i, LOCATIONS, &mut buffers.sample)
        .location_id;
    buffers.encoded.clear();
    for &id in ids {
        write_varint(&mut buffers.encoded, id);
    }
    &buffers.encoded
}

/// The payload of a field run that is one packed occurrence of field
/// `number` (below 16: its tag is one byte); an empty run is an empty
/// payload.
pub(crate) fn packed_run_payload(run: &[u8], number: u32) -> Option<&[u8]> {
    let packed_tag = (number as u8) << 3 | 2;
    let (&tag, rest) = match run.split_first() {
        None => return Some(run),
        Some(split) => split,
    };
    let mut len = 0usize;
    let mut header = 0;
    for (k, &byte) in rest.iter().enumerate().take(5) {
        len |= usize::from(byte & 0x7f) << (7 * k);
        if byte < 0x80 {
            header = k + 1;
            break;
        }
    }
    let payload = &rest[header..];
    (number < 16 && tag == packed_tag && header > 0 && payload.len() == len).then_some(payload)
}

/// Whether every varint of a packed run is in its shortest form: none ends
/// in a zero byte after a continued one.
fn is_shortest(run: &[u8]) -> bool {
    // Location ids are rarely zero, so a zero byte is rare: look for one
    // first (fast), then look closer.
    !run.contains(&0) || !run.windows(2).any(|w| w[1] == 0 && w[0] & 0x80 != 0)
}

/// Calls `f` with each varint of a packed payload (a stack's key, a
/// sample's values), in order, until it returns false.
pub(crate) fn each_varint(key: &[u8], mut f: impl FnMut(u64) -> bool) {
    let (mut value, mut shift) = (0u64, 0u32);
    for &byte in key {
        // A varint has at most ten bytes, the last shifted by 63.
        value |= u64::from(byte & 0x7f) << (shift & 63);
        if byte < 0x80 {
            if !f(value) {
                return;
            }
            (value, shift) = (0, 0);
        } else {
            shift += 7;
        }
    }
}

/// The stacks numbered so far.
struct Numbering {
    stacks: DevelopmentStacks,
    keys: KeyNumbering,
    /// Another sample's key, read to compare.
    other: KeyBuffers,
}

impl Numbering {
    fn new(samples: usize, locations: Locations, hash: KeyHash) -> Self {
        Numbering {
            stacks: DevelopmentStacks {
                indices: Vec::with_capacity(samples),
                locations,
                ..Default::default()
            },
            keys: KeyNumbering::new(hash),
            other: KeyBuffers::default(),
        }
    }

    /// The entry of sample `i`'s stack, whose key is `key` and whose hash
    /// is `hash`, added when new (its location ids resolved then).
    fn number<S: ProfileSamples>(
        &mut self,
        source: &S,
        i: usize,
        key: &[u8],
        hash: u64,
    ) -> Result<i32, BridgeError> {
        if key.is_empty() {
            return Ok(0);
        }
        let (first_sample, other) = (&self.stacks.first_sample, &mut self.other);
        let same =
            |n: u32, key: &[u8]| stack_key(source, first_sample[n as usize] as usize, other) == key;
        match self.keys.number_hashed(key, hash, same) {
            Numbered::Seen(n) => Ok(n as i32 + 1),
            Numbered::New(n) => {
                let payload = self.stacks.payload(i, key)?;
                self.stacks.first_sample.push(i as u32);
                self.stacks.payloads.push(payload as u32);
                Ok(n as i32 + 1)
            }
        }
    }
}

/// Every sample's stack numbered, with `hash`.
fn number_all<S: ProfileSamples>(
    source: &S,
    locations: Locations,
    hash: KeyHash,
) -> Result<DevelopmentStacks, BridgeError> {
    let count = source.sample_count();
    let mut numbering = Numbering::new(count, locations, hash);
    let mut buffers = KeyBuffers::default();
    for samples in batches(count) {
        let batch = KeyBatch::read(&numbering.keys, samples, |i| input_stack_key(source, i));
        for (i, found) in batch.iter() {
            let index = match found {
                Some((key, hash)) => numbering.number(source, i, key, hash)?,
                None => {
                    let key = stack_key(source, i, &mut buffers);
                    let hash = numbering.keys.hash(key);
                    numbering.number(source, i, key, hash)?
                }
            };
            numbering.stacks.indices.push(index);
        }
    }
    Ok(numbering.stacks)
}

/// Every sample's stack numbered beside `work`: for large profiles,
/// `work` on a second thread while this one numbers, after `work`
/// otherwise. The numbering's tables, freed when it ends, are this
/// thread's, so what is allocated next reuses their memory.
pub(crate) fn number_beside<S: ProfileSamples, T: Send>(
    source: &S,
    locations: Locations,
    work: impl FnOnce() -> T + Send,
) -> (T, Result<DevelopmentStacks, BridgeError>) {
    if source.sample_count() < PARALLEL_SAMPLES {
        return (work(), number_all(source, locations, fx_hash));
    }
    let (stacks, done) = both(true, || number_all(source, locations, fx_hash), work);
    (done, stacks)
}

impl DevelopmentStacks {
    /// The number of entries after entry 0.
    pub fn len(&self) -> usize {
        self.first_sample.len()
    }

    /// The packed `location_indices` payload size of sample `i`'s stack,
    /// whose key is `key`; an error names the first id not in the
    /// location table.
    fn payload(&self, i: usize, key: &[u8]) -> Result<usize, BridgeError> {
        let (mut payload, mut resolved) = (0, 0);
        let mut unresolved_id = None;
        let locations = &self.locations;
        each_varint(key, |id| {
            let position = match locations.ids_are_indices {
                // The key is the payload; only the range is checked.
                true => (id.wrapping_sub(1) < locations.count).then_some(0),
                false => locations.positions.get(id),
            };
            match position {
                Some(position) => {
                    payload += varint_size(u64::from(position) + 1);
                    resolved += 1;
                    true
                }
                None => {
                    unresolved_id = Some(id);
                    false
                }
            }
        });
        match (unresolved_id, locations.ids_are_indices) {
            (Some(id), _) => Err(unresolved(
                format!("sample[{i}].location_id[{resolved}]"),
                "location",
                id,
            )),
            (None, true) => Ok(key.len()),
            (None, false) => Ok(payload),
        }
    }

    /// Entry `entry` (after 0) as `Stack.location_indices`: one past each
    /// location's position (entry 0 of the location table is the zero
    /// location).
    pub fn location_indices<S: ProfileSamples>(&self, source: &S, entry: usize) -> Vec<u64> {
        let mut buffers = KeyBuffers::default();
        let key = stack_key(source, self.first_sample[entry - 1] as usize, &mut buffers);
        // Numbering resolved every id of every entry.
        let mut indices = Vec::new();
        each_varint(key, |id| {
            indices.push(u64::from(self.locations.positions.get(id).unwrap_or(0)) + 1);
            true
        });
        indices
    }

    /// The size of `ProfilesDictionary.stack_table`, every occurrence with
    /// its tag and length (entry 0 an empty message).
    pub fn table_len(&self) -> usize {
        len_field_size(profiles_dictionary::STACK_TABLE, 0)
            + (self.payloads.iter())
                .map(|&payload| {
                    let size = packed_size(stack::LOCATION_INDICES, payload as usize);
                    len_field_size(profiles_dictionary::STACK_TABLE, size)
                })
                .sum::<usize>()
    }

    /// Entries `entries` (1 is the first after the empty stack) as
    /// occurrences of `stack_table`, appended to `out`. When ids are
    /// indices, a stack's key is its payload, copied.
    pub fn write_entries<S: ProfileSamples>(
        &self,
        out: &mut Vec<u8>,
        source: &S,
        entries: std::ops::Range<usize>,
    ) {
        let mut buffers = KeyBuffers::default();
        for entry in entries {
            let payload = self.payloads[entry - 1] as usize;
            let size = packed_size(stack::LOCATION_INDICES, payload);
            write_len_prefix(out, profiles_dictionary::STACK_TABLE, size);
            write_len_prefix(out, stack::LOCATION_INDICES, payload);
            let key = stack_key(source, self.first_sample[entry - 1] as usize, &mut buffers);
            if self.locations.ids_are_indices {
                out.extend_from_slice(key);
                continue;
            }
            each_varint(key, |id| {
                let position = self.locations.positions.get(id).unwrap_or(0);
                write_varint(out, u64::from(position) + 1);
                true
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Samples with these stacks; location ids 10, 20, … 90.
    fn profile(stacks: &[&[u64]]) -> pprof::Profile {
        let mut p = pprof::Profile::new();
        for id in 1..=9u64 {
            p.location.push(pprof::Location {
                id: id * 10,
                ..Default::default()
            });
        }
        for ids in stacks {
            p.sample.push(pprof::Sample {
                location_id: ids.to_vec(),
                ..Default::default()
            });
        }
        p
    }

    fn numbered(p: &pprof::Profile, hash: KeyHash) -> Result<DevelopmentStacks, BridgeError> {
        number_all(p, Locations::new(&p.location).unwrap(), hash)
    }

    /// Each entry's location indices, entry 0 left out.
    fn entries(p: &pprof::Profile, stacks: &DevelopmentStacks) -> Vec<Vec<u64>> {
        (1..=stacks.len())
            .map(|e| stacks.location_indices(p, e))
            .collect()
    }

    #[test]
    fn stacks_are_numbered_in_the_order_first_seen_even_when_every_hash_collides() {
        let p = profile(&[&[10, 20], &[30], &[], &[10, 20], &[10], &[30], &[20, 10]]);
        for hash in [fx_hash as KeyHash, |_: &[u8]| 7] {
            let stacks = numbered(&p, hash).unwrap();
            assert_eq!(stacks.indices, [1, 2, 0, 1, 3, 2, 4]);
            assert_eq!(
                entries(&p, &stacks),
                [vec![1, 2], vec![3], vec![1], vec![2, 1]]
            );
            assert_eq!(stacks.payloads, [2, 1, 1, 2]);
        }
    }

    #[test]
    fn an_unresolved_location_is_reported_where_it_is() {
        let p = profile(&[&[10], &[20, 31]]);
        let error = numbered(&p, fx_hash).err().unwrap();
        assert!(
            error.to_string().contains("sample[1].location_id[1]"),
            "{error}"
        );
    }

    #[test]
    fn keys_are_shortest_varints_so_equal_stacks_have_equal_keys() {
        assert!(is_shortest(&[0x96, 0x01, 0x00, 0x7f]));
        assert!(!is_shortest(&[0x81, 0x00]), "1 written in two bytes");
        assert!(
            !is_shortest(&[0x05, 0x80, 0x80, 0x00]),
            "0 written in three bytes"
        );
        let key = [0x96, 0x01, 0x01, 0xff, 0xff, 0xff, 0xff, 0x0f];
        let mut ids = Vec::new();
        each_varint(&key, |id| {
            ids.push(id);
            true
        });
        assert_eq!(ids, [150, 1, u64::from(u32::MAX)]);
    }

    /// Written from ids that are not indices (10, 20, …) and from ids that
    /// are (1, 2, …, copied from the key): rust-protobuf's bytes either way.
    #[test]
    fn entries_are_written_as_rust_protobuf_writes_stacks() {
        use protobuf::Message;
        use protoprof_model_otlp::opentelemetry::proto::profiles::v1development as dev;
        let mut indexed = profile(&[&[9, 1], &[], &[5], &[200]]);
        for (i, l) in indexed.location.iter_mut().enumerate() {
            l.id = i as u64 + 1;
        }
        // Up to id 200: two-byte varints.
        while indexed.location.len() < 200 {
            let id = indexed.location.len() as u64 + 1;
            indexed.location.push(pprof::Location {
                id,
                ..Default::default()
            });
        }
        let cases = [(profile(&[&[90, 10], &[], &[50]]), 2), (indexed, 3)];
        for (p, count) in cases {
            let stacks = numbered(&p, fx_hash).unwrap();
            assert_eq!(stacks.len(), count);
            let mut written = Vec::new();
            write_len_prefix(&mut written, profiles_dictionary::STACK_TABLE, 0);
            stacks.write_entries(&mut written, &p, 1..count + 1);
            let mut expected = dev::ProfilesDictionary::new();
            expected.stack_table.push(dev::Stack::default());
            for entry in entries(&p, &stacks) {
                expected.stack_table.push(dev::Stack {
                    location_indices: entry.iter().map(|&i| i as i32).collect(),
                    ..Default::default()
                });
            }
            assert_eq!(written, expected.write_to_bytes().unwrap());
            assert_eq!(written.len(), stacks.table_len());
        }
    }
}
