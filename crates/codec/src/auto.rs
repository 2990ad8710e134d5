//! Decoding an input whose form and type are unknown: detect, then decode
//! with the best candidate (or the type the caller names, which always wins).

use protobuf::reflect::MessageDescriptor;
use protobuf::MessageDyn;

use crate::binary::{decode_dynamic, DecodeOptions, Decoded};
use crate::detect::{detect_payload, inflate_input, textual_form, Form};
use crate::error::CodecError;
use crate::{json, registry, text};

/// A decoded message with how it was recognised.
#[derive(Debug)]
pub struct AutoDecoded {
    pub form: Form,
    pub descriptor: MessageDescriptor,
    pub decoded: Decoded<Box<dyn MessageDyn>>,
}

/// Decodes binary (raw or gzip), OTLP/JSON or text input. `type_name`, when
/// given, overrides detection of the message type (the form is still
/// detected). Framed streams are read with [`crate::frame::FrameReader`].
pub fn decode_any(
    input: &[u8],
    type_name: Option<&str>,
    options: &DecodeOptions,
) -> Result<AutoDecoded, CodecError> {
    let limits = &options.limits;
    let (bytes, gzipped) = inflate_input(input, limits)?;
    // With an explicit type only the form is needed, and detecting the type
    // (which may fail, e.g. on a damaged file) must not stand in the way.
    let (form, descriptor) = match type_name {
        Some(name) => (
            textual_form(&bytes).unwrap_or(Form::Binary),
            registry::message_descriptor(name)?,
        ),
        None => {
            let detection = detect_payload(&bytes, gzipped, limits)?;
            let best = detection.best().ok_or_else(|| {
                CodecError::Undetected(format!(
                    "{} input, but no protoprof message type fits it",
                    detection.form.name()
                ))
            })?;
            (
                detection.form,
                registry::message_descriptor(best.full_name)?,
            )
        }
    };
    let mut decoded = match form {
        Form::Binary => decode_dynamic(&bytes, &descriptor, options)?,
        Form::Json | Form::Text => {
            let text = std::str::from_utf8(&bytes)
                .map_err(|e| CodecError::Undetected(format!("not UTF-8 text: {e}")))?;
            let message = if form == Form::Json {
                json::parse(text, &descriptor, limits.max_depth)?
            } else {
                text::parse(text, &descriptor, limits.max_depth)?
            };
            Decoded {
                message,
                warnings: Vec::new(),
                warnings_suppressed: 0,
                gzipped,
            }
        }
        Form::GrpcFrames | Form::DelimitedFrames => {
            return Err(CodecError::Undetected(format!(
                "this is a stream of {}; read it frame by frame",
                form.name()
            )))
        }
    };
    decoded.gzipped = gzipped;
    Ok(AutoDecoded {
        form,
        descriptor,
        decoded,
    })
}
