//! Tools, their result envelopes and the registry that dispatches them.
//!
//! Every tool result the model sees is an envelope:
//!
//! ```json
//! {"ok": true, "tool": "read_file", "data": {…}, "truncated": false}
//! {"ok": true, "tool": "read_file", "data": {…}, "truncated": true,
//!  "truncation": {"limit": "lines", "max": 400, "total": 1250, "shown": 400,
//!                 "hint": "ask for a narrower line range"}}
//! {"ok": false, "tool": "read_file", "error": {"code": "NOT_FOUND", "message": "…"}}
//! ```
//!
//! **Invariant:** nothing a model sends can crash the loop: an unknown tool, arguments
//! that do not match the tool's schema, or a failing tool all come back as an error
//! envelope the model can read and recover from.

use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::schema;

/// Caps every tool result honours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolLimits {
    /// Bytes of text in one result.
    pub max_bytes: usize,
    /// Lines of text in one result.
    pub max_lines: usize,
    /// Entries (files, matches, commits) in one result.
    pub max_entries: usize,
}

impl Default for ToolLimits {
    fn default() -> Self {
        ToolLimits {
            max_bytes: 48 * 1024,
            max_lines: 600,
            max_entries: 200,
        }
    }
}

/// Which cap cut a result short.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TruncationLimit {
    Bytes,
    Lines,
    Entries,
    Commits,
}

/// What was left out, so the model can ask for a narrower read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Truncation {
    pub limit: TruncationLimit,
    /// The cap that applied.
    pub max: usize,
    /// How many there were in all, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<usize>,
    /// How many are in the result.
    pub shown: usize,
    /// How to get the rest.
    pub hint: String,
}

/// A tool's successful result.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    pub data: Value,
    pub truncation: Option<Truncation>,
}

impl ToolOutput {
    /// A complete result.
    pub fn complete(data: Value) -> Self {
        ToolOutput {
            data,
            truncation: None,
        }
    }

    /// A result cut short by a cap.
    pub fn truncated(data: Value, truncation: Truncation) -> Self {
        ToolOutput {
            data,
            truncation: Some(truncation),
        }
    }
}

/// A tool's failure, reported to the model as `{"code", "message"}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolFailure {
    /// A stable upper-case code, e.g. `INVALID_ARGUMENT`, `NOT_FOUND`, `INTERNAL`.
    pub code: String,
    pub message: String,
}

impl ToolFailure {
    /// A failure with `code` and `message`.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        ToolFailure {
            code: code.into(),
            message: message.into(),
        }
    }

    /// `INVALID_ARGUMENT`.
    pub fn invalid_argument(message: impl Into<String>) -> Self {
        ToolFailure::new("INVALID_ARGUMENT", message)
    }

    /// `INTERNAL`.
    pub fn internal(message: impl Into<String>) -> Self {
        ToolFailure::new("INTERNAL", message)
    }
}

/// A read-only tool a model may call, as the registry sees it.
///
/// Declare a [`ToolDef`](crate::ToolDef) rather than implement this trait:
/// bound to its context it is a `Tool`, and its arguments are parsed the one
/// way ([`schema::parse`]) before its code runs. Implementations do blocking work
/// (git, files) and are called off the async executor.
pub trait Tool: Send + Sync {
    /// Stable name, e.g. `git_status_summary`.
    fn name(&self) -> &str;
    /// What the tool does, for the model.
    fn description(&self) -> &str;
    /// JSON Schema of the arguments: an object with `additionalProperties: false`,
    /// `required` for mandatory fields, bounds on numeric caps.
    fn parameters(&self) -> Value;
    /// Runs the tool on the arguments as the model sent them: it checks them
    /// against [`parameters`](Self::parameters) (and fails with
    /// `INVALID_ARGUMENT`) before anything else.
    fn call(&self, args: &Value, limits: &ToolLimits) -> Result<ToolOutput, ToolFailure>;
    /// The argument names the tool's parser reads, when it can tell (a
    /// [`BoundTool`](crate::BoundTool) can). Registration checks that
    /// [`parameters`](Self::parameters) declares no others.
    fn argument_names(&self) -> Option<&'static [&'static str]> {
        None
    }
}

/// The envelope sent back to the model for one call.
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    pub tool: String,
    pub result: Result<ToolOutput, ToolFailure>,
}

impl Envelope {
    /// True for a successful call.
    pub fn ok(&self) -> bool {
        self.result.is_ok()
    }

    /// The JSON the model sees.
    pub fn to_value(&self) -> Value {
        match &self.result {
            Ok(output) => {
                let mut map = Map::new();
                map.insert("ok".into(), Value::Bool(true));
                map.insert("tool".into(), Value::String(self.tool.clone()));
                map.insert("data".into(), output.data.clone());
                map.insert("truncated".into(), Value::Bool(output.truncation.is_some()));
                if let Some(truncation) = &output.truncation {
                    map.insert(
                        "truncation".into(),
                        serde_json::to_value(truncation).unwrap_or(Value::Null),
                    );
                }
                Value::Object(map)
            }
            Err(failure) => json!({
                "ok": false,
                "tool": self.tool,
                "error": {"code": failure.code, "message": failure.message},
            }),
        }
    }

    /// The JSON text the model sees.
    pub fn to_json(&self) -> String {
        self.to_value().to_string()
    }
}

/// The tools of one task.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: Vec<Arc<dyn Tool>>,
    limits: ToolLimits,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRegistry")
            .field("tools", &self.names())
            .field("limits", &self.limits)
            .finish()
    }
}

/// A tool that cannot be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    #[error("a tool named '{0}' is already registered")]
    Duplicate(String),
    #[error("tool '{name}' has a schema that is not strict: {problems}")]
    NotStrict { name: String, problems: String },
    #[error("tool '{name}' declares arguments it does not read: {arguments}")]
    UnreadArguments { name: String, arguments: String },
}

impl ToolRegistry {
    /// An empty registry whose results honour `limits`.
    pub fn new(limits: ToolLimits) -> Self {
        ToolRegistry {
            tools: Vec::new(),
            limits,
        }
    }

    /// Adds a tool. Its schema must pass [`schema::strictness_problems`] and
    /// declare only arguments the tool reads ([`Tool::argument_names`]).
    pub fn register(&mut self, tool: Arc<dyn Tool>) -> Result<(), RegistryError> {
        let name = tool.name().to_owned();
        if self.get(&name).is_some() {
            return Err(RegistryError::Duplicate(name));
        }
        let parameters = tool.parameters();
        let problems = schema::strictness_problems(&parameters);
        if !problems.is_empty() {
            return Err(RegistryError::NotStrict {
                name,
                problems: problems.join("; "),
            });
        }
        if let Some(fields) = tool.argument_names() {
            let unread = unread_arguments(&parameters, fields);
            if !unread.is_empty() {
                return Err(RegistryError::UnreadArguments {
                    name,
                    arguments: unread.join(", "),
                });
            }
        }
        self.tools.push(tool);
        Ok(())
    }

    /// Builder-style [`register`](Self::register).
    pub fn with(mut self, tool: Arc<dyn Tool>) -> Result<Self, RegistryError> {
        self.register(tool)?;
        Ok(self)
    }

    /// The limits results honour.
    pub fn limits(&self) -> ToolLimits {
        self.limits
    }

    /// No tools registered.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The tool names, in registration order.
    pub fn names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.name()).collect()
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|t| t.name() == name)
    }

    /// The specs sent to the provider (strict).
    pub fn specs(&self) -> Vec<llm::ToolSpec> {
        self.tools
            .iter()
            .map(|tool| llm::ToolSpec {
                name: tool.name().to_owned(),
                description: tool.description().to_owned(),
                parameters: tool.parameters(),
                strict: true,
            })
            .collect()
    }

    /// The definitions as JSON: `[{"name", "description", "parameters"}, …]`.
    pub fn definitions(&self) -> Value {
        Value::Array(
            self.tools
                .iter()
                .map(|tool| {
                    json!({
                        "name": tool.name(),
                        "description": tool.description(),
                        "parameters": tool.parameters(),
                    })
                })
                .collect(),
        )
    }

    /// Runs one call, whatever the model sent: unknown tools, invalid arguments
    /// and failures become error envelopes. Blocking; see
    /// `dispatch_async`.
    pub fn dispatch(&self, name: &str, args: &Value) -> Envelope {
        let Some(tool) = self.get(name) else {
            let known = self.names().join(", ");
            return Envelope {
                tool: name.to_owned(),
                result: Err(ToolFailure::new(
                    "UNKNOWN_TOOL",
                    format!("no tool named '{name}'; available tools: {known}"),
                )),
            };
        };
        run_tool(tool.as_ref(), args, self.limits)
    }

    /// [`dispatch`](Self::dispatch) on a blocking thread, so git and file work
    /// does not stall the async executor.
    /// `limits` replace the registry's for this call (the runner narrows them
    /// to what the context window has left).
    pub(crate) async fn dispatch_async(
        &self,
        name: &str,
        args: &Value,
        limits: ToolLimits,
    ) -> Envelope {
        let Some(tool) = self.get(name).cloned() else {
            return self.dispatch(name, args);
        };
        let args = args.clone();
        let name = name.to_owned();
        match tokio::task::spawn_blocking(move || run_tool(tool.as_ref(), &args, limits)).await {
            Ok(envelope) => envelope,
            Err(join) => Envelope {
                tool: name,
                result: Err(ToolFailure::internal(format!("the tool crashed: {join}"))),
            },
        }
    }
}

/// The top-level properties `parameters` declares that the tool does not read
/// (not among `fields`): arguments the model may send that would be refused or
/// lost. (A field read but not declared is never sent, so it stays absent.)
fn unread_arguments<'a>(parameters: &'a Value, fields: &[&str]) -> Vec<&'a str> {
    parameters
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| {
            properties
                .keys()
                .map(String::as_str)
                .filter(|name| !fields.contains(name))
                .collect()
        })
        .unwrap_or_default()
}

fn run_tool(tool: &dyn Tool, args: &Value, limits: ToolLimits) -> Envelope {
    let name = tool.name().to_owned();
    let result =
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| tool.call(args, &limits))) {
            Ok(result) => result,
            Err(_) => Err(ToolFailure::internal("the tool failed unexpectedly")),
        };
    let result = result.map(|output| cap_output(output, limits.max_bytes));
    Envelope { tool: name, result }
}

/// The safety net under every tool's own caps: if the data is still larger than
/// `max_bytes` as JSON, its longest strings are cut until it fits, and the result
/// says so.
fn cap_output(mut output: ToolOutput, max_bytes: usize) -> ToolOutput {
    let size = output.data.to_string().len();
    if size <= max_bytes {
        return output;
    }
    let mut excess = size - max_bytes;
    while excess > 0 {
        let Some(longest) = longest_string(&mut output.data) else {
            break;
        };
        let keep = longest.len().saturating_sub(excess + 64);
        let mut cut = keep;
        while cut > 0 && !longest.is_char_boundary(cut) {
            cut -= 1;
        }
        let removed = longest.len() - cut;
        longest.truncate(cut);
        longest.push_str("\n[… cut: result exceeded the byte cap]");
        if removed == 0 {
            break;
        }
        excess = output.data.to_string().len().saturating_sub(max_bytes);
    }
    if output.truncation.is_none() {
        output.truncation = Some(Truncation {
            limit: TruncationLimit::Bytes,
            max: max_bytes,
            total: Some(size),
            shown: output.data.to_string().len(),
            hint: "the result was cut to fit; ask for a narrower read".to_owned(),
        });
    }
    output
}

fn longest_string(value: &mut Value) -> Option<&mut String> {
    match value {
        Value::String(s) => Some(s),
        Value::Array(items) => items
            .iter_mut()
            .filter_map(longest_string)
            .max_by_key(|s| s.len()),
        Value::Object(map) => map
            .values_mut()
            .filter_map(longest_string)
            .max_by_key(|s| s.len()),
        _ => None,
    }
}
