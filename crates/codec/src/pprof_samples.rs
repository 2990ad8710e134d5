//! A fast path for the one message that dominates pprof decoding: `Sample`.
//!
//! rust-protobuf reads each `Sample` through its generic `CodedInputStream`
//! (a limit check and a dispatch per value) and reserves packed vectors by
//! byte length. With a million samples that is most of the decode time (see
//! docs/PERFORMANCE.md, issue 7). Here samples and their labels are read
//! straight from the slice into the same rust-protobuf structs; every other
//! top-level field is handed to rust-protobuf unchanged, in its original
//! order.
//!
//! The fast path only accepts what rust-protobuf reads the same way. Anything
//! else — a field it does not know in a sample or label, a group, a varint
//! rust-protobuf might treat differently, any malformation — makes it return
//! `None`, and the caller parses the whole input the ordinary way, which gives
//! the same result or rust-protobuf's own error. Unknown fields are therefore
//! kept exactly as before.

use protobuf::{CodedInputStream, Message as _};
use protoprof_model_pprof::perftools::profiles::{Label, Profile, Sample};

use crate::limits::Limits;
use crate::wire::{self, read_len, read_tag, read_varint, skip_fixed};

const PROFILE_SAMPLE: u32 = 2;
const LABEL_DEPTH: u32 = 2;

/// Decodes `bytes` as a pprof `Profile`, or `None` to ask for the ordinary
/// parse (see the module comment).
pub(crate) fn decode(bytes: &[u8], limits: &Limits) -> Option<Profile> {
    // Labels sit two levels below the profile; a tighter nesting limit is
    // left to the ordinary parse to enforce.
    if limits.max_depth < LABEL_DEPTH {
        return None;
    }
    let end = bytes.len();
    let (mut pos, mut rest, mut samples) = (0, Vec::new(), Vec::new());
    while pos < end {
        let start = pos;
        let (number, wire_type) = read_tag(bytes, &mut pos, end).ok()?;
        if number == PROFILE_SAMPLE && wire_type == wire::LEN {
            let sample_end = read_len(bytes, &mut pos, end).ok()?;
            samples.push(sample(&bytes[pos..sample_end])?);
            pos = sample_end;
        } else {
            skip_value(bytes, &mut pos, wire_type)?;
            rest.extend_from_slice(&bytes[start..pos]);
        }
    }
    let mut profile = Profile::new();
    let mut stream = CodedInputStream::from_bytes(&rest);
    stream.set_recursion_limit(limits.max_depth + 2);
    profile.merge_from(&mut stream).ok()?;
    stream.check_eof().ok()?;
    profile.sample = samples;
    Some(profile)
}

fn skip_value(bytes: &[u8], pos: &mut usize, wire_type: u8) -> Option<()> {
    let end = bytes.len();
    match wire_type {
        wire::VARINT => read_varint(bytes, pos, end).map(drop).ok(),
        wire::FIXED64 => skip_fixed(pos, end, 8).ok(),
        wire::FIXED32 => skip_fixed(pos, end, 4).ok(),
        wire::LEN => {
            *pos = read_len(bytes, pos, end).ok()?;
            Some(())
        }
        _ => None,
    }
}

/// Appends one value (wire type varint) or a packed run (wire type LEN).
fn repeated<T>(
    bytes: &[u8],
    pos: &mut usize,
    wire_type: u8,
    out: &mut Vec<T>,
    from: fn(u64) -> T,
) -> Option<()> {
    let end = bytes.len();
    match wire_type {
        wire::VARINT => out.push(from(read_varint(bytes, pos, end).ok()?)),
        wire::LEN => {
            let run_end = read_len(bytes, pos, end).ok()?;
            // One value per byte without the continuation bit: the exact count,
            // where rust-protobuf reserves one element per byte.
            let run = &bytes[*pos..run_end];
            out.reserve(run.iter().filter(|&&b| b < 0x80).count());
            while *pos < run_end {
                out.push(from(read_varint(bytes, pos, run_end).ok()?));
            }
        }
        _ => return None,
    }
    Some(())
}

fn sample(bytes: &[u8]) -> Option<Sample> {
    let (end, mut pos, mut sample) = (bytes.len(), 0, Sample::new());
    while pos < end {
        match read_tag(bytes, &mut pos, end).ok()? {
            (1, w) => repeated(bytes, &mut pos, w, &mut sample.location_id, |v| v)?,
            (2, w) => repeated(bytes, &mut pos, w, &mut sample.value, |v| v as i64)?,
            (3, wire::LEN) => {
                let label_end = read_len(bytes, &mut pos, end).ok()?;
                sample.label.push(label(&bytes[pos..label_end])?);
                pos = label_end;
            }
            _ => return None,
        }
    }
    Some(sample)
}

fn label(bytes: &[u8]) -> Option<Label> {
    let (end, mut pos, mut label) = (bytes.len(), 0, Label::new());
    while pos < end {
        let (number, wire_type) = read_tag(bytes, &mut pos, end).ok()?;
        if wire_type != wire::VARINT {
            return None;
        }
        let value = read_varint(bytes, &mut pos, end).ok()? as i64;
        match number {
            1 => label.key = value,
            2 => label.str = value,
            3 => label.num = value,
            4 => label.num_unit = value,
            _ => return None,
        }
    }
    Some(label)
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use protobuf::{Message, UnknownValueRef};

    use super::*;
    use crate::detect::inflate_input;
    use crate::wire::write_varint;

    fn ordinary(bytes: &[u8]) -> protobuf::Result<Profile> {
        Profile::parse_from_bytes(bytes)
    }

    fn synthetic() -> Profile {
        protoprof_synth::profile(&protoprof_synth::Shape::with_samples(2_000, 7))
    }

    #[test]
    fn equals_the_ordinary_parse_on_a_synthetic_profile() {
        let bytes = synthetic().write_to_bytes().unwrap();
        let fast = decode(&bytes, &Limits::default()).expect("fast path taken");
        assert_eq!(fast, ordinary(&bytes).unwrap());
        assert_eq!(fast.write_to_bytes().unwrap(), bytes);
    }

    #[test]
    fn unpacked_values_and_unknown_top_level_fields_are_read_as_before() {
        let mut profile = synthetic();
        profile.mut_unknown_fields().add_varint(99, 5);
        let mut bytes = profile.write_to_bytes().unwrap();
        // A sample written the way Go writes short runs: one tag per value.
        let mut sample = Vec::new();
        for (number, value) in [(1u64, 3u64), (1, 2), (2, 7), (2, u64::MAX)] {
            write_varint(&mut sample, number << 3);
            write_varint(&mut sample, value);
        }
        write_varint(&mut bytes, (2 << 3) | 2);
        write_varint(&mut bytes, sample.len() as u64);
        bytes.extend_from_slice(&sample);
        let fast = decode(&bytes, &Limits::default()).expect("fast path taken");
        assert_eq!(fast, ordinary(&bytes).unwrap());
        let last = fast.sample.last().unwrap();
        assert_eq!(
            (last.location_id.clone(), last.value.clone()),
            (vec![3, 2], vec![7, -1])
        );
        assert_eq!(
            fast.unknown_fields().get(99),
            Some(UnknownValueRef::Varint(5))
        );
    }

    #[test]
    fn unknown_fields_inside_samples_and_labels_take_the_ordinary_path() {
        let mut in_sample = synthetic();
        in_sample.sample[3].mut_unknown_fields().add_varint(9, 1);
        let mut in_label = synthetic();
        let label = in_label
            .sample
            .iter_mut()
            .find(|s| !s.label.is_empty())
            .unwrap();
        label.label[0].mut_unknown_fields().add_fixed32(7, 1);
        for profile in [in_sample, in_label] {
            let bytes = profile.write_to_bytes().unwrap();
            assert!(decode(&bytes, &Limits::default()).is_none());
        }
    }

    #[test]
    fn a_nesting_limit_below_labels_takes_the_ordinary_path() {
        let bytes = synthetic().write_to_bytes().unwrap();
        let tight = Limits {
            max_depth: 1,
            ..Limits::default()
        };
        assert!(decode(&bytes, &tight).is_none());
    }

    #[test]
    fn malformed_input_takes_the_ordinary_path() {
        let bytes = synthetic().write_to_bytes().unwrap();
        assert!(decode(&bytes[..bytes.len() - 3], &Limits::default()).is_none());
        // A varint whose tenth byte carries bits past 64.
        let mut overflow = vec![(2 << 3) | 2, 11, 1 << 3];
        overflow.extend([0xff; 9]);
        overflow.push(0x02);
        assert!(decode(&overflow, &Limits::default()).is_none());
    }

    fn corpus_profiles() -> Vec<PathBuf> {
        let Some(corpus) = std::env::var_os("PROTOPROF_CORPUS") else {
            return Vec::new();
        };
        let mut files = Vec::new();
        let mut dirs = vec![Path::new(&corpus).join("pprof")];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.to_string_lossy().ends_with(".pb.gz")
                    || path.extension().is_some_and(|e| e == "pb")
                {
                    files.push(path);
                }
            }
        }
        files
    }

    /// On every real profile: the same message as rust-protobuf's parse, and
    /// the fast path is what reads real data.
    #[test]
    fn equals_the_ordinary_parse_on_the_corpus() {
        let files = corpus_profiles();
        let limits = Limits::default();
        let mut fast_count = 0;
        for path in &files {
            let input = std::fs::read(path).unwrap();
            let (bytes, _) = inflate_input(&input, &limits).unwrap();
            let fast = decode(&bytes, &limits);
            match ordinary(&bytes) {
                Ok(expected) => {
                    if let Some(fast) = fast {
                        assert!(fast == expected, "{}: fast path differs", path.display());
                        fast_count += 1;
                    }
                }
                Err(_) => assert!(fast.is_none(), "{}: fast path accepted", path.display()),
            }
        }
        eprintln!(
            "fast path on {fast_count} of {} corpus profiles",
            files.len()
        );
        if !files.is_empty() {
            assert!(
                fast_count * 10 >= files.len() * 9,
                "fast path taken for only {fast_count} of {} files",
                files.len()
            );
        }
    }
}
