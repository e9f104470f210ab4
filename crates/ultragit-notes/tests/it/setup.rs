//! `init`: hook installation and configuration.

use std::path::Path;

use testkit::{TestRepo, assert_contains, assert_starts_with};
use ultragit_notes::setup::{
    CommitGraphChange, HOOK_BEGIN, HOOKS, HookChange, InitOptions, InitReport, init,
};

fn hook(repo: &TestRepo) -> String {
    std::fs::read_to_string(repo.join(".git/hooks/post-commit")).unwrap()
}

/// What `init` did to the hook `name`.
fn change<'r>(report: &'r InitReport, name: &str) -> &'r HookChange {
    &report
        .hook(name)
        .unwrap_or_else(|| panic!("no {name}: {report:?}"))
        .change
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
    let first = init(&r, exe, &InitOptions::default()).unwrap();
    assert!(first.notes_ref_created);
    assert_eq!(*change(&first, "post-commit"), HookChange::Created);
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
    let second = init(&r, exe, &InitOptions::default()).unwrap();
    assert!(!second.notes_ref_created);
    assert_eq!(*change(&second, "post-commit"), HookChange::Updated);
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
        let report = init(&r, Path::new("/usr/bin/ultragit"), &InitOptions::default()).unwrap();
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
    let report = init(&r, Path::new("/usr/bin/ultragit"), &InitOptions::default()).unwrap();
    assert_eq!(*change(&report, "post-commit"), HookChange::Added);
    let text = hook(&repo);
    assert!(
        text.starts_with("#!/bin/bash\n# >>> ultragit post-commit >>>"),
        "before any `exit`: {text}"
    );
    assert!(text.ends_with("echo 'my hook'\nexit 0\n"), "{text}");
    init(&r, Path::new("/usr/bin/ultragit"), &InitOptions::default()).unwrap();
    assert_eq!(hook(&repo).matches(HOOK_BEGIN).count(), 1);
    assert!(hook(&repo).contains("echo 'my hook'"));
    // A hook in another language is left alone.
    repo.write(
        ".git/hooks/post-commit",
        "#!/usr/bin/env python3\nprint('hi')\n",
    );
    let report = init(&r, Path::new("/usr/bin/ultragit"), &InitOptions::default()).unwrap();
    assert!(matches!(
        change(&report, "post-commit"),
        HookChange::NotShell { .. }
    ));
    assert_eq!(hook(&repo), "#!/usr/bin/env python3\nprint('hi')\n");
}

#[test]
fn hooks_path_is_honoured() {
    let repo = TestRepo::new();
    repo.commit_file("a.txt", "a\n", "a");
    repo.git(&["config", "core.hooksPath", "githooks"]);
    let r = gitctx::Repo::discover(repo.path()).unwrap();
    let report = init(&r, Path::new("/usr/bin/ultragit"), &InitOptions::default()).unwrap();
    assert_eq!(
        report.hook("post-commit").unwrap().path,
        repo.join("githooks/post-commit")
    );
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
    let report = init(
        &r,
        Path::new("/nonexistent/ultragit"),
        &InitOptions::default(),
    )
    .unwrap();
    assert_eq!(*change(&report, "post-rewrite"), HookChange::Added);
    assert_eq!(*change(&report, "post-commit"), HookChange::Created);
    let rewrite_hook = report.hook("post-rewrite").unwrap().path.clone();
    let text = std::fs::read_to_string(&rewrite_hook).unwrap();
    assert_starts_with(&text, "#!/bin/sh\n# >>> ultragit post-rewrite >>>\n");
    assert_contains(&text, "/nonexistent/ultragit rewritten \"$1\"");
    assert!(ultragit_notes::setup::hook_installed(
        &repo.join(".git/hooks"),
        "post-rewrite"
    ));

    let input = "1111111111111111111111111111111111111111 2222222222222222222222222222222222222222\n\
                 3333333333333333333333333333333333333333 2222222222222222222222222222222222222222\n";
    let mut child = std::process::Command::new(&rewrite_hook)
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
    let again = init(
        &r,
        Path::new("/nonexistent/ultragit"),
        &InitOptions::default(),
    )
    .unwrap();
    assert_eq!(*change(&again, "post-rewrite"), HookChange::Updated);
    let text = std::fs::read_to_string(&rewrite_hook).unwrap();
    assert_eq!(text.matches("# >>> ultragit post-rewrite >>>").count(), 1);
}

/// The hooks of [`HOOKS`] in the order `init` reports them.
fn names(report: &InitReport) -> Vec<&'static str> {
    report.hooks.iter().map(|hook| hook.name).collect()
}

#[test]
fn the_warm_up_hooks_follow_the_same_rules() {
    let repo = TestRepo::new();
    repo.commit_file("a.txt", "a\n", "a");
    let mine = "#!/bin/bash\necho 'my post-merge'\nexit 0\n";
    repo.write_executable(".git/hooks/post-merge", mine);
    let python = "#!/usr/bin/env python3\nprint('my post-checkout')\n";
    repo.write_executable(".git/hooks/post-checkout", python);
    let r = gitctx::Repo::discover(repo.path()).unwrap();
    let exe = Path::new("/usr/bin/ultragit");

    let first = init(&r, exe, &InitOptions::default()).unwrap();
    assert_eq!(
        names(&first),
        HOOKS.iter().map(|spec| spec.name).collect::<Vec<_>>()
    );
    assert_eq!(
        names(&first),
        ["post-commit", "post-rewrite", "post-merge", "post-checkout"]
    );
    assert_eq!(*change(&first, "post-merge"), HookChange::Added);
    let merge = std::fs::read_to_string(repo.join(".git/hooks/post-merge")).unwrap();
    assert_starts_with(
        &merge,
        "#!/bin/bash\n# >>> ultragit post-merge >>>\n# Warms the read caches after a merge or a pull, in the background (not after a squash merge, which moves no HEAD) (ultragit init).\n",
    );
    assert!(
        merge.ends_with("# <<< ultragit post-merge <<<\necho 'my post-merge'\nexit 0\n"),
        "{merge}"
    );
    assert_contains(
        &merge,
        "if [ \"$1\" != 1 ]; then\n  /usr/bin/ultragit cache warm --background </dev/null >/dev/null 2>&1 &\nfi\n",
    );
    // Not a shell script: left alone, the lines to add reported.
    let HookChange::NotShell { line } = change(&first, "post-checkout") else {
        panic!("{first:?}");
    };
    assert_contains(line, "[ \"$3\" = 1 ] && [ \"$1\" != \"$2\" ]");
    assert_contains(line, "/usr/bin/ultragit cache warm --background");
    assert_eq!(
        std::fs::read_to_string(repo.join(".git/hooks/post-checkout")).unwrap(),
        python
    );

    // Again: the block is replaced, never doubled.
    std::fs::remove_file(repo.join(".git/hooks/post-checkout")).unwrap();
    let again = init(&r, exe, &InitOptions::default()).unwrap();
    assert_eq!(*change(&again, "post-merge"), HookChange::Updated);
    assert_eq!(*change(&again, "post-checkout"), HookChange::Created);
    let merge = std::fs::read_to_string(repo.join(".git/hooks/post-merge")).unwrap();
    assert_eq!(merge.matches("# >>> ultragit post-merge >>>").count(), 1);
    assert_eq!(merge.matches("cache warm").count(), 1);
    let checkout = std::fs::read_to_string(repo.join(".git/hooks/post-checkout")).unwrap();
    assert_starts_with(&checkout, "#!/bin/sh\n# >>> ultragit post-checkout >>>\n");
}

#[test]
fn a_warm_up_hook_that_is_a_link_is_never_written_through() {
    let repo = TestRepo::new();
    repo.commit_file("a.txt", "a\n", "a");
    let shared = repo.join("shared-post-checkout");
    std::fs::write(&shared, "#!/bin/sh\necho shared\n").unwrap();
    std::os::unix::fs::symlink(&shared, repo.join(".git/hooks/post-checkout")).unwrap();
    let r = gitctx::Repo::discover(repo.path()).unwrap();
    let err = init(&r, Path::new("/usr/bin/ultragit"), &InitOptions::default()).unwrap_err();
    assert_contains(&err.to_string(), "is a symbolic link");
    assert_eq!(
        std::fs::read_to_string(&shared).unwrap(),
        "#!/bin/sh\necho shared\n"
    );
}

/// A stand-in for `ultragit` that appends `$WHO` and its arguments to
/// `calls.log` beside it, first thing.
fn recording_program(repo: &TestRepo) -> std::path::PathBuf {
    let program = repo.join(".git/fake ultragit");
    let log = repo.join(".git/calls.log");
    repo.write_executable(
        ".git/fake ultragit",
        format!("#!/bin/sh\necho \"$WHO: $*\" >> '{}'\n", log.display()),
    );
    program
}

/// Runs the hook `name` as git would, with `args`, `input` on stdin and `WHO`
/// set to `who`; returns its exit code.
fn run_hook(repo: &TestRepo, name: &str, args: &[&str], input: &str, who: &str) -> i32 {
    use std::io::Write as _;
    let mut child = std::process::Command::new(repo.join(&format!(".git/hooks/{name}")))
        .args(args)
        .env("WHO", who)
        .current_dir(repo.path())
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait().unwrap().code().unwrap_or(-1)
}

/// The lines of `calls.log`, sorted, once it has `count` of them (polled, no
/// timing assertion: the hooks start the program in the background).
fn calls(repo: &TestRepo, count: usize) -> Vec<String> {
    let log = repo.join(".git/calls.log");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if text.lines().count() >= count {
            let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
            lines.sort();
            return lines;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{count} calls: {text}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn the_blocks_warm_only_when_head_moved_and_keep_the_hooks_status_and_stdin() {
    let repo = TestRepo::new();
    repo.commit_file("a.txt", "a\n", "a");
    // The user's own hooks, after which the blocks go: they read stdin and
    // exit with a status of their own.
    let mine = "#!/bin/sh\ncat > \"$(git rev-parse --git-dir)/$WHO.stdin\"\nexit 7\n";
    repo.write_executable(".git/hooks/post-merge", mine);
    repo.write_executable(".git/hooks/post-checkout", mine);
    let r = gitctx::Repo::discover(repo.path()).unwrap();
    let program = recording_program(&repo);
    init(&r, &program, &InitOptions::default()).unwrap();
    let (old, new) = (
        "1111111111111111111111111111111111111111",
        "2222222222222222222222222222222222222222",
    );

    // No warm-up: a file checkout, a checkout that left HEAD where it was,
    // a squash merge.
    assert_eq!(
        run_hook(&repo, "post-checkout", &[old, new, "0"], "in", "file"),
        7
    );
    assert_eq!(
        run_hook(&repo, "post-checkout", &[old, old, "1"], "in", "same"),
        7
    );
    assert_eq!(run_hook(&repo, "post-merge", &["1"], "in", "squash"), 7);
    // Warm-ups: a branch checkout that moved HEAD, a merge, a rewrite.
    assert_eq!(
        run_hook(&repo, "post-checkout", &[old, new, "1"], "in", "branch"),
        7
    );
    assert_eq!(run_hook(&repo, "post-merge", &["0"], "in", "merge"), 7);
    let rewritten = format!("{old} {new}\n");
    assert_eq!(
        run_hook(&repo, "post-rewrite", &["amend"], &rewritten, "rewrite"),
        0
    );
    assert_eq!(
        calls(&repo, 4),
        [
            "branch: cache warm --background",
            "merge: cache warm --background",
            "rewrite: cache warm --background",
            "rewrite: rewritten amend",
        ]
    );
    // Whatever the block did, the user's lines got git's stdin.
    for who in ["file", "same", "squash", "branch", "merge"] {
        assert_eq!(
            std::fs::read_to_string(repo.join(&format!(".git/{who}.stdin"))).unwrap(),
            "in",
            "{who}"
        );
    }
}

#[test]
fn init_writes_a_commit_graph_with_changed_paths_unless_told_or_configured_not_to() {
    let repo = TestRepo::new();
    repo.commit_many(3, "n.txt");
    let r = gitctx::Repo::discover(repo.path()).unwrap();
    let exe = Path::new("/usr/bin/ultragit");
    let skipped = init(
        &r,
        exe,
        &InitOptions {
            no_commit_graph: true,
        },
    )
    .unwrap();
    assert_eq!(skipped.commit_graph, CommitGraphChange::Skipped);
    assert_eq!(r.commit_graph(), gitctx::CommitGraph::None);

    repo.git(&["config", "core.commitGraph", "false"]);
    let disabled = init(&r, exe, &InitOptions::default()).unwrap();
    assert_eq!(disabled.commit_graph, CommitGraphChange::Disabled);
    assert_eq!(r.commit_graph(), gitctx::CommitGraph::None);
    assert_eq!(
        config_all(&repo, "core.commitGraph"),
        "false\n",
        "left as it is"
    );

    repo.git(&["config", "--unset", "core.commitGraph"]);
    // The graph `git gc` writes by default has no filters: it is replaced.
    repo.git(&["commit-graph", "write", "--reachable"]);
    let written = init(&r, exe, &InitOptions::default()).unwrap();
    assert!(
        matches!(written.commit_graph, CommitGraphChange::Written { .. }),
        "{written:?}"
    );
    assert_eq!(r.commit_graph(), gitctx::CommitGraph::WithChangedPaths);
    let again = init(&r, exe, &InitOptions::default()).unwrap();
    assert_eq!(again.commit_graph, CommitGraphChange::AlreadyThere);
}
