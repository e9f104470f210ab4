//! Integration tests of testkit: the temporary-repository builder (here) and the
//! fake LLM servers (`fake_llm`).

mod delivery;
mod fake_llm;
mod text;

use testkit::{TestRepo, assert_contains, assert_starts_with};

fn git(repo: &TestRepo, args: &[&str]) -> String {
    repo.command().args(args).run_text().unwrap()
}

#[test]
fn hashes_are_deterministic_across_repositories() {
    let build = || {
        let repo = TestRepo::new();
        repo.commit_file("a.txt", "one\n", "first");
        repo.commit_file("a.txt", "two\n", "second")
    };
    assert_eq!(build(), build());
}

#[test]
fn dates_and_identity_are_pinned() {
    let repo = TestRepo::new();
    repo.commit_file("a.txt", "x\n", "first");
    repo.commit_file("a.txt", "y\n", "second");
    let log = git(&repo, &["log", "--format=%an <%ae> %at %ct"]);
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 2);
    assert!(lines[0].starts_with("Test Author <author@example.com> "));
    let times: Vec<i64> = lines
        .iter()
        .map(|l| l.rsplit(' ').next().unwrap().parse().unwrap())
        .collect();
    assert!(
        times[0] > times[1],
        "newer commit has a later date: {times:?}"
    );
    assert!(times[1] >= testkit::EPOCH);
}

#[test]
fn amend_keeps_author_date_and_message_when_asked() {
    let repo = TestRepo::new();
    let first = repo.commit_file("a.txt", "x\n", "subject");
    let before = git(&repo, &["log", "-1", "--format=%at"]);
    repo.write("a.txt", "changed\n").stage(&["a.txt"]);
    let amended = repo.amend(None);
    assert_ne!(first, amended);
    assert_eq!(git(&repo, &["log", "-1", "--format=%at"]), before);
    assert_eq!(git(&repo, &["log", "-1", "--format=%s"]).trim(), "subject");
    assert_eq!(git(&repo, &["rev-list", "--count", "HEAD"]).trim(), "1");
    repo.amend(Some("new subject"));
    assert_eq!(
        git(&repo, &["log", "-1", "--format=%s"]).trim(),
        "new subject"
    );
}

#[test]
fn branches_tags_detached_and_origin_head() {
    let repo = TestRepo::new();
    let base = repo.commit_file("a.txt", "1\n", "base");
    repo.tag("v1.0.0")
        .tag_annotated("v1.1.0", "HEAD", "release");
    repo.checkout_new("feature");
    let feature = repo.commit_file("b.txt", "2\n", "feature work");
    repo.set_origin_head("main", &base);
    assert_eq!(repo.rev_parse("origin/HEAD"), base);
    assert_eq!(repo.rev_parse("v1.1.0^{commit}"), base);
    repo.checkout_detached(&base);
    assert_eq!(
        git(&repo, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        "HEAD"
    );
    repo.checkout("feature");
    assert_eq!(repo.rev_parse("HEAD"), feature);
}

#[test]
fn commit_many_builds_a_linear_history() {
    let repo = TestRepo::new();
    let first = repo.commit_file("seed.txt", "seed\n", "seed");
    let shas = repo.commit_many(30, "counter.txt");
    assert_eq!(shas.len(), 30);
    assert_eq!(repo.rev_parse("HEAD"), shas[29]);
    assert_eq!(repo.rev_parse(&format!("{}^", shas[0])), first);
    assert_eq!(
        std::fs::read_to_string(repo.join("counter.txt")).unwrap(),
        "29\n"
    );
    assert_eq!(git(&repo, &["status", "--porcelain"]), "");
}

#[test]
fn submodules_and_worktrees() {
    let sub = TestRepo::named("sub");
    sub.commit_file("lib.txt", "lib\n", "sub init");
    let repo = TestRepo::with_submodule("vendor/sub", &sub);
    let tree = git(&repo, &["ls-tree", "HEAD", "vendor/sub"]);
    assert_starts_with(&tree, "160000 commit ");
    assert!(repo.join(".gitmodules").exists());

    let wt = repo.add_worktree("wt", "side");
    assert!(wt.join("a.txt").exists());
    let branch = repo
        .command()
        .args(["-C", &wt.to_string_lossy(), "branch", "--show-current"])
        .run_text()
        .unwrap();
    assert_eq!(branch.trim(), "side");
}

#[test]
fn removal_rename_and_executables() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n")
        .write_executable("run.sh", "#!/bin/sh\n");
    repo.commit_all("init");
    repo.rename("a.txt", "b.txt");
    repo.remove("run.sh").stage_all();
    repo.commit("rename and delete");
    let names = git(&repo, &["show", "--name-status", "--format=", "-M", "HEAD"]);
    assert_contains(&names, "R100\ta.txt\tb.txt");
    assert_contains(&names, "D\trun.sh");
    let mode = git(&repo, &["ls-tree", "HEAD~1", "run.sh"]);
    assert_starts_with(&mode, "100755");
}

#[test]
fn a_staged_change_on_one_commit() {
    let repo = TestRepo::with_staged_change();
    assert_eq!(
        git(&repo, &["log", "--format=%s"]).trim(),
        "feat: add connect"
    );
    assert_eq!(git(&repo, &["show", "HEAD:src/net.rs"]), testkit::NET_RS);
    assert_eq!(
        git(&repo, &["diff", "--cached", "--name-status"]),
        "M\tsrc/net.rs\n"
    );
    assert_eq!(git(&repo, &["diff", "--name-only"]), "");
    assert_eq!(
        std::fs::read_to_string(repo.join("src/net.rs")).unwrap(),
        testkit::NET_RS_WITH_RETRIES
    );
}

#[test]
fn a_code_commit_project_commits_its_files_and_not_its_agent_config() {
    let repo = TestRepo::new();
    repo.code_commit_project(
        "#!/bin/sh\ngrep -q fixed value.txt\n",
        &[("value.txt", "broken\n")],
        &[
            ("query.txt", "Fix value.txt\n"),
            ("config.toml", "model = \"m\"\n"),
        ],
    );
    assert_eq!(git(&repo, &["log", "--format=%s"]).trim(), "project");
    let tree = git(&repo, &["ls-tree", "HEAD"]);
    let entries: Vec<(&str, &str)> = tree
        .lines()
        .map(|line| {
            let (meta, path) = line.split_once('\t').unwrap();
            (meta.split(' ').next().unwrap(), path)
        })
        .collect();
    assert_eq!(
        entries,
        [
            ("100644", ".gitignore"),
            ("100755", "build.sh"),
            ("100644", "value.txt")
        ]
    );
    assert_eq!(git(&repo, &["status", "--porcelain"]), "");
    assert_eq!(
        std::fs::read_to_string(repo.join("agent-config/query.txt")).unwrap(),
        "Fix value.txt\n"
    );
    assert!(repo.join("agent-config/config.toml").is_file());
}

#[test]
fn files_under_lists_every_file_at_any_depth_sorted() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("b/deep/er")).unwrap();
    std::fs::create_dir_all(root.join("empty")).unwrap();
    for rel in ["z.txt", "b/deep/er/x.json", "b/a.txt"] {
        std::fs::write(root.join(rel), rel).unwrap();
    }
    std::os::unix::fs::symlink(root.join("b"), root.join("link")).unwrap();
    let listed: Vec<_> = testkit::files_under(root)
        .iter()
        .map(|path| {
            path.strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert_eq!(listed, ["b/a.txt", "b/deep/er/x.json", "link", "z.txt"]);
}

#[test]
fn texts_under_reads_the_regular_files_and_leaves_links_out() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::write(root.join("sub/a.txt"), "alpha\n").unwrap();
    std::fs::write(root.join("bad.bin"), b"x\xffy").unwrap();
    std::os::unix::fs::symlink(root.join("sub/a.txt"), root.join("link")).unwrap();
    let texts: Vec<_> = testkit::texts_under(root)
        .into_iter()
        .map(|(path, text)| (path.strip_prefix(root).unwrap().to_owned(), text))
        .collect();
    assert_eq!(
        texts,
        [
            ("bad.bin".into(), "x\u{fffd}y".to_owned()),
            ("sub/a.txt".into(), "alpha\n".to_owned()),
        ]
    );
}

#[test]
fn the_runtime_runs_spawned_tasks_and_timers() {
    let runtime = testkit::runtime();
    let task = runtime.spawn(async {
        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        7
    });
    assert_eq!(runtime.block_on(task).unwrap(), 7);
}
