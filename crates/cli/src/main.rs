//! The `protoprof` command.

mod cli;
mod commands;
mod error;
mod fetch;
mod habits;
mod io;

use std::process::ExitCode;

fn main() -> ExitCode {
    use clap::{CommandFactory, Parser};
    let args = std::env::args_os().skip(1);
    let args: Vec<String> = args.map(|a| a.to_string_lossy().into_owned()).collect();
    if let Some(said) = habits::habit(&cli::Cli::command(), &args) {
        eprintln!("protoprof: error: {said}");
        return ExitCode::from(2);
    }
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => return usage_error(error),
    };
    match commands::run(cli) {
        Ok(status) => ExitCode::from(status),
        Err(error) => {
            eprintln!("protoprof: error: {}", error.message);
            ExitCode::from(error.status)
        }
    }
}

/// `--help` and `--version` as clap prints them; a usage error on one line
/// in the format of every other error (docs/cli.md), with clap's tip.
fn usage_error(error: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        error.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        // A closed pipe (`--help | head`) is not worth a message.
        if error.kind() == ErrorKind::DisplayHelp {
            if let Some(help) = cli::help_of(&command_words()) {
                let _ = std::io::Write::write_all(&mut std::io::stdout(), help.as_bytes());
                return ExitCode::SUCCESS;
            }
        }
        let _ = error.print();
        return ExitCode::from(if error.use_stderr() { 2 } else { 0 });
    }
    let line = error::one_line_usage(&error.render().to_string(), &help_command());
    eprintln!("protoprof: error: {line}");
    ExitCode::from(2)
}

/// `protoprof COMMAND --help` for the command the arguments name, else
/// `protoprof --help`.
fn help_command() -> String {
    let mut words = vec!["protoprof".to_string()];
    words.extend(command_words());
    words.push("--help".into());
    words.join(" ")
}

/// The subcommand words the arguments name (`relay`, `watch`), with
/// `help WORDS` read as pprof's and clap's `help` reads it.
fn command_words() -> Vec<String> {
    use clap::CommandFactory;
    let command = cli::Cli::command();
    let mut words = Vec::new();
    let mut at = &command;
    for arg in std::env::args().skip(1) {
        if arg == "help" && words.is_empty() {
            continue;
        }
        match at.find_subcommand(&arg) {
            Some(sub) => {
                words.push(sub.get_name().to_string());
                at = sub;
            }
            // Options and, before the command, their values (`--proto F`).
            None if arg.starts_with('-') || words.is_empty() => continue,
            None => break,
        }
    }
    words
}
