//! Where generation-only commands keep their traces:
//! `.git-agent/sessions/<timestamp>-<command>/` at the top of the working tree,
//! and where `commit` keeps a message git refused (`.git-agent/COMMIT_MSG`).
//!
//! `.git-agent/` ignores itself (a `.gitignore` holding `*`), so traces never
//! show up in `git status` and no tracked file has to change.
//!
//! **Invariant:** the working tree is untrusted. `.git-agent/` is refused when
//! git tracks anything at or below it (a repository shipping its own
//! `.git-agent/` chose what is there), and everything under it is created
//! through directory handles that never follow a symbolic link
//! ([`safe_io::Dir`]): a committed `.git-agent/COMMIT_MSG` or
//! `.git-agent/sessions` link cannot redirect a write.

use std::io;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use safe_io::Dir;

use crate::error::Error;

/// The trace directory, relative to the top of the working tree.
pub(crate) const GIT_AGENT_DIR: &str = ".git-agent";

/// Creates a new, empty session directory for `command` started at `now`:
/// `.git-agent/sessions/20261122T101530Z-commit-msg` (`-2`, `-3`, … when two
/// sessions start in the same second).
pub fn create_session_dir(root: &Path, command: &str, now: DateTime<Utc>) -> Result<Dir, Error> {
    let sessions = git_agent_dir(root)?.create_dir_all("sessions")?;
    let stamp = now.format("%Y%m%dT%H%M%SZ");
    for n in 1..1000 {
        let name = if n == 1 {
            format!("{stamp}-{command}")
        } else {
            format!("{stamp}-{command}-{n}")
        };
        if let Some(dir) = sessions.create_dir(&name)? {
            return Ok(dir);
        }
    }
    Err(Error::Session {
        path: sessions.path().to_path_buf(),
        source: io::Error::other("too many sessions started in the same second"),
    })
}

/// `.git-agent/` at the top of the working tree, created if needed, with the
/// `.gitignore` that keeps it out of git. Refused when git tracks anything
/// there or when it (or anything on the way) is a symbolic link.
pub(crate) fn git_agent_dir(root: &Path) -> Result<Dir, Error> {
    let repo = gitctx::Repo::open(root)?;
    if let Some(example) = repo.tracked_under(GIT_AGENT_DIR)?.into_iter().next() {
        return Err(Error::TrackedDir {
            dir: GIT_AGENT_DIR.to_owned(),
            example,
        });
    }
    let base = Dir::open(root)?.create_dir_all(GIT_AGENT_DIR)?;
    if base.kind(".gitignore")?.is_none() {
        base.write(".gitignore", b"# git-agent traces; never committed\n*\n")?;
    }
    Ok(base)
}

/// Keeps a generated message whose commit git refused in
/// `.git-agent/COMMIT_MSG`, so `git commit -F .git-agent/COMMIT_MSG` can finish
/// the job. An existing file (or link) of that name is replaced, never written
/// through.
pub fn save_message(root: &Path, message: &str) -> Result<PathBuf, Error> {
    let dir = git_agent_dir(root)?;
    dir.write("COMMIT_MSG", message.as_bytes())?;
    Ok(dir.path().join("COMMIT_MSG"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn sessions_are_unique_and_ignored() {
        let dir = tempfile::tempdir().unwrap();
        gitctx::GitCommand::new(dir.path())
            .args(["init", "--quiet"])
            .run()
            .unwrap();
        let now = Utc.with_ymd_and_hms(2026, 11, 22, 10, 15, 30).unwrap();
        let a = create_session_dir(dir.path(), "commit-msg", now).unwrap();
        let b = create_session_dir(dir.path(), "commit-msg", now).unwrap();
        assert!(
            a.path()
                .ends_with(".git-agent/sessions/20261122T101530Z-commit-msg")
        );
        assert!(
            b.path()
                .ends_with(".git-agent/sessions/20261122T101530Z-commit-msg-2")
        );
        let ignore = std::fs::read_to_string(dir.path().join(".git-agent/.gitignore")).unwrap();
        assert!(ignore.lines().any(|l| l == "*"));
    }
}
