//! Joining two histories of one notes ref, and writing many notes in one
//! commit: what `ultragit sync` and `ultragit import` build on.
//!
//! [`Notes::merge_from`] merges another notes commit (a teammate's, fetched into
//! a tracking ref) into the local notes ref, in-process:
//! - theirs already contained in ours → nothing to do; ours contained in theirs →
//!   fast-forward; otherwise a merge commit with two parents (ours first) whose
//!   tree is the three-way merge of the two notes trees against their merge base
//!   (the empty tree when the histories are unrelated, as two clones that each
//!   ran `ultragit init` are).
//! - Only notes changed since the merge base are looked at (the trees are
//!   diffed), so a merge costs what changed, not how many notes exist.
//! - A note changed on one side only is taken as it is, its removal included. A
//!   note changed on both sides to different texts is resolved by the caller's
//!   function ([`Resolution`]); a note one side removed and the other changed is
//!   kept (no side loses a note). A note over [`MAX_NOTE_BYTES`] is never loaded:
//!   taken from one side it moves by id; against a change on the other side ours
//!   is kept and the id is reported in [`MergeReport::too_large`].
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
    /// Notes added or changed by their side only, taken as they were.
    pub taken: usize,
    /// Notes their side removed (and ours left alone), removed here too.
    pub removed: usize,
    /// Commits whose notes differed on both sides, given to the resolver.
    pub resolved: usize,
    /// Commits changed on both sides where one note is over
    /// [`MAX_NOTE_BYTES`](crate::MAX_NOTE_BYTES): ours was kept unread.
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

/// The net change of one note between two trees: its blob before and after.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Change {
    old: Option<git2::Oid>,
    pub(crate) new: Option<git2::Oid>,
}

/// One edit of the result tree.
enum Edit {
    Set(ObjectId, git2::Oid),
    Remove(ObjectId),
}

impl Notes<'_> {
    /// Merges the notes commit `theirs` into this ref (see the module docs).
    /// `resolve(commit, ours, theirs)` decides for a commit whose notes differ
    /// on both sides; it may be called again for the same commit when a local
    /// writer forces the merge to start over.
    pub fn merge_from(
        &self,
        theirs: ObjectId,
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
            let outcome = match ours {
                None => {
                    let report = self.fast_forward(None, &theirs_commit, attempt)?;
                    self.compare_and_swap(None, theirs_git, "notes: fast-forward")
                        .map(|()| report)
                }
                Some(ours) if ours == theirs_git => return Ok(up_to_date(theirs, attempt)),
                Some(ours)
                    if repo
                        .graph_descendant_of(ours, theirs_git)
                        .map_err(git("comparing notes histories"))? =>
                {
                    return Ok(up_to_date(ObjectId::from_git(ours), attempt));
                }
                Some(ours)
                    if repo
                        .graph_descendant_of(theirs_git, ours)
                        .map_err(git("comparing notes histories"))? =>
                {
                    let report = self.fast_forward(Some(ours), &theirs_commit, attempt)?;
                    self.compare_and_swap(Some(ours), theirs_git, "notes: fast-forward")
                        .map(|()| report)
                }
                Some(ours) => {
                    let (commit, mut report) =
                        self.merge_commit(ours, &theirs_commit, &mut resolve)?;
                    report.attempts = attempt;
                    self.compare_and_swap(Some(ours), commit, "notes: merge")
                        .map(|()| report)
                }
            };
            match outcome {
                Ok(report) => return Ok(report),
                Err(err) if is_race(&err) => backoff.wait(),
                Err(err) => return Err(git("updating the notes ref")(err)),
            }
        }
        Err(Error::Contended {
            refname: self.refname.clone(),
            attempts: MAX_MERGE_ATTEMPTS,
        })
    }

    /// The report of a fast-forward from `ours` to `theirs`: what it brings,
    /// counted from the diff of the two trees (no note is read).
    fn fast_forward(
        &self,
        ours: Option<git2::Oid>,
        theirs: &git2::Commit<'_>,
        attempts: u32,
    ) -> Result<MergeReport> {
        let repo = &self.repo.inner;
        let ours_tree = match ours {
            Some(id) => Some(
                repo.find_commit(id)
                    .and_then(|c| c.tree())
                    .map_err(git("reading the notes tree"))?,
            ),
            None => None,
        };
        let theirs_tree = theirs.tree().map_err(git("reading the notes tree"))?;
        let brought = changes(repo, ours_tree.as_ref(), &theirs_tree)?;
        let removed = brought.values().filter(|c| c.new.is_none()).count();
        Ok(MergeReport {
            kind: MergeKind::FastForward,
            taken: brought.len() - removed,
            removed,
            ..up_to_date(ObjectId::from_git(theirs.id()), attempts)
        })
    }

    /// Builds the merge commit of `ours` and `theirs` (not yet on the ref).
    fn merge_commit(
        &self,
        ours: git2::Oid,
        theirs: &git2::Commit<'_>,
        resolve: &mut impl FnMut(ObjectId, &str, &str) -> Resolution,
    ) -> Result<(git2::Oid, MergeReport)> {
        let repo = &self.repo.inner;
        let ours_commit = repo
            .find_commit(ours)
            .map_err(git("reading the notes commit"))?;
        let ours_tree = ours_commit.tree().map_err(git("reading the notes tree"))?;
        let theirs_tree = theirs.tree().map_err(git("reading the notes tree"))?;
        let base_tree = match repo.merge_base(ours, theirs.id()) {
            Ok(base) => Some(
                repo.find_commit(base)
                    .and_then(|c| c.tree())
                    .map_err(git("reading the notes merge base"))?,
            ),
            Err(err) if err.code() == git2::ErrorCode::NotFound => None,
            Err(err) => return Err(git("finding the notes merge base")(err)),
        };
        let ours_changes = changes(repo, base_tree.as_ref(), &ours_tree)?;
        let theirs_changes = changes(repo, base_tree.as_ref(), &theirs_tree)?;

        let mut report = MergeReport {
            kind: MergeKind::Merged,
            notes_commit: ObjectId::from_git(ours),
            taken: 0,
            removed: 0,
            resolved: 0,
            too_large: Vec::new(),
            attempts: 1,
        };
        let mut edits = Vec::new();
        let mut targets: Vec<&ObjectId> = theirs_changes.keys().collect();
        targets.sort();
        for &target in targets {
            let theirs_new = theirs_changes[&target].new;
            let Some(ours_change) = ours_changes.get(&target) else {
                match theirs_new {
                    Some(blob) => {
                        report.taken += 1;
                        edits.push(Edit::Set(target, blob));
                    }
                    None => {
                        report.removed += 1;
                        edits.push(Edit::Remove(target));
                    }
                }
                continue;
            };
            match (ours_change.new, theirs_new) {
                (a, b) if a == b => {}
                // One side removed it, the other changed it: keep the change.
                (Some(_), None) => {}
                (None, Some(blob)) => {
                    report.taken += 1;
                    edits.push(Edit::Set(target, blob));
                }
                (Some(a), Some(b)) => match (read_blob(repo, a)?, read_blob(repo, b)?) {
                    (Ok(ours_text), Ok(theirs_text)) => {
                        report.resolved += 1;
                        match resolve(target, &ours_text, &theirs_text) {
                            Resolution::Ours => {}
                            Resolution::Theirs => edits.push(Edit::Set(target, b)),
                            Resolution::Text(text) => {
                                let blob = repo
                                    .blob(text.as_bytes())
                                    .map_err(git("storing a merged note"))?;
                                edits.push(Edit::Set(target, blob));
                            }
                        }
                    }
                    _ => report.too_large.push(target),
                },
                (None, None) => {}
            }
        }

        // Nothing changed on our side since the base: their tree is the result.
        let tree = if ours_changes.is_empty() {
            theirs_tree.id()
        } else {
            apply(repo, &ours_tree, &edits)?
        };
        let tree = repo
            .find_tree(tree)
            .map_err(git("reading the merged notes tree"))?;
        let signature = signature(repo)?;
        let message = format!(
            "Notes merged from {}\n",
            ObjectId::from_git(theirs.id()).short()
        );
        let commit = repo
            .commit(
                None,
                &signature,
                &signature,
                &message,
                &tree,
                &[&ours_commit, theirs],
            )
            .map_err(git("writing a notes merge commit"))?;
        report.notes_commit = ObjectId::from_git(commit);
        Ok((commit, report))
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
                let existing = locate(repo, tree, &target.to_hex())?;
                let outcome = match existing {
                    None => Written::Added,
                    Some((_, blob)) => match read_blob(repo, blob)? {
                        Err(_) => Written::Kept,
                        Ok(text) if text == *incoming => Written::Kept,
                        Ok(text) => match resolve(*target, &text, incoming) {
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
                    },
                };
                if outcome != Written::Kept {
                    let blob = repo
                        .blob(incoming.as_bytes())
                        .map_err(git("storing a note"))?;
                    edits.push(Edit::Set(*target, blob));
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

fn up_to_date(tip: ObjectId, attempts: u32) -> MergeReport {
    MergeReport {
        kind: MergeKind::UpToDate,
        notes_commit: tip,
        taken: 0,
        removed: 0,
        resolved: 0,
        too_large: Vec::new(),
        attempts,
    }
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

/// One side of a tree entry: its id and whether it is a tree.
type Side = Option<(git2::Oid, bool)>;

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
            let side = match entry.kind() {
                Some(git2::ObjectType::Tree) => (entry.id(), true),
                Some(git2::ObjectType::Blob) => (entry.id(), false),
                _ => continue,
            };
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
            Some((id, true)) => repo
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
            if let Some((id, false)) = side
                && let Some(target) = note_target(std::path::Path::new(&path))
            {
                let change = out.entry(target).or_default();
                if is_new {
                    change.new = Some(id);
                } else {
                    change.old = Some(id);
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
            Edit::Remove(target) => {
                if let Some((path, _)) = locate(repo, tree, &target.to_hex())? {
                    update.remove(path.as_str());
                }
            }
        }
    }
    update
        .create_updated(repo, tree)
        .map_err(git("writing a notes tree"))
}
