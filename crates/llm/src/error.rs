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

    /// Retryable failures went on until the next retry would have started past
    /// the retry budget ([`crate::RetryPolicy::retry_budget`]).
    #[error(
        "{provider}: still failing when the retry budget of {} ran out ({attempts} {}); last error: {last}",
        human_duration(*budget),
        if *attempts == 1 { "attempt" } else { "attempts" }
    )]
    RetryBudgetSpent {
        provider: &'static str,
        budget: Duration,
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
            LlmError::RetryBudgetSpent {
                provider,
                budget,
                attempts,
                last,
            } => LlmError::RetryBudgetSpent {
                provider,
                budget,
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
            LlmError::RetriesExhausted { last, .. } | LlmError::RetryBudgetSpent { last, .. } => {
                last.status()
            }
            _ => None,
        }
    }

    /// The provider's short name.
    pub fn provider(&self) -> &'static str {
        match self {
            LlmError::Config { provider, .. }
            | LlmError::Api { provider, .. }
            | LlmError::RetriesExhausted { provider, .. }
            | LlmError::RetryBudgetSpent { provider, .. }
            | LlmError::Timeout { provider, .. }
            | LlmError::Transport { provider, .. }
            | LlmError::Malformed { provider, .. }
            | LlmError::TooLarge { provider, .. }
            | LlmError::UnknownStopReason { provider, .. }
            | LlmError::InvalidToolArguments { provider, .. } => provider,
        }
    }
}

/// `duration` for people: `5 min`, `90 s`, `1.5 s`, `1 h`.
pub(crate) fn human_duration(duration: Duration) -> String {
    let secs = duration.as_secs();
    if duration.subsec_nanos() != 0 {
        format!("{:.1} s", duration.as_secs_f64())
    } else if secs >= 3600 && secs.is_multiple_of(3600) {
        format!("{} h", secs / 3600)
    } else if secs >= 60 && secs.is_multiple_of(60) {
        format!("{} min", secs / 60)
    } else {
        format!("{secs} s")
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_people_say_them() {
        for (duration, text) in [
            (Duration::from_secs(300), "5 min"),
            (Duration::from_secs(90), "90 s"),
            (Duration::from_secs(3), "3 s"),
            (Duration::from_millis(1500), "1.5 s"),
            (Duration::from_secs(7200), "2 h"),
        ] {
            assert_eq!(human_duration(duration), text);
        }
    }

    #[test]
    fn a_spent_budget_names_the_budget_and_keeps_the_status() {
        let err = LlmError::RetryBudgetSpent {
            provider: "openai-chat",
            budget: Duration::from_secs(300),
            attempts: 41,
            last: Box::new(LlmError::Api {
                provider: "openai-chat",
                status: 429,
                message: "slow down".to_owned(),
            }),
        };
        assert_eq!(
            err.to_string(),
            "openai-chat: still failing when the retry budget of 5 min ran out (41 attempts); \
             last error: openai-chat: HTTP 429: slow down"
        );
        assert_eq!(err.status(), Some(429));
        assert_eq!(err.provider(), "openai-chat");
    }
}
