//! `ultragit export` and `ultragit import`: annotations as JSON Lines, for
//! backups, for moving notes between repositories that share commits, and for
//! teams whose forge does not carry notes.
//!
//! **Format** (one JSON object per line, newest commit first by committer
//! date; commits missing from the repository come last):
//! - `{"commit":"<40 hex>","note":{…ultragit/v1…}}` for a valid annotation;
//! - `{"commit":"<40 hex>","malformed":true,"raw":"<note text>"}` for a note
//!   that is not a valid `ultragit/v1` document: exported as raw text so an
//!   export loses nothing, and skipped (with a warning) by `import`.
//!
//! Notes over [`gitctx::MAX_NOTE_BYTES`] are not exported (a warning each).
//!
//! **Import** streams: it reads at most [`IMPORT_LIMIT`] bytes, one line at a
//! time, and never holds more than one line (at most [`MAX_LINE_BYTES`]; a
//! longer one is skipped while it is read, never buffered) and one parsed
//! note: each valid note goes to the object database as a blob at once and
//! only its id is kept, so peak memory follows the largest note allowed, not
//! the file or the line. A line whose commit is not in the repository is
//! counted and skipped; an invalid line (not JSON, no commit id, an invalid or
//! malformed note, a note whose `commit` names another commit, a note over
//! [`gitctx::MAX_NOTE_BYTES`]) is skipped with a warning naming its line
//! number. Valid notes are written in one notes commit
//! ([`gitctx::Notes::write_many_stored`], compare-and-swap): a commit without
//! a note gets it, a commit with a note gets the JSON-aware merge of both
//! ([`merge_texts`], as `sync` does), so an import never removes or degrades
//! a note (a merge that would go over the size limit keeps the note there).
//! The file is untrusted input: nothing in it chooses anything but note text.

use std::collections::HashMap;
use std::io::{BufRead, Write};

use gitctx::{ObjectId, Repo, Resolution, Written};
use serde::{Deserialize, Serialize};
use ultragit_schema::Annotation;
use ultragit_schema::merge::{TextMerge, merge_texts};

use crate::error::NotesError;

/// The largest file `import` reads (256 MiB).
pub const IMPORT_LIMIT: u64 = 256 * 1024 * 1024;

/// The longest line `import` reads: a note at the size limit plus room for
/// its line's frame and JSON escapes.
pub const MAX_LINE_BYTES: usize = gitctx::MAX_NOTE_BYTES as usize + 1024 * 1024;

/// How many invalid lines are named one by one before they are only counted.
const MAX_LINE_WARNINGS: usize = 20;

/// What `export` writes.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExportOptions {
    /// Only commits whose committer date is at or after this (seconds since
    /// the epoch); commits missing from the repository are then left out.
    pub since: Option<i64>,
}

/// What `export` did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExportReport {
    /// Lines written with a valid annotation.
    pub exported: usize,
    /// Lines written as raw text (`"malformed": true`).
    pub malformed: usize,
    /// Notes not written: over the size limit.
    pub too_large: usize,
    pub warnings: Vec<String>,
}

/// What `import` did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportReport {
    /// Commits that had no note and got one.
    pub added: usize,
    /// Commits whose note was joined with (or replaced by) the imported one.
    pub merged: usize,
    /// Commits whose note already said everything the imported one did.
    pub unchanged: usize,
    /// Lines whose commit is not in this repository.
    pub unknown_commits: usize,
    /// Lines skipped as invalid.
    pub invalid: usize,
    pub warnings: Vec<String>,
}

#[derive(Serialize)]
struct ValidLine<'a> {
    commit: String,
    note: &'a Annotation,
}

#[derive(Serialize)]
struct RawLine<'a> {
    commit: String,
    malformed: bool,
    raw: &'a str,
}

#[derive(Deserialize)]
struct InLine<'a> {
    commit: String,
    /// Kept as its text: parsed once, as an annotation.
    #[serde(default, borrow)]
    note: Option<&'a serde_json::value::RawValue>,
    #[serde(default)]
    malformed: bool,
}

/// One line of the input, read with a bound.
enum Line {
    /// The line's bytes (without the newline) are in the buffer.
    Read,
    /// Longer than [`MAX_LINE_BYTES`]: read to its end and dropped.
    TooLong(u64),
    /// The input is over.
    End,
}

/// Reads the next line into `buf` (cleared first), keeping at most
/// `cap` bytes: a longer line is consumed to its end without being stored.
fn next_line(input: &mut impl BufRead, buf: &mut Vec<u8>, cap: usize) -> std::io::Result<Line> {
    buf.clear();
    let mut seen: u64 = 0;
    let mut too_long = false;
    loop {
        let chunk = match input.fill_buf() {
            Ok(chunk) => chunk,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        if chunk.is_empty() {
            return Ok(match (seen, too_long) {
                (0, _) => Line::End,
                (n, true) => Line::TooLong(n),
                _ => Line::Read,
            });
        }
        let (part, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(at) => (&chunk[..at], Some(at + 1)),
            None => (chunk, None),
        };
        seen += part.len() as u64;
        if !too_long && buf.len() + part.len() > cap {
            too_long = true;
            buf.clear();
            buf.shrink_to(64 * 1024);
        }
        if !too_long {
            buf.extend_from_slice(part);
        }
        let used = done.unwrap_or(chunk.len());
        input.consume(used);
        if done.is_some() {
            return Ok(if too_long {
                Line::TooLong(seen)
            } else {
                Line::Read
            });
        }
    }
}

/// Writes every note as JSON Lines to `out` (see the module docs).
pub fn export(
    repo: &Repo,
    options: &ExportOptions,
    out: &mut dyn Write,
) -> Result<ExportReport, NotesError> {
    let notes = repo.notes(crate::NOTES_REF)?;
    let entries = notes.list()?;
    // Newest first by committer date; commits we do not have go last.
    let mut dated: Vec<(Option<i64>, ObjectId)> = entries
        .iter()
        .map(|entry| {
            let time = repo
                .commit_info_by_id(entry.target)
                .ok()
                .map(|info| info.committer.time.seconds);
            (time, entry.target)
        })
        .filter(|(time, _)| match options.since {
            None => true,
            Some(since) => time.is_some_and(|t| t >= since),
        })
        .collect();
    dated.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let targets: Vec<ObjectId> = dated.iter().map(|(_, id)| *id).collect();
    let read = notes.read_many(&targets)?;
    let mut report = ExportReport::default();
    for (target, bytes) in &read.too_large {
        report.too_large += 1;
        report.warnings.push(format!(
            "the note of commit {} is {bytes} bytes, over the limit of {}; not exported",
            target.short(),
            gitctx::MAX_NOTE_BYTES
        ));
    }
    let io = |e| NotesError::io(std::path::Path::new("<export output>"), e);
    let pending = repo.notes(ultragit_schema::pending::CORRECTIONS_REF)?;
    let has_pending = pending.tip()?.is_some();
    for (target, text) in &read.found {
        let line = match Annotation::from_json(text) {
            Ok(mut annotation) => {
                // Corrections not yet folded into the note go along.
                if has_pending && let Ok(Some(record)) = pending.read(*target) {
                    ultragit_schema::pending::join(
                        &mut annotation,
                        &ultragit_schema::pending::parse_record(&record),
                    );
                }
                report.exported += 1;
                serde_json::to_string(&ValidLine {
                    commit: target.to_hex(),
                    note: &annotation,
                })
            }
            Err(err) => {
                report.malformed += 1;
                report.warnings.push(format!(
                    "the note of commit {} is not a valid ultragit/v1 annotation ({}); exported as raw text",
                    target.short(),
                    err.reason()
                ));
                serde_json::to_string(&RawLine {
                    commit: target.to_hex(),
                    malformed: true,
                    raw: text,
                })
            }
        }
        .map_err(|e| NotesError::Invalid(format!("cannot encode an export line: {e}")))?;
        out.write_all(line.as_bytes()).map_err(io)?;
        out.write_all(b"\n").map_err(io)?;
    }
    out.flush().map_err(io)?;
    Ok(report)
}

/// Imports the JSON Lines read from `input` (see the module docs). The caller
/// bounds the input (the binary reads at most [`IMPORT_LIMIT`] bytes of a
/// regular file).
pub fn import(repo: &Repo, mut input: impl BufRead) -> Result<ImportReport, NotesError> {
    let mut report = ImportReport::default();
    let warn = |report: &mut ImportReport, line: usize, what: String| {
        report.invalid += 1;
        if report.invalid <= MAX_LINE_WARNINGS {
            report
                .warnings
                .push(format!("line {line}: {what}; skipped"));
        }
    };
    let notes = repo.notes(crate::NOTES_REF)?;
    // Parse and validate everything first, then write once; each valid note
    // is stored as a blob as soon as it is read, and only its id kept.
    let mut order: Vec<ObjectId> = Vec::new();
    let mut incoming: HashMap<ObjectId, ObjectId> = HashMap::new();
    let mut buf = Vec::new();
    let mut number = 0;
    loop {
        let line = next_line(&mut input, &mut buf, MAX_LINE_BYTES)
            .map_err(|e| NotesError::io(std::path::Path::new("<import input>"), e))?;
        number += 1;
        match line {
            Line::End => break,
            Line::TooLong(bytes) => {
                warn(
                    &mut report,
                    number,
                    format!("{bytes} bytes, longer than a note may be ({MAX_LINE_BYTES} bytes)"),
                );
                continue;
            }
            Line::Read => {}
        }
        let (commit, annotation) = match parsed_line(repo, &buf) {
            Parsed::Note(commit, annotation) => (commit, annotation),
            Parsed::Blank => continue,
            Parsed::UnknownCommit => {
                report.unknown_commits += 1;
                continue;
            }
            Parsed::Invalid(what) => {
                warn(&mut report, number, what);
                continue;
            }
        };
        let mut text = annotation.to_json();
        drop(annotation);
        if let Some(earlier) = incoming.get(&commit) {
            // The same commit twice in one file: join them first.
            let Ok(earlier) = notes.stored_text(*earlier)? else {
                continue;
            };
            match merge_texts(&earlier, &text).0 {
                TextMerge::Ours => continue,
                TextMerge::Theirs => {}
                TextMerge::Merged(merged) => text = merged,
            }
        }
        if text.len() as u64 > gitctx::MAX_NOTE_BYTES {
            warn(
                &mut report,
                number,
                format!(
                    "the note of commit {} is {} bytes, over the limit of {}",
                    commit.short(),
                    text.len(),
                    gitctx::MAX_NOTE_BYTES
                ),
            );
            continue;
        }
        let blob = notes.store_blob(text.as_bytes())?;
        if incoming.insert(commit, blob).is_none() {
            order.push(commit);
        }
    }
    if report.invalid > MAX_LINE_WARNINGS {
        report.warnings.push(format!(
            "{} more invalid lines skipped",
            report.invalid - MAX_LINE_WARNINGS
        ));
    }
    let items: Vec<(ObjectId, ObjectId)> = order
        .into_iter()
        .filter_map(|commit| incoming.remove(&commit).map(|blob| (commit, blob)))
        .collect();
    if !items.is_empty() {
        write_imported(&notes, &items, &mut report)?;
    }
    Ok(report)
}

/// One line of an import, read.
enum Parsed {
    /// A valid note of a commit the repository has.
    Note(ObjectId, Box<Annotation>),
    /// An empty line.
    Blank,
    /// A valid note of a commit the repository does not have.
    UnknownCommit,
    /// Why the line is skipped.
    Invalid(String),
}

/// Reads one line of an import: an export line whose note is a valid
/// `ultragit/v1` annotation of the commit it names.
fn parsed_line(repo: &Repo, bytes: &[u8]) -> Parsed {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Parsed::Invalid("not UTF-8".to_owned());
    };
    if text.trim().is_empty() {
        return Parsed::Blank;
    }
    let line: InLine<'_> = match serde_json::from_str(text) {
        Ok(line) => line,
        Err(err) => return Parsed::Invalid(format!("not an export line ({err})")),
    };
    let Ok(commit) = line.commit.parse::<ObjectId>() else {
        return Parsed::Invalid("the commit is not a full commit id".to_owned());
    };
    if line.malformed {
        return Parsed::Invalid(format!(
            "the note of commit {} is marked malformed",
            commit.short()
        ));
    }
    let Some(note) = line.note else {
        return Parsed::Invalid("no note".to_owned());
    };
    let annotation = match Annotation::from_json(note.get()) {
        Ok(annotation) => annotation,
        Err(err) => {
            return Parsed::Invalid(format!(
                "the note of commit {} is not a valid ultragit/v1 annotation ({})",
                commit.short(),
                err.reason()
            ));
        }
    };
    if annotation.commit != commit.to_hex() {
        return Parsed::Invalid(format!(
            "the note is for commit {}, not {}",
            safe_io::term::sanitize_line(&annotation.commit),
            commit.short()
        ));
    }
    if repo.commit_info_by_id(commit).is_err() {
        return Parsed::UnknownCommit;
    }
    Parsed::Note(commit, Box::new(annotation))
}

/// Writes the imported notes (commit, stored blob) in one commit of the notes
/// ref, each joined with the note already there; a join over the size limit
/// keeps the note there.
fn write_imported(
    notes: &gitctx::Notes<'_>,
    items: &[(ObjectId, ObjectId)],
    report: &mut ImportReport,
) -> Result<(), NotesError> {
    let written = notes.write_many_stored(items, |_, existing, new| {
        match merge_texts(existing, new).0 {
            TextMerge::Ours => Resolution::Ours,
            TextMerge::Theirs => Resolution::Theirs,
            TextMerge::Merged(text) if text.len() as u64 > gitctx::MAX_NOTE_BYTES => {
                Resolution::Ours
            }
            TextMerge::Merged(text) => Resolution::Text(text),
        }
    })?;
    for outcome in written {
        match outcome {
            Written::Added => report.added += 1,
            Written::Updated => report.merged += 1,
            Written::Kept => report.unchanged += 1,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::io::{BufReader, Read};

    use super::*;

    #[test]
    fn a_line_longer_than_the_cap_is_read_through_never_stored() {
        let long = 20 * 1024 * 1024;
        let input = std::io::repeat(b'x')
            .take(long)
            .chain(&b"\nshort\n\nlast"[..]);
        let mut input = BufReader::with_capacity(8 * 1024, input);
        let mut buf = Vec::new();
        let cap = 64 * 1024;
        assert!(matches!(
            next_line(&mut input, &mut buf, cap).unwrap(),
            Line::TooLong(n) if n == long
        ));
        assert!(
            buf.capacity() <= cap + 16 * 1024,
            "the buffer stays near the cap: {}",
            buf.capacity()
        );
        assert!(matches!(
            next_line(&mut input, &mut buf, cap).unwrap(),
            Line::Read
        ));
        assert_eq!(buf, b"short");
        assert!(matches!(
            next_line(&mut input, &mut buf, cap).unwrap(),
            Line::Read
        ));
        assert_eq!(buf, b"");
        assert!(matches!(
            next_line(&mut input, &mut buf, cap).unwrap(),
            Line::Read
        ));
        assert_eq!(buf, b"last");
        assert!(matches!(
            next_line(&mut input, &mut buf, cap).unwrap(),
            Line::End
        ));
    }
}
