//! The blame cache against real histories: same answers as an uncached blame,
//! served from disk when known, keyed so that what changes an answer misses.

use std::path::Path;

use gitctx::{BlameCache, BlameEngine, BlameEntry, BlameOptions};
use testkit::TestRepo;

use crate::open;

fn options(lines: Option<(u32, u32)>, engine: BlameEngine) -> BlameOptions {
    BlameOptions {
        rev: None,
        lines,
        engine,
    }
}

/// A 60-line file changed by 40 commits at pseudo-random lines (some commits
/// insert or delete lines, shifting the rest), renamed half-way.
fn churned_history() -> TestRepo {
    let repo = TestRepo::new();
    let mut lines: Vec<String> = (1..=60).map(|i| format!("line {i}")).collect();
    let mut path = "old/name.txt".to_owned();
    repo.commit_file(&path, lines.join("\n") + "\n", "start");
    let mut state = 0x2545_f491_u64;
    let mut next = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        usize::try_from(state % n as u64).unwrap()
    };
    for commit in 0..40 {
        let at = next(lines.len());
        match commit % 5 {
            0 => lines.insert(at, format!("inserted by {commit}")),
            1 if lines.len() > 40 => {
                lines.remove(at);
            }
            _ => lines[at] = format!("changed by {commit}"),
        }
        if commit == 20 {
            repo.rename(&path, "new/name.txt");
            path = "new/name.txt".to_owned();
        }
        repo.commit_file(&path, lines.join("\n") + "\n", &format!("change {commit}"));
    }
    repo
}

#[test]
fn cached_answers_equal_uncached_ones_for_any_sequence_of_ranges() {
    let repo = churned_history();
    let git = open(&repo);
    let len = gitctx::count_lines(&git.file_at("HEAD", "new/name.txt").unwrap());
    for engine in [BlameEngine::Cli, BlameEngine::Libgit2] {
        let dir = tempfile::tempdir().unwrap();
        let cache = BlameCache::new(dir.path().join("blame"));
        let ranges = [
            Some((10, 20)),
            Some((10, 20)),
            Some((15, 30)),
            Some((5, 12)),
            Some((21, 21)),
            Some((1, 4)),
            Some((40, len)),
            Some((31, 39)),
            None,
            Some((2, len - 1)),
        ];
        for lines in ranges {
            let opts = options(lines, engine);
            let plain = git.blame("new/name.txt", &opts).unwrap();
            let cached = git.blame_cached("new/name.txt", &opts, &cache).unwrap();
            assert_eq!(cached, plain, "{engine:?} {lines:?}");
        }
        assert_eq!(
            blame_files(cache.dir()).len(),
            1,
            "one file per commit and path"
        );
        assert!(
            plain_paths(&git, engine).contains(&"old/name.txt".to_owned()),
            "the history reaches before the rename"
        );
    }
}

fn plain_paths(git: &gitctx::Repo, engine: BlameEngine) -> Vec<String> {
    git.blame("new/name.txt", &options(None, engine))
        .unwrap()
        .into_iter()
        .map(|e| e.original_path)
        .collect()
}

/// The cache's blame files (not the record of what a fresh blame cost).
fn blame_files(dir: &Path) -> Vec<std::path::PathBuf> {
    testkit::files_under(dir)
        .into_iter()
        .filter(|f| f.file_name().is_some_and(|n| n != ".cost"))
        .collect()
}

/// Rewrites every mention of `from` in the cache's files to `to`.
fn plant(dir: &Path, from: &str, to: &str) {
    for file in blame_files(dir) {
        let text = std::fs::read_to_string(&file).unwrap();
        std::fs::write(&file, text.replace(from, to)).unwrap();
    }
}

#[test]
fn known_lines_come_from_the_cache_and_a_new_commit_carries_them_forward() {
    let repo = TestRepo::new();
    let first = repo.commit_file("f.txt", "a\nb\nc\n", "first");
    let second = repo.commit_file("f.txt", "a\nB\nc\n", "second");
    let git = open(&repo);
    let dir = tempfile::tempdir().unwrap();
    let cache = BlameCache::new(dir.path());
    let opts = options(Some((1, 3)), BlameEngine::Cli);
    let before = git.blame_cached("f.txt", &opts, &cache).unwrap();
    assert_eq!(before.len(), 3);

    // Say in the cache that the second commit wrote every line: a consistent
    // file, so the next answer comes from it without running git blame.
    plant(dir.path(), &first, &second);
    let served = git.blame_cached("f.txt", &opts, &cache).unwrap();
    assert!(
        served.iter().all(|e| e.commit.to_hex() == second),
        "{served:?}"
    );
    let sub = git
        .blame_cached("f.txt", &options(Some((3, 3)), BlameEngine::Cli), &cache)
        .unwrap();
    assert_eq!(sub.len(), 1);
    assert_eq!(sub[0].commit.to_hex(), second);
    assert_eq!((sub[0].final_start, sub[0].original_start), (3, 3));

    // A new commit is another key, whose blame is carried forward from its
    // parent's: the planted answer shows through, and the new line is the
    // new commit's.
    let third = repo.commit_file("f.txt", "a\nB\nc\nd\n", "third");
    let whole = options(None, BlameEngine::Cli);
    let carried = open(&repo).blame_cached("f.txt", &whole, &cache).unwrap();
    let commits = |entries: &[BlameEntry]| -> Vec<String> {
        entries.iter().map(|e| e.commit.to_hex()).collect()
    };
    assert_eq!(commits(&carried), [second.clone(), third.clone()]);
    assert_eq!(blame_files(dir.path()).len(), 2);
    // Without the planted cache, the truth.
    let clean = tempfile::tempdir().unwrap();
    let fresh = open(&repo)
        .blame_cached("f.txt", &whole, &BlameCache::new(clean.path()))
        .unwrap();
    assert_eq!(commits(&fresh), [first.clone(), second, first, third]);
}

#[test]
fn a_damaged_cache_file_is_ignored_and_rewritten() {
    let repo = churned_history();
    let git = open(&repo);
    let dir = tempfile::tempdir().unwrap();
    let cache = BlameCache::new(dir.path());
    let opts = options(Some((5, 25)), BlameEngine::Cli);
    let plain = git.blame("new/name.txt", &opts).unwrap();
    git.blame_cached("new/name.txt", &opts, &cache).unwrap();
    let file = blame_files(dir.path()).remove(0);
    let good = std::fs::read_to_string(&file).unwrap();
    for damaged in [
        String::new(),
        good[..good.len() / 2].to_owned(),
        good.replacen("covered 5 25", "covered 5 26", 1),
        good.replacen("entry ", "entry zz", 1),
        "garbage\n".repeat(3),
    ] {
        std::fs::write(&file, &damaged).unwrap();
        let cached = git.blame_cached("new/name.txt", &opts, &cache).unwrap();
        assert_eq!(cached, plain, "after damage {damaged:?}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), good, "rewritten");
    }
}

#[test]
fn the_engine_and_shallow_boundaries_are_in_the_key_diff_settings_are_not() {
    let repo = churned_history();
    let dir = tempfile::tempdir().unwrap();
    let cache = BlameCache::new(dir.path());
    let opts = options(Some((1, 10)), BlameEngine::Cli);
    open(&repo)
        .blame_cached("new/name.txt", &opts, &cache)
        .unwrap();
    // Diff settings are not in the key: blame is told its own, so they
    // cannot change its answer.
    let plain = open(&repo).blame("new/name.txt", &opts).unwrap();
    repo.git(&["config", "diff.algorithm", "histogram"]);
    repo.git(&["config", "diff.indentHeuristic", "false"]);
    let configured = open(&repo)
        .blame_cached("new/name.txt", &opts, &cache)
        .unwrap();
    assert_eq!(configured, plain);
    assert_eq!(open(&repo).blame("new/name.txt", &opts).unwrap(), plain);
    assert_eq!(
        blame_files(dir.path()).len(),
        1,
        "the diff settings are not in the key"
    );
    open(&repo)
        .blame_cached(
            "new/name.txt",
            &options(Some((1, 10)), BlameEngine::Libgit2),
            &cache,
        )
        .unwrap();
    assert_eq!(blame_files(dir.path()).len(), 2, "the engine is in the key");

    // A shallow clone deepened later: same HEAD, different answers.
    let clone_dir = tempfile::tempdir().unwrap();
    let clone = clone_dir.path().join("clone");
    let url = format!("file://{}", repo.path().display());
    let run = |args: &[&str], dir: &Path| {
        let out = gitctx::GitCommand::new(dir).args(args).run().unwrap();
        assert!(out.status.success());
    };
    run(
        &[
            "clone",
            "--quiet",
            "--depth",
            "3",
            &url,
            clone.to_str().unwrap(),
        ],
        repo.path(),
    );
    let shallow_cache = BlameCache::new(dir.path().join("shallow"));
    let whole = options(None, BlameEngine::Cli);
    let git = gitctx::Repo::discover(&clone).unwrap();
    let shallow = git
        .blame_cached("new/name.txt", &whole, &shallow_cache)
        .unwrap();
    assert!(shallow.iter().any(|e| e.boundary), "{shallow:?}");
    run(&["fetch", "--quiet", "--unshallow"], &clone);
    let git = gitctx::Repo::discover(&clone).unwrap();
    let deep = git
        .blame_cached("new/name.txt", &whole, &shallow_cache)
        .unwrap();
    assert_eq!(deep, git.blame("new/name.txt", &whole).unwrap());
    assert_ne!(deep, shallow);
}

#[test]
fn an_unwritable_cache_still_answers() {
    let repo = churned_history();
    let git = open(&repo);
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, "not a directory").unwrap();
    let cache = BlameCache::new(blocker.join("blame"));
    let opts = options(Some((3, 33)), BlameEngine::Cli);
    let entries: Vec<BlameEntry> = git.blame_cached("new/name.txt", &opts, &cache).unwrap();
    assert_eq!(entries, git.blame("new/name.txt", &opts).unwrap());
}

#[test]
fn warming_carries_cached_files_to_head_and_prunes_outside_the_window() {
    let repo = TestRepo::new();
    repo.commit_file("f.txt", "a\nb\nc\n", "f");
    repo.commit_file("g.txt", "x\ny\n", "g");
    let dir = tempfile::tempdir().unwrap();
    let cache = BlameCache::new(dir.path().join("blame"));
    assert_eq!(cache.usage(), gitctx::CacheUsage::default(), "no cache yet");
    let whole = options(None, BlameEngine::Cli);
    for path in ["f.txt", "g.txt"] {
        open(&repo).blame_cached(path, &whole, &cache).unwrap();
    }
    // A commit no branch reaches any more, blamed an hour and more ago.
    repo.checkout_new("gone");
    let gone = repo.commit_file("f.txt", "a\nb\nc\nd\n", "gone");
    let at_gone = BlameOptions {
        rev: Some(gone.clone()),
        ..whole.clone()
    };
    open(&repo).blame_cached("f.txt", &at_gone, &cache).unwrap();
    repo.checkout("main");
    repo.git(&["branch", "-D", "gone"]);
    let old = std::time::SystemTime::now() - gitctx::blame_cache::PRUNE_GRACE * 2;
    for file in blame_files(cache.dir()) {
        if file.to_string_lossy().contains(&gone) {
            std::fs::File::options()
                .write(true)
                .open(&file)
                .unwrap()
                .set_modified(old)
                .unwrap();
        }
    }
    assert_eq!(cache.usage().files, 3);
    let window = open(&repo).blame_window().unwrap();
    assert_eq!(cache.outside(&window).files, 1, "counted, not removed");
    assert_eq!(cache.usage().files, 3);

    repo.commit_file("f.txt", "a\nB\nc\n", "change f");
    let git = open(&repo);
    let report = cache.warm(&git, 100).unwrap();
    assert_eq!(report.pruned.files, 1, "{report:?}");
    assert_eq!(
        (report.considered, report.carried),
        (2, 2),
        "f.txt's step is diffed in-process, g.txt is unchanged: {report:?}"
    );
    let mut paths = cache.cached_paths();
    paths.sort();
    assert_eq!(paths, ["f.txt", "g.txt"]);
    let usage = cache.usage();
    assert_eq!((usage.paths, usage.files), (2, 4), "{usage:?}");
    assert!(usage.bytes > 0);
    for path in ["f.txt", "g.txt"] {
        let (entries, outcome) = git.blame_cached_outcome(path, &whole, &cache).unwrap();
        assert_eq!(entries, git.blame(path, &whole).unwrap(), "{path}");
        assert_eq!(outcome, gitctx::CacheOutcome::default(), "{path}: warm");
    }
    let again = cache.warm(&git, 100).unwrap();
    assert_eq!((again.carried, again.pruned.files), (0, 0), "{again:?}");

    // HEAD on an unrelated history, where nothing cached meets its lines:
    // the file is blamed afresh, so the next read is warm all the same.
    repo.git(&["checkout", "-q", "--orphan", "unrelated"]);
    repo.git(&["rm", "-q", "--cached", "g.txt"]);
    repo.commit_file("f.txt", "p\nq\n", "unrelated f");
    let report = cache.warm(&git, 100).unwrap();
    assert_eq!((report.carried, report.blamed), (0, 1), "{report:?}");
    let (entries, outcome) = git.blame_cached_outcome("f.txt", &whole, &cache).unwrap();
    assert_eq!(entries, git.blame("f.txt", &whole).unwrap());
    assert_eq!(
        outcome,
        gitctx::CacheOutcome::default(),
        "warm after the fresh blame"
    );
}

/// The cost model: a carry is held to what the last fresh blame of the file
/// cost (recorded beside its blames), judged after 64 commits. Told that a
/// blame costs a microsecond, the walk stops there, says so, and git blames
/// the lines; told that one costs an hour, it carries. The answer is the same.
#[test]
fn a_carry_that_would_cost_more_than_a_blame_stops_and_git_blames_the_rest() {
    let repo = TestRepo::new();
    let mut lines: Vec<String> = (1..=40).map(|i| format!("line {i}")).collect();
    let mut commits = vec![repo.commit_file("f.txt", lines.join("\n") + "\n", "start")];
    // Lines 21–40 never change: they travel the whole way down to meet the
    // cached blame.
    for k in 0..100 {
        lines[k % 20] = format!("changed by {k}");
        commits.push(repo.commit_file("f.txt", lines.join("\n") + "\n", &format!("change {k}")));
    }
    let truth = open(&repo)
        .blame("f.txt", &options(None, BlameEngine::Cli))
        .unwrap();
    for (micros, carries) in [(1u64, false), (3_600_000_000, true)] {
        let dir = tempfile::tempdir().unwrap();
        let cache = BlameCache::new(dir.path());
        let git = open(&repo);
        let at_old = BlameOptions {
            rev: Some(commits[1].clone()),
            ..options(None, BlameEngine::Cli)
        };
        let (_, first) = git.blame_cached_outcome("f.txt", &at_old, &cache).unwrap();
        assert_eq!(first.git_processes, 1);
        // The fresh blame recorded its cost in the path's directory.
        let costs: Vec<_> = testkit::files_under(dir.path())
            .into_iter()
            .filter(|f| f.file_name().is_some_and(|n| n == ".cost"))
            .collect();
        let [cost] = costs.as_slice() else {
            panic!("one cost record: {costs:?}")
        };
        std::fs::write(cost, format!("gitctx-blame-cost 1\nmicros {micros}\n")).unwrap();
        let (entries, outcome) = git
            .blame_cached_outcome("f.txt", &options(None, BlameEngine::Cli), &cache)
            .unwrap();
        assert_eq!(entries, truth, "{micros} µs");
        let walk = outcome
            .carry
            .clone()
            .unwrap_or_else(|| panic!("a carry was tried: {micros} {outcome:?}"));
        if carries {
            assert_eq!(walk.stopped_by_cost, None, "{walk:?}");
            assert_eq!(outcome.git_processes, 0, "{outcome:?}");
        } else {
            let stop = walk.stopped_by_cost.expect("stopped by the cost model");
            assert_eq!(stop.blame_ms, 0);
            assert_eq!(
                walk.commits as usize,
                gitctx::blame_carry::MIN_JUDGED_COMMITS
            );
            assert_eq!(outcome.git_processes, 1, "{outcome:?}");
        }
        // The record is no blame: not counted, and pruned with the path.
        assert_eq!(cache.usage().files, blame_files(dir.path()).len() as u64);
    }
}

#[test]
fn the_cache_tells_whether_it_holds_anything_at_head() {
    let repo = TestRepo::new();
    repo.commit_file("f.txt", "a\nb\n", "first");
    let dir = tempfile::tempdir().unwrap();
    let cache = BlameCache::new(dir.path());
    let git = open(&repo);
    assert!(!cache.has_head_entry(&git, "f.txt"));
    git.blame_cached("f.txt", &options(Some((1, 1)), BlameEngine::Cli), &cache)
        .unwrap();
    assert!(cache.has_head_entry(&git, "f.txt"));
    assert!(!cache.has_head_entry(&git, "g.txt"));
    repo.commit_file("f.txt", "a\nB\n", "second");
    assert!(!cache.has_head_entry(&open(&repo), "f.txt"));
}
