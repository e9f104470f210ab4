//! `ultragit flag` and `ultragit correct`: a person's correction of an
//! annotation, appended to the commit's own note (spec 003 Feature 11).
//!
//! **Where.** A correction is stored in the note it corrects, as one more
//! entry of the annotation's `corrections` array
//! ([`ultragit_schema::correction`]), so it travels with the note through
//! `ultragit sync`, `export`/`import`, amend and rebase, and the JSON-aware
//! merge keeps the union of both sides' corrections.
//!
//! **Append-only.** The note's text is extended, never re-serialised: every
//! byte of the annotation as written stays (fields this version does not
//! know included), and the result is checked to read back as the same
//! annotation plus the new correction
//! ([`ultragit_schema::correction::append_to_note`]). Nothing is ever
//! removed; a wrong correction is answered by another one.
//!
//! **Checked first.** Parse → validate everything → write: the commit must
//! have a readable note; the target must name regions in it (else the error
//! lists the regions there are); the correction must make sense
//! ([`Correction::problems`]: a non-empty reason, `set` for the text fields,
//! `add`/`remove` for the lists, texts within
//! [`ultragit_schema::correction::MAX_CORRECTION_TEXT`]) and must change
//! something (adding a constraint that is there, or removing one that is
//! not, is an error that lists what is there); the note must stay under
//! [`gitctx::MAX_NOTE_BYTES`].
//!
//! **Concurrency.** The write is the notes ref's compare-and-swap
//! ([`gitctx::Notes::write_with`]): on a lost race the checks run again on
//! the note as it then is, so a correction never overwrites an annotation or
//! another correction written meanwhile.
//!
//! **Who.** The author is named as git names a commit's author
//! ([`git_identity`]): `GIT_AUTHOR_NAME`/`GIT_AUTHOR_EMAIL` from the caller's
//! environment, else `user.name`/`user.email` from git's config — trusted
//! sources (the environment, the user's own config and the repository's
//! `.git/config`), never the work tree.

use gitctx::{ObjectId, Repo};
use serde::Serialize;
use ultragit_schema::correction::{AppendError, append_to_note, apply};
use ultragit_schema::{
    Annotation, Correction, CorrectionField, CorrectionKind, CorrectionTarget, RegionAnnotation,
};

use crate::NOTES_REF;

/// What a `correct` changes: a field, how, and the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The field corrected.
    pub field: CorrectionField,
    /// `Set` for a text field, `Add` or `Remove` for a list.
    pub kind: CorrectionKind,
    /// The new text, or the list entry added or removed.
    pub value: String,
}

impl Change {
    /// Replace the text `field` with `value`.
    pub fn set(field: CorrectionField, value: impl Into<String>) -> Self {
        Self::new(field, CorrectionKind::Set, value)
    }

    /// Add `value` to the list `field`.
    pub fn add(field: CorrectionField, value: impl Into<String>) -> Self {
        Self::new(field, CorrectionKind::Add, value)
    }

    /// Remove `value` from the list `field`.
    pub fn remove(field: CorrectionField, value: impl Into<String>) -> Self {
        Self::new(field, CorrectionKind::Remove, value)
    }

    fn new(field: CorrectionField, kind: CorrectionKind, value: impl Into<String>) -> Self {
        Self {
            field,
            kind,
            value: value.into(),
        }
    }
}

/// A correction written to a note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Stored {
    /// The corrected commit (full id).
    pub commit: String,
    /// The correction as stored.
    pub correction: Correction,
    /// The regions it covers, as `file:anchor`.
    pub regions: Vec<String>,
}

impl Stored {
    /// `{"commit":…,"correction":{…},"regions":[…]}`, one line.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a stored correction has string keys and no floats")
    }

    /// One line saying what was stored, e.g. `flagged src/net.rs:connect of
    /// commit 4f2a9c1 (by A <a@x>: reason)`. Not sanitized: the author and the
    /// reason are the caller's text, escape them before a terminal.
    pub fn describe(&self) -> String {
        let c = &self.correction;
        let what = match (&c.kind, &c.field, &c.value) {
            (CorrectionKind::Flag, _, _) => "flagged".to_owned(),
            (kind, Some(field), Some(value)) => {
                let verb = match kind {
                    CorrectionKind::Set => "set",
                    CorrectionKind::Add => "added to",
                    _ => "removed from",
                };
                format!("{verb} {field}: {value:?} in")
            }
            (kind, _, _) => kind.to_string(),
        };
        format!(
            "{what} {} of commit {} (by {}: {})",
            self.regions.join(", "),
            &self.commit[..self.commit.len().min(7)],
            c.author,
            c.reason
        )
    }
}

/// Why a correction was not written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CorrectError {
    #[error("{0}")]
    Git(#[from] gitctx::Error),
    /// The commit has no ultragit note.
    #[error(
        "commit {commit} has no ultragit annotation to correct (annotate it first with `ultragit annotate --commit {commit}`)"
    )]
    NoNote { commit: String },
    /// The note is not a readable annotation.
    #[error(
        "the note of commit {commit} is not a valid ultragit/v1 annotation ({reason}); it cannot be corrected"
    )]
    Unreadable { commit: String, reason: String },
    /// The target names no region of the note.
    #[error("the annotation of commit {commit} has no region {target}; its regions are: {}", .available.join(", "))]
    NoRegion {
        commit: String,
        target: String,
        available: Vec<String>,
    },
    /// The correction does not make sense.
    #[error("invalid correction: {}", .problems.join("; "))]
    Invalid { problems: Vec<String> },
    /// The correction would change nothing.
    #[error("the correction changes nothing: {target} {what}")]
    NoChange { target: String, what: String },
    /// The note would grow past the notes size limit.
    #[error(
        "the note of commit {commit} would be {bytes} bytes with this correction, over the limit of {limit}"
    )]
    TooLarge {
        commit: String,
        bytes: u64,
        limit: u64,
    },
    /// The note could not be extended (a bug: nothing was written).
    #[error(transparent)]
    Append(#[from] AppendError),
    /// No git identity to name as the author.
    #[error(
        "no git identity to record as the correction's author; set one with `git config user.name \"Your Name\"` and `git config user.email you@example.com`"
    )]
    NoIdentity,
}

/// The author name variable git itself honours over `user.name`.
pub const GIT_AUTHOR_NAME: &str = "GIT_AUTHOR_NAME";
/// The author email variable git itself honours over `user.email`.
pub const GIT_AUTHOR_EMAIL: &str = "GIT_AUTHOR_EMAIL";

/// The corrector as git would name a commit's author: `Name <email>` from
/// [`GIT_AUTHOR_NAME`] and [`GIT_AUTHOR_EMAIL`] when `env` has them (the
/// caller's environment lookup; this crate reads none), else `user.name`
/// and `user.email` from git's config; the name alone when there is no
/// email. [`CorrectError::NoIdentity`] without a name.
pub fn git_identity(
    repo: &Repo,
    env: impl Fn(&str) -> Option<String>,
) -> Result<String, CorrectError> {
    let lookup = |var: &str, key: &str| -> Result<Option<String>, CorrectError> {
        let value = match env(var) {
            Some(value) => Some(value),
            None => repo.config_get(key)?,
        };
        Ok(value.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty()))
    };
    let name = lookup(GIT_AUTHOR_NAME, "user.name")?.ok_or(CorrectError::NoIdentity)?;
    Ok(match lookup(GIT_AUTHOR_EMAIL, "user.email")? {
        Some(email) => format!("{name} <{email}>"),
        None => name,
    })
}

/// Flags `target` of the annotation of `commit` (any revision) as doubtful,
/// for `reason`. An empty target flags every region.
pub fn flag(
    repo: &Repo,
    commit: &str,
    target: CorrectionTarget,
    reason: &str,
    author: &str,
) -> Result<Stored, CorrectError> {
    let correction = Correction::flag(target, reason.trim(), author, now());
    append(repo, commit, correction)
}

/// Corrects one field of the region `target` (a file and an anchor) of the
/// annotation of `commit` (any revision), for `reason`.
pub fn correct(
    repo: &Repo,
    commit: &str,
    target: CorrectionTarget,
    change: &Change,
    reason: &str,
    author: &str,
) -> Result<Stored, CorrectError> {
    let correction = Correction {
        target,
        kind: change.kind.clone(),
        field: Some(change.field.clone()),
        value: Some(change.value.trim().to_owned()),
        reason: reason.trim().to_owned(),
        author: author.to_owned(),
        timestamp: now(),
    };
    append(repo, commit, correction)
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// Checks `correction` and appends it to the note of `rev`, compare-and-swap.
fn append(repo: &Repo, rev: &str, correction: Correction) -> Result<Stored, CorrectError> {
    let problems = correction.problems();
    if !problems.is_empty() {
        return Err(CorrectError::Invalid { problems });
    }
    let commit = repo.resolve_commit(rev)?;
    let notes = repo.notes(NOTES_REF)?;
    let mut outcome: Result<Vec<String>, CorrectError> = Err(no_note(commit));
    notes.write_with(commit, |current| {
        let checked = current
            .ok_or_else(|| no_note(commit))
            .and_then(|text| appended(commit, text, &correction));
        match checked {
            Ok((text, regions)) => {
                outcome = Ok(regions);
                Some(text)
            }
            Err(err) => {
                outcome = Err(err);
                None
            }
        }
    })?;
    Ok(Stored {
        commit: commit.to_hex(),
        correction,
        regions: outcome?,
    })
}

fn no_note(commit: ObjectId) -> CorrectError {
    CorrectError::NoNote {
        commit: commit.short(),
    }
}

/// The note `text` with `correction` appended, and the regions it covers.
fn appended(
    commit: ObjectId,
    text: &str,
    correction: &Correction,
) -> Result<(String, Vec<String>), CorrectError> {
    let annotation = Annotation::from_json(text).map_err(|err| CorrectError::Unreadable {
        commit: commit.short(),
        reason: err.reason().to_owned(),
    })?;
    let covered: Vec<&RegionAnnotation> = annotation
        .regions
        .iter()
        .filter(|r| correction.target.covers(r))
        .collect();
    if covered.is_empty() {
        return Err(CorrectError::NoRegion {
            commit: commit.short(),
            target: correction.target.describe(),
            available: annotation.regions.iter().map(name).collect(),
        });
    }
    if !correction.is_flag() {
        check_changes(&annotation, &covered, correction)?;
    }
    let text = append_to_note(text, correction)?;
    let bytes = text.len() as u64;
    if bytes > gitctx::MAX_NOTE_BYTES {
        return Err(CorrectError::TooLarge {
            commit: commit.short(),
            bytes,
            limit: gitctx::MAX_NOTE_BYTES,
        });
    }
    Ok((text, covered.into_iter().map(name).collect()))
}

/// A change must take effect on the region as it reads today (its earlier
/// corrections applied): adding what is there, or removing what is not, is
/// refused with what is there.
fn check_changes(
    annotation: &Annotation,
    covered: &[&RegionAnnotation],
    correction: &Correction,
) -> Result<(), CorrectError> {
    for region in covered {
        let (today, _) = apply(region, &annotation.corrections);
        let (_, applied) = apply(&today, std::slice::from_ref(correction));
        if applied.is_empty() {
            let value = correction.value.as_deref().unwrap_or_default();
            let field = correction.field.as_ref().map_or("", |f| f.as_str());
            let what = match correction.kind {
                CorrectionKind::Set => format!("its {field} is already {value:?}"),
                CorrectionKind::Add => format!("already has the {field} entry {value:?}"),
                _ => format!(
                    "has no {field} entry {value:?}; it has: {}",
                    list_entries(&today, correction.field.as_ref())
                ),
            };
            return Err(CorrectError::NoChange {
                target: name(region),
                what,
            });
        }
    }
    Ok(())
}

/// The entries of a list field, quoted, for messages.
fn list_entries(region: &RegionAnnotation, field: Option<&CorrectionField>) -> String {
    let entries: Vec<String> = match field {
        Some(CorrectionField::Constraints) => region
            .constraints
            .iter()
            .map(|c| format!("{:?}", c.text))
            .collect(),
        Some(CorrectionField::Tags) => region.tags.iter().map(|t| format!("{t:?}")).collect(),
        _ => Vec::new(),
    };
    if entries.is_empty() {
        "none".to_owned()
    } else {
        entries.join(", ")
    }
}

fn name(region: &RegionAnnotation) -> String {
    format!("{}:{}", region.file, region.ast_anchor.name)
}
