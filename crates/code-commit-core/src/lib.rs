//! `code-commit-core`: one agentic edit (spec 001), safe by construction.
//!
//! ```text
//! preflight ─▶ prompts ─▶ model ─▶ parse (^^^ blocks) ─▶ policy (every path) ─▶ apply (all or nothing) ─▶ build.sh
//!                 ▲                                                                                          │
//!                 └──────────────────────────── repair prompt (≤ 3 rounds) ◀─────────────────────────────────┘
//! ```
//!
//! - [`prompts`]: the system-prompts module and the initial/repair layouts.
//! - [`parse`]: `^^^path` … `^^^end` / `^^^delete` blocks; rejects rather than
//!   guesses (unterminated, duplicate, fenced, elided content).
//! - [`policy`]: judges every path as git would (traversal, `.git` spellings,
//!   protected names, `.gitignore` rules by git's own engine, symlinks).
//! - [`apply`]: temporary files renamed into place, originals kept aside, full
//!   rollback on any failure, file modes kept.
//! - [`build`]: `build.sh` in its own process group with a timeout, without the
//!   key in its environment, output bounded.
//! - [`run`]: the loop; [`logs`]: one numbered folder per run under
//!   `agent-config/logs/`; [`config`]: provider, model, base URL and key.
//!
//! - **Dependencies:** `llm` (the providers, secrets), `gitctx` (discovery and
//!   ignore rules).
//! - **Invariant:** nothing is written before every block of a response is
//!   verified; a response is applied completely or not at all.
//! - **Invariant:** the API key travels only in a request header; logs and
//!   messages show at most its last two characters; `build.sh` never sees it.
//! - No printing: progress is reported through a callback.

pub mod apply;
pub mod build;
pub mod config;
mod error;
pub mod logs;
pub mod parse;
pub mod policy;
pub mod prompts;
pub mod protect;
pub mod run;
pub mod sandbox;

pub use error::Error;
