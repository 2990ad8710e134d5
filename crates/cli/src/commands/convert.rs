//! `protoprof convert` (pprof <-> OTLP) and `protoprof merge`.

use std::path::{Path, PathBuf};

use protobuf::MessageField;
use protoprof_codec::{json, text, AutoView, EncodeOptions};
use protoprof_model_otlp::opentelemetry::proto::common::v1::{
    any_value::Value, AnyValue, KeyValue,
};
use protoprof_pprof_bridge::{pprof_to_otlp, pprof_to_otlp_bytes, ProfileId, ToOtlpOptions};

use crate::cli::{ConvertArgs, Encoding, MergeArgs, Target};
use crate::error::{CliError, Context, Result};
use crate::io::{self, check_not_input, shown, write_output};

fn resource_attributes(pairs: &[String]) -> Result<Vec<KeyValue>> {
    pairs
        .iter()
        .map(|pair| {
            let (key, value) = pair.split_once('=').ok_or_else(|| {
                CliError::failure(format!("--resource {pair:?}: expected key=value"))
            })?;
            Ok(KeyValue {
                key: key.to_string(),
                value: MessageField::some(AnyValue {
                    value: Some(Value::StringValue(value.to_string())),
                    ..Default::default()
                }),
                ..Default::default()
            })
        })
        .collect()
}

fn encode(message: &dyn protobuf::MessageDyn, format: Encoding, gzip: bool) -> Result<Vec<u8>> {
    let text_bytes = |s: String| -> Result<Vec<u8>> {
        match gzip {
            true => protoprof_codec::gzip::compress(s.as_bytes(), 6).context("compressing"),
            false => Ok(s.into_bytes()),
        }
    };
    match format {
        Encoding::Binary => protoprof_codec::encode(
            message,
            &EncodeOptions {
                gzip_level: gzip.then_some(6),
            },
        )
        .context("encoding"),
        Encoding::Json => text_bytes(json::print(message, true) + "\n"),
        Encoding::Text => text_bytes(text::print(message)),
    }
}

pub fn run(args: &ConvertArgs) -> Result<u8> {
    let (path, output, format, gzip) = (
        args.file.as_path(),
        args.output.as_path(),
        args.format,
        args.gzip,
    );
    let (to, resources, in_place, deterministic_id) = (
        args.to,
        &args.resources,
        args.in_place,
        args.deterministic_id,
    );
    check_not_input(output, &[path], in_place)?;
    let bytes = io::read_input(path)?;
    let decoded = io::decode_view(path, &bytes, None)?;
    let encoded = match (to, decoded) {
        (Target::Otlp, AutoView::Pprof(view)) => {
            let options = ToOtlpOptions {
                resource_attributes: resource_attributes(resources)?,
                profile_id: if deterministic_id {
                    ProfileId::ContentHash
                } else {
                    ProfileId::Random
                },
                ..Default::default()
            };
            if format == Encoding::Binary {
                // Written straight from the converted tables: no OTLP
                // message per sample.
                let raw = pprof_to_otlp_bytes(&view.message, &options).context(shown(path))?;
                match gzip {
                    true => protoprof_codec::gzip::compress(&raw, 6).context("compressing")?,
                    false => raw,
                }
            } else {
                let data = pprof_to_otlp(&view.message, &options).context(shown(path))?;
                encode(&data, format, gzip)?
            }
        }
        (Target::Otlp, AutoView::Other(other)) => {
            return Err(CliError::failure(format!(
                "{}: --to otlp needs a pprof profile, this is {}",
                shown(path),
                other.descriptor.full_name()
            )))
        }
        (Target::Pprof, decoded) => {
            if !resources.is_empty() {
                return Err(CliError::failure("--resource only goes with --to otlp"));
            }
            let converted = match &decoded {
                AutoView::Other(other) => io::otlp_message_as_pprof(path, &*other.decoded.message),
                AutoView::Pprof(_) => None,
            };
            let profile = converted.ok_or_else(|| {
                let type_name = match &decoded {
                    AutoView::Other(other) => other.descriptor.full_name().to_string(),
                    AutoView::Pprof(_) => "perftools.profiles.Profile".to_string(),
                };
                CliError::failure(format!(
                    "{}: --to pprof needs OTLP profiles, this is {type_name}",
                    shown(path),
                ))
            })??;
            encode(&profile, format, gzip)?
        }
    };
    write_output(output, &encoded)?;
    Ok(0)
}

pub fn merge(args: &MergeArgs) -> Result<u8> {
    let (files, output, gzip) = (&args.files, args.output.as_path(), args.gzip);
    let inputs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    check_not_input(output, &inputs, false)?;
    let profiles = files
        .iter()
        .map(|f| io::load_pprof(f))
        .collect::<Result<Vec<_>>>()?;
    let merged = protoprof_pprof_bridge::merge::merge(&profiles)
        .map_err(|e| CliError::invalid(e.to_string()))?;
    write_output(output, &encode(&merged, Encoding::Binary, gzip)?)?;
    Ok(0)
}
