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

/// The default limits, changed by `set`.
pub fn limited(set: impl FnOnce(&mut ToolLimits)) -> ToolLimits {
    let mut limits = ToolLimits::default();
    set(&mut limits);
    limits
}

/// [`call`] with the default limits changed by `set`.
pub fn call_limited(
    workspace: &Path,
    tool: &str,
    args: Value,
    set: impl FnOnce(&mut ToolLimits),
) -> Value {
    call_with(workspace, limited(set), tool, args)
}

/// Asserts that `envelope` is truncated by `limit` (`lines`, `bytes`,
/// `entries`), showing `shown` of `total`.
pub fn assert_truncation(envelope: &Value, limit: &str, total: u64, shown: u64) {
    assert_eq!(envelope["truncated"], true, "{envelope:#}");
    let truncation = &envelope["truncation"];
    assert_eq!(truncation["limit"], limit, "{envelope:#}");
    assert_eq!(truncation["total"], total, "{envelope:#}");
    assert_eq!(truncation["shown"], shown, "{envelope:#}");
}

/// A truncation at the cap `max` (that many of `total` shown), whose hint
/// mentions `hint_says`.
pub fn assert_capped(envelope: &Value, limit: &str, total: u64, max: u64, hint_says: &str) {
    assert_truncation(envelope, limit, total, max);
    assert_eq!(envelope["truncation"]["max"], max, "{envelope:#}");
    assert!(hint(envelope).contains(hint_says), "{envelope:#}");
}

/// The hint of a truncated envelope.
pub fn hint(envelope: &Value) -> &str {
    envelope["truncation"]["hint"]
        .as_str()
        .expect("a truncation has a hint")
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
