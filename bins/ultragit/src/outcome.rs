//! What the commands other than `read` hand back to `main`: the text to print, or
//! the one-line reason they failed.

use std::fmt::Display;

/// A command's output.
#[derive(Debug, Default)]
pub struct Output {
    /// For stdout (may be empty).
    pub text: String,
    /// Printed on stderr as `warning: …`, before the text.
    pub warnings: Vec<String>,
}

impl Output {
    /// Just `text`.
    pub fn text(text: impl Into<String>) -> Output {
        Output {
            text: text.into(),
            warnings: Vec::new(),
        }
    }
}

/// A failed command (exit 1): `error: {message}` on stderr, and `text` (often
/// empty) on stdout.
#[derive(Debug)]
pub struct Failure {
    pub message: String,
    pub text: String,
}

impl Failure {
    /// A failure with nothing for stdout.
    pub fn new(message: impl Display) -> Failure {
        Failure {
            message: message.to_string(),
            text: String::new(),
        }
    }
}
