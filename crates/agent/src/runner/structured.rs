//! The structured-output mode: one JSON value matching a schema, for providers
//! without tool use.

use llm::{JsonFormat, Message};
use serde_json::Value;

use super::{AgentError, Outcome, Runner, Task, extract_json};
use crate::schema;
use crate::tool::ToolRegistry;

/// A task whose answer is one JSON value matching a schema: the structured-output
/// mode for providers without tool use.
#[derive(Debug, Clone)]
pub struct StructuredTask {
    pub name: String,
    pub system: String,
    /// Developer layers and the user prompt; the schema is appended to the last
    /// message.
    pub messages: Vec<Message>,
    /// A short name for the schema (`[a-zA-Z0-9_-]`).
    pub schema_name: String,
    pub schema: Value,
}

impl Runner<'_> {
    /// Asks for one JSON value matching `task.schema`, validates it (one repair
    /// pass), and returns it.
    pub async fn run_structured(
        &mut self,
        task: &StructuredTask,
    ) -> Result<(Value, Outcome), AgentError> {
        let schema_text = serde_json::to_string_pretty(&task.schema).unwrap_or_default();
        let mut messages = task.messages.clone();
        messages.push(Message::user(format!(
            "Reply with one JSON value that matches this JSON Schema, and nothing else (no \
             prose, no code fences):\n{schema_text}"
        )));
        let plain = Task {
            name: task.name.clone(),
            system: task.system.clone(),
            messages,
            tools: ToolRegistry::default(),
            format_reminder: "Reply with the JSON value only.".to_owned(),
            json_format: Some(JsonFormat {
                name: task.schema_name.clone(),
                schema: task.schema.clone(),
            }),
        };
        let schema = task.schema.clone();
        let validator = move |text: &str| -> Result<String, Vec<String>> {
            let value = extract_json(text).map_err(|e| vec![e])?;
            schema::validate(&value, &schema).map_err(|e| vec![e])?;
            Ok(value.to_string())
        };
        let outcome = self.run(&plain, Some(&validator)).await?;
        let value = serde_json::from_str(&outcome.output).map_err(|e| AgentError::Invalid {
            problems: vec![e.to_string()],
            output: outcome.output.clone(),
        })?;
        Ok((value, outcome))
    }
}
