//! `ultragit rewritten <amend|rebase>` (hidden): what the `post-rewrite` hook
//! runs after `git commit --amend` and `git rebase`, with git's `<old> <new>
//! [extra]` lines on stdin. All the rules are `ultragit_notes::rewrite`'s.
//!
//! The local work happens now (git waits for the hook, so it is kept to notes,
//! diffs and outlines — no model): notes copied, carried or synthesized. What
//! needs a model is started in the background the way `annotate --async` does
//! (`annotate::spawn_annotation`): the delta of an amend that changed code
//! (`annotate --delta-from OLD`, merged into the carried note), and a fresh
//! annotation of an amended commit that had no note (the `post-commit` hook
//! left it to us). The pending author context, if any, goes with it.
//!
//! The input is read whole and bounded (`rewrite::INPUT_LIMIT`) and parsed
//! before anything is written: a bad line writes nothing. A commit whose note
//! cannot be written is recorded in `.git/ultragit/failed.log` and the others
//! go on. An `amend` during a rebase (an `edit` stop) does nothing: the rebase's
//! own `post-rewrite` maps the original commit to the final one.
//! Each line of the report is also appended to `.git/ultragit/annotate.log`.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::io::{Read, Write as _};

use crate::invocation::Invocation;
use clap::Args;
use frontend::{CommandError, ErrorKind, Outcome};
use gitctx::Repo;
use ultragit_notes::rewrite::{self, Action, Applied, RewriteKind};
use ultragit_notes::{author, record_failure};

use crate::annotate::{rebase_in_progress, spawn_annotation};

/// The arguments of `ultragit rewritten`.
#[derive(Debug, Args)]
#[command(after_long_help = AFTER_HELP)]
pub struct RewrittenArgs {
    /// What rewrote the commits, as git tells the hook: amend or rebase
    #[arg(value_name = "COMMAND", value_parser = ["amend", "rebase"])]
    command: String,
}

const AFTER_HELP: &str = "\
Reads git's post-rewrite input on stdin: one `<old id> <new id> [extra]` line per \
rewritten commit; several old commits on one new commit are a squash or fixup. \
The post-rewrite hook installed by `ultragit init` runs it; there is no need to run it \
by hand.

For each new commit: a message-only amend, a reword or a clean rebase pick copies the \
note (lines re-resolved); an amend that changes code keeps the original's regions and \
author context and annotates only its delta in the background; a rebased commit whose \
code changed keeps its note without a model call; a squash or fixup gets a note \
synthesized from every source note (provenance squash). No model is called while git \
waits.

Exit status: 0 when every note was written; 1 when the input is malformed (nothing is \
written) or a note could not be written (recorded in .git/ultragit/failed.log); 2 on \
usage errors.";

/// Runs `ultragit rewritten` in the repository containing `cwd`, reading git's
/// lines from `input`.
pub fn run(
    args: &RewrittenArgs,
    at: &Invocation,
    input: &mut dyn Read,
) -> Result<Outcome, CommandError> {
    let ctx = at.ctx;
    let repo = Repo::discover(at.cwd())?;
    let kind = RewriteKind::parse(&args.command).ok_or_else(|| {
        CommandError::usage(format!(
            "unknown rewrite '{}': expected amend or rebase",
            args.command
        ))
    })?;
    let mut bytes = Vec::new();
    input
        .take(rewrite::INPUT_LIMIT + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| {
            CommandError::from_error(ErrorKind::User, err)
                .context("cannot read the rewritten commits")
        })?;
    if bytes.len() as u64 > rewrite::INPUT_LIMIT {
        return Err(CommandError::new(
            ErrorKind::User,
            format!(
                "the post-rewrite input is larger than {} MiB; nothing was written",
                rewrite::INPUT_LIMIT >> 20
            ),
        ));
    }
    let rewrites = rewrite::parse_input(&bytes)?;
    if kind == RewriteKind::Amend && rebase_in_progress(&repo) {
        return Ok(Outcome::text(
            "an amend during a rebase: the rebase carries the notes when it ends\n",
        ));
    }

    // Pending corrections of the old commits go into their notes first, so
    // the notes carried to the new commits hold them.
    match ultragit_notes::correct::fold_pending(&repo) {
        Ok(folded) => {
            for (commit, why) in &folded.kept {
                ctx.warn(format!(
                    "the pending corrections of {} stay pending: {why}",
                    commit.short()
                ));
            }
        }
        Err(err) => ctx.warn(format!("pending corrections were not folded: {err}")),
    }
    let mut report = String::new();
    let mut failures = 0;
    for rewrite in &rewrites {
        match rewrite::apply_one(&repo, kind, rewrite) {
            Ok(applied) => {
                let _ = writeln!(report, "{}", describe(&applied));
                for warning in applied.warnings.iter().chain(&applied.dropped) {
                    ctx.warn(format!("{}: {warning}", applied.new.short()));
                }
                if let Err(err) = start_model_work(&repo, &applied) {
                    failures += 1;
                    let _ = record_failure(&repo, &applied.new.to_hex(), err.message());
                    ctx.warn(err.message());
                }
            }
            Err(err) => {
                failures += 1;
                let message = format!("carrying the note to {} failed: {err}", rewrite.new.short());
                let _ = record_failure(&repo, &rewrite.new.to_hex(), &message);
                ctx.warn(&message);
            }
        }
    }
    log(&repo, &report);
    if failures > 0 {
        return Err(CommandError::new(
            ErrorKind::Git,
            format!(
                "{failures} of {} rewritten commits did not get their note; see .git/ultragit/failed.log",
                rewrites.len()
            ),
        )
        .with_stdout(report));
    }
    Ok(Outcome::text(report))
}

/// One line per new commit.
fn describe(applied: &Applied) -> String {
    let olds: Vec<String> = applied.olds.iter().map(|id| id.short()).collect();
    let new = applied.new.short();
    let olds = olds.join(", ");
    match &applied.action {
        Action::Copied => format!("copied {olds} -> {new}"),
        Action::Amended => {
            format!("amended {olds} -> {new}: note carried, delta annotated in the background")
        }
        Action::Carried => format!("carried {olds} -> {new} (the code changed; no model call)"),
        Action::Squashed => format!("squashed {olds} -> {new}: note synthesized"),
        Action::NoNote if applied.annotate_fresh() => {
            format!("{olds} -> {new}: no note to carry; annotating {new} in the background")
        }
        Action::NoNote => format!("{olds} -> {new}: no note to carry"),
        Action::Unreadable(why) => format!("{olds} -> {new}: left as git copied it ({why})"),
    }
}

/// Starts the background annotation an applied rewrite still needs, if any.
fn start_model_work(repo: &Repo, applied: &Applied) -> Result<(), CommandError> {
    let mut extra: Vec<OsString> = Vec::new();
    if let Some(old) = applied.delta_from() {
        extra.push("--delta-from".into());
        extra.push(old.to_hex().into());
    } else if applied.annotate_fresh() {
        extra.push("--keep-existing".into());
    } else {
        return Ok(());
    }
    let sha = applied.new.to_hex();
    if let Some(claimed) = author::claim_pending(&repo.common_dir(), &sha)? {
        extra.push("--context-file".into());
        extra.push(claimed.into());
    }
    spawn_annotation(repo, applied.new, &extra)
}

/// Appends the report to `.git/ultragit/annotate.log` (best effort: the notes
/// are written already).
fn log(repo: &Repo, report: &str) {
    if report.is_empty() {
        return;
    }
    if let Ok(state) = author::state(&repo.common_dir())
        && let Ok(mut file) = state.append("annotate.log")
    {
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        for line in report.lines() {
            let _ = writeln!(file, "{now} rewritten {line}");
        }
    }
}
