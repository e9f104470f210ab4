//! The normalized request and response every provider speaks.

use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::LlmError;

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The task's caller: prompts, tool results.
    User,
    /// The model.
    Assistant,
    /// Instructions layered between the system prompt and the user (tool policy,
    /// environment, project guidance). Providers without such a role receive these
    /// as system text (see each backend).
    Developer,
}

/// A piece of a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Plain text.
    Text { text: String },
    /// The model asks for a tool call.
    ToolUse {
        /// The provider's id for the call; results refer to it.
        id: String,
        name: String,
        /// The arguments, already parsed from JSON.
        input: Value,
    },
    /// The result of a tool call, sent back to the model.
    ToolResult {
        tool_use_id: String,
        content: String,
        is_error: bool,
    },
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text { text: text.into() }
    }
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: Vec<ContentBlock>,
}

impl Message {
    /// A user message with one text block.
    pub fn user(text: impl Into<String>) -> Self {
        Message {
            role: Role::User,
            content: vec![ContentBlock::text(text)],
        }
    }

    /// A developer message with one text block.
    pub fn developer(text: impl Into<String>) -> Self {
        Message {
            role: Role::Developer,
            content: vec![ContentBlock::text(text)],
        }
    }

    /// An assistant message with one text block.
    pub fn assistant(text: impl Into<String>) -> Self {
        Message {
            role: Role::Assistant,
            content: vec![ContentBlock::text(text)],
        }
    }

    /// The concatenated text blocks.
    pub fn text(&self) -> String {
        text_of(&self.content)
    }
}

/// The concatenated text of some blocks.
pub fn text_of(blocks: &[ContentBlock]) -> String {
    let mut out = String::new();
    for block in blocks {
        if let ContentBlock::Text { text } = block {
            out.push_str(text);
        }
    }
    out
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments (an object schema).
    pub parameters: Value,
    /// Ask the provider to enforce the schema exactly. OpenAI's strict mode needs
    /// every property required and `additionalProperties: false`; the OpenAI
    /// backends rewrite optional properties as required-but-nullable for it (see
    /// [`crate::strict_schema`]).
    pub strict: bool,
}

/// Whether and how the model may call tools in this request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolChoice {
    /// The model decides.
    #[default]
    Auto,
    /// The model must answer without calling a tool (tools stay declared, so a
    /// history with tool calls stays valid).
    None,
    /// The model must call some tool.
    Required,
}

/// `reasoning.effort` for reasoning models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReasoningEffort {
    Low,
    Medium,
    High,
    Xhigh,
}

impl ReasoningEffort {
    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            ReasoningEffort::Low => "low",
            ReasoningEffort::Medium => "medium",
            ReasoningEffort::High => "high",
            ReasoningEffort::Xhigh => "xhigh",
        }
    }
}

/// Ask for a JSON answer matching a schema (structured output).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonFormat {
    /// A short name for the schema (`[a-zA-Z0-9_-]`).
    pub name: String,
    pub schema: Value,
}

/// One model call.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CompletionRequest {
    /// The system prompt (Responses `instructions`).
    pub system: Option<String>,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
    pub tool_choice: ToolChoice,
    /// Upper bound on generated tokens for this call.
    pub max_tokens: Option<u32>,
    /// Ask for JSON matching a schema, where the provider supports it.
    pub json_format: Option<JsonFormat>,
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// It finished its answer.
    EndTurn,
    /// It wants tool results before going on.
    ToolUse,
    /// It ran out of output tokens.
    MaxTokens,
    /// A reason the provider names that is none of the above (e.g. a content
    /// filter), kept verbatim.
    Other(String),
}

/// Token counts, when the provider reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
}

impl Usage {
    /// Adds another call's counts (unknown stays unknown only if both are).
    pub fn add(&mut self, other: Usage) {
        fn sum(a: Option<u64>, b: Option<u64>) -> Option<u64> {
            match (a, b) {
                (None, None) => None,
                (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
            }
        }
        self.input_tokens = sum(self.input_tokens, other.input_tokens);
        self.output_tokens = sum(self.output_tokens, other.output_tokens);
    }
}

/// The model's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompletionResponse {
    /// Text and tool-use blocks, in the order the model produced them.
    pub content: Vec<ContentBlock>,
    pub stop_reason: StopReason,
    pub usage: Usage,
    /// The model that answered, when the provider says.
    pub model: Option<String>,
    /// The raw response JSON, for traces.
    pub raw: Value,
}

impl CompletionResponse {
    /// The concatenated text blocks.
    pub fn text(&self) -> String {
        text_of(&self.content)
    }

    /// The tool calls, in order: `(id, name, input)`.
    pub fn tool_uses(&self) -> Vec<(&str, &str, &Value)> {
        self.content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::ToolUse { id, name, input } => {
                    Some((id.as_str(), name.as_str(), input))
                }
                _ => None,
            })
            .collect()
    }
}

/// A boxed future, so [`LlmProvider`] can be used as `dyn LlmProvider`.
pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A model behind some API. Implementations: [`crate::OpenAiResponses`],
/// [`crate::OpenAiChat`], [`crate::Anthropic`].
pub trait LlmProvider: Send + Sync + std::fmt::Debug {
    /// One model call. One call is one turn of an agent loop.
    fn complete<'a>(
        &'a self,
        request: &'a CompletionRequest,
    ) -> BoxFuture<'a, Result<CompletionResponse, LlmError>>;

    /// Whether the backend can be given tools (otherwise callers use structured
    /// output: one prompt, one JSON answer).
    fn supports_tool_use(&self) -> bool;

    /// A short name for messages and traces, e.g. `openai-responses`.
    fn name(&self) -> &'static str;

    /// The model asked for.
    fn model(&self) -> &str;

    /// The JSON body this provider sends over the wire for `request` (model,
    /// service tier, reasoning, `store`, `stream`, the output cap as the API
    /// names it, …), for traces: the request as the API saw it, not our
    /// normalized form. It holds no credential (those travel only in headers).
    /// `None` for providers that are not HTTP backends of this crate (wrappers
    /// forward their inner provider's).
    fn wire_body(&self, request: &CompletionRequest) -> Option<Value> {
        let _ = request;
        None
    }
}

/// `Debug` (the model only) and [`LlmProvider`] for a backend type: `$config` is
/// the path of its [`ProviderConfig`](crate::ProviderConfig) field, `$name` its
/// provider name, and its inherent `async fn call(&self, &CompletionRequest)`
/// sends one request.
macro_rules! backend {
    ($backend:ident, $($config:ident).+, $name:expr) => {
        impl std::fmt::Debug for $backend {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($backend))
                    .field("model", &self.$($config).+.model)
                    .finish_non_exhaustive()
            }
        }

        impl $crate::LlmProvider for $backend {
            fn complete<'a>(
                &'a self,
                request: &'a $crate::CompletionRequest,
            ) -> $crate::BoxFuture<'a, Result<$crate::CompletionResponse, $crate::LlmError>> {
                Box::pin(self.call(request))
            }

            fn supports_tool_use(&self) -> bool {
                self.$($config).+.tool_use
            }

            fn name(&self) -> &'static str {
                $name
            }

            fn model(&self) -> &str {
                &self.$($config).+.model
            }

            fn wire_body(&self, request: &$crate::CompletionRequest) -> Option<serde_json::Value> {
                Some(self.request_body(request))
            }
        }
    };
}

pub(crate) use backend;
