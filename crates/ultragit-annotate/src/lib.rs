//! `ultragit-annotate`: the writing agent of ultragit (spec 000).
//!
//! Given a commit, it gathers the context ([`gather()`]), gives an LLM agent the
//! commit and its diff in the first message, lets it inspect files, outlines,
//! the code at the commit (`search_code`), earlier commits and annotations
//! through read-only tools, every request within the model's context window
//! (`budget`), and emit one annotation per meaningful unit, its anchor checked
//! against the file's outline ([`tools`], [`run`]), assembles and
//! validates the `ultragit/v1` document, and stores it as the commit's note under
//! `refs/notes/ultragit` — compare-and-swap, so annotations finishing at the same
//! time never lose each other (`ultragit_notes::store_with`). Around it:
//! configuration (`config`), [`backfill`] (selecting a history's unannotated
//! commits and annotating many at once) and `doctor`'s provider check
//! ([`provider_check`]). Everything else a note lives through — author
//! context, set-up and hooks, rewrites, sync, transfer, remap, corrections,
//! display, doctor — is `ultragit-notes`, which knows no model.
//!
//! - **Dependencies:** `ultragit-schema`, `ultragit-notes` (storing, author
//!   context, `failed.log`), `gitctx`, `outline`, `llm`, `agent`, `safe-io`,
//!   `layered-config` (the configuration table, resolved with its sources).
//! - **Invariant:** the team config may tune limits, never choose the provider,
//!   model, endpoint or key (`config`).
//! - **Invariant:** trivial commits (no changes, lockfiles only, whitespace only,
//!   binary only, documentation only by `ultragit.docsPaths`) never reach the
//!   model; neither do commits past `maxDiffLines` with `largeCommits = skip`
//!   (the default is `chunk`, spec 000 AC7): their note records the skip.
//! - **Invariant:** no request exceeds the configured context window
//!   (`ultragit.contextWindow`): the first message's commit description and
//!   file list, and every tool result, are cut to their share or the room left,
//!   with a note naming how to read on; a request that still would not fit is
//!   not sent (the run fails saying so).
//! - **Invariant:** a commit the model *says* holds nothing to record
//!   (`decline_annotation`) gets a minimal note saying so ([`Report::Declined`]),
//!   so backfill never retries it; an empty or text-only reply is a failure
//!   (`failed.log`, retried later), never a decline.
//! - **Invariant:** the stored summary is the text of the reply that carried the
//!   emissions, never a later turn's; a reply whose emissions are all accepted
//!   ends the run ([`run`]).
//! - **Invariant:** the model cannot store anything invalid: `emit_annotation`
//!   validates each region before collecting it, and the assembled document is
//!   validated again (invalid regions are dropped with a warning, the rest kept).
//! - **Invariant:** a rewrite never loses a note, and a background annotation
//!   never replaces a note that appeared while it ran ([`Existing::Keep`]).
//! - **Invariant:** a note is only ever written whole, by one compare-and-swap
//!   store at the end of an annotation: a run stopped or killed at any point
//!   (`backfill` included) leaves no partial note.
//! - No printing, no environment: the binary builds the provider (it reads the key
//!   from the environment variable the configuration names) and prints.

pub mod backfill;
mod budget;
mod config;
mod error;
pub mod gather;
pub mod prompt;
mod provider_check;
pub mod run;
pub mod tools;

use std::path::Path;

use agent::TraceSink;
use gitctx::Repo;
use llm::LlmProvider;

pub use config::{
    AnnotateConfig, LargeCommits, ProviderFlags, ProviderSettings, ProviderSources, Settings,
    ToolUse,
};
pub use error::{AgentError, AnnotateError};
use gather::gather_since;
pub use gather::{AnnotationContext, CommitInfo, ExistingAnnotation, Trivial, gather, triviality};
pub use provider_check::provider_check;
pub use run::{Annotated, annotate_commit};
pub use ultragit_notes::author::AuthorContext;
use ultragit_notes::store_with;
pub use ultragit_notes::{Existing, NOTES_REF};

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
    /// A minimal note was stored that records why nothing was annotated: the
    /// model found nothing semantic to record. Not a failure: backfill does
    /// not retry it.
    Declined {
        commit: String,
        reason: String,
        warnings: Vec<String>,
    },
    /// The commit has more than `maxDiffLines` changed lines (`largeCommits =
    /// skip`): no model call, and a minimal note records the skip (`reason`),
    /// so backfill does not retry it.
    TooLarge { commit: String, reason: String },
    /// The commit was trivial; the model was not called.
    Skipped { commit: String, reason: Trivial },
    /// A note appeared on the commit while the annotation ran and was kept
    /// ([`Existing::Keep`]); the new annotation was not stored.
    Kept { commit: String },
}

/// How [`annotate_with`] annotates and stores.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AnnotateOptions {
    /// Annotate the changes since this commit instead of since the first
    /// parent: the delta of an amend, `base` being the commit it replaced.
    pub base: Option<gitctx::ObjectId>,
    /// What to do with a note the commit already has.
    pub existing: Existing,
}

/// Annotates `rev` in the repository at `repo_path` and stores the note, as
/// `options` say (default: the whole commit, replacing a note it has): a delta
/// against another commit, and what to do with a note the commit already has
/// when the annotation is stored (decided compare-and-swap, on the note as it
/// is then).
///
/// The repository is opened twice, around the model calls, so the future holds no
/// libgit2 handle across them.
pub async fn annotate_with(
    repo_path: &Path,
    rev: &str,
    author: Option<AuthorContext>,
    provider: &dyn LlmProvider,
    config: &AnnotateConfig,
    trace: &mut dyn TraceSink,
    options: &AnnotateOptions,
) -> Result<Report, AnnotateError> {
    let base = options.base.map(|id| id.to_hex());
    let context = {
        let repo = Repo::discover(repo_path)?;
        gather_since(&repo, rev, base.as_deref(), author, config)?
    };
    if let Some(report) = without_model(repo_path, &context, config, options)? {
        return Ok(report);
    }
    let mut annotated = annotate_commit(&context, provider, config, trace).await?;
    if let Some(base) = &base {
        let provenance = &mut annotated.annotation.provenance;
        provenance.operation = ultragit_schema::ProvenanceOperation::Amend;
        provenance.derived_from = vec![base.clone()];
        provenance.synthesis_notes = Some(format!(
            "Annotates the changes an amend made to {}.",
            &base[..base.len().min(7)]
        ));
    }
    let repo = Repo::discover(repo_path)?;
    if let Some(reason) = annotated.declined().map(str::to_owned) {
        // An amend's delta with nothing to say leaves the note as it is.
        if options.existing != Existing::Merge
            && !store_with(&repo, &annotated.annotation, options.existing)?
        {
            return Ok(Report::Kept {
                commit: context.commit.sha,
            });
        }
        return Ok(Report::Declined {
            commit: context.commit.sha,
            reason,
            warnings: annotated.warnings,
        });
    }
    if !store_with(&repo, &annotated.annotation, options.existing)? {
        return Ok(Report::Kept {
            commit: context.commit.sha,
        });
    }
    Ok(Report::Annotated {
        commit: context.commit.sha.clone(),
        regions: annotated.annotation.regions.len(),
        cross_cutting: annotated.annotation.cross_cutting.len(),
        context_level: annotated.annotation.context_level.as_str().to_owned(),
        warnings: annotated.warnings,
        partial: annotated.partial,
    })
}

/// Annotates `rev` as [`annotate_with`] would when that needs no model: a
/// trivial commit is skipped ([`Report::Skipped`]), and a commit past
/// `maxDiffLines` with `largeCommits = skip` gets the note that records the
/// skip ([`Report::TooLarge`]). `None`: the commit needs the model. (The
/// binary asks this when no API key is set.)
pub fn annotate_without_model(
    repo_path: &Path,
    rev: &str,
    author: Option<AuthorContext>,
    config: &AnnotateConfig,
    options: &AnnotateOptions,
) -> Result<Option<Report>, AnnotateError> {
    let base = options.base.map(|id| id.to_hex());
    let context = {
        let repo = Repo::discover(repo_path)?;
        gather_since(&repo, rev, base.as_deref(), author, config)?
    };
    without_model(repo_path, &context, config, options)
}

/// [`annotate_without_model`] on a gathered context.
fn without_model(
    repo_path: &Path,
    context: &AnnotationContext,
    config: &AnnotateConfig,
    options: &AnnotateOptions,
) -> Result<Option<Report>, AnnotateError> {
    if let Some(reason) = triviality(context, config) {
        return Ok(Some(Report::Skipped {
            commit: context.commit.sha.clone(),
            reason,
        }));
    }
    let Some(skipped) = run::too_large(context, config) else {
        return Ok(None);
    };
    let commit = context.commit.sha.clone();
    // An amend's delta too large to annotate leaves the note as it is.
    if options.existing != Existing::Merge {
        let repo = Repo::discover(repo_path)?;
        if !store_with(&repo, &skipped.annotation, options.existing)? {
            return Ok(Some(Report::Kept { commit }));
        }
    }
    let reason = skipped.declined().unwrap_or_default().to_owned();
    Ok(Some(Report::TooLarge { commit, reason }))
}
