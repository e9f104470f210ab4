//! Untrusted model replies: a 100 MB reply fails clearly and cheaply, a large
//! invalid answer is repaired and reported within bounds, and control
//! characters reach neither the terminal nor the commit.

use testkit::{Reply, assert_starts_with, files_under};

use crate::support::{
    MESSAGE, chat, failed_commit_msg, home, project, responses, sessions, with_key,
};

/// No file of any session is larger than `max` bytes.
fn assert_sessions_small(repo: &testkit::TestRepo, max: u64) {
    let sessions = sessions(repo);
    assert_eq!(sessions.len(), 1);
    for path in files_under(&sessions[0]) {
        let size = std::fs::metadata(&path).unwrap().len();
        assert!(size <= max, "{} is {size} bytes", path.display());
    }
}

/// No terminal control character (but newline and tab) in `text`.
fn assert_terminal_safe(text: &str) {
    for c in text.chars() {
        assert!(
            c == '\n'
                || c == '\t'
                || !(c.is_control()
                    || ('\u{202a}'..='\u{202e}').contains(&c)
                    || ('\u{2066}'..='\u{2069}').contains(&c)),
            "{c:?} in {text:?}"
        );
    }
}

#[test]
fn a_100_mb_reply_fails_with_a_clear_error_and_leaves_little_behind() {
    for reply in [
        Reply::repeated_text("x", 100_000_000),
        Reply::repeated_text("chunked ", 12_500_000).chunked(),
    ] {
        let (repo, server, run) = failed_commit_msg(vec![reply]);
        assert_eq!(run.stdout, "");
        assert_starts_with(
            &run.stderr,
            "error: the reply from openai-responses was larger than 16 MiB, the most one reply may be",
        );
        assert!(
            run.stderr.len() < 1024,
            "stderr is {} bytes",
            run.stderr.len()
        );
        // One request: neither retried nor repaired.
        assert_eq!(server.requests().len(), 1);
        assert_sessions_small(&repo, 256 * 1024);
    }
}

#[test]
fn a_large_invalid_answer_is_repaired_with_a_small_request() {
    let repo = project();
    let home = home();
    // 2 MB of answer twice: over the 64 KiB a commit message may take, so each
    // is one problem, and the repair request quotes only 32 KiB of the first.
    let second = "Still \u{1b}]52;c;ZXZpbA==\u{7}talking.\n";
    let second_len = second.len() * 80_000;
    let (server, url) = responses(vec![
        Reply::repeated_text("Here is a very long line of commentary.\n", 50_000),
        Reply::repeated_text(second, 80_000),
    ]);
    let run = with_key(&repo, &home, &["commit-msg"], &url);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.stdout, "");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let first = requests[0].body.len();
    let repair = requests[1].body.len();
    assert!(
        repair < first + 48 * 1024,
        "the repair request is {repair} bytes, the first {first}"
    );
    let repair_text = String::from_utf8_lossy(&requests[1].body);
    assert!(
        repair_text.contains("the answer is 2000000 bytes long"),
        "{repair_text}"
    );
    assert!(repair_text.contains("bytes cut here"));

    let stderr = &run.stderr;
    assert!(
        stderr.starts_with(&format!(
            "error: the generated message is still invalid after one repair pass: the answer is {second_len} bytes long"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("the last message the model gave:\nStill \\x1b]52;c;ZXZpbA==\\x07talking.")
    );
    assert!(stderr.contains("bytes cut here"), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "the answer was {second_len} bytes; the session trace keeps more of it: "
        )),
        "{stderr}"
    );
    assert!(stderr.len() < 6 * 1024, "stderr is {} bytes", stderr.len());
    assert_terminal_safe(stderr);
    assert_sessions_small(&repo, 1024 * 1024 + 4096);
}

#[test]
fn a_large_answer_repaired_into_a_good_one_is_used() {
    let repo = project();
    let home = home();
    let (server, url) = chat(vec![
        Reply::repeated_text("word ", 1_000_000),
        Reply::text(MESSAGE),
    ]);
    let run = with_key(&repo, &home, &["commit-msg", "--api", "chat"], &url);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, &*format!("{MESSAGE}\n")),
        "{run:?}"
    );
    assert!(server.requests()[1].body.len() < 96 * 1024);
}

/// A clipboard write, a screen clear, a carriage return and a right-to-left
/// override.
const HOSTILE: &str = "\u{1b}]52;c;ZXZpbA==\u{7}\u{1b}[2J\r\u{202e}";

#[test]
fn control_characters_reach_neither_the_terminal_nor_the_commit() {
    let repo = project();
    let home = home();
    // A carriage return in an answer is a line break (shaping normalizes line
    // endings); everything else goes.
    let hostile = HOSTILE.replace('\r', "");
    let answer = format!(
        "{hostile}fix(net): retry connect {hostile}three times\n\nRetry up to three\u{1b}[31m times.\u{7f}"
    );
    let (server, url) = responses(vec![Reply::text(&answer), Reply::text(&answer)]);
    let run = with_key(&repo, &home, &["commit-msg"], &url);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stdout,
        "fix(net): retry connect three times\n\nRetry up to three times.\n"
    );

    // `commit`: the console trace on stdout is escaped, the commit is clean.
    let run = with_key(&repo, &home, &["commit"], &server.base_url());
    assert_eq!(run.code, 0, "{run:?}");
    assert_terminal_safe(&run.stdout);
    assert_terminal_safe(&run.stderr);
    assert_eq!(
        repo.git(&["log", "-1", "--format=%B"]).trim_end(),
        "fix(net): retry connect three times\n\nRetry up to three times."
    );
}

#[test]
fn provider_messages_are_escaped_on_stderr() {
    let reply = Reply::error(400, &format!("bad request {HOSTILE} indeed"));
    let (_repo, _server, run) = failed_commit_msg(vec![reply]);
    run.stderr_contains("bad request \\x1b]52;c;ZXZpbA==\\x07\\x1b[2J\\r\\u{202e} indeed");
    assert_terminal_safe(&run.stderr);
}
