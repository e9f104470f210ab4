//! Author-provided context: what the person (or agent) who made the commit says
//! about it. A task, reasoning, dependencies or tags make the annotation
//! `enhanced` ([`AuthorContext::has_context`]); squash sources alone do not.
//!
//! `ultragit context set` writes it to `.git/ultragit/pending-context.json`; the next
//! annotation consumes it and it is cleared. The binary also reads the `ULTRAGIT_*`
//! environment variables into the same shape.
//!
//! Everything under `.git/ultragit/` is reached through [`state`], a directory
//! handle below which no symbolic link is followed; context files are read as
//! regular files of at most `CONTEXT_LIMIT` bytes.

use std::fs;
use std::path::{Path, PathBuf};

use safe_io::Dir;
use serde::{Deserialize, Serialize};

use crate::error::NotesError;

/// The author's context (spec 000 `AuthorContext`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct AuthorContext {
    pub task: Option<String>,
    pub reasoning: Option<String>,
    pub dependencies: Option<String>,
    pub tags: Option<Vec<String>>,
    pub squash_sources: Option<Vec<String>>,
}

impl AuthorContext {
    /// True when it says nothing at all.
    pub fn is_empty(&self) -> bool {
        let blank = |s: &Option<String>| s.as_deref().is_none_or(|s| s.trim().is_empty());
        blank(&self.task)
            && blank(&self.reasoning)
            && blank(&self.dependencies)
            && self.tags.as_ref().is_none_or(Vec::is_empty)
            && self.squash_sources.as_ref().is_none_or(Vec::is_empty)
    }

    /// True when it says something about the change itself: a task, reasoning,
    /// dependencies or tags. Only then is an annotation `enhanced` and does the
    /// prompt speak of author context; squash sources alone are lineage, not
    /// context.
    pub fn has_context(&self) -> bool {
        let given = |s: &Option<String>| s.as_deref().is_some_and(|s| !s.trim().is_empty());
        given(&self.task)
            || given(&self.reasoning)
            || given(&self.dependencies)
            || self
                .tags
                .as_ref()
                .is_some_and(|tags| tags.iter().any(|t| !t.trim().is_empty()))
    }

    /// The same context as a person or agent gave it, tidied: blank text fields
    /// count as not given, tags are trimmed, blank ones dropped and repeats
    /// removed (first occurrence kept). A given tag list stays given even when
    /// it ends up empty (`--tags ""` clears the tags).
    pub fn cleaned(self) -> AuthorContext {
        let text = |s: Option<String>| s.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty());
        AuthorContext {
            task: text(self.task),
            reasoning: text(self.reasoning),
            dependencies: text(self.dependencies),
            tags: self.tags.map(|tags| {
                let mut out: Vec<String> = Vec::new();
                for tag in tags.iter().map(|t| t.trim()).filter(|t| !t.is_empty()) {
                    if !out.iter().any(|t| t == tag) {
                        out.push(tag.to_owned());
                    }
                }
                out
            }),
            squash_sources: self.squash_sources,
        }
    }

    /// `other`'s fields where it has them, ours elsewhere.
    pub fn merged_with(mut self, other: AuthorContext) -> AuthorContext {
        if other.task.is_some() {
            self.task = other.task;
        }
        if other.reasoning.is_some() {
            self.reasoning = other.reasoning;
        }
        if other.dependencies.is_some() {
            self.dependencies = other.dependencies;
        }
        if other.tags.is_some() {
            self.tags = other.tags;
        }
        if other.squash_sources.is_some() {
            self.squash_sources = other.squash_sources;
        }
        self
    }
}

/// The name of `.git/ultragit/` inside the common git directory.
pub(crate) const STATE_DIR: &str = "ultragit";

/// The largest context file read.
pub(crate) const CONTEXT_LIMIT: u64 = 1024 * 1024;

const PENDING: &str = "pending-context.json";

/// `.git/ultragit/` of the repository whose common git directory (shared by
/// its worktrees) is `common_dir`.
pub fn state_dir(common_dir: &Path) -> PathBuf {
    common_dir.join(STATE_DIR)
}

/// `.git/ultragit/`, created if needed, as a handle below which no link is
/// followed (the git directory itself is the user's own path).
pub fn state(common_dir: &Path) -> Result<Dir, NotesError> {
    Ok(Dir::open(common_dir)?.create_dir_all(STATE_DIR)?)
}

/// Where the pending context lives.
pub fn pending_path(common_dir: &Path) -> PathBuf {
    state_dir(common_dir).join(PENDING)
}

/// Writes the pending context (replacing any).
pub fn write_pending(common_dir: &Path, context: &AuthorContext) -> Result<PathBuf, NotesError> {
    let text = serde_json::to_string_pretty(context).expect("the context serializes");
    state(common_dir)?.write(PENDING, text.as_bytes())?;
    Ok(pending_path(common_dir))
}

/// `ultragit context set` (and the MCP tool `ultragit_context_set`): lays
/// `given`, [cleaned](AuthorContext::cleaned), over the pending context and
/// writes the result. Fields not given keep their pending value. Returns the
/// file written and the context now pending.
pub fn set_pending(
    common_dir: &Path,
    given: AuthorContext,
) -> Result<(PathBuf, AuthorContext), NotesError> {
    let current = read_context(&pending_path(common_dir))?.unwrap_or_default();
    let context = current.merged_with(given.cleaned());
    let path = write_pending(common_dir, &context)?;
    Ok((path, context))
}

/// Reads a context file (a regular file of at most `CONTEXT_LIMIT` bytes);
/// `None` when it does not exist.
pub fn read_context(path: &Path) -> Result<Option<AuthorContext>, NotesError> {
    let Some(bytes) = safe_io::fs::read_regular_optional(path, CONTEXT_LIMIT)? else {
        return Ok(None);
    };
    serde_json::from_slice(&bytes).map(Some).map_err(|e| {
        NotesError::Invalid(format!(
            "{} is not a valid context file ({e}); fix it or run `ultragit context clear`",
            path.display()
        ))
    })
}

/// Moves the pending context aside for the annotation of `commit`, so a context
/// set for the next commit meanwhile is not taken by this one. Returns the claimed
/// file, `None` when nothing was pending.
pub fn claim_pending(common_dir: &Path, commit: &str) -> Result<Option<PathBuf>, NotesError> {
    let state = state(common_dir)?;
    if state.kind(PENDING)?.is_none() {
        return Ok(None);
    }
    let claimed = format!("context-{commit}.json");
    match state.rename(PENDING, &claimed) {
        Ok(()) => Ok(Some(state_dir(common_dir).join(claimed))),
        Err(err) if err.is_not_found() => Ok(None),
        Err(err) => Err(err.into()),
    }
}

/// Where [`claim_pending`] puts the context it claims for `commit`.
pub fn claimed_path(common_dir: &Path, commit: &str) -> PathBuf {
    state_dir(common_dir).join(format!("context-{commit}.json"))
}

/// Removes a context file (after use).
pub fn discard(path: &Path) -> Result<(), NotesError> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(NotesError::io(path, err)),
    }
}
