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
//! pprof profile it was (`development_pprof.rs`). One small function per
//! kind of record, as in `to_pprof.rs`; what both paths convert alike is in
//! `development_tables.rs`.

use std::collections::BTreeMap;

use protoprof_model_otlp::opentelemetry::proto::common::v1::{InstrumentationScope, KeyValue};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development as dev;
use protoprof_model_pprof::perftools::profiles as pprof;

use crate::development_pprof::{self, Shape};
pub use crate::development_source::{data_samples, DevelopmentSource};
use crate::development_tables::{entry, FromDevelopment, SampleAt};
use crate::error::{BridgeError, Converted};
use crate::names::semconv;

/// Converts every profile of `data` into one pprof profile (see the module
/// documentation for how).
pub fn development_to_pprof(
    data: &dev::ProfilesData,
) -> Result<Converted<pprof::Profile>, BridgeError> {
    let mut samples = Vec::new();
    let mut converted =
        development_to_pprof_with(data, &data_samples(data), &mut |s| samples.push(s))?;
    converted.value.sample = samples;
    Ok(converted)
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
    let located = profiles_of(data);
    assert_eq!(
        located.len(),
        samples.profile_count(),
        "one sample list per profile"
    );
    let mut cx = FromDevelopment::of(data, samples);
    match development_pprof::shape(data, samples) {
        Shape::Pprof(shape) => {
            let value = shape.restore(&mut cx, samples, sink)?;
            return Ok(Converted {
                value,
                warnings: cx.warnings,
            });
        }
        Shape::Broken(why) => cx.warn(
            "resource_profiles[0].scope_profiles[0].scope.attributes".into(),
            format!(
                "{} is present but {why}: converted as OTLP from elsewhere",
                semconv::SAMPLE_TYPE_ORDER
            ),
        ),
        Shape::Other => {}
    }
    let value = cx.convert(&located, samples, sink)?;
    Ok(Converted {
        value,
        warnings: cx.warnings,
    })
}

/// Converts each profile of `data` into a pprof profile of its own (its
/// resource, scope and profile attributes as comments), with the path of
/// the profile it came from: `protoprof convert --split`.
pub fn development_to_pprof_each(
    data: &dev::ProfilesData,
) -> Result<Vec<(String, Converted<pprof::Profile>)>, BridgeError> {
    let samples = data_samples(data);
    let mut out = Vec::new();
    for located in profiles_of(data) {
        let mut cx = FromDevelopment::of(data, &samples);
        let mut converted_samples = Vec::new();
        let mut value = cx.convert(std::slice::from_ref(&located), &samples, &mut |s| {
            converted_samples.push(s)
        })?;
        value.sample = converted_samples;
        let converted = Converted {
            value,
            warnings: cx.warnings,
        };
        out.push((located.path, converted));
    }
    Ok(out)
}

impl FromDevelopment<'_> {
    /// `profiles` as one pprof profile, one sample type per distinct type.
    fn convert(
        &mut self,
        profiles: &[Located],
        samples: &DevelopmentSource,
        sink: &mut dyn FnMut(pprof::Sample),
    ) -> Result<pprof::Profile, BridgeError> {
        let (types, columns) = self.sample_types(profiles);
        let context = self.context_labels(profiles);
        let mut out = pprof::Profile {
            mapping: self.mappings(),
            location: self.locations()?,
            function: self.functions(),
            ..Default::default()
        };
        let mut buffer = dev::Sample::new();
        for (n, located) in profiles.iter().enumerate() {
            for i in 0..samples.sample_count(located.index) {
                let sample = samples.sample(located.index, i, &mut buffer);
                let at = SampleAt {
                    profile: &located.path,
                    sample: i,
                };
                let shape = (columns[n], types.len());
                sink(self.sample(sample, &at, shape, &context.per_profile[n])?);
            }
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
        Ok(out)
    }
}

/// A profile, where it is, and the resource and scope it sits in.
struct Located<'a> {
    /// The profile's position in message order.
    index: usize,
    path: String,
    profile: &'a dev::Profile,
    resource: &'a [KeyValue],
    scope: Option<&'a InstrumentationScope>,
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

    /// One pprof sample: its stack, its value in its type's column, its
    /// labels.
    fn sample(
        &mut self,
        s: &dev::Sample,
        at: &SampleAt,
        (column, width): (usize, usize),
        context: &[(String, String)],
    ) -> Result<pprof::Sample, BridgeError> {
        let mut value = vec![0; width];
        value[column] = sample_value(s);
        if !s.timestamps_unix_nano.is_empty() && !self.warned_timestamps() {
            self.warn(
                format!("{at}.timestamps_unix_nano"),
                "pprof samples have no per-event timestamps: dropped (values summed, or counted 1 per timestamp)",
            );
        }
        let mut label = self.attribute_labels(&s.attribute_indices, at, false)?;
        self.link_labels(s.link_index, at, &mut label)?;
        for (key, text) in context {
            label.push(pprof::Label {
                key: self.strings.intern(key),
                str: self.strings.intern_label_value(text),
                ..Default::default()
            });
        }
        Ok(pprof::Sample {
            location_id: self.stack(s.stack_index, at)?,
            value,
            label,
            ..Default::default()
        })
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

    fn context_of(&self, p: &Located) -> BTreeMap<String, String> {
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
    fn metadata(&mut self, profiles: &[Located], out: &mut pprof::Profile) {
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

/// What a v1development sample measured, in its profile's unit: the sum of
/// its values, or, for timestamps alone, 1 per timestamp (as the schema
/// says).
pub fn sample_value(s: &dev::Sample) -> i64 {
    if s.values.is_empty() {
        s.timestamps_unix_nano.len() as i64
    } else {
        s.values.iter().fold(0i64, |sum, v| sum.saturating_add(*v))
    }
}
