//! Blame results remembered on disk, so asking again about the same lines of
//! the same commit starts no process.
//!
//! Blame attributes each line of a file at a commit independently of which
//! other lines are asked about, so what one call learned about lines 10–40 is
//! exactly the answer for those lines in any later call about the same commit,
//! path and settings. [`Repo::blame_cached`] serves the lines it knows from
//! the cache and blames only the others, in one `git blame` with one `-L` per
//! gap, then stores the union.
//!
//! **Carried forward.** When nothing is known at the commit asked about, the
//! blames cached at other commits of the path (an older HEAD, however far
//! back) are carried forward to it ([`crate::blame_carry`]: the lines handed
//! down through the commits in between in-process, as git's blame would);
//! only the lines that carrying leaves unknown are blamed, and the result is
//! stored at the commit asked about, under its own key.
//! [`Repo::blame_cached_outcome`] says whether that happened and how many git
//! processes the call started.
//!
//! **Key.** One file per (commit, path, settings):
//! `DIR/<hash of path>/<commit>-<hash of settings>`. The settings are what can
//! change the answer for a fixed commit: the engine, the diff options blame
//! runs with (fixed, Myers with the indent heuristic, never read from the
//! configuration — see [`crate::blame`] — but named, so that changing them
//! changes every key), the shallow boundary (`shallow`, which a fetch that
//! deepens the history rewrites), `info/grafts`, the `refs/replace/` refs,
//! and the `git` program found on `PATH` (the file: device, inode, size and
//! modification time — not its path, which differs inside hooks; a different
//! git may diff differently). An ignore-revs file never applies: blame runs
//! with `blame.ignoreRevsFile` empty, cached or not. No configuration value
//! is part of the key, since none changes the answer: the key never depends
//! on what libgit2 reads of the configuration, which can differ from what
//! git reads (`GIT_CONFIG_GLOBAL`).
//!
//! **Best effort.** A cache that cannot be read, does not parse, or names
//! another commit or path is ignored and rewritten; one that cannot be written
//! (a read-only repository) only costs the next call its speed. Files are
//! written to a temporary name and renamed, so concurrent readers see an old or
//! a new file, never half of one; two writers racing lose only one's additions.
//!
//! **Bounded.** Each path keeps the `KEEP_PER_PATH` (4) most recently written
//! files (one per commit it was blamed at); older ones are removed on write. A
//! cache file over `MAX_FILE_BYTES` (64 MiB) is ignored.
//!
//! **Upkeep** (`upkeep`): [`BlameCache::usage`] measures the cache;
//! [`BlameCache::prune_outside`] removes entries outside the window of
//! commits a read can still use ([`Repo::blame_window`]);
//! [`BlameCache::warm`] prunes, then carries every cached file's blame
//! forward to HEAD without running `git blame` (the `post-commit` hook's
//! background work).
//!
//! **No links followed.** Below the cache directory (which the caller chose)
//! files and directories are read and written through `safe_io::Dir` handles:
//! a symbolic link planted there is never followed, for reads or writes.

use std::collections::HashSet;
use std::collections::hash_map::DefaultHasher;
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::blame::{BlameEngine, BlameEntry, BlameOptions, BlameTarget, DIFF_OPTIONS};
use crate::blame_carry::{self, CarryWalk};
use crate::error::Result;
use crate::known::Known;
use crate::oid::ObjectId;
use crate::repo::Repo;

mod upkeep;

pub use upkeep::{CacheUsage, MAX_FRESH_PER_WARM, PRUNE_GRACE, WarmReport};

/// How many commits' blame each path keeps.
pub(crate) const KEEP_PER_PATH: usize = 4;

/// The largest cache file read (a blame of 100,000 lines is about 10 MiB).
pub(crate) const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// The file beside a path's blames saying how long its last fresh blame
/// took (a dot file: never taken for a blame, pruned like one).
pub(crate) const COST_FILE: &str = ".cost";
const COST_HEADER: &str = "gitctx-blame-cost 1";

/// The first line of every cache file; bumped when the format changes. The
/// last line is `end`, so a cut file never parses.
const HEADER: &str = "gitctx-blame-cache 1";

/// Where blame results are remembered between calls (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlameCache {
    dir: PathBuf,
}

impl BlameCache {
    /// A cache kept in `dir` (created on first write).
    pub fn new(dir: impl Into<PathBuf>) -> BlameCache {
        BlameCache { dir: dir.into() }
    }

    /// The directory the cache lives in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The commits whose blame of `path` under `settings` the cache holds a
    /// file for (whatever its content).
    fn commits(&self, path: &str, settings: &str) -> HashSet<ObjectId> {
        let suffix = format!("-{settings}");
        let dir = safe_io::Dir::open(&self.dir)
            .and_then(|base| base.open_dir_optional(short_hash(path.as_bytes())));
        let Ok(Some(dir)) = dir else {
            return HashSet::new();
        };
        dir.entries()
            .unwrap_or_default()
            .into_iter()
            .filter(|(_, kind)| *kind == safe_io::FileKind::File)
            .filter_map(|(name, _)| name.to_str()?.strip_suffix(&suffix)?.parse().ok())
            .collect()
    }

    /// Carries this cache's blame of `path` at an ancestor of `repo`'s HEAD
    /// forward to HEAD and stores it there, never running git (the steps are
    /// diffed in-process); `None` when HEAD's blame of the path is
    /// known already, the file is not at HEAD, or nothing can be carried.
    /// Best effort. A read starts it on another thread while it reads and
    /// parses the file, so that the blame it asks for next is served from
    /// the cache; it is also what [`BlameCache::warm`] does for each file.
    pub fn carry_forward(&self, repo: &Repo, path: &str) -> Option<CacheOutcome> {
        // HEAD has an entry already (a warm read): the blame that follows
        // serves it, so it is neither read nor parsed here.
        let head = repo.resolve_commit("HEAD").ok()?;
        if self.holds(head, path, &settings(repo, BlameEngine::Cli)) {
            return None;
        }
        repo.carry_forward_outcome(path, self, true).0
    }

    /// Whether the cache holds an entry (of some lines) for `path` at
    /// `repo`'s HEAD: a read there may well run no git at all.
    pub fn has_head_entry(&self, repo: &Repo, path: &str) -> bool {
        repo.resolve_commit("HEAD")
            .is_ok_and(|head| self.holds(head, path, &settings(repo, BlameEngine::Cli)))
    }

    /// Whether there is an entry (usable or not) for `path` at `commit`
    /// under `settings`.
    fn holds(&self, commit: ObjectId, path: &str, settings: &str) -> bool {
        let file = self.file(commit, path, settings);
        safe_io::Dir::open(&file.base)
            .ok()
            .and_then(|base| base.open_dir_optional(&file.subdir).ok().flatten())
            .and_then(|dir| dir.kind(&file.name).ok().flatten())
            .is_some()
    }

    /// How long the last fresh `git blame` of `path` took here (recorded by
    /// [`Repo::blame_cached_outcome`]): what a carry of it is held to (see
    /// [`crate::blame_carry`]'s cost model). `None` before the first.
    pub(crate) fn blame_cost(&self, path: &str) -> Option<std::time::Duration> {
        let rel = Path::new(&short_hash(path.as_bytes())).join(COST_FILE);
        let bytes = safe_io::fs::read_within(&self.dir, &rel, 256).ok()??;
        let text = std::str::from_utf8(&bytes).ok()?;
        let mut lines = text.lines();
        if lines.next()? != COST_HEADER {
            return None;
        }
        let micros: u64 = lines.next()?.strip_prefix("micros ")?.parse().ok()?;
        Some(std::time::Duration::from_micros(micros))
    }

    /// Remembers that a fresh `git blame` of `path` took `took`. Best effort.
    fn record_blame_cost(&self, path: &str, took: std::time::Duration) {
        let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        if let Ok(dir) = path_dir(&self.dir, &short_hash(path.as_bytes())) {
            let _ = dir.write(
                COST_FILE,
                format!("{COST_HEADER}\nmicros {micros}\n").as_bytes(),
            );
        }
    }

    /// The file holding `path`'s blame at `commit` under `settings`.
    fn file(&self, commit: ObjectId, path: &str, settings: &str) -> CacheFile {
        CacheFile {
            base: self.dir.clone(),
            subdir: short_hash(path.as_bytes()),
            name: format!("{}-{settings}", commit.to_hex()),
        }
    }
}

/// What carrying a file's cached blame forward to HEAD came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Carry {
    /// Carried and stored at HEAD.
    Carried,
    /// HEAD's blame is known already.
    Current,
    /// The file is not at HEAD (or HEAD cannot be read).
    NotAtHead,
    /// Nothing cached could be carried (see [`crate::blame_carry`]).
    Impossible,
}

/// How [`Repo::blame_cached_outcome`] found its answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CacheOutcome {
    /// The cached commit whose blame decided the most lines carried
    /// forward to the blamed commit, and how many commits the carry handed
    /// lines through before it met that commit's ([`crate::blame_carry`]);
    /// `None` when nothing was carried.
    pub carried_from: Option<(ObjectId, u32)>,
    /// What the carry's walk did (`None` when nothing was carried).
    pub carry: Option<CarryWalk>,
    /// The git processes the call started: 0 when the cache knew every line
    /// or carrying knew them all (its diffs run in-process), else 1 (one
    /// blame of the unknown lines).
    pub git_processes: u32,
}

impl Repo {
    /// [`Repo::blame`] through `cache`: lines of this commit's file blamed
    /// before (by any range) come from the cache, the others are blamed in one
    /// run and added to it. The answer is the same as [`Repo::blame`]'s; see
    /// the [module docs](self) for what keys the cache and why it is safe.
    pub fn blame_cached(
        &self,
        path: &str,
        options: &BlameOptions,
        cache: &BlameCache,
    ) -> Result<Vec<BlameEntry>> {
        Ok(self.blame_cached_outcome(path, options, cache)?.0)
    }

    /// [`Repo::blame_cached`], saying how the answer was found.
    pub fn blame_cached_outcome(
        &self,
        path: &str,
        options: &BlameOptions,
        cache: &BlameCache,
    ) -> Result<(Vec<BlameEntry>, CacheOutcome)> {
        let mut outcome = CacheOutcome::default();
        let Some(target) = self.blame_target(path, options)? else {
            return Ok((Vec::new(), outcome));
        };
        let settings = settings(self, options.engine);
        let file = cache.file(target.commit, path, &settings);
        let mut known = load(&file, target.commit, path, target.len);
        let mut gaps = known.gaps(target.start, target.end);
        let mut changed = false;
        if !gaps.is_empty()
            && known.covered.is_empty()
            && options.engine == BlameEngine::Cli
            && let Some((carried, how)) = self.carried(
                path,
                &target,
                Some((target.start, target.end)),
                &settings,
                cache,
                true,
            )
        {
            outcome = how;
            known = carried;
            gaps = known.gaps(target.start, target.end);
            changed = true;
        }
        if !gaps.is_empty() {
            let started = std::time::Instant::now();
            let fresh = self.blame_ranges(target.commit, path, &gaps, options.engine)?;
            if options.engine == BlameEngine::Cli {
                cache.record_blame_cost(path, started.elapsed());
            }
            outcome.git_processes += u32::from(options.engine == BlameEngine::Cli);
            known.add(&gaps, fresh);
            changed = true;
        }
        if changed {
            // Best effort: a cache that cannot be written only costs speed.
            let _ = store(&file, target.commit, path, &known);
        }
        // The known entries are merged already; cutting keeps them so.
        Ok((known.clip(target.start, target.end), outcome))
    }

    /// Carries `cache`'s blame of `path` at an ancestor of HEAD forward to
    /// HEAD and stores it there, blaming nothing: what the `post-commit` hook
    /// does in the background (`ultragit cache warm`), so that the next read
    /// starts no process. `None` when HEAD's blame is known already, the
    /// file is not at HEAD, or nothing can be carried (see
    /// [`crate::blame_carry`]). Errors are the cache's to ignore.
    pub(crate) fn blame_carry_forward(&self, path: &str, cache: &BlameCache) -> Carry {
        self.carry_forward_outcome(path, cache, false).1
    }

    /// [`Repo::blame_carry_forward`], with the carry's outcome when there
    /// was one.
    ///
    /// `by_cost`: the carry is held to the cost of a fresh blame (a read
    /// waits for it); a warm-up in the background (`false`) carries as far
    /// as its budget goes, so that the read after it runs no git.
    fn carry_forward_outcome(
        &self,
        path: &str,
        cache: &BlameCache,
        by_cost: bool,
    ) -> (Option<CacheOutcome>, Carry) {
        let options = BlameOptions::default();
        let Ok(Some(target)) = self.blame_target(path, &options) else {
            return (None, Carry::NotAtHead);
        };
        let settings = settings(self, options.engine);
        let file = cache.file(target.commit, path, &settings);
        if !load(&file, target.commit, path, target.len)
            .covered
            .is_empty()
        {
            return (None, Carry::Current);
        }
        let Some((known, outcome)) = self.carried(path, &target, None, &settings, cache, by_cost)
        else {
            return (None, Carry::Impossible);
        };
        if store(&file, target.commit, path, &known).is_err() {
            return (None, Carry::Impossible);
        }
        (Some(outcome), Carry::Carried)
    }

    /// What carrying a cached blame of `path` forward to `target`'s commit
    /// knows, and how it was found; `None` when nothing can be carried.
    fn carried(
        &self,
        path: &str,
        target: &BlameTarget,
        lines: Option<(u32, u32)>,
        settings: &str,
        cache: &BlameCache,
        by_cost: bool,
    ) -> Option<(Known, CacheOutcome)> {
        if !blame_carry::allowed(self) {
            return None;
        }
        let cached = cache.commits(path, settings);
        if cached.is_empty() {
            // Nothing of the path is cached: no chain to walk.
            return None;
        }
        let limit = by_cost.then(|| cache.blame_cost(path)).flatten();
        let carried = self.carry_blame(target.commit, path, lines, &cached, limit, |at, len| {
            load(&cache.file(at, path, settings), at, path, len)
        })?;
        let outcome = CacheOutcome {
            carried_from: Some((carried.from, carried.steps)),
            carry: Some(carried.walk),
            git_processes: 0,
        };
        Some((carried.known, outcome))
    }
}

/// One cache file: `base/subdir/name`, reached without following links below
/// `base`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CacheFile {
    base: PathBuf,
    subdir: String,
    name: String,
}

impl CacheFile {
    fn rel(&self) -> PathBuf {
        Path::new(&self.subdir).join(&self.name)
    }

    /// The file's path.
    #[cfg(test)]
    fn path(&self) -> PathBuf {
        self.base.join(self.rel())
    }
}

/// A stable 16-hex-digit hash (SHA-1 prefix) of `bytes`.
fn short_hash(bytes: &[u8]) -> String {
    match git2::Oid::hash_object(git2::ObjectType::Blob, bytes) {
        Ok(oid) => oid.to_string()[..16].to_owned(),
        // Hashing memory cannot fail in practice; fall back to std's hasher.
        Err(_) => {
            let mut hasher = DefaultHasher::new();
            bytes.hash(&mut hasher);
            format!("{:016x}", hasher.finish())
        }
    }
}

/// The hash of what can change a blame answer for a fixed commit in `repo`.
fn settings(repo: &Repo, engine: BlameEngine) -> String {
    let mut text = String::new();
    let _ = writeln!(text, "engine {engine:?}");
    // Fixed, not read from the configuration: named so that changing them
    // changes every key.
    let _ = writeln!(text, "diff {}", DIFF_OPTIONS.join(" "));
    let common = repo.common_dir();
    for name in ["shallow", "info/grafts"] {
        let content = std::fs::read(common.join(name)).unwrap_or_default();
        let _ = writeln!(text, "{name} {}", short_hash(&content));
    }
    if let Ok(refs) = repo.inner.references_glob("refs/replace/*") {
        for reference in refs.flatten() {
            let _ = writeln!(
                text,
                "replace {} {}",
                reference.name().unwrap_or_default(),
                reference
                    .target()
                    .map(|o| o.to_string())
                    .unwrap_or_default()
            );
        }
    }
    if engine == BlameEngine::Cli {
        let _ = writeln!(text, "git {}", git_program_identity());
    }
    short_hash(text.as_bytes())
}

/// The first `git` on `PATH`, as the file it is (device and inode, size,
/// modification time) rather than by its path: git runs hooks with its
/// exec-path first on `PATH`, where the same program is often a hard link,
/// and a hook's warm-up must find the keys a read made.
fn git_program_identity() -> String {
    use std::os::unix::fs::MetadataExt as _;
    let Some(path) = std::env::var_os("PATH") else {
        return String::new();
    };
    for dir in std::env::split_paths(&path) {
        let candidate = dir.join("git");
        if let Ok(meta) = std::fs::metadata(&candidate)
            && meta.is_file()
        {
            let modified = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            return format!("{} {} {} {modified}", meta.dev(), meta.ino(), meta.len());
        }
    }
    String::new()
}

/// Reads the cache file for (`commit`, `path`) of a `len`-line file; anything
/// missing, malformed or inconsistent reads as nothing known.
fn load(file: &CacheFile, commit: ObjectId, path: &str, len: u32) -> Known {
    let Ok(Some(bytes)) = safe_io::fs::read_within(&file.base, &file.rel(), MAX_FILE_BYTES) else {
        return Known::default();
    };
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return Known::default();
    };
    parse(text, commit, path)
        .filter(|known| known.consistent(len))
        .unwrap_or_default()
}

fn parse(text: &str, commit: ObjectId, path: &str) -> Option<Known> {
    let mut lines = text.lines();
    if lines.next()? != HEADER {
        return None;
    }
    if lines.next()?.strip_prefix("commit ")? != commit.to_hex() {
        return None;
    }
    if unescape(lines.next()?.strip_prefix("path ")?)? != path {
        return None;
    }
    let mut known = Known::default();
    let mut ended = false;
    for line in lines {
        if ended {
            return None;
        }
        let mut words = line.split(' ');
        match words.next()? {
            "end" => ended = true,
            "covered" => {
                let a = words.next()?.parse().ok()?;
                let b = words.next()?.parse().ok()?;
                known.covered.push((a, b));
            }
            "entry" => {
                let commit: ObjectId = words.next()?.parse().ok()?;
                let mut number = || words.next()?.parse::<u32>().ok();
                let original_start = number()?;
                let original_end = number()?;
                let final_start = number()?;
                let final_end = number()?;
                let boundary = match words.next()? {
                    "0" => false,
                    "1" => true,
                    _ => return None,
                };
                let original_path = unescape(words.next()?)?;
                known.entries.push(BlameEntry {
                    commit,
                    original_path,
                    original_start,
                    original_end,
                    final_start,
                    final_end,
                    boundary,
                });
            }
            _ => return None,
        }
    }
    ended.then_some(known)
}

/// Writes `known` for (`commit`, `path`) to `file` atomically, then trims the
/// path's directory to [`KEEP_PER_PATH`] files. Errors are the caller's to
/// ignore.
/// The directory of one path's files, `subdir` below the cache's `base`,
/// created if missing: `base` (in the git directory) as given, nothing below
/// it through a link.
fn path_dir(base: &Path, subdir: &str) -> std::io::Result<safe_io::Dir> {
    std::fs::create_dir_all(base)?;
    safe_io::Dir::open(base)
        .and_then(|base| base.create_dir_all(subdir))
        .map_err(std::io::Error::other)
}

fn store(file: &CacheFile, commit: ObjectId, path: &str, known: &Known) -> std::io::Result<()> {
    let dir = path_dir(&file.base, &file.subdir)?;
    let mut text = format!(
        "{HEADER}\ncommit {}\npath {}\n",
        commit.to_hex(),
        escape(path)
    );
    for (a, b) in &known.covered {
        let _ = writeln!(text, "covered {a} {b}");
    }
    for e in &known.entries {
        let _ = writeln!(
            text,
            "entry {} {} {} {} {} {} {}",
            e.commit.to_hex(),
            e.original_start,
            e.original_end,
            e.final_start,
            e.final_end,
            u8::from(e.boundary),
            escape(&e.original_path)
        );
    }
    text.push_str("end\n");
    // A temporary file renamed over the target (removed if anything fails).
    dir.write(&file.name, text.as_bytes())
        .map_err(std::io::Error::other)?;
    prune(&dir);
    Ok(())
}

/// Keeps the [`KEEP_PER_PATH`] most recently modified cache files in `dir`.
fn prune(dir: &safe_io::Dir) {
    let Ok(entries) = dir.entries() else {
        return;
    };
    let mut files: Vec<(SystemTime, std::ffi::OsString)> = entries
        .into_iter()
        .filter(|(name, kind)| {
            *kind == safe_io::FileKind::File && !name.to_string_lossy().starts_with('.')
        })
        .filter_map(|(name, _)| {
            // The time only orders the files; removal goes through `dir`.
            let meta = std::fs::symlink_metadata(dir.path().join(&name)).ok()?;
            Some((meta.modified().ok()?, name))
        })
        .collect();
    if files.len() <= KEEP_PER_PATH {
        return;
    }
    files.sort_by_key(|f| std::cmp::Reverse(f.0));
    for (_, name) in files.into_iter().skip(KEEP_PER_PATH) {
        let _ = dir.remove_file(&name);
    }
}

/// Paths as one word: `\` → `\\`, space → `\s`, tab → `\t`, newline → `\n`,
/// carriage return → `\r`.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            ' ' => out.push_str("\\s"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out
}

fn unescape(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        out.push(match chars.next()? {
            '\\' => '\\',
            's' => ' ',
            't' => '\t',
            'n' => '\n',
            'r' => '\r',
            _ => return None,
        });
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::known::tests::entry;

    #[test]
    fn files_round_trip_and_reject_what_does_not_match() {
        let dir = tempfile::tempdir().unwrap();
        let cache = BlameCache::new(dir.path());
        let commit: ObjectId = "ab".repeat(20).parse().unwrap();
        let path = "dir/with space\tand\\slash.rs";
        let file = cache.file(commit, path, "0123");
        let mut known = Known::default();
        known.add(&[(1, 3)], vec![entry(1, 1, 2, 1), entry(4, 3, 3, 7)]);
        store(&file, commit, path, &known).unwrap();
        assert_eq!(load(&file, commit, path, 3), known);
        // Another path hashing to the same file, another commit, a shorter
        // file, a corrupt file: nothing known.
        assert_eq!(load(&file, commit, "other", 3), Known::default());
        let other: ObjectId = "cd".repeat(20).parse().unwrap();
        assert_eq!(load(&file, other, path, 3), Known::default());
        assert_eq!(load(&file, commit, path, 2), Known::default());
        let text = std::fs::read_to_string(file.path()).unwrap();
        std::fs::write(file.path(), text.replace("covered 1 3", "covered 1 4")).unwrap();
        assert_eq!(load(&file, commit, path, 9), Known::default(), "a gap");
        std::fs::write(file.path(), &text[..text.len() - 5]).unwrap();
        assert_eq!(load(&file, commit, path, 3), Known::default(), "cut");
    }

    #[test]
    fn links_below_the_cache_are_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let cache = BlameCache::new(dir.path().join("cache"));
        let commit: ObjectId = "ab".repeat(20).parse().unwrap();
        let file = cache.file(commit, "src/lib.rs", "s");
        std::fs::create_dir_all(dir.path().join("cache")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("cache").join(&file.subdir))
            .unwrap();
        let mut known = Known::default();
        known.add(&[(1, 1)], vec![entry(2, 1, 1, 1)]);
        assert!(store(&file, commit, "src/lib.rs", &known).is_err());
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
        assert_eq!(load(&file, commit, "src/lib.rs", 1), Known::default());
    }

    #[test]
    fn each_path_keeps_its_newest_files() {
        let dir = tempfile::tempdir().unwrap();
        let cache = BlameCache::new(dir.path());
        let mut known = Known::default();
        known.add(&[(1, 1)], vec![entry(2, 1, 1, 1)]);
        let mut files = Vec::new();
        for i in 0..(KEEP_PER_PATH + 3) {
            let commit: ObjectId = format!("{:040x}", i + 1).parse().unwrap();
            let file = cache.file(commit, "src/lib.rs", "s");
            store(&file, commit, "src/lib.rs", &known).unwrap();
            // Distinct modification times even on coarse file systems.
            let when = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000 + i as u64);
            std::fs::File::options()
                .write(true)
                .open(file.path())
                .unwrap()
                .set_modified(when)
                .unwrap();
            files.push(file);
        }
        let left: Vec<bool> = files.iter().map(|f| f.path().exists()).collect();
        let mut expected = vec![false; 3];
        expected.extend(vec![true; KEEP_PER_PATH]);
        assert_eq!(left, expected);
    }

    #[test]
    fn escaping_round_trips() {
        for text in ["plain", "a b", "t\tn\nr\r", "back\\slash", "\\s", ""] {
            assert_eq!(unescape(&escape(text)).as_deref(), Some(text));
            assert!(!escape(text).contains([' ', '\t', '\n', '\r']));
        }
        assert_eq!(unescape("bad\\x"), None);
        assert_eq!(unescape("trailing\\"), None);
    }
}
