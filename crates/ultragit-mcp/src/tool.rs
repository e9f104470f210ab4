//! What one tool is: a [`McpTool`] (the one tool declaration,
//! [`tool_def::ToolDef`], over the served repository's [`Scope`]), the
//! [`Hints`] a client is given about it, what a call returns
//! ([`ToolOutput`]) or fails with ([`ToolError`]), and the argument checks
//! every tool shares (`Bounds`, `repo_relative`). Depends on nothing else of
//! this crate but [`Scope`]; the tools and their registry ([`crate::tools`])
//! build on it.

use rmcp::model::CallToolResult;
use serde_json::{Value, json};

use crate::{Scope, text_block};

/// A tool of the server: declared the one way ([`tool_def::ToolDef`]: name,
/// description, argument schema table, handler over typed arguments), over
/// the served repository, with nothing passed per call.
pub(crate) type McpTool<A> = tool_def::ToolDef<Scope, A, (), Result<ToolOutput, ToolError>>;

/// What a client is told about a tool besides its declaration (MCP's tool
/// annotations).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Hints {
    /// A short human-readable title.
    pub(crate) title: &'static str,
    /// True when the tool changes nothing.
    pub(crate) read_only: bool,
    /// True when calling it again with the same arguments changes nothing more.
    pub(crate) idempotent: bool,
}

impl Hints {
    /// A query tool: it changes nothing, so calling it again changes nothing
    /// more (`read_only` and `idempotent`).
    pub(crate) const fn query(title: &'static str) -> Hints {
        Hints {
            title,
            read_only: true,
            idempotent: true,
        }
    }

    /// A tool that writes: `idempotent` when calling it again with the same
    /// arguments changes nothing more.
    pub(crate) const fn writes(title: &'static str, idempotent: bool) -> Hints {
        Hints {
            title,
            read_only: false,
            idempotent,
        }
    }
}

/// What a tool returns: the markdown a model reads and the JSON a program
/// reads.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolOutput {
    /// The markdown rendering (the text content).
    pub(crate) text: String,
    /// The JSON (`structuredContent`); always an object.
    pub(crate) structured: serde_json::Map<String, Value>,
}

impl ToolOutput {
    /// `text` and `structured` (a non-object value is wrapped as `{"result": …}`).
    pub(crate) fn new(text: impl Into<String>, structured: Value) -> ToolOutput {
        let structured = match structured {
            Value::Object(map) => map,
            other => {
                let mut map = serde_json::Map::new();
                map.insert("result".to_owned(), other);
                map
            }
        };
        ToolOutput {
            text: text.into(),
            structured,
        }
    }

    /// The successful `tools/call` result.
    pub(crate) fn into_result(self) -> CallToolResult {
        let mut result = CallToolResult::success(vec![text_block(self.text)]);
        result.structured_content = Some(Value::Object(self.structured));
        result
    }
}

/// Why a tool failed: one line for the model and, as `structuredContent`, an
/// error object `{"error": {"code", "message", …}}` (read's errors use read's
/// JSON error object, spec 003 §5).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolError {
    message: String,
    structured: Value,
}

impl ToolError {
    /// An error with `code` (snake case) and `message`.
    pub(crate) fn new(code: &str, message: impl Into<String>) -> ToolError {
        let message = message.into();
        let structured = json!({ "error": { "code": code, "message": message } });
        ToolError {
            message,
            structured,
        }
    }

    /// An error whose JSON body is `body` (it must hold `error.message`).
    pub(crate) fn with_body(message: impl Into<String>, body: Value) -> ToolError {
        ToolError {
            message: message.into(),
            structured: body,
        }
    }

    /// Arguments that do not fit the tool's schema or its bounds.
    pub(crate) fn invalid_arguments(tool: &str, problem: impl std::fmt::Display) -> ToolError {
        ToolError::new(
            "invalid_argument",
            format!("Invalid arguments for {tool}: {problem}. See the tool's input schema."),
        )
    }

    /// A bug: the tool panicked or its task was lost.
    pub(crate) fn internal(tool: &str, problem: &dyn std::fmt::Display) -> ToolError {
        ToolError::new(
            "internal",
            format!("{tool} failed unexpectedly (a bug in ultragit): {problem}"),
        )
    }

    /// The one-line message.
    pub(crate) fn message(&self) -> &str {
        &self.message
    }

    /// The `tools/call` result: `isError: true`, the message as text, the
    /// error object as `structuredContent`.
    pub(crate) fn into_result(self) -> CallToolResult {
        let mut result = CallToolResult::error(vec![text_block(self.message)]);
        result.structured_content = Some(self.structured);
        result
    }
}

/// Checks the bounds the schema states (serde checks types and names only).
pub(crate) struct Bounds<'a> {
    tool: &'a str,
}

impl<'a> Bounds<'a> {
    pub(crate) fn of(tool: &'a str) -> Bounds<'a> {
        Bounds { tool }
    }

    /// `size` (a count of `unit` in `field`) is at most `max`.
    fn at_most(&self, field: &str, size: usize, max: usize, unit: &str) -> Result<(), ToolError> {
        if size <= max {
            return Ok(());
        }
        let problem = format!("`{field}` has {size} {unit}; at most {max} are accepted");
        Err(ToolError::invalid_arguments(self.tool, problem))
    }

    /// `text` is at most `max` bytes.
    pub(crate) fn text(&self, field: &str, text: &str, max: usize) -> Result<(), ToolError> {
        self.at_most(field, text.len(), max, "bytes")
    }

    /// `items` has at most `max` entries, each at most `max_len` bytes.
    pub(crate) fn list(
        &self,
        field: &str,
        items: &[String],
        max: usize,
        max_len: usize,
    ) -> Result<(), ToolError> {
        self.at_most(field, items.len(), max, "entries")?;
        items
            .iter()
            .try_for_each(|item| self.text(field, item, max_len))
    }
}

/// `path` as a clean repository-relative path (`./src//lib.rs` →
/// `src/lib.rs`), or an error when it could leave the repository or names
/// nothing: absolute paths, `..`, backslashes, NUL, empty paths.
pub(crate) fn repo_relative(tool: &str, path: &str) -> Result<String, ToolError> {
    clean_path(tool, path, false)
}

/// Like [`repo_relative`], but `.` (or an empty path) names the whole
/// repository and is returned as `.`.
pub(crate) fn repo_relative_dir(tool: &str, path: &str) -> Result<String, ToolError> {
    clean_path(tool, path, true)
}

fn clean_path(tool: &str, path: &str, root_allowed: bool) -> Result<String, ToolError> {
    let refuse = |why: &str| {
        Err(ToolError::invalid_arguments(
            tool,
            format!(
                "the path {path:?} {why}; give paths relative to the repository root, e.g. src/lib.rs"
            ),
        ))
    };
    if path.starts_with('/') {
        return refuse("is absolute");
    }
    if path.contains('\\') || path.contains('\0') {
        return refuse("contains a backslash or NUL");
    }
    let parts: Vec<&str> = path
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    if parts.contains(&"..") {
        return refuse("contains `..`");
    }
    if parts.is_empty() {
        return if root_allowed {
            Ok(".".to_owned())
        } else {
            refuse("names no file")
        };
    }
    Ok(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_in_the_repository() {
        let ok = |p: &str| repo_relative("t", p).unwrap();
        assert_eq!(ok("src/lib.rs"), "src/lib.rs");
        assert_eq!(ok("./src//lib.rs"), "src/lib.rs");
        assert_eq!(repo_relative_dir("t", ".").unwrap(), ".");
        assert_eq!(repo_relative_dir("t", "").unwrap(), ".");
        assert_eq!(repo_relative_dir("t", "./src/").unwrap(), "src");
        assert!(repo_relative_dir("t", "..").is_err());
        assert!(repo_relative_dir("t", "/").is_err());
        for bad in [
            "/etc/passwd",
            "../x",
            "a/../../b",
            "",
            ".",
            "a\\b",
            "a\0b",
            "//",
        ] {
            let err = repo_relative("t", bad).unwrap_err();
            assert!(
                err.message()
                    .starts_with("Invalid arguments for t: the path"),
                "{bad:?}: {}",
                err.message()
            );
        }
    }

    #[test]
    fn outputs_and_errors_become_results() {
        let result = ToolOutput::new("# text", json!({"a": 1})).into_result();
        assert_eq!(result.is_error, Some(false));
        assert_eq!(result.structured_content, Some(json!({"a": 1})));
        assert_eq!(result.content[0].as_text().unwrap().text, "# text");
        let wrapped = ToolOutput::new("t", json!([1])).structured;
        assert_eq!(Value::Object(wrapped), json!({"result": [1]}));

        let err = ToolError::new("x", "went wrong").into_result();
        assert_eq!(err.is_error, Some(true));
        assert_eq!(err.content[0].as_text().unwrap().text, "went wrong");
        assert_eq!(
            err.structured_content,
            Some(json!({"error": {"code": "x", "message": "went wrong"}}))
        );
    }

    #[test]
    fn bounds_name_the_field() {
        let bounds = Bounds::of("t");
        assert!(bounds.text("task", "abc", 3).is_ok());
        let err = bounds.text("task", "abcd", 3).unwrap_err();
        assert!(
            err.message().contains("`task` has 4 bytes; at most 3"),
            "{}",
            err.message()
        );
        let items = vec!["a".to_owned(); 3];
        assert!(bounds.list("tags", &items, 3, 1).is_ok());
        assert!(bounds.list("tags", &items, 2, 1).is_err());
        assert!(bounds.list("tags", &items, 3, 0).is_err());
    }
}
