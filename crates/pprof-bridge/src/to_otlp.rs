//! pprof -> OTLP Profiles v1experimental. See docs/pprof-bridge.md.

use std::collections::HashMap;

use protobuf::{EnumOrUnknown, Message, MessageField};
use protoprof_model_meta::Fields;
use protoprof_model_otlp::opentelemetry::proto::common::v1::{
    any_value::Value, AnyValue, InstrumentationScope, KeyValue,
};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental as otlp;
use protoprof_model_otlp::opentelemetry::proto::resource::v1::Resource;
use protoprof_model_pprof::perftools::profiles as pprof;
use protoprof_model_pprof::samples::ProfileSamples;
use sha2::{Digest, Sha256};

use crate::converted::{self, ConvertedSamples};
use crate::envelope::{self, key_value};
use crate::error::BridgeError;
use crate::stacks;
use crate::tables::{classify, AttrValue, AttributeTable, IdPositions, LinkTable, StringClass};
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
///
/// `source` is the decoded model, or the codec's `PprofView`, whose samples
/// are read one at a time from the input bytes (no `Sample` per sample).
/// Both give the same result.
pub fn pprof_to_otlp<S: ProfileSamples>(
    source: &S,
    options: &ToOtlpOptions,
) -> Result<otlp::ProfilesData, BridgeError> {
    let (container, envelope) = pprof_to_container(source, options)?;
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
pub fn pprof_to_container<S: ProfileSamples>(
    source: &S,
    options: &ToOtlpOptions,
) -> Result<(otlp::ProfileContainer, Envelope), BridgeError> {
    let (mut container, envelope, samples) = convert(source, options)?;
    container.profile.mut_or_insert_default().sample = samples.into_model(source);
    Ok((container, envelope))
}

/// Converts a pprof profile to OTLP and encodes it: the bytes of
/// [`pprof_to_otlp`]'s `ProfilesData`, written without building an OTLP
/// `Sample` message per sample. For collectors and stores that convert in
/// bulk; the samples are written from compact records and the source.
pub fn pprof_to_otlp_bytes<S: ProfileSamples>(
    source: &S,
    options: &ToOtlpOptions,
) -> Result<Vec<u8>, BridgeError> {
    let (container, envelope, samples) = convert(source, options)?;
    let encoded_samples = samples.encode(source);
    drop(samples);
    Ok(converted::encode_profiles_data(
        envelope.wrap(vec![container]),
        &encoded_samples,
    ))
}

/// The container (its profile without samples), its envelope, and the
/// converted samples.
fn convert<S: ProfileSamples>(
    source: &S,
    options: &ToOtlpOptions,
) -> Result<(otlp::ProfileContainer, Envelope, ConvertedSamples), BridgeError> {
    let p = source.profile();
    let sample_count = source.sample_count();
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
    let ids = |list: Vec<u64>, table| IdPositions::new(&list, table);
    let mapping_pos = ids(p.mapping.iter().map(|m| m.id).collect(), "mapping")?;
    let mut mappings: Vec<otlp::Mapping> = p.mapping.iter().map(convert_mapping).collect();
    let no_mapping = if !p.mapping.is_empty() && p.location.iter().any(|l| l.mapping_id == 0) {
        let marker = attributes.intern(-1, NO_MAPPING_ATTRIBUTE, AttrValue::Bool(true), strings);
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
    let function_pos = ids(p.function.iter().map(|f| f.id).collect(), "function")?;
    let functions = p.function.iter().map(convert_function).collect();
    let location_pos = ids(p.location.iter().map(|l| l.id).collect(), "location")?;
    let mut locations = Vec::with_capacity(p.location.len());
    for (i, l) in p.location.iter().enumerate() {
        let mapping_index = match l.mapping_id {
            0 => no_mapping,
            id => mapping_pos
                .get(id)
                .ok_or_else(|| unresolved(format!("location[{i}].mapping_id"), "mapping", id))?
                as u64,
        };
        let mut lines = Vec::with_capacity(l.line.len());
        for (j, line) in l.line.iter().enumerate() {
            let f = function_pos.get(line.function_id).ok_or_else(|| {
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

    let units = label_units(source, &string);
    let classes = classify(strings);
    let cx = LabelContext {
        strings,
        classes: &classes,
        units: &units,
    };
    let mut links = LinkTable::default();
    let mut converted = ConvertedSamples::with_capacity(sample_count);
    // Samples that carry a trace link, by index (most profiles have none).
    let mut linked: Vec<(usize, Link)> = Vec::new();
    // Stacks are interned on a second thread for large profiles: that work
    // (hashing and comparing every stack) is independent of the rest. When
    // the labels are done, this thread interns from the other end.
    let two_ended = stacks::TwoEnded::new(source, &location_pos);
    let (slots, stacks) = std::thread::scope(|scope| -> Result<_, BridgeError> {
        let stack_job =
            (sample_count >= PARALLEL_SAMPLES).then(|| scope.spawn(|| two_ended.run(true)));
        let mut buffer = pprof::Sample::new();
        for i in 0..sample_count {
            let s = source.sample_fields(i, LABELS, &mut buffer);
            let link = converted.push(
                |values, timestamps| match options.keep_labels {
                    true => None,
                    false => convert_labels(s, &cx, &mut attributes, values, timestamps, true),
                },
                // Labels that cannot be attributes stay labels.
                |as_attributes| {
                    as_attributes
                        .is_none()
                        .then(|| s.label.iter().map(convert_label).collect())
                },
            );
            if let Some(Some(link)) = link {
                linked.push((i, link));
            }
        }
        match stack_job {
            Some(job) => {
                let back = two_ended.run(false);
                let front = job.join().expect("the stack thread does not panic");
                two_ended.merge(front, back)
            }
            None => stacks::intern_all(source, &location_pos),
        }
    })?;
    converted.set_slots(slots);
    // A link index of 0 means link_table[0] whenever the table is not empty,
    // so samples can only use links if every one of them has one; otherwise
    // trace_id and span_id stay attributes.
    if sample_count > 0 && linked.len() == sample_count {
        let indices = linked.into_iter().map(|(_, link)| links.intern(link));
        converted.set_links(indices.collect());
    } else {
        let mut buffer = pprof::Sample::new();
        for (i, _) in linked {
            let s = source.sample_fields(i, LABELS, &mut buffer);
            converted
                .rewrite(i, |values, timestamps| {
                    convert_labels(s, &cx, &mut attributes, values, timestamps, false)
                })
                .expect("representable before");
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
        mapping: mappings,
        location: locations,
        location_indices: stacks.into_indices(),
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
        (ProfileId::ContentHash, _) => content_hash(source),
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
    Ok((container, envelope, converted))
}

/// The parts of a sample each pass reads (pprof `Sample` field numbers).
const LABELS: Fields = Fields::only(&[3]);

/// From this many samples on, stacks are interned on a second thread.
const PARALLEL_SAMPLES: usize = 50_000;

pub(crate) fn unresolved(path: String, what: &'static str, value: u64) -> BridgeError {
    BridgeError::Unresolved {
        path,
        what,
        value: i128::from(value),
    }
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

/// SHA-256 of the profile as rust-protobuf encodes the whole model: fields
/// in number order (`sample_type` is the only one before `sample`), unknown
/// fields last. Samples held outside the profile are hashed in their place.
fn content_hash<S: ProfileSamples>(source: &S) -> Vec<u8> {
    let p = source.profile();
    let mut hasher = Sha256::new();
    if p.sample.len() == source.sample_count() {
        hasher.update(p.write_to_bytes().unwrap_or_default());
    } else {
        let head = pprof::Profile {
            sample_type: p.sample_type.clone(),
            ..Default::default()
        };
        hasher.update(head.write_to_bytes().unwrap_or_default());
        let mut buffer = pprof::Sample::new();
        let mut encoded = Vec::new();
        for i in 0..source.sample_count() {
            let sample = source.sample(i, &mut buffer);
            encoded.clear();
            let mut stream = protobuf::CodedOutputStream::vec(&mut encoded);
            let written = stream
                .write_message(2, sample)
                .and_then(|()| stream.flush());
            drop(stream);
            if written.is_ok() {
                hasher.update(&encoded);
            }
        }
        let mut tail = p.clone();
        tail.sample_type.clear();
        hasher.update(tail.write_to_bytes().unwrap_or_default());
    }
    let mut id = hasher.finalize()[..16].to_vec();
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

/// Units of numeric labels by key (compared as strings: a string table may
/// hold the same string twice): usable as `attribute_units` only when every
/// numeric label of the key has the same unit.
struct LabelUnits<'a> {
    /// Key -> (string index of the key, unit, string index of the unit), first use.
    unit: HashMap<&'a str, (i64, &'a str, i64)>,
    conflicting: std::collections::HashSet<&'a str>,
}

impl LabelUnits<'_> {
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

fn label_units<'a, S: ProfileSamples>(
    source: &S,
    string: &dyn Fn(i64) -> &'a str,
) -> LabelUnits<'a> {
    let mut unit: HashMap<&str, (i64, &str, i64)> = HashMap::new();
    let mut conflicting = std::collections::HashSet::new();
    let mut buffer = pprof::Sample::new();
    for i in 0..source.sample_count() {
        let labels = &source.sample_fields(i, LABELS, &mut buffer).label;
        for l in labels.iter().filter(|l| l.str == 0) {
            let (key, unit_name) = (string(l.key), string(l.num_unit));
            let first = unit.entry(key).or_insert((l.key, unit_name, l.num_unit));
            if first.1 != unit_name {
                conflicting.insert(key);
            }
        }
    }
    LabelUnits { unit, conflicting }
}

/// What converting one sample's labels needs from the whole profile.
struct LabelContext<'a> {
    strings: &'a [String],
    classes: &'a [StringClass],
    units: &'a LabelUnits<'a>,
}

impl LabelContext<'_> {
    fn class(&self, i: i64) -> StringClass {
        usize::try_from(i)
            .ok()
            .and_then(|i| self.classes.get(i))
            .copied()
            .unwrap_or(StringClass::Plain)
    }

    fn string(&self, i: i64) -> &str {
        usize::try_from(i)
            .ok()
            .and_then(|i| self.strings.get(i))
            .map_or("", String::as_str)
    }

    fn is_timestamp(&self, l: &pprof::Label) -> bool {
        self.class(l.key) == StringClass::Timestamp
            && l.str == 0
            && self.class(l.num_unit) == StringClass::Nanoseconds
            && l.num >= 0
    }

    /// The bytes of the only label with this key class, when they are a
    /// canonical lowercase hex id of `len` bytes (so they print back the same).
    fn id_label(
        &self,
        s: &pprof::Sample,
        class: StringClass,
        len: usize,
    ) -> Option<(Vec<u8>, i64)> {
        let mut found = s.label.iter().filter(|l| self.class(l.key) == class);
        let only = found.next().filter(|_| found.next().is_none())?;
        let text = self.string(only.str);
        let bytes = envelope::unhex(text)
            .filter(|b| b.len() == len && only.num == 0 && only.num_unit == 0)?;
        (envelope::hex(&bytes) == text).then_some((bytes, only.key))
    }
}

type Link = (Vec<u8>, Vec<u8>);

/// A sample's labels as attributes, timestamps and (when `links_allowed`) a
/// trace link. `None` when some label cannot be an attribute: then all of the
/// sample's labels stay deprecated labels, exactly as pprof had them.
fn convert_labels(
    s: &pprof::Sample,
    cx: &LabelContext,
    attributes: &mut AttributeTable,
    sample_attributes: &mut Vec<u64>,
    timestamps: &mut Vec<u64>,
    links_allowed: bool,
) -> Option<Option<Link>> {
    // A trace_id without its span_id (or the reverse) stays an attribute.
    let link = match links_allowed {
        true => {
            cx.id_label(s, StringClass::TraceId, 16)
                .zip(cx.id_label(s, StringClass::SpanId, 8))
        }
        false => None,
    };
    let link_keys = link.as_ref().map(|((_, t), (_, s))| [*t, *s]);
    let plain = |l: &pprof::Label| {
        !cx.is_timestamp(l) && !link_keys.is_some_and(|keys| keys.contains(&l.key))
    };
    if !representable(&s.label, &plain, cx) {
        return None;
    }
    for l in s.label.iter().filter(|l| plain(l)) {
        let value = if l.str != 0 {
            AttrValue::Str(l.str)
        } else {
            AttrValue::Int(l.num)
        };
        sample_attributes.push(attributes.intern(l.key, cx.string(l.key), value, cx.strings));
    }
    timestamps.extend(
        s.label
            .iter()
            .filter(|l| cx.is_timestamp(l))
            .map(|l| l.num as u64),
    );
    Some(link.map(|((trace, _), (span, _))| (trace, span)))
}

/// Attributes can hold the labels `keep` selects: keys present and unique
/// (as strings), at most one of str/num, units that attribute_units can state.
fn representable(
    labels: &[pprof::Label],
    keep: &dyn Fn(&pprof::Label) -> bool,
    cx: &LabelContext,
) -> bool {
    for (i, l) in labels.iter().enumerate().filter(|(_, l)| keep(l)) {
        let key = cx.string(l.key);
        let both = l.str != 0 && l.num != 0;
        let string_with_unit = l.str != 0 && !cx.string(l.num_unit).is_empty();
        let unit_conflict = l.str == 0 && cx.units.conflicting.contains(key);
        let duplicate_key = labels[..i]
            .iter()
            .filter(|o| keep(o))
            .any(|o| o.key == l.key || cx.string(o.key) == key);
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
