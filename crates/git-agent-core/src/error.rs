//! The errors of `git-agent-core`.

/// Why a task could not produce its artifact.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error(transparent)]
    Git(#[from] gitctx::Error),
    /// `commit-msg`/`commit` without `--amend` and an empty index diff.
    #[error("nothing is staged: stage the changes to describe with `git add` first")]
    NothingStaged,
    /// `--amend` on a branch without commits.
    #[error("there is no commit to amend yet: HEAD has no commits")]
    NothingToAmend,
    #[error("project guidance: {0}")]
    Guidance(#[from] guidance::GuidanceError),
    /// An option value that cannot be used.
    #[error("{0}")]
    InvalidOption(String),
    /// The model's run failed (provider error, timeout, tools misused).
    #[error(transparent)]
    Agent(agent::AgentError),
    /// The message still broke the rules after the repair pass.
    #[error("the generated message is still invalid after one repair pass: {}", problems.join("; "))]
    Invalid {
        problems: Vec<String>,
        /// The last message, for the user to fix by hand.
        message: String,
    },
    /// The session trace directory could not be created.
    #[error("could not create the trace session {}: {source}", path.display())]
    Session {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl From<agent::AgentError> for Error {
    fn from(err: agent::AgentError) -> Self {
        match err {
            agent::AgentError::Invalid { problems, output } => Error::Invalid {
                problems,
                message: output,
            },
            other => Error::Agent(other),
        }
    }
}
