//! Discovery, HEAD, revisions, commits and file contents.

use gitctx::{Error, Head, ObjectId, Repo};
use testkit::{TestRepo, assert_starts_with};

use crate::child;
use crate::open;

#[test]
fn discovers_from_a_subdirectory() {
    let repo = TestRepo::new();
    repo.commit_file("src/deep/nested/file.rs", "fn main() {}\n", "init");
    let found = Repo::discover(repo.join("src/deep/nested")).unwrap();
    assert_eq!(found.root(), repo.path());
    assert_eq!(found.git_dir(), repo.join(".git"));
}

#[test]
fn discovers_a_linked_worktree() {
    let repo = TestRepo::new();
    repo.commit_file("a.txt", "a\n", "init");
    let wt = repo.add_worktree("wt", "side");
    std::fs::create_dir_all(wt.join("sub")).unwrap();
    let found = Repo::discover(wt.join("sub")).unwrap();
    assert_eq!(found.root(), wt);
    assert_eq!(found.common_dir(), repo.join(".git"));
    assert_eq!(found.head().unwrap().branch(), Some("side"));
}

#[test]
fn outside_any_repository_is_a_typed_error() {
    let dir = tempfile::tempdir().unwrap();
    match Repo::discover(dir.path()) {
        Err(Error::NotARepository { path }) => assert_eq!(path, dir.path()),
        other => panic!("unexpected {other:?}"),
    }
    let err = Repo::discover(dir.path()).unwrap_err().to_string();
    assert_starts_with(&err, "not a git repository");
}

#[test]
fn a_bare_repository_is_a_typed_error() {
    let repo = TestRepo::new();
    repo.commit_file("a.txt", "a\n", "init");
    let bare = repo.path().parent().unwrap().join("bare.git");
    repo.command()
        .args(["clone", "--quiet", "--bare", "."])
        .arg(&bare)
        .run()
        .unwrap();
    assert!(matches!(
        Repo::discover(&bare),
        Err(Error::BareRepository { .. })
    ));
    assert!(matches!(
        Repo::open(&bare),
        Err(Error::BareRepository { .. })
    ));
}

#[test]
fn head_states() {
    let repo = TestRepo::new();
    let r = open(&repo);
    assert_eq!(
        r.head().unwrap(),
        Head::Unborn {
            name: "main".into()
        }
    );
    assert!(matches!(
        r.resolve_commit("HEAD"),
        Err(Error::UnbornHead { branch }) if branch == "main"
    ));
    let first = repo.commit_file("a.txt", "a\n", "init");
    let first_id: ObjectId = first.parse().unwrap();
    assert_eq!(
        r.head().unwrap(),
        Head::Branch {
            name: "main".into(),
            commit: first_id
        }
    );
    repo.commit_file("a.txt", "b\n", "second");
    repo.checkout_detached(&first);
    assert_eq!(r.head().unwrap(), Head::Detached { commit: first_id });
    assert_eq!(r.head().unwrap().branch(), None);
}

#[test]
fn resolves_revisions() {
    let repo = TestRepo::new();
    let first = repo.commit_file("a.txt", "a\n", "init");
    let second = repo.commit_file("a.txt", "b\n", "second");
    repo.tag_annotated("v1.0.0", &first, "release");
    let r = open(&repo);
    assert_eq!(r.resolve_commit("HEAD").unwrap().to_hex(), second);
    assert_eq!(r.resolve_commit("HEAD~1").unwrap().to_hex(), first);
    assert_eq!(r.resolve_commit(&second[..10]).unwrap().to_hex(), second);
    assert_eq!(r.resolve_commit("v1.0.0").unwrap().to_hex(), first);
    // Unpeeled, the annotated tag is its own object.
    assert_ne!(r.resolve("v1.0.0").unwrap().to_hex(), first);
    for bad in ["nope", "HEAD~5", "", "--output=x"] {
        assert!(
            matches!(r.resolve_commit(bad), Err(Error::RevNotFound { .. })),
            "{bad}"
        );
    }
    let tree = r.resolve("HEAD^{tree}").unwrap().to_hex();
    assert!(matches!(
        r.resolve_commit(&tree),
        Err(Error::WrongObjectKind {
            expected: "commit",
            ..
        })
    ));
}

#[test]
fn commit_info_of_root_and_merge_commits() {
    let repo = TestRepo::new();
    let root = repo.commit_file(
        "a.txt",
        "a\n",
        "Fix the café bug\n\nLonger body — with ünïcode.\n",
    );
    let r = open(&repo);
    let info = r.commit_info("HEAD").unwrap();
    assert_eq!(info.id.to_hex(), root);
    assert!(info.parents.is_empty());
    assert_eq!(info.summary, "Fix the café bug");
    assert_eq!(
        info.message,
        "Fix the café bug\n\nLonger body — with ünïcode.\n"
    );
    assert_eq!(info.author.name, testkit::AUTHOR_NAME);
    assert_eq!(info.author.email, testkit::AUTHOR_EMAIL);
    assert_eq!(info.author.time.seconds, testkit::EPOCH);
    assert_eq!(info.author.time.to_rfc3339(), "2024-01-01T00:00:00+00:00");
    assert!(!info.is_merge());

    let [side, main, _] = repo.merge_side_branch();
    let merge = r.commit_info("HEAD").unwrap();
    assert!(merge.is_merge());
    let parents: Vec<String> = merge.parents.iter().map(|p| p.to_hex()).collect();
    assert_eq!(parents, [main, side]);
    assert_eq!(r.log("HEAD", 10).unwrap().len(), 4);
    assert!(r.is_ancestor(root.parse().unwrap(), merge.id).unwrap());
    assert!(!r.is_ancestor(merge.id, root.parse().unwrap()).unwrap());
}

#[test]
fn file_contents_at_a_revision_and_in_the_index() {
    let repo = TestRepo::new();
    repo.commit_file("dir/naïve.txt", "v1\n", "init");
    repo.write("dir/naïve.txt", "v2\n")
        .stage(&["dir/naïve.txt"]);
    repo.write("dir/naïve.txt", "v3 (unstaged)\n");
    let r = open(&repo);
    assert_eq!(r.file_at("HEAD", "dir/naïve.txt").unwrap(), b"v1\n");
    assert_eq!(r.file_in_index("dir/naïve.txt").unwrap().unwrap(), b"v2\n");
    assert_eq!(r.file_in_index("missing.txt").unwrap(), None);
    assert_eq!(r.file_at_opt("HEAD", "missing.txt").unwrap(), None);
    assert!(matches!(
        r.file_at("HEAD", "missing.txt"),
        Err(Error::PathNotFound { path, at }) if path == "missing.txt" && at == "HEAD"
    ));
    assert!(matches!(
        r.file_at("HEAD", "dir"),
        Err(Error::NotAFile { .. })
    ));
    let binary = [0u8, 159, 146, 150, 0, 1, 2];
    repo.commit_file("img.bin", binary, "binary");
    assert_eq!(r.file_at("HEAD", "img.bin").unwrap(), binary);

    // With the blob's id, as `git rev-parse` names it; the blob by its id.
    let (id, bytes) = r.file_with_id_at("HEAD", "img.bin").unwrap();
    assert_eq!(bytes, binary);
    assert_eq!(id.to_hex(), repo.rev_parse("HEAD:img.bin"));
    assert_eq!(r.blob(id).unwrap().unwrap(), binary);
    assert_eq!(r.blob(gitctx::ObjectId::from_bytes([7; 20])).unwrap(), None);
    assert!(matches!(
        r.file_with_id_at("HEAD", "missing.txt"),
        Err(Error::PathNotFound { .. })
    ));
    assert!(matches!(
        r.file_with_id_at("HEAD", "dir"),
        Err(Error::NotAFile { .. })
    ));
}

/// Inherited `GIT_DIR`/`GIT_WORK_TREE`/`GIT_INDEX_FILE` must not redirect our git
/// processes or libgit2: run in a child process whose environment points elsewhere.
#[test]
fn inherited_git_variables_do_not_redirect_us() {
    let repo = TestRepo::new();
    let sha = repo.commit_file("a.txt", "a\n", "init");
    let decoy = TestRepo::new();
    decoy.commit_file("decoy.txt", "decoy\n", "decoy");
    let instructions = format!("{}\n{sha}", repo.path().display());
    let decoy_git = decoy.join(".git").to_string_lossy().into_owned();
    let decoy_tree = decoy.path().to_string_lossy().into_owned();
    let child = child::spawn(
        "repo::child_sees_its_own_repository",
        &instructions,
        &[
            ("GIT_DIR", decoy_git.as_str()),
            ("GIT_WORK_TREE", decoy_tree.as_str()),
            ("GIT_INDEX_FILE", "/nonexistent/index"),
            ("GIT_OBJECT_DIRECTORY", "/nonexistent/objects"),
            ("GIT_CONFIG_PARAMETERS", "'core.bare'='true'"),
        ],
    );
    child::expect_success(child);
}

#[test]
fn child_sees_its_own_repository() {
    let Some(instructions) = child::instructions() else {
        return;
    };
    let (path, sha) = instructions.split_once('\n').unwrap();
    let r = Repo::discover(path).unwrap();
    assert_eq!(r.resolve_commit("HEAD").unwrap().to_hex(), sha);
    let top = r
        .git()
        .args(["rev-parse", "--show-toplevel"])
        .run_text()
        .unwrap();
    assert_eq!(top.trim(), path);
    let head = r.git().args(["rev-parse", "HEAD"]).run_text().unwrap();
    assert_eq!(head.trim(), sha);
    // The index is read from the repository, not the decoy path.
    let status = r.git().args(["status", "--porcelain"]).run_text().unwrap();
    assert_eq!(status, "");
    let blame = r.blame("a.txt", &Default::default()).unwrap();
    assert_eq!(blame[0].commit.to_hex(), sha);
}

#[test]
fn tracked_files_are_what_the_index_lists() {
    let sub = TestRepo::named("sub");
    sub.commit_file("lib.txt", "lib\n", "sub");
    let repo = TestRepo::new();
    repo.write("b.txt", "b\n")
        .write("a/ünï.txt", "a\n")
        .write("untracked.txt", "u\n");
    repo.stage(&["b.txt", "a/ünï.txt"]);
    repo.add_submodule("vendor/sub", &sub);
    let r = open(&repo);
    assert_eq!(
        r.tracked_files().unwrap(),
        [".gitmodules", "a/ünï.txt", "b.txt"]
    );
    let listed = repo
        .command()
        .args(["ls-files"])
        .config("core.quotePath", "false")
        .run_text()
        .unwrap();
    let mut git: Vec<&str> = listed.lines().filter(|l| *l != "vendor/sub").collect();
    git.sort();
    assert_eq!(r.tracked_files().unwrap(), git);
}

#[test]
fn ignored_paths_are_those_git_ignores_and_does_not_track() {
    let repo = TestRepo::new();
    repo.write(".gitignore", "*.env\nbuild/\n")
        .write("app.env", "KEY=1\n")
        .write("forced.env", "x\n");
    repo.write("build/out.txt", "o\n")
        .write("src/main.rs", "fn main() {}\n");
    repo.stage(&[".gitignore", "src/main.rs"]);
    repo.git(&["add", "-f", "forced.env"]);
    let r = open(&repo);
    assert!(r.is_ignored("app.env").unwrap());
    assert!(r.is_ignored("build/out.txt").unwrap());
    assert!(
        !r.is_ignored("forced.env").unwrap(),
        "tracked files are not ignored"
    );
    assert!(!r.is_ignored("src/main.rs").unwrap());
    assert!(!r.is_ignored("new.txt").unwrap());
}

#[test]
fn log_paths_lists_the_commits_that_touched_files() {
    let repo = TestRepo::new();
    let c1 = repo.commit_file("a.txt", "1\n", "a");
    let c2 = repo.commit_file("b c.txt", "1\n", "b");
    repo.write("a.txt", "2\n")
        .write("b c.txt", "2\n")
        .write("other.txt", "x\n");
    let c3 = repo.commit_all("both");
    let c4 = repo.commit_file(
        "0123456789abcdef0123456789abcdef01234567",
        "x\n",
        "hex-named file",
    );
    let r = open(&repo);
    let paths = vec![
        "a.txt".to_owned(),
        "b c.txt".to_owned(),
        "0123456789abcdef0123456789abcdef01234567".to_owned(),
    ];
    let log = r.log_paths("HEAD", &paths, 10).unwrap();
    let view: Vec<(String, Vec<String>)> = log
        .into_iter()
        .map(|(id, files)| (id.to_hex(), files))
        .collect();
    assert_eq!(
        view,
        [
            (
                c4,
                vec!["0123456789abcdef0123456789abcdef01234567".to_owned()]
            ),
            (c3.clone(), vec!["a.txt".to_owned(), "b c.txt".to_owned()]),
            (c2, vec!["b c.txt".to_owned()]),
            (c1, vec!["a.txt".to_owned()]),
        ]
    );
    assert_eq!(r.log_paths("HEAD", &paths, 1).unwrap().len(), 1);
    assert_eq!(
        r.log_paths("HEAD~1", &paths[..1], 10).unwrap()[0]
            .0
            .to_hex(),
        c3
    );
    assert!(r.log_paths("HEAD", &[], 10).unwrap().is_empty());
}

#[test]
fn tracked_under_lists_what_git_tracks_in_a_directory() {
    let repo = TestRepo::new();
    repo.commit_file("agent-config/config.toml", "x = 1\n", "init");
    repo.write("agent-config-other/a", "a\n");
    repo.write("agent-configx", "a\n");
    repo.stage(&["agent-config-other/a", "agent-configx"]);
    repo.write("untracked/a", "a\n");
    std::os::unix::fs::symlink("/etc", repo.join(".git-agent")).unwrap();
    repo.stage(&[".git-agent"]);
    let git = open(&repo);
    assert_eq!(
        git.tracked_under("agent-config").unwrap(),
        ["agent-config/config.toml"]
    );
    assert_eq!(
        git.tracked_under("agent-config/").unwrap(),
        ["agent-config/config.toml"]
    );
    assert_eq!(git.tracked_under(".git-agent").unwrap(), [".git-agent"]);
    assert!(git.tracked_under("untracked").unwrap().is_empty());
}

#[test]
fn worktree_files_are_read_as_untrusted_input() {
    let repo = TestRepo::new();
    repo.commit_file("config.toml", "a = 1\n", "init");
    std::os::unix::fs::symlink("/dev/zero", repo.join("zero.toml")).unwrap();
    std::os::unix::fs::symlink("config.toml", repo.join("link.toml")).unwrap();
    let git = open(&repo);
    assert_eq!(
        git.read_worktree_file("config.toml", 100).unwrap().unwrap(),
        b"a = 1\n"
    );
    assert_eq!(git.read_worktree_file("missing.toml", 100).unwrap(), None);
    for (rel, says) in [
        ("zero.toml", "symbolic link"),
        ("link.toml", "symbolic link"),
    ] {
        let err = git.read_worktree_file(rel, 100).unwrap_err();
        assert!(matches!(err, Error::Unsafe(_)), "{err:?}");
        assert!(err.to_string().contains(says), "{err}");
    }
    let err = git.read_worktree_file("config.toml", 3).unwrap_err();
    assert!(err.to_string().contains("limit of 3 bytes"), "{err}");
}

#[test]
fn a_file_is_read_only_within_its_bound() {
    let repo = TestRepo::new();
    repo.commit_file("ten.txt", "123456789\n", "ten bytes");
    let git = open(&repo);
    assert_eq!(
        git.file_at_most("HEAD", "ten.txt", 10).unwrap().as_deref(),
        Some(&b"123456789\n"[..])
    );
    assert_eq!(git.file_at_most("HEAD", "ten.txt", 9).unwrap(), None);
    assert!(git.file_at_most("HEAD", "missing.txt", 10).is_err());
}
