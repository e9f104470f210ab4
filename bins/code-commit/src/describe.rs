//! The progress lines of a run, for people: each [`Step`] in a sentence, and
//! what a failed run left in the working tree (or put back) with the commands
//! that undo it.

use std::path::Path;

use code_commit_core::run::Step;
use code_commit_core::undo::{Kept, Reverted, Undo, Way};

/// What a failed run left in the working tree of `project`, and how to undo
/// it.
fn describe_kept(kept: &Kept, project: &Path) -> String {
    let mut out = format!(
        "the failed run leaves its changes in the working tree (not staged): {}",
        kept.files
            .iter()
            .map(|(path, _)| path.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let commands = kept.commands();
    if !commands.is_empty() {
        out.push_str(&format!("\nto undo them, run in {}:", project.display()));
        for command in commands {
            out.push_str(&format!("\n  {command}"));
        }
    }
    let not_in_git = kept.by(Way::NotInGit);
    if !not_in_git.is_empty() {
        out.push_str(&format!(
            "\n{} held changes git does not have before the run (uncommitted, or untracked): git cannot give them back (--revert-on-failure puts back exactly what was there)",
            not_in_git.join(", ")
        ));
    }
    out
}

/// What `--revert-on-failure` put back.
fn describe_reverted(reverted: &Reverted) -> String {
    let mut done = Vec::new();
    if !reverted.restored.is_empty() {
        done.push(format!("restored {}", reverted.restored.join(", ")));
    }
    if !reverted.removed.is_empty() {
        done.push(format!("removed {}", reverted.removed.join(", ")));
    }
    let mut out = if done.is_empty() {
        "--revert-on-failure: nothing was put back".to_owned()
    } else {
        format!(
            "--revert-on-failure: {} as before the run; nothing else was touched",
            done.join("; ")
        )
    };
    for why in &reverted.failed {
        out.push_str(&format!("\nnot reverted: {why}"));
    }
    out
}

pub fn describe(step: &Step, project: &Path) -> String {
    match step {
        Step::Undo(Undo::Kept(kept)) => describe_kept(kept, project),
        Step::Undo(Undo::Reverted(reverted)) => describe_reverted(reverted),
        Step::Asking { attempt: 1 } => "attempt 1: asking the model".to_owned(),
        Step::Asking { attempt } => format!("attempt {attempt}: asking the model for a repair"),
        Step::Rejected { attempt, reasons } => format!(
            "attempt {attempt}: response rejected, nothing applied:\n{}",
            reasons
                .iter()
                .map(|r| format!("  - {r}"))
                .collect::<Vec<_>>()
                .join("\n")
        ),
        Step::Applied {
            attempt,
            written,
            deleted,
        } => format!(
            "attempt {attempt}: applied {} file(s){}{}",
            written.len() + deleted.len(),
            if written.is_empty() {
                String::new()
            } else {
                format!("; written: {}", written.join(", "))
            },
            if deleted.is_empty() {
                String::new()
            } else {
                format!("; removed: {}", deleted.join(", "))
            }
        ),
        Step::Sandbox { status } => status.clone(),
        Step::Tampered { attempt, message } => {
            format!("attempt {attempt}: build tampering: {message}")
        }
        Step::Built {
            attempt,
            passed: true,
            status,
        } => format!("attempt {attempt}: build.sh passed ({status})"),
        Step::Built {
            attempt,
            passed: false,
            status,
        } => format!("attempt {attempt}: build.sh failed ({status})"),
    }
}
