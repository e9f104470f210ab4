//! The queries built on the read pipeline (Feature 08), one tool each:
//! `ultragit_deps` (what depends on a unit, from the reverse index),
//! `ultragit_history` (a unit's "why" timeline across renames) and
//! `ultragit_summary` (per-unit rollups of a file or a directory). Each calls
//! its `ultragit_read` function in process; the text is its markdown, the
//! `structuredContent` its JSON document (`ultragit-deps/v1`,
//! `ultragit-history/v1`, `ultragit-summary/v1`), an error read's message with
//! the JSON error object under that schema id.

use serde::Deserialize;
use tool_def::ToolDef;
use tool_def::schema::Schema;
use ultragit_read::deps::{self, DEPS_SCHEMA_V1, DepsQuery};
use ultragit_read::history::{self, HISTORY_SCHEMA_V1, HistoryQuery};
use ultragit_read::summary::{self, SUMMARY_SCHEMA_V1, SummaryQuery};
use ultragit_read::{Answer, Format, GitReadPipeline, ReadError};

use crate::Scope;
use crate::read::read_error_as;
use crate::tool::{Bounds, McpTool, ToolError, ToolOutput, repo_relative, repo_relative_dir};

/// The longest path or anchor accepted (bytes).
const MAX_NAME: usize = 4096;

/// Runs `query` on the served repository and renders its answer: markdown as
/// the text, the serialized document as the structured content.
fn answer<T: Answer>(
    scope: &Scope,
    schema: &str,
    query: impl FnOnce(&GitReadPipeline) -> Result<T, ReadError>,
) -> Result<ToolOutput, ToolError> {
    let error = |err| read_error_as(err, Some(schema));
    let pipeline = GitReadPipeline::open(&scope.root).map_err(error)?;
    let output = query(&pipeline).map_err(error)?;
    let structured =
        serde_json::to_value(&output).map_err(|err| ToolError::internal(schema, &err))?;
    Ok(ToolOutput::new(output.render(Format::Markdown), structured))
}

/// `anchor` within bounds, when given.
fn bounded_anchor(tool: &str, anchor: Option<&str>) -> Result<(), ToolError> {
    anchor.map_or(Ok(()), |a| Bounds::of(tool).text("anchor", a, MAX_NAME))
}

/// The arguments of `ultragit_deps`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DepsArgs {
    /// The unit's file, relative to the repository root.
    pub(crate) path: String,
    /// The unit: a function, type or other named unit (`connect`,
    /// `Client::connect`).
    pub(crate) anchor: String,
}

/// `ultragit_deps`.
pub(crate) const DEPS: McpTool<DepsArgs> = ToolDef {
    name: "ultragit_deps",
    description: "Before changing a function, type or other unit, \
            list the annotated code elsewhere that declared a semantic dependency on it \
            (newest first): its file and anchor, the nature of the dependency, its intent \
            and the commit. Answered from a reverse index of the notes; no LLM runs.",
    schema: deps_schema,
    run: |scope, args, ()| args.run(scope),
};

/// The arguments' schema of `ultragit_deps`.
fn deps_schema() -> Schema {
    Schema::object()
        .required(
            "path",
            Schema::string()
                .min_length(1)
                .max_length(4096)
                .description("The unit's file, relative to the repository root."),
        )
        .required(
            "anchor",
            Schema::string().min_length(1).max_length(4096).description(
                "The unit: a function, type or other named unit (`connect`, `Client::connect`).",
            ),
        )
}

impl DepsArgs {
    /// Runs the tool on arguments that matched its schema.
    fn run(self, scope: &Scope) -> Result<ToolOutput, ToolError> {
        bounded_anchor(DEPS.name, Some(&self.anchor))?;
        let query = DepsQuery::new(repo_relative(DEPS.name, &self.path)?, self.anchor);
        answer(scope, DEPS_SCHEMA_V1, |p| deps::deps(p, &query))
    }
}

/// The arguments of `ultragit_history`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HistoryArgs {
    /// The file, relative to the repository root.
    pub(crate) path: String,
    /// Only this unit of the file (`connect`, `Client::connect`); without it,
    /// the whole file.
    pub(crate) anchor: Option<String>,
}

/// `ultragit_history`.
pub(crate) const HISTORY: McpTool<HistoryArgs> = ToolDef {
    name: "ultragit_history",
    description: "The \"why\" timeline of a file or one of its \
            units: every annotated commit that touched it, newest first and across renames, \
            with its date, the intent recorded, the constraints added or dropped since the \
            previous annotation, and risk notes. No LLM runs.",
    schema: history_schema,
    run: |scope, args, ()| args.run(scope),
};

/// The arguments' schema of `ultragit_history`.
fn history_schema() -> Schema {
    Schema::object()
        .required(
            "path",
            Schema::string()
                .min_length(1)
                .max_length(4096)
                .description("The file, relative to the repository root."),
        )
        .optional(
            "anchor",
            Schema::string().min_length(1).max_length(4096).description(
                "Only this unit of the file (`connect`, `Client::connect`); \
                 without it, the whole file.",
            ),
        )
}

impl HistoryArgs {
    /// Runs the tool on arguments that matched its schema.
    fn run(self, scope: &Scope) -> Result<ToolOutput, ToolError> {
        bounded_anchor(DEPS.name, self.anchor.as_deref())?;
        let mut query = HistoryQuery::file(repo_relative(DEPS.name, &self.path)?);
        query.anchor = self.anchor;
        answer(scope, HISTORY_SCHEMA_V1, |p| history::history(p, &query))
    }
}

/// The arguments of `ultragit_summary`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SummaryArgs {
    /// A file or a directory, relative to the repository root (`.` for the
    /// whole repository).
    pub(crate) path: String,
    /// Token budget of the markdown answer; the least annotated units are left
    /// out first.
    pub(crate) max_tokens: Option<u32>,
}

/// `ultragit_summary`.
pub(crate) const SUMMARY: McpTool<SummaryArgs> = ToolDef {
    name: "ultragit_summary",
    description: "A rollup of the recorded reasons per unit of a \
            file (latest intent, constraints with the author's first, risk notes, how many \
            annotations touched it), or per file of a directory, within a token budget. \
            Use it to get oriented before reading single units. No LLM runs.",
    schema: summary_schema,
    run: |scope, args, ()| args.run(scope),
};

/// The arguments' schema of `ultragit_summary`.
fn summary_schema() -> Schema {
    Schema::object()
        .required(
            "path",
            Schema::string().min_length(1).max_length(4096).description(
                "A file or a directory, relative to the repository root (`.` for \
                 the whole repository).",
            ),
        )
        .optional(
            "max_tokens",
            Schema::integer(1, u64::from(u32::MAX)).description(
                "Token budget of the markdown answer; the least annotated units \
                 are left out first.",
            ),
        )
}

impl SummaryArgs {
    /// Runs the tool on arguments that matched its schema.
    fn run(self, scope: &Scope) -> Result<ToolOutput, ToolError> {
        let mut query = SummaryQuery::path(repo_relative_dir(DEPS.name, &self.path)?);
        query.max_tokens = self.max_tokens;
        let markdown = Format::Markdown;
        answer(scope, SUMMARY_SCHEMA_V1, |p| {
            summary::summary(p, &query, markdown)
        })
    }
}
