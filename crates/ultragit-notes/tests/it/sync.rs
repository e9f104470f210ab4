//! `sync`: two clones and a bare remote on disk, real git, notes written with
//! the library (no model needed).

use std::path::Path;

use gitctx::{MergeKind, ObjectId, Repo};
use testkit::{Team, TestRepo, assert_contains, bare_git};
use ultragit_notes::sync::{self, Pushed, SyncError, SyncOptions};
use ultragit_notes::{NOTES_REF, NotesError};
use ultragit_schema::{Annotation, AstAnchor, ContextLevel, LineRange, RegionAnnotation};

fn open(repo: &TestRepo) -> Repo {
    Repo::discover(repo.path()).unwrap()
}

fn id(hex: &str) -> ObjectId {
    hex.parse().unwrap()
}

/// A valid annotation of `commit` with one region per `(name, intent)`.
pub fn annotation(commit: &str, regions: &[(&str, &str)]) -> String {
    let mut a = Annotation::new(
        commit,
        "2024-01-01T00:00:00Z",
        "summary",
        ContextLevel::Inferred,
    );
    for (name, intent) in regions {
        a.regions.push(RegionAnnotation::new(
            "src.txt",
            AstAnchor::new("function", *name),
            LineRange::new(1, 2),
            *intent,
        ));
    }
    a.to_json()
}

pub fn write(repo: &TestRepo, commit: &str, text: &str) {
    write_at(repo.path(), commit, text);
}

fn write_at(path: &Path, commit: &str, text: &str) {
    Repo::discover(path)
        .unwrap()
        .notes(NOTES_REF)
        .unwrap()
        .write(id(commit), text)
        .unwrap();
}

fn read(repo: &TestRepo, commit: &str) -> Option<String> {
    open(repo)
        .notes(NOTES_REF)
        .unwrap()
        .read(id(commit))
        .unwrap()
}

fn run(repo: &TestRepo) -> sync::SyncReport {
    sync::sync(&open(repo), "origin", &SyncOptions::default()).unwrap()
}

fn remote_notes(team: &Team) -> usize {
    bare_git(&team.bare, &["notes", "--ref=ultragit", "list"])
        .lines()
        .count()
}

/// A note on the first commit of `team.a`, then a sync with `remote` that
/// must fail saying `says`: its error.
fn first_note_fails_to_sync(team: &Team, remote: &str, says: &str) -> SyncError {
    let first = &team.commits[0];
    write(&team.a, first, &annotation(first, &[]));
    match sync::sync(&open(&team.a), remote, &SyncOptions::default()) {
        Err(NotesError::Sync(err)) => {
            assert_contains(&err.to_string(), says);
            err
        }
        other => panic!("not a sync error: {other:?}"),
    }
}

#[test]
fn notes_travel_both_ways_through_the_remote() {
    let team = Team::new();
    let [c1, c2, c3] = [&team.commits[0], &team.commits[1], &team.commits[2]];
    write(&team.a, c1, &annotation(c1, &[("f", "A's reason")]));

    let first = run(&team.a);
    assert!(!first.remote_had_notes);
    assert_eq!(first.merge, None);
    assert_eq!(first.pushed, Pushed::Created);
    assert_eq!(remote_notes(&team), 1);

    write(&team.b, c2, &annotation(c2, &[("g", "B's reason")]));
    let second = run(&team.b);
    assert!(second.remote_had_notes);
    assert_eq!(
        second.merge,
        Some(MergeKind::Merged),
        "unrelated: B had its own"
    );
    assert_eq!(second.taken, 1);
    assert_eq!(second.pushed, Pushed::Updated);
    assert_eq!(remote_notes(&team), 2);

    let third = run(&team.a);
    assert_eq!(third.merge, Some(MergeKind::FastForward));
    assert_eq!(third.pushed, Pushed::UpToDate);
    for repo in [&team.a, &team.b] {
        assert!(read(repo, c1).unwrap().contains("A's reason"));
        assert!(read(repo, c2).unwrap().contains("B's reason"));
        assert_eq!(read(repo, c3), None);
    }
    // The tracking ref is where the remote's notes are; the local ref was
    // never force-updated (its old tip is an ancestor of the new one).
    let a = open(&team.a);
    assert_eq!(
        a.resolve(&sync::tracking_ref("origin")).unwrap(),
        a.resolve(NOTES_REF).unwrap()
    );
}

#[test]
fn the_same_commit_annotated_on_both_sides_is_joined_not_concatenated() {
    let team = Team::new();
    let c = &team.commits[1];
    write(&team.a, c, &annotation(c, &[("f", "From A.")]));
    write(&team.b, c, &annotation(c, &[("g", "From B.")]));
    run(&team.a);
    let report = run(&team.b);
    assert_eq!(report.merged, 1);
    run(&team.a);
    for repo in [&team.a, &team.b] {
        let text = read(repo, c).unwrap();
        let note = Annotation::from_json(&text).expect("one valid document");
        let intents: Vec<&str> = note.regions.iter().map(|r| r.intent.as_str()).collect();
        assert_eq!(intents, ["From B.", "From A."]);
    }
    // Both clones end on the same notes commit, a merge with two parents.
    let tip = |repo: &TestRepo| open(repo).resolve(NOTES_REF).unwrap();
    assert_eq!(tip(&team.a), tip(&team.b));
    let parents = team.a.git(&["rev-list", "--parents", "-n", "1", NOTES_REF]);
    assert_eq!(parents.split_whitespace().count(), 3);
}

#[test]
fn two_clones_annotating_and_syncing_at_once_lose_nothing() {
    let team = Team::new();
    let a_commits = team.a.commit_many(12, "a.txt");
    team.a.git(&["push", "--quiet", "origin", "main"]);
    team.b.git(&["fetch", "--quiet", "origin"]);
    team.b.git(&["reset", "--quiet", "--hard", "origin/main"]);
    let shared = team.commits[0].clone();
    let options = SyncOptions {
        max_attempts: 100,
        ..SyncOptions::default()
    };
    let (first, second) = a_commits.split_at(6);
    std::thread::scope(|scope| {
        for (path, mine, name) in [(team.a.path(), first, "f"), (team.b.path(), second, "g")] {
            let shared = shared.clone();
            let options = options.clone();
            scope.spawn(move || {
                write_at(path, &shared, &annotation(&shared, &[(name, name)]));
                for commit in mine {
                    write_at(path, commit, &annotation(commit, &[(name, commit)]));
                    sync::sync(&Repo::discover(path).unwrap(), "origin", &options).unwrap();
                }
            });
        }
    });
    run(&team.a);
    run(&team.b);
    run(&team.a);
    for repo in [&team.a, &team.b] {
        for commit in &a_commits {
            assert!(read(repo, commit).is_some(), "lost the note of {commit}");
        }
        let note = Annotation::from_json(&read(repo, &shared).unwrap()).unwrap();
        let mut names: Vec<&str> = note
            .regions
            .iter()
            .map(|r| r.ast_anchor.name.as_str())
            .collect();
        names.sort();
        assert_eq!(names, ["f", "g"]);
    }
    assert_eq!(remote_notes(&team), a_commits.len() + 1);
}

#[test]
fn a_push_rejected_because_someone_pushed_meanwhile_is_retried() {
    let team = Team::new();
    let [c1, c2, c3] = [&team.commits[0], &team.commits[1], &team.commits[2]];
    write(&team.a, c1, &annotation(c1, &[("f", "one")]));
    run(&team.a);
    // B builds on the remote's notes and parks its next notes commit on the
    // remote under another name.
    run(&team.b);
    write(&team.b, c2, &annotation(c2, &[("g", "two")]));
    team.b.git(&[
        "push",
        "--quiet",
        "origin",
        "refs/notes/ultragit:refs/pending/notes",
    ]);
    // A's next fetch serves the old notes, then the remote's notes move to
    // B's (as if B pushed right after): A's push must be rejected once.
    let flag = team.bare.join("moved");
    let script = team.a.join(".git/upload-pack-then-move");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ngit upload-pack \"$@\"\nstatus=$?\nif [ ! -e '{flag}' ]; then\n  touch '{flag}'\n  git --git-dir='{bare}' update-ref refs/notes/ultragit refs/pending/notes\nfi\nexit $status\n",
            flag = flag.display(),
            bare = team.bare.display()
        ),
    )
    .unwrap();
    let mut permissions = std::fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&script, permissions).unwrap();
    team.a.git(&[
        "config",
        "remote.origin.uploadpack",
        script.to_str().unwrap(),
    ]);
    write(&team.a, c3, &annotation(c3, &[("h", "three")]));

    let options = SyncOptions {
        retry_pause: std::time::Duration::from_millis(1),
        ..SyncOptions::default()
    };
    let report = sync::sync(&open(&team.a), "origin", &options).unwrap();
    assert!(flag.exists(), "the remote's notes were moved mid-sync");
    assert_eq!(report.attempts, 2);
    assert_eq!(report.pushed, Pushed::Updated);
    assert_eq!(remote_notes(&team), 3);
    for commit in [c1, c2, c3] {
        assert!(read(&team.a, commit).is_some());
    }
}

#[test]
fn malformed_notes_from_the_remote_are_refused_and_never_break_the_merge() {
    let team = Team::new();
    let [c1, c2, _] = [&team.commits[0], &team.commits[1], &team.commits[2]];
    write(&team.b, c1, "{not json");
    write(&team.b, c2, "also not an annotation");
    run(&team.b);
    write(&team.a, c1, &annotation(c1, &[("f", "valid")]));
    let report = run(&team.a);
    assert_eq!(report.pushed, Pushed::Updated);
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    let refused: Vec<&str> = report.refused.iter().map(|r| r.reason.as_str()).collect();
    assert_eq!(refused.len(), 2, "{refused:?}");
    assert!(
        refused
            .iter()
            .all(|r| r.contains("not a valid ultragit/v1 annotation"))
    );
    // c1: the local note stays; c2 (theirs only) is not taken.
    assert!(read(&team.a, c1).unwrap().contains("valid"));
    assert_eq!(read(&team.a, c2), None);
    // B gets A's valid note in place of its own unreadable one.
    let back = run(&team.b);
    assert!(back.refused.is_empty());
    assert!(back.warnings[0].contains("the local note is not a valid ultragit annotation"));
    assert!(Annotation::from_json(&read(&team.b, c1).unwrap()).is_ok());
}

#[test]
fn remotes_without_notes_unknown_and_unreachable_remotes() {
    let team = Team::new();
    // Nobody has notes: nothing happens.
    let report = run(&team.a);
    assert_eq!(report.pushed, Pushed::Nothing);
    assert_eq!(report.merge, None);
    assert_eq!(remote_notes(&team), 0);

    let repo = open(&team.a);
    let err = sync::sync(&repo, "upstream", &SyncOptions::default()).unwrap_err();
    assert!(
        matches!(err, NotesError::Sync(SyncError::UnknownRemote { .. })),
        "{err}"
    );
    assert!(err.to_string().contains("no remote named 'upstream'"));
    let err = sync::sync(&repo, "--upload-pack=evil", &SyncOptions::default()).unwrap_err();
    assert!(matches!(
        err,
        NotesError::Sync(SyncError::UnknownRemote { .. })
    ));

    team.a
        .git(&["remote", "add", "gone", "/nonexistent/remote.git"]);
    let err = first_note_fails_to_sync(&team, "gone", "could not reach the remote 'gone'");
    assert!(matches!(err, SyncError::Unreachable { .. }), "{err}");
}

#[test]
fn a_remote_that_refuses_the_notes_push_is_reported() {
    let team = Team::new();
    let hook = team.bare.join("hooks/update");
    std::fs::write(
        &hook,
        "#!/bin/sh\ncase \"$1\" in refs/notes/*) exit 1;; esac\nexit 0\n",
    )
    .unwrap();
    let mut permissions = std::fs::metadata(&hook).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&hook, permissions).unwrap();
    let err = first_note_fails_to_sync(&team, "origin", "refused the push");
    assert!(matches!(err, SyncError::Refused { .. }), "{err}");
}

#[test]
fn enable_is_idempotent() {
    let team = Team::new();
    let repo = open(&team.a);
    let exe = Path::new("/usr/local/bin/ultragit");
    let first = sync::enable(&repo, "origin", exe).unwrap();
    assert!(first.refspec_added);
    let second = sync::enable(&repo, "origin", exe).unwrap();
    assert!(!second.refspec_added);
    let refspecs = team.a.git(&["config", "--get-all", "remote.origin.fetch"]);
    assert_eq!(
        refspecs
            .lines()
            .filter(|l| *l == "+refs/notes/ultragit:refs/notes/remotes/origin/ultragit")
            .count(),
        1
    );
    assert_eq!(
        team.a.git(&["config", "ultragit.syncRemote"]).trim(),
        "origin"
    );
    let hook = std::fs::read_to_string(team.a.join(".git/hooks/pre-push")).unwrap();
    assert_eq!(hook.matches("# >>> ultragit pre-push >>>").count(), 1);
    assert!(hook.contains("ULTRAGIT_SYNC_PUSH"));
    // A plain fetch now keeps the tracking ref up to date too.
    write(
        &team.b,
        &team.commits[0],
        &annotation(&team.commits[0], &[]),
    );
    run(&team.b);
    team.a.git(&["fetch", "--quiet", "origin"]);
    assert!(
        repo.resolve(&sync::tracking_ref("origin")).is_ok(),
        "git fetch filled the tracking ref"
    );
    assert!(matches!(
        sync::enable(&repo, "nope", exe),
        Err(NotesError::Sync(SyncError::UnknownRemote { .. }))
    ));
}
