//! The reverse dependency index: for every unit some annotation declares a
//! `semantic_dependencies` entry on, which annotated regions depend on it.
//!
//! It is a cache derived from the notes ref (`refs/notes/ultragit`), kept in
//! `ultragit/cache/deps/index.json` of the repository's common git directory
//! and keyed by the notes commit it was built from:
//! - the ref has not moved: the file is used as it is;
//! - the ref moved: the two notes trees are diffed
//!   ([`gitctx::Notes::changes_between`]); only added or changed notes are
//!   read, a removed note drops its entries;
//! - no usable file (none, another format version, another ref, corrupt,
//!   over [`INDEX_LIMIT`], reached through a link, or a notes commit that is
//!   gone): every note is read (a cold build).
//!
//! **Invariant:** git stays the source of truth. The file is only ever a
//! faster way to the same answer: deleting it is always safe, a damaged one is
//! ignored and rebuilt (never an error), and an unwritable cache directory only
//! costs speed. It is written atomically (temporary file, then rename, never
//! through a link), so concurrent readers see an old or a new index, never half
//! of one; two writers racing only cost a rebuild.
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
//! Every annotated commit is listed, with or without dependencies, so that
//! `depsScanLimit` can count the most recent ones.

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
const VERSION: u32 = 1;
/// The index directory, below the common git directory.
const DIR: &str = "ultragit/cache/deps";
/// The file's name in the index directory.
const FILE_NAME: &str = "index.json";

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

/// One annotated commit: its time and its dependencies, as string indices
/// `[target file, target anchor, source file, source anchor, nature]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Source(String, Option<i64>, Vec<[u32; 5]>);

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

/// The reverse dependency index of one notes ref, up to date with it.
#[derive(Debug, Clone)]
pub struct DepsIndex {
    notes_ref: String,
    notes_commit: Option<ObjectId>,
    strings: Vec<String>,
    /// Every annotated commit, with its time and dependencies.
    sources: HashMap<ObjectId, (Option<i64>, Vec<[u32; 5]>)>,
    update: IndexUpdate,
}

impl DepsIndex {
    /// Where the index of `repo` is stored: `ultragit/cache/deps/index.json`
    /// in its common git directory (shared by its worktrees). Deleting it is
    /// always safe.
    pub fn path(repo: &Repo) -> PathBuf {
        repo.common_dir().join(DIR).join(FILE_NAME)
    }

    /// The index of `notes_ref` in `repo`, up to date: the stored one (updated
    /// incrementally when the ref moved; built from every note when there is
    /// none usable), written back when it changed. Problems with the stored
    /// file are never errors; failing to read the notes themselves is.
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
        let stored = load(&common).and_then(|s| DepsIndex::from_stored(s, notes.refname()));
        let mut index = match stored {
            Some(index) if index.notes_commit == Some(tip) => return Ok(index),
            Some(mut index) => match notes.changes_between(index.notes_commit, tip) {
                Ok(changes) => {
                    index.apply(repo, &notes, &changes)?;
                    index.update = IndexUpdate::Incremental {
                        changed: changes.len(),
                    };
                    index
                }
                // The stored notes commit is gone (the ref was rewritten and
                // pruned): start again.
                Err(_) => DepsIndex::cold(repo, &notes, tip)?,
            },
            None => DepsIndex::cold(repo, &notes, tip)?,
        };
        index.notes_commit = Some(tip);
        index.compact();
        index.store(&common);
        Ok(index)
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
            Some(tip),
            IndexUpdate::Cold {
                notes: changes.len(),
            },
        );
        index.apply(repo, notes, &changes)?;
        Ok(index)
    }

    /// Drops the entries of every changed note and adds those of its new text.
    fn apply(
        &mut self,
        repo: &Repo,
        notes: &gitctx::Notes<'_>,
        changes: &[NoteChange],
    ) -> Result<(), ReadError> {
        for change in changes {
            self.sources.remove(&change.target);
        }
        let read = notes.read_changes(changes)?;
        let mut interned: HashMap<String, u32> = self
            .strings
            .iter()
            .enumerate()
            .map(|(i, s)| (s.clone(), i as u32))
            .collect();
        let mut intern = |text: &str, strings: &mut Vec<String>| -> u32 {
            if let Some(&i) = interned.get(text) {
                return i;
            }
            let i = strings.len() as u32;
            strings.push(text.to_owned());
            interned.insert(text.to_owned(), i);
            i
        };
        let time = |commit: ObjectId| {
            repo.commit_info_by_id(commit)
                .ok()
                .map(|info| info.committer.time.seconds)
        };
        for (commit, text) in &read.found {
            let mut edges = Vec::new();
            // A malformed note declares nothing (read warns about it when it
            // reads the note itself); it still counts as an annotated commit.
            if let Some(annotation) = Annotation::from_json(text)
                .ok()
                .filter(|a| a.timestamp_utc().is_some())
            {
                for region in &annotation.regions {
                    for dep in &region.semantic_dependencies {
                        edges.push([
                            intern(&dep.file, &mut self.strings),
                            intern(&dep.anchor, &mut self.strings),
                            intern(&region.file, &mut self.strings),
                            intern(&region.ast_anchor.name, &mut self.strings),
                            intern(&dep.nature, &mut self.strings),
                        ]);
                    }
                }
            }
            self.sources.insert(*commit, (time(*commit), edges));
        }
        for (commit, _) in &read.too_large {
            self.sources.insert(*commit, (time(*commit), Vec::new()));
        }
        Ok(())
    }

    /// Drops the strings no dependency uses any more (after notes changed or
    /// went away), keeping the others in order.
    fn compact(&mut self) {
        let mut used = vec![false; self.strings.len()];
        for (_, edges) in self.sources.values() {
            for &i in edges.iter().flatten() {
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
        for (_, edges) in self.sources.values_mut() {
            for i in edges.iter_mut().flatten() {
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
        for Source(commit, time, edges) in stored.sources {
            if edges.iter().flatten().any(|&i| i as usize >= len) {
                return None;
            }
            sources.insert(commit.parse().ok()?, (time, edges));
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
            .map(|(commit, (time, edges))| Source(commit.to_hex(), *time, edges.clone()))
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
        let _ = write(common, &bytes);
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
            .map(|(commit, (time, _))| (*time, *commit))
            .collect();
        dated.sort_by(|a, b| b.cmp(a));
        dated.truncate(limit);
        dated.into_iter().map(|(_, commit)| commit).collect()
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
        for (commit, (time, edges)) in &self.sources {
            for edge in edges.iter().filter(|e| e[0] == file_index) {
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
fn write(common: &Path, bytes: &[u8]) -> Result<(), safe_io::Error> {
    safe_io::fs::Dir::open(common)?
        .create_dir_all(DIR)?
        .write(FILE_NAME, bytes)
}
