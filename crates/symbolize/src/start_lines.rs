//! Where the functions of frames start (`DW_AT_decl_line`), as
//! `llvm-symbolizer` reports it and upstream pprof writes it into
//! `Function.start_line`: read from the DIE `addr2line` found each frame
//! at (an inlined call's abstract origin, a function's specification),
//! in the unit that holds the frame's address.

use std::collections::HashMap;

use addr2line::gimli;
use gimli::{AttributeValue, EndianSlice, RunTimeEndian, UnitOffset};

use crate::sections::Sections;

type Reader<'a> = EndianSlice<'a, RunTimeEndian>;

/// The sections the start lines are read from, owned.
pub(crate) struct StartLines {
    info: Vec<u8>,
    abbrev: Vec<u8>,
    aranges: Vec<u8>,
    endian: RunTimeEndian,
}

/// The frames at one file address: for each, the DIE (offset in its unit)
/// it was found at and where its start line goes.
pub(crate) type AddressDies<'f> = (u64, Vec<(Option<usize>, &'f mut i64)>);

/// A DIE's start line is looked for through this many references at most.
const MAX_REFERENCES: usize = 4;

impl StartLines {
    /// The sections start lines are read from, taken from `sections`.
    pub(crate) fn take(mut sections: Sections) -> StartLines {
        StartLines {
            info: sections.take(gimli::SectionId::DebugInfo),
            abbrev: sections.take(gimli::SectionId::DebugAbbrev),
            aranges: sections.take(gimli::SectionId::DebugAranges),
            endian: sections.endian,
        }
    }

    /// Each frame's start line, for frames found at file addresses: the
    /// frames of an address and the DIE (unit offset) each was found at.
    pub(crate) fn fill(&self, frames: &mut [AddressDies<'_>]) {
        let dwarf = self.dwarf();
        let units = UnitsByAddress::of(&dwarf);
        let mut parsed: HashMap<usize, Option<UnitDies<'_>>> = HashMap::new();
        for (address, dies) in frames.iter_mut() {
            let Some(offset) = units.containing(*address) else {
                continue;
            };
            let unit = parsed
                .entry(offset)
                .or_insert_with(|| UnitDies::at(&dwarf, gimli::DebugInfoOffset(offset)));
            let Some(unit) = unit.as_ref() else {
                continue;
            };
            for (die, start_line) in dies.iter_mut() {
                if let Some(die) = die {
                    **start_line = decl_line(&dwarf, unit, UnitOffset(*die), MAX_REFERENCES);
                }
            }
        }
    }

    fn dwarf(&self) -> gimli::Dwarf<Reader<'_>> {
        gimli::Dwarf {
            debug_info: gimli::DebugInfo::new(&self.info, self.endian),
            debug_abbrev: gimli::DebugAbbrev::new(&self.abbrev, self.endian),
            debug_aranges: gimli::DebugAranges::new(&self.aranges, self.endian),
            ..Default::default()
        }
    }
}

/// A unit's header and abbreviations: enough to read its DIEs.
struct UnitDies<'a> {
    header: gimli::UnitHeader<Reader<'a>>,
    abbreviations: std::sync::Arc<gimli::Abbreviations>,
}

impl<'a> UnitDies<'a> {
    /// The unit at `offset`; `None` for a skeleton, whose DIEs are in its
    /// split file.
    fn at(dwarf: &gimli::Dwarf<Reader<'a>>, offset: gimli::DebugInfoOffset) -> Option<Self> {
        let header = dwarf.debug_info.header_from_offset(offset).ok()?;
        Self::of(dwarf, header)
    }

    fn of(dwarf: &gimli::Dwarf<Reader<'a>>, header: gimli::UnitHeader<Reader<'a>>) -> Option<Self> {
        if matches!(header.type_(), gimli::UnitType::Skeleton(_)) {
            return None;
        }
        let abbreviations = dwarf.abbreviations(&header).ok()?;
        let mut entries = header.entries(&abbreviations);
        let root = entries.next_dfs().ok()??;
        if root.attr_value(gimli::DW_AT_GNU_dwo_id).is_some() {
            return None;
        }
        Some(UnitDies {
            header,
            abbreviations,
        })
    }
}

/// `DW_AT_decl_line` of the DIE at `offset`, or of the one it is an
/// instance of (`DW_AT_abstract_origin`, `DW_AT_specification`); 0 when
/// none says.
fn decl_line(
    dwarf: &gimli::Dwarf<Reader<'_>>,
    unit: &UnitDies<'_>,
    offset: UnitOffset,
    references: usize,
) -> i64 {
    let Ok(entry) = unit.header.entry(&unit.abbreviations, offset) else {
        return 0;
    };
    if let Some(line) = entry
        .attr_value(gimli::DW_AT_decl_line)
        .and_then(|v| v.udata_value())
    {
        return i64::try_from(line).unwrap_or(0);
    }
    if references == 0 {
        return 0;
    }
    let origin = (entry.attr_value(gimli::DW_AT_abstract_origin))
        .or_else(|| entry.attr_value(gimli::DW_AT_specification));
    match origin {
        Some(AttributeValue::UnitRef(to)) => decl_line(dwarf, unit, to, references - 1),
        Some(AttributeValue::DebugInfoRef(to)) => {
            // Another unit's DIE (as link-time optimisation leaves them).
            let mut headers = dwarf.units();
            while let Ok(Some(header)) = headers.next() {
                if let Some(in_unit) = to.to_unit_offset(&header) {
                    return match UnitDies::of(dwarf, header) {
                        Some(other) => decl_line(dwarf, &other, in_unit, references - 1),
                        None => 0,
                    };
                }
            }
            0
        }
        _ => 0,
    }
}

/// The units' address ranges, from `.debug_aranges`, or from the units'
/// own ranges where that section is missing.
struct UnitsByAddress {
    /// (start, end, the unit's offset in `.debug_info`), by start.
    ranges: Vec<(u64, u64, usize)>,
}

impl UnitsByAddress {
    fn of(dwarf: &gimli::Dwarf<Reader<'_>>) -> UnitsByAddress {
        let mut ranges = Vec::new();
        let mut headers = dwarf.debug_aranges.headers();
        while let Ok(Some(header)) = headers.next() {
            let offset = header.debug_info_offset().0;
            let mut entries = header.entries();
            while let Ok(Some(entry)) = entries.next() {
                let range = entry.range();
                ranges.push((range.begin, range.end, offset));
            }
        }
        if ranges.is_empty() {
            ranges = Self::from_units(dwarf);
        }
        ranges.sort_unstable();
        UnitsByAddress { ranges }
    }

    /// Each unit's `DW_AT_low_pc`..`DW_AT_high_pc`, where `.debug_aranges`
    /// is missing.
    fn from_units(dwarf: &gimli::Dwarf<Reader<'_>>) -> Vec<(u64, u64, usize)> {
        let mut ranges = Vec::new();
        let mut headers = dwarf.units();
        while let Ok(Some(header)) = headers.next() {
            // Units read from `.debug_info` are at offsets in it.
            let offset = gimli::DebugInfoOffset(header.offset().0);
            let Some(unit) = UnitDies::of(dwarf, header) else {
                continue;
            };
            let mut entries = unit.header.entries(&unit.abbreviations);
            let Ok(Some(root)) = entries.next_dfs() else {
                continue;
            };
            let low = match root.attr_value(gimli::DW_AT_low_pc) {
                Some(AttributeValue::Addr(a)) => a,
                _ => continue,
            };
            let high = match root.attr_value(gimli::DW_AT_high_pc) {
                Some(AttributeValue::Addr(a)) => a,
                Some(v) => v.udata_value().map_or(low, |n| low.saturating_add(n)),
                None => continue,
            };
            ranges.push((low, high, offset.0));
        }
        ranges
    }

    /// The unit whose ranges hold `address`.
    fn containing(&self, address: u64) -> Option<usize> {
        let after = self.ranges.partition_point(|r| r.0 <= address);
        self.ranges[..after]
            .iter()
            .rev()
            .take(64)
            .find(|r| address < r.1)
            .map(|r| r.2)
    }
}
