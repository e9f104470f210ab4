//! `lockfile-diff`: the package versions a lockfile change bumps.
//!
//! A lockfile diff is long, repetitive and mostly hashes: shown raw it would
//! drown a prompt's diff budget, and hidden a commit message could not say
//! what it bumps. Instead each changed lockfile is reduced to package version
//! changes (`package: old → new`) computed from its old and new contents:
//!
//! - [`kind_of`] recognizes a lockfile by its file name;
//! - [`parse`] reads the package versions of one side;
//! - [`summarize`] compares both sides into a [`LockSummary`];
//! - [`LockSummary::render`] writes one compact plain-text block for a prompt.
//!
//! Nine formats, one table (`kind.rs`): each [`LockKind`]'s file names,
//! label and parser. One module per format under `format/`: the TOML ones
//! (`Cargo.lock`, `poetry.lock`, `uv.lock`) through the `toml` crate, the
//! JSON ones (npm, Composer) through `serde_json`, both with derived
//! `serde` types that borrow from the input (plus two small generic
//! deserializers where derive was slower: a lenient string and a map's
//! entries); the text ones (Yarn, pnpm, Go, Bundler) line by line. Parsers
//! read only names and versions and ignore the rest.
//!
//! - **Dependencies:** none of our crates; `serde`, `serde_json`, `toml`,
//!   `thiserror`. Pure: no I/O, no git, no printing — callers pass contents.
//! - **Invariant:** a lockfile is untrusted input (it comes from the
//!   repository). No input makes this crate panic — garbage, truncated files,
//!   huge lines, deep nesting, non-ASCII; work is linear in the input size
//!   (nesting is bounded by the JSON and TOML parsers' depth limits), and
//!   what a parse yields is never longer than what it read.
//! - **Invariant:** an unparseable side is reported, never hidden: [`parse`]
//!   says why ([`ParseError`]) and [`summarize`] carries the reason in
//!   [`LockSummary::unparsed`], listing no changes. Names and versions with
//!   control characters are dropped, and the reason is rendered on one line.
//! - **Invariant:** output is deterministic: packages alphabetical by name,
//!   versions in version order, whatever the order in the file.

mod diff;
mod format;
mod kind;
mod order;
mod packages;

pub use diff::{LockSummary, PackageChange, summarize};
pub use kind::{LockKind, kind_of, parse};
pub use packages::{Packages, ParseError};
