//! `frontend`: the wiring the three binaries (`ultragit`, `git-agent`,
//! `code-commit`) share, so none of them carries a copy.
//!
//! - [`run`] (`runner.rs`): the one front-end runner. It handles the hidden
//!   `--generate` flag, parsing, the async runtime, `warning:` lines, the error
//!   shape (`error: …`, `caused by: …` with `--debug`, `hint: …`), output to a
//!   closed pipe, and exit codes; each binary's `main` is one call to it.
//! - [`CommandError`] (`error.rs`): a failure classified once ([`ErrorKind`]:
//!   usage, config, user, provider, git, internal) with its cause chain and
//!   hints; [`ErrorKind::exit_code`] is the one exit-code table. `classify.rs`
//!   classifies every library error type the binaries meet (`Classify`).
//! - [`env`](mod@env): the environment variables the binaries read and how they become
//!   library settings (proxies, author context names); [`provider`]: provider settings
//!   and the key's variable to a `ProviderConfig`, and `provider::connect`, the one
//!   way all three binaries turn a config into a provider (its key masked in
//!   everything printed from then on); [`openai`]:
//!   `git-agent`'s resolution of OpenAI credentials (flag → Codex ChatGPT sign-in
//!   → `OPENAI_*` → default), its model and base URL a table of keys resolved
//!   by `layered-config` (the other tools' tables live with the libraries that
//!   read them).
//!
//! - **Dependencies:** `llm` (settings types, `build_provider` behind `provider::connect`, the redactor,
//!   the default models); `layered-config` (`git-agent`'s keys);
//!   `safe-io` (terminal sanitizing); the libraries whose errors `classify.rs`
//!   classifies (`gitctx`, `agent`, `ultragit-read`, `ultragit-annotate`,
//!   `ultragit-notes`, `git-evidence`, `code-commit-core`); `clap`, `clap_complete`, `tokio`
//!   (the runtime), `serde_json` (Codex's `auth.json`).
//! - **Layering:** `frontend` is the binaries' support layer, above every
//!   feature crate: the one library that may depend on feature crates (to
//!   classify their errors in one exit-code table); no feature crate depends
//!   on it.
//! - **Invariant:** only the runner writes to stdout and stderr, on behalf of
//!   the binary's `main`, and only the way its docs say; everything it prints
//!   on stderr is sanitized and, once a command registered the provider's
//!   redactor, masked. Nothing in this crate exits or reads the environment:
//!   binaries pass arguments and a lookup in.
//! - **Invariant:** a library error type is classified in one place
//!   (`classify.rs`); exit codes come from [`ErrorKind::exit_code`] and
//!   [`Status`] only.

mod classify;
pub mod env;
mod error;
pub mod openai;
pub mod provider;
mod runner;
#[cfg(test)]
mod test_support;

pub use error::{CommandError, ErrorKind};
pub use runner::{Cli, Context, Outcome, Status, run};
