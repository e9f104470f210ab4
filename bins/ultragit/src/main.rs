//! `ultragit`: records why code exists as git notes, and reads it back for agents.
//!
//! A thin front end: it parses arguments, calls one library entry point, prints,
//! and maps the outcome to an exit code. Today it offers:
//!
//! - `ultragit read [OPTIONS] <PATH>... [<ANCHOR>]` (spec 003): blame and the
//!   ultragit notes of the code in scope, scored and token-budgeted, rendered as
//!   markdown (default), JSON or plain text by `ultragit-read`. How positionals
//!   split into paths and an anchor, and how paths are resolved, is in [`read`].
//!   Warnings are part of the rendered output and, for markdown and pretty, are
//!   also printed on stderr as `warning: …`.
//!
//! Exit status: 0 on success; 1 when the command fails (`error: …` on stderr, or
//! with `read --format json` the spec's JSON error object on stdout); 2 on usage
//! errors (clap), including `ultragit` without arguments. Output to a closed pipe
//! (`ultragit read … | head`) is not a failure: exit 0. The hidden
//! `--generate KIND` flag (shell completions for `make install`) is handled before
//! clap so it stays out of `--help`. The other subcommands arrive with the issues
//! that build them.

// Binaries are where output happens.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod read;

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser, Subcommand};
use ultragit_read::Format;

#[derive(Debug, Parser)]
#[command(name = "ultragit", version, about, long_about = LONG_ABOUT, arg_required_else_help = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

const LONG_ABOUT: &str = "ultragit keeps the reasoning behind code next to the code: an LLM agent records, per commit, why each changed function, type or config block exists (intent, constraints, hidden dependencies, rejected alternatives, risks) as a JSON git note under refs/notes/ultragit, and `read` turns blame and those notes into scored, token-budgeted context for an agent about to edit the code — with no LLM on the read path.";

#[derive(Debug, Subcommand)]
enum Command {
    /// Read the recorded reasons behind code: blame + notes, scored and trimmed to a budget
    Read(read::ReadArgs),
}

fn main() -> ExitCode {
    let args: Vec<_> = std::env::args_os().collect();
    match frontend::generate_request(&args) {
        Some(Ok(kind)) => {
            let text = frontend::generate(kind, Cli::command());
            return frontend::output_status(io::stdout().write_all(&text));
        }
        Some(Err(message)) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
        None => {}
    }
    let cli = Cli::parse_from(args);
    match cli.command {
        Command::Read(args) => read_command(&args),
    }
}

fn read_command(args: &read::ReadArgs) -> ExitCode {
    // A vanished current directory: discovery from "." then fails with a clear
    // "Not a git repository" error.
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    match read::run(args, &cwd) {
        Ok(rendered) => {
            let mut stderr = io::stderr().lock();
            for warning in &rendered.warnings {
                let _ = writeln!(stderr, "warning: {warning}");
            }
            frontend::output_status(io::stdout().lock().write_all(rendered.text.as_bytes()))
        }
        Err(read::Failure::Usage(message)) => {
            let mut cmd = Cli::command();
            cmd.build();
            let sub = cmd
                .find_subcommand_mut("read")
                .expect("the read subcommand is defined");
            let _ = sub.error(ErrorKind::ArgumentConflict, message).print();
            ExitCode::from(2)
        }
        Err(read::Failure::Read(err)) => {
            if args.format() == Format::Json {
                let _ = writeln!(io::stdout().lock(), "{}", err.body().to_json());
            } else {
                let _ = writeln!(io::stderr().lock(), "error: {err}");
            }
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn cli_definition_is_valid() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
