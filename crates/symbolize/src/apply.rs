//! A pprof profile symbolized: each mapping's distinct addresses resolved
//! once, its locations' lines replaced by the frames found (innermost
//! first), functions and strings added once each, and the mapping's
//! `has_*` flags set as pprof sets them.

use std::collections::HashMap;

use protoprof_model_meta::StringTable;
use protoprof_model_pprof::perftools::profiles::{Function, Line, Mapping, Profile};

use crate::report::{MappingReport, Report};
use crate::resolve::{Binary, Frame};
use crate::{lookup, Mode, Options};

/// Mappings that are no file on disk (pprof's list).
const NOT_FILES: [&str; 5] = ["[vdso]", "linux-vdso", "//anon", "/memfd:", "/dev/dri/"];

/// Symbolizes `profile` in place; what was done, per mapping.
pub fn symbolize(profile: &mut Profile, options: &Options) -> Report {
    let mut report = Report::default();
    let mut tables = Tables::of(profile);
    for m in 0..profile.mapping.len() {
        let mapping = profile.mapping[m].clone();
        let mut entry = MappingReport {
            file: profile.string(mapping.filename).to_string(),
            build_id: profile.string(mapping.build_id).to_string(),
            found: None,
            passed_over: Vec::new(),
            addresses: 0,
            resolved: 0,
            skipped: None,
        };
        let addresses = addresses_of(profile, &mapping);
        entry.addresses = addresses.len();
        entry.skipped = skip_reason(&mapping, &entry.file, options);
        if entry.skipped.is_none() {
            let frames = resolve(&mut entry, &mapping, &addresses, options);
            if let Some(frames) = frames {
                entry.resolved = frames.values().filter(|f| !f.is_empty()).count();
                tables.write(profile, m, &frames);
            }
        }
        report.mappings.push(entry);
    }
    report
}

/// Why `mapping` is left as it is, if it is.
fn skip_reason(mapping: &Mapping, file: &str, options: &Options) -> Option<String> {
    let symbolized = mapping.has_functions
        || mapping.has_filenames
        || mapping.has_line_numbers
        || mapping.has_inline_frames;
    if options.mode == Mode::None {
        Some("symbolization is off".into())
    } else if symbolized && !options.force {
        Some("already symbolized (force to redo it)".into())
    } else if file.is_empty() || NOT_FILES.iter().any(|n| file.starts_with(n)) {
        Some("not a file".into())
    } else {
        None
    }
}

/// The distinct addresses of `mapping`'s locations.
fn addresses_of(profile: &Profile, mapping: &Mapping) -> Vec<u64> {
    let mut addresses: Vec<u64> = profile
        .location
        .iter()
        .filter(|l| l.mapping_id == mapping.id && l.address != 0)
        .map(|l| l.address)
        .collect();
    addresses.sort_unstable();
    addresses.dedup();
    addresses
}

/// Each address's frames, from the file found for `mapping`; `None`
/// when no file is found or it cannot be read.
fn resolve(
    entry: &mut MappingReport,
    mapping: &Mapping,
    addresses: &[u64],
    options: &Options,
) -> Option<HashMap<u64, Vec<Frame>>> {
    let (found, passed) = lookup::find(&options.search, &entry.file, &entry.build_id);
    entry.passed_over = passed;
    let (mut found, data) = found?;
    // Frames from the separate debug file where there is one: a system
    // library's own symbol table has only what it exports.
    found.debug_file = lookup::separate_debug_file(&options.search, &found.path, &data);
    entry.found = Some(found.clone());
    let Some(base) = crate::base::base(
        &data,
        mapping.memory_start,
        mapping.memory_limit,
        mapping.file_offset,
    ) else {
        entry.skipped = Some(format!("{}: not an ELF file", found.path.display()));
        return None;
    };
    drop(data);
    let names_only = options.mode == Mode::FastLocal;
    let read_from = found.debug_file.as_deref().unwrap_or(&found.path);
    let binary = match Binary::open(read_from, options.demangle, names_only) {
        Ok(binary) => binary,
        Err(e) => {
            entry.skipped = Some(format!("{}: {e}", found.path.display()));
            return None;
        }
    };
    let frames = addresses
        .iter()
        .map(|&a| (a, binary.frames(a.wrapping_sub(base))))
        .collect();
    Some(frames)
}

/// The profile's functions and strings, indexed to add each once.
struct Tables {
    strings: HashMap<String, i64>,
    functions: HashMap<(i64, i64, i64), u64>,
    next_function: u64,
}

impl Tables {
    fn of(p: &Profile) -> Tables {
        let strings = p
            .string_table
            .iter()
            .enumerate()
            .map(|(i, s)| (s.clone(), i as i64))
            .collect();
        let functions = p
            .function
            .iter()
            .map(|f| ((f.name, f.system_name, f.filename), f.id))
            .collect();
        Tables {
            strings,
            functions,
            next_function: p.function.iter().map(|f| f.id).max().unwrap_or(0) + 1,
        }
    }

    fn string(&mut self, p: &mut Profile, s: &str) -> i64 {
        if let Some(&at) = self.strings.get(s) {
            return at;
        }
        p.string_table.push(s.to_string());
        let at = p.string_table.len() as i64 - 1;
        self.strings.insert(s.to_string(), at);
        at
    }

    fn function(&mut self, p: &mut Profile, frame: &Frame) -> u64 {
        let key = (
            self.string(p, &frame.name),
            self.string(p, &frame.system_name),
            self.string(p, &frame.file),
        );
        if let Some(&id) = self.functions.get(&key) {
            return id;
        }
        let mut f = Function::new();
        (f.id, f.name, f.system_name, f.filename) = (self.next_function, key.0, key.1, key.2);
        self.next_function += 1;
        p.function.push(f);
        self.functions.insert(key, self.next_function - 1);
        self.next_function - 1
    }

    /// Mapping `m`'s locations given their frames' lines, and its flags.
    fn write(&mut self, p: &mut Profile, m: usize, frames: &HashMap<u64, Vec<Frame>>) {
        let id = p.mapping[m].id;
        let (mut names, mut files, mut lines, mut any) = (false, false, false, false);
        for l in 0..p.location.len() {
            let location = &p.location[l];
            if location.mapping_id != id {
                continue;
            }
            let Some(found) = frames.get(&location.address).filter(|f| !f.is_empty()) else {
                continue;
            };
            any = true;
            let mut new_lines = Vec::with_capacity(found.len());
            for frame in found {
                names |= !frame.name.is_empty();
                files |= !frame.file.is_empty();
                lines |= frame.line != 0;
                let mut line = Line::new();
                (line.function_id, line.line, line.column) =
                    (self.function(p, frame), frame.line, frame.column);
                new_lines.push(line);
            }
            p.location[l].line = new_lines;
            p.location[l].is_folded = false;
        }
        let mapping = &mut p.mapping[m];
        mapping.has_functions |= names;
        mapping.has_filenames |= files;
        mapping.has_line_numbers |= lines;
        mapping.has_inline_frames |= any;
    }
}
