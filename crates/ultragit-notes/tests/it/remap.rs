//! Carrying notes across cherry-picks and server-side rebase and squash merges
//! (`ultragit_notes::remap`), on real repositories.

use crate::support::{id, open, read_note as note};
use testkit::TestRepo;
use ultragit_notes::remap::{
    CherryPick, How, RemapOptions, RemapReport, cherry_pick, looks_cherry_picked, remap,
};
use ultragit_notes::{NOTES_REF, store};
use ultragit_schema::{
    Annotation, AstAnchor, ContextLevel, LineRange, ProvenanceOperation, RegionAnnotation,
};

use testkit::twenty_lines as lines;

/// Stores an `enhanced` note on `commit` with one region per `(file, name,
/// lines)`.
fn annotate(repo: &TestRepo, commit: &str, regions: &[(&str, &str, (u32, u32))]) -> Annotation {
    let mut note = Annotation::new(
        commit,
        "2024-01-01T00:00:00Z",
        format!("summary of {}", &commit[..7]),
        ContextLevel::Enhanced,
    );
    note.task = Some("the task".to_owned());
    for (file, name, (start, end)) in regions {
        note.regions.push(RegionAnnotation::new(
            *file,
            AstAnchor::new("function", *name),
            LineRange::new(*start, *end),
            format!("why {name} exists"),
        ));
    }
    store(&open(repo), &note).unwrap();
    note
}

/// main: base with f.txt; on the new branch `topic` (left checked out): line 5
/// changed, annotated. Returns that commit.
fn five_on_topic(repo: &TestRepo) -> String {
    repo.commit_file("f.txt", lines(), "base");
    repo.checkout_new("topic");
    let five = repo.commit_file("f.txt", lines().replace("line 5\n", "line five\n"), "five");
    annotate(repo, &five, &[("f.txt", "five", (4, 6))]);
    five
}

/// main: base with f.txt; branch `topic`: line 15 changed, annotated.
fn topic_with_note() -> (TestRepo, String) {
    let (repo, topic) = TestRepo::with_topic_change("change line 15");
    annotate(&repo, &topic, &[("f.txt", "fifteen", (14, 16))]);
    repo.checkout("main");
    // main moves on: two lines on top, so the pick lands two lines lower.
    repo.commit_file("f.txt", format!("top 1\ntop 2\n{}", lines()), "prepend");
    (repo, topic)
}

#[test]
fn a_cherry_pick_with_x_copies_the_note_with_provenance_and_moved_lines() {
    let (repo, topic) = topic_with_note();
    repo.git(&["cherry-pick", "-x", &topic]);
    let picked = repo.rev_parse("HEAD");
    let r = open(&repo);
    assert!(looks_cherry_picked(&r, id(&picked)).unwrap());
    let outcome = cherry_pick(&r, id(&picked), false).unwrap();
    let CherryPick::Copied(copied) = outcome else {
        panic!("expected a copy, got {outcome:?}");
    };
    assert_eq!(copied.how, How::Trailer);
    assert_eq!(copied.sources, vec![id(&topic)]);
    let copy = note(&repo, &picked).unwrap();
    assert_eq!(copy.commit, picked);
    assert_eq!(copy.provenance.operation, ProvenanceOperation::Amend);
    assert_eq!(copy.provenance.derived_from, vec![topic.clone()]);
    assert!(copy.provenance.original_annotations_preserved);
    let notes = copy.provenance.synthesis_notes.as_deref().unwrap();
    assert!(
        notes.contains("cherry-picked") && notes.contains(&topic),
        "{notes}"
    );
    assert!(notes.contains("cherry-pick trailer"), "{notes}");
    assert_eq!(copy.regions[0].lines, LineRange::new(16, 18));
    assert_eq!(copy.context_level, ContextLevel::Enhanced);
    assert_eq!(copy.task.as_deref(), Some("the task"));
    // The original is untouched, and a second run does nothing.
    assert_eq!(note(&repo, &topic).unwrap().commit, topic);
    assert_eq!(
        cherry_pick(&r, id(&picked), false).unwrap(),
        CherryPick::AlreadyAnnotated
    );
}

#[test]
fn a_cherry_pick_without_x_is_found_by_patch_id() {
    let (repo, topic) = topic_with_note();
    repo.git(&["cherry-pick", &topic]);
    let picked = repo.rev_parse("HEAD");
    let r = open(&repo);
    assert!(looks_cherry_picked(&r, id(&picked)).unwrap());
    let CherryPick::Copied(copied) = cherry_pick(&r, id(&picked), false).unwrap() else {
        panic!("expected a copy");
    };
    assert_eq!(copied.how, How::PatchId);
    let copy = note(&repo, &picked).unwrap();
    assert_eq!(copy.provenance.derived_from, vec![topic]);
    assert!(
        copy.provenance
            .synthesis_notes
            .unwrap()
            .contains("patch-id")
    );
}

#[test]
fn a_commit_whose_code_differs_is_not_matched_and_dry_run_writes_nothing() {
    let (repo, topic) = topic_with_note();
    let r = open(&repo);
    // The same line, changed differently, by hand.
    let own = repo.commit_file(
        "f.txt",
        format!("top 1\ntop 2\n{}", lines()).replace("line 15\n", "line 15 (other)\n"),
        "my own change",
    );
    assert!(!looks_cherry_picked(&r, id(&own)).unwrap());
    assert_eq!(
        cherry_pick(&r, id(&own), false).unwrap(),
        CherryPick::NoMatch
    );
    assert!(note(&repo, &own).is_none());

    repo.git(&["reset", "--hard", "--quiet", "HEAD~1"]);
    repo.git(&["cherry-pick", &topic]);
    let picked = repo.rev_parse("HEAD");
    let tip = r.notes(NOTES_REF).unwrap().tip().unwrap();
    assert!(matches!(
        cherry_pick(&r, id(&picked), true).unwrap(),
        CherryPick::Copied(_)
    ));
    assert_eq!(r.notes(NOTES_REF).unwrap().tip().unwrap(), tip);
    assert!(note(&repo, &picked).is_none());
}

fn options(dry_run: bool) -> RemapOptions {
    RemapOptions {
        dry_run,
        onto_name: "origin/HEAD".to_owned(),
    }
}

fn run_remap(repo: &TestRepo, dry_run: bool) -> RemapReport {
    let r = open(repo);
    let onto = r.resolve_commit("origin/HEAD").unwrap();
    remap(&r, onto, &options(dry_run)).unwrap()
}

/// main: base; topic: two annotated commits and one trivial one between them.
fn branch(repo: &TestRepo) -> Vec<String> {
    repo.commit_file("f.txt", lines(), "base");
    repo.commit_file("g.txt", lines(), "base g");
    repo.checkout_new("topic");
    let one = repo.commit_file("f.txt", lines().replace("line 5\n", "line five\n"), "five");
    annotate(repo, &one, &[("f.txt", "five", (4, 6))]);
    let two = repo.commit_file("h.txt", "new file\n", "add h, no note");
    let three = repo.commit_file("g.txt", lines().replace("line 9\n", "line nine\n"), "nine");
    annotate(repo, &three, &[("g.txt", "nine", (8, 10))]);
    repo.checkout("main");
    // main moves on elsewhere.
    repo.commit_file("other.txt", "x\n", "other");
    vec![one, two, three]
}

#[test]
fn a_server_side_rebase_merge_is_remapped_by_patch_id() {
    let repo = TestRepo::new();
    let topic = branch(&repo);
    // The forge rebases the branch onto main and fast-forwards main.
    let rebased = repo.forge_rebase_merge("topic");

    let before = open(&repo).notes(NOTES_REF).unwrap().tip().unwrap();
    let dry = run_remap(&repo, true);
    assert_eq!(dry.copied.len(), 2, "{dry:?}");
    assert_eq!(open(&repo).notes(NOTES_REF).unwrap().tip().unwrap(), before);
    assert!(
        !repo.join(".git/ultragit/patch-ids").exists(),
        "--dry-run wrote the cache"
    );

    let report = run_remap(&repo, false);
    assert_eq!(report.sources, 2);
    assert_eq!(report.copied.len(), 2, "{report:?}");
    assert!(report.synthesized.is_empty() && report.ambiguous.is_empty());
    assert!(report.unmatched.is_empty());
    let first = note(&repo, &rebased[0]).unwrap();
    assert_eq!(first.provenance.derived_from, vec![topic[0].clone()]);
    assert_eq!(first.provenance.operation, ProvenanceOperation::Amend);
    assert!(
        first
            .provenance
            .synthesis_notes
            .unwrap()
            .contains("origin/HEAD")
    );
    assert!(
        note(&repo, &rebased[1]).is_none(),
        "the unannotated commit stays so"
    );
    let third = note(&repo, &rebased[2]).unwrap();
    assert_eq!(third.provenance.derived_from, vec![topic[2].clone()]);

    // Rerunning changes nothing.
    let tip = open(&repo).notes(NOTES_REF).unwrap().tip().unwrap();
    let again = run_remap(&repo, false);
    assert!(again.copied.is_empty() && again.synthesized.is_empty());
    assert_eq!(open(&repo).notes(NOTES_REF).unwrap().tip().unwrap(), tip);
    // The cache holds the sources' patch-ids.
    let cache = std::fs::read_to_string(repo.join(".git/ultragit/patch-ids")).unwrap();
    assert!(
        cache.contains(&topic[0]) && cache.contains(&topic[2]),
        "{cache}"
    );
}

#[test]
fn a_server_side_squash_merge_gets_a_synthesized_note_listing_all_sources() {
    let repo = TestRepo::new();
    let topic = branch(&repo);
    let squash = repo.forge_squash_merge("topic", "topic, squashed");

    let report = run_remap(&repo, false);
    assert_eq!(report.synthesized.len(), 1, "{report:?}");
    assert!(report.copied.is_empty() && report.unmatched.is_empty());
    assert_eq!(report.synthesized[0].target, id(&squash));
    let synthesized = note(&repo, &squash).unwrap();
    assert_eq!(synthesized.commit, squash);
    assert_eq!(
        synthesized.provenance.operation,
        ProvenanceOperation::Squash
    );
    assert_eq!(synthesized.provenance.derived_from, topic);
    let names: Vec<&str> = synthesized
        .regions
        .iter()
        .map(|r| r.ast_anchor.name.as_str())
        .collect();
    assert_eq!(names, vec!["five", "nine"]);
    assert!(
        synthesized
            .provenance
            .synthesis_notes
            .unwrap()
            .contains("combined diff")
    );
}

#[test]
fn two_candidates_are_ambiguous_and_nothing_is_written() {
    let repo = TestRepo::new();
    let topic = five_on_topic(&repo);
    repo.checkout("main");
    repo.git(&["cherry-pick", &topic]);
    repo.git(&["revert", "--no-edit", "HEAD"]);
    repo.git(&["cherry-pick", &topic]);
    repo.set_origin_head("main", "HEAD");
    repo.git(&["branch", "-D", "topic"]);
    let before = open(&repo).notes(NOTES_REF).unwrap().tip().unwrap();
    let report = run_remap(&repo, false);
    assert_eq!(report.ambiguous.len(), 1, "{report:?}");
    assert_eq!(report.ambiguous[0].candidates.len(), 2);
    assert_eq!(report.ambiguous[0].sources, vec![id(&topic)]);
    assert!(report.copied.is_empty());
    assert_eq!(open(&repo).notes(NOTES_REF).unwrap().tip().unwrap(), before);
}

#[test]
fn changed_code_on_the_ref_is_not_matched_and_malformed_notes_are_skipped() {
    let repo = TestRepo::new();
    let topic = five_on_topic(&repo);
    let broken = repo.commit_file("z.txt", "z\n", "z");
    open(&repo)
        .notes(NOTES_REF)
        .unwrap()
        .write(id(&broken), "{ not json")
        .unwrap();
    repo.checkout("main");
    // Upstream took the idea but wrote other code.
    repo.commit_file(
        "f.txt",
        lines().replace("line 5\n", "line 5 (reworked)\n"),
        "five, reworked",
    );
    repo.commit_file("z.txt", "z\n", "z");
    repo.set_origin_head("main", "HEAD");
    let report = run_remap(&repo, false);
    assert_eq!(report.unmatched, vec![id(&topic)], "{report:?}");
    assert_eq!(report.unreadable, vec![id(&broken)]);
    assert!(report.copied.is_empty() && report.synthesized.is_empty());
}

#[test]
fn an_original_and_its_amended_copy_both_left_behind_are_joined_into_one_note() {
    let repo = TestRepo::new();
    let original = five_on_topic(&repo);
    // A message-only amend whose note says a little more.
    let amended = repo.amend(Some("five, reworded"));
    annotate(
        &repo,
        &amended,
        &[("f.txt", "five", (4, 6)), ("f.txt", "helper", (1, 2))],
    );
    repo.checkout("main");
    repo.commit_file("other.txt", "x\n", "other");
    repo.git(&["cherry-pick", &amended]);
    let merged = repo.rev_parse("HEAD");
    repo.set_origin_head("main", "HEAD");
    repo.git(&["branch", "-D", "topic"]);

    let report = run_remap(&repo, false);
    assert_eq!(report.copied.len(), 1, "{report:?}");
    let mut sources = report.copied[0].sources.clone();
    sources.sort();
    let mut expected = vec![id(&original), id(&amended)];
    expected.sort();
    assert_eq!(sources, expected);
    let joined = note(&repo, &merged).unwrap();
    let names: Vec<&str> = joined
        .regions
        .iter()
        .map(|r| r.ast_anchor.name.as_str())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names.contains(&"five") && names.contains(&"helper"));
    assert_eq!(joined.provenance.derived_from.len(), 2);
}
