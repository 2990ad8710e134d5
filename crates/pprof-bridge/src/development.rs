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
//! One small function per kind of record, as in `to_pprof.rs`.

use std::collections::BTreeMap;

use protoprof_model_meta::StringTable;
use protoprof_model_otlp::opentelemetry::proto::common::v1::{
    any_value, AnyValue, InstrumentationScope, KeyValue,
};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development as dev;
use protoprof_model_pprof::perftools::profiles as pprof;

use crate::error::{unresolved, BridgeError, BridgeWarning, Converted};
use crate::interner::StringInterner;
use crate::otlp_comments;

/// Converts every profile of `data` into one pprof profile (see the module
/// documentation for how).
pub fn development_to_pprof(
    data: &dev::ProfilesData,
) -> Result<Converted<pprof::Profile>, BridgeError> {
    let empty = dev::ProfilesDictionary::default();
    let mut cx = FromDevelopment {
        d: data.dictionary.as_ref().unwrap_or(&empty),
        strings: StringInterner::new(vec![String::new()]),
        warnings: Vec::new(),
    };
    let profiles = profiles_of(data);
    let (types, columns) = cx.sample_types(&profiles);
    let context = cx.context_labels(&profiles);
    let mut out = pprof::Profile {
        mapping: cx.mappings(),
        location: cx.locations()?,
        function: cx.functions(),
        ..Default::default()
    };
    for (n, located) in profiles.iter().enumerate() {
        for (i, sample) in located.profile.samples.iter().enumerate() {
            let at = format!("{}.samples[{i}]", located.path);
            let shape = (columns[n], types.len());
            out.sample
                .push(cx.sample(sample, &at, shape, &context.per_profile[n])?);
        }
    }
    cx.metadata(&profiles, &mut out);
    out.sample_type = types
        .iter()
        .map(|(t, u)| pprof::ValueType {
            type_: cx.strings.intern(t),
            unit: cx.strings.intern(u),
            ..Default::default()
        })
        .collect();
    out.comment = context
        .shared
        .iter()
        .map(|c| cx.strings.intern(c))
        .collect();
    out.string_table = std::mem::take(&mut cx.strings.table);
    Ok(Converted {
        value: out,
        warnings: cx.warnings,
    })
}

/// A profile, where it is, and the resource and scope it sits in.
struct Located<'a> {
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

struct FromDevelopment<'d> {
    d: &'d dev::ProfilesDictionary,
    strings: StringInterner,
    warnings: Vec<BridgeWarning>,
}

impl FromDevelopment<'_> {
    /// The dictionary string at `index` ("" when out of range: validation
    /// reports that; conversion does not stop for a missing name).
    fn string(&self, index: i32) -> &str {
        self.d.string(i64::from(index))
    }

    fn intern(&mut self, index: i32) -> i64 {
        let s = self.string(index).to_string();
        self.strings.intern(&s)
    }

    fn warn(&mut self, path: String, message: impl Into<String>) {
        self.warnings.push(BridgeWarning {
            path,
            message: message.into(),
        });
    }

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

    fn mappings(&mut self) -> Vec<pprof::Mapping> {
        let d = self.d;
        (1..d.mapping_table.len())
            .map(|i| {
                let m = &d.mapping_table[i];
                let mut mapping = pprof::Mapping {
                    id: i as u64,
                    memory_start: m.memory_start,
                    memory_limit: m.memory_limit,
                    file_offset: m.file_offset,
                    filename: self.intern(m.filename_strindex),
                    ..Default::default()
                };
                self.mapping_attributes(&m.attribute_indices, &mut mapping);
                mapping
            })
            .collect()
    }

    /// Build ids (OpenTelemetry's `process.executable.build_id.*`) and
    /// pprof's `has_*` flags (`pprof.mapping.*`).
    fn mapping_attributes(&mut self, indices: &[i32], mapping: &mut pprof::Mapping) {
        for &index in indices {
            let Some(a) = entry(&self.d.attribute_table, index) else {
                continue;
            };
            let key = self.string(a.key_strindex).to_string();
            let value = a.value.as_ref();
            let flag = matches!(
                value.and_then(|v| v.value.as_ref()),
                Some(any_value::Value::BoolValue(true))
            );
            match key.as_str() {
                "pprof.mapping.has_functions" => mapping.has_functions = flag,
                "pprof.mapping.has_filenames" => mapping.has_filenames = flag,
                "pprof.mapping.has_line_numbers" => mapping.has_line_numbers = flag,
                "pprof.mapping.has_inline_frames" => mapping.has_inline_frames = flag,
                k if k.starts_with("process.executable.build_id") && mapping.build_id == 0 => {
                    let text = self.any_text(value);
                    mapping.build_id = self.strings.intern(&text);
                }
                _ => {}
            }
        }
    }

    fn locations(&mut self) -> Result<Vec<pprof::Location>, BridgeError> {
        let d = self.d;
        let mut out = Vec::with_capacity(d.location_table.len().saturating_sub(1));
        for (i, l) in d.location_table.iter().enumerate().skip(1) {
            let at = || format!("dictionary.location_table[{i}]");
            let mapping_id = table_id(l.mapping_index, d.mapping_table.len()).ok_or_else(|| {
                unresolved(at() + ".mapping_index", "mapping", l.mapping_index as u64)
            })?;
            let mut line = Vec::with_capacity(l.lines.len());
            for (j, x) in l.lines.iter().enumerate() {
                // A pprof line names its function (id 0 is invalid there):
                // a line whose function is unset carries nothing pprof keeps.
                if x.function_index == 0 {
                    if !self
                        .warnings
                        .iter()
                        .any(|w| w.message.starts_with(NO_FUNCTION))
                    {
                        self.warn(format!("{}.lines[{j}]", at()), NO_FUNCTION);
                    }
                    continue;
                }
                let function_id =
                    table_id(x.function_index, d.function_table.len()).ok_or_else(|| {
                        unresolved(
                            format!("{}.lines[{j}].function_index", at()),
                            "function",
                            x.function_index as u64,
                        )
                    })?;
                line.push(pprof::Line {
                    function_id,
                    line: x.line,
                    column: x.column,
                    ..Default::default()
                });
            }
            let is_folded = l
                .attribute_indices
                .iter()
                .any(|&a| self.attribute_key(a) == "pprof.location.is_folded");
            out.push(pprof::Location {
                id: i as u64,
                mapping_id,
                address: l.address,
                line,
                is_folded,
                ..Default::default()
            });
        }
        Ok(out)
    }

    fn attribute_key(&self, index: i32) -> &str {
        entry(&self.d.attribute_table, index).map_or("", |a| self.string(a.key_strindex))
    }

    fn functions(&mut self) -> Vec<pprof::Function> {
        let d = self.d;
        (1..d.function_table.len())
            .map(|i| {
                let f = &d.function_table[i];
                pprof::Function {
                    id: i as u64,
                    name: self.intern(f.name_strindex),
                    system_name: self.intern(f.system_name_strindex),
                    filename: self.intern(f.filename_strindex),
                    start_line: f.start_line,
                    ..Default::default()
                }
            })
            .collect()
    }

    /// One pprof sample: its stack, its value in its type's column, its
    /// labels.
    fn sample(
        &mut self,
        s: &dev::Sample,
        at: &str,
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
        let mut label = self.attribute_labels(&s.attribute_indices, at)?;
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

    /// The location ids of stack `index`, leaf first as in pprof.
    fn stack(&self, index: i32, at: &str) -> Result<Vec<u64>, BridgeError> {
        let stack = entry(&self.d.stack_table, index)
            .ok_or_else(|| unresolved(format!("{at}.stack_index"), "stack", index as u64))?;
        let locations = self.d.location_table.len();
        stack
            .location_indices
            .iter()
            .enumerate()
            .filter(|(_, &l)| l != 0)
            .map(|(k, &l)| {
                table_id(l, locations).ok_or_else(|| {
                    unresolved(
                        format!("dictionary.stack_table[{index}].location_indices[{k}]"),
                        "location",
                        l as u64,
                    )
                })
            })
            .collect()
    }

    fn attribute_labels(
        &mut self,
        indices: &[i32],
        at: &str,
    ) -> Result<Vec<pprof::Label>, BridgeError> {
        let d = self.d;
        let mut labels = Vec::with_capacity(indices.len());
        for (k, &index) in indices.iter().enumerate() {
            let a = entry(&d.attribute_table, index).ok_or_else(|| {
                unresolved(
                    format!("{at}.attribute_indices[{k}]"),
                    "attribute",
                    index as u64,
                )
            })?;
            let key = self.intern(a.key_strindex);
            let label = match a.value.as_ref().and_then(|v| v.value.as_ref()) {
                Some(any_value::Value::IntValue(n)) => pprof::Label {
                    key,
                    num: *n,
                    num_unit: if a.unit_strindex == 0 {
                        0
                    } else {
                        self.intern(a.unit_strindex)
                    },
                    ..Default::default()
                },
                _ => {
                    let text = self.any_text(a.value.as_ref());
                    pprof::Label {
                        key,
                        str: self.strings.intern_label_value(&text),
                        ..Default::default()
                    }
                }
            };
            labels.push(label);
        }
        Ok(labels)
    }

    /// `trace_id` and `span_id` labels (lowercase hex), as pprof producers
    /// write them, for a sample's link.
    fn link_labels(
        &mut self,
        index: i32,
        at: &str,
        labels: &mut Vec<pprof::Label>,
    ) -> Result<(), BridgeError> {
        if index == 0 {
            return Ok(());
        }
        let link = entry(&self.d.link_table, index)
            .ok_or_else(|| unresolved(format!("{at}.link_index"), "link", index as u64))?;
        for (key, bytes) in [("trace_id", &link.trace_id), ("span_id", &link.span_id)] {
            let text = otlp_comments::hex(bytes);
            labels.push(pprof::Label {
                key: self.strings.intern(key),
                str: self.strings.intern_label_value(&text),
                ..Default::default()
            });
        }
        Ok(())
    }

    /// A value as label text: strings as they are (indices resolved),
    /// numbers and booleans as written, bytes in hex, lists in brackets.
    fn any_text(&self, value: Option<&AnyValue>) -> String {
        match value.and_then(|v| v.value.as_ref()) {
            None => String::new(),
            Some(any_value::Value::StringValue(s)) => s.clone(),
            Some(any_value::Value::StringValueStrindex(i)) => self.string(*i).to_string(),
            Some(any_value::Value::BoolValue(b)) => b.to_string(),
            Some(any_value::Value::IntValue(n)) => n.to_string(),
            Some(any_value::Value::DoubleValue(x)) => x.to_string(),
            Some(any_value::Value::BytesValue(b)) => otlp_comments::hex(b),
            Some(any_value::Value::ArrayValue(a)) => {
                let items: Vec<String> = a.values.iter().map(|v| self.any_text(Some(v))).collect();
                format!("[{}]", items.join(","))
            }
            Some(any_value::Value::KvlistValue(l)) => {
                let items: Vec<String> = l
                    .values
                    .iter()
                    .map(|kv| format!("{}={}", kv.key, self.any_text(kv.value.as_ref())))
                    .collect();
                format!("{{{}}}", items.join(","))
            }
            // The oneof is non-exhaustive: a value kind added later.
            Some(other) => format!("{other:?}"),
        }
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

/// The warning for lines whose function is unset (reported once).
const NO_FUNCTION: &str =
    "lines without a function (function_index 0) dropped: a pprof line must name its function";

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

/// Entry `index` of a dictionary table (`None` when negative or past the end).
fn entry<T>(table: &[T], index: i32) -> Option<&T> {
    usize::try_from(index).ok().and_then(|i| table.get(i))
}

/// A dictionary index as a pprof id: 0 stays 0 ("none"), others must be in
/// the table.
fn table_id(index: i32, len: usize) -> Option<u64> {
    match usize::try_from(index) {
        Ok(0) => Some(0),
        Ok(i) if i < len => Some(i as u64),
        _ => None,
    }
}
