//! What the receiver makes of one request's body: decoded with the codec
//! (any wire revision the codec reads, upgraded), validated, summed up, and
//! the answer it earns: accepted, partly rejected (a rule broken: the
//! profiles it concerns are counted in `partial_success`), or undecodable.

use std::collections::BTreeSet;

use protoprof_codec::detect::Form;
use protoprof_codec::otlp::development_view::DevelopmentView;
use protoprof_codec::otlp::revision::{identify, OtlpRevision};
use protoprof_codec::{decode_view_in_form, AutoView, DecodeOptions, Limits, WarningKind};
use protoprof_model_otlp::opentelemetry::proto::collector::profiles::v1development::ExportProfilesServiceRequest;
use protoprof_model_otlp::opentelemetry::proto::common::v1::{any_value, KeyValue};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development::ProfilesData;
use protoprof_pprof_bridge::{data_samples, DevelopmentSource};
use protoprof_validate::{validate_development_parts, Options, Report, Severity};
use serde::Serialize;

use crate::Counts;

/// The export request's full name: what every body is read as.
pub const EXPORT_REQUEST: &str =
    "opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest";

/// How a body is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BodyEncoding {
    /// Binary protobuf (`application/x-protobuf`, and every gRPC request).
    Protobuf,
    /// The OTLP JSON mapping (`application/json`).
    Json,
}

impl BodyEncoding {
    /// The media type OTLP/HTTP gives it.
    pub fn content_type(self) -> &'static str {
        match self {
            BodyEncoding::Protobuf => "application/x-protobuf",
            BodyEncoding::Json => "application/json",
        }
    }

    /// The encoding of a `Content-Type` value (parameters ignored, case
    /// folded), if OTLP/HTTP has one for it.
    pub fn of_content_type(value: &str) -> Option<BodyEncoding> {
        let media = value.split(';').next()?.trim();
        [BodyEncoding::Protobuf, BodyEncoding::Json]
            .into_iter()
            .find(|e| media.eq_ignore_ascii_case(e.content_type()))
    }
}

/// What one request held and what validation found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    /// Each resource's `service.name` (`""` when it has none), in order.
    pub services: Vec<String>,
    /// Profiles and samples in the request.
    #[serde(flatten)]
    pub counts: Counts,
    /// The opentelemetry-proto releases whose wire form the body has.
    pub revision: String,
    /// Validation errors and warnings.
    pub errors: u64,
    /// Validation warnings.
    pub warnings: u64,
    /// The first error, `CODE at path: message`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
}

/// The answer a request earns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// Decoded and valid: an empty `partial_success`.
    Accepted,
    /// Decoded, but breaking a rule: `partial_success` with the profiles
    /// rejected and a message naming the rule and path.
    Rejected {
        /// `rejected_profiles`.
        rejected_profiles: i64,
        /// `error_message`.
        error_message: String,
    },
    /// Not a request at all: `INVALID_ARGUMENT` (HTTP 400).
    Undecodable {
        /// What the codec said.
        message: String,
    },
    /// Valid, but it could not be kept: `UNAVAILABLE` (HTTP 503), so the
    /// exporter retries.
    Unavailable {
        /// Why it was not kept.
        message: String,
    },
}

/// A request as the check read it, for a keeper to take its profiles
/// from without reading the body again.
pub enum ReadRequest<'a> {
    /// Binary, of the current revision: its samples left in the body.
    View(Box<protoprof_codec::Decoded<DevelopmentView<'a>>>),
    /// JSON, or an earlier revision upgraded: decoded in full.
    Data(ProfilesData),
}

impl ReadRequest<'_> {
    /// The request's resources and dictionary, and its samples and
    /// stacks, as the bridge converts them.
    pub fn with_parts<T>(&self, with: impl FnOnce(&ProfilesData, &DevelopmentSource) -> T) -> T {
        match self {
            ReadRequest::View(view) => with(view.message.data(), &view.message),
            ReadRequest::Data(data) => with(data, &data_samples(data)),
        }
    }
}

/// Reads and judges one decompressed body.
pub fn check(body: &[u8], encoding: BodyEncoding, limits: &Limits) -> (Summary, Verdict) {
    let (summary, verdict, _) = check_and_read(body, encoding, limits);
    (summary, verdict)
}

/// [`check`], with the request as it was read when it decoded.
pub fn check_and_read<'a>(
    body: &'a [u8],
    encoding: BodyEncoding,
    limits: &Limits,
) -> (Summary, Verdict, Option<ReadRequest<'a>>) {
    let mut summary = Summary::default();
    let undecodable = |summary, message| (summary, Verdict::Undecodable { message }, None);
    // An empty binary body is an empty request, as protobuf reads it; an
    // empty JSON body is no JSON at all (the Collector: 400).
    if encoding == BodyEncoding::Json && body.iter().all(u8::is_ascii_whitespace) {
        let message = "the JSON body is empty: a request is a JSON object".to_string();
        return undecodable(summary, message);
    }
    if let Some(message) = not_a_request_at_all(body, encoding, limits) {
        return undecodable(summary, message);
    }
    let (revision, read) = read_and_validate(body, encoding, limits, &mut summary);
    let (report, first_warning, read) = match read {
        Ok(read) => read,
        Err(message) => {
            let message = format!("{message}{}", pprof_hint(body, encoding, limits));
            return undecodable(Summary::default(), message);
        }
    };
    summary.revision = revision.releases().to_string();
    summary.errors = report.errors;
    summary.warnings = report.warnings;
    summary.first_error = first_error(&report);
    // Read without error, yet nothing in it is a profile and something in
    // it is not of the schema: bytes of another kind that happened to
    // parse, which must not be acknowledged as delivered.
    let not_of_the_schema = first_warning.or_else(|| {
        let d = report
            .diagnostics
            .iter()
            .find(|d| d.code != protoprof_validate::rules::DEV_EMPTY.code)?;
        Some(format!("{} at {}: {}", d.code, d.path, d.message))
    });
    if let (0, Some(why)) = (summary.counts.profiles, not_of_the_schema) {
        let message = format!(
            "nothing in the body is an OTLP profile: {} bytes read as an {EXPORT_REQUEST} \
             with no profile, and {why}{}",
            body.len(),
            pprof_hint(body, encoding, limits)
        );
        return undecodable(Summary::default(), message);
    }
    let verdict = verdict(&report, summary.counts.profiles);
    (summary, verdict, Some(read))
}

/// A request read and validated: the report, the decoder's first
/// warning, and the request.
type Validated<'a> = (Report, Option<String>, ReadRequest<'a>);

/// What a decoded request's validation found, and the decoder's first
/// warning; the wire revision it was read as. `Err` names why it did not
/// decode.
fn read_and_validate<'a>(
    body: &'a [u8],
    encoding: BodyEncoding,
    limits: &Limits,
    summary: &mut Summary,
) -> (OtlpRevision, Result<Validated<'a>, String>) {
    let revision = match encoding {
        BodyEncoding::Protobuf => identify(body).0,
        BodyEncoding::Json => OtlpRevision::V1_10,
    };
    let options = DecodeOptions {
        limits: *limits,
        // Validation follows: the view sums up its stacks as it reads them.
        sample_summary: true,
        allow_empty: true,
        otlp_revision: Some(revision),
        ..DecodeOptions::default()
    };
    let form = match encoding {
        BodyEncoding::Protobuf => Form::Binary,
        BodyEncoding::Json => Form::Json,
    };
    let decoded = match decode_view_in_form(body, form, EXPORT_REQUEST, &options) {
        Ok(decoded) => decoded,
        Err(e) => return (revision, Err(e.to_string())),
    };
    let first_warning = decoded
        .warnings()
        .iter()
        .find(|w| !matches!(w.kind, WarningKind::RevisionUpgraded { .. }))
        .map(ToString::to_string);
    let read = match decoded {
        AutoView::Development(view) => ReadRequest::View(view),
        other => match as_data(other) {
            Some(data) => ReadRequest::Data(data),
            None => return (revision, Err(format!("not an {EXPORT_REQUEST}"))),
        },
    };
    let report = read.with_parts(|data, parts| {
        count(summary, data, parts);
        validate_development_parts(data, parts, &Options::default())
    });
    (revision, Ok((report, first_warning, read)))
}

/// Why `body` cannot be a request in `encoding`, when that shows before it
/// is read: gzip bytes (which the Collector does not inflate unless
/// `Content-Encoding` says so; protobuf has no wire type 7, so they are
/// never a message).
fn not_a_request_at_all(body: &[u8], encoding: BodyEncoding, limits: &Limits) -> Option<String> {
    if !protoprof_codec::gzip::is_gzip(body) {
        return None;
    }
    let what = match encoding {
        BodyEncoding::Protobuf => "protobuf",
        BodyEncoding::Json => "JSON",
    };
    Some(format!(
        "the body is gzip-compressed, not {what}: declare it with `Content-Encoding: gzip` \
         (gRPC: `grpc-encoding: gzip`){}",
        pprof_hint(body, encoding, limits)
    ))
}

/// `; the bytes are a pprof profile …` when binary `body` (inflated if
/// gzip) fits pprof best, else nothing.
fn pprof_hint(body: &[u8], encoding: BodyEncoding, limits: &Limits) -> &'static str {
    if encoding == BodyEncoding::Json && !protoprof_codec::gzip::is_gzip(body) {
        return "";
    }
    let detected = protoprof_codec::detect::detect(body, limits);
    let best = detected.ok().and_then(|d| d.best().map(|c| c.full_name));
    match best {
        Some("perftools.profiles.Profile") => {
            "; the bytes are a pprof profile, which OTLP receivers do not take: \
             `protoprof send` converts pprof to OTLP and exports it"
        }
        _ => "",
    }
}

/// The services, profiles and samples of `data`, whose samples `parts`
/// reads (the view's bytes, or the model's).
fn count(summary: &mut Summary, data: &ProfilesData, parts: &DevelopmentSource) {
    summary.services = services(data);
    summary.counts = Counts::of((0..parts.profile_count()).map(|n| parts.sample_count(n)));
}

/// A request the codec read into its model (not its view: JSON it could
/// not take straight to protobuf bytes), as the `ProfilesData` of the same
/// wire form.
fn as_data(view: AutoView) -> Option<ProfilesData> {
    let decoded = view.into_decoded();
    let request = decoded
        .decoded
        .message
        .downcast_box::<ExportProfilesServiceRequest>()
        .ok()?;
    let request = *request;
    Some(ProfilesData {
        resource_profiles: request.resource_profiles,
        dictionary: request.dictionary,
        special_fields: request.special_fields,
    })
}

/// Each resource's `service.name`, its key and value inline or in the
/// dictionary's string table (as the Collector writes them).
fn services(data: &ProfilesData) -> Vec<String> {
    let strings = data.dictionary.as_ref().map(|d| &d.string_table[..]);
    let string = |index: i32| {
        let strings = strings.unwrap_or_default();
        usize::try_from(index)
            .ok()
            .and_then(|i| strings.get(i))
            .cloned()
    };
    data.resource_profiles
        .iter()
        .map(|resource| {
            let attributes = resource.resource.as_ref().map(|r| &r.attributes[..]);
            let is_service = |kv: &&KeyValue| match kv.key.is_empty() {
                true => string(kv.key_strindex).as_deref() == Some("service.name"),
                false => kv.key == "service.name",
            };
            let found = attributes.unwrap_or_default().iter().find(is_service);
            let name = found.and_then(|kv| match &kv.value.value {
                Some(any_value::Value::StringValue(s)) => Some(s.clone()),
                Some(any_value::Value::StringValueStrindex(i)) => string(*i),
                _ => None,
            });
            name.unwrap_or_default()
        })
        .collect()
}

fn first_error(report: &Report) -> Option<String> {
    let d = report
        .diagnostics
        .iter()
        .find(|d| d.severity == Severity::Error)?;
    Some(format!("{} at {}: {}", d.code, d.path, d.message))
}

/// Every error inside one profile rejects that profile; an error anywhere
/// else (the dictionary, a resource) rejects them all.
fn verdict(report: &Report, profiles: usize) -> Verdict {
    if report.errors == 0 {
        return Verdict::Accepted;
    }
    let mut rejected = BTreeSet::new();
    let mut all = report.errors > report.diagnostics.len() as u64;
    for d in report
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
    {
        match profile_of(&d.path) {
            Some(at) => {
                rejected.insert(at);
            }
            None => all = true,
        }
    }
    let rejected_profiles = if all { profiles } else { rejected.len() }.max(1) as i64;
    let first = first_error(report).unwrap_or_default();
    let more = report.errors - 1;
    let error_message = match more {
        0 => first,
        n => format!("{first} (and {n} more)"),
    };
    Verdict::Rejected {
        rejected_profiles,
        error_message,
    }
}

/// `[r, s, p]` of a path under `resource_profiles[r].scope_profiles[s].profiles[p]`.
fn profile_of(path: &str) -> Option<[usize; 3]> {
    let mut at = [0; 3];
    let mut rest = path;
    for (n, name) in ["resource_profiles[", ".scope_profiles[", ".profiles["]
        .iter()
        .enumerate()
    {
        rest = rest.strip_prefix(name)?;
        let end = rest.find(']')?;
        at[n] = rest[..end].parse().ok()?;
        rest = &rest[end + 1..];
    }
    Some(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_names_its_profile() {
        let path = "resource_profiles[1].scope_profiles[0].profiles[2].samples[3].stack_index";
        assert_eq!(profile_of(path), Some([1, 0, 2]));
        assert_eq!(profile_of("dictionary.stack_table[0]"), None);
        assert_eq!(profile_of("resource_profiles[0].resource"), None);
    }

    #[test]
    fn garbage_is_undecodable() {
        let (_, verdict) = check(b"garbage!", BodyEncoding::Protobuf, &Limits::DEFAULT);
        assert!(
            matches!(verdict, Verdict::Undecodable { .. }),
            "{verdict:?}"
        );
        let (_, verdict) = check(b"xx", BodyEncoding::Json, &Limits::DEFAULT);
        assert!(
            matches!(verdict, Verdict::Undecodable { .. }),
            "{verdict:?}"
        );
    }

    #[test]
    fn an_empty_request_is_accepted() {
        let (summary, verdict) = check(b"", BodyEncoding::Protobuf, &Limits::DEFAULT);
        assert_eq!(verdict, Verdict::Accepted);
        assert_eq!(summary.counts.profiles, 0);
        let (_, verdict) = check(b"{}", BodyEncoding::Json, &Limits::DEFAULT);
        assert_eq!(verdict, Verdict::Accepted);
        let (_, verdict) = check(b" ", BodyEncoding::Json, &Limits::DEFAULT);
        assert!(
            matches!(verdict, Verdict::Undecodable { .. }),
            "{verdict:?}"
        );
    }
}
