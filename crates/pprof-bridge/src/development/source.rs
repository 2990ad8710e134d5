//! Where a v1development -> pprof conversion reads samples and stacks:
//! the decoded message, or a view that leaves them in the input bytes.

use protoprof_model_meta::{DecodedProfileSet, ProfileSetAndTable};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development as dev;

/// The samples of v1development profiles (in message order) and the
/// dictionary's stacks, however they are held: the decoded message
/// ([`data_samples`]), or the codec's `DevelopmentView`, which leaves them
/// in the input bytes.
pub type DevelopmentSource<'a> =
    dyn ProfileSetAndTable<Sample = dev::Sample, Entry = dev::Stack> + 'a;

/// The samples and stacks of a decoded message.
pub fn data_samples(data: &dev::ProfilesData) -> DecodedProfileSet<'_, dev::Sample, dev::Stack> {
    let profiles = data
        .resource_profiles
        .iter()
        .flat_map(|r| &r.scope_profiles)
        .flat_map(|s| &s.profiles)
        .map(|p| &p.samples[..])
        .collect();
    let stacks = data.dictionary.as_ref().map_or(&[][..], |d| &d.stack_table);
    DecodedProfileSet::new(profiles, stacks)
}
