//! A fast path for the one message that dominates pprof decoding: `Sample`.
//!
//! rust-protobuf reads each `Sample` through its generic `CodedInputStream`
//! (a limit check and a dispatch per value) and reserves packed vectors by
//! byte length. With a million samples that is most of the decode time (see
//! docs/performance-log.md, issue 7). Here samples and their labels are read
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
use protoprof_model_meta::wire::varint_count;
use protoprof_model_meta::Fields;
use protoprof_model_pprof::fields::perftools::profiles::{label as label_field, profile, sample};
use protoprof_model_pprof::perftools::profiles::{Label, Profile, Sample};

use crate::binary::wire::{
    self, le_word, optional_size, packed_payload, read_len, read_tag, read_varint, skip_value,
    write_len_prefix, write_optional, write_packed,
};
use crate::limits::Limits;
use crate::pprof::halves::fold_in_halves;
use crate::pprof::locations::read_location;
use crate::pprof::sample_summary::SampleSummary;

const LABEL_DEPTH: u32 = 2;

/// Decodes `bytes` as a pprof `Profile`, or `None` to ask for the ordinary
/// parse (see the module comment).
pub(crate) fn decode(bytes: &[u8], limits: &Limits) -> Option<Profile> {
    let mut samples = Vec::new();
    let mut profile = read_top_level(bytes, limits, |sample_bytes| {
        let mut sample = Sample::new();
        read_sample_into(sample_bytes, &mut sample)?;
        samples.push(sample);
        Some(())
    })?;
    profile.sample = samples;
    Some(profile)
}

/// Where one sample's message lies in the input: `start..end`.
/// Offsets are 32-bit (inputs past 4 GiB take the ordinary parse), so the
/// view holds at most 8 bytes per sample, whose message takes at least 2.
pub(crate) type SampleRange = (u32, u32);

/// What checking every sample found: their summary when summed up, and
/// whether each has its fields in number order (always noted).
#[derive(Debug, Clone, Copy)]
pub(crate) struct CheckedSamples {
    pub summary: Option<SampleSummary>,
    pub fields_in_order: bool,
}

/// Like [`decode`], but leaves the samples in `bytes`: the profile without
/// samples, and where each sample is. Every sample has been checked, so
/// [`read_sample_into`] succeeds on each range. With `sum_up`, their
/// summary too.
pub(crate) fn split(
    bytes: &[u8],
    limits: &Limits,
    sum_up: bool,
) -> Option<(Profile, Vec<SampleRange>, CheckedSamples)> {
    if u32::try_from(bytes.len()).is_err() {
        return None;
    }
    let mut ranges = Vec::new();
    let base = bytes.as_ptr() as usize;
    let profile = read_top_level(bytes, limits, |sample_bytes| {
        let start = sample_bytes.as_ptr() as usize - base;
        // Below 4 GiB: checked above.
        ranges.push((start as u32, (start + sample_bytes.len()) as u32));
        Some(())
    })?;
    let summary = match sum_up {
        true => check_samples::<true>(bytes, &ranges)?,
        false => check_samples::<false>(bytes, &ranges)?,
    };
    let checked = CheckedSamples {
        summary: sum_up.then_some(summary),
        fields_in_order: summary.fields_in_order(),
    };
    Some((profile, ranges, checked))
}

/// [`check_sample`] on every range (on two threads for many): their
/// summary when `SUM_UP` (otherwise one of the fields' order alone), or
/// `None` if any fails.
fn check_samples<const SUM_UP: bool>(
    bytes: &[u8],
    ranges: &[SampleRange],
) -> Option<SampleSummary> {
    let check = |summary: &mut SampleSummary, &(start, end): &SampleRange| {
        check_sample::<SUM_UP>(&bytes[start as usize..end as usize], summary).is_some()
    };
    fold_in_halves(ranges, SampleSummary::default, check, SampleSummary::join)
}

/// Hands each sample's bytes to `on_sample`, reads locations with
/// [`read_location`], and parses every other top-level field with
/// rust-protobuf, in order: each run of such fields from the input itself.
/// (Parsing fields in runs is merging them in turn, which is what parsing
/// their concatenation does.)
fn read_top_level(
    bytes: &[u8],
    limits: &Limits,
    mut on_sample: impl FnMut(&[u8]) -> Option<()>,
) -> Option<Profile> {
    // Labels and lines sit two levels below the profile; a tighter nesting
    // limit is left to the ordinary parse to enforce.
    if limits.max_depth < LABEL_DEPTH {
        return None;
    }
    let end = bytes.len();
    let (mut pos, mut run_start) = (0, 0);
    let (mut profile, mut locations, mut lines) = (Profile::new(), Vec::new(), Vec::new());
    while pos < end {
        let start = pos;
        let (number, wire_type) = read_tag(bytes, &mut pos, end).ok()?;
        if (number == profile::SAMPLE || number == profile::LOCATION) && wire_type == wire::LEN {
            merge_run(&mut profile, &bytes[run_start..start], limits)?;
            let field_end = read_len(bytes, &mut pos, end).ok()?;
            let field = &bytes[pos..field_end];
            match number {
                profile::SAMPLE => on_sample(field)?,
                _ => locations.push(read_location(field, &mut lines)?),
            }
            pos = field_end;
            run_start = pos;
        } else {
            skip_value(bytes, &mut pos, end, wire_type)?;
        }
    }
    merge_run(&mut profile, &bytes[run_start..], limits)?;
    profile.location = locations;
    Some(profile)
}

/// Merges `run`, whole top-level fields, into `profile` with rust-protobuf.
fn merge_run(profile: &mut Profile, run: &[u8], limits: &Limits) -> Option<()> {
    if run.is_empty() {
        return Some(());
    }
    let mut stream = CodedInputStream::from_bytes(run);
    stream.set_recursion_limit(limits.max_depth + 2);
    profile.merge_from(&mut stream).ok()?;
    stream.check_eof().ok()
}

/// Appends one value (wire type varint) or a packed run (wire type LEN),
/// into a vector reserved at the run's exact count: the model's, which
/// keeps what it reserves ([`repeated_into`] is for reused buffers).
fn repeated<T>(
    bytes: &[u8],
    pos: &mut usize,
    wire_type: u8,
    out: &mut Vec<T>,
    from: impl Fn(u64) -> T + Copy,
) -> Option<()> {
    if wire_type == wire::LEN {
        let mut at = *pos;
        let run_end = read_len(bytes, &mut at, bytes.len()).ok()?;
        // The exact count, where rust-protobuf reserves one element per byte.
        out.reserve(varint_count(&bytes[at..run_end]));
    }
    repeated_into(bytes, pos, wire_type, out, from)
}

/// Appends one value (wire type varint) or a packed run (wire type LEN),
/// the run read a word at a time ([`packed_run`]).
pub(crate) fn repeated_into<T>(
    bytes: &[u8],
    pos: &mut usize,
    wire_type: u8,
    out: &mut Vec<T>,
    from: impl Fn(u64) -> T + Copy,
) -> Option<()> {
    let end = bytes.len();
    match wire_type {
        wire::VARINT => out.push(from(read_varint(bytes, pos, end).ok()?)),
        wire::LEN => {
            let run_end = read_len(bytes, pos, end).ok()?;
            packed_run(&bytes[*pos..run_end], out, from)?;
            *pos = run_end;
        }
        _ => return None,
    }
    Some(())
}

/// Decodes a packed run of varints: the loop most of a profile's bytes go
/// through ([`packed_run_each`] appending each value).
#[inline]
pub(crate) fn packed_run<T>(
    run: &[u8],
    out: &mut Vec<T>,
    from: impl Fn(u64) -> T + Copy,
) -> Option<()> {
    packed_run_each(run, |value| out.push(from(value)))
}

/// Calls `each` with every value of a packed run of varints. The run is
/// read 8 bytes at a time; the bytes without a continuation bit mark where
/// varints end, and every varint that ends in the word is cut out and its
/// 7-bit groups joined without a branch per byte. So neither varint lengths
/// (unpredictable) nor a chain of one load per varint limit the speed.
/// `None` for what `read_varint` rejects and for a run that ends inside a
/// varint.
#[inline]
pub(crate) fn packed_run_each(run: &[u8], mut each: impl FnMut(u64)) -> Option<()> {
    const STOP_BITS: u64 = 0x8080_8080_8080_8080;
    if run.last().is_some_and(|&b| b >= 0x80) {
        return None; // the last varint is cut off
    }
    let mut i = 0;
    while i < run.len() {
        let (word, mut stops) = match run.get(i..i + 8) {
            Some(eight) => {
                let word = u64::from_le_bytes(eight.try_into().expect("8 bytes"));
                (word, !word & STOP_BITS)
            }
            None => {
                // The run's last bytes, zero-padded; the padding's bytes are
                // not varint ends.
                let left = run.len() - i;
                let word = le_word(&run[i..]);
                (word, !word & STOP_BITS & (u64::MAX >> (64 - 8 * left)))
            }
        };
        if stops == 0 {
            // A varint of 9 or 10 bytes: read the rest of the run bytewise.
            return packed_run_bytewise(&run[i..], each);
        }
        let mut start_bit = 0;
        while stops != 0 {
            let end_bit = stops.trailing_zeros() + 1;
            let varint = (word >> start_bit) & (u64::MAX >> (64 - (end_bit - start_bit)));
            // Most ids and values fit in 4 bytes: half the work to join.
            let value = match u32::try_from(varint) {
                Ok(short) => u64::from(join_7bit_groups_4(short)),
                Err(_) => join_7bit_groups(varint),
            };
            each(value);
            start_bit = end_bit;
            stops &= stops - 1;
        }
        i += (start_bit / 8) as usize;
    }
    Some(())
}

/// The value of a varint of at most 4 bytes, given as a little-endian word.
#[inline]
fn join_7bit_groups_4(x: u32) -> u32 {
    (x & 0x7f) | (x >> 1 & 0x3f80) | (x >> 2 & 0x1f_c000) | (x >> 3 & 0xfe0_0000)
}

/// The value of a varint of at most 8 bytes, given as a little-endian word.
#[inline]
fn join_7bit_groups(x: u64) -> u64 {
    (x & 0x7f)
        | (x >> 1 & 0x3f80)
        | (x >> 2 & 0x1f_c000)
        | (x >> 3 & 0xfe0_0000)
        | (x >> 4 & 0x7_f000_0000)
        | (x >> 5 & 0x3f8_0000_0000)
        | (x >> 6 & 0x1_fc00_0000_0000)
        | (x >> 7 & 0xfe_0000_0000_0000)
}

fn packed_run_bytewise(run: &[u8], mut each: impl FnMut(u64)) -> Option<()> {
    let mut pos = 0;
    while pos < run.len() {
        each(read_varint(run, &mut pos, run.len()).ok()?);
    }
    Some(())
}

/// Reads one sample's message into `sample`, replacing what it held but
/// keeping its vectors' capacity. `None` when the fast path does not apply.
pub(crate) fn read_sample_into(bytes: &[u8], sample: &mut Sample) -> Option<()> {
    read_sample_fields(bytes, Fields::ALL, sample)
}

/// [`read_sample_into`] for the fields in `fields`; the others are left
/// empty and their bytes skipped. Only for samples [`check_sample`] accepts.
pub(crate) fn read_sample_fields(bytes: &[u8], fields: Fields, sample: &mut Sample) -> Option<()> {
    sample.location_id.clear();
    sample.value.clear();
    sample.label.clear();
    let (end, mut pos) = (bytes.len(), 0);
    while pos < end {
        let (number, wire_type) = read_tag(bytes, &mut pos, end).ok()?;
        if !fields.contains(number) {
            skip_value(bytes, &mut pos, end, wire_type)?;
            continue;
        }
        match (number, wire_type) {
            (sample::LOCATION_ID, w) => {
                repeated(bytes, &mut pos, w, &mut sample.location_id, |v| v)?
            }
            (sample::VALUE, w) => repeated(bytes, &mut pos, w, &mut sample.value, |v| v as i64)?,
            (sample::LABEL, wire::LEN) => {
                let label_end = read_len(bytes, &mut pos, end).ok()?;
                sample.label.push(label(&bytes[pos..label_end])?);
                pos = label_end;
            }
            _ => return None,
        }
    }
    Some(())
}

/// The occurrences of field `number` in the sample `bytes`, tags
/// included, when no other field lies between them (empty when there are
/// none). When the sample's fields are known to be `in_order`, the search
/// stops at the first field with a larger number.
pub(crate) fn field_run(bytes: &[u8], number: u32, in_order: bool) -> Option<&[u8]> {
    let (end, mut pos) = (bytes.len(), 0);
    let (mut run, mut closed) = (None, false);
    while pos < end {
        let start = pos;
        let (field, wire_type) = read_tag(bytes, &mut pos, end).ok()?;
        if in_order && field > number {
            break;
        }
        skip_value(bytes, &mut pos, end, wire_type)?;
        match (field == number, run) {
            (true, _) if closed => return None,
            (true, None) => run = Some((start, pos)),
            (true, Some((first, _))) => run = Some((first, pos)),
            (false, Some(_)) => closed = true,
            (false, None) => {}
        }
    }
    Some(run.map_or(&[][..], |(start, end)| &bytes[start..end]))
}

/// `Some` exactly when [`read_sample_into`] would read `bytes`, without
/// decoding the packed runs (most of the bytes): those only need to end at a
/// varint's end and hold no varint `read_varint` rejects. With `SUM_UP`,
/// location ids are decoded and values counted into `summary`.
pub(crate) fn check_sample<const SUM_UP: bool>(
    bytes: &[u8],
    summary: &mut SampleSummary,
) -> Option<()> {
    let (end, mut pos, mut values, mut previous) = (bytes.len(), 0, 0, 0);
    while pos < end {
        let (number, wire_type) = read_tag(bytes, &mut pos, end).ok()?;
        summary.note_field(previous, number);
        previous = number;
        match (number, wire_type) {
            (number @ (sample::LOCATION_ID | sample::VALUE), wire::VARINT) => {
                let value = read_varint(bytes, &mut pos, end).ok()?;
                if SUM_UP && number == sample::LOCATION_ID {
                    summary.note_id(value);
                }
                values += usize::from(number == sample::VALUE);
            }
            (sample::LOCATION_ID, wire::LEN) if SUM_UP => {
                let run_end = read_len(bytes, &mut pos, end).ok()?;
                packed_run_each(&bytes[pos..run_end], |id| summary.note_id(id))?;
                pos = run_end;
            }
            (number @ (sample::LOCATION_ID | sample::VALUE), wire::LEN) => {
                let run_end = read_len(bytes, &mut pos, end).ok()?;
                let run = &bytes[pos..run_end];
                packed_run_is_valid(run).then_some(())?;
                if SUM_UP && number == sample::VALUE {
                    values += varint_count(run);
                }
                pos = run_end;
            }
            (sample::LABEL, wire::LEN) => {
                let label_end = read_len(bytes, &mut pos, end).ok()?;
                label(&bytes[pos..label_end])?;
                pos = label_end;
            }
            _ => return None,
        }
    }
    if SUM_UP {
        summary.note_value_count(values);
    }
    Some(())
}

/// Whether [`packed_run`] reads `run`. Only a varint of 10 bytes can be one
/// `read_varint` rejects, so only runs with 9 continuation bytes in a row
/// are read in full; finding those takes one step per 8 bytes.
fn packed_run_is_valid(run: &[u8]) -> bool {
    if run.last().is_some_and(|&b| b >= 0x80) {
        return false;
    }
    if !wire::has_continuation_run::<9>(run) {
        return true;
    }
    let mut pos = 0;
    while pos < run.len() {
        if read_varint(run, &mut pos, run.len()).is_err() {
            return false;
        }
    }
    true
}

/// How many values (field 2) a sample that [`read_sample_into`] accepts has,
/// without decoding them.
pub(crate) fn value_count(bytes: &[u8]) -> usize {
    let (end, mut pos, mut count) = (bytes.len(), 0, 0);
    while pos < end {
        let Ok((number, wire_type)) = read_tag(bytes, &mut pos, end) else {
            break;
        };
        if wire_type == wire::VARINT {
            count += usize::from(number == sample::VALUE);
            if read_varint(bytes, &mut pos, end).is_err() {
                break;
            }
        } else {
            let Ok(value_end) = read_len(bytes, &mut pos, end) else {
                break;
            };
            if number == sample::VALUE {
                count += varint_count(&bytes[pos..value_end]);
            }
            pos = value_end;
        }
    }
    count
}

/// Appends `sample` encoded: in the form [`read_sample_fields`] reads when
/// [`write_sample`] can write it (then `true`), otherwise as rust-protobuf
/// writes it.
pub(crate) fn encode_sample(sample: &Sample, out: &mut Vec<u8>) -> bool {
    write_sample(sample, out).is_some() || {
        sample
            .write_to_vec(out)
            .expect("a sample is far below protobuf's 2 GiB message limit");
        false
    }
}

/// Appends `sample` encoded as rust-protobuf encodes it (fields in order,
/// lists packed, zero label fields left out), in the form
/// [`read_sample_fields`] reads; `None`, with nothing appended, when it
/// has unknown fields (rust-protobuf then writes it).
pub(crate) fn write_sample(sample: &Sample, out: &mut Vec<u8>) -> Option<()> {
    let plain = |fields: &protobuf::SpecialFields| fields.unknown_fields().iter().next().is_none();
    if !plain(&sample.special_fields) || !sample.label.iter().all(|l| plain(&l.special_fields)) {
        return None;
    }
    let locations = sample.location_id.iter().copied();
    write_packed(
        out,
        sample::LOCATION_ID,
        packed_payload(locations.clone()),
        locations,
    );
    let values = sample.value.iter().map(|&v| v as u64);
    write_packed(out, sample::VALUE, packed_payload(values.clone()), values);
    for l in &sample.label {
        let fields = [
            (label_field::KEY, l.key as u64),
            (label_field::STR, l.str as u64),
            (label_field::NUM, l.num as u64),
            (label_field::NUM_UNIT, l.num_unit as u64),
        ];
        let size = fields.iter().map(|&(n, v)| optional_size(n, v)).sum();
        write_len_prefix(out, sample::LABEL, size);
        for (number, value) in fields {
            write_optional(out, number, value);
        }
    }
    Some(())
}

fn label(bytes: &[u8]) -> Option<Label> {
    let mut label = Label::new();
    wire::varint_fields(bytes, |number, value| {
        let value = value as i64;
        match number {
            label_field::KEY => label.key = value,
            label_field::STR => label.str = value,
            label_field::NUM => label.num = value,
            label_field::NUM_UNIT => label.num_unit = value,
            _ => return None,
        }
        Some(())
    })?;
    Some(label)
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use protobuf::{Message, UnknownValueRef};
    use protoprof_model_pprof::perftools::profiles::Location;

    use super::*;
    use crate::binary::inflate::inflate_input;
    use crate::binary::wire::write_varint;

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

    /// Noting location ids while checking finds the bounds of every id,
    /// packed or not, of any length; without noting there are none. Whether
    /// each sample's fields are in number order is noted in both.
    #[test]
    fn split_notes_the_bounds_of_every_location_id() {
        use std::ops::RangeInclusive;
        let sample_of = |fields: &[(u64, u64)]| {
            let mut sample = Vec::new();
            for &(number, value) in fields {
                write_varint(&mut sample, number << 3);
                write_varint(&mut sample, value);
            }
            sample
        };
        let packed = Sample {
            location_id: vec![40, 3, u64::MAX - 1],
            ..Sample::new()
        };
        let packed = packed.write_to_bytes().unwrap();
        let no_id = RangeInclusive::new(u64::MAX, 0);
        let two = vec![sample_of(&[(1, 9)]), sample_of(&[(1, 0)])];
        let ordered_then_not = vec![sample_of(&[(1, 4)]), sample_of(&[(2, 5), (1, 6), (2, 7)])];
        for (samples, bounds, in_order) in [
            (vec![sample_of(&[(1, 7), (1, 900), (2, 1)])], 7..=900, true),
            (vec![sample_of(&[(2, 1), (1, 2)])], 2..=2, false),
            (vec![packed], 3..=u64::MAX - 1, true),
            (two, 0..=9, true),
            (vec![sample_of(&[(2, 5)])], no_id, true),
            (ordered_then_not, 4..=6, false),
        ] {
            let mut bytes = Vec::new();
            for sample in &samples {
                write_varint(&mut bytes, (2 << 3) | 2);
                write_varint(&mut bytes, sample.len() as u64);
                bytes.extend_from_slice(sample);
            }
            let (_, _, checked) = split(&bytes, &Limits::default(), true).expect("splits");
            assert_eq!(checked.summary.map(SampleSummary::id_range), Some(bounds));
            let unsummed = split(&bytes, &Limits::default(), false).unwrap().2;
            assert_eq!(unsummed.summary, None);
            // The fields' order is noted either way.
            assert_eq!(checked.fields_in_order, in_order);
            assert_eq!(unsummed.fields_in_order, in_order);
        }
    }

    /// Fields between samples and locations are parsed in runs: a scalar
    /// given twice keeps its last value, repeated fields and unknown fields
    /// keep their order across runs, as in one parse.
    #[test]
    fn fields_split_by_samples_and_locations_merge_as_one_parse() {
        let profile = synthetic();
        let mut bytes = profile.write_to_bytes().unwrap();
        let mut tail = Profile::new();
        tail.string_table = vec!["late".into()];
        tail.period = 77;
        tail.location.push(Location {
            id: 999,
            ..Default::default()
        });
        tail.mut_unknown_fields().add_varint(99, 1);
        bytes.extend_from_slice(&tail.write_to_bytes().unwrap());
        bytes.extend_from_slice(
            &profile.sample[0]
                .write_length_delimited_to_bytes()
                .map(|s| {
                    let mut field = Vec::new();
                    write_varint(&mut field, (u64::from(profile::SAMPLE) << 3) | 2);
                    field.extend_from_slice(&s);
                    field
                })
                .unwrap(),
        );
        let mut last = Profile::new();
        last.period = 78;
        last.mut_unknown_fields().add_varint(99, 2);
        bytes.extend_from_slice(&last.write_to_bytes().unwrap());
        let fast = decode(&bytes, &Limits::default()).expect("fast path taken");
        let expected = ordinary(&bytes).unwrap();
        assert_eq!(fast, expected);
        assert_eq!(fast.period, 78);
        assert_eq!(fast.string_table.last().map(String::as_str), Some("late"));
        assert_eq!(fast.location.last().map(|l| l.id), Some(999));
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

    /// A field's run is given only when nothing lies between its
    /// occurrences.
    #[test]
    fn field_run_is_the_fields_occurrences_side_by_side() {
        let label = |key| Label {
            key,
            ..Default::default()
        };
        let sample = Sample {
            location_id: vec![1, 300, 2],
            value: vec![7],
            label: vec![label(1), label(2)],
            ..Default::default()
        };
        let bytes = sample.write_to_bytes().unwrap();
        let locations = [0x0a, 4, 1, 0xac, 0x02, 2];
        let labels = [0x1a, 2, 0x08, 1, 0x1a, 2, 0x08, 2];
        // Fields in order: the search may stop early, and finds the same.
        for in_order in [false, true] {
            let run = |number| field_run(&bytes, number, in_order);
            assert_eq!(run(sample::LOCATION_ID), Some(&locations[..]));
            assert_eq!(run(sample::VALUE), Some(&[0x12, 1, 7][..]));
            assert_eq!(run(sample::LABEL), Some(&labels[..]));
            assert_eq!(run(9), Some(&[][..]), "absent");
        }
        // Labels on both sides of the values: not one run.
        let apart = [&labels[..4], &[0x12, 1, 7], &labels[4..]].concat();
        assert_eq!(field_run(&apart, sample::LABEL, false), None);
        let cut_off = [0x0a, 9];
        assert_eq!(field_run(&cut_off, sample::LOCATION_ID, false), None);
    }

    /// The word-at-a-time reader agrees with `read_varint` on every length
    /// from 1 to 10 bytes, at every position of a run, and rejects what it
    /// rejects.
    #[test]
    fn packed_runs_read_every_varint_length() {
        let values: Vec<u64> = (0..64)
            .map(|bits| (1u64 << bits) - 1)
            .chain((0..64).map(|bits| 1u64 << bits))
            .chain([u64::MAX, 300, 0, 127, 128, 16_383, 16_384])
            .collect();
        for skip in 0..values.len() {
            let mut run = Vec::new();
            for v in &values[skip..] {
                write_varint(&mut run, *v);
            }
            let mut out = Vec::new();
            packed_run(&run, &mut out, |v| v).expect("valid run");
            assert!(packed_run_is_valid(&run));
            assert_eq!(out, values[skip..]);
        }
        let mut out = Vec::new();
        assert!(packed_run(&[0x80], &mut out, |v| v).is_none(), "cut off");
        assert!(!packed_run_is_valid(&[0x80]));
        let mut too_long = vec![0xff; 9];
        too_long.push(0x02);
        assert!(
            packed_run(&too_long, &mut out, |v| v).is_none(),
            "past 64 bits"
        );
        let mut eleven = vec![0xff; 10];
        eleven.push(0x01);
        assert!(packed_run(&eleven, &mut out, |v| v).is_none(), "11 bytes");
        assert!(!packed_run_is_valid(&eleven));
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

    /// The corpus's pprof files. `PROTOPROF_CORPUS` is read as the README
    /// writes it: a relative path is taken from the workspace root (unit
    /// tests run in the crate's directory). Unset: none, except under CI.
    fn corpus_profiles() -> Vec<PathBuf> {
        let Some(corpus) = std::env::var_os("PROTOPROF_CORPUS") else {
            assert!(
                std::env::var("CI").map_or(true, |v| v != "true"),
                "PROTOPROF_CORPUS is not set; CI must point it at the shared corpus"
            );
            return Vec::new();
        };
        // Tests run in the package's root.
        let workspace_root = Path::new("../..");
        let corpus = workspace_root.join(corpus); // an absolute path replaces the root
        assert!(
            corpus.is_dir(),
            "PROTOPROF_CORPUS={} is not a directory",
            corpus.display()
        );
        let mut files = Vec::new();
        let mut dirs = vec![corpus.join("pprof")];
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

    #[test]
    fn writes_samples_as_rust_protobuf_does() {
        let label = |key, str, num, num_unit| Label {
            key,
            str,
            num,
            num_unit,
            ..Default::default()
        };
        let samples = [
            Sample::new(),
            Sample {
                location_id: vec![1, 200, 300_000, u64::MAX],
                value: vec![0, -1, i64::MIN, 7],
                label: vec![label(1, 2, 0, 0), label(3, 0, -5, 4), label(0, 0, 0, 0)],
                ..Default::default()
            },
            Sample {
                value: vec![1],
                ..Default::default()
            },
        ];
        for sample in &samples {
            let mut ours = Vec::new();
            write_sample(sample, &mut ours).unwrap();
            assert_eq!(ours, sample.write_to_bytes().unwrap(), "{sample:?}");
            let mut back = Sample::new();
            read_sample_into(&ours, &mut back).unwrap();
            assert_eq!(&back, sample);
        }
        let mut unknown = samples[2].clone();
        unknown.mut_unknown_fields().add_varint(9, 1);
        let mut out = Vec::new();
        assert!(write_sample(&unknown, &mut out).is_none() && out.is_empty());
    }
}
