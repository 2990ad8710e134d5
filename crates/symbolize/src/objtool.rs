//! Disassembly as upstream pprof does it (its `binutils` package): `nm -n`
//! for a binary's symbols and `objdump --disassemble --line-numbers` for a
//! symbol's instructions, LLVM's tools preferred to GNU's, found on `PATH`
//! or where pprof's `-tools` (`PPROF_TOOLS`) says; their output read with
//! pprof's own patterns, so a listing shows what pprof's shows.

use std::path::{Path, PathBuf};
use std::process::Command;

use regex::Regex;

use crate::lookup::{find, BinarySearch, FileIds};

/// Symbols at one address (`nm -n`'s lines grouped), up to the next
/// symbol's address less one (`u64::MAX` for the last).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NmSymbol {
    /// The names, in `nm`'s order.
    pub names: Vec<String>,
    /// The address.
    pub start: u64,
    /// The last address.
    pub end: u64,
}

/// An instruction from `objdump`, with the function, file and line its
/// output last named (empty or 0 when none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AsmInstruction {
    /// Its address.
    pub address: u64,
    /// Its text.
    pub text: String,
    /// The function.
    pub function: String,
    /// The source file.
    pub file: String,
    /// The source line.
    pub line: i64,
}

/// The object tools found: `nm` and `objdump` (and whether it is LLVM's).
#[derive(Debug, Clone, Default)]
pub struct ObjTools {
    nm: Option<PathBuf>,
    objdump: Option<(PathBuf, bool)>,
}

impl ObjTools {
    /// The tools pprof would use with `-tools=config`: entries separated by
    /// commas, each `tool:path` (for that tool: `nm`, `objdump`, …) or a
    /// directory for every tool; an empty entry means `PATH`.
    pub fn find(config: &str) -> ObjTools {
        let (mut nm_paths, mut objdump_paths, mut every) = (Vec::new(), Vec::new(), Vec::new());
        for entry in config.split(',') {
            match entry.split_once(':') {
                Some(("nm", path)) => nm_paths.push(path.to_string()),
                Some(("objdump", path)) => objdump_paths.push(path.to_string()),
                Some(("llvm-symbolizer" | "addr2line", _)) => {}
                _ => every.push(entry.to_string()),
            }
        }
        nm_paths.extend(every.iter().cloned());
        objdump_paths.extend(every);
        let nm = ["llvm-nm", "nm"]
            .iter()
            .find_map(|name| executable(name, &nm_paths));
        let objdump = ["llvm-objdump", "objdump"].iter().find_map(|name| {
            let path = executable(name, &objdump_paths)?;
            let version = Command::new(&path).arg("--version").output().ok()?;
            let version = String::from_utf8_lossy(&version.stdout);
            if llvm_version_at_least_8(&version) {
                Some((path, true))
            } else {
                version.contains("GNU objdump").then_some((path, false))
            }
        });
        ObjTools { nm, objdump }
    }

    /// `file`'s symbols, from `nm -n`.
    pub fn symbols(&self, file: &Path) -> Result<Vec<NmSymbol>, String> {
        let nm = self
            .nm
            .as_ref()
            .ok_or("cannot read symbols: no nm tool available")?;
        let out = output(Command::new(nm).arg("-n").arg(file))?;
        Ok(nm_symbols(&out))
    }

    /// `file`'s instructions from `start` up to `end` (excluded), from
    /// `objdump`, in AT&T syntax unless `intel`.
    pub fn disassemble(
        &self,
        file: &Path,
        (start, end): (u64, u64),
        intel: bool,
    ) -> Result<Vec<AsmInstruction>, String> {
        let (objdump, llvm) =
            (self.objdump.as_ref()).ok_or("cannot disasm: no objdump tool available")?;
        let mut command = Command::new(objdump);
        command.args([
            "--disassemble",
            "--demangle",
            "--no-show-raw-insn",
            "--line-numbers",
            &format!("--start-address={start:#x}"),
            &format!("--stop-address={end:#x}"),
        ]);
        if intel {
            match llvm {
                true => command.arg("--x86-asm-syntax=intel"),
                false => command.args(["-M", "intel"]),
            };
        }
        let out = output(command.arg(file))?;
        Ok(objdump_instructions(&out))
    }
}

/// The binary a mapping names, found as symbolization finds it (its own
/// path, `PPROF_BINARY_PATH`, build-id directories), and what to subtract
/// from its runtime addresses (pprof's base).
pub fn open_mapped_binary(
    search: &BinarySearch,
    (file, build_id): (&str, &str),
    (start, limit, offset): (u64, u64, u64),
) -> Result<(PathBuf, u64), String> {
    let ids = FileIds {
        gnu: build_id,
        htlhash: "",
    };
    let (found, _) = find(search, file, ids);
    let (found, data) = found.ok_or_else(|| format!("{file}: the binary is not found"))?;
    let mapped = crate::base::Mapped {
        start,
        limit,
        offset,
        file,
        path: &found.path,
    };
    let base = crate::base::base(&data, &mapped)
        .ok_or_else(|| format!("{}: no base for the mapping", found.path.display()))?;
    Ok((found.path, base))
}

/// Where `name` is: under the first of `paths` that has it (an empty path
/// meaning `PATH`), as pprof's `findExe`.
fn executable(name: &str, paths: &[String]) -> Option<PathBuf> {
    let paths: Vec<&str> = match paths.is_empty() {
        true => vec![""],
        false => paths.iter().map(String::as_str).collect(),
    };
    paths.iter().find_map(|dir| match dir.is_empty() {
        true => on_path(name),
        false => {
            let candidate = Path::new(dir).join(name);
            is_executable(&candidate).then_some(candidate)
        }
    })
}

fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// pprof's `isLLVMObjdump` on Linux: LLVM 8 or later, or a trunk build.
fn llvm_version_at_least_8(version: &str) -> bool {
    let pattern = Regex::new(r"LLVM version (?:(\d*)\.(\d*)\.(\d*)|.*(trunk).*)").expect("valid");
    let Some(fields) = pattern.captures(version) else {
        return false;
    };
    if fields.get(4).is_some() {
        return true;
    }
    fields
        .get(1)
        .and_then(|m| m.as_str().parse::<u32>().ok())
        .is_some_and(|major| major >= 8)
}

fn output(command: &mut Command) -> Result<String, String> {
    let out = command.output().map_err(|e| format!("{command:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!("{command:?}: {}", out.status));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// pprof's `findSymbols` without its matching: names at one address
/// grouped, each group ending where the next begins.
fn nm_symbols(out: &str) -> Vec<NmSymbol> {
    let line = Regex::new(r"^\s*([[:xdigit:]]+)\s+(.)\s+(.*)").expect("valid");
    let mut symbols = Vec::new();
    let (mut names, mut start): (Vec<String>, u64) = (Vec::new(), 0);
    for text in out.lines() {
        let Some(fields) = line.captures(text.trim()) else {
            continue;
        };
        let Ok(address) = u64::from_str_radix(&fields[1], 16) else {
            continue;
        };
        if address == start {
            names.push(fields[3].to_string());
            continue;
        }
        if !names.is_empty() {
            let end = address.wrapping_sub(1);
            symbols.push(NmSymbol {
                names: std::mem::take(&mut names),
                start,
                end,
            });
        }
        (names, start) = (vec![fields[3].to_string()], address);
    }
    if !names.is_empty() {
        symbols.push(NmSymbol {
            names,
            start,
            end: u64::MAX,
        });
    }
    symbols
}

/// pprof's `disassemble`: instruction lines, with the last function and
/// file:line lines before them; any other line forgets both.
fn objdump_instructions(out: &str) -> Vec<AsmInstruction> {
    let instruction = Regex::new(r"^\s*([[:xdigit:]]+):\s+(.*)").expect("valid");
    let file_line = Regex::new(r"^;?\s?(.*):([0-9]+)").expect("valid");
    let function_gnu = Regex::new(r"^;?\s?(\S.*)\(\):").expect("valid");
    let function_llvm = Regex::new(r"^([[:xdigit:]]+)?\s?(.*):").expect("valid");
    let (mut function, mut file, mut line) = (String::new(), String::new(), 0i64);
    let mut instructions = Vec::new();
    for text in out.lines() {
        let text = text.trim();
        if let Some(fields) = instruction.captures(text) {
            if let Ok(address) = u64::from_str_radix(&fields[1], 16) {
                instructions.push(AsmInstruction {
                    address,
                    text: fields[2].to_string(),
                    function: function.clone(),
                    file: file.clone(),
                    line,
                });
                continue;
            }
        }
        if let Some(fields) = file_line.captures(text) {
            if let Ok(l) = fields[2].parse::<u32>() {
                (file, line) = (fields[1].to_string(), i64::from(l));
            }
            continue;
        }
        if let Some(fields) = function_gnu.captures(text) {
            function = fields[1].to_string();
            continue;
        }
        if let Some(fields) = function_llvm.captures(text) {
            function = fields[2].to_string();
            continue;
        }
        (function, file, line) = (String::new(), String::new(), 0);
    }
    instructions
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nm_lines_group_by_address_and_end_at_the_next() {
        let out = "                 U printf@GLIBC_2.2.5\n\
                   0000000000001000 T _init\n\
                   00000000000011b0 T work\n\
                   00000000000011b0 t work_alias\n\
                   0000000000001250 T other\n";
        let symbols = nm_symbols(out);
        assert_eq!(symbols.len(), 3);
        assert_eq!(symbols[1].names, ["work", "work_alias"]);
        assert_eq!((symbols[1].start, symbols[1].end), (0x11b0, 0x124f));
        assert_eq!(symbols[2].end, u64::MAX);
    }

    #[test]
    fn objdump_lines_carry_the_function_and_line_before_them() {
        let out = "\nspin:\tfile format elf64-x86-64\n\n\
                   00000000000011b0 <work>:\n\
                   ; work():\n\
                   ; /tmp/spin.c:6\n\
                   \x20   11b0:      \ttestq\t%rdi, %rdi\n\
                   ; /tmp/spin.c:5\n\
                   \x20   11b9:      \tpxor\t%xmm2, %xmm2\n";
        let got = objdump_instructions(out);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].text, "testq\t%rdi, %rdi");
        assert_eq!(
            (got[0].function.as_str(), got[0].file.as_str(), got[0].line),
            ("work", "/tmp/spin.c", 6)
        );
        assert_eq!((got[1].address, got[1].line), (0x11b9, 5));
    }

    #[test]
    fn llvm_versions_are_read_as_pprof_reads_them() {
        assert!(llvm_version_at_least_8("Debian LLVM version 14.0.6\n"));
        assert!(!llvm_version_at_least_8("LLVM version 7.0.1"));
        assert!(llvm_version_at_least_8("LLVM version 18.0.0git trunk"));
        assert!(!llvm_version_at_least_8("GNU objdump (GNU Binutils) 2.40"));
    }
}
