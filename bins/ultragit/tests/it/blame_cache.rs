//! The blame cache following the repository: `ultragit cache warm` (which the
//! `post-commit` hook starts in the background) carries the blame of the
//! files reads asked about forward to the new HEAD, and `ultragit doctor`
//! reports the cache and prunes what no read can use.

use std::time::{Duration, Instant};

use gitctx::{BlameCache, BlameEngine, BlameOptions, CacheOutcome, Repo};
use testkit::TestRepo;

use crate::support::{CLIENT_V1, stdout, ultragit};

pub(crate) const FILE: &str = "src/client.rs";

pub(crate) fn cache_of(repo: &TestRepo) -> BlameCache {
    BlameCache::new(repo.path().join(".git/ultragit/cache/blame"))
}

fn whole() -> BlameOptions {
    BlameOptions {
        rev: None,
        lines: None,
        engine: BlameEngine::Cli,
    }
}

/// A repository whose `src/client.rs` a read has blamed at HEAD.
pub(crate) fn read_once() -> TestRepo {
    let repo = TestRepo::new();
    repo.commit_file(FILE, CLIENT_V1, "client");
    let read = ultragit(repo.path(), &["read", FILE]);
    assert_eq!(read.code, 0, "{read:?}");
    assert_eq!(
        cache_of(&repo).usage().files,
        1,
        "the read filled the cache"
    );
    repo
}

pub(crate) fn change_the_client(repo: &TestRepo) -> String {
    let text = CLIENT_V1.replace("pub fn send", "pub fn send_all");
    assert_ne!(text, CLIENT_V1);
    repo.commit_file(FILE, text, "rename send")
}

/// HEAD's blame of the file is served from the cache without a process.
pub(crate) fn assert_warm(repo: &TestRepo) {
    let git = Repo::discover(repo.path()).unwrap();
    let (entries, outcome) = git
        .blame_cached_outcome(FILE, &whole(), &cache_of(repo))
        .unwrap();
    assert_eq!(outcome, CacheOutcome::default(), "warm at HEAD");
    assert_eq!(entries, git.blame(FILE, &whole()).unwrap());
}

#[test]
fn cache_warm_carries_read_files_forward_to_head() {
    let repo = read_once();
    change_the_client(&repo);
    let out = stdout(repo.path(), &["cache", "warm"]);
    // The new commit's diff of the file is computed in-process.
    assert!(
        out.contains("blame carried forward to HEAD for 1 of 1 cached files (no git process)"),
        "{out}"
    );
    // The client's outline is not carried: the change lies in its `impl`,
    // most of the file (a warm-up never parses a whole file); the next read
    // parses it.
    assert!(
        out.contains(
            "outlines carried forward to HEAD for 0 of 1 cached files (0 already at HEAD)"
        ),
        "{out}"
    );
    assert_warm(&repo);
    let again = stdout(repo.path(), &["cache", "warm"]);
    assert!(again.contains("for 0 of 1 cached files"), "{again}");
    let read = ultragit(repo.path(), &["read", FILE]);
    assert_eq!(read.code, 0, "{read:?}");
    let after_read = stdout(repo.path(), &["cache", "warm"]);
    assert!(
        after_read.contains("for 0 of 1 cached files (1 already at HEAD)"),
        "{after_read}"
    );

    // In the background it never fails and says nothing, even outside a
    // repository.
    let outside = repo.path().parent().unwrap();
    let quiet = ultragit(outside, &["cache", "warm", "--background"]);
    assert_eq!(
        (quiet.code, quiet.stdout.as_str(), quiet.stderr.as_str()),
        (0, "", "")
    );
    let loud = ultragit(outside, &["cache", "warm"]);
    assert_eq!(loud.code, 1, "{loud:?}");
}

/// A real `git commit` runs the hook `ultragit init` installed; the cache is
/// warmed at the new HEAD by the detached `cache warm`.
#[test]
fn the_post_commit_hook_warms_the_blame_cache() {
    let repo = read_once();
    stdout(repo.path(), &["init"]);
    let hook = std::fs::read_to_string(repo.path().join(".git/hooks/post-commit")).unwrap();
    assert!(
        hook.contains(" cache warm --background </dev/null >/dev/null 2>&1 &\n"),
        "{hook}"
    );
    repo.write(FILE, CLIENT_V1.replace("pub fn send", "pub fn send_all"));
    repo.git(&["add", "--", FILE]);
    repo.command()
        .args(["commit", "--quiet", "-m", "rename send"])
        .run()
        .expect("git commit runs the hook and succeeds");
    let head = repo.rev_parse("HEAD");
    wait_for_entry_at(&repo, &head);
    assert_warm(&repo);
}

/// Whether the blame cache holds an entry at `commit`: its final name, not
/// the temporary file it is written to first (`.<name>.….tmp`, which holds
/// the commit too), or the entry may be read half-written.
pub(crate) fn has_entry_at(repo: &TestRepo, commit: &str) -> bool {
    testkit::files_under(cache_of(repo).dir()).iter().any(|f| {
        f.file_name()
            .and_then(|name| name.to_str())
            .is_some_and(|name| name.contains(commit) && !name.starts_with('.'))
    })
}

/// Polls (no timing assertion: a generous deadline only) until a background
/// warm-up has left the blame cache's entry at `commit`.
pub(crate) fn wait_for_entry_at(repo: &TestRepo, commit: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !has_entry_at(repo, commit) {
        assert!(
            Instant::now() < deadline,
            "no warm-up left a blame cache entry at {commit}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn doctor_reports_the_blame_cache_and_fix_prunes_what_no_read_uses() {
    let repo = read_once();
    // An entry at a commit no branch reaches, written long ago.
    repo.checkout_new("gone");
    let gone = change_the_client(&repo);
    let at_gone = BlameOptions {
        rev: Some(gone.clone()),
        ..whole()
    };
    let git = Repo::discover(repo.path()).unwrap();
    git.blame_cached(FILE, &at_gone, &cache_of(&repo)).unwrap();
    repo.checkout("main");
    repo.git(&["branch", "-D", "gone"]);
    let old = std::time::SystemTime::now() - gitctx::blame_cache::PRUNE_GRACE * 2;
    for file in testkit::files_under(cache_of(&repo).dir()) {
        if file.to_string_lossy().contains(&gone) {
            let file = std::fs::File::options().write(true).open(&file).unwrap();
            file.set_modified(old).unwrap();
        }
    }

    let report = ultragit(repo.path(), &["doctor"]);
    let cache_line = report
        .stdout
        .lines()
        .find(|l| l.contains(" cache "))
        .unwrap_or_default()
        .to_owned();
    assert!(
        cache_line.contains("blame cache: 2 entries for 1 file")
            && cache_line.contains("1 entry (")
            && cache_line.contains("outside the kept window; outline cache: 1 entry ("),
        "{report:?}"
    );
    let fixed = ultragit(repo.path(), &["doctor", "--fix"]);
    assert!(
        fixed.stdout.contains("fixed: pruned 1 blame cache entry ("),
        "{fixed:?}"
    );
    assert_eq!(cache_of(&repo).usage().files, 1);
    let after = ultragit(repo.path(), &["doctor"]);
    assert!(
        after.stdout.contains("blame cache: 1 entry for 1 file")
            && !after.stdout.contains("outside the kept window"),
        "{after:?}"
    );
}
