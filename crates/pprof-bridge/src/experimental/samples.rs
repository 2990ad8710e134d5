//! v1experimental samples as pprof samples, converted as they are read: a
//! [`SampleSource`] of pprof samples over one container's OTLP samples,
//! wherever those are held (the codec's view leaves them in the input
//! bytes). The v1experimental counterpart of `development::samples`.
//!
//! Converting a sample needs no string interned: the pass over the samples
//! when the source is made (`ToPprof::note_samples`) checks every index a
//! sample holds and converts each attribute and link entry the first time a
//! sample uses it, so the pprof string table grows in the order a front to
//! back conversion grows it, and [`crate::otlp_to_pprof`] (this source read
//! in order) writes what it always wrote.

use std::cell::RefCell;

use protoprof_model_meta::wire::{write_packed_with, write_varint};
use protoprof_model_meta::{
    DecodedProfileSet, Fields, IndexTable, ProfileSetSamples, SampleSource,
};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental as otlp;
use protoprof_model_pprof::fields::perftools::profiles::sample as sample_field;
use protoprof_model_pprof::perftools::profiles as pprof;

/// The samples of v1experimental profiles, one list per container in
/// message order, however they are held: the decoded message, or the
/// codec's `ExperimentalView`, which leaves them in the input bytes.
pub type ExperimentalSource<'a> = dyn ProfileSetSamples<Sample = otlp::Sample> + 'a;

/// The samples of a decoded message, one list per container (empty for a
/// container without a profile).
pub fn experimental_data_samples(
    data: &otlp::ProfilesData,
) -> DecodedProfileSet<'_, otlp::Sample, ()> {
    let profiles = data
        .resource_profiles
        .iter()
        .flat_map(|r| &r.scope_profiles)
        .flat_map(|s| &s.profiles)
        .map(|c| c.profile.as_ref().map_or(&[][..], |p| &p.sample[..]))
        .collect();
    DecodedProfileSet::new(profiles, &[])
}

/// A profile's `location_indices`, wherever they are held.
#[derive(Clone, Copy)]
pub(crate) enum Indices<'a> {
    /// As the model holds them.
    Model(&'a [i64]),
    /// In 32 bits: the source's ([`ProfileSetSamples::index_table`]), or
    /// narrowed by the conversion, to be read after the model is gone.
    Table(IndexTable<'a>),
}

impl Indices<'_> {
    fn len(&self) -> usize {
        match self {
            Indices::Model(v) => v.len(),
            Indices::Table(t) => t.len(),
        }
    }
}

/// Where a sample's locations are, as the profile says: its own
/// `location_index`, or a slice of `location_indices`, or (when that table
/// is empty) a slice of the location table itself.
pub(crate) struct StackTables {
    /// Location position -> pprof location id.
    pub location_ids: Vec<u64>,
    /// Whether each location's id is its position plus one (as in a
    /// conversion from pprof, whose ids are 1, 2, 3, …): then an id is
    /// found without a load from `location_ids`, whose reads jump about.
    pub ids_follow_positions: bool,
    /// The profile's `location_indices` in 32 bits (an index that does not
    /// fit becomes `u32::MAX`, out of range), when the source does not hold
    /// them ([`ProfileSetSamples::index_table`]).
    pub narrowed: Vec<u32>,
    /// Where each sample's slice of the indices starts (`u32::MAX` when
    /// it has none), noted when the samples are checked: the slices are in
    /// stack order and the samples are not, so each slice is loaded a few
    /// samples before it is read ([`Self::warm_slices`]).
    pub slice_starts: Vec<u32>,
}

impl StackTables {
    /// The tables for `location_ids`, and `location_indices` unless
    /// `source` holds them.
    pub(crate) fn new(
        location_ids: Vec<u64>,
        location_indices: &[i64],
        (source, index): (&ExperimentalSource, usize),
    ) -> Self {
        let narrowed = match source.index_table(index) {
            Some(_) => Vec::new(),
            None => (location_indices.iter())
                .map(|&i| u32::try_from(i).unwrap_or(u32::MAX))
                .collect(),
        };
        let ids_follow_positions =
            (location_ids.iter().enumerate()).all(|(p, &id)| id == p as u64 + 1);
        StackTables {
            location_ids,
            ids_follow_positions,
            narrowed,
            slice_starts: Vec::new(),
        }
    }

    /// Notes where sample `s`'s slice of `indices` starts; samples are
    /// noted in order.
    pub(crate) fn note_slice(&mut self, s: &otlp::Sample, indices: Indices) {
        let start = match s.locations_length == 0 || indices.len() == 0 {
            true => u32::MAX,
            false => u32::try_from(s.locations_start_index).unwrap_or(u32::MAX),
        };
        self.slice_starts.push(start);
    }

    /// Loads the slices of the samples in `samples` from `indices`, to
    /// have them cached when read: one load each, all issued before any is
    /// needed, so that their waits overlap.
    pub(crate) fn warm_slices(&self, indices: Indices, samples: std::ops::Range<usize>) {
        let (Indices::Table(table), Some(starts)) = (indices, self.slice_starts.get(samples))
        else {
            return;
        };
        // A slice's first two cache lines: a stack is tens of entries.
        let warm = |start: usize| table.warm(start) ^ table.warm(start + IndexTable::STRIDE);
        let loaded = starts
            .iter()
            .fold(0u32, |sum, &start| sum ^ warm(start as usize));
        std::hint::black_box(loaded);
    }

    /// The location indices to read samples with: `source`'s, or ours.
    pub(crate) fn indices<'s>(
        &'s self,
        (source, index): (&'s ExperimentalSource, usize),
    ) -> Indices<'s> {
        let table = source.index_table(index);
        Indices::Table(table.unwrap_or(IndexTable::decoded(&self.narrowed)))
    }

    /// Calls `sink` with each pprof location id of sample `s`, in order,
    /// its slices read from `indices`; the first miss when one is out of
    /// range (the ids around it are still given, but for the missed ones).
    #[inline]
    pub(crate) fn for_each_id(
        &self,
        s: &otlp::Sample,
        indices: Indices,
        mut sink: impl FnMut(u64),
    ) -> Result<(), StackMiss> {
        let mut miss = None;
        if s.locations_length == 0 {
            (s.location_index.iter()).for_each(|&p| self.give(p, &mut sink, &mut miss));
            return miss.map_or(Ok(()), Err);
        }
        let (start, end) = slice_of(s);
        if indices.len() == 0 {
            // The other reading: the slice addresses the location table.
            if end > self.location_ids.len() as u64 {
                return Err(StackMiss::SliceEnd(end));
            }
            let ids = &self.location_ids[start as usize..end as usize];
            ids.iter().for_each(|&id| sink(id));
            return Ok(());
        }
        let range = self.slice_range(s, indices)?;
        match indices {
            Indices::Model(v) => {
                (v[range].iter()).for_each(|&x| self.give(x as u64, &mut sink, &mut miss))
            }
            Indices::Table(t) => {
                // The closure is inlined: it runs for every entry of every stack.
                let (start, end) = (range.start, range.end);
                _ = t.read_each(
                    start,
                    end,
                    #[inline(always)]
                    |x| self.give(u64::from(x), &mut sink, &mut miss),
                );
            }
        }
        miss.map_or(Ok(()), Err)
    }

    /// Whether every entry of `indices` is a location's position, as in a
    /// conversion from pprof (the table's largest entry says so; a
    /// decoded one is read whole): then [`Self::check`] need not read the
    /// entries.
    pub(crate) fn all_located(&self, indices: Indices) -> bool {
        match indices {
            Indices::Table(t) => t
                .largest()
                .is_none_or(|l| (l as usize) < self.location_ids.len()),
            Indices::Model(_) => false,
        }
    }

    /// Checks that sample `s`'s stack resolves, as [`Self::for_each_id`]
    /// would find; without reading its slice's entries when they are
    /// `all_located` ([`Self::all_located`] of `indices`).
    pub(crate) fn check(
        &self,
        s: &otlp::Sample,
        (indices, all_located): (Indices, bool),
    ) -> Result<(), StackMiss> {
        match all_located && s.locations_length != 0 && indices.len() != 0 {
            true => self.slice_range(s, indices).map(drop),
            false => self.for_each_id(s, indices, drop),
        }
    }

    /// The positions of sample `s`'s slice of `indices` (not empty).
    fn slice_range(
        &self,
        s: &otlp::Sample,
        indices: Indices,
    ) -> Result<std::ops::Range<usize>, StackMiss> {
        let (start, end) = slice_of(s);
        usize::try_from(end)
            .ok()
            .filter(|&end| end <= indices.len())
            .map(|end| start as usize..end)
            .ok_or(StackMiss::Slice(start))
    }

    /// Gives `sink` the id of the location at `position`, or notes the
    /// first miss in `miss`.
    #[inline(always)]
    fn give(&self, position: u64, sink: &mut impl FnMut(u64), miss: &mut Option<StackMiss>) {
        let located = self.location_ids.len() as u64;
        if self.ids_follow_positions && position < located {
            return sink(position + 1);
        }
        match (usize::try_from(position).ok()).and_then(|p| self.location_ids.get(p)) {
            Some(&id) => sink(id),
            None => _ = miss.get_or_insert(StackMiss::Location(position)),
        }
    }
}

/// The start and end of sample `s`'s slice (the end saturating).
fn slice_of(s: &otlp::Sample) -> (u64, u64) {
    let start = s.locations_start_index;
    (start, start.saturating_add(s.locations_length))
}

/// Why a sample's stack does not resolve.
#[derive(Debug, Clone, Copy)]
pub(crate) enum StackMiss {
    /// A location position past the location table.
    Location(u64),
    /// A slice of the location table past its end.
    SliceEnd(u64),
    /// A slice of `location_indices` past its end: its start.
    Slice(u64),
}

/// Each attribute and link entry's labels, for the entries samples use,
/// and the keys of the labels a sample's link and timestamps make.
pub(crate) struct LabelTables {
    /// By attribute index: its label, `None` when no sample uses it or it
    /// makes none (an empty key).
    pub attributes: Vec<Option<pprof::Label>>,
    /// By link index, when the profile has a link table (then every sample
    /// carries its link's trace and span ids).
    pub links: Option<Vec<Option<[pprof::Label; 2]>>>,
    pub timestamp_key: i64,
    pub nanoseconds: i64,
}

impl LabelTables {
    /// Appends the labels of sample `s` to `out`: its deprecated labels,
    /// its attributes', its link's and its timestamps', in that order.
    fn write_labels(&self, s: &otlp::Sample, out: &mut Vec<pprof::Label>) {
        out.extend(s.label.iter().map(convert_label));
        for &a in &s.attributes {
            let label = usize::try_from(a)
                .ok()
                .and_then(|a| self.attributes.get(a))
                .and_then(Option::as_ref);
            out.extend(label.cloned());
        }
        if let Some(links) = &self.links {
            let labels = links.get(s.link as usize).and_then(Option::as_ref);
            out.extend(labels.into_iter().flatten().cloned());
        }
        out.extend(s.timestamps_unix_nano.iter().map(|&t| pprof::Label {
            key: self.timestamp_key,
            num: t as i64,
            num_unit: self.nanoseconds,
            ..Default::default()
        }));
    }
}

/// A deprecated `Sample.label` as pprof's label (the same fields).
pub(crate) fn convert_label(l: &otlp::Label) -> pprof::Label {
    pprof::Label {
        key: l.key,
        str: l.str,
        num: l.num,
        num_unit: l.num_unit,
        ..Default::default()
    }
}

/// One v1experimental container converted to a pprof profile but for its
/// samples, and how to convert those as they are read: [`Self::reading`]
/// gives them as a [`SampleSource`]. It borrows nothing, so the caller may
/// free the OTLP profile's tables once it is made (the codec view's
/// `shed_tables`). Made by [`crate::experimental_as_pprof`].
pub struct ExperimentalAsPprof {
    header: pprof::Profile,
    /// The container's position in the source.
    index: usize,
    stacks: StackTables,
    labels: LabelTables,
}

/// The samples of an [`ExperimentalAsPprof`], converted from the OTLP
/// samples as they are read.
pub struct ExperimentalPprofSamples<'a> {
    converted: &'a ExperimentalAsPprof,
    source: &'a ExperimentalSource<'a>,
}

/// Samples are read this many at a time ahead of their slices' loads
/// ([`StackTables::warm_slices`]).
const WARM_AHEAD: usize = 16;

thread_local! {
    /// What converting one sample reads into: one per thread, as the
    /// analyses read a source from several.
    static SCRATCH: RefCell<otlp::Sample> = RefCell::default();
}

impl ExperimentalAsPprof {
    pub(crate) fn new(
        header: pprof::Profile,
        index: usize,
        stacks: StackTables,
        labels: LabelTables,
    ) -> Self {
        ExperimentalAsPprof {
            header,
            index,
            stacks,
            labels,
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
    pub fn into_profile(self, source: &ExperimentalSource) -> pprof::Profile {
        let mut sample = Vec::new();
        self.reading(source).drain_into(&mut |s| sample.push(s));
        pprof::Profile {
            sample,
            ..self.header
        }
    }

    /// The samples, converted from `source` as they are read.
    ///
    /// `source` must hold the samples this was made from (the same view, or
    /// the same decoded message): it was checked against those, and an
    /// index out of range in another is read as no location or label.
    pub fn reading<'a>(
        &'a self,
        source: &'a ExperimentalSource<'a>,
    ) -> ExperimentalPprofSamples<'a> {
        ExperimentalPprofSamples {
            converted: self,
            source,
        }
    }
}

impl ExperimentalPprofSamples<'_> {
    /// Hands each sample to `sink`, in order.
    pub fn drain_into(&self, sink: &mut dyn FnMut(pprof::Sample)) {
        let mut buffer = pprof::Sample::new();
        for n in 0..self.sample_count() {
            self.fill(n, Fields::ALL, &mut buffer, None);
            sink(std::mem::take(&mut buffer));
        }
    }

    /// Converts sample `n` into `out`, at least `fields` of it; its
    /// location ids into `written`, when given, rather than into `out`
    /// (`false` when one is missed).
    fn fill(
        &self,
        n: usize,
        fields: Fields,
        out: &mut pprof::Sample,
        written: Option<&mut Vec<u8>>,
    ) -> bool {
        SCRATCH.with(|scratch| {
            let sample = &mut *scratch.borrow_mut();
            let converted = self.converted;
            let s = self.source.sample(converted.index, n, sample);
            out.value.clear();
            out.value.extend_from_slice(&s.value);
            out.location_id.clear();
            let located = match written {
                // Checked when made: a miss means another source.
                Some(bytes) => write_packed_with(bytes, sample_field::LOCATION_ID, |bytes| {
                    self.for_each_id(n, s, |id| write_varint(bytes, id))
                })
                .is_ok(),
                None if fields.contains(sample_field::LOCATION_ID) => {
                    let ids = &mut out.location_id;
                    self.for_each_id(n, s, |id| ids.push(id)).is_ok()
                }
                None => true,
            };
            out.label.clear();
            if fields.contains(sample_field::LABEL) {
                converted.labels.write_labels(s, &mut out.label);
            }
            located
        })
    }

    /// Calls `sink` with each pprof location id of sample `n`, which is
    /// `s`, warming the slices of the samples a little ahead.
    #[inline]
    fn for_each_id(
        &self,
        n: usize,
        s: &otlp::Sample,
        sink: impl FnMut(u64),
    ) -> Result<(), StackMiss> {
        let stacks = &self.converted.stacks;
        let indices = stacks.indices((self.source, self.converted.index));
        if n % WARM_AHEAD == 0 {
            stacks.warm_slices(indices, n + WARM_AHEAD..n + 2 * WARM_AHEAD);
        }
        stacks.for_each_id(s, indices, sink)
    }
}

impl SampleSource for ExperimentalPprofSamples<'_> {
    type Profile = pprof::Profile;
    type Sample = pprof::Sample;

    fn profile(&self) -> &pprof::Profile {
        &self.converted.header
    }

    fn sample_count(&self) -> usize {
        self.source.sample_count(self.converted.index)
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

    /// The location ids, written as they are found: each slice entry read
    /// from the table and its id written, with no vector between.
    fn sample_writing_field<'s>(
        &'s self,
        i: usize,
        (number, out): (u32, &mut Vec<u8>),
        fields: Fields,
        buffer: &'s mut pprof::Sample,
    ) -> Option<&'s pprof::Sample> {
        let start = out.len();
        let located = number == sample_field::LOCATION_ID;
        match located && self.fill(i, fields, buffer, Some(out)) {
            true => Some(buffer),
            false => {
                out.truncate(start);
                None
            }
        }
    }

    fn value_count(&self, i: usize) -> usize {
        SCRATCH.with(|scratch| {
            let sample = &mut *scratch.borrow_mut();
            (self.source.sample(self.converted.index, i, sample).value).len()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ids found from positions, when they follow them, are the ids the
    /// table holds; a position past the table is a miss either way.
    #[test]
    fn each_id_is_found_from_its_position() {
        let indices = [2i64, 0, 1, 2];
        let mut sample = otlp::Sample::new();
        (sample.locations_start_index, sample.locations_length) = (1, 3);
        let mut unsliced = otlp::Sample::new();
        unsliced.location_index = vec![2, 0];
        for (ids, follow) in [
            (vec![1, 2, 3], true),
            (vec![5, 9, 7], false),
            (vec![2, 3, 4], false),
        ] {
            let tables = StackTables {
                ids_follow_positions: (ids.iter().enumerate()).all(|(p, &id)| id == p as u64 + 1),
                location_ids: ids.clone(),
                narrowed: Vec::new(),
                slice_starts: Vec::new(),
            };
            assert_eq!(tables.ids_follow_positions, follow);
            let mut out = Vec::new();
            let model = Indices::Model(&indices);
            assert!(tables
                .for_each_id(&sample, model, |id| out.push(id))
                .is_ok());
            assert!(tables
                .for_each_id(&unsliced, model, |id| out.push(id))
                .is_ok());
            assert_eq!(out, [0, 1, 2, 2, 0].map(|p| ids[p]));
            let past = [3i64];
            let mut one = otlp::Sample::new();
            one.locations_length = 1;
            let miss = tables.for_each_id(&one, Indices::Model(&past), |id| out.push(id));
            assert!(matches!(miss, Err(StackMiss::Location(3))), "{ids:?}");
        }
    }
}
