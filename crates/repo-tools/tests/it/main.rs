//! Integration tests of `repo-tools` against real temporary repositories (one test
//! binary, one module per tool).

mod catalog;
mod git_status_summary;
mod golden;
mod links;
mod list_files;
mod properties;
mod read_file;
mod repo_summary;
mod search_files;

use std::path::Path;

use agent::ToolLimits;
use serde_json::Value;

/// The envelope JSON of one call through the catalog over `workspace`.
pub fn call(workspace: &Path, tool: &str, args: Value) -> Value {
    repo_tools::catalog(workspace)
        .dispatch(tool, &args)
        .to_value()
}

/// [`call`] with explicit limits.
pub fn call_with(workspace: &Path, limits: ToolLimits, tool: &str, args: Value) -> Value {
    repo_tools::catalog_with_limits(workspace, limits)
        .dispatch(tool, &args)
        .to_value()
}

/// The data of a successful envelope; panics with the envelope otherwise.
pub fn data(envelope: &Value) -> &Value {
    assert_eq!(envelope["ok"], true, "expected success: {envelope:#}");
    &envelope["data"]
}

/// The error code of a failed envelope; panics with the envelope otherwise.
pub fn code(envelope: &Value) -> &str {
    assert_eq!(envelope["ok"], false, "expected failure: {envelope:#}");
    envelope["error"]["code"]
        .as_str()
        .expect("a failure has a code")
}

/// Makes `link` (absolute) a symlink to `target`.
pub fn symlink(target: &Path, link: &Path) {
    #[cfg(unix)]
    std::os::unix::fs::symlink(target, link).expect("create a symlink");
}

pub use testkit::mkfifo;
