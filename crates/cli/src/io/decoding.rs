//! How every command decodes and encodes: the run's limits, forced OTLP
//! revision and the user's own schemas.

use protobuf::reflect::MessageDescriptor;
use protobuf::MessageDyn;
use protoprof_codec::otlp::revision::OtlpRevision;
use protoprof_codec::user::{SchemaSet, SchemaSources};
use protoprof_codec::{AutoDecoded, DecodeOptions, Limits};

use super::warnings::print_warnings;
use crate::cli::Encoding;
use crate::error::{CliError, Context, Result};

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
pub(super) fn decode_user(
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
