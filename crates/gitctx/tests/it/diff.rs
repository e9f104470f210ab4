//! Typed diffs against real repositories.

use gitctx::{DiffOptions, DiffTarget, FileMode, FileStatus, LineKind};
use testkit::{TestRepo, assert_contains};

use crate::open;

fn opts() -> DiffOptions {
    DiffOptions::default()
}

#[test]
fn root_commit_diffs_against_the_empty_tree() {
    let repo = TestRepo::with_commit(
        &[("a.txt", "one\ntwo\n"), ("src/b.rs", "fn b() {}\n")],
        "root",
    );
    let diff = open(&repo).diff_commit("HEAD", &opts()).unwrap();
    let paths: Vec<&str> = diff.files.iter().map(|f| f.path()).collect();
    assert_eq!(paths, ["a.txt", "src/b.rs"]);
    let a = &diff.files[0];
    assert_eq!(a.status, FileStatus::Added);
    assert_eq!(a.old_path, None);
    assert_eq!(a.old_mode, None);
    assert_eq!(a.new_mode, Some(FileMode::Regular));
    assert_eq!((a.additions, a.deletions), (2, 0));
    assert_eq!(a.hunks.len(), 1);
    let h = &a.hunks[0];
    assert_eq!(
        (h.old_start, h.old_lines, h.new_start, h.new_lines),
        (0, 0, 1, 2)
    );
    assert_eq!(h.lines[1].new_lineno, Some(2));
    assert_eq!(h.lines[1].content, "two");
    assert_eq!(diff.additions(), 3);
}

#[test]
fn modification_hunks_carry_line_numbers_and_context() {
    let repo = TestRepo::new();
    let body: String = (1..=20).map(|i| format!("line {i}\n")).collect();
    repo.commit_file("f.txt", &body, "init");
    let changed = body.replace("line 10\n", "line ten\nline ten and a half\n");
    repo.commit_file("f.txt", &changed, "edit");
    let diff = open(&repo).diff_commit("HEAD", &opts()).unwrap();
    let f = &diff.files[0];
    assert_eq!(f.status, FileStatus::Modified);
    assert_eq!((f.additions, f.deletions), (2, 1));
    let h = &f.hunks[0];
    assert_eq!(
        (h.old_start, h.old_lines, h.new_start, h.new_lines),
        (7, 7, 7, 8)
    );
    let removed: Vec<_> = h
        .lines
        .iter()
        .filter(|l| l.kind == LineKind::Removed)
        .collect();
    assert_eq!(removed.len(), 1);
    assert_eq!(removed[0].old_lineno, Some(10));
    assert_eq!(removed[0].new_lineno, None);
    let added: Vec<_> = h
        .lines
        .iter()
        .filter(|l| l.kind == LineKind::Added)
        .collect();
    assert_eq!(added[1].new_lineno, Some(11));
    assert_eq!(added[1].content, "line ten and a half");
    let unified = diff.to_unified();
    assert_contains(&unified, "@@ -7,7 +7,8 @@");
    assert_contains(&unified, "\n-line 10\n+line ten\n");

    let wide = DiffOptions {
        context_lines: 0,
        ..opts()
    };
    let h0 = &open(&repo).diff_commit("HEAD", &wide).unwrap().files[0].hunks[0];
    assert_eq!(h0.lines.len(), 3);
}

#[test]
fn unified_text_matches_git_for_a_simple_change() {
    let repo = TestRepo::new();
    repo.commit_file("f.txt", "a\nb\nc\n", "init");
    repo.commit_file("f.txt", "a\nB\nc\nd", "edit");
    let ours = open(&repo)
        .diff_commit("HEAD", &opts())
        .unwrap()
        .to_unified();
    let theirs = repo
        .command()
        .args(["diff", "--no-color", "--no-prefix", "HEAD~1", "HEAD"])
        .run_text()
        .unwrap();
    // Compare the hunk bodies (git adds an index line we do not).
    let body = |s: &str| {
        s.lines()
            .skip_while(|l| !l.starts_with("@@"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(body(&ours), body(&theirs));
    assert!(ours.contains("\\ No newline at end of file"));
}

#[test]
fn renames_deletions_and_mode_changes() {
    let repo = TestRepo::new();
    let body: String = (1..=30).map(|i| format!("fn f{i}() {{}}\n")).collect();
    repo.write("old/name.rs", &body)
        .write("gone.txt", "bye\n")
        .write("run.sh", "#!/bin/sh\necho hi\n");
    repo.commit_all("init");
    repo.rename("old/name.rs", "new/name.rs");
    repo.write("new/name.rs", body.replace("fn f3()", "fn f3_renamed()"));
    repo.remove("gone.txt");
    repo.write_executable("run.sh", "#!/bin/sh\necho hi\n");
    repo.commit_all("rename, delete, chmod");
    let diff = open(&repo).diff_commit("HEAD", &opts()).unwrap();
    let renamed = diff.file("new/name.rs").unwrap();
    assert_eq!(renamed.status, FileStatus::Renamed);
    assert_eq!(renamed.old_path.as_deref(), Some("old/name.rs"));
    assert_eq!((renamed.additions, renamed.deletions), (1, 1));
    assert_eq!(diff.file("old/name.rs").unwrap().path(), "new/name.rs");
    let gone = diff.file("gone.txt").unwrap();
    assert_eq!(gone.status, FileStatus::Deleted);
    assert_eq!(gone.new_path, None);
    assert_eq!(gone.path(), "gone.txt");
    assert_eq!(gone.deletions, 1);
    let chmod = diff.file("run.sh").unwrap();
    assert_eq!(chmod.old_mode, Some(FileMode::Regular));
    assert_eq!(chmod.new_mode, Some(FileMode::Executable));
    assert!(chmod.hunks.is_empty());
    let unified = diff.to_unified();
    assert_contains(&unified, "rename from old/name.rs\nrename to new/name.rs");
    assert_contains(&unified, "deleted file mode 100644");
    assert_contains(&unified, "old mode 100644\nnew mode 100755");

    let no_renames = DiffOptions {
        detect_renames: false,
        ..opts()
    };
    let plain = open(&repo).diff_commit("HEAD", &no_renames).unwrap();
    assert!(plain.files.iter().all(|f| f.status != FileStatus::Renamed));
}

#[test]
fn binary_files_have_no_hunks_and_no_counts() {
    let repo = TestRepo::new();
    repo.commit_file("img.png", [0u8, 1, 2, 3, 0, 255], "add image");
    repo.commit_file("img.png", [0u8, 1, 2, 4, 0, 254, 7], "change image");
    let r = open(&repo);
    let diff = r.diff_commit("HEAD", &opts()).unwrap();
    let f = &diff.files[0];
    assert!(f.binary);
    assert!(f.hunks.is_empty());
    assert_eq!(f.status, FileStatus::Modified);
    let stat = &diff.numstat()[0];
    assert_eq!((stat.additions, stat.deletions), (None, None));
    assert_contains(
        &diff.to_unified(),
        "Binary files a/img.png and b/img.png differ",
    );
}

#[test]
fn staged_changes_including_unborn_head() {
    let repo = TestRepo::new();
    repo.write("first.txt", "hello\n").stage(&["first.txt"]);
    let r = open(&repo);
    let diff = r.diff_staged(&opts()).unwrap();
    assert_eq!(diff.files.len(), 1);
    assert_eq!(diff.files[0].status, FileStatus::Added);

    repo.commit("init");
    assert!(r.diff_staged(&opts()).unwrap().files.is_empty());
    repo.write("first.txt", "hello\nworld\n")
        .stage(&["first.txt"]);
    repo.write("first.txt", "hello\nworld\nunstaged\n");
    repo.write("untracked.txt", "nope\n");
    let diff = r.diff(DiffTarget::Staged, &opts()).unwrap();
    assert_eq!(diff.files.len(), 1);
    assert_eq!(diff.files[0].additions, 1);
    assert_eq!(
        diff.files[0].hunks[0].lines.last().unwrap().content,
        "world"
    );
}

#[test]
fn between_revisions_and_path_filters() {
    let repo = TestRepo::new();
    let base = repo.commit_file("a/x.txt", "1\n", "base");
    repo.write("a/y.txt", "2\n")
        .write("b/z.txt", "3\n")
        .write("a.txt", "4\n");
    repo.commit_all("more");
    let r = open(&repo);
    let all = r.diff_revs(&base, "HEAD", &opts()).unwrap();
    assert_eq!(all.files.len(), 3);
    let only_a = r
        .diff_revs(&base, "HEAD", &DiffOptions::for_paths(["a"]))
        .unwrap();
    let paths: Vec<&str> = only_a.files.iter().map(|f| f.path()).collect();
    assert_eq!(
        paths,
        ["a/y.txt"],
        "a directory filter does not match a.txt"
    );
    let file = r
        .diff_revs(&base, "HEAD", &DiffOptions::for_paths(["b/z.txt", "a.txt"]))
        .unwrap();
    assert_eq!(file.files.len(), 2);
    // Paths are literal, never globs.
    let glob = r
        .diff_revs(&base, "HEAD", &DiffOptions::for_paths(["*.txt"]))
        .unwrap();
    assert!(glob.files.is_empty());
    let stats = r
        .numstat(
            DiffTarget::Range {
                from: &base,
                to: "HEAD",
            },
            &[],
        )
        .unwrap();
    assert_eq!(stats.len(), 3);
    assert!(
        stats
            .iter()
            .all(|s| s.additions == Some(1) && s.deletions == Some(0))
    );
}

#[test]
fn non_ascii_paths_and_contents() {
    let repo = TestRepo::new();
    repo.commit_file("docs/résumé ünïcode.md", "héllo\n", "init");
    repo.commit_file("docs/résumé ünïcode.md", "héllo wörld\n", "edit");
    let diff = open(&repo).diff_commit("HEAD", &opts()).unwrap();
    assert_eq!(diff.files[0].path(), "docs/résumé ünïcode.md");
    assert_eq!(diff.files[0].hunks[0].lines[1].content, "héllo wörld");
    let filtered = open(&repo)
        .diff_commit("HEAD", &DiffOptions::for_paths(["docs/résumé ünïcode.md"]))
        .unwrap();
    assert_eq!(filtered.files.len(), 1);
}

#[test]
fn hunks_can_be_skipped_for_cheap_summaries() {
    let repo = TestRepo::new();
    repo.commit_file("a.txt", "1\n2\n", "init");
    let quick = DiffOptions {
        hunks: false,
        ..opts()
    };
    let diff = open(&repo).diff_commit("HEAD", &quick).unwrap();
    assert!(diff.files[0].hunks.is_empty());
    assert_eq!(diff.files[0].additions, 2);
}

#[test]
fn submodule_gitlink_changes_are_reported() {
    let sub = TestRepo::named("sub");
    let first = sub.commit_file("lib.txt", "1\n", "one");
    let second = sub.commit_file("lib.txt", "2\n", "two");
    let repo = TestRepo::with_submodule("vendor/lib", &sub);
    let r = open(&repo);
    let added = r.diff_commit("HEAD", &opts()).unwrap();
    let link = added.file("vendor/lib").unwrap();
    assert!(link.is_submodule());
    assert_eq!(link.new_id.unwrap().to_hex(), second);

    repo.command()
        .args(["-C", "vendor/lib", "checkout", "--quiet", &first])
        .run()
        .unwrap();
    repo.stage(&["vendor/lib"]);
    repo.commit("pin submodule back");
    let moved = r.diff_commit("HEAD", &opts()).unwrap();
    let link = moved.file("vendor/lib").unwrap();
    assert_eq!(link.status, FileStatus::Modified);
    assert_eq!(link.old_id.unwrap().to_hex(), second);
    assert_eq!(link.new_id.unwrap().to_hex(), first);
    assert_eq!(link.new_mode, Some(FileMode::Submodule));
}

#[test]
fn merge_commits_diff_against_their_first_parent() {
    let repo = TestRepo::new();
    repo.commit_file("a.txt", "a\n", "init");
    repo.merge_side_branch();
    let diff = open(&repo).diff_commit("HEAD", &opts()).unwrap();
    let paths: Vec<&str> = diff.files.iter().map(|f| f.path()).collect();
    assert_eq!(paths, ["side.txt"]);
}
