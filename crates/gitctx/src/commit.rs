//! Creating commits. git does it — `git commit --file -` — so the user's hooks,
//! `commit.gpgSign`, templates-free cleanup and identity apply exactly as when
//! they commit by hand, in their own environment ([`Repo::user_command`]).

use crate::error::Result;
use crate::repo::Repo;

/// What `git commit` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitRun {
    /// git exited 0: the commit exists.
    pub success: bool,
    /// `exit status N` or `killed by a signal`.
    pub status: String,
    /// git's summary (`[main 1a2b3c4] subject` and the stat lines).
    pub stdout: String,
    /// What git and the hooks wrote to stderr.
    pub stderr: String,
}

impl Repo {
    /// Runs `git commit --file -` (with `--amend`: `git commit --amend --file -`,
    /// which keeps the original author) at the top of the working tree, with
    /// `message` on stdin. A commit git refuses (a failing hook, a signing
    /// failure, nothing to commit) is a `CommitRun` with `success == false`, not an
    /// `Err`; `Err` means git could not be run at all.
    pub fn run_commit(&self, message: &str, amend: bool) -> Result<CommitRun> {
        // The user's own git: git's summary is shown to them, and their hooks,
        // filters and signing run in their environment as they would by hand.
        let mut cmd = self.user_command().arg("commit");
        if amend {
            cmd = cmd.arg("--amend");
        }
        let cmd = cmd.args(["--file", "-"]).stdin(message.as_bytes().to_vec());
        let output = cmd.run_unchecked()?;
        let status = match output.status.code() {
            Some(code) => format!("exit status {code}"),
            None => "killed by a signal".to_owned(),
        };
        Ok(CommitRun {
            success: output.status.success(),
            status,
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        })
    }
}
