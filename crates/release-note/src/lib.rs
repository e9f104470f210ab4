//! `release-note`: git-agent's release note (spec 004 "Release note
//! generation") for a range of commits, from evidence prepared before the model
//! runs to Markdown built locally.
//!
//! The API is the task: [`prepare()`] a [`Request`] (its evidence in
//! [`Request::context`], a [`ReleaseContext`]) for a [`RangeSpec`],
//! [`generate`] the [`Note`], and write it with [`preflight_output`] and
//! [`write_output`]; [`run`] is all of it as `git-agent release-note`'s one
//! call (options from the binary's settings, the trace, `--out`). Inside, one
//! module per stage:
//!
//! - `prepare`: the evidence — refs peeled and checked, the commits with
//!   messages clamped to 10 lines and 1,000 words, changed paths, statistics,
//!   patch excerpts, operator signals (`signals`), submodule moves with their
//!   own commits when checked out (URLs from `.gitmodules` read through git),
//!   candidate items (`candidates`: `component: subject` read as a scope,
//!   internal crate version bumps grouped into one (`bumps`), packaging-only
//!   commits left out unless they are the release's point, Markdown links
//!   reduced to their text), pull request and issue references (`PR #N`,
//!   `(#N)`, `Merge pull request #N`, GitLab `!N`; `Fixes/Closes/Resolves
//!   #N`), and link hints from the remotes (`links`).
//! - `task`: the request layers, the one fallback tool (`repo_summary`), the
//!   run with one repair pass (and one for an answer cut off by the output
//!   cap, with twice the cap), and `--out`.
//! - `answer`: the strict JSON the model answers with, checked against the
//!   evidence; `markdown`: the note rendered and checked locally.
//!
//! - **Dependencies:** `commit-text` (Conventional Commits headers, trailers,
//!   pull-request references, clamped messages), `lockfile-diff` (package
//!   version changes of lockfiles, used directly), `gitctx`, `agent`, `llm`,
//!   `guidance`, `repo-tools`, `safe-io`, and `git-evidence` for what every
//!   git-agent task shares: path classes (`classify`), diff fitting (`fit`),
//!   the prompt layers and evidence escaping (`prompt`, `render::data`), the
//!   task options built from the binary's settings, tool limits, the run's
//!   trace and the error type. Never `git-agent-core`: the commit and squash
//!   messages and the release note are siblings on `git-evidence`, and
//!   neither depends on the other.
//! - **Errors:** [`git_evidence::Error`], not a type of its own: a release
//!   note fails the way every git-agent task does (git, guidance, the model's
//!   run, an answer still invalid after the repair pass, `--out`), and the
//!   binary reports all its tasks through one classification of that type.
//! - **Invariant:** read-only toward the repository; `--out` is written
//!   atomically and never through a link inside the working tree.
//! - **Invariant:** everything the model sees from the repository is data
//!   between evidence tags, with our own closing tags neutralised; every item
//!   of an accepted answer cites refs that resolve to the range's commits, pull
//!   requests or submodule commits, and its text is one plain line without
//!   control characters.
//! - **Invariant:** the evidence is bounded whatever the range: at most 150
//!   commits (the rest counted), 30 commits per submodule, 20 paths per
//!   commit, 1,500 bytes of excerpt per commit and 40 KiB of excerpts in all
//!   (`prepare::ReleaseLimits`).

mod answer;
mod bumps;
mod candidates;
#[cfg(test)]
mod fixtures;
mod links;
mod markdown;
mod prepare;
mod signals;
mod task;
mod types;

pub use prepare::RangeSpec;
pub use task::{
    MIN_TIMEOUT, Note, OutFile, Released, Request, generate, preflight_output, prepare, run,
    session_metadata, write_output,
};
pub use types::*;

/// Compiles one of the crate's built-in patterns; the tests exercise every
/// one, so this cannot fail at run time.
fn built_in(pattern: &str) -> regex::Regex {
    regex::Regex::new(pattern).expect("a built-in pattern is valid")
}
