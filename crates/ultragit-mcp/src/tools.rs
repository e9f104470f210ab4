//! The tool registry: every tool one [`McpTool`] declaration (name,
//! description, argument schema table, handler; see [`tool_def`]) with the
//! [`Hints`] a client is shown, listed once in [`Registry::all`]. The registry
//! checks each declaration ([`tool_def::ToolDef::problems`]: a strict schema
//! naming only fields its argument struct reads), parses arguments through
//! the schema ([`tool_def::ToolDef::parse`]: a mismatch is a tool error naming
//! the field), and turns the call's `ToolOutput` or `ToolError` into a
//! `CallToolResult`.
//!
//! Adding a tool: a module with its argument struct (`Deserialize`,
//! `#[serde(deny_unknown_fields)]`) and its `McpTool` constant (the schema
//! one `tool_def::schema::Schema` table, the handler the library call and
//! its rendering); then one line in [`Registry::all`].

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::Scope;
use crate::tool::{Hints, McpTool, ToolError, ToolOutput};

/// Runs a tool on raw arguments.
pub(crate) type Runner =
    Arc<dyn Fn(&Scope, JsonObject) -> Result<ToolOutput, ToolError> + Send + Sync>;

struct Entry {
    tool: Tool,
    run: Runner,
}

/// The tools a server offers.
pub struct Registry {
    entries: Vec<Entry>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl Registry {
    /// Every tool, in `tools/list` order.
    pub fn all() -> Registry {
        Registry {
            entries: vec![
                entry(
                    crate::read::READ,
                    Hints::query("Read the reasons behind code"),
                ),
                entry(
                    crate::queries::DEPS,
                    Hints::query("What depends on this unit"),
                ),
                entry(
                    crate::queries::HISTORY,
                    Hints::query("Why a unit changed over time"),
                ),
                entry(
                    crate::queries::SUMMARY,
                    Hints::query("Summarize the reasons in a file or directory"),
                ),
                entry(
                    crate::context::CONTEXT_SET,
                    Hints::writes("Say what the next commit is for", true),
                ),
                entry(
                    crate::correct::FLAG,
                    Hints::writes("Flag an annotation as doubtful", false),
                ),
                entry(
                    crate::correct::CORRECT,
                    Hints::writes("Correct one field of an annotation", false),
                ),
            ],
        }
    }

    /// The tools' definitions.
    pub(crate) fn tools(&self) -> Vec<Tool> {
        self.entries.iter().map(|e| e.tool.clone()).collect()
    }

    /// The definition of the tool `name`.
    pub(crate) fn tool(&self, name: &str) -> Option<Tool> {
        self.find(name).map(|e| e.tool.clone())
    }

    /// The tools' names.
    pub fn names(&self) -> Vec<&str> {
        self.entries.iter().map(|e| e.tool.name.as_ref()).collect()
    }

    pub(crate) fn runner(&self, name: &str) -> Option<Runner> {
        self.find(name).map(|e| Arc::clone(&e.run))
    }

    fn find(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.tool.name == name)
    }
}

fn entry<A: DeserializeOwned + 'static>(def: McpTool<A>, hints: Hints) -> Entry {
    let problems = def.problems();
    assert!(
        problems.is_empty(),
        "every tool's schema is strict and names only fields its arguments read (tested): {problems:?}"
    );
    let Value::Object(schema) = def.parameters() else {
        unreachable!("a strict schema is an object (checked above)");
    };
    let annotations = ToolAnnotations::with_title(hints.title)
        .read_only(hints.read_only)
        .destructive(false)
        .idempotent(hints.idempotent)
        .open_world(false);
    Entry {
        tool: Tool::new(def.name, def.description, Arc::new(schema))
            .with_title(hints.title)
            .with_annotations(annotations),
        run: Arc::new(move |scope, arguments| {
            let args = def
                .parse(&Value::Object(arguments))
                .map_err(|problem| ToolError::invalid_arguments(def.name, problem))?;
            (def.run)(scope, args, &())
        }),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Every object in a schema (the root and nested ones) forbids unknown
    /// properties and lists its required ones.
    fn assert_strict(tool: &str, schema: &Value) {
        match schema {
            Value::Object(map) => {
                if map.get("type") == Some(&json!("object")) {
                    assert_eq!(
                        map.get("additionalProperties"),
                        Some(&json!(false)),
                        "{tool}: {schema}"
                    );
                    assert!(map.contains_key("properties"), "{tool}: {schema}");
                }
                map.values().for_each(|v| assert_strict(tool, v));
            }
            Value::Array(items) => items.iter().for_each(|v| assert_strict(tool, v)),
            _ => {}
        }
    }

    #[test]
    fn every_schema_is_strict() {
        let registry = Registry::all();
        assert_eq!(
            registry.names(),
            [
                "ultragit_read",
                "ultragit_deps",
                "ultragit_history",
                "ultragit_summary",
                "ultragit_context_set",
                "ultragit_flag",
                "ultragit_correct"
            ]
        );
        for tool in registry.tools() {
            let schema = tool.schema_as_json_value();
            assert_eq!(schema["type"], "object", "{schema}");
            assert_strict(&tool.name, &schema);
            assert!(tool.description.is_some_and(|d| d.len() > 40));
        }
        let read = registry
            .tool("ultragit_read")
            .unwrap()
            .schema_as_json_value();
        assert_eq!(read["required"], json!(["paths"]), "{read}");
        assert_eq!(read["properties"]["paths"]["minItems"], 1, "{read}");
        let correct = registry
            .tool("ultragit_correct")
            .unwrap()
            .schema_as_json_value();
        let mut required: Vec<&str> = correct["required"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        required.sort_unstable();
        assert_eq!(
            required,
            [
                "anchor",
                "commit",
                "field",
                "file",
                "operation",
                "reason",
                "value"
            ],
            "{correct}"
        );
        assert!(registry.tool("nope").is_none());
    }
}
