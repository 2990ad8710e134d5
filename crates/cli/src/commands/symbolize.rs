//! `protoprof symbolize`: a profile's native frames given functions, files
//! and lines from their binaries (protoprof-symbolize), with a report of
//! what was found for each mapping. OTLP v1development is symbolized in
//! place and written back as OTLP; pprof (and OTLP v1experimental, read as
//! pprof) is written as pprof.

use std::path::Path;

use protobuf::MessageDyn;
use protoprof_codec::form::Form;
use protoprof_model_otlp::opentelemetry::proto::collector::profiles::v1development::ExportProfilesServiceRequest;
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development::{
    ProfilesData, ProfilesDictionary,
};
use protoprof_symbolize::{symbolize, symbolize_dictionary, Demangle, Options, Report};

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
    let mut loaded = io::load(&args.file, None)?;
    let form = loaded.decoded.form;
    let message = &mut loaded.decoded.decoded.message;
    let (report, bytes) = match development_dictionary(&mut **message) {
        Some(dictionary) => {
            let report = symbolize_dictionary(dictionary, &options);
            let encoding = match form {
                Form::Json => Encoding::Json,
                _ => Encoding::Binary,
            };
            (report, io::encode_as(&**message, encoding, args.gzip)?)
        }
        None => {
            drop(loaded);
            let mut profile = io::load_pprof(&args.file)?;
            let report = symbolize(&mut profile, &options);
            (
                report,
                io::encode_as(&profile, Encoding::Binary, args.gzip)?,
            )
        }
    };
    write_output(&args.output, &bytes)?;
    print_report(&report, args)?;
    Ok(0)
}

/// The dictionary of OTLP v1development data or an export request.
fn development_dictionary(message: &mut dyn MessageDyn) -> Option<&mut ProfilesDictionary> {
    if message.downcast_ref::<ProfilesData>().is_some() {
        let data = message.downcast_mut::<ProfilesData>()?;
        return Some(data.dictionary.mut_or_insert_default());
    }
    let request = message.downcast_mut::<ExportProfilesServiceRequest>()?;
    Some(request.dictionary.mut_or_insert_default())
}

/// The report, where the profile does not go.
fn print_report(report: &Report, args: &SymbolizeArgs) -> Result<()> {
    let text = match args.format {
        OutputFormat::Text => report.text(),
        OutputFormat::Json => {
            serde_json::to_string_pretty(report).map_err(|e| CliError::failure(e.to_string()))?
                + "\n"
        }
    };
    if args.output == Path::new("-") {
        eprint!("{text}");
    } else {
        print!("{text}");
    }
    Ok(())
}
