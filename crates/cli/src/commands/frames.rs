//! `protoprof frames`: each frame of a captured stream, decoded.

use protoprof_codec::detect::{detect_payload, inflate_input};
use std::path::Path;

use protobuf::reflect::MessageDescriptor;
use protoprof_codec::detect::V1DEVELOPMENT;
use protoprof_codec::frame::{is_framed, Frame, FrameReader, Framing};
use protoprof_codec::otlp::upgrade as otlp_upgrade;
use protoprof_codec::{decode_dynamic, json, registry, text, Limits};
use serde::Serialize;

use super::summary;
use crate::cli::{FramesArgs, FramingChoice, OutputFormat};
use crate::error::{CliError, Context, Result};
use crate::io::{self, print, shown};

#[derive(Serialize)]
struct FrameInfo {
    index: usize,
    offset: u64,
    compressed: bool,
    bytes: usize,
    r#type: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fields: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    /// What the reader had to do, e.g. upgrade an older OTLP revision.
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
}

pub fn run(args: &FramesArgs) -> Result<u8> {
    let (path, format, decode) = (args.file.as_path(), args.format, args.decode);
    let limits = io::limits();
    let input = io::read_input(path)?;
    let (bytes, _) = inflate_input(&input, &limits).context(shown(path))?;
    let framing = choose_framing(path, &bytes, args.framing, &limits)?;
    let forced = args
        .r#type
        .as_deref()
        .map(io::message_descriptor)
        .transpose()?;
    // Empty frames (the relay's opening response) say nothing of their type:
    // they take the type most other frames have.
    let majority = match &forced {
        Some(_) => None,
        None => majority_type(&bytes, framing, &limits),
    };
    let mut frames = Vec::new();
    let mut status = 0;
    for frame in FrameReader::new(&bytes, framing, limits.max_frame_bytes) {
        let frame = match frame {
            Ok(frame) => frame,
            Err(e) => {
                eprintln!("protoprof: error: {}: {e}", shown(path));
                status = 2;
                break;
            }
        };
        let descriptor = match &forced {
            Some(d) => Some(d.clone()),
            None if frame.payload.is_empty() => majority.clone(),
            None => detected_type(&frame.payload, &limits),
        };
        let info = describe(&frame, descriptor.as_ref(), format, decode);
        if info.error.is_some() {
            status = 2;
        }
        frames.push(info);
    }
    match format {
        OutputFormat::Json => {
            print(&(serde_json::to_string_pretty(&frames).expect("serializable") + "\n"))?
        }
        OutputFormat::Text => print(&render_text(&frames, decode))?,
    }
    Ok(status)
}

/// The framing asked for, or the one the bytes are.
fn choose_framing(
    path: &Path,
    bytes: &[u8],
    choice: Option<FramingChoice>,
    limits: &Limits,
) -> Result<Framing> {
    Ok(match choice {
        Some(FramingChoice::Grpc) => Framing::Grpc,
        Some(FramingChoice::Delimited) => Framing::VarintDelimited,
        Some(FramingChoice::FileExporter) => Framing::FileExporter,
        None if is_framed(bytes, Framing::Grpc, limits.max_frame_bytes) => Framing::Grpc,
        None if is_framed(bytes, Framing::FileExporter, limits.max_frame_bytes) => {
            Framing::FileExporter
        }
        None if is_framed(bytes, Framing::VarintDelimited, limits.max_frame_bytes) => {
            Framing::VarintDelimited
        }
        None => {
            return Err(CliError::failure(format!(
            "{}: not a stream of gRPC, file-exporter or varint-delimited frames (use --framing)",
            shown(path)
        )))
        }
    })
}

/// The message type detection picks for a payload: among the user's
/// schemas when this run has them, else among protoprof's.
fn detected_type(payload: &[u8], limits: &Limits) -> Option<MessageDescriptor> {
    if let Some(schemas) = io::user_schemas() {
        let (_, ranked) = protoprof_codec::user::rank(payload, schemas, limits);
        return ranked.into_iter().next().map(|r| r.descriptor);
    }
    let detection = detect_payload(payload, false, limits).ok()?;
    registry::message_descriptor(detection.best()?.full_name).ok()
}

/// The type detected for most non-empty frames.
fn majority_type(bytes: &[u8], framing: Framing, limits: &Limits) -> Option<MessageDescriptor> {
    let mut counts: std::collections::BTreeMap<String, (usize, MessageDescriptor)> =
        std::collections::BTreeMap::new();
    for frame in FrameReader::new(bytes, framing, limits.max_frame_bytes)
        .flatten()
        .filter(|f| !f.payload.is_empty())
    {
        if let Some(descriptor) = detected_type(&frame.payload, limits) {
            let name = descriptor.full_name().to_string();
            counts.entry(name).or_insert((0, descriptor)).0 += 1;
        }
    }
    // On a tie, max_by_key keeps the last maximum: the greatest name.
    let (_, (_, descriptor)) = counts.into_iter().max_by_key(|(_, (n, _))| *n)?;
    Some(descriptor)
}

/// A frame's payload decoded as `descriptor`: by the reflection reader for
/// a type of the user's schemas, else by the codec.
fn decode_payload(
    payload: &[u8],
    descriptor: &MessageDescriptor,
    options: &protoprof_codec::DecodeOptions,
) -> std::result::Result<Box<dyn protobuf::MessageDyn>, protoprof_codec::CodecError> {
    if io::user_schemas().is_none() {
        return decode_dynamic(payload, descriptor, options).map(|d| d.message);
    }
    let mut message = descriptor.new_instance();
    protoprof_codec::user::parse::merge(&mut *message, payload, options.limits.max_depth)?;
    Ok(message)
}

/// One frame, decoded as `descriptor` when there is one.
fn describe(
    frame: &Frame,
    descriptor: Option<&MessageDescriptor>,
    format: OutputFormat,
    decode: bool,
) -> FrameInfo {
    let mut info = FrameInfo {
        index: frame.index,
        offset: frame.offset,
        compressed: frame.compressed,
        bytes: frame.payload.len(),
        r#type: descriptor.map_or_else(|| "(unknown)".into(), |d| d.full_name().to_string()),
        message: None,
        fields: None,
        error: None,
        note: None,
    };
    let Some(d) = descriptor else {
        return info;
    };
    let options = protoprof_codec::DecodeOptions {
        allow_empty: true,
        ..io::decode_options()
    };
    // OTLP v1development payloads of v1.8.0/v1.9.0 are read upgraded, as
    // whole files are; older revisions are named.
    let payload = if V1DEVELOPMENT.contains(&d.full_name()) {
        match otlp_upgrade::to_current(&frame.payload) {
            Ok((payload, warning)) => {
                info.note = warning.map(|w| w.to_string());
                payload
            }
            Err(e) => {
                info.error = Some(e.to_string());
                return info;
            }
        }
    } else {
        std::borrow::Cow::Borrowed(&frame.payload[..])
    };
    match decode_payload(&payload, d, &options) {
        Ok(message) => {
            let message = &*message;
            match (format, decode) {
                (OutputFormat::Json, _) => info.message = json_value(message),
                (OutputFormat::Text, true) => info.fields = Some(text::print(message)),
                (OutputFormat::Text, false) => info.fields = Some(summary::fields(message)),
            }
        }
        Err(e) => info.error = Some(e.to_string()),
    }
    info
}

/// A frame's message as JSON: proto3 JSON for the user's types, OTLP/JSON
/// for protoprof's.
fn json_value(message: &dyn protobuf::MessageDyn) -> Option<serde_json::Value> {
    let text = match io::user_schemas() {
        Some(schemas) => {
            protoprof_codec::user::proto3::print(message, schemas, false)
                .ok()?
                .text
        }
        None => json::print(message, false),
    };
    serde_json::from_str(&text).ok()
}

fn render_text(frames: &[FrameInfo], decode: bool) -> String {
    let mut out = String::new();
    for f in frames {
        let gz = if f.compressed { ", gzip" } else { "" };
        out.push_str(&format!(
            "#{} @{} ({} bytes{gz}) {}",
            f.index, f.offset, f.bytes, f.r#type
        ));
        match (&f.fields, &f.error) {
            (_, Some(e)) => out.push_str(&format!(": error: {e}\n")),
            (Some(fields), None) if decode => out.push_str(&format!("\n{}", indent(fields))),
            (Some(fields), None) => out.push_str(&format!(": {fields}\n")),
            (None, None) => out.push('\n'),
        }
        if let Some(note) = &f.note {
            out.push_str(&format!("    note: {note}\n"));
        }
    }
    out
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("    {l}\n")).collect()
}
