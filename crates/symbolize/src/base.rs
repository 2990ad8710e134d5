//! Where a mapping's addresses are in its ELF file: pprof's base
//! (`elfexec.GetBase`). A user-space mapping's is read from the loadable
//! segment that holds the mapping's file offset. A separate debug file's
//! segments have no file size (its sections are empty); they still say
//! where the executable's were, so they are used when no segment has a
//! size.
//!
//! A kernel image (`[kernel.kallsyms]`, or a `vmlinux`) is placed by its
//! relocation symbol, as pprof places it: perf gives the runtime address
//! of `_stext` (or of `_text`, when the mapping is named
//! `[kernel.kallsyms]_text`) as the mapping's start, so the base is that
//! start less the symbol's address in the file; the segment is the one
//! that holds `.text`.

use std::path::Path;

use object::read::elf::{FileHeader, ProgramHeader};
use object::{elf, Endianness, Object, ObjectSection, ObjectSymbol};

/// The name perf gives the kernel's mapping, before its relocation symbol.
const KERNEL: &str = "[kernel.kallsyms]";
/// The start of the upper half of the address space, the kernel's.
const UPPER_HALF: u64 = 1 << 63;
const PAGE: u64 = 4096;

/// A mapping as its base is computed from: its runtime range and file
/// offset, the file it names and the file found for it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mapped<'a> {
    pub(crate) start: u64,
    pub(crate) limit: u64,
    pub(crate) offset: u64,
    /// The mapping's file, as the profile names it.
    pub(crate) file: &'a str,
    /// The file found for it.
    pub(crate) path: &'a Path,
}

/// A loadable segment: file offset, address, file size, memory size, and
/// whether it is executable.
type Segment = (u64, u64, u64, u64, bool);

/// What to subtract from a runtime address to get the file's address;
/// `None` when the file is not ELF, or pprof finds no base for it.
pub(crate) fn base(data: &[u8], m: &Mapped<'_>) -> Option<u64> {
    if m.start == 0 && m.offset == 0 && (m.limit == 0 || m.limit == u64::MAX) {
        return Some(0);
    }
    let (e_type, loads) = match object::FileKind::parse(data).ok()? {
        object::FileKind::Elf64 => segments::<elf::FileHeader64<Endianness>>(data)?,
        object::FileKind::Elf32 => segments::<elf::FileHeader32<Endianness>>(data)?,
        _ => return None,
    };
    let file = object::File::parse(data).ok()?;
    let stext = relocation_address(&file, m);
    let kernel_like = stext.is_some() || m.start >= m.limit || m.limit >= UPPER_HALF;
    let load = match kernel_like {
        true => text_segment(&file, &loads),
        false => segment_holding(&loads, m.offset),
    };
    let user_base = |(off, vaddr, ..): Segment| {
        (m.start.wrapping_sub(m.offset))
            .wrapping_add(off)
            .wrapping_sub(vaddr)
    };
    match (e_type, load) {
        (elf::ET_EXEC, None) => Some(0),
        (elf::ET_EXEC, Some(load)) => {
            if stext.is_none() && m.start > 0 && m.start < UPPER_HALF {
                return Some(user_base(load));
            }
            kernel_base(load.1, stext, m).or_else(|| {
                // ChromeOS may remap its kernel to 0.
                (m.start == 0 && m.limit != 0 && stext.is_none())
                    .then(|| m.start.wrapping_sub(load.1))
            })
        }
        (elf::ET_REL, _) => (m.offset == 0).then_some(m.start),
        (elf::ET_DYN, None) => Some(m.start.wrapping_sub(m.offset)),
        (elf::ET_DYN, Some(load)) => kernel_base(load.1, stext, m).or(Some(user_base(load))),
        _ => None,
    }
}

/// The ELF type and loadable segments of `data`.
fn segments<H: FileHeader<Endian = Endianness>>(data: &[u8]) -> Option<(u16, Vec<Segment>)> {
    let header = H::parse(data).ok()?;
    let endian = header.endian().ok()?;
    let loads = (header.program_headers(endian, data).ok()?.iter())
        .filter(|s| s.p_type(endian) == elf::PT_LOAD)
        .map(|s| {
            (
                s.p_offset(endian).into(),
                s.p_vaddr(endian).into(),
                s.p_filesz(endian).into(),
                s.p_memsz(endian).into(),
                s.p_flags(endian) & elf::PF_X != 0,
            )
        })
        .collect();
    Some((header.e_type(endian), loads))
}

/// The segment holding file offset `offset` (a separate debug file's by
/// memory size, as its segments have no bytes in the file).
fn segment_holding(loads: &[Segment], offset: u64) -> Option<Segment> {
    let debug_only = loads.iter().all(|&(_, _, filesz, ..)| filesz == 0);
    loads.iter().copied().find(|&(off, _, filesz, memsz, _)| {
        let size = if debug_only { memsz } else { filesz };
        size > 0 && (off & !0xfff) <= offset && offset < off + size
    })
}

/// pprof's `FindTextProgHeader`: the executable segment holding `.text`.
fn text_segment(file: &object::File<'_>, loads: &[Segment]) -> Option<Segment> {
    let text = file.section_by_name(".text")?.address();
    (loads.iter().copied()).find(|&(_, vaddr, _, memsz, exec)| {
        exec && vaddr <= text && text < vaddr.wrapping_add(memsz)
    })
}

/// The address of the kernel's relocation symbol, read (as pprof reads
/// it) for a kernel mapping, a file named `vmlinux`, or a mapping that is
/// not page-aligned: the symbol the mapping's name ends in
/// (`[kernel.kallsyms]_text`), else `_stext`.
fn relocation_address(file: &object::File<'_>, m: &Mapped<'_>) -> Option<u64> {
    let aligned = [m.start, m.limit, m.offset].iter().all(|a| a % PAGE == 0);
    let kernel = m.file.strip_prefix(KERNEL);
    let vmlinux = m.path.to_string_lossy().contains("vmlinux");
    if kernel.is_none() && !vmlinux && aligned {
        return None;
    }
    let name = kernel.filter(|s| !s.is_empty()).unwrap_or("_stext");
    file.symbols()
        .find(|s| s.name() == Ok(name))
        .map(|s| s.address())
}

/// pprof's `kernelBase`: perf's kernel mapping starts at the relocation
/// symbol's runtime address; ChromeOS remaps its kernel to page 0.
fn kernel_base(vaddr: u64, stext: Option<u64>, m: &Mapped<'_>) -> Option<u64> {
    // PAGE_OFFSET of PowerPC64's kernels.
    const PAGE_OFFSET_PPC64: u64 = 0xc000_0000_0000_0000;
    let (start, limit, offset) = (m.start, m.limit, m.offset);
    if vaddr == start.wrapping_sub(offset) {
        return Some(offset);
    }
    if let (0, true, Some(s)) = (start, limit != 0, stext) {
        return Some(start.wrapping_sub(s));
    }
    let kernel_offset = [0, PAGE_OFFSET_PPC64, start].contains(&offset);
    if start >= UPPER_HALF && limit > start && kernel_offset {
        return Some(match stext {
            Some(s) if start % PAGE == s % PAGE => start.wrapping_sub(s),
            _ => start.wrapping_sub(vaddr),
        });
    }
    match stext {
        Some(s) if start % PAGE != 0 && s % PAGE == start % PAGE => Some(start.wrapping_sub(s)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mapped(start: u64, limit: u64, offset: u64) -> Mapped<'static> {
        Mapped {
            start,
            limit,
            offset,
            file: "[kernel.kallsyms]",
            path: Path::new("vmlinux"),
        }
    }

    #[test]
    fn kernel_mappings_are_placed_as_pprof_places_them() {
        let vaddr = 0xffff_ffff_8100_0000;
        let stext = Some(0xffff_ffff_8100_0198);
        // perf: the mapping starts at _stext's runtime address.
        let aslr = mapped(
            0xffff_ffff_9f00_0198,
            0xffff_ffff_a000_0000,
            0xffff_ffff_9f00_0198,
        );
        assert_eq!(kernel_base(vaddr, stext, &aslr), Some(0x1e00_0000));
        let no_offset = mapped(0xffff_ffff_8320_0000, 0xffff_ffff_8420_0000, 0);
        assert_eq!(kernel_base(vaddr, stext, &no_offset), Some(0x0220_0000));
        // ChromeOS remaps its kernel to page 0.
        let zero = mapped(0x198, 0x2f9f_ffff, 0);
        assert_eq!(
            kernel_base(vaddr, stext, &zero),
            Some(0x198u64.wrapping_sub(0xffff_ffff_8100_0198))
        );
        let at_zero = mapped(0, 0x2f9f_ffff, 0);
        assert_eq!(
            kernel_base(vaddr, stext, &at_zero),
            Some(0u64.wrapping_sub(0xffff_ffff_8100_0198))
        );
        // A user-space mapping is none of these.
        let user = mapped(0x5555_5555_4000, 0x5555_5555_9000, 0x1000);
        assert_eq!(kernel_base(0x1000, None, &user), None);
    }
}
