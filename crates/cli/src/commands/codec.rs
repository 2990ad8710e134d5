//! `protoprof decode` and `protoprof encode`: binary to text/JSON and back.

use std::path::Path;

use protoprof_codec::{json, raw, registry, text, EncodeOptions, Limits};

use crate::cli::TextForm;
use crate::error::{CliError, Context, Result};
use crate::io::{self, shown, write_output};

pub fn decode(
    path: &Path,
    type_name: Option<&str>,
    to: TextForm,
    raw_mode: bool,
    output: &Path,
) -> Result<u8> {
    if raw_mode {
        let bytes = io::read_input(path)?;
        let (payload, _) = protoprof_codec::detect::inflate_input(&bytes, &Limits::default())
            .context(shown(path))?;
        let fields = raw::decode_raw(&payload, Limits::DEFAULT.max_depth).context(shown(path))?;
        write_output(output, raw::render(&fields).as_bytes())?;
        return Ok(0);
    }
    let loaded = io::load(path, type_name)?;
    let rendered = match to {
        TextForm::Text => text::print(loaded.message()),
        TextForm::Json => json::print(loaded.message(), true) + "\n",
    };
    write_output(output, rendered.as_bytes())?;
    Ok(0)
}

pub fn encode(
    path: &Path,
    type_name: &str,
    from: Option<TextForm>,
    output: &Path,
    gzip: bool,
) -> Result<u8> {
    let descriptor = registry::message_descriptor(type_name).context("--type")?;
    let bytes = io::read_input(path)?;
    let input = std::str::from_utf8(&bytes)
        .map_err(|e| CliError::failure(format!("{}: not UTF-8 text: {e}", shown(path))))?;
    let from = from.unwrap_or(
        match input
            .trim_start_matches('\u{feff}')
            .trim_start()
            .starts_with(['{', '['])
        {
            true => TextForm::Json,
            false => TextForm::Text,
        },
    );
    let depth = Limits::DEFAULT.max_depth;
    let message = match from {
        TextForm::Text => text::parse(input, &descriptor, depth),
        TextForm::Json => json::parse(input, &descriptor, depth),
    }
    .context(shown(path))?;
    let options = EncodeOptions {
        gzip_level: gzip.then_some(6),
    };
    let encoded = protoprof_codec::encode(&*message, &options).context(shown(output))?;
    write_output(output, &encoded)?;
    Ok(0)
}
