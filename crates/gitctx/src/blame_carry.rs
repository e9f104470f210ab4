//! Blame carried forward: HEAD's blame computed from a cached blame at an
//! ancestor, so that a read after a new commit does not start over.
//!
//! **Why it is exact.** `git blame` at a commit C hands each line of C's file
//! to a parent under which it is unchanged, comparing the two versions of the
//! file with xdiff and the options it is given — here always Myers with the
//! indent heuristic (`DIFF_OPTIONS` in `blame`), whatever the configuration
//! says; a line no parent takes stays C's. So along a first-parent chain
//! A → C1 → … → Cn = HEAD of commits that each have one parent and the path
//! as a regular file, with no rename on the way, a line of HEAD either
//! reaches A through the per-commit diffs — and then its blame is A's blame of
//! the line it reached — or stops at the first Ci whose diff added it — and
//! then Ci is its commit, at its line number in Ci. Carrying replays exactly
//! those per-commit diffs, computed in-process by the same diff code blame
//! runs: libgit2 vendors git's xdiff, called here with blame's options (Myers,
//! the indent heuristic, no context) on the contents of the two blobs, with
//! no path behind them (so no attribute or driver), after git's own step for
//! diffs without context — the common tail is cut, in 1 KiB blocks, back to
//! a line end ([`trim_common_tail`]) — so the hunks are the ones `git blame`
//! sees, whatever the configuration or `.gitattributes` say. (Checked
//! against `git diff-tree -U0 --diff-algorithm=myers --indent-heuristic` on
//! every non-merge commit of ripgrep's 25 most changed files, 3,200 diffs:
//! all equal; without the tail cut, 11 differ.) A single diff from A to HEAD
//! would not do, since a line deleted and re-added in between, or a repeated
//! line, can pair up differently across several commits than step by step.
//! Each blob is read once per thread (a step's new file is the next step's
//! old one; A's, read for its length, is the first step's), and a long
//! chain is diffed on two threads, each with its own libgit2 handle: no git
//! process, where `git diff-tree` inflated every blob twice.
//!
//! **Merges.** A merge whose file equals its first parent's hands every line
//! to it (git checks the first parent first): an identity step. A merge whose
//! file differs from its first parent's while every other parent has the path
//! as a regular file with other contents hands the lines unchanged against
//! the first parent to it (replayed); its other lines may come from the other
//! parents, so they are left unknown. Any other merge ends the chain.
//!
//! **Unknown lines** — those that reach an uncovered line of A's cached
//! blame, or a merge's own lines — are blamed at HEAD with one `git blame -L`
//! per gap in a single process (by the blame cache): that is exact by
//! definition. So a carried read starts no git process for blame, or one for
//! the gaps (plus git's `--version`, asked once per program run, see
//! `command`).
//!
//! **Configuration cannot make it wrong.** Nothing here reads the user's
//! configuration: libgit2, which walks the chain and diffs the steps, is
//! given every diff option and no path (so no attribute, diff driver or
//! configuration applies), and the blame is told the same options on its
//! command line, so what any configuration says cannot set them apart.
//!
//! **No carrying** (a fresh blame, as before) when: the engine is libgit2
//! (its blame is not git's: it passes lines on by its own rules); the repository is shallow, has grafts or replace
//! refs (parents then differ between libgit2's walk and git's); the chain
//! meets a root commit, a commit whose parent lacks the path or has it as
//! another kind of entry (added, deleted, renamed, type-changed), or a merge
//! of the last kind above; a version of the file on the way is larger than
//! [`MAX_CARRY_BLOB_BYTES`]; or no cached blame of the path under the same
//! settings is found within [`MAX_CARRY_STEPS`] first-parent steps.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use crate::blame::{BlameEntry, merge_adjacent};
use crate::known::Known;
use crate::oid::ObjectId;
use crate::repo::{Repo, count_lines};

/// How many first-parent steps back from HEAD a cached blame is looked for.
/// An agent commits a few times between reads; 64 steps cover a busy day
/// while the walk (one tree lookup per step, in-process) stays under a few
/// milliseconds.
pub const MAX_CARRY_STEPS: u32 = 64;

/// The largest version of a file carrying reads into memory (two at a time
/// per thread); past it the file is blamed afresh, by git.
pub const MAX_CARRY_BLOB_BYTES: usize = 64 * 1024 * 1024;

/// Diff steps from which a chain is diffed on two threads: below it, a second
/// libgit2 handle costs more than it saves.
const PARALLEL_STEPS: usize = 6;

/// What carrying produced: what is known at HEAD, and how.
#[derive(Debug)]
pub(crate) struct Carried {
    pub(crate) known: Known,
    /// The ancestor whose blame was carried.
    pub(crate) from: ObjectId,
    /// First-parent steps from `from` to HEAD.
    pub(crate) steps: u32,
}

/// How one commit of the chain passes its parent's lines on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StepKind {
    /// The file is the parent's: every line passes unchanged.
    Same,
    /// One parent: unchanged lines pass, added ones are the commit's.
    Diff,
    /// A merge: unchanged lines (against the first parent) pass, the others
    /// are unknown.
    MergeDiff,
}

#[derive(Debug, Clone, Copy)]
struct Step {
    commit: ObjectId,
    kind: StepKind,
    /// The path's blob in the commit, and in its first parent.
    blob: git2::Oid,
    parent_blob: git2::Oid,
}

/// A line's blame while replaying: an index into the table of (commit, path,
/// boundary) and the line's number in that commit's file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Line {
    source: u32,
    original: u32,
}

/// Where a line's blame points: (commit, path in it, boundary).
type Source = (ObjectId, String, bool);

/// The replayed file: each line's blame (`None`: unknown) and the sources
/// they point into.
type Replayed = (Vec<Option<Line>>, Vec<Source>);

/// One step's diff: the removed old lines and the added new lines, sorted.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Changes {
    removed: Vec<u32>,
    added: Vec<u32>,
}

/// Whether carrying may be tried in `repo` at all (see the module docs):
/// not when commits' parents may differ between libgit2's walk and git's.
/// Nothing here reads configuration: the diff options are fixed
/// (`diff_options`).
pub(crate) fn allowed(repo: &Repo) -> bool {
    let common = repo.common_dir();
    if ["shallow", "info/grafts"]
        .iter()
        .any(|name| std::fs::symlink_metadata(common.join(name)).is_ok())
    {
        return false;
    }
    !repo
        .inner
        .references_glob("refs/replace/*")
        .map(|mut refs| refs.next().is_some())
        .unwrap_or(true)
}

/// `path`'s blob in `commit` when it is a regular (possibly executable) file.
fn regular_blob(commit: &git2::Commit<'_>, path: &str) -> Option<git2::Oid> {
    let tree = commit.tree().ok()?;
    let entry = tree.get_path(Path::new(path)).ok()?;
    matches!(entry.filemode(), 0o100644 | 0o100755).then(|| entry.id())
}

impl Repo {
    /// Carries a cached blame of `path` from an ancestor of `head` to `head`
    /// (see the module docs). `cached` lists the commits the cache holds a
    /// blame of `path` at; `load` reads one for a file of the given length.
    /// `None` when nothing can be carried; the caller then blames afresh.
    pub(crate) fn carry_blame(
        &self,
        head: ObjectId,
        path: &str,
        head_len: u32,
        cached: &HashSet<ObjectId>,
        load: impl Fn(ObjectId, u32) -> Known,
    ) -> Option<Carried> {
        let (from, from_blob, steps) = self.carry_chain(head, path, cached)?;
        let blob = read_bounded(&self.inner, from_blob)?;
        let from_len = count_lines(blob.content());
        let known = load(from, from_len);
        if known.entries.is_empty() {
            return None;
        }
        let diffs: Vec<&Step> = steps.iter().filter(|s| s.kind != StepKind::Same).collect();
        let changes = self.step_diffs(&diffs, blob)?;
        let replayed = replay(&known, from_len, &steps, &changes, path)?;
        let known = to_known(replayed, head_len)?;
        Some(Carried {
            known,
            from,
            steps: u32::try_from(steps.len()).unwrap_or(u32::MAX),
        })
    }

    /// The first-parent chain from `head` back to the nearest commit in
    /// `cached`: that commit, its blob of `path`, and the steps, oldest
    /// first. `None` when the chain breaks first (see the module docs).
    fn carry_chain(
        &self,
        head: ObjectId,
        path: &str,
        cached: &HashSet<ObjectId>,
    ) -> Option<(ObjectId, git2::Oid, Vec<Step>)> {
        let mut commit = self.inner.find_commit(head.to_git()).ok()?;
        let mut blob = regular_blob(&commit, path)?;
        let mut steps = Vec::new();
        for _ in 0..MAX_CARRY_STEPS {
            let parents: Vec<git2::Commit<'_>> = commit.parents().collect();
            // A root, or a commit whose parents could not all be read.
            if parents.is_empty() || parents.len() != commit.parent_count() {
                return None;
            }
            let first = &parents[0];
            let parent_blob = regular_blob(first, path)?;
            let kind = if parent_blob == blob {
                StepKind::Same
            } else if parents.len() == 1 {
                StepKind::Diff
            } else if parents[1..]
                .iter()
                .all(|p| regular_blob(p, path).is_some_and(|b| b != blob))
            {
                StepKind::MergeDiff
            } else {
                return None;
            };
            steps.push(Step {
                commit: ObjectId::from_git(commit.id()),
                kind,
                blob,
                parent_blob,
            });
            let parent_id = ObjectId::from_git(first.id());
            if cached.contains(&parent_id) {
                steps.reverse();
                return Some((parent_id, parent_blob, steps));
            }
            commit = first.clone();
            blob = parent_blob;
        }
        None
    }

    /// Each step's diff of its file against its first parent's (see the
    /// module docs), on two threads for a long chain; `None` when a blob
    /// cannot be read or is too large.
    /// `from` is A's blob, read already: the first step's old file, unless a
    /// step that kept the file came first.
    fn step_diffs(
        &self,
        steps: &[&Step],
        from: git2::Blob<'_>,
    ) -> Option<HashMap<ObjectId, Changes>> {
        if steps.len() < PARALLEL_STEPS
            || std::thread::available_parallelism().map_or(1, |n| n.get()) < 2
        {
            return diff_steps(&self.inner, steps, Some(from));
        }
        let (older, newer) = steps.split_at(steps.len() / 2);
        let git_dir = self.inner.path().to_path_buf();
        std::thread::scope(|scope| {
            let other = std::thread::Builder::new()
                .name("gitctx-carry".to_owned())
                .spawn_scoped(scope, move || {
                    let repo = git2::Repository::open(&git_dir).ok()?;
                    diff_steps(&repo, newer, None)
                });
            let Ok(other) = other else {
                // No second thread to be had: one after the other.
                return diff_steps(&self.inner, steps, Some(from));
            };
            let mut changes = diff_steps(&self.inner, older, Some(from))?;
            changes.extend(other.join().ok().flatten()?);
            Some(changes)
        })
    }
}

/// `id`'s blob in `repo`, unless it is larger than [`MAX_CARRY_BLOB_BYTES`]
/// (its size is read from the object's header, before it is inflated).
fn read_bounded(repo: &git2::Repository, id: git2::Oid) -> Option<git2::Blob<'_>> {
    let (size, _) = repo.odb().ok()?.read_header(id).ok()?;
    (size <= MAX_CARRY_BLOB_BYTES)
        .then(|| repo.find_blob(id).ok())
        .flatten()
}

/// The diffs of consecutive `steps` (oldest first) in `repo`, each blob read
/// once: a step's file is the next step's parent's, and the first step's may
/// be `first`, read by the caller.
fn diff_steps<'r>(
    repo: &'r git2::Repository,
    steps: &[&Step],
    first: Option<git2::Blob<'r>>,
) -> Option<HashMap<ObjectId, Changes>> {
    let mut out = HashMap::with_capacity(steps.len());
    let mut last = first;
    for step in steps {
        let old = match last.take() {
            Some(blob) if blob.id() == step.parent_blob => blob,
            _ => read_bounded(repo, step.parent_blob)?,
        };
        let new = read_bounded(repo, step.blob)?;
        out.insert(step.commit, step_changes(&old, &new)?);
        last = Some(new);
    }
    Some(out)
}

/// The lines the blob `new` removes from `old` and adds, as `git blame`
/// diffs them ([`cut_changes`] after [`trim_common_tail`]). When nothing is
/// cut, the blobs themselves are diffed, with an empty path: libgit2 then
/// neither hashes them again, as it does buffers, nor looks a diff driver up
/// in the repository's attributes, which it does for any other path.
fn step_changes(old: &git2::Blob<'_>, new: &git2::Blob<'_>) -> Option<Changes> {
    let (kept_old, kept_new) = trim_common_tail(old.content(), new.content());
    if kept_old.len() < old.content().len() {
        return cut_changes(kept_old, kept_new);
    }
    let bare = Some(Path::new(""));
    let patch = git2::Patch::from_blobs(old, bare, new, bare, Some(&mut diff_options())).ok()?;
    patch_changes(&patch)
}

/// The lines `new` removes from `old` and adds, two texts whose common tail
/// is cut already ([`trim_common_tail`]), as `git blame` diffs them: git's
/// xdiff (libgit2's copy) with Myers and the indent heuristic, no context.
/// The diff is of two buffers, with no repository and no path behind them, so
/// no attribute, diff driver or configuration can take part (libgit2 looks a
/// blob's driver up in its repository's attributes).
fn cut_changes(old: &[u8], new: &[u8]) -> Option<Changes> {
    let patch = git2::Patch::from_buffers(old, None, new, None, Some(&mut diff_options())).ok()?;
    patch_changes(&patch)
}

/// Blame's diff options: no context, Myers (libgit2's default algorithm), the
/// indent heuristic, every file as text.
fn diff_options() -> git2::DiffOptions {
    let mut options = git2::DiffOptions::new();
    options
        .context_lines(0)
        .interhunk_lines(0)
        .indent_heuristic(true)
        .force_text(true);
    options
}

/// The removed and added lines of `patch`'s hunks.
fn patch_changes(patch: &git2::Patch<'_>) -> Option<Changes> {
    let mut changes = Changes::default();
    for index in 0..patch.num_hunks() {
        let (hunk, _) = patch.hunk(index).ok()?;
        // A count of 0 names the line before the hunk: no line at all.
        changes
            .removed
            .extend((0..hunk.old_lines()).map(|k| hunk.old_start() + k));
        changes
            .added
            .extend((0..hunk.new_lines()).map(|k| hunk.new_start() + k));
    }
    Some(changes)
}

/// `old` and `new` without the tail they share, as git cuts it before every
/// diff without context (which blame's are): whole 1 KiB blocks equal at the
/// two ends are dropped while both texts still have one, then the cut moves
/// forward past the first line end in what was dropped, so both texts keep
/// whole lines. What is cut can hold no change, but it would otherwise take
/// part in how xdiff pairs lines up and slides hunks.
fn trim_common_tail<'a>(old: &'a [u8], new: &'a [u8]) -> (&'a [u8], &'a [u8]) {
    const BLOCK: usize = 1024;
    let shorter = old.len().min(new.len());
    let mut cut = 0;
    while cut + BLOCK <= shorter
        && old[old.len() - cut - BLOCK..old.len() - cut]
            == new[new.len() - cut - BLOCK..new.len() - cut]
    {
        cut += BLOCK;
    }
    // Give back the dropped bytes up to and including the first line end.
    let dropped = &old[old.len() - cut..];
    let back = dropped
        .iter()
        .position(|&b| b == b'\n')
        .map_or(cut, |at| at + 1);
    (
        &old[..old.len() - cut + back],
        &new[..new.len() - cut + back],
    )
}

/// Replays `steps` over A's known blame (a file of `from_len` lines): the
/// blame of each line of HEAD's file, `None` where unknown, and the table of
/// sources the lines point into.
fn replay(
    known: &Known,
    from_len: u32,
    steps: &[Step],
    changes: &HashMap<ObjectId, Changes>,
    path: &str,
) -> Option<Replayed> {
    let mut sources: Vec<Source> = Vec::new();
    let mut index: HashMap<Source, u32> = HashMap::new();
    let mut source_of = |key: Source| -> u32 {
        *index.entry(key.clone()).or_insert_with(|| {
            sources.push(key);
            u32::try_from(sources.len() - 1).unwrap_or(u32::MAX)
        })
    };
    let mut lines: Vec<Option<Line>> = vec![None; usize::try_from(from_len).ok()?];
    for e in &known.entries {
        let source = source_of((e.commit, e.original_path.clone(), e.boundary));
        for k in 0..e.len() {
            let slot = lines.get_mut(usize::try_from(e.final_start + k - 1).ok()?)?;
            *slot = Some(Line {
                source,
                original: e.original_start + k,
            });
        }
    }
    for step in steps {
        if step.kind == StepKind::Same {
            continue;
        }
        let diff = changes.get(&step.commit)?;
        let own =
            (step.kind == StepKind::Diff).then(|| source_of((step.commit, path.to_owned(), false)));
        lines = apply(&lines, diff, own)?;
    }
    Some((lines, sources))
}

/// One step: the new file's lines from the old file's, through `diff`. Added
/// lines are `own`'s (the commit's), or unknown for `None`.
fn apply(old: &[Option<Line>], diff: &Changes, own: Option<u32>) -> Option<Vec<Option<Line>>> {
    let old_len = u32::try_from(old.len()).ok()?;
    let removed = u32::try_from(diff.removed.len()).ok()?;
    let added = u32::try_from(diff.added.len()).ok()?;
    if diff.removed.last().is_some_and(|&l| l > old_len) || removed > old_len {
        return None;
    }
    let new_len = old_len - removed + added;
    let mut out = Vec::with_capacity(usize::try_from(new_len).ok()?);
    let mut removed = diff.removed.iter().peekable();
    let mut added = diff.added.iter().peekable();
    let mut next_old = 1u32;
    for n in 1..=new_len {
        if added.peek() == Some(&&n) {
            added.next();
            out.push(own.map(|source| Line {
                source,
                original: n,
            }));
            continue;
        }
        while removed.peek() == Some(&&next_old) {
            removed.next();
            next_old += 1;
        }
        out.push(*old.get(usize::try_from(next_old - 1).ok()?)?);
        next_old += 1;
    }
    // Every added and removed line was used, and the old file ran out exactly.
    while removed.peek() == Some(&&next_old) {
        removed.next();
        next_old += 1;
    }
    (added.next().is_none() && removed.next().is_none() && next_old == old_len + 1).then_some(out)
}

/// The replayed lines of a `len`-line file as what the cache knows.
fn to_known((lines, sources): Replayed, len: u32) -> Option<Known> {
    if u32::try_from(lines.len()).ok()? != len {
        return None;
    }
    let mut covered: Vec<(u32, u32)> = Vec::new();
    let mut entries = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(line) = line else { continue };
        let n = u32::try_from(i + 1).ok()?;
        match covered.last_mut() {
            Some(last) if last.1 + 1 == n => last.1 = n,
            _ => covered.push((n, n)),
        }
        let (commit, path, boundary) = sources.get(usize::try_from(line.source).ok()?)?;
        entries.push(BlameEntry {
            commit: *commit,
            original_path: path.clone(),
            original_start: line.original,
            original_end: line.original,
            final_start: n,
            final_end: n,
            boundary: *boundary,
        });
    }
    let known = Known {
        covered,
        entries: merge_adjacent(entries),
    };
    known.consistent(len).then_some(known)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The diff of two whole texts, as a step's.
    fn text_changes(old: &[u8], new: &[u8]) -> Option<Changes> {
        let (old, new) = trim_common_tail(old, new);
        cut_changes(old, new)
    }

    fn line(source: u32, original: u32) -> Option<Line> {
        Some(Line { source, original })
    }

    #[test]
    fn the_common_tail_is_cut_in_blocks_back_to_a_line_end() {
        // Short texts: nothing is cut.
        assert_eq!(
            trim_common_tail(b"a\nb\n", b"x\nb\n"),
            (&b"a\nb\n"[..], &b"x\nb\n"[..])
        );
        // 3,000 shared bytes of 10-byte lines: two whole blocks (2,048
        // bytes) drop, then the cut moves past the first line end in them.
        let tail: Vec<u8> = (0..300)
            .flat_map(|n| format!("line {n:04}\n").into_bytes())
            .collect();
        let old = [b"old\n".as_slice(), &tail].concat();
        let new = [b"new text\n".as_slice(), &tail].concat();
        let (o, n) = trim_common_tail(&old, &new);
        let dropped = 2_048
            - (tail[tail.len() - 2_048..]
                .iter()
                .position(|&b| b == b'\n')
                .unwrap()
                + 1);
        assert_eq!(old.len() - o.len(), dropped);
        assert_eq!(new.len() - n.len(), dropped);
        assert!(o.ends_with(b"\n") && n.ends_with(b"\n"));
        assert_eq!(&old[o.len()..], &new[n.len()..]);
        // A shared tail without a line end is given back whole.
        let flat = vec![b'x'; 3_000];
        let (a, b) = (
            [b"a".as_slice(), &flat].concat(),
            [b"b".as_slice(), &flat].concat(),
        );
        let (o, n) = trim_common_tail(&a, &b);
        assert_eq!((o.len(), n.len()), (3_001, 3_001));
    }

    #[test]
    fn the_cut_tail_makes_the_diff_gits() {
        // Two versions of a lockfile-like text that differ by one of two
        // equal lines: `git diff --no-index -U0 --diff-algorithm=myers
        // --indent-heuristic` (and blame) removes line 72. Without the cut,
        // the lines of the shared tail count when xdiff weighs which lines
        // may pair, and it removes line 71.
        let old = include_bytes!("../tests/data/tail_cut_old.txt");
        let new = include_bytes!("../tests/data/tail_cut_new.txt");
        assert_eq!(
            text_changes(old, new),
            Some(Changes {
                removed: vec![72],
                added: vec![]
            })
        );
        assert_eq!(
            cut_changes(old, new),
            Some(Changes {
                removed: vec![71],
                added: vec![]
            })
        );
    }

    #[test]
    fn step_changes_name_removed_and_added_lines() {
        let old = b"a\nb\nc\nd\n";
        let new = b"a\nc\nX\nY\nd\ne\n";
        assert_eq!(
            text_changes(old, new),
            Some(Changes {
                removed: vec![2],
                added: vec![3, 4, 6]
            })
        );
        assert_eq!(text_changes(old, old), Some(Changes::default()));
        assert_eq!(
            text_changes(b"", b"x\n"),
            Some(Changes {
                removed: vec![],
                added: vec![1]
            })
        );
        // Binary-looking content is diffed as text, as blame does.
        assert_eq!(
            text_changes(b"a\0\nb\n", b"a\0\nc\n"),
            Some(Changes {
                removed: vec![2],
                added: vec![2]
            })
        );
    }

    #[test]
    fn applying_a_diff_shifts_kept_lines_and_attributes_added_ones() {
        let old = vec![line(0, 1), line(0, 2), None, line(1, 9)];
        let diff = Changes {
            removed: vec![2],
            added: vec![1, 4],
        };
        assert_eq!(
            apply(&old, &diff, Some(7)),
            Some(vec![line(7, 1), line(0, 1), None, line(7, 4), line(1, 9)])
        );
        assert_eq!(
            apply(&old, &diff, None),
            Some(vec![None, line(0, 1), None, None, line(1, 9)])
        );
        let past_the_end = Changes {
            removed: vec![5],
            added: vec![],
        };
        assert_eq!(apply(&old, &past_the_end, None), None);
        let too_many = Changes {
            removed: vec![],
            added: vec![9],
        };
        assert_eq!(apply(&old, &too_many, None), None);
    }
}
