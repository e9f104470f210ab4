//! Patch-ids: telling that two commits make the same change, and finding the
//! commits such a comparison needs (not reachable from a ref, committed since a
//! date, what HEAD's reflog says about a commit).
//!
//! A patch-id is git's hash of a diff with line numbers and whitespace removed
//! (`git patch-id --stable`): a cherry-pick, or a commit rebased onto another base
//! without conflicts, has the patch-id of its original; a commit whose code
//! changed has another. Merges and commits that change nothing have none.
//!
//! **Bounded processes.** However many commits are asked, one call starts two
//! processes: `git diff-tree --stdin -p` (hardened: `--no-textconv`,
//! `--no-ext-diff`, `--no-renames`, attributes neutralised by [`GitCommand`])
//! piped straight into `git patch-id --stable`. The diff text never passes
//! through this process; only patch-id's answer (one 82-byte line per commit)
//! is read, so memory does not grow with the size of the diffs.
//!
//! Binary changes are hashed in full (`--binary --full-index`), so two different
//! binary edits of one file never share a patch-id.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::io::{Read as _, Write as _};
use std::process::Stdio;
use std::str::FromStr;

use crate::command::GitCommand;
use crate::error::{Error, Result, git};
use crate::oid::ObjectId;
use crate::repo::Repo;

/// A stable patch-id (`git patch-id --stable`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PatchId(ObjectId);

impl PatchId {
    /// The 40 hex digits.
    pub fn to_hex(&self) -> String {
        self.0.to_hex()
    }
}

impl fmt::Display for PatchId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl FromStr for PatchId {
    type Err = crate::oid::ParseObjectIdError;

    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        s.parse().map(PatchId)
    }
}

/// The `diff-tree` arguments every patch-id is computed from: full diffs, no
/// program of the repository's, no rename detection (a rename would make the
/// same change hash differently depending on the detection's threshold).
const DIFF_ARGS: &[&str] = &[
    "diff-tree",
    "--stdin",
    "-p",
    "--root",
    "--no-renames",
    "--full-index",
    "--binary",
    "--no-textconv",
    "--no-ext-diff",
    "--no-color",
    "--ignore-submodules=none",
];

/// How much of a failing process's stderr is kept for the error message.
const MAX_STDERR: u64 = 16 * 1024;

impl Repo {
    /// The patch-ids of `commits`, keyed by commit. A merge, a commit that
    /// changes nothing, and an id that is not a commit here have none (they are
    /// absent from the map). Two processes, whatever the number of commits.
    pub fn patch_ids(&self, commits: &[ObjectId]) -> Result<HashMap<ObjectId, PatchId>> {
        let mut input = String::new();
        let mut seen = HashSet::new();
        for &commit in commits {
            if !seen.insert(commit) {
                continue;
            }
            // Merges are left out here rather than trusting diff-tree's default
            // (no output for a merge) to stay that way.
            match self.inner.find_commit(commit.to_git()) {
                Ok(c) if c.parent_count() <= 1 => {
                    input.push_str(&commit.to_hex());
                    input.push('\n');
                }
                _ => {}
            }
        }
        self.run_patch_ids(input)
    }

    /// The patch-ids of combined diffs: for each `(base, tip)`, the diff from
    /// `base` to `tip` as one change (`git diff base tip`), keyed by `tip` — what
    /// a squash merge of the branch `base..tip` commits. Pairs with the same tip
    /// are asked once (the first one counts). Two processes in all.
    pub fn range_patch_ids(
        &self,
        ranges: &[(ObjectId, ObjectId)],
    ) -> Result<HashMap<ObjectId, PatchId>> {
        let mut input = String::new();
        let mut tips = HashSet::new();
        for &(base, tip) in ranges {
            if !tips.insert(tip) {
                continue;
            }
            // `<commit> <parent>` compares the commit with the given "parent",
            // and diff-tree prints the commit's id first: patch-id keys on it.
            input.push_str(&format!("{} {}\n", tip.to_hex(), base.to_hex()));
        }
        self.run_patch_ids(input)
    }

    /// The patch-id of the diff from `base` to `tip` (see
    /// [`Repo::range_patch_ids`]); `None` when they have the same tree.
    pub fn range_patch_id(&self, base: ObjectId, tip: ObjectId) -> Result<Option<PatchId>> {
        Ok(self.range_patch_ids(&[(base, tip)])?.remove(&tip))
    }

    /// `diff-tree --stdin` fed `input`, piped into `patch-id --stable`.
    fn run_patch_ids(&self, input: String) -> Result<HashMap<ObjectId, PatchId>> {
        if input.is_empty() {
            return Ok(HashMap::new());
        }
        let diff = self.git().args(DIFF_ARGS);
        let patch_id = self.git().args(["patch-id", "--stable"]);
        let mut producer = diff.to_command();
        producer
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut producer = producer.spawn().map_err(|source| Error::Spawn { source })?;
        let diff_out = producer
            .stdout
            .take()
            .expect("stdout was configured as piped");
        let mut consumer = patch_id.to_command();
        consumer
            .stdin(Stdio::from(diff_out))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let consumer = match consumer.spawn() {
            Ok(child) => child,
            Err(source) => {
                let _ = producer.kill();
                let _ = producer.wait();
                return Err(Error::Spawn { source });
            }
        };
        // The commit list is written from a thread: diff-tree may fill its
        // stdout before it has read all of it.
        let mut stdin = producer
            .stdin
            .take()
            .expect("stdin was configured as piped");
        let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
        let producer_err = drain_bounded(producer.stderr.take());
        let answer = consumer
            .wait_with_output()
            .map_err(|source| Error::Spawn { source })?;
        let status = producer.wait().map_err(|source| Error::Spawn { source })?;
        let _ = writer.join();
        let producer_err = producer_err.join().unwrap_or_default();
        if !status.success() {
            return Err(failure(&diff, status, &producer_err));
        }
        if !answer.status.success() {
            return Err(failure(&patch_id, answer.status, &answer.stderr));
        }
        parse_answer(&answer.stdout).map_err(|reason| Error::Parse {
            args: patch_id.display_args(),
            reason,
        })
    }

    /// Those of `targets` that are commits here and not reachable from any of
    /// `from` (`git rev-list targets --not from`, restricted to the targets),
    /// in the order given. Targets whose object is missing or not a commit are
    /// left out. One in-process walk, which stops once everything left is
    /// reachable from `from`.
    pub fn unreachable_from(
        &self,
        targets: &[ObjectId],
        from: &[ObjectId],
    ) -> Result<Vec<ObjectId>> {
        let mut walk = self.inner.revwalk().map_err(git("walking history"))?;
        let mut wanted = HashSet::new();
        for &target in targets {
            if self.inner.find_commit(target.to_git()).is_ok() {
                walk.push(target.to_git()).map_err(git("walking history"))?;
                wanted.insert(target);
            }
        }
        if wanted.is_empty() {
            return Ok(Vec::new());
        }
        for &tip in from {
            walk.hide(tip.to_git()).map_err(git("walking history"))?;
        }
        let mut unreachable = HashSet::new();
        for id in walk {
            let id = ObjectId::from_git(id.map_err(git("walking history"))?);
            if wanted.contains(&id) {
                unreachable.insert(id);
            }
        }
        Ok(targets
            .iter()
            .copied()
            .filter(|t| unreachable.contains(t))
            .collect())
    }

    /// The non-merge commits reachable from `tip` whose committer date is at or
    /// after `since` (seconds since the epoch), newest first, at most `limit`.
    /// The walk goes by date and stops after [`SINCE_SLOP`] older commits in a
    /// row, as `git log --since` does, so one commit with a skewed clock does not
    /// cut it short.
    pub fn commits_since(&self, tip: ObjectId, since: i64, limit: usize) -> Result<Vec<ObjectId>> {
        let mut walk = self.inner.revwalk().map_err(git("walking history"))?;
        walk.set_sorting(git2::Sort::TIME)
            .map_err(git("walking history"))?;
        walk.push(tip.to_git()).map_err(git("walking history"))?;
        let mut out = Vec::new();
        let mut old_in_a_row = 0;
        for id in walk {
            if out.len() >= limit {
                break;
            }
            let id = id.map_err(git("walking history"))?;
            let commit = self
                .inner
                .find_commit(id)
                .map_err(git("reading a commit"))?;
            if commit.committer().when().seconds() < since {
                old_in_a_row += 1;
                if old_in_a_row >= SINCE_SLOP {
                    break;
                }
                continue;
            }
            old_in_a_row = 0;
            if commit.parent_count() <= 1 {
                out.push(ObjectId::from_git(id));
            }
        }
        Ok(out)
    }

    /// The message of the newest entry among the last `depth` of `refname`'s
    /// reflog (e.g. `HEAD`) that moved it to `commit`, e.g. `cherry-pick: Fix
    /// parser`; `None` when there is no such entry or no reflog.
    pub fn reflog_message(
        &self,
        refname: &str,
        commit: ObjectId,
        depth: usize,
    ) -> Result<Option<String>> {
        let reflog = match self.inner.reflog(refname) {
            Ok(reflog) => reflog,
            Err(err) if err.code() == git2::ErrorCode::NotFound => return Ok(None),
            Err(err) => return Err(git("reading the reflog")(err)),
        };
        Ok(reflog
            .iter()
            .take(depth)
            .find(|entry| entry.id_new() == commit.to_git())
            .map(|entry| {
                String::from_utf8_lossy(entry.message_bytes().unwrap_or_default()).into_owned()
            }))
    }
}

/// How many commits older than `since` in a row end [`Repo::commits_since`]'s
/// walk (git's `--since` uses the same slop).
pub const SINCE_SLOP: usize = 5;

/// Reads at most [`MAX_STDERR`] bytes of a pipe on a thread (the rest is
/// drained and dropped, so the writer never blocks).
fn drain_bounded(pipe: Option<std::process::ChildStderr>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        if let Some(pipe) = pipe {
            let mut pipe = pipe;
            let _ = (&mut pipe).take(MAX_STDERR).read_to_end(&mut kept);
            let _ = std::io::copy(&mut pipe, &mut std::io::sink());
        }
        kept
    })
}

fn failure(cmd: &GitCommand, status: std::process::ExitStatus, stderr: &[u8]) -> Error {
    cmd.failure(&std::process::Output {
        status,
        stdout: Vec::new(),
        stderr: stderr.to_vec(),
    })
}

/// `<patch-id> <commit>` lines.
fn parse_answer(stdout: &[u8]) -> std::result::Result<HashMap<ObjectId, PatchId>, String> {
    let text = std::str::from_utf8(stdout).map_err(|e| e.to_string())?;
    let mut out = HashMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let (patch, commit) = line
            .split_once(' ')
            .ok_or_else(|| format!("unexpected line '{line}'"))?;
        let patch: PatchId = patch.parse().map_err(|e| format!("'{line}': {e}"))?;
        let commit: ObjectId = commit
            .trim()
            .parse()
            .map_err(|e| format!("'{line}': {e}"))?;
        out.insert(commit, patch);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_patch_id_lines() {
        let a = "1".repeat(40);
        let b = "2".repeat(40);
        let text = format!("{a} {b}\n");
        let map = parse_answer(text.as_bytes()).unwrap();
        assert_eq!(map[&b.parse::<ObjectId>().unwrap()].to_hex(), a);
        assert!(parse_answer(b"garbage\n").is_err());
        assert!(parse_answer(b"").unwrap().is_empty());
    }
}
