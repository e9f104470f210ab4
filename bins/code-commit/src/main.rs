//! `code-commit`: applies one LLM-driven code edit, checked, all-or-nothing, with build repair.
//!
//! A thin front end: it parses arguments and hands them to the libraries. Its
//! subcommands arrive with the issues that build them.

// Binaries are where output happens.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::Write;
use std::process::ExitCode;

use clap::{CommandFactory, Parser};

#[derive(Debug, Parser)]
#[command(name = "code-commit", version, about, long_about = LONG_ABOUT, arg_required_else_help = true)]
struct Cli {}

const LONG_ABOUT: &str = "code-commit performs one agentic edit: it sends your query and a rollup of the code to an LLM, checks the whole-file replacements it returns, applies them all-or-nothing, runs build.sh, and asks for up to three repairs if the build fails.";

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
