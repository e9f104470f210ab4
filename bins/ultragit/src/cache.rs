//! `ultragit cache warm [--background]`: keeps the read pipeline's blame cache
//! (`.git/ultragit/cache/blame/`) following the repository. It prunes the
//! entries outside the kept window (commits more than
//! `gitctx::blame_carry::MAX_CARRY_STEPS` first-parent steps behind HEAD and
//! every local branch, see `gitctx::blame_cache`), then carries the blame of
//! every file a read has blamed before — the files whose notes agents read —
//! forward to HEAD, without running git (the new commits' diffs of each file
//! are computed in-process). The next `ultragit read` at HEAD then starts no
//! git process for blame. It does the same for the outline cache
//! (`.git/ultragit/cache/outline/`, see `ultragit_read::outline_cache`): the
//! outlines of the files read before, where they changed at HEAD, are carried
//! forward to it — carrying only (parsing the changed stretches), never a
//! whole file, so the warm-up stays cheap; the next read then parses nothing.
//!
//! The `post-commit` hook that `ultragit init` installs starts it detached
//! (`… cache warm --background >/dev/null 2>&1 </dev/null &`), so the hook
//! returns at once. With `--background` the command never fails: whatever
//! goes wrong (no repository, an unwritable cache) it exits 0 without
//! output — a warm-up that does not happen only costs the next read its speed.

use clap::{Args, Subcommand};
use frontend::{CommandError, Outcome};
use gitctx::Repo;
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
        /// Never fail and print nothing (how the post-commit hook runs it)
        #[arg(long)]
        background: bool,
    },
}

/// Runs `ultragit cache` in the repository containing the current directory.
pub fn run(args: &CacheArgs, at: &Invocation) -> Result<Outcome, CommandError> {
    let CacheAction::Warm { background } = args.action;
    let warmed = Repo::discover(at.cwd())
        .map_err(CommandError::from)
        .and_then(|repo| warm(&repo));
    match (warmed, background) {
        (_, true) => Ok(Outcome::nothing()),
        (Ok(text), false) => Ok(Outcome::text(text)),
        (Err(err), false) => Err(err),
    }
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
        "blame carried forward to HEAD for {} of {} cached files (no git process); \
         pruned {} entries ({} bytes) outside the kept window; the cache holds {} entries \
         for {} files ({} bytes) in {}\n\
         outlines carried forward to HEAD for {} of {} cached files ({} already at HEAD); \
         the outline cache holds {} entries ({} bytes) in {}\n",
        report.carried,
        report.considered,
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
