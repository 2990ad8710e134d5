//! Where v1development validation reads samples and stacks: the decoded
//! message, or a view that leaves them in the input bytes (the codec's
//! `DevelopmentView`). Both are walked the same way: the walker's own
//! walk over `Profile.samples` and `ProfilesDictionary.stack_table` is
//! replaced by one over the parts, one message at a time.

use protoprof_model_meta::{FieldRef, ProfileSetSamples, RefPath, ReferenceVisitor, TableSource};
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

/// A visitor whose walk over samples and stacks reads them from `parts`.
pub(crate) struct PartsWalker<'p, V> {
    pub inner: V,
    parts: &'p dyn DevelopmentParts,
    /// The next profile the walk reaches, in message order.
    profile: usize,
}

impl<'p, V> PartsWalker<'p, V> {
    pub fn new(inner: V, parts: &'p dyn DevelopmentParts) -> Self {
        PartsWalker {
            inner,
            parts,
            profile: 0,
        }
    }
}

const PROFILE: &str = "opentelemetry.proto.profiles.v1development.Profile";
const DICTIONARY: &str = "opentelemetry.proto.profiles.v1development.ProfilesDictionary";

impl<V: ReferenceVisitor> ReferenceVisitor for PartsWalker<'_, V> {
    #[inline]
    fn reference(
        &mut self,
        id: usize,
        r: &'static FieldRef,
        path: &RefPath,
        index: Option<usize>,
        value: i128,
    ) {
        self.inner.reference(id, r, path, index, value);
    }

    fn slice(&mut self, id: usize, r: &'static FieldRef, path: &RefPath, start: u64, len: u64) {
        self.inner.slice(id, r, path, start, len);
    }

    fn unknown_fields(
        &mut self,
        message: &'static str,
        path: &RefPath,
        fields: &protobuf::UnknownFields,
    ) {
        self.inner.unknown_fields(message, path, fields);
    }

    fn walk_elements(
        &mut self,
        message: &'static str,
        field: &'static str,
        path: &mut RefPath,
    ) -> bool {
        match (message, field) {
            (PROFILE, "samples") => {
                let profile = self.profile;
                self.profile += 1;
                let mut buffer = Sample::new();
                for i in 0..self.parts.sample_count(profile) {
                    path.push("samples", Some(i));
                    let sample = self.parts.sample(profile, i, &mut buffer);
                    refs::visit_opentelemetry_proto_profiles_v1development_sample(
                        sample,
                        path,
                        &mut self.inner,
                    );
                    path.pop();
                }
                false
            }
            (DICTIONARY, "stack_table") => {
                let mut buffer = Stack::new();
                for i in 0..self.parts.entry_count() {
                    path.push("stack_table", Some(i));
                    let stack = self.parts.entry(i, &mut buffer);
                    refs::visit_opentelemetry_proto_profiles_v1development_stack(
                        stack,
                        path,
                        &mut self.inner,
                    );
                    path.pop();
                }
                false
            }
            _ => self.inner.walk_elements(message, field, path),
        }
    }
}
