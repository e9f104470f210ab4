//! Integration tests of `gitctx` against real temporary repositories.

mod blame;
mod blame_cache;
mod child;
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
mod worktree;

use std::fmt::Write as _;

use gitctx::{ObjectId, Repo};
use testkit::TestRepo;

/// Opens the repository of a test repo.
pub fn open(repo: &TestRepo) -> Repo {
    Repo::discover(repo.path()).expect("open the test repository")
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
