//! The reverse dependency index: for every unit some annotation declares a
//! `semantic_dependencies` entry on, which annotated regions depend on it.
//!
//! It is a cache derived from the notes ref (`refs/notes/ultragit`), kept in
//! `ultragit/cache/deps/` of the repository's common git directory as a base,
//! `index.json`, keyed by the notes commit it was built from, and a journal,
//! `journal.json`, of the steps taken since (each step: the notes dropped and
//! the entries read, keyed by the notes commit it brings the index to):
//! - the base with its journal replayed reflects the ref's commit: used as
//!   it is;
//! - the ref moved: the two notes trees are diffed
//!   ([`gitctx::Notes::changes_between`]); only added or changed notes are
//!   read, a removed note drops its entries, and the step is added to the
//!   journal (a small file rewritten whole), so an update costs reading the
//!   base, not rewriting it;
//! - the journal would grow past 64 steps or 256 KiB: it is folded into a new
//!   base (unused strings dropped) and removed; a cold build does the same;
//! - a journal that is unreadable, another format or version, of another ref,
//!   over 4 MiB, reached through a link, not on top of the base's
//!   notes commit, or with an id that is not one is ignored as a whole: the
//!   base is diffed to the ref instead (and a new journal written). One whose
//!   last notes commit is gone is ignored the same way;
//! - no usable base (none, another format version, another ref, corrupt,
//!   over [`INDEX_LIMIT`], reached through a link, or a notes commit that is
//!   gone): every note is read (a cold build).
//!
//! **Invariant:** git stays the source of truth. The files are only ever a
//! faster way to the same answer: deleting either is always safe, a damaged
//! one is ignored and rebuilt (never an error), and an unwritable cache
//! directory only costs speed. Both are written atomically (temporary file,
//! then rename, never through a link), so concurrent readers see an old or a
//! new file, never half of one. A fold writes the base before removing the
//! journal; a reader that pairs the new base with the old journal finds that
//! it does not chain (another base commit) and diffs instead; two writers
//! racing only cost a re-diff or a rebuild.
//!
//! **Cost.** An update after one new note reads and parses the base (the
//! bulk of it over 10,000 notes), replays the journal, diffs two notes
//! trees, reads the one note and rewrites the journal; folding (every 64
//! updates at most) costs what rewriting the base did before the journal.
//!
//! **Matching.** A dependency names its target as a file and an anchor. It
//! points at a unit when the files are equal and the anchors match exactly or
//! unqualified (`Type::method` and `method`), as the read pipeline matches
//! anchors ([`outline::match_name`]).
//!
//! **Format.** JSON (serde_json is already a dependency; a binary format would
//! need a new one for a file read once per command): a format name and
//! version, the notes ref and commit, a table of strings, and per annotated
//! commit its commit time and its dependencies as indices into the table.
//! The journal: the same format version, the notes ref, the base's notes
//! commit and the steps, their entries as text (no string table to keep in
//! step with the base's).
//! Every annotated commit is listed, with or without dependencies, so that
//! `depsScanLimit` can count the most recent ones; with it, the files its
//! cross-cutting concerns name, so that `read` finds the concerns about a file
//! without scanning notes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use gitctx::{NoteChange, ObjectId, Repo};
use outline::MatchKind;
use serde::{Deserialize, Serialize};
use ultragit_schema::Annotation;

use crate::error::ReadError;

/// The largest index file read (a larger one is ignored and rebuilt).
pub const INDEX_LIMIT: u64 = 256 * 1024 * 1024;

/// The format name written into the file.
const FORMAT: &str = "ultragit-deps-index";
/// The format version; another one is ignored and rebuilt.
const VERSION: u32 = 2;
/// The index directory, below the common git directory.
const DIR: &str = "ultragit/cache/deps";
/// The file's name in the index directory.
const FILE_NAME: &str = "index.json";
/// The journal's name in the index directory.
const JOURNAL_NAME: &str = "journal.json";
/// The journal's format name.
const JOURNAL_FORMAT: &str = "ultragit-deps-journal";
/// The largest journal read (a larger one is ignored: the base is diffed).
const JOURNAL_LIMIT: u64 = 4 * 1024 * 1024;
/// A journal that would grow past this many bytes is folded into the base.
const FOLD_BYTES: usize = 256 * 1024;
/// A journal that would hold more entries than this is folded into the base.
const FOLD_ENTRIES: usize = 64;

/// How the index got up to date with the notes ref.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexUpdate {
    /// The stored index was built from the ref's current commit.
    Fresh,
    /// The stored index was updated: `changed` notes differed (read or dropped).
    Incremental { changed: usize },
    /// Every note was read: there was no usable stored index.
    Cold { notes: usize },
    /// There are no notes (the ref does not exist).
    NoNotes,
}

/// One declared dependency: the annotated region that depends (`source_*`) and
/// the unit it depends on (`target_*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexedDependency<'a> {
    /// The annotated commit whose note declares it.
    pub commit: ObjectId,
    /// That commit's committer time (Unix seconds); `None` when the commit is
    /// not in the repository.
    pub commit_time: Option<i64>,
    pub source_file: &'a str,
    pub source_anchor: &'a str,
    pub nature: &'a str,
    pub target_file: &'a str,
    pub target_anchor: &'a str,
}

/// One annotated commit: its time, its dependencies, as string indices
/// `[target file, target anchor, source file, source anchor, nature]`, and the
/// files its cross-cutting concerns name (string indices).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Source(String, Option<i64>, Vec<[u32; 5]>, Vec<u32>);

/// What the index keeps of one annotated commit.
#[derive(Debug, Clone, Default)]
struct Entry {
    time: Option<i64>,
    edges: Vec<[u32; 5]>,
    /// Files named by its cross-cutting concerns.
    concerns: Vec<u32>,
}

/// The file's contents.
#[derive(Debug, Serialize, Deserialize)]
struct Stored {
    format: String,
    version: u32,
    notes_ref: String,
    notes_commit: String,
    strings: Vec<String>,
    sources: Vec<Source>,
}

/// One annotated commit as the journal keeps it: its id, commit time,
/// dependencies `[target file, target anchor, source file, source anchor,
/// nature]` and the files its cross-cutting concerns name, as text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Noted(String, Option<i64>, Vec<[String; 5]>, Vec<String>);

/// One step of the journal: the notes that differed between the previous
/// notes commit (the base's for the first step) and `to`. Every `dropped`
/// commit loses its entries, then every `noted` one gets its new ones.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Step {
    to: String,
    dropped: Vec<String>,
    noted: Vec<Noted>,
}

/// The journal's contents: steps on top of the base built from `base`.
#[derive(Debug, Serialize, Deserialize)]
struct Journal {
    format: String,
    version: u32,
    notes_ref: String,
    base: String,
    steps: Vec<Step>,
}

/// The reverse dependency index of one notes ref, up to date with it.
#[derive(Debug, Clone)]
pub struct DepsIndex {
    notes_ref: String,
    notes_commit: Option<ObjectId>,
    strings: Vec<String>,
    /// Every annotated commit, with its time, dependencies and concerns.
    sources: HashMap<ObjectId, Entry>,
    update: IndexUpdate,
}

impl DepsIndex {
    /// Where the index of `repo` is stored: `ultragit/cache/deps/index.json`
    /// in its common git directory (shared by its worktrees). Deleting it is
    /// always safe.
    pub fn path(repo: &Repo) -> PathBuf {
        repo.common_dir().join(DIR).join(FILE_NAME)
    }

    /// Where the journal of updates on top of the stored index is kept:
    /// `journal.json` beside it. Deleting it is always safe.
    pub fn journal_path(repo: &Repo) -> PathBuf {
        repo.common_dir().join(DIR).join(JOURNAL_NAME)
    }

    /// The index of `notes_ref` in `repo`, up to date: the stored base with
    /// its journal replayed (a new journal step when the ref moved; folded
    /// into the base when the journal grew past its bound), or built from
    /// every note when there is no usable base. Problems with the stored files
    /// are never errors; failing to read the notes themselves is.
    pub fn open(repo: &Repo, notes_ref: &str) -> Result<DepsIndex, ReadError> {
        let notes = repo.notes(notes_ref)?;
        let Some(tip) = notes.tip()? else {
            return Ok(DepsIndex::empty(
                notes.refname(),
                None,
                IndexUpdate::NoNotes,
            ));
        };
        let common = repo.common_dir();
        let mut stored = DepsIndex::stored(&common, notes.refname(), true);
        while let Some((mut index, base, mut steps)) = stored {
            if index.notes_commit == Some(tip) {
                return Ok(index);
            }
            match notes.changes_between(index.notes_commit, tip) {
                Ok(changes) => {
                    let step = read_step(repo, &notes, &changes, tip)?;
                    index.apply(std::slice::from_ref(&step));
                    index.update = IndexUpdate::Incremental {
                        changed: changes.len(),
                    };
                    steps.push(step);
                    index.record(&common, base, steps);
                    return Ok(index);
                }
                // The journal's last notes commit is gone: diff from the base.
                Err(_) if !steps.is_empty() => {
                    stored = DepsIndex::stored(&common, notes.refname(), false);
                }
                // The base's notes commit is gone (the ref was rewritten and
                // pruned): start again.
                Err(_) => break,
            }
        }
        let index = DepsIndex::cold(repo, &notes, tip)?;
        index.fold(&common);
        Ok(index)
    }

    /// The stored base of `notes_ref` with the journal replayed on it when
    /// `journal` and the journal chains to this base (else none of it), its
    /// notes commit and the journal's steps.
    fn stored(
        common: &Path,
        notes_ref: &str,
        journal: bool,
    ) -> Option<(DepsIndex, ObjectId, Vec<Step>)> {
        let mut index = load(common).and_then(|s| DepsIndex::from_stored(s, notes_ref))?;
        let base = index.notes_commit?;
        let steps = if journal {
            load_journal(common)
                .filter(|j| {
                    j.format == JOURNAL_FORMAT
                        && j.version == VERSION
                        && j.notes_ref == notes_ref
                        && j.base == base.to_hex()
                        && j.steps.iter().all(step_is_valid)
                })
                .map_or_else(Vec::new, |j| j.steps)
        } else {
            Vec::new()
        };
        index.apply(&steps);
        Some((index, base, steps))
    }

    /// Writes the journal of `steps` on the base of notes commit `base`, or
    /// folds it into a new base when it grew past its bound.
    fn record(&self, common: &Path, base: ObjectId, steps: Vec<Step>) {
        let journal = Journal {
            format: JOURNAL_FORMAT.to_owned(),
            version: VERSION,
            notes_ref: self.notes_ref.clone(),
            base: base.to_hex(),
            steps,
        };
        match serde_json::to_vec(&journal) {
            Ok(bytes) if journal.steps.len() <= FOLD_ENTRIES && bytes.len() <= FOLD_BYTES => {
                let _ = write(common, JOURNAL_NAME, &bytes);
            }
            _ => {
                let mut folded = self.clone();
                folded.compact();
                folded.fold(common);
            }
        }
    }

    /// Writes this index as the new base and drops the journal (which no
    /// longer chains to it; a reader that still sees it ignores it).
    fn fold(&self, common: &Path) {
        self.store(common);
        let _ = safe_io::fs::Dir::open(common)
            .and_then(|c| c.open_dir(DIR))
            .and_then(|d| d.remove_file(JOURNAL_NAME));
    }

    /// An index built from every note of `tip`, ignoring any stored file (not
    /// written anywhere).
    pub fn build(repo: &Repo, notes_ref: &str) -> Result<DepsIndex, ReadError> {
        let notes = repo.notes(notes_ref)?;
        match notes.tip()? {
            Some(tip) => DepsIndex::cold(repo, &notes, tip),
            None => Ok(DepsIndex::empty(
                notes.refname(),
                None,
                IndexUpdate::NoNotes,
            )),
        }
    }

    fn empty(notes_ref: &str, notes_commit: Option<ObjectId>, update: IndexUpdate) -> DepsIndex {
        DepsIndex {
            notes_ref: notes_ref.to_owned(),
            notes_commit,
            strings: Vec::new(),
            sources: HashMap::new(),
            update,
        }
    }

    fn cold(repo: &Repo, notes: &gitctx::Notes<'_>, tip: ObjectId) -> Result<DepsIndex, ReadError> {
        let changes = notes.changes_between(None, tip)?;
        let mut index = DepsIndex::empty(
            notes.refname(),
            None,
            IndexUpdate::Cold {
                notes: changes.len(),
            },
        );
        index.apply(&[read_step(repo, notes, &changes, tip)?]);
        Ok(index)
    }

    /// Applies `steps` in order (each valid, see [`step_is_valid`]): the
    /// entries of every dropped commit go, those of every noted one come in,
    /// and the index reflects the last step's notes commit.
    fn apply(&mut self, steps: &[Step]) {
        if steps.is_empty() {
            return;
        }
        let mut interned: HashMap<String, u32> = self
            .strings
            .iter()
            .enumerate()
            .map(|(i, s)| (s.clone(), i as u32))
            .collect();
        let strings = &mut self.strings;
        let mut intern = |text: &str| -> u32 {
            if let Some(&i) = interned.get(text) {
                return i;
            }
            let i = strings.len() as u32;
            strings.push(text.to_owned());
            interned.insert(text.to_owned(), i);
            i
        };
        for step in steps {
            for commit in step.dropped.iter().filter_map(|c| c.parse().ok()) {
                self.sources.remove(&commit);
            }
            for Noted(commit, time, edges, concerns) in &step.noted {
                let Ok(commit) = commit.parse() else { continue };
                let entry = Entry {
                    time: *time,
                    edges: edges
                        .iter()
                        .map(|e| e.each_ref().map(|s| intern(s)))
                        .collect(),
                    concerns: concerns.iter().map(|f| intern(f)).collect(),
                };
                self.sources.insert(commit, entry);
            }
            self.notes_commit = step.to.parse().ok();
        }
    }

    /// Drops the strings no dependency uses any more (after notes changed or
    /// went away), keeping the others in order.
    fn compact(&mut self) {
        let mut used = vec![false; self.strings.len()];
        for entry in self.sources.values() {
            for &i in entry.edges.iter().flatten().chain(&entry.concerns) {
                used[i as usize] = true;
            }
        }
        if used.iter().all(|&u| u) {
            return;
        }
        let mut remap = vec![0u32; self.strings.len()];
        let mut kept = Vec::new();
        for (i, text) in std::mem::take(&mut self.strings).into_iter().enumerate() {
            if used[i] {
                remap[i] = kept.len() as u32;
                kept.push(text);
            }
        }
        self.strings = kept;
        for entry in self.sources.values_mut() {
            for i in entry.edges.iter_mut().flatten().chain(&mut entry.concerns) {
                *i = remap[*i as usize];
            }
        }
    }

    /// A stored index, if it is this format and version, of this ref, and
    /// consistent (every index in range, every id an id).
    fn from_stored(stored: Stored, notes_ref: &str) -> Option<DepsIndex> {
        if stored.format != FORMAT || stored.version != VERSION || stored.notes_ref != notes_ref {
            return None;
        }
        let notes_commit = stored.notes_commit.parse().ok()?;
        let len = stored.strings.len();
        let mut sources = HashMap::with_capacity(stored.sources.len());
        for Source(commit, time, edges, concerns) in stored.sources {
            if edges
                .iter()
                .flatten()
                .chain(&concerns)
                .any(|&i| i as usize >= len)
            {
                return None;
            }
            sources.insert(
                commit.parse().ok()?,
                Entry {
                    time,
                    edges,
                    concerns,
                },
            );
        }
        Some(DepsIndex {
            notes_ref: stored.notes_ref,
            notes_commit: Some(notes_commit),
            strings: stored.strings,
            sources,
            update: IndexUpdate::Fresh,
        })
    }

    /// Writes the index to `dir`, atomically; a failure only costs the next
    /// command a rebuild.
    fn store(&self, common: &Path) {
        let Some(notes_commit) = self.notes_commit else {
            return;
        };
        let mut sources: Vec<Source> = self
            .sources
            .iter()
            .map(|(commit, e)| Source(commit.to_hex(), e.time, e.edges.clone(), e.concerns.clone()))
            .collect();
        sources.sort_by(|a, b| a.0.cmp(&b.0));
        let stored = Stored {
            format: FORMAT.to_owned(),
            version: VERSION,
            notes_ref: self.notes_ref.clone(),
            notes_commit: notes_commit.to_hex(),
            strings: self.strings.clone(),
            sources,
        };
        let Ok(bytes) = serde_json::to_vec(&stored) else {
            return;
        };
        let _ = write(common, FILE_NAME, &bytes);
    }

    /// How this index got up to date.
    pub fn update(&self) -> IndexUpdate {
        self.update
    }

    /// The notes commit the index reflects (`None`: there are no notes).
    pub fn notes_commit(&self) -> Option<ObjectId> {
        self.notes_commit
    }

    /// How many annotated commits (notes) the index covers.
    pub fn annotated_commits(&self) -> usize {
        self.sources.len()
    }

    /// The `limit` most recently committed annotated commits (newest first;
    /// commits missing from the repository last).
    pub fn most_recent(&self, limit: usize) -> Vec<ObjectId> {
        let mut dated: Vec<(Option<i64>, ObjectId)> = self
            .sources
            .iter()
            .map(|(commit, entry)| (entry.time, *commit))
            .collect();
        dated.sort_by(|a, b| b.cmp(a));
        dated.truncate(limit);
        dated.into_iter().map(|(_, commit)| commit).collect()
    }

    /// The annotated commits whose cross-cutting concerns name `file`.
    pub fn concerning(&self, file: &str) -> Vec<ObjectId> {
        let Some(index) = self.strings.iter().position(|s| s == file) else {
            return Vec::new();
        };
        let mut out: Vec<ObjectId> = self
            .sources
            .iter()
            .filter(|(_, entry)| entry.concerns.contains(&(index as u32)))
            .map(|(commit, _)| *commit)
            .collect();
        out.sort();
        out
    }

    /// Every dependency declared on a unit of `file` that `anchor` names
    /// (exactly or unqualified; `None`: any unit of the file), newest annotated
    /// commit first (by commit time, then id).
    pub fn dependents(&self, file: &str, anchor: Option<&str>) -> Vec<IndexedDependency<'_>> {
        let Some(file_index) = self.strings.iter().position(|s| s == file) else {
            return Vec::new();
        };
        let file_index = file_index as u32;
        let mut out: Vec<IndexedDependency<'_>> = Vec::new();
        for (commit, entry) in &self.sources {
            let time = &entry.time;
            for edge in entry.edges.iter().filter(|e| e[0] == file_index) {
                let target_anchor = self.strings[edge[1] as usize].as_str();
                if let Some(anchor) = anchor
                    && !anchors_match(target_anchor, anchor)
                {
                    continue;
                }
                out.push(IndexedDependency {
                    commit: *commit,
                    commit_time: *time,
                    source_file: &self.strings[edge[2] as usize],
                    source_anchor: &self.strings[edge[3] as usize],
                    nature: &self.strings[edge[4] as usize],
                    target_file: &self.strings[edge[0] as usize],
                    target_anchor,
                });
            }
        }
        out.sort_by(|a, b| {
            (b.commit_time, b.commit)
                .cmp(&(a.commit_time, a.commit))
                .then_with(|| a.source_file.cmp(b.source_file))
                .then_with(|| a.source_anchor.cmp(b.source_anchor))
                .then_with(|| a.target_anchor.cmp(b.target_anchor))
                .then_with(|| a.nature.cmp(b.nature))
        });
        out
    }
}

/// Does a dependency's target anchor name the unit `anchor`? Exactly or
/// unqualified (`Type::method` and `method`), never fuzzily.
pub(crate) fn anchors_match(target: &str, anchor: &str) -> bool {
    matches!(
        outline::match_name(target, anchor),
        Some(MatchKind::Exact | MatchKind::Unqualified)
    )
}

/// The step from the notes commit the index reflects to `to`: every changed
/// note dropped, every added or changed one read (a malformed note declares
/// nothing, as an oversized one; read warns about it when it reads the note
/// itself; it still counts as an annotated commit).
fn read_step(
    repo: &Repo,
    notes: &gitctx::Notes<'_>,
    changes: &[NoteChange],
    to: ObjectId,
) -> Result<Step, ReadError> {
    let read = notes.read_changes(changes)?;
    let time = |commit: &ObjectId| {
        repo.commit_info_by_id(*commit)
            .ok()
            .map(|info| info.committer.time.seconds)
    };
    let mut noted = Vec::with_capacity(read.found.len() + read.too_large.len());
    for (commit, text) in &read.found {
        let mut edges = Vec::new();
        let mut concerns: Vec<String> = Vec::new();
        if let Some(annotation) = Annotation::from_json(text)
            .ok()
            .filter(|a| a.timestamp_utc().is_some())
        {
            for region in &annotation.regions {
                for dep in &region.semantic_dependencies {
                    edges.push([
                        dep.file.clone(),
                        dep.anchor.clone(),
                        region.file.clone(),
                        region.ast_anchor.name.clone(),
                        dep.nature.clone(),
                    ]);
                }
            }
            for reference in annotation.cross_cutting.iter().flat_map(|c| &c.regions) {
                let file = reference
                    .split_once(':')
                    .map_or(reference.as_str(), |(f, _)| f);
                if !concerns.iter().any(|c| c == file) {
                    concerns.push(file.to_owned());
                }
            }
        }
        noted.push(Noted(commit.to_hex(), time(commit), edges, concerns));
    }
    for (commit, _) in &read.too_large {
        noted.push(Noted(commit.to_hex(), time(commit), Vec::new(), Vec::new()));
    }
    Ok(Step {
        to: to.to_hex(),
        dropped: changes.iter().map(|c| c.target.to_hex()).collect(),
        noted,
    })
}

/// Does every id of a stored journal step parse? (A step that does not is
/// never applied: the whole journal is ignored.)
fn step_is_valid(step: &Step) -> bool {
    let is_id = |s: &String| s.parse::<ObjectId>().is_ok();
    is_id(&step.to) && step.dropped.iter().all(is_id) && step.noted.iter().all(|n| is_id(&n.0))
}

/// The stored journal, if there is a readable one (bounded, never through a
/// link).
fn load_journal(common: &Path) -> Option<Journal> {
    let dir = safe_io::fs::Dir::open(common).ok()?.open_dir(DIR).ok()?;
    let bytes = dir.read_optional(JOURNAL_NAME, JOURNAL_LIMIT).ok()??;
    serde_json::from_slice(&bytes).ok()
}

/// The stored index below the common git directory `common`, if there is a
/// readable one. The git directory is the repository's own (trusted); below
/// it nothing is read through a link.
fn load(common: &Path) -> Option<Stored> {
    let dir = safe_io::fs::Dir::open(common).ok()?.open_dir(DIR).ok()?;
    let bytes = dir.read_optional(FILE_NAME, INDEX_LIMIT).ok()??;
    serde_json::from_slice(&bytes).ok()
}

/// Writes the index below `common`, creating the directories without
/// following a link, atomically (temporary file, then rename).
fn write(common: &Path, name: &str, bytes: &[u8]) -> Result<(), safe_io::Error> {
    safe_io::fs::Dir::open(common)?
        .create_dir_all(DIR)?
        .write(name, bytes)
}
