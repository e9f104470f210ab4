//! The one error type of `gitctx`.
//!
//! Errors are classified from structured facts (libgit2 error codes, exit statuses,
//! checks made before a command runs), never by reading git's English stderr. The
//! stderr text of a failed command is kept only so a human can read it.

use std::path::PathBuf;

/// A boxed lower-level cause. Foreign error types (libgit2's) are kept behind this
/// so they never become part of the public API.
pub type Source = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Everything that can go wrong while talking to git.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The path is not inside any git repository.
    #[error("not a git repository (or any parent directory): {}", path.display())]
    NotARepository { path: PathBuf },

    /// The repository has no working tree, and the operation needs one.
    #[error("{} is a bare repository; run this inside a working tree", path.display())]
    BareRepository { path: PathBuf },

    /// The repository exists but may not be opened (ownership / `safe.directory`).
    #[error(
        "{} is owned by another user; add it to git's safe.directory if you trust it",
        path.display()
    )]
    UnsafeRepository { path: PathBuf },

    /// A revision did not resolve.
    #[error("unknown revision '{rev}'")]
    RevNotFound { rev: String },

    /// A short revision matched several objects.
    #[error("ambiguous revision '{rev}': use more characters of the hash")]
    AmbiguousRev { rev: String },

    /// The revision resolved, but not to what the operation needs.
    #[error("'{rev}' is not a {expected}")]
    WrongObjectKind { rev: String, expected: &'static str },

    /// HEAD points at a branch with no commits yet.
    #[error("the current branch '{branch}' has no commits yet")]
    UnbornHead { branch: String },

    /// A path does not exist in the given tree (a revision, or the index).
    #[error("'{path}' does not exist at {at}")]
    PathNotFound { path: String, at: String },

    /// A path exists but is not a regular file (a directory, a submodule, …).
    #[error("'{path}' at {at} is not a file")]
    NotAFile { path: String, at: String },

    /// A line range does not fit the file.
    #[error("line range {start}:{end} is invalid for '{path}' ({len} lines)")]
    InvalidLineRange {
        path: String,
        start: u32,
        end: u32,
        len: u32,
    },

    /// An argument given to `gitctx` is unusable (e.g. a ref name git rejects).
    #[error("{what}: {reason}")]
    InvalidInput { what: String, reason: String },

    /// Another process holds a lock git needs.
    #[error("{} is locked by another git process; if none is running, remove the lock file", path.display())]
    Locked { path: PathBuf },

    /// A note is larger than the limit and was not read.
    #[error(
        "the note of commit {target} is {bytes} bytes, over the limit of {limit}; it was not read"
    )]
    NoteTooLarge {
        target: String,
        bytes: u64,
        limit: u64,
    },

    /// A compare-and-swap ref update kept losing races.
    #[error("could not update {refname} after {attempts} attempts: other writers kept changing it")]
    Contended { refname: String, attempts: u32 },

    /// The `git` executable could not be started.
    #[error("could not run git (is it installed and on PATH?): {source}")]
    Spawn {
        #[source]
        source: std::io::Error,
    },

    /// A git process exited unsuccessfully.
    #[error("`git {args}` failed ({status}){}", stderr_suffix(stderr))]
    Command {
        args: String,
        status: String,
        stderr: String,
    },

    /// A git process did not finish in time and was killed.
    #[error("`git {args}` did not finish within {} ms and was stopped", after.as_millis())]
    Timeout {
        args: String,
        after: std::time::Duration,
    },

    /// A git process produced output we could not understand.
    #[error("could not parse the output of `git {args}`: {reason}")]
    Parse { args: String, reason: String },

    /// A file in the working tree could not be read safely: a symbolic link,
    /// not a regular file, or over the size limit (the repository is untrusted).
    #[error(transparent)]
    Unsafe(#[from] safe_io::Error),

    /// A file system operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// Any other libgit2 failure, with what we were doing.
    #[error("git {op} failed: {message}")]
    Git {
        op: &'static str,
        message: String,
        #[source]
        source: Source,
    },
}

fn stderr_suffix(stderr: &str) -> String {
    let trimmed = stderr.trim();
    if trimmed.is_empty() {
        String::new()
    } else {
        format!(": {trimmed}")
    }
}

/// Convenience alias.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Wraps a libgit2 error with the operation that failed.
pub(crate) fn git(op: &'static str) -> impl FnOnce(git2::Error) -> Error {
    move |err| Error::Git {
        op,
        message: err.message().to_owned(),
        source: Box::new(err),
    }
}

/// True when the libgit2 error says "the thing is not there".
pub(crate) fn is_not_found(err: &git2::Error) -> bool {
    err.code() == git2::ErrorCode::NotFound
}
