//! One binary's frames at an address: its DWARF's inline chain, innermost
//! first, through `addr2line`; its symbol table's name where there is no
//! DWARF (or only names are asked for).

use std::path::Path;

use addr2line::gimli::ReaderOffset;

use crate::demangle::Demangle;
use crate::dir_zero::LlvmNames;
use crate::sections::Sections;
use crate::start_lines::{AddressDies, StartLines};
use crate::symbol_table::SymbolTable;

/// One frame at an address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Frame {
    /// The name as shown (demangled as asked).
    pub(crate) name: String,
    /// The name as the binary has it.
    pub(crate) system_name: String,
    /// The source file, empty when unknown.
    pub(crate) file: String,
    /// The line, 0 when unknown.
    pub(crate) line: i64,
    /// The column, 0 when unknown.
    pub(crate) column: i64,
    /// The function's first line (`DW_AT_decl_line`), 0 when unknown.
    pub(crate) start_line: i64,
    /// The DIE (offset in its unit) the frame was found at.
    die: Option<usize>,
}

/// A binary's line tables: the inline chain at an address, as pprof's
/// object files give it (`SourceLine`, through `llvm-symbolizer
/// --inlining -demangle=false`).
pub struct LineTables(Binary);

/// One frame of an inline chain, names as the binary has them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFrame {
    /// The function's name as the binary has it (mangled for C++, Rust).
    pub function: String,
    /// The source file, empty when unknown.
    pub file: String,
    /// The line, 0 when unknown.
    pub line: i64,
}

impl LineTables {
    /// The line tables of the binary at `path`, read from its separate
    /// debug file when `search` finds one (as symbolization reads them);
    /// why not, when it cannot be read.
    pub fn open(search: &crate::BinarySearch, path: &Path) -> Result<LineTables, String> {
        let data = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let debug_file = crate::lookup::separate_debug_file(search, path, &data);
        let binary = Binary::open(debug_file.as_deref().unwrap_or(path), Demangle::None, false)?;
        Ok(LineTables(
            binary.with_symbol_table(SymbolTable::read(&data)),
        ))
    }

    /// The frames at file address `address`, innermost first (the symbol
    /// table's name, without a line, where there is no DWARF; empty when
    /// nothing is known of it).
    pub fn frames(&self, address: u64) -> Vec<SourceFrame> {
        (self.0.frames(address).into_iter())
            .map(|f| SourceFrame {
                function: f.system_name,
                file: f.file,
                line: f.line,
            })
            .collect()
    }
}

/// A binary opened for lookups.
pub(crate) struct Binary {
    loader: addr2line::Loader,
    demangle: Demangle,
    names_only: bool,
    start_lines: Option<StartLines>,
    /// The binary's own symbols (not its debug file's), which name the
    /// outermost frame as `llvm-symbolizer` names it.
    symbol_table: Option<SymbolTable>,
    /// File names `llvm-symbolizer` gives otherwise (`dir_zero.rs`).
    llvm_names: LlvmNames,
}

impl Binary {
    /// The binary at `path`; why not, when it cannot be read.
    pub(crate) fn open(
        path: &Path,
        demangle: Demangle,
        names_only: bool,
    ) -> Result<Binary, String> {
        let loader = addr2line::Loader::new(path).map_err(|e| e.to_string())?;
        // Read once for both: a system library's `.debug_info` is large.
        let sections = (!names_only).then(|| Sections::read(path)).flatten();
        let llvm_names = sections.as_ref().map(LlvmNames::of).unwrap_or_default();
        let start_lines = sections.map(StartLines::take);
        Ok(Binary {
            loader,
            demangle,
            names_only,
            start_lines,
            symbol_table: None,
            llvm_names,
        })
    }

    /// Names outermost frames by `symbols`: the binary's own (when the
    /// DWARF is read from its debug file too).
    pub(crate) fn with_symbol_table(mut self, symbols: SymbolTable) -> Binary {
        self.symbol_table = Some(symbols);
        self
    }

    /// The frames at file address `address`, innermost first (empty when
    /// nothing is known of it).
    pub(crate) fn frames(&self, address: u64) -> Vec<Frame> {
        let mut frames = Vec::new();
        if !self.names_only {
            if let Ok(mut found) = self.loader.find_frames(address) {
                while let Ok(Some(frame)) = found.next() {
                    let raw = frame.function.as_ref().and_then(|f| f.raw_name().ok());
                    let raw = raw.map(|r| r.into_owned()).unwrap_or_default();
                    let location = frame.location.as_ref();
                    frames.push(Frame {
                        die: (frame.dw_die_offset)
                            .and_then(|o| usize::try_from(o.0.into_u64()).ok()),
                        ..self.frame(
                            raw,
                            (location.and_then(|l| l.file))
                                .map_or("", |file| self.llvm_names.name(file)),
                            location.and_then(|l| l.line).unwrap_or(0),
                            location.and_then(|l| l.column).unwrap_or(0),
                        )
                    });
                }
            }
        }
        // The outermost frame is named by the symbol table where it has a
        // name, as `llvm-symbolizer` names it.
        let table_name = (self.symbol_table.as_ref()).and_then(|t| t.name_at(address));
        if let (Some(name), Some(outermost)) = (table_name, frames.last_mut()) {
            if !outermost.system_name.is_empty() && outermost.system_name != name {
                outermost.name = self.demangle.name(name);
                outermost.system_name = name.to_string();
            }
        }
        // No DWARF for it (or names only): the symbol table's name.
        let unnamed = frames.iter().all(|f| f.system_name.is_empty());
        if unnamed {
            if let Some(symbol) = table_name.or_else(|| self.loader.find_symbol(address)) {
                let (file, line, column) = match frames.first() {
                    Some(f) => (f.file.clone(), f.line, f.column),
                    None => (String::new(), 0, 0),
                };
                frames = vec![Frame {
                    file,
                    line,
                    column,
                    ..self.frame(symbol.to_string(), "", 0, 0)
                }];
            }
        }
        frames
    }

    fn frame(&self, raw: String, file: &str, line: u32, column: u32) -> Frame {
        Frame {
            name: self.demangle.name(&raw),
            system_name: raw,
            file: file.to_string(),
            line: i64::from(line),
            column: i64::from(column),
            start_line: 0,
            die: None,
        }
    }

    /// The start lines of the functions of `frames`, each list the frames
    /// at a file address.
    pub(crate) fn fill_start_lines<'f>(
        &self,
        frames: impl Iterator<Item = (u64, &'f mut Vec<Frame>)>,
    ) {
        let Some(start_lines) = &self.start_lines else {
            return;
        };
        let mut dies: Vec<AddressDies<'_>> = frames
            .map(|(address, frames)| {
                let at = frames
                    .iter_mut()
                    .map(|f| (f.die, &mut f.start_line))
                    .collect();
                (address, at)
            })
            .collect();
        start_lines.fill(&mut dies);
    }
}
