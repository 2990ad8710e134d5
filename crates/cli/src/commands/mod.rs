//! One module per command; `run` dispatches.

mod analyze;
mod codec;
mod convert;
mod disasm;
mod edit;
mod frames;
mod inspect;
mod pprof;
mod receive;
mod relay;
mod send;
mod serve;
mod serve_store;
mod shell;
mod store;
mod store_executor;
mod summary;
mod symbolize;
mod validate;
mod view;
mod viewer;

use clap::CommandFactory;

use crate::cli::{Cli, Command};
use crate::error::Result;
use crate::io::Style;

/// Runs a command; returns the exit status of a run that did not fail.
pub fn run(mut cli: Cli) -> Result<u8> {
    cli.command.gzip_outputs_named_gz();
    (cli.command.store_options_need_store())
        .and_then(|()| cli.command.one_sample_type_option())
        .map_err(crate::error::CliError::failure)?;
    let style = Style::new(cli.color);
    crate::io::set_quiet(cli.quiet);
    crate::io::set_limits(cli.limits.limits());
    crate::io::set_otlp_revision(cli.otlp_revision);
    crate::fetch::set_fetch(cli.fetch.clone());
    crate::io::load_user_schemas(&cli.schemas.sources())?;
    if let Some(mode) = cli.command.report_symbolization() {
        crate::io::set_symbolization(mode)?;
    }
    match &cli.command {
        Command::Inspect(args) => inspect::run(args),
        Command::View(args) => view::run(args),
        Command::Decode(args) => codec::decode(args),
        Command::Encode(args) => codec::encode(args),
        Command::Edit(args) => edit::run(args),
        Command::Convert(args) => convert::run(args),
        Command::Validate(args) => validate::run(args, style),
        Command::Top(args) => analyze::top(args, style),
        Command::Traces(args) => analyze::traces(args),
        Command::Tags(args) => analyze::tags(args),
        Command::Peek(args) => analyze::peek(args),
        Command::Tree(args) => analyze::tree(args),
        Command::Callgraph(args) => analyze::callgraph(args),
        Command::List(args) => analyze::list(args),
        Command::Disasm(args) => disasm::disasm(args),
        Command::Weblist(args) => disasm::weblist(args),
        Command::Comments(args) => analyze::comments(&args.input),
        Command::Callgrind(args) => analyze::callgrind(args),
        Command::Folded(args) => analyze::folded(args),
        Command::Flamegraph(args) => analyze::flamegraph(args),
        Command::Diff(args) => analyze::diff(args, style),
        // pprof's arguments name a report, or, without an output flag, the shell.
        Command::Pprof(args) => match pprof::translate(&args.args)? {
            pprof::Translated::Command(words) => pprof::run_words(&words),
            pprof::Translated::Shell { flags, sources } => shell::run(flags, sources),
        },
        Command::Serve(args) => serve::run(args),
        Command::Merge(args) => convert::merge(args),
        Command::Filter(args) => convert::filter(args),
        Command::Raw(args) => convert::raw(args),
        Command::Symbolize(args) => symbolize::run(args),
        Command::Store(command) => store::run(command),
        Command::Query(args) => store::query(args),
        Command::Frames(args) => frames::run(args),
        Command::Relay(command) => relay::run(command),
        Command::Send(args) => send::run(args),
        Command::Receive(args) => receive::run(args),
        Command::Completions { shell } => {
            // Made whole, then printed: clap_complete panics on a closed pipe.
            let mut script = Vec::new();
            clap_complete::generate(*shell, &mut Cli::command(), "protoprof", &mut script);
            crate::io::write_stdout(|out| out.write_all(&script)).map(|_| 0)
        }
    }
}
