//! The OpenTelemetry Collector file exporter's files: a stream of OTLP
//! profiles messages, each a whole `ProfilesData` with its own dictionary.
//!
//! `format: proto` writes each message behind a 4-byte big-endian length;
//! `format: json` writes one JSON document per line. `compression: zstd`
//! compresses each message on its own (behind its length, in both
//! formats); the `exporter.file.nativeCompression` gate makes the whole file
//! one zstd stream. [`exporter_messages`] splits any of these (gzip aside:
//! the exporter writes none) into the
//! messages' own bytes, and [`merge_development`] makes one message of
//! several, so that a stream is analysed as one set of profiles.

use std::io::Read;

use protoprof_model_otlp::opentelemetry::proto::common::v1::{any_value, AnyValue, KeyValue};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development::{
    Profile, ProfilesData, ProfilesDictionary, ValueType,
};

use crate::error::CodecError;
use crate::form::Form;
use crate::frame::{is_framed, FrameReader, Framing};
use crate::limits::Limits;

/// The first bytes of a zstd frame.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// One message of a stream: where it starts in the (uncompressed) stream,
/// and its bytes (binary protobuf or one JSON document), uncompressed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamMessage {
    /// Byte offset of its frame (or line) in the stream.
    pub offset: u64,
    /// The message.
    pub bytes: Vec<u8>,
}

/// The messages of a file exporter stream in `input` (zstd as a whole, or
/// zstd message by message), or `None` when `input` is not such a stream
/// (one message, or another form). A stream holds at least one
/// length-prefixed message, or at least two JSON lines. Only the first
/// bytes are looked at to say no: other input costs next to nothing.
///
/// ```
/// use protoprof_codec::exporter_stream::exporter_messages;
/// use protoprof_codec::Limits;
///
/// let stream = [&[0, 0, 0, 2][..], &[0x12, 0x00], &[0, 0, 0, 0]].concat();
/// let messages = exporter_messages(&stream, &Limits::DEFAULT).unwrap().unwrap();
/// assert_eq!(messages.len(), 2);
/// assert_eq!(messages[0].bytes, [0x12, 0x00]);
/// assert_eq!(messages[1].offset, 6);
/// assert!(exporter_messages(b"{}", &Limits::DEFAULT).unwrap().is_none());
/// ```
pub fn exporter_messages(
    input: &[u8],
    limits: &Limits,
) -> Result<Option<Vec<StreamMessage>>, CodecError> {
    if input.starts_with(&ZSTD_MAGIC) {
        let whole = unzstd(input, limits)?;
        return Ok(Some(split(&whole, limits)?.unwrap_or_else(|| {
            vec![StreamMessage {
                offset: 0,
                bytes: whole,
            }]
        })));
    }
    split(input, limits)
}

/// Length-prefixed messages (each zstd-compressed or not), or JSON lines.
fn split(bytes: &[u8], limits: &Limits) -> Result<Option<Vec<StreamMessage>>, CodecError> {
    // A message under 16 MiB has a length whose first byte is 0, which no
    // protobuf message and no text starts with.
    if bytes.first() == Some(&0) && is_framed(bytes, Framing::FileExporter, limits.max_frame_bytes)
    {
        let first_zstd = FrameReader::new(bytes, Framing::FileExporter, limits.max_frame_bytes)
            .next()
            .and_then(Result::ok)
            .is_some_and(|f| f.payload.starts_with(&ZSTD_MAGIC));
        let framed = first_zstd
            || crate::detect::detect_payload(bytes, false, limits)
                .is_ok_and(|d| d.form == Form::FileExporterFrames);
        if framed {
            return frames(bytes, limits).map(Some);
        }
    }
    Ok(json_lines(bytes))
}

fn frames(bytes: &[u8], limits: &Limits) -> Result<Vec<StreamMessage>, CodecError> {
    let mut messages = Vec::new();
    for frame in FrameReader::new(bytes, Framing::FileExporter, limits.max_frame_bytes) {
        let frame = frame?;
        let payload = match frame.payload.starts_with(&ZSTD_MAGIC) {
            true => unzstd(&frame.payload, limits)?,
            false => frame.payload.to_vec(),
        };
        messages.push(StreamMessage {
            offset: frame.offset,
            bytes: payload,
        });
    }
    Ok(messages)
}

/// Two or more lines, each one JSON object (a single document is not a
/// stream: it is read as JSON). A pretty-printed document is told apart at
/// its second line, a one-line document before it is parsed.
fn json_lines(bytes: &[u8]) -> Option<Vec<StreamMessage>> {
    if !bytes.trim_ascii_start().starts_with(b"{") {
        return None;
    }
    let mut lines = Vec::new();
    let mut offset = 0;
    for line in bytes.split_inclusive(|b| *b == b'\n') {
        let trimmed = line.trim_ascii();
        if !trimmed.is_empty() {
            if !trimmed.starts_with(b"{") || !trimmed.ends_with(b"}") {
                return None;
            }
            lines.push((offset as u64, trimmed));
        }
        offset += line.len();
    }
    let documents = lines.len() >= 2
        && lines
            .iter()
            .all(|(_, line)| serde_json::from_slice::<serde::de::IgnoredAny>(line).is_ok());
    documents.then(|| {
        lines
            .into_iter()
            .map(|(offset, line)| StreamMessage {
                offset,
                bytes: line.to_vec(),
            })
            .collect()
    })
}

/// A zstd stream inflated, at most the inflated-size limit.
fn unzstd(bytes: &[u8], limits: &Limits) -> Result<Vec<u8>, CodecError> {
    let mut source = bytes;
    let decoder =
        ruzstd::decoding::StreamingDecoder::new(&mut source).map_err(|e| CodecError::Decode {
            message: "zstd".into(),
            detail: e.to_string(),
        })?;
    let mut out = Vec::new();
    decoder
        .take(limits.max_inflated_bytes.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| CodecError::Decode {
            message: "zstd".into(),
            detail: e.to_string(),
        })?;
    if out.len() as u64 > limits.max_inflated_bytes {
        return Err(CodecError::InflatedTooLarge {
            limit: limits.max_inflated_bytes,
            compressed_read: bytes.len() as u64,
        });
    }
    Ok(out)
}

/// Several v1development messages as one: resources in stream order, one
/// dictionary holding every message's tables one after the other (entry 0
/// of each table kept once), and every index moved by where its table
/// landed. Index 0 stays 0 ("unset"), as it is in each message.
pub fn merge_development(messages: Vec<ProfilesData>) -> ProfilesData {
    let mut merged = ProfilesData::new();
    let mut dictionary = empty_dictionary();
    for mut message in messages {
        let mut own = message.dictionary.take().unwrap_or_default();
        let offsets = Offsets::after(&dictionary);
        offsets.move_dictionary(&mut own);
        append_tables(&mut dictionary, own);
        for resource in &mut message.resource_profiles {
            if let Some(r) = resource.resource.as_mut() {
                r.attributes
                    .iter_mut()
                    .for_each(|kv| offsets.move_key_value(kv));
            }
            for scope in &mut resource.scope_profiles {
                if let Some(s) = scope.scope.as_mut() {
                    s.attributes
                        .iter_mut()
                        .for_each(|kv| offsets.move_key_value(kv));
                }
                scope
                    .profiles
                    .iter_mut()
                    .for_each(|p| offsets.move_profile(p));
            }
        }
        merged.resource_profiles.extend(message.resource_profiles);
    }
    merged.dictionary = Some(dictionary).into();
    merged
}

fn empty_dictionary() -> ProfilesDictionary {
    ProfilesDictionary {
        mapping_table: vec![Default::default()],
        location_table: vec![Default::default()],
        function_table: vec![Default::default()],
        link_table: vec![Default::default()],
        string_table: vec![String::new()],
        attribute_table: vec![Default::default()],
        stack_table: vec![Default::default()],
        ..Default::default()
    }
}

/// Each table's entries but the first (the zero entry every message has).
fn append_tables(to: &mut ProfilesDictionary, from: ProfilesDictionary) {
    fn rest<T>(table: Vec<T>) -> impl Iterator<Item = T> {
        table.into_iter().skip(1)
    }
    to.mapping_table.extend(rest(from.mapping_table));
    to.location_table.extend(rest(from.location_table));
    to.function_table.extend(rest(from.function_table));
    to.link_table.extend(rest(from.link_table));
    to.string_table.extend(rest(from.string_table));
    to.attribute_table.extend(rest(from.attribute_table));
    to.stack_table.extend(rest(from.stack_table));
}

/// How far one message's indices move: the merged tables' lengths before
/// it, less the zero entry it shares.
struct Offsets {
    mapping: i32,
    location: i32,
    function: i32,
    link: i32,
    string: i32,
    attribute: i32,
    stack: i32,
}

impl Offsets {
    fn after(d: &ProfilesDictionary) -> Offsets {
        let at = |len: usize| i32::try_from(len).unwrap_or(i32::MAX) - 1;
        Offsets {
            mapping: at(d.mapping_table.len()),
            location: at(d.location_table.len()),
            function: at(d.function_table.len()),
            link: at(d.link_table.len()),
            string: at(d.string_table.len()),
            attribute: at(d.attribute_table.len()),
            stack: at(d.stack_table.len()),
        }
    }

    fn moved(index: &mut i32, by: i32) {
        if *index != 0 {
            *index = index.saturating_add(by);
        }
    }

    fn move_dictionary(&self, d: &mut ProfilesDictionary) {
        let (s, a) = (self.string, self.attribute);
        for m in d.mapping_table.iter_mut().skip(1) {
            Self::moved(&mut m.filename_strindex, s);
            m.attribute_indices
                .iter_mut()
                .for_each(|i| Self::moved(i, a));
        }
        for l in d.location_table.iter_mut().skip(1) {
            Self::moved(&mut l.mapping_index, self.mapping);
            for line in &mut l.lines {
                Self::moved(&mut line.function_index, self.function);
            }
            l.attribute_indices
                .iter_mut()
                .for_each(|i| Self::moved(i, a));
        }
        for f in d.function_table.iter_mut().skip(1) {
            Self::moved(&mut f.name_strindex, s);
            Self::moved(&mut f.system_name_strindex, s);
            Self::moved(&mut f.filename_strindex, s);
        }
        for kv in d.attribute_table.iter_mut().skip(1) {
            Self::moved(&mut kv.key_strindex, s);
            Self::moved(&mut kv.unit_strindex, s);
            if let Some(value) = kv.value.as_mut() {
                self.move_any_value(value);
            }
        }
        for stack in d.stack_table.iter_mut().skip(1) {
            let by = self.location;
            stack
                .location_indices
                .iter_mut()
                .for_each(|i| Self::moved(i, by));
        }
    }

    fn move_value_type(&self, t: &mut ValueType) {
        Self::moved(&mut t.type_strindex, self.string);
        Self::moved(&mut t.unit_strindex, self.string);
    }

    fn move_profile(&self, p: &mut Profile) {
        if let Some(t) = p.sample_type.as_mut() {
            self.move_value_type(t);
        }
        if let Some(t) = p.period_type.as_mut() {
            self.move_value_type(t);
        }
        let a = self.attribute;
        p.attribute_indices
            .iter_mut()
            .for_each(|i| Self::moved(i, a));
        for sample in &mut p.samples {
            Self::moved(&mut sample.stack_index, self.stack);
            Self::moved(&mut sample.link_index, self.link);
            sample
                .attribute_indices
                .iter_mut()
                .for_each(|i| Self::moved(i, a));
        }
    }

    /// Resource and scope attributes may name key and value by string
    /// index (v1.10.0).
    fn move_key_value(&self, kv: &mut KeyValue) {
        Self::moved(&mut kv.key_strindex, self.string);
        if let Some(value) = kv.value.as_mut() {
            self.move_any_value(value);
        }
    }

    fn move_any_value(&self, value: &mut AnyValue) {
        match value.value.as_mut() {
            Some(any_value::Value::StringValueStrindex(i)) => Self::moved(i, self.string),
            Some(any_value::Value::ArrayValue(array)) => {
                array.values.iter_mut().for_each(|v| self.move_any_value(v));
            }
            Some(any_value::Value::KvlistValue(list)) => {
                list.values
                    .iter_mut()
                    .for_each(|kv| self.move_key_value(kv));
            }
            _ => {}
        }
    }
}
