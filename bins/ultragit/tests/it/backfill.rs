//! `ultragit backfill` as a process against `testkit`'s fake annotator: the
//! selection and dry run, concurrent annotation, the pool-wide pause on a 429,
//! storms ridden out (429s for 20 s, 64 annotations at the gate, hangs past
//! the request timeout) or failed past the retry budget, failures, and
//! stopping (SIGTERM, `kill -9`) without a partial note.

use std::collections::HashSet;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use testkit::{
    FakeLlm, Flavor, RecordedRequest, Reply, Storm, TestRepo, annotator, assert_contains,
    assert_starts_with,
};
use ultragit_schema::Annotation;

use crate::annotate::{KEY, KEY_VAR, configure};
use crate::support::{Run, ultragit_with};

/// Upper bound on waiting for a child; a broken binary fails the test instead of
/// hanging it. Never asserted on as a duration.
const PATIENCE: Duration = Duration::from_secs(120);

/// Model calls the fake annotator takes per commit: the first message carries
/// the diff, so it emits at once with the summary, which ends the run.
const CALLS: usize = 1;

/// A repository of `n` commits, each rewriting `src/counter.rs`; returns them
/// newest first.
fn history(n: usize) -> (TestRepo, Vec<String>) {
    let repo = TestRepo::new();
    let mut commits = repo.commit_many(n, "src/counter.rs");
    commits.reverse();
    (repo, commits)
}

fn backfill(repo: &TestRepo, args: &[&str]) -> Run {
    let mut all = vec!["backfill"];
    all.extend_from_slice(args);
    ultragit_with(repo.path(), &all, &[(KEY_VAR, KEY)])
}

/// A server that plays the writing agent for every commit.
fn server(delay: Duration) -> FakeLlm {
    server_except(delay, |_| None)
}

/// [`server`], except for the requests `exception` answers itself.
fn server_except(
    delay: Duration,
    exception: impl Fn(&RecordedRequest) -> Option<Reply> + Send + Sync + 'static,
) -> FakeLlm {
    let server = FakeLlm::start(Flavor::OpenAiChat, Vec::new());
    let annotate = annotator(delay, None);
    server.respond_with(move |request| exception(request).unwrap_or_else(|| annotate(request)));
    server
}

/// [`server`] without delay, except that every request about the
/// second-oldest commit of a [`history`] (its diff, in the first message,
/// shows "+1") is answered with `reply()`.
fn server_except_second(reply: impl Fn() -> Reply + Send + Sync + 'static) -> FakeLlm {
    server_except(Duration::ZERO, move |request| {
        let body = String::from_utf8_lossy(&request.body);
        body.contains("+1\\n").then(&reply)
    })
}

/// The full ids the dry run lists, in order.
fn listed(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .filter(|word| word.len() == 40 && word.bytes().all(|b| b.is_ascii_hexdigit()))
        .map(str::to_owned)
        .collect()
}

/// Every note under `refs/notes/ultragit`, each parsed (a note that does not
/// parse fails the test): commit → annotation.
fn notes(repo: &TestRepo) -> Vec<(String, Annotation)> {
    let git = gitctx::Repo::discover(repo.path()).unwrap();
    let notes = git.notes("refs/notes/ultragit").unwrap();
    notes
        .list()
        .unwrap()
        .into_iter()
        .map(|entry| {
            let text = notes.read(entry.target).unwrap().unwrap();
            let note = Annotation::from_json(&text)
                .unwrap_or_else(|e| panic!("a partial or invalid note ({e}): {text}"));
            assert_eq!(note.commit, entry.target.to_hex());
            (entry.target.to_hex(), note)
        })
        .collect()
}

#[test]
fn dry_run_lists_the_commits_newest_first_and_writes_nothing() {
    let (repo, commits) = history(5);
    repo.commit_file("Cargo.lock", "# lock\n", "Lock");
    let run = backfill(&repo, &["--dry-run"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(listed(&run.stdout), commits);
    assert!(
        run.stdout.contains(
            "dry run: 5 commits to annotate (of 6 commits in the range, 1 trivial); about "
        ),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains(" input tokens"), "{}", run.stdout);
    assert!(notes(&repo).is_empty());
    assert!(!repo.join(".git/ultragit/failed.log").exists());
    let refs = repo.git(&["for-each-ref", "refs/notes"]);
    assert_eq!(refs, "", "no notes ref was created");

    let limited = backfill(&repo, &["--dry-run", "--max-commits", "2"]);
    assert_eq!(listed(&limited.stdout), commits[..2].to_vec());
    let oldest_two = format!("{}..HEAD", commits[2]);
    let range = backfill(&repo, &["--dry-run", &oldest_two]);
    assert_eq!(listed(&range.stdout), commits[..2].to_vec());
    let since = backfill(&repo, &["--dry-run", "--since", &commits[1]]);
    assert_eq!(listed(&since.stdout), commits[..2].to_vec());
    let elsewhere = backfill(&repo, &["--dry-run", "--paths", "docs"]);
    assert_eq!(listed(&elsewhere.stdout), Vec::<String>::new());
    let inside = backfill(&repo, &["--dry-run", "--paths", "src/counter.rs"]);
    assert_eq!(listed(&inside.stdout), commits);
}

#[test]
fn shards_from_the_command_line_cover_each_commit_once() {
    let (repo, commits) = history(24);
    let mut seen = HashSet::new();
    for shard in ["1/3", "2/3", "3/3"] {
        let run = backfill(&repo, &["--dry-run", "--shard", shard]);
        assert_eq!(run.code, 0, "{run:?}");
        for id in listed(&run.stdout) {
            assert!(seen.insert(id.clone()), "{id} is in two shards");
        }
    }
    assert_eq!(seen, commits.into_iter().collect::<HashSet<_>>());
    for bad in ["0/3", "4/3", "3", "x/y"] {
        let run = backfill(&repo, &["--dry-run", "--shard", bad]);
        assert_eq!(run.code, 2, "--shard {bad}: {run:?}");
    }
}

#[test]
fn concurrent_backfill_annotates_every_commit_and_a_rerun_has_nothing_left() {
    let (repo, commits) = history(9);
    let server = server(Duration::ZERO);
    configure(&repo, &server);
    let run = backfill(&repo, &["--concurrency", "4"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stdout,
        format!(
            "backfill: 9 annotated, 0 skipped, 0 failed of 9 commits; {} input and {} output tokens\n",
            9 * CALLS * 11,
            9 * CALLS * 7
        )
    );
    assert_contains(&run.stderr, "backfill: 9 commits to annotate, 4 at once");
    assert!(!run.stderr.contains(KEY));
    let annotated: HashSet<String> = notes(&repo).into_iter().map(|(c, _)| c).collect();
    assert_eq!(annotated, commits.iter().cloned().collect::<HashSet<_>>());
    assert_eq!(server.requests().len(), 9 * CALLS);

    let again = backfill(&repo, &[]);
    assert_eq!(again.code, 0, "{again:?}");
    assert_eq!(
        again.stdout,
        "backfill: nothing to annotate (of 9 commits in the range, 9 already annotated)\n"
    );
    assert_eq!(
        server.requests().len(),
        9 * CALLS,
        "no model call on a rerun"
    );
}

#[test]
fn failures_go_to_failed_log_and_the_exit_status() {
    let (repo, commits) = history(4);
    // The second-oldest commit's diff shows "+1": the model refuses it.
    let server = server_except_second(|| Reply::error(400, "refused"));
    configure(&repo, &server);
    let run = backfill(&repo, &["--concurrency", "2"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_starts_with(
        &run.stdout,
        "backfill: 3 annotated, 0 skipped, 1 failed of 4 commits;",
    );
    assert_contains(
        &run.stdout,
        "failures are listed in .git/ultragit/failed.log",
    );
    let failed = &commits[2];
    assert_contains(&run.stderr, &format!("failed {}: ", &failed[..7]));
    let log = std::fs::read_to_string(repo.join(".git/ultragit/failed.log")).unwrap();
    assert_eq!(log.lines().count(), 1, "{log}");
    assert_contains(&log, failed.as_str());
    assert_contains(&log, "refused");
    assert_eq!(notes(&repo).len(), 3);
    let dry = backfill(&repo, &["--dry-run"]);
    assert_eq!(
        listed(&dry.stdout),
        vec![failed.clone()],
        "a rerun retries it"
    );
}

#[test]
fn a_missing_key_is_a_clear_error_but_a_dry_run_needs_none() {
    let (repo, _) = history(2);
    let server = server(Duration::ZERO);
    configure(&repo, &server);
    let run = ultragit_with(repo.path(), &["backfill"], &[]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains(KEY_VAR), "{}", run.stderr);
    assert!(server.requests().is_empty());
    let dry = ultragit_with(repo.path(), &["backfill", "--dry-run"], &[]);
    assert_eq!(dry.code, 0, "{dry:?}");
}

/// A 429 with `Retry-After: 3` to one annotation holds back all of them: once
/// the requests already on the wire have landed (a one-second grace), no
/// request arrives until the three seconds have passed. Without the shared
/// pause the other annotations would go on meanwhile: every normal answer takes
/// 400 ms (one per commit), and the nine commits left after the 429 keep two
/// workers busy for about two seconds, well past the grace.
#[test]
fn a_429_with_retry_after_pauses_the_whole_pool() {
    const RETRY_AFTER: Duration = Duration::from_secs(3);
    const GRACE: Duration = Duration::from_secs(1);
    let (repo, commits) = history(14);
    let seen = AtomicUsize::new(0);
    let server = server_except(Duration::from_millis(400), move |_| {
        // The fifth request, when every worker is busy, is told to wait.
        (seen.fetch_add(1, Ordering::SeqCst) == 4)
            .then(|| Reply::error(429, "rate limited").retry_after("3"))
    });
    configure(&repo, &server);
    let run = backfill(&repo, &["--concurrency", "3"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_contains(&run.stdout, "the provider asked to slow down 1 time");
    assert_eq!(notes(&repo).len(), commits.len());

    let exchanges = server.exchanges();
    assert_eq!(
        exchanges.len(),
        14 * CALLS + 1,
        "every request once, one retried"
    );
    let limited = exchanges
        .iter()
        .find(|e| e.status == Some(429))
        .expect("the 429 went out");
    let sent = limited.answered.unwrap();
    let during: Vec<Duration> = exchanges
        .iter()
        .filter(|e| e.arrived > sent + GRACE && e.arrived < sent + RETRY_AFTER)
        .map(|e| e.arrived - sent)
        .collect();
    assert!(
        during.is_empty(),
        "requests arrived during the pause, this long after the 429: {during:?}"
    );
    assert!(
        exchanges.iter().any(|e| e.arrived >= sent + RETRY_AFTER),
        "the work went on after the pause"
    );
}

/// Starts `ultragit backfill args…` without waiting.
fn spawn(repo: &TestRepo, args: &[&str]) -> Child {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ultragit"));
    cmd.arg("backfill").args(args).current_dir(repo.path());
    testkit::isolate(&mut cmd).env(KEY_VAR, KEY);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start ultragit backfill")
}

/// Waits until `repo` has at least `n` notes.
fn until_notes(repo: &TestRepo, n: usize) {
    let give_up = Instant::now() + PATIENCE;
    loop {
        let git = gitctx::Repo::discover(repo.path()).unwrap();
        let count = git
            .notes("refs/notes/ultragit")
            .unwrap()
            .list()
            .unwrap()
            .len();
        if count >= n {
            return;
        }
        assert!(Instant::now() < give_up, "only {count} notes after waiting");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn wait(child: Child) -> std::process::Output {
    let give_up = Instant::now() + PATIENCE;
    let mut child = child;
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < give_up, "backfill did not exit");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn kill_9_mid_run_leaves_no_partial_note_and_a_rerun_completes() {
    let (repo, commits) = history(12);
    let server = server(Duration::from_millis(100));
    configure(&repo, &server);
    let mut child = spawn(&repo, &["--concurrency", "2"]);
    until_notes(&repo, 2);
    child.kill().unwrap(); // SIGKILL
    let _ = wait(child);
    let stored = notes(&repo).len();
    assert!(stored >= 2 && stored < commits.len(), "{stored} notes");

    let run = backfill(&repo, &["--concurrency", "3"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.starts_with(&format!(
            "backfill: {} annotated, 0 skipped, 0 failed of {} commits;",
            commits.len() - stored,
            commits.len() - stored
        )),
        "{}",
        run.stdout
    );
    let annotated: HashSet<String> = notes(&repo).into_iter().map(|(c, _)| c).collect();
    assert_eq!(annotated, commits.into_iter().collect::<HashSet<_>>());
}

#[cfg(unix)]
#[test]
fn sigterm_stops_scheduling_and_prints_the_summary() {
    let (repo, commits) = history(12);
    let server = server(Duration::from_millis(100));
    configure(&repo, &server);
    let child = spawn(&repo, &["--concurrency", "2"]);
    until_notes(&repo, 1);
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = wait(child);
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("interrupted: "), "{stdout}");
    assert_contains(&stdout, "run the same command again to continue");
    let stored = notes(&repo).len();
    assert!(stored < commits.len(), "it stopped early: {stored} notes");

    let run = backfill(&repo, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(notes(&repo).len(), commits.len());
}

#[test]
fn a_declined_commit_is_counted_as_declined_and_never_retried() {
    let (repo, commits) = history(3);
    // The second-oldest commit's diff shows "+1": the model finds nothing to
    // record on it.
    let server = server_except_second(|| {
        Reply::tool_calls(vec![testkit::call(
            "d",
            "decline_annotation",
            serde_json::json!({"reason": "A counter bump: nothing a future modifier needs."}),
        )])
    });
    configure(&repo, &server);
    let run = backfill(&repo, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_starts_with(
        &run.stdout,
        "backfill: 2 annotated, 1 declined, 0 skipped, 0 failed of 3 commits;",
    );
    assert!(!repo.join(".git/ultragit/failed.log").exists());
    let declined = &commits[1];
    let stored = notes(&repo);
    let note = &stored.iter().find(|(c, _)| c == declined).unwrap().1;
    assert!(note.regions.is_empty());
    assert_starts_with(
        &note.summary,
        "Not annotated: the model found nothing semantic",
    );
    let sent = server.requests().len();
    assert_eq!(sent, 2 * CALLS + 1, "the declined one: the decline at once");
    let again = backfill(&repo, &[]);
    assert_eq!(again.code, 0, "{again:?}");
    assert_eq!(
        again.stdout,
        "backfill: nothing to annotate (of 3 commits in the range, 3 already annotated)\n"
    );
    assert_eq!(server.requests().len(), sent, "no model call on a rerun");
}

#[test]
fn a_too_large_commit_is_skipped_with_a_note_and_no_model_call() {
    let (repo, commits) = history(2);
    let body: String = (0..2_100).map(|n| format!("row {n}\n")).collect();
    let large = repo.commit_file("data/table.txt", body, "Add the table");
    let server = server(Duration::ZERO);
    configure(&repo, &server);
    // Large commits are chunked by default; this team skips them.
    repo.git(&["config", "ultragit.largeCommits", "skip"]);
    let dry = backfill(&repo, &["--dry-run"]);
    assert_eq!(dry.code, 0, "{dry:?}");
    assert_contains(
        &dry.stdout,
        &format!("{large} 2100 changed lines (too large: a note, no model call)\n"),
    );
    assert_contains(
        &dry.stdout,
        "dry run: 3 commits to annotate (of 3 commits in the range; 1 too large: a note each, \
         no model call); about ",
    );
    let run = backfill(&repo, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_starts_with(
        &run.stdout,
        "backfill: 2 annotated, 1 skipped, 0 failed of 3 commits;",
    );
    assert_eq!(
        server.requests().len(),
        commits.len() * CALLS,
        "none for the large one"
    );
    let stored = notes(&repo);
    let note = &stored.iter().find(|(c, _)| *c == large).unwrap().1;
    assert_starts_with(
        &note.summary,
        "Not annotated: skipped as too large: 2,100 changed lines",
    );
    let again = backfill(&repo, &[]);
    assert_contains(&again.stdout, "nothing to annotate");
}

/// A server that plays the writing agent behind `storm`.
fn server_behind(storm: &Storm) -> FakeLlm {
    let server = FakeLlm::start(Flavor::OpenAiChat, Vec::new());
    server.respond_with(storm.then(annotator(Duration::ZERO, None)));
    server
}

/// Every commit of `commits` has its note, `run` exited 0 saying so, and
/// `failed.log` was never written.
fn assert_all_annotated(repo: &TestRepo, commits: &[String], run: &Run) {
    assert_eq!(run.code, 0, "{run:?}");
    assert_starts_with(
        &run.stdout,
        &format!(
            "backfill: {n} annotated, 0 skipped, 0 failed of {n} commits;",
            n = commits.len()
        ),
    );
    assert!(!repo.join(".git/ultragit/failed.log").exists());
    let annotated: HashSet<String> = notes(repo).into_iter().map(|(c, _)| c).collect();
    assert_eq!(annotated, commits.iter().cloned().collect::<HashSet<_>>());
}

/// The storm that used to fail a whole backfill (issue 31: 12 commits, all
/// failed after five attempts in 9 s): 429 with `Retry-After: 1` for 20 s.
/// Now every commit is annotated, the progress line says the provider
/// paused the pool, and the pool sends about one request per pause.
#[test]
fn a_20_second_429_storm_is_ridden_out() {
    let (repo, commits) = history(12);
    let storm = Storm::rate_limited(Duration::from_secs(20), "1");
    let server = server_behind(&storm);
    configure(&repo, &server);
    let run = backfill(&repo, &["--concurrency", "4"]);
    assert_all_annotated(&repo, &commits, &run);
    assert!(storm.is_over(), "the run outlasted the storm");
    assert_contains(
        &run.stderr,
        "backfill: paused by the provider, resuming in ",
    );
    assert_contains(&run.stdout, "the provider asked to slow down ");
    // The first volley of four, then one probe a second: some 24. Retrying
    // every worker after every pause would be about 80.
    let during = storm.during();
    assert!(during <= 4 + 2 * 20, "{during} requests during the storm");
    assert_eq!(server.requests().len(), during + 12 * CALLS);
}

/// Sixty-four annotations in flight through an 8-second storm: the gate holds
/// them all, so the storm sees the first volley and about one probe per
/// pause — not 64 requests per pause — and every commit is annotated.
#[test]
fn at_concurrency_64_the_gate_holds_everyone_through_a_storm() {
    let (repo, commits) = history(64);
    let storm = Storm::rate_limited(Duration::from_secs(8), "1");
    let server = server_behind(&storm);
    configure(&repo, &server);
    let run = backfill(&repo, &["--concurrency", "64"]);
    assert_all_annotated(&repo, &commits, &run);
    assert_contains(&run.stderr, "backfill: 64 commits to annotate, 64 at once");
    assert!(storm.is_over());
    let during = storm.during();
    assert!(during <= 64 + 3 * 8, "{during} requests during the storm");
}

/// A storm longer than `--retry-budget` fails each commit with a reason that
/// names the budget: on stderr, in `failed.log`, exit status 1.
#[test]
fn a_storm_past_the_retry_budget_fails_each_commit_naming_the_budget() {
    let (repo, commits) = history(3);
    let storm = Storm::rate_limited(Duration::from_secs(3600), "1");
    let server = server_behind(&storm);
    configure(&repo, &server);
    let run = backfill(&repo, &["--retry-budget", "3s"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_starts_with(
        &run.stdout,
        "backfill: 0 annotated, 0 skipped, 3 failed of 3 commits;",
    );
    assert_contains(
        &run.stderr,
        "still failing when the retry budget of 3 s ran out",
    );
    let log = std::fs::read_to_string(repo.join(".git/ultragit/failed.log")).unwrap();
    assert_eq!(log.lines().count(), 3, "{log}");
    for commit in &commits {
        let line = testkit::line_containing(&log, commit);
        assert_contains(line, "the retry budget of 3 s ran out");
    }
    assert!(notes(&repo).is_empty());

    // A budget out of bounds is a usage error.
    let run = backfill(&repo, &["--retry-budget", "0s"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert_contains(&run.stderr, "expected between 1 s and 24 h");
}

/// A provider that hangs for 4 s (each answer never comes): with
/// `--request-timeout 1s` each attempt is cut off and retried within the
/// budget until the provider answers again.
#[test]
fn a_hang_past_the_request_timeout_is_cut_off_and_retried() {
    let (repo, commits) = history(3);
    let storm = Storm::hanging(Duration::from_secs(4), Duration::from_secs(60));
    let server = server_behind(&storm);
    configure(&repo, &server);
    let run = backfill(&repo, &["--request-timeout", "1s", "--concurrency", "3"]);
    assert_all_annotated(&repo, &commits, &run);
    assert!(storm.during() >= 3, "every annotation met the hang");
}
