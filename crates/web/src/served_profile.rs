//! The profile the reports read: a decoded model, or a source that leaves
//! its samples in the input's bytes (the codec's view), so that a large
//! profile is served in little more memory than its bytes.

use protoprof_model_meta::{Fields, SampleSource};
use protoprof_model_pprof::perftools::profiles::{Profile, Sample};

/// A pprof profile read one sample at a time, shared by every request.
pub trait PprofSource: SampleSource<Profile = Profile, Sample = Sample> + Send + Sync {}

impl<T: SampleSource<Profile = Profile, Sample = Sample> + Send + Sync> PprofSource for T {}

/// The profile served: whatever source it is read from.
pub struct ServedProfile {
    source: Box<dyn PprofSource>,
}

impl ServedProfile {
    /// A profile read from `source` (the codec's `PprofView`, say).
    pub fn from_source(source: impl PprofSource + 'static) -> ServedProfile {
        ServedProfile {
            source: Box::new(source),
        }
    }

    /// Everything but the samples (a decoded profile's samples too; read
    /// samples through [`SampleSource`], never from here).
    pub fn header(&self) -> &Profile {
        self.source.profile()
    }

    /// The whole profile as a model, its samples decoded (for what changes
    /// samples, as label frames do).
    pub fn to_model(&self) -> Profile {
        let mut model = self.header().clone();
        if model.sample.len() != self.sample_count() {
            let mut buffer = Sample::default();
            model.sample = (0..self.sample_count())
                .map(|i| self.sample(i, &mut buffer).clone())
                .collect();
        }
        model
    }
}

impl From<Profile> for ServedProfile {
    fn from(profile: Profile) -> ServedProfile {
        ServedProfile::from_source(profile)
    }
}

impl SampleSource for ServedProfile {
    type Profile = Profile;
    type Sample = Sample;

    fn profile(&self) -> &Profile {
        self.source.profile()
    }

    fn sample_count(&self) -> usize {
        self.source.sample_count()
    }

    fn sample_fields<'s>(&'s self, i: usize, fields: Fields, buffer: &'s mut Sample) -> &'s Sample {
        self.source.sample_fields(i, fields, buffer)
    }

    fn value_count(&self, i: usize) -> usize {
        self.source.value_count(i)
    }

    fn field_run(&self, i: usize, number: u32) -> Option<&[u8]> {
        self.source.field_run(i, number)
    }

    fn sample_writing_field<'s>(
        &'s self,
        i: usize,
        field: (u32, &mut Vec<u8>),
        fields: Fields,
        buffer: &'s mut Sample,
    ) -> Option<&'s Sample> {
        self.source.sample_writing_field(i, field, fields, buffer)
    }

    fn field_range(&self, number: u32) -> Option<std::ops::RangeInclusive<u64>> {
        self.source.field_range(number)
    }

    fn common_value_count(&self) -> Option<usize> {
        self.source.common_value_count()
    }
}
