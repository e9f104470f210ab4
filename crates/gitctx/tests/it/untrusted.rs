//! No git access of ours runs a program the repository configured (issue 13):
//! every read-only operation against a repository whose `.gitattributes` turns
//! on textconv, external diff, clean/smudge/process filters, and whose config
//! sets fsmonitor and pagers.

use gitctx::{BlameCache, BlameOptions, DiffOptions, Repo};
use testkit::hostile::Hostile;

#[test]
fn read_only_operations_run_no_repository_program() {
    let hostile = Hostile::new();
    let repo = Repo::discover(hostile.path()).unwrap();
    let cache_dir = tempfile::tempdir().unwrap();
    let cache = BlameCache::new(cache_dir.path());

    let blame = repo.blame("src/net.rs", &BlameOptions::default()).unwrap();
    assert!(!blame.is_empty());
    hostile.assert_no_program_ran("blame");
    for _ in 0..2 {
        repo.blame_cached("notes.txt", &BlameOptions::default(), &cache)
            .unwrap();
    }
    hostile.assert_no_program_ran("cached blame");
    let history = repo
        .log_paths(
            "HEAD",
            &["src/net.rs".to_owned(), "notes.txt".to_owned()],
            10,
        )
        .unwrap();
    assert_eq!(history.len(), 2);
    hostile.assert_no_program_ran("log_paths");
    repo.status(true).unwrap();
    hostile.assert_no_program_ran("status");
    repo.diff_commit("HEAD", &DiffOptions::default()).unwrap();
    repo.diff_staged(&DiffOptions::default()).unwrap();
    hostile.assert_no_program_ran("diffs");
    repo.file_at("HEAD", "src/net.rs").unwrap();
    repo.file_in_index("notes.txt").unwrap();
    hostile.assert_no_program_ran("file contents");
    repo.hooks_dir().unwrap();
    hostile.assert_no_program_ran("rev-parse");
    // Any other read-only command built by GitCommand is hardened the same way
    // (attributes, pager, fsmonitor through the environment); a caller that
    // produces a diff passes `--no-ext-diff --no-textconv`, since
    // `diff.external` is config, not an attribute.
    for args in [
        &["status", "--porcelain=v1", "--branch"][..],
        &["diff", "--no-ext-diff", "--no-textconv", "HEAD~1"],
        &["log", "--no-ext-diff", "--no-textconv", "-p", "-2"],
        &["show", "--no-ext-diff", "--no-textconv", "HEAD"],
        &["blame", "--no-textconv", "HEAD", "--", "notes.txt"],
    ] {
        repo.git().args(args).run().unwrap();
        hostile.assert_no_program_ran(&args.join(" "));
    }
}

#[test]
fn git_commit_keeps_the_users_programs() {
    // The exception: `git commit` runs as by hand, so the clean filter the
    // user's attributes name runs when the commit stages through it.
    let hostile = Hostile::new();
    let repo = Repo::discover(hostile.path()).unwrap();
    // The process filter of the fixture fails on purpose; take it out.
    hostile
        .repo
        .git(&["config", "--unset", "filter.evilproc.process"]);
    hostile.repo.write("src/net.rs", "pub fn changed() {}\n");
    hostile.clear();
    let run = repo
        .user_command()
        .args(["commit", "--quiet", "--all", "--message", "change"])
        .env("GIT_AUTHOR_DATE", "@1704067200 +0000")
        .env("GIT_COMMITTER_DATE", "@1704067200 +0000")
        .run_unchecked()
        .unwrap();
    assert!(run.status.success(), "{run:?}");
    assert!(
        hostile.marks().iter().any(|m| m == "clean"),
        "{:?}",
        hostile.marks()
    );
}
