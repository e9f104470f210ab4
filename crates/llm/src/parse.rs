//! Tolerant reading of provider replies: optional fields may be missing (real
//! servers omit what OpenAI sends), required ones produce a typed error naming the
//! field, never a panic.

use serde_json::Value;

use crate::error::LlmError;
use crate::types::{CompletionResponse, ContentBlock, StopReason, Usage};

/// Reads fields of one reply for one provider.
///
/// **Cut-off replies.** A reply the output cap cut short ([`Reader::cut_off`])
/// may end inside a tool call's arguments. Such a call is dropped
/// ([`Reader::tool_use`] gives `None`) and the calls before it are kept: the
/// reply's stop reason is `MaxTokens` whatever it calls, so the caller knows
/// the reply is incomplete and can ask again. In a reply that was not cut,
/// arguments that are not JSON are an error, as always.
pub(crate) struct Reader {
    pub provider: &'static str,
    /// The output cap cut the reply short.
    cut: bool,
}

impl Reader {
    /// A reader for `raw`, which must be a JSON object.
    pub fn reply(provider: &'static str, raw: &Value) -> Result<Reader, LlmError> {
        let reader = Reader {
            provider,
            cut: false,
        };
        if raw.is_object() {
            Ok(reader)
        } else {
            Err(reader.malformed("the reply is not a JSON object"))
        }
    }

    /// This reader's reply was cut short by the output cap.
    pub fn cut_off(mut self, cut: bool) -> Reader {
        self.cut = cut;
        self
    }

    /// The stop reason of a reply that calls tools when `calls` (then
    /// [`StopReason::ToolUse`], or `MaxTokens` for a cut reply), else `other`.
    pub fn stop_reason(
        &self,
        calls: bool,
        other: impl FnOnce() -> Result<StopReason, LlmError>,
    ) -> Result<StopReason, LlmError> {
        if self.cut {
            Ok(StopReason::MaxTokens)
        } else if calls {
            Ok(StopReason::ToolUse)
        } else {
            other()
        }
    }

    pub fn malformed(&self, reason: impl Into<String>) -> LlmError {
        LlmError::Malformed {
            provider: self.provider,
            reason: reason.into(),
        }
    }

    /// `value[key]` as a string, required.
    pub fn str<'v>(&self, value: &'v Value, key: &str, path: &str) -> Result<&'v str, LlmError> {
        self.required(value, key, path, "a string", Value::as_str)
    }

    /// `value[key]` as an array, required.
    pub fn array<'v>(
        &self,
        value: &'v Value,
        key: &str,
        path: &str,
    ) -> Result<&'v Vec<Value>, LlmError> {
        self.required(value, key, path, "an array", Value::as_array)
    }

    /// `value[key]` as what `pick` takes (`expected` names it), required.
    fn required<'v, T: ?Sized>(
        &self,
        value: &'v Value,
        key: &str,
        path: &str,
        expected: &str,
        pick: impl Fn(&'v Value) -> Option<&'v T>,
    ) -> Result<&'v T, LlmError> {
        match value.get(key) {
            Some(found) => pick(found).ok_or_else(|| {
                self.malformed(format!(
                    "{path}.{key} should be {expected}, found {}",
                    kind(found)
                ))
            }),
            None => Err(self.malformed(format!("{path}.{key} is missing"))),
        }
    }

    /// A stop reason we do not know (cut short for the message).
    pub(crate) fn unknown_stop_reason(&self, value: &str) -> LlmError {
        LlmError::UnknownStopReason {
            provider: self.provider,
            value: crate::http::clip(value, 100),
        }
    }

    /// A tool call named `name` with `id` and its raw arguments (see
    /// [`Reader::arguments`]); `None` for a call whose arguments the output
    /// cap cut (a cut reply's invalid arguments).
    pub fn tool_use(
        &self,
        id: String,
        name: String,
        arguments: Option<&Value>,
    ) -> Result<Option<ContentBlock>, LlmError> {
        match self.arguments(&name, arguments) {
            Ok(input) => Ok(Some(ContentBlock::ToolUse { id, name, input })),
            Err(LlmError::InvalidToolArguments { .. }) if self.cut => Ok(None),
            Err(err) => Err(err),
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

/// Where the Responses and Messages APIs put their token counts.
pub(crate) const INPUT_OUTPUT_TOKENS: (&str, &str) =
    ("/usage/input_tokens", "/usage/output_tokens");

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

/// Whether the reply's content calls a tool (which then decides the stop reason,
/// whatever the reply says).
pub(crate) fn calls_tools(content: &[ContentBlock]) -> bool {
    content
        .iter()
        .any(|b| matches!(b, ContentBlock::ToolUse { .. }))
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

/// The reply parsers over arbitrary input: whatever a server sends, each returns
/// a response or a typed error and never panics.
#[cfg(test)]
mod properties {
    use proptest::prelude::*;
    use serde_json::{Map, Value};

    use crate::anthropic::parse_messages;
    use crate::openai::{parse_chat, parse_responses};

    /// Keys and string values the parsers look at, so arbitrary documents often
    /// take the paths real replies take.
    const WORDS: &[&str] = &[
        "type",
        "output",
        "content",
        "text",
        "status",
        "choices",
        "message",
        "tool_calls",
        "function",
        "name",
        "arguments",
        "call_id",
        "id",
        "input",
        "stop_reason",
        "finish_reason",
        "usage",
        "error",
        "incomplete_details",
        "reason",
        "refusal",
        "model",
        "input_tokens",
        "output_tokens",
        "prompt_tokens",
        "completion_tokens",
        "function_call",
        "output_text",
        "tool_use",
        "completed",
        "incomplete",
        "failed",
        "cancelled",
        "stop",
        "length",
        "end_turn",
        "max_tokens",
        "max_output_tokens",
        "content_filter",
        "{",
        "{}",
        "[1]",
        "{\"a\":1}",
        "",
    ];

    fn word() -> impl Strategy<Value = String> {
        prop_oneof![
            3 => prop::sample::select(WORDS).prop_map(str::to_owned),
            1 => any::<String>(),
        ]
    }

    fn json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            word().prop_map(Value::String),
        ];
        leaf.prop_recursive(6, 64, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec((word(), inner), 0..6)
                    .prop_map(|entries| Value::Object(entries.into_iter().collect::<Map<_, _>>())),
            ]
        })
    }

    fn parse_all(value: Value) {
        let _ = parse_responses(value.clone(), "p");
        let _ = parse_chat(value.clone(), "p");
        let _ = parse_messages(value);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn json_documents_never_panic(value in json()) {
            parse_all(value);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
            if let Ok(value) = serde_json::from_slice::<Value>(&bytes) {
                parse_all(value);
            }
            for event in crate::sse::events(&bytes) {
                if let Ok(value) = serde_json::from_str::<Value>(&event.data) {
                    parse_all(value);
                }
            }
        }

        #[test]
        fn event_streams_never_panic(lines in prop::collection::vec(
            prop_oneof![
                Just(String::new()),
                Just(":comment".to_owned()),
                word().prop_map(|w| format!("event: {w}")),
                json().prop_map(|v| format!("data: {v}")),
                any::<String>(),
            ],
            0..12,
        ), ending in prop::sample::select(vec!["\n", "\r\n", "\r"])) {
            let body = lines.join(ending);
            for event in crate::sse::events(body.as_bytes()) {
                if let Ok(value) = serde_json::from_str::<Value>(&event.data) {
                    parse_all(value);
                }
            }
        }
    }
}
