//! `correct::{flag, correct}` on real repositories: the stored note keeps
//! every byte it had, the author comes from trusted git settings, and bad
//! targets are refused before anything is written.

use testkit::TestRepo;
use ultragit_notes::correct::{self, Change, CorrectError};
use ultragit_schema::{Annotation, CorrectionField, CorrectionTarget};

use crate::support::{id, open};

/// A commit whose note another writer wrote: odd spacing and a member this
/// version does not know.
fn foreign_note(repo: &TestRepo) -> (String, String) {
    let commit = repo.commit_file("a.rs", "fn f() {}\n", "Add f");
    let text = format!(
        "{{\"$schema\": \"ultragit/v1\", \"commit\": \"{commit}\", \"timestamp\": \"2025-01-01T00:00:00Z\",\n \
         \"summary\": \"s\", \"context_level\": \"inferred\", \"reviewed_by\": [\"bot\"],\n \
         \"regions\": [{{\"file\": \"a.rs\", \"ast_anchor\": {{\"type\": \"function\", \"name\": \"f\"}},\n \
         \"lines\": {{\"start\": 1, \"end\": 1}}, \"intent\": \"Does f.\"}}],\n \
         \"provenance\": {{\"operation\": \"initial\"}}}}\n"
    );
    open(repo)
        .notes(ultragit_notes::NOTES_REF)
        .unwrap()
        .write(id(&commit), &text)
        .unwrap();
    (commit, text)
}

fn raw_note(repo: &TestRepo, commit: &str) -> String {
    open(repo)
        .notes(ultragit_notes::NOTES_REF)
        .unwrap()
        .read(id(commit))
        .unwrap()
        .expect("the commit has a note")
}

#[test]
fn corrections_are_appended_without_rewriting_the_note() {
    let repo = TestRepo::new();
    let (commit, original) = foreign_note(&repo);
    let git = open(&repo);
    let stored = correct::flag(&git, "HEAD", CorrectionTarget::all(), " stale ", "Ann").unwrap();
    assert_eq!(stored.commit, commit);
    assert_eq!(stored.regions, ["a.rs:f"]);
    assert_eq!(stored.correction.reason, "stale");
    let change = Change::set(CorrectionField::Intent, "Does f twice.");
    correct::correct(
        &git,
        &commit,
        CorrectionTarget::unit("a.rs", "f"),
        &change,
        "it loops",
        "Ann",
    )
    .unwrap();

    // Recorded beside the note, which is not rewritten for each one.
    assert_eq!(raw_note(&repo, &commit), original);
    let record = repo.git(&["notes", "--ref=ultragit-corrections", "show", &commit]);
    assert_eq!(
        ultragit_schema::pending::parse_record(&record).len(),
        2,
        "{record}"
    );

    // Folded into the note in one rewrite, every byte of it kept.
    let folded = correct::fold_pending(&git).unwrap();
    assert_eq!((folded.notes, folded.corrections), (1, 2));
    assert!(folded.kept.is_empty());
    let text = raw_note(&repo, &commit);
    let close = original.rfind('}').unwrap();
    assert!(text.starts_with(&original[..close]), "{text}");
    assert!(text.ends_with(&original[close..]), "{text}");
    assert!(text.contains("\"reviewed_by\": [\"bot\"]"), "{text}");
    let note = Annotation::from_json(&text).unwrap();
    assert_eq!(note.corrections.len(), 2);
    assert_eq!(note.regions[0].intent, "Does f.");
    let left = repo
        .command()
        .args(["notes", "--ref=ultragit-corrections", "show", &commit])
        .run_unchecked()
        .unwrap();
    assert!(!left.status.success(), "the record is cleared");
    // Folding again changes nothing.
    assert_eq!(
        correct::fold_pending(&git).unwrap(),
        correct::Folded::default()
    );
    assert_eq!(raw_note(&repo, &commit), text);
}

#[test]
fn nothing_is_written_for_a_bad_target_or_change() {
    let repo = TestRepo::new();
    let (commit, original) = foreign_note(&repo);
    let git = open(&repo);
    let tip = git.notes(ultragit_notes::NOTES_REF).unwrap().tip().unwrap();
    let err = correct::flag(
        &git,
        &commit,
        CorrectionTarget::unit("b.rs", "f"),
        "r",
        "Ann",
    )
    .unwrap_err();
    assert!(
        matches!(&err, CorrectError::NoRegion { available, .. } if available == &["a.rs:f"]),
        "{err}"
    );
    let refused = [
        (
            Change::remove(CorrectionField::Tags, "x"),
            "the correction changes nothing: a.rs:f has no tags entry \"x\"; it has: none",
        ),
        (
            Change::set(CorrectionField::Tags, "x"),
            "invalid correction: tags is a list; use add or remove",
        ),
    ];
    for (change, expected) in refused {
        let target = CorrectionTarget::unit("a.rs", "f");
        let err = correct::correct(&git, &commit, target, &change, "r", "Ann").unwrap_err();
        assert_eq!(err.to_string(), expected);
    }
    let parent = repo.commit_file("b.rs", "\n", "Add b");
    let err = correct::flag(&git, &parent, CorrectionTarget::all(), "r", "Ann").unwrap_err();
    assert!(matches!(err, CorrectError::NoNote { .. }), "{err}");
    assert_eq!(raw_note(&repo, &commit), original);
    assert_eq!(
        git.notes(ultragit_notes::NOTES_REF).unwrap().tip().unwrap(),
        tip,
        "the notes ref did not move"
    );
}

#[test]
fn the_author_is_named_as_git_names_a_commit_author() {
    let repo = TestRepo::new();
    let none = |_: &str| None;
    // The repository's own config wins over the user's; no identity at all
    // is a process test (this process's user config is not hermetic).
    repo.git(&["config", "user.name", "Ann Example"]);
    repo.git(&["config", "user.email", ""]);
    let git = open(&repo);
    assert_eq!(correct::git_identity(&git, none).unwrap(), "Ann Example");
    repo.git(&["config", "user.email", " ann@example.com "]);
    let git = open(&repo);
    assert_eq!(
        correct::git_identity(&git, none).unwrap(),
        "Ann Example <ann@example.com>"
    );
    let env = |name: &str| (name == correct::GIT_AUTHOR_NAME).then(|| "Bob".to_owned());
    assert_eq!(
        correct::git_identity(&git, env).unwrap(),
        "Bob <ann@example.com>"
    );
}

#[test]
fn a_note_takes_at_most_the_cap_of_corrections_folded_and_pending_together() {
    let repo = TestRepo::new();
    let (commit, text) = foreign_note(&repo);
    let git = open(&repo);
    // 997 corrections already in the note, then two pending: 999.
    let mut note = Annotation::from_json(&text).unwrap();
    for i in 0..correct::MAX_CORRECTIONS - 3 {
        note.corrections.push(ultragit_schema::Correction::flag(
            CorrectionTarget::all(),
            format!("old {i}"),
            "Ann",
            "2025-01-01T00:00:00Z",
        ));
    }
    git.notes(ultragit_notes::NOTES_REF)
        .unwrap()
        .write(id(&commit), &note.to_json())
        .unwrap();
    for reason in ["one", "two", "three"] {
        correct::flag(&git, &commit, CorrectionTarget::all(), reason, "Ann").unwrap();
    }
    let before = raw_note(&repo, &commit);
    let err = correct::flag(&git, &commit, CorrectionTarget::all(), "four", "Ann").unwrap_err();
    assert!(
        matches!(
            err,
            correct::CorrectError::TooMany {
                count: 1000,
                limit: 1000,
                ..
            }
        ),
        "{err}"
    );
    testkit::assert_contains(&err.to_string(), "already has 1000 corrections");
    assert_eq!(raw_note(&repo, &commit), before, "nothing written");
    let record = repo.git(&["notes", "--ref=ultragit-corrections", "show", &commit]);
    assert_eq!(ultragit_schema::pending::parse_record(&record).len(), 3);
    // Folded, the count is the same: still full.
    correct::fold_pending(&git).unwrap();
    assert!(matches!(
        correct::flag(&git, &commit, CorrectionTarget::all(), "five", "Ann"),
        Err(correct::CorrectError::TooMany { .. })
    ));
}
