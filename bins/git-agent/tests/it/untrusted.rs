//! The repository is untrusted (issue 13), as `git-agent` meets it: links in
//! `.git-agent/` never redirect a write, a tracked `.git-agent/` is not written
//! into, and no command or tool runs a program the repository configured.

use std::os::unix::fs::symlink;
use std::path::PathBuf;

use serde_json::json;
use tempfile::TempDir;
use testkit::hostile::Hostile;
use testkit::{FakeLlm, Flavor, Reply, TestRepo, call};

use crate::support::{
    MESSAGE, Run, all_text, git_agent, home, project, responses, sessions, with_key,
};

/// A file outside the repository that an attacker would like overwritten.
fn victim() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("authorized_keys");
    std::fs::write(&file, "precious\n").unwrap();
    (dir, file)
}

fn refusing_hook(repo: &testkit::TestRepo) {
    repo.write_executable(
        ".git/hooks/pre-commit",
        "#!/bin/sh\necho 'pre-commit: lint failed' >&2\nexit 1\n",
    );
}

/// A project whose `.git-agent/COMMIT_MSG` is a link to a victim file outside
/// (`tracked`: committed, as a clone would have it), after `git-agent commit`
/// failed on a refusing pre-commit hook: the project, the victim's folder, the
/// victim, and the run.
fn commit_past_a_message_link(tracked: bool) -> (TestRepo, TempDir, PathBuf, Run) {
    let repo = project();
    let (outside, victim) = victim();
    std::fs::create_dir(repo.join(".git-agent")).unwrap();
    symlink(&victim, repo.join(".git-agent/COMMIT_MSG")).unwrap();
    if tracked {
        repo.stage(&[".git-agent/COMMIT_MSG"]);
    }
    refusing_hook(&repo);
    let home = home();
    let (_server, url) = responses(vec![Reply::text(MESSAGE)]);
    let run = with_key(&repo, &home, &["commit"], &url);
    assert_eq!(run.code, 1, "{run:?}");
    (repo, outside, victim, run)
}

#[test]
fn a_committed_commit_msg_link_cannot_redirect_the_saved_message() {
    let (_repo, outside, victim, run) = commit_past_a_message_link(true);
    run.stderr_contains("git commit failed");
    // The message is printed, not saved through the link.
    run.stderr_contains(MESSAGE);
    run.stderr_contains("commit it yourself with `git commit -F -`");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 1);
}

#[test]
fn an_untracked_commit_msg_link_is_replaced_not_followed() {
    let (repo, _outside, victim, _run) = commit_past_a_message_link(false);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    let saved = repo.join(".git-agent/COMMIT_MSG");
    assert!(!std::fs::symlink_metadata(&saved).unwrap().is_symlink());
    assert_eq!(
        std::fs::read_to_string(saved).unwrap(),
        format!("{MESSAGE}\n")
    );
}

#[test]
fn a_sessions_link_cannot_send_traces_elsewhere() {
    for tracked in [true, false] {
        let repo = project();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(repo.join(".git-agent")).unwrap();
        symlink(outside.path(), repo.join(".git-agent/sessions")).unwrap();
        if tracked {
            repo.stage(&[".git-agent/sessions"]);
        }
        let home = home();
        let (_server, url) = responses(vec![Reply::text(&format!(
            "{MESSAGE}\n\nRetry up to three times."
        ))]);
        let run = with_key(&repo, &home, &["commit-msg"], &url);
        // The message still comes; the trace does not, and stderr says why.
        assert_eq!(run.code, 0, "tracked={tracked}: {run:?}");
        assert!(run.stdout.starts_with(MESSAGE), "{run:?}");
        assert!(
            run.stderr.starts_with("warning: no trace is kept: "),
            "{run:?}"
        );
        let why = if tracked {
            "git tracks .git-agent"
        } else {
            "symbolic link"
        };
        assert!(run.stderr.contains(why), "tracked={tracked}: {run:?}");
        assert_eq!(
            std::fs::read_dir(outside.path()).unwrap().count(),
            0,
            "a trace was written through the link"
        );
    }
}

#[test]
fn no_command_or_tool_runs_a_program_the_repository_configured() {
    let hostile = Hostile::new();
    let repo = &hostile.repo;
    repo.git(&["remote", "add", "origin", "https://github.com/acme/app.git"]);
    repo.tag("v1.0.0");
    repo.set_origin_head("main", "HEAD~1");
    repo.write(
        "src/net.rs",
        format!("{}\npub fn more() {{}}\n", testkit::hostile::SOURCE),
    );
    repo.stage(&["src/net.rs"]);
    hostile.make_stat_stale();
    hostile.clear();
    let home = home();

    let server = FakeLlm::start(
        Flavor::OpenAiResponses,
        vec![
            Reply::tool_calls(vec![
                call("c1", "git_staged_stat", json!({})),
                call("c2", "git_status_summary", json!({})),
                call("c3", "read_file", json!({"path": "notes.txt"})),
                call("c4", "search_files", json!({"pattern": "connect"})),
                call("c5", "list_files", json!({})),
                call("c6", "repo_summary", json!({})),
            ]),
            Reply::text(&format!("{MESSAGE}\n\nRetry up to three times.")),
        ],
    );
    let run = with_key(repo, &home, &["commit-msg"], &server.base_url());
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(server.requests().len(), 2);
    hostile.assert_no_program_ran("git-agent commit-msg and its tools");

    repo.commit("feat: add more");
    hostile.make_stat_stale();
    hostile.clear();
    let server = FakeLlm::start(
        Flavor::OpenAiResponses,
        vec![Reply::text("feat(net): add more")],
    );
    let run = with_key(repo, &home, &["pr-message"], &server.base_url());
    assert_eq!(run.code, 0, "{run:?}");
    hostile.assert_no_program_ran("git-agent pr-message");

    let server = FakeLlm::start(
        Flavor::OpenAiResponses,
        vec![Reply::text(
            &json!({"sections": [{"section": "features", "items": [
                {"text": "Add `more` to the network helpers.", "refs": [{"kind": "commit", "id": &repo.rev_parse("HEAD")[..7]}]}
            ]}]})
            .to_string(),
        )],
    );
    let run = with_key(
        repo,
        &home,
        &["release-note", "v1.0.0", "HEAD"],
        &server.base_url(),
    );
    assert_eq!(run.code, 0, "{run:?}");
    hostile.assert_no_program_ran("git-agent release-note");

    for (tool, args) in [
        ("git_status_summary", "{}"),
        ("repo_summary", "{}"),
        ("list_files", "{}"),
        ("read_file", r#"{"path": "src/net.rs"}"#),
        ("search_files", r#"{"pattern": "retry"}"#),
    ] {
        hostile.make_stat_stale();
        let run = git_agent(
            repo.path(),
            home.path(),
            &["tools", "call", tool, args],
            &[],
        );
        assert_eq!(run.code, 0, "{tool}: {run:?}");
        hostile.assert_no_program_ran(&format!("git-agent tools call {tool}"));
    }
    assert!(!all_text(&sessions(repo)[0]).is_empty());
}

#[test]
fn release_note_out_never_writes_through_a_link_in_the_repository() {
    let repo = testkit::TestRepo::new();
    repo.commit_file("src/app.rs", "pub fn run() {}\n", "feat: first");
    repo.tag("v1.0.0");
    let outside = tempfile::tempdir().unwrap();
    symlink(outside.path(), repo.join("docs")).unwrap();
    repo.stage(&["docs"]);
    repo.commit("docs: link");
    let home = home();
    let server = FakeLlm::start(Flavor::OpenAiResponses, vec![]);
    for out in ["docs/notes.md", "./src/../docs/notes.md"] {
        let run = with_key(
            &repo,
            &home,
            &["release-note", "--out", out, "v1.0.0", "HEAD"],
            &server.base_url(),
        );
        assert_eq!(run.code, 1, "{out}: {run:?}");
        assert!(
            run.stderr.contains("cannot write") && run.stderr.contains("symbolic link"),
            "{out}: {run:?}"
        );
    }
    assert!(server.requests().is_empty(), "refused before any request");
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}
