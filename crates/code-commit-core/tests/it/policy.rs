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
#[derive(Debug, Clone, Copy)]
enum Expect {
    Ok(&'static str),
    Reject(&'static str),
}

/// One row of a table: the path, the action, the expectation.
type Case = (&'static str, fn() -> Action, Expect);

const W: fn() -> Action = || Action::Write("x\n".to_owned());
const D: fn() -> Action = || Action::Delete;

fn check(policy: &Policy, raw: &str, action: &Action, expected: Expect) {
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
    use Expect::{Ok, Reject};
    let fixture = Fixture::new();
    let policy = Policy::new(fixture.repo.path()).unwrap();
    let cases: &[Case] = &[
        // Traversal.
        ("../x", W, Reject(RELATIVE)),
        ("a/../../x", W, Reject(RELATIVE)),
        ("./../x", W, Reject(RELATIVE)),
        ("a/./../../x", W, Reject(RELATIVE)),
        ("src/../src/lib.rs", W, Reject(RELATIVE)),
        ("..", D, Reject(RELATIVE)),
        ("...", W, Reject(RELATIVE)),
        (".. /x", W, Reject(RELATIVE)),
        ("..\u{200b}/x", W, Reject(RELATIVE)),
        ("src/.../x", W, Reject(RELATIVE)),
        // Absolute, home, drives, UNC, streams.
        ("/etc/passwd", W, Reject("is absolute")),
        ("C:\\x", W, Reject("backslash")),
        ("c:/x", W, Reject("drive letter")),
        ("C:x", W, Reject("drive letter")),
        ("\\\\server\\share", W, Reject("backslash")),
        ("//server/x", W, Reject("UNC")),
        ("~/x", W, Reject("home directory")),
        ("~root/.bashrc", W, Reject("home directory")),
        ("src\\lib.rs", W, Reject("backslash")),
        ("src/a:b.rs", W, Reject("`:` is not allowed")),
        ("file.txt:stream", W, Reject("alternate data stream")),
        // Empty, control characters, empty components.
        ("", W, Reject("the path is empty")),
        ("a\0b", W, Reject("control character U+0000")),
        ("a\nb", W, Reject("control character U+000A")),
        ("src/\u{7f}.rs", W, Reject("control character U+007F")),
        ("a//b", W, Reject("empty component")),
        ("src/", W, Reject("ends with /")),
        (".", W, Reject("the project directory itself")),
        ("./", W, Reject("ends with /")),
        // .git in every spelling.
        (".git/config", W, Reject(GIT)),
        (".git", W, Reject(GIT)),
        (".GIT/HEAD", W, Reject(GIT)),
        (".Git/HEAD", W, Reject(GIT)),
        (".git./config", W, Reject(GIT)),
        (".git /config", W, Reject(GIT)),
        (".git . ./config", W, Reject(GIT)),
        (".g\u{200c}it/config", W, Reject(GIT)),
        (".git\u{200d}/x", W, Reject(GIT)),
        ("\u{feff}.git/hooks/pre-commit", W, Reject(GIT)),
        (".gi\u{fe0f}t/hooks/post-checkout", W, Reject(GIT)),
        ("git~1/config", W, Reject(GIT)),
        ("GIT~1/HEAD", W, Reject(GIT)),
        ("sub/.git/config", W, Reject(GIT)),
        ("sub/deeper/.GIT./x", D, Reject(GIT)),
        (".git::$INDEX_ALLOCATION/x", W, Reject("`:` is not allowed")),
        // Protected names, any case and spelling.
        (".gitignore", W, Reject(".gitignore files are protected")),
        (".GitIgnore", W, Reject(".gitignore files are protected")),
        (
            "sub/.gitignore",
            D,
            Reject(".gitignore files are protected"),
        ),
        (".gitignore.", W, Reject(".gitignore files are protected")),
        (".gitattributes", W, Reject(".gitattributes")),
        ("src/.gitattributes", W, Reject(".gitattributes")),
        (".gitmodules", W, Reject(".gitmodules")),
        ("Cargo.lock", W, Reject("Cargo.lock is protected")),
        ("CARGO.LOCK", W, Reject("Cargo.lock is protected")),
        ("sub/cargo.lock", W, Reject("Cargo.lock is protected")),
        ("Cargo.lock ", D, Reject("Cargo.lock is protected")),
        ("Cargo.loc\u{200b}k", W, Reject("Cargo.lock is protected")),
        ("build.sh", W, Reject("build.sh is protected")),
        ("Build.sh", W, Reject("build.sh is protected")),
        ("./BUILD.SH", D, Reject("build.sh is protected")),
        ("codeRollup.sh", D, Reject("codeRollup.sh is protected")),
        ("CODEROLLUP.SH", W, Reject("codeRollup.sh is protected")),
        (
            "LLMInstructions.md",
            W,
            Reject("LLMInstructions.md is protected"),
        ),
        (
            "docs/llminstructions.MD",
            W,
            Reject("LLMInstructions.md is protected"),
        ),
        (
            "UserSpecification.md",
            W,
            Reject("UserSpecification.md files are protected"),
        ),
        (
            "docs/userspecification.md",
            D,
            Reject("UserSpecification.md files are protected"),
        ),
        (
            "a/b/USERSPECIFICATION.MD",
            W,
            Reject("UserSpecification.md files are protected"),
        ),
        (
            "agent-config/query.txt",
            W,
            Reject("agent-config/ is protected"),
        ),
        ("agent-config", W, Reject("agent-config/ is protected")),
        ("Agent-Config/x", W, Reject("agent-config/ is protected")),
        (
            "./agent-config/new/key",
            W,
            Reject("agent-config/ is protected"),
        ),
        ("target/debug/app", D, Reject("target/ is protected")),
        ("TARGET/debug/x", W, Reject("target/ is protected")),
        ("target", W, Reject("target/ is protected")),
        // Only the top-level ones are protected.
        ("scripts/build.sh", W, Ok("scripts/build.sh")),
        ("tools/codeRollup.sh", W, Ok("tools/codeRollup.sh")),
        ("src/target/x.rs", W, Ok("src/target/x.rs")),
        (
            "docs/agent-config/notes.md",
            W,
            Ok("docs/agent-config/notes.md"),
        ),
        (
            ".github/workflows/ci.yml",
            W,
            Ok(".github/workflows/ci.yml"),
        ),
        (".gitkeep", W, Ok(".gitkeep")),
        // Invisible characters anywhere else.
        (
            "src/ma\u{200b}in.rs",
            W,
            Reject("invisible character U+200B"),
        ),
        ("src/\u{202e}sr.rs", W, Reject("invisible character U+202E")),
        ("src/a\u{ad}b.rs", W, Reject("invisible character U+00AD")),
        // Git's ignore rules, tracked or not.
        ("x.log", W, Reject(IGNORED)),
        ("logs/deep/x.log", W, Reject(IGNORED)),
        ("forced.log", W, Reject(IGNORED)),
        ("forced.log", D, Reject(IGNORED)),
        ("secret/token", W, Reject("`secret/` is ignored")),
        ("secret/new/b.txt", W, Reject("`secret/` is ignored")),
        ("a/secret/b.txt", W, Reject("`a/secret/` is ignored")),
        ("keep.log", W, Ok("keep.log")),
        ("sub/generated.rs", W, Reject(IGNORED)),
        ("generated.rs", W, Ok("generated.rs")),
        ("excluded.txt", W, Reject(IGNORED)),
        // Symlinks: through, at, dangling, into a directory inside.
        ("link/file", W, Reject("`link` is a symbolic link")),
        ("link/new.txt", W, Reject(SYMLINK)),
        ("link", W, Reject(SYMLINK)),
        ("dangling", W, Reject("`dangling` is a symbolic link")),
        ("dangling", D, Reject(SYMLINK)),
        (
            "link-to-dir/x",
            W,
            Reject("`link-to-dir` is a symbolic link"),
        ),
        ("link-to-dir/lib.rs", D, Reject(SYMLINK)),
        // The file system.
        (
            "notadir/x",
            W,
            Reject("`notadir` is a file, not a directory"),
        ),
        (
            "notadir/x/y",
            W,
            Reject("`notadir` is a file, not a directory"),
        ),
        (
            "notadir/x",
            D,
            Reject("`notadir` is a file, not a directory"),
        ),
        ("src", W, Reject("`src` is a directory")),
        ("src", D, Reject("`src` is a directory")),
        ("./sub", W, Reject("`sub` is a directory")),
        ("missing.rs", D, Reject("`missing.rs` does not exist")),
        ("missing/dir/x.rs", D, Reject("`missing` does not exist")),
        (
            "src/missing.rs",
            D,
            Reject("does not exist, so `src/missing.rs` cannot be deleted"),
        ),
        ("vendor/lib/x.rs", W, Reject("separate git repository")),
        ("vendor/lib/new.rs", W, Reject("separate git repository")),
        ("hard.txt", W, Reject("hard links")),
        ("hard.txt", D, Ok("hard.txt")),
        // Allowed.
        ("src/new.rs", W, Ok("src/new.rs")),
        ("./src/lib.rs", W, Ok("src/lib.rs")),
        ("src/./lib.rs", D, Ok("src/lib.rs")),
        ("././src/main.rs", D, Ok("src/main.rs")),
        ("deep/new/dir/file.txt", W, Ok("deep/new/dir/file.txt")),
        ("README.md", W, Ok("README.md")),
        ("README.md", D, Ok("README.md")),
        ("notadir", W, Ok("notadir")),
        ("Cargo.toml", W, Ok("Cargo.toml")),
        ("sub/mod.rs", D, Ok("sub/mod.rs")),
        ("a b/c d.rs", W, Ok("a b/c d.rs")),
        ("src/ünïcödé.rs", W, Ok("src/ünïcödé.rs")),
        ("src/.hidden", W, Ok("src/.hidden")),
        ("src/x.log.rs", W, Ok("src/x.log.rs")),
        ("vendor/readme.txt", W, Ok("vendor/readme.txt")),
    ];
    assert!(cases.len() >= 60, "{} cases", cases.len());
    for (raw, action, expected) in cases {
        let before = fixture.snapshot();
        check(&policy, raw, &action(), *expected);
        assert_eq!(before, fixture.snapshot(), "{raw:?} changed the disk");
    }
}

/// A project in a subdirectory of its repository: ignore rules are matched
/// against repository-relative paths, protected names against project-relative
/// ones, and nothing escapes the subdirectory.
#[test]
fn project_in_a_subdirectory() {
    use Expect::{Ok, Reject};
    let repo = TestRepo::new();
    repo.write(".gitignore", "*.log\n/app/out/\n/app/local.txt\n")
        .write("app/src/lib.rs", "pub fn a() {}\n")
        .write("app/.gitignore", "cache/\n")
        .write("shared.txt", "outside the project\n");
    repo.commit_all("fixture");
    let before = snapshot(&[repo.path()]);
    let policy = Policy::new(&repo.join("app")).unwrap();
    assert_eq!(policy.project_dir(), repo.join("app"));
    let cases: &[Case] = &[
        ("src/lib.rs", D, Ok("src/lib.rs")),
        ("src/new.rs", W, Ok("src/new.rs")),
        ("out.txt", W, Ok("out.txt")),
        ("out/x.txt", W, Reject("`out/` is ignored")),
        ("local.txt", W, Reject(IGNORED)),
        ("src/local.txt", W, Ok("src/local.txt")),
        ("cache/x", W, Reject("`cache/` is ignored")),
        ("x.log", W, Reject(IGNORED)),
        ("../shared.txt", W, Reject(RELATIVE)),
        ("../.gitignore", W, Reject(RELATIVE)),
        ("build.sh", W, Reject("build.sh is protected")),
        ("agent-config/x", W, Reject("agent-config/ is protected")),
        (".git/config", W, Reject(GIT)),
    ];
    for (raw, action, expected) in cases {
        check(&policy, raw, &action(), *expected);
    }
    assert_eq!(before, snapshot(&[repo.path()]));
}

/// `verify` reports every rejection, in block order, and keeps nothing back.
#[test]
fn verify_collects_every_rejection() {
    let fixture = Fixture::new();
    let before = fixture.snapshot();
    let policy = Policy::new(fixture.repo.path()).unwrap();
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
    let blocks = parse(response).unwrap();
    assert_eq!(blocks.len(), 11);
    let rejections = verify(&policy, &blocks).unwrap_err();
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
    assert_eq!(before, fixture.snapshot());
}

/// The reverse nesting: a file where an earlier block needs a directory.
#[test]
fn verify_refuses_a_file_over_an_earlier_directory() {
    let fixture = Fixture::new();
    let before = fixture.snapshot();
    let policy = Policy::new(fixture.repo.path()).unwrap();
    let blocks = parse("^^^pkg/a/b.rs\nx\n^^^end\n^^^pkg/a\ny\n^^^end\n").unwrap();
    let rejections = verify(&policy, &blocks).unwrap_err();
    assert_eq!(rejections.len(), 1);
    assert_eq!(rejections[0].path, "pkg/a");
    assert_contains(&rejections[0].reason, "needs `pkg/a` to be a directory");
    assert_eq!(before, fixture.snapshot());
}

/// An acceptable response comes back as targets in block order.
#[test]
fn verify_accepts_in_block_order() {
    let fixture = Fixture::new();
    let before = fixture.snapshot();
    let policy = Policy::new(fixture.repo.path()).unwrap();
    let blocks = parse(
        "^^^./src/lib.rs\nnew\n^^^end\n^^^README.md\n^^^delete\n^^^deep/new/file.txt\n^^^end\n",
    )
    .unwrap();
    let targets = verify(&policy, &blocks).unwrap();
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
    assert_eq!(before, fixture.snapshot());
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
