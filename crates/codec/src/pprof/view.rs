//! A pprof profile whose samples stay in the input bytes.
//!
//! Building the model's `Sample`s — three vectors each, a million samples in
//! a 100 MB profile — and freeing them again is most of what decoding costs
//! (docs/performance-log.md, issue 7). Validation, conversion and analysis read
//! each sample once, in order, so they do not need them all at once. A
//! [`PprofView`] decodes everything else into the ordinary model and keeps,
//! for each sample, where its message lies. [`SampleSource::sample`] decodes one
//! sample into a buffer the caller reuses, so reading every sample allocates
//! nothing once the buffer has grown.
//!
//! Samples stay bytes only where the model's fast path would have read them
//! (see `samples`); otherwise — unknown fields in a sample, invalid
//! UTF-8 that had to be repaired, unusual encodings — the view holds the
//! ordinary decoded model, and reading it gives the same samples either way.

use std::borrow::Cow;

use protoprof_model_meta::{threads, Fields, SampleSource};
use protoprof_model_pprof::perftools::profiles::{Profile, Sample};

use crate::binary::message::{decode_pprof_parts, parse_message, DecodeOptions, Decoded};
use crate::binary::wire::{self, read_tag, skip_value};
use crate::error::CodecError;
use crate::pprof::halves::PARALLEL_ITEMS;
use crate::pprof::sample_summary::SampleSummary;
use crate::pprof::samples::{self, SampleRange};
use protoprof_model_pprof::fields::perftools::profiles::{profile, sample};

/// A decoded pprof profile, its samples possibly still in the input bytes.
#[derive(Debug, Clone)]
pub struct PprofView<'a> {
    profile: Cow<'a, Profile>,
    /// `None`: the samples are `profile.sample`.
    byte_samples: Option<ByteSamples<'a>>,
}

#[derive(Debug, Clone)]
struct ByteSamples<'a> {
    bytes: Cow<'a, [u8]>,
    ranges: Vec<SampleRange>,
    /// What the check found, when asked ([`DecodeOptions::sample_summary`]).
    summary: Option<SampleSummary>,
    /// Every sample has its fields in number order: a field's run ends
    /// where a larger number starts.
    fields_in_order: bool,
}

impl ByteSamples<'_> {
    fn sample_bytes(&self, start: u32, end: u32) -> &[u8] {
        &self.bytes[start as usize..end as usize]
    }

    /// Sample `i`'s bytes.
    fn sample_at(&self, i: usize) -> &[u8] {
        let (start, end) = self.ranges[i];
        self.sample_bytes(start, end)
    }

    /// Every sample, decoded (each was checked when it was stored).
    fn decode_all(&self) -> Vec<Sample> {
        let decode = |&(start, end): &SampleRange| {
            let mut sample = Sample::new();
            samples::read_sample_into(self.sample_bytes(start, end), &mut sample)
                .expect("a sample the view has checked");
            sample
        };
        self.ranges.iter().map(decode).collect()
    }
}

impl PprofView<'_> {
    /// A view that owns a decoded model (from a conversion, say).
    pub fn from_profile(profile: Profile) -> PprofView<'static> {
        PprofView {
            profile: Cow::Owned(profile),
            byte_samples: None,
        }
    }

    /// Whether the samples are still in the input bytes (then
    /// `profile().sample` is empty).
    pub fn samples_are_bytes(&self) -> bool {
        self.byte_samples.is_some()
    }

    /// The profile, without its samples when they are still bytes, to
    /// change what samples refer to (a location's lines, say:
    /// symbolization). Samples added here are not read while samples are
    /// bytes; ids samples use must stay as they are.
    pub fn header_mut(&mut self) -> &mut Profile {
        self.profile.to_mut()
    }

    /// The whole model, samples decoded.
    pub fn into_profile(self) -> Profile {
        let mut profile = self.profile.into_owned();
        if let Some(b) = self.byte_samples {
            profile.sample = b.decode_all();
        }
        profile
    }

    /// The profile as raw protobuf, the bytes its whole model encodes to:
    /// samples are copied from their bytes, not decoded.
    pub fn encode(&self) -> Result<Vec<u8>, CodecError> {
        let rest = crate::binary::message::encode(&*self.profile, &Default::default())?;
        let Some(b) = &self.byte_samples else {
            return Ok(rest);
        };
        let pos = samples_position(&rest);
        let sample_len = |&(start, end): &SampleRange| (end - start) as usize;
        let samples: usize = (b.ranges.iter())
            .map(|r| wire::len_field_size(profile::SAMPLE, sample_len(r)))
            .sum();
        let mut out = Vec::with_capacity(rest.len() + samples);
        out.extend_from_slice(&rest[..pos]);
        for range @ &(start, end) in &b.ranges {
            wire::write_len_prefix(&mut out, profile::SAMPLE, sample_len(range));
            out.extend_from_slice(b.sample_bytes(start, end));
        }
        out.extend_from_slice(&rest[pos..]);
        Ok(out)
    }
}

/// Where samples go in `header`, rust-protobuf's encoding of a profile
/// without samples: it writes fields in the order they are declared, so
/// after the sample types (1) and before the rest.
fn samples_position(header: &[u8]) -> usize {
    let (mut pos, end) = (0, header.len());
    while pos < end {
        let field_start = pos;
        match read_tag(header, &mut pos, end) {
            Ok((number, wire_type)) if number == profile::SAMPLE_TYPE => {
                skip_value(header, &mut pos, end, wire_type).expect("rust-protobuf's output");
            }
            _ => return field_start,
        }
    }
    pos
}

/// Writes the profile of `source` to `out` as raw protobuf, each sample
/// encoded as it is read: the bytes of its whole model, without holding
/// the samples or the output (`convert --to pprof` of OTLP samples
/// converted as read). Many samples are converted and encoded on two
/// threads, a run of them at a time ([`threads::write_in_order`]).
pub fn write_pprof_source<S>(source: &S, out: &mut dyn std::io::Write) -> Result<(), CodecError>
where
    S: SampleSource<Profile = Profile, Sample = Sample> + Sync,
{
    let header = crate::binary::message::encode(source.profile(), &Default::default())?;
    let pos = samples_position(&header);
    out.write_all(&header[..pos])?;
    let count = source.sample_count();
    let runs: Vec<_> = (0..count)
        .step_by(SAMPLES_PER_RUN)
        .map(|start| start..(start + SAMPLES_PER_RUN).min(count))
        .collect();
    let encode = |run: &std::ops::Range<usize>, out: &mut Vec<u8>| {
        let (mut sample, mut bytes) = (Sample::new(), Vec::new());
        for i in run.clone() {
            bytes.clear();
            encode_source_sample(source, i, &mut sample, &mut bytes);
            wire::write_len_prefix(out, profile::SAMPLE, bytes.len());
            out.extend_from_slice(&bytes);
        }
    };
    let apart = count >= PARALLEL_ITEMS;
    threads::write_in_order(apart, &runs, |_| None, encode, &mut |b| out.write_all(b))?;
    Ok(out.write_all(&header[pos..])?)
}

/// Sample `i` of `source` encoded into `bytes` (empty): its location ids
/// copied as the source holds them when it can give them so
/// ([`SampleSource::field_run`]: a converted OTLP stack, or a view's
/// packed run), or written by the source as it makes them
/// ([`SampleSource::sample_writing_field`]), the rest encoded.
fn encode_source_sample<S>(source: &S, i: usize, sample: &mut Sample, bytes: &mut Vec<u8>)
where
    S: SampleSource<Profile = Profile, Sample = Sample>,
{
    let rest = match source.field_run(i, sample::LOCATION_ID) {
        Some(locations) => {
            bytes.extend_from_slice(locations);
            Some(source.sample_fields(i, VALUES_AND_LABELS, sample))
        }
        None => {
            let located = (sample::LOCATION_ID, &mut *bytes);
            source.sample_writing_field(i, located, VALUES_AND_LABELS, sample)
        }
    };
    if let Some(rest) = rest {
        if rest.location_id.is_empty() && samples::write_sample(rest, bytes).is_some() {
            return;
        }
        bytes.clear();
    }
    samples::encode_sample(source.sample(i, sample), bytes);
}

/// What [`encode_source_sample`] reads of a sample whose location ids it
/// copies.
const VALUES_AND_LABELS: Fields = Fields::only(&[sample::VALUE, sample::LABEL]);

/// Samples [`write_pprof_source`] encodes into one buffer before writing it.
const SAMPLES_PER_RUN: usize = 4096;

/// Samples are read one at a time; see the module comment.
impl SampleSource for PprofView<'_> {
    type Profile = Profile;
    type Sample = Sample;

    /// Everything but the samples when they are held as bytes.
    fn profile(&self) -> &Profile {
        &self.profile
    }

    fn sample_count(&self) -> usize {
        match &self.byte_samples {
            Some(b) => b.ranges.len(),
            None => self.profile.sample.len(),
        }
    }

    /// # Panics
    /// When `i` is not below [`Self::sample_count`], as slice indexing does.
    fn sample_fields<'s>(&'s self, i: usize, fields: Fields, buffer: &'s mut Sample) -> &'s Sample {
        match &self.byte_samples {
            Some(b) => {
                // Every range was checked when the view was built.
                samples::read_sample_fields(b.sample_at(i), fields, buffer)
                    .expect("a sample the view has checked");
                buffer
            }
            None => &self.profile.sample[i],
        }
    }

    fn field_run(&self, i: usize, number: u32) -> Option<&[u8]> {
        let b = self.byte_samples.as_ref()?;
        samples::field_run(b.sample_at(i), number, b.fields_in_order)
    }

    /// The location ids' bounds, when the samples were summed up as they
    /// were checked ([`DecodeOptions::sample_summary`]).
    fn field_range(&self, number: u32) -> Option<std::ops::RangeInclusive<u64>> {
        let held = self.byte_samples.as_ref()?;
        let summary = held.summary.filter(|_| number == sample::LOCATION_ID)?;
        Some(summary.id_range())
    }

    /// Found as [`Self::field_range`] is.
    fn common_value_count(&self) -> Option<usize> {
        self.byte_samples.as_ref()?.summary?.common_value_count()
    }

    fn value_count(&self, i: usize) -> usize {
        match &self.byte_samples {
            Some(b) => {
                let (start, end) = b.ranges[i];
                samples::value_count(b.sample_bytes(start, end))
            }
            None => self.profile.sample[i].value.len(),
        }
    }
}

/// Samples made one at a time (by a conversion, say) kept encoded, to
/// become a [`PprofView`]: a million samples then take their encoded size,
/// not three vectors each.
#[derive(Debug, Default)]
pub struct EncodedSamples {
    bytes: Vec<u8>,
    ranges: Vec<SampleRange>,
    /// Set once a sample cannot be held as bytes (one the fast reader does
    /// not take, or past 4 GiB): from then on every sample is a model.
    models: Option<Vec<Sample>>,
}

impl EncodedSamples {
    /// No samples yet.
    pub fn new() -> Self {
        EncodedSamples::default()
    }

    /// No samples yet, room for `bytes` of them: an estimate costs nothing
    /// until written (untouched pages are not resident), and spares the
    /// copies of a growing buffer, which at its peak holds both.
    pub fn with_capacity(bytes: usize) -> Self {
        EncodedSamples {
            bytes: Vec::with_capacity(bytes),
            ..EncodedSamples::default()
        }
    }

    /// Appends `sample`.
    pub fn push(&mut self, sample: Sample) {
        if let Some(models) = &mut self.models {
            models.push(sample);
            return;
        }
        let start = self.bytes.len();
        // Written directly in the form the fast reader takes; otherwise by
        // rust-protobuf, and checked.
        let readable = samples::encode_sample(&sample, &mut self.bytes)
            || samples::check_sample::<false>(&self.bytes[start..], &mut SampleSummary::default())
                .is_some();
        let end = self.bytes.len();
        if readable && u32::try_from(end).is_ok() {
            self.ranges.push((start as u32, end as u32));
            return;
        }
        self.bytes.truncate(start);
        let mut models = self.decoded();
        models.push(sample);
        self.models = Some(models);
    }

    /// The samples held as bytes, decoded.
    fn decoded(&mut self) -> Vec<Sample> {
        let held = ByteSamples {
            bytes: Cow::Owned(std::mem::take(&mut self.bytes)),
            ranges: std::mem::take(&mut self.ranges),
            summary: None,
            fields_in_order: false,
        };
        held.decode_all()
    }

    /// The view of `profile` (its own samples ignored) with these samples.
    pub fn into_view(self, profile: Profile) -> PprofView<'static> {
        match self.models {
            Some(sample) => PprofView::from_profile(Profile { sample, ..profile }),
            None => PprofView {
                profile: Cow::Owned(Profile {
                    sample: Vec::new(),
                    ..profile
                }),
                byte_samples: Some(ByteSamples {
                    bytes: Cow::Owned(self.bytes),
                    ranges: self.ranges,
                    summary: None,
                    // Not noted as samples are added.
                    fields_in_order: false,
                }),
            },
        }
    }
}

/// Decodes raw or gzip-compressed pprof into a view: the same checks,
/// limits, warnings and errors as [`crate::decode`] of a `Profile`. Raw input
/// is borrowed, not copied; gzip input is inflated into a buffer the view
/// owns.
pub fn decode_pprof_view<'a>(
    input: &'a [u8],
    options: &DecodeOptions,
) -> Result<Decoded<PprofView<'a>>, CodecError> {
    let (bytes, gzipped) = crate::binary::inflate::inflate_input(input, &options.limits)?;
    view_of_inflated(bytes, gzipped, options)
}

/// [`decode_pprof_view`] of input already inflated.
pub(crate) fn view_of_inflated<'a>(
    bytes: Cow<'a, [u8]>,
    gzipped: bool,
    options: &DecodeOptions,
) -> Result<Decoded<PprofView<'a>>, CodecError> {
    let parsed_at = bytes.as_ptr();
    let decoded = decode_pprof_parts(&bytes, gzipped, options, |parsed, limits| {
        // Ranges index `bytes` only if it is `bytes` that is parsed, not a
        // copy with invalid UTF-8 repaired.
        if parsed.as_ptr() == parsed_at {
            let sum_up = options.sample_summary;
            if let Some((profile, ranges, checked)) = samples::split(parsed, limits, sum_up) {
                return Ok((profile, Some((ranges, checked))));
            }
        }
        // Repaired or past 4 GiB: the fast path reads the whole model.
        match samples::decode(parsed, limits) {
            Some(profile) => Ok((profile, None)),
            None => parse_message(parsed, limits).map(|profile| (profile, None)),
        }
    })?;
    let (profile, held) = decoded.message;
    Ok(Decoded {
        message: PprofView {
            profile: Cow::Owned(profile),
            byte_samples: held.map(|(ranges, checked)| ByteSamples {
                bytes,
                ranges,
                summary: checked.summary,
                fields_in_order: checked.fields_in_order,
            }),
        },
        warnings: decoded.warnings,
        warnings_suppressed: decoded.warnings_suppressed,
        gzipped,
    })
}

#[cfg(test)]
mod tests {
    use protobuf::{Message, MessageFull};

    use super::*;
    use crate::binary::message::decode_scanned;
    use crate::decode;
    use crate::Limits;

    fn synthetic_bytes() -> Vec<u8> {
        protoprof_synth::profile(&protoprof_synth::Shape::with_samples(3_000, 11))
            .write_to_bytes()
            .unwrap()
    }

    fn model(bytes: &[u8]) -> Profile {
        decode::<Profile>(bytes, &DecodeOptions::default())
            .unwrap()
            .message
    }

    #[test]
    fn holds_samples_as_bytes_and_reads_them_as_the_model_has_them() {
        let bytes = synthetic_bytes();
        let view = decode_pprof_view(&bytes, &DecodeOptions::default())
            .unwrap()
            .message;
        let expected = model(&bytes);
        assert!(view.samples_are_bytes());
        assert!(view.profile().sample.is_empty());
        assert_eq!(view.sample_count(), expected.sample.len());
        let mut seen = 0;
        view.for_each_sample(|i, sample| {
            assert_eq!(sample, &expected.sample[i]);
            assert_eq!(view.value_count(i), expected.sample[i].value.len());
            seen += 1;
        });
        assert_eq!(seen, expected.sample.len());
        assert_eq!(view.into_profile(), expected);
    }

    #[test]
    fn gzip_input_gives_the_same_view() {
        let bytes = synthetic_bytes();
        let gzipped = crate::gzip::compress(&bytes, 1).unwrap();
        let decoded = decode_pprof_view(&gzipped, &DecodeOptions::default()).unwrap();
        assert!(decoded.gzipped);
        assert!(decoded.message.samples_are_bytes());
        assert_eq!(decoded.message.into_profile(), model(&bytes));
    }

    #[test]
    fn samples_the_fast_path_declines_are_held_decoded() {
        let mut profile = Profile::parse_from_bytes(&synthetic_bytes()).unwrap();
        profile.sample[5].mut_unknown_fields().add_varint(9, 1);
        let bytes = profile.write_to_bytes().unwrap();
        let view = decode_pprof_view(&bytes, &DecodeOptions::default())
            .unwrap()
            .message;
        assert!(!view.samples_are_bytes());
        assert_eq!(view.value_count(5), profile.sample[5].value.len());
        let mut buffer = Sample::new();
        assert_eq!(view.sample(5, &mut buffer), &profile.sample[5]);
        assert_eq!(view.into_profile(), profile);
    }

    #[test]
    fn repaired_utf8_keeps_samples_decoded_and_warns_as_decode_does() {
        let mut profile = Profile::parse_from_bytes(&synthetic_bytes()).unwrap();
        profile.string_table.push("\u{1}marker\u{1}".into());
        let mut bytes = profile.write_to_bytes().unwrap();
        let at = bytes.windows(7).position(|w| w == b"\x01marker").unwrap();
        bytes[at] = 0xff; // not UTF-8
        let options = DecodeOptions::default();
        let view = decode_pprof_view(&bytes, &options).unwrap();
        let expected = decode::<Profile>(&bytes, &options).unwrap();
        assert!(!view.message.samples_are_bytes());
        assert_eq!(view.warnings, expected.warnings);
        assert_eq!(view.message.into_profile(), expected.message);
    }

    #[test]
    fn malformed_input_fails_as_decode_does() {
        let bytes = synthetic_bytes();
        let cut = &bytes[..bytes.len() - 5];
        let options = DecodeOptions::default();
        let view_error = decode_pprof_view(cut, &options).unwrap_err().to_string();
        let model_error = decode::<Profile>(cut, &options).unwrap_err().to_string();
        assert_eq!(view_error, model_error);
    }

    /// Parsing beside the scan gives what parsing after it gives, on input
    /// cut anywhere or with any byte changed: the same message and
    /// warnings, or the same error.
    #[test]
    fn parsing_beside_the_scan_decodes_as_parsing_after_it() {
        let shape = protoprof_synth::Shape::with_samples(30, 3);
        let bytes = protobuf::Message::write_to_bytes(&protoprof_synth::profile(&shape)).unwrap();
        let descriptor = Profile::descriptor();
        let options = DecodeOptions::default();
        let view_parse = |parsed: &[u8], limits: &Limits| match samples::split(parsed, limits, true)
        {
            Some((profile, ranges, checked)) => Ok((profile, Some((ranges, checked.summary)))),
            None => parse_message::<Profile>(parsed, limits).map(|p| (p, None)),
        };
        let decoded = |input: &[u8], beside| {
            let model = decode_scanned(
                (input, false),
                &descriptor,
                &options,
                parse_message::<Profile>,
                beside,
            );
            let view = decode_scanned((input, false), &descriptor, &options, view_parse, beside);
            format!("{model:?}\n{view:?}")
        };
        let mut inputs: Vec<Vec<u8>> = (0..bytes.len()).map(|end| bytes[..end].to_vec()).collect();
        for at in 0..bytes.len() {
            for flip in [0x80, 0xff] {
                let mut changed = bytes.clone();
                changed[at] ^= flip;
                inputs.push(changed);
            }
        }
        let mut failed = 0;
        for input in &inputs {
            let after = decoded(input, false);
            assert_eq!(decoded(input, true), after);
            failed += usize::from(after.contains("Err("));
        }
        assert!(
            failed > inputs.len() / 4,
            "{failed} of {} fail",
            inputs.len()
        );
    }
}
