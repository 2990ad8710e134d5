//! v1development samples as pprof samples, converted as they are read: a
//! [`SampleSource`] of pprof samples over the OTLP samples and stacks,
//! wherever those are held (the codec's view leaves them in the input
//! bytes). `top`, `folded` and the other analyses read it as they read a
//! pprof profile, and nothing holds the converted samples.
//!
//! Converting a sample needs no string interned: one pass over the samples
//! when the source is made ([`SampleTables::note`]) checks every index a
//! sample holds and converts each attribute and link entry the first time a
//! sample uses it, so the pprof string table grows in the order a front to
//! back conversion grows it, and [`crate::development_to_pprof_with`] (this
//! source read in order) writes what it always wrote.

use std::cell::RefCell;

use protoprof_model_meta::wire::{write_packed_with, write_varint};
use protoprof_model_meta::{Fields, SampleSource};
use protoprof_model_otlp::fields::opentelemetry::proto::profiles::v1development::stack as stack_field;
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development as dev;
use protoprof_model_pprof::fields::perftools::profiles::sample as sample_field;
use protoprof_model_pprof::perftools::profiles as pprof;

use crate::development::source::DevelopmentSource;
use crate::development::tables::{location_ids, FromDevelopment, SampleAt};
use crate::error::BridgeError;

/// Which OTLP samples make pprof sample `n`.
pub(crate) enum Layout {
    /// pprof -> v1development's shape: pprof sample `n` is sample `n` of
    /// every profile, its values those of the profiles in `order`. Those
    /// of the profiles after the first are `later_values[n * stride..]`,
    /// one per profile: read when the shape was checked, so converting a
    /// sample reads only the first profile's.
    Aligned {
        order: Vec<usize>,
        later_values: Vec<i64>,
        stride: usize,
    },
    /// The profiles' samples one after another, each with its value in its
    /// profile's column of `width`; profiles without samples left out.
    Concatenated { parts: Vec<Part>, width: usize },
}

/// A profile with samples, in [`Layout::Concatenated`].
pub(crate) struct Part {
    /// The profile's position in message order.
    pub index: usize,
    /// The pprof sample number of its first sample.
    pub first: usize,
    /// The pprof sample type its values go under.
    pub column: usize,
    /// The labels every sample of the profile carries: the context that
    /// tells profiles apart.
    pub context: Vec<pprof::Label>,
}

impl Part {
    /// The part holding pprof sample `n`, of `parts` (in sample order).
    pub(crate) fn of_sample(parts: &[Part], n: usize) -> &Part {
        &parts[parts.partition_point(|p| p.first <= n) - 1]
    }
}

/// Each attribute and link entry's labels, for the entries samples use,
/// which stacks have been checked, and the stacks' location ids when
/// samples share stacks.
#[derive(Default)]
pub(crate) struct SampleTables {
    attributes: Vec<Option<Vec<pprof::Label>>>,
    links: Vec<Option<Vec<pprof::Label>>>,
    checked_stacks: Vec<bool>,
    stacks: Option<StackIds>,
}

/// Every used stack's location ids, one after another: read again for
/// each sample that shares the stack, instead of decoding it again from
/// wherever the stack table is (in a profile of pprof's synthetic shape, 4.6
/// samples a stack, so most of a pass over the samples).
#[derive(Default)]
struct StackIds {
    /// Stack index -> (start, end) in `ids`.
    ranges: Vec<(u32, u32)>,
    ids: Vec<u32>,
    /// Where each noted sample's stack starts in `ids`, in the order the
    /// samples were noted (pprof sample order). Samples are not in stack
    /// order, so each stack is loaded a few samples before it is read
    /// ([`SampleTables::warm_stacks`]).
    sample_starts: Vec<u32>,
}

/// Stacks are kept as ids when there are at least this many samples a
/// stack: then the ids take less memory than the pprof samples would, and
/// save more decoding than they cost.
const SAMPLES_PER_STACK_TO_KEEP: usize = 2;

/// Samples are read this many at a time ahead of their stacks' loads
/// ([`SampleTables::warm_stacks`]).
const WARM_AHEAD: usize = 16;

impl SampleTables {
    /// Empty tables for `cx`'s dictionary, `stacks` stacks and `samples`
    /// samples.
    pub(crate) fn for_dictionary(cx: &FromDevelopment, stacks: usize, samples: usize) -> Self {
        let keep_stacks = samples >= SAMPLES_PER_STACK_TO_KEEP.saturating_mul(stacks.max(1));
        SampleTables {
            attributes: vec![None; cx.d.attribute_table.len()],
            links: vec![None; cx.d.link_table.len()],
            checked_stacks: vec![false; stacks],
            stacks: keep_stacks.then(|| StackIds {
                ranges: vec![(0, 0); stacks],
                ids: Vec::new(),
                sample_starts: Vec::with_capacity(samples),
            }),
        }
    }

    /// Checks the indices of sample `s` (at `at`) and converts the entries
    /// it is the first to use, interning their strings: its attributes (an
    /// array as one label per element when `expand_arrays`), its link, then
    /// its stack (no strings).
    pub(crate) fn note(
        &mut self,
        cx: &mut FromDevelopment,
        s: &dev::Sample,
        at: &SampleAt,
        expand_arrays: bool,
    ) -> Result<(), BridgeError> {
        for (k, &index) in s.attribute_indices.iter().enumerate() {
            if unseen(&self.attributes, index) {
                let labels = cx.attribute_entry_labels((k, index), at, expand_arrays)?;
                self.attributes[index as usize] = Some(labels);
            }
        }
        if s.link_index != 0 && unseen(&self.links, s.link_index) {
            self.links[s.link_index as usize] = Some(cx.link_entry_labels(s.link_index, at)?);
        }
        let checked = usize::try_from(s.stack_index)
            .ok()
            .and_then(|i| self.checked_stacks.get(i).copied());
        if checked != Some(true) {
            match &mut self.stacks {
                Some(kept) => kept.keep(s.stack_index as usize, cx.check_stack(s.stack_index, at)?),
                // Stacks read again from the source: reading each one now
                // only to check it is needless when the source vouches
                // for them all.
                None if cx.stacks_fit() => cx.check_stack_index(s.stack_index, at)?,
                None => _ = cx.check_stack(s.stack_index, at)?,
            }
            self.checked_stacks[s.stack_index as usize] = true;
        }
        if let Some(kept) = &mut self.stacks {
            let start = kept.ranges.get(s.stack_index as usize).map(|r| r.0);
            kept.sample_starts.push(start.unwrap_or(u32::MAX));
        }
        Ok(())
    }

    /// Loads the kept stacks of pprof samples `samples`, to have them
    /// cached when read: one load per cache line, all issued before any is
    /// needed, so that their waits overlap. (Only a hint: what it loads
    /// changes nothing.)
    fn warm_stacks(&self, samples: std::ops::Range<usize>) {
        let Some(kept) = &self.stacks else { return };
        let len = kept.sample_starts.len();
        let starts = &kept.sample_starts[samples.start.min(len)..samples.end.min(len)];
        // A stack's first two cache lines (16 ids each): stacks are tens of
        // frames.
        let load = |i: usize| kept.ids.get(i).copied().unwrap_or_default();
        let loaded = (starts.iter()).fold(0u32, |sum, &start| {
            sum ^ load(start as usize) ^ load(start as usize + 16)
        });
        std::hint::black_box(loaded);
    }

    /// The location ids of `stack_index`, when kept.
    fn kept_stack(&self, stack_index: i32) -> Option<&[u32]> {
        let kept = self.stacks.as_ref()?;
        let &(start, end) = kept.ranges.get(stack_index as usize)?;
        Some(&kept.ids[start as usize..end as usize])
    }

    /// Appends the labels of sample `s`'s attributes and link to `out`.
    fn write_labels(&self, s: &dev::Sample, out: &mut Vec<pprof::Label>) {
        for &index in &s.attribute_indices {
            out.extend_from_slice(labels(&self.attributes, index));
        }
        if s.link_index != 0 {
            out.extend_from_slice(labels(&self.links, s.link_index));
        }
    }
}

impl StackIds {
    /// Keeps the location ids of `stack`, stack `index`; past 4 Gi ids in
    /// all, stops keeping them (then they are read from the stack table).
    fn keep(&mut self, index: usize, stack: &dev::Stack) {
        let start = self.ids.len();
        self.ids.extend(location_ids(stack));
        match (u32::try_from(start), u32::try_from(self.ids.len())) {
            (Ok(start), Ok(end)) => self.ranges[index] = (start, end),
            _ => *self = StackIds::default(),
        }
    }
}

/// The labels of entry `index` of `table` (none when not converted:
/// [`SampleTables::note`] has converted every entry a sample uses).
fn labels(table: &[Option<Vec<pprof::Label>>], index: i32) -> &[pprof::Label] {
    table
        .get(index as usize)
        .and_then(Option::as_deref)
        .unwrap_or_default()
}

/// Whether entry `index` is in range and not converted yet (out of range
/// counts as unseen: converting it reports the error).
fn unseen<T>(table: &[Option<T>], index: i32) -> bool {
    usize::try_from(index)
        .ok()
        .and_then(|i| table.get(i))
        .is_none_or(Option::is_none)
}

/// OTLP v1development profiles converted to one pprof profile but for the
/// samples, and how to convert those as they are read: [`Self::reading`]
/// gives them as a [`SampleSource`]. It borrows nothing, so the caller may
/// free the dictionary once it is made (the codec view's `shed_dictionary`).
/// Made by [`crate::development_as_pprof`].
pub struct DevelopmentAsPprof {
    header: pprof::Profile,
    layout: Layout,
    tables: SampleTables,
}

/// The samples of a [`DevelopmentAsPprof`], converted from the OTLP
/// samples and stacks as they are read.
pub struct DevelopmentPprofSamples<'a> {
    converted: &'a DevelopmentAsPprof,
    source: &'a DevelopmentSource<'a>,
    count: usize,
}

/// What converting one sample reads into: one set per thread, as the
/// analyses read a source from several.
#[derive(Default)]
struct Scratch {
    sample: dev::Sample,
    stack: dev::Stack,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

impl DevelopmentAsPprof {
    pub(crate) fn new(header: pprof::Profile, layout: Layout, mut tables: SampleTables) -> Self {
        tables.checked_stacks = Vec::new();
        DevelopmentAsPprof {
            header,
            layout,
            tables,
        }
    }

    /// Whether samples read stacks' kept location ids.
    #[cfg(test)]
    pub(crate) fn keeps_stack_ids(&self) -> bool {
        self.tables.stacks.is_some()
    }

    /// The profiles whose samples make it, one after another, when they
    /// are (`None` for pprof's shape, whose samples are across profiles).
    pub(crate) fn parts(&self) -> Option<&[Part]> {
        match &self.layout {
            Layout::Concatenated { parts, .. } => Some(parts),
            Layout::Aligned { .. } => None,
        }
    }

    /// The profile without its samples.
    pub fn into_header(self) -> pprof::Profile {
        self.header
    }

    /// The profile without its samples, to change what samples refer to
    /// (a location's lines, say: symbolization). Its locations' ids, and
    /// the strings and tables samples' labels use, must stay as they are.
    pub fn header_mut(&mut self) -> &mut pprof::Profile {
        &mut self.header
    }

    /// The whole profile, its samples converted from `source` (see
    /// [`Self::reading`]).
    pub fn into_profile(self, source: &DevelopmentSource) -> pprof::Profile {
        let mut sample = Vec::new();
        self.reading(source).drain_into(&mut |s| sample.push(s));
        pprof::Profile {
            sample,
            ..self.header
        }
    }

    /// The samples, converted from `source` as they are read.
    ///
    /// `source` must hold the samples and stacks this was made from (the
    /// same view, or the same decoded message): it was checked against
    /// those, and an index out of range in another panics when read.
    pub fn reading<'a>(&'a self, source: &'a DevelopmentSource<'a>) -> DevelopmentPprofSamples<'a> {
        let count = match &self.layout {
            Layout::Aligned { .. } => source.sample_count(0),
            Layout::Concatenated { parts, .. } => parts
                .last()
                .map_or(0, |p| p.first + source.sample_count(p.index)),
        };
        DevelopmentPprofSamples {
            converted: self,
            source,
            count,
        }
    }
}

impl DevelopmentPprofSamples<'_> {
    /// Hands each sample to `sink`, in order.
    pub fn drain_into(&self, sink: &mut dyn FnMut(pprof::Sample)) {
        let mut buffer = pprof::Sample::new();
        for n in 0..self.count {
            self.fill(n, Fields::ALL, &mut buffer, None);
            sink(std::mem::take(&mut buffer));
        }
    }

    /// Converts sample `n` into `out`, at least `fields` of it; its
    /// location ids into `written`, when given, rather than into `out`.
    fn fill(
        &self,
        n: usize,
        fields: Fields,
        out: &mut pprof::Sample,
        written: Option<&mut Vec<u8>>,
    ) {
        SCRATCH.with(|scratch| {
            let scratch = &mut *scratch.borrow_mut();
            out.value.clear();
            let (s, context) = match &self.converted.layout {
                Layout::Aligned {
                    order,
                    later_values,
                    stride,
                } => {
                    let s = self.source.sample(0, n, &mut scratch.sample);
                    let later = &later_values[n * stride..(n + 1) * stride];
                    out.value.extend(order.iter().map(|&k| match k {
                        0 => s.values.first().copied().unwrap_or_default(),
                        k => later[k - 1],
                    }));
                    (s, &[][..])
                }
                Layout::Concatenated { parts, width } => {
                    let part = Part::of_sample(parts, n);
                    let s = self
                        .source
                        .sample(part.index, n - part.first, &mut scratch.sample);
                    out.value.resize(*width, 0);
                    out.value[part.column] = sample_value(s);
                    (s, &part.context[..])
                }
            };
            out.location_id.clear();
            let tables = &self.converted.tables;
            let stack = (s, &mut scratch.stack);
            match written {
                Some(bytes) => {
                    let write = |bytes: &mut Vec<u8>| {
                        self.for_each_id(n, stack, |id| write_varint(bytes, id));
                        Ok::<(), ()>(())
                    };
                    _ = write_packed_with(bytes, sample_field::LOCATION_ID, write);
                }
                None if fields.contains(sample_field::LOCATION_ID) => {
                    let ids = &mut out.location_id;
                    self.for_each_id(n, stack, |id| ids.push(id));
                }
                None => {}
            }
            out.label.clear();
            if fields.contains(sample_field::LABEL) {
                tables.write_labels(s, &mut out.label);
                out.label.extend_from_slice(context);
            }
        })
    }

    /// Calls `sink` with each location id of sample `n`, which is
    /// `stack.0` (`stack.1` holds its stack when it is read from the
    /// source), warming the kept stacks of the samples a little ahead.
    #[inline]
    fn for_each_id(
        &self,
        n: usize,
        (s, stack): (&dev::Sample, &mut dev::Stack),
        mut sink: impl FnMut(u64),
    ) {
        let tables = &self.converted.tables;
        if n % WARM_AHEAD == 0 {
            tables.warm_stacks(n + WARM_AHEAD..n + 2 * WARM_AHEAD);
        }
        match tables.kept_stack(s.stack_index) {
            Some(ids) => ids.iter().for_each(|&id| sink(u64::from(id))),
            None => {
                let stack = self.source.entry(s.stack_index as usize, stack);
                location_ids(stack).for_each(|id| sink(u64::from(id)));
            }
        }
    }

    /// The stack index of sample `n`.
    fn stack_index(&self, n: usize) -> i32 {
        let (profile, i) = match &self.converted.layout {
            Layout::Aligned { .. } => (0, n),
            Layout::Concatenated { parts, .. } => {
                let part = Part::of_sample(parts, n);
                (part.index, n - part.first)
            }
        };
        SCRATCH.with(|scratch| {
            let scratch = &mut *scratch.borrow_mut();
            (self.source.sample(profile, i, &mut scratch.sample)).stack_index
        })
    }

    fn value_width(&self) -> usize {
        match &self.converted.layout {
            Layout::Aligned { order, .. } => order.len(),
            Layout::Concatenated { width, .. } => *width,
        }
    }
}

impl SampleSource for DevelopmentPprofSamples<'_> {
    type Profile = pprof::Profile;
    type Sample = pprof::Sample;

    fn profile(&self) -> &pprof::Profile {
        &self.converted.header
    }

    fn sample_count(&self) -> usize {
        self.count
    }

    fn sample_fields<'s>(
        &'s self,
        i: usize,
        fields: Fields,
        buffer: &'s mut pprof::Sample,
    ) -> &'s pprof::Sample {
        self.fill(i, fields, buffer, None);
        buffer
    }

    fn value_count(&self, _: usize) -> usize {
        self.value_width()
    }

    /// The location ids, written as they are read from the kept stack
    /// (or the stack), with no vector between.
    fn sample_writing_field<'s>(
        &'s self,
        i: usize,
        (number, out): (u32, &mut Vec<u8>),
        fields: Fields,
        buffer: &'s mut pprof::Sample,
    ) -> Option<&'s pprof::Sample> {
        if number != sample_field::LOCATION_ID {
            return None;
        }
        self.fill(i, fields, buffer, Some(out));
        Some(buffer)
    }

    /// Sample `i`'s stack as the source holds it, for its location ids,
    /// when its bytes are those the ids are written as
    /// (`written_as_location_ids`). Not when stacks are kept as ids:
    /// those are read from one array, loaded ahead, where this reads the
    /// sample twice and scans the stack.
    fn field_run(&self, i: usize, number: u32) -> Option<&[u8]> {
        if number != sample_field::LOCATION_ID || self.converted.tables.stacks.is_some() {
            return None;
        }
        let stack = usize::try_from(self.stack_index(i)).ok()?;
        let bytes = (self.source).entry_of_sole_field(stack, stack_field::LOCATION_INDICES)?;
        written_as_location_ids(bytes).then_some(bytes)
    }
}

// A stack's `location_indices` and a pprof sample's `location_id` share a
// number (and a location's pprof id is its index).
const _: () = assert!(stack_field::LOCATION_INDICES == sample_field::LOCATION_ID);

/// Whether `stack`, a stack's bytes holding nothing but
/// `location_indices` in varints below 2^28, is byte for byte what its
/// location ids are written as in a pprof sample: nothing, or one packed
/// run of shortest varints, none 0 (no location: left out). A 0 byte ends
/// each 0 and each varint longer than it needs be, so a run without one
/// is the run written again.
pub(crate) fn written_as_location_ids(stack: &[u8]) -> bool {
    const PACKED_TAG: u8 = (stack_field::LOCATION_INDICES << 3 | 2) as u8;
    let Some((&PACKED_TAG, rest)) = stack.split_first() else {
        return stack.is_empty();
    };
    if rest.contains(&0) {
        return false;
    }
    let Some(last) = rest.iter().take(4).position(|&b| b < 0x80) else {
        return false;
    };
    let length = (rest[..=last].iter().rev()).fold(0usize, |n, &b| n << 7 | usize::from(b & 0x7f));
    rest.len() - (last + 1) == length
}

/// What a v1development sample measured, in its profile's unit: the sum of
/// its values, or, for timestamps alone, 1 per timestamp (as the schema
/// says).
pub fn sample_value(s: &dev::Sample) -> i64 {
    if s.values.is_empty() {
        s.timestamps_unix_nano.len() as i64
    } else {
        s.values.iter().fold(0i64, |sum, v| sum.saturating_add(*v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protoprof_model_meta::wire::{packed_payload, write_packed, write_varint};

    #[test]
    fn stacks_written_as_location_ids_are_packed_runs_of_shortest_nonzero_varints() {
        for ids in [
            vec![1u64],
            vec![1, 2, 3],
            vec![300, 1],
            (1..=100).collect(),
            vec![],
        ] {
            let mut written = Vec::new();
            let payload = packed_payload(ids.iter().copied());
            write_packed(&mut written, 1, payload, ids.iter().copied());
            assert!(written_as_location_ids(&written), "{ids:?}: {written:?}");
        }
        let unpacked = [0x08, 0x01];
        let zero = [0x0a, 0x02, 0x01, 0x00];
        let longer_than_needed = [0x0a, 0x03, 0x81, 0x00, 0x05];
        let two_runs = [0x0a, 0x01, 0x01, 0x0a, 0x01, 0x02];
        let short = [0x0a, 0x05, 0x01];
        let long = [0x0a, 0x01, 0x01, 0x02];
        let empty_run = [0x0a, 0x00];
        let mut no_length = vec![0x0a];
        write_varint(&mut no_length, 1 << 30);
        for odd in [
            &unpacked[..],
            &zero,
            &longer_than_needed,
            &two_runs,
            &short,
            &long,
            &empty_run,
            &no_length,
            &[0x0a],
        ] {
            assert!(!written_as_location_ids(odd), "{odd:?}");
        }
    }
}
