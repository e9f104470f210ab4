//! Set-ups that the tests of several crates (a library and the binary that
//! drives it) build the same way: a numbered file changed on a topic branch,
//! and two clones of a bare remote.

use std::path::{Path, PathBuf};

use gitctx::GitCommand;

use crate::TestRepo;

/// `line 1\n` to `line 20\n`: a file whose lines a test can change one by one.
pub fn twenty_lines() -> String {
    (1..=20).map(|i| format!("line {i}\n")).collect()
}

impl TestRepo {
    /// A new repository with `files` (path, text) written in its work tree,
    /// nothing staged.
    pub fn with_files(files: &[(&str, &str)]) -> TestRepo {
        let repo = TestRepo::new();
        for (path, text) in files {
            repo.write(path, text);
        }
        repo
    }

    /// A new repository whose one commit, `message`, adds `files` (path, text).
    pub fn with_commit(files: &[(&str, &str)], message: &str) -> TestRepo {
        let repo = TestRepo::with_files(files);
        repo.commit_all(message);
        repo
    }

    /// A repository with one commit, `init` (adding `a.txt`), then `sub` added
    /// as a submodule at `path` and committed as `add submodule`.
    pub fn with_submodule(path: &str, sub: &TestRepo) -> TestRepo {
        let repo = TestRepo::new();
        repo.commit_file("a.txt", "a\n", "init");
        repo.add_submodule(path, sub);
        repo.commit("add submodule");
        repo
    }

    /// From HEAD (on `main`): a branch `side` with one commit adding
    /// `side.txt`, one commit on `main` adding `main.txt`, then `side` merged
    /// into `main` with `--no-ff` (`main` checked out). Returns the side
    /// commit, the main commit and the merge.
    pub fn merge_side_branch(&self) -> [String; 3] {
        self.checkout_new("side");
        let side = self.commit_file("side.txt", "s\n", "side");
        self.checkout("main");
        let main = self.commit_file("main.txt", "m\n", "main");
        self.git(&["merge", "--quiet", "--no-ff", "-m", "merge side", "side"]);
        [side, main, self.rev_parse("HEAD")]
    }

    /// A repository whose `main` has one commit, `base`, adding `f.txt`
    /// ([`twenty_lines`]); then, on the new branch `topic` (left checked out),
    /// line 15 changed to `line fifteen` and committed as `message`. Returns the
    /// repository and that commit.
    pub fn with_topic_change(message: &str) -> (TestRepo, String) {
        let repo = TestRepo::new();
        repo.commit_file("f.txt", twenty_lines(), "base");
        repo.checkout_new("topic");
        let changed = twenty_lines().replace("line 15\n", "line fifteen\n");
        let topic = repo.commit_file("f.txt", changed, message);
        (repo, topic)
    }

    /// What a forge's rebase merge of `branch` does, seen from this clone:
    /// `branch` replayed onto `main`, `refs/remotes/origin/HEAD` at the result,
    /// `main` checked out again and `branch` deleted. Returns the replayed
    /// commits, oldest first.
    pub fn forge_rebase_merge(&self, branch: &str) -> Vec<String> {
        self.checkout(branch);
        self.git(&["rebase", "--quiet", "main"]);
        let replayed = self
            .git(&["rev-list", "--reverse", "main..HEAD"])
            .lines()
            .map(str::to_owned)
            .collect();
        self.set_origin_head("main", "HEAD");
        self.checkout("main");
        self.git(&["branch", "-D", branch]);
        replayed
    }

    /// What a forge's squash merge of `branch` into `main` (checked out) does:
    /// one commit `message` with all of its changes, `refs/remotes/origin/HEAD`
    /// at it, `branch` deleted. Returns that commit.
    pub fn forge_squash_merge(&self, branch: &str, message: &str) -> String {
        self.git(&["merge", "--quiet", "--squash", branch]);
        let squash = self.commit(message);
        self.set_origin_head("main", "HEAD");
        self.git(&["branch", "-D", branch]);
        squash
    }
}

/// Runs git in the bare repository `bare` with the pinned environment; returns
/// its stdout.
pub fn bare_git(bare: &Path, args: &[&str]) -> String {
    let mut cmd = GitCommand::new(bare);
    for (key, value) in crate::hermetic_env() {
        cmd = cmd.env(key, value);
    }
    cmd.args(args).run_text().expect("git in the bare remote")
}

/// A new bare repository (branch `main`) called `name` next to `repo`, in its
/// temporary directory, so it goes when `repo` does. Returns its path.
pub fn bare_beside(repo: &TestRepo, name: &str) -> PathBuf {
    let bare = repo
        .path()
        .parent()
        .expect("the repository has a parent directory")
        .join(name);
    std::fs::create_dir(&bare).expect("create the bare repository's directory");
    bare_git(
        &bare,
        &["init", "--quiet", "--bare", "--initial-branch=main"],
    );
    bare
}

/// A bare remote and two clones of it, `a` and `b`, sharing three commits
/// (`src.txt`), each with `origin` pointing at the remote.
#[derive(Debug)]
pub struct Team {
    /// The bare remote (next to `a`).
    pub bare: PathBuf,
    pub a: TestRepo,
    pub b: TestRepo,
    /// The shared commits, oldest first.
    pub commits: Vec<String>,
}

impl Team {
    /// `a` makes the three commits and pushes `main`; `b` fetches and resets
    /// to `origin/main`.
    pub fn new() -> Team {
        let a = TestRepo::new();
        let bare = bare_beside(&a, "remote.git");
        let url = bare.to_str().expect("a UTF-8 temporary path");
        let commits = a.commit_many(3, "src.txt");
        a.git(&["remote", "add", "origin", url]);
        a.git(&["push", "--quiet", "origin", "main"]);
        let b = TestRepo::new();
        b.git(&["remote", "add", "origin", url]);
        b.git(&["fetch", "--quiet", "origin"]);
        b.git(&["reset", "--quiet", "--hard", "origin/main"]);
        Team {
            bare,
            a,
            b,
            commits,
        }
    }
}

impl Default for Team {
    fn default() -> Team {
        Team::new()
    }
}

/// The string `field` of every object in the JSON array `list` (panics, showing
/// `list`, when it is not an array of objects with that string field).
pub fn field_strs<'a>(list: &'a serde_json::Value, field: &str) -> Vec<&'a str> {
    let items = list
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {list}"));
    items
        .iter()
        .map(|item| {
            item[field]
                .as_str()
                .unwrap_or_else(|| panic!("no string `{field}` in {item}"))
        })
        .collect()
}
