//! The run log: `agent-config/logs/<NNNN>-<UTC timestamp>/`, one folder per
//! run, numbered. Each attempt's files share its number, so a query, its
//! response and the `build.txt` that followed group together:
//! `1-query.txt`, `1-response.txt`, `1-applied.txt` or `1-rejected.txt`,
//! `1-build.txt`, then `2-query.txt`, … and `summary.txt` at the end.
//!
//! **Invariant:** everything written passes through the run's [`Redactor`]: an
//! API key appears only as its last two characters.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use llm::Redactor;

use crate::config::CONFIG_DIR;
use crate::error::Error;

/// One run's log folder.
#[derive(Debug)]
pub struct RunLog {
    dir: PathBuf,
    redactor: Redactor,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + use<> {
    let path = path.to_path_buf();
    move |source| Error::Io { path, source }
}

impl RunLog {
    /// Creates the next run folder under `agent-config/logs/` of `project`.
    pub fn create(project: &Path, now: DateTime<Utc>, redactor: Redactor) -> Result<RunLog, Error> {
        let logs = project.join(CONFIG_DIR).join("logs");
        std::fs::create_dir_all(&logs).map_err(io(&logs))?;
        let mut highest = 0u32;
        for entry in std::fs::read_dir(&logs).map_err(io(&logs))?.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if let Some(n) = name.split('-').next().and_then(|n| n.parse::<u32>().ok()) {
                highest = highest.max(n);
            }
        }
        let stamp = now.format("%Y%m%dT%H%M%SZ");
        for n in highest + 1..highest + 1000 {
            let dir = logs.join(format!("{n:04}-{stamp}"));
            match std::fs::create_dir(&dir) {
                Ok(()) => return Ok(RunLog { dir, redactor }),
                Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(err) => return Err(io(&dir)(err)),
            }
        }
        Err(Error::Io {
            path: logs,
            source: std::io::Error::other("no free run number"),
        })
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes `{attempt}-{name}` (redacted).
    pub fn attempt(&self, attempt: u32, name: &str, text: &str) -> Result<PathBuf, Error> {
        self.write(&format!("{attempt}-{name}"), text)
    }

    /// Writes `name` (redacted).
    pub fn write(&self, name: &str, text: &str) -> Result<PathBuf, Error> {
        let path = self.dir.join(name);
        std::fs::write(&path, self.redactor.redact(text)).map_err(io(&path))?;
        Ok(path)
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
        let a = RunLog::create(dir.path(), now, redactor.clone()).unwrap();
        let b = RunLog::create(dir.path(), now, redactor).unwrap();
        assert!(a.dir().ends_with("agent-config/logs/0001-20261122T100000Z"));
        assert!(b.dir().ends_with("agent-config/logs/0002-20261122T100000Z"));
        let path = a
            .attempt(1, "response.txt", "the key is sk-secret-key-99")
            .unwrap();
        let text = std::fs::read_to_string(path).unwrap();
        assert!(!text.contains("sk-secret-key-99"));
        assert!(text.ends_with("99"), "{text}");
    }
}
