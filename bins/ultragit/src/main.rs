//! `ultragit`: records why code exists as git notes, and reads it back for agents.
//!
//! A thin front end: it parses arguments, calls one library entry point, prints,
//! and maps the outcome to an exit code. One module per command:
//!
//! - `ultragit annotate [--commit REV] [--sync|--async] [--squash-sources REV...]`
//!   (spec 000, [`annotate`]): the writing agent on one commit, its note stored
//!   under `refs/notes/ultragit`; `--async` is the `post-commit` hook's mode.
//!   Provider flags `--provider --model --base-url --api-key-env` override the
//!   `[ultragit]` configuration.
//! - `ultragit init` ([`init`]): notes ref, `.git/ultragit/`, the `post-commit`
//!   hook, notes rewriting, default configuration.
//! - `ultragit context set|show|clear` ([`context`]): the author context the next
//!   annotation consumes (also the `ULTRAGIT_*` environment variables).
//! - `ultragit show [REV] [--format pretty|json]` ([`show`]): a commit's annotation.
//! - `ultragit read [OPTIONS] <PATH>... [<ANCHOR>]` (spec 003): blame and the
//!   ultragit notes of the code in scope, scored and token-budgeted, rendered as
//!   markdown (default), JSON or plain text by `ultragit-read`. How positionals
//!   split into paths and an anchor, and how paths are resolved, is in [`read`].
//!   Warnings are part of the rendered output and, for markdown and pretty, are
//!   also printed on stderr as `warning: …`.
//!
//! Environment: the variable the provider configuration names holds the API key
//! (`OPENAI_API_KEY` or `ANTHROPIC_API_KEY` by default); `ULTRAGIT_TASK`,
//! `ULTRAGIT_REASONING`, `ULTRAGIT_DEPENDENCIES`, `ULTRAGIT_TAGS` add author
//! context; `HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`, `NO_PROXY` set proxies. The
//! names are constants in `frontend::env`; only this binary reads them.
//!
//! Exit status: 0 on success (a skipped trivial commit included); 1 when the
//! command fails (`error: …` on stderr, or with `read --format json` the spec's
//! JSON error object on stdout); 2 on usage errors (clap), including `ultragit`
//! without arguments. Output to a closed pipe (`ultragit read … | head`) is not a
//! failure: exit 0. The hidden `--generate KIND` flag (shell completions for
//! `make install`) is handled before clap so it stays out of `--help`.

// Binaries are where output happens.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod annotate;
mod context;
mod init;
mod outcome;
mod read;
mod show;

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser, Subcommand};
use ultragit_read::Format;

#[derive(Debug, Parser)]
#[command(
    name = "ultragit",
    version,
    about,
    long_about = LONG_ABOUT,
    after_long_help = AFTER_LONG_HELP,
    arg_required_else_help = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

const LONG_ABOUT: &str = "ultragit keeps the reasoning behind code next to the code: an LLM agent records, per commit, why each changed function, type or config block exists (intent, constraints, hidden dependencies, rejected alternatives, risks) as a JSON git note under refs/notes/ultragit, and `read` turns blame and those notes into scored, token-budgeted context for an agent about to edit the code — with no LLM on the read path.

Start with `ultragit init` in a repository: from then on every commit is annotated in the background.";

const AFTER_LONG_HELP: &str = "\
Environment:
  OPENAI_API_KEY, ANTHROPIC_API_KEY  the API key, by default; ultragit.apiKeyEnv names another variable
  ULTRAGIT_TASK, ULTRAGIT_REASONING, ULTRAGIT_DEPENDENCIES, ULTRAGIT_TAGS
                                     author context for the next annotation (see `ultragit context`)
  HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, NO_PROXY   proxies for the model's API

Exit status: 0 on success, 1 when the command fails (`error: ...` on stderr), 2 on usage errors.";

#[derive(Debug, Subcommand)]
enum Command {
    /// Annotate a commit: an LLM agent records why each changed unit exists, as a git note
    Annotate(annotate::AnnotateArgs),
    /// Set the repository up: notes ref, post-commit hook, notes rewriting, defaults
    Init(init::InitArgs),
    /// Record, show or clear the author context the next annotation uses
    Context(context::ContextArgs),
    /// Print a commit's annotation
    Show(show::ShowArgs),
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
    // A vanished current directory: discovery from "." then fails with a clear
    // "Not a git repository" error.
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let env = |name: &str| std::env::var(name).ok();
    match cli.command {
        Command::Annotate(args) => finish(annotate::run(&args, &cwd, env)),
        Command::Init(args) => finish(init::run(&args, &cwd)),
        Command::Context(args) => finish(context::run(&args, &cwd, env)),
        Command::Show(args) => finish(show::run(&args, &cwd)),
        Command::Read(args) => read_command(&args, &cwd),
    }
}

/// Prints a command's outcome and returns its exit status.
fn finish(result: Result<outcome::Output, outcome::Failure>) -> ExitCode {
    match result {
        Ok(output) => {
            let mut stderr = io::stderr().lock();
            for warning in &output.warnings {
                let _ = writeln!(stderr, "warning: {}", sanitize(warning));
            }
            frontend::output_status(io::stdout().lock().write_all(output.text.as_bytes()))
        }
        Err(failure) => {
            let _ = io::stdout().lock().write_all(failure.text.as_bytes());
            let _ = writeln!(io::stderr().lock(), "error: {}", sanitize(&failure.message));
            ExitCode::FAILURE
        }
    }
}

fn read_command(args: &read::ReadArgs, cwd: &Path) -> ExitCode {
    match read::run(args, cwd) {
        Ok(rendered) => {
            let mut stderr = io::stderr().lock();
            for warning in &rendered.warnings {
                let _ = writeln!(stderr, "warning: {}", sanitize(warning));
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
                let _ = writeln!(io::stderr().lock(), "error: {}", sanitize(&err.to_string()));
            }
            ExitCode::FAILURE
        }
    }
}

/// Text for the terminal: warnings and errors can quote notes, paths and
/// config files from the repository, so control characters are escaped.
fn sanitize(text: &str) -> std::borrow::Cow<'_, str> {
    safe_io::term::sanitize(text)
}

#[cfg(test)]
mod tests {
    #[test]
    fn cli_definition_is_valid() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
