//! What is this input? The form (gzip, JSON, text, framed, binary) and, for
//! binary, which top-level message it most likely is, with a confidence.
//!
//! Binary candidates are scored by a structural scan with each candidate's
//! layouts: a candidate whose scan fails is out; the others score by the
//! share of field occurrences (at every depth) their schema declares with
//! the right wire type. pprof gets a bonus for `string_table[0] == ""`.
//! OTLP profiles v1development (a later, incompatible package) is
//! recognised by its wire signals, and its wire revision identified
//! ([`crate::otlp::revision`]): the current one (v1.10/v1.11) is read, older
//! ones are named.

use protobuf::reflect::MessageDescriptor;
use serde_json::Value;

use protoprof_model_pprof::fields::perftools::profiles::profile;

use crate::binary::layout::Layouts;
use crate::binary::scan;
use crate::binary::wire::{self, LEN};
use crate::error::{CodecError, WarningKind, WireProblem};
use crate::form::textual_form;
use crate::frame::{is_framed, Framing};
use crate::limits::Limits;

pub use crate::binary::inflate::{inflate_input, inflate_owned};
pub use crate::form::Form;
use crate::otlp::revision::{self, OtlpRevision};
use crate::pruned;
use crate::{gzip, registry};

/// Top-level messages detection chooses among, most likely first on ties.
pub const CANDIDATES: [&str; 7] = [
    "perftools.profiles.Profile",
    "opentelemetry.proto.profiles.v1experimental.ProfilesData",
    "opentelemetry.proto.collector.profiles.v1experimental.ExportProfilesServiceRequest",
    "envoy.service.discovery.v3.DiscoveryRequest",
    "envoy.service.discovery.v3.DiscoveryResponse",
    "envoy.service.discovery.v3.DeltaDiscoveryRequest",
    "envoy.service.discovery.v3.DeltaDiscoveryResponse",
];

/// OTLP profiles v1development's top-level messages (one wire form). They
/// are candidates only when the input has v1development's shape: the
/// package's revisions differ on the wire, so the revision is identified
/// first.
pub const V1DEVELOPMENT: [&str; 2] = [
    "opentelemetry.proto.profiles.v1development.ProfilesData",
    "opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest",
];

/// A candidate message type and how well the input fits it.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// Full name of the message type.
    pub full_name: &'static str,
    /// 0 to 1.
    pub confidence: f64,
}

/// What [`detect`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct Detection {
    /// The input was gzip-compressed (detection looked at the inflated bytes).
    pub gzipped: bool,
    /// The encoding.
    pub form: Form,
    /// Candidates that fit, best first (empty when none does).
    pub candidates: Vec<Candidate>,
    /// For OTLP profiles v1development, its wire revision.
    pub otlp_revision: Option<OtlpRevision>,
}

impl Detection {
    /// The best candidate.
    pub fn best(&self) -> Option<&Candidate> {
        self.candidates.first()
    }
}

/// ProfilesData and ExportProfilesServiceRequest share one wire form.
fn same_wire_form(a: &str, b: &str) -> bool {
    let pair = [CANDIDATES[1], CANDIDATES[2]];
    pair.contains(&a) && pair.contains(&b)
}

/// Detects form and message type. Fails on input that cannot be any of
/// them, on a newer OTLP profiles version, and on limits.
pub fn detect(input: &[u8], limits: &Limits) -> Result<Detection, CodecError> {
    let (bytes, gzipped) = inflate_input(input, limits)?;
    detect_payload(&bytes, gzipped, limits)
}

/// Detects form and message type of bytes that are already inflated.
pub fn detect_payload(
    bytes: &[u8],
    gzipped: bool,
    limits: &Limits,
) -> Result<Detection, CodecError> {
    if bytes.is_empty() {
        return Err(CodecError::Empty);
    }
    if let Some(form) = textual_form(bytes) {
        let text = std::str::from_utf8(bytes).expect("checked by textual_form");
        let (candidates, otlp_revision) = match form {
            Form::Json => json_candidates(text)?,
            _ => (text_candidates(text, limits), None),
        };
        return Ok(Detection {
            gzipped,
            form,
            candidates,
            otlp_revision,
        });
    }
    // Telling types apart needs a representative part, not all of a large
    // input: the decode that follows checks the whole of it.
    let window = detection_window(bytes);
    if window.len() > 2 * WINDOW_BYTES {
        if let Some(detection) = detection_in_pruned(bytes, gzipped, limits) {
            return Ok(detection);
        }
    }
    if v1development_shape(window).is_some() {
        return v1development_detection(window, gzipped, limits);
    }
    let binary = match binary_candidates(window, limits) {
        Err(CodecError::UnsupportedVersion { .. }) => {
            return v1development_detection(window, gzipped, limits)
        }
        result => result?,
    };
    if binary.first().is_some_and(fits) {
        return Ok(Detection {
            gzipped,
            form: Form::Binary,
            candidates: binary,
            otlp_revision: None,
        });
    }
    for (framing, form) in [
        (Framing::Grpc, Form::GrpcFrames),
        (Framing::FileExporter, Form::FileExporterFrames),
        (Framing::VarintDelimited, Form::DelimitedFrames),
    ] {
        if is_framed(bytes, framing, limits.max_frame_bytes) {
            let first = crate::frame::FrameReader::new(bytes, framing, limits.max_frame_bytes)
                .find_map(|f| f.ok().filter(|f| !f.payload.is_empty()));
            let candidates = match first {
                Some(frame) => binary_candidates(&frame.payload, limits)?,
                None => Vec::new(),
            };
            return Ok(Detection {
                gzipped,
                form,
                candidates,
                otlp_revision: None,
            });
        }
    }
    if !gzipped && gzip::looks_like_zlib(bytes) {
        return Err(CodecError::Zlib);
    }
    if let Some(closest) = binary.first() {
        return Err(CodecError::Undetected(no_schema_fits(closest)));
    }
    Err(CodecError::Undetected(format!(
        "not gzip, JSON, text format or framed, and not a well-formed message of any protoprof schema; {}",
        furthest_failure(bytes, limits)
    )))
}

/// Detection on the pruned copy of `bytes` (`pruned.rs`), for input whose
/// detection window is most of it: OTLP holds all its samples in one
/// top-level field, and scanning all of it once per candidate type was most
/// of reading a large v1experimental profile. `None` to detect as before:
/// nothing to prune, or detection on the copy fails or finds nothing.
fn detection_in_pruned(bytes: &[u8], gzipped: bool, limits: &Limits) -> Option<Detection> {
    let copy = pruned::pruned(bytes, limits.max_depth, WINDOW_BYTES)?;
    let detection = match v1development_shape(&copy) {
        Some(_) => v1development_detection(&copy, gzipped, limits).ok()?,
        None => Detection {
            gzipped,
            form: Form::Binary,
            candidates: binary_candidates(&copy, limits).ok()?,
            otlp_revision: None,
        },
    };
    detection
        .candidates
        .first()
        .is_some_and(fits)
        .then_some(detection)
}

/// Below this share of its fields declared with the right wire type, a
/// detected type does not fit: any protobuf fits some envoy message a
/// little (strings and varints are everywhere), and reading a message of
/// the user's own schema as one of them would print nonsense and call it
/// valid.
const MIN_FIT: f64 = 0.5;

/// The candidate fits well enough to be read as it.
fn fits(candidate: &Candidate) -> bool {
    candidate.confidence >= MIN_FIT
}

/// What is said of well-formed protobuf that no protoprof type fits.
fn no_schema_fits(closest: &Candidate) -> String {
    format!(
        "well-formed protobuf, but no schema protoprof knows fits these bytes (closest: {} at \
         {:.0}%); `protoprof decode --raw` shows the fields, and `--proto FILE` names your schema",
        closest.full_name,
        100.0 * closest.confidence.max(0.0)
    )
}

/// Binary input with v1development's shape: its revision, and when that is
/// the current one, the two top-level messages as scored by a scan.
fn v1development_detection(
    bytes: &[u8],
    gzipped: bool,
    limits: &Limits,
) -> Result<Detection, CodecError> {
    let (revision, evidence) = revision::identify(bytes);
    if revision.is_upgradable() {
        // Read after the wire rewrite (crate::otlp::upgrade), which the
        // decoder does and warns about.
        return Ok(Detection {
            gzipped,
            form: Form::Binary,
            candidates: V1DEVELOPMENT
                .map(|full_name| Candidate {
                    full_name,
                    confidence: 1.0,
                })
                .to_vec(),
            otlp_revision: Some(revision),
        });
    }
    if !revision.is_current() {
        return Err(CodecError::UnsupportedVersion {
            found: format!(
                "OTLP profiles v1development of opentelemetry-proto {}",
                revision.releases()
            ),
            evidence: format!(
                "{evidence}; protoprof reads the current revision ({}) and does not yet upgrade \
                 older ones",
                OtlpRevision::V1_10.releases()
            ),
        });
    }
    let mut candidates = Vec::new();
    let mut scanned: Option<(std::sync::Arc<Layouts>, scan::ScanReport)> = None;
    for name in V1DEVELOPMENT {
        let layouts = Layouts::for_message(&registry::message_descriptor(name)?);
        // The two candidates are one message on the wire: one scan of a
        // large input is enough.
        let report = match scanned.take() {
            Some((seen, report)) if seen.same_wire_form(&layouts) => report,
            _ => scan::scan(bytes, &layouts, &scan_options(limits, 1000, false))
                .map_err(|error| malformed(bytes, name, &error, &layouts))?,
        };
        let confidence = confidence(name, bytes, &report);
        scanned = Some((layouts, report));
        if let Some(confidence) = confidence {
            candidates.push(Candidate {
                full_name: name,
                confidence,
            });
        }
    }
    Ok(Detection {
        gzipped,
        form: Form::Binary,
        candidates,
        otlp_revision: Some(revision),
    })
}

/// The scan error of the candidate that read furthest: usually the type the
/// input was meant to be, and the error the user needs.
fn furthest_failure(bytes: &[u8], limits: &Limits) -> String {
    let mut best: Option<(usize, String)> = None;
    for name in CANDIDATES {
        let Ok(descriptor) = registry::message_descriptor(name) else {
            continue;
        };
        let layouts = Layouts::for_message(&descriptor);
        if let Err(error) = scan::scan(bytes, &layouts, &scan_options(limits, 0, false)) {
            if best
                .as_ref()
                .is_none_or(|(offset, _)| error.offset > *offset)
            {
                let path = scan::path_at(bytes, &layouts, error.offset);
                let at = if path.is_empty() {
                    String::new()
                } else {
                    format!(" in {path}")
                };
                let text = format!(
                    "read as {name}: byte {}{at}: {}",
                    error.offset, error.problem
                );
                best = Some((error.offset, text));
            }
        }
    }
    best.map(|(_, text)| text).unwrap_or_default()
}

/// Inputs up to this size are detected whole.
const WINDOW_BYTES: usize = 4 << 20;

/// The first top-level fields of `bytes`, up to the first field boundary past
/// [`WINDOW_BYTES`]: still a well-formed message, and enough to tell types
/// apart. All of `bytes` when it is small or its top level does not parse.
fn detection_window(bytes: &[u8]) -> &[u8] {
    if bytes.len() <= 2 * WINDOW_BYTES {
        return bytes;
    }
    for field in wire::fields(bytes) {
        let Ok(field) = field else { return bytes };
        if field.end >= WINDOW_BYTES {
            return &bytes[..field.end];
        }
    }
    bytes
}

fn binary_candidates(bytes: &[u8], limits: &Limits) -> Result<Vec<Candidate>, CodecError> {
    let mut candidates = Vec::new();
    let mut failures = Vec::new();
    for name in CANDIDATES {
        let descriptor = registry::message_descriptor(name)?;
        let layouts = Layouts::for_message(&descriptor);
        let report = match scan::scan(bytes, &layouts, &scan_options(limits, 1000, false)) {
            Ok(report) => report,
            Err(error) => {
                failures.push((name, error, layouts));
                continue;
            }
        };
        let Some(confidence) = confidence(name, bytes, &report) else {
            continue;
        };
        candidates.push((
            Candidate {
                full_name: name,
                confidence,
            },
            report,
            layouts,
        ));
    }
    candidates.sort_by(|a, b| b.0.confidence.total_cmp(&a.0.confidence));
    weigh_strings_when_close(bytes, limits, &mut candidates);
    // A type the input fits only after repairs does not win over one whose
    // precise error explains the input: that input is broken, not the other
    // type. (Strings are weighed only then: well-formed input need not pay.)
    let explained = (!candidates.is_empty())
        .then(|| explaining_failure(bytes, &failures, limits))
        .flatten();
    if let Some((name, error, layouts)) = explained {
        let strict = scan_options(limits, 1000, true);
        let fits_only_repaired = |layouts: &Layouts| {
            scan::scan(bytes, layouts, &strict).map_or(true, |report| needs_repairs(&report))
        };
        // A candidate that declares under half of the input's fields barely fits either.
        let barely_fits = |candidate: &Candidate, layouts: &Layouts| {
            candidate.confidence < 0.5 || fits_only_repaired(layouts)
        };
        if candidates
            .iter()
            .all(|(candidate, _, layouts)| barely_fits(candidate, layouts))
        {
            return Err(malformed(bytes, name, error, layouts));
        }
    }
    // Only when OTLP fits best: other messages read as OTLP look odd too.
    if let Some((best, report, layouts)) = candidates.first() {
        if is_otlp(best.full_name) {
            if let Some(evidence) = otlp_v1development_evidence(bytes, report, layouts) {
                return Err(CodecError::UnsupportedVersion {
                    found: "OTLP profiles v1development (opentelemetry-proto 1.4 or later)".into(),
                    evidence,
                });
            }
        }
    }
    Ok(candidates
        .into_iter()
        .map(|(candidate, _, _)| candidate)
        .collect())
}

/// When other candidates come within the repair penalty of the best, the
/// leaders are scanned again with their strings weighed, and those whose
/// strings are not text pay the penalty: a message that swallows the input
/// in one string field (`version_info` holding binary) must not beat the
/// type whose structure the input has. Clear winners skip the second scan.
fn weigh_strings_when_close(
    bytes: &[u8],
    limits: &Limits,
    candidates: &mut [(Candidate, scan::ScanReport, std::sync::Arc<Layouts>)],
) {
    let Some(best) = candidates.first().map(|(c, _, _)| c.confidence) else {
        return;
    };
    let close = candidates
        .iter()
        .take_while(|(c, _, _)| best - c.confidence < REPAIR_PENALTY)
        .count();
    if close < 2 {
        return;
    }
    let strict = scan_options(limits, 1000, true);
    for (candidate, report, layouts) in &mut candidates[..close] {
        if needs_repairs(report) {
            continue; // already paid
        }
        if let Ok(weighed) = scan::scan(bytes, layouts, &strict) {
            if needs_repairs(&weighed) {
                candidate.confidence -= REPAIR_PENALTY;
                *report = weighed;
            }
        }
    }
    candidates.sort_by(|a, b| b.0.confidence.total_cmp(&a.0.confidence));
}

/// What fitting only after repairs costs a candidate's confidence.
const REPAIR_PENALTY: f64 = 0.25;

/// `bytes` are a broken `name`: where, and what is wrong.
fn malformed(bytes: &[u8], name: &str, error: &scan::ScanError, layouts: &Layouts) -> CodecError {
    CodecError::Malformed {
        message: name.to_string(),
        offset: error.offset as u64,
        path: scan::path_at(bytes, layouts, error.offset),
        problem: error.problem.clone(),
    }
}

/// Detection scans every level; `check_strings` also counts strings that are not text.
fn scan_options(limits: &Limits, max_warnings: usize, check_strings: bool) -> scan::ScanOptions {
    scan::ScanOptions {
        max_depth: limits.max_depth,
        max_warnings,
        descend: scan::ALL_LEVELS,
        check_strings,
    }
}

/// How well a scanned input fits `name`: the share of field occurrences the
/// schema declares with the right wire type, adjusted by the signals below;
/// `None` when nothing fits.
fn confidence(name: &str, bytes: &[u8], report: &scan::ScanReport) -> Option<f64> {
    let wrong_wire = report
        .warnings
        .iter()
        .filter(|w| matches!(w.kind, WarningKind::WrongWireType { .. }))
        .count();
    let total = report.known_fields + report.unknown_fields + 10 * wrong_wire as u64;
    if total == 0 || report.known_fields == 0 {
        return None;
    }
    let mut confidence = report.known_fields as f64 / total as f64;
    if name == CANDIDATES[0] {
        confidence = (confidence + pprof_string_table_bonus(bytes)).min(1.0);
    }
    // A request's node and a response's resources share field 2 and the
    // wire form; an Any (type URL first) decides.
    let any_in_field_2 =
        starts_with_type_url(bytes, &[2, 1]) || starts_with_type_url(bytes, &[2, 2, 1]);
    if any_in_field_2 && name.ends_with("DiscoveryRequest") {
        confidence -= 0.2; // a node whose id is a type URL: implausible
    }
    if needs_repairs(report) {
        // A singular field given several times, or (when the scan weighed
        // them) strings that are not text.
        confidence -= REPAIR_PENALTY;
    }
    Some(confidence)
}

/// The input fits only if read leniently: a singular field given several
/// times (the last would win), or string fields that are not text.
fn needs_repairs(report: &scan::ScanReport) -> bool {
    report.implausible_strings > 0
        || report
            .warnings
            .iter()
            .any(|w| matches!(w.kind, WarningKind::RepeatedSingularField { .. }))
}

/// The failed candidate whose error explains the input: one that is
/// well-formed down to the nesting limit, or else the one the input fits
/// best up to its break (the whole top-level fields before the failing
/// one), when that fit is close to perfect. A broken field inside an intact
/// frame (a packed run cut short) stops the scan early, yet what came
/// before it already says which type the input is.
fn explaining_failure<'f>(
    bytes: &[u8],
    failures: &'f [Failure],
    limits: &Limits,
) -> Option<&'f Failure> {
    let too_deep = failures
        .iter()
        .find(|(_, error, _)| matches!(error.problem, WireProblem::DepthExceeded { .. }));
    if too_deep.is_some() {
        return too_deep;
    }
    let fit_before_break = |(name, error, layouts): &Failure| {
        let prefix = &bytes[..top_level_boundary_before(bytes, error.offset)];
        if prefix.is_empty() {
            return 0.0;
        }
        scan::scan(prefix, layouts, &scan_options(limits, 1000, true))
            .ok()
            .and_then(|report| confidence(name, prefix, &report))
            .unwrap_or(0.0)
    };
    // On a tie the earlier candidate (the likelier type) is kept.
    failures
        .iter()
        .map(|failure| (fit_before_break(failure), failure))
        .filter(|(fit, _)| *fit >= 0.9)
        .reduce(|best, next| if next.0 > best.0 { next } else { best })
        .map(|(_, failure)| failure)
}

/// A candidate whose scan failed: its name, the error, its layouts.
type Failure = (&'static str, scan::ScanError, std::sync::Arc<Layouts>);

/// The end of the last whole top-level field that ends at or before `offset`.
fn top_level_boundary_before(bytes: &[u8], offset: usize) -> usize {
    let mut boundary = 0;
    for field in wire::fields(bytes) {
        match field {
            Ok(field) if field.end <= offset => boundary = field.end,
            _ => break,
        }
    }
    boundary
}

fn is_otlp(name: &str) -> bool {
    same_wire_form(name, CANDIDATES[1])
}

/// pprof's first string-table entry is the empty string: a strong signal.
fn pprof_string_table_bonus(bytes: &[u8]) -> f64 {
    for field in wire::fields(bytes) {
        let Ok(field) = field else { return 0.0 };
        if field.number == profile::STRING_TABLE && field.wire_type == LEN {
            return if field.value.is_empty() { 0.2 } else { 0.0 };
        }
    }
    0.0
}

/// Whether the string at `path` (field numbers, first occurrence at each
/// level) looks like a protobuf type URL (`type.googleapis.com/pkg.Type`).
fn starts_with_type_url(bytes: &[u8], path: &[u32]) -> bool {
    let mut current = bytes;
    for (depth, &want) in path.iter().enumerate() {
        let mut found = None;
        for field in wire::fields(current) {
            let Ok(field) = field else { return false };
            if field.number == want && field.wire_type == LEN {
                found = Some(field.value);
                break;
            }
        }
        let Some(payload) = found else { return false };
        if depth + 1 == path.len() {
            return std::str::from_utf8(payload).is_ok_and(|s| {
                let (host, name) = s.split_once('/').unwrap_or(("", ""));
                !host.is_empty()
                    && !name.is_empty()
                    && name.contains('.')
                    && !s.contains(char::is_whitespace)
            });
        }
        current = payload;
    }
    false
}

/// Wire signals of the later v1development revision read as v1experimental:
/// its export request has a top-level field 2 (the dictionary), and where
/// v1experimental has a ProfileContainer (fixed64 times in fields 2 and 3),
/// v1development has a Profile whose fields 2 and 3 are messages and varints.
fn otlp_v1development_evidence(
    bytes: &[u8],
    report: &scan::ScanReport,
    layouts: &Layouts,
) -> Option<String> {
    // The caller's scan read these bytes as v1experimental: every top-level field is whole.
    for field in wire::fields(bytes) {
        let field = field.ok()?;
        if field.number == 2 && field.wire_type == LEN {
            return Some("a top-level field 2 (v1development's ProfilesDictionary); v1experimental has only field 1".into());
        }
    }
    report.warnings.iter().find_map(|w| match w.kind {
        WarningKind::WrongWireType { field: field @ (2 | 3), found, .. } => {
            let path = scan::path_at(bytes, layouts, w.offset);
            path.contains(".profiles[").then(|| {
                format!(
                    "{path}: field {field} has wire type {found} where a v1experimental ProfileContainer has a \
                     fixed64 timestamp; v1development puts a Profile there"
                )
            })
        }
        _ => None,
    })
}

/// The OTLP envelope read without a schema (resource_profiles[0] ->
/// scope_profiles[0] -> profiles[0]), when `bytes` has that shape and what
/// sits in `profiles[0]` is not a v1experimental ProfileContainer.
fn v1development_shape(bytes: &[u8]) -> Option<String> {
    use crate::binary::wire::WireField;
    use crate::raw::{guess, reads_as_message, RawValue};
    // Field by field, as `raw::decode_raw(bytes, 6)` would read them, but
    // without building the tree: the input may be gigabytes.
    fn fields(bytes: &[u8]) -> Option<Vec<WireField<'_>>> {
        wire::fields(bytes).collect::<Result<_, _>>().ok()
    }
    fn message<'a>(fields: &[WireField<'a>], number: u32, depth_left: u32) -> Option<&'a [u8]> {
        fields
            .iter()
            .find(|f| {
                f.number == number && f.wire_type == LEN && reads_as_message(f.value, depth_left)
            })
            .map(|f| f.value)
    }
    let top = fields(bytes)?;
    if top.is_empty()
        || top
            .iter()
            .any(|f| f.number > 2 || f.wire_type != LEN || !reads_as_message(f.value, 6))
    {
        return None;
    }
    let resource = fields(message(&top, 1, 6)?)?;
    let scope = fields(message(&resource, 2, 5)?)?;
    let profile = fields(message(&scope, 2, 4)?)?;
    let fixed_times = profile
        .iter()
        .any(|f| f.number == 2 && f.wire_type == wire::FIXED64);
    let has_profile = message(&profile, 8, 3).is_some();
    let profile_id = profile.iter().any(|f| {
        f.number == 1
            && f.wire_type == LEN
            && f.value.len() == 16
            && matches!(guess(f.value, 0, 3), RawValue::Bytes(_))
    });
    let sample_type_message = message(&profile, 1, 3).is_some();
    if !(fixed_times || has_profile || profile_id) && sample_type_message {
        return Some(
            "resource_profiles[0].scope_profiles[0].profiles[0] holds a Profile (sample types in field 1, no \
             16-byte profile_id, fixed64 times or field 8), where v1experimental has a ProfileContainer"
                .into(),
        );
    }
    // A top-level field 2 next to a v1experimental-looking container is not evidence enough.
    let dictionary = message(&top, 2, 6).is_some() && !(has_profile || profile_id);
    dictionary.then(|| "a top-level field 2 (v1development's ProfilesDictionary); v1experimental has only field 1".into())
}

/// JSON: the candidate whose schema declares the most of the top-level keys.
fn json_candidates(text: &str) -> Result<(Vec<Candidate>, Option<OtlpRevision>), CodecError> {
    // Keys and first elements are all detection reads: no need to build
    // the whole document.
    let value: Value =
        crate::json::skeleton::parse(text.trim_start_matches('\u{feff}')).map_err(|e| {
            CodecError::Json {
                path: String::new(),
                line: e.line(),
                column: e.column(),
                detail: e.to_string(),
            }
        })?;
    let Value::Object(object) = &value else {
        return Ok((Vec::new(), None));
    };
    let mut names: &[&'static str] = &CANDIDATES;
    let mut revision = None;
    if let Some(evidence) = json_v1development_evidence(&value) {
        // JSON goes by names, which v1.9.0 to v1.11.0 share (v1.8.0's
        // `sample` and `line` are unknown names to the current model, an
        // error rather than a misreading): stacks mark them.
        if !has_stacks(&value) {
            return Err(CodecError::UnsupportedVersion {
                found: "OTLP profiles v1development older than opentelemetry-proto v1.8.0".into(),
                evidence: format!(
                    "{evidence}, without a stack table or stack indices; protoprof reads v1.8.0 \
                     and later in JSON"
                ),
            });
        }
        names = &V1DEVELOPMENT;
        revision = Some(OtlpRevision::V1_10);
    }
    let mut candidates = Vec::new();
    for &name in names {
        let descriptor = registry::message_descriptor(name)?;
        let known = object
            .keys()
            .filter(|k| descriptor.field_by_name_or_json_name(k).is_some())
            .count();
        if known > 0 {
            candidates.push(Candidate {
                full_name: name,
                confidence: known as f64 / object.len() as f64,
            });
        }
    }
    candidates.sort_by(|a, b| b.confidence.total_cmp(&a.confidence));
    Ok((candidates, revision))
}

/// A `stackTable` in the dictionary, or a `stackIndex` in the first sample:
/// v1development as of v1.8.0.
fn has_stacks(value: &Value) -> bool {
    let dictionary = value.get("dictionary");
    let in_dictionary =
        dictionary.is_some_and(|d| d.get("stackTable").or(d.get("stack_table")).is_some());
    let sample = value
        .pointer("/resourceProfiles/0/scopeProfiles/0/profiles/0/samples/0")
        .or_else(|| value.pointer("/resourceProfiles/0/scopeProfiles/0/profiles/0/sample/0"));
    in_dictionary || sample.is_some_and(|s| s.get("stackIndex").is_some())
}

fn json_v1development_evidence(value: &Value) -> Option<String> {
    if value.get("dictionary").is_some() {
        return Some("a top-level `dictionary` (v1development's ProfilesDictionary)".into());
    }
    let profile = value
        .get("resourceProfiles")?
        .get(0)?
        .get("scopeProfiles")?
        .get(0)?
        .get("profiles")?
        .get(0)?;
    let container_keys = [
        "profileId",
        "profile_id",
        "profile",
        "startTimeUnixNano",
        "start_time_unix_nano",
    ];
    let is_container = container_keys.iter().any(|k| profile.get(k).is_some());
    let profile_keys = [
        "sampleType",
        "sample_type",
        "sample",
        "timeUnixNano",
        "time_unix_nano",
    ];
    (!is_container && profile_keys.iter().any(|k| profile.get(k).is_some())).then(|| {
        "resourceProfiles[0].scopeProfiles[0].profiles[0] is a Profile, not a v1experimental ProfileContainer".into()
    })
}

/// Text format: the first candidate whose schema reads the whole text.
fn text_candidates(text: &str, limits: &Limits) -> Vec<Candidate> {
    CANDIDATES
        .iter()
        .filter_map(|name| {
            let descriptor: MessageDescriptor = registry::message_descriptor(name).ok()?;
            crate::text::parse(text, &descriptor, limits.max_depth).ok()?;
            Some(Candidate {
                full_name: name,
                confidence: 1.0,
            })
        })
        .collect()
}
