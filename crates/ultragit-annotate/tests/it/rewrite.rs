//! Notes carried through rewrites on real repositories: the squash synthesis
//! and the per-commit rules of `rewrite::apply_one`.

use crate::support::{id, open, read_note as read, write_note as write};
use testkit::{TestRepo, assert_contains};
use ultragit_annotate::NOTES_REF;
use ultragit_annotate::rewrite::{Action, Rewrite, RewriteKind, apply_one, synthesize};
use ultragit_schema::{
    Annotation, AstAnchor, Constraint, ConstraintSource, ContextLevel, CrossCuttingConcern,
    LineRange, ProvenanceOperation, RegionAnnotation,
};

const LIB_A: &str = "\
pub fn alpha() -> u32 {
    1
}

pub fn gamma() -> u32 {
    3
}
";

/// B adds `beta` above `alpha`, so `alpha` moves down by four lines.
const LIB_B: &str = "\
pub fn beta() -> u32 {
    2
}

pub fn alpha() -> u32 {
    1
}

pub fn gamma() -> u32 {
    3
}
";

/// The squashed result: C (unannotated) removed `gamma`.
const LIB_X: &str = "\
pub fn beta() -> u32 {
    2
}

pub fn alpha() -> u32 {
    1
}
";

fn region(file: &str, kind: &str, name: &str, lines: (u32, u32), intent: &str) -> RegionAnnotation {
    RegionAnnotation::new(
        file,
        AstAnchor::new(kind, name),
        LineRange::new(lines.0, lines.1),
        intent,
    )
}

fn note(commit: &str, regions: Vec<RegionAnnotation>) -> Annotation {
    let mut note = Annotation::new(
        commit,
        "2024-01-01T00:00:00Z",
        format!("Summary of {}.", &commit[..7]),
        ContextLevel::Inferred,
    );
    note.regions = regions;
    note
}

/// `old` rewritten as `new`.
fn one_to_one(old: &str, new: &str) -> Rewrite {
    Rewrite {
        new: id(new),
        olds: vec![id(old)],
    }
}

#[test]
fn squash_synthesis_keeps_every_surviving_region_at_its_new_lines() {
    let repo = TestRepo::new();
    repo.commit_file("README", "base\n", "Base");
    let base = repo.rev_parse("HEAD");
    repo.write("docs.txt", "one\ntwo\nthree\n")
        .stage(&["docs.txt"]);
    let a = repo.commit_file("src/lib.rs", LIB_A, "Add alpha and gamma");
    let b = repo.commit_file("src/lib.rs", LIB_B, "Add beta");
    repo.write("docs.txt", "zero\none\ntwo\nthree\n")
        .stage(&["docs.txt"]);
    let c = repo.commit_file("src/lib.rs", LIB_X, "Drop gamma, document zero");
    repo.git(&["reset", "--quiet", "--soft", &base]);
    let x = repo.commit("Squashed");

    let mut alpha = region("src/lib.rs", "function", "alpha", (1, 3), "Returns one.");
    alpha
        .constraints
        .push(Constraint::new("Always 1.", ConstraintSource::Author));
    let gamma = region("src/lib.rs", "function", "gamma", (5, 7), "Returns three.");
    let docs = region("docs.txt", "config", "two", (2, 2), "The second line.");
    let mut note_a = note(&a, vec![alpha.clone(), gamma, docs]);
    note_a.context_level = ContextLevel::Enhanced;
    note_a.task = Some("Numbers".into());
    note_a.cross_cutting.push(CrossCuttingConcern {
        description: "alpha and beta agree".into(),
        regions: vec!["src/lib.rs:alpha".into(), "src/lib.rs:beta".into()],
        nature: "shared constant".into(),
    });
    let beta = region("src/lib.rs", "function", "beta", (1, 3), "Returns two.");
    // B also restates alpha (at B's lines): the same region appears once.
    let alpha_at_b = region("src/lib.rs", "function", "alpha", (5, 7), "Returns one.");
    let note_b = note(&b, vec![beta, alpha_at_b]);
    write(&repo, &note_a);
    write(&repo, &note_b);

    let repository = open(&repo);
    let sources = vec![
        (id(&a), Some(note_a.clone())),
        (id(&b), Some(note_b)),
        (id(&c), None),
    ];
    let synthesis = synthesize(&repository, id(&x), &sources).unwrap();
    let annotation = synthesis.annotation.expect("two sources had notes");
    assert_eq!(annotation.commit, x);
    let found: Vec<(&str, &str, u32, u32)> = annotation
        .regions
        .iter()
        .map(|r| {
            (
                r.file.as_str(),
                r.ast_anchor.name.as_str(),
                r.lines.start,
                r.lines.end,
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            ("src/lib.rs", "alpha", 5, 7),
            ("docs.txt", "two", 3, 3),
            ("src/lib.rs", "beta", 1, 3),
        ]
    );
    assert_eq!(annotation.regions[0].constraints.len(), 1);
    assert_eq!(annotation.cross_cutting.len(), 1);
    assert_eq!(annotation.context_level, ContextLevel::Enhanced);
    assert_eq!(annotation.task.as_deref(), Some("Numbers"));
    assert!(annotation.summary.contains(&a[..7]) && annotation.summary.contains(&b[..7]));
    let provenance = &annotation.provenance;
    assert_eq!(provenance.operation, ProvenanceOperation::Squash);
    assert_eq!(provenance.derived_from, [a.clone(), b.clone(), c.clone()]);
    assert!(
        !provenance.original_annotations_preserved,
        "gamma was dropped"
    );
    let notes = provenance.synthesis_notes.as_deref().unwrap();
    assert_contains(notes, &format!("Without an annotation: {}.", &c[..7]));
    assert!(notes.contains("gamma"), "{notes}");
    assert_eq!(synthesis.unannotated, [id(&c)]);
    assert_eq!(synthesis.dropped.len(), 1);
    assert!(synthesis.warnings.is_empty(), "{:?}", synthesis.warnings);
    Annotation::from_json(&annotation.to_json()).unwrap();

    // Nothing annotated: nothing to synthesize.
    let none = synthesize(&repository, id(&x), &[(id(&c), None)]).unwrap();
    assert_eq!(none.annotation, None);
}

#[test]
fn a_message_only_amend_copies_the_note_with_amend_provenance() {
    let repo = TestRepo::new();
    let old = repo.commit_file("src/lib.rs", LIB_A, "Add alpha");
    let mut original = note(
        &old,
        vec![region("src/lib.rs", "function", "alpha", (1, 3), "One.")],
    );
    original.context_level = ContextLevel::Enhanced;
    original.task = Some("Numbers".into());
    write(&repo, &original);
    let new = repo.amend(Some("Add alpha, reworded"));

    let repository = open(&repo);
    let rewrite = one_to_one(&old, &new);
    let applied = apply_one(&repository, RewriteKind::Amend, &rewrite).unwrap();
    assert_eq!(applied.action, Action::Copied);
    assert_eq!(applied.delta_from(), None);
    let copied = read(&repo, &new).unwrap();
    assert_eq!(copied.commit, new);
    assert_eq!(copied.regions, original.regions);
    assert_eq!(copied.task, original.task);
    assert_eq!(copied.context_level, ContextLevel::Enhanced);
    assert_eq!(copied.provenance.operation, ProvenanceOperation::Amend);
    assert_eq!(copied.provenance.derived_from, vec![old.as_str()]);
    assert!(copied.provenance.original_annotations_preserved);
    assert_eq!(read(&repo, &old), Some(original), "the old note stays");

    // Running the hook again changes nothing, however much later (the copy
    // is dated back, as if the rerun came a year on).
    let mut dated = copied;
    dated.timestamp = "2025-01-01T00:00:00Z".into();
    write(&repo, &dated);
    apply_one(&repository, RewriteKind::Amend, &rewrite).unwrap();
    assert_eq!(read(&repo, &new), Some(dated));
}

#[test]
fn an_amend_that_changes_code_carries_the_regions_and_asks_for_the_delta() {
    let repo = TestRepo::new();
    let old = repo.commit_file("src/lib.rs", LIB_A, "Add alpha");
    write(
        &repo,
        &note(
            &old,
            vec![
                region("src/lib.rs", "function", "alpha", (1, 3), "One."),
                region("src/lib.rs", "function", "gamma", (5, 7), "Three."),
            ],
        ),
    );
    repo.write("src/lib.rs", LIB_B);
    repo.stage(&["src/lib.rs"]);
    let new = repo.amend(None);

    let repository = open(&repo);
    let rewrite = one_to_one(&old, &new);
    let applied = apply_one(&repository, RewriteKind::Amend, &rewrite).unwrap();
    assert_eq!(applied.action, Action::Amended);
    assert_eq!(applied.delta_from(), Some(id(&old)));
    let carried = read(&repo, &new).unwrap();
    let lines: Vec<(u32, u32)> = carried
        .regions
        .iter()
        .map(|r| (r.lines.start, r.lines.end))
        .collect();
    assert_eq!(lines, [(5, 7), (9, 11)]);
    assert_eq!(carried.provenance.operation, ProvenanceOperation::Amend);
    assert_eq!(carried.provenance.derived_from, vec![old.as_str()]);

    // The same rewrite seen as a rebase pick with changed code: no delta.
    let applied = apply_one(&repository, RewriteKind::Rebase, &rewrite).unwrap();
    assert_eq!(applied.action, Action::Carried);
    assert_eq!(applied.delta_from(), None);
}

#[test]
fn an_unreadable_or_missing_note_is_left_alone() {
    let repo = TestRepo::new();
    let old = repo.commit_file("a.txt", "a\n", "A");
    let new = repo.amend(Some("A again"));
    let repository = open(&repo);
    let rewrite = one_to_one(&old, &new);
    let applied = apply_one(&repository, RewriteKind::Amend, &rewrite).unwrap();
    assert_eq!(applied.action, Action::NoNote);
    assert!(applied.annotate_fresh());
    repository
        .notes(NOTES_REF)
        .unwrap()
        .write(id(&old), "{not json")
        .unwrap();
    let applied = apply_one(&repository, RewriteKind::Rebase, &rewrite).unwrap();
    assert!(
        matches!(applied.action, Action::Unreadable(_)),
        "{applied:?}"
    );
    assert!(!applied.annotate_fresh());
    assert_eq!(
        repository.notes(NOTES_REF).unwrap().read(id(&new)).unwrap(),
        None
    );
}
