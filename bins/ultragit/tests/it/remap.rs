//! `ultragit remap` and the cherry-pick copy on the annotate path, as a process on
//! real repositories: notes follow cherry-picks and server-side rebase and squash
//! merges, without a model call; nothing is written without a unique match.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use testkit::{FakeLlm, Flavor, TestRepo, assert_contains};

use crate::annotate::{KEY, KEY_VAR, configure, note_of};
use crate::support::{
    annotate, assert_notes_readable, has_note, note, region, stdout, texts, ultragit, with,
};

use testkit::twenty_lines as lines;

/// An enhanced note on `commit` with one region.
fn annotate_with(repo: &TestRepo, commit: &str, file: &str, name: &str, at: (u32, u32)) {
    let region = with(
        region(file, name, at, &format!("why {name} exists")),
        json!({"constraints": [{"text": "keep it", "source": "author"}]}),
    );
    let mut doc = note(
        commit,
        "2024-01-01T00:00:00Z",
        "enhanced",
        "initial",
        "the summary",
        vec![region],
        vec![],
    );
    doc["task"] = json!("the task");
    annotate(repo, &doc);
}

fn notes_tip(repo: &TestRepo) -> String {
    repo.rev_parse("refs/notes/ultragit")
}

/// main: f.txt; branch `topic`: line 15 changed, annotated; back on main.
fn annotated_topic() -> (TestRepo, String) {
    let (repo, topic) = TestRepo::with_topic_change("fifteen");
    annotate_with(&repo, &topic, "f.txt", "fifteen", (14, 16));
    repo.checkout("main");
    (repo, topic)
}

/// main: f.txt and g.txt; topic: two annotated commits with an unannotated one
/// between them; main moves on elsewhere.
fn branch(repo: &TestRepo) -> Vec<String> {
    repo.commit_file("f.txt", lines(), "base");
    repo.commit_file("g.txt", lines(), "base g");
    repo.checkout_new("topic");
    let one = repo.commit_file("f.txt", lines().replace("line 5\n", "line five\n"), "five");
    annotate_with(repo, &one, "f.txt", "five", (4, 6));
    let two = repo.commit_file("h.txt", "new\n", "add h");
    let three = repo.commit_file("g.txt", lines().replace("line 9\n", "line nine\n"), "nine");
    annotate_with(repo, &three, "g.txt", "nine", (8, 10));
    repo.checkout("main");
    repo.commit_file("other.txt", "x\n", "other");
    vec![one, two, three]
}

#[test]
fn the_post_commit_hook_copies_a_cherry_picks_note_without_the_model() {
    let (repo, topic) = annotated_topic();
    repo.commit_file("f.txt", format!("top\n{}", lines()), "prepend");
    // A model that must not be called: its script is empty.
    let server = FakeLlm::start(Flavor::OpenAiChat, vec![]);
    configure(&repo, &server);
    stdout(repo.path(), &["init"]);

    repo.command()
        .args(["cherry-pick", "-x", &topic])
        .env(KEY_VAR, KEY)
        .run()
        .expect("git cherry-pick runs the hook and succeeds");
    let picked = repo.rev_parse("HEAD");
    let state = repo.path().join(".git/ultragit");
    let deadline = Instant::now() + Duration::from_secs(60);
    let log = loop {
        let log = std::fs::read_to_string(state.join("annotate.log")).unwrap_or_default();
        if log.contains("copied") || log.contains("error") {
            break log;
        }
        assert!(
            Instant::now() < deadline,
            "no copy after 60 s; annotate.log:\n{log}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        log.contains(&format!(
            "copied {}: cherry-picked from {}",
            &picked[..7],
            &topic[..7]
        )),
        "{log}"
    );
    assert!(server.requests().is_empty(), "the model was called");
    let copy = note_of(&repo, &picked);
    assert_eq!(copy["commit"], picked.as_str());
    assert_eq!(copy["provenance"]["operation"], "amend");
    assert_eq!(copy["provenance"]["derived_from"], json!([topic]));
    assert_eq!(copy["context_level"], "enhanced");
    assert_eq!(copy["regions"][0]["lines"], json!({"start": 15, "end": 17}));
    assert!(!state.join("failed.log").exists());
    assert_notes_readable(&repo, "f.txt");
}

#[test]
fn annotate_of_a_cherry_pick_without_x_copies_and_of_changed_code_calls_the_model() {
    let (repo, topic) = annotated_topic();
    repo.git(&["cherry-pick", &topic]);
    let picked = repo.rev_parse("HEAD");
    // No key and no server needed: the copy needs no model.
    let run = ultragit(repo.path(), &["annotate"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stdout,
        format!(
            "copied {}: cherry-picked from {} (same patch-id), no model call\n",
            &picked[..7],
            &topic[..7]
        )
    );
    assert_eq!(
        note_of(&repo, &picked)["provenance"]["derived_from"],
        json!([topic])
    );

    // Cherry-picked, then changed by hand before committing: no match, so the
    // model is asked (here: no key, a clear error).
    repo.git(&["reset", "--hard", "--quiet", "HEAD~1"]);
    repo.git(&["cherry-pick", "--no-commit", &topic]);
    repo.write("f.txt", lines().replace("line 15\n", "line 15, my way\n"));
    repo.stage(&["f.txt"]);
    let own = repo.commit(&format!("mine\n\n(cherry picked from commit {topic})"));
    let run = ultragit(repo.path(), &["annotate"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("API key") || run.stderr.contains("OPENAI_API_KEY"),
        "{run:?}"
    );
    assert!(!has_note(&repo, &own));
}

#[test]
fn remap_copies_notes_after_a_server_side_rebase_merge() {
    let repo = TestRepo::new();
    let topic = branch(&repo);
    let rebased = repo.forge_rebase_merge("topic");

    let before = notes_tip(&repo);
    let dry = stdout(repo.path(), &["remap", "--dry-run"]);
    assert!(
        dry.contains(&format!(
            "would copy the note of {} to {} (same patch-id)",
            &topic[0][..7],
            &rebased[0][..7]
        )),
        "{dry}"
    );
    assert!(dry.ends_with("(dry run: nothing written)\n"), "{dry}");
    assert_eq!(notes_tip(&repo), before, "--dry-run wrote");

    let out = stdout(repo.path(), &["remap", "--format", "json"]);
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["onto"], "origin/HEAD");
    assert_eq!(report["dry_run"], false);
    assert_eq!(report["sources"], 2);
    assert_eq!(report["copied"].as_array().unwrap().len(), 2, "{report}");
    assert_eq!(report["copied"][0]["matched_by"], "patch-id");
    assert_eq!(report["unmatched"], json!([]));
    for (old, new) in [(&topic[0], &rebased[0]), (&topic[2], &rebased[2])] {
        let copy = note_of(&repo, new);
        assert_eq!(copy["provenance"]["operation"], "amend");
        assert_eq!(copy["provenance"]["derived_from"], json!([old]));
        assert_eq!(copy["provenance"]["original_annotations_preserved"], true);
    }
    assert_notes_readable(&repo, "f.txt");
    // Again: nothing left to do.
    let again = stdout(repo.path(), &["remap"]);
    assert!(again.contains("0 copied, 0 synthesized"), "{again}");
}

#[test]
fn remap_synthesizes_a_squash_note_after_a_server_side_squash_merge() {
    let repo = TestRepo::new();
    let topic = branch(&repo);
    let squash = repo.forge_squash_merge("topic", "topic (#1)");

    let out = stdout(repo.path(), &["remap"]);
    assert!(
        out.contains(&format!(
            "synthesized a squash note on {} from 3 commits",
            &squash[..7]
        )),
        "{out}"
    );
    let note = note_of(&repo, &squash);
    assert_eq!(note["provenance"]["operation"], "squash");
    assert_eq!(note["provenance"]["derived_from"], json!(topic));
    let names = texts(&note["regions"], "/ast_anchor/name");
    assert_eq!(names, ["five", "nine"]);
    assert_notes_readable(&repo, "g.txt");
}

#[test]
fn remap_without_the_ref_names_onto_and_a_changed_commit_is_not_matched() {
    let repo = TestRepo::new();
    let _ = branch(&repo);
    let before = notes_tip(&repo);
    let run = ultragit(repo.path(), &["remap"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_contains(&run.stderr, "'origin/HEAD' does not exist");
    assert!(run.stderr.contains("--onto"), "{run:?}");

    // Upstream rewrote the change: no match, nothing written.
    repo.commit_file(
        "f.txt",
        lines().replace("line 5\n", "line 5 (upstream)\n"),
        "five, upstream",
    );
    let out = stdout(
        repo.path(),
        &["remap", "--onto", "main", "--format", "json"],
    );
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["copied"], json!([]));
    assert_eq!(report["synthesized"], json!([]));
    assert_eq!(report["unmatched"].as_array().unwrap().len(), 2, "{report}");
    assert_eq!(notes_tip(&repo), before);
}
