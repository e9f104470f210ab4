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
fn collected(collector: &Collector) -> MutexGuard<'_, Collected> {
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

/// One file's diff with the commit's line numbers in front of every kept or added
/// line, so regions can be given in the commit's coordinates.
pub(crate) fn render_file_diff(diff: &gitctx::FileDiff) -> String {
    let status = status_word(diff.status);
    let mut out = format!(
        "=== {} ({status}, +{} -{}) ===\n",
        diff.path(),
        diff.additions,
        diff.deletions
    );
    if diff.status == gitctx::FileStatus::Renamed
        && let Some(old) = &diff.old_path
    {
        out.push_str(&format!("renamed from {old}\n"));
    }
    for hunk in &diff.hunks {
        out.push_str(&format!(
            "@@ -{},{} +{},{} @@ {}\n",
            hunk.old_start, hunk.old_lines, hunk.new_start, hunk.new_lines, hunk.header
        ));
        for line in &hunk.lines {
            let number = line
                .new_lineno
                .map(|n| format!("{n:>5}"))
                .unwrap_or_else(|| "     ".to_owned());
            out.push_str(&format!(
                "{number} {}{}\n",
                line.kind.prefix(),
                line.content
            ));
        }
    }
    out
}

/// How a file changed, in the words the diff headers use.
pub(crate) fn status_word(status: gitctx::FileStatus) -> &'static str {
    match status {
        gitctx::FileStatus::Added => "new file",
        gitctx::FileStatus::Deleted => "deleted",
        gitctx::FileStatus::Renamed => "renamed",
        gitctx::FileStatus::Copied => "copied",
        gitctx::FileStatus::TypeChanged => "type changed",
        gitctx::FileStatus::Modified => "modified",
    }
}

/// The per-file summary `get_diff` gives for oversized diffs (spec 000 "Diff
/// summarization").
pub(crate) fn diff_summary(context: &AnnotationContext, files: &[String]) -> String {
    let mut diffs: Vec<&gitctx::FileDiff> =
        files.iter().filter_map(|f| context.diff_for(f)).collect();
    diffs.sort_by_key(|d| std::cmp::Reverse(d.changed_lines()));
    let lines: u32 = diffs.iter().map(|d| d.changed_lines()).sum();
    let mut out = format!(
        "This commit modifies {} files with {} lines changed.\nTop files by change size:\n",
        diffs.len(),
        thousands(u64::from(lines))
    );
    for diff in diffs.iter().take(40) {
        out.push_str(&format!(
            "  {}: +{} -{}\n",
            diff.path(),
            diff.additions,
            diff.deletions
        ));
    }
    if diffs.len() > 40 {
        out.push_str(&format!("  … and {} more files\n", diffs.len() - 40));
    }
    out.push_str(
        "\nUse get_file_content(path) to examine specific files,\nor get_diff_for_file(path) to see the diff for a single file.\n",
    );
    out
}

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

const GET_DIFF: ToolDef<Shared, NoArgs> = ToolDef {
    name: "get_diff",
    description: "Returns the unified diff for this commit, organized by file with line numbers.",
    schema: Schema::object,
    run: get_diff,
};

fn get_diff(shared: &Shared, _: NoArgs, limits: &ToolLimits) -> Result<ToolOutput, ToolFailure> {
    let context = &shared.context;
    let scope = &shared.scope;
    let (text, starts) = scope_diff(context, &scope.files);
    if scope.summarize_diff || agent::estimate_tokens(&text) > shared.budget.diff {
        return Ok(ToolOutput::complete(
            json!({"summary": diff_summary(context, &scope.files)}),
        ));
    }
    Ok(capped(
        "diff",
        text,
        json!({"files": scope.files}),
        limits,
        |line| {
            // The file the cut falls in, and the line of its own diff.
            let index = starts.partition_point(|(_, start)| *start <= line).max(1) - 1;
            let (path, start) = &starts[index];
            let rest: Vec<&str> = starts[index + 1..]
                .iter()
                .map(|(p, _)| p.as_str())
                .collect();
            let mut hint = format!(
                "the diff was cut; call get_diff_for_file with path={path} and offset={}",
                line - start + 1
            );
            if !rest.is_empty() {
                hint.push_str(&format!(", then for: {}", rest.join(", ")));
            }
            hint
        },
    ))
}

/// The diff of `files` as `get_diff` shows it, with the first line (1-based)
/// of each file's part.
pub(crate) fn scope_diff(
    context: &AnnotationContext,
    files: &[String],
) -> (String, Vec<(String, usize)>) {
    let mut text = String::new();
    let mut starts = Vec::new();
    let mut line = 1;
    for path in files {
        if let Some(diff) = context.diff_for(path) {
            let part = render_file_diff(diff);
            starts.push((path.clone(), line));
            line += part.lines().count();
            text.push_str(&part);
        }
    }
    (text, starts)
}

const GET_DIFF_FOR_FILE: ToolDef<Shared, PathArgs> = ToolDef {
    name: "get_diff_for_file",
    description: "Returns the diff of a single file of this commit, with line numbers.",
    schema: PathArgs::schema,
    run: get_diff_for_file,
};

fn get_diff_for_file(
    shared: &Shared,
    args: PathArgs,
    limits: &ToolLimits,
) -> Result<ToolOutput, ToolFailure> {
    let path = args.path()?;
    let Some(diff) = shared.context.diff_for(&path) else {
        return Err(ToolFailure::new(
            "NOT_IN_COMMIT",
            format!(
                "'{path}' is not among the text files this commit changes: {}",
                shared.context.paths().join(", ")
            ),
        ));
    };
    let from = args.from();
    let rendered = render_file_diff(diff);
    let text: String = rendered
        .lines()
        .skip(from - 1)
        .map(|l| format!("{l}\n"))
        .collect();
    Ok(capped(
        "diff",
        text,
        json!({"path": path, "offset": from, "lines": rendered.lines().count()}),
        limits,
        |n| {
            format!(
                "the diff was cut; call get_diff_for_file with path={path} and offset={}",
                from + n - 1
            )
        },
    ))
}

/// The file's text at the commit: from the context, or read from git.
fn file_at_commit(context: &AnnotationContext, path: &str) -> Result<String, ToolFailure> {
    if let Some(text) = context.file_contents.get(path) {
        return Ok(text.clone());
    }
    let repo = gitctx::Repo::open(&context.repo_root)
        .map_err(|e| ToolFailure::internal(format!("cannot open the repository: {e}")))?;
    match repo.file_at(&context.commit.sha, path) {
        Ok(bytes) if bytes.contains(&0) => Err(ToolFailure::new(
            "NOT_TEXT",
            format!("'{path}' is a binary file"),
        )),
        Ok(bytes) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
        Err(gitctx::Error::PathNotFound { .. }) => Err(ToolFailure::new(
            "NOT_FOUND",
            format!(
                "'{path}' does not exist at commit {}",
                &context.commit.sha[..12]
            ),
        )),
        Err(gitctx::Error::NotAFile { .. }) => Err(ToolFailure::new(
            "NOT_A_FILE",
            format!("'{path}' is a directory"),
        )),
        Err(e) => Err(ToolFailure::internal(e.to_string())),
    }
}

const GET_FILE_CONTENT: ToolDef<Shared, PathArgs> = ToolDef {
    name: "get_file_content",
    description: "Returns the full content of a file at the commit being annotated, with line numbers.",
    schema: PathArgs::schema,
    run: get_file_content,
};

fn get_file_content(
    shared: &Shared,
    args: PathArgs,
    limits: &ToolLimits,
) -> Result<ToolOutput, ToolFailure> {
    let path = args.path()?;
    let from = args.from();
    let text = file_at_commit(&shared.context, &path)?;
    let total = text.lines().count();
    Ok(capped(
        "content",
        numbered(&text, from, total),
        json!({"path": path, "lines": total}),
        limits,
        |n| {
            format!(
                "the file was cut; call get_file_content with path={path} and offset={}",
                from + n - 1
            )
        },
    ))
}

const GET_AST_OUTLINE: ToolDef<Shared, PathArgs> = ToolDef {
    name: "get_ast_outline",
    description: "Returns the structural outline of a file: functions, types, methods, impl blocks with names, signatures, and line ranges.",
    schema: PathArgs::schema,
    run: get_ast_outline,
};

fn get_ast_outline(
    shared: &Shared,
    args: PathArgs,
    limits: &ToolLimits,
) -> Result<ToolOutput, ToolFailure> {
    let path = args.path()?;
    let from = args.from();
    let context = &shared.context;
    let units = match context.ast_outlines.get(&path) {
        Some(units) => Some(units.clone()),
        None => {
            let text = file_at_commit(context, &path)?;
            outline::outline(&path, &text).ok()
        }
    };
    let Some(units) = units else {
        return Ok(ToolOutput::complete(json!({
            "path": path,
            "outline": null,
            "message": "AST parsing is not available for this file type. Annotate it by line ranges: use ast_anchor type \"config\" (or the closest kind) with a name that identifies the block, and give its lines."
        })));
    };
    let room = limits.max_bytes.saturating_sub(TRUNCATION_OVERHEAD);
    let mut outline: Vec<String> = Vec::new();
    let mut bytes = 0;
    for unit in units.iter().skip(from - 1) {
        let entry = unit.to_string();
        // Its size in the JSON answer: quoted, escaped, and a comma.
        bytes += serde_json::to_string(&entry).map_or(entry.len() + 2, |json| json.len()) + 1;
        if bytes > room || outline.len() >= limits.max_entries {
            break;
        }
        outline.push(entry);
    }
    let shown = outline.len();
    let rest = units.len().saturating_sub(from - 1);
    let data = json!({"path": path, "format": OUTLINE_FORMAT, "outline": outline});
    if shown >= rest {
        return Ok(ToolOutput::complete(data));
    }
    Ok(ToolOutput::truncated(
        data,
        Truncation {
            limit: TruncationLimit::Bytes,
            max: limits.max_bytes,
            total: Some(units.len()),
            shown,
            hint: format!(
                "the outline was cut; call get_ast_outline with path={path} and offset={}",
                from + shown
            ),
        },
    ))
}

/// How an outline unit reads in `get_ast_outline`'s answer (`Unit`'s
/// `Display`: one line per unit, a third of the bytes of a JSON object, on
/// every later request of the conversation).
const OUTLINE_FORMAT: &str = "L<start>-<end> <kind> <name> | <signature>";

/// The arguments of `get_surrounding_context`.
#[derive(Debug, Deserialize)]
struct SurroundingArgs {
    path: String,
    line: usize,
    radius: Option<usize>,
}

const GET_SURROUNDING_CONTEXT: ToolDef<Shared, SurroundingArgs> = ToolDef {
    name: "get_surrounding_context",
    description: "Returns lines around a specific point in a file. Useful for understanding the neighborhood of a change without reading the entire file.",
    schema: || {
        Schema::object()
            .required("path", Schema::string().description(PATH_DESCRIPTION))
            .required(
                "line",
                Schema::integer(1, MAX_LINE).description("Center line number."),
            )
            .optional(
                "radius",
                Schema::integer(0, 500)
                    .description("Number of lines above and below to include. Default: 20."),
            )
    },
    run: get_surrounding_context,
};

fn get_surrounding_context(
    shared: &Shared,
    args: SurroundingArgs,
    limits: &ToolLimits,
) -> Result<ToolOutput, ToolFailure> {
    let path = clean_path("path", &args.path)?;
    let line = args.line;
    let radius = args.radius.unwrap_or(20);
    let text = file_at_commit(&shared.context, &path)?;
    let total = text.lines().count();
    if line > total.max(1) {
        return Err(ToolFailure::invalid_argument(format!(
            "line {line} is past the end of '{path}' ({total} lines)"
        )));
    }
    let from = line.saturating_sub(radius).max(1);
    let to = (line + radius).min(total);
    Ok(capped(
        "content",
        numbered(&text, from, to),
        json!({"path": path, "from": from, "to": to, "lines": total}),
        limits,
        |n| {
            format!(
                "the lines were cut; ask for a smaller radius, or call get_file_content with path={path} and offset={}",
                from + n - 1
            )
        },
    ))
}

/// The arguments of `get_commit_info`.
#[derive(Debug, Deserialize)]
struct CommitArgs {
    commit: Option<String>,
}

const GET_COMMIT_INFO: ToolDef<Shared, CommitArgs> = ToolDef {
    name: "get_commit_info",
    description: "Returns the commit message, author, timestamp, parent SHAs, and any author-provided context (task, reasoning, dependencies, tags).",
    schema: || {
        Schema::object().optional(
            "commit",
            Schema::string().description(
                "Another commit (SHA or prefix) reachable from this one. Default: this one.",
            ),
        )
    },
    run: get_commit_info,
};

fn get_commit_info(
    shared: &Shared,
    args: CommitArgs,
    limits: &ToolLimits,
) -> Result<ToolOutput, ToolFailure> {
    let context = &shared.context;
    let Some(rev) = args
        .commit
        .as_deref()
        .map(str::trim)
        .filter(|c| !c.is_empty())
    else {
        return Ok(annotated_commit_info(context, limits));
    };
    if rev.starts_with('-') || rev.len() > 200 {
        return Err(ToolFailure::invalid_argument(format!(
            "'{rev}' is not a commit name"
        )));
    }
    let repo = open_repo(context)?;
    let annotated: gitctx::ObjectId = context
        .commit
        .sha
        .parse()
        .map_err(|_| ToolFailure::internal("the annotated commit has no valid id"))?;
    let id = repo.resolve_commit(rev).map_err(|_| {
        ToolFailure::new(
            "NOT_FOUND",
            format!("no commit named '{rev}' in this repository"),
        )
    })?;
    if id == annotated {
        return Ok(annotated_commit_info(context, limits));
    }
    let reachable = repo
        .is_ancestor(id, annotated)
        .map_err(|e| ToolFailure::internal(e.to_string()))?;
    if !reachable {
        return Err(ToolFailure::new(
            "NOT_REACHABLE",
            format!(
                "commit {} is not reachable from the annotated commit {}; only its ancestors can be described",
                &id.to_hex()[..12],
                &context.commit.sha[..12]
            ),
        ));
    }
    let info = repo
        .commit_info_by_id(id)
        .map_err(|e| ToolFailure::internal(e.to_string()))?;
    let parents: Vec<String> = info.parents.iter().map(|p| p.to_hex()).collect();
    let mut text = format!(
        "Commit: {}\nAuthor: {} <{}>\nDate: {}\nParents: {}\n\nMessage:\n{}\n",
        id.to_hex(),
        info.author.name,
        info.author.email,
        info.author.time.to_utc().to_rfc3339(),
        parents.join(", "),
        info.message.trim_end()
    );
    if let Ok(diff) = repo.diff_commit(&id.to_hex(), &gitctx::DiffOptions::default()) {
        text.push_str(&format!("\nFiles changed ({}):\n", diff.files.len()));
        for file in diff.files.iter().take(limits.max_entries.min(50)) {
            text.push_str(&format!(
                "  {} (+{} -{})\n",
                file.path(),
                file.additions,
                file.deletions
            ));
        }
    }
    Ok(capped(
        "info",
        text,
        json!({"commit": id.to_hex()}),
        limits,
        |_| {
            "the description was cut; call get_commit_info again only if you need the rest"
                .to_owned()
        },
    ))
}

/// The annotated commit's description, cut to the room left (a long message
/// or author context can be larger than the window).
fn annotated_commit_info(context: &AnnotationContext, limits: &ToolLimits) -> ToolOutput {
    capped("info", commit_text(context), json!({}), limits, |n| {
        format!(
            "the description was cut after {} lines to fit the context window",
            n - 1
        )
    })
}

/// The repository of `context`, for the tools that read beyond it.
fn open_repo(context: &AnnotationContext) -> Result<gitctx::Repo, ToolFailure> {
    gitctx::Repo::open(&context.repo_root)
        .map_err(|e| ToolFailure::internal(format!("cannot open the repository: {e}")))
}

/// The annotated commit as `get_commit_info` and the first message show it:
/// SHA, author, date, parents, message, author context or squash sources, and
/// the files left out (binary, submodules).
pub(crate) fn commit_text(context: &AnnotationContext) -> String {
    let commit = &context.commit;
    let parents = if commit.parent_shas.is_empty() {
        "(none: root commit)".to_owned()
    } else {
        commit.parent_shas.join(", ")
    };
    let mut text = format!(
        "Commit: {}\nAuthor: {}\nDate: {}\nParents: {parents}\n\nMessage:\n{}\n",
        commit.sha,
        commit.author,
        commit.timestamp.to_rfc3339(),
        commit.message.trim_end()
    );
    if let Some(author) = context.author_context.as_ref().filter(|a| a.has_context()) {
        text.push_str("\nAuthor-provided context:\n");
        let field = |label: &str, value: Option<&str>| {
            value
                .filter(|v| !v.trim().is_empty())
                .map(|v| format!("  {label}: {v}\n"))
                .unwrap_or_default()
        };
        text.push_str(&field("Task", author.task.as_deref()));
        text.push_str(&field("Reasoning", author.reasoning.as_deref()));
        text.push_str(&field("Dependencies", author.dependencies.as_deref()));
        if let Some(tags) = author.tags.as_ref().filter(|t| !t.is_empty()) {
            text.push_str(&format!("  Tags: {}\n", tags.join(", ")));
        }
    }
    if let Some(sources) = context
        .author_context
        .as_ref()
        .and_then(|a| a.squash_sources.as_ref())
        .filter(|s| !s.is_empty())
    {
        text.push_str(&format!("\nSquashed from: {}\n", sources.join(", ")));
    }
    if !context.skipped.is_empty() {
        text.push_str(&format!(
            "\nNot annotated (binary or submodule): {}\n",
            context.skipped.join(", ")
        ));
    }
    text
}

/// The arguments of `search_code`.
#[derive(Debug, Deserialize)]
struct SearchArgs {
    pattern: String,
    path: Option<String>,
    regex: Option<bool>,
    max_results: Option<usize>,
}

/// The longest matched line `search_code` shows, in characters.
const SEARCH_LINE_MAX: usize = 200;

/// The most output `search_code` reads from `git grep`: `--max-count` bounds
/// the matches per file, not in all, so a common pattern in a large tree
/// (or one long minified line) could otherwise produce any amount. Past it
/// git is stopped and the lines read so far are the answer.
const SEARCH_OUTPUT_MAX: usize = 256 * 1024;

const SEARCH_CODE: ToolDef<Shared, SearchArgs> = ToolDef {
    name: "search_code",
    description: "git grep in the commit's files: path:line: text, to find callers, definitions, uses.",
    schema: || {
        Schema::object()
            .required(
                "pattern",
                Schema::string().description("Fixed text, unless regex."),
            )
            .optional(
                "path",
                Schema::string().description("Path prefix (e.g. src/net)."),
            )
            .optional(
                "regex",
                Schema::boolean().description("pattern is a POSIX ERE. Default: false."),
            )
            .optional(
                "max_results",
                Schema::integer(1, 200).description("Most lines. Default: 50."),
            )
    },
    run: search_code,
};

fn search_code(
    shared: &Shared,
    args: SearchArgs,
    limits: &ToolLimits,
) -> Result<ToolOutput, ToolFailure> {
    if args.pattern.is_empty() || args.pattern.len() > 500 || args.pattern.contains('\n') {
        return Err(ToolFailure::invalid_argument(
            "pattern must be one line of 1 to 500 bytes",
        ));
    }
    let prefix = match args
        .path
        .as_deref()
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        Some(path) => {
            let path = clean_path("path", path)?;
            if path.starts_with('/') || path.split('/').any(|c| c == "..") {
                return Err(ToolFailure::invalid_argument(format!(
                    "path '{path}' must be relative and stay inside the repository"
                )));
            }
            Some(path)
        }
        None => None,
    };
    let max = args
        .max_results
        .unwrap_or(50)
        .min(limits.max_entries)
        .max(1);
    let context = &shared.context;
    let repo = open_repo(context)?;
    let mut command = repo
        .git()
        .args(["grep", "-n", "-I", "--no-color", "--full-name"])
        .arg(if args.regex.unwrap_or(false) {
            "-E"
        } else {
            "-F"
        })
        // One more than shown, to tell that more lines match.
        .arg(format!("--max-count={}", max + 1))
        .arg("-e")
        .arg(&args.pattern)
        .arg(&context.commit.sha)
        .arg("--")
        .timeout(std::time::Duration::from_secs(20))
        .max_stdout(SEARCH_OUTPUT_MAX);
    if let Some(prefix) = &prefix {
        // gitctx runs git with literal pathspecs: a prefix is a path, never a glob.
        command = command.arg(prefix);
    }
    let output = command
        .run_unchecked()
        .map_err(|e| ToolFailure::internal(e.to_string()))?;
    // Stopped at the bound: more lines match than were read.
    let stopped = output.stdout.len() >= SEARCH_OUTPUT_MAX;
    match output.status.code() {
        _ if stopped => {}
        Some(0) | Some(1) => {}
        _ => {
            let message = String::from_utf8_lossy(&output.stderr);
            return Err(ToolFailure::invalid_argument(format!(
                "git grep refused the search: {}",
                message.lines().next().unwrap_or("unknown error")
            )));
        }
    }
    let mut stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    if stopped {
        // The last line may be cut anywhere.
        stdout.truncate(stdout.rfind('\n').map_or(0, |end| end + 1));
    }
    let tree = format!("{}:", context.commit.sha);
    let all: Vec<String> = stdout
        .lines()
        .map(|line| {
            let line = line.strip_prefix(&tree).unwrap_or(line);
            if line.chars().count() > SEARCH_LINE_MAX {
                let cut: String = line.chars().take(SEARCH_LINE_MAX).collect();
                format!("{cut}…")
            } else {
                line.to_owned()
            }
        })
        .collect();
    // Stopped early: at least one more line matches than were read.
    let total = all.len() + usize::from(stopped);
    let text: String = all.iter().take(max).map(|l| format!("{l}\n")).collect();
    if total == 0 {
        return Ok(ToolOutput::complete(json!({
            "matches": "",
            "note": format!("no line matches '{}'", args.pattern),
        })));
    }
    let mut output = capped(
        "matches",
        text,
        json!({"count": all.len().min(max)}),
        limits,
        |n| {
            format!(
                "the matches were cut after {} lines; narrow the search with path or a longer pattern",
                n - 1
            )
        },
    );
    if (total > max || stopped) && output.truncation.is_none() {
        output.truncation = Some(Truncation {
            limit: TruncationLimit::Entries,
            max,
            total: None,
            shown: all.len().min(max),
            hint: "more lines match; narrow the search with path or a longer pattern, or raise max_results".to_owned(),
        });
    }
    Ok(output)
}

/// The arguments of `get_recent_annotations`.
#[derive(Debug, Deserialize)]
struct RecentArgs {
    file: String,
    n: Option<usize>,
}

const GET_RECENT_ANNOTATIONS: ToolDef<Shared, RecentArgs> = ToolDef {
    name: "get_recent_annotations",
    description: "Returns Ultragit annotations from the most recent N commits that touched the given file. Use this to discover existing annotations and create related_annotations links.",
    schema: || {
        Schema::object()
            .required("file", Schema::string().description("Relative file path."))
            .optional(
                "n",
                Schema::integer(1, 50)
                    .description("Maximum number of recent annotations to return. Default: 5."),
            )
    },
    run: get_recent_annotations,
};

fn get_recent_annotations(
    shared: &Shared,
    args: RecentArgs,
    limits: &ToolLimits,
) -> Result<ToolOutput, ToolFailure> {
    let file = clean_path("file", &args.file)?;
    let n = args.n.unwrap_or(5);
    let found: Vec<Value> = shared
        .context
        .recent_annotations
        .iter()
        .filter(|e| e.annotation.regions.iter().any(|r| r.file == file))
        .take(n)
        .map(|e| {
            let regions: Vec<&RegionAnnotation> = e
                .annotation
                .regions
                .iter()
                .filter(|r| r.file == file)
                .collect();
            json!({
                "commit": e.commit_sha,
                "timestamp": e.annotation.timestamp,
                "summary": e.annotation.summary,
                "regions": regions,
            })
        })
        .collect();
    if found.is_empty() {
        return Ok(ToolOutput::complete(json!({
            "annotations": [],
            "note": format!("No recent annotations touch {file}."),
        })));
    }
    // At most the budget's share (spec 000: 2,000 tokens), whole entries.
    let room = limits
        .max_bytes
        .min(shared.budget.recent as usize * 4)
        .saturating_sub(TRUNCATION_OVERHEAD);
    let total = found.len();
    let mut kept = Vec::new();
    let mut bytes = 0;
    for entry in found {
        bytes += entry.to_string().len();
        if bytes > room {
            break;
        }
        kept.push(entry);
    }
    let shown = kept.len();
    let data = json!({"annotations": kept});
    if shown == total {
        return Ok(ToolOutput::complete(data));
    }
    Ok(ToolOutput::truncated(
        data,
        Truncation {
            limit: TruncationLimit::Bytes,
            max: room,
            total: Some(total),
            shown,
            hint: format!(
                "the newest {shown} of {total} fit the recent-annotations budget; call get_recent_annotations with file={file} and n={shown} or fewer"
            ),
        },
    ))
}

const EMIT_ANNOTATION: ToolDef<Shared, RegionAnnotation> = ToolDef {
    name: "emit_annotation",
    description: "Emit a structured annotation for one semantic code unit. Call this for each function, type, or code region affected by the commit that warrants annotation. Skip trivial changes.",
    schema: region_schema,
    run: emit_annotation,
};

fn emit_annotation(
    shared: &Shared,
    mut region: RegionAnnotation,
    _limits: &ToolLimits,
) -> Result<ToolOutput, ToolFailure> {
    region.file = region.file.trim().trim_start_matches("./").to_owned();
    let context = &shared.context;
    let files = context.all_paths();
    let probe = one_region_annotation(context, region.clone());
    let problems = probe.validate(&ValidationContext {
        expected_commit: Some(&context.commit.sha),
        commit_files: Some(&files),
    });
    let mut messages: Vec<String> = problems.iter().map(|p| p.message.clone()).collect();
    if let Some(text) = context.file_contents.get(&region.file) {
        let total = text.lines().count() as u32;
        if region.lines.end > total.max(1) {
            messages.push(format!(
                "lines {}-{} run past the end of {} ({total} lines at this commit)",
                region.lines.start, region.lines.end, region.file
            ));
        }
    }
    if !messages.is_empty() {
        collected(&shared.collector).rejected += 1;
        return Err(ToolFailure::new(
            "INVALID_ANNOTATION",
            format!("annotation not stored: {}", messages.join("; ")),
        ));
    }
    if let Some(problem) = anchor_problem(context, &region) {
        collected(&shared.collector).rejected += 1;
        return Err(ToolFailure::new(
            "ANCHOR_MISMATCH",
            format!("annotation not stored: {problem}"),
        ));
    }
    let label = format!("{}:{}", region.file, region.ast_anchor.name);
    collected(&shared.collector).regions.push(region);
    Ok(ToolOutput::complete(
        json!({"message": format!("Annotation emitted for {label}")}),
    ))
}

/// What is wrong with `region`'s anchor at the commit, if anything: with an
/// outline, the name must resolve (exactly or unqualified) to a unit of the
/// anchor's kind whose lines overlap the region's; without a grammar (or for a
/// `config` anchor, or a file without units), the name must occur in those
/// lines. A deleted file is not checked. The problem lists the units nearby.
fn anchor_problem(context: &AnnotationContext, region: &RegionAnnotation) -> Option<String> {
    let text = context.file_contents.get(&region.file)?;
    let anchor = &region.ast_anchor;
    let span = outline::LineSpan {
        start: region.lines.start,
        end: region.lines.end,
    };
    let units = match context.ast_outlines.get(&region.file) {
        Some(units) => units.clone(),
        None => match outline::outline(&region.file, text) {
            Ok(units) => units,
            Err(outline::OutlineError::NoGrammar { .. }) => Vec::new(),
            // A grammar that failed is no evidence against the anchor.
            Err(_) => return None,
        },
    };
    if units.is_empty() || anchor.unit_type == "config" {
        return text_anchor_problem(text, &anchor.name, span, &region.file);
    }
    let wanted = anchor.unit_type.as_str();
    let problem = match outline::resolve_anchor(&units, &anchor.name) {
        Err(_) => format!("'{}' is not a unit of {}", anchor.name, region.file),
        Ok(found) if matches!(found.match_kind, outline::MatchKind::Fuzzy { .. }) => format!(
            "'{}' is not a unit of {} (did you mean {}?)",
            anchor.name, region.file, found.units[0].qualified_name
        ),
        Ok(found) => {
            let of_kind: Vec<&outline::Unit> = found
                .units
                .iter()
                .filter(|u| u.kind.anchor_type() == wanted || u.kind.as_str() == wanted)
                .collect();
            if of_kind.is_empty() {
                format!(
                    "'{}' in {} is a {}, not a {wanted}",
                    anchor.name,
                    region.file,
                    found.units[0].kind.anchor_type()
                )
            } else if of_kind.iter().any(|u| overlaps(u.lines, span)) {
                return None;
            } else {
                let at: Vec<String> = of_kind
                    .iter()
                    .map(|u| format!("{}-{}", u.lines.start, u.lines.end))
                    .collect();
                format!(
                    "'{}' is at lines {} of {}, which do not overlap lines {}-{}",
                    anchor.name,
                    at.join(", "),
                    region.file,
                    span.start,
                    span.end
                )
            }
        }
    };
    Some(format!(
        "{problem}. Units at or near lines {}-{}: {}. Use one of these names (ast_anchor.type and lines as listed), or type \"config\" with a name that occurs in the lines for a block outside any unit",
        span.start,
        span.end,
        nearby(&units, span)
    ))
}

fn overlaps(a: outline::LineSpan, b: outline::LineSpan) -> bool {
    a.start <= b.end && b.start <= a.end
}

/// The units overlapping `span`, or else the five closest to it, as
/// `L10-17 method Client::connect`.
fn nearby(units: &[outline::Unit], span: outline::LineSpan) -> String {
    let mut chosen: Vec<&outline::Unit> =
        units.iter().filter(|u| overlaps(u.lines, span)).collect();
    if chosen.is_empty() {
        let distance = |u: &outline::Unit| {
            if u.lines.end < span.start {
                span.start - u.lines.end
            } else {
                u.lines.start.saturating_sub(span.end)
            }
        };
        chosen = units.iter().collect();
        chosen.sort_by_key(|u| distance(u));
        chosen.truncate(5);
        chosen.sort_by_key(|u| u.lines.start);
    }
    chosen
        .iter()
        .take(12)
        .map(|u| {
            format!(
                "L{}-{} {} {}",
                u.lines.start,
                u.lines.end,
                u.kind.anchor_type(),
                u.qualified_name
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Without an outline: the anchor's name must occur in the region's lines.
fn text_anchor_problem(
    text: &str,
    name: &str,
    span: outline::LineSpan,
    file: &str,
) -> Option<String> {
    let lines: Vec<&str> = text
        .lines()
        .skip(span.start.saturating_sub(1) as usize)
        .take(span.line_count() as usize)
        .collect();
    let name = name.trim();
    // A qualified name (`server.port`, `Table::row`) may be spread over lines:
    // each of its parts must occur.
    let parts: Vec<&str> = name
        .split(['.', ':', '/', ' '])
        .filter(|p| !p.is_empty())
        .collect();
    let found = |part: &str| lines.iter().any(|l| l.contains(part));
    if found(name) || (!parts.is_empty() && parts.iter().all(|p| found(p))) {
        return None;
    }
    let shown: String = lines
        .iter()
        .take(3)
        .map(|l| l.chars().take(80).collect::<String>())
        .collect::<Vec<_>>()
        .join(" / ");
    Some(format!(
        "'{name}' does not occur in lines {}-{} of {file} (no outline for this file: the anchor name must be text of those lines, e.g. a section or key name); they begin: {shown}",
        span.start, span.end
    ))
}

/// The arguments of `emit_annotation`: one region (spec 000), strict.
pub(crate) fn emit_annotation_schema() -> Value {
    region_schema().into()
}

/// The schema of one region ([`RegionAnnotation`]).
fn region_schema() -> Schema {
    let text = Schema::string;
    let line = || Schema::integer(1, MAX_LINE);
    // An object of required strings.
    let strings = |names: [&str; 3]| {
        names.into_iter().fold(Schema::object(), |object, name| {
            object.required(name, text())
        })
    };
    Schema::object()
        .required("file", text())
        .required(
            "ast_anchor",
            Schema::object()
                .required(
                    "type",
                    text().one_of([
                        "function", "method", "struct", "class", "impl", "module", "const", "type",
                        "config",
                    ]),
                )
                .required("name", text())
                .optional("signature", text()),
        )
        .required(
            "lines",
            Schema::object()
                .required("start", line())
                .required("end", line()),
        )
        .required("intent", text())
        .optional("reasoning", text())
        .optional(
            "constraints",
            Schema::array(
                Schema::object()
                    .required("text", text())
                    .required("source", text().one_of(["author", "inferred"])),
            ),
        )
        .optional(
            "semantic_dependencies",
            Schema::array(strings(["file", "anchor", "nature"])),
        )
        .optional(
            "related_annotations",
            Schema::array(strings(["commit", "anchor", "relationship"])),
        )
        .optional("tags", Schema::array(text()))
        .optional("risk_notes", text())
        .optional("retires", Schema::array(text()))
}

fn one_region_annotation(context: &AnnotationContext, region: RegionAnnotation) -> Annotation {
    let mut annotation = Annotation::new(
        context.commit.sha.clone(),
        chrono::Utc::now().to_rfc3339(),
        "probe",
        ContextLevel::Inferred,
    );
    annotation.regions.push(region);
    annotation
}

/// The parameters of `emit_cross_cutting`, also one item of the structured
/// answer's `cross_cutting`.
pub(crate) fn emit_cross_cutting_schema() -> Value {
    cross_cutting_schema().into()
}

/// The schema of one [`CrossCuttingConcern`].
fn cross_cutting_schema() -> Schema {
    Schema::object()
        .required("description", Schema::string())
        .required("regions", Schema::array(Schema::string()))
        .required("nature", Schema::string())
}

const EMIT_CROSS_CUTTING: ToolDef<Collector, CrossCuttingConcern> = ToolDef {
    name: "emit_cross_cutting",
    description: "Emit a cross-cutting concern that spans multiple code regions. These are groups of code that must be updated together.",
    schema: cross_cutting_schema,
    run: emit_cross_cutting,
};

fn emit_cross_cutting(
    collector: &Collector,
    concern: CrossCuttingConcern,
    _limits: &ToolLimits,
) -> Result<ToolOutput, ToolFailure> {
    let mut problems = Vec::new();
    if concern.description.trim().is_empty() {
        problems.push("description is empty");
    }
    if concern.nature.trim().is_empty() {
        problems.push("nature is empty");
    }
    if concern
        .regions
        .iter()
        .filter(|r| !r.trim().is_empty())
        .count()
        < 2
    {
        problems.push("a cross-cutting concern names at least two regions (\"file:anchor\")");
    }
    if !problems.is_empty() {
        collected(collector).rejected += 1;
        return Err(ToolFailure::new("INVALID_ANNOTATION", problems.join("; ")));
    }
    collected(collector).cross_cutting.push(concern);
    Ok(ToolOutput::complete(
        json!({"message": "Cross-cutting concern recorded"}),
    ))
}

/// The arguments of `decline_annotation`.
#[derive(Debug, Deserialize)]
pub(crate) struct DeclineArgs {
    reason: String,
}

/// The most of a decline's reason kept.
const DECLINE_REASON_MAX: usize = 300;

/// The one way to record that a commit holds nothing worth annotating.
pub(crate) const DECLINE_ANNOTATION: ToolDef<Collector, DeclineArgs> = ToolDef {
    name: "decline_annotation",
    description: "Record why nothing in this commit is worth annotating (one sentence). Call it alone; it ends the run.",
    schema: || Schema::object().required("reason", Schema::string()),
    run: decline_annotation,
};

fn decline_annotation(
    collector: &Collector,
    args: DeclineArgs,
    _limits: &ToolLimits,
) -> Result<ToolOutput, ToolFailure> {
    let reason = args.reason.trim();
    if reason.is_empty() {
        collected(collector).rejected += 1;
        return Err(ToolFailure::invalid_argument(
            "reason is empty: say in one sentence why nothing here is worth recording",
        ));
    }
    let reason: String = if reason.chars().count() > DECLINE_REASON_MAX {
        let mut cut: String = reason.chars().take(DECLINE_REASON_MAX - 1).collect();
        cut.push('…');
        cut
    } else {
        reason.to_owned()
    };
    collected(collector).declined = Some(reason);
    Ok(ToolOutput::complete(
        json!({"message": "Recorded: nothing to annotate in this commit"}),
    ))
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
