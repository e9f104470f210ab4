//! `code-commit-core`: one agentic edit (spec 001), safe by construction.
//!
//! ```text
//! preflight ─▶ prompts ─▶ model ─▶ parse (^^^ blocks) ─▶ policy (every path) ─▶ apply (all or nothing) ─▶ build.sh
//!                 ▲                                                                                          │
//!                 └──────────────────────────── repair prompt (≤ 3 rounds) ◀─────────────────────────────────┘
//! ```
//!
//! - `prompts`: the system-prompts module and the initial/repair layouts.
//! - [`parse`]: `^^^path` … `^^^end` / `^^^delete` blocks; rejects rather than
//!   guesses (unterminated, duplicate, fenced, elided content).
//! - [`policy`]: judges every path as git would (traversal, `.git` spellings,
//!   protected names, `.gitignore` rules by git's own engine, symlinks).
//! - [`apply`]: temporary files renamed into place, originals kept aside, full
//!   rollback on any failure, file modes kept; every operation relative to a
//!   directory handle, never through a symbolic link.
//! - [`build`]: `build.sh` in its own process group with a timeout, without the
//!   key in its environment, output bounded, in the [`sandbox`].
//! - [`sandbox`]: Landlock (Linux): the key's folder unreadable to the build,
//!   writes only inside the project, the temporary directory and the build
//!   caches; said once when the kernel has no Landlock.
//! - [`undo`]: what a failed run leaves in the working tree: how to undo it
//!   (`git restore`, `rm`), or, with `--revert-on-failure`, exactly the
//!   changed files put back.
//! - `protect`: the protected files (`build.sh`, `.gitignore`, `Cargo.lock`,
//!   `codeRollup.sh`, `agent-config/`, `.git/hooks/`, `.git/config`), hashed
//!   before and after every build; a build that changed one fails and stops the
//!   run.
//! - [`run`]: the preflight (a tracked `agent-config/` is refused before anything
//!   is read from it) and the loop, run as a session: one `attempt()` per
//!   round (ask, check, apply all or nothing) returning `Result<Applied,
//!   Rejected>`, then the build on tokio's blocking pool; `logs`: one
//!   numbered folder per run under `agent-config/logs/`, written through a
//!   directory handle; [`config`]:
//!   provider, model, base URL and key from `agent-config/` and the user's own
//!   configuration folder.
//!
//! - **Dependencies:** `llm` (the providers, secrets), `gitctx` (discovery,
//!   ignore rules, the index), `safe-io` (no-follow, bounded file access),
//!   `layered-config` (the configuration table, resolved with its sources),
//!   `landlock` (the sandbox, Linux only), `rustix` (killing the build's
//!   process group; the sandbox's no-follow opens and capabilities).
//! - **Trust:** an `agent-config/` git tracks came with the repository and is
//!   refused; an untracked one is the user's own and may name the endpoint and
//!   the key. Everything the model returns, and everything `build.sh` does, is
//!   untrusted.
//! - **Invariant:** nothing is written before every block of a response is
//!   verified; a response is applied completely or not at all.
//! - **Invariant:** files under the project are read as regular files below
//!   the project's directory handle, never through a symbolic link, each with a
//!   size limit (configuration 1 MiB, key 64 KiB, query 4 MiB, rollup 32 MiB);
//!   files are written the same way.
//! - **Invariant:** the API key travels only in a request header; logs, the
//!   repair prompt and messages show at most its last two characters, and none
//!   of its base64, hex or URL-encoded forms; `build.sh` never sees it in its
//!   environment and, under Landlock, cannot read the file it came from.
//! - No printing, no environment: progress is reported through a callback, and
//!   the binary resolves every path outside the project (user files, temporary
//!   directory, caches) and passes it down.

pub mod apply;
pub mod build;
pub mod config;
mod error;
mod logs;
pub mod parse;
pub mod policy;
mod prompts;
mod protect;
pub mod run;
pub mod sandbox;
mod session;
pub mod undo;

pub use error::Error;
