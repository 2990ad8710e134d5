//! Reading inputs: files, standard input and URLs, bounded by the limits,
//! decoded whole or as views; a Collector file exporter stream as its
//! messages merged.

use std::io::IsTerminal;
use std::path::Path;

use protobuf::MessageDyn;
use protoprof_codec::{
    decode_any, decode_any_view, AutoDecoded, AutoView, DecodeOptions, PprofView,
};
use protoprof_model_pprof::perftools::profiles::Profile;

use super::decoding::{decode_options, decode_user, limits, user_schemas};
use super::otlp_pprof::{
    development_as_pprof_view, development_data, experimental_as_pprof_view, otlp_as_pprof,
};
use super::overwrite::remember_input;
use super::warnings::{print_warnings, shown};
use crate::error::{CliError, Context, Result};

/// Inputs above this size show a progress bar while read (on a terminal).
const PROGRESS_BYTES: u64 = 8 << 20;

/// Drops `value`, unless it is the last thing the process reads (`last`):
/// then its memory is left to the process's exit, which takes it back at
/// once, where freeing a large view's allocations one by one takes 10 ms
/// on a 100 MB profile.
pub fn drop_unless_last<T>(value: T, last: bool) {
    if last {
        std::mem::forget(value);
    }
}

/// All bytes of `path` (`-` is standard input), at most the input limit.
/// The file is remembered as an input of this run, so that no output
/// replaces it ([`write_output_with`](super::output::write_output_with)).
pub fn read_input(path: &Path) -> Result<Vec<u8>> {
    let limit = limits().max_input_bytes;
    if path == Path::new("-") {
        return protoprof_codec::binary::read_bounded(std::io::stdin().lock(), limit)
            .context("<stdin>");
    }
    if crate::fetch::names_url(path) {
        return crate::fetch::read_url(&path.to_string_lossy(), limit);
    }
    let file = std::fs::File::open(path).context(shown(path))?;
    remember_input(path);
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    if size <= PROGRESS_BYTES || !std::io::stderr().is_terminal() {
        return protoprof_codec::binary::read_file(&file, limit).context(shown(path));
    }
    let bar = indicatif::ProgressBar::new(size).with_style(
        indicatif::ProgressStyle::with_template("{msg} [{bar:30}] {bytes}/{total_bytes}")
            .expect("valid template"),
    );
    bar.set_message(format!("reading {}", shown(path)));
    protoprof_codec::binary::read_bounded_sized(bar.wrap_read(file), limit, size)
        .context(shown(path))
}

/// A decoded input and how it was read.
pub struct Loaded {
    pub decoded: AutoDecoded,
}

impl Loaded {
    pub fn message(&self) -> &dyn MessageDyn {
        &*self.decoded.decoded.message
    }
}

/// Reads and decodes `path`, detecting form and type unless `type_name` is
/// given; a Collector file exporter stream as its messages merged.
pub fn load(path: &Path, type_name: Option<&str>) -> Result<Loaded> {
    let bytes = read_input(path)?;
    if type_name.is_none() && user_schemas().is_none() {
        if let Some(messages) = exporter_stream(path, &bytes)? {
            let merged = merged_stream(path, &messages, &decode_options())?;
            return decode_bytes(&shown(path), &merged, Some(DEVELOPMENT_DATA));
        }
    }
    decode_bytes(&shown(path), &bytes, type_name)
}

/// The message type a file exporter stream is read as.
const DEVELOPMENT_DATA: &str = "opentelemetry.proto.profiles.v1development.ProfilesData";

/// The messages of `bytes` when it is a Collector file exporter stream
/// (length-prefixed or JSON lines, zstd or not), else `None`.
pub fn exporter_stream(
    path: &Path,
    bytes: &[u8],
) -> Result<Option<Vec<protoprof_codec::exporter_stream::StreamMessage>>> {
    protoprof_codec::exporter_stream::exporter_messages(bytes, &limits()).context(shown(path))
}

/// How a message of a stream is named: `FILE: message 2 (byte 1234)`.
fn stream_message_name(path: &Path, n: usize, offset: u64) -> String {
    format!("{}: message {n} (byte {offset})", shown(path))
}

/// The messages `bytes` (read from `path`) holds, each with the name its
/// report goes under: the one message, named by the file, or, unless a
/// type is given, each message of a file exporter stream (for the
/// commands that go message by message: `inspect`, `validate`).
pub fn messages_of(
    path: &Path,
    bytes: Vec<u8>,
    type_name: Option<&str>,
) -> Result<Vec<(String, Vec<u8>)>> {
    let stream = match type_name {
        None if user_schemas().is_none() => exporter_stream(path, &bytes)?,
        _ => None,
    };
    Ok(match stream {
        Some(messages) => messages
            .into_iter()
            .enumerate()
            .map(|(n, m)| (stream_message_name(path, n, m.offset), m.bytes))
            .collect(),
        None => vec![(shown(path), bytes)],
    })
}

/// The messages of a stream decoded (an older revision upgraded, warnings
/// printed with the message's name) and merged into one v1development
/// message, encoded: the stream as one set of profiles.
pub fn merged_stream(
    path: &Path,
    messages: &[protoprof_codec::exporter_stream::StreamMessage],
    options: &DecodeOptions,
) -> Result<Vec<u8>> {
    let mut all = Vec::with_capacity(messages.len());
    for (n, m) in messages.iter().enumerate() {
        let name = stream_message_name(path, n, m.offset);
        let decoded = decode_any(&m.bytes, None, options).context(&name)?;
        print_warnings(&name, &decoded.decoded);
        let Some(data) = development_data(&*decoded.decoded.message) else {
            return Err(CliError::failure(format!(
                "{name}: is {}; a file exporter stream is read as OTLP profiles v1development",
                decoded.descriptor.full_name()
            )));
        };
        all.push(data.into_owned());
    }
    let merged = protoprof_codec::exporter_stream::merge_development(all);
    protobuf::Message::write_to_bytes(&merged).context(shown(path))
}

/// Decodes `bytes` as [`load`] does (form and type detected unless
/// `type_name` is given, warnings printed); errors and warnings name the
/// input `what` (a file, or a frame of one).
pub fn decode_bytes(what: &str, bytes: &[u8], type_name: Option<&str>) -> Result<Loaded> {
    if let Some(schemas) = user_schemas() {
        let decoded = decode_user(what, bytes, schemas, type_name, &decode_options())?;
        return Ok(Loaded { decoded });
    }
    let decoded = decode_any(bytes, type_name, &decode_options()).context(what)?;
    print_warnings(what, &decoded.decoded);
    Ok(Loaded { decoded })
}

/// Decodes the `bytes` of `path` as [`load`] does, but binary pprof into a
/// view that keeps the samples in its bytes: for commands that read each
/// sample once (validate, convert, top, folded), so large profiles need no
/// model object per sample. The view owns the bytes; gzip input is freed
/// once inflated.
pub fn decode_view(
    path: &Path,
    bytes: Vec<u8>,
    type_name: Option<&str>,
) -> Result<AutoView<'static>> {
    decode_view_with(path, bytes, type_name, &decode_options())
}

/// [`decode_view`] with `options` (made from [`decode_options`]). A
/// Collector file exporter stream is read as one message: its messages
/// merged ([`merged_stream`]).
pub fn decode_view_with(
    path: &Path,
    bytes: Vec<u8>,
    type_name: Option<&str>,
    options: &DecodeOptions,
) -> Result<AutoView<'static>> {
    if let Some(schemas) = user_schemas() {
        let decoded = decode_user(&shown(path), &bytes, schemas, type_name, options)?;
        return Ok(AutoView::Other(decoded));
    }
    if type_name.is_none() {
        if let Some(messages) = exporter_stream(path, &bytes)? {
            let merged = merged_stream(path, &messages, options)?;
            return decode_view_with(path, merged, Some(DEVELOPMENT_DATA), options);
        }
    }
    let decoded = decode_any_view(bytes, type_name, options).context(shown(path))?;
    match &decoded {
        AutoView::Pprof(view) => print_warnings(&shown(path), view),
        AutoView::Development(view) => print_warnings(&shown(path), view),
        AutoView::Experimental(view) => print_warnings(&shown(path), view),
        AutoView::Other(other) => print_warnings(&shown(path), &other.decoded),
    }
    Ok(decoded)
}

/// The paths of what the decoder of `view` dropped unread (JSON keys that
/// name no field), for validation to report.
pub fn dropped_input(view: &AutoView) -> Vec<String> {
    view.warnings()
        .iter()
        .filter(|w| w.kind.is_data_dropped())
        .map(|w| w.path.clone())
        .collect()
}

/// A profile for analysis: pprof as it is, OTLP converted (all containers
/// merged, as their sample types must agree).
pub fn load_pprof(path: &Path) -> Result<Profile> {
    let loaded = load(path, None)?;
    if loaded.message().downcast_ref::<Profile>().is_some() {
        // Taken, not copied: profiles can be gigabytes in memory.
        let message = loaded.decoded.decoded.message;
        return Ok(*message
            .downcast_box::<Profile>()
            .unwrap_or_else(|_| unreachable!("checked above")));
    }
    otlp_as_pprof(path, &loaded.decoded)
}

/// [`load_pprof`] of the `bytes` of `path`, binary pprof left as a view that
/// owns them (see [`decode_view`]).
pub fn load_pprof_view(path: &Path, bytes: Vec<u8>) -> Result<PprofView<'static>> {
    match decode_view(path, bytes, None)? {
        AutoView::Pprof(view) => Ok(view.message),
        AutoView::Development(view) => development_as_pprof_view(path, view.message),
        AutoView::Experimental(view) => experimental_as_pprof_view(path, view.message),
        AutoView::Other(other) => otlp_as_pprof(path, &other).map(PprofView::from_profile),
    }
}
