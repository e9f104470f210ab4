//! The workspace the tools work in: its canonical root, the repository it belongs
//! to, and the tracked files under it, named relative to the workspace.
//!
//! The workspace root is a directory inside a git working tree, often its top. Every
//! path a tool shows the model is workspace-relative, so any of them can be passed
//! back to another tool unchanged.

use std::path::{Path, PathBuf};

use agent::ToolFailure;
use gitctx::Repo;

use crate::codes;
use crate::paths::slash_path;

/// The canonical workspace root, or `NOT_DIRECTORY` when it is not a directory.
pub(crate) fn canonical_root(root: &Path) -> Result<PathBuf, ToolFailure> {
    match root.canonicalize() {
        Ok(path) if path.is_dir() => Ok(path),
        _ => Err(ToolFailure::new(
            codes::NOT_DIRECTORY,
            format!("the workspace root {} is not a directory", root.display()),
        )),
    }
}

/// The failure for a `gitctx` error: not being in a (usable) working tree is
/// `NOT_GIT_REPOSITORY`, anything else `INTERNAL`.
pub(crate) fn git_failure(err: gitctx::Error) -> ToolFailure {
    match err {
        gitctx::Error::NotARepository { .. }
        | gitctx::Error::BareRepository { .. }
        | gitctx::Error::UnsafeRepository { .. } => {
            ToolFailure::new(codes::NOT_GIT_REPOSITORY, err.to_string())
        }
        other => ToolFailure::internal(other.to_string()),
    }
}

/// The workspace's repository.
pub(crate) struct RepoView {
    pub(crate) repo: Repo,
    /// The canonical workspace root.
    pub(crate) root: PathBuf,
    /// The canonical top of the working tree.
    pub(crate) top: PathBuf,
    /// The workspace's path inside the repository (`/`-separated), empty when the
    /// workspace is the top of the working tree.
    pub(crate) prefix: String,
}

impl RepoView {
    /// Opens the repository containing the workspace root.
    pub(crate) fn open(workspace_root: &Path) -> Result<RepoView, ToolFailure> {
        let root = canonical_root(workspace_root)?;
        let repo = Repo::discover(&root).map_err(git_failure)?;
        let top = repo.root().canonicalize().map_err(|err| {
            ToolFailure::internal(format!(
                "cannot resolve the repository root {}: {err}",
                repo.root().display()
            ))
        })?;
        let prefix = root
            .strip_prefix(&top)
            .ok()
            .and_then(slash_path)
            .ok_or_else(|| {
                ToolFailure::internal(format!(
                    "the workspace {} is not inside the working tree {}",
                    root.display(),
                    top.display()
                ))
            })?;
        Ok(RepoView {
            repo,
            root,
            top,
            prefix,
        })
    }

    /// The tracked files under the workspace, workspace-relative, sorted.
    pub(crate) fn tracked_files(&self) -> Result<Vec<String>, ToolFailure> {
        let files = self.repo.tracked_files().map_err(git_failure)?;
        if self.prefix.is_empty() {
            return Ok(files);
        }
        Ok(files
            .into_iter()
            .filter_map(|path| {
                path.strip_prefix(self.prefix.as_str())?
                    .strip_prefix('/')
                    .map(str::to_owned)
            })
            .collect())
    }
}
