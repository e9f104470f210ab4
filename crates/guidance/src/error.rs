//! The error type of `guidance`.

use std::io;
use std::path::PathBuf;

/// What can make [`resolve`](crate::resolve) fail. Only the repository root
/// can: problems with individual guidance files (unreadable, a symlink
/// leaving the root, not a regular file) make that file not count instead.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GuidanceError {
    /// The root does not exist, cannot be listed, or cannot be made
    /// absolute or canonical.
    #[error("cannot read repository root {}", path.display())]
    Root {
        /// The root as given.
        path: PathBuf,
        /// The underlying failure.
        #[source]
        source: io::Error,
    },

    /// The root exists but is not a directory.
    #[error("repository root {} is not a directory", path.display())]
    NotADirectory {
        /// The root as given.
        path: PathBuf,
    },
}
