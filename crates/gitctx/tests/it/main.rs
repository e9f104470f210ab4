//! Integration tests of `gitctx` against real temporary repositories.

mod blame;
mod blame_cache;
mod blame_carry;
mod child;
mod commit_graph;
mod diff;
mod history;
mod hostile_text;
mod notes;
mod notes_merge;
mod patch_id;
mod refs;
mod repo;
mod submodules;
mod untrusted;
mod user_command;
mod worktree;

use std::fmt::Write as _;

use gitctx::{Notes, ObjectId, Repo};
use testkit::TestRepo;

/// Opens the repository of a test repo.
pub fn open(repo: &TestRepo) -> Repo {
    Repo::discover(repo.path()).expect("open the test repository")
}

/// A test repository with commits, opened with gitctx.
#[derive(Debug)]
pub struct Fixture {
    pub repo: TestRepo,
    pub git: Repo,
}

impl Fixture {
    /// `N` commits, each changing `n.txt` (see [`TestRepo::commit_many`]),
    /// and their ids, oldest first.
    pub fn with_commits<const N: usize>() -> (Fixture, [ObjectId; N]) {
        let repo = TestRepo::new();
        let shas = repo.commit_many(N, "n.txt");
        let commits = std::array::from_fn(|i| id(&shas[i]));
        let git = open(&repo);
        (Fixture { repo, git }, commits)
    }

    /// The notes under `name` (a full ref or a name below `refs/notes/`).
    pub fn notes(&self, name: &str) -> Notes<'_> {
        self.git.notes(name).unwrap()
    }
}

/// A commit id the test got from git.
pub fn id(hex: &str) -> ObjectId {
    hex.parse().unwrap()
}

/// Makes `refname` a notes commit that holds `note of <sha>\n` for each of
/// `shas`, written by `git fast-import`: like git, it fans the notes tree out
/// once the tree holds many notes.
pub fn import_notes(repo: &TestRepo, refname: &str, shas: &[String]) {
    let mut stream = String::new();
    let _ = writeln!(stream, "commit {refname}");
    let _ = writeln!(stream, "committer T <t@e> 1700000000 +0000");
    let _ = writeln!(stream, "data 5\nnotes");
    for sha in shas {
        let text = format!("note of {sha}\n");
        let _ = writeln!(stream, "N inline {sha}");
        let _ = writeln!(stream, "data {}\n{text}", text.len());
    }
    repo.command()
        .args(["fast-import", "--quiet"])
        .stdin(stream)
        .run()
        .unwrap();
}

/// The note `git notes --ref=ultragit show` prints for `sha`, `None` when git
/// finds none.
pub fn git_note(repo: &TestRepo, sha: &str) -> Option<String> {
    let output = repo
        .command()
        .args(["notes", "--ref=ultragit", "show", sha])
        .run_unchecked()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    output.status.success().then_some(text)
}
