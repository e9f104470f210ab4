//! `git-agent commit-msg` and `git-agent commit`: stdout/stderr contracts, trace
//! sessions, credentials, and commits made (or refused) by git.

use serde_json::json;
use testkit::{Reply, TestRepo, assert_starts_with, call};

use crate::support::{
    KEY, MESSAGE, all_text, chat, codex_home, failed_commit_msg, git_agent, home, project,
    responses, sessions, with_key,
};

#[test]
fn commit_msg_prints_only_the_message_and_keeps_a_trace() {
    let repo = project();
    let home = home();
    let (server, url) = responses(vec![
        Reply::tool_calls(vec![call("c1", "git_staged_stat", json!({}))]),
        Reply::text(&format!("{MESSAGE}\n\nRetry up to three times.")),
    ]);
    let run = with_key(&repo, &home, &["commit-msg"], &url);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stdout,
        format!("{MESSAGE}\n\nRetry up to three times.\n")
    );
    assert_eq!(run.stderr, "");
    // The key travelled in the header only.
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert!(!String::from_utf8_lossy(&requests[0].body).contains(KEY));
    // One session with the events, and no key in it.
    let sessions = sessions(&repo);
    assert_eq!(sessions.len(), 1);
    let name = sessions[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(name.ends_with("-commit-msg"), "{name}");
    let events = std::fs::read_to_string(sessions[0].join("events.ndjson")).unwrap();
    for kind in [
        "\"run.started\"",
        "\"request\"",
        "\"tool.call\"",
        "\"tool.output\"",
        "\"final\"",
    ] {
        assert!(events.contains(kind), "{kind} missing");
    }
    assert!(sessions[0].join("session.json").is_file());
    assert!(!all_text(&sessions[0]).contains(KEY));
    // .git-agent/ stays out of git.
    assert_eq!(
        repo.git(&["status", "--porcelain", "--untracked-files=all"]),
        "M  src/net.rs\n"
    );
    // Nothing was committed.
    assert_eq!(repo.git(&["rev-list", "--count", "HEAD"]).trim(), "1");
}

#[test]
fn debug_prints_the_session_and_a_summary_on_stderr() {
    let repo = project();
    let home = home();
    let (server, url) = responses(vec![Reply::text(MESSAGE).usage(100, 10)]);
    let run = with_key(
        &repo,
        &home,
        &["commit-msg", "--debug", "--high", "--fast"],
        &url,
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, format!("{MESSAGE}\n"));
    run.stderr_contains("session: ");
    run.stderr_contains(".git-agent/sessions/");
    run.stderr_contains("steps=1 tool_calls=0");
    let body = server.requests()[0].json();
    assert_eq!(body["reasoning"]["effort"], json!("high"));
    assert_eq!(body["service_tier"], json!("priority"));
}

#[test]
fn chatgpt_sign_in_from_codex_is_used_first() {
    let repo = project();
    let home = home();
    let codex = codex_home(&home, None);
    let (server, url) = responses(vec![Reply::text(MESSAGE)]);
    let run = git_agent(
        repo.path(),
        home.path(),
        &["commit-msg", "--base-url", &url, "--model", "gpt-test"],
        &[
            ("CODEX_HOME", codex.to_str().unwrap()),
            ("OPENAI_API_KEY", KEY),
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let request = &server.requests()[0];
    assert_eq!(
        request.header("authorization"),
        Some("Bearer chatgpt-access-token-xyz")
    );
    assert_eq!(request.header("chatgpt-account-id"), Some("acct-42"));
    assert_eq!(request.json()["model"], json!("gpt-test"));
    assert!(!all_text(&sessions(&repo)[0]).contains("chatgpt-access-token-xyz"));
}

#[test]
fn a_local_chat_server_needs_no_key() {
    let repo = project();
    let home = home();
    let (server, url) = chat(vec![Reply::text(&format!("<think>hmm</think>{MESSAGE}"))]);
    let run = git_agent(
        repo.path(),
        home.path(),
        &[
            "commit-msg",
            "--api",
            "chat",
            "--base-url",
            &url,
            "--model",
            "local",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, format!("{MESSAGE}\n"));
    let request = &server.requests()[0];
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(request.header("authorization"), None);
}

#[test]
fn commit_streams_the_trace_then_git_s_summary() {
    let repo = project();
    let home = home();
    let (_server, url) = responses(vec![Reply::text(&format!(
        "{MESSAGE}\n\nRetry up to three times."
    ))]);
    let run = with_key(&repo, &home, &["commit"], &url);
    assert_eq!(run.code, 0, "{run:?}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert!(
        lines[0].contains(" INF session.started command=commit"),
        "{}",
        run.stdout
    );
    run.stdout_contains(" INF final ");
    run.stdout_contains("request_bytes=");
    run.stdout_contains("[main ");
    assert!(run.stdout.contains(MESSAGE));
    assert!(!run.stdout.contains(KEY) && !run.stderr.contains(KEY));
    assert_eq!(
        repo.git(&["log", "-1", "--format=%B"]).trim_end(),
        format!("{MESSAGE}\n\nRetry up to three times.")
    );
    assert!(sessions(&repo).is_empty(), "commit writes no session");
}

#[test]
fn commit_amend_keeps_the_author_and_the_subject() {
    let repo = project();
    repo.commit("fix(net): retry connect\n\nFirst version.");
    let author = repo.git(&["log", "-1", "--format=%an <%ae> %at"]);
    repo.write("README.md", "Connect retries.\n")
        .stage(&["README.md"]);
    let home = home();
    let (_server, url) = responses(vec![Reply::text(
        "fix(net): retry connect\n\nRetries three times; the README says so.",
    )]);
    let run = git_agent(
        repo.path(),
        home.path(),
        &["commit", "--amend"],
        &[
            ("OPENAI_API_KEY", KEY),
            ("OPENAI_BASE_URL", &url),
            ("GIT_COMMITTER_NAME", "Other Committer"),
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(repo.git(&["rev-list", "--count", "HEAD"]).trim(), "2");
    assert_eq!(repo.git(&["log", "-1", "--format=%an <%ae> %at"]), author);
    assert_eq!(
        repo.git(&["log", "-1", "--format=%cn"]).trim(),
        "Other Committer"
    );
    assert_eq!(
        repo.git(&["log", "-1", "--format=%B"]).trim_end(),
        "fix(net): retry connect\n\nRetries three times; the README says so."
    );
    assert_eq!(
        repo.git(&["show", "--format=", "--name-only", "HEAD"]),
        "README.md\nsrc/net.rs\n"
    );
}

#[test]
fn a_refused_commit_fails_and_keeps_the_message() {
    let repo = project();
    repo.write_executable(
        ".git/hooks/pre-commit",
        "#!/bin/sh\necho 'pre-commit: lint failed' >&2\nexit 1\n",
    );
    let home = home();
    let (_server, url) = responses(vec![Reply::text(MESSAGE)]);
    let run = with_key(&repo, &home, &["commit"], &url);
    assert_eq!(run.code, 1, "{run:?}");
    run.stderr_contains("pre-commit: lint failed");
    run.stderr_contains("git commit failed (exit status 1)");
    run.stderr_contains(MESSAGE);
    run.stdout_contains("commit.failed");
    let saved = std::fs::read_to_string(repo.join(".git-agent/COMMIT_MSG")).unwrap();
    assert_eq!(saved, format!("{MESSAGE}\n"));
    assert_eq!(repo.git(&["rev-list", "--count", "HEAD"]).trim(), "1");
    // The staged change is still staged.
    assert_eq!(
        repo.git(&["diff", "--cached", "--name-only"]),
        "src/net.rs\n"
    );
}

#[test]
fn missing_credentials_and_empty_stages_fail_before_any_request() {
    let repo = project();
    let home = home();
    let run = git_agent(repo.path(), home.path(), &["commit-msg"], &[]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "");
    assert_starts_with(&run.stderr, "error: no credentials");
    run.stderr_contains("OPENAI_API_KEY");

    let (server, url) = responses(vec![]);
    repo.commit("feat: retry");
    let run = with_key(&repo, &home, &["commit-msg"], &url);
    assert_eq!(run.code, 1);
    run.stderr_contains("nothing is staged");
    assert!(server.requests().is_empty());

    let outside = tempfile::tempdir().unwrap();
    let run = git_agent(
        outside.path(),
        home.path(),
        &["commit-msg"],
        &[("OPENAI_API_KEY", KEY), ("OPENAI_BASE_URL", &url)],
    );
    assert_eq!(run.code, 1);
    run.stderr_contains("not a git repository");
}

#[test]
fn provider_errors_are_one_clear_line_without_the_key() {
    let reply = Reply::error(401, &format!("Incorrect API key provided: {KEY}"));
    let (repo, _server, run) = failed_commit_msg(vec![reply]);
    assert_eq!(run.stdout, "");
    run.stderr_contains("HTTP 401");
    run.stderr_contains("hint: check OPENAI_API_KEY");
    assert!(!run.stderr.contains(KEY), "{}", run.stderr);
    assert!(!all_text(&sessions(&repo)[0]).contains(KEY));
}

#[test]
fn bad_flags_are_usage_errors() {
    let repo = project();
    let home = home();
    for (args, says) in [
        (&["commit-msg", "--low", "--high"][..], ""),
        (&["commit-msg", "--timeout", "soon"][..], "not a duration"),
        (
            &["commit-msg", "--guidance-family", "cursor"][..],
            "auto, agents, claude, none",
        ),
    ] {
        let run = git_agent(repo.path(), home.path(), args, &[]);
        assert_eq!(run.code, 2, "{args:?}: {run:?}");
        run.stderr_contains(says);
    }
    let long = "x".repeat(5000);
    let run = git_agent(
        repo.path(),
        home.path(),
        &[
            "commit-msg",
            "--append-prompt",
            &long,
            "--api",
            "chat",
            "--base-url",
            "http://127.0.0.1:9/v1",
        ],
        &[],
    );
    assert_eq!(run.code, 1, "{run:?}");
    run.stderr_contains("--append-prompt is 5000 characters");
}

/// `project()` pushed as origin/main, then a branch with two commits.
fn branch() -> TestRepo {
    let repo = project();
    repo.commit("feat: add connect retries");
    repo.set_origin_head("main", "HEAD~1");
    repo.write("README.md", "Retries three times.\n");
    repo.commit_all("docs: readme");
    repo
}

#[test]
fn pr_message_prints_the_squash_message() {
    let repo = branch();
    let home = home();
    let (server, url) = responses(vec![Reply::text("feat(net): retry connects three times")]);
    let run = with_key(&repo, &home, &["pr-message"], &url);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, "feat(net): retry connects three times\n");
    let body = server.requests()[0].json();
    assert!(body.get("tools").is_none(), "{body}");
    let sessions = sessions(&repo);
    assert_eq!(sessions.len(), 1);
    assert!(sessions[0].to_string_lossy().ends_with("-pr-message"));

    // Without origin/HEAD: a clear error, no request.
    repo.git(&["symbolic-ref", "--delete", "refs/remotes/origin/HEAD"]);
    let (server, url) = responses(vec![]);
    let run = with_key(&repo, &home, &["pr-message"], &url);
    assert_eq!(run.code, 1, "{run:?}");
    run.stderr_contains("git remote set-head origin --auto");
    assert!(server.requests().is_empty());
}

/// A tagged history with a feature after the tag.
fn tagged() -> TestRepo {
    let repo = TestRepo::new();
    repo.git(&["remote", "add", "origin", "https://github.com/acme/app.git"]);
    repo.commit_file("src/app.rs", "pub fn run() {}\n", "feat: first");
    repo.tag("v1.0.0");
    repo.commit_file(
        "src/app.rs",
        "pub fn run() {}\npub fn stop() {}\n",
        "feat: add stop (#7)",
    );
    repo
}

fn release_answer(repo: &TestRepo) -> String {
    let short = &repo.rev_parse("HEAD")[..7];
    json!({"sections": [{"section": "features", "items": [
        {"text": "Add `stop` to end a run cleanly.", "refs": [{"kind": "commit", "id": short}, {"kind": "pull_request", "id": "#7"}]}
    ]}]})
    .to_string()
}

#[test]
fn release_note_prints_markdown_and_keeps_a_trace() {
    let repo = tagged();
    let home = home();
    let (server, url) = responses(vec![Reply::text(&release_answer(&repo))]);
    let run = with_key(&repo, &home, &["release-note", "minor"], &url);
    assert_eq!(run.code, 0, "{run:?}");
    assert_starts_with(
        &run.stdout,
        "### Features\n\n- Add `stop` to end a run cleanly. ([",
    );
    run.stdout_contains("https://github.com/acme/app/pull/7");
    run.stdout_contains("### Full Changelog");
    assert!(
        sessions(&repo)[0]
            .to_string_lossy()
            .ends_with("-release-note")
    );
    let body = String::from_utf8_lossy(&server.requests()[0].body).into_owned();
    assert!(body.contains("release version 1.1.0"), "{body}");
}

#[test]
fn release_note_out_writes_the_file_and_streams_the_trace() {
    let repo = tagged();
    let home = home();
    let (_server, url) = responses(vec![Reply::text(&release_answer(&repo))]);
    let out = home.path().join("notes.md");
    let run = with_key(
        &repo,
        &home,
        &[
            "release-note",
            "--out",
            out.to_str().unwrap(),
            "v1.0.0",
            "HEAD",
        ],
        &url,
    );
    assert_eq!(run.code, 0, "{run:?}");
    let written = std::fs::read_to_string(&out).unwrap();
    assert!(written.starts_with("### Features\n"), "{written}");
    run.stdout_contains(" INF session.started command=release-note");
    run.stdout_contains(" INF output.written");
    // The Markdown is in the file; stdout only previews it inside the trace.
    assert!(
        run.stdout.lines().all(|l| !l.starts_with("###")),
        "{}",
        run.stdout
    );
    assert!(sessions(&repo).is_empty(), "no session with --out");

    // An unwritable target fails before any request.
    let (server, url) = responses(vec![]);
    let bad = home.path().join("missing-dir/notes.md");
    let run = with_key(
        &repo,
        &home,
        &["release-note", "--out", bad.to_str().unwrap(), "patch"],
        &url,
    );
    assert_eq!(run.code, 1, "{run:?}");
    run.stderr_contains("cannot write");
    assert!(server.requests().is_empty());
    assert!(!bad.exists());
}

#[test]
fn release_note_ranges_are_checked() {
    let repo = TestRepo::new();
    repo.commit_file("a.txt", "1\n", "one");
    let home = home();
    let (server, url) = responses(vec![]);
    let run = with_key(&repo, &home, &["release-note", "patch"], &url);
    assert_eq!(run.code, 1, "{run:?}");
    run.stderr_contains("no tag like v1.2.3");
    let run = with_key(&repo, &home, &["release-note", "v1.0.0"], &url);
    assert_eq!(run.code, 2, "{run:?}");
    run.stderr_contains("patch, minor, major");
    let run = with_key(&repo, &home, &["release-note", "nope", "HEAD"], &url);
    assert_eq!(run.code, 1, "{run:?}");
    run.stderr_contains("unknown revision 'nope'");
    assert!(server.requests().is_empty());
}
