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

/// Errors of the commands around the agent (configuration, and storing the
/// note through the notes lifecycle).
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
    #[error("{0}")]
    Invalid(String),
    /// A file of ours under `.git/` or the hooks directory could not be read or
    /// written safely (a symbolic link, a special file, too large).
    #[error(transparent)]
    Unsafe(#[from] safe_io::Error),
    /// The notes lifecycle failed (storing the note, the state under
    /// `.git/ultragit/`).
    #[error(transparent)]
    Notes(#[from] ultragit_notes::NotesError),
}
