//! The error shape all three binaries share (`frontend::run`), as `git-agent`
//! prints it: `error: …`, with `--debug` one `caused by: …` per cause, `hint: …`
//! lines last, exit codes from `frontend`'s one table; keys masked and control
//! characters escaped on the way.

use frontend::ErrorKind;
use testkit::{FakeLlm, Flavor, Reply, TestRepo};

use crate::support::{KEY, git_agent, home, project, with_key};

#[test]
fn outside_a_repository_is_a_user_error_in_one_line() {
    let repo = TestRepo::new();
    let outside = repo.path().parent().unwrap();
    let home = home();
    let env = [
        ("OPENAI_API_KEY", KEY),
        ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
    ];
    for args in [&["commit-msg"][..], &["commit-msg", "--debug"]] {
        let run = git_agent(outside, home.path(), args, &env);
        assert_eq!(run.code, i32::from(ErrorKind::User.exit_code()), "{run:?}");
        let lines: Vec<&str> = run.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{run:?}");
        assert!(
            lines[0].starts_with("error: not a git repository"),
            "{run:?}"
        );
    }
}

#[test]
fn a_provider_error_has_its_hint_last_and_the_key_masked() {
    let repo = project();
    let home = home();
    let refusal = format!("invalid key {KEY} \u{1b}[2J");
    let server = FakeLlm::start(
        Flavor::OpenAiResponses,
        vec![Reply::error(401, &refusal), Reply::error(401, &refusal)],
    );
    for debug in [false, true] {
        let args: &[&str] = if debug {
            &["commit-msg", "--debug"]
        } else {
            &["commit-msg"]
        };
        let run = with_key(&repo, &home, args, &server.base_url());
        assert_eq!(run.code, i32::from(ErrorKind::Provider.exit_code()));
        let lines: Vec<&str> = run.stderr.lines().collect();
        // With --debug the session's path comes first.
        let shown = &lines[usize::from(debug)..];
        assert_eq!(shown.len(), 2, "{run:?}");
        assert!(
            shown[0].starts_with("error: openai-responses: HTTP 401: invalid key "),
            "{run:?}"
        );
        assert!(shown[0].ends_with(" \\x1b[2J"), "{run:?}");
        assert_eq!(shown[1], "hint: check OPENAI_API_KEY");
        assert!(!run.stderr.contains(KEY), "{run:?}");
    }
}

#[test]
fn debug_adds_the_causes() {
    let repo = project();
    let home = home();
    let server = FakeLlm::start(Flavor::OpenAiResponses, vec![]);
    let bad = home.path().join("missing-dir/notes.md");
    let args = ["release-note", "--out", bad.to_str().unwrap(), "patch"];
    let run = with_key(&repo, &home, &args, &server.base_url());
    assert_eq!(run.code, 1, "{run:?}");
    let plain: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(plain.len(), 1, "{run:?}");
    assert!(plain[0].starts_with("error: cannot write "), "{run:?}");

    let args = [&args[..], &["--debug"]].concat();
    let run = with_key(&repo, &home, &args, &server.base_url());
    let lines: Vec<&str> = run.stderr.lines().collect();
    // The message, then the file system's error, then the OS's.
    assert_eq!(lines.len(), 3, "{run:?}");
    assert_eq!(lines[0], plain[0]);
    assert!(
        plain[0].ends_with(&lines[1]["caused by: ".len()..]),
        "{run:?}"
    );
    assert_eq!(
        lines[2],
        "caused by: No such file or directory (os error 2)"
    );
}
