//! What the tools may read: the one rule `read_file`, `search_files` and
//! `list_files` share.
//!
//! A workspace path is followed through every symbolic link on its way, and what
//! it leads to — the *target* — is judged, not the name:
//! - a target outside the workspace, or inside a git directory (`.git`, or the
//!   repository's own git directory wherever it lies), is [`Refusal::Outside`];
//! - a target git ignores and does not track (`.env`, `secrets/`, build output)
//!   is [`Refusal::Ignored`]: a tracked `envlink -> .env` does not expose `.env`;
//! - anything else is allowed.
//!
//! A tracked path reached without any link is never ignored, so listing and
//! searching tracked files only pay for the ignore check when a link is on the
//! way.
//!
//! What is allowed is opened through a [`safe_io::Dir`] on the workspace root,
//! component by component without following links, along the canonical path
//! that was judged: a link swapped in after the check is refused rather than
//! followed, only regular files are opened (a FIFO or a device never blocks),
//! and every read is bounded by its caller's limit.

use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use agent::ToolFailure;
use gitctx::Repo;

use crate::paths::{self, RelPath, ResolveError};

/// Why the target of a path may not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Nothing is there (or a component on the way is not a directory).
    Missing,
    /// A symbolic link on the way leads outside the workspace or into a git
    /// directory.
    Outside,
    /// Git ignores the target and does not track it. `target` is the target's
    /// workspace-relative path when a link led there.
    Ignored { target: Option<String> },
    /// The file system or git could not tell; the reason.
    Unknown(String),
}

impl From<ResolveError> for Refusal {
    fn from(err: ResolveError) -> Refusal {
        match err {
            ResolveError::Missing(_) => Refusal::Missing,
            ResolveError::Escapes(_) => Refusal::Outside,
            ResolveError::Io { .. } => Refusal::Unknown(err.to_string()),
        }
    }
}

impl Refusal {
    /// The failure `read_file` reports for `rel`.
    pub(crate) fn failure(&self, rel: &RelPath) -> ToolFailure {
        use crate::codes;
        match self {
            Refusal::Missing => ToolFailure::new(
                codes::NOT_FOUND,
                format!("'{rel}' does not exist; list_files shows the tracked files"),
            ),
            Refusal::Outside => ToolFailure::invalid_argument(format!(
                "path: '{rel}' leads outside the workspace or into .git through a symbolic link"
            )),
            Refusal::Ignored { target: None } => ToolFailure::new(
                codes::IGNORED,
                format!(
                    "'{rel}' is ignored by git and not tracked; read_file does not show ignored files"
                ),
            ),
            Refusal::Ignored {
                target: Some(target),
            } => ToolFailure::new(
                codes::IGNORED,
                format!(
                    "'{rel}' leads through a symbolic link to '{target}', which git ignores and does not track; read_file does not show ignored files"
                ),
            ),
            Refusal::Unknown(reason) => ToolFailure::internal(format!("'{rel}': {reason}")),
        }
    }

    /// Why `list_files` marks a path, when it is a refusal that concerns the
    /// target of a link (a missing file is listed like any other).
    pub(crate) fn link_reason(&self) -> Option<&'static str> {
        match self {
            Refusal::Outside => Some("leads outside the workspace or into .git"),
            Refusal::Ignored { .. } => Some("leads to a file git ignores and does not track"),
            Refusal::Missing | Refusal::Unknown(_) => None,
        }
    }
}

/// Where an allowed path leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    /// The canonical target, relative to the workspace root; empty for the root.
    rel: PathBuf,
    /// A symbolic link was followed on the way.
    pub(crate) linked: bool,
}

impl Target {
    /// True when the target is the workspace root itself.
    pub(crate) fn is_root(&self) -> bool {
        self.rel.as_os_str().is_empty()
    }
}

/// Judges paths of one workspace and opens what it allows.
pub(crate) struct Gate<'a> {
    /// The canonical workspace root.
    root: PathBuf,
    handle: safe_io::Dir,
    /// The repository whose ignore rules apply, when there is one.
    repo: Option<&'a Repo>,
    /// The canonical top of its working tree.
    top: Option<PathBuf>,
    /// Its canonical git directories (private and common), wherever they are.
    git_dirs: Vec<PathBuf>,
    /// Canonical directories by workspace-relative path, as judged so far.
    dirs: HashMap<String, Result<PathBuf, Refusal>>,
}

impl<'a> Gate<'a> {
    /// A gate on the workspace at the canonical `root`, applying the ignore rules
    /// of `repo` (none without a repository).
    pub(crate) fn new(root: &Path, repo: Option<&'a Repo>) -> Result<Gate<'a>, ToolFailure> {
        let handle = safe_io::Dir::open(root).map_err(|err| {
            ToolFailure::internal(format!("cannot open the workspace root: {err}"))
        })?;
        let top = repo.and_then(|repo| repo.root().canonicalize().ok());
        let git_dirs = repo
            .map(|repo| {
                [repo.git_dir().to_path_buf(), repo.common_dir()]
                    .iter()
                    .filter_map(|dir| dir.canonicalize().ok())
                    .collect()
            })
            .unwrap_or_default();
        Ok(Gate {
            root: root.to_path_buf(),
            handle,
            repo,
            top,
            git_dirs,
            dirs: HashMap::new(),
        })
    }

    /// Where `rel` leads, if the tools may read it. `tracked` says git tracks
    /// `rel`: a tracked path reached without a link cannot be ignored, so the
    /// ignore rules are only consulted for it when a link is on the way.
    pub(crate) fn judge(&mut self, rel: &RelPath, tracked: bool) -> Result<Target, Refusal> {
        let Some((parent, name)) = rel.split_last() else {
            return Ok(Target {
                rel: PathBuf::new(),
                linked: false,
            });
        };
        let dir = self.dir(&parent)?;
        let at = dir.join(name);
        let is_link = match std::fs::symlink_metadata(&at) {
            Ok(meta) => meta.file_type().is_symlink(),
            Err(err)
                if matches!(
                    err.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                ) =>
            {
                return Err(Refusal::Missing);
            }
            Err(err) => return Err(Refusal::Unknown(err.to_string())),
        };
        let (canonical, linked) = if is_link {
            (paths::resolve(&self.root, rel)?, true)
        } else {
            let linked = dir != parent.under(&self.root);
            (at, linked)
        };
        if self.git_dirs.iter().any(|git| canonical.starts_with(git)) {
            return Err(Refusal::Outside);
        }
        let Ok(inside) = canonical.strip_prefix(&self.root) else {
            return Err(Refusal::Outside);
        };
        let inside = inside.to_path_buf();
        if linked || !tracked {
            self.check_ignored(&canonical, &inside, linked)?;
        }
        Ok(Target {
            rel: inside,
            linked,
        })
    }

    /// The canonical directory `rel` leads to (cached: files share directories).
    fn dir(&mut self, rel: &RelPath) -> Result<PathBuf, Refusal> {
        if let Some(found) = self.dirs.get(rel.as_str()) {
            return found.clone();
        }
        let found = paths::resolve(&self.root, rel).map_err(Refusal::from);
        self.dirs.insert(rel.as_str().to_owned(), found.clone());
        found
    }

    /// [`Refusal::Ignored`] when the repository ignores the canonical path and
    /// does not track it.
    fn check_ignored(&self, canonical: &Path, inside: &Path, linked: bool) -> Result<(), Refusal> {
        let (Some(repo), Some(top)) = (self.repo, &self.top) else {
            return Ok(()); // outside any repository there are no ignore rules
        };
        let Ok(in_repo) = canonical.strip_prefix(top) else {
            return Ok(()); // the workspace lies inside the working tree, so cannot happen
        };
        let Some(mut repo_path) = paths::slash_path(in_repo) else {
            return Err(Refusal::Unknown(
                "its name is not UTF-8, so git's ignore rules cannot be checked".to_owned(),
            ));
        };
        if repo_path.is_empty() {
            return Ok(());
        }
        // A pattern such as `build/` only matches a directory named as one.
        if canonical.is_dir() {
            repo_path.push('/');
        }
        match repo.is_ignored(&repo_path) {
            Ok(false) => Ok(()),
            Ok(true) => Err(Refusal::Ignored {
                target: linked.then(|| paths::slash_path(inside).unwrap_or_default()),
            }),
            Err(err) => Err(Refusal::Unknown(err.to_string())),
        }
    }

    /// Opens the allowed `target` for reading: a regular file, reached without
    /// following any link (the caller bounds what it reads).
    pub(crate) fn open(&self, target: &Target) -> Result<File, safe_io::Error> {
        self.handle.open_file(&target.rel)
    }

    /// Reads the allowed `target`: a regular file of at most `limit` bytes.
    pub(crate) fn read(&self, target: &Target, limit: u64) -> Result<Vec<u8>, safe_io::Error> {
        self.handle.read(&target.rel, limit)
    }
}
