//! The run log: `agent-config/logs/<NNNN>-<UTC timestamp>/`, one folder per
//! run, numbered. Each attempt's files share its number, so a query, its
//! response and the `build.txt` that followed group together:
//! `1-query.txt`, `1-response.txt`, `1-applied.txt` or `1-rejected.txt`,
//! `1-build.txt`, then `2-query.txt`, … and `summary.txt` at the end.
//!
//! **Invariant:** everything written passes through the run's [`Redactor`]: an
//! API key appears only as its last two characters, and its encoded forms
//! (base64, hex, URL encoding) not at all.
//!
//! **Invariant:** the log is written through a [`Dir`] handle on the project:
//! `agent-config/`, `logs/` and the run folder are reached without following
//! symbolic links, files are created beside their name and renamed into place,
//! so a `logs` link planted by anyone (a build, a cloned repository) is refused
//! with an error instead of receiving prompts and responses.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use llm::Redactor;
use safe_io::Dir;

use crate::config::CONFIG_DIR;
use crate::error::Error;

/// The folder of run logs, relative to the project.
pub(crate) const LOGS_DIR: &str = "agent-config/logs";

/// One run's log folder.
#[derive(Debug)]
pub(crate) struct RunLog {
    dir: Dir,
    redactor: Redactor,
}

impl RunLog {
    /// Creates the next run folder under `agent-config/logs/` of the project
    /// `project` (an open handle on the project directory).
    pub(crate) fn create(
        project: &Dir,
        now: DateTime<Utc>,
        redactor: Redactor,
    ) -> Result<RunLog, Error> {
        debug_assert!(LOGS_DIR.starts_with(CONFIG_DIR));
        let logs = project.create_dir_all(LOGS_DIR).map_err(Error::Log)?;
        let mut highest = 0u32;
        for (name, _) in logs.entries().map_err(Error::Log)? {
            let name = name.to_string_lossy();
            if let Some(n) = name.split('-').next().and_then(|n| n.parse::<u32>().ok()) {
                highest = highest.max(n);
            }
        }
        let stamp = now.format("%Y%m%dT%H%M%SZ");
        for n in highest.saturating_add(1)..highest.saturating_add(1000) {
            if let Some(dir) = logs
                .create_dir(format!("{n:04}-{stamp}"))
                .map_err(Error::Log)?
            {
                return Ok(RunLog { dir, redactor });
            }
        }
        Err(Error::Io {
            path: logs.path().to_path_buf(),
            source: std::io::Error::other("no free run number"),
        })
    }

    /// The folder.
    pub(crate) fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `{attempt}-{name}` (redacted).
    pub(crate) fn attempt(&self, attempt: u32, name: &str, text: &str) -> Result<PathBuf, Error> {
        self.write(&format!("{attempt}-{name}"), text)
    }

    /// Writes `name` (redacted).
    pub(crate) fn write(&self, name: &str, text: &str) -> Result<PathBuf, Error> {
        self.dir
            .write(name, self.redactor.redact(text).as_bytes())
            .map_err(Error::Log)?;
        Ok(self.dir.path().join(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use llm::Secret;

    #[test]
    fn runs_are_numbered_and_redacted() {
        let dir = tempfile::tempdir().unwrap();
        let now = Utc.with_ymd_and_hms(2026, 11, 22, 10, 0, 0).unwrap();
        let redactor = Redactor::new([&Secret::new("sk-secret-key-99")]);
        let project = Dir::open(dir.path()).unwrap();
        let a = RunLog::create(&project, now, redactor.clone()).unwrap();
        let b = RunLog::create(&project, now, redactor).unwrap();
        assert!(a.dir().ends_with("agent-config/logs/0001-20261122T100000Z"));
        assert!(b.dir().ends_with("agent-config/logs/0002-20261122T100000Z"));
        let path = a
            .attempt(1, "response.txt", "the key is sk-secret-key-99")
            .unwrap();
        let text = std::fs::read_to_string(path).unwrap();
        assert!(!text.contains("sk-secret-key-99"));
        assert!(text.ends_with("99"), "{text}");
        // Its base64 form too.
        let path = a
            .attempt(2, "build.txt", "c2stc2VjcmV0LWtleS05OQo=\n")
            .unwrap();
        assert_eq!(std::fs::read_to_string(path).unwrap(), "****Qo=\n");
    }

    #[test]
    fn a_planted_logs_symlink_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("agent-config")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("agent-config/logs")).unwrap();
        let project = Dir::open(dir.path()).unwrap();
        let err = RunLog::create(&project, Utc::now(), Redactor::default()).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("agent-config/logs"), "{text}");
        assert!(text.contains("symbolic link"), "{text}");
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
        // A link for agent-config/ itself is refused the same way.
        let other = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), other.path().join("agent-config")).unwrap();
        let project = Dir::open(other.path()).unwrap();
        let err = RunLog::create(&project, Utc::now(), Redactor::default()).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    }
}
