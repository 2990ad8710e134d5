//! `protoprof symbolize`: a profile's native frames given functions, files
//! and lines from their binaries (protoprof-symbolize), with a report of
//! what was found for each mapping.

use std::path::Path;

use protoprof_symbolize::{symbolize, Demangle, Options};

use crate::cli::{Encoding, OutputFormat, SymbolizeArgs};
use crate::error::{CliError, Result};
use crate::io::{self, write_output};

pub fn run(args: &SymbolizeArgs) -> Result<u8> {
    io::check_not_input(&args.output, &[args.file.as_path()], false)?;
    let mut options = Options::parse(&args.symbolize)
        .map_err(|e| CliError::failure(format!("--symbolize: {e}")))?;
    if let Some(style) = &args.demangle {
        options.demangle =
            Demangle::parse(style).map_err(|e| CliError::failure(format!("--demangle: {e}")))?;
    }
    let mut profile = io::load_pprof(&args.file)?;
    let report = symbolize(&mut profile, &options);
    write_output(
        &args.output,
        &io::encode_as(&profile, Encoding::Binary, args.gzip)?,
    )?;
    let text = match args.format {
        OutputFormat::Text => report.text(),
        OutputFormat::Json => {
            serde_json::to_string_pretty(&report).map_err(|e| CliError::failure(e.to_string()))?
                + "\n"
        }
    };
    // The report goes where the profile does not.
    if args.output == Path::new("-") {
        eprint!("{text}");
    } else {
        print!("{text}");
    }
    Ok(0)
}
