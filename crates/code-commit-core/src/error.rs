//! The errors that stop a run (a rejected response or a failing build is not
//! one of them: those are failed attempts the repair rounds work on).

use std::path::PathBuf;

/// Why code-commit stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file the run needs is missing.
    #[error("{path} is missing: {hint}")]
    MissingFile { path: String, hint: &'static str },
    /// `.gitignore` does not keep `agent-config/` out of git.
    #[error(
        ".gitignore has no /agent-config line: add one so the query, the logs and any API key in agent-config/ are never committed"
    )]
    NotIgnored,
    /// `agent-config/config.toml` or the key file is unusable.
    #[error("{0}")]
    Config(String),
    /// The project directory cannot be judged (not in a git working tree, …).
    #[error(transparent)]
    Policy(#[from] crate::policy::PolicyError),
    /// The model could not be asked (after retries).
    #[error(transparent)]
    Provider(#[from] llm::LlmError),
    /// `build.sh` could not be run at all.
    #[error(transparent)]
    Build(#[from] crate::build::BuildError),
    /// Applying a response failed AND the tree could not be fully restored.
    #[error("{0}")]
    Apply(crate::apply::ApplyError),
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}
