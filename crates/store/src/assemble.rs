//! A selection's rows as one pprof profile, merged as pprof merges the
//! profiles it came from (`profile.Merge`, and protoprof's bridge): the
//! same sample types and period type or a refusal; the earliest non-zero
//! time, the summed duration, the largest period, comments without
//! repeats, the first default sample type, drop and keep frames; samples
//! with the same stack and labels as one; samples whose values are all 0
//! left out; the first profile's main mapping first. Profiles are taken in
//! order of time, then id.

use std::collections::HashMap;

use datafusion::arrow::array::ArrayRef;
use protobuf::MessageField;
use protoprof_model_pprof::perftools::profiles::{
    Function, Label, Line, Location, Mapping, Profile, Sample, ValueType,
};

use crate::error::StoreError;
use crate::ids::{hex, Id};
use crate::query::Query;
use crate::read::{
    bool_values, column_of, id_values, int_values, list_values, map_values, string_values,
    struct_field, uint_values,
};
use crate::rows::{LineRow, SampleEvents};
use crate::select::{Batches, Selected};
use crate::sums::{first_values, First};

/// A selection as one profile.
#[derive(Debug, Clone)]
pub struct Selection {
    /// The merged profile.
    pub profile: Profile,
    /// How many profiles were merged.
    pub profiles: u64,
    /// Each sample's events, in the profile's sample order, when each
    /// stored sample is kept (`store get`) and some have events; else
    /// empty.
    pub events: Vec<SampleEvents>,
    /// What each table read to make it (`--explain`).
    pub reads: Vec<crate::TableRead>,
}

/// A `profiles` row, or a rollup's row of profiles alike (`rollups.rs`):
/// then its id and time are the first one's, in merge order, and its
/// duration their sum.
#[derive(Debug, Clone)]
struct Header {
    id: Id,
    time: i64,
    /// The earliest start that is not 0 (else 0).
    earliest: i64,
    /// Whether it stands for profiles alike, not one (whose id it has).
    grouped: bool,
    /// How many profiles it stands for.
    count: u64,
    duration: i64,
    sample_types: Vec<(String, String)>,
    period_type: (String, String),
    period: i64,
    default_sample_type: String,
    comments: Vec<String>,
    frames: (String, String),
    doc_url: String,
    main_mapping: Option<Id>,
}

/// A `locations` row.
struct LocationRow {
    mapping: Option<Id>,
    address: u64,
    lines: Vec<LineRow>,
    is_folded: bool,
}

/// A merged sample: its values by sample type, its labels, and where it
/// first appears (of zeros, time, profile, index).
struct Merged {
    values: Vec<i64>,
    first: First,
}

/// What samples merge by: stack and label set, and with `each_sample` the
/// stored sample itself (profile and index).
type SampleKey = (Id, Id, Option<(Id, i64)>);

/// The profile `selected` makes under `query`.
pub(crate) fn assemble(selected: &Selected, query: &Query) -> Result<Selection, StoreError> {
    let headers = headers(&selected.profiles);
    if headers.is_empty() {
        return Err(StoreError::Query("the selection matches no profile".into()));
    }
    let headers = with_types(headers, &query.sample_types);
    let sample_types = merged_types(&headers)?;
    let mut b = Builder::default();
    b.intern("");
    let mut p = header_profile(&mut b, &headers, &sample_types);
    let merged = merged_samples(selected, &sample_types, query.each_sample);
    let label_sets = label_sets(&selected.label_sets);
    let no_labels = LabelSetRow::default();
    let dictionary = Dictionary::read(selected);
    if let Some(main) = headers.iter().find_map(|h| h.main_mapping) {
        b.mapping(&dictionary, main);
    }
    let stored_events = events_by_sample(&selected.events);
    let mut events = Vec::new();
    // Sized once: the merged profile is most of a large selection's memory.
    p.sample.reserve_exact(merged.len());
    for ((stack, set, place), sample) in merged {
        let labels = label_sets.get(&set).unwrap_or(&no_labels);
        p.sample
            .push(b.sample(&dictionary, (&stack, labels), sample)?);
        if !stored_events.is_empty() {
            let found = place.and_then(|place| stored_events.get(&place));
            events.push(found.cloned().unwrap_or_default());
        }
    }
    p.mapping = b.mappings;
    p.location = b.locations;
    p.function = b.functions;
    p.string_table = b.strings;
    Ok(Selection {
        profile: p,
        profiles: headers.iter().map(|h| h.count).sum(),
        events,
        reads: selected.reads.clone(),
    })
}

/// `headers` with only the sample types `wanted` names (all when empty),
/// leaving out the profiles that then have none (they add no sample).
fn with_types(headers: Vec<Header>, wanted: &[String]) -> Vec<Header> {
    if wanted.is_empty() {
        return headers;
    }
    let mut kept: Vec<Header> = headers
        .iter()
        .cloned()
        .filter_map(|mut h| {
            h.sample_types.retain(|(t, _)| wanted.contains(t));
            (!h.sample_types.is_empty()).then_some(h)
        })
        .collect();
    if kept.is_empty() {
        // None has them: the merged profile has their types and no sample.
        kept = headers.into_iter().take(1).collect();
        kept[0].sample_types.clear();
    }
    kept
}

/// The merged profile's sample types: every profile's, in order of first
/// appearance (each profile's samples are 0 under the types it lacks, as
/// the bridge merges OTLP profiles of several types), so a selection of
/// CPU and heap profiles reads as one profile with both. Refused when two
/// profiles hold one sample type with other units or under other period
/// types, which pprof does not merge either.
fn merged_types(headers: &[Header]) -> Result<Vec<(String, String)>, StoreError> {
    let mut types: Vec<(String, String)> = Vec::new();
    let mut holder: HashMap<&str, &Header> = HashMap::new();
    for h in headers {
        for (t, u) in &h.sample_types {
            let first = *holder.entry(t).or_insert(h);
            let unit = |h: &Header| {
                h.sample_types
                    .iter()
                    .find(|(n, _)| n == t)
                    .map(|(_, u)| u.clone())
            };
            if unit(first).as_ref() != Some(u) || first.period_type != h.period_type {
                return Err(StoreError::Query(format!(
                    "the selection holds profiles that do not merge: {} has sample type {t}/{} \
                     with period type {}, {} has {t}/{u} with period type {}; narrow it \
                     (--select, --from, --to, --sample-index)",
                    hex(&first.id),
                    unit(first).unwrap_or_default(),
                    pair_text(&first.period_type),
                    hex(&h.id),
                    pair_text(&h.period_type),
                )));
            }
            if !types.iter().any(|(n, _)| n == t) {
                types.push((t.clone(), u.clone()));
            }
        }
    }
    Ok(types)
}

/// A (type, unit) pair as pprof writes it: `cpu/nanoseconds`.
fn pair_text((t, u): &(String, String)) -> String {
    format!("{t}/{u}")
}

/// The merged profile's default sample type: the profiles' own when
/// they all have the same sample types (pprof's merge: the first one
/// given), else `cpu` where a profile has it, else the last type, as pprof
/// picks a profile's default.
fn default_type<'h>(headers: &'h [Header], types: &'h [(String, String)]) -> &'h str {
    let uniform = headers
        .iter()
        .all(|h| h.sample_types == headers[0].sample_types);
    if uniform {
        let mut given = headers.iter().map(|h| h.default_sample_type.as_str());
        return given.find(|d| !d.is_empty()).unwrap_or("");
    }
    match types.iter().find(|(t, _)| t == "cpu") {
        Some((t, _)) => t,
        None => types.last().map_or("", |(t, _)| t),
    }
}

/// The profile's header fields, merged; the period that of the first
/// profile holding the default sample type.
fn header_profile(b: &mut Builder, headers: &[Header], types: &[(String, String)]) -> Profile {
    let default = default_type(headers, types);
    let holds = |h: &&Header| h.sample_types.iter().any(|(t, _)| t == default);
    let first = headers.iter().find(holds).unwrap_or(&headers[0]);
    let mut p = Profile {
        sample_type: types.iter().map(|(t, u)| b.value_type(t, u)).collect(),
        period_type: MessageField::some(b.value_type(&first.period_type.0, &first.period_type.1)),
        drop_frames: b.intern(&first.frames.0),
        keep_frames: b.intern(&first.frames.1),
        doc_url: b.intern(&first.doc_url),
        ..Default::default()
    };
    let mut seen = std::collections::HashSet::new();
    for h in headers {
        if p.time_nanos == 0 || (h.earliest != 0 && h.earliest < p.time_nanos) {
            p.time_nanos = h.earliest;
        }
        p.duration_nanos = p.duration_nanos.saturating_add(h.duration);
        p.period = p.period.max(h.period);
        for c in &h.comments {
            if seen.insert(c.clone()) {
                p.comment.push(b.intern(c));
            }
        }
    }
    p.default_sample_type = b.intern(default);
    p
}

/// The `profiles` rows, each once, in merge order.
fn headers(batches: &Batches) -> Vec<Header> {
    let mut out: Vec<Header> = Vec::new();
    for batch in batches {
        let column = |name: &str| batch.column_by_name(name).cloned();
        let (Some(ids), Some(times)) = (column("profile_id"), column("time_unix_nano")) else {
            continue;
        };
        let text = |name: &str| column_of(batch, name, string_values);
        let int = |name: &str| column_of(batch, name, int_values);
        let (durations, periods) = (int("duration_nano"), int("period"));
        let (period_types, period_units) = (text("period_type"), text("period_unit"));
        let (defaults, drops, keeps, docs) = (
            text("default_sample_type"),
            text("drop_frames"),
            text("keep_frames"),
            text("doc_url"),
        );
        let types = column_of(batch, "sample_types", list_values);
        let comments = column_of(batch, "comments", list_values);
        let mains = column_of(batch, "main_mapping_id", id_values);
        // A rollup's rows (`rollups.rs`); a `profiles` row is one profile.
        let earliest = batch
            .column_by_name("earliest_time_unix_nano")
            .map(int_values);
        let grouped = column_of(batch, "grouped", bool_values);
        let counts = batch.column_by_name("profiles").map(int_values);
        for (i, (id, time)) in id_values(&ids)
            .into_iter()
            .zip(int_values(&times))
            .enumerate()
        {
            let Some(id) = id else { continue };
            let pairs = |items: &Option<_>| -> Vec<(String, String)> {
                let Some(items) = items else {
                    return Vec::new();
                };
                let field = |n| {
                    struct_field(items, n)
                        .map(|c| string_values(&c))
                        .unwrap_or_default()
                };
                field("type").into_iter().zip(field("unit")).collect()
            };
            out.push(Header {
                id,
                time,
                earliest: earliest.as_ref().map_or(time, |e| e[i]),
                grouped: grouped[i],
                count: counts.as_ref().map_or(1, |c| c[i].max(0) as u64),
                duration: durations.get(i).copied().unwrap_or(0),
                sample_types: types.get(i).map(pairs).unwrap_or_default(),
                period_type: (period_types[i].clone(), period_units[i].clone()),
                period: periods.get(i).copied().unwrap_or(0),
                default_sample_type: defaults[i].clone(),
                comments: comments
                    .get(i)
                    .and_then(|c| c.as_ref().map(string_values))
                    .unwrap_or_default(),
                frames: (drops[i].clone(), keeps[i].clone()),
                doc_url: docs[i].clone(),
                main_mapping: mains.get(i).copied().flatten(),
            });
        }
    }
    out.sort_by_key(|h| (h.time, h.id));
    // A profile read twice (a rollup's lone profile, whose rows are on
    // other days too, and the raw rows of those days) counts once.
    out.dedup_by(|a, b| a.id == b.id && !a.grouped && !b.grouped);
    out
}

/// The aggregated rows as samples, in order of first appearance (pprof's
/// merge order); samples of zero left out unless `each_sample`.
fn merged_samples(
    selected: &Selected,
    types: &[(String, String)],
    each_sample: bool,
) -> Vec<(SampleKey, Merged)> {
    let mut merged: HashMap<SampleKey, Merged> = HashMap::new();
    for batch in &selected.samples {
        let ids = |name: &str| column_of(batch, name, id_values);
        let int = |name: &str| column_of(batch, name, int_values);
        let text = |name: &str| column_of(batch, name, string_values);
        let (stacks, sets) = (ids("stack_id"), ids("label_set_id"));
        let (names, units) = (text("sample_type"), text("sample_unit"));
        let (values, firsts) = (int("value"), column_of(batch, "first_key", first_values));
        for i in 0..batch.num_rows() {
            let (Some(stack), Some(set)) = (stacks[i], sets[i]) else {
                continue;
            };
            let Some(mut first @ (_, _, profile, index)) = firsts[i] else {
                continue;
            };
            // A stored sample kept as it is keeps its place, zeros or not.
            first.0 &= !each_sample;
            let type_key = (names[i].clone(), units[i].clone());
            let Some(t) = types.iter().position(|k| *k == type_key) else {
                continue;
            };
            let key = (stack, set, each_sample.then_some((profile, index)));
            let sample = merged.entry(key).or_insert_with(|| Merged {
                values: vec![0; types.len()],
                first,
            });
            sample.values[t] = sample.values[t].saturating_add(values[i]);
            sample.first = sample.first.min(first);
        }
    }
    let mut merged: Vec<(SampleKey, Merged)> = merged
        .into_iter()
        .filter(|(_, s)| each_sample || s.values.iter().any(|v| *v != 0))
        .collect();
    merged.sort_by_key(|(key, sample)| (sample.first, *key));
    merged
}

/// The stored events of each sample (profile and index) that has them.
fn events_by_sample(batches: &Batches) -> HashMap<(Id, i64), SampleEvents> {
    let mut out = HashMap::new();
    for batch in batches {
        let ids = column_of(batch, "profile_id", id_values);
        let indexes = column_of(batch, "sample_index", int_values);
        let times = column_of(batch, "timestamps_unix_nano", list_values);
        let values = column_of(batch, "event_values", list_values);
        for i in 0..batch.num_rows() {
            let ints = |list: &Option<ArrayRef>| list.as_ref().map_or(Vec::new(), int_values);
            let Some(id) = ids[i] else { continue };
            out.entry((id, indexes[i])).or_insert_with(|| SampleEvents {
                timestamps_unix_nano: ints(&times[i]),
                values: ints(&values[i]),
            });
        }
    }
    out
}

/// A label set's string labels (each key once, then repeated keys) and
/// numeric labels.
type LabelSetRow = (Vec<(String, String)>, Vec<(String, i64, String)>);

/// Each label set of the selection by id.
fn label_sets(batches: &Batches) -> HashMap<Id, LabelSetRow> {
    let mut out = HashMap::new();
    for batch in batches {
        let ids = column_of(batch, "label_set_id", id_values);
        let labels = column_of(batch, "labels", map_values);
        let repeated = column_of(batch, "repeated_labels", pairs_of);
        let numeric = column_of(batch, "numeric_labels", numeric_of);
        let rows = labels.into_iter().zip(repeated).zip(numeric);
        for (id, ((mut labels, repeated), numeric)) in ids.into_iter().zip(rows) {
            if let Some(id) = id {
                labels.extend(repeated);
                out.entry(id).or_insert((labels, numeric));
            }
        }
    }
    out
}

/// Each row's list of (key, value) structs.
fn pairs_of(array: &datafusion::arrow::array::ArrayRef) -> Vec<Vec<(String, String)>> {
    list_values(array)
        .into_iter()
        .map(|items| {
            let Some(items) = items else {
                return Vec::new();
            };
            let field = |n| {
                struct_field(&items, n)
                    .map(|c| string_values(&c))
                    .unwrap_or_default()
            };
            field("key").into_iter().zip(field("value")).collect()
        })
        .collect()
}

/// Each row's list of (key, value, unit) numeric labels.
fn numeric_of(array: &datafusion::arrow::array::ArrayRef) -> Vec<Vec<(String, i64, String)>> {
    list_values(array)
        .into_iter()
        .map(|items| {
            let Some(items) = items else {
                return Vec::new();
            };
            let text = |n| {
                struct_field(&items, n)
                    .map(|c| string_values(&c))
                    .unwrap_or_default()
            };
            let values = struct_field(&items, "value")
                .map(|c| int_values(&c))
                .unwrap_or_default();
            text("key")
                .into_iter()
                .zip(values)
                .zip(text("unit"))
                .map(|((k, v), u)| (k, v, u))
                .collect()
        })
        .collect()
}

/// The dictionary rows read, by id.
struct Dictionary {
    stacks: HashMap<Id, Vec<Id>>,
    locations: HashMap<Id, LocationRow>,
    functions: HashMap<Id, (String, String, String, i64)>,
    mappings: HashMap<Id, Mapping>,
    mapping_files: HashMap<Id, (String, String)>,
}

impl Dictionary {
    fn read(s: &Selected) -> Dictionary {
        let mut d = Dictionary {
            stacks: HashMap::new(),
            locations: HashMap::new(),
            functions: HashMap::new(),
            mappings: HashMap::new(),
            mapping_files: HashMap::new(),
        };
        for batch in &s.stacks {
            let ids = column_of(batch, "stack_id", id_values);
            let lists = column_of(batch, "location_ids", list_values);
            for (id, items) in ids.into_iter().zip(lists) {
                let locations = items.map(|i| id_values(&i).into_iter().flatten().collect());
                if let (Some(id), Some(locations)) = (id, locations) {
                    d.stacks.insert(id, locations);
                }
            }
        }
        d.read_locations(&s.locations);
        d.read_functions(&s.functions);
        d.read_mappings(&s.mappings);
        d
    }

    fn read_locations(&mut self, batches: &Batches) {
        for batch in batches {
            let ids = column_of(batch, "location_id", id_values);
            let mappings = column_of(batch, "mapping_id", id_values);
            let addresses = column_of(batch, "address", uint_values);
            let lines = column_of(batch, "lines", list_values);
            let folded = column_of(batch, "is_folded", bool_values);
            for (i, id) in ids.into_iter().enumerate() {
                let Some(id) = id else { continue };
                let lines = lines[i].as_ref().map(|items| {
                    let int = |n| {
                        struct_field(items, n)
                            .map(|c| int_values(&c))
                            .unwrap_or_default()
                    };
                    let functions = struct_field(items, "function_id")
                        .map(|c| id_values(&c))
                        .unwrap_or_default();
                    functions
                        .into_iter()
                        .zip(int("line"))
                        .zip(int("column"))
                        .map(|((function_id, line), column)| LineRow {
                            function_id,
                            line,
                            column,
                        })
                        .collect()
                });
                let row = LocationRow {
                    mapping: mappings[i],
                    address: addresses[i],
                    lines: lines.unwrap_or_default(),
                    is_folded: folded[i],
                };
                self.locations.insert(id, row);
            }
        }
    }

    fn read_functions(&mut self, batches: &Batches) {
        for batch in batches {
            let text = |n: &str| column_of(batch, n, string_values);
            let ids = column_of(batch, "function_id", id_values);
            let (names, systems, files) = (text("name"), text("system_name"), text("filename"));
            let starts = column_of(batch, "start_line", int_values);
            for (i, id) in ids.into_iter().enumerate() {
                if let Some(id) = id {
                    let row = (
                        names[i].clone(),
                        systems[i].clone(),
                        files[i].clone(),
                        starts[i],
                    );
                    self.functions.insert(id, row);
                }
            }
        }
    }

    fn read_mappings(&mut self, batches: &Batches) {
        for batch in batches {
            let text = |n: &str| column_of(batch, n, string_values);
            let uint = |n: &str| column_of(batch, n, uint_values);
            let flag = |n: &str| column_of(batch, n, bool_values);
            let ids = column_of(batch, "mapping_id", id_values);
            let (starts, limits, offsets) = (
                uint("memory_start"),
                uint("memory_limit"),
                uint("file_offset"),
            );
            let (files, builds) = (text("filename"), text("build_id"));
            let flags = [
                flag("has_functions"),
                flag("has_filenames"),
                flag("has_line_numbers"),
                flag("has_inline_frames"),
            ];
            for (i, id) in ids.into_iter().enumerate() {
                let Some(id) = id else { continue };
                let m = Mapping {
                    memory_start: starts[i],
                    memory_limit: limits[i],
                    file_offset: offsets[i],
                    has_functions: flags[0][i],
                    has_filenames: flags[1][i],
                    has_line_numbers: flags[2][i],
                    has_inline_frames: flags[3][i],
                    ..Default::default()
                };
                self.mappings.insert(id, m);
                self.mapping_files
                    .insert(id, (files[i].clone(), builds[i].clone()));
            }
        }
    }
}

/// The merged profile's tables, ids given in order of first use.
#[derive(Default)]
struct Builder {
    strings: Vec<String>,
    string_ids: HashMap<String, i64>,
    mappings: Vec<Mapping>,
    mapping_ids: HashMap<Id, u64>,
    locations: Vec<Location>,
    location_ids: HashMap<Id, u64>,
    functions: Vec<Function>,
    function_ids: HashMap<Id, u64>,
}

impl Builder {
    fn intern(&mut self, s: &str) -> i64 {
        if let Some(&i) = self.string_ids.get(s) {
            return i;
        }
        let i = self.strings.len() as i64;
        self.strings.push(s.to_string());
        self.string_ids.insert(s.to_string(), i);
        i
    }

    fn value_type(&mut self, t: &str, u: &str) -> ValueType {
        ValueType {
            type_: self.intern(t),
            unit: self.intern(u),
            ..Default::default()
        }
    }

    /// The sample of `stack` with `labels`, its values `merged`.
    fn sample(
        &mut self,
        d: &Dictionary,
        (stack, labels): (&Id, &LabelSetRow),
        merged: Merged,
    ) -> Result<Sample, StoreError> {
        let locations = d.stacks.get(stack).ok_or_else(|| missing("stack", stack))?;
        let (strings, numbers) = labels;
        let mut sample = Sample {
            value: merged.values,
            location_id: Vec::with_capacity(locations.len()),
            label: Vec::with_capacity(strings.len() + numbers.len()),
            ..Default::default()
        };
        for l in locations {
            sample.location_id.push(self.location(d, l)?);
        }
        for (k, v) in strings {
            sample.label.push(Label {
                key: self.intern(k),
                str: self.intern(v),
                ..Default::default()
            });
        }
        for (k, num, unit) in numbers {
            sample.label.push(Label {
                key: self.intern(k),
                num: *num,
                num_unit: self.intern(unit),
                ..Default::default()
            });
        }
        Ok(sample)
    }

    fn location(&mut self, d: &Dictionary, id: &Id) -> Result<u64, StoreError> {
        if let Some(&n) = self.location_ids.get(id) {
            return Ok(n);
        }
        let row = d.locations.get(id).ok_or_else(|| missing("location", id))?;
        let mapping_id = match &row.mapping {
            Some(m) => self.mapping(d, *m).ok_or_else(|| missing("mapping", m))?,
            None => 0,
        };
        let mut line = Vec::new();
        for row_line in &row.lines {
            let function_id = match &row_line.function_id {
                Some(f) => self.function(d, f)?,
                None => 0,
            };
            line.push(Line {
                function_id,
                line: row_line.line,
                column: row_line.column,
                ..Default::default()
            });
        }
        let n = self.locations.len() as u64 + 1;
        self.locations.push(Location {
            id: n,
            mapping_id,
            address: row.address,
            line,
            is_folded: row.is_folded,
            ..Default::default()
        });
        self.location_ids.insert(*id, n);
        Ok(n)
    }

    fn function(&mut self, d: &Dictionary, id: &Id) -> Result<u64, StoreError> {
        if let Some(&n) = self.function_ids.get(id) {
            return Ok(n);
        }
        let (name, system, file, start) =
            d.functions.get(id).ok_or_else(|| missing("function", id))?;
        let n = self.functions.len() as u64 + 1;
        let function = Function {
            id: n,
            name: self.intern(name),
            system_name: self.intern(system),
            filename: self.intern(file),
            start_line: *start,
            ..Default::default()
        };
        self.functions.push(function);
        self.function_ids.insert(*id, n);
        Ok(n)
    }

    fn mapping(&mut self, d: &Dictionary, id: Id) -> Option<u64> {
        if let Some(&n) = self.mapping_ids.get(&id) {
            return Some(n);
        }
        let mut m = d.mappings.get(&id)?.clone();
        let (file, build) = d.mapping_files.get(&id)?;
        let n = self.mappings.len() as u64 + 1;
        m.id = n;
        m.filename = self.intern(file);
        m.build_id = self.intern(build);
        self.mappings.push(m);
        self.mapping_ids.insert(id, n);
        Some(n)
    }
}

fn missing(what: &str, id: &Id) -> StoreError {
    StoreError::Engine(format!(
        "the store has no {what} {} that its samples refer to (a file missing or unreadable?)",
        hex(id)
    ))
}

#[cfg(test)]
mod tests {
    use protobuf::MessageField;
    use protoprof_model_pprof::perftools::profiles::{Profile, ValueType};

    use crate::test_profiles::profile;
    use crate::{ProfileContext, Query, Store, StoreError, StoreWriter};

    /// `p` with its one sample type, or its period type, renamed.
    fn named(mut p: Profile, sample_type: Option<(&str, &str)>, period: Option<&str>) -> Profile {
        let mut intern = |s: &str| {
            p.string_table.push(s.into());
            p.string_table.len() as i64 - 1
        };
        let sample = sample_type.map(|(t, u)| (intern(t), intern(u)));
        let period = period.map(|t| ValueType {
            type_: intern(t),
            unit: 2,
            ..Default::default()
        });
        if let Some((t, u)) = sample {
            (p.sample_type[0].type_, p.sample_type[0].unit) = (t, u);
        }
        if let Some(period) = period {
            p.period_type = MessageField::some(period);
        }
        p
    }

    fn store_of(profiles: &[Profile]) -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let context = ProfileContext {
            service_name: "s".into(),
            ..Default::default()
        };
        let mut writer = StoreWriter::new(dir.path());
        for (n, p) in profiles.iter().enumerate() {
            let mut p = p.clone();
            p.time_nanos += n as i64;
            writer.add(&p, &context).unwrap();
        }
        writer.flush().unwrap();
        let store = Store::open(dir.path()).unwrap();
        (dir, store)
    }

    /// Profiles of other sample types merge into one with every type, in
    /// order of first appearance, each sample 0 under the types its profile
    /// lacks; the default is `cpu` where a profile has it.
    #[test]
    fn profiles_of_other_sample_types_merge_with_every_type() {
        let heap = named(profile(5), Some(("alloc_space", "bytes")), Some("space"));
        let (_dir, store) = store_of(&[profile(1), heap]);
        let merged = store.select(&Query::default()).unwrap().profile;
        let s = |i: i64| merged.string_table[i as usize].as_str();
        let types: Vec<&str> = merged.sample_type.iter().map(|t| s(t.type_)).collect();
        assert_eq!(types, ["cpu", "alloc_space"]);
        assert_eq!(s(merged.default_sample_type), "cpu");
        let values: Vec<&[i64]> = merged.sample.iter().map(|x| &x.value[..]).collect();
        assert_eq!(values, [&[1, 5][..]], "one stack");
    }

    /// Profiles that hold one sample type under two period types do not
    /// merge: the selection is refused in one line naming both, in words.
    #[test]
    fn one_sample_type_under_two_period_types_is_refused_in_words() {
        let (cpu, wall) = (
            named(profile(1), None, Some("cpu")),
            named(profile(2), None, Some("wall")),
        );
        let (_dir, store) = store_of(&[cpu, wall]);
        let Err(StoreError::Query(message)) = store.select(&Query::default()) else {
            panic!("merged profiles of two period types");
        };
        assert!(
            message.contains("cpu/nanoseconds with period type cpu/nanoseconds"),
            "{message}"
        );
        assert!(
            message.contains("with period type wall/nanoseconds"),
            "{message}"
        );
        assert!(
            !message.contains("(\"") && !message.contains('\n'),
            "{message}"
        );
    }
}
