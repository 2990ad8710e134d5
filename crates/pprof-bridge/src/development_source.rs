//! Where a v1development -> pprof conversion reads samples and stacks:
//! the decoded message, or a view that leaves them in the input bytes.

use protoprof_model_meta::{ProfileSetSamples, TableSource};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development as dev;

/// The samples of v1development profiles and the dictionary's stacks,
/// however they are held: the decoded message, or the codec's
/// `DevelopmentView`, which leaves them in the input bytes.
pub trait DevelopmentSource:
    ProfileSetSamples<Sample = dev::Sample> + TableSource<Entry = dev::Stack>
{
}

impl<S: ProfileSetSamples<Sample = dev::Sample> + TableSource<Entry = dev::Stack>> DevelopmentSource
    for S
{
}

/// The samples of a decoded message, profiles in message order, and its
/// stacks: the decoded message as a [`DevelopmentSource`].
pub struct DataSamples<'a> {
    profiles: Vec<&'a dev::Profile>,
    stacks: &'a [dev::Stack],
}

impl<'a> DataSamples<'a> {
    /// The profiles and stacks of `data`.
    pub fn of(data: &'a dev::ProfilesData) -> Self {
        let profiles = data
            .resource_profiles
            .iter()
            .flat_map(|r| &r.scope_profiles)
            .flat_map(|s| &s.profiles)
            .collect();
        let stacks = data.dictionary.as_ref().map_or(&[][..], |d| &d.stack_table);
        DataSamples { profiles, stacks }
    }
}

impl TableSource for DataSamples<'_> {
    type Entry = dev::Stack;

    fn entry_count(&self) -> usize {
        self.stacks.len()
    }

    fn entry<'s>(&'s self, i: usize, _: &'s mut dev::Stack) -> &'s dev::Stack {
        &self.stacks[i]
    }
}

impl ProfileSetSamples for DataSamples<'_> {
    type Sample = dev::Sample;

    fn profile_count(&self) -> usize {
        self.profiles.len()
    }

    fn sample_count(&self, profile: usize) -> usize {
        self.profiles[profile].samples.len()
    }

    fn sample<'s>(&'s self, profile: usize, i: usize, _: &'s mut dev::Sample) -> &'s dev::Sample {
        &self.profiles[profile].samples[i]
    }
}
