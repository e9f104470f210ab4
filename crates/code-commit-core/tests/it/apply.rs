//! `apply`: all-or-nothing whole-file changes, through the public API.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use code_commit_core::apply::{Applied, ApplyError, Change};
use safe_io::Dir;

use testkit::assert_contains;

fn apply(root: &Path, changes: &[Change]) -> Result<Applied, ApplyError> {
    code_commit_core::apply::apply(&Dir::open(root).unwrap(), changes)
}

fn write(_root: &Path, rel: &str, content: &str) -> Change {
    Change::Write {
        rel: rel.to_owned(),
        content: content.as_bytes().to_vec(),
    }
}

fn delete(_root: &Path, rel: &str) -> Change {
    Change::Delete {
        rel: rel.to_owned(),
    }
}

/// Writes `content` to the file `rel` under `root` with permission bits `mode`.
fn file(root: &Path, rel: &str, content: &str, mode: u32) {
    fs::write(root.join(rel), content).unwrap();
    fs::set_permissions(root.join(rel), fs::Permissions::from_mode(mode)).unwrap();
}

/// Every entry below `root` (links not followed) with its path relative to
/// `root`, its path and its metadata.
fn walk(root: &Path) -> Vec<(String, PathBuf, fs::Metadata)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let meta = fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path.clone());
            }
            out.push((rel, path, meta));
        }
    }
    out
}

/// Every path under `root` with its kind, permission bits and content.
fn tree(root: &Path) -> BTreeMap<String, (bool, u32, Vec<u8>)> {
    walk(root)
        .into_iter()
        .map(|(rel, path, meta)| {
            let mode = meta.permissions().mode() & 0o7777;
            let content = if meta.is_dir() {
                Vec::new()
            } else {
                fs::read(&path).unwrap()
            };
            (rel, (meta.is_dir(), mode, content))
        })
        .collect()
}

/// Applies `changes`, which must fail and leave the tree under `root` as it
/// was; returns the error.
fn assert_rolled_back(root: &Path, changes: &[Change]) -> ApplyError {
    let before = tree(root);
    let err = apply(root, changes).unwrap_err();
    assert!(err.restored(), "{err}");
    assert_eq!(tree(root), before);
    err
}

/// The paths of a [`tree`], in order.
fn paths<T>(tree: &BTreeMap<String, T>) -> Vec<&str> {
    tree.keys().map(String::as_str).collect()
}

/// The permission bits a new file gets here (umask applied).
fn default_file_mode(dir: &Path) -> u32 {
    let probe = dir.join("probe");
    fs::write(&probe, "").unwrap();
    let mode = fs::metadata(&probe).unwrap().permissions().mode() & 0o7777;
    fs::remove_file(probe).unwrap();
    mode
}

#[test]
fn creates_files_and_nested_directories() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let mode = default_file_mode(root);
    let applied = apply(
        root,
        &[
            write(root, "a/b/c/new.rs", "fn main() {}\n"),
            write(root, "empty.txt", ""),
            write(root, "a/b/sibling.rs", "x"),
        ],
    )
    .unwrap();
    assert_eq!(
        applied.written,
        ["a/b/c/new.rs", "empty.txt", "a/b/sibling.rs"]
    );
    assert_eq!(applied.created, applied.written);
    assert!(applied.deleted.is_empty());
    assert!(applied.unremoved_backups.is_empty());

    let after = tree(root);
    assert_eq!(
        paths(&after),
        [
            "a",
            "a/b",
            "a/b/c",
            "a/b/c/new.rs",
            "a/b/sibling.rs",
            "empty.txt"
        ]
    );
    assert_eq!(
        after["a/b/c/new.rs"],
        (false, mode, b"fn main() {}\n".to_vec())
    );
    assert_eq!(after["empty.txt"], (false, mode, Vec::new()));
    assert_eq!(after["a/b/sibling.rs"].2, b"x");
}

#[test]
fn replacing_keeps_the_file_mode() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    file(root, "run.sh", "#!/bin/sh\necho old\n", 0o755);
    file(root, "secret.txt", "old", 0o600);

    let applied = apply(
        root,
        &[
            write(root, "run.sh", "#!/bin/sh\necho new\n"),
            write(root, "secret.txt", "new"),
        ],
    )
    .unwrap();
    assert_eq!(applied.written, ["run.sh", "secret.txt"]);
    assert!(applied.created.is_empty());

    let after = tree(root);
    assert_eq!(after.len(), 2, "no temporary or backup files: {after:?}");
    assert_eq!(
        after["run.sh"],
        (false, 0o755, b"#!/bin/sh\necho new\n".to_vec())
    );
    assert_eq!(after["secret.txt"], (false, 0o600, b"new".to_vec()));
}

#[test]
fn deletes_files() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir(root.join("src")).unwrap();
    fs::write(root.join("src/old.rs"), "old").unwrap();
    fs::write(root.join("keep.rs"), "keep").unwrap();

    let applied = apply(root, &[delete(root, "src/old.rs")]).unwrap();
    assert_eq!(applied.deleted, ["src/old.rs"]);
    assert!(applied.written.is_empty());

    let after = tree(root);
    // The directory stays: only the file was asked to go.
    assert_eq!(paths(&after), ["keep.rs", "src"]);
}

#[test]
fn no_changes_is_a_no_op() {
    let dir = tempfile::tempdir().unwrap();
    let applied = apply(dir.path(), &[]).unwrap();
    assert!(applied.written.is_empty() && applied.deleted.is_empty());
    assert!(tree(dir.path()).is_empty());
}

#[test]
fn a_late_failure_rolls_back_every_earlier_change() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    file(root, "run.sh", "#!/bin/sh\n", 0o755);
    fs::write(root.join("old.rs"), "old").unwrap();
    fs::write(root.join("notadir"), "a file, not a directory").unwrap();

    let err = assert_rolled_back(
        root,
        &[
            write(root, "run.sh", "#!/bin/bash\nexit 1\n"),
            write(root, "new/dir/file.rs", "new"),
            delete(root, "old.rs"),
            write(root, "notadir/x", "cannot exist"),
        ],
    );
    let ApplyError::RolledBack { rel, .. } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(rel, "notadir/x");
    let message = err.to_string();
    assert_contains(&message, "notadir/x");
    assert_contains(&message, "rolled back");
}

#[test]
fn a_failure_below_a_file_rolls_back_created_directories() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(root.join("notadir"), "file").unwrap();
    assert_rolled_back(
        root,
        &[
            write(root, "fresh/a/b.rs", "b"),
            write(root, "notadir/deeper/x", "cannot exist"),
        ],
    );
}
