//! Which message of a user's schema an input is: every message the schema
//! declares is tried and ranked, as detection ranks the built-in types.

use protobuf::reflect::MessageDescriptor;

use crate::binary::layout::Layouts;
use crate::binary::scan::{self, ScanOptions, ALL_LEVELS};
use crate::error::WarningKind;
use crate::form::{textual_form, Form};
use crate::limits::Limits;
use crate::user::load::SchemaSet;

/// A message type the input fits, and how well.
#[derive(Debug, Clone)]
pub struct Ranked {
    /// The message type.
    pub descriptor: MessageDescriptor,
    /// From 0 to 1: for binary input, the share of field occurrences the
    /// type declares with the right wire type; for text and JSON, one over
    /// the number of types the input parses as.
    pub confidence: f64,
}

/// Detection reads at most this much of a binary input: enough to tell
/// types apart; the decode that follows reads all of it.
const WINDOW_BYTES: usize = 1 << 20;

/// The messages of `schemas` that `bytes` (inflated) fits, best first; the
/// form it is in. Empty when none fits.
pub fn rank(bytes: &[u8], schemas: &SchemaSet, limits: &Limits) -> (Form, Vec<Ranked>) {
    let mut ranked = match textual_form(bytes) {
        Some(form) => {
            let text = String::from_utf8_lossy(bytes);
            (form, textual(&text, form, schemas, limits))
        }
        None => (Form::Binary, binary(window(bytes), schemas, limits)),
    };
    // Best first; among equals the shorter name (the outer message) first.
    ranked.1.sort_by(|a, b| {
        b.confidence.total_cmp(&a.confidence).then_with(|| {
            a.descriptor
                .full_name()
                .len()
                .cmp(&b.descriptor.full_name().len())
        })
    });
    ranked
}

/// A prefix of `bytes` that ends at a top-level field boundary.
fn window(bytes: &[u8]) -> &[u8] {
    if bytes.len() <= WINDOW_BYTES {
        return bytes;
    }
    let mut end = 0;
    for field in crate::binary::wire::fields(bytes) {
        let Ok(field) = field else { break };
        if field.end > WINDOW_BYTES && end > 0 {
            break;
        }
        end = field.end;
    }
    &bytes[..end.max(1).min(bytes.len())]
}

fn binary(bytes: &[u8], schemas: &SchemaSet, limits: &Limits) -> Vec<Ranked> {
    let options = ScanOptions {
        max_depth: limits.max_depth,
        max_warnings: 1000,
        descend: ALL_LEVELS,
        check_strings: true,
    };
    schemas
        .messages()
        .iter()
        .filter_map(|descriptor| {
            let layouts = Layouts::for_message(descriptor);
            let report = scan::scan(bytes, &layouts, &options).ok()?;
            let confidence = confidence(&report)?;
            Some(Ranked {
                descriptor: descriptor.clone(),
                confidence,
            })
        })
        .collect()
}

/// The share of field occurrences declared with the right wire type (a
/// wrong wire type weighs ten); strings that are not text and singular
/// fields given twice cost a fifth.
fn confidence(report: &scan::ScanReport) -> Option<f64> {
    let wrong_wire = report
        .warnings
        .iter()
        .filter(|w| matches!(w.kind, WarningKind::WrongWireType { .. }))
        .count() as u64;
    let total = report.known_fields + report.unknown_fields + 10 * wrong_wire;
    if report.known_fields == 0 {
        return None;
    }
    let mut confidence = report.known_fields as f64 / total as f64;
    let repeated_singular = report
        .warnings
        .iter()
        .any(|w| matches!(w.kind, WarningKind::RepeatedSingularField { .. }));
    if report.implausible_strings > 0 || repeated_singular {
        confidence -= 0.2;
    }
    Some(confidence.max(0.0))
}

fn textual(text: &str, form: Form, schemas: &SchemaSet, limits: &Limits) -> Vec<Ranked> {
    let parses: Vec<MessageDescriptor> = schemas
        .messages()
        .iter()
        .filter(|descriptor| match form {
            Form::Json => {
                crate::user::proto3_parse::parse(text, descriptor, schemas, limits.max_depth)
                    .is_ok()
            }
            _ => crate::text::parse(text, descriptor, limits.max_depth).is_ok(),
        })
        .cloned()
        .collect();
    let share = 1.0 / parses.len().max(1) as f64;
    parses
        .into_iter()
        .map(|descriptor| Ranked {
            descriptor,
            confidence: share,
        })
        .collect()
}
