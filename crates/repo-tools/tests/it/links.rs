//! Symbolic links and special files: every tool judges the target a path leads to
//! by `read_file`'s rule, and none blocks on a FIFO.
//!
//! The repository is the attacker's: it tracks `envlink -> .env` with `.env`
//! ignored (issue 13, attack 7), links into `.git/`, out of the workspace, to an
//! ignored directory and through a chain of links, and the working tree holds
//! FIFOs where files are expected. Every secret holds the word `SECRET`; no tool
//! result may contain it.

use std::path::Path;

use serde_json::{Value, json};
use testkit::TestRepo;

use crate::{call, code, data, mkfifo, symlink};

/// The hostile repository and the directory outside it holding a secret.
struct Hostile {
    repo: TestRepo,
    _outside: tempfile::TempDir,
}

/// Creates each (link, target) symbolic link in `repo`.
fn link_all(repo: &TestRepo, links: &[(&str, &Path)]) {
    for (link, target) in links {
        symlink(target, &repo.join(link));
    }
}

fn hostile() -> Hostile {
    let repo = TestRepo::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "SECRET outside\n").unwrap();
    repo.write(".gitignore", ".env\nsecrets/\n")
        .write("README.md", "visible readme\n")
        .write("src/lib.rs", "// visible source\n")
        .write("data.txt", "visible data\n");
    let links: [(&str, &Path); 10] = [
        ("envlink", Path::new(".env")),
        ("chain", Path::new("envlink")),
        ("secretsdir", Path::new("secrets")),
        ("gitlink", Path::new(".git/config")),
        ("outside.txt", &outside.path().join("secret.txt")),
        ("gone", &outside.path().join("missing/secret.txt")),
        ("srclink", Path::new("src")),
        ("readme-link", Path::new("README.md")),
        ("pipelink", Path::new("pipe")),
        ("dangling", Path::new("missing.txt")),
    ];
    link_all(&repo, &links);
    repo.commit_all("a repository with links");
    // What the links lead to is not tracked: ignored secrets, a FIFO, and a
    // secret in the repository's own config.
    repo.write(".env", "API_KEY=SECRET-env\n")
        .write("secrets/token.txt", "SECRET token\n");
    repo.git(&["config", "hostile.value", "SECRET-in-git-config"]);
    mkfifo(&repo.join("pipe"));
    // A tracked file replaced by a FIFO in the working tree.
    std::fs::remove_file(repo.join("data.txt")).unwrap();
    mkfifo(&repo.join("data.txt"));
    // Not tracked (git refuses a symlinked .gitmodules), but on disk.
    symlink(
        &outside.path().join("secret.txt"),
        &repo.join(".gitmodules"),
    );
    Hostile {
        repo,
        _outside: outside,
    }
}

/// Why `list_files` refuses a link to an ignored file.
const IGNORED: &str = "leads to a file git ignores and does not track";
/// Why `list_files` refuses a link out of the workspace or into `.git`.
const OUTSIDE: &str = "leads outside the workspace or into .git";

/// Asserts the links a `list_files` envelope refuses: (path, reason), in order.
fn assert_refused(envelope: &Value, expected: &[(&str, &str)]) {
    let expected: Vec<Value> = expected
        .iter()
        .map(|(path, reason)| json!({"path": path, "reason": reason}))
        .collect();
    assert_eq!(data(envelope)["refused_links"], json!(expected));
}

fn assert_no_secret(envelope: &Value) {
    assert!(!envelope.to_string().contains("SECRET"), "{envelope:#}");
}

/// Calls `tool` in `root` and checks that its envelope holds no secret.
fn call_clean(root: &Path, tool: &str, arguments: Value) -> Value {
    let envelope = call(root, tool, arguments);
    assert_no_secret(&envelope);
    envelope
}

impl Hostile {
    /// Calls `tool` in the hostile repository (no secret may come back).
    fn call(&self, tool: &str, arguments: Value) -> Value {
        call_clean(self.repo.path(), tool, arguments)
    }
}

#[test]
fn search_files_does_not_follow_links_to_what_read_file_refuses() {
    let hostile = hostile();
    let env = hostile.call("search_files", json!({"pattern": "SEC(R)ET"}));
    assert_eq!(data(&env)["total_matches"], 0);
    // envlink, chain, secretsdir, gitlink, outside.txt, gone are refused; srclink
    // is a directory; pipelink and data.txt are FIFOs; dangling leads nowhere.
    assert_eq!(
        data(&env)["files_skipped"],
        json!({"binary": 0, "too_large": 0, "unreadable": 10})
    );
    // What links lead to inside the workspace is still searched.
    let env = hostile.call("search_files", json!({"pattern": "visible"}));
    assert_eq!(
        data(&env)["matches"],
        json!([
            {"path": "README.md", "line": 1, "text": "visible readme"},
            {"path": "readme-link", "line": 1, "text": "visible readme"},
            {"path": "src/lib.rs", "line": 1, "text": "// visible source"},
        ])
    );
    assert_eq!(data(&env)["files_searched"], 4);
}

#[test]
fn list_files_marks_the_links_the_other_tools_refuse() {
    let hostile = hostile();
    let env = hostile.call("list_files", json!({}));
    assert_eq!(data(&env)["total"], 14);
    assert_eq!(
        data(&env)["files"],
        json!([
            ".gitignore",
            "README.md",
            "chain",
            "dangling",
            "data.txt",
            "envlink",
            "gitlink",
            "gone",
            "outside.txt",
            "pipelink",
            "readme-link",
            "secretsdir",
            "src/lib.rs",
            "srclink",
        ])
    );
    assert_refused(
        &env,
        &[
            ("chain", IGNORED),
            ("envlink", IGNORED),
            ("gitlink", OUTSIDE),
            ("gone", OUTSIDE),
            ("outside.txt", OUTSIDE),
            ("secretsdir", IGNORED),
        ],
    );
    let env = hostile.call("list_files", json!({"path": "src"}));
    assert_refused(&env, &[]);
}

#[test]
fn read_file_refuses_by_target_and_never_blocks() {
    let hostile = hostile();
    let cases = [
        ("envlink", "IGNORED"),
        ("chain", "IGNORED"),
        (".env", "IGNORED"),
        ("secretsdir/token.txt", "IGNORED"),
        ("secrets/token.txt", "IGNORED"),
        ("gitlink", "INVALID_ARGUMENT"),
        ("outside.txt", "INVALID_ARGUMENT"),
        // Dangling, but out: refused the same, so nothing is learnt about what
        // exists outside.
        ("gone", "INVALID_ARGUMENT"),
        ("srclink", "NOT_A_FILE"),
        ("pipelink", "NOT_A_FILE"),
        ("pipe", "NOT_A_FILE"),
        ("data.txt", "NOT_A_FILE"),
        ("dangling", "NOT_FOUND"),
        (".gitmodules", "INVALID_ARGUMENT"),
    ];
    for (path, expected) in cases {
        let env = hostile.call("read_file", json!({"path": path}));
        assert_eq!(code(&env), expected, "{path}: {env:#}");
    }
    let env = hostile.call("read_file", json!({"path": "envlink"}));
    let message = env["error"]["message"].as_str().unwrap();
    assert!(message.contains("'.env'"), "{message}");
    let env = hostile.call("read_file", json!({"path": "pipe"}));
    let message = env["error"]["message"].as_str().unwrap();
    assert!(message.contains("a FIFO"), "{message}");
    // Links inside the workspace to what may be read are followed.
    let env = hostile.call("read_file", json!({"path": "readme-link"}));
    assert_eq!(data(&env)["text"], "1| visible readme\n");
    let env = hostile.call("read_file", json!({"path": "srclink/lib.rs"}));
    assert_eq!(data(&env)["text"], "1| // visible source\n");
}

#[test]
fn repo_summary_reads_nothing_through_links() {
    let hostile = hostile();
    let env = hostile.call("repo_summary", json!({}));
    // `.gitmodules` is a link to a file outside: it does not count.
    assert_eq!(data(&env)["has_gitmodules"], false);
    let entries = data(&env)["top_level_entries"].as_array().unwrap();
    for (name, kind) in [
        (".gitmodules", "symlink"),
        ("envlink", "symlink"),
        ("pipe", "other"),
        ("data.txt", "other"),
        ("src", "dir"),
        ("srclink", "symlink"),
    ] {
        let entry = json!({"name": name, "kind": kind});
        assert!(entries.contains(&entry), "{entry} in {entries:?}");
    }
    assert_eq!(data(&env)["tracked_files"], 14);
}

#[test]
fn a_workspace_below_the_top_refuses_links_up_and_out() {
    let repo = TestRepo::with_files(&[
        (".gitignore", ".env\n"),
        ("README.md", "top readme\n"),
        ("sub/own.txt", "visible\n"),
    ]);
    link_all(
        &repo,
        &[
            ("sub/env", Path::new("../.env")),
            ("sub/readme", Path::new("../README.md")),
            ("sub/config", Path::new("../.git/config")),
        ],
    );
    repo.commit_all("links up");
    repo.write(".env", "SECRET=1\n");
    let sub = repo.join("sub");
    let env = call_clean(&sub, "search_files", json!({"pattern": "."}));
    assert_eq!(
        data(&env)["matches"],
        json!([{"path": "own.txt", "line": 1, "text": "visible"}])
    );
    assert_eq!(data(&env)["files_skipped"]["unreadable"], 3);
    let env = call(&sub, "list_files", json!({}));
    assert_refused(
        &env,
        &[("config", OUTSIDE), ("env", OUTSIDE), ("readme", OUTSIDE)],
    );
    for path in ["env", "readme", "config"] {
        let env = call(&sub, "read_file", json!({"path": path}));
        assert_eq!(code(&env), "INVALID_ARGUMENT", "{path}");
    }
}

#[test]
fn tracked_files_git_ignores_are_still_read_through_links() {
    let repo = TestRepo::new();
    repo.write(".gitignore", "*.env\n")
        .write("kept.env", "tracked anyway\n");
    repo.stage(&[".gitignore"]);
    repo.git(&["add", "-f", "kept.env"]);
    symlink(Path::new("kept.env"), &repo.join("kept-link"));
    repo.stage(&["kept-link"]);
    repo.commit("a tracked file matching an ignore pattern");
    let env = call(repo.path(), "read_file", json!({"path": "kept-link"}));
    assert_eq!(data(&env)["text"], "1| tracked anyway\n");
    let env = call(repo.path(), "search_files", json!({"pattern": "anyway"}));
    assert_eq!(data(&env)["total_matches"], 2);
    let env = call(repo.path(), "list_files", json!({}));
    assert_refused(&env, &[]);
}

#[test]
fn a_tracked_directory_swapped_for_a_link_is_judged_by_its_target() {
    // `secrets/` is ignored: only `conf/` is committed.
    let repo = TestRepo::with_commit(
        &[
            (".gitignore", "secrets/\n"),
            ("conf/token.txt", "visible token\n"),
            ("secrets/token.txt", "SECRET token\n"),
        ],
        "a tracked directory",
    );
    // The working tree now has `conf -> secrets`, an ignored directory holding
    // a file of the same name.
    std::fs::remove_dir_all(repo.join("conf")).unwrap();
    symlink(Path::new("secrets"), &repo.join("conf"));
    let env = call_clean(repo.path(), "search_files", json!({"pattern": "token"}));
    assert_eq!(data(&env)["total_matches"], 0);
    assert_eq!(data(&env)["files_skipped"]["unreadable"], 1);
    let env = call_clean(repo.path(), "read_file", json!({"path": "conf/token.txt"}));
    assert_eq!(code(&env), "IGNORED");
    let env = call(repo.path(), "list_files", json!({}));
    assert_refused(&env, &[("conf/token.txt", IGNORED)]);
}
