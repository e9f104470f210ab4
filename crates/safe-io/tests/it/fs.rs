use std::io::{Read, Write};
use std::os::unix::fs::symlink;
use std::path::Path;

use safe_io::fs::{
    CONFIG_LIMIT, Dir, Error, FileKind, open_dir_confined, read_regular, read_within,
};

fn tree() -> (tempfile::TempDir, tempfile::TempDir) {
    let inside = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), "outside secret\n").unwrap();
    std::fs::create_dir(inside.path().join("sub")).unwrap();
    std::fs::write(inside.path().join("sub/file.txt"), "hello\n").unwrap();
    (inside, outside)
}

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn reads_regular_files_below_the_root() {
    let (inside, _outside) = tree();
    let root = Dir::open(inside.path()).unwrap();
    assert_eq!(root.read("sub/file.txt", 100).unwrap(), b"hello\n");
    assert_eq!(root.read_optional("sub/missing", 100).unwrap(), None);
    assert_eq!(root.read_optional("missing/dir/file", 100).unwrap(), None);
    assert_eq!(
        read_within(inside.path(), Path::new("./sub/file.txt"), 100).unwrap(),
        Some(b"hello\n".to_vec())
    );
    assert_eq!(root.kind("sub").unwrap(), Some(FileKind::Dir));
    assert_eq!(root.kind("sub/file.txt").unwrap(), Some(FileKind::File));
    assert_eq!(root.kind("nope/file.txt").unwrap(), None);
}

#[test]
fn never_follows_a_link_below_the_root() {
    let (inside, outside) = tree();
    let root = Dir::open(inside.path()).unwrap();
    symlink(outside.path().join("secret"), inside.path().join("link")).unwrap();
    symlink(outside.path(), inside.path().join("dirlink")).unwrap();
    symlink("sub/file.txt", inside.path().join("inner-link")).unwrap();
    for rel in ["link", "dirlink/secret", "inner-link"] {
        match root.read(rel, 100) {
            Err(Error::Symlink { path }) => assert!(path.starts_with(inside.path()), "{rel}"),
            other => panic!("{rel}: {other:?}"),
        }
    }
    assert_eq!(root.kind("link").unwrap(), Some(FileKind::Symlink));
    assert!(matches!(
        root.open_dir("dirlink"),
        Err(Error::Symlink { .. })
    ));
    assert!(matches!(
        root.create_dir_all("dirlink/new"),
        Err(Error::Symlink { .. })
    ));
    assert!(!outside.path().join("new").exists());
}

#[test]
fn writes_never_go_through_a_planted_link() {
    let (inside, outside) = tree();
    let root = Dir::open(inside.path()).unwrap();
    let target = outside.path().join("secret");
    symlink(&target, inside.path().join("COMMIT_MSG")).unwrap();
    symlink(outside.path(), inside.path().join("sessions")).unwrap();

    // Replacing: the link itself is replaced, its target untouched.
    root.write("COMMIT_MSG", b"message\n").unwrap();
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "outside secret\n"
    );
    assert_eq!(
        std::fs::read_to_string(inside.path().join("COMMIT_MSG")).unwrap(),
        "message\n"
    );
    assert!(
        !std::fs::symlink_metadata(inside.path().join("COMMIT_MSG"))
            .unwrap()
            .file_type()
            .is_symlink()
    );

    // Appending or creating through a link is refused.
    symlink(&target, inside.path().join("log")).unwrap();
    assert!(matches!(root.append("log"), Err(Error::Symlink { .. })));
    let err = root.create_new("log").unwrap_err();
    assert!(
        matches!(&err, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::AlreadyExists),
        "{err:?}"
    );
    assert!(matches!(
        root.write("sessions/x", b"x"),
        Err(Error::Symlink { .. })
    ));
    assert!(matches!(
        root.create_dir_all("sessions/a/b"),
        Err(Error::Symlink { .. })
    ));
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "outside secret\n"
    );
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 1);
}

#[test]
fn creates_directories_and_files() {
    let (inside, _outside) = tree();
    let root = Dir::open(inside.path()).unwrap();
    let deep = root.create_dir_all(".git-agent/sessions/one").unwrap();
    assert!(deep.path().ends_with(".git-agent/sessions/one"));
    deep.write("a.txt", b"a").unwrap();
    let mut f = deep.append("events.ndjson").unwrap();
    f.write_all(b"1\n").unwrap();
    let mut f = deep.append("events.ndjson").unwrap();
    f.write_all(b"2\n").unwrap();
    assert_eq!(deep.read("events.ndjson", 10).unwrap(), b"1\n2\n");
    assert!(
        root.create_dir(".git-agent/sessions/one")
            .unwrap()
            .is_none()
    );
    assert!(
        root.create_dir(".git-agent/sessions/two")
            .unwrap()
            .is_some()
    );
    root.create_dir_all("gone/inner").unwrap();
    assert!(root.remove_dir("gone/inner").unwrap());
    assert!(!root.remove_dir("gone/inner").unwrap());
    assert!(root.remove_dir("gone").unwrap());
    assert!(root.remove_dir(".git-agent").is_err(), "not empty");
    symlink(inside.path().join("sub"), inside.path().join("sublink")).unwrap();
    assert!(matches!(
        root.remove_dir("sublink"),
        Err(Error::NotDirectory {
            kind: FileKind::Symlink,
            ..
        })
    ));
    assert!(inside.path().join("sub").is_dir());
    std::fs::remove_file(inside.path().join("sublink")).unwrap();
    deep.rename("a.txt", "b.txt").unwrap();
    assert!(deep.remove_file("b.txt").unwrap());
    assert!(!deep.remove_file("b.txt").unwrap());
    let names: Vec<_> = root
        .open_dir(".git-agent/sessions")
        .unwrap()
        .entries()
        .unwrap();
    assert_eq!(
        names,
        [("one".into(), FileKind::Dir), ("two".into(), FileKind::Dir)]
    );
    // No temporary files left behind by atomic writes.
    assert_eq!(deep.entries().unwrap().len(), 1);
}

#[test]
fn bad_paths_are_refused() {
    let (inside, _outside) = tree();
    let root = Dir::open(inside.path()).unwrap();
    for rel in ["../x", "/etc/passwd", "sub/../../x", ""] {
        assert!(
            matches!(root.read(rel, 10), Err(Error::BadPath { .. })),
            "{rel}"
        );
    }
}

#[test]
fn special_files_are_not_read_and_do_not_block() {
    let (inside, _outside) = tree();
    let root = Dir::open(inside.path()).unwrap();
    mkfifo(&inside.path().join("fifo"));
    assert!(matches!(
        root.read("fifo", CONFIG_LIMIT),
        Err(Error::NotRegular {
            kind: FileKind::Fifo,
            ..
        })
    ));
    // Writing to a FIFO nobody reads neither blocks nor succeeds.
    assert!(matches!(
        root.append("fifo"),
        Err(Error::NotRegular {
            kind: FileKind::Fifo,
            ..
        })
    ));
    assert!(matches!(
        read_regular(Path::new("/dev/zero"), CONFIG_LIMIT),
        Err(Error::NotRegular {
            kind: FileKind::CharDevice,
            ..
        })
    ));
    assert!(matches!(
        read_regular(&inside.path().join("fifo"), CONFIG_LIMIT),
        Err(Error::NotRegular {
            kind: FileKind::Fifo,
            ..
        })
    ));
    // A directory where a file is expected.
    assert!(matches!(
        root.read("sub", 10),
        Err(Error::NotRegular {
            kind: FileKind::Dir,
            ..
        })
    ));
    assert!(matches!(
        root.open_dir("sub/file.txt"),
        Err(Error::NotDirectory {
            kind: FileKind::File,
            ..
        })
    ));
}

#[test]
fn reads_are_bounded() {
    let (inside, _outside) = tree();
    let root = Dir::open(inside.path()).unwrap();
    root.write("big", &vec![b'x'; 4096]).unwrap();
    assert_eq!(root.read("big", 4096).unwrap().len(), 4096);
    let err = root.read("big", 4095).unwrap_err();
    assert!(
        matches!(err, Error::TooLarge { limit: 4095, .. }),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .contains("larger than the limit of 4095 bytes"),
        "{err}"
    );
    let mut file = root.open_file("big").unwrap();
    let mut head = [0u8; 3];
    file.read_exact(&mut head).unwrap();
    assert_eq!(&head, b"xxx");
}

#[test]
fn confined_opening_follows_links_only_outside_the_repository() {
    let base = tempfile::tempdir().unwrap();
    let base = base.path().canonicalize().unwrap();
    let repo = base.join("repo");
    std::fs::create_dir_all(repo.join("docs")).unwrap();
    std::fs::create_dir_all(base.join("outside")).unwrap();
    // The user's own link to the repository, outside it: followed.
    symlink(&repo, base.join("alias")).unwrap();
    // A link committed inside the repository: never followed.
    symlink(base.join("outside"), repo.join("evil")).unwrap();

    let dir = open_dir_confined(&repo.join("docs"), &repo).unwrap();
    assert_eq!(dir.path(), repo.join("docs"));
    let dir = open_dir_confined(&base.join("alias/docs"), &repo).unwrap();
    dir.write("notes.md", b"x").unwrap();
    assert!(repo.join("docs/notes.md").is_file());
    assert!(matches!(
        open_dir_confined(&repo.join("evil"), &repo),
        Err(Error::Symlink { .. })
    ));
    assert!(matches!(
        open_dir_confined(&base.join("alias/evil"), &repo),
        Err(Error::Symlink { .. })
    ));
    assert!(matches!(
        open_dir_confined(&repo.join("docs/../evil"), &repo),
        Err(Error::Symlink { .. })
    ));
    // Outside the repository, everything is the user's.
    let dir = open_dir_confined(&base.join("outside"), &repo).unwrap();
    assert_eq!(dir.path(), base.join("outside"));
}
