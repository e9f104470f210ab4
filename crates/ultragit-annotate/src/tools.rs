//! The writing agent's tools (spec 000 "Tool Definitions"): six read tools,
//! `get_diff_for_file`, and the write tools `emit_annotation` and
//! `emit_cross_cutting`, which validate what the model emits and collect it.
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

use crate::gather::AnnotationContext;

/// What the write tools collected.
#[derive(Debug, Default, Clone)]
pub struct Collected {
    pub regions: Vec<RegionAnnotation>,
    pub cross_cutting: Vec<CrossCuttingConcern>,
    /// Emissions refused as invalid (the model was told why).
    pub rejected: u32,
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
pub const LIMITS: ToolLimits = ToolLimits {
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
}

/// The registry of one agent run.
pub fn registry(
    context: Arc<AnnotationContext>,
    scope: Scope,
    collector: Collector,
) -> ToolRegistry {
    let shared = Shared {
        context,
        scope: Arc::new(scope),
        collector: collector.clone(),
    };
    let tools: Vec<Arc<dyn Tool>> = vec![
        Arc::new(GET_DIFF.bind(shared.clone())),
        Arc::new(GET_FILE_CONTENT.bind(shared.clone())),
        Arc::new(GET_AST_OUTLINE.bind(shared.clone())),
        Arc::new(GET_SURROUNDING_CONTEXT.bind(shared.clone())),
        Arc::new(GET_COMMIT_INFO.bind(shared.clone())),
        Arc::new(GET_RECENT_ANNOTATIONS.bind(shared.clone())),
        Arc::new(GET_DIFF_FOR_FILE.bind(shared.clone())),
        Arc::new(EMIT_ANNOTATION.bind(shared)),
        Arc::new(EMIT_CROSS_CUTTING.bind(collector)),
    ];
    let mut registry = ToolRegistry::new(LIMITS);
    for tool in tools {
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
}

/// The path the argument `key` names, trimmed and without a leading `./`.
fn clean_path(key: &str, path: &str) -> Result<String, ToolFailure> {
    let path = path.trim().trim_start_matches("./");
    if path.is_empty() {
        return Err(ToolFailure::invalid_argument(format!("{key} is empty")));
    }
    Ok(path.to_owned())
}

/// The arguments of the tools that take one file path.
#[derive(Debug, Deserialize)]
struct PathArgs {
    path: String,
}

impl PathArgs {
    /// The schema: `path`, required.
    fn schema() -> Schema {
        Schema::object().required("path", Schema::string().description(PATH_DESCRIPTION))
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

/// Caps `text` at the line limit, with truncation metadata.
fn capped(key: &str, text: String, extra: Value, limits: &ToolLimits, hint: &str) -> ToolOutput {
    let total = text.lines().count();
    let mut data = extra;
    if total <= limits.max_lines {
        data[key] = json!(text);
        return ToolOutput::complete(data);
    }
    let kept: String = text
        .lines()
        .take(limits.max_lines)
        .map(|l| format!("{l}\n"))
        .collect();
    data[key] = json!(kept);
    ToolOutput::truncated(
        data,
        Truncation {
            limit: TruncationLimit::Lines,
            max: limits.max_lines,
            total: Some(total),
            shown: limits.max_lines,
            hint: hint.to_owned(),
        },
    )
}

/// One file's diff with the commit's line numbers in front of every kept or added
/// line, so regions can be given in the commit's coordinates.
pub(crate) fn render_file_diff(diff: &gitctx::FileDiff) -> String {
    let status = match diff.status {
        gitctx::FileStatus::Added => "new file",
        gitctx::FileStatus::Deleted => "deleted",
        gitctx::FileStatus::Renamed => "renamed",
        gitctx::FileStatus::Copied => "copied",
        gitctx::FileStatus::TypeChanged => "type changed",
        gitctx::FileStatus::Modified => "modified",
    };
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
    if scope.summarize_diff {
        return Ok(ToolOutput::complete(
            json!({"summary": diff_summary(context, &scope.files)}),
        ));
    }
    let mut text = String::new();
    for path in &scope.files {
        if let Some(diff) = context.diff_for(path) {
            text.push_str(&render_file_diff(diff));
        }
    }
    Ok(capped(
        "diff",
        text,
        json!({"files": scope.files}),
        limits,
        "the diff was cut; call get_diff_for_file(path) for the files after the cut",
    ))
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
    Ok(capped(
        "diff",
        render_file_diff(diff),
        json!({"path": path}),
        limits,
        "the diff was cut; call get_file_content(path) or get_surrounding_context(path, line) for the rest",
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
    let text = file_at_commit(&shared.context, &path)?;
    let total = text.lines().count();
    Ok(capped(
        "content",
        numbered(&text, 1, total),
        json!({"path": path, "lines": total}),
        limits,
        "the file was cut; call get_surrounding_context(path, line, radius) for later lines",
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
    _limits: &ToolLimits,
) -> Result<ToolOutput, ToolFailure> {
    let path = args.path()?;
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
    let outline: Vec<Value> = units
        .iter()
        .map(|u| {
            json!({
                "kind": u.kind.as_str(),
                "name": u.qualified_name,
                "signature": u.signature,
                "lines": {"start": u.lines.start, "end": u.lines.end},
            })
        })
        .collect();
    Ok(ToolOutput::complete(
        json!({"path": path, "outline": outline}),
    ))
}

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
        "ask for a smaller radius",
    ))
}

const GET_COMMIT_INFO: ToolDef<Shared, NoArgs> = ToolDef {
    name: "get_commit_info",
    description: "Returns the commit message, author, timestamp, parent SHAs, and any author-provided context (task, reasoning, dependencies, tags).",
    schema: Schema::object,
    run: get_commit_info,
};

fn get_commit_info(
    shared: &Shared,
    _: NoArgs,
    _limits: &ToolLimits,
) -> Result<ToolOutput, ToolFailure> {
    let context = &shared.context;
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
    Ok(ToolOutput::complete(json!({"info": text})))
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
    _limits: &ToolLimits,
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
    Ok(ToolOutput::complete(json!({"annotations": found})))
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
    let label = format!("{}:{}", region.file, region.ast_anchor.name);
    collected(&shared.collector).regions.push(region);
    Ok(ToolOutput::complete(
        json!({"message": format!("Annotation emitted for {label}")}),
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
