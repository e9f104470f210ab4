//! `repo-tools`: the curated, read-only repository tools an agent may call —
//! `git_status_summary` (spec 002, exact), and the shared tools of spec 004 §5:
//! `repo_summary`, `list_files`, `read_file`, `search_files` — and their catalog.
//!
//! ```text
//! catalog(workspace_root) ──► agent::ToolRegistry (dispatch, envelopes, schema checks)
//! definitions()           ──► [{"name", "description", "parameters"}, …]
//! ```
//!
//! - **Dependencies:** `agent` (the [`agent::ToolDef`] declaration, argument schemas,
//!   results, limits, the registry), `gitctx` (every git access: libgit2 reads, hardened git
//!   processes) and `safe-io` (no-follow, bounded file reads). Nothing else of
//!   ours.
//! - **Invariant:** every tool is read-only: nothing here writes to the working
//!   tree, the index, refs or config, or takes a lock (`GIT_OPTIONAL_LOCKS=0`).
//! - **Invariant:** every result is bounded by the registry's [`agent::ToolLimits`] (bytes,
//!   lines, entries); a capped result carries a [`agent::Truncation`] that says what
//!   was left out and how to ask for it. Numeric cap arguments default to the limits
//!   and are never allowed above them.
//! - **Invariant:** workspace-confined: every path argument is workspace-relative,
//!   and neither its spelling (absolute, drive letter, UNC, `..`) nor a symlink may
//!   lead outside the workspace or into `.git` ([`paths`]). Every path a tool reports
//!   is workspace-relative too, so it can be passed back unchanged.
//! - **Invariant:** one rule for what may be read (the private `gate` module): a path is judged by
//!   where it leads once every symbolic link on its way is followed. A target
//!   outside the workspace, in a git directory, or that git ignores and does not
//!   track is never read — `read_file` refuses it, `search_files` passes it over,
//!   `list_files` marks it in `refused_links` — so a tracked `envlink -> .env`
//!   exposes nothing `read_file` would not. Files are opened without following
//!   links along the judged path (`safe_io`), only regular files are read (a FIFO
//!   or a device never blocks), and every read has a byte limit.
//! - **Invariant:** `git_status_summary` is spec 002 exactly: name, description and
//!   parameter text byte for byte, the two fixed git commands, the output fields
//!   and the error codes ([`git_status_summary`] says where it cannot be
//!   literal); `raw` is never cut by the tool itself.
//! - **Invariant:** bad input never panics; every failure is an
//!   [`agent::ToolFailure`] with a stable code from [`codes`]. Arguments are typed
//!   structs, parsed and checked against their schema by `agent` before a tool
//!   runs, through the registry or called directly.
//! - The library never prints and never reads the environment.
//!
//! Each tool is one module holding its name, description, `Args`, `schema()`
//! and `run`, gathered as one [`agent::ToolDef`] ([`READ_FILE`], …); [`catalog`]
//! binds the five to a workspace, and [`definitions`]
//! (what a model is shown) is pinned by a snapshot test. `git-agent tools
//! list|call` exposes them to people exactly as a model sees them.

mod args;
mod cap;
mod catalog;
mod gate;
pub mod git_status_summary;
mod list_files;
pub mod paths;
pub mod read_file;
mod repo_summary;
mod search_files;
mod workspace;

pub use catalog::{
    GIT_STATUS_SUMMARY, LIST_FILES, READ_FILE, REPO_SUMMARY, SEARCH_FILES, catalog,
    catalog_with_limits, definitions,
};

/// The stable error codes the tools report (the `code` of a failure envelope).
/// Part of the public API: the tools' contract with their callers (spec 002),
/// listed whole although `INVALID_ARGUMENT` and `INTERNAL` come from `agent`'s
/// `ToolFailure::invalid_argument` and `ToolFailure::internal`.
pub mod codes {
    /// A malformed or forbidden argument (wrong type, empty, a path outside the
    /// workspace, an invalid regular expression, a line range that does not fit).
    pub const INVALID_ARGUMENT: &str = "INVALID_ARGUMENT";
    /// `git_status_summary`: `cwd` (or the workspace root) is missing or not a
    /// directory.
    pub const NOT_DIRECTORY: &str = "NOT_DIRECTORY";
    /// The directory is not inside a git working tree.
    pub const NOT_GIT_REPOSITORY: &str = "NOT_GIT_REPOSITORY";
    /// `read_file`: nothing at that path.
    pub const NOT_FOUND: &str = "NOT_FOUND";
    /// `read_file`: the path is a directory or another non-regular file.
    pub const NOT_A_FILE: &str = "NOT_A_FILE";
    /// `read_file`: the file is binary.
    pub const NOT_TEXT: &str = "NOT_TEXT";
    /// `read_file`: the file is larger than it reads
    /// ([`read_file::MAX_FILE_BYTES`](crate::read_file::MAX_FILE_BYTES)).
    pub const TOO_LARGE: &str = "TOO_LARGE";
    /// `read_file`: git ignores the file and does not track it (`.env`, build
    /// output, …), or a symbolic link leads to such a file: such files often hold
    /// secrets and are never shown to a model.
    pub const IGNORED: &str = "IGNORED";
    /// Anything unexpected (a git command failing or timing out, an I/O error).
    pub const INTERNAL: &str = "INTERNAL";
}
