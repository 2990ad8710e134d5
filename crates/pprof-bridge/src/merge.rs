//! Merging pprof profiles as Go's `profile.Merge` does.
//!
//! The profiles must be compatible: the same sample types (type and unit)
//! and period type. Functions, mappings, locations and samples with the same
//! content become one; values of merged samples add up (saturating, so
//! extreme values cannot overflow); samples whose values are all zero are
//! dropped. Header: the earliest non-zero time, the summed duration, the
//! largest period, comments without repeats, the first default sample type,
//! the first profile's drop/keep frames.

use rustc_hash::FxHashMap as HashMap;

use protobuf::MessageField;
use protoprof_model_pprof::perftools::profiles::{
    Function, Label, Line, Location, Mapping, Profile, Sample, ValueType,
};

use crate::error::{unresolved, BridgeError};
use crate::interner::StringInterner;
use protoprof_model_meta::{Fields, StringTable};
use protoprof_model_pprof::samples::ProfileSamples;

/// Merges `profiles` into one. They may be decoded profiles or views that
/// keep their samples encoded (the codec's `PprofView`): samples are read
/// one at a time, so only the merged samples are ever held as models.
pub fn merge<S: ProfileSamples>(profiles: &[S]) -> Result<Profile, BridgeError> {
    let first = profiles
        .first()
        .ok_or_else(|| BridgeError::Incompatible("no profiles to merge".into()))?
        .profile();
    let types = |p: &Profile| -> Vec<(String, String)> {
        p.sample_type
            .iter()
            .map(|t| (p.string(t.type_).to_string(), p.string(t.unit).to_string()))
            .collect()
    };
    let period = |p: &Profile| {
        p.period_type
            .as_ref()
            .map(|t| (p.string(t.type_).to_string(), p.string(t.unit).to_string()))
    };
    for (i, p) in profiles.iter().map(S::profile).enumerate().skip(1) {
        if types(p) != types(first) {
            return Err(BridgeError::Incompatible(format!(
                "profile {i} has sample types {:?}, profile 0 has {:?}",
                types(p),
                types(first)
            )));
        }
        if period(p) != period(first) {
            return Err(BridgeError::Incompatible(format!(
                "profile {i} has period type {:?}, profile 0 has {:?}",
                period(p),
                period(first)
            )));
        }
    }
    let mut m = Merger::default();
    m.intern("");
    let mut out = Profile {
        sample_type: first
            .sample_type
            .iter()
            .map(|t| ValueType {
                type_: m.intern(first.string(t.type_)),
                unit: m.intern(first.string(t.unit)),
                ..Default::default()
            })
            .collect(),
        drop_frames: m.intern(first.string(first.drop_frames)),
        keep_frames: m.intern(first.string(first.keep_frames)),
        period_type: match first.period_type.as_ref() {
            Some(t) => MessageField::some(ValueType {
                type_: m.intern(first.string(t.type_)),
                unit: m.intern(first.string(t.unit)),
                ..Default::default()
            }),
            None => MessageField::none(),
        },
        doc_url: m.intern(first.string(first.doc_url)),
        ..Default::default()
    };
    let mut seen_comments = std::collections::HashSet::new();
    for source in profiles {
        let p = source.profile();
        if out.time_nanos == 0 || (p.time_nanos != 0 && p.time_nanos < out.time_nanos) {
            out.time_nanos = p.time_nanos;
        }
        out.duration_nanos = out.duration_nanos.saturating_add(p.duration_nanos);
        out.period = out.period.max(p.period);
        for &c in &p.comment {
            if seen_comments.insert(p.string(c).to_string()) {
                out.comment.push(m.intern(p.string(c)));
            }
        }
        if out.default_sample_type == 0 && p.default_sample_type != 0 {
            out.default_sample_type = m.intern(p.string(p.default_sample_type));
        }
        m.add_samples(source)?;
    }
    out.sample = m
        .samples
        .into_iter()
        .filter(|s| s.value.iter().any(|v| *v != 0))
        .collect();
    out.mapping = m.mappings;
    out.location = m.locations;
    out.function = m.functions;
    out.string_table = m.strings.table;
    Ok(out)
}

/// Content of a mapping: range, offset, file, build id, flags.
type MappingKey = (u64, u64, u64, i64, i64, [bool; 4]);
/// Content of a location: mapping, address, (function, line, column) per line, folded.
type LocationKey = (u64, u64, Vec<(u64, i64, i64)>, bool);
/// Content of a sample: its stack and its sorted (key, str, num, unit) labels.
type SampleKey = (Vec<u64>, Vec<(i64, i64, i64, i64)>);

#[derive(Default)]
struct Merger {
    strings: StringInterner,
    functions: Vec<Function>,
    function_index: HashMap<(i64, i64, i64, i64), u64>,
    mappings: Vec<Mapping>,
    mapping_index: HashMap<MappingKey, u64>,
    locations: Vec<Location>,
    location_index: HashMap<LocationKey, u64>,
    samples: Vec<Sample>,
    sample_index: HashMap<SampleKey, usize>,
}

impl Merger {
    fn intern(&mut self, s: &str) -> i64 {
        self.strings.intern(s)
    }

    /// Adds `p`'s samples (and the tables they reach), as pprof's merge.go
    /// does: one function per kind of record.
    fn add_samples<S: ProfileSamples>(&mut self, source: &S) -> Result<(), BridgeError> {
        let p = source.profile();
        let mapping_of = self.map_mappings(p);
        let function_of = self.map_functions(p);
        let location_of = self.map_locations(p, &mapping_of, &function_of)?;
        let mut buffer = Sample::default();
        for i in 0..source.sample_count() {
            let s = source.sample_fields(i, Fields::ALL, &mut buffer);
            self.map_sample(p, i, s, &location_of)?;
        }
        Ok(())
    }

    /// Each mapping's id in the merged profile, by its id in `p`.
    fn map_mappings(&mut self, p: &Profile) -> HashMap<u64, u64> {
        let mut mapping_of = HashMap::default();
        for m in &p.mapping {
            let key = (
                m.memory_start,
                m.memory_limit,
                m.file_offset,
                self.intern(p.string(m.filename)),
                self.intern(p.string(m.build_id)),
                [
                    m.has_functions,
                    m.has_filenames,
                    m.has_line_numbers,
                    m.has_inline_frames,
                ],
            );
            let next = self.mappings.len() as u64 + 1;
            let id = *self.mapping_index.entry(key).or_insert(next);
            if id == next {
                self.mappings.push(Mapping {
                    id,
                    memory_start: key.0,
                    memory_limit: key.1,
                    file_offset: key.2,
                    filename: key.3,
                    build_id: key.4,
                    has_functions: key.5[0],
                    has_filenames: key.5[1],
                    has_line_numbers: key.5[2],
                    has_inline_frames: key.5[3],
                    ..Default::default()
                });
            }
            mapping_of.insert(m.id, id);
        }
        mapping_of
    }

    /// Each function's id in the merged profile, by its id in `p`.
    fn map_functions(&mut self, p: &Profile) -> HashMap<u64, u64> {
        let mut function_of = HashMap::default();
        for f in &p.function {
            let key = (
                self.intern(p.string(f.name)),
                self.intern(p.string(f.system_name)),
                self.intern(p.string(f.filename)),
                f.start_line,
            );
            let next = self.functions.len() as u64 + 1;
            let id = *self.function_index.entry(key).or_insert(next);
            if id == next {
                self.functions.push(Function {
                    id,
                    name: key.0,
                    system_name: key.1,
                    filename: key.2,
                    start_line: key.3,
                    ..Default::default()
                });
            }
            function_of.insert(f.id, id);
        }
        function_of
    }

    /// Each location's id in the merged profile, by its id in `p`.
    fn map_locations(
        &mut self,
        p: &Profile,
        mapping_of: &HashMap<u64, u64>,
        function_of: &HashMap<u64, u64>,
    ) -> Result<HashMap<u64, u64>, BridgeError> {
        let mut location_of = HashMap::default();
        for (i, l) in p.location.iter().enumerate() {
            let mapping = match l.mapping_id {
                0 => 0,
                id => *mapping_of.get(&id).ok_or_else(|| {
                    unresolved(format!("location[{i}].mapping_id"), "mapping", id)
                })?,
            };
            let mut lines = Vec::with_capacity(l.line.len());
            for (j, line) in l.line.iter().enumerate() {
                let f = *function_of.get(&line.function_id).ok_or_else(|| {
                    let at = format!("location[{i}].line[{j}].function_id");
                    unresolved(at, "function", line.function_id)
                })?;
                lines.push((f, line.line, line.column));
            }
            let key = (mapping, l.address, lines, l.is_folded);
            let next = self.locations.len() as u64 + 1;
            let id = *self.location_index.entry(key.clone()).or_insert(next);
            if id == next {
                self.locations.push(location_of_key(id, key));
            }
            location_of.insert(l.id, id);
        }
        Ok(location_of)
    }

    /// Adds sample `i` of `p`, summed into an equal sample (same stack and labels) when there is one.
    fn map_sample(
        &mut self,
        p: &Profile,
        i: usize,
        s: &Sample,
        location_of: &HashMap<u64, u64>,
    ) -> Result<(), BridgeError> {
        let mut stack = Vec::with_capacity(s.location_id.len());
        for (j, id) in s.location_id.iter().enumerate() {
            stack.push(*location_of.get(id).ok_or_else(|| {
                unresolved(format!("sample[{i}].location_id[{j}]"), "location", *id)
            })?);
        }
        let mut labels: Vec<(i64, i64, i64, i64)> = s
            .label
            .iter()
            .map(|l| {
                (
                    self.intern(p.string(l.key)),
                    self.intern(p.string(l.str)),
                    l.num,
                    self.intern(p.string(l.num_unit)),
                )
            })
            .collect();
        labels.sort_unstable();
        let key = (stack, labels);
        if let Some(&index) = self.sample_index.get(&key) {
            for (total, v) in self.samples[index].value.iter_mut().zip(&s.value) {
                *total = total.saturating_add(*v);
            }
            return Ok(());
        }
        self.sample_index.insert(key.clone(), self.samples.len());
        self.samples.push(Sample {
            location_id: key.0,
            value: s.value.clone(),
            label: key
                .1
                .iter()
                .map(|&(key, str, num, num_unit)| Label {
                    key,
                    str,
                    num,
                    num_unit,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        });
        Ok(())
    }
}

/// The merged profile's location for a location key.
fn location_of_key(id: u64, (mapping_id, address, lines, is_folded): LocationKey) -> Location {
    Location {
        id,
        mapping_id,
        address,
        line: lines
            .iter()
            .map(|&(function_id, line, column)| Line {
                function_id,
                line,
                column,
                ..Default::default()
            })
            .collect(),
        is_folded,
        ..Default::default()
    }
}
