//! Project guidance for git-agent: finds the `AGENTS.md`-family or
//! `CLAUDE.md`-family files that apply to a set of repository paths, and
//! renders them as one Codex-style prompt block.
//!
//! ```no_run
//! # fn main() -> Result<(), guidance::GuidanceError> {
//! use guidance::{FamilyChoice, Options};
//! let targets = vec!["frontend/admin/page.tsx".to_owned()];
//! let found = guidance::resolve("/repo".as_ref(), &targets, FamilyChoice::Auto, &Options::default())?;
//! if let Some(block) = found.render() {
//!     // `block` goes into the agent's prompt.
//! #   let _ = block;
//! }
//! # Ok(())
//! # }
//! ```
//!
//! # Rules
//! - **Families.** AGENTS-family: `AGENTS.override.md`, then `AGENTS.md`, in
//!   precedence order within one directory. CLAUDE-family: `CLAUDE.md`. Names
//!   are matched exactly: `agents.md` or `Claude.md` are not guidance (on a
//!   case-insensitive file system the lookup itself may still find them under
//!   the exact name).
//! - **Selection** is global for one request ([`FamilyChoice::Auto`]):
//!   AGENTS-family if any directory on any target's chain has an
//!   AGENTS-family file that counts, else CLAUDE-family if one has a
//!   `CLAUDE.md`, else nothing. Families are never mixed. The caller may
//!   force a family, or none.
//! - **Scope.** For each target, every directory from the root down to the
//!   target's directory, in that order, contributes at most one file (the
//!   first candidate that counts). Over several targets the directories are
//!   taken in the order the targets (in the order given) first reach them,
//!   so sources are unique, root first, every parent before its children.
//!   No targets, or only `""`/`"."`, means the root alone.
//! - **Targets** are repository-relative, `/`-separated paths that need not
//!   exist (a deleted file). A target that is a real directory on disk is
//!   its own directory; anything else (a file, a symlink, a missing path)
//!   stands for its parent. A target that is absolute, has a `..`
//!   component, or has a `.git` component (any case) is treated as the root.
//!   The walk stops at the first directory on a chain that is missing or is
//!   a symlink (git never looks through symlinked directories), so nothing
//!   outside the root is read.
//! - **A candidate counts** if it is a regular file, or a symlink whose
//!   resolved target is a regular file inside the resolved root; if it can be
//!   opened and read; and if its shown text is not empty or whitespace-only.
//!   Any I/O error on a candidate (other than on the root) makes it not
//!   count. Text is decoded as UTF-8, invalid bytes replaced (lossy); a
//!   leading byte-order mark is dropped.
//! - **Budgets** ([`Options`]) count bytes of decoded text. A file longer than
//!   `max_file_bytes` is cut at a character boundary (at most that many bytes
//!   are read). Sources then share `max_total_bytes` in order: once it is
//!   used up, later sources are cut, or kept with an empty text, so that
//!   [`Guidance::paths`] still lists every file found. Either way the source
//!   is marked [`Source::truncated`] and [`Guidance::render`] says how much
//!   of it is shown. The rendered wrapper is not counted.
//! - **Cost.** A few `lstat` calls per distinct target and per distinct
//!   directory on the chains; no directory is listed, the tree is not walked.
//!
//! # Dependencies
//! std and `thiserror`; none of our crates.
//!
//! # Invariants
//! - Reads nothing outside the root, never panics on bad input, never prints
//!   and never reads the environment.
//! - [`Source::path`]s are repository-relative with `/` separators, never
//!   absolute; the only absolute path is the heading's [`Guidance::target`].
//! - `family.is_some()` exactly when `sources` is not empty.

mod discover;
mod error;
mod family;
mod render;

use std::path::{Path, PathBuf};

pub use error::GuidanceError;
pub use family::{Family, FamilyChoice, ParseFamilyChoiceError};

/// Default for [`Options::max_file_bytes`]: 32 KiB.
pub(crate) const DEFAULT_MAX_FILE_BYTES: usize = 32 * 1024;
/// Default for [`Options::max_total_bytes`]: 64 KiB.
pub(crate) const DEFAULT_MAX_TOTAL_BYTES: usize = 64 * 1024;

/// Budgets for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Most bytes of text taken from one file.
    pub max_file_bytes: usize,
    /// Most bytes of text taken from all files together.
    pub max_total_bytes: usize,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            max_total_bytes: DEFAULT_MAX_TOTAL_BYTES,
        }
    }
}

/// One guidance file that applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// Repository-relative path with `/` separators, e.g.
    /// `frontend/AGENTS.md`.
    pub path: String,
    /// The text shown: the file's decoded text, possibly cut (and then
    /// possibly empty).
    pub text: String,
    /// Whether `text` is shorter than the file because of a budget.
    pub truncated: bool,
    /// The file's size in bytes.
    pub file_len: u64,
}

/// The guidance for one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guidance {
    /// The family the sources come from; `None` when there are none.
    pub family: Option<Family>,
    /// The files that apply, root first, each parent before its children.
    pub sources: Vec<Source>,
    /// Absolute directory the guidance is for: the deepest directory common
    /// to all targets' directories (the root when there are no targets).
    /// Lexical: the root is made absolute but its symlinks are not resolved.
    pub target: PathBuf,
}

impl Guidance {
    /// True when no guidance applies; [`render`](Self::render) then gives
    /// `None`.
    pub fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }

    /// The repository-relative paths of the sources, in order.
    pub fn paths(&self) -> Vec<&str> {
        self.sources
            .iter()
            .map(|source| source.path.as_str())
            .collect()
    }
}

/// Finds the guidance that applies to `targets` (repository-relative paths)
/// in the repository whose working tree is at `root`. See the crate
/// documentation for the rules.
///
/// # Errors
/// Only when `root` does not exist, is not a directory, or cannot be read;
/// problems with individual guidance files make them not count instead.
pub fn resolve(
    root: &Path,
    targets: &[String],
    choice: FamilyChoice,
    options: &Options,
) -> Result<Guidance, GuidanceError> {
    let root = discover::Root::open(root)?;
    let scope = discover::Scope::collect(&root, targets);
    let mut target = root.abs.clone();
    target.extend(&scope.common);

    let find = |family| discover::find(&root, &scope.dirs, family, options.max_file_bytes);
    let (family, mut sources) = match choice {
        FamilyChoice::None => (None, Vec::new()),
        FamilyChoice::Agents => (Some(Family::Agents), find(Family::Agents)),
        FamilyChoice::Claude => (Some(Family::Claude), find(Family::Claude)),
        FamilyChoice::Auto => {
            let agents = find(Family::Agents);
            if agents.is_empty() {
                (Some(Family::Claude), find(Family::Claude))
            } else {
                (Some(Family::Agents), agents)
            }
        }
    };

    let mut remaining = options.max_total_bytes;
    for source in &mut sources {
        source.truncated |= discover::cut(&mut source.text, remaining);
        remaining -= source.text.len();
    }

    Ok(Guidance {
        family: family.filter(|_| !sources.is_empty()),
        sources,
        target,
    })
}
