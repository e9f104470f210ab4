//! Merging two notes histories (`Notes::merge_from`) and batch writes
//! (`Notes::write_many`), on real repositories: fast paths, three-way merges,
//! unrelated histories, fan-out against flat trees, oversized notes.

use std::cell::RefCell;

use gitctx::{MergeKind, ObjectId, Resolution, Written};
use testkit::TestRepo;

use crate::{Fixture, git_note, id, import_notes, open};

const OURS: &str = "refs/notes/ultragit";
const THEIRS: &str = "refs/notes/remotes/origin/ultragit";

/// Copies the ref `from` to `to` (a new history that shares everything so far).
fn branch(repo: &TestRepo, from: &str, to: &str) {
    repo.git(&["update-ref", to, from]);
}

fn parents(repo: &TestRepo, rev: &str) -> usize {
    repo.git(&["rev-list", "--parents", "-n", "1", rev])
        .split_whitespace()
        .count()
        - 1
}

/// Joins two texts: what a caller's JSON-aware merge would do, made visible.
fn join(_: ObjectId, ours: &str, theirs: &str) -> Resolution {
    Resolution::Text(format!("{ours}+{theirs}"))
}

#[test]
fn fast_paths_absent_ancestor_descendant() {
    let (f, [a, b]) = Fixture::with_commits();
    let theirs = f.notes(THEIRS);
    theirs.write(a, "note a").unwrap();
    let tip = theirs.tip().unwrap().unwrap();

    // No local ref: fast-forward to theirs.
    let ours = f.notes(OURS);
    let report = ours.merge_from(tip, join).unwrap();
    assert_eq!(report.kind, MergeKind::FastForward);
    assert_eq!((report.taken, report.removed), (1, 0));
    assert_eq!(ours.tip().unwrap(), Some(tip));

    // Theirs is an ancestor of ours: nothing to do.
    ours.write(b, "note b").unwrap();
    let local = ours.tip().unwrap().unwrap();
    let report = ours.merge_from(tip, join).unwrap();
    assert_eq!(report.kind, MergeKind::UpToDate);
    assert_eq!(ours.tip().unwrap(), Some(local));

    // Ours is an ancestor of theirs: fast-forward, no merge commit.
    branch(&f.repo, OURS, THEIRS);
    theirs.write(a, "note a, edited").unwrap();
    let ahead = theirs.tip().unwrap().unwrap();
    let report = ours.merge_from(ahead, join).unwrap();
    assert_eq!(report.kind, MergeKind::FastForward);
    assert_eq!((report.taken, report.removed), (1, 0), "one note changed");
    assert_eq!(ours.tip().unwrap(), Some(ahead));
    assert_eq!(ours.read(a).unwrap().as_deref(), Some("note a, edited"));
}

#[test]
fn diverged_histories_merge_three_ways_with_a_two_parent_commit() {
    let (f, c) = Fixture::with_commits::<8>();
    let ours = f.notes(OURS);
    for (i, commit) in c[..4].iter().enumerate() {
        ours.write(*commit, &format!("base {i}")).unwrap();
    }
    branch(&f.repo, OURS, THEIRS);
    let theirs = f.notes(THEIRS);

    ours.write(c[4], "ours only").unwrap(); // added on our side
    theirs.write(c[5], "theirs only").unwrap(); // added on theirs
    ours.write(c[6], "both: ours").unwrap(); // added on both, differently
    theirs.write(c[6], "both: theirs").unwrap();
    theirs.remove(c[0]).unwrap(); // removed by them, untouched by us → removed
    ours.write(c[1], "changed by us").unwrap(); // removed by them, changed by us → kept
    theirs.remove(c[1]).unwrap();
    ours.remove(c[2]).unwrap(); // removed by us, changed by them → kept (theirs)
    theirs.write(c[2], "changed by them").unwrap();
    ours.write(c[7], "same").unwrap(); // the same text on both: no resolution
    theirs.write(c[7], "same").unwrap();

    let before = ours.tip().unwrap().unwrap();
    let calls = RefCell::new(Vec::new());
    let report = ours
        .merge_from(theirs.tip().unwrap().unwrap(), |target, a, b| {
            calls.borrow_mut().push(target);
            join(target, a, b)
        })
        .unwrap();
    assert_eq!(report.kind, MergeKind::Merged);
    assert_eq!(calls.into_inner(), vec![c[6]], "only the real conflict");
    assert_eq!(report.resolved, 1);
    assert_eq!(report.removed, 1);
    assert_eq!(report.taken, 2, "c5 and c2");
    assert_eq!(report.attempts, 1);

    let read = |commit: ObjectId| ours.read(commit).unwrap();
    assert_eq!(read(c[0]), None);
    assert_eq!(read(c[1]).as_deref(), Some("changed by us"));
    assert_eq!(read(c[2]).as_deref(), Some("changed by them"));
    assert_eq!(read(c[3]).as_deref(), Some("base 3"));
    assert_eq!(read(c[4]).as_deref(), Some("ours only"));
    assert_eq!(read(c[5]).as_deref(), Some("theirs only"));
    assert_eq!(read(c[6]).as_deref(), Some("both: ours+both: theirs"));
    assert_eq!(read(c[7]).as_deref(), Some("same"));

    let tip = ours.tip().unwrap().unwrap();
    assert_eq!(tip, report.notes_commit);
    assert_eq!(parents(&f.repo, OURS), 2);
    let first_parent = f.repo.rev_parse(&format!("{OURS}^1"));
    assert_eq!(first_parent, before.to_hex());
    // git itself reads the merged notes.
    assert_eq!(
        git_note(&f.repo, &c[5].to_hex()).as_deref(),
        Some("theirs only")
    );

    // Merging the same theirs again is a no-op.
    let again = ours
        .merge_from(theirs.tip().unwrap().unwrap(), join)
        .unwrap();
    assert_eq!(again.kind, MergeKind::UpToDate);
}

#[test]
fn unrelated_histories_merge_against_the_empty_tree() {
    let (f, c) = Fixture::with_commits::<3>();
    let (ours, theirs) = (f.notes(OURS), f.notes(THEIRS));
    // Both sides ran `ultragit init`: two root commits.
    assert!(ours.ensure().unwrap());
    assert!(theirs.ensure().unwrap());
    ours.write(c[0], "ours").unwrap();
    theirs.write(c[1], "theirs").unwrap();
    ours.write(c[2], "x").unwrap();
    theirs.write(c[2], "y").unwrap();

    let report = ours
        .merge_from(theirs.tip().unwrap().unwrap(), |_, a, b| {
            Resolution::Text(format!("{a}{b}"))
        })
        .unwrap();
    assert_eq!(report.kind, MergeKind::Merged);
    assert_eq!(ours.read(c[0]).unwrap().as_deref(), Some("ours"));
    assert_eq!(ours.read(c[1]).unwrap().as_deref(), Some("theirs"));
    assert_eq!(ours.read(c[2]).unwrap().as_deref(), Some("xy"));
}

#[test]
fn a_fanned_out_tree_merges_with_a_flat_one() {
    let repo = TestRepo::new();
    let shas = repo.commit_many(320, "n.txt");
    let r = open(&repo);
    let ours = r.notes(OURS).unwrap();
    // Ours: flat, written by us; one note on a commit theirs also annotates.
    ours.write(id(&shas[310]), "ours 310").unwrap();
    ours.write(id(&shas[0]), "ours 0").unwrap();
    // Theirs: fanned out by git fast-import, 300 notes.
    import_notes(&repo, THEIRS, &shas[..300]);
    let theirs = r.notes(THEIRS).unwrap();
    let report = ours
        .merge_from(theirs.tip().unwrap().unwrap(), |_, a, b| {
            Resolution::Text(format!("{a}|{b}"))
        })
        .unwrap();
    assert_eq!(report.kind, MergeKind::Merged);
    assert_eq!(report.taken, 299);
    assert_eq!(report.resolved, 1);
    assert_eq!(ours.list().unwrap().len(), 301);
    assert_eq!(
        ours.read(id(&shas[0])).unwrap().as_deref(),
        Some(format!("ours 0|note of {}\n", shas[0]).as_str())
    );
    assert_eq!(
        ours.read(id(&shas[299])).unwrap(),
        Some(format!("note of {}\n", shas[299]))
    );
    assert_eq!(
        ours.read(id(&shas[310])).unwrap().as_deref(),
        Some("ours 310")
    );
}

#[test]
fn oversized_notes_are_kept_by_id_and_never_loaded() {
    let (f, c) = Fixture::with_commits::<3>();
    let ours = f.notes(OURS);
    ours.ensure().unwrap();
    branch(&f.repo, OURS, THEIRS);
    let theirs = f.notes(THEIRS);
    let big = "x".repeat(gitctx::MAX_NOTE_BYTES as usize + 1);
    theirs.write(c[0], &big).unwrap(); // theirs only: moves by id
    theirs.write(c[1], &big).unwrap(); // both sides: ours kept
    ours.write(c[1], "small").unwrap();
    ours.write(c[2], "mine").unwrap();

    let report = ours
        .merge_from(theirs.tip().unwrap().unwrap(), |_, _, _| {
            panic!("an oversized note reached the resolver")
        })
        .unwrap();
    assert_eq!(report.too_large, vec![c[1]]);
    assert_eq!(report.taken, 1);
    assert!(matches!(
        ours.read(c[0]),
        Err(gitctx::Error::NoteTooLarge { .. })
    ));
    assert_eq!(ours.read(c[1]).unwrap().as_deref(), Some("small"));
}

#[test]
fn write_many_adds_keeps_and_resolves_in_one_commit() {
    let (f, c) = Fixture::with_commits::<4>();
    let notes = f.notes(OURS);
    notes.write(c[0], "same").unwrap();
    notes.write(c[1], "old").unwrap();
    notes.write(c[2], "keep me").unwrap();
    let before = notes.tip().unwrap().unwrap();

    let items = vec![
        (c[0], "same".to_owned()),
        (c[1], "new".to_owned()),
        (c[2], "ignored".to_owned()),
        (c[3], "fresh".to_owned()),
    ];
    let written = notes
        .write_many(&items, |target, existing, incoming| {
            if target == c[2] {
                Resolution::Ours
            } else {
                Resolution::Text(format!("{existing}&{incoming}"))
            }
        })
        .unwrap();
    assert_eq!(
        written,
        vec![
            Written::Kept,
            Written::Updated,
            Written::Kept,
            Written::Added
        ]
    );
    assert_eq!(notes.read(c[1]).unwrap().as_deref(), Some("old&new"));
    assert_eq!(notes.read(c[2]).unwrap().as_deref(), Some("keep me"));
    assert_eq!(notes.read(c[3]).unwrap().as_deref(), Some("fresh"));
    assert_eq!(
        f.repo.rev_parse(&format!("{OURS}^")),
        before.to_hex(),
        "one commit on top"
    );

    // Nothing to change: no commit.
    let tip = notes.tip().unwrap();
    let again = notes
        .write_many(&[(c[3], "fresh".to_owned())], |_, _, _| Resolution::Theirs)
        .unwrap();
    assert_eq!(again, vec![Written::Kept]);
    assert_eq!(notes.tip().unwrap(), tip);

    // Into a repository with no notes ref yet.
    let (other, [commit]) = Fixture::with_commits();
    let written = other
        .notes(OURS)
        .write_many(&[(commit, "first".to_owned())], |_, _, _| Resolution::Ours)
        .unwrap();
    assert_eq!(written, vec![Written::Added]);
    assert_eq!(
        other.notes(OURS).read(commit).unwrap().as_deref(),
        Some("first")
    );
}
