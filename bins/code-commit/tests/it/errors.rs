//! The error shape all three binaries share (`frontend::run`), as `code-commit`
//! prints it: `error: …`, with `--debug` one `caused by: …` per cause, exit codes
//! from `frontend`'s one table; keys masked and control characters escaped on
//! the way. A build that still fails is not an error of ours: exit 1, the
//! outcome on stdout (see `run.rs`).

use frontend::ErrorKind;
use testkit::{FakeLlm, Flavor, Reply, assert_starts_with};

use crate::run::{KEY, code_commit, project};

#[test]
fn outside_a_repository_is_a_user_error_and_debug_adds_git_s_reason() {
    let dir = tempfile::tempdir().unwrap();
    let run = code_commit(dir.path(), &[], &[]);
    assert_eq!(run.code, i32::from(ErrorKind::User.exit_code()));
    let plain: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(plain.len(), 1, "{}", run.stderr);
    assert!(plain[0].starts_with("error: "), "{}", run.stderr);
    assert!(plain[0].contains("is not inside a git working tree"));

    let run = code_commit(dir.path(), &["--debug"], &[]);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{}", run.stderr);
    assert_eq!(lines[0], plain[0]);
    assert!(
        lines[1].starts_with("caused by: not a git repository"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_provider_error_keeps_the_key_masked_with_or_without_debug() {
    let refusal = format!("invalid key {KEY}");
    let server = FakeLlm::start(
        Flavor::OpenAiChat,
        vec![Reply::error(401, &refusal), Reply::error(401, &refusal)],
    );
    let repo = project(&server);
    let run = code_commit(repo.path(), &["--quiet"], &[("MY_KEY", KEY)]);
    assert_eq!(run.code, i32::from(ErrorKind::Provider.exit_code()));
    let error = "error: the model could not be asked: openai-chat: HTTP 401: invalid key ";
    assert_starts_with(&run.stderr, error);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);

    let run = code_commit(repo.path(), &["--quiet", "--debug"], &[("MY_KEY", KEY)]);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{}", run.stderr);
    assert!(lines[0].starts_with(error), "{}", run.stderr);
    assert!(
        lines[1].starts_with("caused by: openai-chat: HTTP 401: invalid key "),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains(KEY) && !run.stdout.contains(KEY));
}

#[test]
fn control_characters_in_an_error_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let run = code_commit(
        dir.path(),
        &["--project", "gone\u{1b}[2J\u{7}", "--debug"],
        &[],
    );
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "error: gone\\x1b[2J\\x07: No such file or directory (os error 2)\n\
         caused by: No such file or directory (os error 2)\n"
    );
}
