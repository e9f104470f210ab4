//! `git_status_summary` (spec 002): the repository root, the current branch (null
//! when detached) and the raw `git -c core.quotePath=false status --porcelain=v1
//! --branch` text of a workspace directory.
//!
//! Checks run in the spec's order (§7): input validation → directory check → git
//! repository check → the two git commands → branch parsing.
//!
//! - **Input:** `cwd` is optional (default: the workspace root). Not a string, empty,
//!   absolute, with a drive letter, UNC, escaping the workspace (by `..` or through a
//!   symlink) or reaching into `.git` → `INVALID_ARGUMENT` (see [`crate::paths`]).
//! - **Directory:** missing, or not a directory → `NOT_DIRECTORY`.
//! - **Repository:** decided by [`gitctx::Repo::discover`] (libgit2, which ignores
//!   `GIT_DIR` as our hardened git processes do), not by reading git's English
//!   stderr as the spec's TypeScript did: outside any working tree (or in a bare or
//!   unsafe repository) → `NOT_GIT_REPOSITORY`. A git command that still fails
//!   afterwards is `INTERNAL`, with git's stderr in the message for a human.
//! - **Commands:** exactly [`REV_PARSE_ARGS`] and [`STATUS_ARGS`], in the resolved
//!   directory, each with a [`TIMEOUT`] of 30 s, through [`gitctx::GitCommand`]
//!   (hardening goes through the environment; the argv stays as the spec fixes it).
//! - **Output:** `repository_root` is rev-parse's stdout trimmed; `raw` is status's
//!   stdout byte for byte, trailing newline included; `branch` comes from its first
//!   `##` line ([`parse_branch`]). One deviation, forced: stdout that is not UTF-8
//!   (file names in another encoding) is converted lossily, as JSON text must be
//!   UTF-8.
//! - **Caps:** the tool itself cuts nothing — `raw` is git's output, however many
//!   lines it has (spec 002: "改変せず返す"). What a model sees of a very long
//!   status is decided by the registry's generic byte cap on every tool result
//!   (`ToolLimits::max_bytes`), which cuts the longest string and marks the
//!   envelope `truncated` with a `bytes` truncation.

mod parse_branch;

use std::path::Path;
use std::time::Duration;

use agent::schema::Schema;
use agent::{ToolFailure, ToolLimits, ToolOutput};
use gitctx::{GitCommand, Repo};
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use parse_branch::parse_branch;

use crate::args;
use crate::codes;
use crate::paths::{self, RelPath, ResolveError};
use crate::workspace::{self, git_failure};

/// The tool name.
pub const NAME: &str = "git_status_summary";

/// The tool description, byte for byte from spec 002 §4.4.
pub const DESCRIPTION: &str =
    "Returns current git branch and raw porcelain status output for a workspace directory.";

/// The description of the `cwd` parameter, byte for byte from spec 002 §4.4.
///
/// How the spec's backslashes were read: §4.4 shows TypeScript source, where the
/// text is the JavaScript string literal `"… Accepts / or \\\\ as separator; escape
/// backslash in JSON (e.g. src\\\\tools)."`. In a JS literal `\\` is one backslash,
/// so `\\\\` is two: the description the model receives contains two backslash
/// characters in both places (`/ or \\ as`, `src\\tools`), which is what the
/// sentence itself asks for: a model writing the JSON argument `"src\\tools"` sends
/// the path `src\tools`. Written here as a raw string, so what you see is the text.
pub const CWD_DESCRIPTION: &str = r"Workspace path to inspect (default: workspace root). Accepts / or \\ as separator; escape backslash in JSON (e.g. src\\tools).";

/// The repository-root command (after `git`), as spec 002 §5 fixes it.
pub const REV_PARSE_ARGS: [&str; 2] = ["rev-parse", "--show-toplevel"];

/// The status command (after `git`), as spec 002 §3.1 and §5 fix it.
pub const STATUS_ARGS: [&str; 5] = [
    "-c",
    "core.quotePath=false",
    "status",
    "--porcelain=v1",
    "--branch",
];

/// The timeout of each git command (spec 002 §5: `timeout_ms=30000`).
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// The tool's result (spec 002 §4.2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct StatusSummary {
    /// The absolute top of the working tree, as `git rev-parse --show-toplevel`
    /// prints it (trimmed).
    pub repository_root: String,
    /// The current branch; `None` when HEAD is detached or the `##` line does not
    /// name one.
    pub branch: Option<String>,
    /// The status output, unmodified.
    pub raw: String,
}

/// Runs the tool for `cwd` (workspace-relative; `None` is the workspace root),
/// uncapped. Failures carry the spec's codes.
fn summarize(workspace_root: &Path, cwd: Option<&str>) -> Result<StatusSummary, ToolFailure> {
    // 1. Input validation (what can be judged from the text alone).
    let rel = match cwd {
        None => RelPath::root(),
        Some("") => {
            return Err(ToolFailure::invalid_argument(
                "cwd is empty; omit it for the workspace root or give a workspace-relative directory",
            ));
        }
        Some(text) => args::path("cwd", text)?,
    };
    // 2. Directory check (a symlink leading out is still an invalid argument).
    let root = workspace::canonical_root(workspace_root)?;
    let dir = paths::resolve(&root, &rel).map_err(|err| match err {
        ResolveError::Missing(_) => not_directory(&rel, "does not exist"),
        ResolveError::Escapes(_) => ToolFailure::invalid_argument(format!("cwd: {err}")),
        ResolveError::Io { .. } => ToolFailure::internal(format!("cwd: {err}")),
    })?;
    if !dir.is_dir() {
        return Err(not_directory(&rel, "is not a directory"));
    }
    // 3. Git repository check, from libgit2's structured answer.
    if let Err(err) = Repo::discover(&dir) {
        let mut failure = git_failure(err);
        failure.message = format!("cwd '{rel}': {}", failure.message);
        return Err(failure);
    }
    // 4. The two commands.
    let top = run_git(&dir, &REV_PARSE_ARGS)?;
    let raw = run_git(&dir, &STATUS_ARGS)?;
    // 5. The branch, from the first `##` line only.
    Ok(StatusSummary {
        repository_root: top.trim().to_owned(),
        branch: parse_branch(&raw),
        raw,
    })
}

fn not_directory(rel: &RelPath, what: &str) -> ToolFailure {
    ToolFailure::new(
        codes::NOT_DIRECTORY,
        format!("cwd '{rel}' {what}; give a directory inside the workspace"),
    )
}

/// Runs one spec-fixed git command in `dir`; its stdout (lossy UTF-8).
fn run_git(dir: &Path, args: &[&str]) -> Result<String, ToolFailure> {
    let command = GitCommand::new(dir).args(args).timeout(TIMEOUT);
    let output = command
        .run_unchecked()
        .map_err(|err| ToolFailure::internal(err.to_string()))?;
    if !output.status.success() {
        return Err(ToolFailure::internal(command.failure(&output).to_string()));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// The arguments of `git_status_summary`.
#[derive(Debug, Deserialize)]
pub struct Args {
    cwd: Option<String>,
}

/// The arguments' schema.
pub(crate) fn schema() -> Schema {
    // Spec 002 §4.4 exactly, plus `additionalProperties: false`, which our strict
    // tool rule (spec 004 §5, `agent::schema::strictness_problems`) requires of
    // every object schema. No `minLength`: the spec's schema has none, and an
    // empty `cwd` is refused by the tool itself with INVALID_ARGUMENT.
    Schema::object().optional(
        "cwd",
        Schema::string()
            .default_value(".")
            .description(CWD_DESCRIPTION),
    )
}

/// Runs `git_status_summary` over the workspace at `root`: the summary as git
/// gave it, uncut (the registry's byte cap is the only one that applies).
pub(crate) fn run(
    root: &Path,
    args: Args,
    _limits: &ToolLimits,
) -> Result<ToolOutput, ToolFailure> {
    let summary = summarize(root, args.cwd.as_deref())?;
    Ok(ToolOutput::complete(to_value(&summary)?))
}

fn to_value(summary: &StatusSummary) -> Result<Value, ToolFailure> {
    serde_json::to_value(summary).map_err(|err| ToolFailure::internal(err.to_string()))
}
