//! Where v1development validation reads samples and stacks: the decoded
//! message, or a view that leaves them in the input bytes (the codec's
//! `DevelopmentView`). Both are walked the same way ([`walk_parts`]).

use protoprof_model_meta::{DecodedProfileSet, ProfileSetAndTable, RefPath};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development::{
    ProfilesDictionary, ResourceProfiles, Sample, Stack,
};
use protoprof_model_otlp::refs;

use crate::references::ReferenceChecker;

/// The samples of every profile (in message order) and the stack table,
/// however they are held.
pub type DevelopmentParts<'a> = dyn ProfileSetAndTable<Sample = Sample, Entry = Stack> + 'a;

/// The parts of a decoded message (`ProfilesData` or an export request).
pub(crate) fn model_parts<'a>(
    resource_profiles: &'a [ResourceProfiles],
    d: &'a ProfilesDictionary,
) -> DecodedProfileSet<'a, Sample, Stack> {
    let profiles = resource_profiles
        .iter()
        .flat_map(|r| &r.scope_profiles)
        .flat_map(|s| &s.profiles)
        .map(|p| &p.samples[..])
        .collect();
    DecodedProfileSet::new(profiles, &d.stack_table)
}

const PROFILE: &str = "opentelemetry.proto.profiles.v1development.Profile";
const DICTIONARY: &str = "opentelemetry.proto.profiles.v1development.ProfilesDictionary";

/// The walk over samples and stacks, reading them from `parts`, for
/// `references::ElementsFrom`: the walker's own walk over
/// `Profile.samples` and `ProfilesDictionary.stack_table` is replaced by
/// one over the parts, in the same order (profiles counted as reached), on
/// two threads for large ones ([`ReferenceChecker::check_each_in_halves`]).
pub(crate) fn walk_parts<'p>(
    parts: &'p DevelopmentParts,
) -> impl FnMut(&mut ReferenceChecker, &'static str, &'static str, &mut RefPath) -> bool + 'p {
    let mut profile = 0;
    move |checker, message, field, path| match (message, field) {
        (PROFILE, "samples") => {
            let n = profile;
            let count = parts.sample_count(n);
            checker.check_each_in_halves(
                count,
                (field, path),
                Sample::new,
                |buffer, i, path, c| {
                    let sample = parts.sample(n, i, buffer);
                    refs::visit_opentelemetry_proto_profiles_v1development_sample(sample, path, c);
                },
            );
            profile += 1;
            false
        }
        (DICTIONARY, "stack_table") => {
            let count = parts.entry_count();
            checker.check_each_in_halves(count, (field, path), Stack::new, |buffer, i, path, c| {
                let stack = parts.entry(i, buffer);
                refs::visit_opentelemetry_proto_profiles_v1development_stack(stack, path, c);
            });
            false
        }
        _ => true,
    }
}
