//! `ultragit-notes`: the lifecycle of ultragit's notes, everything a note lives
//! through besides being written by the model (spec 000's set-up, rewrites and
//! team operations; spec 005's corrections).
//!
//! - Storing: [`store`] and [`store_with`] (compare-and-swap on the notes ref,
//!   deciding what happens to a note that is already there: [`Existing`]);
//!   [`record_failure`] (`.git/ultragit/failed.log`).
//! - [`author`]: the pending author context (`ultragit context set`) and the
//!   state directory `.git/ultragit/`.
//! - [`setup`]: `ultragit init` — the notes ref, the rewrite configuration,
//!   the `post-commit`, `post-rewrite`, `post-merge` and `post-checkout` hook
//!   blocks, the commit-graph.
//! - [`rewrite`]: notes carried through amend, rebase and squash (the
//!   `post-rewrite` hook); [`remap`]: notes following the change to
//!   cherry-picks and server-side rebase and squash merges by patch-id.
//! - [`sync`] with a git remote (fetch into a tracking ref, a union merge that
//!   never removes or degrades a local note, push without force) and
//!   [`transfer`] (`export`/`import` as JSON Lines, import streamed).
//! - [`correct`]: `ultragit flag` and `ultragit correct` — corrections
//!   recorded beside the note, then folded into it in one rewrite, never
//!   re-serialising it.
//! - [`show`] (display) and [`doctor`] (health checks and safe repairs; the
//!   provider check is the caller's, [`doctor::Inputs::provider`]).
//!
//! - **Dependencies:** `ultragit-schema`, `gitctx`, `outline` (carrying regions
//!   through a rewrite by their units), `safe-io` (`.git/ultragit/` and the
//!   hooks written through directory handles). Never `llm` or `agent`: the
//!   MCP server and the binaries' lifecycle commands use this crate without
//!   the writing agent.
//! - **Invariant:** a rewrite never loses a note, and a background annotation
//!   never replaces a note that appeared while it ran ([`Existing::Keep`]).
//! - **Invariant:** a note is only ever written whole, by one compare-and-swap
//!   store.
//! - **Invariant:** notes from others are untrusted data: parsed, validated,
//!   merged, never obeyed.
//! - No printing, no environment: the binaries pass what they read and print.

pub mod author;
pub mod correct;
pub mod doctor;
mod error;
pub mod remap;
pub mod rewrite;
pub mod setup;
pub mod show;
pub mod sync;
pub mod transfer;

use std::io::Write as _;

use gitctx::Repo;

pub use error::{NotesError, SyncError};

/// The notes ref annotations live under.
pub const NOTES_REF: &str = "refs/notes/ultragit";

/// What storing an annotation does with a note the commit already has.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Existing {
    /// Replace it (`ultragit annotate` run by hand).
    #[default]
    Replace,
    /// Keep it and store nothing (the background annotation of the
    /// `post-commit` hook: a note that appeared meanwhile — carried over by an
    /// amend, synced from a teammate — wins).
    Keep,
    /// Merge the new annotation into it (an amend's delta): the existing
    /// note's provenance is kept. Without a readable note written for this
    /// commit, the new annotation is stored with `amend` provenance.
    Merge,
}

/// The commits among `ids` without a note in `notes`, in their order.
pub fn unannotated(
    notes: &gitctx::Notes<'_>,
    ids: Vec<gitctx::ObjectId>,
) -> gitctx::Result<Vec<gitctx::ObjectId>> {
    let found = notes.read_many(&ids)?.found;
    let annotated: std::collections::HashSet<_> = found.into_iter().map(|(id, _)| id).collect();
    Ok(ids
        .into_iter()
        .filter(|id| !annotated.contains(id))
        .collect())
}

/// Writes `annotation` as the note of its commit (compare-and-swap on the ref).
pub fn store(repo: &Repo, annotation: &ultragit_schema::Annotation) -> Result<(), NotesError> {
    store_with(repo, annotation, Existing::Replace).map(drop)
}

/// Writes `annotation` as the note of its commit, doing with a note it already
/// has what `existing` says, decided on the note as of the compare-and-swap.
/// Returns `false` when an existing note was kept and nothing written.
pub fn store_with(
    repo: &Repo,
    annotation: &ultragit_schema::Annotation,
    existing: Existing,
) -> Result<bool, NotesError> {
    use ultragit_schema::Annotation;
    let commit = annotation
        .commit
        .parse()
        .map_err(|_| NotesError::Invalid(format!("'{}' is not a commit id", annotation.commit)))?;
    let text = annotation.to_json();
    let notes = repo.notes(NOTES_REF)?;
    if existing == Existing::Replace {
        notes.write(commit, &text)?;
        return Ok(true);
    }
    let mut kept = false;
    notes.write_with(commit, |current| {
        kept = false;
        let Some(current) = current else {
            return Some(text.clone());
        };
        match (existing, Annotation::from_json(current)) {
            (Existing::Merge, Ok(note)) => {
                let mut merged = ultragit_schema::merge::merge(&note, annotation);
                if !note.commit.eq_ignore_ascii_case(&annotation.commit) {
                    // A note git copied from the old commit (the hook did not
                    // run): kept, but named and derived as the new one.
                    merged.commit = annotation.commit.clone();
                    merged.provenance = annotation.provenance.clone();
                }
                (merged != note).then(|| merged.to_json())
            }
            // An unreadable note: the new annotation replaces it.
            (Existing::Merge, Err(_)) => Some(text.clone()),
            _ => {
                kept = true;
                None
            }
        }
    })?;
    Ok(!kept)
}

/// Appends `{time} {commit} {reason}` to `.git/ultragit/failed.log`.
pub fn record_failure(repo: &Repo, commit: &str, reason: &str) -> Result<(), NotesError> {
    let dir = author::state(&repo.common_dir())?;
    let line = format!(
        "{} {commit} {}\n",
        chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        reason.replace('\n', " ")
    );
    let mut file = dir.append("failed.log")?;
    file.write_all(line.as_bytes())
        .map_err(|e| NotesError::io(&dir.path().join("failed.log"), e))
}
