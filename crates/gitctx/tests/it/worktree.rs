//! Status, attributes, ranges, the index against any commit, and commits made by
//! git itself.

use gitctx::{AttrValue, DiffOptions, DiffTarget, FileStatus};
use testkit::{TestRepo, assert_contains};

use crate::open;

#[test]
fn status_reports_staged_partially_staged_renamed_and_untracked_paths() {
    let repo = TestRepo::new();
    repo.write("a.txt", "one\n").write("b.txt", "bee\n").write(
        "old.txt",
        "a file that moves\nwith enough lines\nto be a rename\n",
    );
    repo.commit_all("root");
    repo.write("a.txt", "one\ntwo\n").stage(&["a.txt"]);
    repo.write("a.txt", "one\ntwo\nthree\n");
    repo.rename("old.txt", "new.txt");
    repo.write("b.txt", "changed but not staged\n");
    repo.write("new-untracked.txt", "?\n");
    let repo_ = open(&repo);
    let status = repo_.status(true).unwrap();
    let summary: Vec<(String, String)> = status.iter().map(|e| (e.xy(), e.path.clone())).collect();
    assert_eq!(
        summary,
        [
            ("MM".to_owned(), "a.txt".to_owned()),
            (" M".to_owned(), "b.txt".to_owned()),
            ("??".to_owned(), "new-untracked.txt".to_owned()),
            ("R ".to_owned(), "new.txt".to_owned()),
        ]
    );
    assert!(status[0].partially_staged());
    assert!(!status[1].partially_staged());
    assert_eq!(status[3].renamed_from.as_deref(), Some("old.txt"));
    let tracked_only = repo_.status(false).unwrap();
    assert!(tracked_only.iter().all(|e| e.worktree != Some('?')));
}

#[test]
fn attributes_come_from_the_index_and_the_working_tree() {
    let repo = TestRepo::new();
    repo.write(
        ".gitattributes",
        "dist/** linguist-generated\n*.snap -diff\n*.bin binary\ndocs/* linguist-generated=false\n",
    );
    repo.commit_all("attributes");
    let r = open(&repo);
    assert_eq!(
        r.attribute("dist/app.js", "linguist-generated").unwrap(),
        AttrValue::Set
    );
    assert!(
        r.attribute("dist/app.js", "linguist-generated")
            .unwrap()
            .is_set()
    );
    assert_eq!(r.attribute("a.snap", "diff").unwrap(), AttrValue::Unset);
    assert_eq!(
        r.attribute("src/main.rs", "diff").unwrap(),
        AttrValue::Unspecified
    );
    let docs = r.attribute("docs/x.md", "linguist-generated").unwrap();
    assert_eq!(docs, AttrValue::Value("false".to_owned()));
    assert!(!docs.is_set());
    // A staged but uncommitted .gitattributes counts too.
    repo.write(".gitattributes", "gen/* linguist-generated\n")
        .stage(&[".gitattributes"]);
    let r = open(&repo);
    assert!(
        r.attribute("gen/x.rs", "linguist-generated")
            .unwrap()
            .is_set()
    );
}

#[test]
fn log_range_hides_what_the_base_reaches() {
    let repo = TestRepo::new();
    let first = repo.commit_file("a.txt", "1\n", "one");
    let second = repo.commit_file("a.txt", "2\n", "two");
    let third = repo.commit_file("a.txt", "3\n", "three");
    let r = open(&repo);
    let hex = |ids: Vec<gitctx::ObjectId>| ids.iter().map(|i| i.to_hex()).collect::<Vec<_>>();
    assert_eq!(
        hex(r.log_range(Some(&first), "HEAD", 10).unwrap()),
        [third.clone(), second]
    );
    assert_eq!(
        hex(r.log_range(Some(&first), "HEAD", 1).unwrap()),
        std::slice::from_ref(&third)
    );
    assert_eq!(r.log_range(None, "HEAD", 10).unwrap().len(), 3);
    assert!(r.log_range(Some(&third), "HEAD", 10).unwrap().is_empty());
    assert!(matches!(
        r.log_range(Some("nope"), "HEAD", 10),
        Err(gitctx::Error::RevNotFound { .. })
    ));
}

#[test]
fn index_against_a_commit_is_the_amended_result() {
    let repo = TestRepo::new();
    repo.commit_file("a.txt", "base\n", "base");
    repo.write("a.txt", "base\nhead\n").write("b.txt", "b\n");
    repo.commit_all("head");
    repo.write("c.txt", "staged\n").stage(&["c.txt"]);
    let r = open(&repo);
    let diff = r
        .diff(
            DiffTarget::IndexAgainst(Some("HEAD~1")),
            &DiffOptions::default(),
        )
        .unwrap();
    let files: Vec<(&str, FileStatus)> = diff.files.iter().map(|f| (f.path(), f.status)).collect();
    assert_eq!(
        files,
        [
            ("a.txt", FileStatus::Modified),
            ("b.txt", FileStatus::Added),
            ("c.txt", FileStatus::Added)
        ]
    );
    let everything = r
        .diff(DiffTarget::IndexAgainst(None), &DiffOptions::default())
        .unwrap();
    assert_eq!(everything.files.len(), 3);
    assert!(
        everything
            .files
            .iter()
            .all(|f| f.status == FileStatus::Added)
    );
}

#[test]
fn commits_are_made_by_git_and_refusals_are_reported() {
    let repo = TestRepo::new();
    repo.commit_file("a.txt", "1\n", "one");
    repo.write("a.txt", "2\n").stage(&["a.txt"]);
    let r = open(&repo);
    let run = r.run_commit("Change a\n\nBody line.\n", false).unwrap();
    assert!(run.success, "{run:?}");
    assert_contains(&run.stdout, "Change a");
    assert_eq!(
        repo.git(&["log", "-1", "--format=%B"]).trim_end(),
        "Change a\n\nBody line."
    );

    // --amend keeps the author and replaces the message.
    let author_before = repo.git(&["log", "-1", "--format=%an <%ae> %ad"]);
    let run = r.run_commit("Change a, amended\n", true).unwrap();
    assert!(run.success, "{run:?}");
    assert_eq!(
        repo.git(&["log", "-1", "--format=%an <%ae> %ad"]),
        author_before
    );
    assert_eq!(repo.git(&["rev-list", "--count", "HEAD"]).trim(), "2");

    // A failing pre-commit hook: no commit, the hook's words kept.
    repo.write_executable(
        ".git/hooks/pre-commit",
        "#!/bin/sh\necho 'lint failed: tabs' >&2\nexit 1\n",
    );
    repo.write("a.txt", "3\n").stage(&["a.txt"]);
    let run = r.run_commit("Change a again\n", false).unwrap();
    assert!(!run.success);
    assert_eq!(run.status, "exit status 1");
    assert_contains(&run.stderr, "lint failed: tabs");
    assert_eq!(repo.git(&["rev-list", "--count", "HEAD"]).trim(), "2");
}

#[test]
fn merge_base_of_diverged_and_unrelated_histories() {
    let repo = TestRepo::new();
    let base = repo.commit_file("a.txt", "1\n", "base");
    repo.checkout_new("topic");
    let topic = repo.commit_file("b.txt", "b\n", "topic");
    repo.checkout("main");
    let main = repo.commit_file("c.txt", "c\n", "main");
    let r = open(&repo);
    let id = |s: &str| s.parse::<gitctx::ObjectId>().unwrap();
    assert_eq!(
        r.merge_base(id(&topic), id(&main)).unwrap(),
        Some(id(&base))
    );
    repo.git(&["checkout", "-q", "--orphan", "other"]);
    repo.git(&["rm", "-rfq", "."]);
    let other = repo.commit_file("d.txt", "d\n", "unrelated");
    assert_eq!(r.merge_base(id(&other), id(&main)).unwrap(), None);
}

#[test]
fn ignore_rules_apply_to_tracked_paths_too() {
    let repo = TestRepo::with_commit(
        &[
            (".gitignore", "*.log\n!keep.log\nbuild/\n"),
            ("sub/.gitignore", "secret.txt\n"),
        ],
        "ignores",
    );
    repo.write("forced.log", "x\n");
    repo.git(&["add", "-f", "forced.log"]);
    repo.commit("force-add an ignored file");
    let r = open(&repo);
    assert!(r.matches_ignore_rules("forced.log").unwrap());
    assert!(
        !r.is_ignored("forced.log").unwrap(),
        "tracked, so not ignored for git status"
    );
    assert!(!r.matches_ignore_rules("keep.log").unwrap());
    assert!(r.matches_ignore_rules("build/out.bin").unwrap());
    assert!(r.matches_ignore_rules("sub/secret.txt").unwrap());
    assert!(!r.matches_ignore_rules("secret.txt").unwrap());
    assert!(!r.matches_ignore_rules("src/main.rs").unwrap());
}
