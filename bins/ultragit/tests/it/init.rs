//! `ultragit init`, and the `post-commit` hook it installs annotating a real
//! `git commit` in the background.

use std::time::{Duration, Instant};

use testkit::{FakeLlm, Flavor, TestRepo, assert_contains};

use crate::annotate::{KEY, KEY_VAR, NET_V1, NET_V2, configure, note_of, script};
use crate::support::{has_note, stdout, ultragit};

const BEGIN: &str = "# >>> ultragit post-commit >>>";

fn hook(repo: &TestRepo) -> String {
    std::fs::read_to_string(repo.path().join(".git/hooks/post-commit")).unwrap()
}

fn config_all(repo: &TestRepo, key: &str) -> Vec<String> {
    let out = repo
        .command()
        .args(["config", "--get-all", key])
        .run_unchecked()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn init_sets_everything_up_once() {
    let repo = TestRepo::new();
    repo.commit_file("a.txt", "a\n", "First");

    let first = stdout(repo.path(), &["init"]);
    assert!(first.contains("refs/notes/ultragit (created)"), "{first}");
    assert!(first.contains("post-commit (created)\n"), "{first}");
    assert_contains(&first, "wrote the defaults of ultragit.maxDiffLines");
    assert_contains(&first, "  post-merge hook   ");
    assert!(first.contains("post-merge (created)\n"), "{first}");
    assert!(first.contains("  post-checkout     "), "{first}");
    assert!(first.contains("post-checkout (created)\n"), "{first}");
    assert_contains(
        &first,
        "  commit-graph     wrote one with changed-path Bloom filters (",
    );
    assert_contains(
        &first,
        "git gc and git maintenance keep the filters when they rewrite it",
    );
    let second = stdout(repo.path(), &["init"]);
    assert_contains(&second, "refs/notes/ultragit (already there)");
    assert_contains(
        &second,
        "  commit-graph     has changed-path Bloom filters already (left as it is)",
    );
    let skipped = stdout(repo.path(), &["init", "--no-commit-graph"]);
    assert_contains(
        &skipped,
        "  commit-graph     left as it is (--no-commit-graph)",
    );
    assert!(second.contains("(already installed; updated)"), "{second}");
    assert!(second.contains("[ultragit] already configured"), "{second}");

    let text = hook(&repo);
    assert!(text.starts_with("#!/bin/sh\n"), "{text}");
    assert_eq!(text.matches(BEGIN).count(), 1, "{text}");
    assert!(text.contains("annotate --async"), "{text}");
    let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_ultragit")).unwrap();
    assert!(
        text.contains(exe.to_str().unwrap()),
        "the hook runs this binary: {text}"
    );

    assert_eq!(
        config_all(&repo, "notes.rewriteRef"),
        ["refs/notes/ultragit"]
    );
    assert_eq!(config_all(&repo, "notes.rewrite.amend"), ["true"]);
    assert_eq!(config_all(&repo, "notes.rewrite.rebase"), ["true"]);
    assert_eq!(config_all(&repo, "ultragit.maxAgentTurns"), ["20"]);
    assert!(repo.path().join(".git/ultragit").is_dir());
    repo.git(&["rev-parse", "--verify", "refs/notes/ultragit"]);
}

#[test]
fn init_keeps_an_existing_hook() {
    let repo = TestRepo::new();
    repo.write_executable(
        ".git/hooks/post-commit",
        "#!/bin/bash\necho custom >> custom.log\nexit 0\n",
    );
    let out = stdout(repo.path(), &["init"]);
    assert_contains(&out, "(ultragit block added; the existing lines are kept)");
    stdout(repo.path(), &["init"]);
    let text = hook(&repo);
    assert!(text.starts_with("#!/bin/bash\n"), "{text}");
    assert_eq!(text.matches(BEGIN).count(), 1, "{text}");
    assert!(
        text.ends_with("echo custom >> custom.log\nexit 0\n"),
        "the custom lines stay, after the block: {text}"
    );
    assert_eq!(
        config_all(&repo, "notes.rewriteRef"),
        ["refs/notes/ultragit"]
    );
}

#[test]
fn init_leaves_a_hook_in_another_language_alone() {
    let repo = TestRepo::new();
    let python = "#!/usr/bin/env python3\nprint('custom')\n";
    repo.write_executable(".git/hooks/post-commit", python);
    let run = ultragit(repo.path(), &["init"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("not a shell script"), "{run:?}");
    assert!(
        run.stdout.contains("annotate --async"),
        "the manual line: {run:?}"
    );
    assert!(run.stderr.starts_with("warning: "), "{run:?}");
    assert_eq!(hook(&repo), python);
}

/// The whole write path: `ultragit init`, author context, a real `git commit` whose
/// hook starts the background annotation, and the note showing up.
#[test]
fn the_post_commit_hook_annotates_in_the_background() {
    let repo = TestRepo::new();
    repo.commit_file("src/net.rs", NET_V1, "Add connect");
    // The server must outlive the background annotation: it lives to the end.
    let server = FakeLlm::start(Flavor::OpenAiChat, script());
    configure(&repo, &server);
    stdout(repo.path(), &["init"]);
    stdout(
        repo.path(),
        &["context", "set", "--task", "Retry from the hook"],
    );

    repo.write("src/net.rs", NET_V2);
    repo.git(&["add", "--", "src/net.rs"]);
    repo.command()
        .args(["commit", "--quiet", "-m", "Add retry_connect"])
        .env(KEY_VAR, KEY)
        .run()
        .expect("git commit runs the hook and succeeds");
    let head = repo.rev_parse("HEAD");
    let state = repo.path().join(".git/ultragit");
    assert!(
        !state.join("pending-context.json").exists(),
        "the hook claimed the pending context for its commit"
    );

    // Poll (no timing assertion): the note, then the consumed context file.
    let claimed = state.join(format!("context-{head}.json"));
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if has_note(&repo, &head) && !claimed.exists() {
            break;
        }
        if Instant::now() > deadline {
            let log = std::fs::read_to_string(state.join("annotate.log")).unwrap_or_default();
            panic!("no note for {head} after 60 s; annotate.log:\n{log}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }

    let note = note_of(&repo, &head);
    assert_eq!(note["commit"], head.as_str());
    assert_eq!(note["context_level"], "enhanced");
    assert_eq!(note["task"], "Retry from the hook");
    assert_eq!(note["regions"][0]["ast_anchor"]["name"], "retry_connect");
    assert_eq!(server.requests().len(), 2);
    let log = std::fs::read_to_string(state.join("annotate.log")).unwrap();
    assert!(log.contains(&format!("annotated {}", &head[..7])), "{log}");
    assert!(!log.contains(KEY), "{log}");
    assert!(!state.join("failed.log").exists());
}

#[test]
fn the_hook_leaves_rebased_commits_to_notes_rewriting() {
    let repo = TestRepo::new();
    repo.commit_file("src/net.rs", NET_V1, "Add connect");
    stdout(
        repo.path(),
        &["context", "set", "--task", "For the next commit"],
    );
    std::fs::create_dir_all(repo.path().join(".git/rebase-merge")).unwrap();
    let run = ultragit(repo.path(), &["annotate", "--async"]);
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (0, "", "")
    );
    let state = repo.path().join(".git/ultragit");
    assert!(state.join("pending-context.json").is_file(), "not claimed");
    assert!(!state.join("annotate.log").exists(), "nothing started");
}

#[test]
fn a_commit_graph_that_cannot_be_written_is_a_warning_not_a_failure() {
    let repo = TestRepo::new();
    repo.commit_file("a.txt", "a\n", "First");
    // Another git process holds the commit-graph's lock.
    repo.write(".git/objects/info/commit-graph.lock", "");
    let run = ultragit(repo.path(), &["init"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_contains(
        &run.stdout,
        "  commit-graph     not written (see the warning)",
    );
    assert!(
        run.stderr
            .starts_with("warning: could not write a commit-graph (`git commit-graph write"),
        "{run:?}"
    );
    assert_contains(
        &run.stderr,
        "run `git commit-graph write --reachable --changed-paths` later",
    );
    assert!(!repo.join(".git/objects/info/commit-graph").exists());

    // Turned off by the user: not written, and said why.
    std::fs::remove_file(repo.join(".git/objects/info/commit-graph.lock")).unwrap();
    repo.git(&["config", "core.commitGraph", "false"]);
    let run = ultragit(repo.path(), &["init"]);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{run:?}");
    assert_contains(
        &run.stdout,
        "  commit-graph     not written: core.commitGraph is false, so git would not read it",
    );
    assert!(!repo.join(".git/objects/info/commit-graph").exists());
}
