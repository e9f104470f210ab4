//! Keeping the blame cache useful and small: its size, the window of commits
//! a read can use, pruning what lies outside it, and warming — carrying the
//! blame of every file the cache knows forward to HEAD — which the
//! `post-commit` hook runs in the background.
//!
//! **The kept window** ([`Repo::blame_window`]): the newest
//! [`MAX_CARRY_COMMITS`] commits reachable from HEAD or from a local branch
//! (by committer date). A read blames at HEAD, served from an entry at HEAD
//! or carried from entries at its ancestors, and a carry hands lines through
//! at most that many commits, so an entry outside the window is of no use to
//! a read unless a branch is reset back to it. [`BlameCache::prune_outside`] removes those, sparing files
//! written in the last [`PRUNE_GRACE`] (another worktree's detached HEAD, a
//! read in progress). Each path also keeps at most
//! [`super::KEEP_PER_PATH`] files, trimmed on every write.

use std::collections::HashSet;
use std::io::Read as _;
use std::time::{Duration, SystemTime};

use safe_io::{Dir, FileKind};

use super::{BlameCache, Carry, HEADER, short_hash, unescape};
use crate::blame::BlameOptions;
use crate::blame_carry::MAX_CARRY_COMMITS;
use crate::error::{Result, git};
use crate::oid::ObjectId;
use crate::repo::Repo;

/// The most files one warm-up blames afresh (one `git blame` each) when
/// their cached blame cannot be carried to HEAD: after a checkout of an
/// unrelated branch or a rebase, the few files read most recently are warm
/// again without the warm-up growing with the cache.
pub const MAX_FRESH_PER_WARM: usize = 4;

/// Files written this recently are never pruned.
pub const PRUNE_GRACE: Duration = Duration::from_secs(60 * 60);

/// The most of a cache file read to learn its path.
const HEAD_BYTES: u64 = 64 * 1024;

/// What the cache holds, or what pruning removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheUsage {
    /// Files of code with at least one cached blame.
    pub paths: u64,
    /// Cache files (one per path and commit).
    pub files: u64,
    /// Their size.
    pub bytes: u64,
}

/// What [`BlameCache::warm`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WarmReport {
    /// Removed as outside the kept window.
    pub pruned: CacheUsage,
    /// Files of code whose blame was carried forward to HEAD.
    pub carried: u64,
    /// Files of code whose blame could not be carried and was blamed afresh
    /// at HEAD by git (at most [`MAX_FRESH_PER_WARM`], the most recently
    /// read first).
    pub blamed: u64,
    /// Files of code looked at (at most the limit given).
    pub considered: u64,
}

impl Repo {
    /// The newest [`MAX_CARRY_COMMITS`] commits reachable from HEAD or from
    /// a local branch: those whose cached blame a read at HEAD can still use
    /// (served or carried), unless a branch is reset back. One walk in
    /// committer-date order, in-process.
    pub fn blame_window(&self) -> Result<HashSet<ObjectId>> {
        let mut walk = self.inner.revwalk().map_err(git("walking history"))?;
        walk.set_sorting(git2::Sort::TIME)
            .map_err(git("walking history"))?;
        let mut any = false;
        if let Some(head) = self.head()?.commit() {
            any |= walk.push(head.to_git()).is_ok();
        }
        let references = self.inner.references().map_err(git("listing branches"))?;
        for tip in references
            .flatten()
            .filter(|r| r.name().is_ok_and(|n| n.starts_with("refs/heads/")))
            .filter_map(|r| r.target())
        {
            any |= walk.push(tip).is_ok();
        }
        if !any {
            return Ok(HashSet::new());
        }
        Ok(walk
            .take(MAX_CARRY_COMMITS)
            .map_while(|id| id.ok())
            .map(ObjectId::from_git)
            .collect())
    }
}

impl BlameCache {
    /// How many files the cache holds, for how many paths, in how many bytes
    /// (all zero when it does not exist yet). Best effort: what cannot be
    /// read is not counted.
    pub fn usage(&self) -> CacheUsage {
        let mut usage = CacheUsage::default();
        self.each_file(|_, _, _, bytes| {
            usage.files += 1;
            usage.bytes += bytes;
            false
        });
        usage.paths = self.subdirs().len() as u64;
        usage
    }

    /// Removes the files whose commit is not in `keep` (and stray temporary
    /// files), except those written within [`PRUNE_GRACE`]; then the empty
    /// directories. Returns what was removed. Best effort.
    pub fn prune_outside(&self, keep: &HashSet<ObjectId>) -> CacheUsage {
        let mut removed = self.sweep(keep, true);
        if let Ok(base) = Dir::open(self.dir()) {
            for name in self.subdirs() {
                // A path's directory that holds only the record of its last
                // blame's cost is empty too.
                let empty = base.open_dir(&name).is_ok_and(|dir| {
                    let entries = dir.entries().unwrap_or_default();
                    let only_cost = entries.len() == 1 && entries[0].0 == super::COST_FILE;
                    if only_cost {
                        let _ = dir.remove_file(super::COST_FILE);
                    }
                    entries.is_empty() || only_cost
                });
                if empty && base.remove_dir(&name).unwrap_or(false) {
                    removed.paths += 1;
                }
            }
        }
        removed
    }

    /// What [`BlameCache::prune_outside`] would remove (its `paths` left 0),
    /// removing nothing.
    pub fn outside(&self, keep: &HashSet<ObjectId>) -> CacheUsage {
        self.sweep(keep, false)
    }

    /// The files outside `keep` (see [`BlameCache::prune_outside`]),
    /// removed when `remove` says so.
    fn sweep(&self, keep: &HashSet<ObjectId>, remove: bool) -> CacheUsage {
        let now = SystemTime::now();
        let mut removed = CacheUsage::default();
        self.each_file(|_, name, modified, bytes| {
            let recent = now.duration_since(modified).unwrap_or_default() < PRUNE_GRACE;
            let commit = name
                .split_once('-')
                .and_then(|(hex, _)| hex.parse::<ObjectId>().ok());
            let stale = !recent && commit.is_none_or(|c| !keep.contains(&c));
            if stale {
                removed.files += 1;
                removed.bytes += bytes;
            }
            stale && remove
        });
        removed
    }

    /// The paths the cache holds a blame of, read from the newest file of
    /// each path's directory (whose name must be the path's hash), the most
    /// recently written first.
    pub fn cached_paths(&self) -> Vec<String> {
        let Ok(base) = Dir::open(self.dir()) else {
            return Vec::new();
        };
        let mut paths = Vec::new();
        for subdir in self.subdirs() {
            let Ok(dir) = base.open_dir(&subdir) else {
                continue;
            };
            let mut files: Vec<(SystemTime, std::ffi::OsString)> = dir
                .entries()
                .unwrap_or_default()
                .into_iter()
                .filter(|(name, kind)| {
                    *kind == FileKind::File && !name.to_string_lossy().starts_with('.')
                })
                .filter_map(|(name, _)| {
                    let modified = dir
                        .open_file(&name)
                        .ok()?
                        .metadata()
                        .ok()?
                        .modified()
                        .ok()?;
                    Some((modified, name))
                })
                .collect();
            files.sort();
            let Some((written, path)) = files
                .last()
                .and_then(|(written, name)| Some((*written, path_in(&dir, name)?)))
            else {
                continue;
            };
            if short_hash(path.as_bytes()) == subdir {
                paths.push((std::cmp::Reverse(written), path));
            }
        }
        paths.sort();
        paths.into_iter().map(|(_, path)| path).collect()
    }

    /// Prunes what lies outside `repo`'s kept window, then carries the blame
    /// of up to `max_paths` cached files (the most recently read first)
    /// forward to HEAD ([`Repo::blame_carry_forward`]): no git process, the
    /// commits in between walked in-process. A file whose blame cannot be
    /// carried (HEAD moved to an unrelated history, or nothing cached meets
    /// its lines) is blamed afresh by git, for at most
    /// [`MAX_FRESH_PER_WARM`] files. What the hooks run in the background
    /// after a commit, a merge, a checkout or a rewrite, so that the next
    /// read at the new HEAD is warm.
    pub fn warm(&self, repo: &Repo, max_paths: usize) -> Result<WarmReport> {
        let window = repo.blame_window()?;
        let mut report = WarmReport {
            pruned: self.prune_outside(&window),
            ..WarmReport::default()
        };
        for path in self.cached_paths().into_iter().take(max_paths) {
            report.considered += 1;
            match repo.blame_carry_forward(&path, self) {
                Carry::Carried => report.carried += 1,
                Carry::Current | Carry::NotAtHead => {}
                Carry::Impossible => {
                    if report.blamed < MAX_FRESH_PER_WARM as u64
                        && repo
                            .blame_cached(&path, &BlameOptions::default(), self)
                            .is_ok()
                    {
                        report.blamed += 1;
                    }
                }
            }
        }
        Ok(report)
    }

    /// The names of the per-path directories.
    fn subdirs(&self) -> Vec<String> {
        let Ok(base) = Dir::open(self.dir()) else {
            return Vec::new();
        };
        base.entries()
            .unwrap_or_default()
            .into_iter()
            .filter(|(_, kind)| *kind == FileKind::Dir)
            .filter_map(|(name, _)| name.into_string().ok())
            .collect()
    }

    /// Calls `f(subdir, name, modified, bytes)` for every regular file below
    /// the per-path directories; removes the file when `f` says so.
    fn each_file(&self, mut f: impl FnMut(&str, &str, SystemTime, u64) -> bool) {
        let Ok(base) = Dir::open(self.dir()) else {
            return;
        };
        for subdir in self.subdirs() {
            let Ok(dir) = base.open_dir(&subdir) else {
                continue;
            };
            for (name, kind) in dir.entries().unwrap_or_default() {
                // The cost record is no blame: not counted, and removed
                // with its directory.
                let Some(text) = name
                    .to_str()
                    .filter(|&n| kind == FileKind::File && n != super::COST_FILE)
                else {
                    continue;
                };
                let Some(meta) = dir.open_file(&name).ok().and_then(|f| f.metadata().ok()) else {
                    continue;
                };
                let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                if f(&subdir, text, modified, meta.len()) {
                    let _ = dir.remove_file(&name);
                }
            }
        }
    }
}

/// The path a cache file names in its header.
fn path_in(dir: &Dir, name: &std::ffi::OsStr) -> Option<String> {
    let mut head = Vec::new();
    dir.open_file(name)
        .ok()?
        .take(HEAD_BYTES)
        .read_to_end(&mut head)
        .ok()?;
    let text = String::from_utf8_lossy(&head);
    let mut lines = text.lines();
    if lines.next()? != HEADER {
        return None;
    }
    lines.next()?.strip_prefix("commit ")?;
    unescape(lines.next()?.strip_prefix("path ")?)
}
