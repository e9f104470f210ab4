//! Running part of a test in a separate process.
//!
//! A parent test re-runs this test binary, selecting one `child_*` test with
//! `--exact`, and passes its instructions in `GITCTX_TEST_CHILD`. Without that
//! variable the `child_*` tests return at once: they are entry points, not tests of
//! their own.

use std::process::{Command, Output};

pub const VAR: &str = "GITCTX_TEST_CHILD";

/// Runs `test` (a full test path such as `notes::child_writer`) in a new process of
/// this test binary, with `instructions` in [`VAR`] and `extra_env` set.
pub fn spawn(test: &str, instructions: &str, extra_env: &[(&str, &str)]) -> std::process::Child {
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut cmd = Command::new(exe);
    cmd.args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(VAR, instructions)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    cmd.spawn().expect("spawn a child test process")
}

/// Waits for a child and asserts it ran exactly one passing test.
pub fn expect_success(child: std::process::Child) -> Output {
    let output = child.wait_with_output().expect("wait for the child");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "child failed:\nstdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The instructions, when this process is a child.
pub fn instructions() -> Option<String> {
    std::env::var(VAR).ok()
}

/// The first `N` lines of the instructions, when this process is a child.
pub fn instruction_lines<const N: usize>() -> Option<[String; N]> {
    let lines: Vec<String> = instructions()?.lines().take(N).map(str::to_owned).collect();
    Some(
        lines
            .try_into()
            .unwrap_or_else(|lines| panic!("{N} lines of instructions expected: {lines:?}")),
    )
}
