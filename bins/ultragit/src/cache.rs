//! `ultragit cache warm [--background]`: keeps the read pipeline's blame cache
//! (`.git/ultragit/cache/blame/`) following the repository. It prunes the
//! entries outside the kept window (the newest
//! `gitctx::blame_carry::MAX_CARRY_COMMITS` commits reachable from HEAD or a
//! local branch, see `gitctx::blame_cache`), then carries the blame of every
//! file a read has blamed before — the files whose notes agents read —
//! forward to HEAD, without running git (the commits in between are walked
//! in-process; a few files that cannot be carried are blamed afresh, see
//! `gitctx::BlameCache::warm`). The next `ultragit read` at HEAD then starts
//! no git process for blame. It does the same for the outline cache
//! (`.git/ultragit/cache/outline/`, see `ultragit_read::outline_cache`): the
//! outlines of the files read before, where they changed at HEAD, are carried
//! forward to it — carrying only (parsing the changed stretches), never a
//! whole file, so the warm-up stays cheap; the next read then parses nothing.
//!
//! The hooks that `ultragit init` installs (`post-commit`, `post-rewrite`,
//! `post-merge`, `post-checkout`) start it detached (`… cache warm
//! --background </dev/null >/dev/null 2>&1 &`), so the hook returns at once;
//! `ultragit sync` starts it the same way after a sync ([`start_detached`]).
//! With `--background` the command never fails: whatever goes wrong (no
//! repository, an unwritable cache) it exits 0 without output — a warm-up
//! that does not happen only costs the next read its speed.
//!
//! **One warm-up at a time.** A burst of moves of HEAD (a script that
//! switches branches in a loop; a rebase, whose checkout of its base and
//! final rewrite each run a hook) would otherwise start as many warm-ups, all
//! carrying the same files. With `--background` the
//! command first creates the lock file `.git/ultragit/cache/warm.lock`
//! ([`WarmLock`]: `O_CREAT | O_EXCL`, never through a link, holding the
//! process id, for people, and the time) and removes it when done; when the
//! lock is there already it exits 0 at once, doing nothing: the running
//! warm-up carries the same files, and when it is done it looks at HEAD again
//! and warms once more if HEAD moved meanwhile (at most [`MAX_ROUNDS`] rounds),
//! so the last checkout of a burst is warmed too. (A move in the instant
//! between that last look and the lock's removal is left to the next read,
//! which carries the blame forward itself.) A lock older than
//! [`STALE_AFTER`] (10 minutes; a warm-up takes seconds at most) is left by a
//! warm-up that was killed: it is removed and taken over. Two warm-ups that
//! find the same stale lock at the same instant may both run; that is
//! harmless (cache entries are written to a temporary file and renamed), the
//! lock only bounds the pile-up. `cache warm` without `--background` (a
//! person asking) takes no lock and always runs.

use std::io::{ErrorKind as IoErrorKind, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime};

use clap::{Args, Subcommand};
use frontend::{CommandError, Outcome};
use gitctx::Repo;
use safe_io::{Dir, FileKind};
use ultragit_read::GitReadPipeline;

use crate::invocation::Invocation;

/// The most files one warm-up carries forward.
const MAX_PATHS: usize = 512;

/// The arguments of `ultragit cache`.
#[derive(Debug, Args)]
pub struct CacheArgs {
    #[command(subcommand)]
    action: CacheAction,
}

#[derive(Debug, Subcommand)]
enum CacheAction {
    /// Carry cached blame forward to HEAD and prune what is outside the kept window
    Warm {
        /// Never fail, print nothing, and skip when another background warm-up runs (how the hooks run it)
        #[arg(long)]
        background: bool,
    },
}

/// Runs `ultragit cache` in the repository containing the current directory.
pub fn run(args: &CacheArgs, at: &Invocation) -> Result<Outcome, CommandError> {
    let CacheAction::Warm { background } = args.action;
    if background {
        if let Ok(repo) = Repo::discover(at.cwd()) {
            warm_in_background(&repo);
        }
        return Ok(Outcome::nothing());
    }
    let repo = Repo::discover(at.cwd())?;
    warm(&repo).map(Outcome::text)
}

/// The hooks' warm-up: under the lock, or not at all (module docs); every
/// failure is dropped.
fn warm_in_background(repo: &Repo) {
    let Ok(Some(_lock)) = WarmLock::take(&repo.common_dir(), SystemTime::now()) else {
        return;
    };
    in_rounds(
        || repo.head().ok().and_then(|head| head.commit()),
        || drop(warm(repo)),
    );
}

/// The most times one background warm-up warms: again while HEAD moved
/// during the round before (a checkout whose own warm-up found the lock and
/// skipped), so the last of a burst of checkouts is warmed too.
const MAX_ROUNDS: usize = 4;

/// Calls `warm` once, then again while `head` says HEAD moved since the
/// round before began, at most [`MAX_ROUNDS`] times in all.
fn in_rounds<H: PartialEq>(mut head: impl FnMut() -> H, mut warm: impl FnMut()) {
    let mut warmed = head();
    warm();
    for _ in 1..MAX_ROUNDS {
        let now = head();
        if now == warmed {
            return;
        }
        warm();
        warmed = now;
    }
}

/// Starts `ultragit cache warm --background` in `repo` as the hooks do:
/// detached (its own process group, stdin, stdout and stderr on
/// `/dev/null`), not waited for, and never an error — a warm-up that does not
/// start only costs the next read its speed.
pub(crate) fn start_detached(repo: &Repo) {
    let Ok(exe) = crate::hooks::ultragit_executable() else {
        return;
    };
    let mut cmd = Command::new(exe);
    cmd.args(["cache", "warm", "--background"])
        .current_dir(repo.root())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    crate::annotate::detach(&mut cmd);
    // Dropping the child neither kills nor waits for it.
    let _ = cmd.spawn();
}

/// The warm-up lock's file, in the cache directory (`.git/ultragit/cache/`).
const LOCK: &str = "warm.lock";

/// The cache directory below the common directory.
const CACHE_DIR: &str = "ultragit/cache";

/// How old a lock may be before it counts as left by a warm-up that died.
pub(crate) const STALE_AFTER: Duration = Duration::from_secs(10 * 60);

/// The background warm-up's lock (module docs): the file exists while its
/// holder runs, and is removed when the holder drops it.
#[derive(Debug)]
pub(crate) struct WarmLock {
    dir: Dir,
    /// What this holder wrote in the lock file: only a file holding it is
    /// removed on drop, never one another warm-up took over after ours went
    /// stale (an inode number would not do: a new file reuses a freed one).
    token: String,
}

impl WarmLock {
    /// Takes the lock of the repository whose common directory is `common`
    /// at the time `now`: `Ok(None)` when a fresh lock is held by another
    /// warm-up (or it was taken over between our two attempts).
    pub(crate) fn take(common: &Path, now: SystemTime) -> Result<Option<WarmLock>, safe_io::Error> {
        let dir = Dir::open(common)?.create_dir_all(CACHE_DIR)?;
        let token = format!(
            "{} {}\n",
            std::process::id(),
            now.duration_since(SystemTime::UNIX_EPOCH)
                .unwrap_or_default()
                .as_nanos()
        );
        if create(&dir, &token)? {
            return Ok(Some(WarmLock { dir, token }));
        }
        if !stale(&dir, now)? {
            return Ok(None);
        }
        dir.remove_file(LOCK)?;
        Ok(create(&dir, &token)?.then_some(WarmLock { dir, token }))
    }
}

impl Drop for WarmLock {
    fn drop(&mut self) {
        let ours = self
            .dir
            .read(LOCK, TOKEN_LIMIT)
            .is_ok_and(|text| text == self.token.as_bytes());
        if ours {
            let _ = self.dir.remove_file(LOCK);
        }
    }
}

/// The most of a lock file read back (a process id and a time).
const TOKEN_LIMIT: u64 = 256;

/// Creates the lock file holding `token` (this process's id, for people, and
/// the time): `Ok(false)` when something by its name exists.
fn create(dir: &Dir, token: &str) -> Result<bool, safe_io::Error> {
    match dir.create_new(LOCK) {
        Ok(mut file) => {
            file.write_all(token.as_bytes())
                .map_err(|source| safe_io::Error::Io {
                    path: dir.path().join(LOCK),
                    source,
                })?;
            Ok(true)
        }
        Err(safe_io::Error::Io { source, .. }) if source.kind() == IoErrorKind::AlreadyExists => {
            Ok(false)
        }
        Err(err) => Err(err),
    }
}

/// Whether the existing lock was left by a warm-up that died: last modified
/// more than [`STALE_AFTER`] before `now` (or as far after it: a clock that
/// moved). Something that is not a regular file by the lock's name (a link,
/// which is never followed) is stale too: no warm-up made it.
fn stale(dir: &Dir, now: SystemTime) -> Result<bool, safe_io::Error> {
    match dir.kind(LOCK)? {
        // Removed meanwhile: the holder is done.
        None => return Ok(true),
        Some(FileKind::File) => {}
        Some(_) => return Ok(true),
    }
    let path = dir.path().join(LOCK);
    let modified = dir
        .open_file(LOCK)?
        .metadata()
        .and_then(|meta| meta.modified())
        .map_err(|source| safe_io::Error::Io { path, source })?;
    let age = now
        .duration_since(modified)
        .unwrap_or_else(|ahead| ahead.duration());
    Ok(age > STALE_AFTER)
}

/// Prunes and carries forward; the summary lines.
fn warm(repo: &Repo) -> Result<String, CommandError> {
    let cache = GitReadPipeline::default_blame_cache(repo);
    let report = cache.warm(repo, MAX_PATHS)?;
    let usage = cache.usage();
    let outlines = GitReadPipeline::default_outline_cache(repo);
    let carried = outlines.warm(repo, MAX_PATHS);
    let held = outlines.usage();
    Ok(format!(
        "blame carried forward to HEAD for {} of {} cached files (no git process), {} blamed \
         afresh (could not be carried); pruned {} entries ({} bytes) outside the kept window; the cache holds {} entries \
         for {} files ({} bytes) in {}\n\
         outlines carried forward to HEAD for {} of {} cached files ({} already at HEAD); \
         the outline cache holds {} entries ({} bytes) in {}\n",
        report.carried,
        report.considered,
        report.blamed,
        report.pruned.files,
        report.pruned.bytes,
        usage.files,
        usage.paths,
        usage.bytes,
        cache.dir().display(),
        carried.carried,
        carried.considered,
        carried.current,
        held.entries,
        held.bytes,
        outlines.dir().display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lock_file(common: &Path) -> std::path::PathBuf {
        common.join(CACHE_DIR).join(LOCK)
    }

    #[test]
    fn a_warm_up_warms_again_while_head_moved_under_it() {
        let rounds = |heads: &[u32]| {
            let mut heads = heads.iter().copied();
            let mut warmed = 0;
            in_rounds(|| heads.next(), || warmed += 1);
            warmed
        };
        // HEAD stayed: one round.
        assert_eq!(rounds(&[1, 1]), 1);
        // HEAD moved during the first round, then stayed.
        assert_eq!(rounds(&[1, 2, 2]), 2);
        // A checkout during every round: bounded.
        assert_eq!(rounds(&[1, 2, 3, 4, 5, 6, 7]), MAX_ROUNDS);
    }

    #[test]
    fn one_holder_at_a_time_and_the_lock_goes_with_it() {
        let repo = testkit::TestRepo::new();
        let common = repo.join(".git");
        let now = SystemTime::now();
        let first = WarmLock::take(&common, now).unwrap().expect("free");
        assert!(lock_file(&common).is_file());
        assert!(WarmLock::take(&common, now).unwrap().is_none(), "held");
        drop(first);
        assert!(!lock_file(&common).exists(), "removed when done");
        assert!(
            WarmLock::take(&common, now).unwrap().is_some(),
            "free again"
        );
    }

    #[test]
    fn a_stale_lock_is_taken_over_and_its_old_holder_leaves_the_new_one() {
        let repo = testkit::TestRepo::new();
        let common = repo.join(".git");
        let now = SystemTime::now();
        let old = WarmLock::take(&common, now).unwrap().expect("free");
        // Just before the limit it holds; past it, it is taken over.
        let later = now + STALE_AFTER - Duration::from_secs(5);
        assert!(WarmLock::take(&common, later).unwrap().is_none());
        let much_later = now + STALE_AFTER + Duration::from_secs(5);
        let new = WarmLock::take(&common, much_later).unwrap().expect("stale");
        // The old holder finishing does not remove the new holder's lock.
        drop(old);
        assert!(lock_file(&common).is_file());
        drop(new);
        assert!(!lock_file(&common).exists());
    }

    #[test]
    fn a_link_in_the_lock_s_place_is_replaced_never_followed() {
        let repo = testkit::TestRepo::new();
        let common = repo.join(".git");
        std::fs::create_dir_all(common.join(CACHE_DIR)).unwrap();
        let target = repo.join("elsewhere");
        std::fs::write(&target, "keep\n").unwrap();
        std::os::unix::fs::symlink(&target, lock_file(&common)).unwrap();
        let lock = WarmLock::take(&common, SystemTime::now()).unwrap();
        assert!(lock.is_some());
        assert!(!lock_file(&common).is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep\n");
    }
}
