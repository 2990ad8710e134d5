//! Semantic equality: what the bridge's round trips preserve.
//!
//! Two pprof profiles are equal when they have the same sample types,
//! period type and period, times, comments (bridge metadata, the `otlp:`
//! comments, aside), drop/keep frames, default sample type and doc URL, and
//! the same multiset of samples, each compared as its resolved stack (per
//! frame: address, folded flag, mapping file/build id/range/offset/flags,
//! and per line: function name, system name, file, start line, line,
//! column), its values, and its labels (key, string or number with unit).
//! Ids, table order and string-table layout do not matter.
//!
//! Two OTLP `ProfilesData` are equal when their containers, in order, have
//! the same envelope (resource, scope, schema URLs, dropped counts), id,
//! times, attributes, payload, and profiles equal in the same sense, where a
//! sample's attributes and deprecated labels count alike, and links and
//! timestamps are compared too.

use std::collections::BTreeMap;

use protoprof_model_otlp::opentelemetry::proto::common::v1::{any_value::Value, KeyValue};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental as otlp;
use protoprof_model_pprof::perftools::profiles as pprof;

use crate::names::NO_MAPPING_ATTRIBUTE;
use crate::otlp_comments;
use protoprof_model_meta::StringTable;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum LabelValue {
    Str(String),
    Num(i64, String),
    Other(String),
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Frame {
    address: u64,
    is_folded: bool,
    mapping: Option<(String, String, u64, u64, u64, [bool; 4])>,
    /// (function name, system name, file, start line, line, column) per line.
    lines: Vec<(String, String, String, i64, i64, i64)>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct CanonSample {
    stack: Vec<Frame>,
    values: Vec<i64>,
    labels: Vec<(String, LabelValue)>,
    link: Option<(Vec<u8>, Vec<u8>)>,
    timestamps: Vec<u64>,
}

/// Everything of a profile the equality looks at, resolved to values.
#[derive(Debug, PartialEq, Eq)]
struct CanonProfile {
    header: BTreeMap<&'static str, String>,
    samples: Vec<CanonSample>,
}

/// The first difference between two profiles, as text (`time_nanos: ... vs ...`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Difference(pub String);

impl std::ops::Deref for Difference {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl From<String> for Difference {
    fn from(text: String) -> Self {
        Difference(text)
    }
}

/// `Ok` when `a` and `b` are semantically equal pprof profiles, else the first
/// difference found.
pub fn pprof_equal(a: &pprof::Profile, b: &pprof::Profile) -> Result<(), Difference> {
    compare(&canon_pprof(a), &canon_pprof(b))
}

/// `Ok` when `a` and `b` are semantically equal OTLP data, else the first
/// difference found.
pub fn otlp_equal(a: &otlp::ProfilesData, b: &otlp::ProfilesData) -> Result<(), Difference> {
    let (ca, cb) = (canon_otlp(a), canon_otlp(b));
    if ca.len() != cb.len() {
        return Err(Difference(format!("{} profiles vs {}", ca.len(), cb.len())));
    }
    for (i, ((ea, pa), (eb, pb))) in ca.iter().zip(&cb).enumerate() {
        if ea != eb {
            let key = ea
                .keys()
                .chain(eb.keys())
                .find(|k| ea.get(*k) != eb.get(*k))
                .unwrap();
            return Err(Difference(format!(
                "profile {i}: {key}: {:?} vs {:?}",
                ea.get(key),
                eb.get(key)
            )));
        }
        compare(pa, pb).map_err(|e| Difference(format!("profile {i}: {e}")))?;
    }
    Ok(())
}

fn compare(a: &CanonProfile, b: &CanonProfile) -> Result<(), Difference> {
    if a.header != b.header {
        let key = a
            .header
            .keys()
            .chain(b.header.keys())
            .find(|k| a.header.get(*k) != b.header.get(*k))
            .unwrap();
        return Err(Difference(format!(
            "{key}: {:?} vs {:?}",
            a.header.get(key),
            b.header.get(key)
        )));
    }
    if a.samples.len() != b.samples.len() {
        return Err(Difference(format!(
            "{} samples vs {}",
            a.samples.len(),
            b.samples.len()
        )));
    }
    if let Some((x, y)) = a.samples.iter().zip(&b.samples).find(|(x, y)| x != y) {
        return Err(Difference(format!("samples differ:\n  {x:?}\n  {y:?}")));
    }
    Ok(())
}

fn text(strings: &[String], i: i64) -> String {
    strings.string(i).to_string()
}

/// A mapping as compared: the same fields of either generated `Mapping` type.
macro_rules! canon_mapping {
    ($m:expr, $s:expr) => {{
        let (m, s) = ($m, &$s);
        (
            s(m.filename),
            s(m.build_id),
            m.memory_start,
            m.memory_limit,
            m.file_offset,
            [
                m.has_functions,
                m.has_filenames,
                m.has_line_numbers,
                m.has_inline_frames,
            ],
        )
    }};
}

/// A line as compared: its function's (name, system name, file, start
/// line), or empty ones when the function is missing, then line and column.
/// Either generated `Function` type.
macro_rules! canon_line {
    ($f:expr, $line:expr, $s:expr) => {{
        let (f, line, s) = ($f, $line, &$s);
        (
            f.map(|f| s(f.name)).unwrap_or_default(),
            f.map(|f| s(f.system_name)).unwrap_or_default(),
            f.map(|f| s(f.filename)).unwrap_or_default(),
            f.map_or(0, |f| f.start_line),
            line.line,
            line.column,
        )
    }};
}

/// Header fields the pprof and OTLP pprof-extended `Profile` types both
/// carry under the same names (distinct Rust types, hence a macro).
macro_rules! insert_shared_header {
    ($header:expr, $p:expr, $s:expr) => {{
        let (header, p, s) = (&mut $header, $p, &$s);
        header.insert("period", p.period.to_string());
        header.insert("time_nanos", p.time_nanos.to_string());
        header.insert("duration_nanos", p.duration_nanos.to_string());
        header.insert(
            "comments",
            format!("{:?}", comments(&p.string_table, &p.comment)),
        );
        header.insert("drop_frames", s(p.drop_frames));
        header.insert("keep_frames", s(p.keep_frames));
        header.insert("default_sample_type", s(p.default_sample_type));
    }};
}

fn canon_pprof(p: &pprof::Profile) -> CanonProfile {
    let s = |i: i64| text(&p.string_table, i);
    let mut header = BTreeMap::new();
    header.insert(
        "sample_type",
        format!(
            "{:?}",
            p.sample_type
                .iter()
                .map(|t| (s(t.type_), s(t.unit)))
                .collect::<Vec<_>>()
        ),
    );
    header.insert(
        "period_type",
        format!(
            "{:?}",
            p.period_type.as_ref().map(|t| (s(t.type_), s(t.unit)))
        ),
    );
    insert_shared_header!(header, p, s);
    header.insert("doc_url", s(p.doc_url));
    let mappings: BTreeMap<u64, &pprof::Mapping> = p.mapping.iter().map(|m| (m.id, m)).collect();
    let functions: BTreeMap<u64, &pprof::Function> = p.function.iter().map(|f| (f.id, f)).collect();
    let frames: BTreeMap<u64, Frame> = p
        .location
        .iter()
        .map(|l| {
            let mapping = mappings.get(&l.mapping_id).map(|m| canon_mapping!(m, s));
            let lines = l
                .line
                .iter()
                .map(|line| canon_line!(functions.get(&line.function_id), line, s))
                .collect();
            (
                l.id,
                Frame {
                    address: l.address,
                    is_folded: l.is_folded,
                    mapping,
                    lines,
                },
            )
        })
        .collect();
    let mut samples: Vec<CanonSample> = p
        .sample
        .iter()
        .map(|sample| {
            let mut labels: Vec<(String, LabelValue)> = sample
                .label
                .iter()
                .map(|l| {
                    (
                        s(l.key),
                        if l.str != 0 {
                            LabelValue::Str(s(l.str))
                        } else {
                            LabelValue::Num(l.num, s(l.num_unit))
                        },
                    )
                })
                .collect();
            labels.sort();
            CanonSample {
                stack: sample
                    .location_id
                    .iter()
                    .map(|id| {
                        frames
                            .get(id)
                            .cloned()
                            .unwrap_or_else(|| missing_frame(*id))
                    })
                    .collect(),
                values: sample.value.clone(),
                labels,
                link: None,
                timestamps: Vec::new(),
            }
        })
        .collect();
    samples.sort();
    CanonProfile { header, samples }
}

fn missing_frame(id: u64) -> Frame {
    Frame {
        address: u64::MAX,
        is_folded: false,
        mapping: None,
        lines: vec![(
            format!("<missing location {id}>"),
            String::new(),
            String::new(),
            0,
            0,
            0,
        )],
    }
}

/// Comment strings, bridge metadata (`otlp:`) left out.
fn comments(strings: &[String], comment: &[i64]) -> Vec<String> {
    comment
        .iter()
        .map(|&c| text(strings, c))
        .filter(|c| otlp_comments::read(c).is_none())
        .collect()
}

fn attribute_value(kv: &KeyValue, unit: Option<&String>) -> LabelValue {
    match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
        Some(Value::StringValue(s)) => LabelValue::Str(s.clone()),
        Some(Value::IntValue(i)) => LabelValue::Num(*i, unit.cloned().unwrap_or_default()),
        other => LabelValue::Other(format!("{other:?}")),
    }
}

fn sorted_attributes(list: &[KeyValue]) -> String {
    let mut items: Vec<String> = list
        .iter()
        .map(|kv| format!("{}={:?}", kv.key, attribute_value(kv, None)))
        .collect();
    items.sort();
    format!("{items:?}")
}

type Envelope = BTreeMap<&'static str, String>;

fn canon_otlp(data: &otlp::ProfilesData) -> Vec<(Envelope, CanonProfile)> {
    let mut out = Vec::new();
    for rp in &data.resource_profiles {
        for sp in &rp.scope_profiles {
            for c in &sp.profiles {
                let mut e = Envelope::new();
                let resource = rp.resource.as_ref();
                e.insert(
                    "resource.attributes",
                    resource
                        .map(|r| sorted_attributes(&r.attributes))
                        .unwrap_or_default(),
                );
                e.insert(
                    "resource.dropped",
                    resource
                        .map_or(0, |r| r.dropped_attributes_count)
                        .to_string(),
                );
                e.insert("resource.schema_url", rp.schema_url.clone());
                let scope = sp.scope.as_ref();
                e.insert(
                    "scope",
                    scope
                        .map(|s| {
                            format!(
                                "{} {} {}",
                                s.name,
                                s.version,
                                sorted_attributes(&s.attributes)
                            )
                        })
                        .unwrap_or_default(),
                );
                e.insert(
                    "scope.dropped",
                    scope.map_or(0, |s| s.dropped_attributes_count).to_string(),
                );
                e.insert("scope.schema_url", sp.schema_url.clone());
                e.insert("profile_id", otlp_comments::hex(&c.profile_id));
                e.insert("start", c.start_time_unix_nano.to_string());
                e.insert("end", c.end_time_unix_nano.to_string());
                e.insert("attributes", sorted_attributes(&c.attributes));
                e.insert("dropped", c.dropped_attributes_count.to_string());
                e.insert(
                    "original_payload",
                    format!(
                        "{} {}",
                        c.original_payload_format,
                        otlp_comments::hex(&c.original_payload)
                    ),
                );
                let profile = c
                    .profile
                    .as_ref()
                    .map(canon_otlp_profile)
                    .unwrap_or(CanonProfile {
                        header: BTreeMap::new(),
                        samples: Vec::new(),
                    });
                out.push((e, profile));
            }
        }
    }
    out
}

fn canon_otlp_profile(p: &otlp::Profile) -> CanonProfile {
    let s = |i: i64| text(&p.string_table, i);
    let value_type =
        |t: &otlp::ValueType| (s(t.type_), s(t.unit), t.aggregation_temporality.value());
    let mut header = BTreeMap::new();
    header.insert(
        "sample_type",
        format!(
            "{:?}",
            p.sample_type.iter().map(value_type).collect::<Vec<_>>()
        ),
    );
    header.insert(
        "period_type",
        format!("{:?}", p.period_type.as_ref().map(value_type)),
    );
    insert_shared_header!(header, p, s);
    let units: BTreeMap<String, String> = p
        .attribute_units
        .iter()
        .map(|u| (s(u.attribute_key), s(u.unit)))
        .collect();
    let mut samples: Vec<CanonSample> = p
        .sample
        .iter()
        .map(|sample| CanonSample {
            stack: otlp_stack_positions(p, sample)
                .into_iter()
                .map(|pos| otlp_frame(p, pos))
                .collect(),
            values: sample.value.clone(),
            labels: otlp_labels(p, sample, &units),
            link: p
                .link_table
                .get(sample.link as usize)
                .map(|l| (l.trace_id.clone(), l.span_id.clone())),
            timestamps: {
                let mut timestamps = sample.timestamps_unix_nano.clone();
                timestamps.sort_unstable();
                timestamps
            },
        })
        .collect();
    samples.sort();
    CanonProfile { header, samples }
}

/// A sample's stack as positions in `Profile.location` (`u64::MAX` where a
/// slice reaches past `location_indices`).
fn otlp_stack_positions(p: &otlp::Profile, sample: &otlp::Sample) -> Vec<u64> {
    if sample.locations_length == 0 {
        return sample.location_index.clone();
    }
    let start = sample.locations_start_index;
    let range = start..start.saturating_add(sample.locations_length);
    // Lengths come from input: one past the table is enough to show a
    // broken slice (as a missing frame).
    if p.location_indices.is_empty() {
        return range.take(p.location.len() + 1).collect();
    }
    range
        .take(p.location_indices.len() + 1)
        .map(|i| {
            p.location_indices
                .get(i as usize)
                .map_or(u64::MAX, |&x| x as u64)
        })
        .collect()
}

/// The location at `pos`, resolved.
fn otlp_frame(p: &otlp::Profile, pos: u64) -> Frame {
    let s = |i: i64| text(&p.string_table, i);
    let Some(l) = p.location.get(pos as usize) else {
        return missing_frame(pos);
    };
    let placeholder = |m: &otlp::Mapping| {
        m.attributes.iter().any(|&a| {
            p.attribute_table
                .get(a as usize)
                .is_some_and(|kv| kv.key == NO_MAPPING_ATTRIBUTE)
        })
    };
    let mapping = match p.mapping.get(l.mapping_index as usize) {
        Some(m) if !placeholder(m) => Some(canon_mapping!(m, s)),
        _ => None,
    };
    let lines = l
        .line
        .iter()
        .map(|line| canon_line!(p.function.get(line.function_index as usize), line, s))
        .collect();
    Frame {
        address: l.address,
        is_folded: l.is_folded,
        mapping,
        lines,
    }
}

/// A sample's deprecated labels and attributes alike, sorted.
fn otlp_labels(
    p: &otlp::Profile,
    sample: &otlp::Sample,
    units: &BTreeMap<String, String>,
) -> Vec<(String, LabelValue)> {
    let s = |i: i64| text(&p.string_table, i);
    let mut labels: Vec<(String, LabelValue)> = sample
        .label
        .iter()
        .map(|l| {
            let value = match l.str {
                0 => LabelValue::Num(l.num, s(l.num_unit)),
                str => LabelValue::Str(s(str)),
            };
            (s(l.key), value)
        })
        .chain(
            sample
                .attributes
                .iter()
                .filter_map(|&a| p.attribute_table.get(a as usize))
                .map(|kv| (kv.key.clone(), attribute_value(kv, units.get(&kv.key)))),
        )
        .collect();
    labels.sort();
    labels
}
