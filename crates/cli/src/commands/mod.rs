//! One module per command; `run` dispatches.

mod analyze;
mod codec;
mod convert;
mod edit;
mod frames;
mod inspect;
mod summary;
mod validate;
mod view;

use clap::CommandFactory;

use crate::cli::{Cli, Command};
use crate::error::Result;
use crate::io::Style;

/// Runs a command; returns the exit status of a run that did not fail.
pub fn run(cli: Cli) -> Result<u8> {
    let style = Style::new(cli.color);
    match cli.command {
        Command::Inspect {
            file,
            r#type,
            format,
        } => inspect::run(&file, r#type.as_deref(), format),
        Command::View { file, r#type, raw } => view::run(&file, r#type.as_deref(), raw),
        Command::Decode {
            file,
            r#type,
            to,
            raw,
            output,
        } => codec::decode(&file, r#type.as_deref(), to, raw, &output),
        Command::Encode {
            file,
            r#type,
            from,
            output,
            gzip,
        } => codec::encode(&file, &r#type, from, &output, gzip),
        Command::Edit {
            file,
            r#type,
            force,
        } => edit::run(&file, r#type.as_deref(), force),
        Command::Convert {
            file,
            to,
            format,
            gzip,
            resources,
            output,
            in_place,
            deterministic_id,
        } => convert::run(
            &file,
            to,
            format,
            gzip,
            &resources,
            &output,
            in_place,
            deterministic_id,
        ),
        Command::Validate {
            files,
            r#type,
            format,
            strict,
            max_per_rule,
        } => validate::run(
            &files,
            r#type.as_deref(),
            format,
            strict,
            max_per_rule,
            style,
        ),
        Command::Top {
            file,
            nodes,
            sample_index,
            cum,
            format,
        } => analyze::top(&file, nodes, sample_index.as_deref(), cum, format, style),
        Command::Folded { file, sample_index } => analyze::folded(&file, sample_index.as_deref()),
        Command::Flamegraph {
            file,
            sample_index,
            output,
        } => analyze::flamegraph(&file, sample_index.as_deref(), &output),
        Command::Diff {
            base,
            new,
            sample_index,
            nodes,
            format,
        } => analyze::diff(&base, &new, sample_index.as_deref(), nodes, format, style),
        Command::Merge {
            files,
            output,
            gzip,
        } => convert::merge(&files, &output, gzip),
        Command::Frames {
            file,
            framing,
            r#type,
            decode,
            format,
        } => frames::run(&file, framing, r#type.as_deref(), decode, format),
        Command::Completions { shell } => {
            clap_complete::generate(
                shell,
                &mut Cli::command(),
                "protoprof",
                &mut std::io::stdout(),
            );
            Ok(0)
        }
    }
}
