//! Tree-sitter outlines of source files, and anchor resolution against them.
//!
//! Text in, outline out: [`outline`] takes a path (only to pick the
//! [`Language`] from its extension) and the source text, and returns the
//! file's semantic [`Unit`]s — functions, methods, types, impls, modules,
//! constants, type aliases — with their kind, name, `::`-qualified name,
//! signature and line range. [`resolve_anchor`] finds the units a name such as
//! `MqttClient::connect` refers to (exact, unqualified, then fuzzy within
//! three edits, spec 003 §4.2); [`match_name`] applies the same rules to two
//! free-standing names (annotation regions, §4.5); [`anchor_stability`] tells
//! whether an annotation's anchor still exists with the same signature (§4.7).
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let source = "impl Client {\n    /// Opens it.\n    fn connect(&self) {}\n}\n";
//! let units = outline::outline("src/client.rs", source)?;
//! let found = outline::resolve_anchor(&units, "Client.connect")?;
//! assert_eq!(found.units[0].to_string(), "L2-3 method Client::connect | fn connect(&self)");
//! # Ok(())
//! # }
//! ```
//!
//! Supported languages are rows of a table (`src/lang/`): Rust and Python. Any
//! other file yields [`OutlineError::NoGrammar`], which callers treat as
//! line-range-only mode.
//!
//! # Dependencies
//! None of our crates. tree-sitter and the grammars are used internally; no
//! tree-sitter type appears in the API. `strsim` computes edit distances.
//!
//! # Invariants
//! - Text in, outline out: no git, no files, no environment, no printing.
//! - Lines are 1-based and inclusive. A Rust item's range includes the outer
//!   attributes and doc comments directly above it; a Python definition's
//!   range includes its decorators.
//! - Qualified names use `::` for every language (`net::Client::connect`,
//!   `Outer::Inner::method`); queries may use `.` instead.
//! - Units come in source order, each container before its members. Only
//!   units reachable through containers are listed: functions nested in
//!   function bodies are not.
//! - Never panics, whatever the input: syntax errors yield the units
//!   tree-sitter could still recognise.

mod anchor;
mod extract;
mod lang;
mod unit;

pub use anchor::{
    AnchorError, AnchorResolution, MAX_FUZZY_DISTANCE, MatchKind, Stability, anchor_stability,
    levenshtein, match_name, resolve_anchor,
};
pub use extract::{MAX_SIGNATURE_CHARS, OutlineError, outline, outline_for};
pub use lang::Language;
pub use unit::{LineSpan, Unit, UnitKind};
