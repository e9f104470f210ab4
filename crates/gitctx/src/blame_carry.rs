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
//! those per-commit diffs, produced by the same git with the same diff
//! options as the blame (`git diff-tree --stdin -p -U0`, one process for the
//! whole chain; options on its command line beat any configured algorithm, a
//! diff driver's included); a single diff from A to HEAD would not do, since
//! a line deleted and re-added in between, or a repeated line, can pair up
//! differently across several commits than step by step.
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
//! definition. So a carried read starts at most two git processes for blame
//! (plus git's `--version`, asked once per program run, see `command`).
//!
//! **Configuration cannot make it wrong.** Nothing here reads the user's
//! configuration: libgit2, which walks the chain, does not read the files
//! `GIT_CONFIG_GLOBAL` and `GIT_CONFIG_SYSTEM` name for git (nor honour
//! `GIT_CONFIG_NOSYSTEM`), and it need not — the blame and the diffs are both
//! told their options, so what any configuration says cannot set them apart.
//!
//! **No carrying** (a fresh blame, as before) when: the engine is libgit2
//! (its diff is not git's); the repository is shallow, has grafts or replace
//! refs (parents then differ between libgit2's walk and git's); the chain
//! meets a root commit, a commit whose parent lacks the path or has it as
//! another kind of entry (added, deleted, renamed, type-changed), or a merge
//! of the last kind above; or no cached blame of the path under the same
//! settings is found within [`MAX_CARRY_STEPS`] first-parent steps.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use crate::blame::{BlameEntry, DIFF_OPTIONS, merge_adjacent};
use crate::known::Known;
use crate::oid::ObjectId;
use crate::repo::{Repo, count_lines};

/// How many first-parent steps back from HEAD a cached blame is looked for.
/// An agent commits a few times between reads; 64 steps cover a busy day
/// while the walk (one tree lookup per step, in-process) stays under a few
/// milliseconds.
pub const MAX_CARRY_STEPS: u32 = 64;

/// What carrying produced: what is known at HEAD, and how.
#[derive(Debug)]
pub(crate) struct Carried {
    pub(crate) known: Known,
    /// The ancestor whose blame was carried.
    pub(crate) from: ObjectId,
    /// First-parent steps from `from` to HEAD.
    pub(crate) steps: u32,
    /// git processes started (0 or 1: the diff).
    pub(crate) processes: u32,
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
    parent: ObjectId,
    kind: StepKind,
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
/// ([`DIFF_OPTIONS`]).
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
        let blob = self.inner.find_blob(from_blob).ok()?;
        let from_len = count_lines(blob.content());
        let known = load(from, from_len);
        if known.entries.is_empty() {
            return None;
        }
        let diffs: Vec<&Step> = steps.iter().filter(|s| s.kind != StepKind::Same).collect();
        let changes = if diffs.is_empty() {
            HashMap::new()
        } else {
            self.step_diffs(path, &diffs).ok()?
        };
        let replayed = replay(&known, from_len, &steps, &changes, path)?;
        let known = to_known(replayed, head_len)?;
        Some(Carried {
            known,
            from,
            steps: u32::try_from(steps.len()).unwrap_or(u32::MAX),
            processes: u32::from(!diffs.is_empty()),
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
                parent: ObjectId::from_git(first.id()),
                kind,
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

    /// Each step's diff of `path` against its first parent, from one
    /// `git diff-tree --stdin` with the diff options blame uses
    /// ([`DIFF_OPTIONS`], which also override a diff driver's algorithm).
    fn step_diffs(
        &self,
        path: &str,
        steps: &[&Step],
    ) -> crate::error::Result<HashMap<ObjectId, Changes>> {
        let mut input = String::new();
        for step in steps {
            input.push_str(&format!("{} {}\n", step.commit, step.parent));
        }
        let cmd = self
            .git()
            .args([
                "diff-tree",
                "--stdin",
                "-r",
                "-p",
                "-U0",
                "--inter-hunk-context=0",
                "--no-renames",
                "--text",
                "--no-ext-diff",
                "--no-textconv",
                "--no-color",
            ])
            .args(DIFF_OPTIONS)
            .args(["--", path])
            .stdin(input);
        let output = cmd.run()?;
        parse_step_diffs(&output.stdout).map_err(|reason| crate::error::Error::Parse {
            args: cmd.display_args(),
            reason,
        })
    }
}

/// Parses `git diff-tree --stdin -p -U0` output: a commit id line, then that
/// commit's patch. Hunk bodies are read by the counts in their headers, so
/// content that looks like a header is never taken for one.
fn parse_step_diffs(output: &[u8]) -> Result<HashMap<ObjectId, Changes>, String> {
    let mut out: HashMap<ObjectId, Changes> = HashMap::new();
    let mut current: Option<ObjectId> = None;
    let mut lines = output.split(|&b| b == b'\n');
    while let Some(raw) = lines.next() {
        if raw.len() == 40 && raw.iter().all(u8::is_ascii_hexdigit) {
            let text = String::from_utf8_lossy(raw);
            let id: ObjectId = text.parse().map_err(|e| format!("{e}"))?;
            out.entry(id).or_default();
            current = Some(id);
            continue;
        }
        if !raw.starts_with(b"@@ ") {
            continue;
        }
        let Some(id) = current else {
            return Err("a hunk before any commit line".to_owned());
        };
        let header = String::from_utf8_lossy(raw);
        let (mut old, mut old_left, mut new, mut new_left) = parse_hunk_header(&header)?;
        let changes = out.entry(id).or_default();
        while old_left > 0 || new_left > 0 {
            let body = lines
                .next()
                .ok_or_else(|| format!("a hunk cut short after '{header}'"))?;
            match body.first() {
                Some(b'-') if old_left > 0 => {
                    changes.removed.push(old);
                    old += 1;
                    old_left -= 1;
                }
                Some(b'+') if new_left > 0 => {
                    changes.added.push(new);
                    new += 1;
                    new_left -= 1;
                }
                Some(b' ') if old_left > 0 && new_left > 0 => {
                    old += 1;
                    new += 1;
                    old_left -= 1;
                    new_left -= 1;
                }
                Some(b'\\') => {}
                _ => return Err(format!("unexpected line in the hunk '{header}'")),
            }
        }
    }
    for changes in out.values_mut() {
        changes.removed.sort_unstable();
        changes.added.sort_unstable();
    }
    Ok(out)
}

/// `@@ -a,b +c,d @@…` → (first old line, old count, first new line, new
/// count); a count of 0 names the line before, so the first line is `a + 1`.
fn parse_hunk_header(header: &str) -> Result<(u32, u32, u32, u32), String> {
    let bad = || format!("malformed hunk header '{header}'");
    let mut words = header.split(' ').skip(1);
    let old = words
        .next()
        .and_then(|w| w.strip_prefix('-'))
        .ok_or_else(bad)?;
    let new = words
        .next()
        .and_then(|w| w.strip_prefix('+'))
        .ok_or_else(bad)?;
    let range = |text: &str| -> Result<(u32, u32), String> {
        let (start, count) = match text.split_once(',') {
            Some((s, c)) => (s, c.parse::<u32>().map_err(|_| bad())?),
            None => (text, 1),
        };
        let start = start.parse::<u32>().map_err(|_| bad())?;
        let first = if count == 0 { start + 1 } else { start };
        Ok((first, count))
    };
    let (old_start, old_count) = range(old)?;
    let (new_start, new_count) = range(new)?;
    Ok((old_start, old_count, new_start, new_count))
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

    fn line(source: u32, original: u32) -> Option<Line> {
        Some(Line { source, original })
    }

    #[test]
    fn hunk_headers_name_their_lines() {
        assert_eq!(parse_hunk_header("@@ -3 +3 @@ fn x"), Ok((3, 1, 3, 1)));
        assert_eq!(parse_hunk_header("@@ -17,0 +18 @@"), Ok((18, 0, 18, 1)));
        assert_eq!(parse_hunk_header("@@ -1,9 +0,0 @@"), Ok((1, 9, 1, 0)));
        assert!(parse_hunk_header("@@ -x +1 @@").is_err());
        assert!(parse_hunk_header("@@ 1 1 @@").is_err());
    }

    #[test]
    fn step_diffs_are_read_by_counts() {
        let a = "1".repeat(40);
        let b = "2".repeat(40);
        // A removed line that looks like a file header, an added line that
        // looks like a commit line: both are content.
        let out = format!(
            "{a}\ndiff --git a/f b/f\nindex 1..2 100644\n--- a/f\n+++ b/f\n\
             @@ -2 +2 @@ ctx\n--- a/f\n+{b}\n@@ -5,0 +6,2 @@\n+x\n+y\n\\ No newline at end of file\n\
             {b}\ndiff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,2 +0,0 @@\n-p\n-q\n"
        );
        let parsed = parse_step_diffs(out.as_bytes()).unwrap();
        let a: ObjectId = a.parse().unwrap();
        let b: ObjectId = b.parse().unwrap();
        assert_eq!(
            parsed[&a],
            Changes {
                removed: vec![2],
                added: vec![2, 6, 7]
            }
        );
        assert_eq!(
            parsed[&b],
            Changes {
                removed: vec![1, 2],
                added: vec![]
            }
        );
        assert!(parse_step_diffs(b"@@ -1 +1 @@\n-a\n+b\n").is_err());
        assert!(parse_step_diffs(format!("{a}\n@@ -1,2 +1 @@\n-a\n").as_bytes()).is_err());
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
