//! File names of DWARF 5 line tables as `llvm-symbolizer` writes them,
//! where gimli's `addr2line` writes them otherwise. DWARF 5 numbers a
//! unit's directories from 0, the compilation directory. `addr2line`
//! names a file of directory 0 `COMP_DIR/NAME`; LLVM joins directory 0's
//! own entry too, `COMP_DIR/DIR0/NAME`, which differs when that entry is
//! relative: Debian's libc, built in `./stdlib`, has `exit.c` as
//! `./stdlib/./stdlib/exit.c` in upstream pprof's profiles. Read once per
//! binary: each name `addr2line` gives that LLVM gives otherwise.

use std::collections::HashMap;

use addr2line::gimli;
use gimli::{EndianSlice, RunTimeEndian};

use crate::sections::Sections;

type Reader<'a> = EndianSlice<'a, RunTimeEndian>;

/// `addr2line`'s names of directory 0's files and LLVM's, where they
/// differ.
#[derive(Debug, Default)]
pub(crate) struct LlvmNames(HashMap<String, String>);

impl LlvmNames {
    /// The names of the DWARF 5 units of `sections` (none where there
    /// is no such unit).
    pub(crate) fn of(sections: &Sections) -> LlvmNames {
        let endian = sections.endian;
        let dwarf = gimli::Dwarf::load(|id| -> Result<Reader<'_>, gimli::Error> {
            Ok(EndianSlice::new(sections.get(id), endian))
        });
        let mut names = HashMap::new();
        if let Ok(dwarf) = dwarf {
            let mut units = dwarf.units();
            while let Ok(Some(header)) = units.next() {
                if header.version() >= 5 {
                    if let Ok(unit) = dwarf.unit(header) {
                        unit_names(&dwarf, &unit, &mut names);
                    }
                }
            }
        }
        LlvmNames(names)
    }

    /// `file` as LLVM names it.
    pub(crate) fn name<'a>(&'a self, file: &'a str) -> &'a str {
        self.0.get(file).map_or(file, String::as_str)
    }
}

/// The names of `unit`'s directory-0 files that LLVM gives otherwise.
fn unit_names(
    dwarf: &gimli::Dwarf<Reader<'_>>,
    unit: &gimli::Unit<Reader<'_>>,
    names: &mut HashMap<String, String>,
) {
    let text = |value| -> Option<String> {
        let string = dwarf.attr_string(unit, value).ok()?;
        Some(string.to_string_lossy().into_owned())
    };
    let Some(program) = &unit.line_program else {
        return;
    };
    let header = program.header();
    let comp_dir = unit.comp_dir.map(|d| d.to_string_lossy().into_owned());
    let comp_dir = comp_dir.unwrap_or_default();
    let Some(dir_zero) = header.directory(0).and_then(text) else {
        return;
    };
    for file in header.file_names() {
        if file.directory_index() != 0 {
            continue;
        }
        let Some(name) = text(file.path_name()) else {
            continue;
        };
        let theirs = joined(&joined(&comp_dir, &dir_zero), &name);
        let ours = joined(&comp_dir, &name);
        if theirs != ours {
            names.insert(ours, theirs);
        }
    }
}

/// `path` then `next`, as `addr2line` and LLVM join them: an absolute
/// `next` replaces `path`.
fn joined(path: &str, next: &str) -> String {
    if next.starts_with('/') || path.is_empty() {
        return next.to_string();
    }
    match path.ends_with('/') {
        true => format!("{path}{next}"),
        false => format!("{path}/{next}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_join_as_llvm_and_addr2line_join_them() {
        assert_eq!(joined("./stdlib", "./stdlib"), "./stdlib/./stdlib");
        assert_eq!(
            joined("./stdlib/./stdlib", "exit.c"),
            "./stdlib/./stdlib/exit.c"
        );
        assert_eq!(joined("/build/x", "/usr/include/a.h"), "/usr/include/a.h");
        assert_eq!(joined("", "a.c"), "a.c");
        assert_eq!(joined("/b/", "a.c"), "/b/a.c");
        let names = LlvmNames(HashMap::from([("./s/e.c".into(), "./s/./s/e.c".into())]));
        assert_eq!(names.name("./s/e.c"), "./s/./s/e.c");
        assert_eq!(names.name("other.c"), "other.c");
    }
}
