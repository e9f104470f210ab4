//! `code-commit` as a process.

use std::path::Path;
use std::process::Command;

mod attacks;
mod cli;
mod errors;
mod run;

/// What a run of code-commit printed, and how it exited.
pub(crate) struct Run {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Run {
    /// Asserts the exit code, showing both streams when it differs.
    pub(crate) fn assert_exit(&self, code: i32) -> &Self {
        assert_eq!(self.code, code, "{}{}", self.stdout, self.stderr);
        self
    }

    /// Asserts that stdout starts with `prefix`.
    pub(crate) fn stdout_starts(&self, prefix: &str) -> &Self {
        assert!(self.stdout.starts_with(prefix), "{}", self.stdout);
        self
    }

    /// Asserts that stderr starts with `prefix`.
    pub(crate) fn stderr_starts(&self, prefix: &str) -> &Self {
        assert!(self.stderr.starts_with(prefix), "{}", self.stderr);
        self
    }

    /// Asserts that stderr contains `text`.
    pub(crate) fn stderr_contains(&self, text: &str) -> &Self {
        assert!(self.stderr.contains(text), "{}", self.stderr);
        self
    }
}

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
    let out = cmd.output().expect("run code-commit");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: text(&out.stdout),
        stderr: text(&out.stderr),
    }
}
