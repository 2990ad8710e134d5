//! `protoprof convert` (pprof <-> OTLP) and `protoprof merge`.

use std::path::{Path, PathBuf};

use protobuf::MessageField;
use protoprof_codec::{json, text, AutoView, EncodeOptions};
use protoprof_model_otlp::opentelemetry::proto::common::v1::{
    any_value::Value, AnyValue, KeyValue,
};
use protoprof_model_pprof::samples::ProfileSamples;
use protoprof_pprof_bridge::{
    pprof_to_development, pprof_to_otlp, pprof_to_otlp_bytes, ProfileId, ToDevelopmentOptions,
    ToOtlpOptions,
};

use crate::cli::{ConvertArgs, Encoding, MergeArgs, OtlpVersion, Target};
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
    let (path, output) = (args.file.as_path(), args.output.as_path());
    check_not_input(output, &[path], args.in_place)?;
    let bytes = io::read_input(path)?;
    let decoded = io::decode_view(path, &bytes, None)?;
    let encoded = match args.to {
        Target::Otlp => to_otlp(args, decoded)?,
        Target::Pprof => to_pprof(args, decoded)?,
    };
    write_output(output, &encoded)?;
    Ok(0)
}

/// pprof into the OTLP version asked for; OTLP of that version re-encoded
/// (an older v1development revision so comes out as the current one); OTLP
/// of the other version through pprof, with the bridge's warnings.
fn to_otlp(args: &ConvertArgs, decoded: AutoView) -> Result<Vec<u8>> {
    let path = args.file.as_path();
    let other = match decoded {
        AutoView::Pprof(view) => return pprof_to_otlp_version(args, &view.message),
        AutoView::Other(other) => other,
    };
    let message = &*other.decoded.message;
    let is_development = io::development_data(message).is_some();
    if !is_development && io::otlp_data(message).is_none() {
        return Err(CliError::failure(format!(
            "{}: --to otlp needs a pprof profile or OTLP profiles, this is {}",
            shown(path),
            other.descriptor.full_name()
        )));
    }
    let same_version = is_development == (args.otlp_version == OtlpVersion::V1development);
    if same_version {
        if !args.resources.is_empty() {
            return Err(CliError::failure(
                "--resource goes with pprof input (or OTLP of the other version)",
            ));
        }
        return encode(message, args.format, args.gzip);
    }
    let profile = io::otlp_message_as_pprof(path, message).expect("OTLP profiles")?;
    pprof_to_otlp_version(args, &profile)
}

fn pprof_to_otlp_version<S: ProfileSamples>(args: &ConvertArgs, source: &S) -> Result<Vec<u8>> {
    let path = args.file.as_path();
    let resource_attributes = resource_attributes(&args.resources)?;
    let profile_id = match args.deterministic_id {
        true => ProfileId::ContentHash,
        false => ProfileId::Random,
    };
    if args.otlp_version == OtlpVersion::V1development {
        let options = ToDevelopmentOptions {
            resource_attributes,
            profile_id,
            ..Default::default()
        };
        let data = pprof_to_development(source, &options).context(shown(path))?;
        return encode(&data, args.format, args.gzip);
    }
    let options = ToOtlpOptions {
        resource_attributes,
        profile_id,
        ..Default::default()
    };
    if args.format != Encoding::Binary {
        let data = pprof_to_otlp(source, &options).context(shown(path))?;
        return encode(&data, args.format, args.gzip);
    }
    // Written straight from the converted tables: no OTLP message per sample.
    let raw = pprof_to_otlp_bytes(source, &options).context(shown(path))?;
    match args.gzip {
        true => protoprof_codec::gzip::compress(&raw, 6).context("compressing"),
        false => Ok(raw),
    }
}

fn to_pprof(args: &ConvertArgs, decoded: AutoView) -> Result<Vec<u8>> {
    let path = args.file.as_path();
    if !args.resources.is_empty() {
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
    encode(&profile, args.format, args.gzip)
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
