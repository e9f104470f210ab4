//! The state of the index and the working tree, path by path: what
//! `git status --porcelain` reports, as typed entries (libgit2, no process).

use std::path::Path;

use crate::error::{Result, git};
use crate::repo::Repo;

/// One path's state. `index` is the staged change against HEAD, `worktree` the
/// change in the working tree against the index — the `X` and `Y` of
/// `git status --porcelain`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusEntry {
    /// The path (the new path of a staged rename).
    pub path: String,
    /// The old path of a staged rename.
    pub renamed_from: Option<String>,
    /// `A`, `M`, `D`, `R` or `T` when the path has staged changes.
    pub index: Option<char>,
    /// `M`, `D`, `T` or `?` (untracked) when the working tree differs from the index.
    pub worktree: Option<char>,
    /// The path has merge conflicts.
    pub conflicted: bool,
}

impl StatusEntry {
    /// `XY` as in `git status --porcelain` (`UU` for conflicts, `??` untracked).
    pub fn xy(&self) -> String {
        if self.conflicted {
            return "UU".to_owned();
        }
        if self.worktree == Some('?') {
            return "??".to_owned();
        }
        format!(
            "{}{}",
            self.index.unwrap_or(' '),
            self.worktree.unwrap_or(' ')
        )
    }

    /// Staged, and changed again in the working tree since (partially staged).
    pub fn partially_staged(&self) -> bool {
        self.index.is_some() && matches!(self.worktree, Some('M' | 'D' | 'T'))
    }
}

impl Repo {
    /// Every path whose index or working-tree state differs, sorted by path;
    /// untracked files only when `include_untracked` (ignored files never).
    /// Read-only: the index is not refreshed on disk.
    pub fn status(&self, include_untracked: bool) -> Result<Vec<StatusEntry>> {
        let mut options = git2::StatusOptions::new();
        options
            .include_untracked(include_untracked)
            .recurse_untracked_dirs(include_untracked)
            .include_ignored(false)
            .renames_head_to_index(true)
            .update_index(false);
        let statuses = self
            .inner
            .statuses(Some(&mut options))
            .map_err(git("reading the status"))?;
        let mut out = Vec::with_capacity(statuses.len());
        for entry in statuses.iter() {
            let s = entry.status();
            let index = letter(s, INDEX_LETTERS);
            let worktree = letter(s, WORKTREE_LETTERS);
            let conflicted = s.is_conflicted();
            if index.is_none() && worktree.is_none() && !conflicted {
                continue;
            }
            let (path, renamed_from) = match entry.head_to_index() {
                Some(delta) if s.is_index_renamed() => (
                    delta.new_file().path().map(path_text),
                    delta.old_file().path().map(path_text),
                ),
                _ => (lossy(entry.path_bytes()), None),
            };
            let Some(path) = path else { continue };
            out.push(StatusEntry {
                path,
                renamed_from,
                index,
                worktree,
                conflicted,
            });
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }
}

/// The `X` of `git status --porcelain`, the first flag that is set winning.
const INDEX_LETTERS: &[(git2::Status, char)] = &[
    (git2::Status::INDEX_NEW, 'A'),
    (git2::Status::INDEX_RENAMED, 'R'),
    (git2::Status::INDEX_DELETED, 'D'),
    (git2::Status::INDEX_TYPECHANGE, 'T'),
    (git2::Status::INDEX_MODIFIED, 'M'),
];

/// The `Y` of `git status --porcelain` (`?`: untracked), the first flag that is
/// set winning.
const WORKTREE_LETTERS: &[(git2::Status, char)] = &[
    (git2::Status::WT_NEW, '?'),
    (git2::Status::WT_DELETED, 'D'),
    (git2::Status::WT_TYPECHANGE, 'T'),
    (
        git2::Status::WT_MODIFIED.union(git2::Status::WT_RENAMED),
        'M',
    ),
];

/// The letter of the first row of `table` whose flags `status` has any of.
fn letter(status: git2::Status, table: &[(git2::Status, char)]) -> Option<char> {
    table
        .iter()
        .find(|(flags, _)| status.intersects(*flags))
        .map(|&(_, letter)| letter)
}

fn path_text(path: &Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}

fn lossy(bytes: &[u8]) -> Option<String> {
    Some(
        String::from_utf8_lossy(bytes)
            .trim_end_matches('/')
            .to_owned(),
    )
}
