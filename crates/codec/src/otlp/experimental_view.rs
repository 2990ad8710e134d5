//! OTLP Profiles v1experimental whose samples stay in the input bytes.
//!
//! The v1experimental counterpart of [`crate::DevelopmentView`]: each
//! container's `Profile` is pprof's, extended, and a million samples
//! decoded into the model, then converted into a million pprof samples, is
//! most of what reading it cost (docs/performance-log.md, issue 14). An
//! [`ExperimentalView`] decodes everything else — resources, scopes,
//! containers, each profile's tables — into the ordinary model and keeps
//! where each profile's samples lie; [`ProfileSetSamples::sample`] decodes
//! one into a buffer the caller reuses.
//!
//! Samples are decoded as the whole model would decode them, and each is
//! decoded once when the view is built, so reading one later cannot fail.
//! When the input does not split cleanly (see `nested_samples`), a
//! container has no profile, or the input needed repair, the view holds the
//! ordinary decoded model instead.

use std::borrow::Cow;
use std::sync::OnceLock;

use protobuf::reflect::MessageDescriptor;
use protobuf::{Message, MessageFull};
use protoprof_model_meta::threads::both;
use protoprof_model_meta::{IndexTable, ProfileSetSamples, RunIndex};
use protoprof_model_otlp::fields::opentelemetry::proto::profiles::v1experimental as fields;
use protoprof_model_otlp::opentelemetry::proto::collector::profiles::v1experimental::ExportProfilesServiceRequest;
use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental::{
    Location, Profile, ProfilesData, Sample,
};

use crate::binary::message::{parse_message, DecodeOptions, Decoded};
use crate::binary::wire::{has_continuation_run, read_tag, VARINT};
use crate::error::CodecError;
use crate::form::Form;
use crate::limits::Limits;
use crate::otlp::fast_read::FastRead;
use crate::otlp::fast_read::{read_each, read_message, read_with_protobuf, uint32, uint64};
use crate::otlp::nested_samples::{self, decode_split, SampleRange, Step, Target};
use crate::pprof::halves::{fold_in_halves, PARALLEL_ITEMS};
use crate::pprof::samples::repeated_into;

/// From `ProfilesData` down to each container's profile.
const PROFILES: [Step; 4] = [
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
    Step {
        number: fields::profile_container::PROFILE,
        singular: true,
    },
];

/// What the view leaves in the bytes: samples, and the packed run of
/// `location_indices` (read through `IndexTable`). Taken out to be read
/// apart from the rest, not left there: locations, one by one
/// (`read_locations`).
const TARGETS: [Target; 3] = [
    Target {
        path: &PROFILES,
        field: fields::profile::SAMPLE,
    },
    Target {
        path: &PROFILES,
        field: fields::profile::LOCATION,
    },
    Target {
        path: &PROFILES,
        field: fields::profile::LOCATION_INDICES,
    },
];

/// OTLP v1experimental `ProfilesData` (or the collector's export request,
/// the same wire form), its samples possibly still in the input bytes.
#[derive(Debug, Clone)]
pub struct ExperimentalView<'a> {
    /// Without samples when `byte_samples` is `Some`.
    data: ProfilesData,
    byte_samples: Option<ByteSamples<'a>>,
    /// Each container's (resource, scope, container) positions, in message
    /// order.
    located: Vec<[usize; 3]>,
    export_request: bool,
    /// What the input was: binary, or OTLP/JSON read through its bytes.
    pub(crate) form: Form,
}

#[derive(Debug, Clone)]
struct ByteSamples<'a> {
    bytes: Cow<'a, [u8]>,
    /// Per container, in message order.
    profiles: Vec<Vec<SampleRange>>,
    /// Per container, its `location_indices` when they were one packed run
    /// (then its profile's are empty).
    indices: Vec<Option<Indices>>,
}

impl ExperimentalView<'_> {
    fn new(data: ProfilesData, byte_samples: Option<ByteSamples<'_>>) -> ExperimentalView<'_> {
        let mut located = Vec::new();
        for (r, resource) in data.resource_profiles.iter().enumerate() {
            for (s, scope) in resource.scope_profiles.iter().enumerate() {
                located.extend((0..scope.profiles.len()).map(|c| [r, s, c]));
            }
        }
        ExperimentalView {
            data,
            byte_samples,
            located,
            export_request: false,
            form: Form::Binary,
        }
    }

    /// Everything but the samples when they are held as bytes (then every
    /// profile's `sample` is empty).
    pub fn data(&self) -> &ProfilesData {
        &self.data
    }

    /// The profile of container `n` in message order (the default when it
    /// has none).
    fn profile_at(&self, n: usize) -> &Profile {
        let [r, s, c] = self.located[n];
        let container = &self.data.resource_profiles[r].scope_profiles[s].profiles[c];
        container
            .profile
            .as_ref()
            .unwrap_or(Profile::default_instance())
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

    /// Whether the input was the collector's `ExportProfilesServiceRequest`.
    pub fn is_export_request(&self) -> bool {
        self.export_request
    }

    /// Whether the samples are still in the input bytes.
    pub fn samples_are_bytes(&self) -> bool {
        self.byte_samples.is_some()
    }

    /// The size of the samples held as bytes (0 when decoded).
    pub fn byte_size(&self) -> usize {
        let Some(b) = &self.byte_samples else {
            return 0;
        };
        let ranges = b.profiles.iter().flatten();
        ranges.map(|&(start, end)| (end - start) as usize).sum()
    }

    /// Frees every profile's tables and header, for a reader that has
    /// converted what it needs of them and from now on reads only samples
    /// (`top` on OTLP input: the bridge's `experimental_as_pprof`, then the
    /// samples converted as read). Samples decoded in the model are kept.
    pub fn shed_tables(&mut self) {
        for profile in profiles_mut(&mut self.data) {
            let sample = std::mem::take(&mut profile.sample);
            *profile = Profile {
                sample,
                ..Default::default()
            };
        }
    }

    /// The whole message as the type it was read as, samples decoded.
    pub fn into_message(self) -> Box<dyn protobuf::MessageDyn> {
        if !self.export_request {
            return Box::new(self.into_data());
        }
        let data = self.into_data();
        Box::new(ExportProfilesServiceRequest {
            resource_profiles: data.resource_profiles,
            special_fields: data.special_fields,
        })
    }

    /// The whole message, samples decoded.
    pub fn into_data(mut self) -> ProfilesData {
        let Some(b) = self.byte_samples.take() else {
            return self.data;
        };
        let profiles = profiles_mut(&mut self.data);
        for ((profile, ranges), indices) in profiles.zip(&b.profiles).zip(&b.indices) {
            profile.sample =
                read_each(&b.bytes, ranges, read_message).expect("samples the view has checked");
            if let Some(indices) = indices {
                let table = indices.table(&b.bytes);
                let mut all = Vec::with_capacity(table.len());
                table.for_each(|_, i| all.push(i64::from(i)));
                profile.location_indices = all;
            }
        }
        self.data
    }
}

/// The profiles of `data`'s containers that have one, in message order.
fn profiles_mut(data: &mut ProfilesData) -> impl Iterator<Item = &mut Profile> {
    (data.resource_profiles.iter_mut())
        .flat_map(|r| &mut r.scope_profiles)
        .flat_map(|s| &mut s.profiles)
        .filter_map(|c| c.profile.as_mut())
}

impl ProfileSetSamples for ExperimentalView<'_> {
    type Sample = Sample;

    /// One per container, a container without a profile counting as one
    /// without samples.
    fn profile_count(&self) -> usize {
        self.located.len()
    }

    fn sample_count(&self, profile: usize) -> usize {
        match &self.byte_samples {
            Some(b) => b.profiles[profile].len(),
            None => self.profile_at(profile).sample.len(),
        }
    }

    /// # Panics
    /// When `profile` or `i` is out of range, as slice indexing does.
    fn sample<'s>(&'s self, profile: usize, i: usize, buffer: &'s mut Sample) -> &'s Sample {
        match &self.byte_samples {
            Some(b) => {
                let (start, end) = b.profiles[profile][i];
                read_message(&b.bytes[start as usize..end as usize], buffer)
                    .expect("a sample the view has checked");
                buffer
            }
            None => &self.profile_at(profile).sample[i],
        }
    }

    fn index_table(&self, profile: usize) -> Option<IndexTable<'_>> {
        let b = self.byte_samples.as_ref()?;
        Some(b.indices[profile].as_ref()?.table(&b.bytes))
    }
}

impl FastRead for Sample {
    fn read_fast(&mut self, bytes: &[u8]) -> Option<()> {
        use fields::sample;
        let (end, mut pos) = (bytes.len(), 0);
        while pos < end {
            match read_tag(bytes, &mut pos, end).ok()? {
                (sample::LOCATION_INDEX, w) => {
                    repeated_into(bytes, &mut pos, w, &mut self.location_index, |v| v)?
                }
                (sample::VALUE, w) => {
                    repeated_into(bytes, &mut pos, w, &mut self.value, |v| v as i64)?
                }
                (sample::ATTRIBUTES, w) => {
                    repeated_into(bytes, &mut pos, w, &mut self.attributes, |v| v)?
                }
                (sample::TIMESTAMPS_UNIX_NANO, w) => {
                    repeated_into(bytes, &mut pos, w, &mut self.timestamps_unix_nano, |v| v)?
                }
                (sample::LOCATIONS_START_INDEX, VARINT) => {
                    self.locations_start_index = uint64(bytes, &mut pos, end)?
                }
                (sample::LOCATIONS_LENGTH, VARINT) => {
                    self.locations_length = uint64(bytes, &mut pos, end)?
                }
                (sample::STACKTRACE_ID_INDEX, VARINT) => {
                    self.stacktrace_id_index = uint32(bytes, &mut pos, end)?
                }
                (sample::LINK, VARINT) => self.link = uint64(bytes, &mut pos, end)?,
                // Labels (deprecated) and unknown fields: rust-protobuf.
                _ => return None,
            }
        }
        Some(())
    }
}

/// Decodes inflated v1experimental `ProfilesData`, or an export request
/// (`export_request`), into a view: the checks, limits, warnings and errors
/// of [`crate::decode`].
pub(crate) fn experimental_view_of_inflated<'a>(
    bytes: Cow<'a, [u8]>,
    gzipped: bool,
    export_request: bool,
    options: &DecodeOptions,
) -> Result<Decoded<ExperimentalView<'a>>, CodecError> {
    let decoded = decode_split(&bytes, gzipped, &descriptor(export_request), options, split)?;
    Ok(decoded.map(|(data, apart)| {
        let byte_samples = apart.map(|(profiles, indices)| ByteSamples {
            bytes,
            profiles,
            indices,
        });
        let mut view = ExperimentalView::new(data, byte_samples);
        view.export_request = export_request;
        view
    }))
}

/// The type of a v1experimental input: `ProfilesData`, or the export
/// request.
fn descriptor(export_request: bool) -> MessageDescriptor {
    match export_request {
        true => ExportProfilesServiceRequest::descriptor(),
        false => ProfilesData::descriptor(),
    }
}

/// Per container, where its samples are, and its location indices.
type Apart = (Vec<Vec<SampleRange>>, Vec<Option<Indices>>);

/// A profile's `location_indices`, read from one packed run of the input.
#[derive(Debug, Clone)]
enum Indices {
    /// Left in the input: the run, and where its entries are, found when
    /// first asked for (`inspect` never asks; on distinct stacks the index
    /// took a sixth of its time).
    Packed {
        run: SampleRange,
        index: OnceLock<RunIndex>,
    },
    /// Decoded, for samples that read each entry at least
    /// [`READS_TO_DECODE`] times in all: then a slice decoded from the run
    /// on every read costs more time than the table saves memory.
    Decoded(Vec<u32>),
}

/// Reads of an entry, on average, from which a table is decoded. A profile
/// of pprof's synthetic shape shares each stack between 4.6 samples, and
/// `top` on it took 12% longer reading slices from the run; a profile of
/// distinct stacks reads each entry once.
const READS_TO_DECODE: u64 = 2;

impl Indices {
    /// The run `run` of `bytes`, which samples read `reads` entries of in
    /// all; `None` when an entry does not fit 32 bits (see
    /// `IndexTable::index`).
    fn of(bytes: &[u8], run: SampleRange, reads: u64) -> Option<Indices> {
        let run_bytes = &bytes[run.0 as usize..run.1 as usize];
        let len = IndexTable::count(run_bytes);
        if reads >= READS_TO_DECODE.saturating_mul(len as u64) {
            return Some(Indices::Decoded(IndexTable::decode(run_bytes)?));
        }
        // Varints of at most 4 bytes, the last one whole, are below 2^28:
        // indexing the run later cannot fail. Others are indexed now.
        let whole = run_bytes.last().is_none_or(|&b| b < 0x80);
        let index = match whole && !has_continuation_run::<4>(run_bytes) {
            true => OnceLock::new(),
            false => OnceLock::from(IndexTable::index(run_bytes)?),
        };
        Some(Indices::Packed { run, index })
    }

    fn table<'b>(&'b self, bytes: &'b [u8]) -> IndexTable<'b> {
        match self {
            Indices::Packed { run, index } => {
                let run = &bytes[run.0 as usize..run.1 as usize];
                let index = index.get_or_init(|| {
                    IndexTable::index(run).expect("a run of short varints indexes")
                });
                IndexTable::packed(run, index)
            }
            Indices::Decoded(values) => IndexTable::decoded(values),
        }
    }
}

/// The message without samples, and where each profile's are, every one
/// checked; `None` to ask for the ordinary parse.
fn split(bytes: &[u8], limits: &Limits) -> Option<(ProfilesData, Apart)> {
    let split = nested_samples::split(bytes, &TARGETS)?;
    let [samples, locations, index_runs] = <[_; 3]>::try_from(split.found).ok()?;
    // The rest parsed while the locations are read.
    let location_count: usize = locations.iter().map(Vec::len).sum();
    let (data, locations) = both(
        location_count >= PARALLEL_ITEMS,
        || parse_message::<ProfilesData>(&split.rest, limits).ok(),
        || {
            (locations.iter().map(|ranges| read_locations(bytes, ranges)))
                .collect::<Option<Vec<_>>>()
        },
    );
    let (mut data, locations) = (data?, locations?);
    let containers = data
        .resource_profiles
        .iter()
        .flat_map(|r| &r.scope_profiles);
    let container_count: usize = containers.map(|s| s.profiles.len()).sum();
    let mut profiles: Vec<&mut Profile> = profiles_mut(&mut data).collect();
    if profiles.len() != container_count {
        return None;
    }
    let counts = [samples.len(), locations.len(), index_runs.len()];
    if counts.iter().any(|&n| n != profiles.len()) {
        return None;
    }
    let slice_reads: Vec<u64> = samples
        .iter()
        .map(|ranges| check_samples(bytes, ranges))
        .collect::<Option<_>>()?;
    let mut indices = Vec::with_capacity(profiles.len());
    let tables = locations.into_iter().zip(&index_runs).zip(slice_reads);
    for (profile, ((location, runs), reads)) in profiles.iter_mut().zip(tables) {
        profile.location = location;
        // Indices in several runs, or packed and not, are left to the
        // ordinary parse: one run is what encoders write.
        indices.push(match runs[..] {
            [] => None,
            [run] if profile.location_indices.is_empty() => Some(Indices::of(bytes, run, reads)?),
            _ => return None,
        });
    }
    Some((data, (samples, indices)))
}

/// Reads each sample at `ranges` of `bytes` once, on two threads for many;
/// how many slice entries they read in all (`None` when one does not read).
fn check_samples(bytes: &[u8], ranges: &[SampleRange]) -> Option<u64> {
    let start = || (Sample::new(), 0u64);
    let check = |(sample, reads): &mut (Sample, u64), &(start, end): &SampleRange| {
        let read = read_message(&bytes[start as usize..end as usize], sample).is_ok();
        *reads = reads.saturating_add(sample.locations_length);
        read
    };
    let join =
        |first: (Sample, u64), second: (Sample, u64)| (first.0, first.1.saturating_add(second.1));
    fold_in_halves(ranges, start, check, join).map(|(_, reads)| reads)
}

/// A profile's locations, read one at a time so that each holds its lines
/// at their number (read with the rest, every location kept room for four).
fn read_locations(bytes: &[u8], ranges: &[SampleRange]) -> Option<Vec<Location>> {
    read_each(bytes, ranges, read_with_protobuf).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental::{
        Label, Line, ProfileContainer, ResourceProfiles, ScopeProfiles,
    };

    fn data_of(profiles: Vec<Option<Profile>>) -> ProfilesData {
        let containers = profiles.into_iter().map(|profile| ProfileContainer {
            profile: profile.into(),
            ..Default::default()
        });
        ProfilesData {
            resource_profiles: vec![ResourceProfiles {
                scope_profiles: vec![ScopeProfiles {
                    profiles: containers.collect(),
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    fn profile(samples: Vec<Sample>) -> Profile {
        Profile {
            sample: samples,
            location: vec![Location {
                id: 1,
                line: vec![Line::default()],
                ..Default::default()
            }],
            string_table: vec![String::new()],
            ..Default::default()
        }
    }

    /// Every field the fast reader reads, and what it leaves to
    /// rust-protobuf, come out of the view as the model reads them.
    #[test]
    fn samples_read_from_the_bytes_equal_the_models() {
        let mut unknown = Sample {
            value: vec![1],
            ..Default::default()
        };
        unknown
            .special_fields
            .mut_unknown_fields()
            .add_varint(99, 7);
        let samples = vec![
            Sample {
                location_index: vec![0, 1, 1 << 40],
                value: vec![-1, 5, i64::MAX],
                locations_start_index: 3,
                locations_length: 2,
                stacktrace_id_index: 9,
                attributes: vec![0, 300],
                link: 1,
                timestamps_unix_nano: vec![u64::MAX, 0],
                ..Default::default()
            },
            Sample::default(),
            Sample {
                label: vec![Label {
                    key: 1,
                    num: 2,
                    ..Default::default()
                }],
                ..Default::default()
            },
            unknown,
        ];
        let data = data_of(vec![Some(profile(samples)), Some(profile(vec![]))]);
        let bytes = data.write_to_bytes().unwrap();
        let (split_data, (ranges, indices)) = split(&bytes, &Limits::default()).expect("splits");
        let view = ExperimentalView::new(
            split_data,
            Some(ByteSamples {
                bytes: Cow::Borrowed(&bytes),
                profiles: ranges,
                indices,
            }),
        );
        assert_eq!(view.profile_count(), 2);
        assert_eq!(view.sample_count(1), 0);
        let mut buffer = Sample::new();
        for (i, expected) in data.resource_profiles[0].scope_profiles[0].profiles[0]
            .profile
            .sample
            .iter()
            .enumerate()
        {
            assert_eq!(view.sample(0, i, &mut buffer), expected);
        }
        assert_eq!(view.into_data(), data);
    }

    /// `location_indices` stay in the packed run when samples read each
    /// entry less than twice on average, and are decoded when more; either
    /// way they read as the model holds them. A packed run is indexed when
    /// first read, unless an entry takes 5 bytes or more (then at once,
    /// so that one past 32 bits sends the input to the ordinary parse).
    #[test]
    fn location_indices_are_read_from_the_run_or_decoded_as_samples_use_them() {
        let slice = Sample {
            locations_start_index: 1,
            locations_length: 3,
            ..Default::default()
        };
        let indices: Vec<i64> = (0..4).map(|i| i * 1000).collect();
        let with = |samples: usize| Profile {
            location_indices: indices.clone(),
            ..profile(vec![slice.clone(); samples])
        };
        // 3 entries read of 4 (packed), then 9 (decoded).
        let data = data_of(vec![Some(with(1)), Some(with(3))]);
        let bytes = data.write_to_bytes().unwrap();
        let (split_data, (ranges, apart)) = split(&bytes, &Limits::default()).expect("splits");
        assert!(matches!(&apart[0], Some(Indices::Packed { index, .. }) if index.get().is_none()));
        assert!(matches!(apart[1], Some(Indices::Decoded(_))));
        let view = ExperimentalView::new(
            split_data,
            Some(ByteSamples {
                bytes: Cow::Borrowed(&bytes),
                profiles: ranges,
                indices: apart,
            }),
        );
        for n in 0..2 {
            let table = view.index_table(n).expect("held apart");
            let mut read = Vec::new();
            assert!(table.read(1, 4, &mut read));
            assert_eq!(read, [1000, 2000, 3000]);
        }
        assert_eq!(view.into_data(), data);
        for (largest, indexed) in [(1 << 28, Some(true)), (1 << 32, None)] {
            let data = data_of(vec![Some(Profile {
                location_indices: vec![0, largest],
                ..profile(vec![slice.clone()])
            })]);
            let bytes = data.write_to_bytes().unwrap();
            let split = split(&bytes, &Limits::default());
            let index_made = split.map(|(_, (_, apart))| match &apart[0] {
                Some(Indices::Packed { index, .. }) => index.get().is_some(),
                _ => false,
            });
            assert_eq!(index_made, indexed, "{largest}");
        }
    }

    /// A `uint32` up to its largest value reads as rust-protobuf reads it;
    /// past it, rust-protobuf's error stands (the fast reader declines).
    #[test]
    fn a_stacktrace_id_index_past_32_bits_is_left_to_rust_protobuf() {
        let largest = [0x48, 0xff, 0xff, 0xff, 0xff, 0x0f];
        let mut fast = Sample::new();
        fast.read_fast(&largest).expect("the fast reader takes it");
        let mut ordinary = Sample::new();
        read_with_protobuf(&largest, &mut ordinary).unwrap();
        assert_eq!((fast.stacktrace_id_index, &fast), (u32::MAX, &ordinary));
        let past = [0x48, 0xff, 0xff, 0xff, 0xff, 0x1f];
        assert!(Sample::new().read_fast(&past).is_none());
        assert!(read_message(&past, &mut Sample::new()).is_err());
    }

    /// A container without a profile sends the input to the ordinary parse.
    #[test]
    fn a_container_without_a_profile_is_not_split() {
        let data = data_of(vec![Some(profile(vec![Sample::default()])), None]);
        let bytes = data.write_to_bytes().unwrap();
        assert!(split(&bytes, &Limits::default()).is_none());
    }
}
