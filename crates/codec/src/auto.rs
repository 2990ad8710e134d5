//! Decoding an input whose form and type are unknown: detect, then decode
//! with the best candidate (or the type the caller names, which always wins).

use std::borrow::Cow;

use protobuf::reflect::MessageDescriptor;
use protobuf::{MessageDyn, MessageFull};

use crate::binary::inflate::inflate_input;
use crate::binary::message::{DecodeOptions, Decoded};
use crate::detect::detect_payload;
use crate::error::CodecError;
use crate::form::{textual_form, Form};
use crate::messages::decode_dynamic;
use crate::otlp::development_view::{development_view_of_inflated, DevelopmentView};
use crate::otlp::experimental_view::{experimental_view_of_inflated, ExperimentalView};
use crate::otlp::revision::OtlpRevision;
use crate::otlp::upgrade as otlp_upgrade;
use crate::pprof::view::{view_of_inflated, PprofView};
use crate::PprofProfile;
use crate::{json, registry, text};
use protoprof_model_otlp::opentelemetry::proto::collector::profiles::v1development::ExportProfilesServiceRequest as DevelopmentRequest;
use protoprof_model_otlp::opentelemetry::proto::collector::profiles::v1experimental::ExportProfilesServiceRequest as ExperimentalRequest;
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development::ProfilesData as DevelopmentData;
use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental::ProfilesData as ExperimentalData;

/// A decoded message with how it was recognised.
#[derive(Debug)]
pub struct AutoDecoded {
    /// The encoding the input was in.
    pub form: Form,
    /// The message type it was decoded as.
    pub descriptor: MessageDescriptor,
    /// The message and the reader's warnings.
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
    let (bytes, gzipped) = inflate_input(input, &options.limits)?;
    if let Some(profile) = legacy(&bytes, gzipped, type_name) {
        let decoded = profile?;
        return Ok(AutoDecoded {
            form: Form::Legacy,
            descriptor: PprofProfile::descriptor(),
            decoded: Decoded {
                message: Box::new(decoded.message),
                warnings: decoded.warnings,
                warnings_suppressed: 0,
                gzipped,
            },
        });
    }
    let (form, descriptor, revision) = form_and_type(&bytes, gzipped, type_name, options)?;
    decode_upgraded(&bytes, gzipped, (form, descriptor, revision), options)
}

/// A legacy profile (gperftools CPU) read into the pprof model, when the
/// input is one and no other type is asked for.
fn legacy(
    bytes: &[u8],
    gzipped: bool,
    type_name: Option<&str>,
) -> Option<Result<Decoded<PprofProfile>, CodecError>> {
    if type_name.is_some_and(|t| t != PprofProfile::descriptor().full_name()) {
        return None;
    }
    let parsed = crate::legacy::cpu::parse_cpu(bytes)
        .or_else(|| crate::legacy::java::parse_java_cpu(bytes))
        .or_else(|| crate::legacy::heap::parse_heap(bytes))
        .or_else(|| crate::legacy::count::parse_count(bytes))
        .or_else(|| crate::legacy::thread::parse_thread(bytes))
        .or_else(|| crate::legacy::contention::parse_contention(bytes))
        .or_else(|| crate::legacy::java::parse_java_text(bytes))?;
    Some(
        parsed
            .map(|message| Decoded {
                message,
                warnings: Vec::new(),
                warnings_suppressed: 0,
                gzipped,
            })
            .map_err(|e| CodecError::Decode {
                message: Form::Legacy.name().into(),
                detail: e.0,
            }),
    )
}

/// An input decoded as [`decode_any`] decodes it, except that binary pprof
/// is read into a [`PprofView`] (samples left in the bytes, for validation,
/// conversion and analysis of large profiles).
#[derive(Debug)]
pub enum AutoView<'a> {
    /// Boxed: the view is large beside the other variant.
    Pprof(Box<Decoded<PprofView<'a>>>),
    /// Binary OTLP v1development `ProfilesData` or export request (any
    /// revision, upgraded).
    Development(Box<Decoded<DevelopmentView<'a>>>),
    /// Binary OTLP v1experimental `ProfilesData` or export request.
    Experimental(Box<Decoded<ExperimentalView<'a>>>),
    /// Anything else, decoded in full.
    Other(AutoDecoded),
}

impl<'a> AutoView<'a> {
    /// What the reader noticed on the way (the warnings kept), whichever
    /// way it read the input.
    pub fn warnings(&self) -> &[crate::error::Warning] {
        match self {
            AutoView::Pprof(view) => &view.warnings,
            AutoView::Development(view) => &view.warnings,
            AutoView::Experimental(view) => &view.warnings,
            AutoView::Other(other) => &other.decoded.warnings,
        }
    }

    /// The same input with an OTLP view (of either package) decoded in
    /// full (an `Other`), for commands that read OTLP as whole messages.
    pub fn without_otlp_views(self) -> AutoView<'a> {
        match self {
            view @ (AutoView::Development(_) | AutoView::Experimental(_)) => {
                AutoView::Other(view.into_decoded())
            }
            view => view,
        }
    }

    /// The input decoded in full, for commands that need the whole message:
    /// binary pprof and OTLP views become their models.
    pub fn into_decoded(self) -> AutoDecoded {
        fn whole<V>(
            view: Decoded<V>,
            form: Form,
            into: impl FnOnce(V) -> Box<dyn MessageDyn>,
        ) -> AutoDecoded {
            let message = into(view.message);
            AutoDecoded {
                form,
                descriptor: message.descriptor_dyn(),
                decoded: Decoded {
                    message,
                    warnings: view.warnings,
                    warnings_suppressed: view.warnings_suppressed,
                    gzipped: view.gzipped,
                },
            }
        }
        match self {
            AutoView::Pprof(view) => whole(*view, Form::Binary, |v| Box::new(v.into_profile())),
            AutoView::Development(view) => {
                let form = view.message.form();
                whole(*view, form, DevelopmentView::into_message)
            }
            AutoView::Experimental(view) => {
                let form = view.message.form();
                whole(*view, form, ExperimentalView::into_message)
            }
            AutoView::Other(decoded) => decoded,
        }
    }
}

/// [`decode_any`], with binary pprof read into a [`PprofView`], binary
/// OTLP v1development `ProfilesData` into a [`DevelopmentView`] and binary
/// v1experimental `ProfilesData` into an [`ExperimentalView`]. The input
/// is borrowed (`&[u8]`) or given (`Vec<u8>`): given input becomes the
/// view's own, and gzip input given is freed once inflated.
pub fn decode_any_view<'a>(
    input: impl Into<Cow<'a, [u8]>>,
    type_name: Option<&str>,
    options: &DecodeOptions,
) -> Result<AutoView<'a>, CodecError> {
    let (bytes, gzipped) = crate::binary::inflate::inflate_owned(input.into(), &options.limits)?;
    if let Some(profile) = legacy(&bytes, gzipped, type_name) {
        let decoded = profile?;
        return Ok(AutoView::Pprof(Box::new(Decoded {
            message: PprofView::from_profile(decoded.message),
            warnings: decoded.warnings,
            warnings_suppressed: 0,
            gzipped,
        })));
    }
    let form_and_type = form_and_type(&bytes, gzipped, type_name, options)?;
    view_in_form(bytes, gzipped, form_and_type, options)
}

/// `input` read as `type_name` in `form`, as a peer that declares both
/// (an OTLP receiver, by media type and encoding) reads it: nothing
/// inflated or detected, so gzip bytes are not protobuf and text is not
/// JSON. Otherwise as [`decode_any_view`].
pub fn decode_view_in_form<'a>(
    input: impl Into<Cow<'a, [u8]>>,
    form: Form,
    type_name: &str,
    options: &DecodeOptions,
) -> Result<AutoView<'a>, CodecError> {
    let input = input.into();
    if input.len() as u64 > options.limits.max_input_bytes {
        return Err(CodecError::InputTooLarge {
            size: input.len() as u64,
            limit: options.limits.max_input_bytes,
        });
    }
    let descriptor = registry::message_descriptor(type_name)?;
    view_in_form(input, false, (form, descriptor, None), options)
}

/// Inflated `bytes` of a known form and type, read into the view that
/// type has, or in full.
fn view_in_form<'a>(
    bytes: Cow<'a, [u8]>,
    gzipped: bool,
    (form, descriptor, revision): (Form, MessageDescriptor, Option<OtlpRevision>),
    options: &DecodeOptions,
) -> Result<AutoView<'a>, CodecError> {
    if form == Form::Binary && descriptor == PprofProfile::descriptor() {
        return view_of_inflated(bytes, gzipped, options)
            .map(|view| AutoView::Pprof(Box::new(view)));
    }
    let export_request = descriptor == DevelopmentRequest::descriptor();
    let development = export_request || descriptor == DevelopmentData::descriptor();
    if form == Form::Binary && development {
        return development_view(bytes, gzipped, (revision, export_request), options);
    }
    let experimental_request = descriptor == ExperimentalRequest::descriptor();
    let experimental = experimental_request || descriptor == ExperimentalData::descriptor();
    if form == Form::Binary && experimental {
        let view = experimental_view_of_inflated(bytes, gzipped, experimental_request, options)?;
        return Ok(AutoView::Experimental(Box::new(view)));
    }
    let export_request = export_request || experimental_request;
    if form == Form::Json && (development || experimental) {
        // Straight to protobuf bytes, then read as binary is.
        let text = std::str::from_utf8(&bytes).ok();
        if let Some(wire) = text.and_then(|t| json_as_binary(t, &descriptor, options)) {
            if let Some(view) = json_view(wire, gzipped, (development, export_request), options) {
                return Ok(view);
            }
        }
    }
    decode_upgraded(&bytes, gzipped, (form, descriptor, revision), options).map(AutoView::Other)
}

/// The form of inflated input, and its message type: `type_name` or the
/// best detected.
fn form_and_type(
    bytes: &[u8],
    gzipped: bool,
    type_name: Option<&str>,
    options: &DecodeOptions,
) -> Result<(Form, MessageDescriptor, Option<OtlpRevision>), CodecError> {
    let limits = &options.limits;
    // With an explicit type only the form is needed, and detecting the type
    // (which may fail, e.g. on a damaged file) must not stand in the way.
    Ok(match type_name {
        Some(name) => (
            textual_form(bytes).unwrap_or(Form::Binary),
            registry::message_descriptor(name)?,
            None,
        ),
        None => {
            let detection = detect_payload(bytes, gzipped, limits)?;
            let best = detection.best().ok_or_else(|| {
                CodecError::Undetected(format!(
                    "{} input, but no protoprof message type fits it",
                    detection.form.name()
                ))
            })?;
            (
                detection.form,
                registry::message_descriptor(best.full_name)?,
                detection.otlp_revision,
            )
        }
    })
}

/// Parses OTLP/JSON into a new message of type `descriptor`: straight to
/// protobuf bytes and decoded as binary input is (see `json::to_binary`), or,
/// for what that path does not take, by [`json::parse`], which reads the
/// same documents into the same message and reports errors with paths.
/// Keys that name no field are dropped with a warning each (see
/// [`json::parse_with_warnings`]).
pub fn decode_json(
    text: &str,
    descriptor: &MessageDescriptor,
    options: &DecodeOptions,
) -> Result<Decoded<Box<dyn MessageDyn>>, CodecError> {
    let direct = json_as_binary(text, descriptor, options)
        .and_then(|wire| decode_dynamic(&wire, descriptor, options).ok())
        .filter(|decoded| decoded.warnings.is_empty());
    if let Some(decoded) = direct {
        return Ok(decoded);
    }
    let (message, warnings) =
        json::parse_with_warnings(text, descriptor, options.limits.max_depth)?;
    Ok(Decoded {
        message,
        warnings,
        warnings_suppressed: 0,
        gzipped: false,
    })
}

/// OTLP/JSON `text` as the protobuf bytes of `descriptor`'s message, when
/// the direct path takes it (see `json::to_binary`); `None` sends it to
/// `json::parse`, which reads the same and reports errors.
fn json_as_binary(
    text: &str,
    descriptor: &MessageDescriptor,
    options: &DecodeOptions,
) -> Option<Vec<u8>> {
    crate::json::to_binary::to_binary(text, descriptor, options.limits.max_depth)
        .filter(|wire| !wire.is_empty())
}

/// The view of OTLP/JSON read into protobuf `wire` bytes, of v1development
/// (`development`) or v1experimental; `None` when the bytes need a warning
/// (then the JSON is read the ordinary way, which reports it).
fn json_view(
    wire: Vec<u8>,
    gzipped: bool,
    (development, export_request): (bool, bool),
    options: &DecodeOptions,
) -> Option<AutoView<'static>> {
    let wire = Cow::Owned(wire);
    if development {
        let mut view = development_view_of_inflated(wire, gzipped, export_request, options).ok()?;
        view.message.form = Form::Json;
        let clean = view.warnings.is_empty();
        return clean.then(|| AutoView::Development(Box::new(view)));
    }
    let mut view = experimental_view_of_inflated(wire, gzipped, export_request, options).ok()?;
    view.message.form = Form::Json;
    let clean = view.warnings.is_empty();
    clean.then(|| AutoView::Experimental(Box::new(view)))
}

/// A [`DevelopmentView`] of `bytes`, an older revision upgraded first.
fn development_view<'a>(
    bytes: Cow<'a, [u8]>,
    gzipped: bool,
    (revision, export_request): (Option<OtlpRevision>, bool),
    options: &DecodeOptions,
) -> Result<AutoView<'a>, CodecError> {
    let revision = options.otlp_revision.or(revision);
    let Some((revision, upgraded)) = upgrade(&bytes, Form::Binary, revision) else {
        let view = development_view_of_inflated(bytes, gzipped, export_request, options)?;
        return Ok(AutoView::Development(Box::new(view)));
    };
    let upgraded = upgraded?;
    let warning = upgraded.warning(revision);
    let bytes = Cow::Owned(upgraded.bytes);
    let mut view = development_view_of_inflated(bytes, gzipped, export_request, options)?;
    view.warnings.insert(0, warning);
    Ok(AutoView::Development(Box::new(view)))
}

/// The rewrite of binary `bytes` of an older OTLP v1development
/// `revision` (detected, or forced by the options) into the current one.
fn upgrade(
    bytes: &[u8],
    form: Form,
    revision: Option<OtlpRevision>,
) -> Option<(OtlpRevision, Result<otlp_upgrade::Upgraded, CodecError>)> {
    let revision = revision.filter(|_| form == Form::Binary)?;
    otlp_upgrade::upgrade(bytes, revision).map(|u| (revision, u))
}

/// `decode_as`, after rewriting an older OTLP v1development revision into
/// the current one (with a warning saying so and what was dropped).
fn decode_upgraded(
    bytes: &[u8],
    gzipped: bool,
    (form, descriptor, revision): (Form, MessageDescriptor, Option<OtlpRevision>),
    options: &DecodeOptions,
) -> Result<AutoDecoded, CodecError> {
    // A forced revision applies to v1development types only.
    let forced = options
        .otlp_revision
        .filter(|_| descriptor.full_name().contains(".v1development."));
    let Some((revision, upgraded)) = upgrade(bytes, form, forced.or(revision)) else {
        return decode_as(bytes, gzipped, form, descriptor, options);
    };
    let upgraded = upgraded?;
    let mut decoded = decode_as(&upgraded.bytes, gzipped, form, descriptor, options)?;
    decoded
        .decoded
        .warnings
        .insert(0, upgraded.warning(revision));
    Ok(decoded)
}

fn decode_as(
    bytes: &[u8],
    gzipped: bool,
    form: Form,
    descriptor: MessageDescriptor,
    options: &DecodeOptions,
) -> Result<AutoDecoded, CodecError> {
    let limits = &options.limits;
    let mut decoded = match form {
        Form::Binary => decode_dynamic(bytes, &descriptor, options)?,
        Form::Json | Form::Text => {
            let text = std::str::from_utf8(bytes)
                .map_err(|e| CodecError::Undetected(format!("not UTF-8 text: {e}")))?;
            match form {
                Form::Json => decode_json(text, &descriptor, options)?,
                _ => Decoded {
                    message: text::parse(text, &descriptor, limits.max_depth)?,
                    warnings: Vec::new(),
                    warnings_suppressed: 0,
                    gzipped,
                },
            }
        }
        Form::GrpcFrames | Form::DelimitedFrames | Form::FileExporterFrames => {
            return Err(CodecError::Undetected(format!(
                "this is a stream of {}; read it frame by frame",
                form.name()
            )))
        }
        Form::Legacy => {
            return Err(CodecError::Undetected(
                "a legacy profile is read by decode_any, not as a message type".into(),
            ))
        }
    };
    decoded.gzipped = gzipped;
    Ok(AutoDecoded {
        form,
        descriptor,
        decoded,
    })
}
