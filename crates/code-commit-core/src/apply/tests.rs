use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;

use super::fault::Plan;
use super::*;

/// A change writing `content` to `rel`.
fn write(rel: &str, content: &[u8]) -> Change {
    Change::Write {
        rel: rel.to_owned(),
        content: content.to_vec(),
    }
}

/// A change deleting `rel`.
fn delete(rel: &str) -> Change {
    Change::Delete {
        rel: rel.to_owned(),
    }
}

/// The step a rolled-back apply failed at, and the change it failed on.
fn rolled_back_at(err: &ApplyError) -> Option<(Step, &str)> {
    match err {
        ApplyError::RolledBack { step, rel, .. } => Some((*step, rel.as_str())),
        _ => None,
    }
}

/// Everything observable about a tree: kind, mode and content per path.
fn snapshot(root: &Path) -> BTreeMap<String, (char, u32, Vec<u8>)> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, (char, u32, Vec<u8>)>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = fs::symlink_metadata(&path).unwrap();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let mode = meta.permissions().mode() & 0o7777;
            if meta.is_symlink() {
                let target = fs::read_link(&path).unwrap();
                out.insert(rel, ('l', 0, target.into_os_string().into_encoded_bytes()));
            } else if meta.is_dir() {
                out.insert(rel, ('d', mode, Vec::new()));
                walk(root, &path, out);
            } else {
                out.insert(rel, ('f', mode, fs::read(&path).unwrap()));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// A tree with a script, nested files and an empty directory.
fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(root.join("run.sh"), "#!/bin/sh\necho old\n").unwrap();
    fs::set_permissions(root.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    fs::create_dir_all(root.join("src/inner")).unwrap();
    fs::write(root.join("src/lib.rs"), "old lib\n").unwrap();
    fs::write(root.join("src/old.rs"), "to delete\n").unwrap();
    fs::set_permissions(root.join("src/old.rs"), fs::Permissions::from_mode(0o600)).unwrap();
    fs::write(root.join("gone.txt"), "").unwrap();
    fs::create_dir(root.join("empty")).unwrap();
    dir
}

/// Creates, replaces and deletes, with new files in nested new directories
/// (two of them sharing a new directory) and an empty new file.
fn changes(_root: &Path) -> Vec<Change> {
    let write = |rel: &str, content: &str| write(rel, content.as_bytes());
    vec![
        write("run.sh", "#!/bin/sh\necho new\n"),
        write("new/deep/er/a.rs", "a\n"),
        delete("src/old.rs"),
        write("new/deep/b.rs", "b\n"),
        write("src/lib.rs", "new lib\n"),
        write("src/inner/empty.txt", ""),
        write("empty/x/y.txt", "y\n"),
        delete("gone.txt"),
    ]
}

/// Runs `apply` under `plan`; returns the result and the counters it reached.
fn apply_with(root: &Path, plan: Plan, changes: &[Change]) -> (Result<Applied, ApplyError>, Plan) {
    let root = Dir::open(root).unwrap();
    fault::set(plan);
    let result = apply(&root, changes);
    let reached = fault::set(Plan::default());
    (result, reached)
}

fn fail_step(n: usize) -> Plan {
    Plan {
        fail: [Some(n), None, None],
        ..Plan::default()
    }
}

/// Counts the forward steps of a successful run of the mixed changes.
fn step_count() -> usize {
    let dir = fixture();
    let (result, reached) = apply_with(dir.path(), Plan::default(), &changes(dir.path()));
    assert!(result.is_ok());
    reached.counts[0]
}

#[test]
fn a_failure_at_every_step_leaves_the_tree_as_it_was() {
    let steps = step_count();
    // Inspect + 3 dirs + temp/write/sync/place for a new file, more for
    // replacements: the mix has well over 30 steps.
    assert!(steps > 30, "only {steps} steps");
    let mut failed_steps = HashSet::new();
    for n in 0..steps {
        let dir = fixture();
        let before = snapshot(dir.path());
        let (result, reached) = apply_with(dir.path(), fail_step(n), &changes(dir.path()));
        let err = result.expect_err("the injected fault must fail the apply");
        assert!(err.restored(), "step {n}: {err}");
        let ApplyError::RolledBack { step, source, .. } = &err else {
            panic!("step {n}: {err:?}");
        };
        assert!(source.to_string().contains("injected"), "step {n}: {err}");
        failed_steps.insert(*step);
        assert_eq!(
            reached.counts[0],
            n + 1,
            "no step runs after the failing one"
        );
        assert_eq!(
            snapshot(dir.path()),
            before,
            "tree changed after a fault at step {n}"
        );
    }
    for expected in [
        Step::Inspect,
        Step::CreateDir,
        Step::CreateTemp,
        Step::WriteTemp,
        Step::CopyPermissions,
        Step::SyncTemp,
        Step::MoveAside,
        Step::Place,
    ] {
        assert!(
            failed_steps.contains(&expected),
            "{expected:?} never failed"
        );
    }
    // One past the last step is never reached: the count is exact.
    let dir = fixture();
    let (result, _) = apply_with(dir.path(), fail_step(steps), &changes(dir.path()));
    assert!(result.is_ok());
}

#[test]
fn success_lands_every_change_and_leaves_no_side_files() {
    let dir = fixture();
    let root = dir.path();
    let applied = apply(&Dir::open(root).unwrap(), &changes(root)).unwrap();
    assert_eq!(
        applied.written,
        [
            "run.sh",
            "new/deep/er/a.rs",
            "new/deep/b.rs",
            "src/lib.rs",
            "src/inner/empty.txt",
            "empty/x/y.txt"
        ]
    );
    assert_eq!(
        applied.created,
        [
            "new/deep/er/a.rs",
            "new/deep/b.rs",
            "src/inner/empty.txt",
            "empty/x/y.txt"
        ]
    );
    assert_eq!(applied.deleted, ["src/old.rs", "gone.txt"]);
    assert!(applied.unremoved_backups.is_empty());
    let after = snapshot(root);
    let paths: Vec<&str> = after.keys().map(String::as_str).collect();
    assert_eq!(
        paths,
        [
            "empty",
            "empty/x",
            "empty/x/y.txt",
            "new",
            "new/deep",
            "new/deep/b.rs",
            "new/deep/er",
            "new/deep/er/a.rs",
            "run.sh",
            "src",
            "src/inner",
            "src/inner/empty.txt",
            "src/lib.rs",
        ]
    );
    assert_eq!(
        after["run.sh"],
        ('f', 0o755, b"#!/bin/sh\necho new\n".to_vec())
    );
    assert_eq!(after["src/inner/empty.txt"].2, b"");
}

#[test]
fn a_failed_undo_is_reported_with_where_the_original_is() {
    let steps = step_count();
    // Fail the last step (placing the last new file); then fail each undo in
    // turn. Every failed undo is listed, and the tree is never silently wrong.
    let undos = {
        let dir = fixture();
        let (result, reached) = apply_with(dir.path(), fail_step(steps - 1), &changes(dir.path()));
        assert!(result.is_err());
        reached.counts[1]
    };
    assert!(undos > 10, "only {undos} undos");
    let mut saw_not_restored = false;
    for k in 0..undos {
        let dir = fixture();
        let plan = Plan {
            fail: [Some(steps - 1), Some(k), None],
            ..Plan::default()
        };
        let (result, _) = apply_with(dir.path(), plan, &changes(dir.path()));
        let err = result.unwrap_err();
        assert!(!err.restored(), "undo {k}: {err}");
        let ApplyError::RollbackIncomplete { leftovers, .. } = &err else {
            panic!("undo {k}: {err:?}");
        };
        // Later undos may fail as a consequence (a directory that is not empty
        // because a file in it could not be removed); the injected one is first.
        assert!(
            leftovers[0].to_string().contains("injected"),
            "undo {k}: {err}"
        );
        assert!(err.to_string().contains("rollback was incomplete"));
        if let Leftover::NotRestored { path, backup, .. } = &leftovers[0] {
            saw_not_restored = true;
            let original = snapshot(fixture().path());
            let rel = path.strip_prefix(dir.path()).unwrap().to_string_lossy();
            assert_eq!(fs::read(backup).unwrap(), original[rel.as_ref()].2);
        }
    }
    assert!(saw_not_restored);
}

#[test]
fn a_backup_that_cannot_be_removed_is_reported_on_success() {
    let dir = fixture();
    let plan = Plan {
        fail: [None, None, Some(1)],
        ..Plan::default()
    };
    let (result, reached) = apply_with(dir.path(), plan, &changes(dir.path()));
    let applied = result.unwrap();
    // Two replacements and two deletes left four backups.
    assert_eq!(reached.counts[2], 4);
    assert_eq!(applied.unremoved_backups.len(), 1);
    let backup = &applied.unremoved_backups[0];
    assert!(backup.exists());
    let name = backup.file_name().unwrap().to_string_lossy();
    assert!(name.starts_with('.') && name.ends_with(".bak"), "{name}");
    assert!(name.contains(&format!(".code-commit-{}-", std::process::id())));
}

#[test]
fn duplicate_targets_are_refused_before_anything_is_touched() {
    let dir = fixture();
    let before = snapshot(dir.path());
    let mut list = changes(dir.path());
    list.push(delete("./run.sh"));
    let err = apply(&Dir::open(dir.path()).unwrap(), &list).unwrap_err();
    assert!(matches!(&err, ApplyError::Duplicate { rel } if rel == "./run.sh"));
    assert!(err.restored());
    assert_eq!(snapshot(dir.path()), before);
}

#[test]
fn side_names_are_recognizable_short_and_fresh() {
    let dir = tempfile::tempdir().unwrap();
    let handle = Dir::open(dir.path()).unwrap();
    let long = "é".repeat(120);
    let target = OsStr::new(&long);
    let a = side_name(target, "tmp");
    let b = side_name(target, "tmp");
    assert_ne!(a, b);
    let name = a.to_str().unwrap();
    assert!(name.len() < 120, "{name}");
    assert!(name.starts_with(".éé") && name.ends_with(".tmp"));
    // A taken name is skipped, never reused.
    let (temp, _) = create_temp(&handle, target).unwrap();
    let next = free_name(&handle, target, "bak").unwrap();
    assert_ne!(temp, next);
    assert!(!dir.path().join(&next).exists());
}

#[test]
fn targets_that_are_not_regular_files_are_refused() {
    let dir = fixture();
    let before = snapshot(dir.path());
    let root = Dir::open(dir.path()).unwrap();
    let err = apply(&root, &[write("src/lib.rs", b"x"), write("empty", b"x")]).unwrap_err();
    assert_eq!(rolled_back_at(&err), Some((Step::Inspect, "empty")));
    assert_eq!(snapshot(dir.path()), before);
    let err = apply(&root, &[delete("src")]).unwrap_err();
    assert_eq!(rolled_back_at(&err), Some((Step::Inspect, "src")));
    assert_eq!(snapshot(dir.path()), before);
}
/// A directory on the way swapped for a symlink to a folder outside after
/// the target was inspected (as a process left behind by a build could): the
/// write lands in the real directory the handle holds, never through the link.
#[test]
fn a_directory_swapped_for_a_symlink_mid_apply_is_never_written_through() {
    // Forward steps for a replacement of src/lib.rs: Inspect (0), CreateTemp
    // (1), WriteTemp, CopyPermissions, SyncTemp, MoveAside, Place. Swap before
    // each of them in turn.
    for at in 1..7 {
        let dir = fixture();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("lib.rs"), "outside\n").unwrap();
        let outside_before = snapshot(outside.path());
        let root = dir.path().to_path_buf();
        let target = outside.path().to_path_buf();
        fault::before_step(at, move || {
            fs::rename(root.join("src"), root.join("moved-src")).unwrap();
            std::os::unix::fs::symlink(&target, root.join("src")).unwrap();
        });
        let (result, _) = apply_with(
            dir.path(),
            Plan::default(),
            &[write("src/lib.rs", b"new lib\n")],
        );
        result.unwrap_or_else(|e| panic!("swap before step {at}: {e}"));
        assert_eq!(snapshot(outside.path()), outside_before, "step {at}");
        assert_eq!(
            fs::read(dir.path().join("moved-src/lib.rs")).unwrap(),
            b"new lib\n",
            "step {at}"
        );
    }
}

/// A symlink already on the way (planted after the policy looked) fails the
/// change and rolls everything back; nothing outside changes.
#[test]
fn a_symlink_on_the_way_fails_and_rolls_back() {
    let dir = fixture();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).unwrap();
    let before = snapshot(dir.path());
    let root = Dir::open(dir.path()).unwrap();
    for rel in ["link/new.rs", "link/deeper/new.rs", "link"] {
        let err = apply(&root, &[write("src/lib.rs", b"x"), write(rel, b"x")]).unwrap_err();
        assert!(err.restored(), "{err}");
        assert_eq!(rolled_back_at(&err), Some((Step::Inspect, rel)), "{err}");
        assert_eq!(snapshot(dir.path()), before, "{rel}");
        assert_eq!(fs::read_dir(outside.path()).unwrap().count(), 0, "{rel}");
    }
    let err = apply(&root, &[delete("../outside")]).unwrap_err();
    assert_eq!(rolled_back_at(&err), Some((Step::Validate, "../outside")));
}
