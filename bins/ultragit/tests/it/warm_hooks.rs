//! Reads are warm after a pull and a checkout: the `post-merge` and
//! `post-checkout` hooks `ultragit init` installs start the detached `cache
//! warm`, which leaves the blame cache's entry at the new HEAD; a file
//! checkout starts none; a user's own hook keeps running; the warm-up's lock
//! keeps a burst of them from piling up; `ultragit sync` warms too. And a
//! warm read says exactly what a read without any cache says.
//!
//! Every wait is a poll with a generous deadline, never a timing assertion.

use std::time::{Duration, Instant, SystemTime};

use testkit::{TestRepo, assert_contains, bare_beside};

use crate::blame_cache::{
    FILE, assert_warm, change_the_client, has_entry_at, read_once, wait_for_entry_at,
};
use crate::support::{CLIENT_V1, annotate_regions, region, stdout, ultragit};

/// The lock a background warm-up holds while it runs.
fn lock_of(repo: &TestRepo) -> std::path::PathBuf {
    repo.join(".git/ultragit/cache/warm.lock")
}

/// Polls until no warm-up holds the lock: the one that left the entry waited
/// for is done (it took the lock before writing anything).
fn wait_until_no_warm_up_runs(repo: &TestRepo) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while lock_of(repo).exists() {
        assert!(
            Instant::now() < deadline,
            "a warm-up still holds {}",
            lock_of(repo).display()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `ultragit read FILE` prints the same with its caches warm as after they
/// are deleted (the caches only make reads faster).
fn assert_read_as_without_caches(repo: &TestRepo) {
    let warm = stdout(repo.path(), &["read", FILE]);
    std::fs::remove_dir_all(repo.join(".git/ultragit/cache")).unwrap();
    let cold = stdout(repo.path(), &["read", FILE]);
    assert_eq!(warm, cold, "a warm read says what a cold one says");
}

/// `CLIENT_V1` with `connect` retrying (line 13).
fn connect_retries(text: &str) -> String {
    text.replace(
        "!self.host.is_empty()",
        "(0..self.retries).any(|_| !self.host.is_empty())",
    )
}

/// `text` with `send` capping its payload (line 17).
fn send_caps(text: &str) -> String {
    text.replace("payload.len()\n", "payload.len().min(4096)\n")
}

/// Notes on the client's units at `commit`, so reads have something to say.
fn annotate_client(repo: &TestRepo, commit: &str, intent: &str) {
    annotate_regions(
        repo,
        commit,
        "2024-01-01T00:00:00Z",
        vec![
            region(
                FILE,
                "Client::connect",
                (12, 14),
                &format!("{intent}: connect"),
            ),
            region(FILE, "Client::send", (16, 18), &format!("{intent}: send")),
        ],
    );
}

/// A clone reads the client, then pulls others' work: a `--no-ff` merge with
/// changes to the file on both sides. The pull runs `post-merge` (the user's
/// own lines too) and the warm-up leaves the entry at the new HEAD.
#[test]
fn a_pull_warms_the_blame_cache_at_the_new_head_and_keeps_the_users_hook() {
    let upstream = TestRepo::new();
    let bare = bare_beside(&upstream, "remote.git");
    let url = bare.to_str().unwrap();
    let base = upstream.commit_file(FILE, CLIENT_V1, "client");
    upstream.git(&["remote", "add", "origin", url]);
    upstream.git(&["push", "--quiet", "origin", "main"]);

    let clone = TestRepo::new();
    clone.git(&["remote", "add", "origin", url]);
    clone.git(&["fetch", "--quiet", "origin"]);
    clone.git(&["reset", "--quiet", "--hard", "origin/main"]);
    annotate_client(&clone, &base, "first");
    let read = ultragit(clone.path(), &["read", FILE]);
    assert_eq!(read.code, 0, "{read:?}");
    // The user's own post-merge hook: it reads its argument, and fails.
    clone.write_executable(
        ".git/hooks/post-merge",
        "#!/bin/sh\necho \"merged, squash=$1\" >> \"$(git rev-parse --git-dir)/mine.log\"\nexit 3\n",
    );
    let init = stdout(clone.path(), &["init"]);
    assert_contains(&init, "post-merge hook   ");
    assert_contains(
        &init,
        "post-merge (ultragit block added; the existing lines are kept)",
    );

    // Others' work: both sides of a merge change the file.
    upstream.checkout_new("side");
    let side = upstream.commit_file(FILE, send_caps(CLIENT_V1), "cap send");
    upstream.checkout("main");
    let main = upstream.commit_file(FILE, connect_retries(CLIENT_V1), "retry connect");
    upstream.git(&["merge", "--quiet", "--no-ff", "-m", "merge side", "side"]);
    let merge = upstream.rev_parse("HEAD");
    assert_eq!(
        std::fs::read_to_string(upstream.join(FILE)).unwrap(),
        send_caps(&connect_retries(CLIENT_V1))
    );
    upstream.git(&["push", "--quiet", "origin", "main"]);

    assert!(!has_entry_at(&clone, &merge));
    clone.git(&["pull", "--quiet", "--no-rebase", "origin", "main"]);
    assert_eq!(
        clone.rev_parse("HEAD"),
        merge,
        "a fast-forward to the merge"
    );
    annotate_client(&clone, &side, "side");
    annotate_client(&clone, &main, "main");

    wait_for_entry_at(&clone, &merge);
    wait_until_no_warm_up_runs(&clone);
    assert_warm(&clone);
    assert_eq!(
        std::fs::read_to_string(clone.join(".git/mine.log")).unwrap(),
        "merged, squash=0\n",
        "the user's lines ran, once, with git's argument"
    );
    assert_read_as_without_caches(&clone);
}

/// Two branches from the read commit: `main` one step ahead (not warm), and
/// `topic` another; `init` comes after, so nothing was warmed on the way.
/// Returns (main's tip, topic's tip), `main` checked out.
fn two_branches_past_the_read() -> (TestRepo, String, String) {
    let repo = read_once();
    repo.checkout_new("topic");
    let topic = repo.commit_file(FILE, send_caps(CLIENT_V1), "cap send");
    repo.checkout("main");
    let main = repo.commit_file(FILE, connect_retries(CLIENT_V1), "retry connect");
    stdout(repo.path(), &["init"]);
    assert!(!has_entry_at(&repo, &main) && !has_entry_at(&repo, &topic));
    (repo, main, topic)
}

#[test]
fn a_branch_checkout_warms_the_blame_cache_at_the_new_head() {
    let (repo, _, topic) = two_branches_past_the_read();
    repo.git(&["checkout", "--quiet", "topic"]);
    wait_for_entry_at(&repo, &topic);
    wait_until_no_warm_up_runs(&repo);
    assert_warm(&repo);
    assert_read_as_without_caches(&repo);
}

#[test]
fn a_file_checkout_starts_no_warm_up() {
    let (repo, main, topic) = two_branches_past_the_read();
    // `git checkout -- FILE`: post-checkout with `$3` = 0 (and HEAD unmoved).
    repo.write(FILE, "scribbles\n");
    repo.git(&["checkout", "--quiet", "--", FILE]);
    assert_eq!(
        std::fs::read_to_string(repo.join(FILE)).unwrap(),
        connect_retries(CLIENT_V1)
    );
    // Then a branch checkout, which does start one; a warm-up the file
    // checkout had started would have left an entry at main's tip by the time
    // this one is done (or, still holding the lock, made this one skip).
    repo.git(&["checkout", "--quiet", "topic"]);
    wait_for_entry_at(&repo, &topic);
    wait_until_no_warm_up_runs(&repo);
    assert!(
        !has_entry_at(&repo, &main),
        "the file checkout started a warm-up at {main}"
    );
}

#[test]
fn a_background_warm_up_skips_while_another_holds_the_lock_and_takes_a_stale_one_over() {
    let repo = read_once();
    let head = change_the_client(&repo);
    let lock = lock_of(&repo);
    std::fs::write(&lock, "4242 1\n").unwrap();

    let quiet = |repo: &TestRepo| {
        let run = ultragit(repo.path(), &["cache", "warm", "--background"]);
        assert_eq!(
            (run.code, run.stdout.as_str(), run.stderr.as_str()),
            (0, "", ""),
            "{run:?}"
        );
    };
    // A fresh lock: another warm-up runs, this one skips.
    quiet(&repo);
    assert!(!has_entry_at(&repo, &head), "skipped");
    assert_eq!(std::fs::read_to_string(&lock).unwrap(), "4242 1\n");

    // A lock older than ten minutes was left by a warm-up that died.
    let old = SystemTime::now() - Duration::from_secs(11 * 60);
    std::fs::File::options()
        .write(true)
        .open(&lock)
        .unwrap()
        .set_modified(old)
        .unwrap();
    quiet(&repo);
    assert!(has_entry_at(&repo, &head), "taken over, and warmed");
    assert!(!lock.exists(), "and released");
    assert_warm(&repo);

    // A person's `cache warm` runs whatever the lock says, and leaves it.
    let next = repo.commit_file(FILE, connect_retries(CLIENT_V1), "retry connect");
    std::fs::write(&lock, "4242 2\n").unwrap();
    let out = stdout(repo.path(), &["cache", "warm"]);
    assert_contains(
        &out,
        "blame carried forward to HEAD for 1 of 1 cached files",
    );
    assert!(has_entry_at(&repo, &next));
    assert_eq!(std::fs::read_to_string(&lock).unwrap(), "4242 2\n");
}

#[test]
fn a_successful_sync_warms_the_caches_in_the_background() {
    let repo = read_once();
    let bare = bare_beside(&repo, "remote.git");
    repo.git(&["remote", "add", "origin", bare.to_str().unwrap()]);
    // No hook installed: nothing warmed the new HEAD.
    let head = change_the_client(&repo);
    assert!(!has_entry_at(&repo, &head));
    let out = stdout(repo.path(), &["sync"]);
    assert_contains(&out, "synced refs/notes/ultragit with 'origin'");
    wait_for_entry_at(&repo, &head);
    wait_until_no_warm_up_runs(&repo);
    assert_warm(&repo);
}
