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
            let index = if s.is_index_new() {
                Some('A')
            } else if s.is_index_renamed() {
                Some('R')
            } else if s.is_index_deleted() {
                Some('D')
            } else if s.is_index_typechange() {
                Some('T')
            } else if s.is_index_modified() {
                Some('M')
            } else {
                None
            };
            let worktree = if s.is_wt_new() {
                Some('?')
            } else if s.is_wt_deleted() {
                Some('D')
            } else if s.is_wt_typechange() {
                Some('T')
            } else if s.is_wt_modified() || s.is_wt_renamed() {
                Some('M')
            } else {
                None
            };
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
