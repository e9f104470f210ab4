//! Anthropic's Messages API over `reqwest` (`POST {base}/messages`).
//!
//! The key travels in `x-api-key`, with `anthropic-version: 2023-06-01`. The system
//! prompt and all developer messages are joined into `system` (the API has no
//! developer role); consecutive messages of one role are merged (the API wants
//! them alternating); tool calls are `tool_use` blocks and results `tool_result`
//! blocks with `is_error`. `max_tokens` is required by the API: 4096 when the request
//! sets none. `json_format` is not sent (there is no native structured output); the
//! agent's structured mode states the schema in the prompt instead.

use std::sync::Arc;

use reqwest::header::{CONTENT_TYPE, HeaderValue};
use serde_json::{Map, Value, json};

use crate::error::LlmError;
use crate::http::Transport;
use crate::parse::{INPUT_OUTPUT_TOKENS, Reader, calls_tools, response};
use crate::types::{
    CompletionRequest, CompletionResponse, ContentBlock, Role, StopReason, ToolChoice, backend,
};
use crate::{Auth, ProviderConfig};

/// The default base URL.
pub(crate) const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com/v1";
/// The API version header we speak.
pub(crate) const ANTHROPIC_VERSION: &str = "2023-06-01";
/// `max_tokens` when a request sets none.
pub(crate) const DEFAULT_MAX_TOKENS: u32 = 4096;

/// The Messages API.
pub struct Anthropic {
    transport: Arc<Transport>,
    url: String,
    key: Option<HeaderValue>,
    config: ProviderConfig,
}

const PROVIDER: &str = "anthropic";

impl Anthropic {
    /// The provider for `config`. ChatGPT sign-in is not an Anthropic credential.
    pub fn new(config: ProviderConfig) -> Result<Self, LlmError> {
        let invalid = |message: &str| LlmError::Config {
            provider: PROVIDER,
            message: message.to_owned(),
        };
        let base = config
            .base_url
            .as_deref()
            .unwrap_or(ANTHROPIC_BASE_URL)
            .trim_end_matches('/')
            .to_owned();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(invalid("the base URL must start with http:// or https://"));
        }
        let key = match &config.auth {
            Auth::None => None,
            Auth::ApiKey(secret) => {
                let mut value = HeaderValue::from_str(secret.expose())
                    .map_err(|_| invalid("the key contains characters a header cannot carry"))?;
                value.set_sensitive(true);
                Some(value)
            }
            Auth::ChatGpt { .. } => {
                return Err(invalid(
                    "ChatGPT sign-in works with the OpenAI Responses API only; give an Anthropic API key",
                ));
            }
        };
        let transport = Arc::new(Transport::new(
            PROVIDER,
            config.http.clone(),
            config.redactor(),
        )?);
        Ok(Anthropic {
            transport,
            url: format!("{base}/messages"),
            key,
            config,
        })
    }

    /// The JSON body sent for `request`.
    pub(crate) fn request_body(&self, request: &CompletionRequest) -> Value {
        let mut system: Vec<String> = request.system.iter().cloned().collect();
        let mut messages: Vec<(Role, Vec<Value>)> = Vec::new();
        for message in &request.messages {
            if message.role == Role::Developer {
                let text = message.text();
                if !text.is_empty() {
                    system.push(text);
                }
                continue;
            }
            let blocks: Vec<Value> = message
                .content
                .iter()
                .filter_map(|block| match block {
                    ContentBlock::Text { text } if text.is_empty() => None,
                    ContentBlock::Text { text } => Some(json!({"type": "text", "text": text})),
                    ContentBlock::ToolUse { id, name, input } => {
                        Some(json!({"type": "tool_use", "id": id, "name": name, "input": input}))
                    }
                    ContentBlock::ToolResult {
                        tool_use_id,
                        content,
                        is_error,
                    } => Some(json!({
                        "type": "tool_result",
                        "tool_use_id": tool_use_id,
                        "content": content,
                        "is_error": is_error,
                    })),
                })
                .collect();
            if blocks.is_empty() {
                continue;
            }
            match messages.last_mut() {
                Some((role, existing)) if *role == message.role => existing.extend(blocks),
                _ => messages.push((message.role, blocks)),
            }
        }
        let mut body = Map::new();
        body.insert("model".into(), json!(self.config.model));
        body.insert(
            "max_tokens".into(),
            json!(request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)),
        );
        if !system.is_empty() {
            body.insert("system".into(), json!(system.join("\n\n")));
        }
        let messages: Vec<Value> = messages
            .into_iter()
            .map(|(role, content)| {
                let role = if role == Role::Assistant {
                    "assistant"
                } else {
                    "user"
                };
                json!({"role": role, "content": content})
            })
            .collect();
        body.insert("messages".into(), Value::Array(messages));
        if !request.tools.is_empty() {
            let tools: Vec<Value> = request
                .tools
                .iter()
                .map(|tool| {
                    json!({
                        "name": tool.name,
                        "description": tool.description,
                        "input_schema": tool.parameters,
                    })
                })
                .collect();
            body.insert("tools".into(), Value::Array(tools));
            let choice = match request.tool_choice {
                ToolChoice::Auto => json!({"type": "auto", "disable_parallel_tool_use": true}),
                ToolChoice::None => json!({"type": "none"}),
                ToolChoice::Required => json!({"type": "any", "disable_parallel_tool_use": true}),
            };
            body.insert("tool_choice".into(), choice);
        }
        Value::Object(body)
    }

    async fn call(&self, request: &CompletionRequest) -> Result<CompletionResponse, LlmError> {
        let body =
            serde_json::to_vec(&self.request_body(request)).map_err(|e| LlmError::Config {
                provider: PROVIDER,
                message: format!("could not encode the request: {e}"),
            })?;
        let client = &self.transport.client;
        let answer = self
            .transport
            .send(|| async {
                let mut builder = client
                    .post(&self.url)
                    .header(CONTENT_TYPE, "application/json")
                    .header("anthropic-version", ANTHROPIC_VERSION)
                    .body(body.clone());
                if let Some(key) = &self.key {
                    builder = builder.header("x-api-key", key.clone());
                }
                builder.build()
            })
            .await?;
        let raw: Value = serde_json::from_slice(&answer.body).map_err(|e| LlmError::Malformed {
            provider: PROVIDER,
            reason: self.transport.redactor.redact(&format!(
                "the reply is not JSON ({e}): {}",
                crate::http::clip(
                    String::from_utf8_lossy(&answer.body[..answer.body.len().min(400)]).trim(),
                    200
                )
            )),
        })?;
        parse_messages(raw).map_err(|e| e.redacted(&self.transport.redactor))
    }
}

backend!(Anthropic, config, PROVIDER);

/// Reads a Messages API reply.
pub(crate) fn parse_messages(raw: Value) -> Result<CompletionResponse, LlmError> {
    let cut = raw.get("stop_reason").and_then(Value::as_str) == Some("max_tokens");
    let r = Reader::reply(PROVIDER, &raw)?.cut_off(cut);
    let blocks = r.array(&raw, "content", "message")?;
    let mut content = Vec::new();
    for (i, block) in blocks.iter().enumerate() {
        let path = format!("message.content[{i}]");
        match block.get("type").and_then(Value::as_str) {
            Some("text") => content.push(ContentBlock::text(r.str(block, "text", &path)?)),
            Some("tool_use") => {
                let name = r.str(block, "name", &path)?.to_owned();
                let id = r.str(block, "id", &path)?.to_owned();
                content.extend(r.tool_use(id, name, block.get("input"))?);
            }
            // Thinking blocks and other server-side content are not ours.
            _ => {}
        }
    }
    let stop_reason = r.stop_reason(calls_tools(&content), || {
        Ok(match raw.get("stop_reason").and_then(Value::as_str) {
            None | Some("end_turn" | "stop_sequence") => StopReason::EndTurn,
            Some("max_tokens") => StopReason::MaxTokens,
            Some("tool_use") => StopReason::ToolUse,
            Some(other @ ("refusal" | "pause_turn" | "model_context_window_exceeded")) => {
                StopReason::Other(other.to_owned())
            }
            Some(other) => return Err(r.unknown_stop_reason(other)),
        })
    })?;
    Ok(response(content, stop_reason, raw, INPUT_OUTPUT_TOKENS))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_text_tools_and_stop_reasons() {
        let raw = json!({"content": [{"type": "thinking", "thinking": "…"}, {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "tu1", "name": "read_file", "input": {"path": "a"}}],
            "stop_reason": "tool_use", "usage": {"input_tokens": 9, "output_tokens": 2}});
        let r = parse_messages(raw).unwrap();
        assert_eq!(r.text(), "Let me look.");
        assert_eq!(
            r.tool_uses(),
            vec![("tu1", "read_file", &json!({"path": "a"}))]
        );
        assert_eq!(r.stop_reason, StopReason::ToolUse);
        let cut = parse_messages(json!({"content": [], "stop_reason": "max_tokens"})).unwrap();
        assert_eq!(cut.stop_reason, StopReason::MaxTokens);
        assert!(matches!(
            parse_messages(json!({"content": [], "stop_reason": "nap"})),
            Err(LlmError::UnknownStopReason { .. })
        ));
        assert!(matches!(
            parse_messages(json!({"stop_reason": "end_turn"})),
            Err(LlmError::Malformed { .. })
        ));
        assert!(matches!(
            parse_messages(
                json!({"content": [{"type": "tool_use", "id": "x", "name": "f", "input": "[1]"}]})
            ),
            Err(LlmError::InvalidToolArguments { .. })
        ));
    }

    #[test]
    fn a_cut_reply_that_calls_tools_stops_at_max_tokens() {
        let raw = json!({
            "content": [
                {"type": "text", "text": "Recording."},
                {"type": "tool_use", "id": "a", "name": "emit", "input": {"x": 1}},
            ],
            "stop_reason": "max_tokens",
        });
        let r = parse_messages(raw).unwrap();
        assert_eq!(r.stop_reason, StopReason::MaxTokens);
        assert_eq!(r.tool_uses(), vec![("a", "emit", &json!({"x": 1}))]);
    }
}
