//! The memory map legacy profiles end with (`/proc/self/maps` lines, or
//! pprof's brief form `start-end file (@offset) buildid`), and how Go's
//! pprof turns it into mappings (`ParseMemoryMap`, `massageMappings`,
//! `remapMappingIDs`): executable regions only, split regions merged, the
//! main binary first, each location in the first region holding it, a
//! catch-all mapping for the rest.

use std::sync::OnceLock;

use regex::Regex;

/// One region of the map.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MappingEntry {
    /// First address.
    pub start: u64,
    /// One past the last.
    pub limit: u64,
    /// Offset in the file.
    pub offset: u64,
    /// The mapped file.
    pub file: String,
    /// Its build id, when the map gives one.
    pub build_id: String,
}

fn regexes() -> &'static [Regex; 4] {
    static RE: OnceLock<[Regex; 4]> = OnceLock::new();
    RE.get_or_init(|| {
        let hex = r"(?:0x)?([[:xdigit:]]+)";
        let range = format!(r"\s*{hex}[\s-]?\s*{hex}:?");
        let perm = r"(?:\s+([-rwxp]+))?";
        let space_hex = r"(?:\s+([[:xdigit:]]+))?";
        let hex_pair = r"\s+[[:xdigit:]]+:[[:xdigit:]]+";
        let space_digits = r"\s+[[:digit:]]+";
        let space_string = r"(?:\s+(\S+))?";
        let at_offset = r"(?:\s+\(@([[:xdigit:]]+)\))?";
        let compile = |s: &str| Regex::new(s).expect("valid");
        [
            compile(&format!(
                "^{range}{perm}{space_hex}{hex_pair}{space_digits}{space_string}"
            )),
            compile(&format!(
                "^{range}{perm}{space_string}{at_offset}{space_hex}"
            )),
            // glog prefixes: "... file.cc:123] message"
            compile(r"^[^\[\]]+:[0-9]+]\s"),
            compile(r"([.]so$|[.]so[._][0-9]+)"),
        ]
    })
}

/// The executable regions of a memory map, in order. Lines that are not
/// regions are skipped; `name=value` lines define `$name` for later ones.
pub fn parse(text: &str) -> Vec<MappingEntry> {
    let [proc_maps, brief, log_prefix, _] = regexes();
    let mut attributes: Vec<(String, String)> = Vec::new();
    let mut out = Vec::new();
    for raw in text.lines() {
        let line = match log_prefix.find(raw) {
            Some(m) => &raw[m.end()..],
            None => raw,
        };
        let line = attributes
            .iter()
            .fold(line.to_string(), |l, (name, value)| {
                l.replace(name.as_str(), value)
            });
        let group = |c: &regex::Captures, i: usize| c.get(i).map_or("", |m| m.as_str()).to_string();
        let (start, end, perm, offset, file, build_id) = if let Some(c) = proc_maps.captures(&line)
        {
            (
                group(&c, 1),
                group(&c, 2),
                group(&c, 3),
                group(&c, 4),
                group(&c, 5),
                String::new(),
            )
        } else if let Some(c) = brief.captures(&line) {
            (
                group(&c, 1),
                group(&c, 2),
                group(&c, 3),
                group(&c, 5),
                group(&c, 4),
                group(&c, 6),
            )
        } else {
            if let Some((name, value)) = line.split_once('=') {
                attributes.push((format!("${}", name.trim()), value.trim().to_string()));
            }
            continue;
        };
        if !perm.is_empty() && !perm.contains('x') {
            continue; // not executable
        }
        let hex = |s: &str| u64::from_str_radix(s, 16).ok();
        let (Some(start), Some(limit)) = (hex(&start), hex(&end)) else {
            continue;
        };
        let offset = if offset.is_empty() {
            Some(0)
        } else {
            hex(&offset)
        };
        let Some(offset) = offset else { continue };
        out.push(MappingEntry {
            start,
            limit,
            offset,
            file,
            build_id,
        });
    }
    out
}

/// The mappings as Go's pprof keeps them, and for each address (in
/// `addresses` order) the position of its mapping.
pub fn assign(
    maps: Vec<MappingEntry>,
    addresses: &[u64],
) -> (Vec<MappingEntry>, Vec<Option<usize>>) {
    let mut maps = massage(maps);
    if maps.len() > 1
        && maps[0].file.starts_with("/anon_hugepage")
        && maps[0].limit == maps[1].start
    {
        maps.remove(0);
    }
    if let Some(m) = maps.first_mut() {
        // The main binary remapped above its usual start.
        if m.start.wrapping_sub(m.offset) == 0x400000 {
            m.start = 0x400000;
            m.offset = 0;
        }
    }
    let mut fake: Option<usize> = None;
    let of = addresses
        .iter()
        .map(|&a| {
            if a == 0 {
                return None;
            }
            if let Some(i) = maps.iter().position(|m| m.start <= a && a < m.limit) {
                return Some(i);
            }
            // Handlers that lose the first part of a split region.
            if let Some(i) = maps
                .iter()
                .position(|m| m.offset != 0 && m.start.wrapping_sub(m.offset) <= a && a < m.start)
            {
                maps[i].start = maps[i].start.wrapping_sub(maps[i].offset);
                maps[i].offset = 0;
                return Some(i);
            }
            Some(*fake.get_or_insert_with(|| {
                maps.push(MappingEntry {
                    limit: u64::MAX,
                    ..Default::default()
                });
                maps.len() - 1
            }))
        })
        .collect();
    (maps, of)
}

/// Split regions merged; the main binary (the first file that is neither
/// a shared library nor `[special]`) moved to the front.
fn massage(maps: Vec<MappingEntry>) -> Vec<MappingEntry> {
    let mut merged: Vec<MappingEntry> = Vec::with_capacity(maps.len());
    for m in maps {
        match merged.last_mut() {
            Some(last) if adjacent(last, &m) => {
                last.limit = m.limit;
                if !m.file.is_empty() {
                    last.file = m.file;
                }
                if !m.build_id.is_empty() {
                    last.build_id = m.build_id;
                }
            }
            _ => merged.push(m),
        }
    }
    let library = &regexes()[3];
    let main = merged.iter().position(|m| {
        let file = m.file.replace("(deleted)", "");
        let file = file.trim();
        !file.is_empty() && !library.is_match(file) && !file.starts_with('[')
    });
    if let Some(i) = main {
        merged.swap(0, i);
    }
    merged
}

/// Two regions of one mapping split in two: same file and build id where
/// both have one, touching, offsets continuing where both have one.
fn adjacent(a: &MappingEntry, b: &MappingEntry) -> bool {
    let differ = |x: &str, y: &str| !x.is_empty() && !y.is_empty() && x != y;
    if differ(&a.file, &b.file) || differ(&a.build_id, &b.build_id) || a.limit != b.start {
        return false;
    }
    a.offset == 0
        || b.offset == 0
        || a.offset.wrapping_add(a.limit.wrapping_sub(a.start)) == b.offset
}

/// Whether a line opens the memory map of a text profile.
pub fn is_sentinel(line: &str) -> bool {
    ["--- Memory map: ---", "MAPPED_LIBRARIES:"]
        .iter()
        .any(|s| line.contains(s))
}

/// Whether a line of a text profile is blank or a `#` comment.
pub fn is_space_or_comment(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

/// The regions of the memory map that follows the first sentinel line of
/// `lines` (pprof's `parseAdditionalSections`); none without one.
pub fn after_sentinel<'a>(lines: impl IntoIterator<Item = &'a str>) -> Vec<MappingEntry> {
    let text: String = lines
        .into_iter()
        .skip_while(|l| !is_sentinel(l))
        .skip(1)
        .map(|l| format!("{l}\n"))
        .collect();
    parse(&text)
}

/// Hex addresses (`0x…`) in `text`, each moved back one byte onto its call
/// when `adjust`; the error is an address past 64 bits.
pub fn hex_addresses(text: &str, adjust: bool) -> Result<Vec<u64>, String> {
    static HEX: OnceLock<Regex> = OnceLock::new();
    let hex = HEX.get_or_init(|| Regex::new(r"0x[0-9a-f]+").expect("valid"));
    hex.find_iter(text)
        .map(|m| {
            u64::from_str_radix(&m.as_str()[2..], 16)
                .map(|a| if adjust { a.wrapping_sub(1) } else { a })
                .map_err(|_| m.as_str().to_string())
        })
        .collect()
}
