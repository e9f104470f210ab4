//! `code-commit` as a process.

use std::path::Path;
use std::process::Command;

mod attacks;
mod cli;
mod errors;
mod run;

/// What a run of code-commit printed, and how it exited.
pub(crate) use testkit::cli::Output as Run;

/// Runs code-commit in `dir` with git isolated from the machine's
/// configuration, `home` as its home and no XDG folders; `more` sets the rest
/// of the environment.
pub(crate) fn code_commit_with(
    dir: &Path,
    args: &[&str],
    home: &Path,
    more: impl FnOnce(&mut Command),
) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_code-commit"));
    cmd.args(args).current_dir(dir);
    testkit::isolate(&mut cmd);
    cmd.env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_CACHE_HOME");
    more(&mut cmd);
    testkit::cli::run_command(&mut cmd)
}
