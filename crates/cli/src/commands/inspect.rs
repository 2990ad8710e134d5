//! `protoprof inspect`: what a file is, and a summary of it.

use protoprof_codec::detect::Form;
use protoprof_codec::{AutoView, WarningKind};
use protoprof_model_pprof::perftools::profiles::Profile;
use serde::Serialize;

use super::summary::{self, ProfileSummary, ResourceSummary};
use crate::cli::{InspectArgs, OutputFormat};
use crate::error::Result;
use crate::io::{self, print};

#[derive(Serialize)]
struct Inspection {
    file: String,
    bytes: usize,
    gzipped: bool,
    form: &'static str,
    message_type: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pprof: Option<ProfileSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    otlp: Option<Vec<ResourceSummary>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    otlp_v1development: Option<summary::DevelopmentSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fields: Option<String>,
    /// With the user's schemas and no --type: every message type the input
    /// fits, best first, and how well.
    #[serde(skip_serializing_if = "Option::is_none")]
    fits: Option<Vec<Fit>>,
}

#[derive(Serialize)]
struct Fit {
    message_type: String,
    confidence: f64,
}

/// How well the input fits each message of the user's schemas, when the
/// type is to be detected among them.
fn fits(bytes: &[u8], type_name: Option<&str>) -> Option<Vec<Fit>> {
    let schemas = io::user_schemas().filter(|_| type_name.is_none())?;
    let limits = io::limits();
    let (inflated, _) = protoprof_codec::detect::inflate_input(bytes, &limits).ok()?;
    let (_, ranked) = protoprof_codec::user::rank(&inflated, schemas, &limits);
    Some(
        ranked
            .into_iter()
            .map(|r| Fit {
                message_type: r.descriptor.full_name().to_string(),
                confidence: (r.confidence * 1000.0).round() / 1000.0,
            })
            .collect(),
    )
}

pub fn run(args: &InspectArgs) -> Result<u8> {
    let (path, type_name, format) = (args.file.as_path(), args.r#type.as_deref(), args.format);
    let bytes = io::read_input(path)?;
    // A file exporter stream: each message inspected on its own.
    let inspections = io::messages_of(path, bytes, type_name)?
        .into_iter()
        .map(|(name, bytes)| inspect(name, bytes, type_name))
        .collect::<Result<Vec<_>>>()?;
    match format {
        OutputFormat::Json if inspections.len() == 1 => {
            print(&(serde_json::to_string_pretty(&inspections[0]).expect("serializable") + "\n"))?
        }
        OutputFormat::Json => {
            print(&(serde_json::to_string_pretty(&inspections).expect("serializable") + "\n"))?
        }
        OutputFormat::Text => {
            let text: Vec<String> = inspections.iter().map(human).collect();
            print(&io::cut_long_lines(text.join("\n"), args.full))?
        }
    }
    Ok(0)
}

/// What the message in `bytes` (named `name`) is.
fn inspect(name: String, bytes: Vec<u8>, type_name: Option<&str>) -> Result<Inspection> {
    let mut inspection = Inspection {
        file: name,
        bytes: bytes.len(),
        gzipped: false,
        form: "",
        message_type: String::new(),
        pprof: None,
        otlp: None,
        otlp_v1development: None,
        fields: None,
        fits: fits(&bytes, type_name),
    };
    // Errors and warnings name the message (`FILE: message 2 (byte …)`).
    let named = std::path::Path::new(&inspection.file);
    match io::decode_view(named, bytes, type_name)? {
        // Binary pprof: samples are summed from the bytes, one at a time.
        AutoView::Pprof(view) => {
            inspection.gzipped = view.gzipped;
            // Legacy formats are parsed into a model; binary stays bytes.
            inspection.form = match view.message.samples_are_bytes() {
                true => Form::Binary.name(),
                false => Form::Legacy.name(),
            };
            inspection.message_type = "perftools.profiles.Profile".into();
            inspection.pprof = Some(summary::pprof(&view.message));
        }
        // v1development: samples and stacks counted from the bytes.
        AutoView::Development(view) => {
            inspection.gzipped = view.gzipped;
            inspection.form = view.message.form().name();
            let data = view.message.data();
            inspection.message_type = view.message.descriptor().full_name().to_string();
            let read_as = upgraded_from(&view.warnings);
            inspection.otlp_v1development =
                Some(summary::development(data, &view.message, read_as));
        }
        // v1experimental: samples read from the bytes (of OTLP/JSON too).
        AutoView::Experimental(view) => {
            inspection.gzipped = view.gzipped;
            inspection.form = view.message.form().name();
            inspection.message_type = view.message.descriptor().full_name().to_string();
            inspection.otlp = Some(summary::otlp(view.message.data(), &view.message));
        }
        AutoView::Other(decoded) => {
            inspection.gzipped = decoded.decoded.gzipped;
            inspection.form = decoded.form.name();
            inspection.message_type = decoded.descriptor.full_name().to_string();
            let message = &*decoded.decoded.message;
            if let Some(p) = message.downcast_ref::<Profile>() {
                inspection.pprof = Some(summary::pprof(p));
            } else if let Some(data) = io::otlp_data(message) {
                let samples = protoprof_pprof_bridge::experimental_data_samples(&data);
                inspection.otlp = Some(summary::otlp(&data, &samples));
            } else if let Some(data) = io::development_data(message) {
                let read_as = upgraded_from(&decoded.decoded.warnings);
                let parts = protoprof_pprof_bridge::data_samples(&data);
                inspection.otlp_v1development = Some(summary::development(&data, &parts, read_as));
            } else {
                inspection.fields = Some(summary::fields(message));
            }
        }
    }
    Ok(inspection)
}

fn human(i: &Inspection) -> String {
    let mut out = format!(
        "file: {} ({} bytes{})\ntype: {} ({})\n",
        i.file,
        i.bytes,
        if i.gzipped { ", gzip" } else { "" },
        i.message_type,
        i.form
    );
    if let Some(fits) = &i.fits {
        let shown: Vec<String> = fits
            .iter()
            .take(5)
            .map(|f| format!("{} {:.0}%", f.message_type, 100.0 * f.confidence))
            .collect();
        out.push_str(&format!("fits: {}\n", shown.join(", ")));
    }
    if let Some(p) = &i.pprof {
        out.push_str(&profile(p, ""));
    }
    for (r, resource) in i.otlp.iter().flatten().enumerate() {
        out.push_str(&format!(
            "resource {r}: {}\n",
            resource.attributes.join(", ")
        ));
        for scope in &resource.scopes {
            out.push_str(&format!("  scope {} {}\n", scope.name, scope.version));
            for c in &scope.profiles {
                out.push_str(&format!(
                    "    profile {}  {} .. {}\n",
                    c.profile_id, c.start, c.end
                ));
                if !c.attributes.is_empty() {
                    out.push_str(&format!("      attributes: {}\n", c.attributes.join(", ")));
                }
                if let Some(p) = &c.profile {
                    out.push_str(&profile(p, "      "));
                }
            }
        }
    }
    if let Some(d) = &i.otlp_v1development {
        out.push_str(&development(d));
    }
    if let Some(fields) = &i.fields {
        out.push_str(&format!("fields: {fields}\n"));
    }
    out
}

fn development(d: &summary::DevelopmentSummary) -> String {
    let tables: Vec<String> = d
        .dictionary
        .iter()
        .map(|(t, n)| format!("{t} {n}"))
        .collect();
    let mut out = format!(
        "revision: opentelemetry-proto {}\ndictionary: {}\nresources {}, profiles {}:\n",
        if d.upgraded {
            format!(
                "{} (v1development), upgraded to v1.10.0 to be read",
                d.revision
            )
        } else {
            format!("{} (v1development, the Alpha)", d.revision)
        },
        tables.join(", "),
        d.resources,
        d.profiles.len()
    );
    let mut shown = None;
    for p in &d.profiles {
        if shown != Some(p.resource) {
            shown = Some(p.resource);
            let attributes = d
                .resource_attributes
                .get(p.resource)
                .map_or(&[][..], |a| &a[..]);
            let attributes = match attributes.is_empty() {
                true => "no attributes".to_string(),
                false => attributes.join(", "),
            };
            out.push_str(&format!("  resource {}: {attributes}\n", p.resource));
        }
        let time = p
            .time
            .as_deref()
            .map(|t| format!(", {t}, {:.3}s", p.duration_nanos as f64 / 1e9))
            .unwrap_or_default();
        let scope = match p.scope.is_empty() {
            true => "scope (unnamed)".to_string(),
            false => format!("scope {}", p.scope),
        };
        out.push_str(&format!(
            "    {scope}: {} samples {}, total {}{time}\n",
            p.sample_type, p.samples, p.total
        ));
    }
    out
}

fn profile(p: &ProfileSummary, pad: &str) -> String {
    let mut out = format!("{pad}sample types:\n");
    for t in &p.sample_types {
        let temporality = t
            .temporality
            .as_deref()
            .map(|t| format!(", {t}"))
            .unwrap_or_default();
        let default = if t.default { " (default)" } else { "" };
        out.push_str(&format!(
            "{pad}  {}/{}{temporality}: total {}{default}\n",
            t.r#type, t.unit, t.total
        ));
    }
    out.push_str(&format!(
        "{pad}samples {}, locations {}, functions {}, mappings {}, strings {}\n",
        p.samples, p.locations, p.functions, p.mappings, p.strings
    ));
    if let Some(time) = &p.time {
        out.push_str(&format!(
            "{pad}time {time}, duration {:.3}s\n",
            p.duration_nanos as f64 / 1e9
        ));
    }
    if let Some(period_type) = &p.period_type {
        out.push_str(&format!("{pad}period {} {period_type}\n", p.period));
    }
    if !p.label_keys.is_empty() {
        out.push_str(&format!("{pad}label keys: {}\n", p.label_keys.join(", ")));
    }
    for c in &p.comments {
        out.push_str(&format!("{pad}comment: {c}\n"));
    }
    out
}

/// The revision the codec upgraded the input from, if it did.
fn upgraded_from(warnings: &[protoprof_codec::Warning]) -> Option<&'static str> {
    warnings.iter().find_map(|w| match w.kind {
        WarningKind::RevisionUpgraded { from, .. } => Some(from),
        _ => None,
    })
}
