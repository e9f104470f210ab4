//! The notes index: for every unit some annotation declares a
//! `semantic_dependencies` entry on, which annotated regions depend on it
//! (the reverse dependency index); and for every annotated commit, the files
//! and anchors its regions name, so that `history` and `summary` find a
//! file's annotated commits without walking its history.
//!
//! It is a cache derived from the notes ref (`refs/notes/ultragit`), kept in
//! `ultragit/cache/deps/` of the repository's common git directory as a base,
//! `index.bin`, keyed by the notes commit it was built from, and a journal,
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
//! **Cost.** An update after one new note decodes the base (a few
//! milliseconds over 10,000 notes: the reason it is binary), replays the
//! journal, diffs two notes trees, reads the one note and rewrites the
//! journal; folding (every 64 updates at most) rewrites the base. Decoding
//! allocates a handful of buffers, not one per string or commit: the strings
//! stand in one buffer, the dependencies in one flat list. Replaying a step
//! appends its strings without searching the table (a text may then stand
//! twice until the next fold, which keeps one copy of each text in use).
//!
//! **Matching.** A dependency names its target as a file and an anchor. It
//! points at a unit when the files are equal and the anchors match exactly or
//! unqualified (`Type::method` and `method`), as the read pipeline matches
//! anchors ([`outline::match_name`]).
//!
//! **Format.** The base is read by every `read` and `deps`, so it is a small
//! binary layout of our own (parsing the same data as JSON cost about 20 ms
//! over 10,000 notes; decoding this costs a few), little-endian throughout:
//!
//! ```text
//! magic "UGDEPIDX" · version u32 · notes ref (str) · notes commit [20]
//! string count u32 · strings (str each)
//! source count u32 · per annotated commit:
//!     commit [20] · time (u8 0 = unknown | 1 then i64 seconds)
//!     edge count u32 · edges (5 × u32 string indices each)
//!     concern count u32 · concerns (u32 string index each)
//!     region count u32 · regions (file, anchor: 2 × u32 string indices each)
//!     retiring u8 (1: a region of the note retires earlier items)
//! (str = u32 byte length, then UTF-8 bytes; nothing may follow the last source)
//! ```
//!
//! Decoding checks every length against the bytes left and every index
//! against the table, so a damaged or hostile file is rejected (and rebuilt),
//! never trusted. The journal is JSON (small, and rewritten whole each
//! update): the same format version, the notes ref, the base's notes commit
//! and the steps, their entries as text (no string table to keep in step with
//! the base's).
//! Every annotated commit is listed, with or without dependencies, so that
//! `depsScanLimit` can count the most recent ones; with it, the files its
//! cross-cutting concerns name, so that `read` finds the concerns about a file
//! without scanning notes, and the `(file, anchor)` of each of its regions
//! (each pair once), so that [`DepsIndex::annotating`] lists the annotated
//! commits of a file (and of a unit) without reading a note.

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use gitctx::{NoteChange, ObjectId, Repo};
use outline::MatchKind;
use serde::{Deserialize, Serialize};
use ultragit_schema::Annotation;

use crate::error::ReadError;

/// The largest index file read (a larger one is ignored and rebuilt).
pub const INDEX_LIMIT: u64 = 256 * 1024 * 1024;

/// The magic bytes that open the base.
const MAGIC: &[u8; 8] = b"UGDEPIDX";
/// The format version of the base and the journal; another one is ignored
/// and rebuilt. (Version 2 was a JSON base, `index.json`; version 3 had no
/// regions; version 4 did not say which notes retire earlier items.)
const VERSION: u32 = 5;
/// The index directory, below the common git directory.
const DIR: &str = "ultragit/cache/deps";
/// The file's name in the index directory.
const FILE_NAME: &str = "index.bin";
/// The base's name before version 3; removed when a new base is written.
const OLD_FILE_NAME: &str = "index.json";
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

/// What the index keeps of one annotated commit: its time and where its
/// dependencies, concerns and regions stand in the index's flat lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Entry {
    time: Option<i64>,
    /// Its dependencies in [`DepsIndex::edges`].
    edges: Range<usize>,
    /// The files its cross-cutting concerns name, in [`DepsIndex::concerns`].
    concerns: Range<usize>,
    /// The `(file, anchor)` of its regions, in [`DepsIndex::regions`].
    regions: Range<usize>,
    /// Whether a region of its note retires earlier items
    /// ([`ultragit_schema::RegionAnnotation::retires`]).
    retiring: bool,
}

/// An annotated commit whose regions name a file asked about
/// ([`DepsIndex::annotating`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Annotating<'a> {
    pub commit: ObjectId,
    /// Its committer time (Unix seconds); `None` when the commit is not in
    /// the repository.
    pub commit_time: Option<i64>,
    /// The `(file, anchor)` of its regions in the files asked about, each
    /// pair once, in the note's order.
    pub regions: Vec<(&'a str, &'a str)>,
}

/// The index's strings: one buffer and where each string ends, so that
/// decoding a base allocates twice, not once per string.
///
/// A text may stand more than once: a journal step appends its strings
/// without searching the table (the table is large, a step small). Queries
/// therefore compare text, never indices of two strings, and folding keeps
/// one copy of each text in use.
#[derive(Debug, Clone, Default)]
struct Strings {
    text: String,
    ends: Vec<usize>,
}

impl Strings {
    fn len(&self) -> usize {
        self.ends.len()
    }

    /// The string at `i` (an index in range: every stored index is checked
    /// when a base is decoded).
    fn get(&self, i: u32) -> &str {
        let i = i as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.text[start..self.ends[i]]
    }

    fn push(&mut self, text: &str) -> u32 {
        self.text.push_str(text);
        self.ends.push(self.text.len());
        (self.ends.len() - 1) as u32
    }

    /// Every index whose string is `text`.
    fn indices_of(&self, text: &str) -> Vec<u32> {
        let mut start = 0;
        let mut out = Vec::new();
        for (i, &end) in self.ends.iter().enumerate() {
            if &self.text[start..end] == text {
                out.push(i as u32);
            }
            start = end;
        }
        out
    }
}

/// One annotated commit as the journal keeps it: its id, commit time,
/// dependencies `[target file, target anchor, source file, source anchor,
/// nature]`, the files its cross-cutting concerns name and its regions
/// `[file, anchor]`, as text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Noted(
    String,
    Option<i64>,
    Vec<[String; 5]>,
    Vec<String>,
    Vec<[String; 2]>,
    bool,
);

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
    strings: Strings,
    /// Every dependency, as string indices `[target file, target anchor,
    /// source file, source anchor, nature]`, grouped by annotated commit. A
    /// dropped commit leaves its group behind until the next fold.
    edges: Vec<[u32; 5]>,
    /// The files cross-cutting concerns name (string indices), grouped the
    /// same way.
    concerns: Vec<u32>,
    /// The regions' `[file, anchor]` (string indices), grouped the same way.
    regions: Vec<[u32; 2]>,
    /// Every annotated commit, with its time and its groups.
    sources: HashMap<ObjectId, Entry>,
    update: IndexUpdate,
}

impl DepsIndex {
    /// Where the index of `repo` is stored: `ultragit/cache/deps/index.bin`
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
        let mut index = load(common).and_then(|bytes| DepsIndex::decode(&bytes, notes_ref))?;
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
        if let Ok(dir) = safe_io::fs::Dir::open(common).and_then(|c| c.open_dir(DIR)) {
            let _ = dir.remove_file(JOURNAL_NAME);
            let _ = dir.remove_file(OLD_FILE_NAME);
        }
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
            strings: Strings::default(),
            edges: Vec::new(),
            concerns: Vec::new(),
            regions: Vec::new(),
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
        let mut intern = Interner::default();
        for step in steps {
            for commit in step.dropped.iter().filter_map(|c| c.parse().ok()) {
                self.sources.remove(&commit);
            }
            for Noted(commit, time, edges, concerns, regions, retiring) in &step.noted {
                let Ok(commit) = commit.parse() else { continue };
                let start = (self.edges.len(), self.concerns.len(), self.regions.len());
                for edge in edges {
                    let edge = edge.each_ref().map(|s| intern.index(&mut self.strings, s));
                    self.edges.push(edge);
                }
                for file in concerns {
                    let file = intern.index(&mut self.strings, file);
                    self.concerns.push(file);
                }
                for region in regions {
                    let region = region
                        .each_ref()
                        .map(|s| intern.index(&mut self.strings, s));
                    self.regions.push(region);
                }
                let entry = Entry {
                    time: *time,
                    edges: start.0..self.edges.len(),
                    concerns: start.1..self.concerns.len(),
                    regions: start.2..self.regions.len(),
                    retiring: *retiring,
                };
                self.sources.insert(commit, entry);
            }
            self.notes_commit = step.to.parse().ok();
        }
    }

    /// Rebuilds the lists without what dropped commits left behind, with one
    /// copy of each string still in use, in commit order (so that the same
    /// index always makes the same base).
    fn compact(&mut self) {
        let mut ordered: Vec<(ObjectId, &Entry)> =
            self.sources.iter().map(|(c, e)| (*c, e)).collect();
        ordered.sort_unstable_by_key(|(commit, _)| *commit);
        let mut strings = Strings::default();
        let mut known: HashMap<&str, u32> = HashMap::new();
        let mut intern = |i: u32| -> u32 {
            let text = self.strings.get(i);
            *known.entry(text).or_insert_with(|| strings.push(text))
        };
        let mut edges = Vec::with_capacity(self.edges.len());
        let mut concerns = Vec::with_capacity(self.concerns.len());
        let mut regions = Vec::with_capacity(self.regions.len());
        let mut sources = HashMap::with_capacity(ordered.len());
        for (commit, entry) in ordered {
            let start = (edges.len(), concerns.len(), regions.len());
            edges.extend(
                self.edges[entry.edges.clone()]
                    .iter()
                    .map(|e| e.map(&mut intern)),
            );
            concerns.extend(
                self.concerns[entry.concerns.clone()]
                    .iter()
                    .map(|&f| intern(f)),
            );
            regions.extend(
                self.regions[entry.regions.clone()]
                    .iter()
                    .map(|r| r.map(&mut intern)),
            );
            let entry = Entry {
                time: entry.time,
                edges: start.0..edges.len(),
                concerns: start.1..concerns.len(),
                regions: start.2..regions.len(),
                retiring: entry.retiring,
            };
            sources.insert(commit, entry);
        }
        self.strings = strings;
        self.edges = edges;
        self.concerns = concerns;
        self.regions = regions;
        self.sources = sources;
    }

    /// A stored base, if it is this format and version, of this ref, and
    /// consistent: every length within the bytes, every string index in the
    /// table, every commit listed once, nothing after the last one.
    fn decode(bytes: &[u8], notes_ref: &str) -> Option<DepsIndex> {
        let mut r = Reader(bytes);
        if r.take(MAGIC.len())? != MAGIC || r.u32()? != VERSION || r.str()? != notes_ref {
            return None;
        }
        let notes_commit = r.oid()?;
        // Every string takes at least its 4-byte length.
        let count = r.count(4)?;
        let mut strings = Strings {
            text: String::with_capacity(r.0.len()),
            ends: Vec::with_capacity(count),
        };
        for _ in 0..count {
            strings.push(r.str()?);
        }
        let len = strings.len() as u32;
        // Every source takes at least 20 + 1 + 4 + 4 + 4 bytes, every edge 20.
        let count = r.count(33)?;
        let mut index = DepsIndex {
            notes_ref: notes_ref.to_owned(),
            notes_commit: Some(notes_commit),
            strings,
            edges: Vec::with_capacity(r.0.len() / 20),
            concerns: Vec::new(),
            regions: Vec::new(),
            sources: HashMap::with_capacity(count),
            update: IndexUpdate::Fresh,
        };
        for _ in 0..count {
            let commit = r.oid()?;
            let time = match r.u8()? {
                0 => None,
                1 => Some(r.i64()?),
                _ => return None,
            };
            let start = (index.edges.len(), index.concerns.len(), index.regions.len());
            for _ in 0..r.count(20)? {
                index.edges.push(r.edge(len)?);
            }
            for _ in 0..r.count(4)? {
                index.concerns.push(r.index(len)?);
            }
            for _ in 0..r.count(8)? {
                index.regions.push([r.index(len)?, r.index(len)?]);
            }
            let retiring = match r.u8()? {
                0 => false,
                1 => true,
                _ => return None,
            };
            let entry = Entry {
                time,
                edges: start.0..index.edges.len(),
                concerns: start.1..index.concerns.len(),
                regions: start.2..index.regions.len(),
                retiring,
            };
            if index.sources.insert(commit, entry).is_some() {
                return None;
            }
        }
        r.0.is_empty().then_some(index)
    }

    /// The base's bytes (see the module's docs), sources in commit order so
    /// that the same index always makes the same file.
    fn encode(&self, notes_commit: ObjectId) -> Vec<u8> {
        fn put_u32(out: &mut Vec<u8>, n: usize) {
            out.extend_from_slice(&(n as u32).to_le_bytes());
        }
        fn put_str(out: &mut Vec<u8>, text: &str) {
            put_u32(out, text.len());
            out.extend_from_slice(text.as_bytes());
        }
        let mut out = Vec::with_capacity(
            64 + self.strings.text.len()
                + 4 * self.strings.len()
                + 33 * self.sources.len()
                + 20 * self.edges.len()
                + 4 * self.concerns.len()
                + 8 * self.regions.len(),
        );
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        put_str(&mut out, &self.notes_ref);
        out.extend_from_slice(notes_commit.as_bytes());
        put_u32(&mut out, self.strings.len());
        for i in 0..self.strings.len() {
            put_str(&mut out, self.strings.get(i as u32));
        }
        let mut sources: Vec<(&ObjectId, &Entry)> = self.sources.iter().collect();
        sources.sort_unstable_by_key(|(commit, _)| **commit);
        put_u32(&mut out, sources.len());
        for (commit, entry) in sources {
            out.extend_from_slice(commit.as_bytes());
            match entry.time {
                None => out.push(0),
                Some(time) => {
                    out.push(1);
                    out.extend_from_slice(&time.to_le_bytes());
                }
            }
            let edges = &self.edges[entry.edges.clone()];
            put_u32(&mut out, edges.len());
            for &i in edges.iter().flatten() {
                out.extend_from_slice(&i.to_le_bytes());
            }
            let concerns = &self.concerns[entry.concerns.clone()];
            put_u32(&mut out, concerns.len());
            for &i in concerns {
                out.extend_from_slice(&i.to_le_bytes());
            }
            let regions = &self.regions[entry.regions.clone()];
            put_u32(&mut out, regions.len());
            for &i in regions.iter().flatten() {
                out.extend_from_slice(&i.to_le_bytes());
            }
            out.push(u8::from(entry.retiring));
        }
        out
    }

    /// Writes the index as the base, atomically; a failure only costs the
    /// next command a rebuild.
    fn store(&self, common: &Path) {
        if let Some(notes_commit) = self.notes_commit {
            let _ = write(common, FILE_NAME, &self.encode(notes_commit));
        }
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
        let names = self.strings.indices_of(file);
        if names.is_empty() {
            return Vec::new();
        }
        let mut out: Vec<ObjectId> = self
            .sources
            .iter()
            .filter(|(_, entry)| {
                self.concerns[entry.concerns.clone()]
                    .iter()
                    .any(|f| names.contains(f))
            })
            .map(|(commit, _)| *commit)
            .collect();
        out.sort();
        out
    }

    /// The annotated commits whose regions name one of `files`, each with the
    /// `(file, anchor)` pairs of those regions; with `anchors`, only the
    /// regions whose anchor names one of them (exactly or unqualified, as
    /// [`DepsIndex::dependents`] matches targets) and only commits with one
    /// (empty: any unit).
    /// Newest commit first (by commit time, then id). No note is read: a
    /// commit whose note could not be parsed names nothing.
    pub fn annotating(&self, files: &[&str], anchors: &[&str]) -> Vec<Annotating<'_>> {
        self.annotating_where(Some(files), anchors, |_| true)
    }

    /// [`DepsIndex::annotating`] over every file, keeping only the commits
    /// whose note has a region that retires earlier items
    /// ([`ultragit_schema::RegionAnnotation::retires`]): what `read` looks
    /// for beyond the notes it loaded, without reading a note more. Any file:
    /// a retiring note may name a former path of the file read.
    pub fn retiring(&self, anchors: &[&str]) -> Vec<Annotating<'_>> {
        self.annotating_where(None, anchors, |entry| entry.retiring)
    }

    /// The commits `keep` admits with their regions in `files` (`None`: in
    /// any file) naming one of `anchors` (empty: any).
    fn annotating_where(
        &self,
        files: Option<&[&str]>,
        anchors: &[&str],
        keep: impl Fn(&Entry) -> bool,
    ) -> Vec<Annotating<'_>> {
        let names: Option<Vec<u32>> = files.map(|files| {
            files
                .iter()
                .flat_map(|f| self.strings.indices_of(f))
                .collect()
        });
        if names.as_ref().is_some_and(Vec::is_empty) {
            return Vec::new();
        }
        let mut out: Vec<Annotating<'_>> = Vec::new();
        for (commit, entry) in self.sources.iter().filter(|(_, e)| keep(e)) {
            let regions: Vec<(&str, &str)> = self.regions[entry.regions.clone()]
                .iter()
                .filter(|r| names.as_ref().is_none_or(|n| n.contains(&r[0])))
                .map(|r| (self.strings.get(r[0]), self.strings.get(r[1])))
                .filter(|(_, a)| anchors.is_empty() || anchors.iter().any(|w| anchors_match(a, w)))
                .collect();
            if !regions.is_empty() {
                out.push(Annotating {
                    commit: *commit,
                    commit_time: entry.time,
                    regions,
                });
            }
        }
        out.sort_by_key(|a| std::cmp::Reverse((a.commit_time, a.commit)));
        out
    }

    /// The files annotated regions name, each once, sorted.
    pub fn region_files(&self) -> Vec<&str> {
        self.named_files(|entry| {
            self.regions[entry.regions.clone()]
                .iter()
                .map(|r| r[0])
                .collect()
        })
    }

    /// The strings `pick` names over every indexed commit, each once, sorted.
    /// Only the groups of commits still indexed count: a dropped commit's
    /// group stays in the flat lists until the next fold.
    fn named_files(&self, pick: impl Fn(&Entry) -> Vec<u32>) -> Vec<&str> {
        let mut named = vec![false; self.strings.len()];
        for entry in self.sources.values() {
            for i in pick(entry) {
                named[i as usize] = true;
            }
        }
        let mut out: Vec<&str> = named
            .iter()
            .enumerate()
            .filter(|(_, named)| **named)
            .map(|(i, _)| self.strings.get(i as u32))
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The former names of `file` under which this index records dependencies:
    /// the paths `history` gives (given the dependency targets that no file has
    /// at HEAD, it names the file's former names among them, e.g. by git's
    /// rename detection; asked for only when needed) that the index names as a
    /// dependency target and no file has at HEAD, in the order given, each once.
    ///
    /// `history` runs only when some target path the index names is gone at
    /// HEAD: otherwise no former name can match, and the process it may start is
    /// saved.
    pub(crate) fn former_names(
        &self,
        repo: &Repo,
        file: &str,
        history: impl FnOnce(&[&str]) -> Result<Vec<String>, ReadError>,
    ) -> Result<Vec<String>, ReadError> {
        // HEAD resolved once: each lookup is then a tree walk, not a ref read.
        let head = repo.resolve_commit("HEAD")?.to_hex();
        let mut gone: Vec<&str> = Vec::new();
        for target in self.target_files() {
            if target != file && repo.file_size_at(&head, target)?.is_none() {
                gone.push(target);
            }
        }
        if gone.is_empty() {
            return Ok(Vec::new());
        }
        let mut out: Vec<String> = Vec::new();
        for name in history(&gone)? {
            if gone.contains(&name.as_str()) && !out.contains(&name) {
                out.push(name);
            }
        }
        Ok(out)
    }

    /// The files dependencies name as their target, each once, sorted.
    pub(crate) fn target_files(&self) -> Vec<&str> {
        self.named_files(|entry| {
            self.edges[entry.edges.clone()]
                .iter()
                .map(|e| e[0])
                .collect()
        })
    }

    /// Every dependency declared on a unit of `file` that `anchor` names
    /// (exactly or unqualified; `None`: any unit of the file), newest annotated
    /// commit first (by commit time, then id).
    pub fn dependents(&self, file: &str, anchor: Option<&str>) -> Vec<IndexedDependency<'_>> {
        let names = self.strings.indices_of(file);
        if names.is_empty() {
            return Vec::new();
        }
        let mut out: Vec<IndexedDependency<'_>> = Vec::new();
        for (commit, entry) in &self.sources {
            let time = &entry.time;
            let edges = self.edges[entry.edges.clone()].iter();
            for edge in edges.filter(|e| names.contains(&e[0])) {
                let target_anchor = self.strings.get(edge[1]);
                if let Some(anchor) = anchor
                    && !anchors_match(target_anchor, anchor)
                {
                    continue;
                }
                out.push(IndexedDependency {
                    commit: *commit,
                    commit_time: *time,
                    source_file: self.strings.get(edge[2]),
                    source_anchor: self.strings.get(edge[3]),
                    nature: self.strings.get(edge[4]),
                    target_file: self.strings.get(edge[0]),
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

/// The string indices of the texts the steps being applied name: each text
/// added to the table once per [`DepsIndex::apply`] (not searched for in the
/// table, see [`Strings`]).
#[derive(Default)]
struct Interner<'s> {
    known: HashMap<&'s str, u32>,
}

impl<'s> Interner<'s> {
    fn index(&mut self, strings: &mut Strings, text: &'s str) -> u32 {
        *self.known.entry(text).or_insert_with(|| strings.push(text))
    }
}

/// A bounds-checked reader over the base's bytes (and the outline cache's
/// entries): every read that would run past the end is `None`.
pub(crate) struct Reader<'a>(pub(crate) &'a [u8]);

impl<'a> Reader<'a> {
    pub(crate) fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.0.len() {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }

    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N)?.try_into().ok()
    }

    pub(crate) fn u8(&mut self) -> Option<u8> {
        Some(self.array::<1>()?[0])
    }

    pub(crate) fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.array()?))
    }

    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.array()?))
    }

    pub(crate) fn oid(&mut self) -> Option<ObjectId> {
        Some(ObjectId::from_bytes(self.array()?))
    }

    pub(crate) fn str(&mut self) -> Option<&'a str> {
        let len = self.u32()? as usize;
        std::str::from_utf8(self.take(len)?).ok()
    }

    /// A count of items that take at least `min_size` bytes each: no more
    /// than the bytes left could hold (so a damaged count never allocates
    /// much).
    pub(crate) fn count(&mut self, min_size: usize) -> Option<usize> {
        let count = self.u32()? as usize;
        (count <= self.0.len() / min_size).then_some(count)
    }

    /// A string index, which must be below `len`.
    fn index(&mut self, len: u32) -> Option<u32> {
        self.u32().filter(|&i| i < len)
    }

    /// A dependency: five string indices below `len`.
    fn edge(&mut self, len: u32) -> Option<[u32; 5]> {
        let mut edge = [0; 5];
        for slot in &mut edge {
            *slot = self.index(len)?;
        }
        Some(edge)
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
        let mut regions: Vec<[String; 2]> = Vec::new();
        let mut retiring = false;
        if let Some(annotation) = Annotation::from_json(text)
            .ok()
            .filter(|a| a.timestamp_utc().is_some())
        {
            for region in &annotation.regions {
                retiring |= !region.retires.is_empty();
                let named = [region.file.clone(), region.ast_anchor.name.clone()];
                if !regions.contains(&named) {
                    regions.push(named);
                }
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
        noted.push(Noted(
            commit.to_hex(),
            time(commit),
            edges,
            concerns,
            regions,
            retiring,
        ));
    }
    for (commit, _) in &read.too_large {
        noted.push(Noted(
            commit.to_hex(),
            time(commit),
            Vec::new(),
            Vec::new(),
            Vec::new(),
            false,
        ));
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
fn load(common: &Path) -> Option<Vec<u8>> {
    let dir = safe_io::fs::Dir::open(common).ok()?.open_dir(DIR).ok()?;
    dir.read_optional(FILE_NAME, INDEX_LIMIT).ok()?
}

/// Writes the index below `common`, creating the directories without
/// following a link, atomically (temporary file, then rename).
fn write(common: &Path, name: &str, bytes: &[u8]) -> Result<(), safe_io::Error> {
    safe_io::fs::Dir::open(common)?
        .create_dir_all(DIR)?
        .write(name, bytes)
}

#[cfg(test)]
mod tests;
