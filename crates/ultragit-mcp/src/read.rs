//! `ultragit_read`: the read pipeline (spec 003) on files of the served
//! repository, in process. The text content is read's markdown, the
//! `structuredContent` its `ultragit-read/v1` JSON (compact); a failure carries
//! read's message and its JSON error object. The token budget is measured on
//! the markdown, the rendering a model reads.

use serde::Deserialize;
use tool_def::ToolDef;
use tool_def::schema::Schema;
use ultragit_read::{Format, GitReadPipeline, ReadError, ReadPipeline, ReadQuery};

use crate::Scope;
use crate::tool::{Bounds, McpTool, ToolError, ToolOutput, repo_relative};

/// The most files one call reads.
const MAX_PATHS: usize = 64;
/// The longest path, anchor or tag accepted (bytes).
const MAX_NAME: usize = 4096;
/// The most tags one call filters on.
const MAX_TAGS: usize = 64;

/// The arguments of `ultragit_read`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadArgs {
    /// Files to read, relative to the repository root (e.g. `src/net/client.rs`).
    /// Several files are read together, ranked in one answer.
    pub(crate) paths: Vec<String>,

    /// A named unit to focus on, resolved with tree-sitter: `connect`,
    /// `Client::connect`. Cannot be combined with `lines`.
    pub(crate) anchor: Option<String>,

    /// A line range `START:END`, 1-based and inclusive (e.g. `10:20`). Cannot be
    /// combined with `anchor`.
    pub(crate) lines: Option<String>,

    /// Token budget of the markdown answer; lower-scoring regions are trimmed
    /// to fit.
    pub(crate) max_tokens: Option<u32>,

    /// Leave out regions whose confidence is below this (0 to 1; default 0).
    pub(crate) min_confidence: Option<f64>,

    /// Only regions with one of these tags (compared case-insensitively).
    pub(crate) tags: Option<Vec<String>>,
}

/// `ultragit_read`.
pub(crate) const READ: McpTool<ReadArgs> = ToolDef {
    name: "ultragit_read",
    description: "Read why code exists before editing it: the \
            recorded intent, constraints, semantic dependencies, rejected alternatives and \
            risks of the commits that wrote the lines in scope (blame + ultragit notes), \
            each region scored for confidence, plus what depends on this code and the \
            cross-cutting concerns that mention it. Scope a read with `anchor` (a function, \
            type or method name) or `lines`; without either, the whole file. No LLM runs: \
            the answer is fast and deterministic.",
    schema: read_schema,
    run: |scope, args, ()| args.run(scope),
};

/// The arguments' schema of `ultragit_read`.
fn read_schema() -> Schema {
    Schema::object()
        .required(
            "paths",
            Schema::array(Schema::string().min_length(1).max_length(4096))
                .min_items(1)
                .max_items(64)
                .description(
                    "Files to read, relative to the repository root (e.g. \
                     `src/net/client.rs`). Several files are read together, ranked in \
                     one answer.",
                ),
        )
        .optional(
            "anchor",
            Schema::string().min_length(1).max_length(4096).description(
                "A named unit to focus on, resolved with tree-sitter: `connect`, \
                 `Client::connect`. Cannot be combined with `lines`.",
            ),
        )
        .optional(
            "lines",
            Schema::string()
                .pattern(r"^\s*[0-9]+\s*:\s*[0-9]+\s*$")
                .description(
                    "A line range `START:END`, 1-based and inclusive (e.g. `10:20`). \
                     Cannot be combined with `anchor`.",
                ),
        )
        .optional(
            "max_tokens",
            Schema::integer(1, u64::from(u32::MAX)).description(
                "Token budget of the markdown answer; lower-scoring regions are \
                 trimmed to fit.",
            ),
        )
        .optional(
            "min_confidence",
            Schema::number(0.0, 1.0).description(
                "Leave out regions whose confidence is below this (0 to 1; \
                 default 0).",
            ),
        )
        .optional(
            "tags",
            Schema::array(Schema::string().max_length(4096))
                .max_items(64)
                .description(
                    "Only regions with one of these tags (compared \
                     case-insensitively).",
                ),
        )
}

impl ReadArgs {
    /// Runs the tool on arguments that matched its schema.
    fn run(self, scope: &Scope) -> Result<ToolOutput, ToolError> {
        let query = self.query()?;
        let pipeline = GitReadPipeline::open(&scope.root).map_err(read_error)?;
        let output = pipeline.execute(&query).map_err(read_error)?;
        let text = ultragit_read::format_markdown(&output, query.verbose);
        Ok(ToolOutput::new(text, output.to_json_value(query.verbose)))
    }
}

impl ReadArgs {
    /// The read query, after the checks serde cannot make.
    pub(crate) fn query(&self) -> Result<ReadQuery, ToolError> {
        let name = READ.name;
        let bounds = Bounds::of(name);
        bounds.list("paths", &self.paths, MAX_PATHS, MAX_NAME)?;
        if let Some(anchor) = &self.anchor {
            bounds.text("anchor", anchor, MAX_NAME)?;
        }
        if let Some(tags) = &self.tags {
            bounds.list("tags", tags, MAX_TAGS, MAX_NAME)?;
        }
        if self.anchor.is_some() && self.lines.is_some() {
            return Err(ToolError::invalid_arguments(
                name,
                "`anchor` and `lines` cannot be combined: give one or the other",
            ));
        }
        let mut query = ReadQuery::file(String::new());
        query.files = self
            .paths
            .iter()
            .map(|path| repo_relative(name, path))
            .collect::<Result<_, _>>()?;
        query.anchor = self.anchor.clone();
        query.lines = match &self.lines {
            Some(text) => Some(ultragit_read::parse_lines(text).map_err(read_error)?),
            None => None,
        };
        query.max_tokens = self.max_tokens;
        query.min_confidence = self.min_confidence.unwrap_or(0.0);
        // Blank tags are dropped; none left means no tag filter.
        let tags = self.tags.iter().flatten().map(|t| t.trim());
        let tags: Vec<String> = tags.filter(|t| !t.is_empty()).map(str::to_owned).collect();
        query.tags = (!tags.is_empty()).then_some(tags);
        query.format = Format::Markdown;
        Ok(query)
    }
}

/// Read's error: its message, and its JSON error object as the structured body.
fn read_error(err: ReadError) -> ToolError {
    read_error_as(err, None)
}

/// Read's error with the JSON error object's `$schema` set to `schema` (the
/// queries built on the read pipeline have their own schema ids).
pub(crate) fn read_error_as(err: ReadError, schema: Option<&str>) -> ToolError {
    let mut body = err.body();
    if let Some(schema) = schema {
        body.schema = schema.to_owned();
    }
    let body = serde_json::to_value(body)
        .expect("the error object has string keys only, so it serializes");
    ToolError::with_body(err.to_string(), body)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn args(value: serde_json::Value) -> Result<ReadArgs, serde_json::Error> {
        serde_json::from_value(value)
    }

    #[test]
    fn builds_the_query() {
        let query = args(json!({
            "paths": ["./src//a.rs", "b.py"],
            "lines": "3:9",
            "max_tokens": 500,
            "min_confidence": 0.25,
            "tags": [" net ", "", "retry"]
        }))
        .unwrap()
        .query()
        .unwrap();
        assert_eq!(query.files, ["src/a.rs", "b.py"]);
        assert_eq!(query.lines.map(|l| (l.start, l.end)), Some((3, 9)));
        assert_eq!(query.anchor, None);
        assert_eq!(query.max_tokens, Some(500));
        assert_eq!(query.min_confidence, 0.25);
        assert_eq!(query.tags, Some(vec!["net".to_owned(), "retry".to_owned()]));
        assert_eq!(query.format, Format::Markdown);

        let query = args(json!({"paths": ["a.rs"], "anchor": "Client::new", "tags": [" "]}))
            .unwrap()
            .query()
            .unwrap();
        assert_eq!(query.anchor.as_deref(), Some("Client::new"));
        assert_eq!(query.tags, None);
        assert_eq!(query.min_confidence, 0.0);
    }

    #[test]
    fn refuses_what_the_schema_refuses() {
        assert!(args(json!({})).is_err());
        assert!(args(json!({"paths": "a.rs"})).is_err());
        assert!(args(json!({"paths": ["a.rs"], "format": "json"})).is_err());
        let message = |value| {
            args(value)
                .unwrap()
                .query()
                .unwrap_err()
                .message()
                .to_owned()
        };
        assert_eq!(
            message(json!({"paths": ["a.rs"], "anchor": "f", "lines": "1:2"})),
            "Invalid arguments for ultragit_read: `anchor` and `lines` cannot be combined: \
             give one or the other. See the tool's input schema."
        );
        assert!(message(json!({"paths": ["../a.rs"]})).contains("contains `..`"));
        assert_eq!(
            message(json!({"paths": ["a.rs"], "lines": "9:3"})),
            "Invalid line range 9:3: START is after END"
        );
        let many: Vec<String> = (0..65).map(|i| format!("f{i}.rs")).collect();
        assert!(message(json!({ "paths": many })).contains("`paths` has 65 entries"));
    }
}
