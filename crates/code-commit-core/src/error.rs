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
    /// Git tracks files under `agent-config/`: they came with the repository, so
    /// nothing in that folder can be trusted to choose the endpoint or the key.
    #[error(
        "git tracks {path}{}: a tracked agent-config/ comes from the repository, not from you, so code-commit will not read it (it could name its own server or key). Untrack it with `git rm -r --cached agent-config`, keep the line /agent-config in .gitignore, and check its files before running code-commit again",
        if *more > 0 { format!(" (and {more} more file(s) under agent-config/)") } else { String::new() }
    )]
    Tracked {
        /// One tracked path, relative to the project.
        path: String,
        /// How many more are tracked.
        more: usize,
    },
    /// A file the run reads is not a regular file inside the project (a
    /// symbolic link, a FIFO, a device), or is too large.
    #[error("{path}: {reason}")]
    Unsafe { path: String, reason: String },
    /// The run log could not be written safely (`agent-config/logs` is a link, …).
    #[error(
        "cannot write the run log: {0}; remove what is in the way (code-commit never writes through a link)"
    )]
    Log(#[source] safe_io::Error),
    /// git could not list what it tracks.
    #[error("cannot read the git index: {0}")]
    Git(#[source] gitctx::Error),
    /// `agent-config/config.toml` or the key file is unusable.
    #[error("{0}")]
    Config(String),
    /// A configuration file or value is invalid (not TOML, an unknown key, a
    /// value its key refuses); the cause names the file or key.
    #[error("{0}")]
    ConfigValue(#[source] layered_config::ConfigError),
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
