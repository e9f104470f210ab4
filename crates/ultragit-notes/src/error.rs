//! The notes lifecycle's errors.

/// Why an operation on the notes, the hooks or the state under `.git/ultragit/`
/// failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NotesError {
    #[error("{0}")]
    Git(#[from] gitctx::Error),
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
/// [`NotesError`]; re-exported as `sync::SyncError`).
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

impl NotesError {
    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        NotesError::Io {
            path: path.display().to_string(),
            source,
        }
    }
}
