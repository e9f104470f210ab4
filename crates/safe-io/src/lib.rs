//! `safe-io`: input we do not trust, handled safely.
//!
//! The toolkit runs in repositories cloned from strangers. Their work tree and
//! history may hold symlinks pointing anywhere, FIFOs, device files, gigabyte
//! files, and text full of terminal escape sequences. This crate is the one place
//! that deals with that, so every caller gets the same rules:
//!
//! - [`fs`]: files under a trusted root (the top of a working tree, `.git/`, a
//!   project directory). **Invariant:** below the root no symbolic link is ever
//!   followed — not in the last component, not in a directory on the way — for
//!   reads and writes alike; only regular files are read, and every read has a
//!   byte limit (a FIFO neither blocks nor counts as a file, `/dev/zero` is not
//!   read). Writes create files and directories relative to already opened
//!   directory handles (`openat`-style), so a directory swapped for a symlink
//!   after a check cannot redirect them.
//! - [`term`]: text from notes and models made safe to print. **Invariant:** the
//!   result holds no C0 control character other than newline and tab, no DEL, no
//!   C1 control, and no bidirectional override or isolate; each is shown as a
//!   visible escape instead, so nothing can move the cursor, clear the screen,
//!   set the clipboard (OSC 52) or reorder what the reader sees.
//!
//! - **Dependencies:** none of our crates (`rustix` for the `*at` system calls).
//! - Unix only, like the rest of the workspace.

pub mod fs;
pub mod term;

pub use fs::{Dir, Error, FileKind};
