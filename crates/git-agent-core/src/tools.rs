//! The commit-message tools of spec 004 §5: read-only, strict, enveloped,
//! bounded views of the staged changes, HEAD and history.
//!
//! | tool | what it shows |
//! |---|---|
//! | `git_staged_paths` | staged paths with status |
//! | `git_staged_status` | index and working-tree state of every changed path |
//! | `git_staged_stat` | added/deleted lines per staged path |
//! | `git_staged_diff` | the staged diff (lockfiles summarized) |
//! | `git_staged_diff_for_paths` | the staged diff of some paths, lockfiles raw |
//! | `git_recent_commits` | recent commit subjects (style reference) |
//! | `git_head_show` | HEAD: metadata, full message, paths |
//! | `git_diff_against_parent` | HEAD against its first parent |
//! | `git_final_amended_diff` | the index against HEAD's first parent: what the amended commit will contain |
//! | `git_amend_delta` | the staged changes against HEAD: what the amend adds |
//! | `git_show_file_at_rev` | a file at a commit, or as staged |
//!
//! Every tool opens the repository afresh, reads, and returns; none writes to the
//! working tree, the index, refs or config. Text results are cut at line ends to
//! the registry's limits with a truncation note saying how to read the rest.
//!
//! Each tool is one [`ToolDef`] entry (name, description, argument schema, a
//! function over the repository), its arguments a `Deserialize` struct that
//! `agent` parses and checks before the function runs. The five diff tools
//! share their arguments (`DiffArgs`), their schema (`diff_schema`: whether
//! they take `paths`) and their function (`run_diff`: which diff, and what to
//! say when it is cut).

use std::path::PathBuf;
use std::sync::Arc;

use agent::schema::Schema;
use agent::{
    NoArgs, Tool, ToolDef, ToolFailure, ToolLimits, ToolOutput, ToolRegistry, Truncation,
    TruncationLimit,
};
use git_evidence::classify::{Class, classify};
use git_evidence::fit;
use gitctx::{Diff, DiffOptions, DiffTarget, FileStatus, Repo};
use lockfile_diff as lockfile;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::context::Mode;

/// The limits of commit-message tool results: every task's
/// ([`git_evidence::TOOL_LIMITS`]).
pub use git_evidence::TOOL_LIMITS as LIMITS;

/// Largest `limit` of `git_recent_commits`.
const MAX_RECENT: usize = 50;
/// Most paths one path-filtered call takes.
const MAX_PATHS: u64 = 50;
/// Most context lines around changes.
const MAX_CONTEXT: u32 = 20;
/// Lines `git_show_file_at_rev` returns by default.
const FILE_LINES: usize = 400;

/// The repository every tool reads.
#[derive(Debug, Clone)]
struct Ctx {
    root: PathBuf,
}

impl Ctx {
    fn repo(&self) -> Result<Repo, ToolFailure> {
        Repo::discover(&self.root).map_err(internal)
    }
}

fn internal(err: impl std::fmt::Display) -> ToolFailure {
    ToolFailure::internal(err.to_string())
}

fn git_failure(err: gitctx::Error) -> ToolFailure {
    match err {
        gitctx::Error::RevNotFound { .. }
        | gitctx::Error::AmbiguousRev { .. }
        | gitctx::Error::WrongObjectKind { .. } => {
            ToolFailure::new("UNKNOWN_REVISION", err.to_string())
        }
        gitctx::Error::PathNotFound { .. } | gitctx::Error::NotAFile { .. } => {
            ToolFailure::new("NOT_FOUND", err.to_string())
        }
        gitctx::Error::UnbornHead { .. } => ToolFailure::new("NO_COMMITS", err.to_string()),
        other => internal(other),
    }
}

/// The registry for `mode`: the commit-message tools that make sense in it,
/// then the shared repository tools (`repo_summary`, `list_files`, `read_file`,
/// `search_files`).
pub fn registry(root: &std::path::Path, mode: Mode) -> ToolRegistry {
    let ctx = Ctx {
        root: root.to_path_buf(),
    };
    let mut tools: Vec<Arc<dyn Tool>> = vec![
        Arc::new(STAGED_PATHS.bind(ctx.clone())),
        Arc::new(STAGED_STATUS.bind(ctx.clone())),
        Arc::new(STAGED_STAT.bind(ctx.clone())),
        Arc::new(STAGED_DIFF.bind(ctx.clone())),
        Arc::new(STAGED_DIFF_FOR_PATHS.bind(ctx.clone())),
        Arc::new(RECENT_COMMITS.bind(ctx.clone())),
        Arc::new(HEAD_SHOW.bind(ctx.clone())),
        Arc::new(DIFF_AGAINST_PARENT.bind(ctx.clone())),
    ];
    if mode == Mode::Amend {
        tools.push(Arc::new(FINAL_AMENDED_DIFF.bind(ctx.clone())));
        tools.push(Arc::new(AMEND_DELTA.bind(ctx.clone())));
    }
    tools.push(Arc::new(SHOW_FILE_AT_REV.bind(ctx)));
    tools.push(Arc::new(repo_tools::REPO_SUMMARY.bind(root.to_path_buf())));
    tools.push(Arc::new(repo_tools::LIST_FILES.bind(root.to_path_buf())));
    tools.push(Arc::new(repo_tools::READ_FILE.bind(root.to_path_buf())));
    tools.push(Arc::new(repo_tools::SEARCH_FILES.bind(root.to_path_buf())));
    let mut registry = ToolRegistry::new(LIMITS);
    for tool in tools {
        registry
            .register(tool)
            .expect("the commit-message tools have distinct names and strict schemas (tested)");
    }
    registry
}

/// `paths` made repository-relative (`./` and a trailing `/` dropped); a path
/// that is empty, absolute, or goes through `..` or `.git` is refused.
fn repo_paths(paths: &[String]) -> Result<Vec<String>, ToolFailure> {
    paths.iter().map(|path| repo_path(path)).collect()
}

/// One path of [`repo_paths`].
fn repo_path(path: &str) -> Result<String, ToolFailure> {
    let clean = path.trim().trim_start_matches("./").trim_end_matches('/');
    if clean.is_empty()
        || clean.starts_with('/')
        || clean.split('/').any(|c| c == ".." || c == ".git")
    {
        return Err(ToolFailure::invalid_argument(format!(
            "'{path}' is not a repository-relative path"
        )));
    }
    Ok(clean.to_owned())
}

/// `text` cut to the limits (bytes with room for the envelope, and lines).
fn cap_text(text: &str, limits: &ToolLimits, hint: &str) -> (String, Option<Truncation>) {
    let max_bytes = limits.max_bytes * 3 / 4;
    let total_lines = text.lines().count();
    let mut cut = text;
    let mut limit = None;
    if total_lines > limits.max_lines {
        let end = text
            .match_indices('\n')
            .nth(limits.max_lines - 1)
            .map_or(text.len(), |(i, _)| i + 1);
        cut = &text[..end];
        limit = Some((TruncationLimit::Lines, limits.max_lines));
    }
    if cut.len() > max_bytes {
        cut = fit::cut_at_line(cut, max_bytes).0;
        limit = Some((TruncationLimit::Bytes, max_bytes));
    }
    match limit {
        None => (text.to_owned(), None),
        Some((which, max)) => {
            let shown = cut.lines().count();
            (
                cut.to_owned(),
                Some(Truncation {
                    limit: which,
                    max,
                    total: Some(total_lines),
                    shown,
                    hint: hint.to_owned(),
                }),
            )
        }
    }
}

/// A diff's paths as rows: path, status letter, the old path of a rename or
/// copy.
fn path_rows(diff: &Diff) -> Vec<Value> {
    diff.files
        .iter()
        .map(|f| {
            let mut row = json!({"path": f.path(), "status": f.status.letter().to_string()});
            if matches!(f.status, FileStatus::Renamed | FileStatus::Copied)
                && let Some(old) = &f.old_path
            {
                row["old_path"] = json!(old);
            }
            row
        })
        .collect()
}

/// [`path_rows`] with line counts (or `binary`) and the kind of each path.
fn file_rows(repo: &Repo, diff: &Diff) -> Vec<Value> {
    let mut rows = path_rows(diff);
    for (row, f) in rows.iter_mut().zip(&diff.files) {
        if f.binary {
            row["binary"] = json!(true);
        } else {
            row["additions"] = json!(f.additions);
            row["deletions"] = json!(f.deletions);
        }
        let class = classify(repo, f);
        let label = class.label();
        if !label.is_empty() && class != Class::Binary {
            row["kind"] = json!(label);
        }
    }
    rows
}

/// A diff result: the files, lockfile summaries in place of their raw diffs
/// (unless `raw_lockfiles`), and the diff text capped.
fn diff_output(
    repo: &Repo,
    diff: &Diff,
    base: Option<&str>,
    raw_lockfiles: bool,
    limits: &ToolLimits,
    hint: &str,
) -> Result<ToolOutput, ToolFailure> {
    let mut text = String::new();
    let mut later = String::new();
    let mut summaries = Vec::new();
    for file in &diff.files {
        let class = classify(repo, file);
        // Generated files come after the hand-written ones, so a cut takes them first.
        if matches!(class, Class::Generated(_)) {
            file.write_unified(&mut later);
            continue;
        }
        if let (Class::Lockfile(kind), false) = (&class, raw_lockfiles) {
            let old = match (base, &file.old_path) {
                (Some(rev), Some(old)) if file.status != FileStatus::Added => repo
                    .file_at_opt(rev, old)
                    .map_err(git_failure)?
                    .map(|b| String::from_utf8_lossy(&b).into_owned()),
                _ => None,
            };
            let new = if file.status == FileStatus::Deleted {
                None
            } else {
                repo.file_in_index(file.path())
                    .map_err(git_failure)?
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
            };
            let summary = lockfile::summarize(file.path(), *kind, old.as_deref(), new.as_deref());
            summaries.push(json!(summary.render(80)));
            continue;
        }
        file.write_unified(&mut text);
    }
    text.push_str(&later);
    let (diff_text, truncation) = cap_text(&text, limits, hint);
    let mut data = json!({
        "files": file_rows(repo, diff),
        "additions": diff.additions(),
        "deletions": diff.deletions(),
        "diff": diff_text,
    });
    if !summaries.is_empty() {
        data["lockfile_summaries"] = json!(summaries);
    }
    Ok(match truncation {
        Some(t) => ToolOutput::truncated(data, t),
        None => ToolOutput::complete(data),
    })
}

fn head_parent(repo: &Repo) -> Result<Option<String>, ToolFailure> {
    let head = repo.head().map_err(git_failure)?;
    let Some(id) = head.commit() else {
        return Err(ToolFailure::new(
            "NO_COMMITS",
            "HEAD has no commits yet: there is no HEAD commit",
        ));
    };
    let info = repo.commit_info_by_id(id).map_err(git_failure)?;
    Ok(info.parents.first().map(|p| p.to_hex()))
}

/// `rows` under `key` with their `count`, cut to `max_entries`.
fn entries_output(key: &str, rows: Vec<Value>, limits: &ToolLimits, hint: &str) -> ToolOutput {
    let total = rows.len();
    if total <= limits.max_entries {
        return ToolOutput::complete(json!({key: rows, "count": total}));
    }
    let shown: Vec<Value> = rows.into_iter().take(limits.max_entries).collect();
    let n = shown.len();
    ToolOutput::truncated(
        json!({key: shown, "count": total}),
        Truncation {
            limit: TruncationLimit::Entries,
            max: limits.max_entries,
            total: Some(total),
            shown: n,
            hint: hint.to_owned(),
        },
    )
}

/// The staged diff without hunks: paths and line counts only.
fn staged_files(repo: &Repo) -> Result<Diff, ToolFailure> {
    let options = DiffOptions {
        hunks: false,
        ..DiffOptions::default()
    };
    repo.diff(DiffTarget::Staged, &options).map_err(git_failure)
}

const STAGED_PATHS: ToolDef<Ctx, NoArgs> = ToolDef {
    name: "git_staged_paths",
    description: "List the staged paths (the authoritative scope of a new commit) with their status letter (A added, M modified, D deleted, R renamed, C copied, T type changed).",
    schema: Schema::object,
    run: staged_paths,
};

fn staged_paths(ctx: &Ctx, _: NoArgs, limits: &ToolLimits) -> Result<ToolOutput, ToolFailure> {
    let repo = &ctx.repo()?;
    Ok(entries_output(
        "paths",
        path_rows(&staged_files(repo)?),
        limits,
        "the list is complete in git_staged_stat's totals; ask git_staged_diff_for_paths about a directory",
    ))
}

const STAGED_STATUS: ToolDef<Ctx, NoArgs> = ToolDef {
    name: "git_staged_status",
    description: "Show the branch and the index/working-tree state of every changed path, like `git status --porcelain` (XY codes): which paths are staged, which also have unstaged changes, and how many files are untracked. Only staged changes belong to the commit.",
    schema: Schema::object,
    run: staged_status,
};

fn staged_status(ctx: &Ctx, _: NoArgs, limits: &ToolLimits) -> Result<ToolOutput, ToolFailure> {
    let repo = &ctx.repo()?;
    let head = repo.head().map_err(git_failure)?;
    let status = repo.status(true).map_err(git_failure)?;
    let untracked = status.iter().filter(|e| e.worktree == Some('?')).count();
    let rows: Vec<Value> = status
        .iter()
        .filter(|e| e.worktree != Some('?'))
        .map(|e| {
            let mut row = json!({"xy": e.xy(), "path": e.path});
            if let Some(from) = &e.renamed_from {
                row["renamed_from"] = json!(from);
            }
            row
        })
        .collect();
    let mut out = entries_output(
        "entries",
        rows,
        limits,
        "use git_staged_paths and git_staged_stat for the staged part",
    );
    out.data["branch"] = json!(head.branch());
    out.data["head"] = json!(head.commit().map(|c| c.short()));
    out.data["untracked"] = json!(untracked);
    Ok(out)
}

const STAGED_STAT: ToolDef<Ctx, NoArgs> = ToolDef {
    name: "git_staged_stat",
    description: "Show added and deleted line counts per staged path and in total (like `git diff --cached --numstat`), with the kind of each path (lockfile, generated, binary, submodule).",
    schema: Schema::object,
    run: staged_stat,
};

fn staged_stat(ctx: &Ctx, _: NoArgs, limits: &ToolLimits) -> Result<ToolOutput, ToolFailure> {
    let repo = &ctx.repo()?;
    let diff = staged_files(repo)?;
    let mut out = entries_output(
        "files",
        file_rows(repo, &diff),
        limits,
        "the totals cover every file; ask git_staged_diff_for_paths about specific paths",
    );
    out.data["additions"] = json!(diff.additions());
    out.data["deletions"] = json!(diff.deletions());
    Ok(out)
}

const HEAD_SHOW: ToolDef<Ctx, NoArgs> = ToolDef {
    name: "git_head_show",
    description: "Show the HEAD commit: id, author, dates, parents, full message and its changed paths with line counts (no diff text; use git_diff_against_parent for that).",
    schema: Schema::object,
    run: head_show,
};

fn head_show(ctx: &Ctx, _: NoArgs, limits: &ToolLimits) -> Result<ToolOutput, ToolFailure> {
    let repo = &ctx.repo()?;
    let head = repo.head().map_err(git_failure)?;
    let Some(id) = head.commit() else {
        return Err(ToolFailure::new("NO_COMMITS", "HEAD has no commits yet"));
    };
    let info = repo.commit_info_by_id(id).map_err(git_failure)?;
    let diff = repo
        .diff(
            DiffTarget::Commit(&id.to_hex()),
            &DiffOptions {
                hunks: false,
                ..DiffOptions::default()
            },
        )
        .map_err(git_failure)?;
    let mut out = entries_output(
        "files",
        file_rows(repo, &diff),
        limits,
        "use git_diff_against_parent with paths for details",
    );
    out.data["id"] = json!(id.to_hex());
    out.data["branch"] = json!(head.branch());
    out.data["author"] = json!(format!("{} <{}>", info.author.name, info.author.email));
    out.data["author_date"] = json!(info.author.time.to_rfc3339());
    out.data["committer_date"] = json!(info.committer.time.to_rfc3339());
    out.data["parents"] = json!(info.parents.iter().map(|p| p.short()).collect::<Vec<_>>());
    out.data["message"] = json!(info.message);
    out.data["additions"] = json!(diff.additions());
    out.data["deletions"] = json!(diff.deletions());
    Ok(out)
}

/// Which diff a diff tool shows.
#[derive(Debug, Clone, Copy)]
enum Which {
    /// The index against HEAD.
    Staged,
    /// HEAD against its first parent.
    HeadCommit,
    /// The index against HEAD's first parent.
    FinalAmended,
}

/// Whether a diff tool takes `paths`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Paths {
    /// No: the whole diff.
    None,
    /// Optionally; none is the whole diff.
    Optional,
    /// At least one.
    Required,
}

const STAGED_DIFF: ToolDef<Ctx, DiffArgs> = ToolDef {
    name: "git_staged_diff",
    description: "Show the whole staged diff (index against HEAD). Lockfiles are summarized as package version changes instead of raw diffs. Large diffs are cut; then use git_staged_diff_for_paths for the parts you need.",
    schema: || diff_schema(Paths::None),
    run: |ctx, args, limits| {
        run_diff(
            ctx,
            args,
            limits,
            Which::Staged,
            "the diff was cut; call git_staged_diff_for_paths with the paths you still need",
        )
    },
};

const STAGED_DIFF_FOR_PATHS: ToolDef<Ctx, DiffArgs> = ToolDef {
    name: "git_staged_diff_for_paths",
    description: "Show the staged diff of the given paths only (files or directories), e.g. a high-churn file or a secondary change cluster the prepared diff cut or omitted. Lockfiles asked for by path are shown raw.",
    schema: || diff_schema(Paths::Required),
    run: |ctx, args, limits| {
        run_diff(
            ctx,
            args,
            limits,
            Which::Staged,
            "the diff was cut; ask for fewer paths, or context_lines 0",
        )
    },
};

const DIFF_AGAINST_PARENT: ToolDef<Ctx, DiffArgs> = ToolDef {
    name: "git_diff_against_parent",
    description: "Show the diff of the HEAD commit against its first parent (the whole tree for a root commit), optionally limited to paths. In normal mode this is contrast: work already committed, not part of the new commit.",
    schema: || diff_schema(Paths::Optional),
    run: |ctx, args, limits| {
        run_diff(
            ctx,
            args,
            limits,
            Which::HeadCommit,
            "the diff was cut; call again with paths",
        )
    },
};

const FINAL_AMENDED_DIFF: ToolDef<Ctx, DiffArgs> = ToolDef {
    name: "git_final_amended_diff",
    description: "Authoritative for --amend: the final amended commit (HEAD with the staged changes laid over it, i.e. the index) against HEAD's first parent, optionally limited to paths. Describe this, not the staged delta.",
    schema: || diff_schema(Paths::Optional),
    run: |ctx, args, limits| {
        run_diff(
            ctx,
            args,
            limits,
            Which::FinalAmended,
            "the diff was cut; call git_final_amended_diff again with paths",
        )
    },
};

const AMEND_DELTA: ToolDef<Ctx, DiffArgs> = ToolDef {
    name: "git_amend_delta",
    description: "Diagnostic for --amend: the staged changes against HEAD, i.e. only what the amend adds or changes on top of the current commit, optionally limited to paths. Never describe the amended commit by this delta alone.",
    schema: || diff_schema(Paths::Optional),
    run: |ctx, args, limits| {
        run_diff(
            ctx,
            args,
            limits,
            Which::Staged,
            "the diff was cut; call git_amend_delta again with paths",
        )
    },
};

/// The arguments of the diff tools.
#[derive(Debug, Deserialize)]
struct DiffArgs {
    paths: Option<Vec<String>>,
    context_lines: Option<u32>,
}

/// The schema of a diff tool that takes `paths_kind` paths.
fn diff_schema(paths_kind: Paths) -> Schema {
    let context_lines = Schema::integer(0, u64::from(MAX_CONTEXT))
        .description("Unchanged lines around each change (default 3).");
    let paths = |required: bool| {
        let description = if required {
            "Repository-relative paths (files or directories) to limit the diff to."
        } else {
            "Optional: repository-relative paths (files or directories) to limit the diff to; omit for every path."
        };
        Schema::array(Schema::string().min_length(1))
            .min_items(u64::from(required))
            .max_items(MAX_PATHS)
            .description(description)
    };
    let schema = Schema::object();
    let schema = match paths_kind {
        Paths::None => schema,
        Paths::Optional => schema.optional("paths", paths(false)),
        Paths::Required => schema.required("paths", paths(true)),
    };
    schema.optional("context_lines", context_lines)
}

/// Runs a diff tool: the diff `which` names, cut to `limits`, with `hint` for
/// reading on when cut.
fn run_diff(
    ctx: &Ctx,
    args: DiffArgs,
    limits: &ToolLimits,
    which: Which,
    hint: &str,
) -> Result<ToolOutput, ToolFailure> {
    let paths = repo_paths(args.paths.as_deref().unwrap_or_default())?;
    let raw_lockfiles = !paths.is_empty();
    let options = DiffOptions {
        paths,
        context_lines: args.context_lines.unwrap_or(3).min(MAX_CONTEXT),
        ..DiffOptions::default()
    };
    let repo = ctx.repo()?;
    let (diff, base) = match which {
        Which::Staged => {
            let head = repo
                .head()
                .map_err(git_failure)?
                .commit()
                .map(|c| c.to_hex());
            (repo.diff(DiffTarget::Staged, &options), head)
        }
        Which::HeadCommit => {
            let parent = head_parent(&repo)?;
            (repo.diff(DiffTarget::Commit("HEAD"), &options), parent)
        }
        Which::FinalAmended => {
            let parent = head_parent(&repo)?;
            (
                repo.diff(DiffTarget::IndexAgainst(parent.as_deref()), &options),
                parent,
            )
        }
    };
    let diff = diff.map_err(git_failure)?;
    diff_output(&repo, &diff, base.as_deref(), raw_lockfiles, limits, hint)
}

/// The arguments of `git_recent_commits`.
#[derive(Debug, Deserialize)]
struct RecentArgs {
    limit: Option<usize>,
}

const RECENT_COMMITS: ToolDef<Ctx, RecentArgs> = ToolDef {
    name: "git_recent_commits",
    description: "List recent commits reachable from HEAD (short id, date, author, subject), newest first: a reference for the repository's message style, not evidence of the staged change.",
    schema: || {
        Schema::object().optional(
            "limit",
            Schema::integer(1, MAX_RECENT as u64).description("How many commits (default 10)."),
        )
    },
    run: recent_commits,
};

fn recent_commits(
    ctx: &Ctx,
    args: RecentArgs,
    limits: &ToolLimits,
) -> Result<ToolOutput, ToolFailure> {
    let limit = args.limit.unwrap_or(10);
    let repo = ctx.repo()?;
    if repo.head().map_err(git_failure)?.commit().is_none() {
        return Ok(ToolOutput::complete(json!({"commits": [], "count": 0})));
    }
    let ids = repo.log("HEAD", limit).map_err(git_failure)?;
    let mut rows = Vec::with_capacity(ids.len());
    for id in ids {
        let info = repo.commit_info_by_id(id).map_err(git_failure)?;
        rows.push(json!({
            "id": id.short(),
            "date": info.author.time.to_fixed().format("%Y-%m-%d").to_string(),
            "author": info.author.name,
            "subject": info.summary,
        }));
    }
    Ok(entries_output(
        "commits",
        rows,
        limits,
        "ask for a smaller limit",
    ))
}

/// The arguments of `git_show_file_at_rev`.
#[derive(Debug, Deserialize)]
struct ShowFileArgs {
    rev: String,
    path: String,
    start_line: Option<usize>,
    max_lines: Option<usize>,
}

const SHOW_FILE_AT_REV: ToolDef<Ctx, ShowFileArgs> = ToolDef {
    name: "git_show_file_at_rev",
    description: "Show a file's content (numbered lines) at a commit (e.g. HEAD, HEAD~1, a short id) or as staged (rev INDEX), to read code around a change. Use start_line and max_lines to page.",
    schema: || {
        Schema::object()
            .required(
                "rev",
                Schema::string().min_length(1).description(
                    "A commit (HEAD, HEAD~1, a tag, an id) or INDEX for the staged version.",
                ),
            )
            .required(
                "path",
                Schema::string()
                    .min_length(1)
                    .description("Repository-relative file path."),
            )
            .optional(
                "start_line",
                Schema::integer(1, 10_000_000).description("First line to show (default 1)."),
            )
            .optional(
                "max_lines",
                Schema::integer(1, 800).description("Lines to show (default 400)."),
            )
    },
    run: show_file_at_rev,
};

fn show_file_at_rev(
    ctx: &Ctx,
    args: ShowFileArgs,
    limits: &ToolLimits,
) -> Result<ToolOutput, ToolFailure> {
    let rev = args.rev.trim();
    if rev.is_empty() || rev.starts_with('-') {
        return Err(ToolFailure::invalid_argument(format!(
            "'{rev}' is not a revision"
        )));
    }
    let path = repo_path(&args.path)?;
    let first = args.start_line.unwrap_or(1);
    let max = args.max_lines.unwrap_or(FILE_LINES).min(limits.max_lines);
    let repo = ctx.repo()?;
    let bytes = if rev.eq_ignore_ascii_case("INDEX") || rev == ":" {
        repo.file_in_index(&path)
            .map_err(git_failure)?
            .ok_or_else(|| ToolFailure::new("NOT_FOUND", format!("'{path}' is not staged")))?
    } else {
        repo.file_at(rev, &path).map_err(git_failure)?
    };
    if bytes.iter().take(8000).any(|&b| b == 0) {
        return Err(ToolFailure::new(
            "NOT_TEXT",
            format!("'{path}' at {rev} is binary ({} bytes)", bytes.len()),
        ));
    }
    let text = String::from_utf8_lossy(&bytes);
    let total = text.lines().count();
    if total > 0 && first > total {
        return Err(ToolFailure::invalid_argument(format!(
            "start_line {first} is past the end of '{path}' ({total} lines)"
        )));
    }
    let mut numbered = String::new();
    let mut shown: usize = 0;
    for (i, line) in text.lines().enumerate().skip(first - 1).take(max) {
        numbered.push_str(&format!("{:>6}\t{line}\n", i + 1));
        shown += 1;
    }
    let (content, cut) = cap_text(
        &numbered,
        limits,
        "ask for the rest with a later start_line",
    );
    let last = first + shown.saturating_sub(1);
    let data =
        json!({"rev": rev, "path": path, "lines": total, "start_line": first, "content": content});
    let more = last < total;
    Ok(match (cut, more) {
        (Some(t), _) => ToolOutput::truncated(data, t),
        (None, true) => ToolOutput::truncated(
            data,
            Truncation {
                limit: TruncationLimit::Lines,
                max,
                total: Some(total),
                shown,
                hint: format!("call again with start_line {}", last + 1),
            },
        ),
        (None, false) => ToolOutput::complete(data),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_registries_are_strict_and_distinct() {
        let dir = std::env::temp_dir();
        let normal = registry(&dir, Mode::Staged);
        let amend = registry(&dir, Mode::Amend);
        assert!(!normal.names().contains(&"git_final_amended_diff"));
        assert!(amend.names().contains(&"git_final_amended_diff"));
        assert!(amend.names().contains(&"git_amend_delta"));
        assert_eq!(amend.names().len(), 15);
    }

    #[test]
    fn paths_must_stay_in_the_repository() {
        assert!(repo_path("../x").is_err());
        assert!(repo_path("/etc/passwd").is_err());
        assert!(repo_path(".git/config").is_err());
        assert_eq!(
            repo_paths(&["./src/".into(), "a.rs".into()]).unwrap(),
            ["src", "a.rs"]
        );
    }

    #[test]
    fn text_caps_say_how_much_was_left_out() {
        let text: String = (0..2000).map(|i| format!("line {i}\n")).collect();
        let (cut, t) = cap_text(&text, &LIMITS, "hint");
        let t = t.unwrap();
        assert_eq!(t.limit, TruncationLimit::Lines);
        assert_eq!(t.total, Some(2000));
        assert_eq!(t.shown, 800);
        assert_eq!(cut.lines().count(), 800);
    }
}
