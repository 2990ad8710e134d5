//! pprof → v1development samples, held as compact records until they
//! become `Sample` messages or their encoding (as `experimental/records.rs` does
//! for v1experimental).
//!
//! Every Profile of a converted pprof profile holds one `Sample` per pprof
//! sample, all with the same stack, attributes and link and differing only
//! in the value. So each pprof sample is kept once, as its stack index and
//! its label set (samples with the same labels share one set, converted
//! once), and written once per Profile, its values read again from the
//! source.

use protoprof_model_meta::threads::{both, PARALLEL_ITEMS};
use protoprof_model_meta::wire::{
    len_field_size, optional_size, packed_payload, packed_size, varint_size, write_len_prefix,
    write_optional, write_packed, write_tag, LEN,
};
use protoprof_model_meta::Fields;
use protoprof_model_otlp::fields::opentelemetry::proto::profiles::v1development::{
    profile, sample,
};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development as dev;
use protoprof_model_pprof::fields::perftools::profiles::sample as pprof_sample;
use protoprof_model_pprof::perftools::profiles as pprof;
use protoprof_model_pprof::samples::ProfileSamples;

use crate::development::key_numbering::{fx_hash, KeyNumbering, Numbered};
use crate::development::stacks::{each_varint, packed_run_payload, DevelopmentStacks};

const VALUES: Fields = Fields::only(&[pprof_sample::VALUE]);
const LABELS: Fields = Fields::only(&[pprof_sample::LABEL]);

/// From this many samples on, their sizes are summed on two threads.
const PARALLEL_SAMPLES: usize = PARALLEL_ITEMS;

/// What a pprof sample's labels become: attributes and a link. Sets keep
/// their attributes in [`SampleShapes`]' shared array, so a profile with a
/// million distinct label sets allocates no vector per set.
#[derive(Debug, Clone, Copy)]
struct LabelSet {
    /// Its attribute indices in `SampleShapes::attributes`.
    attributes: (u32, u32),
    link_index: i32,
    /// The packed attribute indices' payload size, computed once.
    attributes_payload: u32,
}

fn span<T>(entries: &[T], (start, len): (u32, u32)) -> &[T] {
    &entries[start as usize..(start + len) as usize]
}

/// Every pprof sample's stack index and label set, without its values.
pub(crate) struct SampleShapes {
    /// Per sample: its stack index and the position of its label set.
    samples: Vec<(i32, u32)>,
    /// The number of pprof sample types (one Profile each; one Profile,
    /// its samples without values, when there are none).
    types: usize,
    sets: Vec<LabelSet>,
    attributes: Vec<i32>,
    /// Label lists numbered by key (`label_key`): set n is list n.
    set_keys: KeyNumbering,
    /// Per set: the first sample with its labels.
    set_first: Vec<u32>,
    /// The stack table (its entries read from the source when written).
    stacks: DevelopmentStacks,
}

impl SampleShapes {
    /// Room for `samples` samples of a profile with `types` sample types.
    pub fn with_capacity(samples: usize, types: usize) -> Self {
        SampleShapes {
            samples: Vec::with_capacity(samples),
            types,
            sets: Vec::new(),
            attributes: Vec::new(),
            set_keys: KeyNumbering::new(fx_hash),
            set_first: Vec::new(),
            stacks: DevelopmentStacks::default(),
        }
    }

    /// The number of samples.
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// The number of Profiles.
    fn profiles(&self) -> usize {
        self.types.max(1)
    }

    /// The label lists numbered so far, to hash keys with and look them up
    /// in ([`KeyBatch`](crate::development::key_numbering::KeyBatch)).
    pub fn set_keys(&self) -> &KeyNumbering {
        &self.set_keys
    }

    /// Adds the next sample, its stack still unknown, whose label list's
    /// key is `key` (see [`label_key`]) with hash `hash` (from
    /// [`Self::set_keys`]): `same(j, key)` says whether sample
    /// `j` has that key, and `convert` turns the labels into attributes
    /// (appended to the vector it is given) and a link (returned) the first
    /// time they are seen.
    pub fn push(
        &mut self,
        (key, hash): (&[u8], u64),
        mut same: impl FnMut(usize, &[u8]) -> bool,
        convert: impl FnOnce(&mut Vec<i32>) -> i32,
    ) {
        let set_first = &self.set_first;
        let same = |set: u32, key: &[u8]| same(set_first[set as usize] as usize, key);
        let set = match self.set_keys.number_hashed(key, hash, same) {
            Numbered::Seen(set) => {
                self.samples.push((0, set));
                return;
            }
            Numbered::New(set) => set,
        };
        self.set_first.push(self.samples.len() as u32);
        let start = self.attributes.len();
        let link_index = convert(&mut self.attributes);
        let attribute_indices = &self.attributes[start..];
        self.sets.push(LabelSet {
            attributes: (start as u32, attribute_indices.len() as u32),
            link_index,
            attributes_payload: attribute_payload(attribute_indices) as u32,
        });
        self.samples.push((0, set));
    }

    /// Sets each sample's stack index, keeping the stack table. The label
    /// lookup is no longer needed and is freed.
    pub fn set_stacks(&mut self, mut stacks: DevelopmentStacks) {
        let indices = std::mem::take(&mut stacks.indices);
        for (sample, index) in self.samples.iter_mut().zip(indices) {
            sample.0 = index;
        }
        self.stacks = stacks;
        self.set_keys = KeyNumbering::new(fx_hash);
        self.set_first = Vec::new();
    }

    /// The stack table as messages.
    pub fn stack_messages<S: ProfileSamples>(&self, source: &S) -> Vec<dev::Stack> {
        let entries = (1..=self.stacks.len()).map(|entry| dev::Stack {
            location_indices: (self.stacks.location_indices(source, entry).into_iter())
                .map(|index| index as i32)
                .collect(),
            ..Default::default()
        });
        std::iter::once(dev::Stack::default())
            .chain(entries)
            .collect::<Vec<_>>()
    }

    /// The size of the stack table's occurrences.
    pub fn stack_table_len(&self) -> usize {
        self.stacks.table_len()
    }

    /// The number of stack table entries after entry 0.
    pub fn stack_count(&self) -> usize {
        self.stacks.len()
    }

    /// Stack table entries `entries` (1 is the first after the empty
    /// stack), appended to `out`.
    pub fn write_stacks<S: ProfileSamples>(
        &self,
        out: &mut Vec<u8>,
        source: &S,
        entries: std::ops::Range<usize>,
    ) {
        self.stacks.write_entries(out, source, entries);
    }

    /// Every Profile's samples as messages: profile k holds value k of each
    /// sample (none when the pprof profile has no sample type).
    pub fn into_models<S: ProfileSamples>(self, source: &S, profiles: &mut [dev::Profile]) {
        let mut buffer = pprof::Sample::new();
        for profile in profiles.iter_mut() {
            profile.samples.reserve(self.samples.len());
        }
        for (i, &(stack_index, set)) in self.samples.iter().enumerate() {
            let values = &source.sample_fields(i, VALUES, &mut buffer).value;
            let set = &self.sets[set as usize];
            let attribute_indices = span(&self.attributes, set.attributes);
            for (k, profile) in profiles.iter_mut().enumerate() {
                profile.samples.push(dev::Sample {
                    stack_index,
                    attribute_indices: attribute_indices.to_vec(),
                    link_index: set.link_index,
                    values: value_of(values, k, self.types).into_iter().collect(),
                    ..Default::default()
                });
            }
        }
    }

    /// The size of each Profile's samples, every occurrence of
    /// `Profile.samples` with its tag and length. Values are read from
    /// `source` here, not while labels are numbered (the longer of that
    /// phase's two threads), and in two halves on two threads for many
    /// samples.
    pub fn samples_lens<S: ProfileSamples>(&self, source: &S) -> Vec<usize> {
        let half = self.samples.len() / 2;
        let apart = self.samples.len() >= PARALLEL_SAMPLES;
        let (mut lens, second) = both(
            apart,
            || self.range_lens(source, 0..half),
            || self.range_lens(source, half..self.samples.len()),
        );
        for (len, more) in lens.iter_mut().zip(second) {
            *len += more;
        }
        lens
    }

    /// [`Self::samples_lens`] of samples `range` alone.
    fn range_lens<S: ProfileSamples>(
        &self,
        source: &S,
        range: std::ops::Range<usize>,
    ) -> Vec<usize> {
        let mut lens = vec![0; self.profiles()];
        let mut buffer = pprof::Sample::new();
        for i in range {
            let (stack_index, set) = self.samples[i];
            let set = &self.sets[set as usize];
            let values = SampleValues::of(source, i, &mut buffer);
            for (k, len) in lens.iter_mut().enumerate() {
                let value_size = value_payload(values.get(k, self.types));
                let size = sample_size(stack_index, set, value_size);
                *len += len_field_size(profile::SAMPLES, size);
            }
        }
        lens
    }

    /// Samples `range` of Profile `k` as occurrences of `Profile.samples`
    /// (field 2), appended to `out`: the bytes rust-protobuf writes for
    /// [`Self::into_models`]'s messages (fields in number order, proto3
    /// zeros left out, repeated scalars packed), values read again from
    /// `source`.
    pub fn write_samples<S: ProfileSamples>(
        &self,
        out: &mut Vec<u8>,
        source: &S,
        k: usize,
        range: std::ops::Range<usize>,
        buffer: &mut pprof::Sample,
    ) {
        for i in range {
            let (stack_index, set) = self.samples[i];
            let value = SampleValues::of(source, i, buffer).get(k, self.types);
            let set = &self.sets[set as usize];
            let attributes = span(&self.attributes, set.attributes);
            write_sample(out, stack_index, set, attributes, value);
        }
    }
}

/// What reading a label list's key needs when the source does not hold
/// the labels side by side.
#[derive(Default)]
pub(crate) struct LabelKeyBuffers {
    sample: pprof::Sample,
    encoded: Vec<u8>,
}

/// Sample `i`'s label list as a key: its `label` occurrences as the input
/// holds them, or as rust-protobuf writes them. Equal keys are equal label
/// lists (two encodings of one list make two equal sets, which convert
/// alike).
pub(crate) fn label_key<'k, S: ProfileSamples>(
    source: &'k S,
    i: usize,
    buffers: &'k mut LabelKeyBuffers,
) -> &'k [u8] {
    if let Some(run) = source.field_run(i, pprof_sample::LABEL) {
        return run;
    }
    let labels = &source.sample_fields(i, LABELS, &mut buffers.sample).label;
    buffers.encoded.clear();
    for label in labels {
        write_tag(&mut buffers.encoded, pprof_sample::LABEL, LEN);
        (protobuf::Message::write_length_delimited_to_vec(label, &mut buffers.encoded))
            .expect("a label encodes into a vector");
    }
    &buffers.encoded
}

/// A sample's values: the input's one packed run of them, left encoded, or
/// decoded.
enum SampleValues<'a> {
    Packed(&'a [u8]),
    Decoded(&'a [i64]),
}

impl<'a> SampleValues<'a> {
    /// Sample `i`'s values; decoded into `buffer` when the input does not
    /// hold them in one packed run.
    fn of<S: ProfileSamples>(source: &'a S, i: usize, buffer: &'a mut pprof::Sample) -> Self {
        let run = source.field_run(i, pprof_sample::VALUE);
        match run.and_then(|run| packed_run_payload(run, pprof_sample::VALUE)) {
            Some(payload) => SampleValues::Packed(payload),
            None => SampleValues::Decoded(&source.sample_fields(i, VALUES, buffer).value),
        }
    }

    /// Value `k`, as [`value_of`] gives it.
    fn get(&self, k: usize, types: usize) -> Option<i64> {
        match self {
            SampleValues::Decoded(values) => value_of(values, k, types),
            SampleValues::Packed(_) if types == 0 => None,
            SampleValues::Packed(payload) => {
                // A sample short of values reads 0, as in `value_of`.
                let (mut n, mut value) = (0, 0);
                each_varint(payload, |v| {
                    if n == k {
                        value = v as i64;
                    }
                    n += 1;
                    n <= k
                });
                Some(value)
            }
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

/// The packed `values` payload of a Profile's value (empty for none).
fn value_payload(value: Option<i64>) -> usize {
    value.map_or(0, |v| varint_size(v as u64))
}

/// The size of a `Sample` message with this stack index, label set and
/// values payload, as [`write_sample`] writes it.
fn sample_size(stack_index: i32, set: &LabelSet, value_payload: usize) -> usize {
    optional_size(sample::STACK_INDEX, int32(stack_index))
        + packed_size(sample::ATTRIBUTE_INDICES, set.attributes_payload as usize)
        + optional_size(sample::LINK_INDEX, int32(set.link_index))
        + packed_size(sample::VALUES, value_payload)
}

fn write_sample(
    out: &mut Vec<u8>,
    stack_index: i32,
    set: &LabelSet,
    attributes: &[i32],
    value: Option<i64>,
) {
    let value_payload = value_payload(value);
    let size = sample_size(stack_index, set, value_payload);
    write_len_prefix(out, profile::SAMPLES, size);
    write_optional(out, sample::STACK_INDEX, int32(stack_index));
    let attributes = attributes.iter().map(|&a| int32(a));
    write_packed(
        out,
        sample::ATTRIBUTE_INDICES,
        set.attributes_payload as usize,
        attributes,
    );
    write_optional(out, sample::LINK_INDEX, int32(set.link_index));
    let values = value.into_iter().map(|v| v as u64);
    write_packed(out, sample::VALUES, value_payload, values);
}
