//! `git-agent`: writes commit messages, squash messages and release notes from git evidence.
//!
//! A thin front end: it parses arguments, calls one library entry point, prints,
//! and maps the outcome to an exit code. Today it offers:
//!
//! - `git-agent commit-msg [--amend]`: the commit message for the staged changes
//!   (or for the final amended commit) on stdout, and nothing else; a trace
//!   session under `.git-agent/sessions/`. Exit 0, or 1 with one line on stderr.
//! - `git-agent commit [--amend]`: the same message, then `git commit --file -`
//!   (`--amend --file -`); stdout streams the console trace and then git's
//!   summary. Exit 1 when git refuses the commit, with the message on stderr and
//!   saved in `.git-agent/COMMIT_MSG`.
//! - `git-agent pr-message`: the squash-merge message of the branch against
//!   `origin/HEAD` on stdout (no tools offered to the model); a trace session.
//! - `git-agent release-note [--out FILE] BASE RELEASE | patch|minor|major`: a
//!   GitHub release body; stdout (with a trace session) or, with `--out`, the
//!   file (the console trace on stdout instead).
//! - `git-agent tools list`: the definitions of the read-only repository tools the
//!   model may call (`repo_tools::definitions()`), as pretty JSON. Exit 0.
//! - `git-agent tools call NAME ['JSON-ARGS'] [--workspace DIR]`: runs one tool over
//!   the workspace `DIR` (default: the current directory) through the registry's
//!   dispatch, exactly as the agent loop would, and prints the result envelope
//!   `{"ok", "tool", "data" | "error", "truncated", …}` as pretty JSON. Exit 0 when
//!   `ok`, 1 when not (an unknown tool, arguments that do not fit the schema, a
//!   failing tool); JSON-ARGS (default `{}`) that is not JSON at all is a usage
//!   error: one line on stderr, exit 2.
//!
//! Everything printed on stderr has its control characters escaped
//! (`safe_io::term::sanitize`): errors quote model answers, provider messages
//! and arguments. JSON on stdout (`tools`) is exact; generated messages on stdout
//! are free of control characters by construction (`git_agent_core::shape`).
//!
//! Usage errors exit 2 (clap). Output to a closed pipe (`git-agent tools list |
//! head`) is not a failure: exit 0. The hidden `--generate KIND` flag (shell
//! completions for `make install`) is handled before clap so it stays out of
//! `--help`. The task subcommands arrive with the issues that build them.

// Binaries are where output happens.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};
use serde_json::Value;

mod message;

#[derive(Debug, Parser)]
#[command(name = "git-agent", version, about, long_about = LONG_ABOUT, arg_required_else_help = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

const LONG_ABOUT: &str = "git-agent generates commit messages (commit-msg, commit, both with --amend), squash-merge messages (pr-message) and release notes (release-note), grounded in evidence precomputed from the repository and a bounded, read-only tool loop.";

#[derive(Debug, Subcommand)]
enum Command {
    /// Print a commit message for the staged changes (or, with --amend, for the amended commit)
    #[command(after_long_help = COMMIT_MSG_HELP)]
    CommitMsg {
        /// Write the message of the final amended commit (HEAD plus the staged changes)
        #[arg(long)]
        amend: bool,
        #[command(flatten)]
        shared: message::Shared,
    },
    /// Generate the message and create the commit with git commit (or amend HEAD)
    #[command(after_long_help = COMMIT_HELP)]
    Commit {
        /// Amend HEAD (keeping its author) instead of creating a new commit
        #[arg(long)]
        amend: bool,
        #[command(flatten)]
        shared: message::Shared,
    },
    /// Print the squash-merge commit message for the current branch against origin/HEAD
    #[command(after_long_help = PR_MESSAGE_HELP)]
    PrMessage {
        #[command(flatten)]
        shared: message::Shared,
    },
    /// Write GitHub release notes for BASE..RELEASE, or for HEAD as the next patch|minor|major version
    #[command(after_long_help = RELEASE_NOTE_HELP)]
    ReleaseNote {
        /// Write the Markdown to FILE (checked for writability first) and stream the trace on stdout instead
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// BASE RELEASE (two revisions, e.g. v1.2.0 v1.3.0), or one of patch, minor, major
        #[arg(value_name = "RANGE", num_args = 1..=2, required = true)]
        range: Vec<String>,
        #[command(flatten)]
        shared: message::Shared,
    },
    /// Inspect and run the read-only repository tools the model may call
    #[command(subcommand)]
    Tools(ToolsCommand),
}

#[derive(Debug, Subcommand)]
enum ToolsCommand {
    /// Print the tool definitions (name, description, JSON Schema) as JSON
    List,
    /// Run one tool and print its result envelope as JSON (exit 1 when not ok)
    Call {
        /// The tool to run, e.g. git_status_summary
        name: String,
        /// The arguments, a JSON object, e.g. '{"cwd": "src"}'
        #[arg(value_name = "JSON-ARGS", default_value = "{}")]
        args: String,
        /// The workspace the tool works in (a directory inside a git working tree)
        #[arg(long, value_name = "DIR", default_value = ".")]
        workspace: PathBuf,
    },
}

fn main() -> ExitCode {
    let args: Vec<_> = std::env::args_os().collect();
    match frontend::generate_request(&args) {
        Some(Ok(kind)) => {
            let text = frontend::generate(kind, Cli::command());
            return frontend::output_status(std::io::stdout().write_all(&text));
        }
        Some(Err(message)) => {
            usage_error(&message);
            return ExitCode::from(2);
        }
        None => {}
    }
    let cli = Cli::parse_from(args);
    match cli.command {
        Command::CommitMsg { amend, shared } => message::commit_msg(&shared, amend),
        Command::Commit { amend, shared } => message::commit(&shared, amend),
        Command::PrMessage { shared } => message::pr_message(&shared),
        Command::ReleaseNote { out, range, shared } => match message::range_spec(&range) {
            Ok(spec) => message::release_note(&shared, out.as_deref(), &spec),
            Err(text) => {
                usage_error(&text);
                ExitCode::from(2)
            }
        },
        Command::Tools(command) => tools(command),
    }
}

macro_rules! auth_help {
    () => {
        "Credentials, in this order: ChatGPT sign-in from Codex ($CODEX_HOME/auth.json, default ~/.codex/auth.json, with \"auth_mode\": \"chatgpt\"); else OPENAI_API_KEY (with OPENAI_BASE_URL and OPENAI_MODEL); a local server at --base-url needs none. Flags win over both. --api chat speaks Chat Completions (Ollama, llama.cpp, vLLM)."
    };
}

const COMMIT_MSG_HELP: &str = concat!("Examples:
  git add -p && git-agent commit-msg
  git-agent commit-msg --amend --high
  git-agent commit-msg --api chat --base-url http://127.0.0.1:8080/v1 --model qwen3

stdout receives only the message. A trace of every request, response and tool call is written to .git-agent/sessions/<timestamp>-commit-msg/ (git-ignored; --debug prints its path).

Exit status: 0 with the message on stdout; 1 on failure (nothing staged, no credentials, provider error, a message still invalid after one repair pass); 2 on usage errors.

", auth_help!());

const PR_MESSAGE_HELP: &str = concat!("Examples:
  git-agent pr-message
  git-agent pr-message | git commit --amend -F -      # reword a local squash

The scope is the branch's diff against its merge base with origin/HEAD; its commits are supporting evidence. No tools are offered to the model. The message has a Conventional Commits subject and no pull-request prose, so release tooling that parses squash commits keeps working. stdout receives only the message; the trace goes to .git-agent/sessions/<timestamp>-pr-message/.

origin/HEAD must be set: `git remote set-head origin --auto`.

Exit status: 0 with the message on stdout; 1 on failure (origin/HEAD missing, nothing to describe, no credentials, provider error, a message still invalid after one repair pass); 2 on usage errors.

", auth_help!());

const RELEASE_NOTE_HELP: &str = concat!("Examples:
  git-agent release-note v1.2.0 v1.3.0
  git-agent release-note minor                     # latest vX.Y.Z (or X.Y.Z) tag reachable from HEAD, bumped; HEAD is the release
  git-agent release-note --out notes.md patch

The evidence (commits with clamped messages, changed paths, statistics, patch excerpts, operator signals, submodule moves with their own commits when checked out, candidate items) is prepared before the model runs; the model answers in JSON, which is validated against it, and the Markdown is built locally: sections first, then ### Full Changelog when code changed, with links that follow each repository's origin remote. The only tool offered is repo_summary. At least 6 model steps and 10 minutes are allowed, whatever --max-steps and --timeout say.

Without --out, stdout receives only the Markdown and the trace goes to .git-agent/sessions/<timestamp>-release-note/. With --out, stdout streams the trace and the file is written at the end (no session directory).

Exit status: 0 on success; 1 on failure (unknown revisions, no version tag for a shortcut, an empty range, an unwritable --out file, no credentials, provider error, an answer still invalid after one repair pass); 2 on usage errors.

", auth_help!());

const COMMIT_HELP: &str = concat!("Examples:
  git-agent commit
  git-agent commit --amend

stdout streams a summarized trace while the message is generated, then git's commit summary. git commit runs with your hooks, signing and identity. If git refuses the commit, the generated message is printed on stderr and kept in .git-agent/COMMIT_MSG.

Exit status: 0 when the commit was created; 1 on failure (including a refused commit); 2 on usage errors.

", auth_help!());

/// `git-agent tools …`.
fn tools(command: ToolsCommand) -> ExitCode {
    match command {
        ToolsCommand::List => print_json(&repo_tools::definitions(), ExitCode::SUCCESS),
        ToolsCommand::Call {
            name,
            args,
            workspace,
        } => {
            let args: Value = match serde_json::from_str(&args) {
                Ok(args) => args,
                Err(err) => {
                    usage_error(&format!(
                        "JSON-ARGS is not valid JSON ({err}); pass an object such as '{{}}' or '{{\"cwd\": \"src\"}}'"
                    ));
                    return ExitCode::from(2);
                }
            };
            let envelope = repo_tools::catalog(&workspace).dispatch(&name, &args);
            let status = if envelope.ok() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            };
            print_json(&envelope.to_value(), status)
        }
    }
}

/// A usage error on stderr (it may quote an argument: control characters are
/// escaped).
fn usage_error(message: &str) {
    eprintln!("error: {}", safe_io::term::sanitize(message));
}

/// Prints `value` as pretty JSON; `status` unless the write fails (a closed pipe
/// is still success).
fn print_json(value: &Value, status: ExitCode) -> ExitCode {
    let mut text = serde_json::to_string_pretty(value).expect("a JSON value always serializes");
    text.push('\n');
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => status,
        Err(err) => frontend::output_status(Err(err)),
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[test]
    fn cli_definition_is_valid() {
        Cli::command().debug_assert();
    }

    #[test]
    fn tools_call_defaults() {
        let cli = Cli::try_parse_from(["git-agent", "tools", "call", "repo_summary"]).unwrap();
        match cli.command {
            Command::Tools(ToolsCommand::Call {
                name,
                args,
                workspace,
            }) => {
                assert_eq!(name, "repo_summary");
                assert_eq!(args, "{}");
                assert_eq!(workspace, PathBuf::from("."));
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}
