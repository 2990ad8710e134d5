//! The listing's data and the samples counted per address (pprof's
//! `sourcePrinter` as `newSourcePrinter` fills it).

use std::collections::{BTreeMap, HashMap, HashSet};

use protoprof_model_meta::{IdIndex, StringTable};
use protoprof_model_pprof::perftools::profiles::{Line, Location, Mapping, Profile};
use protoprof_model_pprof::samples::ProfileSamples;
use regex::Regex;

use crate::demangle::reported_name;
use crate::disasm::{go_parse_uint, MappedObject, ObjectFiles, OpenedObject};
use crate::list::SourceFiles;
use crate::selection::Selection;

/// An annotated source listing (pprof's `WebListData`).
#[derive(Debug, Clone, Default)]
pub struct WebList {
    /// The profile's total, formatted.
    pub total: String,
    /// The functions shown, files in name order.
    pub functions: Vec<WebListFunction>,
}

/// One function's range of lines in one file.
#[derive(Debug, Clone)]
pub struct WebListFunction {
    /// Its name.
    pub name: String,
    /// Its file.
    pub file: String,
    /// Its flat value, formatted.
    pub flat: String,
    /// Its cumulative value, formatted.
    pub cum: String,
    /// Its cumulative value's share of the total.
    pub percent: String,
    /// Its lines.
    pub lines: Vec<WebListLine>,
}

/// One source line.
#[derive(Debug, Clone)]
pub struct WebListLine {
    /// Its number.
    pub number: i64,
    /// Its text.
    pub source: String,
    /// `nop` (no instruction), `deadsrc` or `livesrc` (instructions to show).
    pub class: &'static str,
    /// Its flat value, or `.`.
    pub flat: String,
    /// Its cumulative value, or `.`.
    pub cum: String,
    /// The instructions compiled from it.
    pub instructions: Vec<WebListInstruction>,
}

/// One instruction under a source line.
#[derive(Debug, Clone)]
pub struct WebListInstruction {
    /// Whether it does not follow the instruction shown before it.
    pub new_block: bool,
    /// Its flat value, or `.`.
    pub flat: String,
    /// Its cumulative value, or `.`.
    pub cum: String,
    /// Whether it stands for samples without a binary (no text is shown).
    pub synthetic: bool,
    /// Its address in the binary.
    pub address: u64,
    /// Its text, indented and padded to 80 columns.
    pub text: String,
    /// `file:line` of its innermost frame (HTML-escaped, as pprof has it).
    pub file_line: String,
    /// The inlined calls leading to it not already shown above it.
    pub inlined_calls: Vec<WebListCall>,
}

/// An inlined call leading to an instruction.
#[derive(Debug, Clone)]
pub struct WebListCall {
    /// The calling line's text, indented and padded.
    pub source: String,
    /// The calling file's base name.
    pub file_base: String,
    /// The calling line.
    pub line: i64,
}

/// What pprof keeps of an instruction (`instructionInfo`).
#[derive(Debug, Clone, Default)]
pub(super) struct InstructionInfo {
    pub(super) object_address: u64,
    pub(super) length: u64,
    pub(super) text: String,
    pub(super) file: String,
    pub(super) line: i64,
    pub(super) flat: i64,
    pub(super) cum: i64,
}

/// An instruction shown under a line, with the calls leading to it
/// (callers first).
#[derive(Debug, Clone)]
pub(super) struct SourceInstruction {
    pub(super) address: u64,
    pub(super) stack: Vec<(String, i64)>,
}

/// A file to show (`sourceFile`).
#[derive(Debug, Default)]
pub(super) struct SourceFile {
    pub(super) lines: BTreeMap<i64, Vec<SourceInstruction>>,
    pub(super) function_of_line: HashMap<i64, String>,
}

/// A range of lines of one function (`sourceFunction`).
#[derive(Debug, Clone)]
pub(super) struct SourceFunction {
    pub(super) name: String,
    pub(super) begin: i64,
    pub(super) end: i64,
    pub(super) flat: i64,
    pub(super) cum: i64,
}

/// Source files, each read once.
pub(super) struct SourceCache<'f> {
    pub(super) files: &'f mut dyn SourceFiles,
    pub(super) read: HashMap<String, Vec<String>>,
}

impl SourceCache<'_> {
    /// Line `number` of `path`; `None` past either end or unreadable.
    pub(super) fn line(&mut self, path: &str, number: i64) -> Option<String> {
        if !self.read.contains_key(path) {
            let lines = self.files.lines(path).unwrap_or_default();
            self.read.insert(path.to_string(), lines);
        }
        let lines = &self.read[path];
        let at = usize::try_from(number).ok()?.checked_sub(1)?;
        lines.get(at).cloned()
    }
}

/// pprof's `-weblist=REGEX`. `Err` is pprof's message when nothing
/// matches.
pub fn web_listing<S: ProfileSamples>(
    source: &S,
    index: usize,
    selection: &Selection,
    rx: &Regex,
    (objects, files): (&mut dyn ObjectFiles, &mut dyn SourceFiles),
) -> Result<WebList, String> {
    // pprof lists addresses, with inlined frames kept.
    let (selection, report) = crate::disasm::address_report(source, index, selection, false);
    let p = crate::filtered_profile(source, &selection);
    let names = (p.function.iter())
        .map(|f| reported_name(&p, f, selection.names_as_given).into_owned())
        .collect();
    let mut printer = Printer {
        p: &p,
        functions: IdIndex::positions(p.function.iter().map(|f| f.id)).0,
        mappings: IdIndex::positions(p.mapping.iter().map(|m| m.id)).0,
        names,
        objects,
        opened: HashMap::new(),
        sources: SourceCache {
            files,
            read: HashMap::new(),
        },
        files: BTreeMap::new(),
        instructions: HashMap::new(),
        interest: HashSet::new(),
        pretty_names: HashMap::new(),
    };
    let counted = printer.count_samples(index, selection.mean, rx);
    if printer.interest.is_empty() {
        return Err(format!("no matches found for regexp: {}", rx.as_str()));
    }
    printer.expand_addresses(&counted);
    printer.init_samples(&counted);
    Ok(printer.generate(&report))
}

/// The samples counted per address, and the addresses of interest.
pub(super) struct Counted {
    /// Each address of interest: its location and its binary's key.
    pub(super) addresses: BTreeMap<u64, (usize, Option<String>)>,
    pub(super) flat: BTreeMap<u64, i64>,
    pub(super) cum: BTreeMap<u64, i64>,
}

/// pprof's `sourcePrinter`.
pub(super) struct Printer<'a> {
    pub(super) p: &'a Profile,
    /// The profile's functions and mappings by id: their positions.
    functions: IdIndex<u32>,
    mappings: IdIndex<u32>,
    /// Each function's name as reports give it, by position.
    names: Vec<String>,
    pub(super) objects: &'a mut dyn ObjectFiles,
    /// Binaries by mapping file, `None` when one cannot be opened.
    pub(super) opened: HashMap<String, Option<OpenedObject>>,
    pub(super) sources: SourceCache<'a>,
    pub(super) files: BTreeMap<String, SourceFile>,
    pub(super) instructions: HashMap<u64, InstructionInfo>,
    pub(super) interest: HashSet<String>,
    /// The function last met under each system name (pprof's
    /// `prettyNames`): its position.
    pub(super) pretty_names: HashMap<&'a str, u32>,
}

impl<'a> Printer<'a> {
    /// Counts each sample once per address (flat at its leaf) and notes
    /// the functions `rx` matches (by name, system name or file; or the
    /// outermost frame at the address `rx` spells).
    fn count_samples(&mut self, index: usize, mean: bool, rx: &Regex) -> Counted {
        let p = self.p;
        let locations = IdIndex::positions(p.location.iter().map(|l| l.id)).0;
        let address = go_parse_uint(rx.as_str());
        let mut synthetic = SyntheticAddresses::new(&p.mapping);
        let mut counted = Counted {
            addresses: BTreeMap::new(),
            flat: BTreeMap::new(),
            cum: BTreeMap::new(),
        };
        let mut seen = HashSet::new();
        for sample in &p.sample {
            let mut value = sample.value.get(index).copied().unwrap_or(0);
            if mean {
                let divisor = sample.value.first().copied().unwrap_or(0);
                if divisor != 0 {
                    value /= divisor;
                }
            }
            seen.clear();
            for (i, id) in sample.location_id.iter().enumerate().rev() {
                let Some(at) = locations.get(*id).map(|at| at as usize) else {
                    continue;
                };
                let location = &p.location[at];
                self.note_pretty_names(location);
                let addr = match location.address {
                    0 => synthetic.address(at),
                    a => a,
                };
                if seen.insert(addr) {
                    add(&mut counted.cum, addr, value);
                }
                if i == 0 {
                    add(&mut counted.flat, addr, value);
                }
                for j in self.interesting_lines(location, addr, (rx, address)) {
                    self.mark_interest(&mut counted, (addr, at), j);
                }
            }
        }
        counted
    }

    /// The lines of `location` (at `addr`) whose functions are of interest.
    fn interesting_lines(
        &self,
        location: &Location,
        addr: u64,
        (rx, address): (&Regex, Option<u64>),
    ) -> Vec<usize> {
        if address == Some(addr) {
            return location.line.len().checked_sub(1).into_iter().collect();
        }
        let mapping = self.mapping_of(location);
        let matches_file = mapping.is_some_and(|m| rx.is_match(self.p.string(m.filename)));
        (0..location.line.len())
            .filter(|&j| (j == 0 && matches_file) || self.line_matches(&location.line[j], rx))
            .collect()
    }

    fn line_matches(&self, line: &Line, rx: &Regex) -> bool {
        self.function_names(line)
            .is_some_and(|(name, system, file)| {
                rx.is_match(name) || rx.is_match(system) || rx.is_match(file)
            })
    }

    /// A line's function's name (as reported), system name and file.
    pub(super) fn function_names(&self, line: &Line) -> Option<(&str, &'a str, &'a str)> {
        let at = self.functions.get(line.function_id)?;
        let f = &self.p.function[at as usize];
        let name = self.names[at as usize].as_str();
        Some((
            name,
            self.p.string(f.system_name),
            self.p.string(f.filename),
        ))
    }

    fn note_pretty_names(&mut self, location: &Location) {
        for line in &location.line {
            if let Some(at) = self.functions.get(line.function_id) {
                let system = self.p.string(self.p.function[at as usize].system_name);
                self.pretty_names.insert(system, at);
            }
        }
    }

    /// The name a function's system name is shown by (pprof's
    /// `prettyNames`), or the name itself.
    pub(super) fn pretty_name(&self, system: &str) -> String {
        match self.pretty_names.get(system) {
            Some(&at) => self.names[at as usize].clone(),
            None => system.to_string(),
        }
    }

    pub(super) fn mapping_of(&self, location: &Location) -> Option<&'a Mapping> {
        let at = self.mappings.get(location.mapping_id)?;
        Some(&self.p.mapping[at as usize])
    }

    /// pprof's `markInterest`: the function of line `j` of the location
    /// at `at`, and the address with its binary.
    fn mark_interest(&mut self, counted: &mut Counted, (addr, at): (u64, usize), j: usize) {
        let location = &self.p.location[at];
        let Some((name, system, _)) = self.function_names(&location.line[j]) else {
            return;
        };
        let (name, system) = (name.to_string(), system.to_string());
        self.interest.insert(name);
        self.interest.insert(system);
        if let std::collections::btree_map::Entry::Vacant(entry) = counted.addresses.entry(addr) {
            entry.insert((at, self.open_object(location)));
        }
    }

    /// The binary `location`'s mapping names, opened once; its key.
    fn open_object(&mut self, location: &Location) -> Option<String> {
        let m = self.mapping_of(location)?;
        let file = self.p.string(m.filename).to_string();
        if !self.opened.contains_key(&file) {
            let mapped = MappedObject {
                file: &file,
                build_id: self.p.string(m.build_id),
                range: (m.memory_start, m.memory_limit, m.file_offset),
            };
            let object = self.objects.open(mapped).ok();
            self.opened.insert(file.clone(), object);
        }
        self.opened[&file].as_ref().map(|_| file)
    }
}

/// pprof's `synthCode`: addresses past every mapping for locations that
/// have none, one per location, in the order they are met.
struct SyntheticAddresses {
    next: u64,
    given: HashMap<usize, u64>,
}

impl SyntheticAddresses {
    fn new(mappings: &[Mapping]) -> Self {
        let next = mappings.iter().map(|m| m.memory_limit).fold(1, u64::max);
        SyntheticAddresses {
            next,
            given: HashMap::new(),
        }
    }

    fn address(&mut self, location: usize) -> u64 {
        *self.given.entry(location).or_insert_with(|| {
            self.next += 1;
            self.next - 1
        })
    }
}

pub(super) fn add(values: &mut BTreeMap<u64, i64>, addr: u64, value: i64) {
    let v = values.entry(addr).or_insert(0);
    *v = v.saturating_add(value);
}

/// pprof's `canonicalizeFileName`.
pub(super) fn canonical_file_name(name: &str) -> String {
    let name = name.strip_prefix("/proc/self/cwd/").unwrap_or(name);
    let name = name.strip_prefix("./").unwrap_or(name);
    crate::go_path::clean(name)
}

/// How many columns the leading blanks of `line` take (tabs to the next
/// multiple of 8).
pub(super) fn indentation(line: &str) -> usize {
    let mut column = 0;
    for c in line.chars() {
        match c {
            ' ' => column += 1,
            '\t' => column = (column / 8 + 1) * 8,
            _ => break,
        }
    }
    column
}

/// `s` with its tabs expanded to 8-column stops, padded with blanks to
/// `width` columns (pprof's `rightPad`).
pub(super) fn right_pad(s: &str, width: usize) -> String {
    let mut out = String::with_capacity(width.max(s.len()));
    let mut column = 0;
    for c in s.chars() {
        column += 1;
        if c == '\t' {
            out.push(' ');
            while column % 8 != 0 {
                column += 1;
                out.push(' ');
            }
        } else {
            out.push(c);
        }
    }
    while column < width {
        column += 1;
        out.push(' ');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_clean_as_go_cleans_them() {
        assert_eq!(canonical_file_name("/proc/self/cwd/./a/../b.c"), "b.c");
        assert_eq!(canonical_file_name("./x//y/./z.c"), "x/y/z.c");
        assert_eq!(canonical_file_name("/a/b/../../../c"), "/c");
        assert_eq!(canonical_file_name("../a"), "../a");
        assert_eq!(canonical_file_name(""), ".");
    }

    #[test]
    fn tabs_pad_to_eight_columns() {
        assert_eq!(right_pad("a\tb", 12), "a       b   ");
        assert_eq!(indentation("\t  x"), 10);
        assert_eq!(indentation("    "), 4);
        assert_eq!(right_pad("abcdef", 3), "abcdef");
    }

    #[test]
    fn synthetic_addresses_follow_the_last_mapping() {
        let m = Mapping {
            memory_limit: 0x2000,
            ..Mapping::default()
        };
        let mut s = SyntheticAddresses::new(&[m]);
        assert_eq!(s.address(7), 0x2000);
        assert_eq!(s.address(3), 0x2001);
        assert_eq!(s.address(7), 0x2000);
    }
}
