//! Read errors, with the exact messages of spec 003 §5.

use ultragit_schema::{ReadErrorBody, ReadErrorCode};

/// Why a read failed. `Display` is the one line a user sees; [`ReadError::body`]
/// is the JSON error object (`--format json`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// The file does not exist at HEAD.
    #[error("File not found: {path}. Does it exist at HEAD?")]
    FileNotFound { path: String },

    /// The anchor matches no unit, not even fuzzily.
    #[error(
        "Anchor '{anchor}' not found in {path}. Available anchors: {}",
        list(available)
    )]
    AnchorNotFound {
        path: String,
        anchor: String,
        available: Vec<String>,
    },

    /// `--lines` goes past the end of the file.
    #[error("Line range {start}:{end} exceeds file length ({len} lines)")]
    LineRangeOutOfBounds { start: u32, end: u32, len: u32 },

    /// `--lines` is malformed, starts at 0, or ends before it starts.
    #[error("Invalid line range {text}: {reason}")]
    InvalidLineRange { text: String, reason: String },

    /// `--since` is neither a date nor a commit.
    #[error(
        "Invalid --since '{value}': not an ISO 8601 date (e.g. 2025-01-31 or 2025-01-31T12:00:00Z) nor a known commit"
    )]
    InvalidSince { value: String },

    /// Any other bad argument.
    #[error("{0}")]
    InvalidArgument(String),

    /// Not inside a git working tree.
    #[error("Not a git repository: {path}. Run ultragit inside a repository's working tree.")]
    NotARepository { path: String },

    /// `git blame` failed.
    #[error("git blame failed for {path}: {source}")]
    Blame {
        path: String,
        #[source]
        source: gitctx::Error,
    },

    /// Any other git failure.
    #[error("git failed: {0}")]
    Git(#[from] gitctx::Error),

    /// A configuration value is unusable; the cause names the key and where it
    /// was set.
    #[error("Invalid configuration: {0}")]
    Config(#[source] layered_config::ConfigError),

    /// The team configuration file could not be read safely (a link, a special
    /// file, too large).
    #[error("Invalid configuration: {0}")]
    ConfigFile(#[source] gitctx::Error),
}

fn list(available: &[String]) -> String {
    const SHOWN: usize = 40;
    if available.is_empty() {
        return "(none: the file has no named units)".to_owned();
    }
    let mut text = available
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if available.len() > SHOWN {
        text.push_str(&format!(" and {} more", available.len() - SHOWN));
    }
    text
}

impl ReadError {
    /// The machine-readable code.
    pub fn code(&self) -> ReadErrorCode {
        match self {
            ReadError::FileNotFound { .. } => ReadErrorCode::FileNotFound,
            ReadError::AnchorNotFound { .. } => ReadErrorCode::AnchorNotFound,
            ReadError::LineRangeOutOfBounds { .. } => ReadErrorCode::LineRangeOutOfBounds,
            ReadError::InvalidLineRange { .. } => ReadErrorCode::InvalidLineRange,
            ReadError::InvalidSince { .. } => ReadErrorCode::InvalidSince,
            ReadError::InvalidArgument(_) => ReadErrorCode::InvalidArgument,
            ReadError::NotARepository { .. } => ReadErrorCode::NotARepository,
            ReadError::Blame { .. } => ReadErrorCode::BlameFailed,
            ReadError::Git(_) => ReadErrorCode::Git,
            ReadError::Config(_) | ReadError::ConfigFile(_) => ReadErrorCode::Config,
        }
    }

    /// The JSON error object of spec 003 §5 (with the available anchors as
    /// `details` for `anchor_not_found`).
    pub fn body(&self) -> ReadErrorBody {
        let body = ReadErrorBody::new(self.code(), self.to_string());
        match self {
            ReadError::AnchorNotFound { available, .. } => {
                body.with_details(serde_json::json!({ "available_anchors": available }))
            }
            _ => body,
        }
    }
}
