//! A binary's DWARF sections, read once for all that reads them beside
//! `addr2line`: the functions' start lines (`start_lines.rs`) and the
//! file names of directory 0 (`dir_zero.rs`).

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;

use addr2line::gimli;
use gimli::{RunTimeEndian, SectionId};
use object::{Object, ObjectSection};

/// The sections read.
const READ: [SectionId; 7] = [
    SectionId::DebugInfo,
    SectionId::DebugAbbrev,
    SectionId::DebugAranges,
    SectionId::DebugLine,
    SectionId::DebugStr,
    SectionId::DebugLineStr,
    SectionId::DebugStrOffsets,
];

/// The DWARF sections of one file, owned (uncompressed).
pub(crate) struct Sections {
    pub(crate) endian: RunTimeEndian,
    data: HashMap<SectionId, Vec<u8>>,
}

impl Sections {
    /// The sections of the file at `path`, where it has units to read.
    pub(crate) fn read(path: &Path) -> Option<Sections> {
        let file = std::fs::File::open(path).ok()?;
        let cache = object::ReadCache::new(file);
        let object = object::File::parse(&cache).ok()?;
        let section = |id: SectionId| -> Vec<u8> {
            let data = object.section_by_name(id.name());
            let data = data.and_then(|s| s.uncompressed_data().ok());
            data.map(Cow::into_owned).unwrap_or_default()
        };
        let data: HashMap<SectionId, Vec<u8>> =
            READ.into_iter().map(|id| (id, section(id))).collect();
        if data[&SectionId::DebugInfo].is_empty() {
            return None;
        }
        let endian = match object.is_little_endian() {
            true => RunTimeEndian::Little,
            false => RunTimeEndian::Big,
        };
        Some(Sections { endian, data })
    }

    /// Section `id` (empty when the file has none).
    pub(crate) fn get(&self, id: SectionId) -> &[u8] {
        self.data.get(&id).map_or(&[], Vec::as_slice)
    }

    /// Section `id`, taken out.
    pub(crate) fn take(&mut self, id: SectionId) -> Vec<u8> {
        self.data.remove(&id).unwrap_or_default()
    }
}
