//! The sync rule as a property: for random local and remote note sets —
//! valid, malformed, oversized, removed, symbolic-link and gitlink entries,
//! a remote that descends from ours or one that diverged — after a sync every
//! valid local note is still readable and says at least what it said, and
//! every valid remote note is merged in (but for the remote's unchanged copy
//! of a note this clone itself changed since they parted: our own edit
//! stands). Real repositories: two clones and a
//! bare remote, the remote's notes crafted with git plumbing as a stranger
//! would.

use std::collections::BTreeMap;

use gitctx::{ObjectId, Repo};
use proptest::prelude::*;
use testkit::{Team, TestRepo};
use ultragit_notes::NOTES_REF;
use ultragit_notes::sync::{self, SyncOptions};
use ultragit_schema::Annotation;
use ultragit_schema::merge::merge;

use crate::sync::{annotation, write};

/// Annotated commits per case.
const SLOTS: usize = 6;

/// What the remote's side holds for one commit, made on top of what it had.
#[derive(Debug, Clone, Copy)]
enum Remote {
    /// As it was (the note of the base, or none).
    Same,
    Valid,
    Malformed,
    /// Over the 4 MiB limit.
    Oversized,
    Removed,
    Symlink,
    Gitlink,
}

/// What this clone does to one commit's note after the remote took its notes.
#[derive(Debug, Clone, Copy)]
enum Local {
    Same,
    Valid,
    Malformed,
}

#[derive(Debug, Clone)]
struct Case {
    /// Which commits have a note (valid) before the two sides part.
    base: [bool; SLOTS],
    remote: [Remote; SLOTS],
    /// `None`: this clone changes nothing, so the remote descends from ours.
    local: Option<[Local; SLOTS]>,
}

fn remote_state() -> impl Strategy<Value = Remote> {
    prop_oneof![
        3 => Just(Remote::Same),
        3 => Just(Remote::Valid),
        2 => Just(Remote::Malformed),
        1 => Just(Remote::Oversized),
        3 => Just(Remote::Removed),
        1 => Just(Remote::Symlink),
        1 => Just(Remote::Gitlink),
    ]
}

fn local_state() -> impl Strategy<Value = Local> {
    prop_oneof![2 => Just(Local::Same), 2 => Just(Local::Valid), 1 => Just(Local::Malformed)]
}

fn case() -> impl Strategy<Value = Case> {
    (
        proptest::array::uniform6(any::<bool>()),
        proptest::array::uniform6(remote_state()),
        proptest::option::of(proptest::array::uniform6(local_state())),
    )
        .prop_map(|(base, remote, local)| Case {
            base,
            remote,
            local,
        })
}

fn open(repo: &TestRepo) -> Repo {
    Repo::discover(repo.path()).unwrap()
}

/// Every note of `repo`'s notes ref that is a regular file and parses, by
/// commit (read with git's own plumbing, not ours).
fn valid_notes(repo: &TestRepo) -> BTreeMap<String, Annotation> {
    let listing = repo
        .command()
        .args(["ls-tree", "-r", "refs/notes/ultragit"])
        .run_unchecked()
        .unwrap();
    let mut out = BTreeMap::new();
    for line in String::from_utf8_lossy(&listing.stdout).lines() {
        let (meta, path) = line.split_once('\t').unwrap();
        let fields: Vec<&str> = meta.split_whitespace().collect();
        if fields[0] != "100644" {
            continue;
        }
        let text = repo.git(&["cat-file", "blob", fields[2]]);
        if let Ok(note) = Annotation::from_json(&text) {
            out.insert(path.split('/').collect(), note);
        }
    }
    out
}

/// Whether `after` says at least everything `before` did.
fn contains(after: &Annotation, before: &Annotation) -> bool {
    merge(after, before) == *after
}

/// `b`'s notes ref set to the remote's (deleted when the remote has none).
fn take_remote_notes(b: &TestRepo) {
    let fetched = b
        .command()
        .args([
            "fetch",
            "--quiet",
            "origin",
            "+refs/notes/ultragit:refs/notes/ultragit",
        ])
        .run_unchecked()
        .unwrap();
    if !fetched.status.success() {
        b.git(&["update-ref", "-d", "refs/notes/ultragit"]);
    }
}

/// Builds the stranger's notes commit on top of the remote's and pushes it.
fn craft_remote(team: &Team, commits: &[String], states: &[Remote; SLOTS]) {
    let b = &team.b;
    take_remote_notes(b);
    let listing = b
        .command()
        .args(["ls-tree", "-r", "refs/notes/ultragit"])
        .run_unchecked()
        .unwrap();
    let listing = String::from_utf8_lossy(&listing.stdout).into_owned();
    let mut tree: BTreeMap<String, String> = listing
        .lines()
        .map(|line| {
            let (meta, path) = line.split_once('\t').unwrap();
            let name: String = path.split('/').collect();
            (name, meta.to_owned())
        })
        .collect();
    let blob = |text: &str| b.git_stdin(&["hash-object", "-w", "--stdin"], text);
    let some_valid = blob(&annotation(&commits[0], &[("x", "a valid note")]));
    for (commit, state) in commits.iter().zip(states) {
        let entry = match state {
            Remote::Same => continue,
            Remote::Removed => {
                tree.remove(commit);
                continue;
            }
            Remote::Valid => {
                let text = annotation(commit, &[("r", &format!("Remote reason for {commit}."))]);
                format!("100644 blob {}", blob(&text))
            }
            Remote::Malformed => format!("100644 blob {}", blob("{garbage")),
            Remote::Oversized => {
                let big = "y".repeat(gitctx::MAX_NOTE_BYTES as usize + 10);
                format!("100644 blob {}", blob(&big))
            }
            Remote::Symlink => format!("120000 blob {some_valid}"),
            Remote::Gitlink => format!("160000 commit {}", commits[0]),
        };
        tree.insert(commit.clone(), entry);
    }
    let text: String = tree
        .iter()
        .map(|(name, meta)| format!("{meta}\t{name}\n"))
        .collect();
    let tree = b.git_stdin(&["mktree"], &text);
    let parent = b
        .command()
        .args(["rev-parse", "--verify", "--quiet", "refs/notes/ultragit"])
        .run_unchecked()
        .unwrap();
    let mut args = vec![
        "commit-tree".to_owned(),
        tree,
        "-m".into(),
        "crafted".into(),
    ];
    if parent.status.success() {
        args.push("-p".into());
        args.push(String::from_utf8_lossy(&parent.stdout).trim().to_owned());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let commit = b.git_stdin(&args, "");
    b.git(&["update-ref", "refs/notes/ultragit", &commit]);
    b.git(&[
        "push",
        "--quiet",
        "--force",
        "origin",
        "refs/notes/ultragit",
    ]);
}

fn check(case: &Case) -> Result<(), TestCaseError> {
    let team = Team::new();
    let mut commits = team.commits.clone();
    commits.extend(team.a.commit_many(SLOTS - commits.len(), "more.txt"));
    for (commit, &has) in commits.iter().zip(&case.base) {
        if has {
            write(
                &team.a,
                commit,
                &annotation(commit, &[("f", &format!("Base reason for {commit}."))]),
            );
        }
    }
    if case.base.iter().any(|&b| b) {
        sync::sync(&open(&team.a), "origin", &SyncOptions::default()).unwrap();
    }
    // What both sides had when they parted.
    let base = valid_notes(&team.a);
    craft_remote(&team, &commits, &case.remote);
    let mut changed_here = std::collections::BTreeSet::new();
    if let Some(local) = &case.local {
        for (commit, state) in commits.iter().zip(local) {
            match state {
                Local::Same => continue,
                Local::Valid => write(
                    &team.a,
                    commit,
                    &annotation(commit, &[("l", &format!("Local reason for {commit}."))]),
                ),
                Local::Malformed => write(&team.a, commit, "not an annotation"),
            }
            changed_here.insert(commit.clone());
        }
    }
    let before = valid_notes(&team.a);
    take_remote_notes(&team.b);
    let remote = valid_notes(&team.b);

    let report = sync::sync(&open(&team.a), "origin", &SyncOptions::default()).unwrap();
    let after = valid_notes(&team.a);
    for (commit, note) in &before {
        let Some(now) = after.get(commit) else {
            return Err(TestCaseError::fail(format!(
                "the valid local note of {commit} is gone or unreadable ({report:?})"
            )));
        };
        prop_assert!(
            contains(now, note),
            "the local note of {commit} lost something"
        );
    }
    for (commit, note) in &remote {
        // The remote's copy of what both had, where this clone changed its
        // own note since: our own change stands.
        if changed_here.contains(commit) && base.get(commit) == Some(note) {
            continue;
        }
        let Some(now) = after.get(commit) else {
            return Err(TestCaseError::fail(format!(
                "the valid remote note of {commit} was not merged ({report:?})"
            )));
        };
        prop_assert!(
            contains(now, note),
            "the remote note of {commit} was not merged whole"
        );
    }
    // What went back to the remote is exactly the local result.
    let local_tip = open(&team.a).resolve(NOTES_REF).unwrap();
    let remote_tip = testkit::bare_git(&team.bare, &["rev-parse", "refs/notes/ultragit"]);
    prop_assert_eq!(local_tip, remote_tip.trim().parse::<ObjectId>().unwrap());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn after_sync_no_valid_note_is_lost_and_every_valid_remote_note_is_merged(case in case()) {
        check(&case)?;
    }
}
