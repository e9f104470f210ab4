//! The writing agent's errors (spec 000 "Error Types").

/// Why an annotation could not be produced.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// The model provider failed (after its retries).
    #[error("Provider error: {0}")]
    Provider(#[from] llm::LlmError),

    /// The agent finished without emitting a single annotation.
    #[error("Agent produced no annotations after {turns} turns")]
    NoAnnotations { turns: u32 },

    /// The turn budget ran out before the agent emitted anything.
    #[error("Agent exceeded maximum turns ({max_turns}) without emitting annotations")]
    MaxTurnsExceeded { max_turns: u32 },

    /// Every answer was cut by the output-token limit before anything was emitted.
    #[error("Agent exceeded token budget ({budget} tokens) without emitting annotations")]
    TokenBudgetExceeded { budget: u32 },

    /// The agent's output could not be turned into an annotation.
    #[error("Failed to parse annotation from agent output: {message}")]
    InvalidAnnotation { message: String },

    /// Reading the commit failed.
    #[error("Git operation failed: {message}")]
    Git { message: String },

    /// The run did not finish within the overall time limit.
    #[error("The agent did not finish within {seconds} s")]
    Timeout { seconds: u64 },

    /// The cap of model calls per commit (`ultragit.maxCalls`, `--max-calls`)
    /// ran out before the agent emitted anything.
    #[error(
        "Agent reached the cap of {max_calls} model calls for this commit (ultragit.maxCalls, \
         --max-calls) without emitting annotations"
    )]
    MaxCallsExceeded { max_calls: u32 },

    /// A request would not fit the model's context window; it was not sent.
    #[error("{message} (raise ultragit.contextWindow if the model has a larger one)")]
    ContextWindowExceeded { message: String },
}

impl From<gitctx::Error> for AgentError {
    fn from(err: gitctx::Error) -> Self {
        AgentError::Git {
            message: err.to_string(),
        }
    }
}

/// Errors of the commands around the agent (configuration, storage, set-up).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AnnotateError {
    #[error(transparent)]
    Agent(#[from] AgentError),
    #[error("{0}")]
    Git(#[from] gitctx::Error),
    /// A setting is unusable; the cause names the key and where it was set.
    #[error("invalid configuration: {0}")]
    Config(#[source] layered_config::ConfigError),
    /// `.ultragit-config.toml` could not be read safely (a link, a special
    /// file, too large).
    #[error("invalid configuration: {0}")]
    ConfigFile(#[source] gitctx::Error),
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Invalid(String),
    /// A file of ours under `.git/` or the hooks directory could not be read or
    /// written safely (a symbolic link, a special file, too large).
    #[error(transparent)]
    Unsafe(#[from] safe_io::Error),
    /// `ultragit sync` could not reach, or push to, the remote.
    #[error(transparent)]
    Sync(#[from] SyncError),
}

/// Why `ultragit sync` failed (defined here, below `sync`, which uses
/// [`AnnotateError`]; re-exported as `sync::SyncError`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SyncError {
    #[error(
        "there is no remote named '{remote}' in this repository (see `git remote -v`); name one with `ultragit sync <remote>`"
    )]
    UnknownRemote { remote: String },
    #[error(
        "could not reach the remote '{remote}' ({detail}); check its URL (`git remote get-url {remote}`), the network and your credentials"
    )]
    Unreachable { remote: String, detail: String },
    #[error("the remote '{remote}' refused the push of {refname}: {reason}")]
    Refused {
        remote: String,
        refname: String,
        reason: String,
    },
    #[error(
        "the push of {refname} to '{remote}' was rejected {attempts} times because others pushed at the same time; run `ultragit sync` again"
    )]
    KeptLosing {
        remote: String,
        refname: String,
        attempts: u32,
    },
}

impl AnnotateError {
    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        AnnotateError::Io {
            path: path.display().to_string(),
            source,
        }
    }
}
