//! `layered-config`: settings as typed keys, read from layers of sources and
//! resolved in one place, with the rule of which keys an untrusted file may set.
//!
//! A [`Key`] says where one setting may come from — a command-line flag, an
//! environment variable, a git config key, a key in a configuration file —,
//! whether a file in the repository may set it ([`Untrusted`]), and how a raw
//! [`Value`] becomes the typed setting (its parser; [`parse`] holds the common
//! ones). Each tool family keeps its keys in one table, beside the code that
//! reads them (`ultragit_read::config`, `ultragit_annotate`'s `config`,
//! `code_commit_core::config`, `frontend::openai`; default models and key
//! variables are `llm::defaults`). A [`Stack`] holds the
//! [`Layer`]s a command reads, highest precedence first, and resolves a key by
//! walking them once: the first layer that holds a value wins, and the value comes
//! back with its [`Source`] ([`Resolved`]), so an error or a debug line can say
//! where it came from.
//!
//! **Precedence** is the order of the layers. The usual order is flag, then
//! environment, then git config, then the user's own files, then the
//! repository's files, then the default. A tool whose specification says
//! otherwise stacks its layers in that order instead (`ultragit`'s team file,
//! `.ultragit-config.toml`, overrides git config for the keys it may set: spec
//! 003 §6); the order is visible where the stack is built.
//!
//! - **Invariant (trust):** a layer from the repository ([`Layer::repo_file`]) is
//!   never consulted for a key it may not set ([`Untrusted::MayNotChoose`]).
//!   Where it sets one anyway, whatever the value, [`Stack::finish`] reports an
//!   [`Ignored`] whose warning names the file, what the key would have chosen, and
//!   the trusted places to set it (the key's git config key, flag and variable).
//! - **Invariant:** a bad value is a [`ConfigError`] that names its source
//!   (`git config ultragit.maxDiffLines must be …`, `agent-config/config.toml:
//!   provider 'x' is not one of …`). Only the value that wins is parsed: one a
//!   higher layer overrides is never looked at, as in git. A key in a file that no
//!   key of the table names is an error at [`Stack::finish`]: a typo does not pass
//!   silently.
//! - **Invariant:** this crate reads nothing. Flags, environment lookups, git
//!   config readers and file contents are handed in; it never touches the
//!   environment, the file system or the terminal.
//! - **Dependencies:** none of our crates (`toml` to read configuration files,
//!   `thiserror`). Published: `ultragit-read` depends on it.

mod key;
mod layer;
pub mod parse;
mod stack;
mod value;

pub use key::{Key, Kind, Untrusted};
pub use layer::{Layer, Section};
pub use stack::{Ignored, Stack};
pub use value::{ConfigError, Resolved, Source, Value};

#[cfg(test)]
mod tests;
