//! gperftools CPU profiles (the legacy binary format `go tool pprof` still
//! reads), into the pprof model, as Go's `profile/legacy_profile.go` reads
//! them: a header of five words (0, 3, 0, period in microseconds, 0) in
//! 32- or 64-bit words of either byte order, then samples (count, depth,
//! addresses), an end marker (0, 1, 0), then the process's memory map as
//! text. Return addresses but the leaf's are moved back one byte onto the
//! call; a frame that the signal handler pushes (the same second frame on
//! nearly every sample) is dropped, up to twice; a leaf duplicated by the
//! unwinder is dropped; mappings are merged and assigned as Go assigns
//! them (see `maps.rs`).

use std::collections::HashMap;

use protobuf::MessageField;
use protoprof_model_pprof::perftools::profiles::{
    Label, Location, Mapping, Profile, Sample, ValueType,
};

use crate::legacy::maps::{self, MappingEntry};

/// pprof's `cpuProfilerRxStr`: the profiler's own frames, which pprof sets
/// as `drop_frames` on every legacy profile but heap and contention ones.
pub(crate) const CPU_PROFILER_FRAMES: &str =
    "ProfileData::Add|ProfileData::prof_handler|CpuProfiler::prof_handler|__pthread_sighandler|__restore";

/// Reads one word of the profile's size and byte order.
pub(crate) type Word = fn(&[u8]) -> Option<(u64, &[u8])>;

fn word32le(b: &[u8]) -> Option<(u64, &[u8])> {
    let (w, rest) = b.split_first_chunk::<4>()?;
    Some((u64::from(u32::from_le_bytes(*w)), rest))
}

fn word32be(b: &[u8]) -> Option<(u64, &[u8])> {
    let (w, rest) = b.split_first_chunk::<4>()?;
    Some((u64::from(u32::from_be_bytes(*w)), rest))
}

fn word64le(b: &[u8]) -> Option<(u64, &[u8])> {
    let (w, rest) = b.split_first_chunk::<8>()?;
    Some((u64::from_le_bytes(*w), rest))
}

fn word64be(b: &[u8]) -> Option<(u64, &[u8])> {
    let (w, rest) = b.split_first_chunk::<8>()?;
    Some((u64::from_be_bytes(*w), rest))
}

/// The word reader whose header this is, the period (µs) and the rest;
/// `None` when the input is not a gperftools CPU profile.
fn header(b: &[u8]) -> Option<(Word, u64, &[u8])> {
    header_of(b, 0)
}

/// The header with third word `variant`: 0 for C++, 1 for Java.
pub(crate) fn header_of(b: &[u8], variant: u64) -> Option<(Word, u64, &[u8])> {
    let words: [Word; 4] = [word32le, word32be, word64le, word64be];
    words.into_iter().find_map(|word| {
        let (n1, rest) = word(b)?;
        let (n2, rest) = word(rest)?;
        let (n3, rest) = word(rest)?;
        let (n4, rest) = word(rest)?;
        let (n5, rest) = word(rest)?;
        (n1 == 0 && n2 == 3 && n3 == variant && n4 > 0 && n5 == 0).then_some((word, n4, rest))
    })
}

/// Whether `bytes` start as a gperftools CPU profile does (a protobuf
/// message never starts with a zero byte, so this cannot take one).
pub fn is_cpu_profile(bytes: &[u8]) -> bool {
    header(bytes).is_some()
}

/// Why a profile that looked like one does not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegacyError(pub String);

/// The profile, when `bytes` are a gperftools CPU profile.
pub fn parse_cpu(bytes: &[u8]) -> Option<Result<Profile, LegacyError>> {
    let (word, period_us, rest) = header(bytes)?;
    Some(parse_body(word, period_us, rest))
}

/// A sample as read: its values, its locations (indices into the location
/// list), leaf first, and for heap profiles its block size.
pub(crate) struct RawSample {
    pub values: Vec<i64>,
    pub stack: Vec<usize>,
    pub block_size: Option<i64>,
}

/// What kind of legacy profile a model is built for.
pub(crate) struct Kind {
    pub sample_types: Vec<(String, String)>,
    pub period_type: (String, String),
    pub period: i64,
    pub drop_frames: String,
    /// Drop a leaf the unwinder duplicated (CPU profiles).
    pub duplicate_leaf: bool,
}

/// The samples read from `b` (up to the end marker), the addresses they
/// use, and what follows. With `adjust`, every return address but the
/// leaf's is moved back one byte onto its call.
pub(crate) type Read<'a> = (Vec<RawSample>, Vec<u64>, &'a [u8]);

pub(crate) fn read_samples(
    word: Word,
    period: i64,
    mut b: &[u8],
    adjust: bool,
) -> Result<Read<'_>, LegacyError> {
    let mut addresses = Addresses::default();
    let mut samples: Vec<RawSample> = Vec::new();
    let malformed = |what: &str| LegacyError(format!("CPU profile: {what}"));
    while !b.is_empty() {
        let (count, rest) = word(b).ok_or_else(|| malformed("a sample is cut short"))?;
        let (depth, rest) = word(rest).ok_or_else(|| malformed("a sample is cut short"))?;
        if depth > (rest.len() / 4) as u64 {
            return Err(malformed(&format!(
                "a stack of {depth} frames is longer than the input"
            )));
        }
        b = rest;
        let mut stack = Vec::with_capacity(depth as usize);
        let mut frames = Vec::with_capacity(depth as usize);
        for _ in 0..depth {
            let (address, rest) = word(b).ok_or_else(|| malformed("a stack is cut short"))?;
            frames.push(address);
            b = rest;
        }
        if count == 0 && depth == 1 && frames[0] == 0 {
            break; // the end marker
        }
        for (i, &address) in frames.iter().enumerate() {
            // Return addresses point after the call; the leaf is no call.
            let address = match adjust && i > 0 {
                true => address.wrapping_sub(1),
                false => address,
            };
            stack.push(addresses.intern(address));
        }
        let count = count as i64;
        samples.push(RawSample {
            values: vec![count, count.saturating_mul(period)],
            stack,
            block_size: None,
        });
    }
    Ok((samples, addresses.list, b))
}

fn parse_body(word: Word, period_us: u64, b: &[u8]) -> Result<Profile, LegacyError> {
    let period = (period_us as i64).saturating_mul(1000);
    let (mut samples, addresses, b) = read_samples(word, period, b, true)?;
    drop_signal_frames(&mut samples, &addresses);
    let maps = maps::parse(&String::from_utf8_lossy(b));
    let kind = Kind {
        sample_types: owned(&[("samples", "count"), ("cpu", "nanoseconds")]),
        period_type: ("cpu".into(), "nanoseconds".into()),
        period,
        drop_frames: CPU_PROFILER_FRAMES.into(),
        duplicate_leaf: true,
    };
    Ok(build(samples, &addresses, maps, &kind))
}

/// pprof's heuristic: when nearly every sample (all but one in 32) has the
/// same second frame, it is the signal handler's: drop it, twice at most.
fn drop_signal_frames(samples: &mut [RawSample], addresses: &[u64]) {
    let margin = samples.len() / 32;
    for _ in 0..2 {
        let mut counts: HashMap<u64, usize> = HashMap::new();
        for s in samples.iter().filter(|s| s.stack.len() > 1) {
            *counts.entry(addresses[s.stack[1]]).or_default() += 1;
        }
        let Some((&address, _)) = counts.iter().find(|(_, &n)| n >= samples.len() - margin) else {
            continue;
        };
        for s in samples.iter_mut() {
            if s.stack.len() > 1 && addresses[s.stack[1]] == address {
                s.stack.remove(1);
            }
        }
    }
}

/// The pprof model: locations numbered by first use, mappings assigned,
/// for CPU profiles the duplicated leaf dropped.
pub(crate) fn build(
    mut samples: Vec<RawSample>,
    addresses: &[u64],
    maps: Vec<MappingEntry>,
    kind: &Kind,
) -> Profile {
    // Locations by first use in the samples (Go's remapLocationIDs).
    let mut id_of: HashMap<usize, u64> = HashMap::new();
    let mut order: Vec<usize> = Vec::new();
    for s in &samples {
        for &at in &s.stack {
            id_of.entry(at).or_insert_with(|| {
                order.push(at);
                order.len() as u64
            });
        }
    }
    let located: Vec<u64> = order.iter().map(|&at| addresses[at]).collect();
    let (mappings, mapping_of) = maps::assign(maps, &located);
    // The unwinder may repeat the leaf, moved back one byte (Go's
    // cleanupDuplicateLocations, after the locations are numbered).
    for s in samples.iter_mut().filter(|_| kind.duplicate_leaf) {
        if s.stack.len() > 1 && addresses[s.stack[0]] == addresses[s.stack[1]].wrapping_add(1) {
            s.stack.remove(1);
        }
    }
    let mut strings = StringsBuilder::default();
    let sample_type = kind
        .sample_types
        .iter()
        .map(|(t, u)| strings.value_type(t, u))
        .collect();
    let period_type =
        MessageField::some(strings.value_type(&kind.period_type.0, &kind.period_type.1));
    let mapping: Vec<Mapping> = mappings
        .iter()
        .enumerate()
        .map(|(i, m)| Mapping {
            id: i as u64 + 1,
            memory_start: m.start,
            memory_limit: m.limit,
            file_offset: m.offset,
            filename: strings.intern(&m.file),
            build_id: strings.intern(&m.build_id),
            ..Default::default()
        })
        .collect();
    let location = located
        .iter()
        .enumerate()
        .map(|(i, &address)| Location {
            id: i as u64 + 1,
            mapping_id: mapping_of[i].map_or(0, |m| m as u64 + 1),
            address,
            ..Default::default()
        })
        .collect();
    let sample = pprof_samples(&samples, |at| id_of[&at], &mut strings);
    let drop_frames = strings.intern(&kind.drop_frames);
    Profile {
        sample_type,
        sample,
        mapping,
        location,
        period_type,
        period: kind.period,
        drop_frames,
        string_table: strings.table,
        ..Default::default()
    }
}

/// Sample types as [`Kind`] holds them.
pub(crate) fn owned(types: &[(&str, &str)]) -> Vec<(String, String)> {
    types
        .iter()
        .map(|(t, u)| (t.to_string(), u.to_string()))
        .collect()
}

/// The pprof samples of `samples`, their locations by `location_id`, a
/// heap sample's block size as its `bytes` label.
pub(crate) fn pprof_samples(
    samples: &[RawSample],
    location_id: impl Fn(usize) -> u64,
    strings: &mut StringsBuilder,
) -> Vec<Sample> {
    let bytes_key = if samples.iter().any(|s| s.block_size.is_some()) {
        strings.intern("bytes")
    } else {
        0
    };
    samples
        .iter()
        .map(|s| Sample {
            location_id: s.stack.iter().map(|&at| location_id(at)).collect(),
            value: s.values.clone(),
            label: s
                .block_size
                .map(|num| Label {
                    key: bytes_key,
                    num,
                    ..Default::default()
                })
                .into_iter()
                .collect(),
            ..Default::default()
        })
        .collect()
}

/// Addresses in first-seen order, each once: a legacy profile's locations
/// before they are numbered.
#[derive(Default)]
pub(crate) struct Addresses {
    pub list: Vec<u64>,
    index: HashMap<u64, usize>,
}

impl Addresses {
    /// The position of `address`, appended when new.
    pub fn intern(&mut self, address: u64) -> usize {
        let list = &mut self.list;
        *self.index.entry(address).or_insert_with(|| {
            list.push(address);
            list.len() - 1
        })
    }
}

/// A string table built as strings are needed ("" first).
pub(crate) struct StringsBuilder {
    pub table: Vec<String>,
    index: HashMap<String, i64>,
}

impl Default for StringsBuilder {
    fn default() -> Self {
        StringsBuilder {
            table: vec![String::new()],
            index: HashMap::from([(String::new(), 0)]),
        }
    }
}

impl StringsBuilder {
    pub fn intern(&mut self, s: &str) -> i64 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        self.table.push(s.to_string());
        let i = self.table.len() as i64 - 1;
        self.index.insert(s.to_string(), i);
        i
    }

    pub fn value_type(&mut self, type_: &str, unit: &str) -> ValueType {
        ValueType {
            type_: self.intern(type_),
            unit: self.intern(unit),
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A header (64-bit little-endian, period 10ms), then `words`.
    fn profile(words: &[u64], map: &str) -> Vec<u8> {
        let mut out: Vec<u8> = [0u64, 3, 0, 10_000, 0]
            .iter()
            .chain(words)
            .flat_map(|w| w.to_le_bytes())
            .collect();
        out.extend_from_slice(map.as_bytes());
        out
    }

    #[test]
    fn samples_mappings_and_the_end_marker() {
        let map = "00400000-00500000 r-xp 00000000 fc:00 1 /bin/app\n7f0000000000-7f0000001000 rw-p 00000000 fc:00 2 /lib/data\n";
        let bytes = profile(&[3, 2, 0x401000, 0x402005, 1, 1, 0x9000_0000, 0, 1, 0], map);
        assert!(is_cpu_profile(&bytes));
        let p = parse_cpu(&bytes).unwrap().unwrap();
        assert_eq!(p.sample.len(), 2);
        assert_eq!(p.sample[0].value, [3, 30_000_000]);
        // The return address moved back onto the call.
        assert_eq!(p.location[1].address, 0x402004);
        // The non-executable region is not a mapping; an address outside
        // every region gets the catch-all one.
        assert_eq!(p.mapping.len(), 2);
        assert_eq!(p.location[0].mapping_id, 1);
        assert_eq!(p.location[2].mapping_id, 2);
        assert_eq!(p.mapping[1].memory_limit, u64::MAX);
    }

    #[test]
    fn broken_input_is_an_error_not_a_panic() {
        assert!(!is_cpu_profile(b"\x0a\x02hi"));
        let cut = profile(&[1, 1000], "");
        assert!(parse_cpu(&cut).unwrap().is_err());
        // Garbage after a valid header, in every length.
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for len in 0..400 {
            let mut bytes = profile(&[], "");
            for _ in 0..len {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                bytes.push((seed % 7) as u8);
            }
            let _ = parse_cpu(&bytes);
        }
        let odd_map = "ffff-0 r-xp 00000010 fc:00 1 /x\n10-20 r-xp 0000ffff fc:00 1 /x\nk=v\n$k\n";
        let _ = parse_cpu(&profile(&[1, 1, 0x15, 0, 1, 0], odd_map));
    }
}
