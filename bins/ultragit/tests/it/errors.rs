//! The error shape all three binaries share (`frontend::run`), as `ultragit`
//! prints it: `error: …`, then with `--debug` one `caused by: …` per cause, exit
//! codes from `frontend`'s one table; keys masked and control characters
//! escaped on the way.

use frontend::ErrorKind;
use testkit::{FakeLlm, Flavor, Reply, TestRepo};

use crate::annotate::{KEY, KEY_VAR, configure, repo};
use crate::support::ultragit_with;

#[test]
fn outside_a_repository_is_a_user_error_in_one_line() {
    let repo = TestRepo::new();
    let outside = repo.path().parent().unwrap();
    let plain = ultragit_with(outside, &["show"], &[]);
    let expected = format!(
        "error: not a git repository (or any parent directory): {}\n",
        outside.display()
    );
    assert_eq!(
        (plain.code, plain.stderr.as_str()),
        (i32::from(ErrorKind::User.exit_code()), expected.as_str())
    );
    // No cause to add: --debug prints the same.
    let debug = ultragit_with(outside, &["show", "--debug"], &[]);
    assert_eq!((debug.code, debug.stderr), (plain.code, plain.stderr));
}

#[test]
fn debug_adds_the_causes_of_a_provider_error_with_the_key_masked() {
    let (repo, head) = repo();
    let refusal = format!("invalid key {KEY}");
    let server = FakeLlm::start(
        Flavor::OpenAiChat,
        vec![Reply::error(401, &refusal), Reply::error(401, &refusal)],
    );
    configure(&repo, &server);
    let error = format!(
        "error: annotating {} failed: Provider error: openai-chat: HTTP 401: invalid key ",
        &head[..7]
    );

    let run = ultragit_with(repo.path(), &["annotate"], &[(KEY_VAR, KEY)]);
    assert_eq!(run.code, i32::from(ErrorKind::Provider.exit_code()));
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{run:?}");
    assert!(lines[0].starts_with(&error), "{run:?}");

    let run = ultragit_with(repo.path(), &["annotate", "--debug"], &[(KEY_VAR, KEY)]);
    assert_eq!(run.code, 1, "{run:?}");
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 3, "{run:?}");
    assert!(lines[0].starts_with(&error), "{run:?}");
    assert!(
        lines[1].starts_with("caused by: Provider error: openai-chat: HTTP 401: invalid key "),
        "{run:?}"
    );
    assert!(
        lines[2].starts_with("caused by: openai-chat: HTTP 401: invalid key "),
        "{run:?}"
    );
    assert!(!run.stderr.contains(KEY), "{run:?}");
}

#[test]
fn control_characters_in_an_error_are_escaped() {
    let (repo, _) = repo();
    let run = ultragit_with(repo.path(), &["show", "v1\u{1b}[2J\u{7}"], &[]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.stderr, "error: unknown revision 'v1\\x1b[2J\\x07'\n");
}
