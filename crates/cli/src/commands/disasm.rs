//! `protoprof disasm` and `protoprof weblist` (pprof's `-disasm` and
//! `-weblist`): the analysis crate chooses the symbols or functions and
//! annotates their instructions; the binaries are found, listed,
//! disassembled and their line tables read by the symbolize crate.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use protoprof_analysis::{self as analysis, Selection};
use protoprof_symbolize::{open_mapped_binary, BinarySearch, Demangle, LineTables, ObjTools};

use super::analyze::{checked_index, selection, warn_unmatched, with_input};
use crate::cli::{DisasmArgs, WeblistArgs};
use crate::error::{CliError, Result};
use crate::io::{self, print};

pub fn disasm(args: &DisasmArgs) -> Result<u8> {
    let rx = Selection::regex("disasm", &args.regex)
        .map_err(|e| CliError::failure(e.to_string()))?
        .ok_or_else(|| CliError::failure("disasm needs a regular expression"))?;
    let mut binaries = Binaries::new(args.tools.as_deref(), args.intel_syntax);
    let text = with_input(&args.input, |source| {
        let i = checked_index(&args.input, source, args.sample_index.as_deref())?;
        let selection = selection(&args.selection)?;
        let text = source.disassembly(i, &selection, &rx, &mut binaries);
        warn_unmatched(source, &selection);
        text.map_err(CliError::invalid)
    })?;
    print(&text)?;
    Ok(0)
}

/// `weblist`: the page to standard output or `--output`, or shown in a
/// browser.
pub fn weblist(args: &WeblistArgs) -> Result<u8> {
    let rx = Selection::regex("weblist", &args.regex)
        .map_err(|e| CliError::failure(e.to_string()))?
        .ok_or_else(|| CliError::failure("weblist needs a regular expression"))?;
    let mut binaries = Binaries::new(args.tools.as_deref(), args.intel_syntax);
    let mut sources = args.sources.disk_sources();
    let page = with_input(&args.input, |source| {
        let i = checked_index(&args.input, source, args.sample_index.as_deref())?;
        let selection = selection(&args.selection)?;
        let listing = source.web_listing(i, &selection, &rx, (&mut binaries, &mut sources));
        warn_unmatched(source, &selection);
        let listing = listing.map_err(CliError::invalid)?;
        let labels =
            analysis::report::profile_labels(source.model(), &source.label_report(i, &selection));
        Ok(analysis::web_list_page(&labels, &listing))
    })?;
    if let Some(viewer) = args.view {
        super::viewer::show(page.as_bytes(), "html", viewer)?;
        return Ok(0);
    }
    io::write_output_gzip(&args.output, false, |out| out.write_all(page.as_bytes()))?;
    Ok(0)
}

/// The profile's binaries, found as symbolization finds them and read with
/// pprof's object tools; each file's symbols listed once, its line tables
/// read once.
struct Binaries {
    tools: ObjTools,
    search: BinarySearch,
    intel_syntax: bool,
    files: HashMap<PathBuf, Vec<analysis::ObjectSymbol>>,
    line_tables: HashMap<String, Option<LineTables>>,
}

impl Binaries {
    /// `tools` as pprof's -tools (default: `$PPROF_TOOLS`, then `PATH`).
    fn new(tools: Option<&str>, intel_syntax: bool) -> Binaries {
        let tools = (tools.map(String::from))
            .or_else(|| std::env::var("PPROF_TOOLS").ok())
            .unwrap_or_default();
        Binaries {
            tools: ObjTools::find(&tools),
            search: BinarySearch::from_env(),
            intel_syntax,
            files: HashMap::new(),
            line_tables: HashMap::new(),
        }
    }
}

impl analysis::ObjectFiles for Binaries {
    fn open(
        &mut self,
        mapping: analysis::MappedObject<'_>,
    ) -> std::result::Result<analysis::OpenedObject, String> {
        let (path, base) = open_mapped_binary(
            &self.search,
            (mapping.file, mapping.build_id),
            mapping.range,
        )?;
        let symbols = match self.files.get(&path) {
            Some(symbols) => symbols.clone(),
            None => {
                let listed = self.tools.symbols(&path)?;
                let symbols: Vec<analysis::ObjectSymbol> = (listed.into_iter())
                    .map(|s| analysis::ObjectSymbol {
                        names: s.names,
                        start: s.start,
                        end: s.end,
                    })
                    .collect();
                self.files.insert(path.clone(), symbols.clone());
                symbols
            }
        };
        Ok(analysis::OpenedObject {
            path: path.display().to_string(),
            base,
            symbols,
        })
    }

    fn disassemble(
        &mut self,
        object: &analysis::OpenedObject,
        start: u64,
        end: u64,
    ) -> std::result::Result<Vec<analysis::Instruction>, String> {
        let path = PathBuf::from(&object.path);
        let instructions = (self.tools).disassemble(&path, (start, end), self.intel_syntax)?;
        Ok(instructions
            .into_iter()
            .map(|i| analysis::Instruction {
                address: i.address,
                text: i.text,
                function: i.function,
                file: i.file,
                line: i.line,
            })
            .collect())
    }

    fn source_lines(
        &mut self,
        object: &analysis::OpenedObject,
        address: u64,
    ) -> std::result::Result<Vec<analysis::InlineFrame>, String> {
        let search = &self.search;
        let tables = (self.line_tables.entry(object.path.clone()))
            .or_insert_with(|| LineTables::open(search, Path::new(&object.path)).ok());
        let tables = tables.as_ref().ok_or("no line tables")?;
        Ok((tables.frames(address).into_iter())
            .map(|f| analysis::InlineFrame {
                function: f.function,
                file: f.file,
                line: f.line,
            })
            .collect())
    }

    fn demangled_forms(&self, name: &str) -> Vec<String> {
        [Demangle::Full, Demangle::Templates, Demangle::Default]
            .iter()
            .map(|mode| mode.name(name))
            .filter(|demangled| demangled != name)
            .collect()
    }
}
