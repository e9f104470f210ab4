//! The tool registry: one `ToolSpec` per tool, implemented by the tool's
//! `Deserialize + JsonSchema` argument type (a `ToolMeta` and a synchronous
//! call), listed once in [`Registry::all`]. The registry derives each tool's strict schema from its
//! argument type, parses arguments into it (a mismatch is a tool error naming
//! the field), and turns the call's `ToolOutput` or `ToolError` into a
//! `CallToolResult`.
//!
//! Adding a tool: a module with its argument struct
//! (`#[serde(deny_unknown_fields)]`, doc comments become the schema's
//! descriptions) implementing `ToolSpec`: its `ToolMeta` (for a tool that
//! only reads, `ToolMeta::query`), and a `call` that runs the library
//! function and renders its result; then one line in [`Registry::all`].

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::Value;

use crate::Scope;
use crate::tool::{ToolError, ToolOutput, ToolSpec};

/// Runs a tool on raw arguments.
pub(crate) type Runner = fn(&Scope, JsonObject) -> Result<ToolOutput, ToolError>;

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
                entry::<crate::read::ReadArgs>(),
                entry::<crate::queries::DepsArgs>(),
                entry::<crate::queries::HistoryArgs>(),
                entry::<crate::queries::SummaryArgs>(),
                entry::<crate::context::ContextSetArgs>(),
                entry::<crate::correct::FlagArgs>(),
                entry::<crate::correct::CorrectArgs>(),
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
        self.find(name).map(|e| e.run)
    }

    fn find(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.tool.name == name)
    }
}

fn entry<T: ToolSpec>() -> Entry {
    let schema = rmcp::handler::server::common::schema_for_input::<T>()
        .expect("every argument type is a struct, so its schema is an object (tested)");
    let meta = T::META;
    let annotations = ToolAnnotations::with_title(meta.title)
        .read_only(meta.read_only)
        .destructive(false)
        .idempotent(meta.idempotent)
        .open_world(false);
    Entry {
        tool: Tool::new(meta.name, meta.description, Arc::clone(&schema))
            .with_title(meta.title)
            .with_annotations(annotations),
        run: run_typed::<T>,
    }
}

fn run_typed<T: ToolSpec>(scope: &Scope, arguments: JsonObject) -> Result<ToolOutput, ToolError> {
    let args: T = serde_json::from_value(Value::Object(arguments))
        .map_err(|err| ToolError::invalid_arguments(T::META.name, err))?;
    args.call(scope)
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
