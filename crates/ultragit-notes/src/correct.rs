//! `ultragit flag` and `ultragit correct`: a person's correction of an
//! annotation, appended to the commit's own note (spec 003 Feature 11).
//!
//! **Where.** A correction is first recorded *beside* the note it corrects:
//! one line of the commit's pending record under
//! [`ultragit_schema::pending::CORRECTIONS_REF`], so recording one costs what
//! the correction and the record weigh, never the note (a 3 MB note is not
//! rewritten for each of a run of corrections). Readers join the record to
//! the note. [`fold_pending`] moves every pending correction into its note's
//! own `corrections` array ([`ultragit_schema::correction`]), many in one
//! rewrite: `ultragit sync` does it before it merges, so corrections travel
//! with the note through the remote, `export` includes pending ones, the
//! post-rewrite hook folds before it carries notes to the new commits, and
//! `doctor --fix` folds on request. The JSON-aware merge keeps the union of
//! both sides' corrections.
//!
//! **Append-only.** Folding extends the note's text, never re-serialises it:
//! every byte of the annotation as written stays (fields this version does
//! not know included), and the result is checked to read back as the same
//! annotation plus the new corrections
//! ([`ultragit_schema::correction::append_all_to_note`]). Nothing is ever
//! removed; a wrong correction is answered by another one.
//!
//! **Bounded.** A note takes at most [`MAX_CORRECTIONS`] corrections (in the
//! note and pending together) and its pending record at most
//! [`MAX_PENDING_BYTES`]; past either the error says to re-annotate. A fold
//! that would take the note past [`gitctx::MAX_NOTE_BYTES`] leaves those
//! corrections pending (read still sees them) and says so.
//!
//! **Checked first.** Parse → validate everything → write: the commit must
//! have a readable note; the target must name regions in it (else the error
//! lists the regions there are); the correction must make sense
//! ([`Correction::problems`]: a non-empty reason, `set` for the text fields,
//! `add`/`remove` for the lists, texts within
//! [`ultragit_schema::correction::MAX_CORRECTION_TEXT`]) and must change
//! something (adding a constraint that is there, or removing one that is
//! not, is an error that lists what is there); the caps must hold.
//!
//! **Concurrency.** Every write is a notes ref's compare-and-swap
//! ([`gitctx::Notes::write_with`]): on a lost race the checks run again on
//! the record as it then is, so a correction never overwrites another one
//! written meanwhile; a fold writes the note, then clears only the lines it
//! folded, so corrections appended in between stay pending.
//!
//! **Who.** The author is named as git names a commit's author
//! ([`git_identity`]): `GIT_AUTHOR_NAME`/`GIT_AUTHOR_EMAIL` from the caller's
//! environment, else `user.name`/`user.email` from git's config — trusted
//! sources (the environment, the user's own config and the repository's
//! `.git/config`), never the work tree.

use gitctx::{ObjectId, Repo};
use serde::Serialize;
use std::sync::{Arc, Mutex};

use ultragit_schema::correction::{AppendError, append_all_to_note, apply};
use ultragit_schema::pending;
use ultragit_schema::{
    Annotation, Correction, CorrectionField, CorrectionKind, CorrectionTarget, RegionAnnotation,
};

use crate::NOTES_REF;

/// The most corrections one note may have (in the note and pending).
pub const MAX_CORRECTIONS: usize = 1_000;

/// The largest pending record of one note (its corrections not yet folded).
pub const MAX_PENDING_BYTES: u64 = 1024 * 1024;

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
    /// The note already has as many corrections as one note may.
    #[error(
        "the annotation of commit {commit} already has {count} corrections, the most one note may have ({limit}); re-annotate the commit (`ultragit annotate --commit {commit} --force`) instead of correcting it further"
    )]
    TooMany {
        commit: String,
        count: usize,
        limit: usize,
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

/// Checks `correction` and appends it to the pending record of `rev`'s
/// note, compare-and-swap (see the module docs).
fn append(repo: &Repo, rev: &str, correction: Correction) -> Result<Stored, CorrectError> {
    let problems = correction.problems();
    if !problems.is_empty() {
        return Err(CorrectError::Invalid { problems });
    }
    let commit = repo.resolve_commit(rev)?;
    let annotation = parsed_note(repo, commit)?;
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
    let regions: Vec<String> = covered.iter().map(|r| name(r)).collect();
    let line = pending::record_line(&correction);
    let record = repo.notes(pending::CORRECTIONS_REF)?;
    let mut outcome: Result<(), CorrectError> = Ok(());
    record.write_with(commit, |current| {
        let current = current.unwrap_or("");
        let checked = check_pending(commit, &annotation, &covered, current, &line, &correction);
        match checked {
            Ok(()) => {
                outcome = Ok(());
                Some(format!("{current}{line}"))
            }
            Err(err) => {
                outcome = Err(err);
                None
            }
        }
    })?;
    outcome?;
    Ok(Stored {
        commit: commit.to_hex(),
        correction,
        regions,
    })
}

/// The checks of one more correction against the note and its pending
/// record `current`: the caps, and that it changes something.
fn check_pending(
    commit: ObjectId,
    annotation: &Annotation,
    covered: &[&RegionAnnotation],
    current: &str,
    line: &str,
    correction: &Correction,
) -> Result<(), CorrectError> {
    let mut corrections = annotation.corrections.clone();
    corrections.extend(parsed_record(current));
    // Counted as recorded: a correction both folded and still pending (a
    // fold cut short) counts twice, which only ever errs towards the cap.
    if corrections.len() >= MAX_CORRECTIONS {
        return Err(CorrectError::TooMany {
            commit: commit.short(),
            count: corrections.len(),
            limit: MAX_CORRECTIONS,
        });
    }
    let bytes = (current.len() + line.len()) as u64;
    if bytes > MAX_PENDING_BYTES {
        return Err(CorrectError::TooLarge {
            commit: commit.short(),
            bytes,
            limit: MAX_PENDING_BYTES,
        });
    }
    if !correction.is_flag() {
        check_changes(&corrections, covered, correction)?;
    }
    Ok(())
}

/// The corrections of a pending record's text. The last record parsed is
/// kept in memory: a record that only grew since (the next correction of the
/// same note) has only its new lines parsed, so a run of corrections costs
/// each its own line.
fn parsed_record(text: &str) -> Vec<Correction> {
    static LAST: Mutex<Option<(String, Vec<Correction>)>> = Mutex::new(None);
    let Ok(mut last) = LAST.lock() else {
        return pending::parse_record(text);
    };
    let parsed = match last.take() {
        Some((known, mut parsed)) if text.starts_with(known.as_str()) => {
            parsed.extend(pending::parse_record(&text[known.len()..]));
            parsed
        }
        _ => pending::parse_record(text),
    };
    *last = Some((text.to_owned(), parsed.clone()));
    parsed
}

/// The note of `commit`, parsed; the last one parsed is kept in memory by
/// its blob id (a long-lived process — the MCP server — correcting one
/// commit many times reads and parses its note once).
fn parsed_note(repo: &Repo, commit: ObjectId) -> Result<Arc<Annotation>, CorrectError> {
    static LAST: Mutex<Option<(ObjectId, Arc<Annotation>)>> = Mutex::new(None);
    let notes = repo.notes(NOTES_REF)?;
    let blob = notes.blob_of(commit)?.ok_or_else(|| no_note(commit))?;
    if let Ok(last) = LAST.lock()
        && let Some((id, note)) = last.as_ref()
        && *id == blob
    {
        return Ok(Arc::clone(note));
    }
    let text = match notes.stored_text(blob)? {
        Ok(text) => text,
        Err(bytes) => {
            return Err(CorrectError::TooLarge {
                commit: commit.short(),
                bytes,
                limit: gitctx::MAX_NOTE_BYTES,
            });
        }
    };
    let annotation = Annotation::from_json(&text).map_err(|err| CorrectError::Unreadable {
        commit: commit.short(),
        reason: err.reason().to_owned(),
    })?;
    let annotation = Arc::new(annotation);
    if let Ok(mut last) = LAST.lock() {
        *last = Some((blob, Arc::clone(&annotation)));
    }
    Ok(annotation)
}

fn no_note(commit: ObjectId) -> CorrectError {
    CorrectError::NoNote {
        commit: commit.short(),
    }
}

/// What [`fold_pending`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Folded {
    /// Notes that took their pending corrections.
    pub notes: usize,
    /// Corrections moved into notes.
    pub corrections: usize,
    /// Commits whose pending corrections stay pending, and why (the note is
    /// gone or unreadable, or would grow past the size limit).
    pub kept: Vec<(ObjectId, String)>,
}

/// Folds every pending correction into its commit's note (one rewrite per
/// note, however many corrections), then clears what was folded from the
/// record; both compare-and-swap. A crash between the two leaves corrections
/// in both places, which readers join as one. Run by `sync` before it
/// merges, by `doctor --fix`, and before a rewrite carries notes.
pub fn fold_pending(repo: &Repo) -> Result<Folded, CorrectError> {
    let record = repo.notes(pending::CORRECTIONS_REF)?;
    let mut folded = Folded::default();
    if record.tip()?.is_none() {
        return Ok(folded);
    }
    let notes = repo.notes(NOTES_REF)?;
    for entry in record.list()? {
        let commit = entry.target;
        let Some(text) = record.read(commit).ok().flatten() else {
            continue;
        };
        let pending_here = pending::parse_record(&text);
        let mut moved = 0;
        let mut why: Option<String> = None;
        notes.write_with(commit, |current| {
            moved = 0;
            why = None;
            let Some(current) = current else {
                why = Some("the commit has no note any more".to_owned());
                return None;
            };
            let annotation = match Annotation::from_json(current) {
                Ok(a) => a,
                Err(err) => {
                    why = Some(format!("its note is not readable ({})", err.reason()));
                    return None;
                }
            };
            let new: Vec<Correction> = pending_here
                .iter()
                .filter(|c| !annotation.corrections.contains(c))
                .cloned()
                .collect();
            if new.is_empty() {
                return None;
            }
            match append_all_to_note(current, &new) {
                Ok(text) if text.len() as u64 <= gitctx::MAX_NOTE_BYTES => {
                    moved = new.len();
                    Some(text)
                }
                Ok(text) => {
                    why = Some(format!(
                        "the note would be {} bytes, over the limit of {}",
                        text.len(),
                        gitctx::MAX_NOTE_BYTES
                    ));
                    None
                }
                Err(err) => {
                    why = Some(err.to_string());
                    None
                }
            }
        })?;
        if let Some(why) = why {
            folded.kept.push((commit, why));
            continue;
        }
        if moved > 0 {
            folded.notes += 1;
            folded.corrections += moved;
        }
        // Clear what is now in the note; corrections appended meanwhile stay.
        record.write_or_remove_with(commit, |current| {
            let current = current?;
            let rest: String = current
                .lines()
                .filter(|line| {
                    serde_json::from_str::<Correction>(line)
                        .map_or(true, |c| !pending_here.contains(&c))
                })
                .filter(|line| !line.trim().is_empty())
                .map(|line| format!("{line}\n"))
                .collect();
            Some(rest)
        })?;
    }
    Ok(folded)
}

/// A change must take effect on the region as it reads today (its earlier
/// corrections applied): adding what is there, or removing what is not, is
/// refused with what is there.
fn check_changes(
    corrections: &[Correction],
    covered: &[&RegionAnnotation],
    correction: &Correction,
) -> Result<(), CorrectError> {
    for region in covered {
        let (today, _) = apply(region, corrections);
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
