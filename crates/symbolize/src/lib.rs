//! Native frames symbolized in process, as pprof's `-symbolize=local`
//! does it with external tools: each mapping's binary is found as pprof
//! finds it (and by build id under `/usr/lib/debug`), checked against the
//! mapping's build id, its DWARF read by `addr2line` (inline frames
//! innermost first), its symbol table where there is no DWARF, and names
//! demangled (C++ and Rust).
//!
//! A separate debug file (`objcopy --only-keep-debug`) is used with its own
//! program headers for the base, where pprof finds none and symbolizes
//! nothing. [`symbolize`] says, per mapping, which file it used and how it
//! found it, whether the build id matched, and how many addresses resolved.
//!
//! ```no_run
//! use protoprof_symbolize::{symbolize, Options};
//! # let mut profile = protoprof_model_pprof::perftools::profiles::Profile::default();
//! let report = symbolize(&mut profile, &Options::default());
//! for mapping in &report.mappings {
//!     println!("{}: {} of {} addresses", mapping.file, mapping.resolved, mapping.addresses);
//! }
//! ```

#![warn(missing_docs)]

mod apply;
mod base;
mod build_id;
mod debuginfod;
mod demangle;
mod dir_zero;
mod lookup;
mod objtool;
mod otlp;
mod report;
mod resolve;
mod sections;
mod start_lines;
mod strings;
mod symbol_table;

pub use apply::symbolize;
pub use debuginfod::Debuginfod;
pub use demangle::Demangle;
pub use lookup::{BinarySearch, Found, How};
pub use objtool::{open_mapped_binary, AsmInstruction, NmSymbol, ObjTools};
pub use otlp::symbolize_dictionary;
pub use report::{MappingReport, Report};
pub use resolve::{LineTables, SourceFrame};

/// What to symbolize, as pprof's `-symbolize`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Names, files and lines, inline frames included (pprof's `local`).
    #[default]
    Local,
    /// Names only, from the symbol table (pprof's `fastlocal`).
    FastLocal,
    /// Nothing.
    None,
}

/// How to symbolize.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// What to read.
    pub mode: Mode,
    /// Symbolize mappings that say they are symbolized already (pprof's
    /// `:force`).
    pub force: bool,
    /// How names are demangled.
    pub demangle: Demangle,
    /// Where binaries are looked for.
    pub search: BinarySearch,
}

impl Options {
    /// The options pprof's `-symbolize` value names: `local`, `fastlocal`,
    /// `none` or `force`, each optionally followed by `:force` and
    /// `:demangle=none|full|templates|default`.
    pub fn parse(text: &str) -> Result<Options, String> {
        let mut options = Options::default();
        for part in text.split(':').filter(|p| !p.is_empty()) {
            match part {
                "local" => options.mode = Mode::Local,
                "fastlocal" => options.mode = Mode::FastLocal,
                "none" | "no" => options.mode = Mode::None,
                "force" => options.force = true,
                other => match other.strip_prefix("demangle=") {
                    Some(style) => options.demangle = Demangle::parse(style)?,
                    None => return Err(format!("{other:?} is not a symbolization mode")),
                },
            }
        }
        Ok(options)
    }
}
