//! pprof -> OTLP Profiles v1development (v1.10/v1.11). See
//! docs/pprof-bridge.md.
//!
//! One Profile per pprof sample type, all sharing one dictionary: sample i
//! of every Profile is pprof's sample i (same stack, attributes and link),
//! holding that type's value. What pprof has and OTLP has no field for goes
//! into the `pprof.*` attributes of the semantic conventions
//! ([`crate::names::semconv`]); `otlp:` comments (written by v1development
//! -> pprof) restore the envelope. Laid out as `to_otlp.rs`: a context and
//! one method per table.

use protobuf::{Message, MessageField};
use protoprof_model_meta::{Fields, StringTable};
use protoprof_model_otlp::opentelemetry::proto::common::v1::{
    any_value::Value, AnyValue, ArrayValue, InstrumentationScope, KeyValue, KeyValueList,
};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development as dev;
use protoprof_model_otlp::opentelemetry::proto::resource::v1::Resource;
use protoprof_model_pprof::fields::perftools::profiles::sample as pprof_sample;
use protoprof_model_pprof::perftools::profiles as pprof;
use protoprof_model_pprof::samples::ProfileSamples;
use rustc_hash::FxHashMap;
use sha2::{Digest, Sha256};

use crate::development::attributes::{AttributeTable, AttributeValue};
use crate::development::encoding::{DevelopmentEncoding, LeftOut};
use crate::development::key_numbering::{batches, KeyBatch};
use crate::development::records::{label_key, LabelKeyBuffers, SampleShapes};
use crate::development::stacks::{self, Locations};
use crate::error::{unresolved, BridgeError, BridgeWarning, Converted};
use crate::experimental::to_otlp::{content_hash, random_id};
use crate::interner::StringInterner;
use crate::names::{semconv, SPAN_ID_LABEL, TRACE_ID_LABEL};
use crate::otlp_comments::{self, key_value, read_comments, Restored};
use crate::tables::id_positions;
use crate::ProfileId;

const LABELS: Fields = Fields::only(&[pprof_sample::LABEL]);

/// The dictionary's string 0, "": the interner starts from it.
const EMPTY_STRING: i32 = 0;

/// Options of [`pprof_to_development`].
#[derive(Debug, Clone)]
pub struct ToDevelopmentOptions {
    /// Resource attributes, e.g. `service.name`; they win over attributes
    /// restored from `otlp:` comments.
    pub resource_attributes: Vec<KeyValue>,
    /// `InstrumentationScope.name` (unless `otlp:` comments restore a scope).
    pub scope_name: String,
    /// `InstrumentationScope.version` (likewise).
    pub scope_version: String,
    /// How the first Profile's id is chosen; Profile k > 0 gets the first 16
    /// bytes of SHA-256 of that id and k.
    pub profile_id: ProfileId,
}

impl Default for ToDevelopmentOptions {
    fn default() -> Self {
        ToDevelopmentOptions {
            resource_attributes: Vec::new(),
            scope_name: "protoprof".into(),
            scope_version: env!("CARGO_PKG_VERSION").into(),
            profile_id: ProfileId::default(),
        }
    }
}

/// Converts a pprof profile into v1development `ProfilesData`: one
/// resource, one scope, one Profile per sample type, one dictionary.
/// `source` is the decoded model or the codec's `PprofView`. The warnings
/// name what `otlp:` comments (from v1experimental) carried that
/// v1development has no place for.
pub fn pprof_to_development<S: ProfileSamples>(
    source: &S,
    options: &ToDevelopmentOptions,
) -> Result<Converted<dev::ProfilesData>, BridgeError> {
    let (mut value, left_out, warnings) = convert(source, options, false)?;
    let LeftOut {
        shapes, attributes, ..
    } = left_out;
    let dictionary = value.dictionary.mut_or_insert_default();
    dictionary.attribute_table = attributes.messages();
    dictionary.stack_table = shapes.stack_messages(source);
    let profiles = &mut value.resource_profiles[0].scope_profiles[0].profiles;
    shapes.into_models(source, profiles);
    Ok(Converted { value, warnings })
}

/// [`pprof_to_development`] encoded: the same bytes as its message's
/// encoding, written straight from the converted tables, with no `Sample`
/// message per sample and Profile (much faster on large profiles, and a
/// fraction of the memory).
pub fn pprof_to_development_bytes<S: ProfileSamples>(
    source: &S,
    options: &ToDevelopmentOptions,
) -> Result<Converted<Vec<u8>>, BridgeError> {
    let Converted { value, warnings } = pprof_to_development_encoding(source, options)?;
    Ok(Converted {
        value: value.to_bytes(),
        warnings,
    })
}

/// [`pprof_to_development_bytes`] before it is written: the converted
/// tables, to be written to a file or any other `io::Write`
/// ([`DevelopmentEncoding::write_to`]) without holding the encoding. The
/// samples' values and the stacks are read from `source` again as they are
/// written, so it holds no copy of them either.
///
/// ```
/// # use protoprof_model_pprof::perftools::profiles::Profile;
/// use protoprof_pprof_bridge::pprof_to_development_encoding;
///
/// let profile = Profile::new();
/// let options = Default::default();
/// let encoding = pprof_to_development_encoding(&profile, &options).unwrap().value;
/// let mut written = Vec::new();
/// encoding.write_to(&mut written).unwrap();
/// assert_eq!(written.len(), encoding.len());
/// ```
pub fn pprof_to_development_encoding<'s, S: ProfileSamples>(
    source: &'s S,
    options: &ToDevelopmentOptions,
) -> Result<Converted<DevelopmentEncoding<'s, S>>, BridgeError> {
    let (data, left_out, warnings) = convert(source, options, true)?;
    let value = DevelopmentEncoding::new(data, left_out, source);
    Ok(Converted { value, warnings })
}

/// The dictionary's mapping, location and function tables (its fields 1
/// to 3), encoded and taken out: with the rest encoded after them, the
/// bytes of the whole dictionary.
fn take_first_tables(dictionary: &mut dev::ProfilesDictionary) -> Vec<u8> {
    let tables = dev::ProfilesDictionary {
        mapping_table: std::mem::take(&mut dictionary.mapping_table),
        location_table: std::mem::take(&mut dictionary.location_table),
        function_table: std::mem::take(&mut dictionary.function_table),
        ..Default::default()
    };
    tables.write_to_bytes().expect("OTLP encodes")
}

/// The converted message with its Profiles' samples, its stack table and
/// its attribute table left out (and its first tables, with
/// `encode_first_tables`), what was left out, and the warnings.
fn convert<S: ProfileSamples>(
    source: &S,
    options: &ToDevelopmentOptions,
    encode_first_tables: bool,
) -> Result<(dev::ProfilesData, LeftOut, Vec<BridgeWarning>), BridgeError> {
    let p = source.profile();
    let (comments, restored) = read_comments(&p.comment, |i| p.string(i));
    let warnings = unheld(&restored);
    let mut cx = ToDevelopment {
        p,
        strings: StringInterner::new(vec![String::new()]),
        pprof_strings: vec![-1; p.string_table.len()],
        attributes: AttributeTable::default(),
        dictionary: dev::ProfilesDictionary::default(),
        label_keys: Vec::new(),
    };
    let (first_tables, shapes) = cx.tables_and_samples(source, encode_first_tables)?;
    let profiles = cx.profiles(source, &comments, &restored, options);
    let scope_profiles = dev::ScopeProfiles {
        scope: MessageField::some(cx.scope(&restored, options)),
        schema_url: restored.scope_schema_url.clone(),
        profiles,
        ..Default::default()
    };
    let mut dictionary = cx.dictionary;
    dictionary.string_table = cx.strings.table;
    let value = dev::ProfilesData {
        resource_profiles: vec![dev::ResourceProfiles {
            resource: resource(
                restored.resource_attributes,
                restored.resource_dropped,
                options,
            ),
            schema_url: restored.resource_schema_url,
            scope_profiles: vec![scope_profiles],
            ..Default::default()
        }],
        dictionary: MessageField::some(dictionary),
        ..Default::default()
    };
    let left_out = LeftOut {
        shapes,
        attributes: cx.attributes,
        first_tables,
    };
    Ok((value, left_out, warnings))
}

/// What `otlp:` comments restore that v1development cannot hold: the
/// aggregation temporalities of v1experimental.
fn unheld(restored: &Restored) -> Vec<BridgeWarning> {
    let temporalities = restored.temporality.iter().flatten().count()
        + usize::from(restored.period_temporality.is_some());
    match temporalities {
        0 => Vec::new(),
        n => vec![BridgeWarning {
            path: "comment".into(),
            message: format!(
                "{n} aggregation temporalities (otlp: comments from v1experimental) dropped: \
                 v1development has no field for them"
            ),
        }],
    }
}

struct ToDevelopment<'a> {
    p: &'a pprof::Profile,
    strings: StringInterner,
    /// The dictionary index of each pprof string once looked up (-1: not yet).
    pprof_strings: Vec<i32>,
    attributes: AttributeTable,
    dictionary: dev::ProfilesDictionary,
    /// A sample's label keys, reused from label set to label set.
    label_keys: Vec<i64>,
}

impl ToDevelopment<'_> {
    fn intern(&mut self, s: &str) -> i32 {
        to_index(self.strings.intern(s))
    }

    /// The dictionary index of pprof string `index` (looked up once: labels
    /// ask for the same few keys and units again and again).
    fn pprof_string(&mut self, index: i64) -> i32 {
        let slot = usize::try_from(index)
            .ok()
            .filter(|&i| i < self.pprof_strings.len());
        if let Some(known) = slot.map(|i| self.pprof_strings[i]).filter(|&k| k >= 0) {
            return known;
        }
        let interned = to_index(self.strings.intern(self.p.string(index)));
        if let Some(i) = slot {
            self.pprof_strings[i] = interned;
        }
        interned
    }

    fn attribute(&mut self, key: &str, value: AnyValue, unit: &str) -> i32 {
        let (key, unit) = (self.intern(key), self.intern(unit));
        self.attributes
            .intern(key, &AttributeValue::Any(value), unit)
    }

    fn flag(&mut self, key: &str) -> i32 {
        self.attribute(key, any(Value::BoolValue(true)), "")
    }

    /// Mapping i becomes dictionary entry i + 1 (0 is the zero value).
    fn mappings(&mut self) {
        let p = self.p;
        let mut table = vec![dev::Mapping::default()];
        for m in &p.mapping {
            let mut attribute_indices = Vec::new();
            let build_id = p.string(m.build_id);
            if !build_id.is_empty() {
                let key = match otlp_comments::unhex(build_id) {
                    Some(_) => semconv::BUILD_ID_GNU,
                    None => semconv::BUILD_ID_GO,
                };
                attribute_indices.push(self.attribute(key, string_value(build_id), ""));
            }
            for (set, key) in [
                (m.has_functions, semconv::HAS_FUNCTIONS),
                (m.has_filenames, semconv::HAS_FILENAMES),
                (m.has_line_numbers, semconv::HAS_LINE_NUMBERS),
                (m.has_inline_frames, semconv::HAS_INLINE_FRAMES),
            ] {
                if set {
                    attribute_indices.push(self.flag(key));
                }
            }
            table.push(dev::Mapping {
                memory_start: m.memory_start,
                memory_limit: m.memory_limit,
                file_offset: m.file_offset,
                filename_strindex: self.pprof_string(m.filename),
                attribute_indices,
                ..Default::default()
            });
        }
        self.dictionary.mapping_table = table;
    }

    fn functions(&mut self) {
        let p = self.p;
        let mut table = vec![dev::Function::default()];
        for f in &p.function {
            table.push(dev::Function {
                name_strindex: self.pprof_string(f.name),
                system_name_strindex: self.pprof_string(f.system_name),
                filename_strindex: self.pprof_string(f.filename),
                // OTLP's line numbers are >= 0; the pprof value is kept
                // in `pprof.profile.negative_start_lines`.
                start_line: f.start_line.max(0),
                ..Default::default()
            });
        }
        self.dictionary.function_table = table;
    }

    fn locations(&mut self) -> Result<(), BridgeError> {
        let p = self.p;
        let mappings = id_positions(p.mapping.iter().map(|m| m.id), "mapping")?;
        let functions = id_positions(p.function.iter().map(|f| f.id), "function")?;
        let mut table = vec![dev::Location::default()];
        for (i, l) in p.location.iter().enumerate() {
            let mapping_index = match l.mapping_id {
                0 => 0,
                id => mappings.get(id).map(|pos| pos as i32 + 1).ok_or_else(|| {
                    unresolved(format!("location[{i}].mapping_id"), "mapping", id)
                })?,
            };
            let mut lines = Vec::with_capacity(l.line.len());
            for (j, line) in l.line.iter().enumerate() {
                let function_index = match line.function_id {
                    0 => 0,
                    id => functions.get(id).map(|pos| pos as i32 + 1).ok_or_else(|| {
                        let at = format!("location[{i}].line[{j}].function_id");
                        unresolved(at, "function", id)
                    })?,
                };
                lines.push(dev::Line {
                    function_index,
                    line: line.line.max(0),
                    column: line.column.max(0),
                    ..Default::default()
                });
            }
            let attribute_indices = match l.is_folded {
                true => vec![self.flag(semconv::IS_FOLDED)],
                false => Vec::new(),
            };
            table.push(dev::Location {
                mapping_index,
                address: l.address,
                lines,
                attribute_indices,
                ..Default::default()
            });
        }
        self.dictionary.location_table = table;
        Ok(())
    }

    /// The tables, and every sample's stack, attributes and link (shared
    /// by every Profile): tables and labels on this thread, stacks beside
    /// them (`stacks.rs`), which need only the location ids.
    /// The first tables are encoded when `encode_first_tables`.
    fn tables_and_samples<S: ProfileSamples>(
        &mut self,
        source: &S,
        encode_first_tables: bool,
    ) -> Result<(Option<Vec<u8>>, SampleShapes), BridgeError> {
        let tables = |cx: &mut Self| -> Result<_, BridgeError> {
            cx.mappings();
            cx.functions();
            cx.locations()?;
            let first_tables = encode_first_tables.then(|| take_first_tables(&mut cx.dictionary));
            Ok((first_tables, cx.label_sets(source)))
        };
        // The tables' errors come first, as when stacks were numbered after.
        let (tables, stacks) = match Locations::new(&self.p.location) {
            Ok(locations) => stacks::number_beside(source, locations, || tables(self)),
            Err(error) => (tables(self), Err(error)),
        };
        let (first_tables, mut shapes) = tables?;
        shapes.set_stacks(stacks?);
        Ok((first_tables, shapes))
    }

    /// Every sample's label set: its attributes and link.
    fn label_sets<S: ProfileSamples>(&mut self, source: &S) -> SampleShapes {
        let p = self.p;
        let mut links: FxHashMap<(Vec<u8>, Vec<u8>), i32> = FxHashMap::default();
        self.dictionary.link_table = vec![dev::Link {
            trace_id: vec![0; 16],
            span_id: vec![0; 8],
            ..Default::default()
        }];
        let mut shapes = SampleShapes::with_capacity(source.sample_count(), p.sample_type.len());
        let mut labels = pprof::Sample::new();
        let (mut key, mut other) = (LabelKeyBuffers::default(), LabelKeyBuffers::default());
        let input_key = |i| source.field_run(i, pprof_sample::LABEL);
        for samples in batches(source.sample_count()) {
            let batch = KeyBatch::read(shapes.set_keys(), samples, input_key);
            for (i, found) in batch.iter() {
                let found = found.unwrap_or_else(|| {
                    let key = label_key(source, i, &mut key);
                    (key, shapes.set_keys().hash(key))
                });
                let same = |first: usize, key: &[u8]| label_key(source, first, &mut other) == key;
                shapes.push(found, same, |attributes| {
                    let labels = &source.sample_fields(i, LABELS, &mut labels).label;
                    let link = trace_link(p, labels);
                    let linked = link.is_some();
                    self.label_attributes(labels, linked, attributes);
                    link.map_or(0, |ids| self.link(&mut links, ids))
                });
            }
        }
        shapes
    }

    /// The link table's index of a trace link, added when new.
    fn link(
        &mut self,
        links: &mut FxHashMap<(Vec<u8>, Vec<u8>), i32>,
        ids: (Vec<u8>, Vec<u8>),
    ) -> i32 {
        let table = &mut self.dictionary.link_table;
        *links.entry(ids.clone()).or_insert_with(|| {
            table.push(dev::Link {
                trace_id: ids.0,
                span_id: ids.1,
                ..Default::default()
            });
            table.len() as i32 - 1
        })
    }

    /// A sample's labels as attributes, one per key (keys compared as
    /// strings), appended to `out`: a key's only label as a string or a
    /// number with its unit, a key that repeats as an array of its values.
    /// The trace_id and span_id labels a link carries are left out.
    fn label_attributes(&mut self, labels: &[pprof::Label], linked: bool, out: &mut Vec<i32>) {
        let p = self.p;
        let mut keys = std::mem::take(&mut self.label_keys);
        keys.clear();
        for l in labels {
            let key = p.string(l.key);
            if !(linked && (key == TRACE_ID_LABEL || key == SPAN_ID_LABEL))
                && !keys.iter().any(|&k| p.string(k) == key)
            {
                keys.push(l.key);
            }
        }
        for &key_index in &keys {
            let key = p.string(key_index);
            let of_key = |l: &&pprof::Label| p.string(l.key) == key;
            let mut group = labels.iter().filter(of_key);
            let (value, unit) = match (group.next(), group.next()) {
                (Some(only), None) => label_value(p, &[only]),
                _ => label_value(p, &labels.iter().filter(of_key).collect::<Vec<_>>()),
            };
            let key = self.pprof_string(key_index);
            let unit = match unit {
                Some(index) => self.pprof_string(index),
                None => EMPTY_STRING,
            };
            out.push(self.attributes.intern(key, &value, unit));
        }
        self.label_keys = keys;
    }

    /// One Profile per sample type, in pprof's order, their samples left
    /// out.
    fn profiles<S: ProfileSamples>(
        &mut self,
        source: &S,
        comments: &[i64],
        restored: &Restored,
        options: &ToDevelopmentOptions,
    ) -> Vec<dev::Profile> {
        let p = self.p;
        let attribute_indices = self.profile_attributes(comments, restored);
        let ids = profile_ids(source, restored, options, p.sample_type.len().max(1));
        let types = p.sample_type.len();
        // v1experimental's own start and end, when its otlp: comments kept them.
        let start = restored.start.unwrap_or(p.time_nanos as u64);
        let duration = match restored.end {
            Some(end) => end.saturating_sub(start),
            None => p.duration_nanos as u64,
        };
        // No sample type: one Profile keeps the stacks (its samples have no values).
        (0..types.max(1))
            .map(|k| dev::Profile {
                sample_type: p
                    .sample_type
                    .get(k)
                    .map(|t| self.value_type(t.type_, t.unit))
                    .into(),
                time_unix_nano: start,
                duration_nano: duration,
                period_type: p
                    .period_type
                    .as_ref()
                    .map(|t| self.value_type(t.type_, t.unit))
                    .into(),
                period: p.period,
                profile_id: ids[k].clone(),
                attribute_indices: attribute_indices.clone(),
                dropped_attributes_count: restored.container_dropped,
                ..Default::default()
            })
            .collect()
    }

    fn value_type(&mut self, type_: i64, unit: i64) -> dev::ValueType {
        dev::ValueType {
            type_strindex: self.pprof_string(type_),
            unit_strindex: self.pprof_string(unit),
            ..Default::default()
        }
    }

    /// Comments, drop/keep frames and doc URL, and the profile attributes
    /// `otlp:` comments restore.
    fn profile_attributes(&mut self, comments: &[i64], restored: &Restored) -> Vec<i32> {
        let p = self.p;
        let mut out = Vec::new();
        if !comments.is_empty() {
            let texts = comments
                .iter()
                .map(|&c| string_value(p.string(c)))
                .collect();
            let value = any(Value::ArrayValue(ArrayValue {
                values: texts,
                ..Default::default()
            }));
            out.push(self.attribute(semconv::COMMENT, value, ""));
        }
        for (index, key) in [
            (p.drop_frames, semconv::DROP_FRAMES),
            (p.keep_frames, semconv::KEEP_FRAMES),
            (p.doc_url, semconv::DOC_URL),
        ] {
            if !p.string(index).is_empty() {
                let value = string_value(p.string(index));
                out.push(self.attribute(key, value, ""));
            }
        }
        for (key, numbers) in negative_numbers(p) {
            let values = numbers.into_iter().map(|n| any(Value::IntValue(n)));
            let value = any(Value::ArrayValue(ArrayValue {
                values: values.collect(),
                ..Default::default()
            }));
            out.push(self.attribute(key, value, ""));
        }
        for kv in &restored.container_attributes {
            let value = kv.value.clone().unwrap_or_default();
            out.push(self.attribute(&kv.key, value, ""));
        }
        out
    }

    /// The scope: restored or from the options, with the two pprof
    /// attributes the semantic conventions require.
    fn scope(&self, restored: &Restored, options: &ToDevelopmentOptions) -> InstrumentationScope {
        let p = self.p;
        let mut scope = restored
            .scope
            .clone()
            .unwrap_or_else(|| InstrumentationScope {
                name: options.scope_name.clone(),
                version: options.scope_version.clone(),
                ..Default::default()
            });
        let order = (0..p.sample_type.len() as i64)
            .map(|k| any(Value::IntValue(k)))
            .collect();
        scope.attributes.push(key_value(
            semconv::SAMPLE_TYPE_ORDER,
            any(Value::ArrayValue(ArrayValue {
                values: order,
                ..Default::default()
            })),
        ));
        scope.attributes.push(key_value(
            semconv::DEFAULT_SAMPLE_TYPE,
            string_value(p.string(p.default_sample_type)),
        ));
        scope
    }
}

/// The resource: restored attributes, then the options' (which win).
fn resource(
    mut attributes: Vec<KeyValue>,
    dropped: u32,
    options: &ToDevelopmentOptions,
) -> MessageField<Resource> {
    for kv in &options.resource_attributes {
        attributes.retain(|a| a.key != kv.key);
        attributes.push(kv.clone());
    }
    MessageField::some(Resource {
        attributes,
        dropped_attributes_count: dropped,
        ..Default::default()
    })
}

/// The id of each of `count` Profiles (see [`ToDevelopmentOptions::profile_id`]).
fn profile_ids<S: ProfileSamples>(
    source: &S,
    restored: &Restored,
    options: &ToDevelopmentOptions,
    count: usize,
) -> Vec<Vec<u8>> {
    let first = match (options.profile_id, restored.profile_id.clone()) {
        (ProfileId::Fixed(bytes), _) => bytes.to_vec(),
        (ProfileId::ContentHash, _) => content_hash(source),
        (ProfileId::Random, Some(id)) => id,
        (ProfileId::Random, None) => random_id(),
    };
    let derived = |k: usize| {
        let mut hasher = Sha256::new();
        hasher.update(&first);
        hasher.update((k as u64).to_le_bytes());
        let mut id = hasher.finalize()[..16].to_vec();
        id[15] |= 1; // never all zeros
        id
    };
    (0..count)
        .map(|k| if k == 0 { first.clone() } else { derived(k) })
        .collect()
}

/// The value of one key's labels, and the pprof string index of its unit
/// (none for a string): a string, a number, or for a key that repeats, an
/// array whose numbers are plain when they have the array's unit (the
/// first numeric label's) and `{value, unit}` lists when they do not.
fn label_value<'p>(
    p: &'p pprof::Profile,
    group: &[&pprof::Label],
) -> (AttributeValue<'p>, Option<i64>) {
    let is_string = |l: &pprof::Label| l.str != 0;
    if let [only] = group {
        return match is_string(only) {
            true => (AttributeValue::String(p.string(only.str)), None),
            false => (AttributeValue::Int(only.num), Some(only.num_unit)),
        };
    }
    let unit_index = group.iter().find(|l| !is_string(l)).map(|l| l.num_unit);
    let unit = unit_index.map_or("", |i| p.string(i));
    let values = group
        .iter()
        .map(|l| {
            if is_string(l) {
                string_value(p.string(l.str))
            } else if p.string(l.num_unit) == unit {
                any(Value::IntValue(l.num))
            } else {
                any(Value::KvlistValue(KeyValueList {
                    values: vec![
                        key_value("value", any(Value::IntValue(l.num))),
                        key_value("unit", string_value(p.string(l.num_unit))),
                    ],
                    ..Default::default()
                }))
            }
        })
        .collect();
    let array = ArrayValue {
        values,
        ..Default::default()
    };
    (
        AttributeValue::Any(any(Value::ArrayValue(array))),
        unit_index,
    )
}

/// The trace link of a sample: exactly one `trace_id` and one `span_id`
/// label, string labels in canonical lowercase hex of 16 and 8 bytes (so
/// they print back the same); otherwise they stay attributes.
fn trace_link(p: &pprof::Profile, labels: &[pprof::Label]) -> Option<(Vec<u8>, Vec<u8>)> {
    let id = |key: &str, len: usize| {
        let mut found = labels.iter().filter(|l| p.string(l.key) == key);
        let only = found.next().filter(|_| found.next().is_none())?;
        let text = p.string(only.str);
        let bytes = otlp_comments::unhex(text)
            .filter(|b| b.len() == len && only.num == 0 && only.num_unit == 0)?;
        (otlp_comments::hex(&bytes) == text).then_some(bytes)
    };
    id(TRACE_ID_LABEL, 16).zip(id(SPAN_ID_LABEL, 8))
}

fn any(value: Value) -> AnyValue {
    AnyValue {
        value: Some(value),
        ..Default::default()
    }
}

fn string_value(s: &str) -> AnyValue {
    any(Value::StringValue(s.to_string()))
}

/// A dictionary position as the schema's int32 index. Tables beyond 2^31
/// entries cannot be written in v1development at all; such a position
/// saturates rather than wrapping to a wrong entry.
fn to_index(position: i64) -> i32 {
    i32::try_from(position).unwrap_or(i32::MAX)
}

/// The negative line numbers of `p`, which OTLP writes as 0, as the
/// profile attributes that keep them (`semconv::NEGATIVE_START_LINES`,
/// `semconv::NEGATIVE_LINES`); none when there are none.
fn negative_numbers(p: &pprof::Profile) -> Vec<(&'static str, Vec<i64>)> {
    let start_lines: Vec<i64> = (p.function.iter().enumerate())
        .filter(|(_, f)| f.start_line < 0)
        .flat_map(|(k, f)| [k as i64, f.start_line])
        .collect();
    let lines: Vec<i64> = (p.location.iter().enumerate())
        .flat_map(|(k, l)| {
            (l.line.iter().enumerate())
                .filter(|(_, line)| line.line < 0 || line.column < 0)
                .flat_map(move |(j, line)| [k as i64, j as i64, line.line, line.column])
        })
        .collect();
    [
        (semconv::NEGATIVE_START_LINES, start_lines),
        (semconv::NEGATIVE_LINES, lines),
    ]
    .into_iter()
    .filter(|(_, numbers)| !numbers.is_empty())
    .collect()
}
