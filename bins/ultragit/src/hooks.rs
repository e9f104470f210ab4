//! The hooks `ultragit init` and `ultragit sync --enable` install, from the
//! binary's side: the program they run ([`ultragit_executable`]) and how a
//! hook change is told to people ([`describe_hook`]). A leaf: `init`, `sync`
//! and `doctor` use it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use frontend::{CommandError, Context, ErrorKind};
use ultragit_notes::setup::HookChange;

/// This very binary, links resolved: the program the hooks run.
pub(crate) fn ultragit_executable() -> Result<PathBuf, CommandError> {
    std::env::current_exe()
        .and_then(|exe| exe.canonicalize())
        .map_err(|err| {
            CommandError::from_error(ErrorKind::Internal, err)
                .context("cannot find the ultragit executable")
        })
}

/// One line (or three) on what happened to a hook; `instruction` tells what
/// to do with a hook that is not a shell script.
pub(crate) fn describe_hook(
    text: &mut String,
    ctx: &Context,
    label: &str,
    path: &Path,
    change: &HookChange,
    instruction: &str,
) {
    let hook = path.display();
    match change {
        HookChange::Created => {
            let _ = writeln!(text, "  {label} {hook} (created)");
        }
        HookChange::Added => {
            let _ = writeln!(
                text,
                "  {label} {hook} (ultragit block added; the existing lines are kept)"
            );
        }
        HookChange::Updated => {
            let _ = writeln!(text, "  {label} {hook} (already installed; updated)");
        }
        HookChange::NotShell { line } => {
            let _ = writeln!(
                text,
                "  {label} {hook} (not a shell script: left unchanged)\n\
                 \x20   {instruction}:\n\
                 \x20   {}",
                line.replace('\n', "\n    ")
            );
            ctx.warn(format!(
                "{hook} is not a shell script; add the line printed below to it by hand"
            ));
        }
    }
}
