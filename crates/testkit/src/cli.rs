//! The command-line basics every binary of the toolkit shares, checked the same
//! way for each: `--version`, `--help` (without the hidden `--generate`), usage
//! errors exit 2, and the hidden completions flag; and what a run of a
//! binary left behind ([`Output`], from [`run_command`] or any
//! `std::process::Output`), with assertions that show both streams on failure.

use crate::text::{assert_contains, assert_lacks};
use std::path::Path;
use std::process::Command;

/// What a run of a binary left behind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<std::process::Output> for Output {
    /// The exit code (-1 when a signal ended the process) and both streams as
    /// text, invalid UTF-8 replaced.
    fn from(out: std::process::Output) -> Output {
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        Output {
            code: out.status.code().unwrap_or(-1),
            stdout: text(&out.stdout),
            stderr: text(&out.stderr),
        }
    }
}

/// Assertions on a run that show what it printed when they fail; each returns
/// the run, so that they chain. (For other checks of a stream, use
/// [`crate::text`] on `stdout` or `stderr`.)
impl Output {
    /// Asserts the exit code, showing both streams when it differs.
    #[track_caller]
    pub fn assert_exit(&self, code: i32) -> &Self {
        assert_eq!(
            self.code, code,
            "stdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }

    /// Asserts that stdout contains `needle`.
    #[track_caller]
    pub fn stdout_contains(&self, needle: &str) -> &Self {
        assert_contains(&self.stdout, needle);
        self
    }

    /// Asserts that stderr contains `needle`.
    #[track_caller]
    pub fn stderr_contains(&self, needle: &str) -> &Self {
        assert_contains(&self.stderr, needle);
        self
    }
}

/// Runs `command` to its end and returns what it left behind; panics when it
/// cannot be started.
#[track_caller]
pub fn run_command(command: &mut Command) -> Output {
    command
        .output()
        .unwrap_or_else(|err| {
            let program = command.get_program().to_string_lossy().into_owned();
            panic!("running {program}: {err}")
        })
        .into()
}

/// Runs `exe args…` isolated from the host's environment ([`crate::isolate`]).
pub fn run(exe: &Path, args: &[&str]) -> Output {
    run_command(crate::isolate(&mut Command::new(exe)).args(args))
}

/// Asserts the basics for the binary `name` at `exe`, whose version is
/// `version`.
///
/// # Panics
/// When a basic does not hold (this is a test helper).
pub fn assert_basics(exe: &Path, name: &str, version: &str) {
    let out = run(exe, &["--version"]);
    assert_eq!(
        (out.code, out.stdout.trim()),
        (0, format!("{name} {version}").as_str())
    );
    let out = run(exe, &["--help"]);
    assert_eq!(out.code, 0);
    assert_contains(&out.stdout, &format!("Usage: {name}"));
    // The completions flag stays hidden.
    assert_lacks(&out.stdout, "--generate");
    let out = run(exe, &["--no-such-flag"]);
    assert_eq!(out.code, 2);
    assert_contains(&out.stderr, "--no-such-flag");
    let out = run(exe, &["--generate", "complete-fish"]);
    assert_eq!(out.code, 0);
    assert_contains(&out.stdout, &format!("complete -c {name}"));
    assert_lacks(&out.stdout, "-l generate");
    let out = run(exe, &["--generate", "man"]);
    assert_eq!(out.code, 2);
    assert_contains(&out.stderr, "complete-fish");
}
