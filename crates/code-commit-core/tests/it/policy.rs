//! The path policy against a real repository full of traps.
//!
//! Every test snapshots the whole tree (paths, file contents, symlink targets, the
//! `.git` directory and the directory outside the project) before and after, and
//! asserts that judging paths changed nothing.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use code_commit_core::parse::{Action, parse};
use code_commit_core::policy::{Policy, PolicyError, Rejection, Target, verify};
use testkit::{TestRepo, assert_contains};

/// What one directory entry looks like, without following symlinks.
#[derive(Debug, PartialEq, Eq)]
enum Entry {
    Dir,
    File(Vec<u8>),
    Link(PathBuf),
}

type Snapshot = BTreeMap<PathBuf, Entry>;

fn snapshot(roots: &[&Path]) -> Snapshot {
    fn walk(dir: &Path, out: &mut Snapshot) {
        let mut entries: Vec<_> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            let kind = fs::symlink_metadata(&path).unwrap().file_type();
            if kind.is_symlink() {
                out.insert(path.clone(), Entry::Link(fs::read_link(&path).unwrap()));
            } else if kind.is_dir() {
                out.insert(path.clone(), Entry::Dir);
                walk(&path, out);
            } else {
                out.insert(path.clone(), Entry::File(fs::read(&path).unwrap()));
            }
        }
    }
    let mut out = Snapshot::new();
    for root in roots {
        walk(root, &mut out);
    }
    out
}

/// A project full of traps, and a directory outside it.
struct Fixture {
    repo: TestRepo,
    outside: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let repo = TestRepo::new();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("file"), "outside\n").unwrap();
        fs::write(outside.path().join("linked.txt"), "linked\n").unwrap();
        repo.write(
            ".gitignore",
            "/agent-config\n/target\n*.log\n!keep.log\nsecret/\n!secret/token\n",
        )
        .write("sub/.gitignore", "generated.rs\n")
        .write("sub/mod.rs", "// sub\n")
        .write("src/lib.rs", "pub fn lib() {}\n")
        .write("src/main.rs", "fn main() {}\n")
        .write("README.md", "# Project\n")
        .write("Cargo.toml", "[package]\nname = \"p\"\n")
        .write("Cargo.lock", "# lock\n")
        .write("build.sh", "cargo build\n")
        .write("codeRollup.sh", "cat src/*\n")
        .write("LLMInstructions.md", "be nice\n")
        .write("docs/UserSpecification.md", "spec\n")
        .write("keep.log", "kept\n")
        .write("notadir", "a file\n")
        .write("agent-config/query.txt", "do it\n")
        .write("target/debug/app", "binary\n")
        .write("secret/token", "s3cret\n");
        symlink(outside.path(), &repo.join("link"));
        symlink(Path::new("src"), &repo.join("link-to-dir"));
        symlink(Path::new("nowhere"), &repo.join("dangling"));
        repo.commit_all("fixture");
        // A tracked file that matches the ignore rules.
        repo.write("forced.log", "forced\n");
        repo.git(&["add", "-f", "forced.log"]);
        repo.commit("force-add an ignored file");
        // Rules outside .gitignore files.
        fs::write(repo.join(".git/info/exclude"), "excluded.txt\n").unwrap();
        // A nested repository and a hard link to a file outside.
        repo.git(&["init", "--quiet", "vendor/lib"]);
        repo.write("vendor/lib/x.rs", "nested\n");
        fs::hard_link(outside.path().join("linked.txt"), repo.join("hard.txt")).unwrap();
        Fixture { repo, outside }
    }

    fn snapshot(&self) -> Snapshot {
        snapshot(&[self.repo.path(), self.outside.path()])
    }

    /// The policy of a project that is the whole repository.
    fn policy(&self) -> Policy {
        Policy::new(self.repo.path()).unwrap()
    }

    /// `response` parsed (it must parse) and verified against [`Self::policy`];
    /// asserts that making the policy and verifying changed nothing on disk.
    fn verify(&self, response: &str) -> Result<Vec<(Target, Action)>, Vec<Rejection>> {
        let before = self.snapshot();
        let verified = verify(&self.policy(), &parse(response).unwrap());
        assert_eq!(before, self.snapshot());
        verified
    }
}

#[cfg(unix)]
fn symlink(target: &Path, link: &Path) {
    std::os::unix::fs::symlink(target, link).unwrap();
}

#[cfg(windows)]
fn symlink(target: &Path, link: &Path) {
    if target.is_absolute() && target.is_dir() {
        std::os::windows::fs::symlink_dir(target, link).unwrap();
    } else {
        std::os::windows::fs::symlink_file(target, link).unwrap();
    }
}

/// What a case expects: acceptance with this normalized path, or a rejection
/// whose reason contains this text.
#[derive(Debug)]
enum Expect {
    Ok(String),
    Reject(String),
}

/// One row of a table: the path, the action, the expectation.
#[derive(Debug)]
struct Case {
    raw: String,
    action: Action,
    expected: Expect,
}

/// The path cases: per table (`root`, the trap fixture; `subdirectory`), groups
/// of rows with what they are `about`, each row `[path, action, expectation,
/// text]`: the action `write` (the text `x\n`) or `delete`, the expectation
/// `ok` with the normalized path as text, or `reject` with a piece of the
/// reason.
const PATH_CASES: &str = include_str!("data/policy_paths.json");

/// The rows of `table` in [`PATH_CASES`], in order.
fn cases(table: &str) -> Vec<Case> {
    let all: serde_json::Value = serde_json::from_str(PATH_CASES).expect("the cases are JSON");
    let groups = all[table].as_array().expect("a table of groups");
    let rows = groups
        .iter()
        .flat_map(|group| group["cases"].as_array().expect("a group's rows"));
    rows.map(|row| {
        let text = |i: usize| {
            row[i]
                .as_str()
                .unwrap_or_else(|| panic!("not a [path, action, expectation, text] row: {row}"))
        };
        let action = match text(1) {
            "write" => Action::Write("x\n".to_owned()),
            "delete" => Action::Delete,
            other => panic!("unknown action {other}: {row}"),
        };
        let expected = match text(2) {
            "ok" => Expect::Ok(text(3).to_owned()),
            "reject" => Expect::Reject(text(3).to_owned()),
            other => panic!("unknown expectation {other}: {row}"),
        };
        Case {
            raw: text(0).to_owned(),
            action,
            expected,
        }
    })
    .collect()
}

fn check(policy: &Policy, raw: &str, action: &Action, expected: &Expect) {
    let got = policy.check(raw, action);
    match (expected, &got) {
        (Expect::Ok(rel), Ok(Target { rel: got_rel, abs })) => {
            assert_eq!(got_rel, rel, "{raw:?}");
            let mut want = policy.project_dir().to_path_buf();
            want.extend(rel.split('/'));
            assert_eq!(abs, &want, "{raw:?}");
        }
        (Expect::Reject(needle), Err(Rejection { path, reason })) => {
            assert_eq!(path, raw, "the rejection names the path as written");
            assert!(
                reason.contains(needle),
                "{raw:?} ({action:?}): reason {reason:?} does not mention {needle:?}"
            );
        }
        _ => panic!("{raw:?} ({action:?}): expected {expected:?}, got {got:?}"),
    }
}

const RELATIVE: &str = "paths must be relative to the project directory, without ..";
const GIT: &str = "`.git` (written";
const IGNORED: &str = "is ignored by .gitignore";
const SYMLINK: &str = "is a symbolic link";

#[test]
fn adversarial_paths() {
    let fixture = Fixture::new();
    let policy = fixture.policy();
    let cases = cases("root");
    assert!(cases.len() >= 60, "{} cases", cases.len());
    for case in &cases {
        let before = fixture.snapshot();
        check(&policy, &case.raw, &case.action, &case.expected);
        assert_eq!(
            before,
            fixture.snapshot(),
            "{:?} changed the disk",
            case.raw
        );
    }
}

/// A project in a subdirectory of its repository: ignore rules are matched
/// against repository-relative paths, protected names against project-relative
/// ones, and nothing escapes the subdirectory.
#[test]
fn project_in_a_subdirectory() {
    let repo = TestRepo::new();
    repo.write(".gitignore", "*.log\n/app/out/\n/app/local.txt\n")
        .write("app/src/lib.rs", "pub fn a() {}\n")
        .write("app/.gitignore", "cache/\n")
        .write("shared.txt", "outside the project\n");
    repo.commit_all("fixture");
    let before = snapshot(&[repo.path()]);
    let policy = Policy::new(&repo.join("app")).unwrap();
    assert_eq!(policy.project_dir(), repo.join("app"));
    for case in cases("subdirectory") {
        check(&policy, &case.raw, &case.action, &case.expected);
    }
    assert_eq!(before, snapshot(&[repo.path()]));
}

/// `verify` reports every rejection, in block order, and keeps nothing back.
#[test]
fn verify_collects_every_rejection() {
    let fixture = Fixture::new();
    let response = "\
I changed a few files.
^^^src/lib.rs
pub fn lib() -> u8 { 1 }
^^^end
^^^../escape.rs
x
^^^end
^^^src/new.rs
pub fn new() {}
^^^end
^^^.GIT/hooks/pre-commit
#!/bin/sh
^^^end
^^^Cargo.lock
^^^delete
^^^x.log
log
^^^end
^^^link/file
pwned
^^^end
^^^README.md
^^^delete
^^^src/./new.rs
again
^^^end
^^^newdir
^^^end
^^^newdir/x.rs
^^^end
";
    assert_eq!(parse(response).unwrap().len(), 11);
    let rejections = fixture.verify(response).unwrap_err();
    let got: Vec<(&str, &str)> = rejections
        .iter()
        .map(|r| (r.path.as_str(), r.reason.as_str()))
        .collect();
    let expected = [
        ("../escape.rs", RELATIVE),
        (".GIT/hooks/pre-commit", GIT),
        ("Cargo.lock", "Cargo.lock is protected"),
        ("x.log", IGNORED),
        ("link/file", SYMLINK),
        (
            "src/./new.rs",
            "same file as the earlier block ^^^src/new.rs",
        ),
        (
            "newdir/x.rs",
            "the earlier block ^^^newdir makes `newdir` a file",
        ),
    ];
    assert_eq!(got.len(), expected.len(), "{got:#?}");
    for ((path, reason), (want_path, needle)) in got.iter().zip(expected) {
        assert_eq!(*path, want_path);
        assert!(reason.contains(needle), "{path}: {reason}");
    }
    assert_eq!(
        rejections[0].to_string(),
        format!("../escape.rs: {}", rejections[0].reason)
    );
}

/// The reverse nesting: a file where an earlier block needs a directory.
#[test]
fn verify_refuses_a_file_over_an_earlier_directory() {
    let fixture = Fixture::new();
    let rejections = fixture
        .verify("^^^pkg/a/b.rs\nx\n^^^end\n^^^pkg/a\ny\n^^^end\n")
        .unwrap_err();
    assert_eq!(rejections.len(), 1);
    assert_eq!(rejections[0].path, "pkg/a");
    assert_contains(&rejections[0].reason, "needs `pkg/a` to be a directory");
}

/// An acceptable response comes back as targets in block order.
#[test]
fn verify_accepts_in_block_order() {
    let fixture = Fixture::new();
    let targets = fixture
        .verify(
            "^^^./src/lib.rs\nnew\n^^^end\n^^^README.md\n^^^delete\n^^^deep/new/file.txt\n^^^end\n",
        )
        .unwrap();
    let policy = fixture.policy();
    let project = policy.project_dir();
    assert_eq!(
        targets,
        vec![
            (
                Target {
                    rel: "src/lib.rs".to_owned(),
                    abs: project.join("src").join("lib.rs"),
                },
                Action::Write("new\n".to_owned()),
            ),
            (
                Target {
                    rel: "README.md".to_owned(),
                    abs: project.join("README.md"),
                },
                Action::Delete,
            ),
            (
                Target {
                    rel: "deep/new/file.txt".to_owned(),
                    abs: project.join("deep").join("new").join("file.txt"),
                },
                Action::Write(String::new()),
            ),
        ]
    );
}

/// The project directory must be a directory inside a working tree.
#[test]
fn policy_needs_a_working_tree() {
    let plain = tempfile::tempdir().unwrap();
    let before = snapshot(&[plain.path()]);
    assert!(matches!(
        Policy::new(plain.path()),
        Err(PolicyError::NotInRepository { .. })
    ));
    assert!(matches!(
        Policy::new(&plain.path().join("missing")),
        Err(PolicyError::Resolve { .. })
    ));
    assert_eq!(before, snapshot(&[plain.path()]));

    let repo = TestRepo::new();
    repo.write("file.txt", "x\n");
    let before = snapshot(&[repo.path()]);
    assert!(matches!(
        Policy::new(&repo.join("file.txt")),
        Err(PolicyError::NotADirectory { .. })
    ));
    assert!(matches!(
        Policy::new(&repo.join(".git")),
        Err(PolicyError::OutsideWorkTree { .. })
    ));
    assert!(matches!(
        Policy::new(&repo.join(".git/refs")),
        Err(PolicyError::OutsideWorkTree { .. })
    ));
    // A symlinked spelling of the project resolves to the real directory.
    let alias = tempfile::tempdir().unwrap();
    symlink(repo.path(), &alias.path().join("alias"));
    let policy = Policy::new(&alias.path().join("alias")).unwrap();
    assert_eq!(policy.project_dir(), repo.path());
    assert_eq!(
        policy
            .check("src/a.rs", &Action::Write(String::new()))
            .unwrap()
            .abs,
        repo.join("src/a.rs")
    );
    assert_eq!(before, snapshot(&[repo.path()]));
}
