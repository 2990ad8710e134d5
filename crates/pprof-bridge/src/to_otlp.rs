//! pprof -> OTLP Profiles v1experimental. See docs/pprof-bridge.md.

use std::collections::HashMap;

use protobuf::{EnumOrUnknown, Message, MessageField};
use protoprof_model_otlp::opentelemetry::proto::common::v1::{
    any_value::Value, AnyValue, InstrumentationScope, KeyValue,
};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental as otlp;
use protoprof_model_otlp::opentelemetry::proto::resource::v1::Resource;
use protoprof_model_pprof::perftools::profiles as pprof;
use sha2::{Digest, Sha256};

use crate::envelope::{self, key_value};
use crate::error::BridgeError;
use crate::temporality;

/// Marks the mapping that stands for "no mapping" (see docs/pprof-bridge.md).
pub const NO_MAPPING_ATTRIBUTE: &str = "protoprof.no_mapping";
/// pprof's doc_url, which OTLP has no field for, as a container attribute.
pub const DOC_URL_ATTRIBUTE: &str = "pprof.doc_url";
/// Label keys that carry a sample's trace link.
pub const TRACE_ID_LABEL: &str = "trace_id";
pub const SPAN_ID_LABEL: &str = "span_id";
/// Numeric label (unit `nanoseconds`) that carries a sample timestamp.
pub const TIMESTAMP_LABEL: &str = "timestamp";

/// How the profile id is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProfileId {
    /// 16 random bytes (or the id an `otlp:profile_id` comment carries).
    #[default]
    Random,
    /// The first 16 bytes of SHA-256 of the encoded pprof: the same profile
    /// always gets the same id.
    ContentHash,
    Fixed([u8; 16]),
}

/// Options of [`pprof_to_otlp`].
#[derive(Debug, Clone)]
pub struct ToOtlpOptions {
    /// Resource attributes, e.g. `service.name`; they win over attributes
    /// restored from `otlp:` comments.
    pub resource_attributes: Vec<KeyValue>,
    pub scope_name: String,
    pub scope_version: String,
    pub profile_id: ProfileId,
    /// One temporality for every sample type instead of the rules of
    /// [`crate::temporality`].
    pub temporality: Option<otlp::AggregationTemporality>,
    /// Keep labels in the deprecated `Sample.label` instead of attributes.
    pub keep_labels: bool,
    /// Include this pprof payload as `original_payload` (the specification
    /// says a pprof payload SHOULD NOT be included; off by default).
    pub original_payload: Option<Vec<u8>>,
}

impl Default for ToOtlpOptions {
    fn default() -> Self {
        ToOtlpOptions {
            resource_attributes: Vec::new(),
            scope_name: "protoprof".into(),
            scope_version: env!("CARGO_PKG_VERSION").into(),
            profile_id: ProfileId::default(),
            temporality: None,
            keep_labels: false,
            original_payload: None,
        }
    }
}

/// Converts a pprof profile into `ProfilesData` (one resource, one scope, one
/// container). `ProfilesData` and `ExportProfilesServiceRequest` share the
/// same wire form; see [`crate::export_request`].
pub fn pprof_to_otlp(
    profile: &pprof::Profile,
    options: &ToOtlpOptions,
) -> Result<otlp::ProfilesData, BridgeError> {
    let (container, envelope) = pprof_to_container(profile, options)?;
    Ok(envelope.wrap(vec![container]))
}

/// The resource and scope a container belongs to.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Envelope {
    pub resource: Resource,
    pub resource_schema_url: String,
    pub scope: InstrumentationScope,
    pub scope_schema_url: String,
}

impl Envelope {
    pub fn wrap(self, containers: Vec<otlp::ProfileContainer>) -> otlp::ProfilesData {
        otlp::ProfilesData {
            resource_profiles: vec![otlp::ResourceProfiles {
                resource: MessageField::some(self.resource),
                schema_url: self.resource_schema_url,
                scope_profiles: vec![otlp::ScopeProfiles {
                    scope: MessageField::some(self.scope),
                    schema_url: self.scope_schema_url,
                    profiles: containers,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        }
    }
}

/// Converts one profile into a container, and the envelope it belongs in.
pub fn pprof_to_container(
    p: &pprof::Profile,
    options: &ToOtlpOptions,
) -> Result<(otlp::ProfileContainer, Envelope), BridgeError> {
    let strings = &p.string_table;
    let string = |i: i64| {
        usize::try_from(i)
            .ok()
            .and_then(|i| strings.get(i))
            .map(String::as_str)
            .unwrap_or("")
    };
    let (comments, restored) = split_comments(p, &string);

    let mut attributes = AttributeTable::default();
    // Mappings, and the placeholder for "no mapping" next to real ones.
    let mapping_pos = positions(p.mapping.iter().map(|m| m.id), "mapping")?;
    let mut mappings: Vec<otlp::Mapping> = p.mapping.iter().map(convert_mapping).collect();
    let no_mapping = if !p.mapping.is_empty() && p.location.iter().any(|l| l.mapping_id == 0) {
        let marker = attributes.intern_value(NO_MAPPING_ATTRIBUTE, Value::BoolValue(true));
        // Its deprecated id is a fresh one: ids are all set or all unset.
        let id = p.mapping.iter().map(|m| m.id).max().unwrap_or(0) + 1;
        mappings.push(otlp::Mapping {
            id,
            attributes: vec![marker],
            ..Default::default()
        });
        mappings.len() as u64 - 1
    } else {
        0
    };
    let function_pos = positions(p.function.iter().map(|f| f.id), "function")?;
    let functions = p.function.iter().map(convert_function).collect();
    let location_pos = positions(p.location.iter().map(|l| l.id), "location")?;
    let mut locations = Vec::with_capacity(p.location.len());
    for (i, l) in p.location.iter().enumerate() {
        let mapping_index = match l.mapping_id {
            0 => no_mapping,
            id => *mapping_pos
                .get(&id)
                .ok_or_else(|| unresolved(format!("location[{i}].mapping_id"), "mapping", id))?
                as u64,
        };
        let mut lines = Vec::with_capacity(l.line.len());
        for (j, line) in l.line.iter().enumerate() {
            let f = *function_pos.get(&line.function_id).ok_or_else(|| {
                unresolved(
                    format!("location[{i}].line[{j}].function_id"),
                    "function",
                    line.function_id,
                )
            })?;
            lines.push(otlp::Line {
                function_index: f as u64,
                line: line.line,
                column: line.column,
                ..Default::default()
            });
        }
        locations.push(otlp::Location {
            id: l.id,
            mapping_index,
            address: l.address,
            line: lines,
            is_folded: l.is_folded,
            ..Default::default()
        });
    }

    let units = label_units(p, &|i| string(i).to_string());
    let mut stacks = StackTable::default();
    let mut links = LinkTable::default();
    let mut stack = Vec::new();
    let mut samples = Vec::with_capacity(p.sample.len());
    let mut linked = Vec::with_capacity(p.sample.len());
    for (i, s) in p.sample.iter().enumerate() {
        stack.clear();
        for (j, id) in s.location_id.iter().enumerate() {
            let pos = *location_pos.get(id).ok_or_else(|| {
                unresolved(format!("sample[{i}].location_id[{j}]"), "location", *id)
            })?;
            stack.push(pos as i64);
        }
        let (start, length) = stacks.intern(&stack);
        let mut sample = otlp::Sample {
            locations_start_index: start,
            locations_length: length,
            value: s.value.clone(),
            ..Default::default()
        };
        let converted = match options.keep_labels {
            true => None,
            false => convert_labels(s, &string, &units, &mut attributes, &mut sample, true),
        };
        let link = match converted {
            Some(link) => link,
            None => {
                sample.label = s.label.iter().map(convert_label).collect();
                None
            }
        };
        linked.push(link);
        samples.push(sample);
    }
    // A link index of 0 means link_table[0] whenever the table is not empty,
    // so samples can only use links if every one of them has one; otherwise
    // trace_id and span_id stay attributes.
    if !linked.is_empty() && linked.iter().all(Option::is_some) {
        for (sample, link) in samples.iter_mut().zip(linked) {
            sample.link = links.intern(link.expect("all present"));
        }
    } else {
        for ((sample, link), s) in samples.iter_mut().zip(linked).zip(&p.sample) {
            if link.is_some() {
                sample.attributes.clear();
                sample.timestamps_unix_nano.clear();
                convert_labels(s, &string, &units, &mut attributes, sample, false)
                    .expect("representable before");
            }
        }
    }

    let temporality_of = |type_index: i64,
                          position: Option<usize>|
     -> EnumOrUnknown<otlp::AggregationTemporality> {
        let restored_value = position.and_then(|i| restored.temporality.get(i).copied().flatten());
        let value = options
            .temporality
            .or(restored_value)
            .unwrap_or_else(|| temporality::for_sample_type(string(type_index)));
        value.into()
    };
    let sample_type = p
        .sample_type
        .iter()
        .enumerate()
        .map(|(i, t)| otlp::ValueType {
            type_: t.type_,
            unit: t.unit,
            aggregation_temporality: temporality_of(t.type_, Some(i)),
            ..Default::default()
        })
        .collect();
    let period_type = p.period_type.as_ref().map(|t| otlp::ValueType {
        type_: t.type_,
        unit: t.unit,
        aggregation_temporality: match (options.temporality, restored.period_temporality) {
            (Some(forced), _) => forced.into(),
            (None, Some(restored)) => restored.into(),
            (None, None) => temporality_of(t.type_, None),
        },
        ..Default::default()
    });

    let profile = otlp::Profile {
        sample_type,
        sample: samples,
        mapping: mappings,
        location: locations,
        location_indices: stacks.indices,
        function: functions,
        attribute_units: units.attribute_units(),
        attribute_table: attributes.table,
        link_table: links.table,
        string_table: p.string_table.clone(),
        drop_frames: p.drop_frames,
        keep_frames: p.keep_frames,
        time_nanos: p.time_nanos,
        duration_nanos: p.duration_nanos,
        period_type: period_type.into(),
        period: p.period,
        comment: comments,
        default_sample_type: p.default_sample_type,
        ..Default::default()
    };
    let start = restored.start.unwrap_or(p.time_nanos.max(0) as u64);
    let end = restored
        .end
        .unwrap_or(start.saturating_add(p.duration_nanos.max(0) as u64));
    let mut container_attributes = restored.container_attributes;
    if p.doc_url != 0 {
        container_attributes.push(key_value(
            DOC_URL_ATTRIBUTE,
            string_value(string(p.doc_url)),
        ));
    }
    let profile_id = match (options.profile_id, restored.profile_id) {
        (ProfileId::Fixed(id), _) => id.to_vec(),
        (ProfileId::ContentHash, _) => content_hash(p),
        (ProfileId::Random, Some(id)) => id,
        (ProfileId::Random, None) => random_id(),
    };
    let (original_payload_format, original_payload) = match &options.original_payload {
        Some(bytes) => ("pprof".to_string(), bytes.clone()),
        None => (String::new(), Vec::new()),
    };
    let container = otlp::ProfileContainer {
        profile_id,
        start_time_unix_nano: start,
        end_time_unix_nano: end,
        attributes: container_attributes,
        dropped_attributes_count: restored.container_dropped,
        original_payload_format,
        original_payload,
        profile: MessageField::some(profile),
        ..Default::default()
    };
    let mut resource_attributes = restored.resource_attributes;
    for kv in &options.resource_attributes {
        resource_attributes.retain(|existing| existing.key != kv.key);
        resource_attributes.push(kv.clone());
    }
    let envelope = Envelope {
        resource: Resource {
            attributes: resource_attributes,
            dropped_attributes_count: restored.resource_dropped,
            ..Default::default()
        },
        resource_schema_url: restored.resource_schema_url,
        scope: restored.scope.unwrap_or_else(|| InstrumentationScope {
            name: options.scope_name.clone(),
            version: options.scope_version.clone(),
            ..Default::default()
        }),
        scope_schema_url: restored.scope_schema_url,
    };
    Ok((container, envelope))
}

fn unresolved(path: String, what: &'static str, value: u64) -> BridgeError {
    BridgeError::Unresolved {
        path,
        what,
        value: i128::from(value),
    }
}

/// Position of each id in its table; ids must be unique.
fn positions(
    ids: impl Iterator<Item = u64>,
    table: &str,
) -> Result<HashMap<u64, usize>, BridgeError> {
    let mut map = HashMap::new();
    for (i, id) in ids.enumerate() {
        if map.insert(id, i).is_some() {
            return Err(BridgeError::DuplicateId {
                path: format!("{table}[{i}].id"),
                id,
            });
        }
    }
    Ok(map)
}

fn convert_mapping(m: &pprof::Mapping) -> otlp::Mapping {
    otlp::Mapping {
        id: m.id,
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
    }
}

fn convert_function(f: &pprof::Function) -> otlp::Function {
    otlp::Function {
        id: f.id,
        name: f.name,
        system_name: f.system_name,
        filename: f.filename,
        start_line: f.start_line,
        ..Default::default()
    }
}

fn convert_label(l: &pprof::Label) -> otlp::Label {
    otlp::Label {
        key: l.key,
        str: l.str,
        num: l.num,
        num_unit: l.num_unit,
        ..Default::default()
    }
}

fn string_value(s: &str) -> AnyValue {
    AnyValue {
        value: Some(Value::StringValue(s.to_string())),
        ..Default::default()
    }
}

fn content_hash(p: &pprof::Profile) -> Vec<u8> {
    let bytes = p.write_to_bytes().unwrap_or_default();
    let mut id = Sha256::digest(&bytes)[..16].to_vec();
    if id.iter().all(|b| *b == 0) {
        id[15] = 1; // all-zero ids are invalid
    }
    id
}

fn random_id() -> Vec<u8> {
    let mut id = [0u8; 16];
    if getrandom::fill(&mut id).is_err() || id.iter().all(|b| *b == 0) {
        // No OS randomness: time and address entropy; still unique per call.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos());
        id = (nanos ^ (&id as *const _ as u128)).to_le_bytes();
        id[0] |= 1;
    }
    id.to_vec()
}

/// Stacks laid end to end; identical stacks share one slice.
#[derive(Default)]
struct StackTable {
    indices: Vec<i64>,
    /// Hash of a stack -> (start, length) of the stacks with that hash.
    by_hash: HashMap<u64, Vec<(u64, u64)>>,
}

impl StackTable {
    fn intern(&mut self, stack: &[i64]) -> (u64, u64) {
        use std::hash::{Hash, Hasher};
        if stack.is_empty() {
            return (0, 0);
        }
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        stack.hash(&mut hasher);
        let slots = self.by_hash.entry(hasher.finish()).or_default();
        for &(start, length) in slots.iter() {
            if &self.indices[start as usize..(start + length) as usize] == stack {
                return (start, length);
            }
        }
        let start = self.indices.len() as u64;
        self.indices.extend_from_slice(stack);
        slots.push((start, stack.len() as u64));
        (start, stack.len() as u64)
    }
}

/// The attribute table, de-duplicated.
#[derive(Default)]
struct AttributeTable {
    table: Vec<KeyValue>,
    index: HashMap<(String, AttrValue), u64>,
}

#[derive(Hash, PartialEq, Eq)]
enum AttrValue {
    Str(String),
    Int(i64),
    Bool(bool),
}

impl AttributeTable {
    fn intern_value(&mut self, key: &str, value: Value) -> u64 {
        let id = match &value {
            Value::StringValue(s) => AttrValue::Str(s.clone()),
            Value::IntValue(i) => AttrValue::Int(*i),
            Value::BoolValue(b) => AttrValue::Bool(*b),
            _ => unreachable!("labels become strings, integers or the no-mapping flag"),
        };
        let table = &mut self.table;
        *self.index.entry((key.to_string(), id)).or_insert_with(|| {
            table.push(key_value(
                key,
                AnyValue {
                    value: Some(value),
                    ..Default::default()
                },
            ));
            table.len() as u64 - 1
        })
    }
}

/// Links, de-duplicated.
#[derive(Default)]
struct LinkTable {
    table: Vec<otlp::Link>,
    index: HashMap<(Vec<u8>, Vec<u8>), u64>,
}

impl LinkTable {
    fn intern(&mut self, (trace_id, span_id): (Vec<u8>, Vec<u8>)) -> u64 {
        let table = &mut self.table;
        *self
            .index
            .entry((trace_id.clone(), span_id.clone()))
            .or_insert_with(|| {
                table.push(otlp::Link {
                    trace_id,
                    span_id,
                    ..Default::default()
                });
                table.len() as u64 - 1
            })
    }
}

/// Units of numeric labels by key (compared as strings: a string table may
/// hold the same string twice): usable as `attribute_units` only when every
/// numeric label of the key has the same unit.
struct LabelUnits {
    /// Key -> (string index of the key, unit, string index of the unit), first use.
    unit: HashMap<String, (i64, String, i64)>,
    conflicting: std::collections::HashSet<String>,
}

impl LabelUnits {
    fn attribute_units(&self) -> Vec<otlp::AttributeUnit> {
        let mut units: Vec<otlp::AttributeUnit> = self
            .unit
            .iter()
            .filter(|(key, (_, unit, _))| !unit.is_empty() && !self.conflicting.contains(*key))
            .map(|(_, &(attribute_key, _, unit))| otlp::AttributeUnit {
                attribute_key,
                unit,
                ..Default::default()
            })
            .collect();
        units.sort_by_key(|u| u.attribute_key);
        units
    }
}

fn label_units(p: &pprof::Profile, string: &dyn Fn(i64) -> String) -> LabelUnits {
    let mut unit: HashMap<String, (i64, String, i64)> = HashMap::new();
    let mut conflicting = std::collections::HashSet::new();
    for l in p
        .sample
        .iter()
        .flat_map(|s| &s.label)
        .filter(|l| l.str == 0)
    {
        let (key, unit_name) = (string(l.key), string(l.num_unit));
        let first = unit
            .entry(key.clone())
            .or_insert_with(|| (l.key, unit_name.clone(), l.num_unit));
        if first.1 != unit_name {
            conflicting.insert(key);
        }
    }
    LabelUnits { unit, conflicting }
}

type Link = (Vec<u8>, Vec<u8>);

/// A sample's labels as attributes, timestamps and (when `links_allowed`) a
/// trace link. `None` when some label cannot be an attribute: then all of the
/// sample's labels stay deprecated labels, exactly as pprof had them.
fn convert_labels<'s>(
    s: &pprof::Sample,
    string: &dyn Fn(i64) -> &'s str,
    units: &LabelUnits,
    attributes: &mut AttributeTable,
    sample: &mut otlp::Sample,
    links_allowed: bool,
) -> Option<Option<Link>> {
    let is_timestamp = |l: &pprof::Label| {
        string(l.key) == TIMESTAMP_LABEL
            && l.str == 0
            && string(l.num_unit) == "nanoseconds"
            && l.num >= 0
    };
    let id_label = |key: &str, len: usize| {
        let mut found = s.label.iter().filter(|l| string(l.key) == key);
        let only = found.next().filter(|_| found.next().is_none())?;
        let bytes = envelope::unhex(string(only.str))
            .filter(|b| b.len() == len && only.num == 0 && only.num_unit == 0)?;
        Some((bytes, only.key))
    };
    // A trace_id without its span_id (or the reverse) stays an attribute.
    let link = match (
        links_allowed,
        id_label(TRACE_ID_LABEL, 16),
        id_label(SPAN_ID_LABEL, 8),
    ) {
        (true, Some(trace), Some(span)) => Some((trace, span)),
        _ => None,
    };
    let link_keys = link.as_ref().map(|((_, t), (_, s))| [*t, *s]);
    let plain: Vec<&pprof::Label> = s
        .label
        .iter()
        .filter(|l| !is_timestamp(l) && !link_keys.is_some_and(|keys| keys.contains(&l.key)))
        .collect();
    if !representable(&plain, units, string) {
        return None;
    }
    for l in plain {
        let value = if l.str != 0 {
            Value::StringValue(string(l.str).to_string())
        } else {
            Value::IntValue(l.num)
        };
        sample
            .attributes
            .push(attributes.intern_value(string(l.key), value));
    }
    sample.timestamps_unix_nano = s
        .label
        .iter()
        .filter(|l| is_timestamp(l))
        .map(|l| l.num as u64)
        .collect();
    Some(link.map(|((trace, _), (span, _))| (trace, span)))
}

/// Attributes can hold these labels: keys present and unique (as strings),
/// at most one of str/num, units that attribute_units can state.
fn representable<'s>(
    labels: &[&pprof::Label],
    units: &LabelUnits,
    string: &dyn Fn(i64) -> &'s str,
) -> bool {
    for (i, l) in labels.iter().enumerate() {
        let key = string(l.key);
        let both = l.str != 0 && l.num != 0;
        let string_with_unit = l.str != 0 && !string(l.num_unit).is_empty();
        let unit_conflict = l.str == 0 && units.conflicting.contains(key);
        let duplicate_key = labels[..i].iter().any(|other| string(other.key) == key);
        if key.is_empty() || both || string_with_unit || unit_conflict || duplicate_key {
            return false;
        }
    }
    true
}

/// What `otlp:` comments restore, and the comments that remain.
#[derive(Default)]
struct Restored {
    profile_id: Option<Vec<u8>>,
    start: Option<u64>,
    end: Option<u64>,
    temporality: Vec<Option<otlp::AggregationTemporality>>,
    period_temporality: Option<otlp::AggregationTemporality>,
    resource_attributes: Vec<KeyValue>,
    resource_dropped: u32,
    resource_schema_url: String,
    scope: Option<InstrumentationScope>,
    scope_schema_url: String,
    container_attributes: Vec<KeyValue>,
    container_dropped: u32,
}

fn temporality_named(name: &str) -> Option<otlp::AggregationTemporality> {
    match name {
        "DELTA" => Some(otlp::AggregationTemporality::AGGREGATION_TEMPORALITY_DELTA),
        "CUMULATIVE" => Some(otlp::AggregationTemporality::AGGREGATION_TEMPORALITY_CUMULATIVE),
        _ => None,
    }
}

/// Splits `otlp:` comments (bridge metadata, restored) from real ones (kept).
fn split_comments<'s>(p: &pprof::Profile, string: &dyn Fn(i64) -> &'s str) -> (Vec<i64>, Restored) {
    let mut kept = Vec::with_capacity(p.comment.len());
    let mut r = Restored::default();
    for &index in &p.comment {
        let Some(entry) = envelope::read(string(index)) else {
            kept.push(index);
            continue;
        };
        let value = entry.value.as_str();
        fn scope(r: &mut Restored) -> &mut InstrumentationScope {
            r.scope.get_or_insert_with(InstrumentationScope::default)
        }
        match entry.name.as_str() {
            "profile_id" => r.profile_id = envelope::unhex(value).filter(|id| id.len() == 16),
            "start_time_unix_nano" => r.start = value.parse().ok(),
            "end_time_unix_nano" => r.end = value.parse().ok(),
            "aggregation_temporality" => {
                r.temporality = value.split(',').map(temporality_named).collect()
            }
            "period_type.aggregation_temporality" => {
                r.period_temporality = temporality_named(value)
            }
            "resource.dropped_attributes_count" => r.resource_dropped = value.parse().unwrap_or(0),
            "resource.schema_url" => r.resource_schema_url = value.to_string(),
            "scope.name" => scope(&mut r).name = value.to_string(),
            "scope.version" => scope(&mut r).version = value.to_string(),
            "scope.dropped_attributes_count" => {
                scope(&mut r).dropped_attributes_count = value.parse().unwrap_or(0)
            }
            "scope.schema_url" => r.scope_schema_url = value.to_string(),
            "dropped_attributes_count" => r.container_dropped = value.parse().unwrap_or(0),
            name => {
                let attribute = |prefix: &str| {
                    name.strip_prefix(prefix)
                        .map(|key| key_value(key, envelope::parse_value(value)))
                };
                if let Some(kv) = attribute("resource.attr:") {
                    r.resource_attributes.push(kv);
                } else if let Some(kv) = attribute("scope.attr:") {
                    scope(&mut r).attributes.push(kv);
                } else if let Some(kv) = attribute("attr:") {
                    r.container_attributes.push(kv);
                } else {
                    kept.push(index); // an otlp: comment this version does not know: keep it
                }
            }
        }
    }
    (kept, r)
}
