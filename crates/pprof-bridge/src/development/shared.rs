//! v1development → one pprof profile per OTLP profile, all sharing one
//! dictionary: what [`crate::development_to_pprof_each`] gives, without a
//! string table and tables of its own for each profile. A profile store
//! takes an eBPF export's thousand profiles of a few samples each this
//! way: the dictionary is converted once, each sample once.

use protoprof_model_otlp::opentelemetry::proto::profiles::v1development as dev;
use protoprof_model_pprof::perftools::profiles as pprof;

use crate::development::samples::Part;
use crate::development::source::DevelopmentSource;
use crate::development::tables::FromDevelopment;
use crate::development::to_pprof::{profiles_with_samples, Located};
use crate::error::{BridgeError, Converted};

/// The profiles of a message as pprof, sharing one dictionary.
#[derive(Debug, Clone, Default)]
pub struct SharedDictionary {
    /// The mappings, locations and functions (dictionary entry i as id i)
    /// and the string table every profile's strings index.
    pub dictionary: pprof::Profile,
    /// Each profile, with its path in the message: its sample type,
    /// samples, times, period, and its resource, scope and profile
    /// attributes as comments (`key=value`), as
    /// [`crate::development_to_pprof_each`] converts it, its strings in
    /// the dictionary's table and no table of its own.
    pub profiles: Vec<(String, pprof::Profile)>,
}

/// Converts each profile of `data` (its samples read from `samples`) to
/// pprof, sharing one dictionary (see [`SharedDictionary`]).
///
/// # Panics
/// When `samples` does not hold as many profiles as `data`.
pub fn development_to_pprof_shared(
    data: &dev::ProfilesData,
    samples: &DevelopmentSource,
) -> Result<Converted<SharedDictionary>, BridgeError> {
    let located = profiles_with_samples(data, samples);
    let mut cx = FromDevelopment::of(data, samples);
    let mut profiles: Vec<(String, pprof::Profile)> = located
        .iter()
        .map(|l| (l.path.clone(), cx.header_of(l)))
        .collect();
    let together = cx.convert(&located, samples)?;
    let parts = together
        .parts()
        .expect("profiles converted one after another");
    for part in parts {
        let count = samples.sample_count(part.index);
        profiles[part.index].1.sample.reserve_exact(count);
    }
    let mut n = 0;
    together.reading(samples).drain_into(&mut |mut sample| {
        let part = Part::of_sample(parts, n);
        // The context labels come last; each profile has its context as
        // comments instead, as when it is converted alone.
        let own_labels = sample.label.len() - part.context.len();
        sample.label.truncate(own_labels);
        sample.value = vec![sample.value[part.column]];
        profiles[part.index].1.sample.push(sample);
        n += 1;
    });
    let header = together.into_header();
    let dictionary = pprof::Profile {
        mapping: header.mapping,
        location: header.location,
        function: header.function,
        string_table: header.string_table,
        ..Default::default()
    };
    Ok(Converted {
        value: SharedDictionary {
            dictionary,
            profiles,
        },
        warnings: cx.warnings,
    })
}

impl FromDevelopment<'_> {
    /// Profile `l` as converting it alone makes it, but for its
    /// dictionary and samples: its one sample type, times, period, and
    /// its context as comments.
    fn header_of(&mut self, l: &Located) -> pprof::Profile {
        let mut header = pprof::Profile::new();
        self.metadata(std::slice::from_ref(l), &mut header);
        let t = l.profile.sample_type.as_ref();
        let (type_, unit) = (
            self.string(t.map_or(0, |t| t.type_strindex)).to_string(),
            self.string(t.map_or(0, |t| t.unit_strindex)).to_string(),
        );
        header.sample_type = vec![pprof::ValueType {
            type_: self.strings.intern(&type_),
            unit: self.strings.intern(&unit),
            ..Default::default()
        }];
        let context = self.context_of(l);
        header.comment = context
            .iter()
            .map(|(key, value)| self.strings.intern(&format!("{key}={value}")))
            .collect();
        header
    }
}
