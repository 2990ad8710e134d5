//! A pprof profile symbolized: each mapping's distinct addresses resolved
//! once, its locations' lines replaced by the frames found (innermost
//! first), functions and strings added once each, and the mapping's
//! `has_*` flags set as pprof sets them.

use std::collections::HashMap;

use protoprof_model_meta::StringTable;
use protoprof_model_pprof::perftools::profiles::{Function, Line, Mapping, Profile};

use crate::lookup::{self, FileIds};
use crate::report::{MappingReport, Report, NOTHING_TO_DO};
use crate::resolve::{Binary, Frame};
use crate::strings::StringIndex;
use crate::symbol_table::SymbolTable;
use crate::{Mode, Options};

/// Whether `file` names no file on disk, as pprof's `Unsymbolizable`
/// tells (`[vdso]`, `//anon`, …). The kernel's mapping
/// (`[kernel.kallsyms]`) is looked for by its build id.
fn not_a_file(file: &str, build_id: &str) -> bool {
    let base = file.rsplit('/').next().unwrap_or(file);
    let kernel = file.starts_with("[kernel.kallsyms]") && !build_id.is_empty();
    file.is_empty()
        || (base.starts_with('[') && !kernel)
        || base.starts_with("linux-vdso")
        || ["//anon", "/memfd:", "/dev/dri/"]
            .iter()
            .any(|n| file.starts_with(n))
}

/// Symbolizes `profile` in place; what was done, per mapping. Mappings
/// are resolved on as many threads as the machine has, each binary opened
/// once and each distinct address looked up once.
pub fn symbolize(profile: &mut Profile, options: &Options) -> Report {
    let by_mapping = locations_by_mapping(profile, options.force);
    let locations_of = |m: &Mapping| by_mapping.get(&m.id).map_or(&[][..], Vec::as_slice);
    let addresses: Vec<Vec<u64>> = (profile.mapping.iter())
        .map(|m| distinct_addresses(profile, locations_of(m)))
        .collect();
    let mut entries: Vec<MappingReport> = (profile.mapping.iter().zip(&addresses))
        .map(|(m, addresses)| entry_of(profile, m, addresses.len(), options))
        .collect();
    let todo: Vec<usize> = (0..entries.len())
        .filter(|&m| entries[m].skipped.is_none())
        .collect();
    let resolved = resolve_all(profile, &addresses, &mut entries, &todo, options);
    // The tables are indexed only when there is something to write: a
    // symbolized profile costs a look at its mappings and locations.
    if !resolved.is_empty() {
        let mut tables = Tables::of(profile);
        for (m, frames) in resolved {
            entries[m].resolved = frames.values().filter(|f| !f.is_empty()).count();
            let id = profile.mapping[m].id;
            let locations = by_mapping.get(&id).map_or(&[][..], Vec::as_slice);
            tables.write(profile, m, locations, &frames);
            if let Some(found) = entries[m].found.as_ref().filter(|f| f.how.is_binary_path()) {
                // pprof names a mapping by the file it found for it in
                // the binary path (`File: vmlinux` for the kernel's).
                let path = found.path.to_string_lossy();
                let at = tables.strings.position(&mut profile.string_table, &path);
                profile.mapping[m].filename = at as i64;
            }
        }
    }
    Report { mappings: entries }
}

/// The indices of each mapping's locations that are only addresses (all
/// of them when forced), by mapping id.
fn locations_by_mapping(profile: &Profile, force: bool) -> HashMap<u64, Vec<usize>> {
    let mut by_mapping: HashMap<u64, Vec<usize>> = HashMap::new();
    for (i, l) in profile.location.iter().enumerate() {
        // A location with lines keeps them (pprof would redo the whole
        // mapping when its flags are unset, as many writers leave them).
        if l.mapping_id != 0 && l.address != 0 && (l.line.is_empty() || force) {
            by_mapping.entry(l.mapping_id).or_default().push(i);
        }
    }
    by_mapping
}

/// A mapping's report before it is resolved: how many distinct addresses
/// it has, and why it is left alone, if it is.
fn entry_of(
    profile: &Profile,
    mapping: &Mapping,
    addresses: usize,
    options: &Options,
) -> MappingReport {
    let file = profile.string(mapping.filename).to_string();
    let build_id = profile.string(mapping.build_id).to_string();
    MappingReport {
        skipped: match addresses {
            0 => Some(NOTHING_TO_DO.into()),
            _ => skip_reason(mapping, (&file, &build_id), options),
        },
        file,
        build_id,
        found: None,
        passed_over: Vec::new(),
        addresses,
        resolved: 0,
    }
}

/// Why `mapping` is left as it is, if it is.
fn skip_reason(
    mapping: &Mapping,
    (file, build_id): (&str, &str),
    options: &Options,
) -> Option<String> {
    // pprof's test: inline frames alone do not make a mapping symbolized.
    let symbolized = mapping.has_functions || mapping.has_filenames || mapping.has_line_numbers;
    if options.mode == Mode::None {
        Some("symbolization is off".into())
    } else if symbolized && !options.force {
        Some("already symbolized (force to redo it)".into())
    } else if not_a_file(file, build_id) {
        Some("not a file".into())
    } else {
        None
    }
}

/// The distinct addresses of `locations`.
fn distinct_addresses(profile: &Profile, locations: &[usize]) -> Vec<u64> {
    let mut addresses: Vec<u64> = locations
        .iter()
        .map(|&l| profile.location[l].address)
        .collect();
    addresses.sort_unstable();
    addresses.dedup();
    addresses
}

/// The frames of the mappings in `todo` at their `addresses`, resolved on
/// several threads; each mapping's entry says what was found.
fn resolve_all(
    profile: &Profile,
    addresses: &[Vec<u64>],
    entries: &mut [MappingReport],
    todo: &[usize],
    options: &Options,
) -> Vec<(usize, HashMap<u64, Vec<Frame>>)> {
    let shared: &[MappingReport] = entries;
    let results = in_parallel(todo, |m| {
        let mut entry = shared[m].clone();
        let mapping = &profile.mapping[m];
        let space = Space::Runtime {
            start: mapping.memory_start,
            limit: mapping.memory_limit,
            offset: mapping.file_offset,
        };
        let ids = FileIds {
            gnu: &shared[m].build_id,
            htlhash: "",
        };
        let frames = resolve(&mut entry, (space, ids), &addresses[m], options);
        (entry, frames)
    });
    let mut done = Vec::new();
    for (&m, (entry, frames)) in todo.iter().zip(results) {
        entries[m] = entry;
        done.extend(frames.map(|f| (m, f)));
    }
    done
}

/// `f` of each of `jobs`, in their order, run on as many threads as the
/// machine has (each job a mapping: a binary opened and read).
pub(crate) fn in_parallel<T: Send>(jobs: &[usize], f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    protoprof_model_meta::threads::map_in_order(jobs, threads, |&job| f(job))
}

/// How a mapping's addresses relate to its file's.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Space {
    /// A process's addresses in a mapping of `start..limit` at file offset
    /// `offset` (pprof's): pprof's base is subtracted.
    Runtime {
        /// `memory_start`.
        start: u64,
        /// `memory_limit`.
        limit: u64,
        /// `file_offset`.
        offset: u64,
    },
    /// The file's own virtual addresses (the eBPF profiler's native frames).
    File,
}

/// Each address's frames, from the file `entry` names (found by its name
/// and `ids`); `None` when no file is found or it cannot be read.
pub(crate) fn resolve(
    entry: &mut MappingReport,
    (space, ids): (Space, FileIds),
    addresses: &[u64],
    options: &Options,
) -> Option<HashMap<u64, Vec<Frame>>> {
    let (found, passed) = lookup::find(&options.search, &entry.file, ids);
    entry.passed_over = passed;
    let (mut found, data) = found?;
    // Frames from the separate debug file where there is one: a system
    // library's own symbol table has only what it exports.
    found.debug_file = lookup::separate_debug_file(&options.search, &found.path, &data);
    entry.found = Some(found.clone());
    let base = match space {
        Space::Runtime {
            start,
            limit,
            offset,
        } => crate::base::base(
            &data,
            &crate::base::Mapped {
                start,
                limit,
                offset,
                file: &entry.file,
                path: &found.path,
            },
        ),
        Space::File => Some(0),
    };
    let Some(base) = base else {
        entry.skipped = Some(format!(
            "{}: not an ELF file, or no base for the mapping",
            found.path.display()
        ));
        return None;
    };
    // The binary's own symbols name outermost frames; its bytes are not
    // kept while its DWARF is read.
    let file_addresses: Vec<u64> = addresses.iter().map(|a| a.wrapping_sub(base)).collect();
    let own = lookup::own_binary(&entry.file, ids, &found);
    let symbols = SymbolTable::read_for(own.as_deref().unwrap_or(&data), &file_addresses);
    drop(data);
    let names_only = options.mode == Mode::FastLocal;
    let read_from = found.debug_file.as_deref().unwrap_or(&found.path);
    let binary = match Binary::open(read_from, options.demangle, names_only) {
        Ok(binary) => binary.with_symbol_table(symbols),
        Err(e) => {
            entry.skipped = Some(format!("{}: {e}", found.path.display()));
            return None;
        }
    };
    let mut frames: HashMap<u64, Vec<Frame>> = addresses
        .iter()
        .map(|&a| (a, binary.frames(a.wrapping_sub(base))))
        .collect();
    binary.fill_start_lines(frames.iter_mut().map(|(&a, f)| (a.wrapping_sub(base), f)));
    Some(frames)
}

/// The profile's functions and strings, indexed to add each once.
struct Tables {
    strings: StringIndex,
    functions: HashMap<(i64, i64, i64, i64), u64>,
    next_function: u64,
}

impl Tables {
    fn of(p: &Profile) -> Tables {
        let strings = StringIndex::of(&p.string_table);
        let functions = p
            .function
            .iter()
            .map(|f| ((f.name, f.system_name, f.filename, f.start_line), f.id))
            .collect();
        Tables {
            strings,
            functions,
            next_function: p.function.iter().map(|f| f.id).max().unwrap_or(0) + 1,
        }
    }

    fn string(&mut self, p: &mut Profile, s: &str) -> i64 {
        self.strings.position(&mut p.string_table, s) as i64
    }

    fn function(&mut self, p: &mut Profile, frame: &Frame) -> u64 {
        let key = (
            self.string(p, &frame.name),
            self.string(p, &frame.system_name),
            self.string(p, &frame.file),
            frame.start_line,
        );
        if let Some(&id) = self.functions.get(&key) {
            return id;
        }
        let mut f = Function::new();
        (f.id, f.name, f.system_name, f.filename) = (self.next_function, key.0, key.1, key.2);
        f.start_line = key.3;
        self.next_function += 1;
        p.function.push(f);
        self.functions.insert(key, self.next_function - 1);
        self.next_function - 1
    }

    /// Mapping `m`'s `locations` given their frames' lines, and its flags.
    fn write(
        &mut self,
        p: &mut Profile,
        m: usize,
        locations: &[usize],
        frames: &HashMap<u64, Vec<Frame>>,
    ) {
        let (mut names, mut files, mut lines, mut any) = (false, false, false, false);
        for &l in locations {
            let Some(found) = frames.get(&p.location[l].address).filter(|f| !f.is_empty()) else {
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
