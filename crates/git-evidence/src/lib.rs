//! `git-evidence`: what every task of `git-agent` (spec 004) shares — the
//! commit and squash messages (`git-agent-core`) and the release note
//! (`release-note`) build on it, and it knows neither.
//!
//! - [`classify`]: what kind of change each path is (hand-written, lockfile,
//!   generated, binary, submodule), so the diff budget goes to what a person
//!   wrote; lockfiles are recognized through `lockfile-diff`.
//! - [`fit`]: diff text fitted into a byte budget, every file its share
//!   (water-filling), each cut at a line end with a marker naming the tool
//!   that reads more.
//! - [`prompt`]: the request layers every task shares (environment, guidance,
//!   the escaped operator hint) and [`prompt::escape`]; [`render`]: repository
//!   text as data that cannot close our evidence tags ([`render::data`]).
//! - [`Options`], [`Settings`]: what a task is run with, built from the
//!   binary's flags (budgets, the output cap's default by reasoning effort,
//!   guidance, the operator hint), and [`TOOL_LIMITS`], the limits of tool
//!   results.
//! - [`session`]: `.git-agent/sessions/<timestamp>-<command>/` for traces and
//!   `.git-agent/COMMIT_MSG`; [`trace`]: a run's trace (a session directory, or
//!   the console the binary hands over), its [`Notices`] for the user and the
//!   [`Failed`] run naming its trace.
//! - [`Error`]: why any git-agent task failed, so the binary classifies every
//!   task's failure once.
//!
//! - **Dependencies:** `gitctx`, `lockfile-diff` (lockfile kinds), `agent` and
//!   `llm` (budgets, trace sinks, the provider a run is handed), `guidance`
//!   (its options and errors), `safe-io` (`.git-agent/` written without
//!   following links). Never `git-agent-core` or `release-note`.
//! - **Invariant:** read-only toward the repository; the only files written are
//!   under `.git-agent/`, which ignores itself, is refused when git tracks
//!   anything in it, and is written through directory handles.
//! - **Invariant:** repository text placed in a prompt goes through
//!   [`prompt::escape`] or [`render::data`], so it never closes our tags.
//! - No printing, no environment, no home directory: the binary passes the
//!   provider, its flags as [`Settings`], a [`Console`] and its [`Notices`].

pub mod classify;
mod error;
pub mod fit;
mod options;
pub mod prompt;
pub mod render;
pub mod session;
pub mod trace;

pub use error::Error;
pub use options::{Options, Settings, TOOL_LIMITS, default_output_cap};
pub use trace::{Console, Failed, Host, Notices, Trace};
