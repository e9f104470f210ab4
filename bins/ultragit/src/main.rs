//! `ultragit`: records why code exists as git notes, and reads it back for agents.
//!
//! A thin front end: it parses arguments and hands them to the libraries. Its
//! subcommands arrive with the issues that build them.

// Binaries are where output happens.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::Write;
use std::process::ExitCode;

use clap::{CommandFactory, Parser};

#[derive(Debug, Parser)]
#[command(name = "ultragit", version, about, long_about = LONG_ABOUT, arg_required_else_help = true)]
struct Cli {}

const LONG_ABOUT: &str = "ultragit keeps the reasoning behind code next to the code: an LLM agent records, per commit, why each changed function, type or config block exists (intent, constraints, hidden dependencies, rejected alternatives, risks) as a JSON git note under refs/notes/ultragit, and `read` turns blame and those notes into scored, token-budgeted context for an agent about to edit the code — with no LLM on the read path.";

fn main() -> ExitCode {
    let args: Vec<_> = std::env::args_os().collect();
    match frontend::generate_request(&args) {
        Some(Ok(kind)) => {
            let text = frontend::generate(kind, Cli::command());
            return frontend::output_status(std::io::stdout().write_all(&text));
        }
        Some(Err(message)) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
        None => {}
    }
    let _cli = Cli::parse_from(args);
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    #[test]
    fn cli_definition_is_valid() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
