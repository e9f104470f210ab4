//! `init`: hook installation and configuration.

use std::path::Path;

use testkit::{TestRepo, assert_contains, assert_starts_with};
use ultragit_annotate::setup::{HOOK_BEGIN, HookChange, init};

fn hook(repo: &TestRepo) -> String {
    std::fs::read_to_string(repo.join(".git/hooks/post-commit")).unwrap()
}

/// Every value of the config `key` in `repo`, one a line.
fn config_all(repo: &TestRepo, key: &str) -> String {
    repo.command()
        .args(["config", "--get-all", key])
        .run_text()
        .unwrap()
}

/// Whether `key` has no value in `repo`'s config (`git config` exits 1).
fn unset(repo: &TestRepo, key: &str) -> bool {
    let out = repo
        .command()
        .args(["config", "--get-all", key])
        .run_unchecked()
        .unwrap();
    out.status.code() == Some(1)
}

#[test]
fn init_creates_the_ref_the_hook_and_the_config_once() {
    let repo = TestRepo::new();
    repo.commit_file("a.txt", "a\n", "a");
    let r = gitctx::Repo::discover(repo.path()).unwrap();
    let exe = Path::new("/opt/ultra git/bin/ultragit");
    let first = init(&r, exe).unwrap();
    assert!(first.notes_ref_created);
    assert_eq!(first.hook, HookChange::Created);
    assert!(
        first
            .config_written
            .contains(&"ultragit.maxAgentTurns".to_owned())
    );
    assert!(repo.join(".git/ultragit").is_dir());
    let text = hook(&repo);
    assert_starts_with(&text, "#!/bin/sh\n# >>> ultragit post-commit >>>\n");
    assert!(
        text.contains("'/opt/ultra git/bin/ultragit' annotate --async >/dev/null 2>&1 || true\n"),
        "{text}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(repo.join(".git/hooks/post-commit"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o111, 0o111);
    }
    let second = init(&r, exe).unwrap();
    assert!(!second.notes_ref_created);
    assert_eq!(second.hook, HookChange::Updated);
    assert!(second.config_written.is_empty());
    assert_eq!(hook(&repo).matches(HOOK_BEGIN).count(), 1);
    assert_eq!(
        config_all(&repo, "notes.rewriteRef"),
        "refs/notes/ultragit\n"
    );
    assert_eq!(config_all(&repo, "notes.rewrite.amend"), "true\n");
    assert_eq!(config_all(&repo, "notes.rewrite.rebase"), "true\n");
    assert_eq!(config_all(&repo, "ultragit.chunkSize"), "5\n");
    assert!(
        unset(&repo, "notes.rewriteMode"),
        "the rewrite mode applies to every notes ref: it is the user's"
    );
}

#[test]
fn init_leaves_the_rewrite_mode_as_it_finds_it() {
    // Whoever set it (the user, or an older `init`), it stays: nothing tells
    // the two apart, and doctor points `ignore` out.
    for mode in ["ignore", "cat_sort_uniq"] {
        let repo = TestRepo::new();
        repo.commit_file("a.txt", "a\n", "a");
        repo.git(&["config", "notes.rewriteMode", mode]);
        let r = gitctx::Repo::discover(repo.path()).unwrap();
        let report = init(&r, Path::new("/usr/bin/ultragit")).unwrap();
        assert_eq!(config_all(&repo, "notes.rewriteMode"), format!("{mode}\n"));
        assert!(
            !report
                .config_written
                .iter()
                .any(|k| k.starts_with("notes.")),
            "{report:?}"
        );
    }
}

#[test]
fn existing_hooks_are_kept() {
    let repo = TestRepo::new();
    repo.commit_file("a.txt", "a\n", "a");
    let custom = "#!/bin/bash\necho 'my hook'\nexit 0\n";
    repo.write(".git/hooks/post-commit", custom);
    let r = gitctx::Repo::discover(repo.path()).unwrap();
    let report = init(&r, Path::new("/usr/bin/ultragit")).unwrap();
    assert_eq!(report.hook, HookChange::Added);
    let text = hook(&repo);
    assert!(
        text.starts_with("#!/bin/bash\n# >>> ultragit post-commit >>>"),
        "before any `exit`: {text}"
    );
    assert!(text.ends_with("echo 'my hook'\nexit 0\n"), "{text}");
    init(&r, Path::new("/usr/bin/ultragit")).unwrap();
    assert_eq!(hook(&repo).matches(HOOK_BEGIN).count(), 1);
    assert!(hook(&repo).contains("echo 'my hook'"));
    // A hook in another language is left alone.
    repo.write(
        ".git/hooks/post-commit",
        "#!/usr/bin/env python3\nprint('hi')\n",
    );
    let report = init(&r, Path::new("/usr/bin/ultragit")).unwrap();
    assert!(matches!(report.hook, HookChange::NotShell { .. }));
    assert_eq!(hook(&repo), "#!/usr/bin/env python3\nprint('hi')\n");
}

#[test]
fn hooks_path_is_honoured() {
    let repo = TestRepo::new();
    repo.commit_file("a.txt", "a\n", "a");
    repo.git(&["config", "core.hooksPath", "githooks"]);
    let r = gitctx::Repo::discover(repo.path()).unwrap();
    let report = init(&r, Path::new("/usr/bin/ultragit")).unwrap();
    assert_eq!(report.hook_path, repo.join("githooks/post-commit"));
    assert!(repo.join("githooks/post-commit").exists());
}

#[test]
fn the_post_rewrite_hook_hands_git_input_on_to_an_existing_hook() {
    let repo = TestRepo::new();
    repo.commit_file("a.txt", "a\n", "a");
    repo.write_executable(
        ".git/hooks/post-rewrite",
        "#!/bin/sh\ncat > \"$(git rev-parse --git-dir)/seen.txt\"\necho \"$1\" >> \"$(git rev-parse --git-dir)/seen.txt\"\n",
    );
    let r = gitctx::Repo::discover(repo.path()).unwrap();
    // The binary does not exist: the block must still never fail the hook.
    let report = init(&r, Path::new("/nonexistent/ultragit")).unwrap();
    assert_eq!(report.rewrite_hook, HookChange::Added);
    assert_eq!(report.hook, HookChange::Created);
    let text = std::fs::read_to_string(&report.rewrite_hook_path).unwrap();
    assert_starts_with(&text, "#!/bin/sh\n# >>> ultragit post-rewrite >>>\n");
    assert_contains(&text, "/nonexistent/ultragit rewritten \"$1\"");
    assert!(ultragit_annotate::setup::hook_installed(
        &repo.join(".git/hooks"),
        "post-rewrite"
    ));

    let input = "1111111111111111111111111111111111111111 2222222222222222222222222222222222222222\n\
                 3333333333333333333333333333333333333333 2222222222222222222222222222222222222222\n";
    let mut child = std::process::Command::new(&report.rewrite_hook_path)
        .arg("rebase")
        .current_dir(repo.path())
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
    let seen = std::fs::read_to_string(repo.join(".git/seen.txt")).unwrap();
    assert_eq!(seen, format!("{input}rebase\n"));

    assert!(unset(&repo, "notes.rewriteMode"));
    // Again: one block each.
    let again = init(&r, Path::new("/nonexistent/ultragit")).unwrap();
    assert_eq!(again.rewrite_hook, HookChange::Updated);
    let text = std::fs::read_to_string(&report.rewrite_hook_path).unwrap();
    assert_eq!(text.matches("# >>> ultragit post-rewrite >>>").count(), 1);
}
