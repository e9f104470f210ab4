//! `ultragit-read`: the read pipeline of ultragit (spec 003), as a library.
//!
//! Given files and optionally an anchor (`MqttClient::connect`) or a line range,
//! it blames the code, fetches the ultragit notes (`refs/notes/ultragit`) of the
//! commits blame names, keeps the annotated regions that concern the query, follows
//! their related annotations, applies the corrections people appended to the
//! notes, those still pending beside a note included ([`pending`];
//! `ultragit flag`/`correct`: corrected text shown and marked, flagged
//! regions' confidence halved; see `corrections`), scores each region's confidence, collects what
//! depends on the code and the cross-cutting concerns that mention it, trims the
//! result to a token budget and renders it as markdown, JSON or plain text. No LLM
//! and no network on this path.
//!
//! What it tells a reader beyond spec 003: each region's *commit* date (recency
//! and `--since` judge it, not the note's own timestamp — see [`score`]); the
//! later commits without a note that changed the region's lines
//! (`changed_since`, which also lowers anchor stability); an anchor the
//! outline lacks (a macro-defined test, a file without a grammar) resolved
//! through the notes and blame, saying so (`resolved_by`); cross-cutting
//! concerns on every member, not only where the declaring commit's lines are;
//! the decisions ([`ReadOutput::decisions`]: every matched region's
//! constraints, risks and dependencies, deduplicated, beyond the region cap,
//! with retired ones withheld — see `decisions`), which a budget keeps
//! longest, rendered first in a compact markdown; and, under a budget too
//! small for one full region, the top region's intent with a warning rather
//! than nothing. Scores are rounded to 3 decimals.
//!
//! Beside `read`, three queries (Feature 08), each a function over a
//! [`GitReadPipeline`] returning an [`Answer`] (rendered as markdown, JSON or
//! plain text): [`deps::deps`] (the regions whose `semantic_dependencies`
//! point at a unit, from the reverse dependency index [`DepsIndex`]),
//! [`history::history`] (every annotation that touched a file or unit, newest
//! first, renames followed, with constraints added and dropped) and
//! [`summary::summary`] (per-unit rollups of a file, or of each annotated file
//! of a directory, within a token budget). Both take the annotated commits from
//! the index (which records each note's regions by file and anchor), add the
//! file's former names and keep what HEAD reaches on any parent (the `lineage`
//! module), so a history that merges topic branches is read whole without
//! walking its unannotated commits.
//!
//! A line query resolves to the units enclosing its lines: a note anchored on
//! such a unit matches as it does for an anchor query, and a region stored
//! narrower than the unit it is reported as carries its `focus` lines.
//! Cross-cutting concerns are shown only where they overlap the query.
//!
//! ```no_run
//! use ultragit_read::{GitReadPipeline, ReadPipeline, ReadQuery, format_markdown};
//!
//! let pipeline = GitReadPipeline::open(".")?;
//! let output = pipeline.execute(&ReadQuery::file("src/mqtt/client.rs").with_anchor("connect"))?;
//! print!("{}", format_markdown(&output, false));
//! # Ok::<(), ultragit_read::ReadError>(())
//! ```
//!
//! - **Dependencies:** `ultragit-schema` (the note and output types), `gitctx` (all
//!   git access), `outline` (tree-sitter), `safe-io` (terminal-safe rendering),
//!   `layered-config` (the settings from git config and the team file, each
//!   with its source). Never `llm` or `agent`: projects using this crate get a small dependency tree.
//! - **Invariant:** notes and the team config are untrusted: the config is read
//!   bounded, its steering keys never honoured; every note or region that cannot
//!   be used is named in a warning; markdown and pretty output escape control
//!   characters, JSON stays exact.
//! - **Invariant:** overlap is judged in the annotating commit's own line
//!   coordinates (blame's original lines); regions are reported in today's; a
//!   region none of whose lines survive is not returned (see [`pipeline`]).
//! - **Invariant:** at most one `git blame` process per resolved scope (an
//!   anchor resolved through the notes blames its file once, and its scope is
//!   cut from that); every note and commit is read in-process, so the process
//!   count does not grow with history.
//! - **Invariant:** a read that matched regions never trims to zero of them.
//! - **Invariant:** a malformed note is skipped with a warning, never an error; a
//!   returned region always has `intent` and `constraints`.
//! - **Invariant:** the reverse dependency index ([`DepsIndex`], behind
//!   `dependencies_on_this`) is a cache under `.git/ultragit/cache/deps/`, keyed
//!   by the notes ref's commit and updated by diffing notes trees; deleting or
//!   damaging it only costs a rebuild, git stays the source of truth.
//! - **Invariant:** the blame cache (`.git/ultragit/cache/blame/`, see
//!   [`gitctx::blame_cache`]) and the outline cache ([`OutlineCache`],
//!   `.git/ultragit/cache/outline/`: each file's outline by blob id, carried
//!   forward to a new version by [`outline::carry`]) only make reads faster:
//!   a read answers the same with them, without them, and with them damaged
//!   or deleted.

mod config;
mod corrections;
mod decisions;
pub mod deps;
mod error;
pub mod format;
pub mod history;
mod index;
mod lineage;
pub mod outline_cache;
pub mod pending;
pub mod pipeline;
mod query;
mod rank;
mod regions;
mod scope;
pub mod score;
mod speculate;
pub mod summary;
pub mod trim;

pub use config::{CONFIG_FILE, ReadConfig};
pub use deps::Answer;
pub use error::ReadError;
pub use format::{estimate_tokens, format_json, format_markdown, format_pretty, render};
pub use index::{Annotating, DepsIndex, INDEX_LIMIT, IndexUpdate, IndexedDependency};
pub use outline_cache::{OutlineCache, OutlineSource, OutlineUsage, OutlineWarmReport};
pub use pipeline::{BlameRoute, GitReadPipeline, NO_NOTES_HINT, NOTES_REF, ReadPipeline};
pub use query::{ContextLevelFilter, Format, LineRange, ReadQuery, SinceFilter, parse_lines};
pub use score::MatchType;
pub use ultragit_schema::{ReadErrorBody, ReadOutput};
