//! The command line of `git-agent` and the dispatch to its commands.

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use frontend::{CommandError, Context, Outcome};
use serde_json::Value;

use crate::message;

#[derive(Debug, Parser)]
#[command(name = "git-agent", version, about, long_about = LONG_ABOUT, arg_required_else_help = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

impl frontend::Cli for Cli {
    /// `--debug` is a flag of the generation commands.
    fn debug(&self) -> bool {
        match &self.command {
            Command::CommitMsg { shared, .. }
            | Command::Commit { shared, .. }
            | Command::PrMessage { shared }
            | Command::ReleaseNote { shared, .. } => shared.debug,
            Command::Tools(_) => false,
        }
    }
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

/// Runs the command `cli` names.
pub fn run(cli: Cli, ctx: &Context) -> Result<Outcome, CommandError> {
    match cli.command {
        Command::CommitMsg { amend, shared } => message::commit_msg(&shared, amend, ctx),
        Command::Commit { amend, shared } => message::commit(&shared, amend, ctx),
        Command::PrMessage { shared } => message::pr_message(&shared, ctx),
        Command::ReleaseNote { out, range, shared } => {
            let spec = message::range_spec(&range).map_err(CommandError::usage)?;
            message::release_note(&shared, out.as_deref(), &spec, ctx)
        }
        Command::Tools(command) => tools(command),
    }
}

macro_rules! auth_help {
    () => {
        "Credentials, in this order: ChatGPT sign-in from Codex ($CODEX_HOME/auth.json, default ~/.codex/auth.json, with \"auth_mode\": \"chatgpt\"); else OPENAI_API_KEY (with OPENAI_BASE_URL and OPENAI_MODEL); a local server at --base-url needs none. Flags win over both. With ChatGPT sign-in the model is Codex's own (model in $CODEX_HOME/config.toml, else OPENAI_MODEL, else gpt-5-codex) and requests carry what Codex sends: streamed, not stored, no output cap. --api chat speaks Chat Completions (Ollama, llama.cpp, vLLM).

The output cap (--max-output-tokens) counts reasoning tokens too, so its default grows with the effort: 4096 with --low, 8192 by default and with --medium, 16384 with --high, 32768 with --xhigh. An answer cut off by it is asked for again once, with twice the cap."
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

The scope is the branch's diff against its merge base with origin/HEAD; its commits are supporting evidence. No tools are offered to the model. The subject follows the style of the base branch's recent subjects — Conventional Commits (`type(scope): …`), `component: subject` or a plain imperative sentence — and the message has no pull-request prose, so release tooling that parses squash commits keeps working. stdout receives only the message; the trace goes to .git-agent/sessions/<timestamp>-pr-message/.

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

/// `git-agent tools …`: JSON on stdout; `call` exits 1 when the envelope is not
/// ok.
fn tools(command: ToolsCommand) -> Result<Outcome, CommandError> {
    match command {
        ToolsCommand::List => Ok(Outcome::text(json_text(&repo_tools::definitions()))),
        ToolsCommand::Call {
            name,
            args,
            workspace,
        } => {
            let args: Value = serde_json::from_str(&args).map_err(|err| {
                CommandError::usage(format!(
                    "JSON-ARGS is not valid JSON ({err}); pass an object such as '{{}}' or '{{\"cwd\": \"src\"}}'"
                ))
            })?;
            let envelope = repo_tools::catalog(&workspace).dispatch(&name, &args);
            let outcome = Outcome::text(json_text(&envelope.to_value()));
            Ok(if envelope.ok() {
                outcome
            } else {
                outcome.failed()
            })
        }
    }
}

/// `value` as pretty JSON and a newline.
fn json_text(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).expect("a JSON value always serializes");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn cli_definition_is_valid() {
        Cli::command().debug_assert();
    }

    #[test]
    fn the_help_names_the_defaults_in_use() {
        assert!(COMMIT_HELP.contains(llm::defaults::CHATGPT_MODEL));
        for effort in [
            None,
            Some(llm::ReasoningEffort::Low),
            Some(llm::ReasoningEffort::High),
            Some(llm::ReasoningEffort::Xhigh),
        ] {
            let cap = git_evidence::default_output_cap(effort).to_string();
            assert!(COMMIT_HELP.contains(&cap), "{cap}");
        }
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
