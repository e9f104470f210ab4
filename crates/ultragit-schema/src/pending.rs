//! Pending corrections: the corrections `ultragit flag`/`correct` (and the
//! MCP tools) recorded but have not yet folded into the commit's note.
//!
//! Appending a correction to a note rewrites the whole note (a few MB for a
//! large commit), so a run of corrections would cost the note's size each.
//! Instead each correction is appended to a small per-commit record under
//! [`CORRECTIONS_REF`] (a notes ref of this clone: one JSON object per line,
//! each a [`Correction`]), whose size is bounded by the correction caps, and
//! the record is folded into the note later, many corrections in one rewrite
//! (`ultragit sync` before it merges, `doctor --fix`, and before a rewrite
//! carries notes to new commits).
//!
//! **Merged on read.** Every reader of a note's corrections (`read`,
//! `history`, `summary`, `show`, `export`) joins a commit's pending
//! corrections to the note's own ([`join`]): a correction in both is seen
//! once, so a record folded into the note but not yet cleared changes
//! nothing.
//! - The record is local: a sync folds it into the note first, and the note
//!   carries the corrections to everyone else.
//! - Lines that do not parse are skipped (the record is only written by us;
//!   a damaged line loses that one correction's effect, never the note).

use crate::annotation::Annotation;
use crate::correction::Correction;

/// The notes ref that holds pending corrections (this clone's only).
pub const CORRECTIONS_REF: &str = "refs/notes/ultragit-corrections";

/// The corrections of a record's text, in order; lines that are not a
/// correction are skipped.
pub fn parse_record(text: &str) -> Vec<Correction> {
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// One record line for `correction` (with its newline).
pub fn record_line(correction: &Correction) -> String {
    let mut line = serde_json::to_string(correction)
        .expect("a correction has string keys and no floats, so it always serializes");
    line.push('\n');
    line
}

/// Adds to `annotation` the `pending` corrections it does not hold yet, in
/// order.
pub fn join(annotation: &mut Annotation, pending: &[Correction]) {
    for correction in pending {
        if !annotation.corrections.contains(correction) {
            annotation.corrections.push(correction.clone());
        }
    }
}
