//! Where v1development validation reads samples and stacks: the decoded
//! message, or a view that leaves them in the input bytes (the codec's
//! `DevelopmentView`). Both are walked the same way ([`walk_parts`]).

use protoprof_model_meta::{ProfileSetSamples, RefPath, ReferenceVisitor, TableSource};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development::{
    Profile, ProfilesDictionary, ResourceProfiles, Sample, Stack,
};
use protoprof_model_otlp::refs;

/// The samples of every profile (in message order) and the stack table.
pub trait DevelopmentParts:
    ProfileSetSamples<Sample = Sample> + TableSource<Entry = Stack>
{
}

impl<T: ProfileSetSamples<Sample = Sample> + TableSource<Entry = Stack>> DevelopmentParts for T {}

/// The parts of a decoded message.
pub(crate) struct ModelParts<'a> {
    profiles: Vec<&'a Profile>,
    stacks: &'a [Stack],
}

impl<'a> ModelParts<'a> {
    pub fn of(resource_profiles: &'a [ResourceProfiles], d: &'a ProfilesDictionary) -> Self {
        let profiles = resource_profiles
            .iter()
            .flat_map(|r| &r.scope_profiles)
            .flat_map(|s| &s.profiles)
            .collect();
        ModelParts {
            profiles,
            stacks: &d.stack_table,
        }
    }
}

impl ModelParts<'_> {
    /// The number of samples of every profile.
    pub fn total_samples(&self) -> usize {
        self.profiles.iter().map(|p| p.samples.len()).sum()
    }
}

impl ProfileSetSamples for ModelParts<'_> {
    type Sample = Sample;

    fn profile_count(&self) -> usize {
        self.profiles.len()
    }

    fn sample_count(&self, profile: usize) -> usize {
        self.profiles[profile].samples.len()
    }

    fn sample<'s>(&'s self, profile: usize, i: usize, _: &'s mut Sample) -> &'s Sample {
        &self.profiles[profile].samples[i]
    }
}

impl TableSource for ModelParts<'_> {
    type Entry = Stack;

    fn entry_count(&self) -> usize {
        self.stacks.len()
    }

    fn entry<'s>(&'s self, i: usize, _: &'s mut Stack) -> &'s Stack {
        &self.stacks[i]
    }
}

const PROFILE: &str = "opentelemetry.proto.profiles.v1development.Profile";
const DICTIONARY: &str = "opentelemetry.proto.profiles.v1development.ProfilesDictionary";

/// The walk over samples and stacks, reading them from `parts`, for
/// `references::ElementsFrom`: the walker's own walk over
/// `Profile.samples` and `ProfilesDictionary.stack_table` is replaced by
/// one over the parts, in the same order (profiles counted as reached).
pub(crate) fn walk_parts<'p, V: ReferenceVisitor>(
    parts: &'p dyn DevelopmentParts,
) -> impl FnMut(&mut V, &'static str, &'static str, &mut RefPath) -> bool + 'p {
    let mut profile = 0;
    move |inner, message, field, path| match (message, field) {
        (PROFILE, "samples") => {
            let mut buffer = Sample::new();
            for i in 0..parts.sample_count(profile) {
                path.push("samples", Some(i));
                let sample = parts.sample(profile, i, &mut buffer);
                refs::visit_opentelemetry_proto_profiles_v1development_sample(sample, path, inner);
                path.pop();
            }
            profile += 1;
            false
        }
        (DICTIONARY, "stack_table") => {
            let mut buffer = Stack::new();
            for i in 0..parts.entry_count() {
                path.push("stack_table", Some(i));
                let stack = parts.entry(i, &mut buffer);
                refs::visit_opentelemetry_proto_profiles_v1development_stack(stack, path, inner);
                path.pop();
            }
            false
        }
        _ => true,
    }
}
