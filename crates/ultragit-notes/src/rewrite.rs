//! Rewrites never lose a note: what the `post-rewrite` hook does after
//! `git commit --amend` and `git rebase` (`ultragit rewritten amend|rebase`).
//!
//! Git gives the hook one `<old> <new> [extra]` line per rewritten commit on
//! stdin ([`parse_input`], bounded; any bad line rejects the whole input and
//! nothing is written). The pairs are grouped by new commit ([`Rewrite`]) and
//! each group handled by [`apply_one`]:
//!
//! | rewrite | what is written on the new commit |
//! |---|---|
//! | one old → one new, same change (reword, message-only amend, a clean pick) | the old note, `commit` set to the new id, lines re-resolved; an amend gets `provenance.operation = "amend"`, `derived_from = [old]`; a rebase keeps the provenance as it was (it still says how the annotation was written) |
//! | amend that changes code | the old note carried over now (regions re-resolved, task, context level and author constraints kept; `amend`, `derived_from = [old]`); the caller then annotates the delta old→new in the background ([`Applied::delta_from`], [`crate::AnnotateOptions::base`]) and merges it in |
//! | rebase pick whose code changed (conflict resolution) | like an amend, without a model call; `synthesis_notes` says the code changed |
//! | several old → one new (squash, fixup) | [`synthesize`] |
//!
//! An old commit without a note gives nothing to carry; after an amend the
//! caller annotates the new commit as the `post-commit` hook would have
//! ([`Applied::annotate_fresh`]). Every note written is validated
//! (`strip_invalid`), is at most [`gitctx::MAX_NOTE_BYTES`] and parses with
//! `Annotation::from_json`.
//!
//! **Whatever `notes.rewriteMode` is.** Git copies the old notes itself before
//! the hook runs, combined by the user's `notes.rewriteMode` (one mode for
//! every notes ref, so `init` leaves it alone): a squash under the default
//! `concatenate` leaves two JSON documents back to back, `cat_sort_uniq` their
//! sorted lines, `overwrite` the last source's note, `ignore` the first's. The
//! note the hook writes replaces all of that; only a note written *for* the
//! new commit (its `commit` field is the new id), whole or found among what git
//! concatenated, is kept and the carried annotation merged into it
//! ([`ultragit_schema::merge`]). When no source note parses, the hook writes
//! nothing and what git left stays ([`Action::Unreadable`], [`Action::NoNote`]).
//! The table of modes and the rule are in the `existing` submodule.

mod existing;
mod lines;
mod synthesis;

use gitctx::{DiffOptions, LineKind, ObjectId, Repo};
use ultragit_schema::{
    Annotation, NoteParseError, ProvenanceOperation, ValidationContext, merge::merge,
};

use crate::error::NotesError;
use existing::{Existing, written_for};
pub(crate) use lines::carry_regions;

pub use synthesis::{Synthesis, synthesize};

/// The largest post-rewrite input read (a rebase of ~200,000 commits).
pub const INPUT_LIMIT: u64 = 16 * 1024 * 1024;

/// The command git names as the hook's argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RewriteKind {
    /// `git commit --amend`.
    Amend,
    /// `git rebase` (any kind, `-i` included).
    Rebase,
}

impl RewriteKind {
    /// `amend` or `rebase`.
    pub fn parse(text: &str) -> Option<RewriteKind> {
        match text {
            "amend" => Some(RewriteKind::Amend),
            "rebase" => Some(RewriteKind::Rebase),
            _ => None,
        }
    }
}

/// One new commit and the commits it replaced, in git's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewrite {
    pub new: ObjectId,
    pub olds: Vec<ObjectId>,
}

/// Parses git's post-rewrite input into rewrites grouped by new commit, in the
/// order each new commit first appears. Empty lines are ignored; anything else
/// that is not `<old> <new> [extra]` with full ids is an error naming the line.
pub fn parse_input(input: &[u8]) -> Result<Vec<Rewrite>, NotesError> {
    let text = std::str::from_utf8(input)
        .map_err(|_| NotesError::Invalid("the post-rewrite input is not UTF-8 text".to_owned()))?;
    let mut rewrites: Vec<Rewrite> = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let mut fields = line.split_whitespace();
        let ids = (fields.next(), fields.next());
        let parse = |id: Option<&str>| {
            id.filter(|id| id.len() == 40)
                .and_then(|id| id.parse::<ObjectId>().ok())
        };
        let (Some(old), Some(new)) = (parse(ids.0), parse(ids.1)) else {
            let shown: String = line.chars().take(100).collect();
            return Err(NotesError::Invalid(format!(
                "line {} of the post-rewrite input is not `<old id> <new id>`: '{}'; \
                 nothing was written",
                index + 1,
                safe_io::term::sanitize_line(&shown)
            )));
        };
        match rewrites.iter_mut().find(|r| r.new == new) {
            Some(rewrite) if !rewrite.olds.contains(&old) => rewrite.olds.push(old),
            Some(_) => {}
            None => rewrites.push(Rewrite {
                new,
                olds: vec![old],
            }),
        }
    }
    Ok(rewrites)
}

/// What [`apply_one`] did for one new commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Same change: the note was copied (lines re-resolved).
    Copied,
    /// An amend that changed code: the original's note was carried over; the
    /// delta still needs annotating ([`Applied::delta_from`]).
    Amended,
    /// A rebased commit whose code changed: the note was carried over without a
    /// model call.
    Carried,
    /// Several commits became one: a synthesized note was written.
    Squashed,
    /// No old commit had an annotation: nothing was written.
    NoNote,
    /// The old note does not parse: nothing was written, and what git copied
    /// to the new commit stays.
    Unreadable(String),
}

/// What happened to one rewritten commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    pub kind: RewriteKind,
    pub new: ObjectId,
    pub olds: Vec<ObjectId>,
    pub action: Action,
    /// Regions dropped because their unit no longer exists.
    pub dropped: Vec<String>,
    /// Validation problems, unreadable source notes.
    pub warnings: Vec<String>,
}

impl Applied {
    /// The commit whose changes up to [`Applied::new`] still need annotating
    /// (an amend that changed code).
    pub fn delta_from(&self) -> Option<ObjectId> {
        (self.action == Action::Amended).then(|| self.olds[0])
    }

    /// Whether the new commit should be annotated from scratch, as the
    /// `post-commit` hook would have done (an amend of an unannotated commit).
    pub fn annotate_fresh(&self) -> bool {
        self.kind == RewriteKind::Amend && self.action == Action::NoNote
    }
}

/// The annotation of `commit`: `Ok(None)` without a note, `Err` with the
/// reason when it cannot be read as one.
fn read_note(repo: &Repo, commit: ObjectId) -> Result<Option<Annotation>, String> {
    let notes = repo.notes(crate::NOTES_REF).map_err(|e| e.to_string())?;
    match notes.read(commit) {
        Ok(None) => Ok(None),
        Ok(Some(text)) => Annotation::from_json(&text)
            .map(Some)
            .map_err(|e: NoteParseError| format!("the note of {} {e}", commit.short())),
        Err(err) => Err(format!("the note of {}: {err}", commit.short())),
    }
}

/// Writes the note of one rewritten commit (see the module docs).
pub fn apply_one(repo: &Repo, kind: RewriteKind, rewrite: &Rewrite) -> Result<Applied, NotesError> {
    let mut applied = Applied {
        kind,
        new: rewrite.new,
        olds: rewrite.olds.clone(),
        action: Action::NoNote,
        dropped: Vec::new(),
        warnings: Vec::new(),
    };
    if let [old] = rewrite.olds.as_slice() {
        let note = match read_note(repo, *old) {
            Ok(Some(note)) => note,
            Ok(None) => return Ok(applied),
            Err(why) => {
                applied.action = Action::Unreadable(why);
                return Ok(applied);
            }
        };
        let same = same_change(repo, *old, rewrite.new)?;
        applied.action = match (same, kind) {
            (true, _) => Action::Copied,
            (false, RewriteKind::Amend) => Action::Amended,
            (false, RewriteKind::Rebase) => Action::Carried,
        };
        let (annotation, dropped) = carry(repo, *old, rewrite.new, note, kind, &applied.action)?;
        applied.dropped = dropped;
        store(repo, annotation, &mut applied.warnings)?;
        return Ok(applied);
    }
    let mut sources = Vec::new();
    for old in &rewrite.olds {
        let note = read_note(repo, *old).unwrap_or_else(|why| {
            applied.warnings.push(format!("{why}; it is left out"));
            None
        });
        sources.push((*old, note));
    }
    let synthesis = synthesize(repo, rewrite.new, &sources)?;
    applied.dropped = synthesis.dropped;
    applied.warnings.extend(synthesis.warnings);
    if let Some(annotation) = synthesis.annotation {
        applied.action = Action::Squashed;
        store(repo, annotation, &mut applied.warnings)?;
    }
    Ok(applied)
}

/// The note of `old` carried to `new` (lines re-resolved) with the
/// provenance `action` calls for, and the regions dropped.
fn carry(
    repo: &Repo,
    old: ObjectId,
    new: ObjectId,
    note: Annotation,
    kind: RewriteKind,
    action: &Action,
) -> Result<(Annotation, Vec<String>), NotesError> {
    let mut annotation = note;
    let (regions, dropped) = carry_regions(repo, old, new, &annotation.regions)?;
    annotation.regions = regions;
    annotation.commit = new.to_hex();
    let how = match (action, kind) {
        (Action::Copied, RewriteKind::Rebase) => None,
        (Action::Copied, RewriteKind::Amend) => Some(format!(
            "Message-only amend of {}: the note was copied.",
            old.short()
        )),
        (Action::Amended, _) => Some(format!(
            "Amended from {}: the original's regions are kept with their lines re-resolved; \
             the amend's own changes are annotated separately and merged in.",
            old.short()
        )),
        _ => Some(format!(
            "The code changed while {} was rebased (conflict resolution): the regions were \
             carried over with their lines re-resolved, not annotated again.",
            old.short()
        )),
    };
    let mut notes: Vec<String> = how.into_iter().collect();
    if !dropped.is_empty() {
        notes.push(format!(
            "Dropped (their unit no longer exists): {}.",
            dropped.join("; ")
        ));
    }
    if kind == RewriteKind::Amend || *action != Action::Copied {
        annotation.timestamp = now();
        annotation.provenance.operation = ProvenanceOperation::Amend;
        annotation.provenance.derived_from = vec![old.to_hex()];
        annotation.provenance.original_annotations_preserved = dropped.is_empty();
        annotation.provenance.synthesis_notes = Some(notes.join(" "));
    } else if !notes.is_empty() {
        let mut all: Vec<String> = annotation
            .provenance
            .synthesis_notes
            .take()
            .into_iter()
            .collect();
        all.extend(notes);
        annotation.provenance.synthesis_notes = Some(all.join(" "));
    }
    Ok((annotation, dropped))
}

/// Validates `annotation` and writes it as its commit's note, merged into a
/// note already written for that commit (one whose `commit` is the new id, or
/// such documents among what git concatenated); whatever else git left there —
/// a copy from an old commit, a concatenation of copies, an unreadable or
/// oversized note — is replaced (see the `existing` submodule).
fn store(
    repo: &Repo,
    mut annotation: Annotation,
    warnings: &mut Vec<String>,
) -> Result<(), NotesError> {
    let hex = annotation.commit.clone();
    let target: ObjectId = hex
        .parse()
        .map_err(|_| NotesError::Invalid(format!("'{hex}' is not a commit id")))?;
    for problem in annotation.strip_invalid(&ValidationContext {
        expected_commit: Some(&hex),
        commit_files: None,
    }) {
        warnings.push(format!("dropped an invalid carried annotation: {problem}"));
    }
    let text = annotation.to_json();
    if let Err(err) = Annotation::from_json(&text) {
        return Err(NotesError::Invalid(format!(
            "the note for {} would not read back ({err}); nothing was written",
            target.short()
        )));
    }
    let limit = gitctx::MAX_NOTE_BYTES;
    if text.len() as u64 > limit {
        return Err(NotesError::Invalid(format!(
            "the note for {} would be {} bytes, over the limit of {limit}; nothing was written",
            target.short(),
            text.len()
        )));
    }
    let notes = repo.notes(crate::NOTES_REF)?;
    let written = notes.write_with(target, |current| {
        let Some(current) = current else {
            return Some(text.clone());
        };
        match written_for(current, &hex) {
            Existing::Whole(existing) => {
                // A rerun (the hook run twice) carries what is there already:
                // only its newer timestamp would differ, and that alone is no
                // reason to write.
                let merged = merge(&existing, &annotation);
                let mut news = merged.clone();
                news.timestamp.clone_from(&existing.timestamp);
                (news != existing).then(|| merged.to_json())
            }
            Existing::Within(existing) => Some(merge(&existing, &annotation).to_json()),
            Existing::Nothing => Some(text.clone()),
        }
    });
    match written {
        Ok(_) => Ok(()),
        // Git concatenated notes past the read limit: no reader loads that
        // note, so it is nobody's annotation, and it is not read here either:
        // replaced unread. A note written for the commit between the failed
        // write and this one would be replaced too; gitctx offers no
        // compare-and-swap that skips reading the current note.
        Err(gitctx::Error::NoteTooLarge { bytes, .. }) => {
            notes.write(target, &text)?;
            warnings.push(format!(
                "replaced the note git left on {} unread: {bytes} bytes, over the limit of {limit}",
                target.short()
            ));
            Ok(())
        }
        Err(err) => Err(err.into()),
    }
}

/// Whether `new` makes the same change as `old`: the same tree, or the same
/// lines added and removed in the same files against their first parents
/// (what a clean rebase pick or a reword keeps).
///
/// Not [`gitctx::Repo::patch_ids`], on purpose: a patch-id ignores
/// whitespace, so an amend that only re-indents code (a real change in
/// Python or YAML) would count as message-only and keep no delta annotation;
/// and it costs two git processes per question where this is an in-process
/// diff. Patch-ids answer `remap`'s looser question (is this commit, on
/// another base, a copy of that one?).
fn same_change(repo: &Repo, old: ObjectId, new: ObjectId) -> Result<bool, NotesError> {
    let (old, new) = (old.to_hex(), new.to_hex());
    let quick = DiffOptions {
        hunks: false,
        detect_renames: false,
        ..DiffOptions::default()
    };
    if repo.diff_revs(&old, &new, &quick)?.files.is_empty() {
        return Ok(true);
    }
    let options = DiffOptions {
        context_lines: 0,
        ..DiffOptions::default()
    };
    let patch = |rev: &str| -> Result<Vec<FilePatch>, NotesError> {
        let diff = repo.diff_commit(rev, &options)?;
        Ok(diff.files.into_iter().map(FilePatch::of).collect())
    };
    Ok(patch(&old)? == patch(&new)?)
}

/// One file's change without its line numbers: paths, then each added (`true`)
/// or removed line.
#[derive(PartialEq)]
struct FilePatch {
    old_path: Option<String>,
    new_path: Option<String>,
    lines: Vec<(bool, String)>,
}

impl FilePatch {
    fn of(file: gitctx::FileDiff) -> FilePatch {
        let lines = file
            .hunks
            .iter()
            .flat_map(|h| h.lines.iter())
            .filter(|l| l.kind != LineKind::Context)
            .map(|l| (l.kind == LineKind::Added, l.content.clone()))
            .collect();
        FilePatch {
            old_path: file.old_path,
            new_path: file.new_path,
            lines,
        }
    }
}

/// Now, as the annotations' timestamps are written.
fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "1111111111111111111111111111111111111111";
    const B: &str = "2222222222222222222222222222222222222222";
    const X: &str = "3333333333333333333333333333333333333333";

    #[test]
    fn input_is_grouped_by_new_commit() {
        let input = format!("{A} {X}\n\n{B} {X} extra\n{A} {B}\n");
        let rewrites = parse_input(input.as_bytes()).unwrap();
        let id = |s: &str| s.parse::<ObjectId>().unwrap();
        assert_eq!(
            rewrites,
            vec![
                Rewrite {
                    new: id(X),
                    olds: vec![id(A), id(B)]
                },
                Rewrite {
                    new: id(B),
                    olds: vec![id(A)]
                },
            ]
        );
        assert_eq!(parse_input(b"").unwrap(), vec![]);
    }

    #[test]
    fn bad_input_is_rejected_whole() {
        let check = |input: &str, expected: &str| {
            let err = parse_input(input.as_bytes()).unwrap_err().to_string();
            assert!(err.contains(expected), "{err}");
            assert!(err.contains("nothing was written"), "{err}");
        };
        check(&format!("{A} {X}\n{A}\n"), "line 2 ");
        check(&format!("{A} abc\n"), "line 1 ");
        check("zz\u{1b}[31m\n", "zz\\x1b[31m");
        assert!(parse_input(b"\xff\xfe").is_err());
        assert_eq!(RewriteKind::parse("amend"), Some(RewriteKind::Amend));
        assert_eq!(RewriteKind::parse("rebase"), Some(RewriteKind::Rebase));
        assert_eq!(RewriteKind::parse("merge"), None);
    }
}
