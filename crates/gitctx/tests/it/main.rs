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

use gitctx::Repo;
use testkit::TestRepo;

/// Opens the repository of a test repo.
pub fn open(repo: &TestRepo) -> Repo {
    Repo::discover(repo.path()).expect("open the test repository")
}
