//! OTLP Profiles v1experimental -> pprof. See docs/pprof-bridge.md.
//!
//! Laid out as pprof's `merge.go` is: a context ([`ToPprof`]) holding the
//! growing string table and the warnings, and one method per table
//! (mappings, functions, locations, samples) and for the header.

use std::collections::{HashMap, HashSet};

use protoprof_model_meta::{DecodedProfileSet, StringTable};
use protoprof_model_otlp::opentelemetry::proto::common::v1::{any_value::Value, KeyValue};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental as otlp;
use protoprof_model_pprof::perftools::profiles as pprof;

use crate::envelope::Envelope;
use crate::error::{unresolved, BridgeError, BridgeWarning, Converted};
use crate::experimental::samples::{
    ExperimentalAsPprof, ExperimentalSource, Indices, LabelTables, StackMiss, StackTables,
};
use crate::interner::StringInterner;
use crate::names::{
    DOC_URL_ATTRIBUTE, NANOSECONDS, NO_MAPPING_ATTRIBUTE, SPAN_ID_LABEL, TIMESTAMP_LABEL,
    TRACE_ID_LABEL,
};
use crate::otlp_comments::{self, key, temporality_name, CommentWriter};
use crate::temporality;

/// One pprof profile per ProfileContainer, in order.
pub fn otlp_to_pprof(
    data: &otlp::ProfilesData,
) -> Result<Converted<Vec<pprof::Profile>>, BridgeError> {
    let mut profiles = Vec::new();
    let mut warnings = Vec::new();
    for (i, rp) in data.resource_profiles.iter().enumerate() {
        for (j, sp) in rp.scope_profiles.iter().enumerate() {
            let envelope = Envelope::of(rp, sp);
            for (k, container) in sp.profiles.iter().enumerate() {
                let path = format!("resource_profiles[{i}].scope_profiles[{j}].profiles[{k}]");
                let converted = container_to_pprof(container, &envelope, &path)?;
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

/// Converts one container into one pprof profile. `envelope` is where the
/// container sits (kept as `otlp:` comments); `path` names the container in
/// errors and warnings.
pub fn container_to_pprof(
    container: &otlp::ProfileContainer,
    envelope: &Envelope,
    path: &str,
) -> Result<Converted<pprof::Profile>, BridgeError> {
    let p = profile_of(container, path)?;
    let samples = DecodedProfileSet::<_, ()>::new(vec![&p.sample[..]], &[]);
    let converted = container_as_pprof(container, envelope, path, (&samples, 0))?;
    Ok(Converted {
        value: converted.value.into_profile(&samples),
        warnings: converted.warnings,
    })
}

/// [`container_to_pprof`] but for the samples, which are profile `index`
/// of `samples` (the container's, wherever they are held):
/// [`ExperimentalAsPprof::reading`] converts them as they are read. Making
/// it reads every sample once, to check the indices each holds.
///
/// # Panics
/// When `samples` holds no sample list `index`.
pub fn container_as_pprof(
    container: &otlp::ProfileContainer,
    envelope: &Envelope,
    path: &str,
    (samples, index): (&ExperimentalSource, usize),
) -> Result<Converted<ExperimentalAsPprof>, BridgeError> {
    let p = profile_of(container, path)?;
    let mut cx = ToPprof {
        p,
        path,
        strings: StringInterner::new(p.string_table.clone()),
        warnings: Vec::new(),
    };
    let (mapping, mapping_ids, placeholder) = cx.mappings();
    let (function, function_ids) = cx.functions();
    let (location, location_ids) = cx.locations(&mapping_ids, placeholder, &function_ids)?;
    let mut stacks = StackTables::new(location_ids, &p.location_indices, (samples, index));
    let labels = cx.note_samples(&mut stacks, (samples, index))?;
    let header = cx.header(container, envelope);
    let profile = pprof::Profile {
        sample_type: p.sample_type.iter().map(value_type).collect(),
        mapping,
        location,
        function,
        drop_frames: p.drop_frames,
        keep_frames: p.keep_frames,
        time_nanos: header.time_nanos,
        duration_nanos: header.duration_nanos,
        period_type: p.period_type.as_ref().map(value_type).into(),
        period: p.period,
        comment: header.comments,
        default_sample_type: p.default_sample_type,
        doc_url: header.doc_url,
        string_table: cx.strings.table,
        ..Default::default()
    };
    Ok(Converted {
        value: ExperimentalAsPprof::new(profile, index, stacks, labels),
        warnings: cx.warnings,
    })
}

/// The container's profile, which pprof needs.
fn profile_of<'c>(
    container: &'c otlp::ProfileContainer,
    path: &str,
) -> Result<&'c otlp::Profile, BridgeError> {
    container
        .profile
        .as_ref()
        .ok_or_else(|| BridgeError::MissingProfile {
            path: path.to_string(),
        })
}

/// What converting one OTLP profile reads and grows.
struct ToPprof<'a> {
    p: &'a otlp::Profile,
    /// The container's path.
    path: &'a str,
    /// The OTLP string table, growing as attribute keys and values need entries.
    strings: StringInterner,
    warnings: Vec<BridgeWarning>,
}

/// The header fields OTLP keeps outside the profile, or not at all.
struct Header {
    time_nanos: i64,
    duration_nanos: i64,
    comments: Vec<i64>,
    doc_url: i64,
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

fn value_type(t: &otlp::ValueType) -> pprof::ValueType {
    pprof::ValueType {
        type_: t.type_,
        unit: t.unit,
        ..Default::default()
    }
}

impl ToPprof<'_> {
    fn warn(&mut self, at: String, message: String) {
        self.warnings.push(BridgeWarning { path: at, message });
    }

    /// The mappings without the placeholder that stands for "no mapping";
    /// each kept mapping's id by its OTLP position, and the placeholder's.
    fn mappings(&mut self) -> (Vec<pprof::Mapping>, HashMap<usize, u64>, Option<usize>) {
        let p = self.p;
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
        let mut id_at = HashMap::new();
        let mut mappings = Vec::with_capacity(real.len());
        for ((i, m), &id) in real.iter().zip(&mapping_ids) {
            id_at.insert(*i, id);
            if !m.attributes.is_empty() {
                let at = format!("{}.profile.mapping[{i}].attributes", self.path);
                self.warn(at, "pprof mappings have no attributes; dropped".into());
            }
            mappings.push(convert_mapping(m, id));
        }
        (mappings, id_at, placeholder)
    }

    fn functions(&self) -> (Vec<pprof::Function>, Vec<u64>) {
        let function_ids = ids(self.p.function.iter().map(|f| f.id));
        let functions = self
            .p
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
        (functions, function_ids)
    }

    fn locations(
        &mut self,
        mapping_id_at: &HashMap<usize, u64>,
        placeholder: Option<usize>,
        function_ids: &[u64],
    ) -> Result<(Vec<pprof::Location>, Vec<u64>), BridgeError> {
        let (p, path) = (self.p, self.path);
        let location_ids = ids(p.location.iter().map(|l| l.id));
        let mut locations = Vec::with_capacity(p.location.len());
        for (i, (l, &id)) in p.location.iter().zip(&location_ids).enumerate() {
            let at = |field: &str| format!("{path}.profile.location[{i}].{field}");
            let mapping_id = if p.mapping.is_empty()
                || Some(l.mapping_index as usize) == placeholder
            {
                0
            } else {
                *mapping_id_at
                    .get(&(l.mapping_index as usize))
                    .ok_or_else(|| unresolved(at("mapping_index"), "mapping", l.mapping_index))?
            };
            let mut lines = Vec::with_capacity(l.line.len());
            for (j, line) in l.line.iter().enumerate() {
                let function_id =
                    *function_ids
                        .get(line.function_index as usize)
                        .ok_or_else(|| {
                            let at = at(&format!("line[{j}].function_index"));
                            unresolved(at, "function", line.function_index)
                        })?;
                lines.push(pprof::Line {
                    function_id,
                    line: line.line,
                    column: line.column,
                    ..Default::default()
                });
            }
            self.location_warnings(l, &at);
            locations.push(pprof::Location {
                id,
                mapping_id,
                address: l.address,
                line: lines,
                is_folded: l.is_folded,
                ..Default::default()
            });
        }
        Ok((locations, location_ids))
    }

    /// What a location has that pprof's cannot hold.
    fn location_warnings(&mut self, l: &otlp::Location, at: &dyn Fn(&str) -> String) {
        if l.type_index != 0 {
            let frame_type = self.strings.string(i64::from(l.type_index)).to_string();
            self.warn(
                at("type_index"),
                format!("pprof has no frame type; {frame_type:?} dropped"),
            );
        }
        if !l.attributes.is_empty() {
            self.warn(
                at("attributes"),
                "pprof locations have no attributes; dropped".into(),
            );
        }
    }

    /// Reads every sample of profile `index` of `samples` once: checks its
    /// stack against `stacks`, converts the attribute and link entries it
    /// is the first to use (interning their strings), and warns of what
    /// pprof cannot hold. The labels the samples use, for reading them.
    fn note_samples(
        &mut self,
        stacks: &mut StackTables,
        (samples, index): (&ExperimentalSource, usize),
    ) -> Result<LabelTables, BridgeError> {
        let (p, path) = (self.p, self.path);
        let mut labels = SampleLabels::new(self);
        let mut sample = otlp::Sample::new();
        // The indices as the source holds them, so that an error names
        // the index as it is.
        let indices = match samples.index_table(index) {
            Some(table) => Indices::Table(table),
            None => Indices::Model(&p.location_indices),
        };
        let all_located = stacks.all_located(indices);
        for i in 0..samples.sample_count(index) {
            let s = samples.sample(index, i, &mut sample);
            let at = |field: &str| format!("{path}.profile.sample[{i}].{field}");
            let checked = stacks.check(s, (indices, all_located));
            checked.map_err(|miss| match miss {
                StackMiss::Location(pos) => unresolved(at("location"), "location", pos),
                StackMiss::SliceEnd(end) => {
                    unresolved(at("locations_length"), "location slice end", end)
                }
                StackMiss::Slice(start) => {
                    unresolved(at("locations_start_index"), "location_indices slice", start)
                }
            })?;
            labels.note(self, s, &at)?;
            stacks.note_slice(s, indices);
            if s.stacktrace_id_index != 0 {
                self.warn(
                    at("stacktrace_id_index"),
                    "pprof has no stack trace ids; dropped".into(),
                );
            }
        }
        Ok(labels.into_tables())
    }

    /// Time, duration, comments and doc URL: pprof's fields, and `otlp:`
    /// comments for what only OTLP has.
    fn header(&mut self, container: &otlp::ProfileContainer, envelope: &Envelope) -> Header {
        let (p, path) = (self.p, self.path);
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
        let mut writer = CommentWriter {
            strings: &mut self.strings,
            comments: p.comment.clone(),
            warnings: &mut self.warnings,
        };
        writer.add(key::PROFILE_ID, &otlp_comments::hex(&container.profile_id));
        if container.start_time_unix_nano != time_nanos.max(0) as u64 {
            writer.add(key::START_TIME, &container.start_time_unix_nano.to_string());
        }
        let derived_end = (time_nanos.max(0) as u64).saturating_add(duration_nanos.max(0) as u64);
        if container.end_time_unix_nano != derived_end {
            writer.add(key::END_TIME, &container.end_time_unix_nano.to_string());
        }
        write_temporality(&mut writer, p);
        write_envelope(&mut writer, envelope, path);
        let doc_url = write_container(&mut writer, container, path);
        Header {
            time_nanos,
            duration_nanos,
            comments: writer.comments,
            doc_url,
        }
    }
}

fn convert_mapping(m: &otlp::Mapping, id: u64) -> pprof::Mapping {
    pprof::Mapping {
        id,
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

/// Turns the attributes, link and timestamps samples hold into pprof
/// labels: each attribute and link entry converted once, when a first
/// sample uses it (see `samples`).
struct SampleLabels {
    units: HashMap<String, i64>,
    nanoseconds: i64,
    trace_key: i64,
    span_key: i64,
    timestamp_key: i64,
    /// By attribute index: `None` until a sample uses it, then its label
    /// (`None` when it makes none).
    by_attribute: Vec<Option<Option<pprof::Label>>>,
    /// By link index, when the profile has a link table.
    by_link: Option<Vec<Option<[pprof::Label; 2]>>>,
    /// Attribute value kinds already warned about (once each).
    warned_kinds: HashSet<&'static str>,
}

impl SampleLabels {
    fn new(cx: &mut ToPprof) -> Self {
        let strings = &mut cx.strings;
        let units =
            cx.p.attribute_units
                .iter()
                .map(|u| (strings.string(u.attribute_key).to_string(), u.unit))
                .collect();
        let links = cx.p.link_table.len();
        SampleLabels {
            units,
            nanoseconds: strings.intern(NANOSECONDS),
            trace_key: strings.intern(TRACE_ID_LABEL),
            span_key: strings.intern(SPAN_ID_LABEL),
            timestamp_key: strings.intern(TIMESTAMP_LABEL),
            by_attribute: vec![None; cx.p.attribute_table.len()],
            by_link: (links > 0).then(|| vec![None; links]),
            warned_kinds: HashSet::new(),
        }
    }

    /// Checks sample `s`'s attributes and link, converting the entries it
    /// is the first to use, in the order its labels list them.
    fn note(
        &mut self,
        cx: &mut ToPprof,
        s: &otlp::Sample,
        at: &dyn Fn(&str) -> String,
    ) -> Result<(), BridgeError> {
        for &a in &s.attributes {
            self.note_attribute(cx, a, at)?;
        }
        let Some(by_link) = &mut self.by_link else {
            return Ok(());
        };
        let slot = usize::try_from(s.link)
            .ok()
            .and_then(|l| by_link.get_mut(l))
            .ok_or_else(|| unresolved(at("link"), "link", s.link))?;
        if slot.is_none() {
            let link = &cx.p.link_table[s.link as usize];
            let mut label = |key, id: &[u8]| pprof::Label {
                key,
                str: cx.strings.intern(&otlp_comments::hex(id)),
                ..Default::default()
            };
            let trace = label(self.trace_key, &link.trace_id);
            *slot = Some([trace, label(self.span_key, &link.span_id)]);
        }
        Ok(())
    }

    fn note_attribute(
        &mut self,
        cx: &mut ToPprof,
        a: u64,
        at: &dyn Fn(&str) -> String,
    ) -> Result<(), BridgeError> {
        let slot = usize::try_from(a)
            .ok()
            .filter(|&a| a < self.by_attribute.len())
            .ok_or_else(|| unresolved(at("attributes"), "attribute", a))?;
        if self.by_attribute[slot].is_some() {
            return Ok(());
        }
        let kv = &cx.p.attribute_table[slot];
        // pprof labels need a key (pprof's own empty-key labels travel in
        // the deprecated Sample.label, not here): a fuzz finding.
        if kv.key.is_empty() {
            if self.warned_kinds.insert("empty-key") {
                cx.warn(
                    at("attributes"),
                    "an attribute with an empty key cannot be a pprof label: dropped".into(),
                );
            }
            self.by_attribute[slot] = Some(None);
            return Ok(());
        }
        let key = cx.strings.intern(&kv.key);
        let l = match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
            Some(Value::StringValue(v)) => pprof::Label {
                key,
                // An empty value still makes a string label (a fuzz finding).
                str: cx.strings.intern_label_value(v),
                ..Default::default()
            },
            Some(Value::IntValue(v)) => pprof::Label {
                key,
                num: *v,
                num_unit: self.units.get(&kv.key).copied().unwrap_or(0),
                ..Default::default()
            },
            other => {
                let (text, kind) = stringify(other);
                if self.warned_kinds.insert(kind) {
                    cx.warn(at("attributes"), format!("pprof labels hold strings and integers; {kind} attribute values become string labels"));
                }
                pprof::Label {
                    key,
                    str: cx.strings.intern(&text),
                    ..Default::default()
                }
            }
        };
        self.by_attribute[slot] = Some(Some(l));
        Ok(())
    }

    /// What reading the samples needs of these.
    fn into_tables(self) -> LabelTables {
        LabelTables {
            attributes: self.by_attribute.into_iter().map(Option::flatten).collect(),
            links: self.by_link,
            timestamp_key: self.timestamp_key,
            nanoseconds: self.nanoseconds,
        }
    }
}

/// Temporality: said only when it differs from what the rules infer.
fn write_temporality(writer: &mut CommentWriter, p: &otlp::Profile) {
    let named = |t: &otlp::ValueType| temporality_name(t.aggregation_temporality.value());
    let inferred = |t: &otlp::ValueType| {
        temporality::for_sample_type(p.string(t.type_)) as i32 == t.aggregation_temporality.value()
    };
    if !p.sample_type.iter().all(inferred) {
        let list: Vec<&str> = p.sample_type.iter().map(named).collect();
        writer.add(key::TEMPORALITY, &list.join(","));
    }
    if let Some(t) = p.period_type.as_ref().filter(|t| !inferred(t)) {
        writer.add(key::PERIOD_TEMPORALITY, named(t));
    }
}

/// The resource and scope, with their schema URLs.
fn write_envelope(writer: &mut CommentWriter, envelope: &Envelope, path: &str) {
    if let Some(resource) = envelope.resource.as_ref() {
        let at = format!("{path}.resource");
        writer.attributes(key::RESOURCE_ATTRIBUTE, &resource.attributes, &at);
        if resource.dropped_attributes_count != 0 {
            let count = resource.dropped_attributes_count.to_string();
            writer.add(key::RESOURCE_DROPPED, &count);
        }
    }
    if !envelope.resource_schema_url.is_empty() {
        writer.add(key::RESOURCE_SCHEMA_URL, &envelope.resource_schema_url);
    }
    if let Some(scope) = envelope.scope.as_ref() {
        writer.add(key::SCOPE_NAME, &scope.name);
        writer.add(key::SCOPE_VERSION, &scope.version);
        writer.attributes(
            key::SCOPE_ATTRIBUTE,
            &scope.attributes,
            &format!("{path}.scope"),
        );
        if scope.dropped_attributes_count != 0 {
            writer.add(
                key::SCOPE_DROPPED,
                &scope.dropped_attributes_count.to_string(),
            );
        }
    }
    if !envelope.scope_schema_url.is_empty() {
        writer.add(key::SCOPE_SCHEMA_URL, &envelope.scope_schema_url);
    }
}

/// The container's attributes (the first string `pprof.doc_url` becomes
/// pprof's doc URL, whose string index is returned) and dropped count; a
/// payload is dropped with a warning.
fn write_container(
    writer: &mut CommentWriter,
    container: &otlp::ProfileContainer,
    path: &str,
) -> i64 {
    let mut doc_url = 0;
    let mut others = Vec::new();
    for kv in &container.attributes {
        match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
            Some(Value::StringValue(url)) if kv.key == DOC_URL_ATTRIBUTE && doc_url == 0 => {
                doc_url = writer.strings.intern(url)
            }
            _ => others.push(kv.clone()),
        }
    }
    writer.attributes(key::CONTAINER_ATTRIBUTE, &others, path);
    if container.dropped_attributes_count != 0 {
        let count = container.dropped_attributes_count.to_string();
        writer.add(key::CONTAINER_DROPPED, &count);
    }
    if !container.original_payload.is_empty() {
        writer.warnings.push(BridgeWarning {
            path: format!("{path}.original_payload"),
            message: format!(
                "the original payload ({} bytes, format {:?}) has no place in pprof; dropped",
                container.original_payload.len(),
                container.original_payload_format
            ),
        });
    }
    doc_url
}

/// Text for attribute values pprof labels cannot hold, and their kind.
fn stringify(value: Option<&Value>) -> (String, &'static str) {
    match value {
        None => (String::new(), "empty"),
        Some(Value::BoolValue(b)) => (b.to_string(), "bool"),
        Some(Value::DoubleValue(d)) => (format!("{d:?}"), "double"),
        Some(Value::BytesValue(b)) => (otlp_comments::hex(b), "bytes"),
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
