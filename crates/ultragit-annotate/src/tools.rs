//! The writing agent's tools (spec 000 "Tool Definitions"): six read tools,
//! `get_diff_for_file`, `search_code` (a bounded `git grep` in the commit's
//! tree), the write tools `emit_annotation` and `emit_cross_cutting`, which
//! validate what the model emits and collect it, and `decline_annotation`, the
//! one way a model says that the commit holds nothing worth recording (a reason
//! is required; an empty reply is never taken as a decline).
//!
//! Every read tool's text honours the byte cap the runner passes (the room the
//! context window has left, `agent::window`) as well as its line cap, and when
//! cut says exactly how to read on (`call get_file_content with path=… and
//! offset=…`). `get_commit_info` also describes any commit reachable from the
//! annotated one (for "see commit abc123" in messages). `emit_annotation`
//! checks the anchor against the outline of the file at the commit (name,
//! kind, overlapping lines) — or, without a grammar, that the name occurs in
//! those lines — and refuses a mismatch with the units nearby, so the model can
//! correct itself.
//!
//! The spec's six read tools are always offered, whatever the first message
//! already carries: a model trained on them that finds one missing wastes a
//! turn on an unknown-tool error. Only our own addition `get_diff_for_file`
//! is left out when the first message carries the whole diff of every file
//! ([`Scope::lean`]). `get_ast_outline` answers one line per unit (`L10-17
//! method Client::connect | pub fn …`).
//!
//! Names, descriptions, properties and required fields are the spec's. Two
//! additions our strict-tool rule asks of every schema: `additionalProperties:
//! false` on every object, and bounds on every number. Each tool is one
//! [`agent::ToolDef`] entry; its arguments are a typed struct (the write tools
//! take `ultragit_schema`'s own types) that `agent` parses and checks against the
//! schema before the tool's function runs.
//!
//! **Layout:** this file holds the registry, the shared arguments and the
//! caps; each tool family is a submodule: `diff` (`get_diff`,
//! `get_diff_for_file`), `files` (`get_file_content`, `get_ast_outline`,
//! `get_surrounding_context`), `history` (`get_commit_info`,
//! `get_recent_annotations`), `search` (`search_code`), `emit` (the write
//! tools and `decline_annotation`).

use std::sync::{Arc, Mutex, MutexGuard};

use agent::schema::Schema;
use agent::{
    NoArgs, Tool, ToolDef, ToolFailure, ToolLimits, ToolOutput, ToolRegistry, Truncation,
    TruncationLimit,
};
use serde::Deserialize;
use serde_json::{Value, json};
use ultragit_schema::{
    Annotation, ContextLevel, CrossCuttingConcern, RegionAnnotation, ValidationContext,
};

use crate::budget::Budget;
use crate::gather::AnnotationContext;

mod diff;
mod emit;
mod files;
mod history;
mod search;

use diff::{GET_DIFF, GET_DIFF_FOR_FILE};
pub(crate) use diff::{diff_summary, scope_diff, status_word};
pub(crate) use emit::{DECLINE_ANNOTATION, emit_annotation_schema, emit_cross_cutting_schema};
use emit::{EMIT_ANNOTATION, EMIT_CROSS_CUTTING};
use files::{GET_AST_OUTLINE, GET_FILE_CONTENT, GET_SURROUNDING_CONTEXT};
pub(crate) use history::commit_text;
use history::{GET_COMMIT_INFO, GET_RECENT_ANNOTATIONS};
use search::SEARCH_CODE;

/// What the write tools collected.
#[derive(Debug, Default, Clone)]
pub struct Collected {
    pub regions: Vec<RegionAnnotation>,
    pub cross_cutting: Vec<CrossCuttingConcern>,
    /// Emissions refused as invalid (the model was told why).
    pub rejected: u32,
    /// Why the model declined the commit (`decline_annotation`), if it did.
    pub declined: Option<String>,
}

/// Shared between the write tools and the run.
pub(crate) type Collector = Arc<Mutex<Collected>>;

/// What `collector` holds, to add to. A tool that panicked while holding it (the
/// registry turns that into an error envelope) leaves whole entries behind, so a
/// poisoned lock is still used.
pub(crate) fn collected(collector: &Collector) -> MutexGuard<'_, Collected> {
    collector.lock().unwrap_or_else(|p| p.into_inner())
}

/// Caps of the annotation tools: diffs are long, so more room than the defaults.
pub(crate) const LIMITS: ToolLimits = ToolLimits {
    max_bytes: 96 * 1024,
    max_lines: 2_000,
    max_entries: 200,
};

/// The highest line number the schemas accept.
const MAX_LINE: u64 = 10_000_000;

/// The description of a `path` argument.
const PATH_DESCRIPTION: &str = "Relative file path from repository root.";

/// The files one agent run covers (all of the commit, or one chunk), and how the
/// full diff is shown.
#[derive(Debug, Clone)]
pub struct Scope {
    /// Paths of this run's files.
    pub files: Vec<String>,
    /// `get_diff` answers with a per-file summary instead of the diff.
    pub summarize_diff: bool,
    /// Tools not offered in this run, by name, because the conversation
    /// already holds all they could answer ([`Scope::lean`]). Their
    /// definitions would only cost tokens on every request.
    pub not_offered: Vec<&'static str>,
}

impl Scope {
    /// The tools a run over `files` of `context` can leave out: none of the
    /// spec's six read tools; `get_diff_for_file` when `whole_diff_in_prompt`
    /// (the first message carries the run's whole diff and file list) and the
    /// run covers every file of the commit (a chunk's run may still read the
    /// other chunks' diffs).
    pub fn lean(
        context: &AnnotationContext,
        files: &[String],
        whole_diff_in_prompt: bool,
    ) -> Vec<&'static str> {
        let mut left_out = Vec::new();
        if whole_diff_in_prompt && context.paths().iter().all(|path| files.contains(path)) {
            left_out.push(GET_DIFF_FOR_FILE.name);
        }
        left_out
    }
}

/// The registry of one agent run, with the default budget ([`Budget::default`]).
pub fn registry(
    context: Arc<AnnotationContext>,
    scope: Scope,
    collector: Collector,
) -> ToolRegistry {
    registry_within(context, scope, collector, Budget::default())
}

/// The registry of one agent run within `budget` (the diff and recent
/// annotations caps).
pub(crate) fn registry_within(
    context: Arc<AnnotationContext>,
    scope: Scope,
    collector: Collector,
    budget: Budget,
) -> ToolRegistry {
    let not_offered = scope.not_offered.clone();
    let shared = Shared {
        context,
        scope: Arc::new(scope),
        collector: collector.clone(),
        budget,
    };
    let tools: Vec<Arc<dyn Tool>> = vec![
        Arc::new(GET_DIFF.bind(shared.clone())),
        Arc::new(GET_FILE_CONTENT.bind(shared.clone())),
        Arc::new(GET_AST_OUTLINE.bind(shared.clone())),
        Arc::new(GET_SURROUNDING_CONTEXT.bind(shared.clone())),
        Arc::new(GET_COMMIT_INFO.bind(shared.clone())),
        Arc::new(GET_RECENT_ANNOTATIONS.bind(shared.clone())),
        Arc::new(GET_DIFF_FOR_FILE.bind(shared.clone())),
        Arc::new(SEARCH_CODE.bind(shared.clone())),
        Arc::new(EMIT_ANNOTATION.bind(shared)),
        Arc::new(EMIT_CROSS_CUTTING.bind(collector.clone())),
        Arc::new(DECLINE_ANNOTATION.bind(collector)),
    ];
    let mut registry = ToolRegistry::new(LIMITS);
    for tool in tools {
        if not_offered.contains(&tool.name()) {
            continue;
        }
        registry
            .register(tool)
            .expect("the annotation tools have distinct names and strict schemas");
    }
    registry
}

/// The registry of the cross-chunk pass: only `emit_cross_cutting`.
pub(crate) fn cross_cutting_registry(collector: Collector) -> ToolRegistry {
    ToolRegistry::new(LIMITS)
        .with(Arc::new(EMIT_CROSS_CUTTING.bind(collector)))
        .expect("one strict tool")
}

/// What the tools of one run work on.
#[derive(Clone)]
struct Shared {
    context: Arc<AnnotationContext>,
    scope: Arc<Scope>,
    collector: Collector,
    budget: Budget,
}

/// The path the argument `key` names, trimmed and without a leading `./`.
fn clean_path(key: &str, path: &str) -> Result<String, ToolFailure> {
    let path = path.trim().trim_start_matches("./");
    if path.is_empty() {
        return Err(ToolFailure::invalid_argument(format!("{key} is empty")));
    }
    Ok(path.to_owned())
}

/// The repository of `context`, for the tools that read beyond it.
fn open_repo(context: &AnnotationContext) -> Result<gitctx::Repo, ToolFailure> {
    gitctx::Repo::open(&context.repo_root)
        .map_err(|e| ToolFailure::internal(format!("cannot open the repository: {e}")))
}

/// The arguments of the tools that take one file path, and where to start.
#[derive(Debug, Deserialize)]
struct PathArgs {
    path: String,
    offset: Option<usize>,
}

impl PathArgs {
    /// The schema: `path`, required; `offset`, optional.
    fn schema() -> Schema {
        Schema::object()
            .required("path", Schema::string().description(PATH_DESCRIPTION))
            .optional(
                "offset",
                Schema::integer(1, MAX_LINE)
                    .description("The line to start from (default 1), where a result was cut."),
            )
    }

    /// The first line (1-based) to show.
    fn from(&self) -> usize {
        self.offset.unwrap_or(1).max(1)
    }

    /// The path, cleaned.
    fn path(&self) -> Result<String, ToolFailure> {
        clean_path("path", &self.path)
    }
}

/// `{n}| {line}` for each line in `from..=to` (1-based) of `text`.
fn numbered(text: &str, from: usize, to: usize) -> String {
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if n < from {
            continue;
        }
        if n > to {
            break;
        }
        out.push_str(&format!("{n}| {line}\n"));
    }
    out
}

/// Caps `text` at the line and byte limits, with truncation metadata whose
/// hint, `more(n)`, says how to read on from line `n` (1-based) of `text`.
fn capped(
    key: &str,
    text: String,
    extra: Value,
    limits: &ToolLimits,
    more: impl Fn(usize) -> String,
) -> ToolOutput {
    let total = text.lines().count();
    let room = limits
        .max_bytes
        .saturating_sub(extra.to_string().len() + TRUNCATION_OVERHEAD);
    let mut kept = String::new();
    let mut shown = 0;
    for line in text.lines() {
        if shown >= limits.max_lines || kept.len() + line.len() + 1 > room {
            break;
        }
        kept.push_str(line);
        kept.push('\n');
        shown += 1;
    }
    let mut data = extra;
    if shown == total {
        data[key] = json!(text);
        return ToolOutput::complete(data);
    }
    data[key] = json!(kept);
    let (limit, max) = if shown >= limits.max_lines {
        (TruncationLimit::Lines, limits.max_lines)
    } else {
        (TruncationLimit::Bytes, limits.max_bytes)
    };
    ToolOutput::truncated(
        data,
        Truncation {
            limit,
            max,
            total: Some(total),
            shown,
            hint: more(shown + 1),
        },
    )
}

/// Bytes kept free in a result for its truncation metadata.
const TRUNCATION_OVERHEAD: usize = 400;

/// `1234567` → `1,234,567` (also for backfill's summary).
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::thousands;

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
