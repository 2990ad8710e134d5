//! pprof -> OTLP Profiles v1experimental. See docs/pprof-bridge.md.
//!
//! Laid out as pprof's `merge.go` is: a context ([`ToOtlp`]) that holds what
//! every table's conversion reads, and one method per table (mappings,
//! functions, locations, samples, sample types, container, envelope).

use protobuf::{EnumOrUnknown, Message, MessageField};
use protoprof_model_meta::{IdIndex, StringTable};
use protoprof_model_otlp::opentelemetry::proto::common::v1::{
    any_value::Value, AnyValue, InstrumentationScope, KeyValue,
};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental as otlp;
use protoprof_model_otlp::opentelemetry::proto::resource::v1::Resource;
use protoprof_model_pprof::perftools::profiles as pprof;
use protoprof_model_pprof::samples::ProfileSamples;
use sha2::{Digest, Sha256};

use crate::envelope::Envelope;
use crate::error::{unresolved, BridgeError};
use crate::experimental::records::{OtlpEncoding, SampleRecords};
use crate::experimental::stacks;
use crate::labels::{convert_labels, LabelContext, Link, LABELS};
use crate::names::{DOC_URL_ATTRIBUTE, NO_MAPPING_ATTRIBUTE};
use crate::otlp_comments::{key_value, read_comments, Restored};
use crate::tables::{id_positions, AttrValue, AttributeTable, LinkTable};
use crate::temporality;

/// How the profile id is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProfileId {
    /// 16 random bytes (or the id an `otlp:profile_id` comment carries).
    #[default]
    Random,
    /// The first 16 bytes of SHA-256 of the encoded pprof: the same profile
    /// always gets the same id.
    ContentHash,
    /// These bytes.
    Fixed([u8; 16]),
}

/// Options of [`pprof_to_otlp`].
#[derive(Debug, Clone)]
pub struct ToOtlpOptions {
    /// Resource attributes, e.g. `service.name`; they win over attributes
    /// restored from `otlp:` comments.
    pub resource_attributes: Vec<KeyValue>,
    /// `InstrumentationScope.name` (unless `otlp:` comments restore a scope).
    pub scope_name: String,
    /// `InstrumentationScope.version` (likewise).
    pub scope_version: String,
    /// How the profile id is chosen.
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
    Ok(pprof_to_otlp_encoding(source, options)?.to_bytes())
}

/// [`pprof_to_otlp_bytes`] before it is written: an [`OtlpEncoding`] that
/// no longer needs `source`, written to any `io::Write` without the whole
/// encoding in memory.
///
/// ```
/// # use protoprof_model_pprof::perftools::profiles::Profile;
/// use protoprof_pprof_bridge::pprof_to_otlp_encoding;
///
/// let encoding = pprof_to_otlp_encoding(&Profile::new(), &Default::default()).unwrap();
/// let mut written = Vec::new();
/// encoding.write_to(&mut written).unwrap();
/// assert_eq!(written.len(), encoding.len());
/// ```
pub fn pprof_to_otlp_encoding<S: ProfileSamples>(
    source: &S,
    options: &ToOtlpOptions,
) -> Result<OtlpEncoding, BridgeError> {
    let (container, envelope, samples) = convert(source, options)?;
    let encoded_samples = samples.encode(source);
    drop(samples);
    Ok(OtlpEncoding::new(
        envelope.wrap(vec![container]),
        encoded_samples,
    ))
}

/// The container (its profile without samples), its envelope, and the
/// converted samples.
fn convert<S: ProfileSamples>(
    source: &S,
    options: &ToOtlpOptions,
) -> Result<(otlp::ProfileContainer, Envelope, SampleRecords), BridgeError> {
    let mut cx = ToOtlp::new(source, options);
    let (mapping, mapping_pos, no_mapping) = cx.mappings()?;
    let (function, function_pos) = cx.functions()?;
    let (location, location_pos) = cx.locations(&mapping_pos, no_mapping, &function_pos)?;
    let labels = LabelContext::new(source);
    let (records, stacks, links) = cx.samples(&labels, &location_pos)?;
    let p = cx.p;
    let profile = otlp::Profile {
        sample_type: cx.sample_types(),
        mapping,
        location,
        location_indices: stacks.into_indices(),
        function,
        attribute_units: labels.units.attribute_units(),
        attribute_table: std::mem::take(&mut cx.attributes.table),
        link_table: links.table,
        string_table: p.string_table.clone(),
        drop_frames: p.drop_frames,
        keep_frames: p.keep_frames,
        time_nanos: p.time_nanos,
        duration_nanos: p.duration_nanos,
        period_type: cx.period_type().into(),
        period: p.period,
        comment: std::mem::take(&mut cx.comments),
        default_sample_type: p.default_sample_type,
        ..Default::default()
    };
    let container = cx.container(profile);
    Ok((container, cx.envelope(), records))
}

/// What converting one pprof profile reads from every table's conversion.
struct ToOtlp<'a, S> {
    source: &'a S,
    p: &'a pprof::Profile,
    options: &'a ToOtlpOptions,
    /// The profile's comments but the `otlp:` ones, and what those restore.
    comments: Vec<i64>,
    restored: Restored,
    attributes: AttributeTable,
}

/// A table's id -> position lookup.
type Positions = IdIndex<u32>;

impl<'a, S: ProfileSamples> ToOtlp<'a, S> {
    fn new(source: &'a S, options: &'a ToOtlpOptions) -> Self {
        let p = source.profile();
        let (comments, restored) = read_comments(&p.comment, |i| p.string(i));
        ToOtlp {
            source,
            p,
            options,
            comments,
            restored,
            attributes: AttributeTable::default(),
        }
    }

    /// The mappings, and the placeholder that stands for "no mapping" next
    /// to real ones (its position, or 0 when there is none).
    fn mappings(&mut self) -> Result<(Vec<otlp::Mapping>, Positions, u64), BridgeError> {
        let p = self.p;
        let positions = id_positions(p.mapping.iter().map(|m| m.id), "mapping")?;
        let mut mappings: Vec<otlp::Mapping> = p.mapping.iter().map(convert_mapping).collect();
        if p.mapping.is_empty() || p.location.iter().all(|l| l.mapping_id != 0) {
            return Ok((mappings, positions, 0));
        }
        let marker = self.attributes.intern(
            -1,
            NO_MAPPING_ATTRIBUTE,
            AttrValue::Bool(true),
            &p.string_table,
        );
        // Its deprecated id is a fresh one: ids are all set or all unset.
        let id = p.mapping.iter().map(|m| m.id).max().unwrap_or(0) + 1;
        mappings.push(otlp::Mapping {
            id,
            attributes: vec![marker],
            ..Default::default()
        });
        let placeholder = mappings.len() as u64 - 1;
        Ok((mappings, positions, placeholder))
    }

    fn functions(&self) -> Result<(Vec<otlp::Function>, Positions), BridgeError> {
        let positions = id_positions(self.p.function.iter().map(|f| f.id), "function")?;
        Ok((
            self.p.function.iter().map(convert_function).collect(),
            positions,
        ))
    }

    fn locations(
        &self,
        mapping_pos: &Positions,
        no_mapping: u64,
        function_pos: &Positions,
    ) -> Result<(Vec<otlp::Location>, Positions), BridgeError> {
        let p = self.p;
        let positions = id_positions(p.location.iter().map(|l| l.id), "location")?;
        let mut locations = Vec::with_capacity(p.location.len());
        for (i, l) in p.location.iter().enumerate() {
            let mapping_index = match l.mapping_id {
                0 => no_mapping,
                id => mapping_pos
                    .get(id)
                    .ok_or_else(|| unresolved(format!("location[{i}].mapping_id"), "mapping", id))?
                    .into(),
            };
            locations.push(otlp::Location {
                id: l.id,
                mapping_index,
                address: l.address,
                line: convert_lines(i, &l.line, function_pos)?,
                is_folded: l.is_folded,
                ..Default::default()
            });
        }
        Ok((locations, positions))
    }

    /// Every sample: labels into attributes, timestamps and links on this
    /// thread while stacks are interned on a second one (for large
    /// profiles; this thread then interns from the other end).
    fn samples(
        &mut self,
        labels: &LabelContext,
        location_pos: &Positions,
    ) -> Result<(SampleRecords, crate::tables::StackTable, LinkTable), BridgeError> {
        let source = self.source;
        let ((mut records, linked), stacks) =
            stacks::intern_beside(source, location_pos, || self.sample_labels(labels));
        let (slots, stacks) = stacks?;
        records.set_slots(slots);
        let links = self.links(labels, &mut records, linked);
        Ok((records, stacks, links))
    }

    /// Each sample's labels as attributes and timestamps, and the samples
    /// that carry a trace link, by index (most profiles have none).
    fn sample_labels(&mut self, labels: &LabelContext) -> (SampleRecords, Vec<(usize, Link)>) {
        let source = self.source;
        let keep_labels = self.options.keep_labels;
        let mut records = SampleRecords::with_capacity(source.sample_count());
        let mut linked = Vec::new();
        let mut buffer = pprof::Sample::new();
        for i in 0..source.sample_count() {
            let s = source.sample_fields(i, LABELS, &mut buffer);
            let attributes = &mut self.attributes;
            let link = records.push(
                |values, timestamps| match keep_labels {
                    true => None,
                    false => convert_labels(s, labels, attributes, values, timestamps, true),
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
        (records, linked)
    }

    /// The link table. A link index of 0 means link_table[0] whenever the
    /// table is not empty, so samples can only use links if every one of
    /// them has one; otherwise trace_id and span_id stay attributes.
    fn links(
        &mut self,
        labels: &LabelContext,
        records: &mut SampleRecords,
        linked: Vec<(usize, Link)>,
    ) -> LinkTable {
        let mut links = LinkTable::default();
        let sample_count = self.source.sample_count();
        if sample_count > 0 && linked.len() == sample_count {
            let indices = linked.into_iter().map(|(_, link)| links.intern(link));
            records.set_links(indices.collect());
            return links;
        }
        let mut buffer = pprof::Sample::new();
        for (i, _) in linked {
            let s = self.source.sample_fields(i, LABELS, &mut buffer);
            let attributes = &mut self.attributes;
            records
                .rewrite(i, |values, timestamps| {
                    convert_labels(s, labels, attributes, values, timestamps, false)
                })
                .expect("representable before");
        }
        links
    }

    /// A sample type's temporality: forced, restored, or by the rules.
    fn temporality(
        &self,
        type_index: i64,
        position: Option<usize>,
    ) -> EnumOrUnknown<otlp::AggregationTemporality> {
        let restored = position.and_then(|i| self.restored.temporality.get(i).copied().flatten());
        let value = self
            .options
            .temporality
            .or(restored)
            .unwrap_or_else(|| temporality::for_sample_type(self.p.string(type_index)));
        value.into()
    }

    fn sample_types(&self) -> Vec<otlp::ValueType> {
        let types = self.p.sample_type.iter().enumerate();
        types
            .map(|(i, t)| otlp::ValueType {
                type_: t.type_,
                unit: t.unit,
                aggregation_temporality: self.temporality(t.type_, Some(i)),
                ..Default::default()
            })
            .collect()
    }

    fn period_type(&self) -> Option<otlp::ValueType> {
        let forced = self.options.temporality;
        self.p.period_type.as_ref().map(|t| otlp::ValueType {
            type_: t.type_,
            unit: t.unit,
            aggregation_temporality: match (forced, self.restored.period_temporality) {
                (Some(forced), _) => forced.into(),
                (None, Some(restored)) => restored.into(),
                (None, None) => self.temporality(t.type_, None),
            },
            ..Default::default()
        })
    }

    /// The container around `profile`: id, times, attributes, payload.
    fn container(&mut self, profile: otlp::Profile) -> otlp::ProfileContainer {
        let (p, restored) = (self.p, &mut self.restored);
        let start = restored.start.unwrap_or(p.time_nanos.max(0) as u64);
        let end = restored
            .end
            .unwrap_or(start.saturating_add(p.duration_nanos.max(0) as u64));
        let mut attributes = std::mem::take(&mut restored.container_attributes);
        if p.doc_url != 0 {
            attributes.push(key_value(
                DOC_URL_ATTRIBUTE,
                string_value(p.string(p.doc_url)),
            ));
        }
        let profile_id = match (self.options.profile_id, restored.profile_id.take()) {
            (ProfileId::Fixed(id), _) => id.to_vec(),
            (ProfileId::ContentHash, _) => content_hash(self.source),
            (ProfileId::Random, Some(id)) => id,
            (ProfileId::Random, None) => random_id(),
        };
        let (original_payload_format, original_payload) = match &self.options.original_payload {
            Some(bytes) => ("pprof".to_string(), bytes.clone()),
            None => (String::new(), Vec::new()),
        };
        otlp::ProfileContainer {
            profile_id,
            start_time_unix_nano: start,
            end_time_unix_nano: end,
            attributes,
            dropped_attributes_count: restored.container_dropped,
            original_payload_format,
            original_payload,
            profile: MessageField::some(profile),
            ..Default::default()
        }
    }

    /// The resource and scope: restored from `otlp:` comments, with the
    /// options' resource attributes winning.
    fn envelope(self) -> Envelope {
        let (restored, options) = (self.restored, self.options);
        let mut resource_attributes = restored.resource_attributes;
        for kv in &options.resource_attributes {
            resource_attributes.retain(|existing| existing.key != kv.key);
            resource_attributes.push(kv.clone());
        }
        let scope = restored.scope.unwrap_or_else(|| InstrumentationScope {
            name: options.scope_name.clone(),
            version: options.scope_version.clone(),
            ..Default::default()
        });
        Envelope {
            resource: MessageField::some(Resource {
                attributes: resource_attributes,
                dropped_attributes_count: restored.resource_dropped,
                ..Default::default()
            }),
            resource_schema_url: restored.resource_schema_url,
            scope: MessageField::some(scope),
            scope_schema_url: restored.scope_schema_url,
        }
    }
}

/// A location's lines, with function ids turned into positions.
fn convert_lines(
    location: usize,
    lines: &[pprof::Line],
    function_pos: &Positions,
) -> Result<Vec<otlp::Line>, BridgeError> {
    let mut out = Vec::with_capacity(lines.len());
    for (j, line) in lines.iter().enumerate() {
        let f = function_pos.get(line.function_id).ok_or_else(|| {
            unresolved(
                format!("location[{location}].line[{j}].function_id"),
                "function",
                line.function_id,
            )
        })?;
        out.push(otlp::Line {
            function_index: f.into(),
            line: line.line,
            column: line.column,
            ..Default::default()
        });
    }
    Ok(out)
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
pub(crate) fn content_hash<S: ProfileSamples>(source: &S) -> Vec<u8> {
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

pub(crate) fn random_id() -> Vec<u8> {
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
