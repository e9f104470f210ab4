//! The command-line basics every binary of the toolkit shares, checked the same
//! way for each: `--version`, `--help` (without the hidden `--generate`), usage
//! errors exit 2, and the hidden completions flag.

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

/// Runs `exe args…` isolated from the host's environment ([`crate::isolate`]).
pub fn run(exe: &Path, args: &[&str]) -> Output {
    let out = crate::isolate(&mut Command::new(exe))
        .args(args)
        .output()
        .expect("run the binary under test");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: text(&out.stdout),
        stderr: text(&out.stderr),
    }
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
