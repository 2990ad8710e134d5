//! pprof → v1development samples, held as compact records until they
//! become `Sample` messages or their encoding (as `sample_records.rs` does
//! for v1experimental).
//!
//! Every Profile of a converted pprof profile holds one `Sample` per pprof
//! sample, all with the same stack, attributes and link and differing only
//! in the value. So each pprof sample is kept once, as its stack index and
//! its label set (samples with the same labels share one set, converted
//! once), and written once per Profile, its values read again from the
//! source.

use protoprof_model_meta::wire::{
    optional_size, packed_payload, packed_size, write_len_prefix, write_optional, write_packed,
};
use protoprof_model_meta::Fields;
use protoprof_model_otlp::fields::opentelemetry::proto::profiles::v1development::{
    profile, sample,
};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development as dev;
use protoprof_model_pprof::fields::perftools::profiles::sample as pprof_sample;
use protoprof_model_pprof::perftools::profiles as pprof;
use protoprof_model_pprof::samples::ProfileSamples;
use rustc_hash::FxHashMap;

use crate::tables::{SliceTable, StackTable};

/// From this many items on, [`in_halves`] uses two threads.
const PARALLEL_ITEMS: usize = 50_000;

/// `f` of `0..count`, or, from [`PARALLEL_ITEMS`] on, of its two halves
/// at once on two threads: the results in order.
fn in_halves<T: Send>(count: usize, f: impl Fn(std::ops::Range<usize>) -> T + Sync) -> Vec<T> {
    if count < PARALLEL_ITEMS {
        return vec![f(0..count)];
    }
    std::thread::scope(|scope| {
        let second = scope.spawn(|| f(count / 2..count));
        let first = f(0..count / 2);
        vec![
            first,
            second.join().expect("the second half does not panic"),
        ]
    })
}

const VALUES: Fields = Fields::only(&[pprof_sample::VALUE]);

/// What a pprof sample's labels become: attributes and a link. Sets keep
/// their labels and attributes in [`SampleShapes`]' shared arrays, so a
/// profile with a million distinct label sets allocates no vector per set.
#[derive(Debug, Clone, Copy)]
struct LabelSet {
    /// Its attribute indices in `SampleShapes::attributes`.
    attributes: (u32, u32),
    link_index: i32,
    /// The packed attribute indices' payload size, computed once.
    attributes_payload: u32,
}

/// A label as a hash key: pprof's (key, str, num, num_unit).
type LabelKey = (i64, i64, i64, i64);

fn span<T>(entries: &[T], (start, len): (u32, u32)) -> &[T] {
    &entries[start as usize..(start + len) as usize]
}

/// Every pprof sample's stack index and label set, without its values.
#[derive(Default)]
pub(crate) struct SampleShapes {
    /// Per sample: its stack index and the position of its label set.
    samples: Vec<(i32, u32)>,
    sets: Vec<LabelSet>,
    attributes: Vec<i32>,
    /// Every distinct label list, and the set each one became (by its slot).
    labels: SliceTable<LabelKey>,
    set_of: FxHashMap<(u64, u64), u32>,
    key: Vec<LabelKey>,
    /// The distinct stacks (their slots in `table`), in the order first seen.
    stacks: Vec<(u64, u64)>,
    table: StackTable,
}

impl SampleShapes {
    pub fn with_capacity(samples: usize) -> Self {
        SampleShapes {
            samples: Vec::with_capacity(samples),
            ..Default::default()
        }
    }

    /// The number of samples.
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// Adds the next sample, its stack still unknown; `convert` turns its
    /// labels into attributes and a link the first time they are seen.
    pub fn push(&mut self, labels: &[pprof::Label], convert: impl FnOnce() -> (Vec<i32>, i32)) {
        self.key.clear();
        (self.key).extend(labels.iter().map(|l| (l.key, l.str, l.num, l.num_unit)));
        let slot = self.labels.intern(&self.key);
        if let Some(&set) = self.set_of.get(&slot) {
            self.samples.push((0, set));
            return;
        }
        let (attribute_indices, link_index) = convert();
        let set = self.sets.len() as u32;
        self.sets.push(LabelSet {
            attributes: (self.attributes.len() as u32, attribute_indices.len() as u32),
            link_index,
            attributes_payload: attribute_payload(&attribute_indices) as u32,
        });
        self.attributes.extend_from_slice(&attribute_indices);
        self.set_of.insert(slot, set);
        self.samples.push((0, set));
    }

    /// Sets each sample's stack index from its slot in `table` (see
    /// `stacks.rs`), keeping the table: entry 0 of v1development's stack
    /// table is the empty stack, then each distinct stack in the order
    /// first seen.
    ///
    /// `table` holds each distinct stack once, in the order samples first
    /// have it, so a sample whose stack is new has the slot that starts
    /// where the stacks seen so far end. Only a stack seen before is looked
    /// up, in a map made at the first such sample (profiles whose stacks
    /// are all distinct never make it).
    pub fn set_stacks(&mut self, slots: &[(u64, u64)], table: StackTable) {
        let stacks = &mut self.stacks;
        let mut index_of: Option<FxHashMap<u64, i32>> = None;
        let mut seen_end = 0;
        for (sample, &(start, length)) in self.samples.iter_mut().zip(slots) {
            if length == 0 {
                continue;
            }
            if start >= seen_end {
                stacks.push((start, length));
                seen_end = start + length;
                let index = stacks.len() as i32;
                if let Some(index_of) = &mut index_of {
                    index_of.insert(start, index);
                }
                sample.0 = index;
                continue;
            }
            let index_of = index_of.get_or_insert_with(|| {
                let indexed = stacks.iter().enumerate();
                indexed
                    .map(|(k, &(start, _))| (start, k as i32 + 1))
                    .collect()
            });
            sample.0 = index_of[&start];
        }
        self.table = table;
    }

    /// The stack table as messages: each stack's location indices one past
    /// the locations' positions (entry 0 is the zero location).
    pub fn stack_messages(&self) -> Vec<dev::Stack> {
        let entries = self.stacks.iter().map(|&slot| dev::Stack {
            location_indices: self
                .table
                .stack(slot)
                .iter()
                .map(|&p| p as i32 + 1)
                .collect(),
            ..Default::default()
        });
        std::iter::once(dev::Stack::default())
            .chain(entries)
            .collect()
    }

    /// The distinct stacks in table order (after entry 0, the empty
    /// stack), as location positions.
    pub fn stacks(&self) -> impl Iterator<Item = &[u32]> {
        self.stacks.iter().map(|&slot| self.table.stack(slot))
    }

    /// `f` of each distinct stack, in table order: on two threads for a
    /// large table.
    pub fn map_stacks<T: Send>(&self, f: impl Fn(&[u32]) -> T + Sync) -> Vec<T> {
        let map = |range: std::ops::Range<usize>| -> Vec<T> {
            let slots = self.stacks[range].iter();
            slots.map(|&slot| f(self.table.stack(slot))).collect()
        };
        in_halves(self.stacks.len(), map)
            .into_iter()
            .flatten()
            .collect()
    }

    /// Every Profile's samples as messages: profile k holds value k of each
    /// sample (none when the pprof profile has no sample type).
    pub fn into_models<S: ProfileSamples>(self, source: &S, profiles: &mut [dev::Profile]) {
        let types = source.profile().sample_type.len();
        let all = 0..self.samples.len();
        self.each_sample(
            source,
            all,
            |stack_index, set, attribute_indices, values| {
                for (k, profile) in profiles.iter_mut().enumerate() {
                    profile.samples.push(dev::Sample {
                        stack_index,
                        attribute_indices: attribute_indices.to_vec(),
                        link_index: set.link_index,
                        values: value_of(values, k, types).into_iter().collect(),
                        ..Default::default()
                    });
                }
            },
        );
    }

    /// Every Profile's samples as occurrences of `Profile.samples` (field
    /// 2), in the bytes rust-protobuf writes for [`Self::into_models`]'s
    /// messages: fields in number order, proto3 zeros left out, repeated
    /// scalars packed. Per Profile, its samples in consecutive chunks (one
    /// per thread: large profiles are encoded in two halves at once), the
    /// samples read once.
    pub fn encode<S: ProfileSamples>(&self, source: &S, profiles: usize) -> Vec<Vec<Vec<u8>>> {
        let mut halves = in_halves(self.samples.len(), |range| {
            self.encode_range(source, profiles, range)
        });
        (0..profiles)
            .map(|k| {
                halves
                    .iter_mut()
                    .map(|half| std::mem::take(&mut half[k]))
                    .collect()
            })
            .collect()
    }

    /// Samples `range` of every Profile, one buffer per Profile.
    fn encode_range<S: ProfileSamples>(
        &self,
        source: &S,
        profiles: usize,
        range: std::ops::Range<usize>,
    ) -> Vec<Vec<u8>> {
        let types = source.profile().sample_type.len();
        let mut out: Vec<Vec<u8>> = (0..profiles)
            .map(|_| Vec::with_capacity(range.len() * 16))
            .collect();
        self.each_sample(source, range, |stack_index, set, attributes, values| {
            for (k, out) in out.iter_mut().enumerate() {
                let value = value_of(values, k, types);
                write_sample(out, stack_index, set, attributes, value);
            }
        });
        out
    }

    /// Calls `f` with the stack index, label set, attribute indices and
    /// values (read again from `source`) of each sample in `range`, in
    /// order.
    fn each_sample<S: ProfileSamples>(
        &self,
        source: &S,
        range: std::ops::Range<usize>,
        mut f: impl FnMut(i32, &LabelSet, &[i32], &[i64]),
    ) {
        let mut buffer = pprof::Sample::new();
        for i in range {
            let (stack_index, set) = self.samples[i];
            let values = &source.sample_fields(i, VALUES, &mut buffer).value;
            let set = &self.sets[set as usize];
            f(
                stack_index,
                set,
                span(&self.attributes, set.attributes),
                values,
            );
        }
    }
}

/// Value `k` of a sample: none without sample types; a sample short of
/// values (invalid pprof) reads 0, as pprof's tools do.
fn value_of(values: &[i64], k: usize, types: usize) -> Option<i64> {
    match types {
        0 => None,
        _ => Some(values.get(k).copied().unwrap_or(0)),
    }
}

/// An int32 as protobuf writes it: negative numbers sign-extended.
pub(crate) fn int32(v: i32) -> u64 {
    i64::from(v) as u64
}

fn attribute_payload(indices: &[i32]) -> usize {
    packed_payload(indices.iter().map(|&a| int32(a)))
}

fn write_sample(
    out: &mut Vec<u8>,
    stack_index: i32,
    set: &LabelSet,
    attributes: &[i32],
    value: Option<i64>,
) {
    let value_payload = value.map_or(0, |v| packed_payload(std::iter::once(v as u64)));
    let attributes_payload = set.attributes_payload as usize;
    let size = optional_size(sample::STACK_INDEX, int32(stack_index))
        + packed_size(sample::ATTRIBUTE_INDICES, attributes_payload)
        + optional_size(sample::LINK_INDEX, int32(set.link_index))
        + packed_size(sample::VALUES, value_payload);
    write_len_prefix(out, profile::SAMPLES, size);
    write_optional(out, sample::STACK_INDEX, int32(stack_index));
    let attributes = attributes.iter().map(|&a| int32(a));
    write_packed(
        out,
        sample::ATTRIBUTE_INDICES,
        attributes_payload,
        attributes,
    );
    write_optional(out, sample::LINK_INDEX, int32(set.link_index));
    let values = value.into_iter().map(|v| v as u64);
    write_packed(out, sample::VALUES, value_payload, values);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::StackTable;

    /// Stacks as the interner leaves them: each new one at the end of the
    /// table, a repeated one at its first slot; some samples without one.
    fn interned(stacks: &[&[u32]]) -> (Vec<(u64, u64)>, StackTable) {
        let mut table = StackTable::with_capacity(0);
        let slots = stacks.iter().map(|s| table.intern(s)).collect();
        (slots, table)
    }

    fn indices(stacks: &[&[u32]]) -> Vec<i32> {
        let (slots, table) = interned(stacks);
        let mut shapes = SampleShapes::with_capacity(stacks.len());
        for _ in stacks {
            shapes.push(&[], || (Vec::new(), 0));
        }
        shapes.set_stacks(&slots, table);
        shapes.samples.iter().map(|&(stack, _)| stack).collect()
    }

    #[test]
    fn stack_indices_count_distinct_stacks_in_order_first_seen() {
        // All distinct: no lookup at all.
        assert_eq!(indices(&[&[1], &[2, 3], &[], &[4]]), [1, 2, 0, 3]);
        // Repeats, before and after the map is made.
        let (a, b, c, d): (&[u32], &[u32], &[u32], &[u32]) = (&[1, 2], &[3], &[1], &[2, 1]);
        assert_eq!(
            indices(&[a, b, a, c, b, d, c, a, &[]]),
            [1, 2, 1, 3, 2, 4, 3, 1, 0]
        );
        let (slots, table) = interned(&[a, b, a, c]);
        let mut shapes = SampleShapes::with_capacity(4);
        for _ in 0..4 {
            shapes.push(&[], || (Vec::new(), 0));
        }
        shapes.set_stacks(&slots, table);
        let stacks: Vec<&[u32]> = shapes.stacks().collect();
        assert_eq!(stacks, [a, b, c]);
    }
}
