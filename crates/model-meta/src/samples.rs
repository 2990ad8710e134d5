//! Reading a profile's samples one at a time.
//!
//! A large profile is mostly samples, and building and freeing a model
//! object per sample is most of what decoding it costs. Layers that read
//! each sample once (validation, conversion, analysis) take a
//! [`SampleSource`] instead of a whole model: the decoded model itself
//! (generated in each model crate's `samples` module), or the codec's view that leaves samples in the input
//! bytes and decodes each into a reused buffer. The trait sits here, below
//! the codec and the layers beside it, so none of them depends on another.

/// A profile whose samples are read one at a time.
pub trait SampleSource: Sync {
    /// The profile message (for the codec's view: without its samples).
    type Profile;
    /// The sample message.
    type Sample: Default;

    /// Everything but the samples. Its own sample list may be empty: read
    /// samples through [`Self::sample`].
    fn profile(&self) -> &Self::Profile;

    /// The number of samples.
    fn sample_count(&self) -> usize;

    /// Sample `i` (below [`Self::sample_count`]), decoded into `buffer` when
    /// the source does not hold it decoded. `buffer` is reused across calls,
    /// so reading every sample need not allocate.
    fn sample<'s>(&'s self, i: usize, buffer: &'s mut Self::Sample) -> &'s Self::Sample {
        self.sample_fields(i, Fields::ALL, buffer)
    }

    /// Sample `i` with at least the fields in `fields`; a source that decodes
    /// may leave the others empty, and skip their bytes (a pass that needs
    /// only labels need not decode every stack).
    fn sample_fields<'s>(
        &'s self,
        i: usize,
        fields: Fields,
        buffer: &'s mut Self::Sample,
    ) -> &'s Self::Sample;

    /// The number of values of sample `i`, possibly without decoding it.
    fn value_count(&self, i: usize) -> usize;

    /// Sample `i`'s occurrences of field `number` as the input holds
    /// them, tags included, when the source keeps its samples encoded and
    /// no other field lies between them (empty when the field is absent).
    /// `None` otherwise, and always for a decoded message: then read the
    /// field with [`Self::sample_fields`]. Equal runs decode to equal
    /// fields, so a reader can compare or copy a field without decoding
    /// it.
    fn field_run(&self, i: usize, number: u32) -> Option<&[u8]> {
        let _ = (i, number);
        None
    }

    /// Sample `i` as [`Self::sample_fields`] gives it with `fields`, but
    /// for its packed repeated integer field `number`, which is written to
    /// `out` instead: tag and length included, as the model's field would
    /// be encoded (nothing when it is empty). For a converting source that
    /// makes the values one at a time, as OTLP stacks turned into pprof
    /// location ids, and writes them with no vector between, reading the
    /// sample once. `None`, and `out` left as it was, when the source
    /// cannot, and by default: then read the field with
    /// [`Self::sample_fields`]. [`Self::field_run`] is for a field the
    /// source holds as it is written; this is for one it makes.
    fn sample_writing_field<'s>(
        &'s self,
        i: usize,
        (number, out): (u32, &mut Vec<u8>),
        fields: Fields,
        buffer: &'s mut Self::Sample,
    ) -> Option<&'s Self::Sample> {
        let _ = (i, number, out, fields, buffer);
        None
    }

    /// A range holding every value of the integer field `number` in every
    /// sample, when the source knows one without reading the samples (the
    /// codec's view notes the pprof location ids while it checks the
    /// samples; an empty range when no sample has the field). `None`
    /// otherwise, and by default. A reader that would check each value
    /// against a table can check the range instead.
    fn field_range(&self, number: u32) -> Option<std::ops::RangeInclusive<u64>> {
        let _ = number;
        None
    }

    /// The number of values every sample has, when the source knows
    /// without reading the samples that they all have the same (the
    /// codec's view finds out as [`Self::field_range`]'s bounds); `None`
    /// otherwise, and by default.
    fn common_value_count(&self) -> Option<usize> {
        None
    }

    /// Calls `f` with each sample's index and the sample, in order.
    fn for_each_sample(&self, mut f: impl FnMut(usize, &Self::Sample))
    where
        Self: Sized,
    {
        let mut buffer = Self::Sample::default();
        for i in 0..self.sample_count() {
            f(i, self.sample(i, &mut buffer));
        }
    }
}

/// A set of field numbers (1 to 63) of the sample message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fields(u64);

impl Fields {
    /// Every field.
    pub const ALL: Fields = Fields(u64::MAX);

    /// The fields with these numbers.
    pub const fn only(numbers: &[u32]) -> Fields {
        let (mut bits, mut i) = (0u64, 0);
        while i < numbers.len() {
            assert!(numbers[i] >= 1 && numbers[i] < 64, "field numbers 1 to 63");
            bits |= 1 << numbers[i];
            i += 1;
        }
        Fields(bits)
    }

    /// Whether field `number` is in the set (numbers past 63 always are).
    #[inline]
    pub fn contains(self, number: u32) -> bool {
        number >= 64 || self.0 & (1 << number) != 0
    }
}

/// The samples of several profiles, read one at a time: the profiles of an
/// OTLP message, numbered in message order (resource, then scope, then
/// profile). The decoded message holds them all; the codec's OTLP views
/// leave them in the input bytes and decode each into a reused buffer.
pub trait ProfileSetSamples: Sync {
    /// The sample message.
    type Sample: Default;

    /// The number of profiles.
    fn profile_count(&self) -> usize;

    /// The number of samples of profile `profile` (below
    /// [`Self::profile_count`]).
    fn sample_count(&self, profile: usize) -> usize;

    /// Sample `i` of profile `profile`, decoded into `buffer` when the source
    /// does not hold it decoded.
    fn sample<'s>(
        &'s self,
        profile: usize,
        i: usize,
        buffer: &'s mut Self::Sample,
    ) -> &'s Self::Sample;

    /// Profile `profile`'s table of indices when the source holds it apart
    /// from the profile's message: v1experimental's `location_indices`,
    /// most of a message of distinct stacks, which the codec's view keeps
    /// in the input's packed run (or in 32 bits, when samples read each
    /// entry often) when every entry fits 32 bits. `None` when the
    /// profile's message holds the table (the default).
    fn index_table(&self, profile: usize) -> Option<crate::IndexTable<'_>> {
        let _ = profile;
        None
    }
}

/// A table of messages read one at a time: OTLP v1development's stack
/// table, which for profiles of distinct stacks is most of the message.
pub trait TableSource: Sync {
    /// The entry message.
    type Entry: Default;

    /// The number of entries.
    fn entry_count(&self) -> usize;

    /// Entry `i` (below [`Self::entry_count`]), decoded into `buffer` when
    /// the source does not hold it decoded.
    fn entry<'s>(&'s self, i: usize, buffer: &'s mut Self::Entry) -> &'s Self::Entry;

    /// When no entry holds a field but `number`, a repeated integer field,
    /// a range holding each of its values (empty when no entry has one):
    /// a reader that would check every value against a table, and would
    /// find nothing else in the entries, can check the range instead. The
    /// codec's view finds it reading the entries' bytes without decoding
    /// messages (at each call); `None` when it cannot say, and by default.
    fn sole_field_range(&self, number: u32) -> Option<std::ops::RangeInclusive<u64>> {
        let _ = number;
        None
    }

    /// Entry `i` as the input holds it, when the source keeps its entries
    /// encoded and entry `i` holds nothing but field `number`, a repeated
    /// integer field, as varints of at most 4 bytes (one per occurrence or
    /// packed runs: values below 2^28). A reader that would re-encode the
    /// values as such a field of its own, under the same number, can copy
    /// the bytes instead. `None` otherwise, and by default.
    fn entry_of_sole_field(&self, i: usize, number: u32) -> Option<&[u8]> {
        let _ = (i, number);
        None
    }
}

/// Both sources at once: what reading OTLP v1development takes (its
/// profiles' samples and its stack table), as one trait object
/// (`dyn ProfileSetAndTable<Sample = …, Entry = …>`).
pub trait ProfileSetAndTable: ProfileSetSamples + TableSource {}

impl<T: ProfileSetSamples + TableSource> ProfileSetAndTable for T {}

/// Decoded profiles' samples and a decoded table, as a
/// [`ProfileSetAndTable`]: the decoded message's side of what a view
/// reads from the input bytes.
#[derive(Debug, Clone)]
pub struct DecodedProfileSet<'a, S, E> {
    profiles: Vec<&'a [S]>,
    table: &'a [E],
}

impl<'a, S, E> DecodedProfileSet<'a, S, E> {
    /// Each profile's samples, in message order, and the table.
    pub fn new(profiles: Vec<&'a [S]>, table: &'a [E]) -> Self {
        DecodedProfileSet { profiles, table }
    }

    /// The number of samples of every profile.
    pub fn total_samples(&self) -> usize {
        self.profiles.iter().map(|p| p.len()).sum()
    }
}

impl<S: Default + Sync, E: Sync> ProfileSetSamples for DecodedProfileSet<'_, S, E> {
    type Sample = S;

    fn profile_count(&self) -> usize {
        self.profiles.len()
    }

    fn sample_count(&self, profile: usize) -> usize {
        self.profiles[profile].len()
    }

    fn sample<'s>(&'s self, profile: usize, i: usize, _: &'s mut S) -> &'s S {
        &self.profiles[profile][i]
    }
}

impl<S: Sync, E: Default + Sync> TableSource for DecodedProfileSet<'_, S, E> {
    type Entry = E;

    fn entry_count(&self) -> usize {
        self.table.len()
    }

    fn entry<'s>(&'s self, i: usize, _: &'s mut E) -> &'s E {
        &self.table[i]
    }
}
