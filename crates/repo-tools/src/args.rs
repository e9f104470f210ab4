//! The arguments the tools share: their schema entries and how they are read.
//!
//! Each tool's arguments are a `Deserialize` struct (`Args` in its module) with
//! its schema declared once, beside it (`schema()`); `agent` parses and checks
//! them against the schema before the tool runs ([`agent::ToolDef`]). The
//! structs are `pub` only because the public [`agent::ToolDef`] constants
//! name them; their fields are private. What is left here is what a schema cannot say:
//! a path's spelling ([`paths::normalize`]) and caps lowered to the registry's
//! limits, plus the schema entries two tools share.

use agent::ToolFailure;
use agent::schema::Schema;

use crate::paths::{self, RelPath};

/// The schema of an optional `path` prefix: the tool `verb`s (lists, searches)
/// under it.
pub(crate) fn prefix_schema(verb: &str) -> Schema {
    Schema::string().description(format!(
        "Workspace-relative directory (or file) to {verb} under; default: the whole workspace. Accepts / or \\ as separator."
    ))
}

/// The schema of an optional cap on the `what`s of a result (paths, matches):
/// `1..=max`.
pub(crate) fn cap_schema(what: &str, max: usize) -> Schema {
    Schema::integer(1, max as u64).description(format!(
        "At most this many {what} (default and maximum: {max})."
    ))
}

/// A workspace-relative path prefix named by the argument `key`; absent or empty
/// is the whole workspace.
pub(crate) fn prefix(key: &str, text: Option<&str>) -> Result<RelPath, ToolFailure> {
    match text {
        None | Some("") => Ok(RelPath::root()),
        Some(text) => path(key, text),
    }
}

/// The workspace-relative path named by the argument `key`.
pub(crate) fn path(key: &str, text: &str) -> Result<RelPath, ToolFailure> {
    paths::normalize(text).map_err(|err| ToolFailure::invalid_argument(format!("{key}: {err}")))
}

/// A cap the model asked for, or `limit` by default; never above `limit`.
pub(crate) fn cap(asked: Option<usize>, limit: usize) -> usize {
    asked.unwrap_or(limit).min(limit)
}
