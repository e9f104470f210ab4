//! Merging two notes histories (`Notes::merge_from`) and batch writes
//! (`Notes::write_many`), on real repositories: fast paths, three-way merges,
//! unrelated histories, fan-out against flat trees, oversized notes, and the
//! union rule: notes of the other side never remove or degrade ours.

use std::cell::RefCell;

use gitctx::{MergeKind, ObjectId, Refusal, Resolution, Written};
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

/// Admits every note: the tests of the tree mechanics.
fn any(_: ObjectId, _: &str) -> Result<(), String> {
    Ok(())
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
    let report = ours.merge_from(tip, any, join).unwrap();
    assert_eq!(report.kind, MergeKind::FastForward);
    assert_eq!((report.taken, report.kept), (1, 0));
    assert_eq!(ours.tip().unwrap(), Some(tip));

    // Theirs is an ancestor of ours: nothing to do.
    ours.write(b, "note b").unwrap();
    let local = ours.tip().unwrap().unwrap();
    let report = ours.merge_from(tip, any, join).unwrap();
    assert_eq!(report.kind, MergeKind::UpToDate);
    assert_eq!(ours.tip().unwrap(), Some(local));

    // Ours is an ancestor of theirs and theirs only adds: fast-forward, no
    // merge commit.
    branch(&f.repo, OURS, THEIRS);
    theirs.write(b, "note b").unwrap(); // the same text: no change
    let extra = f.repo.commit_file("extra.txt", "x\n", "extra");
    theirs.write(id(&extra), "note extra").unwrap();
    let ahead = theirs.tip().unwrap().unwrap();
    let report = ours.merge_from(ahead, any, join).unwrap();
    assert_eq!(report.kind, MergeKind::FastForward);
    assert_eq!((report.taken, report.kept), (1, 0), "one note added");
    assert_eq!(ours.tip().unwrap(), Some(ahead));

    // Theirs edited a note ours has: the edit goes to the resolver, even on
    // a fast-forwardable history, so it can only add to ours.
    theirs.write(a, "note a, edited").unwrap();
    let ahead = theirs.tip().unwrap().unwrap();
    let report = ours.merge_from(ahead, any, join).unwrap();
    assert_eq!(report.kind, MergeKind::Merged);
    assert_eq!(report.resolved, 1);
    assert_eq!(
        ours.read(a).unwrap().as_deref(),
        Some("note a+note a, edited")
    );
    assert_eq!(parents(&f.repo, OURS), 2);
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
    theirs.remove(c[0]).unwrap(); // removed by them, untouched by us → kept
    ours.write(c[1], "changed by us").unwrap(); // removed by them, changed by us → kept
    theirs.remove(c[1]).unwrap();
    ours.remove(c[2]).unwrap(); // removed by us, changed by them → kept (theirs)
    theirs.write(c[2], "changed by them").unwrap();
    ours.write(c[7], "same").unwrap(); // the same text on both: no resolution
    theirs.write(c[7], "same").unwrap();

    let before = ours.tip().unwrap().unwrap();
    let calls = RefCell::new(Vec::new());
    let report = ours
        .merge_from(theirs.tip().unwrap().unwrap(), any, |target, a, b| {
            calls.borrow_mut().push(target);
            join(target, a, b)
        })
        .unwrap();
    assert_eq!(report.kind, MergeKind::Merged);
    assert_eq!(calls.into_inner(), vec![c[6]], "only the real conflict");
    assert_eq!(report.resolved, 1);
    assert_eq!(report.kept, 2, "c0 and c1");
    assert_eq!(report.taken, 2, "c5 and c2");
    assert_eq!(report.attempts, 1);

    let read = |commit: ObjectId| ours.read(commit).unwrap();
    assert_eq!(read(c[0]).as_deref(), Some("base 0"));
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
        .merge_from(theirs.tip().unwrap().unwrap(), any, join)
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
        .merge_from(theirs.tip().unwrap().unwrap(), any, |_, a, b| {
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
        .merge_from(theirs.tip().unwrap().unwrap(), any, |_, a, b| {
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
fn oversized_notes_are_refused_or_kept_and_never_loaded() {
    let (f, c) = Fixture::with_commits::<3>();
    let ours = f.notes(OURS);
    ours.ensure().unwrap();
    branch(&f.repo, OURS, THEIRS);
    let theirs = f.notes(THEIRS);
    let big = "x".repeat(gitctx::MAX_NOTE_BYTES as usize + 1);
    theirs.write(c[0], &big).unwrap(); // theirs only: refused
    theirs.write(c[1], &big).unwrap(); // both sides: refused, ours kept
    ours.write(c[1], "small").unwrap();
    ours.write(c[2], &big).unwrap(); // ours over the limit, theirs differs
    theirs.write(c[2], "theirs").unwrap();

    let report = ours
        .merge_from(theirs.tip().unwrap().unwrap(), any, |_, _, _| {
            panic!("an oversized note reached the resolver")
        })
        .unwrap();
    let bytes = gitctx::MAX_NOTE_BYTES + 1;
    let mut expected = vec![
        (c[0], Refusal::TooLarge { bytes }),
        (c[1], Refusal::TooLarge { bytes }),
    ];
    expected.sort_by_key(|(commit, _)| *commit);
    assert_eq!(report.refused, expected);
    assert_eq!(report.too_large, vec![c[2]]);
    assert_eq!(report.taken, 0);
    assert_eq!(ours.read(c[0]).unwrap(), None);
    assert_eq!(ours.read(c[1]).unwrap().as_deref(), Some("small"));
    assert!(matches!(
        ours.read(c[2]),
        Err(gitctx::Error::NoteTooLarge { .. })
    ));
}

/// `git commit-tree` of `tree` on top of `parent`, as a crafted remote makes it.
fn commit_tree(repo: &TestRepo, tree: &str, parent: &str) -> ObjectId {
    id(repo
        .git(&["commit-tree", tree, "-p", parent, "-m", "crafted"])
        .trim())
}

#[test]
fn a_descendant_that_removes_everything_removes_nothing() {
    let (f, c) = Fixture::with_commits::<8>();
    let ours = f.notes(OURS);
    for commit in &c {
        ours.write(*commit, &format!("note {commit}")).unwrap();
    }
    let local = ours.tip().unwrap().unwrap();
    // The remote's notes: an empty tree on top of ours (a fast-forward).
    let empty = f.repo.git_stdin(&["mktree"], "");
    let wipe = commit_tree(&f.repo, &empty, &local.to_hex());
    let report = ours.merge_from(wipe, any, join).unwrap();
    assert_eq!(report.kind, MergeKind::Merged);
    assert_eq!(report.kept, 8);
    assert_eq!(
        ours.list().unwrap().len(),
        8,
        "every local note is still there"
    );
    // The result contains the wipe, so pushing it is a fast-forward there,
    // and merging the same wipe again changes nothing.
    let tip = ours.tip().unwrap().unwrap();
    assert!(f.git.is_ancestor(wipe, tip).unwrap());
    let again = ours.merge_from(wipe, any, join).unwrap();
    assert_eq!(again.kind, MergeKind::UpToDate);

    // One local change first: still every note.
    ours.write(c[0], "changed here").unwrap();
    let wipe = commit_tree(&f.repo, &empty, &tip.to_hex());
    ours.merge_from(wipe, any, join).unwrap();
    assert_eq!(ours.list().unwrap().len(), 8);
    assert_eq!(ours.read(c[0]).unwrap().as_deref(), Some("changed here"));
}

#[test]
fn entries_that_are_not_regular_files_and_refused_texts_never_come_in() {
    let (f, c) = Fixture::with_commits::<6>();
    let ours = f.notes(OURS);
    for commit in &c[..4] {
        ours.write(*commit, "valid").unwrap();
    }
    let local = ours.tip().unwrap().unwrap();
    let blob = |text: &str| f.repo.git_stdin(&["hash-object", "-w", "--stdin"], text);
    let (good, bad) = (blob("also valid"), blob("{garbage"));
    let head = f.repo.rev_parse("HEAD");
    // Their tree: ours replaced by a symlink, a gitlink, an executable and a
    // text the caller refuses; a new valid note and a new refused one.
    let entries = [
        format!("120000 blob {good}\t{}", c[0]),
        format!("160000 commit {head}\t{}", c[1]),
        format!("100755 blob {good}\t{}", c[2]),
        format!("100644 blob {bad}\t{}", c[3]),
        format!("100644 blob {good}\t{}", c[4]),
        format!("100644 blob {bad}\t{}", c[5]),
    ];
    let tree = f.repo.git_stdin(&["mktree"], &(entries.join("\n") + "\n"));
    let crafted = commit_tree(&f.repo, &tree, &local.to_hex());
    let admit = |_: ObjectId, text: &str| {
        if text.starts_with('{') {
            Err("not an annotation".to_owned())
        } else {
            Ok(())
        }
    };
    let report = ours
        .merge_from(crafted, admit, |_, _, _| {
            panic!("nothing admitted meets a local note")
        })
        .unwrap();
    assert_eq!(report.taken, 1, "only c4");
    let mut expected = vec![
        (c[0], Refusal::NotARegularFile { mode: 0o120000 }),
        (c[1], Refusal::NotARegularFile { mode: 0o160000 }),
        (c[2], Refusal::NotARegularFile { mode: 0o100755 }),
        (c[3], Refusal::Invalid("not an annotation".to_owned())),
        (c[5], Refusal::Invalid("not an annotation".to_owned())),
    ];
    expected.sort_by_key(|(commit, _)| *commit);
    assert_eq!(report.refused, expected, "in commit order");
    // What doctor reports afterwards: the same refusals, found again.
    assert_eq!(ours.refused_in(crafted, admit).unwrap(), expected);
    for commit in &c[..4] {
        assert_eq!(ours.read(*commit).unwrap().as_deref(), Some("valid"));
    }
    assert_eq!(ours.read(c[4]).unwrap().as_deref(), Some("also valid"));
    assert_eq!(ours.read(c[5]).unwrap(), None);
    // The notes history says what was refused.
    let message = f.repo.git(&["log", "-1", "--format=%B", OURS]);
    assert!(message.contains(&format!("Refused the note of {}: a symbolic link", c[0])));
    assert!(message.contains(&format!("Refused the note of {}: not an annotation", c[3])));
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
