//! `ultragit-annotate`: the writing agent of ultragit (spec 000).
//!
//! Given a commit, it gathers the context ([`gather()`]), lets an LLM agent inspect
//! the diff, files, outlines and earlier annotations through read-only tools and
//! emit one annotation per meaningful unit ([`tools`], [`run`]), assembles and
//! validates the `ultragit/v1` document, and stores it as the commit's note under
//! `refs/notes/ultragit` — compare-and-swap, so annotations finishing at the same
//! time never lose each other. Around it: author context ([`author`]), set-up
//! ([`setup`]), display ([`show`]), configuration (`config`), and the team
//! operations on the notes: [`sync`] with a git remote (fetch into a tracking
//! ref, JSON-aware merge commit, push without force) and [`transfer`]
//! (`export`/`import` as JSON Lines).
//!
//! - **Dependencies:** `ultragit-schema`, `gitctx`, `outline`, `llm`, `agent`,
//!   `safe-io` (`.git/ultragit/` and the hook written through directory handles),
//!   `layered-config` (the configuration table, resolved with its sources).
//! - **Invariant:** the team config may tune limits, never choose the provider,
//!   model, endpoint or key (`config`).
//! - **Invariant:** trivial commits (no changes, lockfiles only, whitespace only,
//!   binary only) never reach the model.
//! - **Invariant:** the model cannot store anything invalid: `emit_annotation`
//!   validates each region before collecting it, and the assembled document is
//!   validated again (invalid regions are dropped with a warning, the rest kept).
//! - No printing, no environment: the binary builds the provider (it reads the key
//!   from the environment variable the configuration names) and prints.

pub mod author;
mod config;
mod error;
pub mod gather;
pub mod prompt;
pub mod run;
pub mod setup;
pub mod show;
pub mod sync;
pub mod tools;
pub mod transfer;

use std::io::Write as _;
use std::path::Path;

use agent::TraceSink;
use gitctx::Repo;
use llm::LlmProvider;

pub use author::AuthorContext;
pub use config::{AnnotateConfig, ProviderFlags, ProviderSettings, ProviderSources, Settings};
pub use error::{AgentError, AnnotateError};
pub use gather::{AnnotationContext, CommitInfo, ExistingAnnotation, Trivial, gather, triviality};
pub use run::{Annotated, annotate_commit};

/// The notes ref annotations live under.
pub const NOTES_REF: &str = "refs/notes/ultragit";

/// What `annotate` did.
#[derive(Debug, Clone, PartialEq)]
pub enum Report {
    /// A note was written.
    Annotated {
        commit: String,
        regions: usize,
        cross_cutting: usize,
        context_level: String,
        warnings: Vec<String>,
        partial: bool,
    },
    /// The commit was trivial; the model was not called.
    Skipped { commit: String, reason: Trivial },
}

/// Annotates `rev` in the repository at `repo_path` and stores the note.
///
/// The repository is opened twice, around the model calls, so the future holds no
/// libgit2 handle across them.
pub async fn annotate(
    repo_path: &Path,
    rev: &str,
    author: Option<AuthorContext>,
    provider: &dyn LlmProvider,
    config: &AnnotateConfig,
    trace: &mut dyn TraceSink,
) -> Result<Report, AnnotateError> {
    let context = {
        let repo = Repo::discover(repo_path)?;
        gather(&repo, rev, author, config)?
    };
    if let Some(reason) = triviality(&context) {
        return Ok(Report::Skipped {
            commit: context.commit.sha,
            reason,
        });
    }
    let annotated = annotate_commit(&context, provider, config, trace).await?;
    let repo = Repo::discover(repo_path)?;
    store(&repo, &annotated.annotation)?;
    Ok(Report::Annotated {
        commit: context.commit.sha.clone(),
        regions: annotated.annotation.regions.len(),
        cross_cutting: annotated.annotation.cross_cutting.len(),
        context_level: annotated.annotation.context_level.as_str().to_owned(),
        warnings: annotated.warnings,
        partial: annotated.partial,
    })
}

/// Writes `annotation` as the note of its commit (compare-and-swap on the ref).
pub fn store(repo: &Repo, annotation: &ultragit_schema::Annotation) -> Result<(), AnnotateError> {
    let commit = annotation.commit.parse().map_err(|_| {
        AnnotateError::Invalid(format!("'{}' is not a commit id", annotation.commit))
    })?;
    repo.notes(NOTES_REF)?
        .write(commit, &annotation.to_json())?;
    Ok(())
}

/// Appends `{time} {commit} {reason}` to `.git/ultragit/failed.log`.
pub fn record_failure(repo: &Repo, commit: &str, reason: &str) -> Result<(), AnnotateError> {
    let dir = author::state(&repo.common_dir())?;
    let line = format!(
        "{} {commit} {}\n",
        chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        reason.replace('\n', " ")
    );
    let mut file = dir.append("failed.log")?;
    file.write_all(line.as_bytes())
        .map_err(|e| AnnotateError::io(&dir.path().join("failed.log"), e))
}
