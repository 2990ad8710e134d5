//! OTLP Profiles v1experimental -> pprof. See docs/pprof-bridge.md.

use std::collections::{HashMap, HashSet};

use protobuf::MessageField;
use protoprof_model_otlp::opentelemetry::proto::common::v1::{
    any_value::Value, InstrumentationScope, KeyValue,
};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental as otlp;
use protoprof_model_otlp::opentelemetry::proto::resource::v1::Resource;
use protoprof_model_pprof::perftools::profiles as pprof;

use crate::envelope;
use crate::error::{BridgeError, BridgeWarning, Converted};
use crate::temporality;
use crate::to_otlp::{
    DOC_URL_ATTRIBUTE, NO_MAPPING_ATTRIBUTE, SPAN_ID_LABEL, TIMESTAMP_LABEL, TRACE_ID_LABEL,
};

/// One pprof profile per ProfileContainer, in order.
pub fn otlp_to_pprof(
    data: &otlp::ProfilesData,
) -> Result<Converted<Vec<pprof::Profile>>, BridgeError> {
    let mut profiles = Vec::new();
    let mut warnings = Vec::new();
    for (i, rp) in data.resource_profiles.iter().enumerate() {
        for (j, sp) in rp.scope_profiles.iter().enumerate() {
            for (k, container) in sp.profiles.iter().enumerate() {
                let context = Context {
                    path: format!("resource_profiles[{i}].scope_profiles[{j}].profiles[{k}]"),
                    resource: rp.resource.as_ref(),
                    resource_schema_url: &rp.schema_url,
                    scope: sp.scope.as_ref(),
                    scope_schema_url: &sp.schema_url,
                };
                let converted = container_to_pprof(container, &context)?;
                profiles.push(converted.value);
                warnings.extend(converted.warnings);
            }
        }
    }
    Ok(Converted {
        value: profiles,
        warnings,
    })
}

/// Where a container sits: its envelope, kept as `otlp:` comments.
#[derive(Default)]
pub struct Context<'a> {
    pub path: String,
    pub resource: Option<&'a Resource>,
    pub resource_schema_url: &'a str,
    pub scope: Option<&'a InstrumentationScope>,
    pub scope_schema_url: &'a str,
}

/// The string table, growing as attribute keys and values need entries.
struct Strings {
    table: Vec<String>,
    index: HashMap<String, i64>,
}

impl Strings {
    fn new(table: Vec<String>) -> Self {
        let mut index = HashMap::with_capacity(table.len());
        for (i, s) in table.iter().enumerate() {
            index.entry(s.clone()).or_insert(i as i64);
        }
        Strings { table, index }
    }

    fn get(&self, i: i64) -> &str {
        usize::try_from(i)
            .ok()
            .and_then(|i| self.table.get(i))
            .map_or("", String::as_str)
    }

    fn intern(&mut self, s: &str) -> i64 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        self.table.push(s.to_string());
        let i = self.table.len() as i64 - 1;
        self.index.insert(s.to_string(), i);
        i
    }
}

/// Ids for a table: the deprecated ids when all are set and unique,
/// positions + 1 otherwise.
fn ids(deprecated: impl Iterator<Item = u64> + Clone) -> Vec<u64> {
    let kept: Vec<u64> = deprecated.clone().collect();
    let unique = kept.iter().copied().collect::<HashSet<u64>>().len() == kept.len();
    if !kept.is_empty() && unique && kept.iter().all(|&id| id != 0) {
        kept
    } else {
        (1..=kept.len() as u64).collect()
    }
}

fn is_no_mapping(m: &otlp::Mapping, attributes: &[KeyValue]) -> bool {
    m.attributes.iter().any(|&a| {
        attributes
            .get(a as usize)
            .is_some_and(|kv| kv.key == NO_MAPPING_ATTRIBUTE)
    })
}

fn out_of_range(path: String, what: &'static str, value: u64) -> BridgeError {
    BridgeError::Unresolved {
        path,
        what,
        value: i128::from(value),
    }
}

/// Converts one container into one pprof profile.
pub fn container_to_pprof(
    container: &otlp::ProfileContainer,
    context: &Context,
) -> Result<Converted<pprof::Profile>, BridgeError> {
    let path = &context.path;
    let p = container
        .profile
        .as_ref()
        .ok_or_else(|| BridgeError::MissingProfile { path: path.clone() })?;
    let mut warnings = Vec::new();
    let warn = |warnings: &mut Vec<BridgeWarning>, at: String, message: String| {
        warnings.push(BridgeWarning { path: at, message })
    };
    let mut strings = Strings::new(p.string_table.clone());

    // Mappings, without the placeholder that stands for "no mapping".
    let placeholder = p
        .mapping
        .iter()
        .position(|m| is_no_mapping(m, &p.attribute_table));
    let real: Vec<(usize, &otlp::Mapping)> = p
        .mapping
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != placeholder)
        .collect();
    let mapping_ids = ids(real.iter().map(|(_, m)| m.id));
    let mut mapping_id_at: HashMap<usize, u64> = HashMap::new();
    let mut mappings = Vec::with_capacity(real.len());
    for ((i, m), id) in real.iter().zip(&mapping_ids) {
        mapping_id_at.insert(*i, *id);
        if !m.attributes.is_empty() {
            warn(
                &mut warnings,
                format!("{path}.profile.mapping[{i}].attributes"),
                "pprof mappings have no attributes; dropped".into(),
            );
        }
        mappings.push(pprof::Mapping {
            id: *id,
            memory_start: m.memory_start,
            memory_limit: m.memory_limit,
            file_offset: m.file_offset,
            filename: m.filename,
            build_id: m.build_id,
            has_functions: m.has_functions,
            has_filenames: m.has_filenames,
            has_line_numbers: m.has_line_numbers,
            has_inline_frames: m.has_inline_frames,
            ..Default::default()
        });
    }
    let function_ids = ids(p.function.iter().map(|f| f.id));
    let functions = p
        .function
        .iter()
        .zip(&function_ids)
        .map(|(f, &id)| pprof::Function {
            id,
            name: f.name,
            system_name: f.system_name,
            filename: f.filename,
            start_line: f.start_line,
            ..Default::default()
        })
        .collect();
    let location_ids = ids(p.location.iter().map(|l| l.id));
    let mut locations = Vec::with_capacity(p.location.len());
    for (i, (l, &id)) in p.location.iter().zip(&location_ids).enumerate() {
        let at = |field: &str| format!("{path}.profile.location[{i}].{field}");
        let mapping_id = if p.mapping.is_empty() || Some(l.mapping_index as usize) == placeholder {
            0
        } else {
            *mapping_id_at
                .get(&(l.mapping_index as usize))
                .ok_or_else(|| out_of_range(at("mapping_index"), "mapping", l.mapping_index))?
        };
        let mut lines = Vec::with_capacity(l.line.len());
        for (j, line) in l.line.iter().enumerate() {
            let function_id = *function_ids
                .get(line.function_index as usize)
                .ok_or_else(|| {
                    out_of_range(
                        at(&format!("line[{j}].function_index")),
                        "function",
                        line.function_index,
                    )
                })?;
            lines.push(pprof::Line {
                function_id,
                line: line.line,
                column: line.column,
                ..Default::default()
            });
        }
        if l.type_index != 0 {
            warn(
                &mut warnings,
                at("type_index"),
                format!(
                    "pprof has no frame type; {:?} dropped",
                    strings.get(i64::from(l.type_index))
                ),
            );
        }
        if !l.attributes.is_empty() {
            warn(
                &mut warnings,
                at("attributes"),
                "pprof locations have no attributes; dropped".into(),
            );
        }
        locations.push(pprof::Location {
            id,
            mapping_id,
            address: l.address,
            line: lines,
            is_folded: l.is_folded,
            ..Default::default()
        });
    }

    let units: HashMap<String, i64> = p
        .attribute_units
        .iter()
        .map(|u| (strings.get(u.attribute_key).to_string(), u.unit))
        .collect();
    let nanoseconds = strings.intern("nanoseconds");
    let (trace_key, span_key, timestamp_key) = (
        strings.intern(TRACE_ID_LABEL),
        strings.intern(SPAN_ID_LABEL),
        strings.intern(TIMESTAMP_LABEL),
    );
    let mut attribute_labels: HashMap<u64, pprof::Label> = HashMap::new();
    let mut warned_kinds: HashSet<&'static str> = HashSet::new();
    let mut samples = Vec::with_capacity(p.sample.len());
    for (i, s) in p.sample.iter().enumerate() {
        let at = |field: &str| format!("{path}.profile.sample[{i}].{field}");
        let positions: Vec<u64> = if s.locations_length > 0 {
            let (start, len) = (s.locations_start_index, s.locations_length);
            let end = start.saturating_add(len);
            if p.location_indices.is_empty() {
                // The other reading: the slice addresses Profile.location
                // directly. Checked before collecting: the length comes from input.
                if end > p.location.len() as u64 {
                    return Err(out_of_range(
                        at("locations_length"),
                        "location slice end",
                        end,
                    ));
                }
                (start..end).collect()
            } else {
                let slice = p
                    .location_indices
                    .get(start as usize..end.min(usize::MAX as u64) as usize)
                    .ok_or_else(|| {
                        out_of_range(at("locations_start_index"), "location_indices slice", start)
                    })?;
                slice.iter().map(|&x| x as u64).collect()
            }
        } else {
            s.location_index.clone()
        };
        let mut location_id = Vec::with_capacity(positions.len());
        for pos in positions {
            location_id.push(
                *location_ids
                    .get(pos as usize)
                    .ok_or_else(|| out_of_range(at("location"), "location", pos))?,
            );
        }
        let mut label: Vec<pprof::Label> = s
            .label
            .iter()
            .map(|l| pprof::Label {
                key: l.key,
                str: l.str,
                num: l.num,
                num_unit: l.num_unit,
                ..Default::default()
            })
            .collect();
        for &a in &s.attributes {
            if let Some(l) = attribute_labels.get(&a) {
                label.push(l.clone());
                continue;
            }
            let kv = p
                .attribute_table
                .get(a as usize)
                .ok_or_else(|| out_of_range(at("attributes"), "attribute", a))?;
            let key = strings.intern(&kv.key);
            let l = match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
                Some(Value::StringValue(v)) => pprof::Label {
                    key,
                    str: strings.intern(v),
                    ..Default::default()
                },
                Some(Value::IntValue(v)) => pprof::Label {
                    key,
                    num: *v,
                    num_unit: units.get(&kv.key).copied().unwrap_or(0),
                    ..Default::default()
                },
                other => {
                    let (text, kind) = stringify(other);
                    if warned_kinds.insert(kind) {
                        warn(&mut warnings, at("attributes"), format!("pprof labels hold strings and integers; {kind} attribute values become string labels"));
                    }
                    pprof::Label {
                        key,
                        str: strings.intern(&text),
                        ..Default::default()
                    }
                }
            };
            attribute_labels.insert(a, l.clone());
            label.push(l);
        }
        if !p.link_table.is_empty() {
            let link = p
                .link_table
                .get(s.link as usize)
                .ok_or_else(|| out_of_range(at("link"), "link", s.link))?;
            label.push(pprof::Label {
                key: trace_key,
                str: strings.intern(&envelope::hex(&link.trace_id)),
                ..Default::default()
            });
            label.push(pprof::Label {
                key: span_key,
                str: strings.intern(&envelope::hex(&link.span_id)),
                ..Default::default()
            });
        }
        for &t in &s.timestamps_unix_nano {
            label.push(pprof::Label {
                key: timestamp_key,
                num: t as i64,
                num_unit: nanoseconds,
                ..Default::default()
            });
        }
        if s.stacktrace_id_index != 0 {
            warn(
                &mut warnings,
                at("stacktrace_id_index"),
                "pprof has no stack trace ids; dropped".into(),
            );
        }
        samples.push(pprof::Sample {
            location_id,
            value: s.value.clone(),
            label,
            ..Default::default()
        });
    }

    let mut meta = Metadata {
        strings: &mut strings,
        comments: p.comment.clone(),
        warnings: &mut warnings,
    };
    meta.add("profile_id", &envelope::hex(&container.profile_id));
    // Times: pprof holds time and duration; say the container's only when
    // they are not what pprof's fields give.
    let (time_nanos, duration_nanos) = match (p.time_nanos, p.duration_nanos) {
        (0, 0) => (
            container.start_time_unix_nano as i64,
            container
                .end_time_unix_nano
                .saturating_sub(container.start_time_unix_nano) as i64,
        ),
        fields => fields,
    };
    if container.start_time_unix_nano != time_nanos.max(0) as u64 {
        meta.add(
            "start_time_unix_nano",
            &container.start_time_unix_nano.to_string(),
        );
    }
    let derived_end = (time_nanos.max(0) as u64).saturating_add(duration_nanos.max(0) as u64);
    if container.end_time_unix_nano != derived_end {
        meta.add(
            "end_time_unix_nano",
            &container.end_time_unix_nano.to_string(),
        );
    }
    // Temporality: said only when it differs from what the rules infer.
    let named = |t: &otlp::ValueType| match t.aggregation_temporality.value() {
        1 => "DELTA",
        2 => "CUMULATIVE",
        _ => "UNSPECIFIED",
    };
    let string_table = &p.string_table;
    let inferred = |t: &otlp::ValueType| {
        let name = usize::try_from(t.type_)
            .ok()
            .and_then(|i| string_table.get(i))
            .map_or("", String::as_str);
        temporality::for_sample_type(name) as i32 == t.aggregation_temporality.value()
    };
    if !p.sample_type.iter().all(inferred) {
        let list: Vec<&str> = p.sample_type.iter().map(named).collect();
        meta.add("aggregation_temporality", &list.join(","));
    }
    if let Some(t) = p.period_type.as_ref().filter(|t| !inferred(t)) {
        meta.add("period_type.aggregation_temporality", named(t));
    }
    if let Some(resource) = context.resource {
        meta.attributes(
            "resource.attr:",
            &resource.attributes,
            &format!("{path}.resource"),
        );
        if resource.dropped_attributes_count != 0 {
            meta.add(
                "resource.dropped_attributes_count",
                &resource.dropped_attributes_count.to_string(),
            );
        }
    }
    if !context.resource_schema_url.is_empty() {
        meta.add("resource.schema_url", context.resource_schema_url);
    }
    if let Some(scope) = context.scope {
        meta.add("scope.name", &scope.name);
        meta.add("scope.version", &scope.version);
        meta.attributes("scope.attr:", &scope.attributes, &format!("{path}.scope"));
        if scope.dropped_attributes_count != 0 {
            meta.add(
                "scope.dropped_attributes_count",
                &scope.dropped_attributes_count.to_string(),
            );
        }
    }
    if !context.scope_schema_url.is_empty() {
        meta.add("scope.schema_url", context.scope_schema_url);
    }
    let mut doc_url = 0;
    let mut others = Vec::new();
    for kv in &container.attributes {
        match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
            Some(Value::StringValue(url)) if kv.key == DOC_URL_ATTRIBUTE && doc_url == 0 => {
                doc_url = meta.strings.intern(url)
            }
            _ => others.push(kv.clone()),
        }
    }
    meta.attributes("attr:", &others, path);
    if container.dropped_attributes_count != 0 {
        meta.add(
            "dropped_attributes_count",
            &container.dropped_attributes_count.to_string(),
        );
    }
    if !container.original_payload.is_empty() {
        meta.warnings.push(BridgeWarning {
            path: format!("{path}.original_payload"),
            message: format!(
                "the original payload ({} bytes, format {:?}) has no place in pprof; dropped",
                container.original_payload.len(),
                container.original_payload_format
            ),
        });
    }
    let comments = meta.comments;

    let profile = pprof::Profile {
        sample_type: p
            .sample_type
            .iter()
            .map(|t| pprof::ValueType {
                type_: t.type_,
                unit: t.unit,
                ..Default::default()
            })
            .collect(),
        sample: samples,
        mapping: mappings,
        location: locations,
        function: functions,
        drop_frames: p.drop_frames,
        keep_frames: p.keep_frames,
        time_nanos,
        duration_nanos,
        period_type: match p.period_type.as_ref() {
            Some(t) => MessageField::some(pprof::ValueType {
                type_: t.type_,
                unit: t.unit,
                ..Default::default()
            }),
            None => MessageField::none(),
        },
        period: p.period,
        comment: comments,
        default_sample_type: p.default_sample_type,
        doc_url,
        string_table: strings.table,
        ..Default::default()
    };
    Ok(Converted {
        value: profile,
        warnings,
    })
}

/// Writes `otlp:` comments (see the `envelope` module).
struct Metadata<'a> {
    strings: &'a mut Strings,
    comments: Vec<i64>,
    warnings: &'a mut Vec<BridgeWarning>,
}

impl Metadata<'_> {
    fn add(&mut self, name: &str, value: &str) {
        let index = self.strings.intern(&envelope::write(name, value));
        self.comments.push(index);
    }

    fn attributes(&mut self, prefix: &str, attributes: &[KeyValue], at: &str) {
        for kv in attributes {
            let (text, exact) = envelope::value_text(kv.value.as_ref());
            if !exact {
                self.warnings.push(BridgeWarning {
                    path: at.to_string(),
                    message: format!(
                        "attribute {:?} is nested; kept as text in a comment",
                        kv.key
                    ),
                });
            }
            self.add(&format!("{prefix}{}", kv.key), &text);
        }
    }
}

/// Text for attribute values pprof labels cannot hold, and their kind.
fn stringify(value: Option<&Value>) -> (String, &'static str) {
    match value {
        None => (String::new(), "empty"),
        Some(Value::BoolValue(b)) => (b.to_string(), "bool"),
        Some(Value::DoubleValue(d)) => (format!("{d:?}"), "double"),
        Some(Value::BytesValue(b)) => (envelope::hex(b), "bytes"),
        Some(Value::ArrayValue(a)) => (
            format!(
                "[{}]",
                a.values
                    .iter()
                    .map(|v| stringify(v.value.as_ref()).0)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            "array",
        ),
        Some(Value::KvlistValue(kv)) => (
            format!(
                "{{{}}}",
                kv.values
                    .iter()
                    .map(|kv| format!(
                        "{}: {}",
                        kv.key,
                        stringify(kv.value.as_ref().and_then(|v| v.value.as_ref())).0
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            "key/value list",
        ),
        Some(Value::StringValue(s)) => (s.clone(), "string"),
        Some(Value::IntValue(i)) => (i.to_string(), "int"),
        Some(other) => (format!("{other:?}"), "unknown"),
    }
}
