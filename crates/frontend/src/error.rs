//! One error model for the three binaries: a [`CommandError`] is classified once
//! (an [`ErrorKind`]), keeps the error it came from (its cause chain), and may
//! carry hints; [`ErrorKind::exit_code`] is the one exit-code table.
//!
//! The printed shape, the same in every binary:
//!
//! ```text
//! error: <message>
//! caused by: <cause>        (one line per cause, only with --debug)
//! hint: <hint>              (one line per hint)
//! ```
//!
//! The message is what the user needs without `--debug`: a library error's own
//! text, which already names its cause where that helps (`git blame failed for
//! a.rs: …`). `--debug` adds the chain of `source()`s, each on its own line.
//! Everything is passed through [`safe_io::term::sanitize`] (errors quote model
//! answers, provider messages, notes and paths from the repository) and, when a
//! redactor is given, masked with it.
//!
//! Library errors become a `CommandError` through [`Classify`], implemented for
//! each library error type in `classify.rs`.

use std::error::Error as StdError;
use std::fmt;

use llm::Redactor;
use safe_io::term::sanitize;

/// A boxed cause.
pub type Source = Box<dyn StdError + Send + Sync + 'static>;

/// The exit status of a command that succeeded (also: output to a closed pipe).
pub(crate) const EXIT_SUCCESS: u8 = 0;
/// The exit status of a command that failed, or finished with a negative
/// answer (a build that still fails, a tool result that is not ok).
pub(crate) const EXIT_FAILURE: u8 = 1;
/// The exit status of a usage error: the command line is wrong.
pub(crate) const EXIT_USAGE: u8 = 2;

/// What kind of failure an error is: who can fix it, and which exit status it
/// gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The command line is wrong (an unknown flag, an argument that does not
    /// fit another); clap's own errors are of this kind.
    Usage,
    /// A setting is missing or unusable: no API key, a bad base URL, an
    /// unreadable configuration or credentials file.
    Config,
    /// The repository or the input is not what the command needs: not a
    /// repository, nothing staged, an unknown revision or file, a symbolic link
    /// where a file should be.
    User,
    /// The model's provider failed (after its retries), or the model's answer
    /// was still unusable after the repair pass.
    Provider,
    /// git failed: a git process, libgit2, a lock another process holds.
    Git,
    /// Something on our side: the async runtime could not start, a file of our
    /// own could not be written, an edit could not be rolled back.
    Internal,
}

impl ErrorKind {
    /// The exit status for this kind: the one table all three binaries use.
    pub fn exit_code(self) -> u8 {
        match self {
            ErrorKind::Usage => EXIT_USAGE,
            ErrorKind::Config
            | ErrorKind::User
            | ErrorKind::Provider
            | ErrorKind::Git
            | ErrorKind::Internal => EXIT_FAILURE,
        }
    }
}

/// How an error type of ours is classified: implemented once per library error
/// type (in `classify.rs`), so `?` turns it into a [`CommandError`].
pub(crate) trait Classify: StdError + Send + Sync + 'static {
    /// The kind of this error.
    fn kind(&self) -> ErrorKind;
}

/// A failed command: its kind, the one-line (or multi-line) message, the error
/// it came from, hints, and text for stdout that belongs to the failure.
#[derive(Debug)]
pub struct CommandError(Box<Inner>);

#[derive(Debug)]
struct Inner {
    kind: ErrorKind,
    message: String,
    source: Option<Source>,
    hints: Vec<String>,
    stdout: String,
    usage_of: Option<String>,
}

impl CommandError {
    /// An error with a message and no cause.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> CommandError {
        CommandError(Box::new(Inner {
            kind,
            message: message.into(),
            source: None,
            hints: Vec::new(),
            stdout: String::new(),
            usage_of: None,
        }))
    }

    /// A usage error found after parsing (exit 2).
    pub fn usage(message: impl Into<String>) -> CommandError {
        CommandError::new(ErrorKind::Usage, message)
    }

    /// `err` as a command error of `kind`: its text is the message, and `--debug`
    /// prints its causes.
    pub fn from_error(kind: ErrorKind, err: impl Into<Source>) -> CommandError {
        let source = err.into();
        let mut error = CommandError::new(kind, source.to_string());
        error.0.source = Some(source);
        error
    }

    /// The message prefixed with `context` (`context: message`); the error
    /// behind it stays the first cause.
    pub fn context(self, context: impl fmt::Display) -> CommandError {
        self.map_message(|message| format!("{context}: {message}"))
    }

    /// The message rewritten by `f` (a suffix, a block of detail below it).
    pub fn map_message(mut self, f: impl FnOnce(String) -> String) -> CommandError {
        let message = std::mem::take(&mut self.0.message);
        self.0.message = f(message);
        self
    }

    /// Adds a `hint:` line.
    pub fn with_hint(mut self, hint: impl Into<String>) -> CommandError {
        self.0.hints.push(hint.into());
        self
    }

    /// Text printed on stdout before the error (e.g. the raw note that could
    /// not be read).
    pub fn with_stdout(mut self, text: impl Into<String>) -> CommandError {
        self.0.stdout = text.into();
        self
    }

    /// For a usage error: print it the way clap prints its own, with the usage
    /// of `subcommand` (names separated by spaces, e.g. `read`).
    pub fn with_usage_of(mut self, subcommand: impl Into<String>) -> CommandError {
        self.0.usage_of = Some(subcommand.into());
        self
    }

    /// The kind.
    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    /// The message (without `error: `).
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// The exit status this error gets.
    pub(crate) fn exit_code(&self) -> u8 {
        self.0.kind.exit_code()
    }

    pub(crate) fn stdout(&self) -> &str {
        &self.0.stdout
    }

    pub(crate) fn usage_of(&self) -> Option<&str> {
        self.0.usage_of.as_deref()
    }

    /// The causes `--debug` prints: the chain of the error behind the message,
    /// without a line that repeats the one before it (a transparent wrapper, or
    /// the error whose text is the message).
    pub(crate) fn causes(&self) -> Vec<String> {
        let mut causes: Vec<String> = Vec::new();
        let mut previous = self.0.message.clone();
        let mut next: Option<&(dyn StdError + 'static)> = match &self.0.source {
            Some(source) => Some(source.as_ref()),
            None => None,
        };
        while let Some(err) = next {
            let text = err.to_string();
            if text != previous {
                causes.push(text.clone());
            }
            previous = text;
            next = err.source();
        }
        causes
    }

    /// Every text of the error masked with `redactor`: the message, the hints,
    /// the stdout text and each cause (the chain is kept as text).
    pub fn redacted(self, redactor: &Redactor) -> CommandError {
        let causes = self.causes();
        let inner = *self.0;
        let source = causes
            .iter()
            .rev()
            .fold(None::<Redacted>, |below, cause| {
                Some(Redacted {
                    text: redactor.redact(cause),
                    source: below.map(Box::new),
                })
            })
            .map(|chain| Box::new(chain) as Source);
        CommandError(Box::new(Inner {
            kind: inner.kind,
            message: redactor.redact(&inner.message),
            source,
            hints: inner.hints.iter().map(|h| redactor.redact(h)).collect(),
            stdout: redactor.redact(&inner.stdout),
            usage_of: inner.usage_of,
        }))
    }

    /// The text for stderr: `error: …`, with `debug` a `caused by: …` line per
    /// cause, then a `hint: …` line per hint; control characters escaped.
    pub(crate) fn render(&self, debug: bool) -> String {
        let mut out = format!("error: {}\n", sanitize(&self.0.message));
        if debug {
            for cause in self.causes() {
                out.push_str(&format!("caused by: {}\n", sanitize(&cause)));
            }
        }
        for hint in &self.0.hints {
            out.push_str(&format!("hint: {}\n", sanitize(hint)));
        }
        out
    }
}

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.message)
    }
}

impl<E: Classify> From<E> for CommandError {
    fn from(err: E) -> Self {
        let kind = err.kind();
        CommandError::from_error(kind, err)
    }
}

/// A cause kept as (redacted) text.
#[derive(Debug)]
struct Redacted {
    text: String,
    source: Option<Box<Redacted>>,
}

impl fmt::Display for Redacted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl StdError for Redacted {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.source
            .as_deref()
            .map(|s| s as &(dyn StdError + 'static))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error with a cause, like a library's `#[source]` field.
    #[derive(Debug, thiserror::Error)]
    #[error("git blame failed for a.rs: {source}")]
    struct Outer {
        source: Inner2,
    }

    #[derive(Debug, thiserror::Error)]
    #[error("`git blame` failed (exit status 128): fatal: bad revision")]
    struct Inner2;

    impl Classify for Outer {
        fn kind(&self) -> ErrorKind {
            ErrorKind::Git
        }
    }

    #[test]
    fn one_exit_code_table() {
        assert_eq!(ErrorKind::Usage.exit_code(), 2);
        for kind in [
            ErrorKind::Config,
            ErrorKind::User,
            ErrorKind::Provider,
            ErrorKind::Git,
            ErrorKind::Internal,
        ] {
            assert_eq!(kind.exit_code(), 1, "{kind:?}");
        }
    }

    #[test]
    fn the_shape_is_error_then_causes_with_debug_then_hints() {
        let err = CommandError::from(Outer { source: Inner2 }).with_hint("run `git fetch`");
        assert_eq!(err.kind(), ErrorKind::Git);
        assert_eq!(
            err.render(false),
            "error: git blame failed for a.rs: `git blame` failed (exit status 128): fatal: bad revision\n\
             hint: run `git fetch`\n"
        );
        assert_eq!(
            err.render(true),
            "error: git blame failed for a.rs: `git blame` failed (exit status 128): fatal: bad revision\n\
             caused by: `git blame` failed (exit status 128): fatal: bad revision\n\
             hint: run `git fetch`\n"
        );
    }

    #[test]
    fn context_keeps_the_error_as_the_first_cause() {
        let err = CommandError::from(Outer { source: Inner2 }).context("annotating abc1234 failed");
        assert!(
            err.message()
                .starts_with("annotating abc1234 failed: git blame failed")
        );
        assert_eq!(err.causes().len(), 2, "{:?}", err.causes());
        assert_eq!(err.causes()[0], Outer { source: Inner2 }.to_string());
        let plain = CommandError::new(ErrorKind::User, "nothing to do");
        assert!(plain.causes().is_empty());
        assert_eq!(plain.render(true), "error: nothing to do\n");
    }

    #[test]
    fn control_characters_are_escaped_everywhere() {
        let err = CommandError::new(
            ErrorKind::Provider,
            "bad \u{1b}]52;c;eA==\u{7} reply\nline two",
        )
        .with_hint("\u{202e}check");
        let text = err.render(true);
        assert_eq!(
            text,
            "error: bad \\x1b]52;c;eA==\\x07 reply\nline two\nhint: \\u{202e}check\n"
        );
    }

    #[test]
    fn redaction_masks_the_message_the_causes_and_the_hints() {
        let key = llm::Secret::new("sk-secret-0123456789");
        let redactor = Redactor::new([&key]);
        #[derive(Debug, thiserror::Error)]
        #[error("HTTP 401: key sk-secret-0123456789 is wrong")]
        struct Leaky;
        let err = CommandError::from_error(ErrorKind::Provider, Leaky)
            .context("asking sk-secret-0123456789")
            .with_hint("unset sk-secret-0123456789")
            .redacted(&redactor);
        let text = err.render(true);
        assert!(!text.contains("sk-secret-0123456789"), "{text}");
        assert_eq!(text.lines().count(), 3, "{text}");
        assert!(
            text.lines()
                .nth(1)
                .unwrap()
                .starts_with("caused by: HTTP 401"),
            "{text}"
        );
    }
}
