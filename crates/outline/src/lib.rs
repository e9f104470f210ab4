//! Tree-sitter outlines of source files, and anchor resolution against them.
//!
//! Text in, outline out: [`outline`] takes a path (only to pick the
//! [`Language`] from its extension) and the source text, and returns the
//! file's semantic [`Unit`]s — functions, methods, types, impls, classes,
//! interfaces, modules and namespaces, constants, type aliases, macros — with
//! their kind, name, qualified name, signature and line range. [`resolve_anchor`] finds the units a name such as
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
//! **Carried forward.** [`parse`] also says whether the source parsed
//! without a syntax error and where its top-level nodes lie ([`Outline`]);
//! [`carry`] makes the outline of a later version of the file from it,
//! parsing only the changed stretches with their neighbouring units, and
//! gives it only when it is exactly what [`parse`] would give (else `None`:
//! parse the whole file). A cache of outlines keyed by content and
//! [`Language::outline_version`] uses both.
//!
//! Supported languages are rows of a table (`src/lang/`, one file per
//! language): Rust, Python, C, C++, Go, Java, JavaScript, TypeScript and TSX.
//! Any other file yields [`OutlineError::NoGrammar`], which callers treat as
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
//!   range includes its decorators; in C, C++, Go, Java, JavaScript and
//!   TypeScript a unit's range includes the comments directly above it (no
//!   blank line between), Java annotations and TypeScript decorators.
//! - Qualified names follow each language's own style: `::` in Rust and C++
//!   (`net::Client::connect`, `render::Scene::add_layer`, out-of-line
//!   definitions qualified by their class); `.` in Python, Java, JavaScript
//!   and TypeScript (`Outer.Inner.method`); Go's `go doc` form behind the
//!   package clause (`store.New`, `store.Store.Get` for a method with
//!   receiver `*Store`); C's plain names (`static` functions too).
//! - Anchor queries may use `::` or `.` in every language: both sides are
//!   compared with `.` read as `::`.
//! - Units come in source order, each container before its members. Only
//!   units reachable through containers are listed: functions nested in
//!   function bodies are not.
//! - Never panics, whatever the input: syntax errors yield the units
//!   tree-sitter could still recognise.

mod anchor;
mod carry;
mod extract;
mod lang;
mod unit;

pub use anchor::{
    AnchorError, AnchorResolution, MAX_FUZZY_DISTANCE, MatchKind, Stability, anchor_stability,
    levenshtein, match_name, resolve_anchor,
};
pub use carry::{carry, carry_for};
pub use extract::{
    MAX_SIGNATURE_CHARS, Outline, OutlineError, outline, outline_for, parse, parse_for,
};
pub use lang::{Language, RULES_VERSION};
pub use unit::{LineSpan, Unit, UnitKind};
