//! `-disasm` as upstream pprof prints it (its `report.PrintAssembly`): the
//! symbols of the profile's binaries whose names match, each disassembled
//! and every instruction annotated with the samples at its address.
//!
//! Reading binaries (their symbols, their instructions, where a mapping
//! sits in them) is the caller's, through [`ObjectFiles`]; this module
//! chooses the symbols, sums the samples and prints.

use std::collections::HashSet;

use protoprof_model_meta::StringTable;
use protoprof_model_pprof::samples::ProfileSamples;
use regex::Regex;

use crate::report::{percentage, top_report, TopOptions, TopReport};
use crate::selection::{Granularity, Selection};

/// Symbols at one address of a binary, as pprof groups `nm -n`'s lines:
/// the names, and the addresses up to the next symbol's (inclusive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectSymbol {
    /// The names at the address, in `nm`'s order.
    pub names: Vec<String>,
    /// The first address (in the file).
    pub start: u64,
    /// The last address: the next symbol's less one (`u64::MAX` for the
    /// last symbol).
    pub end: u64,
}

/// One instruction as a disassembler printed it, with the function, file
/// and line it said the instruction belongs to (empty or 0 when it did
/// not say).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instruction {
    /// Its address in the file.
    pub address: u64,
    /// The instruction's text.
    pub text: String,
    /// The function.
    pub function: String,
    /// The source file.
    pub file: String,
    /// The source line.
    pub line: i64,
}

/// One frame of an instruction's inline chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlineFrame {
    /// The function, as the binary names it (mangled, for C++ and Rust).
    pub function: String,
    /// The source file.
    pub file: String,
    /// The line, 0 when unknown.
    pub line: i64,
}

/// A binary a profile maps, as the profile describes the mapping.
#[derive(Debug, Clone, Copy)]
pub struct MappedObject<'a> {
    /// The mapping's file.
    pub file: &'a str,
    /// Its build id.
    pub build_id: &'a str,
    /// Its runtime start, limit and file offset.
    pub range: (u64, u64, u64),
}

/// A binary opened for disassembly.
#[derive(Debug, Clone)]
pub struct OpenedObject {
    /// What the disassembler is to read.
    pub path: String,
    /// What to subtract from a runtime address for the file's address.
    pub base: u64,
    /// Its symbols, by address.
    pub symbols: Vec<ObjectSymbol>,
}

/// Binaries, their symbols and their instructions.
pub trait ObjectFiles {
    /// The binary `mapping` names, opened, or why it cannot be.
    fn open(&mut self, mapping: MappedObject<'_>) -> Result<OpenedObject, String>;

    /// The instructions of `object` from `start` up to `end` (excluded).
    fn disassemble(
        &mut self,
        object: &OpenedObject,
        start: u64,
        end: u64,
    ) -> Result<Vec<Instruction>, String>;

    /// The inline chain at `address` of `object` (a file address),
    /// innermost first, from its line tables; `Err` when they cannot be
    /// read (the disassembler's word is used then).
    fn source_lines(
        &mut self,
        object: &OpenedObject,
        address: u64,
    ) -> Result<Vec<InlineFrame>, String> {
        let _ = (object, address);
        Err("no line tables".into())
    }

    /// The demangled forms a symbol's mangled `name` is also matched by
    /// (pprof tries the name in full, without parameters, and without
    /// template parameters too); none by default.
    fn demangled_forms(&self, name: &str) -> Vec<String> {
        let _ = name;
        Vec::new()
    }
}

/// One node of the graph a listing reads: an address and what is there.
#[derive(Debug, Clone)]
struct AddressNode {
    address: u64,
    function: String,
    file: String,
    line: i64,
    flat: i64,
    cum: i64,
}

/// pprof's `-disasm=REGEX`: every symbol matching `rx` (or holding the
/// address `rx` spells) in the binaries of the nodes it matches, with its
/// instructions and their samples. `Err` is pprof's message when nothing
/// matches, or a disassembler's failure.
pub fn disassembly<S: ProfileSamples>(
    source: &S,
    index: usize,
    selection: &Selection,
    rx: &Regex,
    objects: &mut dyn ObjectFiles,
) -> Result<String, String> {
    let (report, nodes) = address_nodes(source, index, selection);
    let address = go_parse_uint(rx.as_str());
    let mut out = format!("Total: {}\n", report.format_value(report.total));
    let matched: HashSet<&str> = (nodes.iter())
        .filter(|(n, objfile)| !objfile.is_empty() && rx.is_match(&n.function))
        .map(|(_, objfile)| objfile.as_str())
        .collect();
    // The binaries opened, and each chosen symbol with the index of its
    // binary (a binary's symbol list is not copied per symbol).
    let (mut opened, mut symbols) = (Vec::new(), Vec::new());
    let mut any_symbol = false;
    let p = source.profile();
    for m in &p.mapping {
        let file = p.string(m.filename);
        let holds_address = address.is_some_and(|a| m.memory_start <= a && a <= m.memory_limit);
        if !matched.contains(file) && !holds_address {
            continue;
        }
        let mapping = MappedObject {
            file,
            build_id: p.string(m.build_id),
            range: (m.memory_start, m.memory_limit, m.file_offset),
        };
        let object = match objects.open(mapping) {
            Ok(object) => object,
            Err(e) => {
                eprintln!("protoprof: {e}");
                continue;
            }
        };
        for symbol in &object.symbols {
            let forms = |name: &str| objects.demangled_forms(name);
            if let Some(names) = matching_names(symbol, (rx, address), &forms) {
                any_symbol = true;
                let shown = ObjectSymbol {
                    names,
                    ..symbol.clone()
                };
                let samples = nodes_in(&nodes, &shown, (object.base, mapping.range));
                if !samples.is_empty() {
                    symbols.push((shown, opened.len(), samples));
                }
            }
        }
        opened.push(object);
    }
    if symbols.is_empty() {
        return Err(match address {
            None => format!("no matches found for regexp {}", rx.as_str()),
            Some(a) if !any_symbol => format!("no matches found for address {a:#x}"),
            Some(a) => format!("address {a:#x} found in binary, but the corresponding symbols do not have samples in the profile"),
        });
    }
    symbols.sort_by(|(a, ..), (b, ..)| a.names[0].cmp(&b.names[0]).then(a.start.cmp(&b.start)));
    for (symbol, object, samples) in &symbols {
        // Symbol ends are inclusive; the disassembler's end is not.
        let end = symbol.end.saturating_add(1);
        let instructions = objects.disassemble(&opened[*object], symbol.start, end)?;
        let annotated = annotate(instructions, samples);
        print_routine(&mut out, (symbol, &report), samples, &annotated);
    }
    Ok(out)
}

/// The graph pprof's `-disasm` reads: nodes by address, inline frames
/// folded into their callers, with object files; each with its object
/// file.
fn address_nodes<S: ProfileSamples>(
    source: &S,
    index: usize,
    selection: &Selection,
) -> (TopReport, Vec<(AddressNode, String)>) {
    let (selection, report) = address_report(source, index, selection, true);
    let parts = crate::frames_for(source, &selection).parts;
    let nodes = (report.rows.iter())
        .map(|row| {
            let part = &parts[row.node as usize];
            let node = AddressNode {
                address: part.address_value,
                function: part.function.clone().unwrap_or_default(),
                file: part.file.clone().unwrap_or_default(),
                line: part.line.unwrap_or(0),
                flat: row.flat,
                cum: row.cum,
            };
            (node, part.objfile.clone().unwrap_or_default())
        })
        .collect();
    (report, nodes)
}

/// What pprof's address listings (`-disasm`, `-weblist`) read: nodes by
/// address with object files (inline frames folded into their callers
/// with `noinlines`), none dropped, values in the minimum unit; and the
/// selection that made them.
pub(crate) fn address_report<S: ProfileSamples>(
    source: &S,
    index: usize,
    selection: &Selection,
    noinlines: bool,
) -> (Selection, TopReport) {
    let selection = Selection {
        granularity: Granularity::Addresses,
        noinlines,
        object_names: true,
        ..selection.clone()
    };
    let options = TopOptions {
        node_fraction: 0.0,
        ..TopOptions::default()
    };
    let mut report = top_report(source, index, &selection, &options);
    report.output_unit = "minimum".into();
    (selection, report)
}

/// pprof's `matchSymbol`: every name when the symbol holds `address`,
/// else the first name (or one of its demangled forms) `rx` matches.
fn matching_names(
    symbol: &ObjectSymbol,
    (rx, address): (&Regex, Option<u64>),
    demangled_forms: &dyn Fn(&str) -> Vec<String>,
) -> Option<Vec<String>> {
    if let Some(a) = address.filter(|a| *a != 0) {
        if symbol.start <= a && a <= symbol.end {
            return Some(symbol.names.clone());
        }
    }
    for name in &symbol.names {
        if rx.is_match(name) {
            return Some(vec![name.clone()]);
        }
        if let Some(d) = demangled_forms(name).into_iter().find(|d| rx.is_match(d)) {
            return Some(vec![d]);
        }
    }
    None
}

/// The nodes of the mapping (`start..limit`, when not empty) whose file
/// address is within `symbol`, by address (pprof's `nodesPerSymbol`, then
/// its `AddressOrder`).
fn nodes_in(
    nodes: &[(AddressNode, String)],
    symbol: &ObjectSymbol,
    (base, (start, limit, _)): (u64, (u64, u64, u64)),
) -> Vec<AddressNode> {
    let mapped = |a: u64| start >= limit || (start..limit).contains(&a);
    let mut inside: Vec<AddressNode> = (nodes.iter())
        .map(|(n, _)| n)
        .filter(|n| mapped(n.address))
        .filter(|n| (symbol.start..=symbol.end).contains(&n.address.wrapping_sub(base)))
        .map(|n| AddressNode {
            address: n.address.wrapping_sub(base),
            ..n.clone()
        })
        .collect();
    inside.sort_by_key(|n| n.address);
    inside
}

/// An instruction with the samples from its address up to the next
/// instruction's, and where it is in the source (the disassembler's word,
/// else the first sample's).
struct Annotated {
    instruction: Instruction,
    flat: i64,
    cum: i64,
}

/// pprof's `annotateAssembly`.
fn annotate(instructions: Vec<Instruction>, samples: &[AddressNode]) -> Vec<Annotated> {
    let nexts: Vec<u64> = (instructions.iter().skip(1))
        .map(|i| i.address)
        .chain([u64::MAX])
        .collect();
    let mut at = 0;
    let mut out = Vec::with_capacity(instructions.len());
    for (mut instruction, next) in instructions.into_iter().zip(nexts) {
        instruction.file = base_name(&instruction.file).to_string();
        let (mut flat, mut cum) = (0i64, 0i64);
        while let Some(sample) = samples.get(at).filter(|s| s.address < next) {
            flat = flat.saturating_add(sample.flat);
            cum = cum.saturating_add(sample.cum);
            if instruction.file.is_empty() {
                instruction.file = base_name(&sample.file).to_string();
            }
            if instruction.line == 0 {
                instruction.line = sample.line;
            }
            if instruction.function.is_empty() {
                instruction.function = sample.function.clone();
            }
            at += 1;
        }
        out.push(Annotated {
            instruction,
            flat,
            cum,
        });
    }
    out
}

/// A routine's header and its instructions, where each says its function,
/// file and line only when they change.
fn print_routine(
    out: &mut String,
    (symbol, report): (&ObjectSymbol, &TopReport),
    samples: &[AddressNode],
    annotated: &[Annotated],
) {
    let flat: i64 = samples.iter().map(|s| s.flat).sum();
    let cum: i64 = samples.iter().map(|s| s.cum).sum();
    out.push_str(&format!(
        "ROUTINE ======================== {}\n",
        symbol.names[0]
    ));
    for name in &symbol.names[1..] {
        out.push_str(&format!("    AKA ======================== {name}\n"));
    }
    out.push_str(&format!(
        "{:>10} {:>10} (flat, cum) {} of Total\n",
        report.format_value(flat),
        report.format_value(cum),
        percentage(cum, report.total)
    ));
    let value_or_dot = |v: i64| match v {
        0 => ".".to_string(),
        v => report.format_value(v),
    };
    let mut last: (&str, &str, i64) = ("", "", 0);
    for a in annotated {
        let i = &a.instruction;
        let mut location = String::new();
        if (i.function.as_str(), i.file.as_str(), i.line) != last {
            last = (&i.function, &i.file, i.line);
            if !i.function.is_empty() {
                location = format!("{} ", i.function);
            }
            if !i.file.is_empty() {
                location.push_str(&i.file);
                if i.line != 0 {
                    location.push_str(&format!(":{}", i.line));
                }
            }
        }
        let values = format!(
            "{:>10} {:>10} {:>10x}",
            value_or_dot(a.flat),
            value_or_dot(a.cum),
            i.address
        );
        if location.is_empty() {
            out.push_str(&format!("{values}: {}\n", i.text));
        } else if i.text.len() < 40 {
            out.push_str(&format!("{values}: {:<40};{location}\n", i.text));
        } else {
            out.push_str(&format!("{:74};{location}\n", ""));
            out.push_str(&format!("{values}: {}\n", i.text));
        }
    }
}

/// The last element of a path, as Go's `filepath.Base` (empty stays empty).
fn base_name(path: &str) -> &str {
    match path.is_empty() {
        true => "",
        false => crate::go_path::base(path),
    }
}

/// Go's `strconv.ParseUint(s, 0, 64)`: decimal, `0x` hex, `0o` or leading
/// `0` octal, `0b` binary, with `_` between digits.
pub(crate) fn go_parse_uint(s: &str) -> Option<u64> {
    let lower = s.to_ascii_lowercase();
    let (digits, radix) = if let Some(d) = lower.strip_prefix("0x") {
        (d, 16)
    } else if let Some(d) = lower.strip_prefix("0o") {
        (d, 8)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (d, 2)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (&lower[1..], 8)
    } else {
        (lower.as_str(), 10)
    };
    let underscores = radix != 10 || !digits.contains('_');
    let digits = digits.replace('_', "");
    if digits.is_empty() || !underscores || digits.starts_with('+') {
        return None;
    }
    u64::from_str_radix(&digits, radix).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_parse_as_go_parses_them() {
        assert_eq!(go_parse_uint("0x11b0"), Some(0x11b0));
        assert_eq!(go_parse_uint("4528"), Some(4528));
        assert_eq!(go_parse_uint("010"), Some(8));
        assert_eq!(go_parse_uint("0b101"), Some(5));
        assert_eq!(go_parse_uint("0x_ff"), Some(255));
        assert_eq!(go_parse_uint("1_000"), None);
        assert_eq!(go_parse_uint("main"), None);
        assert_eq!(go_parse_uint("+1"), None);
        assert_eq!(go_parse_uint(""), None);
    }

    #[test]
    fn samples_go_to_the_instruction_they_fall_in() {
        let instruction = |address| Instruction {
            address,
            text: "nop".into(),
            function: String::new(),
            file: String::new(),
            line: 0,
        };
        let node = |address, flat| AddressNode {
            address,
            function: "work".into(),
            file: "/src/spin.c".into(),
            line: 6,
            flat,
            cum: flat,
        };
        let annotated = annotate(
            vec![instruction(0x10), instruction(0x14), instruction(0x18)],
            &[node(0x10, 1), node(0x16, 2), node(0x17, 3), node(0x30, 4)],
        );
        let flats: Vec<i64> = annotated.iter().map(|a| a.flat).collect();
        assert_eq!(flats, [1, 5, 4]);
        assert_eq!(annotated[1].instruction.file, "spin.c");
        assert_eq!(annotated[0].instruction.function, "work");
    }
}
