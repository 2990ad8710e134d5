//! Summaries of decoded messages, shared by `inspect` and `frames`.

use protobuf::reflect::{ReflectFieldRef, ReflectValueRef};
use protobuf::MessageDyn;
use protoprof_codec::otlp::revision::OtlpRevision;
use protoprof_codec::{Fields, SampleSource};
use protoprof_model_meta::{threads, StringTable};
use protoprof_model_otlp::opentelemetry::proto::common::v1::KeyValue;
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development::{
    ProfilesData as DevelopmentData, ProfilesDictionary,
};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental::{
    Profile as OtlpProfile, ProfileContainer as OtlpContainer, ProfilesData, Sample as OtlpSample,
    ValueType as OtlpValueType,
};
use protoprof_model_pprof::fields::perftools::profiles::sample;
use protoprof_model_pprof::perftools::profiles::ValueType as PprofValueType;
use protoprof_model_pprof::samples::ProfileSamples;
use protoprof_pprof_bridge::ExperimentalSource;
use serde::Serialize;

#[derive(Serialize)]
pub struct SampleTypeTotal {
    pub r#type: String,
    pub unit: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temporality: Option<String>,
    pub total: i128,
    pub default: bool,
}

#[derive(Serialize)]
pub struct ProfileSummary {
    pub sample_types: Vec<SampleTypeTotal>,
    pub samples: usize,
    pub locations: usize,
    pub functions: usize,
    pub mappings: usize,
    pub strings: usize,
    pub time: Option<String>,
    pub duration_nanos: i64,
    pub period: i64,
    pub period_type: Option<String>,
    pub label_keys: Vec<String>,
    pub comments: Vec<String>,
}

/// UTC time of UNIX nanoseconds, RFC 3339.
pub fn utc(nanos: i64) -> String {
    let secs = nanos.div_euclid(1_000_000_000);
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (year, month, day) = protoprof_analysis::report::civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// Builds a [`ProfileSummary`] from a `SampleSource` of either generated
/// `Profile` type. The pprof and OTLP pprof-extended messages share these
/// field names but are distinct Rust types; `$temporality` maps a sample type
/// to its temporality and `$label_keys` seeds the label keys (OTLP adds its
/// attribute table). Samples are read once, one at a time.
macro_rules! summarise_profile {
    ($source:expr, $temporality:expr, $label_keys:expr) => {{
        let source = $source;
        let p = source.profile();
        let s = |i| p.string(i).to_string();
        let mut totals = vec![0i128; p.sample_type.len()];
        let mut key_indices = std::collections::HashSet::new();
        let mut buffer = Default::default();
        for n in 0..source.sample_count() {
            let sample = source.sample_fields(
                n,
                Fields::only(&[sample::VALUE, sample::LABEL]),
                &mut buffer,
            );
            for (total, v) in totals.iter_mut().zip(&sample.value) {
                *total += i128::from(*v);
            }
            key_indices.extend(sample.label.iter().map(|l| l.key));
        }
        let temporality = $temporality;
        let default = s(p.default_sample_type);
        let last = p.sample_type.len().saturating_sub(1);
        let sample_types = p
            .sample_type
            .iter()
            .enumerate()
            .map(|(i, t)| SampleTypeTotal {
                r#type: s(t.type_),
                unit: s(t.unit),
                temporality: temporality(t),
                total: totals[i],
                default: if default.is_empty() {
                    i == last
                } else {
                    s(t.type_) == default
                },
            })
            .collect();
        let mut label_keys: Vec<String> = $label_keys;
        label_keys.extend(key_indices.into_iter().map(s));
        label_keys.sort();
        label_keys.dedup();
        ProfileSummary {
            sample_types,
            samples: source.sample_count(),
            locations: p.location.len(),
            functions: p.function.len(),
            mappings: p.mapping.len(),
            strings: p.string_table.len(),
            time: (p.time_nanos != 0).then(|| utc(p.time_nanos)),
            duration_nanos: p.duration_nanos,
            period: p.period,
            period_type: p
                .period_type
                .as_ref()
                .map(|t| format!("{}/{}", s(t.type_), s(t.unit))),
            label_keys,
            comments: p.comment.iter().map(|&c| s(c)).collect(),
        }
    }};
}

pub fn pprof<S: ProfileSamples>(source: &S) -> ProfileSummary {
    summarise_profile!(source, |_: &PprofValueType| None, Vec::new())
}

/// One container's profile, its samples read from a set of them (the
/// codec's view, or the decoded message), as a [`SampleSource`].
struct ContainerSamples<'a> {
    profile: &'a OtlpProfile,
    samples: &'a ExperimentalSource<'a>,
    index: usize,
}

impl SampleSource for ContainerSamples<'_> {
    type Profile = OtlpProfile;
    type Sample = OtlpSample;

    fn profile(&self) -> &OtlpProfile {
        self.profile
    }

    fn sample_count(&self) -> usize {
        self.samples.sample_count(self.index)
    }

    fn sample_fields<'s>(
        &'s self,
        i: usize,
        _: Fields,
        buffer: &'s mut OtlpSample,
    ) -> &'s OtlpSample {
        self.samples.sample(self.index, i, buffer)
    }

    fn value_count(&self, i: usize) -> usize {
        self.samples
            .sample(self.index, i, &mut OtlpSample::new())
            .value
            .len()
    }
}

fn otlp_profile(source: &ContainerSamples) -> ProfileSummary {
    let p = source.profile;
    let temporality = |t: &OtlpValueType| {
        let name = match t.aggregation_temporality.value() {
            1 => "delta",
            2 => "cumulative",
            _ => "unspecified",
        };
        Some(name.to_string())
    };
    let attribute_keys = p.attribute_table.iter().map(|kv| kv.key.clone()).collect();
    summarise_profile!(source, temporality, attribute_keys)
}

#[derive(Serialize)]
pub struct ContainerSummary {
    pub profile_id: String,
    pub start: String,
    pub end: String,
    pub attributes: Vec<String>,
    pub profile: Option<ProfileSummary>,
}

#[derive(Serialize)]
pub struct ScopeSummary {
    pub name: String,
    pub version: String,
    pub profiles: Vec<ContainerSummary>,
}

#[derive(Serialize)]
pub struct ResourceSummary {
    pub attributes: Vec<String>,
    pub scopes: Vec<ScopeSummary>,
}

pub fn attributes(list: &[KeyValue]) -> Vec<String> {
    list.iter()
        .map(|kv| format!("{}={}", kv.key, any_value(kv)))
        .collect()
}

fn any_value(kv: &KeyValue) -> String {
    any_value_text(kv.value.as_ref(), &[])
}

/// A value as human output shows it: strings quoted (a string index
/// resolved against `strings`), lists in brackets.
pub fn any_value_text(
    value: Option<&protoprof_model_otlp::opentelemetry::proto::common::v1::AnyValue>,
    strings: &[String],
) -> String {
    use protoprof_model_meta::StringTable;
    use protoprof_model_otlp::opentelemetry::proto::common::v1::any_value::Value;
    match value.and_then(|v| v.value.as_ref()) {
        Some(Value::StringValue(s)) => format!("{s:?}"),
        Some(Value::StringValueStrindex(i)) => format!("{:?}", strings.string(i64::from(*i))),
        Some(Value::IntValue(i)) => i.to_string(),
        Some(Value::BoolValue(b)) => b.to_string(),
        Some(Value::DoubleValue(d)) => d.to_string(),
        Some(Value::ArrayValue(a)) => {
            let items: Vec<String> = a
                .values
                .iter()
                .map(|v| any_value_text(Some(v), strings))
                .collect();
            format!("[{}]", items.join(", "))
        }
        Some(other) => format!("{other:?}"),
        None => "(none)".into(),
    }
}

/// `data`'s resources, scopes and containers, each container's samples
/// read from `samples` (one list per container, in message order).
pub fn otlp(data: &ProfilesData, samples: &ExperimentalSource) -> Vec<ResourceSummary> {
    let mut n = 0; // the container's position in message order
    let mut container = |c: &OtlpContainer| {
        let profile = c.profile.as_ref().map(|profile| {
            otlp_profile(&ContainerSamples {
                profile,
                samples,
                index: n,
            })
        });
        n += 1;
        ContainerSummary {
            profile_id: c.profile_id.iter().map(|b| format!("{b:02x}")).collect(),
            start: utc(c.start_time_unix_nano as i64),
            end: utc(c.end_time_unix_nano as i64),
            attributes: attributes(&c.attributes),
            profile,
        }
    };
    data.resource_profiles
        .iter()
        .map(|rp| ResourceSummary {
            attributes: rp
                .resource
                .as_ref()
                .map(|r| attributes(&r.attributes))
                .unwrap_or_default(),
            scopes: rp
                .scope_profiles
                .iter()
                .map(|sp| ScopeSummary {
                    name: sp
                        .scope
                        .as_ref()
                        .map(|s| s.name.clone())
                        .unwrap_or_default(),
                    version: sp
                        .scope
                        .as_ref()
                        .map(|s| s.version.clone())
                        .unwrap_or_default(),
                    profiles: sp.profiles.iter().map(&mut container).collect(),
                })
                .collect(),
        })
        .collect()
}

/// One line: a message's set scalar fields and the sizes of its lists.
pub fn fields(message: &dyn MessageDyn) -> String {
    let descriptor = message.descriptor_dyn();
    let mut parts = Vec::new();
    for field in descriptor.fields() {
        match field.get_reflect(message) {
            ReflectFieldRef::Optional(v) => match v.value() {
                Some(ReflectValueRef::Message(m)) => {
                    parts.push(format!("{}={{{}}}", field.name(), fields(&*m)))
                }
                Some(ReflectValueRef::String(s)) => parts.push(format!("{}={s:?}", field.name())),
                Some(ReflectValueRef::Bytes(b)) => {
                    parts.push(format!("{}=<{} bytes>", field.name(), b.len()))
                }
                Some(other) => parts.push(format!("{}={other}", field.name())),
                None => {}
            },
            ReflectFieldRef::Repeated(r) if !r.is_empty() => {
                parts.push(format!("{}=[{}]", field.name(), r.len()))
            }
            ReflectFieldRef::Map(m) if !m.is_empty() => {
                parts.push(format!("{}={{{} entries}}", field.name(), m.len()))
            }
            _ => {}
        }
    }
    parts.join(" ")
}

/// OTLP v1development: the revision, the shared dictionary's sizes, and
/// each profile in one line.
#[derive(Serialize)]
pub struct DevelopmentSummary {
    pub revision: &'static str,
    /// Read in an older revision and upgraded to the current one.
    pub upgraded: bool,
    pub dictionary: Vec<(&'static str, usize)>,
    pub resources: usize,
    /// Each resource's attributes, `key=value` (keys and values given by
    /// index resolved against the dictionary's strings).
    pub resource_attributes: Vec<Vec<String>>,
    pub profiles: Vec<DevelopmentProfile>,
}

#[derive(Serialize)]
pub struct DevelopmentProfile {
    pub resource: usize,
    pub scope: String,
    pub sample_type: String,
    pub samples: usize,
    pub total: i64,
    pub time: Option<String>,
    pub duration_nanos: u64,
}

/// What the samples of profile `n` (in message order) of `parts`
/// measured: the exact sum, or the nearest `i64` when it does not fit. Many
/// samples are summed in two halves on two threads.
fn development_total(parts: &protoprof_pprof_bridge::DevelopmentSource, n: usize) -> i64 {
    let count = parts.sample_count(n);
    let sum = |samples: std::ops::Range<usize>| {
        let mut buffer = Default::default();
        let value = |i| protoprof_pprof_bridge::sample_value(parts.sample(n, i, &mut buffer));
        samples.map(value).fold(0i128, |sum, v| sum + i128::from(v))
    };
    let apart = count >= PARALLEL_SAMPLES;
    let (first, second) = threads::both(apart, || sum(0..count / 2), || sum(count / 2..count));
    (first + second).clamp(i64::MIN.into(), i64::MAX.into()) as i64
}

/// Profiles with at least this many samples are summed on two threads.
const PARALLEL_SAMPLES: usize = threads::PARALLEL_ITEMS;

/// `read_as`: the revision the input was in when the codec upgraded it.
/// Samples and stacks are read from `parts` (the view, or the model).
pub fn development(
    data: &DevelopmentData,
    parts: &protoprof_pprof_bridge::DevelopmentSource,
    read_as: Option<&'static str>,
) -> DevelopmentSummary {
    let empty = Default::default();
    let d: &ProfilesDictionary = data.dictionary.as_ref().unwrap_or(&empty);
    let s = |i: i32| d.string(i64::from(i)).to_string();
    let mut profiles = Vec::new();
    let mut n = 0; // position in message order
    for (r, rp) in data.resource_profiles.iter().enumerate() {
        for sp in &rp.scope_profiles {
            let scope = sp
                .scope
                .as_ref()
                .map(|s| s.name.clone())
                .unwrap_or_default();
            for p in &sp.profiles {
                let t = p.sample_type.as_ref();
                profiles.push(DevelopmentProfile {
                    resource: r,
                    scope: scope.clone(),
                    sample_type: format!(
                        "{}/{}",
                        s(t.map_or(0, |t| t.type_strindex)),
                        s(t.map_or(0, |t| t.unit_strindex))
                    ),
                    samples: parts.sample_count(n),
                    total: development_total(parts, n),
                    time: (p.time_unix_nano != 0).then(|| utc(p.time_unix_nano as i64)),
                    duration_nanos: p.duration_nano,
                });
                n += 1;
            }
        }
    }
    DevelopmentSummary {
        revision: read_as.unwrap_or(OtlpRevision::V1_10.releases()),
        upgraded: read_as.is_some(),
        dictionary: vec![
            ("strings", d.string_table.len()),
            ("mappings", d.mapping_table.len()),
            ("locations", d.location_table.len()),
            ("functions", d.function_table.len()),
            ("stacks", parts.entry_count()),
            ("attributes", d.attribute_table.len()),
            ("links", d.link_table.len()),
        ],
        resources: data.resource_profiles.len(),
        resource_attributes: data
            .resource_profiles
            .iter()
            .map(|rp| {
                let list = rp.resource.as_ref().map_or(&[][..], |r| &r.attributes[..]);
                list.iter()
                    .map(|kv| {
                        let key = match kv.key.is_empty() {
                            true => d.string(i64::from(kv.key_strindex)),
                            false => &kv.key,
                        };
                        format!(
                            "{key}={}",
                            any_value_text(kv.value.as_ref(), &d.string_table)
                        )
                    })
                    .collect()
            })
            .collect(),
        profiles,
    }
}
