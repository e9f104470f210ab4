//! The gather phase (spec 000 "Context Bundle"): everything the agent needs about a
//! commit, collected before the first model call — and the triviality check that
//! decides whether a model call is worth making at all.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use chrono::{DateTime, Utc};
use gitctx::{DiffOptions, FileDiff, LineKind, ObjectId, Repo};
use outline::Unit;
use ultragit_schema::{Annotation, ContextLevel};

use crate::config::AnnotateConfig;
use crate::error::AgentError;
use ultragit_notes::author::AuthorContext;

/// The commit being annotated (spec 000 `CommitInfo`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitInfo {
    /// Full SHA.
    pub sha: String,
    pub message: String,
    /// `Name <email>`.
    pub author: String,
    pub timestamp: DateTime<Utc>,
    pub parent_shas: Vec<String>,
}

/// An annotation already stored on an earlier commit.
#[derive(Debug, Clone, PartialEq)]
pub struct ExistingAnnotation {
    pub commit_sha: String,
    pub annotation: Annotation,
}

/// Everything the agent needs to annotate a commit.
#[derive(Debug, Clone)]
pub struct AnnotationContext {
    /// The working tree, for reading files the commit did not change.
    pub repo_root: PathBuf,
    pub commit: CommitInfo,
    /// Per-file diffs against the first parent, text files only.
    pub diffs: Vec<FileDiff>,
    /// Binary files and submodules the commit changed (not annotated).
    pub skipped: Vec<String>,
    /// Content at the commit of every changed text file that still exists.
    pub file_contents: HashMap<String, String>,
    /// Outlines of the files with a grammar.
    pub ast_outlines: HashMap<String, Vec<Unit>>,
    pub author_context: Option<AuthorContext>,
    /// Annotations of recent commits that touched the same files, newest first.
    pub recent_annotations: Vec<ExistingAnnotation>,
}

impl AnnotationContext {
    /// `enhanced` with author context (task, reasoning, dependencies or tags),
    /// `inferred` without.
    pub fn context_level(&self) -> ContextLevel {
        match &self.author_context {
            Some(ctx) if ctx.has_context() => ContextLevel::Enhanced,
            _ => ContextLevel::Inferred,
        }
    }

    /// Added plus deleted lines of the text diffs.
    pub fn changed_lines(&self) -> u32 {
        self.diffs.iter().map(FileDiff::changed_lines).sum()
    }

    /// The paths of the annotated files (new path, or old for deletions).
    pub fn paths(&self) -> Vec<String> {
        self.diffs.iter().map(|d| d.path().to_owned()).collect()
    }

    /// Every path the commit changed: new and old names, binary files
    /// included, each once.
    pub fn all_paths(&self) -> Vec<String> {
        let mut paths: Vec<String> = Vec::new();
        for diff in &self.diffs {
            for path in [&diff.old_path, &diff.new_path].into_iter().flatten() {
                if !paths.contains(path) {
                    paths.push(path.clone());
                }
            }
        }
        paths
    }

    /// The diff of one file (by new or old path).
    pub(crate) fn diff_for(&self, path: &str) -> Option<&FileDiff> {
        self.diffs
            .iter()
            .find(|d| d.new_path.as_deref() == Some(path) || d.old_path.as_deref() == Some(path))
    }
}

/// Collects the context of `rev`.
pub fn gather(
    repo: &Repo,
    rev: &str,
    author_context: Option<AuthorContext>,
    config: &AnnotateConfig,
) -> Result<AnnotationContext, AgentError> {
    gather_since(repo, rev, None, author_context, config)
}

/// Collects the context of `rev` with its diff taken against `base` instead of
/// its first parent (`None`: the first parent) — an amend's delta is the diff
/// from the commit it replaced.
pub(crate) fn gather_since(
    repo: &Repo,
    rev: &str,
    base: Option<&str>,
    author_context: Option<AuthorContext>,
    config: &AnnotateConfig,
) -> Result<AnnotationContext, AgentError> {
    let info = repo.commit_info(rev)?;
    let sha = info.id.to_hex();
    let diff = match base {
        Some(base) => repo.diff_revs(base, &sha, &DiffOptions::default())?,
        None => repo.diff_commit(&sha, &DiffOptions::default())?,
    };
    let mut diffs = Vec::new();
    let mut skipped = Vec::new();
    for file in diff.files {
        if file.binary || file.is_submodule() {
            skipped.push(file.path().to_owned());
        } else {
            diffs.push(file);
        }
    }
    let mut file_contents = HashMap::new();
    let mut ast_outlines = HashMap::new();
    for file in &diffs {
        let Some(path) = file.new_path.as_deref() else {
            continue; // deleted: nothing at the commit
        };
        let Some(bytes) = repo.file_at_opt(&sha, path)? else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if let Ok(units) = outline::outline(path, &text) {
            ast_outlines.insert(path.to_owned(), units);
        }
        file_contents.insert(path.to_owned(), text);
    }
    let author_context = author_context.filter(|ctx| !ctx.is_empty());
    let mut context = AnnotationContext {
        repo_root: repo.root().to_path_buf(),
        commit: CommitInfo {
            sha,
            message: info.message,
            author: format!("{} <{}>", info.author.name, info.author.email),
            timestamp: info.author.time.to_utc(),
            parent_shas: info.parents.iter().map(ObjectId::to_hex).collect(),
        },
        diffs,
        skipped,
        file_contents,
        ast_outlines,
        author_context,
        recent_annotations: Vec::new(),
    };
    context.recent_annotations =
        recent_annotations(repo, &context, config.recent_annotations_limit)?;
    Ok(context)
}

/// Up to `limit` annotated recent commits per touched file (before this commit),
/// plus the annotations of squash sources. One `git log` for all files; notes read
/// in-process.
fn recent_annotations(
    repo: &Repo,
    context: &AnnotationContext,
    limit: u32,
) -> Result<Vec<ExistingAnnotation>, AgentError> {
    let notes = repo.notes(crate::NOTES_REF)?;
    let mut out: Vec<ExistingAnnotation> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    let sources: Vec<String> = context
        .author_context
        .as_ref()
        .and_then(|a| a.squash_sources.clone())
        .unwrap_or_default();
    for source in sources {
        let Ok(id) = repo.resolve_commit(&source) else {
            continue;
        };
        if let Some(text) = notes.read(id)?
            && let Ok(annotation) = Annotation::from_json(&text)
            && seen.insert(id.to_hex())
        {
            out.push(ExistingAnnotation {
                commit_sha: id.to_hex(),
                annotation,
            });
        }
    }
    let Some(parent) = context.commit.parent_shas.first() else {
        return Ok(out);
    };
    let paths = context.all_paths();
    if limit == 0 || paths.is_empty() || notes.tip()?.is_none() {
        return Ok(out);
    }
    let window = (limit as usize * paths.len() * 4).clamp(20, 400);
    let history = repo.log_paths(parent, &paths, window)?;
    let ids: Vec<ObjectId> = history.iter().map(|(id, _)| *id).collect();
    // Oversized notes (`too_large`) are left out of the writer's context.
    let texts: HashMap<ObjectId, String> = notes.read_many(&ids)?.found.into_iter().collect();
    let mut per_file: HashMap<String, u32> = HashMap::new();
    for (id, files) in history {
        let Some(text) = texts.get(&id) else {
            continue;
        };
        let wanted = files
            .iter()
            .any(|f| per_file.get(f).copied().unwrap_or(0) < limit);
        if !wanted {
            continue;
        }
        let Ok(annotation) = Annotation::from_json(text) else {
            continue; // a malformed note is not context
        };
        for file in &files {
            *per_file.entry(file.clone()).or_default() += 1;
        }
        if seen.insert(id.to_hex()) {
            out.push(ExistingAnnotation {
                commit_sha: id.to_hex(),
                annotation,
            });
        }
    }
    Ok(out)
}

/// Why a commit is not worth a model call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trivial {
    /// Nothing changed.
    NoChanges,
    /// A merge that changes nothing against its first parent.
    MergeWithoutChanges,
    /// Only dependency lockfiles changed.
    LockfilesOnly,
    /// Only whitespace changed.
    WhitespaceOnly,
    /// Only binary files or submodule pointers changed.
    NothingToAnnotate,
    /// Only documentation changed, by the `docsPaths` rules (release notes,
    /// change logs, prose).
    DocsOnly,
}

impl std::fmt::Display for Trivial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Trivial::NoChanges => "the commit changes nothing",
            Trivial::MergeWithoutChanges => "a merge without changes of its own",
            Trivial::LockfilesOnly => "only lockfiles changed",
            Trivial::WhitespaceOnly => "only whitespace changed",
            Trivial::NothingToAnnotate => "only binary files or submodules changed",
            Trivial::DocsOnly => "only documentation changed (ultragit.docsPaths)",
        })
    }
}

/// Dependency lockfiles, by file name.
pub(crate) const LOCKFILES: &[&str] = &[
    "Cargo.lock",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "bun.lock",
    "bun.lockb",
    "poetry.lock",
    "Pipfile.lock",
    "uv.lock",
    "pdm.lock",
    "Gemfile.lock",
    "composer.lock",
    "go.sum",
    "mix.lock",
    "pubspec.lock",
    "Podfile.lock",
    "packages.lock.json",
    "flake.lock",
    "gradle.lockfile",
];

/// True for a dependency lockfile.
pub(crate) fn is_lockfile(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    LOCKFILES.contains(&name)
}

/// Whether the commit is trivial, and why (`config` holds the documentation
/// path rules).
pub fn triviality(context: &AnnotationContext, config: &AnnotateConfig) -> Option<Trivial> {
    let all: Vec<&str> = context
        .diffs
        .iter()
        .map(|d| d.path())
        .chain(context.skipped.iter().map(String::as_str))
        .collect();
    if all.is_empty() {
        return Some(if context.commit.parent_shas.len() > 1 {
            Trivial::MergeWithoutChanges
        } else {
            Trivial::NoChanges
        });
    }
    if all.iter().all(|p| is_lockfile(p)) {
        return Some(Trivial::LockfilesOnly);
    }
    if all.iter().all(|p| is_lockfile(p) || config.is_docs(p)) {
        return Some(Trivial::DocsOnly);
    }
    let text: Vec<&FileDiff> = context
        .diffs
        .iter()
        .filter(|d| !is_lockfile(d.path()))
        .collect();
    if text.is_empty() {
        return Some(Trivial::NothingToAnnotate);
    }
    if text.iter().all(|d| whitespace_only(d)) {
        return Some(Trivial::WhitespaceOnly);
    }
    None
}

/// A modification whose every hunk removes and adds the same lines once all
/// whitespace is ignored.
fn whitespace_only(diff: &FileDiff) -> bool {
    if diff.status != gitctx::FileStatus::Modified || diff.hunks.is_empty() {
        return false;
    }
    let squash = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    diff.hunks.iter().all(|hunk| {
        let mut removed: Vec<String> = Vec::new();
        let mut added: Vec<String> = Vec::new();
        for line in &hunk.lines {
            match line.kind {
                LineKind::Removed => removed.push(squash(&line.content)),
                LineKind::Added => added.push(squash(&line.content)),
                LineKind::Context => {}
            }
        }
        removed.retain(|l| !l.is_empty());
        added.retain(|l| !l.is_empty());
        removed.join("") == added.join("")
    })
}
