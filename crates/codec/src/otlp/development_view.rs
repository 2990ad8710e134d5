//! OTLP v1development profiles whose samples and stacks stay in the input
//! bytes.
//!
//! The OTLP counterpart of [`crate::PprofView`]: a million samples and
//! their stacks decoded into the model, then converted into a million pprof
//! samples, is most of what reading OTLP costs (docs/performance-log.md, issue
//! 14). A [`DevelopmentView`] decodes everything else — the dictionary but
//! its stack table, resources, scopes, profile headers — into the ordinary
//! model and keeps where each profile's samples and each stack lie;
//! [`ProfileSetSamples::sample`] and [`TableSource::entry`] decode one into
//! a buffer the caller reuses.
//!
//! Samples and stacks are decoded by rust-protobuf, as the whole model
//! would be, and each is decoded once when the view is built, so reading
//! one later cannot fail. When the input does not split cleanly (see `nested_samples`)
//! or needed repair, the view holds the ordinary decoded model instead.

use std::borrow::Cow;
use std::ops::RangeInclusive;

use protobuf::reflect::MessageDescriptor;
use protobuf::MessageFull;
use protoprof_model_meta::threads::both;
use protoprof_model_meta::{ProfileSetSamples, TableSource};
use protoprof_model_otlp::fields::opentelemetry::proto::profiles::v1development as fields;
use protoprof_model_otlp::opentelemetry::proto::collector::profiles::v1development::ExportProfilesServiceRequest;
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development::{
    Location, Profile, ProfilesData, ProfilesDictionary, Sample, Stack,
};

use crate::binary::message::{parse_message, DecodeOptions, Decoded};
use crate::binary::wire::{has_continuation_run, read_len, read_tag, read_varint, LEN, VARINT};
use crate::error::CodecError;
use crate::form::Form;
use crate::limits::Limits;
use crate::otlp::fast_read::{
    fixed64s, int32, int32s, int64s, read_each, read_message, read_with_protobuf, FastRead,
};
use crate::otlp::nested_samples::{self, decode_split, SampleRange, Step, Target};
use crate::pprof::halves::{all_in_halves, fold_in_halves, PARALLEL_ITEMS};
use crate::pprof::samples::packed_run_each;

/// From `ProfilesData` down to the profiles.
const PROFILES: [Step; 3] = [
    Step {
        number: fields::profiles_data::RESOURCE_PROFILES,
        singular: false,
    },
    Step {
        number: fields::resource_profiles::SCOPE_PROFILES,
        singular: false,
    },
    Step {
        number: fields::scope_profiles::PROFILES,
        singular: false,
    },
];

/// From `ProfilesData` down to the dictionary.
const DICTIONARY: [Step; 1] = [Step {
    number: fields::profiles_data::DICTIONARY,
    singular: true,
}];

/// What the view leaves in the bytes: samples, and the stack table.
const TARGETS: [Target; 3] = [
    Target {
        path: &PROFILES,
        field: fields::profile::SAMPLES,
    },
    Target {
        path: &DICTIONARY,
        field: fields::profiles_dictionary::STACK_TABLE,
    },
    // Taken out to be read one by one (`read_locations`), not left in the
    // bytes.
    Target {
        path: &DICTIONARY,
        field: fields::profiles_dictionary::LOCATION_TABLE,
    },
];

/// OTLP v1development `ProfilesData`, its samples possibly still in the
/// input bytes.
#[derive(Debug, Clone)]
pub struct DevelopmentView<'a> {
    /// Without samples when `byte_samples` is `Some`.
    data: ProfilesData,
    byte_samples: Option<ByteSamples<'a>>,
    /// Each profile's (resource, scope, profile) positions, in message order.
    located: Vec<[usize; 3]>,
    /// The input was an `ExportProfilesServiceRequest` (the same wire form).
    export_request: bool,
    /// What the input was: binary, or OTLP/JSON read through its bytes.
    pub(crate) form: Form,
}

#[derive(Debug, Clone)]
struct ByteSamples<'a> {
    bytes: Cow<'a, [u8]>,
    /// Per profile, in message order.
    profiles: Vec<Vec<SampleRange>>,
    /// The dictionary's stack table.
    stacks: Vec<SampleRange>,
    /// What `stack_range` found, when the view was asked to sum up
    /// ([`DecodeOptions::sample_summary`]).
    stack_range: Option<StackRange>,
}

impl DevelopmentView<'static> {
    /// A view of decoded `data`, whose samples are read from the model
    /// (e.g. data repaired or built after decoding).
    pub fn from_data(data: ProfilesData) -> DevelopmentView<'static> {
        DevelopmentView::new(data, None)
    }
}

impl DevelopmentView<'_> {
    fn new(data: ProfilesData, byte_samples: Option<ByteSamples<'_>>) -> DevelopmentView<'_> {
        let mut located = Vec::new();
        for (r, resource) in data.resource_profiles.iter().enumerate() {
            for (s, scope) in resource.scope_profiles.iter().enumerate() {
                located.extend((0..scope.profiles.len()).map(|p| [r, s, p]));
            }
        }
        DevelopmentView {
            data,
            byte_samples,
            located,
            export_request: false,
            form: Form::Binary,
        }
    }

    /// Profile `n` in message order.
    fn profile_at(&self, n: usize) -> &Profile {
        let [r, s, p] = self.located[n];
        &self.data.resource_profiles[r].scope_profiles[s].profiles[p]
    }

    /// Everything but the samples and stacks when they are held as bytes
    /// (then every profile's `samples` and the dictionary's `stack_table`
    /// are empty).
    pub fn data(&self) -> &ProfilesData {
        &self.data
    }

    /// The form the input was in (OTLP/JSON is read through protobuf bytes).
    pub fn form(&self) -> Form {
        self.form
    }

    /// The type the input was read as: `ProfilesData`, or the collector's
    /// export request.
    pub fn descriptor(&self) -> MessageDescriptor {
        descriptor(self.export_request)
    }

    /// The whole message as the type it was read as, samples and stacks
    /// decoded.
    pub fn into_message(self) -> Box<dyn protobuf::MessageDyn> {
        if !self.export_request {
            return Box::new(self.into_data());
        }
        let data = self.into_data();
        Box::new(ExportProfilesServiceRequest {
            resource_profiles: data.resource_profiles,
            dictionary: data.dictionary,
            special_fields: data.special_fields,
        })
    }

    /// Whether the input was the collector's `ExportProfilesServiceRequest`
    /// (read as `ProfilesData`: the two have the same fields).
    pub fn is_export_request(&self) -> bool {
        self.export_request
    }

    /// The size of the samples and stacks held as bytes (0 when decoded).
    pub fn byte_size(&self) -> usize {
        let Some(b) = &self.byte_samples else {
            return 0;
        };
        let size = |ranges: &[SampleRange]| -> usize {
            ranges
                .iter()
                .map(|&(start, end)| (end - start) as usize)
                .sum()
        };
        b.profiles.iter().map(|p| size(p)).sum::<usize>() + size(&b.stacks)
    }

    /// Frees the dictionary's tables but its stack table, for a reader
    /// that has converted what it needs of them and from now on reads only
    /// samples and stacks (`top` on OTLP input: the bridge's
    /// `development_as_pprof`, then the samples converted as read). After
    /// it, [`Self::data`]'s dictionary holds the stack table alone.
    pub fn shed_dictionary(&mut self) {
        if let Some(dictionary) = self.data.dictionary.as_mut() {
            let stack_table = std::mem::take(&mut dictionary.stack_table);
            *dictionary = ProfilesDictionary {
                stack_table,
                ..Default::default()
            };
        }
    }

    /// Whether the samples are still in the input bytes.
    pub fn samples_are_bytes(&self) -> bool {
        self.byte_samples.is_some()
    }

    /// The whole message, samples and stacks decoded.
    pub fn into_data(mut self) -> ProfilesData {
        let Some(b) = self.byte_samples.take() else {
            return self.data;
        };
        let profiles = self
            .data
            .resource_profiles
            .iter_mut()
            .flat_map(|r| &mut r.scope_profiles)
            .flat_map(|s| &mut s.profiles);
        for (profile, ranges) in profiles.zip(&b.profiles) {
            profile.samples = b.decode_all(ranges);
        }
        if !b.stacks.is_empty() {
            self.data.dictionary.mut_or_insert_default().stack_table = b.decode_all(&b.stacks);
        }
        self.data
    }
}

impl ByteSamples<'_> {
    fn message_bytes(&self, (start, end): SampleRange) -> &[u8] {
        &self.bytes[start as usize..end as usize]
    }

    fn decode_all<M: FastRead + Clone>(&self, ranges: &[SampleRange]) -> Vec<M> {
        read_each(&self.bytes, ranges, read_message).expect("messages the view has checked")
    }
}

impl FastRead for Stack {
    fn read_fast(&mut self, bytes: &[u8]) -> Option<()> {
        let (end, mut pos) = (bytes.len(), 0);
        while pos < end {
            match read_tag(bytes, &mut pos, end).ok()? {
                (fields::stack::LOCATION_INDICES, w) => {
                    int32s(bytes, &mut pos, w, &mut self.location_indices)?
                }
                _ => return None,
            }
        }
        Some(())
    }
}

/// Whether the fast reader takes `bytes` as a stack, without decoding it:
/// only field 1, and no varint longer than 4 bytes (below 2^28, so always
/// an `int32`), every one ending inside its field. Stacks are most of a
/// message of distinct stacks, so the view checks them this way when it is
/// built, and decodes them only when they are read.
fn plain_stack(bytes: &[u8]) -> bool {
    let (end, mut pos) = (bytes.len(), 0);
    while pos < end {
        let Ok((number, wire_type)) = read_tag(bytes, &mut pos, end) else {
            return false;
        };
        if number != fields::stack::LOCATION_INDICES {
            return false;
        }
        if wire_type == VARINT {
            // One varint of at most 4 bytes.
            match bytes[pos..end].iter().position(|&b| b < 0x80) {
                Some(last) if last < 4 => pos += last + 1,
                _ => return false,
            }
            continue;
        }
        if wire_type != LEN {
            return false;
        }
        let Ok(run_end) = read_len(bytes, &mut pos, end) else {
            return false;
        };
        let run = &bytes[pos..run_end];
        if has_continuation_run::<4>(run) || run.last().is_some_and(|&b| b >= 0x80) {
            return false;
        }
        pos = run_end;
    }
    true
}

impl FastRead for Sample {
    fn read_fast(&mut self, bytes: &[u8]) -> Option<()> {
        use fields::sample;
        let (end, mut pos) = (bytes.len(), 0);
        while pos < end {
            match read_tag(bytes, &mut pos, end).ok()? {
                (sample::STACK_INDEX, VARINT) => self.stack_index = int32(bytes, &mut pos, end)?,
                (sample::LINK_INDEX, VARINT) => self.link_index = int32(bytes, &mut pos, end)?,
                (sample::ATTRIBUTE_INDICES, w) => {
                    int32s(bytes, &mut pos, w, &mut self.attribute_indices)?
                }
                (sample::VALUES, w) => int64s(bytes, &mut pos, w, &mut self.values)?,
                (sample::TIMESTAMPS_UNIX_NANO, w) => {
                    fixed64s(bytes, &mut pos, w, &mut self.timestamps_unix_nano)?
                }
                _ => return None,
            }
        }
        Some(())
    }
}

impl TableSource for DevelopmentView<'_> {
    type Entry = Stack;

    fn entry_count(&self) -> usize {
        match &self.byte_samples {
            Some(b) => b.stacks.len(),
            None => self.data.dictionary.stack_table.len(),
        }
    }

    /// # Panics
    /// When `i` is out of range, as slice indexing does.
    fn entry<'s>(&'s self, i: usize, buffer: &'s mut Stack) -> &'s Stack {
        match &self.byte_samples {
            Some(b) => {
                read_message(b.message_bytes(b.stacks[i]), buffer)
                    .expect("a stack the view has checked");
                buffer
            }
            None => &self.data.dictionary.stack_table[i],
        }
    }

    /// The stack's bytes, when they hold only `location_indices` in
    /// varints of at most 4 bytes (`plain_stack`).
    fn entry_of_sole_field(&self, i: usize, number: u32) -> Option<&[u8]> {
        let b = self.byte_samples.as_ref()?;
        let bytes = b.message_bytes(*b.stacks.get(i)?);
        (number == fields::stack::LOCATION_INDICES && plain_stack(bytes)).then_some(bytes)
    }

    /// Scans every stack held as bytes (on two threads for many), decoding
    /// varints but making no message.
    fn sole_field_range(&self, number: u32) -> Option<RangeInclusive<u64>> {
        let b = self.byte_samples.as_ref()?;
        if let (fields::stack::LOCATION_INDICES, Some(found)) = (number, b.stack_range) {
            return found.map(|(low, high)| low..=high);
        }
        let widen = |bounds: &mut (u64, u64), &range: &SampleRange| {
            widen_to_sole_field(b.message_bytes(range), number, bounds)
        };
        let join = |a: (u64, u64), b: (u64, u64)| (a.0.min(b.0), a.1.max(b.1));
        let (low, high) = fold_in_halves(&b.stacks, || (u64::MAX, 0), widen, join)?;
        Some(low..=high)
    }
}

/// Widens `(low, high)` to hold each value of field `number` in `message`,
/// whose varints (one, or packed runs) it reads; `false` when the message
/// has another field, or the field another wire type.
fn widen_to_sole_field(message: &[u8], number: u32, (low, high): &mut (u64, u64)) -> bool {
    let (end, mut pos) = (message.len(), 0);
    let mut widen = |value: u64| {
        *low = (*low).min(value);
        *high = (*high).max(value);
    };
    while pos < end {
        match read_tag(message, &mut pos, end) {
            Ok((n, VARINT)) if n == number => match read_varint(message, &mut pos, end) {
                Ok(value) => widen(value),
                Err(_) => return false,
            },
            Ok((n, LEN)) if n == number => {
                let Ok(run_end) = read_len(message, &mut pos, end) else {
                    return false;
                };
                if packed_run_each(&message[pos..run_end], &mut widen).is_none() {
                    return false;
                }
                pos = run_end;
            }
            _ => return false,
        }
    }
    true
}

impl ProfileSetSamples for DevelopmentView<'_> {
    type Sample = Sample;

    fn profile_count(&self) -> usize {
        match &self.byte_samples {
            Some(b) => b.profiles.len(),
            None => self.located.len(),
        }
    }

    fn sample_count(&self, profile: usize) -> usize {
        match &self.byte_samples {
            Some(b) => b.profiles[profile].len(),
            None => self.profile_at(profile).samples.len(),
        }
    }

    /// # Panics
    /// When `profile` or `i` is out of range, as slice indexing does.
    fn sample<'s>(&'s self, profile: usize, i: usize, buffer: &'s mut Sample) -> &'s Sample {
        match &self.byte_samples {
            Some(b) => {
                read_message(b.message_bytes(b.profiles[profile][i]), buffer)
                    .expect("a sample the view has checked");
                buffer
            }
            None => &self.profile_at(profile).samples[i],
        }
    }
}

/// Decodes inflated v1development `ProfilesData`, or an export request
/// (`export_request`), into a view: the checks, limits, warnings and errors
/// of [`crate::decode`].
pub(crate) fn development_view_of_inflated<'a>(
    bytes: Cow<'a, [u8]>,
    gzipped: bool,
    export_request: bool,
    options: &DecodeOptions,
) -> Result<Decoded<DevelopmentView<'a>>, CodecError> {
    let sum_up = options.sample_summary;
    let split = |bytes: &[u8], limits: &Limits| split(bytes, limits, sum_up);
    let decoded = decode_split(&bytes, gzipped, &descriptor(export_request), options, split)?;
    Ok(decoded.map(|(data, apart)| {
        let byte_samples = apart.map(|((profiles, stacks), stack_range)| ByteSamples {
            bytes,
            profiles,
            stacks,
            stack_range,
        });
        let mut view = DevelopmentView::new(data, byte_samples);
        view.export_request = export_request;
        view
    }))
}

/// The type of a v1development input: `ProfilesData`, or the export request.
fn descriptor(export_request: bool) -> MessageDescriptor {
    match export_request {
        true => ExportProfilesServiceRequest::descriptor(),
        false => ProfilesData::descriptor(),
    }
}

/// The message without samples and stacks, and where those are, every one
/// checked, with the range of the stacks' location indices when `sum_up`
/// asks for it (see [`stack_range`]); `None` to ask for the ordinary parse.
fn split(bytes: &[u8], limits: &Limits, sum_up: bool) -> Option<(ProfilesData, Apart)> {
    let split = nested_samples::split(bytes, &TARGETS)?;
    let [profiles, dictionaries, location_tables] = <[_; 3]>::try_from(split.found).ok()?;
    // The rest parsed while the locations are read (a tenth of reading a
    // message of distinct stacks each).
    let locations = location_tables.first().filter(|l| !l.is_empty());
    let (data, locations) = both(
        locations.is_some_and(|l| l.len() >= PARALLEL_ITEMS),
        || parse_message::<ProfilesData>(&split.rest, limits).ok(),
        || locations.map(|l| read_locations(bytes, l)),
    );
    let mut data = data?;
    let profile_count: usize = data
        .resource_profiles
        .iter()
        .flat_map(|r| &r.scope_profiles)
        .map(|s| s.profiles.len())
        .sum();
    if profile_count != profiles.len() || dictionaries.len() > 1 {
        return None;
    }
    if let Some(locations) = locations {
        data.dictionary.mut_or_insert_default().location_table = locations?;
    }
    let stacks = dictionaries.into_iter().next().unwrap_or_default();
    let message = |&(start, end): &SampleRange| &bytes[start as usize..end as usize];
    let sample =
        |buffer: &mut Sample, range: &SampleRange| read_message(message(range), buffer).is_ok();
    let samples_checked =
        (profiles.iter()).all(|ranges| all_in_halves(ranges, Sample::new, sample));
    if !samples_checked {
        return None;
    }
    let stack_range = match sum_up {
        true => Some(stack_range(bytes, &stacks)?),
        false => {
            let stack = |buffer: &mut Stack, range: &SampleRange| {
                plain_stack(message(range)) || read_message(message(range), buffer).is_ok()
            };
            all_in_halves(&stacks, Stack::new, stack).then_some(())?;
            None
        }
    };
    Some((data, ((profiles, stacks), stack_range)))
}

/// The smallest and the largest location index of any stack, or `None`
/// when a stack holds another field (see [`widen_to_sole_field`]).
type StackRange = Option<(u64, u64)>;

/// Checks each stack at `stacks` of `bytes` as `split` does, decoding the
/// location indices of those that hold nothing else to find their range:
/// validation then checks the range, not each index. `None` when a stack
/// does not read.
fn stack_range(bytes: &[u8], stacks: &[SampleRange]) -> Option<StackRange> {
    let start = || (Stack::new(), Some((u64::MAX, 0)));
    let check = |(buffer, found): &mut (Stack, StackRange), &(start, end): &SampleRange| {
        let message = &bytes[start as usize..end as usize];
        let mut bounds = (u64::MAX, 0);
        if widen_to_sole_field(message, fields::stack::LOCATION_INDICES, &mut bounds)
            && bounds.1 <= i32::MAX as u64
        {
            // Only int32 varints, below 2^31: what the fast reader takes.
            *found = found.map(|(low, high)| (low.min(bounds.0), high.max(bounds.1)));
            return true;
        }
        *found = None;
        read_message(message, buffer).is_ok()
    };
    let join = |a: (Stack, StackRange), b: (Stack, StackRange)| {
        let both = a.1.zip(b.1);
        (a.0, both.map(|(a, b)| (a.0.min(b.0), a.1.max(b.1))))
    };
    fold_in_halves(stacks, start, check, join).map(|(_, found)| found)
}

/// The dictionary's locations, read one at a time so that each holds its
/// lines at their number: read with the rest of the dictionary, every
/// location kept room for four (a vector's first growth), 30 MB for the
/// 200,000 locations of a 100 MB profile.
fn read_locations(bytes: &[u8], ranges: &[SampleRange]) -> Option<Vec<Location>> {
    read_each(bytes, ranges, read_with_protobuf).ok()
}

/// Per profile its samples' ranges, and the stack table's.
type ByteRanges = (Vec<Vec<SampleRange>>, Vec<SampleRange>);

/// What `split` holds apart: where samples and stacks are, and the range
/// of the stacks' location indices when it was asked for.
type Apart = (ByteRanges, Option<StackRange>);

#[cfg(test)]
mod tests {
    use super::*;
    use protobuf::Message;

    /// The dictionary's locations come out of the split as rust-protobuf
    /// reads them, unknown fields and all, each line vector at its length.
    #[test]
    fn locations_are_read_as_the_model_reads_them_at_their_size() {
        use protoprof_model_otlp::opentelemetry::proto::profiles::v1development::{
            Line, ProfilesDictionary,
        };
        let location = |lines: usize| Location {
            address: 0x1000 + lines as u64,
            lines: (0..lines)
                .map(|i| Line {
                    function_index: i as i32,
                    line: 10,
                    ..Default::default()
                })
                .collect(),
            attribute_indices: vec![1],
            ..Default::default()
        };
        let mut data = ProfilesData {
            dictionary: protobuf::MessageField::some(ProfilesDictionary {
                location_table: (0..5).map(location).collect(),
                string_table: vec![String::new()],
                ..Default::default()
            }),
            ..Default::default()
        };
        let mut unknown = location(2);
        unknown
            .special_fields
            .mut_unknown_fields()
            .add_varint(99, 7);
        data.dictionary
            .mut_or_insert_default()
            .location_table
            .push(unknown);
        let bytes = data.write_to_bytes().unwrap();
        let (split_data, _) = split(&bytes, &Limits::default(), false).expect("splits");
        assert_eq!(
            split_data,
            parse_message::<ProfilesData>(&bytes, &Limits::default()).unwrap()
        );
        for location in &split_data.dictionary.location_table {
            assert_eq!(location.lines.capacity(), location.lines.len());
        }
    }

    /// What `plain_stack` accepts, the fast reader reads as rust-protobuf does.
    #[test]
    fn plain_stacks_read_as_rust_protobuf_reads_them() {
        let long = [
            0x0a, 0x0c, 1, 2, 3, 4, 5, 6, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01,
        ];
        let split = [0x0a, 0x0b, 1, 2, 3, 4, 5, 6, 7, 0x80, 0x80, 0x80, 0x01];
        let cases: [(&[u8], bool); 9] = [
            (&long, false), // 5 bytes across a word boundary
            (&split, true), // 4 bytes across a word boundary
            (&[], true),
            (&[0x0a, 0x03, 0x01, 0x80, 0x01], true),
            (&[0x08, 0xff, 0xff, 0xff, 0x7f], true),
            (&[0x0a, 0x05, 0x80, 0x80, 0x80, 0x80, 0x01], false), // 5 bytes
            (&[0x08, 0x80, 0x80, 0x80, 0x80, 0x08], false),
            (&[0x0a, 0x01, 0x80], false), // cut inside the run
            (&[0x10, 0x01], false),       // an unknown field
        ];
        for (bytes, plain) in cases {
            assert_eq!(plain_stack(bytes), plain, "{bytes:?}");
            if plain {
                let mut fast = Stack::new();
                fast.read_fast(bytes).expect("the fast reader takes it");
                let mut ordinary = Stack::new();
                read_with_protobuf(bytes, &mut ordinary).unwrap();
                assert_eq!(fast, ordinary);
            }
        }
    }

    /// Samples with timestamps and packed values (an eBPF profiler's) are
    /// read by the fast reader as rust-protobuf reads them; what it does
    /// not take falls back to rust-protobuf, which reports it.
    #[test]
    fn samples_with_timestamps_read_as_rust_protobuf_reads_them() {
        let sample = Sample {
            stack_index: 3,
            values: vec![1, -1, 300, i64::MAX],
            timestamps_unix_nano: vec![1_700_000_000_000_000_000, 0, u64::MAX, 5],
            attribute_indices: vec![1, 2],
            link_index: 4,
            ..Default::default()
        };
        let mut unpacked = sample.write_to_bytes().unwrap();
        // One timestamp and one value unpacked, after the packed runs.
        unpacked.extend([0x29, 9, 0, 0, 0, 0, 0, 0, 0, 0x20, 7]);
        for bytes in [sample.write_to_bytes().unwrap(), unpacked] {
            let mut fast = Sample::new();
            fast.read_fast(&bytes).expect("the fast reader takes it");
            let mut ordinary = Sample::new();
            read_with_protobuf(&bytes, &mut ordinary).unwrap();
            assert_eq!(fast, ordinary);
        }
        // Timestamps whose run is not a whole number of fixed64s.
        let cut = [0x2a, 0x03, 1, 2, 3];
        assert!(Sample::new().read_fast(&cut).is_none());
        assert!(read_message(&cut, &mut Sample::new()).is_err());
    }

    /// A stack's location indices widen the range whether packed, one
    /// varint at a time or both; another field, another wire type or a run
    /// cut short refuse it.
    #[test]
    fn the_sole_field_range_reads_every_value_or_refuses() {
        let cases: [(&[u8], StackRange); 7] = [
            (&[], Some((u64::MAX, 0))),
            (&[0x0a, 0x03, 0x05, 0x80, 0x01], Some((5, 128))),
            (&[0x08, 0x07, 0x0a, 0x01, 0x02], Some((2, 7))),
            (
                &[0x08, 0xff, 0xff, 0xff, 0xff, 0x0f],
                Some((u32::MAX.into(), u32::MAX.into())),
            ),
            (&[0x10, 0x01], None),       // another field
            (&[0x0d, 1, 0, 0, 0], None), // fixed32
            (&[0x0a, 0x02, 0x80], None), // cut short
        ];
        for (bytes, expected) in cases {
            let mut bounds = (u64::MAX, 0);
            let read = widen_to_sole_field(bytes, fields::stack::LOCATION_INDICES, &mut bounds);
            assert_eq!(read.then_some(bounds), expected, "{bytes:?}");
        }
        // Over a view's stacks: the range of them all; None when decoded.
        let stacks = [vec![3, 1], vec![], vec![9]];
        let mut data = ProfilesData::new();
        let dictionary = data.dictionary.mut_or_insert_default();
        dictionary.stack_table = (stacks.iter())
            .map(|indices| Stack {
                location_indices: indices.clone(),
                ..Default::default()
            })
            .collect();
        let bytes = data.write_to_bytes().unwrap();
        for sum_up in [false, true] {
            let (split_data, (ranges, stack_range)) =
                split(&bytes, &Limits::default(), sum_up).expect("splits");
            assert_eq!(stack_range, sum_up.then_some(Some((1, 9))));
            let view = DevelopmentView::new(
                split_data,
                Some(ByteSamples {
                    bytes: Cow::Borrowed(&bytes),
                    profiles: ranges.0,
                    stacks: ranges.1,
                    stack_range,
                }),
            );
            let range = view.sole_field_range(fields::stack::LOCATION_INDICES);
            assert_eq!(range, Some(1..=9));
            let decoded = DevelopmentView::new(view.into_data(), None);
            assert_eq!(
                decoded.sole_field_range(fields::stack::LOCATION_INDICES),
                None
            );
        }
        // Summed up, a stack with another field, or an index past 32 bits
        // (read as rust-protobuf reads it), leaves no range.
        let mut other = Stack::new();
        other.mut_unknown_fields().add_varint(9, 1);
        let long = Stack {
            location_indices: vec![-1],
            ..Default::default()
        };
        for odd in [other, long] {
            let mut data = data.clone();
            data.dictionary
                .mut_or_insert_default()
                .stack_table
                .push(odd);
            let bytes = data.write_to_bytes().unwrap();
            let (_, (_, stack_range)) = split(&bytes, &Limits::default(), true).expect("splits");
            assert_eq!(stack_range, Some(None));
        }
    }
}
