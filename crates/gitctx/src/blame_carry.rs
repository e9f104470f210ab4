//! Blame carried forward: a commit's blame computed from cached blames at
//! other commits (usually an older HEAD), so that a read after new commits —
//! the user's own or a week of upstream pulled in — does not start over.
//!
//! **Why it is exact.** `git blame` (without `-M`/`-C`, ignore-revs or
//! `--reverse`, which the toolkit never passes) decides each line on its
//! own: a line of commit C's file is handed, by git's fixed rules, to a
//! parent — the first parent whose file is the same blob takes every line;
//! otherwise each parent in turn (parents with a blob an earlier one had
//! skipped) takes the lines that are unchanged in its diff against C, with
//! xdiff and blame's options — and a line no parent takes is C's. So the
//! blame of line l of C's file depends only on (C, l) and the history below
//! C, not on which other lines are asked about or how the walk got to C.
//! Carrying is that walk, in-process: the lines of HEAD's file ("wanted")
//! start at HEAD; the lines of each cached commit's file whose blame is
//! known ("known") start at that commit; all of them are handed down by
//! git's rules, newest commit first, and a wanted line that reaches a
//! commit and line a known line also reached has the known line's blame
//! (the same (C, l), the same answer). A wanted line no parent takes is the
//! commit's, as git would say. The walk ends when no wanted line is left.
//! So a read after a checkout 3,000 commits ahead, through `--no-ff` merges
//! of topics forked before the cached commit, is carried: the topic's lines
//! meet the cached commit's lines at the fork point.
//!
//! The diffs are computed by the same diff code blame runs: libgit2 vendors
//! git's xdiff, called here with blame's options (Myers, the indent
//! heuristic, no context) on the contents of the two blobs, with no path
//! behind them (so no attribute or driver), after git's own step for diffs
//! without context — the common tail is cut, in 1 KiB blocks, back to a line
//! end ([`trim_common_tail`]) — so the hunks are the ones `git blame` sees,
//! whatever the configuration or `.gitattributes` say. (Checked against
//! `git diff-tree -U0 --diff-algorithm=myers --indent-heuristic` on every
//! non-merge commit of ripgrep's 25 most changed files, 3,200 diffs: all
//! equal; without the tail cut, 11 differ.) Each pair of blobs is diffed at
//! most once per carry.
//!
//! **Unknown lines** are those the walk cannot decide exactly: a line at a
//! commit with a parent that lacks the path or has it as another kind of
//! entry (added, renamed, type-changed: git would look for a rename there),
//! at a root commit (whether it is a boundary is `blame.showRoot`'s), at a
//! commit or blob that cannot be read, or still on its way when the walk's
//! budget ([`MAX_CARRY_COMMITS`], [`MAX_CARRY_DIFF_BYTES`]) runs out. They
//! are blamed at HEAD with one `git blame -L` per gap in a single process
//! (by the blame cache): exact by definition. A blame of a subset of the
//! lines never costs git more than a blame of all of them, so a carry that
//! leaves lines unknown costs at most its own walk more than a fresh blame;
//! the budget bounds that walk (see [`MAX_CARRY_COMMITS`]).
//!
//! **The cost model.** A read waits for its carry, so the blame cache holds
//! a read's carry to what the last fresh `git blame` of the file cost there
//! (measured and recorded by the cache): after [`MIN_JUDGED_COMMITS`], once
//! a quarter of that is spent, the walk's pace (the share of the dates from
//! HEAD down to the oldest cached commit it has covered) predicts its whole
//! cost, and a walk that would cost more than the blame — or has spent as
//! much — stops ([`CarryWalk::stopped_by_cost`]); git blames what it left.
//! The record is a `.cost` file beside the path's blames (neither counted nor
//! kept as a blame). The hooks' background warm-up (`ultragit cache warm`) is
//! not held to it: it carries as far as the budget goes, so the read after it
//! runs no git. Measured by `cargo xtask bench pulled`: on the generated
//! pulled fixture, where git blames the function in 56 ms, the carried read
//! went from 158 ms to 82 ms with the model; on git/git the carry, 0.3× a
//! blame, is never stopped.
//!
//! **Configuration cannot make it wrong.** Nothing here reads the user's
//! configuration: libgit2, which walks the history and diffs the blobs, is
//! given every diff option and no path (so no attribute, diff driver or
//! configuration applies), and the blame is told the same options on its
//! command line, so what any configuration says cannot set them apart.
//!
//! **No carrying** (a fresh blame, as before) when: the engine is libgit2
//! (its blame is not git's: it passes lines on by its own rules); the
//! repository is shallow, has grafts or replace refs (parents then differ
//! between libgit2's walk and git's); HEAD's version of the file is not a
//! regular file or is larger than [`MAX_CARRY_BLOB_BYTES`]; or no cached
//! blame of the path under the same settings knows a line HEAD's lines meet.

use std::collections::{BinaryHeap, HashMap, HashSet};
use std::path::Path;
use std::rc::Rc;
use std::time::{Duration, Instant};

use crate::blame::{BlameEntry, merge_adjacent};
use crate::known::Known;
use crate::oid::ObjectId;
use crate::repo::{Repo, count_lines};

/// The most commits one carry hands lines through. The walk costs about
/// 10–20 µs a commit (a commit and a tree read from the pack, in-process),
/// so this bounds it near a fifth of a second where git's own blame of a
/// file with that much history takes seconds; a commit that changes the file
/// costs a diff besides, bounded by [`MAX_CARRY_DIFF_BYTES`].
pub const MAX_CARRY_COMMITS: usize = 20_000;

/// The most bytes of file contents one carry diffs (both sides counted).
/// libgit2's xdiff runs at roughly 1 GB/s here on files that differ in a few
/// hunks, so this bounds the diffs near a fifth of a second: about 400 diffs
/// of a 250 KiB file such as git's `diff.c`.
pub const MAX_CARRY_DIFF_BYTES: usize = 48 * 1024 * 1024;

/// A carry is judged by the cost model only after walking this many
/// commits: a shorter walk costs little whatever the pace, and the judgement
/// (by the clock) never changes what a short carry does.
pub const MIN_JUDGED_COMMITS: usize = 64;

/// The largest version of a file carrying reads into memory; a line at a
/// commit with a larger version (or a parent's) is unknown.
pub const MAX_CARRY_BLOB_BYTES: usize = 64 * 1024 * 1024;

/// What carrying produced: what is known at HEAD, and how.
#[derive(Debug)]
pub(crate) struct Carried {
    pub(crate) known: Known,
    /// The cached commit whose lines decided the most of HEAD's.
    pub(crate) from: ObjectId,
    /// Commits the walk handed lines through before it first met `from`'s.
    pub(crate) steps: u32,
    /// How the walk went.
    pub(crate) walk: CarryWalk,
}

/// What one carry's walk did: enough to say why a read was as fast as it
/// was (`ultragit read --verbose`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CarryWalk {
    /// Commits the walk handed lines through.
    pub commits: u32,
    /// Pairs of blobs diffed.
    pub diffs: u32,
    /// HEAD's lines decided by a cached commit's lines.
    pub met: u32,
    /// HEAD's lines decided by the walk itself (a commit no parent passed
    /// them to).
    pub own: u32,
    /// HEAD's lines the walk could not decide (left for `git blame`).
    pub unknown: u32,
    /// Whether the walk stopped on its budget rather than running out of
    /// lines.
    pub over_budget: bool,
    /// Why the walk stopped early when the cost model stopped it.
    pub stopped_by_cost: Option<CostStop>,
}

/// The cost model's reason for stopping a carry: after `spent_ms`, at the
/// pace it went, the walk would have taken `predicted_ms`, more than the
/// `blame_ms` the last fresh blame of the file took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CostStop {
    pub spent_ms: u32,
    pub predicted_ms: u32,
    pub blame_ms: u32,
}

/// A line's blame: an index into the table of (commit, path, boundary) and
/// the line's number in that commit's file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Line {
    source: u32,
    original: u32,
}

/// Where a line's blame points: (commit, path in it, boundary).
type Source = (ObjectId, String, bool);

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

/// The lines waiting at one commit: wanted ones (HEAD's line index) and
/// known ones (an index into the answers), each at its line in the commit's
/// file.
#[derive(Debug)]
struct Pending {
    blob: git2::Oid,
    wanted: Vec<(u32, u32)>,
    known: Vec<(u32, u32)>,
}

/// One commit's place in the walk: newest first (committer time), then
/// first come.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Queued {
    time: i64,
    order: std::cmp::Reverse<u64>,
    commit: git2::Oid,
}

/// A cached commit's known lines: the commit, its blob of the path, the
/// lines at their numbers with their answers, the hashes of the blob's lines.
type Seed = (git2::Oid, git2::Oid, Vec<(u32, u32)>, Vec<u64>);

/// The walk's state (see the module docs).
struct Walk<'r> {
    repo: &'r git2::Repository,
    path: &'r str,
    queue: BinaryHeap<Queued>,
    pending: HashMap<git2::Oid, Pending>,
    pushed: u64,
    /// Which of HEAD's lines may meet a known line (see `carry_blame`), and
    /// how many of them are not decided yet: the walk goes on for them.
    meetable: Vec<bool>,
    open_meetable: usize,
    /// Known lines still travelling.
    known_open: usize,
    /// Each HEAD line's blame, once decided.
    decided: Vec<Option<Line>>,
    /// Which cached commit decided each met line (an index into `seeds`).
    decided_by: Vec<Option<u32>>,
    /// The known lines' blames, and the cached commit each came from.
    answers: Vec<(Line, u32)>,
    sources: Vec<Source>,
    source_index: HashMap<Source, u32>,
    /// The cached commits, and how many commits the walk had handed lines
    /// through when their lines were first met.
    seeds: Vec<(git2::Oid, Option<u32>)>,
    /// Each pair of blobs' map from the new file's lines to the old's.
    maps: HashMap<(git2::Oid, git2::Oid), Rc<Vec<Option<u32>>>>,
    diffed_bytes: usize,
    walk: CarryWalk,
    /// The cost model: the fresh blame's cost the walk is held to, when one
    /// was measured, the walk's start, and the committer dates of HEAD and
    /// of the oldest cached commit (how far the walk has to go).
    limit: Option<Duration>,
    started: Instant,
    head_time: i64,
    floor_time: i64,
}

impl Repo {
    /// Carries the cached blames of `path` to `head` (see the module docs).
    /// `cached` lists the commits the cache holds a blame of `path` at;
    /// `load` reads one for a file of the given length. `None` when nothing
    /// can be carried; the caller then blames afresh.
    pub(crate) fn carry_blame(
        &self,
        head: ObjectId,
        path: &str,
        lines: Option<(u32, u32)>,
        cached: &HashSet<ObjectId>,
        limit: Option<Duration>,
        load: impl Fn(ObjectId, u32) -> Known,
    ) -> Option<Carried> {
        let repo = &self.inner;
        let head_commit = repo.find_commit(head.to_git()).ok()?;
        let head_blob = regular_blob(&head_commit, path)?;
        let head_content = read_bounded(repo, head_blob)?;
        let head_texts = line_hashes(head_content.content());
        let head_len = u32::try_from(head_texts.len()).ok()?;
        let mut walk = Walk::new(repo, path, head_len);
        walk.limit = limit;
        walk.head_time = head_commit.time().seconds();
        walk.floor_time = walk.head_time;
        let mut seeds = Vec::new();
        for &at in cached {
            if at != head
                && let Some(seed) = walk.seed(at, &load)
            {
                seeds.push(seed);
            }
        }
        // A line is only ever handed on unchanged, so a wanted line can only
        // meet a known line of the same text. Every wanted line is walked
        // (one added on the way is decided by the commit that added it), but
        // only those that can meet one keep the walk going — and, when no
        // lines were asked for, only those in the stretch where the known
        // lines went, so that the braces and blank lines of the rest of the
        // file do not walk it through history for nothing.
        let known_texts: HashSet<u64> = seeds
            .iter()
            .flat_map(|(_, _, lines, texts)| {
                lines.iter().map(|&(line, _)| texts[line as usize - 1])
            })
            .collect();
        let (start, end, span) = match lines {
            Some((start, end)) => (start, end, (start, end)),
            None => (1, head_len, known_span(repo, &seeds, &head_content)?),
        };
        let wanted: Vec<(u32, u32)> = (start.max(1)..=end.min(head_len))
            .map(|line| (line, line - 1))
            .collect();
        let mut wanted_texts = HashSet::new();
        for &(line, _) in &wanted {
            let text = head_texts[line as usize - 1];
            if (span.0..=span.1).contains(&line) && known_texts.contains(&text) {
                walk.meetable[line as usize - 1] = true;
                wanted_texts.insert(text);
            }
        }
        walk.open_meetable = walk.meetable.iter().filter(|&&m| m).count();
        for (commit, blob, mut lines, texts) in seeds {
            lines.retain(|&(line, _)| wanted_texts.contains(&texts[line as usize - 1]));
            if let Ok(commit) = repo.find_commit(commit) {
                walk.floor_time = walk.floor_time.min(commit.time().seconds());
                walk.push(&commit, blob, Vec::new(), lines);
            }
        }
        if walk.known_open == 0 {
            return None;
        }
        walk.push(&head_commit, head_blob, wanted, Vec::new());
        walk.run();
        walk.finish(head_len)
    }
}

/// The stretch of HEAD's file (`head`) where the seeds' known lines are,
/// for a carry that was not told which lines are wanted (one ahead of a
/// read, or a warm-up): through one direct diff from each seed's file to
/// HEAD's, from the first to the last HEAD line that is a known line left
/// unchanged. Only a guess of where the known lines went — every line is
/// still decided by the walk, and one outside the stretch is blamed by git
/// when asked for — so that lines that cannot meet a known one are not
/// walked. `None` when no known line survives to HEAD.
fn known_span(
    repo: &git2::Repository,
    seeds: &[Seed],
    head: &git2::Blob<'_>,
) -> Option<(u32, u32)> {
    let mut span: Option<(u32, u32)> = None;
    for (_, blob, lines, texts) in seeds {
        let old = read_bounded(repo, *blob)?;
        let changes = step_changes(&old, head)?;
        let old_len = u32::try_from(texts.len()).ok()?;
        let map = new_to_old(&changes, old_len, count_lines(head.content()))?;
        let mut covered = vec![false; texts.len()];
        for &(line, _) in lines {
            if let Some(slot) = covered.get_mut(line as usize - 1) {
                *slot = true;
            }
        }
        for (i, old) in map.iter().enumerate() {
            if old.is_some_and(|o| covered[o as usize - 1]) {
                let n = u32::try_from(i + 1).ok()?;
                span = Some(span.map_or((n, n), |(a, b)| (a.min(n), b.max(n))));
            }
        }
    }
    span
}

/// A hash of each line of `content` (with its line end), as many as
/// [`count_lines`] counts.
fn line_hashes(content: &[u8]) -> Vec<u64> {
    use std::hash::{Hash as _, Hasher as _};
    content
        .split_inclusive(|&b| b == b'\n')
        .map(|line| {
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            line.hash(&mut hasher);
            hasher.finish()
        })
        .collect()
}

impl<'r> Walk<'r> {
    fn new(repo: &'r git2::Repository, path: &'r str, head_len: u32) -> Walk<'r> {
        let len = usize::try_from(head_len).unwrap_or(0);
        Walk {
            repo,
            path,
            queue: BinaryHeap::new(),
            pending: HashMap::new(),
            pushed: 0,
            meetable: vec![false; len],
            open_meetable: 0,
            known_open: 0,
            decided: vec![None; len],
            decided_by: vec![None; len],
            answers: Vec::new(),
            sources: Vec::new(),
            source_index: HashMap::new(),
            seeds: Vec::new(),
            maps: HashMap::new(),
            diffed_bytes: 0,
            walk: CarryWalk::default(),
            limit: None,
            started: Instant::now(),
            head_time: 0,
            floor_time: 0,
        }
    }

    /// The index of `key` in the table of sources.
    fn source(&mut self, key: Source) -> u32 {
        if let Some(&index) = self.source_index.get(&key) {
            return index;
        }
        self.sources.push(key.clone());
        let index = u32::try_from(self.sources.len() - 1).unwrap_or(u32::MAX);
        self.source_index.insert(key, index);
        index
    }

    /// The known lines of the cached blame at `at` (those it covers): the
    /// commit, its blob of the path, the lines (with their answers), and the
    /// hashes of the blob's lines. `None` when nothing is known there.
    fn seed(&mut self, at: ObjectId, load: &impl Fn(ObjectId, u32) -> Known) -> Option<Seed> {
        let commit = self.repo.find_commit(at.to_git()).ok()?;
        let blob = regular_blob(&commit, self.path)?;
        let content = read_bounded(self.repo, blob)?;
        let texts = line_hashes(content.content());
        let known = load(at, u32::try_from(texts.len()).ok()?);
        if known.entries.is_empty() {
            return None;
        }
        let seed = u32::try_from(self.seeds.len()).unwrap_or(u32::MAX);
        self.seeds.push((commit.id(), None));
        let mut lines = Vec::new();
        for e in &known.entries {
            let source = self.source((e.commit, e.original_path.clone(), e.boundary));
            for k in 0..e.len() {
                let answer = u32::try_from(self.answers.len()).unwrap_or(u32::MAX);
                self.answers.push((
                    Line {
                        source,
                        original: e.original_start + k,
                    },
                    seed,
                ));
                lines.push((e.final_start + k, answer));
            }
        }
        Some((commit.id(), blob, lines, texts))
    }

    /// Hands `wanted` and `known` lines to `commit` (whose file is `blob`).
    fn push(
        &mut self,
        commit: &git2::Commit<'_>,
        blob: git2::Oid,
        wanted: Vec<(u32, u32)>,
        known: Vec<(u32, u32)>,
    ) {
        if wanted.is_empty() && known.is_empty() {
            return;
        }
        self.known_open += known.len();
        match self.pending.entry(commit.id()) {
            std::collections::hash_map::Entry::Occupied(mut here) => {
                let here = here.get_mut();
                here.wanted.extend(wanted);
                here.known.extend(known);
            }
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(Pending {
                    blob,
                    wanted,
                    known,
                });
                self.pushed += 1;
                self.queue.push(Queued {
                    time: commit.time().seconds(),
                    order: std::cmp::Reverse(self.pushed),
                    commit: commit.id(),
                });
            }
        }
    }

    /// Hands lines down, newest commit first, while wanted lines that may
    /// meet a known one are left and known ones still travel (once none
    /// does, no wanted line can meet one: what is left is git's to blame),
    /// within the budget.
    fn run(&mut self) {
        while self.open_meetable > 0 && self.known_open > 0 {
            let Some(Queued { commit, time, .. }) = self.queue.pop() else {
                break;
            };
            if let Some(stop) = self.too_costly(time) {
                self.walk.over_budget = true;
                self.walk.stopped_by_cost = Some(stop);
                break;
            }
            let Some(here) = self.pending.remove(&commit) else {
                continue;
            };
            self.known_open -= here.known.len();
            if self.walk.commits as usize >= MAX_CARRY_COMMITS
                || self.diffed_bytes >= MAX_CARRY_DIFF_BYTES
            {
                self.walk.over_budget = true;
                break;
            }
            self.step(commit, here);
        }
    }

    /// The cost model, asked before each commit (committed at `time`): once
    /// the walk has gone through [`MIN_JUDGED_COMMITS`] commits and spent a
    /// quarter of what a fresh blame of the file cost,
    /// its pace so far (the share of the dates between HEAD and the oldest
    /// cached commit it has covered) says what the whole walk would cost; a
    /// walk that would cost more than the blame stops, as does one that has
    /// spent as much. What it leaves undecided is blamed by git, so a
    /// stopped carry costs at most about twice a blame, never exactness.
    fn too_costly(&self, time: i64) -> Option<CostStop> {
        let limit = self.limit?;
        if (self.walk.commits as usize) < MIN_JUDGED_COMMITS {
            return None;
        }
        let spent = self.started.elapsed();
        if spent * 4 < limit {
            return None;
        }
        let distance = (self.head_time - self.floor_time).max(1) as f64;
        let covered = ((self.head_time - time) as f64 / distance).clamp(0.01, 1.0);
        let predicted = spent.as_secs_f64() / covered;
        (predicted > limit.as_secs_f64() || spent >= limit).then(|| {
            let ms = |secs: f64| (secs * 1000.0).round().min(f64::from(u32::MAX)) as u32;
            CostStop {
                spent_ms: ms(spent.as_secs_f64()),
                predicted_ms: ms(predicted),
                blame_ms: ms(limit.as_secs_f64()),
            }
        })
    }

    /// One commit: its wanted lines meet its known ones, then every line is
    /// handed to a parent by git's rules; wanted lines no parent takes are
    /// the commit's.
    fn step(&mut self, id: git2::Oid, mut here: Pending) {
        self.walk.commits += 1;
        here.known.sort_unstable();
        here.known.dedup_by_key(|k| k.0);
        if !here.known.is_empty() && !here.wanted.is_empty() {
            let mut rest = Vec::with_capacity(here.wanted.len());
            for &(line, head_line) in &here.wanted {
                match here.known.binary_search_by_key(&line, |k| k.0) {
                    Ok(i) => {
                        let (answer, seed) = self.answers[here.known[i].1 as usize];
                        self.decide(head_line, answer, Some(seed));
                        self.walk.met += 1;
                    }
                    Err(_) => rest.push((line, head_line)),
                }
            }
            here.wanted = rest;
        }
        // A known line at the commit its blame names stops there: git would
        // find it the commit's.
        let oid = ObjectId::from_git(id);
        let (answers, sources, path) = (&self.answers, &self.sources, self.path);
        here.known.retain(|&(line, answer)| {
            let (answer, _) = answers[answer as usize];
            let (commit, at, _) = &sources[answer.source as usize];
            !(*commit == oid && answer.original == line && at == path)
        });
        if here.wanted.is_empty() && here.known.is_empty() {
            return;
        }
        let Ok(commit) = self.repo.find_commit(id) else {
            return self.unknown(here.wanted);
        };
        let parents: Vec<git2::Commit<'_>> = commit.parents().collect();
        if parents.is_empty() || parents.len() != commit.parent_count() {
            return self.unknown(here.wanted);
        }
        let blobs: Vec<Option<git2::Oid>> =
            parents.iter().map(|p| regular_blob(p, self.path)).collect();
        let blob = here.blob;
        if let Some(i) = blobs.iter().position(|b| *b == Some(blob)) {
            return self.push(&parents[i], blob, here.wanted, here.known);
        }
        if blobs.iter().any(Option::is_none) {
            // git would look for a rename in that parent.
            return self.unknown(here.wanted);
        }
        let (mut wanted, mut known) = (here.wanted, here.known);
        let mut seen: Vec<git2::Oid> = Vec::with_capacity(parents.len());
        for (parent, parent_blob) in parents.iter().zip(blobs.into_iter().flatten()) {
            if seen.contains(&parent_blob) {
                continue;
            }
            seen.push(parent_blob);
            let Some(map) = self.map(parent_blob, blob) else {
                return self.unknown(wanted);
            };
            let [passed_wanted, kept_wanted] = split(wanted, &map);
            let [passed_known, kept_known] = split(known, &map);
            wanted = kept_wanted;
            known = kept_known;
            self.push(parent, parent_blob, passed_wanted, passed_known);
            if wanted.is_empty() && known.is_empty() {
                break;
            }
        }
        let source = self.source((oid, self.path.to_owned(), false));
        for (line, head_line) in wanted {
            self.decide(
                head_line,
                Line {
                    source,
                    original: line,
                },
                None,
            );
            self.walk.own += 1;
        }
    }

    /// HEAD's line `head_line` has the blame `line` (met through `seed`'s
    /// lines, or the walk's own).
    fn decide(&mut self, head_line: u32, line: Line, seed: Option<u32>) {
        let at = head_line as usize;
        if self.decided[at].is_none() {
            self.open_meetable -= usize::from(self.meetable[at]);
        }
        self.decided[at] = Some(line);
        self.decided_by[at] = seed;
        if let Some(seed) = seed {
            let commits = self.walk.commits.saturating_sub(1);
            self.seeds[seed as usize].1.get_or_insert(commits);
        }
    }

    /// Wanted lines the walk cannot decide: left for `git blame`.
    fn unknown(&mut self, wanted: Vec<(u32, u32)>) {
        for (_, head_line) in wanted {
            self.open_meetable -= usize::from(self.meetable[head_line as usize]);
        }
    }

    /// The map from the lines of `new` to those of `old` (unchanged lines
    /// only), as blame's diff pairs them; `None` when a blob cannot be read
    /// or is too large.
    fn map(&mut self, old: git2::Oid, new: git2::Oid) -> Option<Rc<Vec<Option<u32>>>> {
        if let Some(map) = self.maps.get(&(old, new)) {
            return Some(Rc::clone(map));
        }
        let old_blob = read_bounded(self.repo, old)?;
        let new_blob = read_bounded(self.repo, new)?;
        self.diffed_bytes += old_blob.content().len() + new_blob.content().len();
        self.walk.diffs += 1;
        let changes = step_changes(&old_blob, &new_blob)?;
        let map = Rc::new(new_to_old(
            &changes,
            count_lines(old_blob.content()),
            count_lines(new_blob.content()),
        )?);
        self.maps.insert((old, new), Rc::clone(&map));
        Some(map)
    }

    /// What the walk knows at HEAD (a file of `len` lines); `None` when no
    /// cached line was met.
    fn finish(mut self, len: u32) -> Option<Carried> {
        let mut met = vec![0u32; self.seeds.len()];
        for seed in self.decided_by.iter().flatten() {
            met[*seed as usize] += 1;
        }
        let best = (0..met.len()).max_by_key(|&i| (met[i], std::cmp::Reverse(i)))?;
        // A walk the cost model stopped is reported even when it met
        // nothing yet (what it decided on the way is kept), so that a read
        // can say why git blamed the file.
        if met[best] == 0 && self.walk.stopped_by_cost.is_none() {
            return None;
        }
        let (from, steps) = self.seeds[best];
        self.walk.unknown =
            u32::try_from(self.decided.iter().filter(|l| l.is_none()).count()).unwrap_or(u32::MAX);
        let known = to_known((self.decided, self.sources), len)?;
        Some(Carried {
            known,
            from: ObjectId::from_git(from),
            steps: steps.unwrap_or(0),
            walk: self.walk,
        })
    }
}

/// `lines` split by `map` (new line → old line): those it maps, at their
/// old line, and the others.
fn split(lines: Vec<(u32, u32)>, map: &[Option<u32>]) -> [Vec<(u32, u32)>; 2] {
    let mut passed = Vec::new();
    let mut kept = Vec::new();
    for (line, what) in lines {
        match line.checked_sub(1).and_then(|i| map.get(i as usize)) {
            Some(Some(old)) => passed.push((*old, what)),
            _ => kept.push((line, what)),
        }
    }
    [passed, kept]
}

/// For each line of a `new_len`-line file, its line in the `old_len`-line
/// file `diff` changed into it, or `None` for an added line. `None` when
/// the diff does not fit the lengths.
fn new_to_old(diff: &Changes, old_len: u32, new_len: u32) -> Option<Vec<Option<u32>>> {
    let mut out = Vec::with_capacity(usize::try_from(new_len).ok()?);
    let mut removed = diff.removed.iter().peekable();
    let mut added = diff.added.iter().peekable();
    let mut next_old = 1u32;
    for n in 1..=new_len {
        if added.peek() == Some(&&n) {
            added.next();
            out.push(None);
            continue;
        }
        while removed.peek() == Some(&&next_old) {
            removed.next();
            next_old += 1;
        }
        if next_old > old_len {
            return None;
        }
        out.push(Some(next_old));
        next_old += 1;
    }
    // Every added and removed line was used, and the old file ran out exactly.
    while removed.peek() == Some(&&next_old) {
        removed.next();
        next_old += 1;
    }
    (added.next().is_none() && removed.next().is_none() && next_old == old_len + 1).then_some(out)
}

/// `id`'s blob in `repo`, unless it is larger than [`MAX_CARRY_BLOB_BYTES`]
/// (its size is read from the object's header, before it is inflated).
fn read_bounded(repo: &git2::Repository, id: git2::Oid) -> Option<git2::Blob<'_>> {
    let (size, _) = repo.odb().ok()?.read_header(id).ok()?;
    (size <= MAX_CARRY_BLOB_BYTES)
        .then(|| repo.find_blob(id).ok())
        .flatten()
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

/// The decided lines of a `len`-line file as what the cache knows.
fn to_known((lines, sources): (Vec<Option<Line>>, Vec<Source>), len: u32) -> Option<Known> {
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
    fn a_diff_maps_kept_lines_to_their_old_numbers() {
        // Old a b c d; new X a c Y d: b removed, X and Y added.
        let diff = Changes {
            removed: vec![2],
            added: vec![1, 4],
        };
        let map = new_to_old(&diff, 4, 5).unwrap();
        assert_eq!(map, vec![None, Some(1), Some(3), None, Some(4)]);
        let [passed, kept] = split(vec![(1, 10), (2, 11), (4, 12), (5, 13), (9, 14)], &map);
        assert_eq!(passed, vec![(1, 11), (4, 13)]);
        assert_eq!(
            kept,
            vec![(1, 10), (4, 12), (9, 14)],
            "added or past the end"
        );
        // A diff that does not fit the lengths maps nothing.
        let past_the_end = Changes {
            removed: vec![5],
            added: vec![],
        };
        assert_eq!(new_to_old(&past_the_end, 4, 3), None);
        let too_many = Changes {
            removed: vec![],
            added: vec![9],
        };
        assert_eq!(new_to_old(&too_many, 4, 5), None);
        assert_eq!(new_to_old(&Changes::default(), 2, 3), None);
    }
}
