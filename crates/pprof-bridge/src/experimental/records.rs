//! Converted samples, held as compact records until they become OTLP
//! `Sample`s or their encoding.
//!
//! An OTLP `Sample` message owns three vectors; building a million of them,
//! and freeing them after encoding, was most of what converting a large
//! profile cost beyond reading it (docs/performance-log.md, issue 7). Here each
//! sample is a fixed-size record of spans into shared arrays, and its values
//! stay in the pprof source, read again when the sample is written.

use protobuf::Message;
use protoprof_model_meta::wire::{
    len_field_size, optional_size, packed_payload, packed_size, write_len_prefix, write_optional,
    write_packed,
};
use protoprof_model_meta::Fields;
use protoprof_model_otlp::fields::opentelemetry::proto::profiles::v1experimental::{
    profile, profile_container, profiles_data, resource_profiles, sample, scope_profiles,
};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental as otlp;
use protoprof_model_pprof::fields::perftools::profiles::sample as pprof_sample;
use protoprof_model_pprof::perftools::profiles as pprof;
use protoprof_model_pprof::samples::ProfileSamples;

/// A run of entries of one of the shared arrays.
#[derive(Debug, Clone, Copy, Default)]
struct Span {
    start: u32,
    len: u32,
}

impl Span {
    fn of<T>(entries: &[T], start: usize) -> Span {
        // Protobuf messages are under 2 GiB, so counts fit in u32.
        Span {
            start: start as u32,
            len: (entries.len() - start) as u32,
        }
    }

    fn slice<T>(self, entries: &[T]) -> &[T] {
        &entries[self.start as usize..(self.start + self.len) as usize]
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct Record {
    attributes: Span,
    timestamps: Span,
    /// Position in `kept_labels` plus one; 0: the sample has no labels kept.
    kept_labels: u32,
}

/// Every converted sample but its values (which stay in the source).
#[derive(Debug, Default)]
pub(crate) struct SampleRecords {
    records: Vec<Record>,
    attributes: Vec<u64>,
    timestamps: Vec<u64>,
    /// Samples whose labels stay deprecated labels (rare).
    kept_labels: Vec<Vec<otlp::Label>>,
    /// Each sample's stack: a slice of `location_indices`.
    slots: Vec<(u64, u64)>,
    /// One link index per sample when every sample has a link, else empty.
    links: Vec<u64>,
}

const VALUES: Fields = Fields::only(&[pprof_sample::VALUE]);

impl SampleRecords {
    pub fn with_capacity(samples: usize) -> Self {
        SampleRecords {
            records: Vec::with_capacity(samples),
            ..Default::default()
        }
    }

    /// Adds the next sample: `write` appends its attributes and timestamps
    /// (and returns what it returns); `kept` are its deprecated labels.
    pub fn push<R>(
        &mut self,
        write: impl FnOnce(&mut Vec<u64>, &mut Vec<u64>) -> R,
        kept: impl FnOnce(&R) -> Option<Vec<otlp::Label>>,
    ) -> R {
        let (attributes, timestamps) = (self.attributes.len(), self.timestamps.len());
        let result = write(&mut self.attributes, &mut self.timestamps);
        let mut record = Record {
            attributes: Span::of(&self.attributes, attributes),
            timestamps: Span::of(&self.timestamps, timestamps),
            kept_labels: 0,
        };
        if let Some(labels) = kept(&result) {
            self.kept_labels.push(labels);
            record.kept_labels = self.kept_labels.len() as u32;
        }
        self.records.push(record);
        result
    }

    /// Replaces sample `i`'s attributes and timestamps with what `write`
    /// appends.
    pub fn rewrite<R>(
        &mut self,
        i: usize,
        write: impl FnOnce(&mut Vec<u64>, &mut Vec<u64>) -> R,
    ) -> R {
        let (attributes, timestamps) = (self.attributes.len(), self.timestamps.len());
        let result = write(&mut self.attributes, &mut self.timestamps);
        let record = &mut self.records[i];
        record.attributes = Span::of(&self.attributes, attributes);
        record.timestamps = Span::of(&self.timestamps, timestamps);
        result
    }

    pub fn set_slots(&mut self, slots: Vec<(u64, u64)>) {
        self.slots = slots;
    }

    pub fn set_links(&mut self, links: Vec<u64>) {
        self.links = links;
    }

    fn kept(&self, record: Record) -> &[otlp::Label] {
        match record.kept_labels {
            0 => &[],
            n => &self.kept_labels[n as usize - 1],
        }
    }

    fn slot(&self, i: usize) -> (u64, u64) {
        self.slots.get(i).copied().unwrap_or_default()
    }

    fn link(&self, i: usize) -> u64 {
        self.links.get(i).copied().unwrap_or_default()
    }

    /// The OTLP `Sample` messages.
    pub fn into_model<S: ProfileSamples>(self, source: &S) -> Vec<otlp::Sample> {
        let mut buffer = pprof::Sample::new();
        (0..self.records.len())
            .map(|i| {
                let record = self.records[i];
                let (start, length) = self.slot(i);
                otlp::Sample {
                    value: source.sample_fields(i, VALUES, &mut buffer).value.clone(),
                    label: self.kept(record).to_vec(),
                    locations_start_index: start,
                    locations_length: length,
                    attributes: record.attributes.slice(&self.attributes).to_vec(),
                    link: self.link(i),
                    timestamps_unix_nano: record.timestamps.slice(&self.timestamps).to_vec(),
                    ..Default::default()
                }
            })
            .collect()
    }

    /// Every sample as an occurrence of `Profile.sample` (field 2), in the
    /// bytes rust-protobuf writes for [`Self::into_model`]'s messages: fields
    /// in number order, proto3 zeros left out, repeated scalars packed.
    pub fn encode<S: ProfileSamples>(&self, source: &S) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.records.len() * 32);
        let (mut buffer, mut labels) = (pprof::Sample::new(), Vec::new());
        for (i, &record) in self.records.iter().enumerate() {
            let values = &source.sample_fields(i, VALUES, &mut buffer).value;
            let attributes = record.attributes.slice(&self.attributes);
            let timestamps = record.timestamps.slice(&self.timestamps);
            labels.clear();
            for label in self.kept(record) {
                labels.push(label.write_to_bytes().expect("a label encodes"));
            }
            let (start, length) = self.slot(i);
            let link = self.link(i);
            let values = values.iter().map(|&v| v as u64);
            // Each packed run's payload size, computed once for the sample's
            // size and its own length prefix.
            let (values_len, attributes_len, timestamps_len) = (
                packed_payload(values.clone()),
                packed_payload(attributes.iter().copied()),
                packed_payload(timestamps.iter().copied()),
            );
            let size = packed_size(sample::VALUE, values_len)
                + labels
                    .iter()
                    .map(|l| len_field_size(sample::LABEL, l.len()))
                    .sum::<usize>()
                + optional_size(sample::LOCATIONS_START_INDEX, start)
                + optional_size(sample::LOCATIONS_LENGTH, length)
                + packed_size(sample::ATTRIBUTES, attributes_len)
                + optional_size(sample::LINK, link)
                + packed_size(sample::TIMESTAMPS_UNIX_NANO, timestamps_len);
            write_len_prefix(&mut out, profile::SAMPLE, size);
            write_packed(&mut out, sample::VALUE, values_len, values);
            for label in &labels {
                write_len_prefix(&mut out, sample::LABEL, label.len());
                out.extend_from_slice(label);
            }
            write_optional(&mut out, sample::LOCATIONS_START_INDEX, start);
            write_optional(&mut out, sample::LOCATIONS_LENGTH, length);
            write_packed(
                &mut out,
                sample::ATTRIBUTES,
                attributes_len,
                attributes.iter().copied(),
            );
            write_optional(&mut out, sample::LINK, link);
            write_packed(
                &mut out,
                sample::TIMESTAMPS_UNIX_NANO,
                timestamps_len,
                timestamps.iter().copied(),
            );
        }
        out
    }
}

/// The encoding of `message`, whose field that leads to the samples is
/// empty, in the two parts the samples go between: `head` takes out the
/// fields numbered before that field, as a message of its own; the rest of
/// `message` is the tail. rust-protobuf writes fields in number order.
pub(crate) fn split_encoding<M: Message>(
    mut message: M,
    head: impl FnOnce(&mut M) -> M,
) -> (Vec<u8>, Vec<u8>) {
    let head = head(&mut message).write_to_bytes().expect("OTLP encodes");
    (head, message.write_to_bytes().expect("OTLP encodes"))
}

/// pprof converted to v1experimental `ProfilesData`, ready to be written:
/// [`Self::write_to`] writes the bytes rust-protobuf writes for
/// `pprof_to_otlp`'s message, from three parts: everything before the
/// profile's samples, the samples, everything after them. None is a copy
/// of another, and the whole encoding is never held.
pub struct OtlpEncoding {
    head: Vec<u8>,
    samples: Vec<u8>,
    tail: Vec<u8>,
}

impl OtlpEncoding {
    /// `data` — one resource, scope and container, as
    /// [`crate::Envelope::wrap`] builds it, its profile's samples left out
    /// — with `samples` (from [`SampleRecords::encode`]) as the profile's
    /// samples. Each enclosing message is written by rust-protobuf in two
    /// parts, the fields numbered before and after the one that leads to
    /// the samples.
    pub(crate) fn new(mut data: otlp::ProfilesData, samples: Vec<u8>) -> Self {
        let bytes = |m: &dyn protobuf::MessageDyn| m.write_to_bytes_dyn().expect("OTLP encodes");
        let mut resource = data.resource_profiles.pop().expect("one resource");
        let mut scope = resource.scope_profiles.pop().expect("one scope");
        let mut container = scope.profiles.pop().expect("one container");
        let profile = container.profile.take().unwrap_or_default();
        // ResourceProfiles and ScopeProfiles: field 1, the child (2), field 3.
        let (resource_head, resource_tail) = split_encoding(resource, |r| otlp::ResourceProfiles {
            resource: std::mem::take(&mut r.resource),
            ..Default::default()
        });
        let (scope_head, scope_tail) = split_encoding(scope, |s| otlp::ScopeProfiles {
            scope: std::mem::take(&mut s.scope),
            ..Default::default()
        });
        // ProfileContainer: fields 1 to 7, then the profile (8, the last).
        let container_head = bytes(&container);
        // Profile: sample_type (1), the samples (2), the rest.
        let (profile_head, mut tail) = split_encoding(profile, |p| otlp::Profile {
            sample_type: std::mem::take(&mut p.sample_type),
            ..Default::default()
        });
        let profile_len = profile_head.len() + samples.len() + tail.len();
        let container_len =
            container_head.len() + len_field_size(profile_container::PROFILE, profile_len);
        let scope_len = scope_head.len()
            + len_field_size(scope_profiles::PROFILES, container_len)
            + scope_tail.len();
        let resource_len = resource_head.len()
            + len_field_size(resource_profiles::SCOPE_PROFILES, scope_len)
            + resource_tail.len();
        let mut head = Vec::new();
        write_len_prefix(&mut head, profiles_data::RESOURCE_PROFILES, resource_len);
        head.extend_from_slice(&resource_head);
        write_len_prefix(&mut head, resource_profiles::SCOPE_PROFILES, scope_len);
        head.extend_from_slice(&scope_head);
        write_len_prefix(&mut head, scope_profiles::PROFILES, container_len);
        head.extend_from_slice(&container_head);
        write_len_prefix(&mut head, profile_container::PROFILE, profile_len);
        head.extend_from_slice(&profile_head);
        // After the samples: the rest of the profile, then of the scope and
        // the resource (their fields numbered after the child).
        tail.extend_from_slice(&scope_tail);
        tail.extend_from_slice(&resource_tail);
        OtlpEncoding {
            head,
            samples,
            tail,
        }
    }

    /// The size of the encoding in bytes.
    pub fn len(&self) -> usize {
        self.head.len() + self.samples.len() + self.tail.len()
    }

    /// Whether the encoding is empty (it never is: it has a resource).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes the encoding to `out`.
    pub fn write_to<W: std::io::Write + ?Sized>(&self, out: &mut W) -> std::io::Result<()> {
        out.write_all(&self.head)?;
        out.write_all(&self.samples)?;
        out.write_all(&self.tail)
    }

    /// The whole encoding in one buffer.
    pub fn to_bytes(&self) -> Vec<u8> {
        [&self.head[..], &self.samples, &self.tail].concat()
    }
}
