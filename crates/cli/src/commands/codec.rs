//! `protoprof decode` and `protoprof encode`: binary to text/JSON and back.

use std::path::Path;

use protoprof_codec::detect::Form;
use protoprof_codec::{json, raw, text, EncodeOptions};

use crate::cli::{DecodeArgs, EncodeArgs, OutputFormat};
use crate::error::{CliError, Context, Result};
use crate::io::{self, shown, write_output, write_output_gzip};

pub fn decode(args: &DecodeArgs) -> Result<u8> {
    let (path, type_name, to) = (args.file.as_path(), args.r#type.as_deref(), args.to);
    let (raw_mode, output) = (args.raw, args.output.as_path());
    if raw_mode {
        let bytes = io::read_input(path)?;
        let (payload, _) =
            protoprof_codec::detect::inflate_input(&bytes, &io::limits()).context(shown(path))?;
        let fields = match args.guess {
            true => raw::decode_raw(&payload, io::limits().max_depth),
            false => raw::decode_raw_as_protoc(&payload),
        }
        .context(shown(path))?;
        let text = raw::render(&fields);
        write_output_gzip(output, args.gzip, |out| out.write_all(text.as_bytes()))?;
        return Ok(0);
    }
    if let (Some(schemas), OutputFormat::Text) = (io::user_schemas(), to) {
        if user_text(args, schemas)? {
            return Ok(0);
        }
    }
    let loaded = io::load(path, type_name)?;
    match to {
        // Written as it is made; the message's memory goes back with the
        // process (freeing a large message piece by piece took a tenth of
        // the run).
        OutputFormat::Text => {
            write_output_gzip(output, args.gzip, |out| {
                text::print_to(loaded.message(), out)
            })?;
            io::drop_unless_last(loaded, true);
            return Ok(0);
        }
        OutputFormat::Json if io::user_schemas().is_some() => {
            let text = user_json(path, loaded.message())?;
            write_output_gzip(output, args.gzip, |out| out.write_all(text.as_bytes()))?
        }
        // Written as it is made: JSON of a large profile is ten times its size.
        OutputFormat::Json => write_output_gzip(output, args.gzip, |out| {
            json::print_to(loaded.message(), true, out)?;
            out.write_all(b"\n")
        })?,
    }
    Ok(0)
}

/// Binary input of a user's type printed as text straight from its bytes,
/// without the message in memory (`protoprof_codec::user::print_binary`).
/// `false` when the input is not binary (text and JSON are decoded).
fn user_text(args: &DecodeArgs, schemas: &protoprof_codec::user::SchemaSet) -> Result<bool> {
    let path = args.file.as_path();
    let bytes = io::read_input(path)?;
    let limits = io::limits();
    let identified =
        protoprof_codec::user::identify(&bytes, schemas, args.r#type.as_deref(), &limits)
            .context(shown(path))?;
    if identified.form != protoprof_codec::detect::Form::Binary {
        return Ok(false);
    }
    io::note_ranking(&shown(path), &identified.ranked);
    let mut warnings = Vec::new();
    write_output_gzip(&args.output, args.gzip, |out| {
        let printed = protoprof_codec::user::print_binary(
            &identified.bytes,
            &identified.descriptor,
            &limits,
            out,
        );
        warnings = printed.map_err(std::io::Error::other)?;
        Ok(())
    })
    .context(shown(path))?;
    io::print_warnings(
        &shown(path),
        &protoprof_codec::Decoded {
            message: (),
            warnings,
            warnings_suppressed: 0,
            gzipped: identified.gzipped,
        },
    );
    Ok(true)
}

/// A message of the user's schemas as proto3 JSON, with a warning for the
/// unknown fields JSON cannot carry.
pub fn user_json(path: &std::path::Path, message: &dyn protobuf::MessageDyn) -> Result<String> {
    let schemas = io::user_schemas().expect("called with user schemas");
    let printed =
        protoprof_codec::user::proto3::print(message, schemas, true).context(shown(path))?;
    if printed.unknown_fields_left_out > 0 {
        let message = format!(
            "{} unknown field(s) have no JSON form and are left out; the text format keeps them",
            printed.unknown_fields_left_out
        );
        io::warn(shown(path), message);
    }
    Ok(printed.text + "\n")
}

pub fn encode(args: &EncodeArgs) -> Result<u8> {
    let (output, gzip) = (args.output.as_path(), args.gzip);
    let message = match args.r#type.as_deref() {
        Some(type_name) => parse_as(args, type_name)?,
        None => detected(args.file.as_path())?,
    };
    let options = EncodeOptions {
        gzip_level: gzip.then_some(6),
    };
    let encoded = io::encode(&*message, &options).context(shown(output))?;
    write_output(output, &encoded)?;
    Ok(0)
}

/// The text or JSON of `path` read as the message type `decode` finds
/// for it (of the user's schemas, when given).
fn detected(path: &Path) -> Result<Box<dyn protobuf::MessageDyn>> {
    let loaded = io::load(path, None)?;
    match loaded.decoded.form {
        Form::Text | Form::Json => Ok(loaded.decoded.decoded.message),
        form => Err(CliError::failure(format!(
            "{}: {} is already binary; encode reads protobuf text format or JSON",
            shown(path),
            form.name()
        ))),
    }
}

/// The text or JSON of `args.file` read as `type_name`, `--from` or the
/// first character saying which.
fn parse_as(args: &EncodeArgs, type_name: &str) -> Result<Box<dyn protobuf::MessageDyn>> {
    let (path, from) = (args.file.as_path(), args.from);
    let descriptor = io::message_descriptor(type_name)?;
    let bytes = io::read_input(path)?;
    let input = std::str::from_utf8(&bytes)
        .map_err(|e| CliError::failure(format!("{}: not UTF-8 text: {e}", shown(path))))?;
    let from = from.unwrap_or(
        match input
            .trim_start_matches('\u{feff}')
            .trim_start()
            .starts_with(['{', '['])
        {
            true => OutputFormat::Json,
            false => OutputFormat::Text,
        },
    );
    let depth = io::limits().max_depth;
    let message = match from {
        OutputFormat::Text => text::parse(input, &descriptor, depth).context(shown(path))?,
        OutputFormat::Json if io::user_schemas().is_some() => {
            let schemas = io::user_schemas().expect("checked");
            protoprof_codec::user::proto3_parse::parse(input, &descriptor, schemas, depth)
                .context(shown(path))?
        }
        OutputFormat::Json => {
            let decoded = protoprof_codec::decode_json(input, &descriptor, &io::decode_options())
                .context(shown(path))?;
            io::print_warnings(&shown(path), &decoded);
            decoded.message
        }
    };
    Ok(message)
}
