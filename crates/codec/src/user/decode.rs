//! Decoding input as a message of the user's schemas: binary (raw or gzip),
//! text format or proto3 JSON, the type named or ranked.

use protobuf::MessageDyn;

use crate::auto::AutoDecoded;
use crate::binary::inflate::inflate_input;
use crate::binary::message::{DecodeOptions, Decoded};
use crate::error::CodecError;
use crate::form::{textual_form, Form};
use crate::user::detect::{rank, Ranked};
use crate::user::load::SchemaSet;

/// A message of the user's schemas and how it was recognised.
#[derive(Debug)]
pub struct UserDecoded {
    /// The message, its form and type, as every decode gives them.
    pub decoded: AutoDecoded,
    /// Every type the input fits, best first, when the type was detected;
    /// empty when it was named.
    pub ranked: Vec<Ranked>,
}

/// What an input is, before it is decoded: its bytes (inflated), form and
/// type.
#[derive(Debug)]
pub struct Identified<'a> {
    /// The input, inflated when it was gzip.
    pub bytes: std::borrow::Cow<'a, [u8]>,
    /// Whether it was gzip.
    pub gzipped: bool,
    /// Binary, text format or JSON.
    pub form: Form,
    /// The type named, or the type it fits best.
    pub descriptor: protobuf::reflect::MessageDescriptor,
    /// Every type it fits, best first, when the type was detected.
    pub ranked: Vec<Ranked>,
}

/// The form and type of `input` as a message of `schemas`: of type
/// `type_name`, or of the type it fits best.
pub fn identify<'a>(
    input: &'a [u8],
    schemas: &SchemaSet,
    type_name: Option<&str>,
    limits: &crate::limits::Limits,
) -> Result<Identified<'a>, CodecError> {
    let (bytes, gzipped) = inflate_input(input, limits)?;
    if bytes.is_empty() && type_name.is_none() {
        return Err(CodecError::Empty);
    }
    let (form, descriptor, ranked) = match type_name {
        Some(name) => {
            let descriptor = schemas
                .message(name)
                .map_err(|e| CodecError::Schema(e.to_string()))?;
            (
                textual_form(&bytes).unwrap_or(Form::Binary),
                descriptor,
                Vec::new(),
            )
        }
        None => {
            let (form, ranked) = rank(&bytes, schemas, limits);
            let Some(best) = ranked.first() else {
                return Err(CodecError::Undetected(format!(
                    "{} input that fits none of the {} messages of the loaded schemas; --type names one",
                    form.name(),
                    schemas.messages().len()
                )));
            };
            (form, best.descriptor.clone(), ranked)
        }
    };
    Ok(Identified {
        bytes,
        gzipped,
        form,
        descriptor,
        ranked,
    })
}

/// Decodes `input` as a message of `schemas`: of type `type_name`, or of
/// the type it fits best.
pub fn decode(
    input: &[u8],
    schemas: &SchemaSet,
    type_name: Option<&str>,
    options: &DecodeOptions,
) -> Result<UserDecoded, CodecError> {
    let Identified {
        bytes,
        gzipped,
        form,
        descriptor,
        ranked,
    } = identify(input, schemas, type_name, &options.limits)?;
    let depth = options.limits.max_depth;
    let (form, decoded) = match form {
        Form::Text | Form::Json => {
            match decode_textual(&bytes, form, &descriptor, schemas, depth) {
                Ok(message) => (form, undecorated(message, gzipped)),
                // A named type's bytes that only look like text: binary, said so.
                Err(not_text) if type_name.is_some() => {
                    let Ok(mut decoded) = decode_binary(&bytes, &descriptor, options, gzipped)
                    else {
                        return Err(not_text);
                    };
                    decoded.warnings.insert(
                        0,
                        crate::error::Warning {
                            offset: None,
                            path: String::new(),
                            kind: crate::error::WarningKind::ReadAsBinary {
                                not_text: not_text.to_string(),
                            },
                        },
                    );
                    (Form::Binary, decoded)
                }
                Err(not_text) => return Err(not_text),
            }
        }
        _ => (form, decode_binary(&bytes, &descriptor, options, gzipped)?),
    };
    Ok(UserDecoded {
        decoded: AutoDecoded {
            form,
            descriptor,
            decoded,
        },
        ranked,
    })
}

/// `bytes` as text format or proto3 JSON of `descriptor`.
fn decode_textual(
    bytes: &[u8],
    form: Form,
    descriptor: &protobuf::reflect::MessageDescriptor,
    schemas: &SchemaSet,
    depth: u32,
) -> Result<Box<dyn MessageDyn>, CodecError> {
    let text = std::str::from_utf8(bytes).map_err(|e| CodecError::Text {
        line: 1,
        column: 1,
        detail: format!("not UTF-8 text: {e}"),
    })?;
    match form {
        Form::Json => crate::user::proto3_parse::parse(text, descriptor, schemas, depth),
        _ => crate::text::parse(text, descriptor, depth),
    }
}

/// A message read from text, with nothing to warn of.
fn undecorated(message: Box<dyn MessageDyn>, gzipped: bool) -> Decoded<Box<dyn MessageDyn>> {
    Decoded {
        message,
        warnings: Vec::new(),
        warnings_suppressed: 0,
        gzipped,
    }
}

/// `bytes` as binary protobuf of `descriptor`, unknown fields kept.
fn decode_binary(
    bytes: &[u8],
    descriptor: &protobuf::reflect::MessageDescriptor,
    options: &DecodeOptions,
    gzipped: bool,
) -> Result<Decoded<Box<dyn MessageDyn>>, CodecError> {
    if bytes.is_empty() && !options.allow_empty {
        return Err(CodecError::Empty);
    }
    let mut message = descriptor.new_instance();
    let mut warnings = crate::user::parse::merge(&mut *message, bytes, options.limits.max_depth)?;
    let suppressed = warnings.len().saturating_sub(options.max_warnings);
    warnings.truncate(options.max_warnings);
    Ok(Decoded {
        message,
        warnings,
        warnings_suppressed: suppressed,
        gzipped,
    })
}
