//! `protoprof validate`: every rule of each file's schema.

use std::path::Path;

use protoprof_codec::{AutoView, DecodeOptions};
use protoprof_validate::{
    report_dropped_input, validate_development_parts, validate_message, validate_pprof,
    validate_profiles_parts, Options, Report, Severity,
};
use serde::Serialize;

use crate::cli::{OutputFormat, ValidateArgs};
use crate::error::{CliError, Result};
use crate::io::{self, print, shown, Style};

#[derive(Serialize)]
struct FileResult {
    file: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    report: Option<Report>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

/// The report on `view`, read through the view where its type has one.
/// With `last`, the view's memory is left to the process's exit.
fn validate_view(
    path: &Path,
    view: AutoView<'static>,
    (options, strict): (&Options, bool),
    last: bool,
) -> Result<Report> {
    let dropped = io::dropped_input(&view);
    let mut report = validate_view_read(path, view, (options, strict), last)?;
    report_dropped_input(&mut report, &dropped, options);
    Ok(report)
}

/// The report on what the decoder of `view` read.
fn validate_view_read(
    path: &Path,
    view: AutoView<'static>,
    (options, strict): (&Options, bool),
    last: bool,
) -> Result<Report> {
    let report = match &view {
        AutoView::Pprof(view) => validate_pprof(&view.message, options),
        // Samples and stacks read from the bytes; the strict checks compare
        // every entry with every other, so they take the whole message (as
        // does an export request, reported as one).
        AutoView::Development(view) if !strict && !view.message.is_export_request() => {
            let view = &view.message;
            validate_development_parts(view.data(), view, options)
        }
        // Samples (and location indices) read from the bytes.
        AutoView::Experimental(view) if !view.message.is_export_request() => {
            let view = &view.message;
            validate_profiles_parts(view.data(), view, options)
        }
        AutoView::Development(_) | AutoView::Experimental(_) | AutoView::Other(_) => {
            let other = view.into_decoded();
            return validate_message(&*other.decoded.message, options).ok_or_else(|| {
                CliError::failure(format!(
                    "{}: no validation rules for {}",
                    shown(path),
                    other.descriptor.full_name()
                ))
            });
        }
    };
    io::drop_unless_last(view, last);
    Ok(report)
}

/// The report on the message in `path` with the default options (the web
/// UI's message view).
pub(crate) fn report_of(path: &Path) -> Result<Report> {
    let options = Options::default();
    let decode_options = DecodeOptions {
        sample_summary: true,
        ..io::decode_options()
    };
    let view = io::decode_view_with(path, io::read_input(path)?, None, &decode_options)?;
    validate_view(path, view, (&options, false), false)
}

pub fn run(args: &ValidateArgs, style: Style) -> Result<u8> {
    let (files, type_name, format) = (&args.files, args.r#type.as_deref(), args.format);
    let (strict, max_per_rule) = (args.strict, args.max_per_rule);
    let options = Options {
        max_per_rule,
        fail_fast: false,
        duplicates_and_orphans: strict,
    };
    // A pprof view sums its samples up as it checks them, so that
    // validation need not look each location id up nor count values; a
    // v1development view finds the range of its stacks' location indices.
    let decode_options = DecodeOptions {
        sample_summary: true,
        ..io::decode_options()
    };
    let decode = |path: &Path, bytes| io::decode_view_with(path, bytes, type_name, &decode_options);
    let mut results = Vec::new();
    let (mut failed_to_read, mut invalid) = (false, false);
    for (n, path) in files.iter().enumerate() {
        let last = n + 1 == files.len();
        // A file exporter stream is validated message by message, each
        // named by its position and offset.
        let messages = io::read_input(path).and_then(|b| io::messages_of(path, b, type_name));
        let outcomes = match messages {
            Ok(messages) => messages
                .into_iter()
                .map(|(name, bytes)| {
                    // Errors and warnings name the message.
                    let named = Path::new(&name);
                    let outcome = decode(named, bytes)
                        .and_then(|view| validate_view(named, view, (&options, strict), last));
                    (name, outcome)
                })
                .collect(),
            Err(e) => vec![(shown(path), Err(e))],
        };
        for (file, outcome) in outcomes {
            match outcome {
                Ok(report) => {
                    invalid |= !report.is_valid() || (strict && report.warnings > 0);
                    results.push(FileResult {
                        file,
                        report: Some(report),
                        error: None,
                    });
                }
                Err(e) => {
                    failed_to_read = true;
                    results.push(FileResult {
                        file,
                        report: None,
                        error: Some(e.message),
                    });
                }
            }
        }
    }
    match format {
        OutputFormat::Json => {
            print(&(serde_json::to_string_pretty(&results).expect("serializable") + "\n"))?
        }
        OutputFormat::Text => {
            let mut out = String::new();
            for r in &results {
                match (&r.report, &r.error) {
                    (Some(report), _) => out.push_str(&human(&r.file, report, style)),
                    // The one error format (docs/cli.md): the message
                    // names the file already.
                    (None, Some(error)) => {
                        print(&std::mem::take(&mut out))?;
                        eprintln!("protoprof: error: {error}");
                    }
                    (None, None) => {}
                }
            }
            print(&out)?;
        }
    }
    Ok(if failed_to_read { 2 } else { u8::from(invalid) })
}

fn human(file: &str, report: &Report, style: Style) -> String {
    let paint = |severity: Severity, label: &str| match severity {
        Severity::Error => style.red(label),
        Severity::Warning => style.yellow(label),
    };
    let mut out = report.render_diagnostics(&format!("{file}: "), &paint);
    let verdict = if report.errors == 0 && report.warnings == 0 {
        style.green("valid")
    } else if report.errors == 0 {
        style.yellow("valid with warnings")
    } else {
        style.red("invalid")
    };
    let plural = |n: u64, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    out.push_str(&format!(
        "{file}: {} ({}): {}, {}\n",
        style.bold(&verdict),
        report.message_type,
        plural(report.errors, "error"),
        plural(report.warnings, "warning")
    ));
    out
}
