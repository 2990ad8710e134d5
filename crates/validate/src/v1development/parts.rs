//! Where v1development validation reads samples and stacks: the decoded
//! message, or a view that leaves them in the input bytes (the codec's
//! `DevelopmentView`). Both are walked the same way ([`walk_parts`]).

use protoprof_model_meta::{DecodedProfileSet, ProfileSetAndTable, RefPath};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development::{
    ProfilesDictionary, ResourceProfiles, Sample, Stack,
};
use protoprof_model_otlp::refs;

use crate::references::ReferenceChecker;
use crate::report::Collector;

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
const STACK: &str = "opentelemetry.proto.profiles.v1development.Stack";
const LOCATION_INDICES: u32 =
    protoprof_model_otlp::fields::opentelemetry::proto::profiles::v1development::stack::LOCATION_INDICES;

/// The walk over samples and stacks for `references::ElementsFrom`: each
/// profile's samples were checked as they were read for their other rules,
/// and what that found, `found` (one collector per profile in message
/// order), is absorbed where the walker reaches the profile's
/// `Profile.samples`; the walker's own walk over
/// `ProfilesDictionary.stack_table` is replaced by one over `parts`, on
/// two threads for large ones ([`ReferenceChecker::check_each_in_halves`]),
/// or by a check of the range of their location indices when `parts` can
/// tell it ([`protoprof_model_meta::TableSource::sole_field_range`]).
pub(crate) fn walk_parts<'p>(
    parts: &'p DevelopmentParts,
    mut found: Vec<Option<Collector>>,
) -> impl FnMut(&mut ReferenceChecker, &'static str, &'static str, &mut RefPath) -> bool + 'p {
    let mut profile = 0;
    move |checker, message, field, path| match (message, field) {
        (PROFILE, "samples") => {
            if let Some(found) = found.get_mut(profile).and_then(Option::take) {
                checker.collector().absorb(found);
            }
            profile += 1;
            false
        }
        (DICTIONARY, "stack_table") => {
            // Stacks that hold nothing but location indices, each within
            // the location table, have nothing to report.
            let fit =
                |values| (checker.tables()).positions_fit((STACK, "location_indices"), values);
            if parts.sole_field_range(LOCATION_INDICES).is_some_and(fit) {
                return false;
            }
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
