//! The notes checks: the notes ref exists, every note parses, and no note
//! sits on a commit no ref reaches unless a reachable note carried it over.

use std::collections::{HashMap, HashSet};

use gitctx::{MAX_NOTE_BYTES, ObjectId, Repo};
use ultragit_schema::Annotation;

use super::{Check, Doctor, Finding, Repair, listed, plural, truncate};
use crate::NOTES_REF;
use crate::error::NotesError;

/// How many notes are read per batch.
const NOTE_BATCH: usize = 256;

impl Doctor<'_> {
    pub(super) fn notes(&self) -> Result<Vec<Finding>, NotesError> {
        let notes = self.repo.notes(NOTES_REF)?;
        if notes.tip()?.is_none() {
            return Ok(vec![
                Finding {
                    check: Check::fail(
                        "notes-ref",
                        format!("{NOTES_REF} does not exist (ultragit init creates it)"),
                    )
                    .with_fix("ultragit doctor --fix (or ultragit init)"),
                    repair: Some(Repair::NotesRef),
                },
                Check::ok("malformed-notes", "no notes yet").into(),
                Check::ok("unreachable-notes", "no notes yet").into(),
            ]);
        }
        let entries = notes.list()?;
        let targets: Vec<ObjectId> = entries.iter().map(|e| e.target).collect();
        let scan = scan_notes(self.repo, &targets)?;
        let unreachable = self.repo.unreachable_from_refs(&targets)?;
        let mut findings = vec![
            Check::ok(
                "notes-ref",
                format!("{NOTES_REF}: {}", plural(entries.len(), "note", "notes")),
            )
            .into(),
            malformed_check(&scan).into(),
            unreachable_check(&scan, &unreachable).into(),
        ];
        if let Some(pending) = self.pending_corrections()? {
            findings.push(pending);
        }
        Ok(findings)
    }

    /// `pending-corrections`, only when some are pending: corrections
    /// recorded but not yet folded into their notes (the next sync folds
    /// them; `--fix` does now).
    fn pending_corrections(&self) -> Result<Option<Finding>, NotesError> {
        let record = self.repo.notes(ultragit_schema::pending::CORRECTIONS_REF)?;
        if record.tip()?.is_none() {
            return Ok(None);
        }
        let entries = record.list()?;
        if entries.is_empty() {
            return Ok(None);
        }
        Ok(Some(Finding {
            check: Check::warn(
                "pending-corrections",
                format!(
                    "{} with corrections not yet folded into the note (read sees them; a sync folds them before it shares the notes)",
                    plural(entries.len(), "commit", "commits")
                ),
            )
            .with_fix("ultragit doctor --fix (or ultragit sync)"),
            repair: Some(Repair::FoldCorrections),
        }))
    }
}

/// What parsing every note found.
#[derive(Debug, Default)]
struct NoteScan {
    /// Notes that are not `ultragit/v1` documents, with the reason.
    malformed: Vec<(ObjectId, String)>,
    /// Notes over [`MAX_NOTE_BYTES`], with their size.
    too_large: Vec<(ObjectId, u64)>,
    /// For each readable note, the commits it says it was carried over from.
    sources: HashMap<ObjectId, Vec<String>>,
}

/// Parses every note, in batches (one notes-tree read per batch).
fn scan_notes(repo: &Repo, targets: &[ObjectId]) -> Result<NoteScan, NotesError> {
    let notes = repo.notes(NOTES_REF)?;
    let mut scan = NoteScan::default();
    for batch in targets.chunks(NOTE_BATCH) {
        let read = notes.read_many(batch)?;
        scan.too_large.extend(read.too_large);
        for (target, text) in read.found {
            match Annotation::from_json(&text) {
                Ok(annotation) => {
                    let mut from = annotation.provenance.derived_from;
                    // git's own rewrite copies a note verbatim: it still names
                    // the commit it was written for.
                    if !annotation.commit.eq_ignore_ascii_case(&target.to_hex()) {
                        from.push(annotation.commit);
                    }
                    if !from.is_empty() {
                        scan.sources.insert(target, from);
                    }
                }
                Err(err) => scan.malformed.push((target, err.reason().to_owned())),
            }
        }
    }
    Ok(scan)
}

fn malformed_check(scan: &NoteScan) -> Check {
    let id = "malformed-notes";
    if scan.malformed.is_empty() && scan.too_large.is_empty() {
        return Check::ok(id, "every note is a readable ultragit/v1 annotation");
    }
    let mut parts = Vec::new();
    let mut fix_for = None;
    if let Some((first, reason)) = scan.malformed.first() {
        parts.push(format!(
            "{} `ultragit read` skips: {} (first: {})",
            plural(scan.malformed.len(), "malformed note", "malformed notes"),
            listed(scan.malformed.iter().map(|(c, _)| c)),
            truncate(reason, 160)
        ));
        fix_for = Some(*first);
    }
    if let Some((first, _)) = scan.too_large.first() {
        parts.push(format!(
            "{} over {} MiB, never loaded: {}",
            plural(scan.too_large.len(), "note", "notes"),
            MAX_NOTE_BYTES / (1024 * 1024),
            listed(scan.too_large.iter().map(|(c, _)| c))
        ));
        fix_for.get_or_insert(*first);
    }
    let first = fix_for.expect("one of the lists is not empty");
    Check::fail(id, parts.join("; ")).with_fix(format!(
        "look with `ultragit show {}`; annotate again with `ultragit annotate --commit {}` (doctor never deletes a note)",
        first.to_hex(),
        first.to_hex()
    ))
}

fn unreachable_check(scan: &NoteScan, unreachable: &[ObjectId]) -> Check {
    let id = "unreachable-notes";
    // Sources named by notes on reachable commits were carried over.
    let unreachable_set: HashSet<&ObjectId> = unreachable.iter().collect();
    let carried: HashSet<ObjectId> = scan
        .sources
        .iter()
        .filter(|(target, _)| !unreachable_set.contains(target))
        .flat_map(|(_, from)| from.iter().filter_map(|s| s.parse::<ObjectId>().ok()))
        .collect();
    let (superseded, orphaned): (Vec<ObjectId>, Vec<ObjectId>) =
        unreachable.iter().partition(|c| carried.contains(c));
    let leftover = if superseded.is_empty() {
        String::new()
    } else {
        format!(
            " ({} on rewritten commits whose annotation was carried over)",
            plural(superseded.len(), "note", "notes")
        )
    };
    if orphaned.is_empty() {
        return Check::ok(
            id,
            format!("every annotated commit is reachable from a ref{leftover}"),
        );
    }
    Check::warn(
        id,
        format!(
            "{} on commits no branch, tag or remote reaches (rebased, cherry-picked or squash-merged elsewhere?): {}{leftover}",
            plural(orphaned.len(), "note", "notes"),
            listed(orphaned.iter())
        ),
    )
    .with_fix("ultragit remap (copies them to the rewritten commits on the main branch)")
}
