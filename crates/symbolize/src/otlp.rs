//! OTLP v1development symbolized in place: the dictionary's locations that
//! are only addresses are given lines from their mapping's binary, and the
//! functions and strings those need are added to its tables.
//!
//! The OpenTelemetry eBPF profiler leaves native frames so: a location of
//! frame type `native` (`profile.frame.type`) whose address is already the
//! file's own virtual address, in a mapping named by its file's base name
//! and identified by `process.executable.build_id.gnu` or by the profiler's
//! `process.executable.build_id.htlhash`. A location without a frame type
//! holds a process's address, as pprof's do (OTLP converted from pprof).
//! Frames of other types (kernel, interpreted) are left as they are.

use std::collections::HashMap;

use protoprof_model_otlp::opentelemetry::proto::common::v1::AnyValue;
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development::{
    Function, KeyValueAndUnit, Line, Mapping, ProfilesDictionary,
};

use crate::apply::{in_parallel, resolve, Space};
use crate::lookup::FileIds;
use crate::report::{MappingReport, Report, NOTHING_TO_DO};
use crate::resolve::Frame;
use crate::strings::StringIndex;
use crate::{Mode, Options};

const FRAME_TYPE: &str = "profile.frame.type";
const BUILD_ID_GNU: &str = "process.executable.build_id.gnu";
const HTLHASH: &str = "process.executable.build_id.htlhash";
/// pprof's mapping flags, as the bridge writes them.
const HAS: [&str; 4] = [
    "pprof.mapping.has_functions",
    "pprof.mapping.has_filenames",
    "pprof.mapping.has_line_numbers",
    "pprof.mapping.has_inline_frames",
];

/// Symbolizes the native frames of `dictionary` (shared by every profile
/// of a `ProfilesData` or export request) in place; what was done, per
/// mapping (the table's first, empty, entry left out).
pub fn symbolize_dictionary(dictionary: &mut ProfilesDictionary, options: &Options) -> Report {
    let mut work = Work::of(dictionary, options);
    let todo: Vec<usize> = (0..work.entries.len())
        .filter(|&m| work.entries[m].skipped.is_none())
        .collect();
    let results = in_parallel(&todo, |m| work.resolve(dictionary, m, options));
    let mut entries = std::mem::take(&mut work.entries);
    if !todo.is_empty() {
        // The tables are indexed only when there is something to write.
        write_all(dictionary, &work, &todo, results, &mut entries);
    }
    Report {
        mappings: entries.into_iter().skip(1).collect(),
    }
}

/// The frames resolved for the mappings of `todo`, written into the
/// dictionary; their entries updated.
fn write_all(
    dictionary: &mut ProfilesDictionary,
    work: &Work,
    todo: &[usize],
    results: Vec<(MappingReport, HashMap<usize, Vec<Frame>>)>,
    entries: &mut [MappingReport],
) {
    let mut tables = Tables::of(dictionary);
    for (&m, (entry, frames)) in todo.iter().zip(results) {
        entries[m] = entry;
        let resolved = frames.values().filter(|f| !f.is_empty()).count();
        entries[m].resolved = resolved;
        tables.write(dictionary, &work.locations[m], &frames);
        if resolved > 0 {
            tables.set_flags(dictionary, m, &frames);
        }
    }
}

/// A location to symbolize: its index and the address its file knows.
#[derive(Clone, Copy)]
struct Wanted {
    location: usize,
    address: u64,
    space: Space,
}

/// Each mapping's report and the locations to symbolize in it.
struct Work {
    entries: Vec<MappingReport>,
    locations: Vec<Vec<Wanted>>,
    ids: Vec<(String, String)>,
}

impl Work {
    fn of(d: &ProfilesDictionary, options: &Options) -> Work {
        let n = d.mapping_table.len();
        let mut locations = vec![Vec::new(); n];
        for (i, l) in d.location_table.iter().enumerate() {
            let m = l.mapping_index as usize;
            if l.mapping_index <= 0 || m >= n || l.address == 0 {
                continue;
            }
            let space = match frame_type(d, &l.attribute_indices) {
                Some("native") => Space::File,
                Some(_) => continue,
                None => runtime(&d.mapping_table[m]),
            };
            if l.lines.is_empty() || options.force {
                locations[m].push(Wanted {
                    location: i,
                    address: l.address,
                    space,
                });
            }
        }
        let ids: Vec<(String, String)> = (d.mapping_table.iter())
            .map(|m| (attribute(d, m, BUILD_ID_GNU), attribute(d, m, HTLHASH)))
            .collect();
        let entries = (0..n)
            .map(|m| entry_of(d, m, &locations[m], &ids[m], options))
            .collect();
        Work {
            entries,
            locations,
            ids,
        }
    }

    /// Mapping `m`'s frames, by location index.
    fn resolve(
        &self,
        d: &ProfilesDictionary,
        m: usize,
        options: &Options,
    ) -> (MappingReport, HashMap<usize, Vec<Frame>>) {
        let mut entry = self.entries[m].clone();
        let ids = FileIds {
            gnu: &self.ids[m].0,
            htlhash: &self.ids[m].1,
        };
        let mut by_location = HashMap::new();
        // Native frames and process addresses apart: each has its own base.
        for space in [Space::File, runtime(&d.mapping_table[m])] {
            let wanted: Vec<Wanted> = (self.locations[m].iter())
                .filter(|w| same_space(w.space, space))
                .copied()
                .collect();
            if wanted.is_empty() {
                continue;
            }
            let mut addresses: Vec<u64> = wanted.iter().map(|w| w.address).collect();
            addresses.sort_unstable();
            addresses.dedup();
            let Some(frames) = resolve(&mut entry, (space, ids), &addresses, options) else {
                break;
            };
            for w in wanted {
                by_location.insert(
                    w.location,
                    frames.get(&w.address).cloned().unwrap_or_default(),
                );
            }
        }
        (entry, by_location)
    }
}

fn runtime(m: &Mapping) -> Space {
    Space::Runtime {
        start: m.memory_start,
        limit: m.memory_limit,
        offset: m.file_offset,
    }
}

fn same_space(a: Space, b: Space) -> bool {
    matches!(
        (a, b),
        (Space::File, Space::File) | (Space::Runtime { .. }, Space::Runtime { .. })
    )
}

/// Mapping `m`'s report before it is resolved.
fn entry_of(
    d: &ProfilesDictionary,
    m: usize,
    wanted: &[Wanted],
    (gnu, htlhash): &(String, String),
    options: &Options,
) -> MappingReport {
    let mapping = &d.mapping_table[m];
    let file = string(d, mapping.filename_strindex).to_string();
    let mut addresses: Vec<u64> = wanted.iter().map(|w| w.address).collect();
    addresses.sort_unstable();
    addresses.dedup();
    let symbolized = HAS[..3].iter().any(|key| flag(d, mapping, key));
    let skipped = if options.mode == Mode::None {
        Some("symbolization is off".to_string())
    } else if addresses.is_empty() {
        Some(NOTHING_TO_DO.into())
    } else if symbolized && !options.force {
        Some("already symbolized (force to redo it)".into())
    } else {
        None
    };
    MappingReport {
        file,
        build_id: match gnu.is_empty() {
            true => htlhash.clone(),
            false => gnu.clone(),
        },
        found: None,
        passed_over: Vec::new(),
        addresses: addresses.len(),
        resolved: 0,
        skipped,
    }
}

fn string(d: &ProfilesDictionary, index: i32) -> &str {
    usize::try_from(index)
        .ok()
        .and_then(|i| d.string_table.get(i))
        .map_or("", String::as_str)
}

/// The attributes `indices` name, as (key, value).
fn attributes<'a>(
    d: &'a ProfilesDictionary,
    indices: &'a [i32],
) -> impl Iterator<Item = (&'a str, &'a AnyValue)> + 'a {
    indices.iter().filter_map(|&i| {
        let a = d.attribute_table.get(usize::try_from(i).ok()?)?;
        Some((string(d, a.key_strindex), a.value.as_ref()?))
    })
}

fn frame_type<'a>(d: &'a ProfilesDictionary, indices: &'a [i32]) -> Option<&'a str> {
    attributes(d, indices)
        .find(|(k, _)| *k == FRAME_TYPE)
        .and_then(|(_, v)| v.has_string_value().then(|| v.string_value()))
}

fn attribute(d: &ProfilesDictionary, m: &Mapping, key: &str) -> String {
    attributes(d, &m.attribute_indices)
        .find(|(k, _)| *k == key)
        .and_then(|(_, v)| v.has_string_value().then(|| v.string_value()))
        .unwrap_or("")
        .to_string()
}

fn flag(d: &ProfilesDictionary, m: &Mapping, key: &str) -> bool {
    attributes(d, &m.attribute_indices)
        .any(|(k, v)| k == key && v.has_bool_value() && v.bool_value())
}

/// The dictionary's strings and functions, indexed to add each once.
struct Tables {
    strings: StringIndex,
    functions: HashMap<(i32, i32, i32, i64), i32>,
}

impl Tables {
    fn of(d: &ProfilesDictionary) -> Tables {
        let strings = StringIndex::of(&d.string_table);
        let mut functions = HashMap::new();
        for (i, f) in d.function_table.iter().enumerate() {
            let key = (
                f.name_strindex,
                f.system_name_strindex,
                f.filename_strindex,
                f.start_line,
            );
            functions.entry(key).or_insert(i as i32);
        }
        Tables { strings, functions }
    }

    fn string(&mut self, d: &mut ProfilesDictionary, s: &str) -> i32 {
        self.strings.position(&mut d.string_table, s) as i32
    }

    fn function(&mut self, d: &mut ProfilesDictionary, frame: &Frame) -> i32 {
        let key = (
            self.string(d, &frame.name),
            self.string(d, &frame.system_name),
            self.string(d, &frame.file),
            frame.start_line,
        );
        if let Some(&at) = self.functions.get(&key) {
            return at;
        }
        let mut f = Function::new();
        (f.name_strindex, f.system_name_strindex, f.filename_strindex) = (key.0, key.1, key.2);
        f.start_line = key.3;
        d.function_table.push(f);
        let at = d.function_table.len() as i32 - 1;
        self.functions.insert(key, at);
        at
    }

    /// The locations' lines, innermost first, from their frames.
    fn write(
        &mut self,
        d: &mut ProfilesDictionary,
        wanted: &[Wanted],
        frames: &HashMap<usize, Vec<Frame>>,
    ) {
        for w in wanted {
            let Some(found) = frames.get(&w.location).filter(|f| !f.is_empty()) else {
                continue;
            };
            let lines = found
                .iter()
                .map(|frame| {
                    let mut line = Line::new();
                    (line.function_index, line.line, line.column) =
                        (self.function(d, frame), frame.line, frame.column);
                    line
                })
                .collect();
            d.location_table[w.location].lines = lines;
        }
    }

    /// Mapping `m`'s `pprof.mapping.has_*` attributes, as pprof sets its
    /// flags: each new attribute entry added once, the mapping's own entry
    /// for the key replaced (entries may be shared by other mappings).
    fn set_flags(
        &mut self,
        d: &mut ProfilesDictionary,
        m: usize,
        frames: &HashMap<usize, Vec<Frame>>,
    ) {
        let all = || frames.values().flatten();
        let found = [
            all().any(|f| !f.name.is_empty()),
            all().any(|f| !f.file.is_empty()),
            all().any(|f| f.line != 0),
            true,
        ];
        for (key, on) in HAS.iter().zip(found) {
            if on && !flag(d, &d.mapping_table[m], key) {
                let entry = self.true_attribute(d, key);
                let key_index = self.string(d, key);
                let table = &d.attribute_table;
                let indices = &mut d.mapping_table[m].attribute_indices;
                indices.retain(|&i| {
                    usize::try_from(i)
                        .ok()
                        .and_then(|i| table.get(i))
                        .is_none_or(|a| a.key_strindex != key_index)
                });
                indices.push(entry);
            }
        }
    }

    /// The index of an attribute `key = true`, added when there is none.
    fn true_attribute(&mut self, d: &mut ProfilesDictionary, key: &str) -> i32 {
        let key_index = self.string(d, key);
        let existing = d.attribute_table.iter().position(|a| {
            a.key_strindex == key_index
                && a.unit_strindex == 0
                && a.value
                    .as_ref()
                    .is_some_and(|v| v.has_bool_value() && v.bool_value())
        });
        if let Some(at) = existing {
            return at as i32;
        }
        let mut value = AnyValue::new();
        value.set_bool_value(true);
        let mut entry = KeyValueAndUnit::new();
        entry.key_strindex = key_index;
        entry.value = Some(value).into();
        d.attribute_table.push(entry);
        d.attribute_table.len() as i32 - 1
    }
}
