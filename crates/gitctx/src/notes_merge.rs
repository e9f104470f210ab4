//! Joining two histories of one notes ref, and writing many notes in one
//! commit: what `ultragit sync` and `ultragit import` build on.
//!
//! [`Notes::merge_from`] merges another notes commit (a teammate's, fetched into
//! a tracking ref) into the local notes ref, in-process, as a **union**: notes
//! from the other side can add to ours, never take any away.
//! - Theirs already contained in ours → nothing to do. Otherwise the result is
//!   ours plus what their side changed since the merge base (the empty tree when
//!   the histories are unrelated, as two clones that each ran `ultragit init`
//!   are): only notes changed there are looked at (the trees are diffed), so a
//!   merge costs what changed, not how many notes exist.
//! - A note of theirs comes in only when its entry is a regular file (not a
//!   symbolic link, a submodule, an executable), it is under [`MAX_NOTE_BYTES`]
//!   and the caller's `admit` accepts its text; otherwise it is *refused*
//!   ([`Refusal`], listed in [`MergeReport::refused`] and in the merge commit's
//!   message) and ours, if any, stays as it is. An admitted note for a commit
//!   without a local note is taken by id; one for a commit that has a
//!   different local note goes to the caller's `resolve` (a JSON union, for
//!   ultragit) — also when only their side changed it, so an edit of theirs
//!   that drops something of ours cannot drop it here.
//! - A note their side removed stays here ([`MergeReport::kept`]): removals
//!   never travel by a merge or a fast-forward. Our own changes since the base
//!   (our removals included) stand.
//! - The ref moves to theirs (a fast-forward) only when theirs contains ours
//!   and the union is exactly their tree; otherwise a commit with ours and
//!   theirs as parents (theirs alone when there are no local notes) holds the
//!   union, so the next merge of the same theirs is up to date and the push of
//!   the result is a fast-forward for the remote.
//! - A local note over the limit is never loaded: against a different note of
//!   theirs ours is kept and the id is reported in [`MergeReport::too_large`].
//! - Flat (`<40 hex>`) and fanned-out (`ab/<38 hex>`) trees merge with each
//!   other: paths are turned into commit ids before comparing.
//!
//! **Invariant:** the ref moves only by compare-and-swap (expected old value =
//! the ours the merge was computed from); a local writer that got in between
//! makes the merge start again from the new tip. Nothing is force-updated and no
//! note of a concurrent writer is lost.
//!
//! [`Notes::write_many`] writes a batch of notes in one notes commit
//! (compare-and-swap, retried like [`Notes::write`]); a target that already has
//! a note gets the caller's resolution of the two texts.

use std::collections::{BTreeMap, HashMap};

use crate::error::{Error, Result, git};
use crate::notes::{Attempt, Backoff, Notes, fanout_dir, is_race, locate, read_blob, signature};
use crate::oid::ObjectId;

/// How many times a merge starts again after a local writer moved the ref.
const MAX_MERGE_ATTEMPTS: u32 = 50;

/// The caller's answer for one commit whose notes differ on the two sides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    /// Keep our note.
    Ours,
    /// Take their note.
    Theirs,
    /// Store this text instead (a merge of both).
    Text(String),
}

/// How the local ref was brought up to date.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeKind {
    /// Theirs was already contained in ours: the ref did not move.
    UpToDate,
    /// Ours was contained in theirs (or absent): the ref now points at theirs.
    FastForward,
    /// A merge commit with ours and theirs as parents.
    Merged,
}

/// What [`Notes::merge_from`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeReport {
    pub kind: MergeKind,
    /// The notes commit the ref points at afterwards.
    pub notes_commit: ObjectId,
    /// Notes of theirs for commits that had none here, adopted as they were.
    pub taken: usize,
    /// Commits with a note on both sides, given to the resolver (a union).
    pub resolved: usize,
    /// Local notes their side removed: kept (a removal never travels).
    pub kept: usize,
    /// Notes of theirs not taken, and why: not a regular file, over the size
    /// limit, or refused by the caller's check. The local note (if any) stays.
    pub refused: Vec<(ObjectId, Refusal)>,
    /// Commits whose local note is over [`MAX_NOTE_BYTES`](crate::MAX_NOTE_BYTES)
    /// where theirs differs: ours was kept unread.
    pub too_large: Vec<ObjectId>,
    /// Compare-and-swap attempts used (1 when no local writer interfered).
    pub attempts: u32,
}

/// What [`Notes::write_many`] did with one item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// The commit had no note; it has this one now.
    Added,
    /// The commit's note was replaced (by the incoming text or a merge).
    Updated,
    /// The existing note was kept (equal, preferred by the resolver, or too
    /// large to read).
    Kept,
}

/// A tree entry where a note lives: its object and its file mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) id: git2::Oid,
    pub(crate) mode: i32,
}

impl Entry {
    /// A regular, non-executable file: the only kind of entry a note is.
    fn is_regular(self) -> bool {
        self.mode == i32::from(git2::FileMode::Blob)
    }
}

/// The net change of one note between two trees: its entry before and after.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Change {
    old: Option<Entry>,
    pub(crate) new: Option<Entry>,
}

/// Why a note of the other side was not taken by [`Notes::merge_from`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The tree entry is not a regular file: a symbolic link, a submodule
    /// (gitlink), an executable file (the mode, in octal).
    NotARegularFile { mode: u32 },
    /// The note is over [`MAX_NOTE_BYTES`](crate::MAX_NOTE_BYTES).
    TooLarge { bytes: u64 },
    /// The caller's check refused its text (the reason).
    Invalid(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::NotARegularFile { mode } => {
                let kind = match mode {
                    0o120000 => "a symbolic link",
                    0o160000 => "a submodule entry",
                    0o100755 => "an executable file",
                    _ => "not a regular file",
                };
                write!(f, "{kind} (mode {mode:o}), not a note")
            }
            Refusal::TooLarge { bytes } => write!(
                f,
                "{bytes} bytes, over the limit of {}",
                crate::MAX_NOTE_BYTES
            ),
            Refusal::Invalid(reason) => f.write_str(reason),
        }
    }
}

/// One edit of the result tree.
enum Edit {
    Set(ObjectId, git2::Oid),
}

impl Notes<'_> {
    /// Merges the notes commit `theirs` into this ref (see the module docs).
    /// `admit(commit, text)` checks a note of theirs before it is taken or
    /// merged (`Err(reason)` refuses it); `resolve(commit, ours, theirs)`
    /// decides for a commit that has a note on both sides, with different
    /// texts. Either may be called again for the same commit when a local
    /// writer forces the merge to start over.
    pub fn merge_from(
        &self,
        theirs: ObjectId,
        mut admit: impl FnMut(ObjectId, &str) -> std::result::Result<(), String>,
        mut resolve: impl FnMut(ObjectId, &str, &str) -> Resolution,
    ) -> Result<MergeReport> {
        let repo = &self.repo.inner;
        let theirs_git = theirs.to_git();
        let theirs_commit = repo
            .find_commit(theirs_git)
            .map_err(git("reading the notes commit to merge"))?;
        let mut backoff = Backoff::new(theirs);
        for attempt in 1..=MAX_MERGE_ATTEMPTS {
            let ours = self.tip_git()?;
            if let Some(ours) = ours
                && (ours == theirs_git
                    || repo
                        .graph_descendant_of(ours, theirs_git)
                        .map_err(git("comparing notes histories"))?)
            {
                return Ok(up_to_date(ObjectId::from_git(ours), attempt));
            }
            let (new_tip, mut report) =
                self.union(ours, &theirs_commit, &mut admit, &mut resolve)?;
            report.attempts = attempt;
            let message = match report.kind {
                MergeKind::FastForward => "notes: fast-forward",
                _ => "notes: merge",
            };
            match self.compare_and_swap(ours, new_tip, message) {
                Ok(()) => return Ok(report),
                Err(err) if is_race(&err) => backoff.wait(),
                Err(err) => return Err(git("updating the notes ref")(err)),
            }
        }
        Err(Error::Contended {
            refname: self.refname.clone(),
            attempts: MAX_MERGE_ATTEMPTS,
        })
    }

    /// The union of `ours` (`None`: no local notes) and `theirs`, as the notes
    /// commit the ref should point at next (not yet on the ref): `theirs`
    /// itself when that loses nothing of ours and refuses nothing of theirs
    /// (a fast-forward), else a new commit whose parents are ours and theirs.
    fn union(
        &self,
        ours: Option<git2::Oid>,
        theirs: &git2::Commit<'_>,
        admit: &mut impl FnMut(ObjectId, &str) -> std::result::Result<(), String>,
        resolve: &mut impl FnMut(ObjectId, &str, &str) -> Resolution,
    ) -> Result<(git2::Oid, MergeReport)> {
        let repo = &self.repo.inner;
        let tree_of = |id: git2::Oid| {
            repo.find_commit(id)
                .and_then(|c| c.tree())
                .map_err(git("reading the notes tree"))
        };
        let ours_commit = ours
            .map(|id| repo.find_commit(id))
            .transpose()
            .map_err(git("reading the notes commit"))?;
        let ours_tree = ours.map(tree_of).transpose()?;
        let theirs_tree = theirs.tree().map_err(git("reading the notes tree"))?;
        let base = match ours {
            None => None,
            Some(ours) => match repo.merge_base(ours, theirs.id()) {
                Ok(base) => Some(base),
                Err(err) if err.code() == git2::ErrorCode::NotFound => None,
                Err(err) => return Err(git("finding the notes merge base")(err)),
            },
        };
        let base_tree = base.map(tree_of).transpose()?;
        let ours_changes = match &ours_tree {
            Some(tree) => changes(repo, base_tree.as_ref(), tree)?,
            None => HashMap::new(),
        };
        let theirs_changes = changes(repo, base_tree.as_ref(), &theirs_tree)?;

        let mut report = up_to_date(ObjectId::from_git(theirs.id()), 1);
        report.kind = MergeKind::Merged;
        let mut edits = Vec::new();
        let mut targets: Vec<&ObjectId> = theirs_changes.keys().collect();
        targets.sort();
        for &target in targets {
            let theirs_change = theirs_changes[&target];
            // Ours as it is now: changed since the base, or as the base had it.
            let ours_now = match ours_changes.get(&target) {
                Some(change) => change.new,
                None => theirs_change.old,
            };
            let Some(incoming) = theirs_change.new else {
                // Their side removed it: a removal never travels.
                if ours_now.is_some() {
                    report.kept += 1;
                }
                continue;
            };
            if ours_now == Some(incoming) {
                continue;
            }
            let theirs_text = match check_incoming(repo, target, incoming, admit)? {
                Ok(text) => text,
                Err(refusal) => {
                    report.refused.push((target, refusal));
                    continue;
                }
            };
            let Some(ours_entry) = ours_now else {
                report.taken += 1;
                edits.push(Edit::Set(target, incoming.id));
                continue;
            };
            match read_blob(repo, ours_entry.id)? {
                Ok(ours_text) => {
                    report.resolved += 1;
                    match resolve(target, &ours_text, &theirs_text) {
                        Resolution::Ours => {}
                        Resolution::Theirs => edits.push(Edit::Set(target, incoming.id)),
                        Resolution::Text(text) => {
                            let blob = repo
                                .blob(text.as_bytes())
                                .map_err(git("storing a merged note"))?;
                            edits.push(Edit::Set(target, blob));
                        }
                    }
                }
                Err(_) => report.too_large.push(target),
            }
        }

        let base_of_result = match &ours_tree {
            Some(tree) => tree.clone(),
            None => {
                let empty = repo
                    .treebuilder(None)
                    .and_then(|b| b.write())
                    .map_err(git("writing an empty notes tree"))?;
                repo.find_tree(empty)
                    .map_err(git("reading the notes tree"))?
            }
        };
        let tree = if edits.is_empty() {
            base_of_result.id()
        } else {
            apply(repo, &base_of_result, &edits)?
        };
        // Theirs already is the union, and contains ours: move to it.
        let contains_ours = match ours {
            None => true,
            Some(ours) => repo
                .graph_descendant_of(theirs.id(), ours)
                .map_err(git("comparing notes histories"))?,
        };
        if contains_ours && changes(repo, Some(&theirs_tree), &repo_tree(repo, tree)?)?.is_empty() {
            report.kind = MergeKind::FastForward;
            report.notes_commit = ObjectId::from_git(theirs.id());
            return Ok((theirs.id(), report));
        }
        let tree = repo_tree(repo, tree)?;
        let signature = signature(repo)?;
        let message = merge_message(ObjectId::from_git(theirs.id()), &report);
        let mut parents: Vec<&git2::Commit<'_>> = ours_commit.iter().collect();
        parents.push(theirs);
        let commit = repo
            .commit(None, &signature, &signature, &message, &tree, &parents)
            .map_err(git("writing a notes merge commit"))?;
        report.notes_commit = ObjectId::from_git(commit);
        Ok((commit, report))
    }

    /// The notes of the notes commit `theirs` that differ from this ref's and
    /// that [`Notes::merge_from`] refuses (with the same `admit`), sorted by
    /// commit: what `doctor` reports of a teammate's notes. Costs what
    /// differs between the two trees.
    pub fn refused_in(
        &self,
        theirs: ObjectId,
        mut admit: impl FnMut(ObjectId, &str) -> std::result::Result<(), String>,
    ) -> Result<Vec<(ObjectId, Refusal)>> {
        let repo = &self.repo.inner;
        let theirs_tree = repo
            .find_commit(theirs.to_git())
            .and_then(|c| c.tree())
            .map_err(git("reading the notes tree"))?;
        let ours_tree = self.tree()?;
        let mut out = Vec::new();
        for (target, change) in changes(repo, ours_tree.as_ref(), &theirs_tree)? {
            if let Some(incoming) = change.new
                && let Err(refusal) = check_incoming(repo, target, incoming, &mut admit)?
            {
                out.push((target, refusal));
            }
        }
        out.sort_by_key(|(target, _)| *target);
        Ok(out)
    }

    /// Writes every `(commit, text)` of `items` in one notes commit. A commit
    /// that already has a different note gets `resolve(commit, existing,
    /// incoming)`; an existing note over the size limit is kept. Compare-and-swap,
    /// retried on conflict and failing like [`Notes::write`] (the resolver may
    /// then be asked again). Returns what
    /// happened to each item, in order. A commit listed twice: the last wins.
    pub fn write_many(
        &self,
        items: &[(ObjectId, String)],
        resolve: impl FnMut(ObjectId, &str, &str) -> Resolution,
    ) -> Result<Vec<Written>> {
        let mut stored = Vec::with_capacity(items.len());
        for (target, text) in items {
            stored.push((*target, self.store_blob(text.as_bytes())?));
        }
        self.write_many_stored(&stored, resolve)
    }

    /// Stores `bytes` as a blob in the repository's object database (not yet
    /// under any note): how a caller that streams many notes keeps only their
    /// ids in memory before [`Notes::write_many_stored`].
    pub fn store_blob(&self, bytes: &[u8]) -> Result<ObjectId> {
        self.repo
            .inner
            .blob(bytes)
            .map(ObjectId::from_git)
            .map_err(git("storing a note"))
    }

    /// The text of a blob stored with [`Notes::store_blob`] (or any note's
    /// blob): `Err(size)` when it is over [`MAX_NOTE_BYTES`](crate::MAX_NOTE_BYTES).
    pub fn stored_text(&self, blob: ObjectId) -> Result<std::result::Result<String, u64>> {
        read_blob(&self.repo.inner, blob.to_git())
    }

    /// [`Notes::write_many`] for notes already stored as blobs: `(commit,
    /// blob)` pairs; a blob's text is read only when the commit already has a
    /// different note, one at a time.
    pub fn write_many_stored(
        &self,
        items: &[(ObjectId, ObjectId)],
        mut resolve: impl FnMut(ObjectId, &str, &str) -> Resolution,
    ) -> Result<Vec<Written>> {
        let repo = &self.repo.inner;
        let seed = items.first().map_or(ObjectId::from_bytes([0; 20]), |i| i.0);
        let (outcomes, _) = self.commit_retrying(seed, |tree| {
            let empty;
            let tree = match tree {
                Some(tree) => tree,
                None => {
                    let id = repo
                        .treebuilder(None)
                        .and_then(|b| b.write())
                        .map_err(git("writing an empty notes tree"))?;
                    empty = repo.find_tree(id).map_err(git("reading the notes tree"))?;
                    &empty
                }
            };
            let mut outcomes = Vec::with_capacity(items.len());
            let mut edits = Vec::new();
            for (target, incoming) in items {
                let incoming = incoming.to_git();
                let outcome = match locate(repo, tree, &target.to_hex())? {
                    None => Written::Added,
                    Some((_, blob)) if blob == incoming => Written::Kept,
                    Some((_, blob)) => match (read_blob(repo, blob)?, read_blob(repo, incoming)?) {
                        (Ok(text), Ok(new)) if text == new => Written::Kept,
                        (Ok(text), Ok(new)) => match resolve(*target, &text, &new) {
                            Resolution::Ours => Written::Kept,
                            Resolution::Theirs => Written::Updated,
                            Resolution::Text(merged) => {
                                let blob = repo
                                    .blob(merged.as_bytes())
                                    .map_err(git("storing a note"))?;
                                edits.push(Edit::Set(*target, blob));
                                outcomes.push(Written::Updated);
                                continue;
                            }
                        },
                        _ => Written::Kept,
                    },
                };
                if outcome != Written::Kept {
                    edits.push(Edit::Set(*target, incoming));
                }
                outcomes.push(outcome);
            }
            if edits.is_empty() {
                return Ok(Attempt::Unchanged(outcomes));
            }
            Ok(Attempt::Commit {
                tree: apply(repo, tree, &edits)?,
                message: format!("Notes imported for {} commits\n", edits.len()),
                value: outcomes,
            })
        })?;
        Ok(outcomes)
    }
}

/// Whether a note of the other side may come in: its text, or why not.
fn check_incoming(
    repo: &git2::Repository,
    target: ObjectId,
    incoming: Entry,
    admit: &mut impl FnMut(ObjectId, &str) -> std::result::Result<(), String>,
) -> Result<std::result::Result<String, Refusal>> {
    if !incoming.is_regular() {
        let mode = u32::try_from(incoming.mode).unwrap_or(0);
        return Ok(Err(Refusal::NotARegularFile { mode }));
    }
    let text = match read_blob(repo, incoming.id)? {
        Ok(text) => text,
        Err(bytes) => return Ok(Err(Refusal::TooLarge { bytes })),
    };
    Ok(match admit(target, &text) {
        Ok(()) => Ok(text),
        Err(reason) => Err(Refusal::Invalid(reason)),
    })
}

fn up_to_date(tip: ObjectId, attempts: u32) -> MergeReport {
    MergeReport {
        kind: MergeKind::UpToDate,
        notes_commit: tip,
        taken: 0,
        resolved: 0,
        kept: 0,
        refused: Vec::new(),
        too_large: Vec::new(),
        attempts,
    }
}

fn repo_tree(repo: &git2::Repository, id: git2::Oid) -> Result<git2::Tree<'_>> {
    repo.find_tree(id)
        .map_err(git("reading the merged notes tree"))
}

/// The merge commit's message: where the notes came from, and what of theirs
/// was refused or not followed, so the notes history says it too.
fn merge_message(theirs: ObjectId, report: &MergeReport) -> String {
    let mut message = format!("Notes merged from {}\n", theirs.short());
    if report.kept > 0 || !report.refused.is_empty() {
        message.push('\n');
    }
    if report.kept > 0 {
        message.push_str(&format!(
            "Kept {} local notes the other side no longer has.\n",
            report.kept
        ));
    }
    for (target, refusal) in report.refused.iter().take(50) {
        message.push_str(&format!(
            "Refused the note of {}: {refusal}\n",
            target.to_hex()
        ));
    }
    if report.refused.len() > 50 {
        message.push_str(&format!(
            "Refused {} more notes.\n",
            report.refused.len() - 50
        ));
    }
    message
}

/// The notes that differ between `old` (`None`: the empty tree) and `new`,
/// keyed by commit id. Paths are joined into ids, so a note that only moved
/// between a flat and a fanned-out place is no change.
///
/// The two trees are walked side by side and a subtree is entered only where
/// the two differ, so the cost follows the change, not the number of notes
/// (a fanned-out tree of 10,000 notes with one new note: two trees of 256
/// entries and two small ones read). Trees that cannot hold a note (their
/// path already 40 characters or more, separators aside) are not entered, so
/// the walk is at most 40 levels deep.
pub(crate) fn changes(
    repo: &git2::Repository,
    old: Option<&git2::Tree<'_>>,
    new: &git2::Tree<'_>,
) -> Result<HashMap<ObjectId, Change>> {
    let mut out: HashMap<ObjectId, Change> = HashMap::new();
    compare(repo, old, Some(new), "", &mut out)?;
    out.retain(|_, change| change.old != change.new);
    Ok(out)
}

/// One side of a tree entry: its id and file mode.
type Side = Option<(git2::Oid, i32)>;

const TREE_MODE: i32 = 0o040000;

/// Records in `out` the notes of `old` and `new` (trees at `prefix`) below
/// every name whose entries differ.
fn compare(
    repo: &git2::Repository,
    old: Option<&git2::Tree<'_>>,
    new: Option<&git2::Tree<'_>>,
    prefix: &str,
    out: &mut HashMap<ObjectId, Change>,
) -> Result<()> {
    let mut names: BTreeMap<String, (Side, Side)> = BTreeMap::new();
    for (tree, is_new) in [(old, false), (new, true)] {
        for entry in tree.into_iter().flat_map(|t| t.iter()) {
            let Ok(name) = std::str::from_utf8(entry.name_bytes()) else {
                continue;
            };
            let side = (entry.id(), entry.filemode());
            let slot = names.entry(name.to_owned()).or_default();
            if is_new {
                slot.1 = Some(side);
            } else {
                slot.0 = Some(side);
            }
        }
    }
    let subtree = |side: Side| -> Result<Option<git2::Tree<'_>>> {
        match side {
            Some((id, TREE_MODE)) => repo
                .find_tree(id)
                .map(Some)
                .map_err(git("reading a notes tree")),
            _ => Ok(None),
        }
    };
    for (name, (was, is)) in names {
        if was == is {
            continue;
        }
        let path = format!("{prefix}{name}");
        for (side, is_new) in [(was, false), (is, true)] {
            if let Some((id, mode)) = side
                && mode != TREE_MODE
                && let Some(target) = note_target(std::path::Path::new(&path))
            {
                let change = out.entry(target).or_default();
                let entry = Some(Entry { id, mode });
                if is_new {
                    change.new = entry;
                } else {
                    change.old = entry;
                }
            }
        }
        if path.bytes().filter(|&b| b != b'/').count() < 40 {
            let (was_tree, is_tree) = (subtree(was)?, subtree(is)?);
            if was_tree.is_some() || is_tree.is_some() {
                compare(
                    repo,
                    was_tree.as_ref(),
                    is_tree.as_ref(),
                    &format!("{path}/"),
                    out,
                )?;
            }
        }
    }
    Ok(())
}

/// The commit a notes-tree path names (`<40 hex>`, `ab/<38 hex>`, …).
fn note_target(path: &std::path::Path) -> Option<ObjectId> {
    let text = path.to_str()?;
    let hex: String = text.split('/').collect();
    if hex.len() != 40 {
        return None;
    }
    hex.parse().ok()
}

/// Where a new note for `hex` goes in `tree`: inside the fan-out directories
/// the tree already has for it, else flat.
fn placement(repo: &git2::Repository, tree: &git2::Tree<'_>, hex: &str) -> Result<String> {
    Ok(match fanout_dir(repo, tree, hex)? {
        Some(sub) => format!("{}/{}", &hex[..2], placement(repo, &sub, &hex[2..])?),
        None => hex.to_owned(),
    })
}

/// `tree` with `edits` applied, in one pass.
fn apply(repo: &git2::Repository, tree: &git2::Tree<'_>, edits: &[Edit]) -> Result<git2::Oid> {
    let mode = git2::FileMode::Blob;
    let mut update = git2::build::TreeUpdateBuilder::new();
    for edit in edits {
        match edit {
            Edit::Set(target, blob) => {
                let hex = target.to_hex();
                let path = match locate(repo, tree, &hex)? {
                    Some((path, _)) => path,
                    None => placement(repo, tree, &hex)?,
                };
                update.upsert(path.as_str(), *blob, mode);
            }
        }
    }
    update
        .create_updated(repo, tree)
        .map_err(git("writing a notes tree"))
}
