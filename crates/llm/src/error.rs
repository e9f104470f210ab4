//! Errors of provider calls.
//!
//! **Invariant:** no variant ever holds a key: messages taken from a provider's
//! reply pass through the provider's [`crate::Redactor`] before they are stored.

use std::time::Duration;

/// What went wrong talking to a provider.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LlmError {
    /// The provider could not be set up (bad base URL, unusable header value, …).
    #[error("{provider}: invalid configuration: {message}")]
    Config {
        provider: &'static str,
        message: String,
    },

    /// The provider refused the request (a 4xx other than 429, or a 5xx that is
    /// not retried). `message` is the provider's own, redacted.
    #[error("{provider}: HTTP {status}: {message}")]
    Api {
        provider: &'static str,
        status: u16,
        message: String,
    },

    /// Retryable failures (429, 5xx, timeouts, dropped connections) went on until
    /// the attempts ran out.
    #[error("{provider}: gave up after {attempts} attempts; last error: {last}")]
    RetriesExhausted {
        provider: &'static str,
        attempts: u32,
        last: Box<LlmError>,
    },

    /// No (complete) answer in time: one attempt (`overall == false`) or the whole
    /// call including retries.
    #[error("{provider}: no response within {} s{}", after.as_secs_f64(), if *overall { " (overall limit)" } else { "" })]
    Timeout {
        provider: &'static str,
        after: Duration,
        overall: bool,
    },

    /// The connection failed or broke (refused, reset, closed mid-body).
    #[error("{provider}: connection failed: {message}")]
    Transport {
        provider: &'static str,
        message: String,
    },

    /// The reply's body was larger than [`crate::HttpOptions::max_response_bytes`]
    /// (declared so, or found so while reading it). Not retried: the same server
    /// would send the same again. Holds no text from the reply.
    #[error(
        "the reply from {provider} was larger than {}, the most one reply may be; \
         no model answer is that large, so it was not read further (check the server \
         behind the base URL)",
        human_bytes(*limit)
    )]
    TooLarge { provider: &'static str, limit: u64 },

    /// The reply could not be understood: not JSON, or a required field missing or
    /// of the wrong type. `reason` names the field.
    #[error("{provider}: malformed response: {reason}")]
    Malformed {
        provider: &'static str,
        reason: String,
    },

    /// The reply's stop reason is not one this backend knows.
    #[error("{provider}: unknown stop reason '{value}'")]
    UnknownStopReason {
        provider: &'static str,
        value: String,
    },

    /// The model called a tool with arguments that are not JSON.
    #[error(
        "{provider}: the model called '{tool}' with arguments that are not valid JSON: {reason}"
    )]
    InvalidToolArguments {
        provider: &'static str,
        tool: String,
        reason: String,
    },
}

impl LlmError {
    /// The error with every string that may come from a reply passed through
    /// `redactor` (for errors built where no redactor is at hand, such as the
    /// reply parsers).
    pub(crate) fn redacted(self, redactor: &crate::Redactor) -> LlmError {
        let r = |text: String| redactor.redact(&text);
        match self {
            LlmError::Config { provider, message } => LlmError::Config {
                provider,
                message: r(message),
            },
            LlmError::Api {
                provider,
                status,
                message,
            } => LlmError::Api {
                provider,
                status,
                message: r(message),
            },
            LlmError::RetriesExhausted {
                provider,
                attempts,
                last,
            } => LlmError::RetriesExhausted {
                provider,
                attempts,
                last: Box::new(last.redacted(redactor)),
            },
            LlmError::Transport { provider, message } => LlmError::Transport {
                provider,
                message: r(message),
            },
            LlmError::Malformed { provider, reason } => LlmError::Malformed {
                provider,
                reason: r(reason),
            },
            LlmError::UnknownStopReason { provider, value } => LlmError::UnknownStopReason {
                provider,
                value: r(value),
            },
            LlmError::InvalidToolArguments {
                provider,
                tool,
                reason,
            } => LlmError::InvalidToolArguments {
                provider,
                tool: r(tool),
                reason: r(reason),
            },
            other @ (LlmError::Timeout { .. } | LlmError::TooLarge { .. }) => other,
        }
    }

    /// The HTTP status behind the error, if any.
    pub fn status(&self) -> Option<u16> {
        match self {
            LlmError::Api { status, .. } => Some(*status),
            LlmError::RetriesExhausted { last, .. } => last.status(),
            _ => None,
        }
    }

    /// The provider's short name.
    pub fn provider(&self) -> &'static str {
        match self {
            LlmError::Config { provider, .. }
            | LlmError::Api { provider, .. }
            | LlmError::RetriesExhausted { provider, .. }
            | LlmError::Timeout { provider, .. }
            | LlmError::Transport { provider, .. }
            | LlmError::Malformed { provider, .. }
            | LlmError::TooLarge { provider, .. }
            | LlmError::UnknownStopReason { provider, .. }
            | LlmError::InvalidToolArguments { provider, .. } => provider,
        }
    }
}

/// `bytes` for people: `16 MiB`, `64 KiB`, or a plain byte count.
fn human_bytes(bytes: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * KIB;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= KIB && bytes.is_multiple_of(KIB) {
        format!("{} KiB", bytes / KIB)
    } else {
        format!("{bytes} bytes")
    }
}
