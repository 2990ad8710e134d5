//! `protoprof disasm` (pprof's `-disasm`): the analysis crate chooses the
//! symbols and annotates their instructions; the binaries are found,
//! listed and disassembled by the symbolize crate's object tools.

use std::collections::HashMap;
use std::path::PathBuf;

use protoprof_analysis::{self as analysis, Selection};
use protoprof_symbolize::{open_mapped_binary, BinarySearch, Demangle, ObjTools};

use super::analyze::{checked_index, selection, warn_unmatched, with_input};
use crate::cli::DisasmArgs;
use crate::error::{CliError, Result};
use crate::io::print;

pub fn disasm(args: &DisasmArgs) -> Result<u8> {
    let rx = Selection::regex("disasm", &args.regex)
        .map_err(|e| CliError::failure(e.to_string()))?
        .ok_or_else(|| CliError::failure("disasm needs a regular expression"))?;
    let tools = (args.tools.clone())
        .or_else(|| std::env::var("PPROF_TOOLS").ok())
        .unwrap_or_default();
    let mut binaries = Binaries {
        tools: ObjTools::find(&tools),
        search: BinarySearch::from_env(),
        intel_syntax: args.intel_syntax,
        files: HashMap::new(),
    };
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

/// The profile's binaries, found as symbolization finds them and read with
/// pprof's object tools; each file's symbols listed once.
struct Binaries {
    tools: ObjTools,
    search: BinarySearch,
    intel_syntax: bool,
    files: HashMap<PathBuf, Vec<analysis::ObjectSymbol>>,
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

    fn demangled_forms(&self, name: &str) -> Vec<String> {
        [Demangle::Full, Demangle::Templates, Demangle::Default]
            .iter()
            .map(|mode| mode.name(name))
            .filter(|demangled| demangled != name)
            .collect()
    }
}
