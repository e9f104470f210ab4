//! `git-agent`: writes commit messages, squash messages and release notes from git evidence.
//!
//! A thin front end: `main` hands the command line to `frontend::run` (parsing,
//! printing, the error shape and exit codes are the same in all three binaries);
//! [`cli`] defines the arguments and calls one library entry point. It offers:
//!
//! - `git-agent commit-msg [--amend]`: the commit message for the staged changes
//!   (or for the final amended commit) on stdout, and nothing else; a trace
//!   session under `.git-agent/sessions/`. Exit 0, or 1 with the error on stderr.
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
//! The generation commands share their flags (`message::Shared`), among them
//! `--max-output-tokens N`: the output cap of one model answer, reasoning
//! included, by default scaled with the reasoning effort
//! (`git_evidence::default_output_cap`); an answer cut off by it is asked for again
//! once with twice the cap. With ChatGPT sign-in the model defaults to Codex's
//! own (`model` in `$CODEX_HOME/config.toml`), and the request is what Codex
//! sends (streamed, `store: false`, no output cap). `git commit` runs in the
//! user's own environment (`gitctx::Repo::user_command`), so their hooks see
//! what they see by hand.
//!
//! Everything printed on stderr has its control characters escaped
//! (`safe_io::term::sanitize`): errors quote model answers, provider messages
//! and arguments. JSON on stdout (`tools`) is exact; generated messages on stdout
//! are free of control characters by construction (`commit_text::check`).
//!
//! Errors have the shape every binary uses: `error: …`, with `--debug` one
//! `caused by: …` line per cause, then `hint: …` lines. Usage errors exit 2
//! (clap, and arguments clap cannot judge: a RANGE, JSON-ARGS). Output to a
//! closed pipe (`git-agent tools list | head`) is not a failure: exit 0. The
//! hidden `--generate KIND` flag (shell completions for `make install`) is
//! handled by the runner before clap so it stays out of `--help`.

// `git commit`'s own output is passed through as it is.
#![allow(clippy::print_stderr)]

mod cli;
mod message;

fn main() -> std::process::ExitCode {
    frontend::run(std::env::args_os(), cli::run)
}
