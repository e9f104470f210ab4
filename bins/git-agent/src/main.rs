//! `git-agent`: writes commit messages, squash messages and release notes from git evidence.
//!
//! A thin front end: it parses arguments and hands them to the libraries. Its
//! subcommands arrive with the issues that build them.

// Binaries are where output happens.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::Write;
use std::process::ExitCode;

use clap::{CommandFactory, Parser};

#[derive(Debug, Parser)]
#[command(name = "git-agent", version, about, long_about = LONG_ABOUT, arg_required_else_help = true)]
struct Cli {}

const LONG_ABOUT: &str = "git-agent generates commit messages (commit-msg, commit, both with --amend), squash-merge messages (pr-message) and release notes (release-note), grounded in evidence precomputed from the repository and a bounded, read-only tool loop.";

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
