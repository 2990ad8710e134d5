//! Reading inputs, writing outputs atomically, colour and the pager.

use std::borrow::Cow;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use protobuf::reflect::MessageDescriptor;
use protobuf::MessageDyn;
use protoprof_codec::otlp::revision::OtlpRevision;
use protoprof_codec::user::{SchemaSet, SchemaSources};
use protoprof_codec::{
    decode_any, decode_any_view, AutoDecoded, AutoView, DecodeOptions, Decoded, DevelopmentView,
    EncodedSamples, ExperimentalView, Limits, PprofView,
};
use protoprof_model_otlp::opentelemetry::proto::common::v1 as otlp_common;
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development::ProfilesData as DevelopmentData;
use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental::ProfilesData;
use protoprof_model_pprof::perftools::profiles::Profile;
use protoprof_pprof_bridge::{
    BridgeError, Converted, DevelopmentAsPprof, DroppedSamples, ExperimentalAsPprof,
};

use crate::cli::{ColorChoice, Encoding};
use crate::error::{CliError, Context, Result};

/// Inputs above this size show a progress bar while read (on a terminal).
const PROGRESS_BYTES: u64 = 8 << 20;

pub fn shown(path: &Path) -> String {
    if path == Path::new("-") {
        "<stdin>".into()
    } else {
        path.display().to_string()
    }
}

/// The limits of this run (`--max-*` options, `PROTOPROF_MAX_*` variables).
static LIMITS: std::sync::OnceLock<Limits> = std::sync::OnceLock::new();

/// Sets the limits of this run; the first call wins.
pub fn set_limits(limits: Limits) {
    let _ = LIMITS.set(limits);
}

/// The limits of this run (the codec's defaults until set).
pub fn limits() -> Limits {
    LIMITS.get().copied().unwrap_or_default()
}

/// The `--otlp-revision` of this run.
static OTLP_REVISION: std::sync::OnceLock<Option<OtlpRevision>> = std::sync::OnceLock::new();

/// Sets the forced OTLP v1development revision of this run; the first call wins.
pub fn set_otlp_revision(revision: Option<OtlpRevision>) {
    let _ = OTLP_REVISION.set(revision);
}

/// The user's own schemas of this run (`--proto`, `--descriptor-set`).
static USER_SCHEMAS: std::sync::OnceLock<Option<SchemaSet>> = std::sync::OnceLock::new();

/// Loads the user's schemas, when any are named; the first call wins.
pub fn load_user_schemas(sources: &SchemaSources) -> Result<()> {
    let schemas = match sources.is_empty() {
        true => None,
        false => Some(
            SchemaSet::load(sources, &limits()).map_err(|e| CliError::failure(e.to_string()))?,
        ),
    };
    let _ = USER_SCHEMAS.set(schemas);
    Ok(())
}

/// The user's schemas, when this run has any: then every message is read
/// as one of theirs.
pub fn user_schemas() -> Option<&'static SchemaSet> {
    USER_SCHEMAS.get().and_then(Option::as_ref)
}

/// A message type by full name: the user's schemas' when this run has
/// them, else protoprof's own.
pub fn message_descriptor(name: &str) -> Result<MessageDescriptor> {
    match user_schemas() {
        Some(schemas) => schemas
            .message(name)
            .map_err(|e| CliError::failure(e.to_string())),
        None => protoprof_codec::registry::message_descriptor(name).context("--type"),
    }
}

/// `message` as `format` writes it, compressed with gzip when asked.
pub(crate) fn encode_as(
    message: &dyn protobuf::MessageDyn,
    format: Encoding,
    gzip: bool,
) -> Result<Vec<u8>> {
    let text_bytes = |s: String| -> Result<Vec<u8>> {
        match gzip {
            true => protoprof_codec::gzip::compress(s.as_bytes(), 6).context("compressing"),
            false => Ok(s.into_bytes()),
        }
    };
    match format {
        Encoding::Binary => protoprof_codec::encode(
            message,
            &protoprof_codec::EncodeOptions {
                gzip_level: gzip.then_some(6),
            },
        )
        .context("encoding"),
        Encoding::Json => text_bytes(protoprof_codec::json::print(message, true) + "\n"),
        Encoding::Text => text_bytes(protoprof_codec::text::print(message)),
    }
}

/// Encodes `message`: canonically as protoc does for a message of the
/// user's schemas, as the codec does for protoprof's own.
pub fn encode(
    message: &dyn MessageDyn,
    options: &protoprof_codec::EncodeOptions,
) -> std::result::Result<Vec<u8>, protoprof_codec::CodecError> {
    if user_schemas().is_none() {
        return protoprof_codec::encode(message, options);
    }
    let raw = protoprof_codec::user::encode(message);
    match options.gzip_level {
        Some(level) => protoprof_codec::gzip::compress(&raw, level),
        None => Ok(raw),
    }
}

/// Says which type detection chose among the user's, when another fits
/// nearly as well.
pub fn note_ranking(what: &str, ranked: &[protoprof_codec::user::Ranked]) {
    if let [best, second, ..] = ranked {
        if second.confidence >= best.confidence - 0.1 {
            eprintln!(
                "protoprof: {what}: read as {} (fit {:.0}%); {} fits {:.0}%; --type chooses",
                best.descriptor.full_name(),
                100.0 * best.confidence,
                second.descriptor.full_name(),
                100.0 * second.confidence
            );
        }
    }
}

/// Decodes `bytes` as a message of the user's schemas; says how sure a
/// detected type is when another type fits nearly as well.
fn decode_user(
    what: &str,
    bytes: &[u8],
    schemas: &SchemaSet,
    type_name: Option<&str>,
    options: &DecodeOptions,
) -> Result<AutoDecoded> {
    let decoded =
        protoprof_codec::user::decode(bytes, schemas, type_name, options).context(what)?;
    note_ranking(what, &decoded.ranked);
    print_warnings(what, &decoded.decoded.decoded);
    Ok(decoded.decoded)
}

/// How every command decodes: the defaults, with this run's limits and
/// forced revision.
pub fn decode_options() -> DecodeOptions {
    DecodeOptions {
        limits: limits(),
        otlp_revision: OTLP_REVISION.get().copied().flatten(),
        ..DecodeOptions::default()
    }
}

/// Drops `value`, unless it is the last thing the process reads (`last`):
/// then its memory is left to the process's exit, which takes it back at
/// once, where freeing a large view's allocations one by one takes 10 ms
/// on a 100 MB profile.
pub fn drop_unless_last<T>(value: T, last: bool) {
    if last {
        std::mem::forget(value);
    }
}

/// Human output's longest line; past it a line is cut, saying how much.
const MAX_LINE_CHARS: usize = 400;

/// `text` with every line longer than [`MAX_LINE_CHARS`] cut there (a
/// 794 kB string read from a misdetected file would flood a terminal),
/// unless `full`. Machine forms (`decode`, `--format json`) are never cut.
pub fn cut_long_lines(text: String, full: bool) -> String {
    let too_long = |line: &str| line.chars().nth(MAX_LINE_CHARS).is_some();
    if full || !text.lines().any(too_long) {
        return text;
    }
    let mut out = Vec::with_capacity(text.len().min(1 << 20));
    for line in text.lines() {
        write_cut_line(&mut out, line, false).expect("writing to memory");
    }
    String::from_utf8(out).expect("cut at character boundaries")
}

/// Writes `line` and a newline, cut as [`cut_long_lines`] cuts unless `full`.
pub fn write_cut_line(out: &mut dyn Write, line: &str, full: bool) -> std::io::Result<()> {
    match line.char_indices().nth(MAX_LINE_CHARS).filter(|_| !full) {
        Some((cut, _)) => {
            let rest = line[cut..].chars().count();
            let note = format!("… ({rest} more characters; --full shows all)");
            writeln!(out, "{}{note}", &line[..cut])
        }
        None => writeln!(out, "{line}"),
    }
}

/// All bytes of `path` (`-` is standard input), at most the input limit.
/// The file is remembered as an input of this run, so that no output
/// replaces it ([`write_output_with`]).
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

/// A decode's warnings on standard error, each naming the input `what`.
pub fn print_warnings<T>(what: &str, decoded: &Decoded<T>) {
    for warning in &decoded.warnings {
        warn(what, warning);
    }
    if decoded.warnings_suppressed > 0 {
        warn(
            what,
            format!("{} more warnings", decoded.warnings_suppressed),
        );
    }
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

/// OTLP v1development as one pprof profile but for its samples, which
/// `reading(&view)` converts as they are read; the bridge's warnings are
/// printed, and the view's dictionary is shed: only samples and stacks are
/// read from here on.
///
/// Samples whose references resolve to nothing are left out with one
/// warning (see [`set_converting`]): the view is then replaced by
/// one of the rest.
pub fn development_as_pprof(path: &Path, view: &mut DevelopmentView) -> Result<DevelopmentAsPprof> {
    let converted = match protoprof_pprof_bridge::development_as_pprof(view.data(), view) {
        Err(error) if mendable(&error) => {
            let placeholder = DevelopmentView::from_data(DevelopmentData::default());
            let whole = std::mem::replace(view, placeholder).into_data();
            *view = without_invalid_samples(path, whole, error)?;
            protoprof_pprof_bridge::development_as_pprof(view.data(), view)
        }
        converted => converted,
    }
    .context(shown(path))?;
    print_bridge_warnings(path, &converted.warnings);
    view.shed_dictionary();
    Ok(converted.value)
}

/// Whether samples that refer to what does not exist are left out (the
/// default: reports show the rest, with a warning) or refused (`convert`
/// without `--drop-invalid`: its output would silently lack them).
static REFUSE_INVALID_SAMPLES: AtomicBool = AtomicBool::new(false);

/// Whether the command writes a converted copy (`convert`), for which
/// what a conversion leaves out is news; a report of sums is not.
static CONVERTING: AtomicBool = AtomicBool::new(false);

/// `--quiet`: no warnings.
static QUIET: AtomicBool = AtomicBool::new(false);

/// The command writes a converted copy: from here on the bridge's every
/// warning is printed, and OTLP samples whose references resolve to
/// nothing make the conversion fail, naming the first, unless
/// `drop_invalid`.
pub fn set_converting(drop_invalid: bool) {
    CONVERTING.store(true, Ordering::Relaxed);
    REFUSE_INVALID_SAMPLES.store(!drop_invalid, Ordering::Relaxed);
}

/// `--quiet`: warnings are not printed.
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// `protoprof: warning: WHAT: MESSAGE` on standard error, unless `--quiet`.
pub fn warn(what: impl std::fmt::Display, message: impl std::fmt::Display) {
    if !QUIET.load(Ordering::Relaxed) {
        eprintln!("protoprof: warning: {what}: {message}");
    }
}

/// `data`, which failed to convert with `error`, without the samples whose
/// references resolve to nothing, as a view to convert again; with one
/// warning that counts them and names the first. `error` when no sample
/// is at fault, or when such samples are refused.
fn without_invalid_samples(
    path: &Path,
    mut data: DevelopmentData,
    error: BridgeError,
) -> Result<DevelopmentView<'static>> {
    let dropped = protoprof_pprof_bridge::drop_invalid_samples(&mut data);
    left_out(path, dropped, error)?;
    Ok(DevelopmentView::from_data(data))
}

/// [`without_invalid_samples`] of v1experimental data, converted again,
/// its containers merged.
fn without_invalid_experimental_samples(
    path: &Path,
    mut data: ProfilesData,
    error: BridgeError,
) -> Result<Converted<Profile>> {
    let dropped = protoprof_pprof_bridge::drop_invalid_experimental_samples(&mut data);
    left_out(path, dropped, error)?;
    protoprof_pprof_bridge::otlp_to_pprof_merged(&data).context(shown(path))
}

/// Says what was `dropped`, once; `error` when nothing was (no sample is
/// at fault) or when such samples are refused.
pub fn left_out(path: &Path, dropped: Option<DroppedSamples>, error: BridgeError) -> Result<()> {
    let Some(dropped) = dropped else {
        return Err(error).context(shown(path));
    };
    if REFUSE_INVALID_SAMPLES.load(Ordering::Relaxed) {
        return Err(CliError::failure(format!(
            "{}: {error}; {} samples of {} refer to entries that do not exist: \
             `--drop-invalid` converts the rest",
            shown(path),
            dropped.count,
            dropped.of
        )));
    }
    warn(shown(path), dropped);
    Ok(())
}

/// Whether a conversion failed on a reference to nothing that leaving out
/// samples may mend (and the command leaves them out).
fn mendable(error: &BridgeError) -> bool {
    matches!(error, BridgeError::Unresolved { .. })
}

/// OTLP v1development as one pprof profile (as [`otlp_message_as_pprof`]
/// converts it), read from the view one sample at a time and kept encoded:
/// no model object per sample on either side.
pub fn development_as_pprof_view(
    path: &Path,
    mut view: DevelopmentView,
) -> Result<PprofView<'static>> {
    // pprof samples hold what the OTLP samples and stacks held, about.
    let mut samples = EncodedSamples::with_capacity(view.byte_size() + view.byte_size() / 8);
    let converted = development_as_pprof(path, &mut view)?;
    converted
        .reading(&view)
        .drain_into(&mut |s| samples.push(s));
    // The input is no longer needed: free it before the caller goes on.
    drop(view);
    Ok(samples.into_view(converted.into_header()))
}

/// OTLP v1experimental of one container as one pprof profile but for its
/// samples, which `reading(&view)` converts as they are read; the bridge's
/// warnings are printed, and the view's tables are shed: only samples are
/// read from here on. `None` when the input holds other than one container
/// (several are merged: [`experimental_whole_as_pprof`]).
pub fn experimental_as_pprof(
    path: &Path,
    view: &mut ExperimentalView,
) -> Option<Result<ExperimentalAsPprof>> {
    let converted = protoprof_pprof_bridge::experimental_as_pprof(view.data(), view)?;
    // Left to the whole path, which leaves the broken samples out (or
    // refuses them, saying how many).
    if converted.as_ref().is_err_and(mendable) {
        return None;
    }
    Some(converted.context(shown(path)).map(|converted| {
        print_bridge_warnings(path, &converted.warnings);
        view.shed_tables();
        converted.value
    }))
}

/// OTLP v1experimental decoded whole and converted, its containers merged.
pub fn experimental_whole_as_pprof(path: &Path, view: ExperimentalView) -> Result<Profile> {
    let data = view.into_data();
    let converted = match protoprof_pprof_bridge::otlp_to_pprof_merged(&data) {
        Err(error) if mendable(&error) => without_invalid_experimental_samples(path, data, error)?,
        converted => converted.context(shown(path))?,
    };
    print_bridge_warnings(path, &converted.warnings);
    Ok(converted.value)
}

/// OTLP v1experimental as one pprof profile, as [`development_as_pprof_view`]
/// makes it of v1development: one container read from the view one sample
/// at a time and kept encoded; several decoded whole and merged.
pub fn experimental_as_pprof_view(
    path: &Path,
    mut view: ExperimentalView,
) -> Result<PprofView<'static>> {
    let Some(converted) = experimental_as_pprof(path, &mut view) else {
        return experimental_whole_as_pprof(path, view).map(PprofView::from_profile);
    };
    let converted = converted?;
    let mut samples = EncodedSamples::with_capacity(view.byte_size() + view.byte_size() / 8);
    converted
        .reading(&view)
        .drain_into(&mut |s| samples.push(s));
    drop(view);
    Ok(samples.into_view(converted.into_header()))
}

/// OTLP profiles as one pprof profile (all containers merged, as their
/// sample types must agree).
pub fn otlp_as_pprof(path: &Path, decoded: &AutoDecoded) -> Result<Profile> {
    otlp_message_as_pprof(path, &*decoded.decoded.message).ok_or_else(|| {
        CliError::failure(format!(
            "{}: {} is not a profile",
            shown(path),
            decoded.descriptor.full_name()
        ))
    })?
}

/// OTLP profiles of either package as one pprof profile, with the bridge's
/// warnings printed; `None` when `message` is not OTLP profiles.
pub fn otlp_message_as_pprof(path: &Path, message: &dyn MessageDyn) -> Option<Result<Profile>> {
    let converted: Result<Converted<Profile>> = if let Some(data) = otlp_data(message) {
        match protoprof_pprof_bridge::otlp_to_pprof_merged(&data) {
            Err(error) if mendable(&error) => {
                without_invalid_experimental_samples(path, data.into_owned(), error)
            }
            converted => converted.context(shown(path)),
        }
    } else {
        let data = development_data(message)?;
        match protoprof_pprof_bridge::development_to_pprof(&data) {
            Err(error) if mendable(&error) => {
                let view = without_invalid_samples(path, data.into_owned(), error);
                let pprof = view.and_then(|view| development_as_pprof_view(path, view));
                return Some(pprof.map(|view| view.into_profile()));
            }
            converted => converted.context(shown(path)),
        }
    };
    Some(converted.map(|converted| {
        print_bridge_warnings(path, &converted.warnings);
        converted.value
    }))
}

/// How reports symbolize what they read; `None` (every other command):
/// profiles are left as they are.
static SYMBOLIZATION: Mutex<Option<protoprof_symbolize::Options>> = Mutex::new(None);

/// The command is a report: from here on, profiles read are symbolized
/// with pprof's `-symbolize` `mode` (`local` by default, as pprof's).
pub fn set_symbolization(mode: &str) -> Result<()> {
    let options = protoprof_symbolize::Options::parse(mode)
        .map_err(|e| CliError::failure(format!("--symbolize: {e}")))?;
    *SYMBOLIZATION.lock().unwrap_or_else(|e| e.into_inner()) = Some(options);
    Ok(())
}

/// Whether reports were asked not to symbolize (`--symbolize none`): as
/// pprof's `-symbolize=none`, names are then shown as the profile gives
/// them, not simplified.
pub fn symbolizes_nothing() -> bool {
    let options = SYMBOLIZATION.lock().unwrap_or_else(|e| e.into_inner());
    options
        .as_ref()
        .is_some_and(|o| o.mode == protoprof_symbolize::Mode::None)
}

/// The demangling mode reports were given (`--symbolize
/// demangle=full|templates|none`), which pprof forces on every function;
/// `None` for the default, which reports apply themselves.
fn forced_demangling() -> Option<protoprof_analysis::ForcedDemangling> {
    use protoprof_analysis::ForcedDemangling as Forced;
    use protoprof_symbolize::{Demangle, Mode};
    let options = SYMBOLIZATION.lock().unwrap_or_else(|e| e.into_inner());
    let options = options.as_ref().filter(|o| o.mode != Mode::None)?;
    match options.demangle {
        Demangle::Default => None,
        Demangle::Full => Some(Forced::Full),
        Demangle::Templates => Some(Forced::Templates),
        Demangle::None => Some(Forced::None),
    }
}

/// Whether reports show names as the profile gives them: symbolization
/// off (pprof skips its demangling step), or a demangling mode given
/// (the names are then as that mode made them).
pub fn names_as_given() -> bool {
    symbolizes_nothing() || forced_demangling().is_some()
}

/// `profile` (read from `what`) symbolized as [`set_symbolization`]
/// asked, with one warning naming the mappings it found no binary for.
/// Reports call it once per profile they analyse, after merging, as pprof
/// symbolizes the merged profile.
pub fn symbolize_for_report(what: impl std::fmt::Display, profile: &mut Profile) {
    let options = SYMBOLIZATION
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    let Some(options) = options else {
        return;
    };
    let report = protoprof_symbolize::symbolize(profile, &options);
    let missing: Vec<&str> = report
        .mappings
        .iter()
        .filter(|m| m.skipped.is_none() && m.found.is_none())
        .map(|m| m.file.as_str())
        .collect();
    if !missing.is_empty() {
        let mut names = missing[..missing.len().min(3)].join(", ");
        if missing.len() > 3 {
            names.push_str(", …");
        }
        let message = format!(
            "frames left as addresses: no binary found for {} mapping(s) ({names}); set \
             PPROF_BINARY_PATH, or --symbolize none (`protoprof symbolize` says where it looked)",
            missing.len()
        );
        warn(what, message);
    }
    if let Some(mode) = forced_demangling() {
        let demangle = options.demangle;
        protoprof_analysis::force_demangled_names(profile, mode, &|s| demangle.mangled(s));
    }
}

/// What a conversion of `path` could not carry exactly, on standard error.
pub fn print_bridge_warnings(path: &Path, warnings: &[protoprof_pprof_bridge::BridgeWarning]) {
    let converting = CONVERTING.load(Ordering::Relaxed);
    for w in warnings {
        if converting || !w.is_timestamps_dropped() {
            warn(shown(path), w);
        }
    }
}

/// OTLP v1development data whatever its top-level type; borrowed when it
/// is `ProfilesData` already (profiles can be gigabytes in memory), copied
/// out of an export request.
pub fn development_data(message: &dyn MessageDyn) -> Option<Cow<'_, DevelopmentData>> {
    use protoprof_model_otlp::opentelemetry::proto::collector::profiles::v1development::ExportProfilesServiceRequest;
    if let Some(d) = message.downcast_ref::<DevelopmentData>() {
        return Some(Cow::Borrowed(d));
    }
    message
        .downcast_ref::<ExportProfilesServiceRequest>()
        .map(|r| {
            Cow::Owned(DevelopmentData {
                resource_profiles: r.resource_profiles.clone(),
                dictionary: r.dictionary.clone(),
                ..Default::default()
            })
        })
}

/// OTLP data whatever its top-level type (the export request has the same
/// form); borrowed when it is `ProfilesData` already.
pub fn otlp_data(message: &dyn MessageDyn) -> Option<Cow<'_, ProfilesData>> {
    use protoprof_model_otlp::opentelemetry::proto::collector::profiles::v1experimental::ExportProfilesServiceRequest;
    if let Some(d) = message.downcast_ref::<ProfilesData>() {
        return Some(Cow::Borrowed(d));
    }
    message
        .downcast_ref::<ExportProfilesServiceRequest>()
        .map(|r| {
            Cow::Owned(ProfilesData {
                resource_profiles: r.resource_profiles.clone(),
                ..Default::default()
            })
        })
}

/// Writes `bytes` to `path` (`-`: standard output). Files are written to a
/// temporary file beside them and renamed into place, so a reader never
/// sees half a file and a failure leaves the old one.
pub fn write_output(path: &Path, bytes: &[u8]) -> Result<()> {
    write_output_with(path, |out| out.write_all(bytes))
}

/// [`write_output_with`], compressed with gzip as it is written when
/// `gzip` (`--gzip`, or an output name ending in `.gz`).
pub fn write_output_gzip(
    path: &Path,
    gzip: bool,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    write_output_with(path, |out| match gzip {
        true => protoprof_codec::gzip::compress_into(out, 6, write),
        false => write(out),
    })
}

/// [`write_output`] for output made as it is written: `write` writes it
/// through a buffer, so it need not be held whole.
pub fn write_output_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    if path == Path::new("-") {
        return write_stdout(write);
    }
    refuse_input(path)?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    // tempfile's errors name the temporary file: the user named the output.
    let tmp = tempfile::NamedTempFile::new_in(&dir)
        .map_err(without_temporary_path)
        .context(shown(path))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, tmp.as_file());
    write(&mut out)
        .and_then(|_| out.flush())
        .context(shown(path))?;
    drop(out);
    // Temporary files are created private; the result gets the replaced
    // file's permissions, or the usual ones for a new file.
    let existing = std::fs::metadata(path).ok();
    let permissions = match &existing {
        Some(existing) => existing.permissions(),
        None => default_permissions(tmp.as_file())?,
    };
    tmp.as_file()
        .set_permissions(permissions)
        .context(shown(path))?;
    // A file replaced (`--in-place`, or an output written again) is only
    // replaced once the new bytes are on disk, so a crash cannot lose both.
    // A new file is not synced, as `gzip` and `go tool pprof` do not: a
    // crash can lose it, nothing else (docs/cli.md).
    if existing.is_some() {
        tmp.as_file().sync_all().context(shown(path))?;
    }
    tmp.persist(path)
        .map_err(|e| e.error)
        .context(shown(path))?;
    Ok(())
}

/// One of tempfile's errors without the temporary file's path, which its
/// message ends with (` at path "dir/.tmpXXXX"`): the user named the output.
fn without_temporary_path(e: std::io::Error) -> std::io::Error {
    let text = e.to_string();
    match text.rsplit_once(" at path ") {
        Some((message, _)) => std::io::Error::new(e.kind(), message.to_string()),
        None => e,
    }
}

#[cfg(unix)]
fn default_permissions(_: &std::fs::File) -> Result<std::fs::Permissions> {
    use std::os::unix::fs::PermissionsExt;
    Ok(std::fs::Permissions::from_mode(0o644))
}

#[cfg(not(unix))]
fn default_permissions(file: &std::fs::File) -> Result<std::fs::Permissions> {
    file.metadata()
        .map(|m| m.permissions())
        .context("permissions")
}

/// The inputs this run has read, by file identity, with the path each was
/// named by: an output that is one of them is refused.
static INPUTS: std::sync::Mutex<Vec<(FileIdentity, PathBuf)>> = std::sync::Mutex::new(Vec::new());

/// Whether outputs may replace inputs (`--in-place`, `edit`).
static OVERWRITE_INPUTS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Lets this run's outputs replace its inputs: `convert --in-place` and
/// `edit`, whose point that is.
pub fn allow_overwriting_inputs() {
    OVERWRITE_INPUTS.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// What makes two paths one file: device and inode where there are such
/// (symbolic links, `./` spellings and hard links all meet there), the
/// canonical path elsewhere.
#[derive(Clone, PartialEq, Eq, Debug)]
struct FileIdentity {
    #[cfg(unix)]
    id: (u64, u64),
    #[cfg(not(unix))]
    id: PathBuf,
}

impl FileIdentity {
    /// The file at `path` (links followed), when there is one; it need not
    /// be readable.
    #[cfg(unix)]
    fn of_path(path: &Path) -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        let metadata = std::fs::metadata(path).ok()?;
        Some(FileIdentity {
            id: (metadata.dev(), metadata.ino()),
        })
    }

    #[cfg(not(unix))]
    fn of_path(path: &Path) -> Option<Self> {
        path.canonicalize().ok().map(|id| FileIdentity { id })
    }
}

/// Notes `path` as an input of this run.
fn remember_input(path: &Path) {
    let Some(identity) = FileIdentity::of_path(path) else {
        return;
    };
    let mut inputs = INPUTS.lock().unwrap_or_else(|e| e.into_inner());
    if !inputs.iter().any(|(known, _)| *known == identity) {
        inputs.push((identity, path.to_path_buf()));
    }
}

/// Refuses to write to `output` when it is a file this run read, unless
/// [`allow_overwriting_inputs`] was called.
fn refuse_input(output: &Path) -> Result<()> {
    if OVERWRITE_INPUTS.load(std::sync::atomic::Ordering::Relaxed) {
        return Ok(());
    }
    let Some(identity) = FileIdentity::of_path(output) else {
        return Ok(());
    };
    let inputs = INPUTS.lock().unwrap_or_else(|e| e.into_inner());
    match inputs.iter().find(|(known, _)| *known == identity) {
        Some((_, input)) => Err(overwrite_refused(output, input)),
        None => Ok(()),
    }
}

/// The refusal to write `output` over `input`.
fn overwrite_refused(output: &Path, input: &Path) -> CliError {
    let same = match output == input {
        true => String::new(),
        false => format!(" (the same file as input {})", input.display()),
    };
    CliError::failure(format!(
        "{}: is also an input{same}; refusing to overwrite it",
        output.display()
    ))
}

/// Refuses, before any work, to write over one of `inputs` unless
/// `--in-place`; the writes themselves check again ([`refuse_input`]).
pub fn check_not_input(output: &Path, inputs: &[&Path], in_place: bool) -> Result<()> {
    if in_place || output == Path::new("-") {
        return Ok(());
    }
    let Some(identity) = FileIdentity::of_path(output) else {
        return Ok(());
    };
    match inputs
        .iter()
        .find(|i| FileIdentity::of_path(i).as_ref() == Some(&identity))
    {
        Some(input) => Err(overwrite_refused(output, input)),
        None => Ok(()),
    }
}

fn ignore_broken_pipe(e: std::io::Error) -> std::io::Result<()> {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Ok(())
    } else {
        Err(e)
    }
}

/// Prints text to standard output, ignoring a closed pipe (`| head`).
pub fn print(text: &str) -> Result<()> {
    write_output(Path::new("-"), text.as_bytes())
}

/// ANSI styles, or nothing when colour is off.
#[derive(Clone, Copy)]
pub struct Style {
    pub enabled: bool,
}

impl Style {
    /// Colour when asked, or when stdout is a terminal and NO_COLOR is unset.
    pub fn new(choice: ColorChoice) -> Style {
        let enabled = match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::io::stdout().is_terminal()
                    && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            }
        };
        Style { enabled }
    }

    fn paint(self, code: &str, text: &str) -> String {
        if self.enabled {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    pub fn bold(self, text: &str) -> String {
        self.paint("1", text)
    }

    pub fn red(self, text: &str) -> String {
        self.paint("31", text)
    }

    pub fn yellow(self, text: &str) -> String {
        self.paint("33", text)
    }

    pub fn green(self, text: &str) -> String {
        self.paint("32", text)
    }
}

/// What `write` writes, to standard output (buffered) as it is made,
/// ignoring a closed pipe (`| head`).
pub fn write_stdout(write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<()> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    write(&mut out)
        .and_then(|_| out.flush())
        .or_else(ignore_broken_pipe)
        .context("<stdout>")
}

/// Human output written by `write` as it is made: through `$PAGER` (default
/// `less -FRX`) when standard output is a terminal, else to standard output;
/// a closed pipe or a pager quit early ends it quietly.
pub fn page_with(write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<()> {
    let pager = std::env::var("PAGER")
        .ok()
        .filter(|p| !p.trim().is_empty())
        .unwrap_or_else(|| "less -FRX".into());
    let child = match std::io::stdout().is_terminal() {
        true => std::process::Command::new("sh")
            .arg("-c")
            .arg(&pager)
            .stdin(std::process::Stdio::piped())
            .spawn()
            .ok(),
        false => None,
    };
    let Some(mut child) = child else {
        return write_stdout(write);
    };
    if let Some(stdin) = child.stdin.take() {
        let mut stdin = std::io::BufWriter::new(stdin);
        let _ = write(&mut stdin).and_then(|_| stdin.flush());
    }
    child.wait().context(format!("pager {pager:?}"))?;
    Ok(())
}

/// `--resource key=value` pairs as OTLP attributes.
pub fn resource_attributes(pairs: &[String]) -> Result<Vec<otlp_common::KeyValue>> {
    pairs
        .iter()
        .map(|pair| {
            let (key, value) = pair.split_once('=').ok_or_else(|| {
                CliError::failure(format!("--resource {pair:?}: expected key=value"))
            })?;
            Ok(string_attribute(key, value))
        })
        .collect()
}

/// An OTLP attribute of string value.
pub fn string_attribute(key: &str, value: &str) -> otlp_common::KeyValue {
    otlp_common::KeyValue {
        key: key.to_string(),
        value: protobuf::MessageField::some(otlp_common::AnyValue {
            value: Some(otlp_common::any_value::Value::StringValue(
                value.to_string(),
            )),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// Each v1development profile as pprof, named by its path; samples whose
/// references resolve to nothing refused, or left out with `--drop-invalid`.
pub fn development_each(
    path: &Path,
    data: &mut Cow<'_, DevelopmentData>,
) -> Result<Vec<(String, Profile)>> {
    let each = match protoprof_pprof_bridge::development_to_pprof_each(data) {
        Ok(each) => each,
        Err(error) => {
            let dropped = protoprof_pprof_bridge::drop_invalid_samples(data.to_mut());
            left_out(path, dropped, error)?;
            protoprof_pprof_bridge::development_to_pprof_each(data).context(shown(path))?
        }
    };
    let each = each.into_iter().map(|(at, converted)| {
        print_bridge_warnings(path, &converted.warnings);
        (at, converted.value)
    });
    Ok(each.collect())
}

/// Each v1experimental container as pprof, as [`development_each`].
pub fn experimental_each(
    path: &Path,
    data: &mut Cow<'_, ProfilesData>,
) -> Result<Vec<(String, Profile)>> {
    let converted = match protoprof_pprof_bridge::otlp_to_pprof(data) {
        Ok(converted) => converted,
        Err(error) => {
            let dropped = protoprof_pprof_bridge::drop_invalid_experimental_samples(data.to_mut());
            left_out(path, dropped, error)?;
            protoprof_pprof_bridge::otlp_to_pprof(data).context(shown(path))?
        }
    };
    print_bridge_warnings(path, &converted.warnings);
    let at = |n: usize| format!("container {n}");
    Ok(converted
        .value
        .into_iter()
        .enumerate()
        .map(|(n, p)| (at(n), p))
        .collect())
}
