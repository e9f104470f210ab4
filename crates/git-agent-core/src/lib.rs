//! `git-agent-core`: the message tasks of `git-agent` (spec 004) — the commit
//! message (`commit-msg`, `commit`, both with `--amend`) and the squash message
//! (`pr-message`). The release note is its sibling crate `release-note`; what
//! all of them share is `git-evidence`'s.
//!
//! - [`context`]: the evidence gathered before the first model call (staged or
//!   amend mode), using `git_evidence`'s [`classify`] (hand-written, lockfile,
//!   generated, binary, submodule; lockfiles summarized as package version
//!   changes by `lockfile-diff`) and [`fit`] (every file gets its share of the
//!   diff budget); [`render`]: that evidence as the task prompt's data block.
//! - [`tools`]: the read-only commit-message tools of §5 plus the shared
//!   repository tools.
//! - [`prompt`]: the commit message's request layers (instructions, tool
//!   policy, task prompt with evidence boundaries), over the shared ones of
//!   `git_evidence::prompt` (environment, guidance, the escaped operator hint).
//! - [`commit_msg`]: `prepare` (all git work, synchronous) and `generate` (the
//!   agent loop, one repair pass, task-ID preservation, final validation), and
//!   each command's one call: `run` (`commit-msg`) and `commit` (`commit`: the
//!   message, then `git commit`). The message text itself — shaping,
//!   validation, trailers, task IDs — is `commit-text`'s.
//! - [`pr_message`]: the squash message, built on `commit_msg`'s loop (never
//!   the other way round): its request is a [`commit_msg::MessageRequest`], so
//!   the one `generate` runs both. It asks for, and checks, the subject style
//!   of the base branch's recent subjects (`commit_text::SubjectStyle`), and
//!   sends the branch's commit messages whole within a total budget (16 KiB).
//!   `pr_message::run` is the command's one call.
//! - Re-exported from `git-evidence` for the binaries: [`Error`],
//!   [`classify`], [`fit`], [`session`].
//!
//! - **Dependencies:** `git-evidence` (path classes, fitting, shared prompt
//!   layers, options, traces, `.git-agent/`, the error), `gitctx`, `llm`,
//!   `agent`, `guidance`, `repo-tools`, `commit-text` (shaping and validation
//!   of every message), `lockfile-diff` (lockfile summaries). Never
//!   `release-note`.
//! - **Invariant:** read-only toward the repository until the binary asks for the
//!   commit ([`commit`], [`commit_msg::commit`]); the only files written are
//!   under `.git-agent/` (trace sessions, and `COMMIT_MSG` when git refuses a
//!   commit).
//! - **Invariant:** every staged path is named in the prompt, whatever happens to
//!   its diff text; lockfiles are summarized, never hidden.
//! - **Invariant:** model text is untrusted and bounded: an answer over
//!   `commit_text::MAX_ANSWER_BYTES` (64 KiB) is refused as one problem without
//!   being shaped; a shaped message holds no control character but newline and
//!   tab, so none reaches `git commit` or a terminal.
//! - No printing, no environment, no home directory: the binary resolves auth and
//!   passes a provider, its flags as `git_evidence::Settings`, stdout as a
//!   `git_evidence::Console` and its stderr lines as `git_evidence::Notices`.

pub mod commit_msg;
pub mod context;
pub mod pr_message;
pub mod prompt;
pub mod render;
pub mod tools;

use std::path::Path;

pub use git_evidence::{Error, classify, fit, session};
pub use gitctx::CommitRun;

/// Creates the commit with `message` through `git commit --file -` (with
/// `--amend`: `git commit --amend --file -`, keeping the original author) at the
/// top of the working tree containing `cwd`, so hooks and signing apply.
pub fn commit(cwd: &Path, message: &str, amend: bool) -> Result<CommitRun, Error> {
    let repo = gitctx::Repo::discover(cwd)?;
    Ok(repo.run_commit(message, amend)?)
}
