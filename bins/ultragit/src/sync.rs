//! `ultragit sync [REMOTE] [--enable]`: notes travel through the team's git
//! remote (all the work is `ultragit_notes::sync`).
//!
//! - `ultragit sync [REMOTE]`: fetch the remote's notes into
//!   `refs/notes/remotes/<REMOTE>/ultragit`, merge them into
//!   `refs/notes/ultragit` (a union: never removing or degrading a local note),
//!   push without force, retrying a few times when someone pushed meanwhile.
//!   Prints one summary line (adopted, merged, kept, refused); each refused
//!   remote note, and each local note that could not be compared, is a
//!   `warning:` line.
//! - `ultragit sync --enable [REMOTE]`: the fetch refspec, `ultragit.syncRemote`
//!   and the `pre-push` hook block (also what `ultragit init --sync` does).
//! - The hidden `--pre-push REMOTE` is what the hook runs: it syncs only when
//!   REMOTE is `ultragit.syncRemote`, and never fails (exit 0, a warning on
//!   stderr), so the user's own push always goes on.
//!
//! REMOTE defaults to `ultragit.syncRemote`, else the current branch's upstream
//! remote, else `origin`.
//!
//! After a successful `ultragit sync [REMOTE]` the read caches are warmed as
//! the hooks warm them: `ultragit cache warm --background` started detached
//! (`crate::cache::start_detached`), not run in-process. Detached, because
//! the sync is done and should return (in CI `ultragit remap && ultragit
//! sync` often follows a pull), because the warm-up takes the same lock as
//! the hooks' (a `git pull` just before already started one: this one then
//! skips), and because a warm-up's failure can never turn a successful sync
//! into a failed one. The `pre-push` run does not warm: a push moves no HEAD.

use std::fmt::Write as _;

use crate::invocation::Invocation;
use clap::Args;
use frontend::{CommandError, Context, Outcome};
use gitctx::{MergeKind, Repo};
use ultragit_notes::NOTES_REF;
use ultragit_notes::sync::{self, EnableReport, Pushed, SyncOptions, SyncReport};

use crate::annotate::count;
use crate::hooks;

/// The arguments of `ultragit sync`.
#[derive(Debug, Args)]
#[command(after_long_help = AFTER_HELP)]
pub struct SyncArgs {
    /// The remote to sync with (default: ultragit.syncRemote, else the current branch's upstream remote, else origin)
    #[arg(value_name = "REMOTE")]
    remote: Option<String>,

    /// Turn automatic sync on for REMOTE instead: fetch refspec, ultragit.syncRemote, pre-push hook
    #[arg(long)]
    enable: bool,

    /// Run by the pre-push hook: sync only with ultragit.syncRemote, never fail
    #[arg(long, hide = true, conflicts_with = "enable")]
    pre_push: bool,
}

const AFTER_HELP: &str = "\
What it does:
  1. git fetch REMOTE +refs/notes/ultragit:refs/notes/remotes/REMOTE/ultragit
     (a tracking ref; the local refs/notes/ultragit is never force-updated);
  2. merges the fetched notes into refs/notes/ultragit as a union: notes from others \
are merged, never allowed to remove or degrade yours. A remote note is adopted only \
when it is a valid ultragit annotation (a regular file, under 4 MiB); otherwise it is \
refused, with the reason, and the local note stays. A commit annotated on both sides \
gets the union of both annotations (never two JSON documents glued together). A note \
the remote no longer has is kept here. `ultragit doctor` lists refused notes;
  3. git push REMOTE refs/notes/ultragit (no force); when someone pushed meanwhile, \
fetch, merge and push again (up to 5 rounds);
  4. starts `ultragit cache warm --background` detached, as the hooks do, so the next \
read at HEAD is warm (it never fails the sync).

With --enable: adds the fetch refspec to remote.REMOTE.fetch, sets \
ultragit.syncRemote=REMOTE and installs a pre-push hook block that syncs the notes \
on every `git push` to that remote and never fails the push. Running it again is \
harmless. `ultragit init --sync` does the same.

For CI after server-side squash or rebase merges: `ultragit remap && ultragit sync`.

Examples:
  ultragit sync
  ultragit sync upstream
  ultragit sync --enable origin

Exit status: 0 when the notes are in sync (or sync was enabled); 1 when the remote \
is unknown or unreachable, refused the push, or kept changing; 2 on usage errors.";

/// Runs `ultragit sync` in the repository containing `cwd`.
pub fn run(args: &SyncArgs, at: &Invocation) -> Result<Outcome, CommandError> {
    let cwd = at.cwd();
    let ctx = at.ctx;
    let repo = Repo::discover(cwd)?;
    if args.pre_push {
        return Ok(pre_push(&repo, args.remote.as_deref(), ctx));
    }
    let remote = match &args.remote {
        Some(remote) => remote.clone(),
        None => sync::default_remote(&repo)?,
    };
    if args.enable {
        let exe = hooks::ultragit_executable()?;
        let report = sync::enable(&repo, &remote, &exe)?;
        return Ok(Outcome::text(describe_enable(&report, ctx)));
    }
    let report = sync::sync(&repo, &remote, &SyncOptions::default())?;
    warn_all(&report, ctx);
    crate::cache::start_detached(&repo);
    Ok(Outcome::text(summary(&report)))
}

/// The pre-push hook's run: only the configured remote, and never an error.
fn pre_push(repo: &Repo, pushed_to: Option<&str>, ctx: &Context) -> Outcome {
    let configured = repo
        .config_get(sync::SYNC_REMOTE_KEY)
        .ok()
        .flatten()
        .map(|r| r.trim().to_owned());
    let (Some(configured), Some(pushed_to)) = (configured, pushed_to) else {
        return Outcome::nothing();
    };
    if configured != pushed_to {
        return Outcome::nothing();
    }
    match sync::sync(repo, &configured, &SyncOptions::default()) {
        Ok(report) => {
            warn_all(&report, ctx);
            Outcome::text(format!("ultragit: {}", summary(&report)))
        }
        Err(err) => {
            ctx.warn(format!(
                "ultragit: the notes were not synced ({err}); your push goes on, run `ultragit sync` later"
            ));
            Outcome::nothing()
        }
    }
}

/// How many refused notes are named one by one.
const NAMED_REFUSALS: usize = 20;

/// The refused notes and the merge's warnings, as `warning:` lines.
fn warn_all(report: &SyncReport, ctx: &Context) {
    for refused in report.refused.iter().take(NAMED_REFUSALS) {
        ctx.warn(refused.describe(&report.remote));
    }
    if report.refused.len() > NAMED_REFUSALS {
        ctx.warn(format!(
            "{} more notes from '{}' refused (`ultragit doctor` lists them)",
            report.refused.len() - NAMED_REFUSALS,
            report.remote
        ));
    }
    for warning in &report.warnings {
        ctx.warn(warning);
    }
}

/// The one summary line of a sync.
pub fn summary(report: &SyncReport) -> String {
    let remote = &report.remote;
    let mut line = format!("synced {NOTES_REF} with '{remote}'");
    let fetched = match report.merge {
        None => " (the remote had no notes yet".to_owned(),
        Some(MergeKind::UpToDate) => " (nothing new from the remote".to_owned(),
        Some(MergeKind::FastForward) => format!(
            " ({} from the remote",
            count(report.taken, "new note", "new notes")
        ),
        Some(MergeKind::Merged) => format!(
            " ({} from the remote, {} joined with local ones",
            count(report.taken, "new note", "new notes"),
            report.merged
        ),
    };
    line.push_str(&fetched);
    if report.kept > 0 {
        let _ = write!(
            line,
            ", {} the remote no longer has kept",
            count(report.kept, "local note", "local notes")
        );
    }
    if !report.refused.is_empty() {
        let _ = write!(line, ", {} refused", report.refused.len());
    }
    line.push_str(match report.pushed {
        Pushed::Created => "; pushed, creating the remote's notes ref",
        Pushed::Updated => "; pushed",
        Pushed::UpToDate => "; the remote was up to date",
        Pushed::Nothing => "; nothing to push: no notes on either side",
    });
    if report.attempts > 1 {
        let _ = write!(
            line,
            "; {} rounds, others were pushing at the same time",
            report.attempts
        );
    }
    line.push_str(")\n");
    line
}

/// What `--enable` (and `init --sync`) did, for people.
pub fn describe_enable(report: &EnableReport, ctx: &Context) -> String {
    let remote = &report.remote;
    let mut text = String::new();
    let _ = writeln!(text, "notes sync enabled with '{remote}'");
    let _ = writeln!(
        text,
        "  fetch refspec    {} on remote.{remote}.fetch ({})",
        sync::fetch_refspec(remote),
        if report.refspec_added {
            "added"
        } else {
            "already there"
        }
    );
    let _ = writeln!(text, "  sync remote      ultragit.syncRemote={remote}");
    hooks::describe_hook(
        &mut text,
        ctx,
        "pre-push hook   ",
        &report.hook_path,
        &report.hook,
        "add this line to it so each push syncs the notes",
    );
    text
}
