//! `backfill`: which commits are picked, how shards split them, a
//! concurrent run against the fake annotator, and runs through storms (429s,
//! 500s, cut bodies) with backfill's own HTTP options.

use std::collections::HashSet;
use std::time::Duration;

use gitctx::{ObjectId, Repo};
use llm::{HttpOptions, PauseGate, ProviderConfig, ProviderKind};
use testkit::{FakeLlm, Flavor, Reply, Storm, TestRepo, annotator};
use ultragit_annotate::backfill::{
    self, BackfillConfig, Event, Outcome, RunOptions, SelectOptions, Shard,
};
use ultragit_annotate::{AnnotateConfig, Trivial};
use ultragit_schema::{Annotation, AstAnchor, ContextLevel, LineRange, RegionAnnotation};

use crate::support::{provider, runtime};

/// A history with every kind of commit backfill must tell apart; the commits
/// it should pick, newest first, are `picked`.
struct History {
    repo: TestRepo,
    a: String,
    b: String,
    c: String,
    d: String,
    whitespace: String,
    docs: String,
    annotated: String,
}

impl History {
    fn picked(&self) -> Vec<String> {
        [&self.whitespace, &self.d, &self.c, &self.b, &self.a]
            .map(|s| s.to_string())
            .to_vec()
    }
}

fn history() -> History {
    let repo = TestRepo::new();
    let a = repo.commit_file("src/a.rs", "pub fn a() -> u32 {\n    1\n}\n", "Add a");
    repo.commit_file("Cargo.lock", "# lock\n", "Lock dependencies");
    let b = repo.commit_file("src/b.rs", "pub fn b() {}\n", "Add b");
    repo.checkout_new("side");
    let c = repo.commit_file("src/c.rs", "pub fn c() {}\n", "Add c");
    repo.checkout("main");
    let d = repo.commit_file("src/d.rs", "pub fn d() {}\n", "Add d");
    repo.git(&["merge", "--quiet", "--no-ff", "-m", "Merge side", "side"]);
    let whitespace = repo.commit_file(
        "src/a.rs",
        "pub fn a() -> u32 {\n        1\n}\n",
        "Indent a",
    );
    let docs = repo.commit_file("docs/e.md", "# E\n", "Document e");
    let annotated = repo.commit_file("src/f.rs", "pub fn f() {}\n", "Add f");
    repo.commit_file("logo.png", [0u8, 159, 146, 150, 0, 1], "Add a logo");
    let history = History {
        repo,
        a,
        b,
        c,
        d,
        whitespace,
        docs,
        annotated,
    };
    let note = note_for(&history.annotated);
    ultragit_notes::store(&Repo::discover(history.repo.path()).unwrap(), &note).unwrap();
    history
}

/// `backfill::run` over every commit `select` picks in `history`, against
/// `server`, `concurrency` at once, until `stop`.
fn run_all(
    history: &History,
    server: &FakeLlm,
    concurrency: usize,
    stop: impl Future<Output = ()>,
    on_event: impl FnMut(Event<'_>),
) -> backfill::Summary {
    let selection = select(history, &SelectOptions::default());
    let options = RunOptions {
        concurrency,
        redactor: llm::Redactor::default(),
        pause: None,
    };
    runtime().block_on(backfill::run(
        history.repo.path(),
        &commits(&selection),
        provider(server, llm::ProviderKind::OpenAiChat, true),
        &AnnotateConfig::default(),
        &options,
        stop,
        on_event,
    ))
}

/// The note of the history's annotated commit: one region on `f`.
fn note_for(commit: &str) -> Annotation {
    let mut note = Annotation::new(
        commit,
        "2025-01-01T00:00:00Z",
        "Adds f.",
        ContextLevel::Inferred,
    );
    let f = AstAnchor::new("function", "f");
    let region = RegionAnnotation::new("src/f.rs", f, LineRange::new(1, 1), "An empty f.");
    note.regions.push(region);
    note
}

fn select(history: &History, options: &SelectOptions) -> backfill::Selection {
    let repo = Repo::discover(history.repo.path()).unwrap();
    backfill::select(&repo, options).unwrap()
}

fn ids(selection: &backfill::Selection) -> Vec<String> {
    selection.commits.iter().map(|c| c.id.to_hex()).collect()
}

#[test]
fn picks_unannotated_non_merge_non_trivial_commits_newest_first() {
    let history = history();
    let selection = select(&history, &SelectOptions::default());
    assert_eq!(ids(&selection), history.picked());
    assert_eq!(selection.considered, 10);
    assert_eq!(selection.merges, 1);
    assert_eq!(selection.annotated, 1);
    assert_eq!(selection.trivial, 3, "the lockfile, the docs and the logo");
    assert!(
        !ids(&selection).contains(&history.docs),
        "a docs-only commit is trivial by its numstat"
    );
    assert_eq!(selection.other_shards, 0);
    assert_eq!(selection.over_limit, 0);
    let a = selection.commits.last().unwrap();
    assert_eq!((a.changed_lines, a.files), (3, 1));
}

#[test]
fn paths_since_max_commits_and_ranges_narrow_the_selection() {
    let history = history();
    let only = |options: SelectOptions| ids(&select(&history, &options));

    let under_src = only(SelectOptions {
        paths: vec!["src".to_owned()],
        ..SelectOptions::default()
    });
    assert_eq!(under_src, history.picked());

    let repo = Repo::discover(history.repo.path()).unwrap();
    let c_time = repo
        .commit_info(&history.c)
        .unwrap()
        .committer
        .time
        .to_utc();
    assert_eq!(
        only(SelectOptions {
            since: Some(c_time),
            ..SelectOptions::default()
        }),
        history.picked()[..3].to_vec(),
        "committed at or after c"
    );

    let limited = select(
        &history,
        &SelectOptions {
            max_commits: Some(2),
            ..SelectOptions::default()
        },
    );
    assert_eq!(ids(&limited), history.picked()[..2].to_vec());
    assert_eq!(limited.over_limit, 3);

    assert_eq!(
        only(SelectOptions {
            range: format!("{}..{}", history.b, history.d),
            ..SelectOptions::default()
        }),
        vec![history.d.clone()]
    );

    let err = backfill::select(
        &repo,
        &SelectOptions {
            range: "--all".to_owned(),
            ..SelectOptions::default()
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("not a revision range"), "{err}");
    assert!(
        backfill::select(
            &repo,
            &SelectOptions {
                range: "no-such-branch".to_owned(),
                ..SelectOptions::default()
            },
        )
        .is_err()
    );
}

#[test]
fn shards_cover_every_commit_exactly_once() {
    let repo = TestRepo::new();
    repo.commit_many(60, "src/counter.rs");
    let everything: Vec<String> = ids(&backfill::select(
        &Repo::discover(repo.path()).unwrap(),
        &SelectOptions::default(),
    )
    .unwrap());
    assert_eq!(everything.len(), 60);
    for count in [1, 2, 3, 7] {
        let mut seen: HashSet<String> = HashSet::new();
        let mut total = 0;
        for index in 1..=count {
            let selection = backfill::select(
                &Repo::discover(repo.path()).unwrap(),
                &SelectOptions {
                    shard: Some(Shard::new(index, count).unwrap()),
                    ..SelectOptions::default()
                },
            )
            .unwrap();
            assert_eq!(
                selection.commits.len() + selection.other_shards,
                60,
                "shard {index}/{count}"
            );
            for id in ids(&selection) {
                assert!(seen.insert(id.clone()), "{id} is in two shards of {count}");
                total += 1;
            }
        }
        assert_eq!(total, 60, "{count} shards");
        let union: HashSet<String> = everything.iter().cloned().collect();
        assert_eq!(seen, union, "{count} shards cover every commit");
    }
}

fn commits(selection: &backfill::Selection) -> Vec<ObjectId> {
    selection.commits.iter().map(|c| c.id).collect()
}

#[test]
fn a_concurrent_run_annotates_everything_and_a_rerun_finds_nothing_left() {
    let history = history();
    let server = FakeLlm::start(Flavor::OpenAiChat, Vec::new());
    server.respond_with(annotator(Duration::ZERO, None));
    let mut started = 0;
    let mut finished = Vec::new();
    let summary = run_all(
        &history,
        &server,
        3,
        std::future::pending(),
        |event| match event {
            Event::Started { .. } => started += 1,
            Event::Finished {
                commit, outcome, ..
            } => finished.push((commit.to_hex(), outcome.clone())),
            _ => {}
        },
    );
    assert_eq!(summary.total, 5);
    assert_eq!(summary.annotated, 4, "{summary:?}");
    assert_eq!(summary.skipped, 1, "the whitespace-only commit");
    assert_eq!(summary.failed, 0);
    assert!(summary.complete());
    // One model call per annotated commit (the first message carries the
    // diff: the emission and the summary in one reply end the run), 11 input
    // and 7 output tokens each.
    assert_eq!(summary.input_tokens, 4 * 11);
    assert_eq!(summary.output_tokens, 4 * 7);
    assert_eq!(started, 5);
    assert_eq!(finished.len(), 5);
    assert!(finished.contains(&(
        history.whitespace.clone(),
        Outcome::Skipped(Trivial::WhitespaceOnly)
    )));

    let repo = Repo::discover(history.repo.path()).unwrap();
    let notes = repo.notes(ultragit_annotate::NOTES_REF).unwrap();
    for commit in history.picked() {
        let text = notes.read(commit.parse().unwrap()).unwrap();
        if commit == history.whitespace {
            assert_eq!(text, None);
            continue;
        }
        let note = Annotation::from_json(&text.unwrap()).unwrap();
        assert_eq!(note.commit, commit);
        assert_eq!(note.regions.len(), 1);
    }
    let again = select(&history, &SelectOptions::default());
    assert_eq!(ids(&again), vec![history.whitespace.clone()]);
    assert_eq!(again.annotated, 5);
}

#[test]
fn failures_are_recorded_and_the_rest_still_annotated() {
    let history = history();
    let server = FakeLlm::start(Flavor::OpenAiChat, Vec::new());
    let annotate = annotator(Duration::ZERO, None);
    server.respond_with(move |request| {
        if String::from_utf8_lossy(&request.body).contains("=== src/b.rs (") {
            Reply::error(400, "the model refuses src/b.rs")
        } else {
            annotate(request)
        }
    });
    let summary = run_all(&history, &server, 2, std::future::pending(), |_| {});
    assert_eq!(
        (summary.annotated, summary.skipped, summary.failed),
        (3, 1, 1),
        "{summary:?}"
    );
    assert!(!summary.complete());
    assert!(summary.unrecorded.is_empty());
    let log = std::fs::read_to_string(history.repo.join(".git/ultragit/failed.log")).unwrap();
    assert_eq!(log.lines().count(), 1, "{log}");
    assert!(log.contains(&history.b), "{log}");
    assert!(log.contains("the model refuses src/b.rs"), "{log}");
    let again = select(&history, &SelectOptions::default());
    assert_eq!(
        ids(&again),
        vec![history.whitespace.clone(), history.b.clone()],
        "a rerun retries the failed commit"
    );
}

#[test]
fn a_stop_drops_what_is_in_flight_and_schedules_nothing_more() {
    let history = history();
    let server = FakeLlm::start(Flavor::OpenAiChat, Vec::new());
    server.respond_with(annotator(Duration::ZERO, None));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let mut stop = Some(stop);
    let summary = run_all(
        &history,
        &server,
        1,
        async move {
            let _ = stopped.await;
        },
        |event| {
            if let Event::Finished { .. } = event
                && let Some(stop) = stop.take()
            {
                let _ = stop.send(());
            }
        },
    );
    assert!(summary.interrupted);
    assert_eq!(summary.annotated + summary.skipped, 1, "{summary:?}");
    assert_eq!(
        summary.annotated
            + summary.skipped
            + summary.failed
            + summary.dropped
            + summary.not_started,
        5,
        "{summary:?}"
    );
    assert!(summary.not_started >= 3, "{summary:?}");
    // Whatever was stored is whole.
    let repo = Repo::discover(history.repo.path()).unwrap();
    let notes = repo.notes(ultragit_annotate::NOTES_REF).unwrap();
    for entry in notes.list().unwrap() {
        let text = notes.read(entry.target).unwrap().unwrap();
        Annotation::from_json(&text).unwrap();
    }
}

/// What a patient run ([`run_through`]) did: its summary, how often it saw
/// the pool paused, and the gate.
struct Patient {
    summary: backfill::Summary,
    paused_events: usize,
    gate: PauseGate,
}

/// `backfill::run` over every commit `select` picks in `history`, against a
/// `server` that plays the annotator behind `storm`, with backfill's own HTTP
/// options ([`backfill::http_options`]) for `config`.
fn run_through(
    history: &History,
    server: &FakeLlm,
    storm: &Storm,
    concurrency: usize,
    config: BackfillConfig,
) -> Patient {
    server.respond_with(storm.then(annotator(Duration::ZERO, None)));
    let gate = PauseGate::new();
    let mut provider = ProviderConfig::new(ProviderKind::OpenAiChat, "test-model");
    provider.base_url = Some(server.base_url());
    provider.http = backfill::http_options(&config, HttpOptions::default(), &gate);
    let provider = llm::build_provider(provider).unwrap();
    let selection = select(history, &SelectOptions::default());
    let options = RunOptions {
        concurrency,
        redactor: llm::Redactor::default(),
        pause: Some(gate.clone()),
    };
    let mut paused_events = 0;
    let summary = runtime().block_on(backfill::run(
        history.repo.path(),
        &commits(&selection),
        provider,
        &AnnotateConfig::default(),
        &options,
        std::future::pending(),
        |event| {
            if let Event::Paused { resuming_in } = event {
                assert!(!resuming_in.is_zero());
                paused_events += 1;
            }
        },
    ));
    Patient {
        summary,
        paused_events,
        gate,
    }
}

/// Every commit `history` picks was annotated (the whitespace-only one
/// skipped), nothing failed, `failed.log` was never written.
fn assert_all_annotated(history: &History, summary: &backfill::Summary) {
    assert_eq!(
        (summary.annotated, summary.skipped, summary.failed),
        (4, 1, 0),
        "{summary:?}"
    );
    assert!(summary.complete());
    assert!(!history.repo.join(".git/ultragit/failed.log").exists());
    let again = select(history, &SelectOptions::default());
    assert_eq!(ids(&again), vec![history.whitespace.clone()]);
}

/// A two-minute storm scaled down tenfold: `Retry-After` of 0.1 s instead of
/// 1 s, 12 s of 429s instead of 120, a 30-second budget instead of 5 min.
/// Some 120 pauses, each of them far more than the five attempts the
/// provider used to give up after; every commit is annotated, the progress
/// events report the pause, and the pool holds: about one request per pause
/// reaches the server, not one per annotation in flight.
#[test]
fn a_long_storm_scaled_down_is_ridden_out_within_the_budget() {
    let history = history();
    let server = FakeLlm::start(Flavor::OpenAiChat, Vec::new());
    let storm = Storm::new(Duration::from_secs(12), || {
        Reply::error(429, "storm").header("retry-after-ms", "100")
    });
    let run = run_through(
        &history,
        &server,
        &storm,
        4,
        BackfillConfig {
            retry_budget: Duration::from_secs(30),
            ..BackfillConfig::default()
        },
    );
    assert_all_annotated(&history, &run.summary);
    assert!(storm.is_over());
    assert!(run.paused_events > 0, "no Paused event during the storm");
    assert!(run.gate.pauses() > 0);
    // 12 s of 0.1-second pauses: at most 120 probes and the first volley.
    // Without the probe, each of the four would retry after every pause.
    let during = storm.during();
    assert!((4..=4 + 120).contains(&during), "{during} requests");
}

/// 500s without `Retry-After` for eight seconds: each annotation backs off
/// on its own (from 0.5 s, doubling), past the five attempts of old (at most
/// 7.5 s of waits), and gets through.
#[test]
fn server_errors_for_a_while_then_success() {
    let history = history();
    let server = FakeLlm::start(Flavor::OpenAiChat, Vec::new());
    let storm = Storm::server_errors(Duration::from_secs(8));
    let run = run_through(&history, &server, &storm, 4, BackfillConfig::default());
    assert_all_annotated(&history, &run.summary);
    assert!(storm.during() >= 4);
    assert_eq!(run.gate.pauses(), 0, "a 500 asks for no pause");
}

/// Bodies cut short of their `Content-Length` for eight seconds (longer than
/// the five attempts of old lasted) are transport failures, retried until
/// the answers come whole.
#[test]
fn truncated_bodies_for_a_while_then_success() {
    let history = history();
    let server = FakeLlm::start(Flavor::OpenAiChat, Vec::new());
    let storm = Storm::truncated(Duration::from_secs(8));
    let run = run_through(&history, &server, &storm, 2, BackfillConfig::default());
    assert_all_annotated(&history, &run.summary);
    assert!(storm.during() >= 2);
}

/// A storm that outlasts the budget fails each commit with a reason naming
/// the budget, recorded in `failed.log`; a 401 fails at once.
#[test]
fn a_storm_past_the_budget_fails_naming_it_and_a_401_fails_at_once() {
    let history = history();
    let server = FakeLlm::start(Flavor::OpenAiChat, Vec::new());
    let storm = Storm::rate_limited(Duration::from_secs(3600), "1");
    let run = run_through(
        &history,
        &server,
        &storm,
        4,
        BackfillConfig {
            retry_budget: Duration::from_secs(2),
            ..BackfillConfig::default()
        },
    );
    assert_eq!(
        (run.summary.failed, run.summary.skipped),
        (4, 1),
        "{:?}",
        run.summary
    );
    let log = std::fs::read_to_string(history.repo.join(".git/ultragit/failed.log")).unwrap();
    assert_eq!(log.lines().count(), 4, "{log}");
    for line in log.lines() {
        assert!(
            line.contains("still failing when the retry budget of 2 s ran out"),
            "{line}"
        );
        assert!(line.contains("HTTP 429"), "{line}");
    }

    let history = self::history();
    let server = FakeLlm::start(Flavor::OpenAiChat, Vec::new());
    let refused = Storm::new(Duration::from_secs(3600), || {
        Reply::error(401, "invalid api key")
    });
    let run = run_through(&history, &server, &refused, 4, BackfillConfig::default());
    assert_eq!(run.summary.failed, 4, "{:?}", run.summary);
    assert_eq!(
        server.requests().len(),
        4,
        "one request per commit, no retry"
    );
    let log = std::fs::read_to_string(history.repo.join(".git/ultragit/failed.log")).unwrap();
    assert!(log.contains("HTTP 401: invalid api key"), "{log}");
}
