//! Where a mapping's addresses are in its ELF file: pprof's base
//! (`elfexec.GetBase`), from the loadable segment that holds the mapping's
//! file offset. A separate debug file's segments have no file size (its
//! sections are empty); they still say where the executable's were, so
//! they are used when no segment has a size.

use object::read::elf::{FileHeader, ProgramHeader};
use object::{elf, Endianness};

/// What to subtract from a runtime address to get the file's address, for
/// a mapping of `start..limit` at file offset `offset`; `None` when the
/// file is not ELF.
pub(crate) fn base(data: &[u8], start: u64, limit: u64, offset: u64) -> Option<u64> {
    if start == 0 && offset == 0 && (limit == 0 || limit == u64::MAX) {
        return Some(0);
    }
    match object::FileKind::parse(data).ok()? {
        object::FileKind::Elf64 => base_of::<elf::FileHeader64<Endianness>>(data, start, offset),
        object::FileKind::Elf32 => base_of::<elf::FileHeader32<Endianness>>(data, start, offset),
        _ => None,
    }
}

fn base_of<H: FileHeader<Endian = Endianness>>(
    data: &[u8],
    start: u64,
    offset: u64,
) -> Option<u64> {
    let header = H::parse(data).ok()?;
    let endian = header.endian().ok()?;
    let segments = header.program_headers(endian, data).ok()?;
    let loads: Vec<(u64, u64, u64, u64)> = segments
        .iter()
        .filter(|s| s.p_type(endian) == elf::PT_LOAD)
        .map(|s| {
            let (off, vaddr) = (s.p_offset(endian).into(), s.p_vaddr(endian).into());
            (
                off,
                vaddr,
                s.p_filesz(endian).into(),
                s.p_memsz(endian).into(),
            )
        })
        .collect();
    // A separate debug file: no segment has bytes in the file, but each
    // still has the executable's offset, address and size in memory.
    let debug_only = loads.iter().all(|&(_, _, filesz, _)| filesz == 0);
    let holding = loads.iter().find(|&&(off, _, filesz, memsz)| {
        let size = if debug_only { memsz } else { filesz };
        size > 0 && (off & !0xfff) <= offset && offset < off + size
    });
    match (header.e_type(endian), holding) {
        (elf::ET_REL, _) => Some(start),
        (elf::ET_EXEC, None) => Some(0),
        (elf::ET_DYN, None) => Some(start.wrapping_sub(offset)),
        (elf::ET_EXEC | elf::ET_DYN, Some(&(off, vaddr, _, _))) => Some(
            start
                .wrapping_sub(offset)
                .wrapping_add(off)
                .wrapping_sub(vaddr),
        ),
        _ => None,
    }
}
