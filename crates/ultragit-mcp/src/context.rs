//! `ultragit_context_set`: what the next commit is for, told by the coding
//! agent that makes it, so the writing agent's annotation of that commit is
//! `enhanced`. The same code path as `ultragit context set`
//! (`ultragit_notes::author::set_pending`): the fields given replace the
//! pending ones, the others are kept, blank text counts as not given, and the
//! context is stored in `.git/ultragit/pending-context.json` until the next
//! annotation consumes it.

use serde::Deserialize;
use serde_json::{Map, Value, json};
use tool_def::ToolDef;
use tool_def::schema::Schema;
use ultragit_notes::author::{self, AuthorContext};

use crate::Scope;
use crate::tool::{Bounds, McpTool, ToolError, ToolOutput};

/// The longest task, reasoning or dependencies text accepted (bytes).
const MAX_TEXT: usize = 64 * 1024;
/// The most tags, and the longest tag.
const MAX_TAGS: usize = 64;
const MAX_TAG: usize = 256;

/// The arguments of `ultragit_context_set`; at least one field.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ContextSetArgs {
    /// The task the commit is part of (e.g. an issue title).
    pub(crate) task: Option<String>,

    /// Why the change is made this way: alternatives rejected, constraints
    /// known.
    pub(crate) reasoning: Option<String>,

    /// What the changed code depends on, or what depends on it.
    pub(crate) dependencies: Option<String>,

    /// Tags for the annotated regions (an empty list clears the pending tags).
    pub(crate) tags: Option<Vec<String>>,
}

/// `ultragit_context_set`.
pub(crate) const CONTEXT_SET: McpTool<ContextSetArgs> = ToolDef {
    name: "ultragit_context_set",
    description: "Before committing, record what the next commit \
            is for: the task, the reasoning (alternatives rejected, constraints known), the \
            dependencies, tags. ultragit's annotation of that commit then records them as \
            author context (context level `enhanced`) instead of inferring them from the \
            diff. Fields given replace pending ones; fields left out are kept. The same as \
            `ultragit context set`.",
    schema: context_set_schema,
    run: |scope, args, ()| args.run(scope),
};

/// The arguments' schema of `ultragit_context_set`.
fn context_set_schema() -> Schema {
    Schema::object()
        .optional(
            "task",
            Schema::string()
                .max_length(65536)
                .description("The task the commit is part of (e.g. an issue title)."),
        )
        .optional(
            "reasoning",
            Schema::string().max_length(65536).description(
                "Why the change is made this way: alternatives rejected, constraints known.",
            ),
        )
        .optional(
            "dependencies",
            Schema::string()
                .max_length(65536)
                .description("What the changed code depends on, or what depends on it."),
        )
        .optional(
            "tags",
            Schema::array(Schema::string().max_length(256))
                .max_items(64)
                .description(
                    "Tags for the annotated regions (an empty list clears the pending tags).",
                ),
        )
}

impl ContextSetArgs {
    /// Runs the tool on arguments that matched its schema.
    fn run(self, scope: &Scope) -> Result<ToolOutput, ToolError> {
        let given = self.context()?;
        let (path, pending) = author::set_pending(&scope.common_dir, given).map_err(|err| {
            ToolError::new(
                "context",
                format!("Cannot record the author context: {err}"),
            )
        })?;
        let fields = fields(&pending);
        let mut text = format!(
            "Recorded the author context for the next commit's annotation in {}.\n",
            path.display()
        );
        for (name, value) in &fields {
            let value = match value {
                Value::String(s) => s.clone(),
                Value::Array(items) => items
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(", "),
                other => other.to_string(),
            };
            text.push_str(&format!("\n**{name}:** {value}"));
        }
        text.push('\n');
        let structured = json!({
            "pending_context_file": path.display().to_string(),
            "context": Value::Object(fields),
        });
        Ok(ToolOutput::new(safe_text(&text), structured))
    }
}

impl ContextSetArgs {
    /// The context given, after the checks serde cannot make.
    pub(crate) fn context(&self) -> Result<AuthorContext, ToolError> {
        let bounds = Bounds::of(CONTEXT_SET.name);
        for (field, text) in [
            ("task", &self.task),
            ("reasoning", &self.reasoning),
            ("dependencies", &self.dependencies),
        ] {
            if let Some(text) = text {
                bounds.text(field, text, MAX_TEXT)?;
            }
        }
        if let Some(tags) = &self.tags {
            bounds.list("tags", tags, MAX_TAGS, MAX_TAG)?;
        }
        if self.task.is_none()
            && self.reasoning.is_none()
            && self.dependencies.is_none()
            && self.tags.is_none()
        {
            return Err(ToolError::invalid_arguments(
                CONTEXT_SET.name,
                "give at least one of `task`, `reasoning`, `dependencies`, `tags`",
            ));
        }
        Ok(AuthorContext {
            task: self.task.clone(),
            reasoning: self.reasoning.clone(),
            dependencies: self.dependencies.clone(),
            tags: self.tags.clone(),
            squash_sources: None,
        })
    }
}

/// The pending context's fields that are set, by name.
fn fields(context: &AuthorContext) -> Map<String, Value> {
    let mut map = Map::new();
    for (name, value) in [
        ("task", &context.task),
        ("reasoning", &context.reasoning),
        ("dependencies", &context.dependencies),
    ] {
        if let Some(value) = value {
            map.insert(name.to_owned(), Value::String(value.clone()));
        }
    }
    if let Some(tags) = &context.tags {
        map.insert("tags".to_owned(), json!(tags));
    }
    map
}

/// `text` with control characters escaped (the pending file may hold text
/// written by someone else).
fn safe_text(text: &str) -> String {
    safe_io::term::sanitize(text).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn needs_one_field_within_bounds() {
        let parse = |v: Value| serde_json::from_value::<ContextSetArgs>(v).unwrap();
        let err = parse(json!({})).context().unwrap_err();
        assert!(
            err.message().contains("give at least one of"),
            "{}",
            err.message()
        );
        assert!(serde_json::from_value::<ContextSetArgs>(json!({"commit": "x"})).is_err());
        let long = "x".repeat(MAX_TEXT + 1);
        let err = parse(json!({ "reasoning": long })).context().unwrap_err();
        assert!(
            err.message().contains("`reasoning` has 65537 bytes"),
            "{}",
            err.message()
        );
        let context = parse(json!({"task": "T", "tags": []})).context().unwrap();
        assert_eq!(context.task.as_deref(), Some("T"));
        assert_eq!(context.tags, Some(vec![]));
    }

    #[test]
    fn lists_the_fields_that_are_set() {
        let context = AuthorContext {
            task: Some("T".to_owned()),
            tags: Some(vec!["a".to_owned()]),
            ..AuthorContext::default()
        };
        assert_eq!(
            Value::Object(fields(&context)),
            json!({"task": "T", "tags": ["a"]})
        );
    }
}
