//! Where generation-only commands keep their traces:
//! `.git-agent/sessions/<timestamp>-<command>/` at the top of the working tree.
//!
//! `.git-agent/` ignores itself (a `.gitignore` holding `*`), so traces never
//! show up in `git status` and no tracked file has to change.

use std::io;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

use crate::error::Error;

/// The trace directory, relative to the top of the working tree.
pub const GIT_AGENT_DIR: &str = ".git-agent";

/// Creates a new, empty session directory for `command` started at `now`:
/// `.git-agent/sessions/20261122T101530Z-commit-msg` (`-2`, `-3`, … when two
/// sessions start in the same second).
pub fn create_session_dir(
    root: &Path,
    command: &str,
    now: DateTime<Utc>,
) -> Result<PathBuf, Error> {
    let sessions = git_agent_dir(root)?.join("sessions");
    std::fs::create_dir_all(&sessions).map_err(io_error(&sessions))?;
    let stamp = now.format("%Y%m%dT%H%M%SZ");
    for n in 1..1000 {
        let name = if n == 1 {
            format!("{stamp}-{command}")
        } else {
            format!("{stamp}-{command}-{n}")
        };
        let dir = sessions.join(name);
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(err) => return Err(io_error(&dir)(err)),
        }
    }
    Err(Error::Session {
        path: sessions,
        source: io::Error::other("too many sessions started in the same second"),
    })
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> Error + use<> {
    let path = path.to_path_buf();
    move |source| Error::Session { path, source }
}

/// `.git-agent/` at the top of the working tree, created if needed, with the
/// `.gitignore` that keeps it out of git.
pub fn git_agent_dir(root: &Path) -> Result<PathBuf, Error> {
    let base = root.join(GIT_AGENT_DIR);
    std::fs::create_dir_all(&base).map_err(io_error(&base))?;
    let ignore = base.join(".gitignore");
    if !ignore.exists() {
        std::fs::write(&ignore, "# git-agent traces; never committed\n*\n")
            .map_err(io_error(&ignore))?;
    }
    Ok(base)
}

/// Keeps a generated message whose commit git refused in
/// `.git-agent/COMMIT_MSG`, so `git commit -F .git-agent/COMMIT_MSG` can finish
/// the job.
pub fn save_message(root: &Path, message: &str) -> Result<PathBuf, Error> {
    let path = git_agent_dir(root)?.join("COMMIT_MSG");
    std::fs::write(&path, message).map_err(io_error(&path))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn sessions_are_unique_and_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let now = Utc.with_ymd_and_hms(2026, 11, 22, 10, 15, 30).unwrap();
        let a = create_session_dir(dir.path(), "commit-msg", now).unwrap();
        let b = create_session_dir(dir.path(), "commit-msg", now).unwrap();
        assert!(a.ends_with(".git-agent/sessions/20261122T101530Z-commit-msg"));
        assert!(b.ends_with(".git-agent/sessions/20261122T101530Z-commit-msg-2"));
        let ignore = std::fs::read_to_string(dir.path().join(".git-agent/.gitignore")).unwrap();
        assert!(ignore.lines().any(|l| l == "*"));
    }
}
