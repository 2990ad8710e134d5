//! OTLP Profiles v1experimental whose samples stay in the input bytes.
//!
//! The v1experimental counterpart of [`crate::DevelopmentView`]: each
//! container's `Profile` is pprof's, extended, and a million samples
//! decoded into the model, then converted into a million pprof samples, is
//! most of what reading it cost (docs/PERFORMANCE.md, issue 14). An
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

use protobuf::reflect::MessageDescriptor;
use protobuf::{CodedInputStream, Message, MessageFull};
use protoprof_model_meta::ProfileSetSamples;
use protoprof_model_otlp::fields::opentelemetry::proto::profiles::v1experimental as fields;
use protoprof_model_otlp::opentelemetry::proto::collector::profiles::v1experimental::ExportProfilesServiceRequest;
use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental::{
    Location, Profile, ProfilesData, Sample,
};

use crate::binary::{decode_inflated, DecodeOptions, Decoded};
use crate::error::CodecError;
use crate::fast_read::FastRead;
use crate::fast_read::{read_each, read_message, read_with_protobuf, uint32, uint64, uint64s};
use crate::halves::all_in_halves;
use crate::limits::Limits;
use crate::nested_samples::{self, SampleRange, Step, Target};
use crate::pprof_samples;
use crate::wire::{read_tag, VARINT};

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

/// What the view leaves in the bytes: samples. Taken out to be read apart
/// from the rest, not left there: locations, one by one
/// (`read_locations`), and the packed runs of `location_indices`, into 32
/// bits each (`read_indices`).
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
}

#[derive(Debug, Clone)]
struct ByteSamples<'a> {
    bytes: Cow<'a, [u8]>,
    /// Per container, in message order.
    profiles: Vec<Vec<SampleRange>>,
    /// Per container, its `location_indices` when they were packed (then
    /// its profile's are empty): a quarter of their size as `i64`.
    indices: Vec<Vec<u32>>,
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
        let profiles = self
            .data
            .resource_profiles
            .iter_mut()
            .flat_map(|r| &mut r.scope_profiles)
            .flat_map(|s| &mut s.profiles)
            .filter_map(|c| c.profile.as_mut());
        for profile in profiles {
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
        let profiles = self
            .data
            .resource_profiles
            .iter_mut()
            .flat_map(|r| &mut r.scope_profiles)
            .flat_map(|s| &mut s.profiles)
            .filter_map(|c| c.profile.as_mut());
        for ((profile, ranges), indices) in profiles.zip(&b.profiles).zip(&b.indices) {
            profile.sample =
                read_each(&b.bytes, ranges, read_message).expect("samples the view has checked");
            if !indices.is_empty() {
                profile.location_indices = indices.iter().map(|&i| i64::from(i)).collect();
            }
        }
        self.data
    }
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

    fn index_table(&self, profile: usize) -> Option<&[u32]> {
        let indices = &self.byte_samples.as_ref()?.indices[profile];
        (!indices.is_empty()).then_some(&indices[..])
    }
}

impl FastRead for Sample {
    fn read_fast(&mut self, bytes: &[u8]) -> Option<()> {
        use fields::sample;
        let (end, mut pos) = (bytes.len(), 0);
        while pos < end {
            match read_tag(bytes, &mut pos, end).ok()? {
                (sample::LOCATION_INDEX, w) => {
                    uint64s(bytes, &mut pos, w, &mut self.location_index, |v| v)?
                }
                (sample::VALUE, w) => uint64s(bytes, &mut pos, w, &mut self.value, |v| v as i64)?,
                (sample::ATTRIBUTES, w) => {
                    uint64s(bytes, &mut pos, w, &mut self.attributes, |v| v)?
                }
                (sample::TIMESTAMPS_UNIX_NANO, w) => {
                    uint64s(bytes, &mut pos, w, &mut self.timestamps_unix_nano, |v| v)?
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
    let parsed_at = bytes.as_ptr();
    let descriptor = descriptor(export_request);
    let decoded = decode_inflated(&bytes, gzipped, &descriptor, options, |parsed, limits| {
        // Ranges index `bytes` only if it is `bytes` that is parsed, not a
        // copy with invalid UTF-8 repaired.
        if parsed.as_ptr() == parsed_at {
            if let Some((data, ranges)) = split(parsed, limits) {
                return Ok((data, Some(ranges)));
            }
        }
        parse(parsed, limits).map(|data| (data, None))
    })?;
    let (data, ranges) = decoded.message;
    let byte_samples = ranges.map(|(profiles, indices)| ByteSamples {
        bytes,
        profiles,
        indices,
    });
    let mut view = ExperimentalView::new(data, byte_samples);
    view.export_request = export_request;
    Ok(Decoded {
        message: view,
        warnings: decoded.warnings,
        warnings_suppressed: decoded.warnings_suppressed,
        gzipped,
    })
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
type Apart = (Vec<Vec<SampleRange>>, Vec<Vec<u32>>);

/// The message without samples, and where each profile's are, every one
/// checked; `None` to ask for the ordinary parse.
fn split(bytes: &[u8], limits: &Limits) -> Option<(ProfilesData, Apart)> {
    let split = nested_samples::split(bytes, &TARGETS)?;
    let mut data = parse(&split.rest, limits).ok()?;
    let [samples, locations, index_runs] = <[_; 3]>::try_from(split.found).ok()?;
    let mut profiles: Vec<&mut Profile> = data
        .resource_profiles
        .iter_mut()
        .flat_map(|r| &mut r.scope_profiles)
        .flat_map(|s| &mut s.profiles)
        .map(|c| c.profile.as_mut())
        .collect::<Option<_>>()?;
    let counts = [samples.len(), locations.len(), index_runs.len()];
    if counts.iter().any(|&n| n != profiles.len()) {
        return None;
    }
    let mut indices = Vec::with_capacity(profiles.len());
    for ((profile, ranges), runs) in profiles.iter_mut().zip(&locations).zip(&index_runs) {
        profile.location = read_locations(bytes, ranges)?;
        // Indices both packed and not: their order is not mirrored.
        if !runs.is_empty() && !profile.location_indices.is_empty() {
            return None;
        }
        indices.push(read_indices(bytes, runs)?);
    }
    let message = |&(start, end): &SampleRange| &bytes[start as usize..end as usize];
    let sample =
        |buffer: &mut Sample, range: &SampleRange| read_message(message(range), buffer).is_ok();
    let checked = samples
        .iter()
        .all(|ranges| all_in_halves(ranges, Sample::new, sample));
    checked.then_some((data, (samples, indices)))
}

/// Packed runs of `int64` location indices as 32-bit values; `None` when
/// one does not fit (negative, or past 32 bits: then the model holds them
/// as they are), or a run is malformed.
fn read_indices(bytes: &[u8], runs: &[SampleRange]) -> Option<Vec<u32>> {
    let size: usize = runs.iter().map(|&(s, e)| (e - s) as usize).sum();
    // At most a value a byte; most indices of a large table take 3 bytes.
    let mut out = Vec::with_capacity(size / 3);
    let past_32_bits = std::cell::Cell::new(false);
    for &(start, end) in runs {
        pprof_samples::packed_run(&bytes[start as usize..end as usize], &mut out, |v| {
            past_32_bits.set(past_32_bits.get() | (v > u64::from(u32::MAX)));
            v as u32
        })?;
    }
    out.shrink_to_fit();
    (!past_32_bits.get()).then_some(out)
}

/// A profile's locations, read one at a time so that each holds its lines
/// at their number (read with the rest, every location kept room for four).
fn read_locations(bytes: &[u8], ranges: &[SampleRange]) -> Option<Vec<Location>> {
    read_each(bytes, ranges, read_with_protobuf).ok()
}

/// The ordinary parse (of either type: an export request has the same
/// fields, with the same numbers).
fn parse(bytes: &[u8], limits: &Limits) -> protobuf::Result<ProfilesData> {
    let mut data = ProfilesData::new();
    let mut stream = CodedInputStream::from_bytes(bytes);
    stream.set_recursion_limit(limits.max_depth + 2);
    data.merge_from(&mut stream)?;
    stream.check_eof()?;
    Ok(data)
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
