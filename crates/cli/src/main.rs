//! The `protoprof` command.

mod cli;
mod commands;
mod error;
mod io;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    match commands::run(cli) {
        Ok(status) => ExitCode::from(status),
        Err(error) => {
            eprintln!("protoprof: error: {}", error.message);
            ExitCode::from(error.status)
        }
    }
}
