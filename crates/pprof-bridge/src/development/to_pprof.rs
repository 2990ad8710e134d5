//! OTLP Profiles v1development (v1.10/v1.11) → one pprof profile, for data
//! that did not come from pprof: an eBPF profiler's export holds dozens of
//! resources and profiles of several sample types.
//!
//! - Every distinct (type, unit) of the profiles becomes one pprof sample
//!   type, in order of first appearance; a sample carries its value under
//!   its profile's type and 0 under the others, so `-sample_index` reaches
//!   each.
//! - A sample's value is the sum of its `values`, or, for timestamps alone,
//!   the number of timestamps (1 each, as the schema says). pprof has no
//!   per-event timestamps: they are dropped with a warning.
//! - Dictionary entry i (from 1; 0 is the zero value meaning "unset")
//!   becomes the mapping, location or function with id i.
//! - Sample attributes become labels (numbers with their unit), a link
//!   becomes `trace_id`/`span_id` labels. Resource, scope and profile
//!   attributes whose values differ between profiles become labels on every
//!   sample of their profile, so `-tagfocus` tells the profiles apart; those
//!   the whole message shares become comments (`key=value`).
//!
//! A message in the shape pprof -> v1development writes comes back as the
//! pprof profile it was (`pprof_shape.rs`). One small function per
//! kind of record, as in `to_pprof.rs`; what both paths convert alike is in
//! `tables.rs`.

use std::collections::BTreeMap;

use protoprof_model_otlp::opentelemetry::proto::common::v1::{InstrumentationScope, KeyValue};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development as dev;
use protoprof_model_pprof::perftools::profiles as pprof;

use crate::development::pprof_shape::{self, Shape};
use crate::development::samples::{DevelopmentAsPprof, Layout, Part, SampleTables};
pub use crate::development::source::{data_samples, DevelopmentSource};
use crate::development::tables::{entry, FromDevelopment, SampleAt};
use crate::development::used::UsedEntries;
use crate::error::{BridgeError, Converted};
use crate::names::semconv;

/// Converts every profile of `data` into one pprof profile (see the module
/// documentation for how).
pub fn development_to_pprof(
    data: &dev::ProfilesData,
) -> Result<Converted<pprof::Profile>, BridgeError> {
    let samples = data_samples(data);
    let converted = development_as_pprof(data, &samples)?;
    Ok(Converted {
        value: converted.value.into_profile(&samples),
        warnings: converted.warnings,
    })
}

/// [`development_to_pprof`] with the samples read from `samples` (the
/// profiles of `data` in message order: a codec view that keeps them in
/// the input bytes, say) and handed to `sink` one at a time, in order. The
/// profile returned has every field but its samples.
///
/// # Panics
/// When `samples` does not hold as many profiles as `data`.
pub fn development_to_pprof_with(
    data: &dev::ProfilesData,
    samples: &DevelopmentSource,
    sink: &mut dyn FnMut(pprof::Sample),
) -> Result<Converted<pprof::Profile>, BridgeError> {
    let converted = development_as_pprof(data, samples)?;
    converted.value.reading(samples).drain_into(sink);
    Ok(Converted {
        value: converted.value.into_header(),
        warnings: converted.warnings,
    })
}

/// The profiles of `data` as one pprof profile, as [`development_to_pprof`]
/// converts them, but for the samples: [`DevelopmentAsPprof::reading`]
/// converts those from `samples` as they are read, so analyses read them
/// as they read a pprof profile's, and nothing holds them converted.
/// Making it reads every sample once, to check the indices each holds.
///
/// # Panics
/// When `samples` does not hold as many profiles as `data`.
pub fn development_as_pprof(
    data: &dev::ProfilesData,
    samples: &DevelopmentSource,
) -> Result<Converted<DevelopmentAsPprof>, BridgeError> {
    let located = profiles_with_samples(data, samples);
    let mut cx = FromDevelopment::of(data, samples);
    let value = match pprof_shape::shape(data, samples) {
        Shape::Pprof(shape) => shape.restore(&mut cx, samples)?,
        Shape::Broken(why) => {
            cx.warn(
                "resource_profiles[0].scope_profiles[0].scope.attributes".into(),
                format!(
                    "{} is present but {why}: converted as OTLP from elsewhere",
                    semconv::SAMPLE_TYPE_ORDER
                ),
            );
            cx.convert(&located, samples)?
        }
        Shape::Other => cx.convert(&located, samples)?,
    };
    Ok(Converted {
        value,
        warnings: cx.warnings,
    })
}

/// The pprof profile `data` was made from, when it is in the shape
/// pprof -> v1development writes (one resource, one scope whose
/// `pprof.scope.sample_type_order` names one Profile per pprof sample
/// type, lining up sample by sample): one pprof profile, however many
/// sample types it has, with its comments as they were, without the
/// `otlp:` comments of its resource, scope and profile id, which the
/// caller keeps beside it (a profile store's resource attributes and
/// profile id). `None` for data of any other shape, which converts
/// profile by profile ([`development_to_pprof_each`]).
///
/// # Panics
/// When `samples` does not hold as many profiles as `data`.
pub fn development_to_sent_pprof(
    data: &dev::ProfilesData,
    samples: &DevelopmentSource,
) -> Result<Option<Converted<pprof::Profile>>, BridgeError> {
    // The shape is found once: finding it reads every sample.
    let Shape::Pprof(shape) = pprof_shape::shape(data, samples) else {
        return Ok(None);
    };
    let mut cx = FromDevelopment::of(data, samples);
    let mut profile = shape.restore(&mut cx, samples)?.into_profile(samples);
    crate::otlp_comments::drop_envelope(&mut profile);
    Ok(Some(Converted {
        value: profile,
        warnings: cx.warnings,
    }))
}

/// Converts each profile of `data` into a pprof profile of its own (its
/// resource, scope and profile attributes as comments), with the path of
/// the profile it came from: `protoprof convert --split`. Each holds the
/// mappings, locations and functions its samples reach, and the first
/// mapping (pprof's main binary), not the rest of the shared dictionary.
pub fn development_to_pprof_each(
    data: &dev::ProfilesData,
) -> Result<Vec<(String, Converted<pprof::Profile>)>, BridgeError> {
    development_to_pprof_each_with(data, &data_samples(data))
}

/// [`development_to_pprof_each`] with the samples read from `samples`
/// (a codec view that keeps them in the input bytes, say).
///
/// # Panics
/// When `samples` does not hold as many profiles as `data`.
pub fn development_to_pprof_each_with(
    data: &dev::ProfilesData,
    samples: &DevelopmentSource,
) -> Result<Vec<(String, Converted<pprof::Profile>)>, BridgeError> {
    let located = profiles_with_samples(data, samples);
    let mut out = Vec::with_capacity(located.len());
    for located in located {
        let mut cx = FromDevelopment::of(data, samples);
        cx.convert_only(UsedEntries::of(cx.d, samples, located.index));
        let converted = cx.convert(std::slice::from_ref(&located), samples)?;
        let converted = Converted {
            value: converted.into_profile(samples),
            warnings: cx.warnings,
        };
        out.push((located.path, converted));
    }
    Ok(out)
}

impl FromDevelopment<'_> {
    /// `profiles` as one pprof profile without its samples, one sample type
    /// per distinct type, and how to read its samples.
    pub(crate) fn convert(
        &mut self,
        profiles: &[Located],
        samples: &DevelopmentSource,
    ) -> Result<DevelopmentAsPprof, BridgeError> {
        let (types, columns) = self.sample_types(profiles);
        let context = self.context_labels(profiles);
        let mut out = pprof::Profile {
            mapping: self.mappings(),
            location: self.locations()?,
            function: self.functions(),
            ..Default::default()
        };
        let sample_count = profiles.iter().map(|p| samples.sample_count(p.index)).sum();
        let mut tables = SampleTables::for_dictionary(self, samples.entry_count(), sample_count);
        let mut parts = Vec::new();
        let mut first = 0;
        for (n, located) in profiles.iter().enumerate() {
            let count = samples.sample_count(located.index);
            if count == 0 {
                continue;
            }
            parts.push(Part {
                index: located.index,
                first,
                column: columns[n],
                context: Vec::new(),
            });
            let part = parts.last_mut().expect("pushed");
            self.note_samples(located, samples, &mut tables, part, &context.per_profile[n])?;
            first += count;
        }
        self.metadata(profiles, &mut out);
        out.sample_type = types
            .iter()
            .map(|(t, u)| pprof::ValueType {
                type_: self.strings.intern(t),
                unit: self.strings.intern(u),
                ..Default::default()
            })
            .collect();
        out.comment = context
            .shared
            .iter()
            .map(|c| self.strings.intern(c))
            .collect();
        out.string_table = std::mem::take(&mut self.strings.table);
        let layout = Layout::Concatenated {
            parts,
            width: types.len(),
        };
        Ok(DevelopmentAsPprof::new(out, layout, tables))
    }

    /// Every sample of `located` noted: its indices checked, the entries it
    /// is the first to use converted, timestamps warned about once, and
    /// after its first sample the profile's context labels.
    fn note_samples(
        &mut self,
        located: &Located,
        samples: &DevelopmentSource,
        tables: &mut SampleTables,
        part: &mut Part,
        context: &[(String, String)],
    ) -> Result<(), BridgeError> {
        let mut buffer = dev::Sample::new();
        for i in 0..samples.sample_count(located.index) {
            let s = samples.sample(located.index, i, &mut buffer);
            let at = SampleAt {
                profile: &located.path,
                sample: i,
            };
            if !s.timestamps_unix_nano.is_empty() && !self.warned_timestamps() {
                self.warn(
                    format!("{at}.timestamps_unix_nano"),
                    crate::error::TIMESTAMPS_DROPPED,
                );
            }
            tables.note(self, s, &at, false)?;
            if i == 0 {
                part.context = self.context_labels_of(context);
            }
        }
        Ok(())
    }

    /// The labels of a profile's context (keys and values interned).
    fn context_labels_of(&mut self, context: &[(String, String)]) -> Vec<pprof::Label> {
        context
            .iter()
            .map(|(key, text)| pprof::Label {
                key: self.strings.intern(key),
                str: self.strings.intern_label_value(text),
                ..Default::default()
            })
            .collect()
    }
}

/// A profile, where it is, and the resource and scope it sits in.
pub(crate) struct Located<'a> {
    /// The profile's position in message order.
    pub index: usize,
    pub path: String,
    pub profile: &'a dev::Profile,
    resource: &'a [KeyValue],
    scope: Option<&'a InstrumentationScope>,
}

/// Every profile of `data`, in message order, `samples` holding theirs.
///
/// # Panics
/// When `samples` does not hold as many profiles as `data`.
pub(crate) fn profiles_with_samples<'d>(
    data: &'d dev::ProfilesData,
    samples: &DevelopmentSource,
) -> Vec<Located<'d>> {
    let located = profiles_of(data);
    assert_eq!(
        located.len(),
        samples.profile_count(),
        "one sample list per profile"
    );
    located
}

/// Every profile, in message order.
fn profiles_of(data: &dev::ProfilesData) -> Vec<Located<'_>> {
    let mut out = Vec::new();
    for (i, rp) in data.resource_profiles.iter().enumerate() {
        for (j, sp) in rp.scope_profiles.iter().enumerate() {
            for (k, profile) in sp.profiles.iter().enumerate() {
                out.push(Located {
                    index: out.len(),
                    path: format!("resource_profiles[{i}].scope_profiles[{j}].profiles[{k}]"),
                    profile,
                    resource: rp.resource.as_ref().map_or(&[][..], |r| &r.attributes),
                    scope: sp.scope.as_ref(),
                });
            }
        }
    }
    out
}

/// Labels from the resource, scope and profile attributes: per profile
/// those that tell profiles apart, and what every profile shares.
struct ContextLabels {
    per_profile: Vec<Vec<(String, String)>>,
    shared: Vec<String>,
}

impl FromDevelopment<'_> {
    fn sample_types(&self, profiles: &[Located]) -> (Vec<(String, String)>, Vec<usize>) {
        let mut types: Vec<(String, String)> = Vec::new();
        let columns = profiles
            .iter()
            .map(|p| {
                let t = p.profile.sample_type.as_ref();
                let key = (
                    self.string(t.map_or(0, |t| t.type_strindex)).to_string(),
                    self.string(t.map_or(0, |t| t.unit_strindex)).to_string(),
                );
                types.iter().position(|k| *k == key).unwrap_or_else(|| {
                    types.push(key);
                    types.len() - 1
                })
            })
            .collect();
        (types, columns)
    }

    fn warned_timestamps(&self) -> bool {
        self.warnings
            .iter()
            .any(|w| w.path.ends_with(".timestamps_unix_nano"))
    }

    /// Resource, scope and profile attributes of each profile; keys whose
    /// value is not the same in every profile label that profile's samples.
    fn context_labels(&self, profiles: &[Located]) -> ContextLabels {
        let per_profile: Vec<BTreeMap<String, String>> =
            profiles.iter().map(|p| self.context_of(p)).collect();
        // Shared: every profile has the key with the first profile's value.
        let shared: BTreeMap<String, String> = per_profile
            .first()
            .into_iter()
            .flatten()
            .filter(|(key, value)| per_profile.iter().all(|c| c.get(*key) == Some(*value)))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        let per_profile = per_profile
            .into_iter()
            .map(|c| {
                c.into_iter()
                    .filter(|(key, _)| !shared.contains_key(key))
                    .collect()
            })
            .collect();
        let shared = shared
            .iter()
            .map(|(key, value)| format!("{key}={value}"))
            .collect();
        ContextLabels {
            per_profile,
            shared,
        }
    }

    pub(crate) fn context_of(&self, p: &Located) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        for kv in p
            .resource
            .iter()
            .chain(p.scope.map_or(&[][..], |s| &s.attributes))
        {
            let key = if kv.key.is_empty() {
                self.string(kv.key_strindex)
            } else {
                &kv.key
            };
            out.insert(key.to_string(), self.any_text(kv.value.as_ref()));
        }
        if let Some(scope) = p.scope.filter(|s| !s.name.is_empty()) {
            out.insert("otel.scope.name".into(), scope.name.clone());
        }
        for &index in &p.profile.attribute_indices {
            if let Some(a) = entry(&self.d.attribute_table, index) {
                out.insert(
                    self.string(a.key_strindex).to_string(),
                    self.any_text(a.value.as_ref()),
                );
            }
        }
        out
    }

    /// Time range, period and default sample type.
    pub(crate) fn metadata(&mut self, profiles: &[Located], out: &mut pprof::Profile) {
        let timed = profiles.iter().filter(|p| p.profile.time_unix_nano != 0);
        let start = timed.clone().map(|p| p.profile.time_unix_nano).min();
        let end = timed
            .map(|p| {
                p.profile
                    .time_unix_nano
                    .saturating_add(p.profile.duration_nano)
            })
            .max();
        if let (Some(start), Some(end)) = (start, end) {
            out.time_nanos = i64::try_from(start).unwrap_or(i64::MAX);
            out.duration_nanos = i64::try_from(end - start).unwrap_or(i64::MAX);
        }
        // An empty period type (both strings unset) says nothing.
        let period_type = |p: &&Located| {
            p.profile
                .period_type
                .as_ref()
                .is_some_and(|t| t.type_strindex != 0 || t.unit_strindex != 0)
        };
        if let Some(p) = profiles.iter().find(period_type) {
            let t = p.profile.period_type.as_ref().expect("found");
            out.period_type = protobuf::MessageField::some(pprof::ValueType {
                type_: self.intern(t.type_strindex),
                unit: self.intern(t.unit_strindex),
                ..Default::default()
            });
            out.period = p.profile.period;
        }
        if let Some(first) = profiles
            .first()
            .and_then(|p| p.profile.sample_type.as_ref())
        {
            out.default_sample_type = self.intern(first.type_strindex);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protoprof_model_meta::{Fields, SampleSource};
    use protoprof_model_pprof::fields::perftools::profiles::sample as sample_field;

    /// Three locations, two stacks, and samples on them: `samples` stack
    /// indices.
    fn profile_with_stacks(samples: &[i32]) -> dev::ProfilesData {
        let mut data = dev::ProfilesData::new();
        let d = data.dictionary.mut_or_insert_default();
        d.string_table = vec!["".into(), "cpu".into(), "nanoseconds".into()];
        d.mapping_table = vec![dev::Mapping::new()];
        d.location_table = vec![dev::Location::new(); 4];
        d.stack_table = vec![dev::Stack::new(), dev::Stack::new(), dev::Stack::new()];
        d.stack_table[1].location_indices = vec![3, 0, 1];
        d.stack_table[2].location_indices = vec![2];
        let mut profile = dev::Profile::new();
        let sample_type = profile.sample_type.mut_or_insert_default();
        (sample_type.type_strindex, sample_type.unit_strindex) = (1, 2);
        profile.samples = (samples.iter().enumerate())
            .map(|(i, &stack_index)| dev::Sample {
                stack_index,
                values: vec![i as i64 + 1],
                ..Default::default()
            })
            .collect();
        let mut scope = dev::ScopeProfiles::new();
        scope.profiles.push(profile);
        let mut resource = dev::ResourceProfiles::new();
        resource.scope_profiles.push(scope);
        data.resource_profiles.push(resource);
        data
    }

    #[test]
    fn shared_stacks_are_kept_as_ids_and_read_as_the_table_holds_them() {
        for (samples, kept) in [(&[1, 2, 1, 1, 1, 2][..], true), (&[1, 2][..], false)] {
            let data = profile_with_stacks(samples);
            let source = data_samples(&data);
            let converted = development_as_pprof(&data, &source).unwrap().value;
            assert_eq!(converted.keeps_stack_ids(), kept, "{samples:?}");
            let reading = converted.reading(&source);
            let mut buffer = pprof::Sample::new();
            for (i, &stack) in samples.iter().enumerate() {
                let want: &[u64] = if stack == 1 { &[3, 1] } else { &[2] };
                let only_stacks = Fields::only(&[sample_field::LOCATION_ID]);
                let read = reading.sample_fields(i, only_stacks, &mut buffer);
                assert_eq!(read.location_id, want, "{samples:?} sample {i}");
            }
            let whole = development_to_pprof(&data).unwrap().value;
            let stacks: Vec<_> = whole.sample.iter().map(|s| s.location_id.len()).collect();
            let want: Vec<_> = samples
                .iter()
                .map(|&s| if s == 1 { 2 } else { 1 })
                .collect();
            assert_eq!(stacks, want);
        }
    }

    #[test]
    fn a_stack_past_the_table_is_an_error_not_a_read() {
        let data = profile_with_stacks(&[1, 3]);
        let error = development_as_pprof(&data, &data_samples(&data))
            .err()
            .unwrap();
        assert!(
            error.to_string().contains("samples[1].stack_index"),
            "{error}"
        );
    }
}
