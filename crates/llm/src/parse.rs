//! Tolerant reading of provider replies: optional fields may be missing (real
//! servers omit what OpenAI sends), required ones produce a typed error naming the
//! field, never a panic.

use serde_json::Value;

use crate::error::LlmError;
use crate::types::{CompletionResponse, ContentBlock, StopReason, Usage};

/// Reads fields of one reply for one provider.
pub(crate) struct Reader {
    pub provider: &'static str,
}

impl Reader {
    pub fn malformed(&self, reason: impl Into<String>) -> LlmError {
        LlmError::Malformed {
            provider: self.provider,
            reason: reason.into(),
        }
    }

    /// `value[key]` as a string, required.
    pub fn str<'v>(&self, value: &'v Value, key: &str, path: &str) -> Result<&'v str, LlmError> {
        match value.get(key) {
            Some(Value::String(s)) => Ok(s),
            Some(other) => Err(self.malformed(format!(
                "{path}.{key} should be a string, found {}",
                kind(other)
            ))),
            None => Err(self.malformed(format!("{path}.{key} is missing"))),
        }
    }

    /// `value[key]` as an array, required.
    pub fn array<'v>(
        &self,
        value: &'v Value,
        key: &str,
        path: &str,
    ) -> Result<&'v Vec<Value>, LlmError> {
        match value.get(key) {
            Some(Value::Array(items)) => Ok(items),
            Some(other) => Err(self.malformed(format!(
                "{path}.{key} should be an array, found {}",
                kind(other)
            ))),
            None => Err(self.malformed(format!("{path}.{key} is missing"))),
        }
    }

    /// Tool-call arguments: a JSON text (OpenAI) or an object (some servers, and
    /// Anthropic). An empty text means no arguments.
    pub fn arguments(&self, tool: &str, raw: Option<&Value>) -> Result<Value, LlmError> {
        let invalid = |reason: String| LlmError::InvalidToolArguments {
            provider: self.provider,
            tool: crate::http::clip(tool, 100),
            reason,
        };
        match raw {
            None | Some(Value::Null) => Ok(Value::Object(Default::default())),
            Some(Value::String(text)) if text.trim().is_empty() => {
                Ok(Value::Object(Default::default()))
            }
            Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
                Ok(value @ Value::Object(_)) => Ok(value),
                Ok(other) => Err(invalid(format!(
                    "expected a JSON object, got {}",
                    kind(&other)
                ))),
                Err(err) => Err(invalid(err.to_string())),
            },
            Some(value @ Value::Object(_)) => Ok(value.clone()),
            Some(other) => Err(invalid(format!(
                "expected a JSON object, got {}",
                kind(other)
            ))),
        }
    }
}

/// The response, with usage read from the two JSON pointers the API uses and the
/// model name when the reply names one.
pub(crate) fn response(
    content: Vec<ContentBlock>,
    stop_reason: StopReason,
    raw: Value,
    (input, output): (&str, &str),
) -> CompletionResponse {
    CompletionResponse {
        content,
        stop_reason,
        usage: Usage {
            input_tokens: count(&raw, input),
            output_tokens: count(&raw, output),
        },
        model: raw.get("model").and_then(Value::as_str).map(str::to_owned),
        raw,
    }
}

/// An optional unsigned count.
pub(crate) fn count(value: &Value, pointer: &str) -> Option<u64> {
    value.pointer(pointer).and_then(Value::as_u64)
}

/// The JSON type name of a value, for messages.
pub(crate) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
