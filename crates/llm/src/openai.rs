//! OpenAI's two APIs through `async-openai`: the Responses API
//! ([`OpenAiResponses`]) and Chat Completions ([`OpenAiChat`], which also serves
//! Ollama, vLLM, llama.cpp's server, LM Studio and OpenRouter).
//!
//! async-openai carries the requests ("bring your own types": our request JSON,
//! our tolerant reply parsing — its typed Responses structs reject the leaner
//! replies of real OpenAI-compatible servers) through our own retrying HTTP service
//! ([`crate::http`]), with our own config (so it never reads `OPENAI_*` variables).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use async_openai::error::OpenAIError;
use async_openai::middleware::HttpRequestFactory;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue};
use serde_json::{Map, Value, json};

use crate::error::LlmError;
use crate::http::{Transport, clip};
use crate::parse::{INPUT_OUTPUT_TOKENS, Reader, calls_tools, response};
use crate::types::{
    CompletionRequest, CompletionResponse, ContentBlock, Role, StopReason, ToolChoice, ToolSpec,
    backend,
};
use crate::{Auth, ProviderConfig, ReasoningEffort};

/// The default base URL with an API key.
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
/// The default base URL with ChatGPT (Codex) sign-in.
pub(crate) const CHATGPT_BASE_URL: &str = "https://chatgpt.com/backend-api/codex";

/// What async-openai needs to address requests: base URL and headers. Built from
/// our [`Auth`], never from the environment.
struct WireConfig {
    base: String,
    headers: HeaderMap,
    key: secrecy::SecretString,
}

impl async_openai::config::Config for WireConfig {
    fn headers(&self) -> HeaderMap {
        self.headers.clone()
    }
    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
    fn query(&self) -> Vec<(&str, &str)> {
        Vec::new()
    }
    fn api_base(&self) -> &str {
        &self.base
    }
    fn api_key(&self) -> &secrecy::SecretString {
        &self.key
    }
}

/// Our retrying transport as the tower service async-openai sends through.
#[derive(Clone)]
struct RetryingService {
    transport: Arc<Transport>,
}

type ServiceFuture = Pin<Box<dyn Future<Output = Result<reqwest::Response, OpenAIError>> + Send>>;

impl tower_service::Service<HttpRequestFactory> for RetryingService {
    type Response = reqwest::Response;
    type Error = OpenAIError;
    type Future = ServiceFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, factory: HttpRequestFactory) -> Self::Future {
        let transport = self.transport.clone();
        Box::pin(async move {
            let answer = transport
                .send(|| factory.build())
                .await
                .map_err(|err| OpenAIError::Boxed(Box::new(err)))?;
            let mut builder = http::Response::builder().status(answer.status);
            for (name, value) in &answer.headers {
                builder = builder.header(name, value);
            }
            let response = builder
                .body(answer.body)
                .map_err(|err| OpenAIError::Boxed(Box::new(err)))?;
            Ok(reqwest::Response::from(response))
        })
    }
}

/// The async-openai client and what both OpenAI backends share.
struct OpenAiCore {
    client: async_openai::Client<WireConfig>,
    transport: Arc<Transport>,
    /// The base URL and headers async-openai sends with, for the streamed
    /// requests we send ourselves.
    base: String,
    headers: HeaderMap,
    config: ProviderConfig,
    provider: &'static str,
}

impl OpenAiCore {
    fn new(provider: &'static str, config: ProviderConfig) -> Result<OpenAiCore, LlmError> {
        let invalid = |message: String| LlmError::Config { provider, message };
        let base = match (&config.base_url, &config.auth) {
            (Some(url), _) => url.trim_end_matches('/').to_owned(),
            (None, Auth::ChatGpt { .. }) => CHATGPT_BASE_URL.to_owned(),
            (None, _) => OPENAI_BASE_URL.to_owned(),
        };
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(invalid(format!(
                "base URL '{base}' must start with http:// or https://"
            )));
        }
        let redactor = config.redactor();
        let mut headers = HeaderMap::new();
        let mut key = String::new();
        match &config.auth {
            Auth::None => {}
            Auth::ApiKey(secret) => {
                headers.insert(AUTHORIZATION, bearer(provider, secret.expose())?);
                key = secret.expose().to_owned();
            }
            Auth::ChatGpt {
                access_token,
                account_id,
            } => {
                headers.insert(AUTHORIZATION, bearer(provider, access_token.expose())?);
                let id = HeaderValue::from_str(account_id).map_err(|_| {
                    invalid("the ChatGPT account id is not a valid header value".into())
                })?;
                headers.insert("ChatGPT-Account-ID", id);
                key = access_token.expose().to_owned();
            }
        }
        let transport = Arc::new(Transport::new(provider, config.http.clone(), redactor)?);
        let wire = WireConfig {
            base: base.clone(),
            headers: headers.clone(),
            key: secrecy::SecretString::from(key),
        };
        let client = async_openai::Client::build(transport.client.clone(), wire).with_http_service(
            RetryingService {
                transport: transport.clone(),
            },
        );
        Ok(OpenAiCore {
            client,
            transport,
            base,
            headers,
            config,
            provider,
        })
    }

    fn map_error(&self, err: OpenAIError) -> LlmError {
        let provider = self.provider;
        let redact = |text: String| self.transport.redactor.redact(&text);
        match err {
            OpenAIError::Boxed(boxed) => match boxed.downcast::<LlmError>() {
                Ok(ours) => *ours,
                Err(other) => LlmError::Transport {
                    provider,
                    message: redact(other.to_string()),
                },
            },
            OpenAIError::JSONDeserialize(err, content) => LlmError::Malformed {
                provider,
                reason: redact(format!(
                    "the reply is not JSON ({err}): {}",
                    clip(content.trim(), 200)
                )),
            },
            OpenAIError::ApiError(api) => LlmError::Api {
                provider,
                status: api.status_code.as_u16(),
                message: redact(clip(&api.api_error.message, 600)),
            },
            OpenAIError::InvalidArgument(message) => LlmError::Config {
                provider,
                message: redact(message),
            },
            other => LlmError::Transport {
                provider,
                message: redact(other.to_string()),
            },
        }
    }

    /// `result` with its error passed through the redactor.
    fn redacted<T>(&self, result: Result<T, LlmError>) -> Result<T, LlmError> {
        result.map_err(|e| e.redacted(&self.transport.redactor))
    }
}

fn bearer(provider: &'static str, token: &str) -> Result<HeaderValue, LlmError> {
    let mut value =
        HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| LlmError::Config {
            provider,
            message: "the key contains characters a header cannot carry".to_owned(),
        })?;
    value.set_sensitive(true);
    Ok(value)
}

/// The provider names of the two APIs.
const RESPONSES: &str = "openai-responses";
const CHAT: &str = "openai-chat";

/// The Responses API (`POST {base}/responses`).
///
/// Requests carry `instructions`, input message items, `function_call` and
/// `function_call_output` items, strict function tools, `store: false`,
/// `parallel_tool_calls: false` whenever tools are present, and never
/// `max_tool_calls` (some providers reject it; tool ceilings are the agent's job).
/// Developer messages are sent as `developer` input messages.
///
/// With ChatGPT sign-in ([`Auth::ChatGpt`]) the request goes to ChatGPT's Codex
/// backend, which accepts what Codex itself sends and rejects more: the body
/// is streamed (`"stream": true`), `store: false`, and carries no output cap
/// (`max_output_tokens` is refused with 400 "Unsupported parameter"), whatever
/// the request's `max_tokens` says; the rest (instructions, input, tools,
/// `tool_choice`, `parallel_tool_calls`, `reasoning`, `service_tier`, `text`)
/// is as for the API.
pub struct OpenAiResponses {
    core: OpenAiCore,
}

impl OpenAiResponses {
    /// The provider for `config`.
    pub fn new(config: ProviderConfig) -> Result<Self, LlmError> {
        OpenAiCore::new(RESPONSES, config).map(|core| OpenAiResponses { core })
    }

    /// Whether requests go to ChatGPT's Codex backend (ChatGPT sign-in).
    fn chatgpt(&self) -> bool {
        matches!(self.core.config.auth, Auth::ChatGpt { .. })
    }

    /// The JSON body sent for `request` (also what traces record).
    pub(crate) fn request_body(&self, request: &CompletionRequest) -> Value {
        let config = &self.core.config;
        let mut body = Map::new();
        body.insert("model".into(), json!(config.model));
        if let Some(system) = &request.system {
            body.insert("instructions".into(), json!(system));
        }
        body.insert("input".into(), Value::Array(responses_input(request)));
        insert_tools(&mut body, request, |tool, parameters, strict| {
            json!({
                "type": "function",
                "name": tool.name,
                "description": tool.description,
                "parameters": parameters,
                "strict": strict,
            })
        });
        body.insert("store".into(), json!(false));
        if self.streams() {
            body.insert("stream".into(), json!(true));
        }
        if let Some(max) = request.max_tokens
            && !self.chatgpt()
        {
            body.insert("max_output_tokens".into(), json!(max));
        }
        if config.priority {
            body.insert("service_tier".into(), json!("priority"));
        }
        if let Some(effort) = config.reasoning_effort {
            body.insert("reasoning".into(), json!({"effort": effort.as_str()}));
        }
        if let Some(format) = &request.json_format {
            body.insert(
                "text".into(),
                json!({"format": {
                    "type": "json_schema",
                    "name": format.name,
                    "schema": strict_schema(&format.schema),
                    "strict": true,
                }}),
            );
        }
        Value::Object(body)
    }
}

impl OpenAiResponses {
    fn streams(&self) -> bool {
        let config = &self.core.config;
        config
            .stream
            .unwrap_or(matches!(config.auth, Auth::ChatGpt { .. }))
    }

    /// Sends a streaming request and rebuilds the response object from its
    /// events: the one `response.completed` / `response.incomplete` /
    /// `response.failed` carries it; output items announced by
    /// `response.output_item.done` fill in when the final event leaves `output`
    /// out (lean servers).
    ///
    /// The request goes through our transport directly rather than through
    /// async-openai's event stream: the transport reads the whole body anyway
    /// (bounded by [`crate::HttpOptions::max_response_bytes`]), and
    /// async-openai would parse every event into a queue ahead of us, costing
    /// several times the body for a stream of small events. [`crate::sse`]
    /// hands over one event at a time; only the items and the final response
    /// are kept.
    async fn collect_stream(&self, body: Value) -> Result<Value, LlmError> {
        let provider = self.core.provider;
        let redactor = &self.core.transport.redactor;
        let malformed = |reason: String| LlmError::Malformed {
            provider,
            reason: redactor.redact(&reason),
        };
        let payload = serde_json::to_vec(&body).map_err(|e| LlmError::Config {
            provider,
            message: format!("could not encode the request: {e}"),
        })?;
        let client = &self.core.transport.client;
        let url = format!("{}/responses", self.core.base);
        let answer = self
            .core
            .transport
            .send(|| async {
                client
                    .post(&url)
                    .headers(self.core.headers.clone())
                    .header(CONTENT_TYPE, "application/json")
                    .header(ACCEPT, "text/event-stream")
                    .body(payload.clone())
                    .build()
            })
            .await?;
        let mut items = Vec::new();
        let mut last = None;
        for (index, event) in crate::sse::events(&answer.body).enumerate() {
            if event.data == "[DONE]" {
                break;
            }
            if event.name == "keepalive" {
                continue;
            }
            let event: Value = serde_json::from_str(&event.data).map_err(|e| {
                malformed(format!(
                    "bad event stream: event {} is not JSON ({e}): {}",
                    index + 1,
                    clip(event.data.trim(), 200)
                ))
            })?;
            match event.get("type").and_then(Value::as_str) {
                Some("response.output_item.done") => {
                    if let Some(item) = event.get("item") {
                        items.push(item.clone());
                    }
                }
                Some("response.completed" | "response.incomplete" | "response.failed") => {
                    last = event.get("response").cloned();
                }
                Some("error") => {
                    let message = event
                        .pointer("/error/message")
                        .or_else(|| event.get("message"))
                        .and_then(Value::as_str)
                        .unwrap_or("no reason given");
                    return Err(LlmError::Api {
                        provider,
                        status: 200,
                        message: redactor.redact(&clip(message, 600)),
                    });
                }
                _ => {}
            }
        }
        let mut response = last.ok_or_else(|| {
            malformed("the event stream ended without response.completed".to_owned())
        })?;
        let empty = response
            .get("output")
            .and_then(Value::as_array)
            .is_none_or(|output| output.is_empty());
        if empty && !items.is_empty() {
            response["output"] = Value::Array(items);
        }
        Ok(response)
    }
}

/// Inserts, when the request has tools, the tools (each shaped by `function`
/// from the tool, its schema as sent and whether it is sent strict),
/// `tool_choice` and `parallel_tool_calls: false`.
fn insert_tools(
    body: &mut Map<String, Value>,
    request: &CompletionRequest,
    function: impl Fn(&ToolSpec, Value, bool) -> Value,
) {
    if request.tools.is_empty() {
        return;
    }
    let tools: Vec<Value> = request
        .tools
        .iter()
        .map(|tool| {
            if tool.strict {
                function(tool, strict_schema(&tool.parameters), true)
            } else {
                function(tool, tool.parameters.clone(), false)
            }
        })
        .collect();
    body.insert("tools".into(), Value::Array(tools));
    let choice = match request.tool_choice {
        ToolChoice::Auto => "auto",
        ToolChoice::None => "none",
        ToolChoice::Required => "required",
    };
    body.insert("tool_choice".into(), json!(choice));
    body.insert("parallel_tool_calls".into(), json!(false));
}

fn responses_input(request: &CompletionRequest) -> Vec<Value> {
    let mut items = Vec::new();
    for message in &request.messages {
        let role = match message.role {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Developer => "developer",
        };
        let mut text = String::new();
        let flush = |text: &mut String, items: &mut Vec<Value>| {
            if !text.is_empty() {
                items.push(
                    json!({"type": "message", "role": role, "content": std::mem::take(text)}),
                );
            }
        };
        for block in &message.content {
            match block {
                ContentBlock::Text { text: t } => text.push_str(t),
                ContentBlock::ToolUse { id, name, input } => {
                    flush(&mut text, &mut items);
                    items.push(json!({
                        "type": "function_call",
                        "call_id": id,
                        "name": name,
                        "arguments": input.to_string(),
                    }));
                }
                ContentBlock::ToolResult {
                    tool_use_id,
                    content,
                    ..
                } => {
                    flush(&mut text, &mut items);
                    items.push(json!({
                        "type": "function_call_output",
                        "call_id": tool_use_id,
                        "output": content,
                    }));
                }
            }
        }
        flush(&mut text, &mut items);
    }
    items
}

backend!(OpenAiResponses, core.config, RESPONSES);

impl OpenAiResponses {
    async fn call(&self, request: &CompletionRequest) -> Result<CompletionResponse, LlmError> {
        let body = self.request_body(request);
        let raw: Value = if self.streams() {
            self.collect_stream(body).await?
        } else {
            self.core
                .client
                .responses()
                .create_byot(body)
                .await
                .map_err(|e| self.core.map_error(e))?
        };
        self.core.redacted(parse_responses(raw, self.core.provider))
    }
}

/// Reads a Responses API reply.
pub(crate) fn parse_responses(
    raw: Value,
    provider: &'static str,
) -> Result<CompletionResponse, LlmError> {
    let status = raw.get("status").and_then(Value::as_str);
    let cut = status == Some("incomplete")
        && raw
            .pointer("/incomplete_details/reason")
            .and_then(Value::as_str)
            == Some("max_output_tokens");
    let r = Reader::reply(provider, &raw)?.cut_off(cut);
    if status == Some("failed") {
        let message = raw
            .pointer("/error/message")
            .and_then(Value::as_str)
            .unwrap_or("no reason given");
        return Err(LlmError::Api {
            provider,
            status: 200,
            message: format!("the response failed: {}", clip(message, 600)),
        });
    }
    let output = r.array(&raw, "output", "response")?;
    let mut content = Vec::new();
    let mut refused = false;
    for (i, item) in output.iter().enumerate() {
        let path = format!("response.output[{i}]");
        match item.get("type").and_then(Value::as_str) {
            Some("message") => {
                let parts = r.array(item, "content", &path)?;
                for part in parts {
                    match part.get("type").and_then(Value::as_str) {
                        Some("output_text") | Some("text") => {
                            let text = r.str(part, "text", &format!("{path}.content[]"))?;
                            content.push(ContentBlock::text(text));
                        }
                        Some("refusal") => {
                            refused = true;
                            if let Some(text) = part.get("refusal").and_then(Value::as_str) {
                                content.push(ContentBlock::text(text));
                            }
                        }
                        _ => {}
                    }
                }
            }
            Some("function_call") => {
                let name = r.str(item, "name", &path)?.to_owned();
                let id = match item.get("call_id").or_else(|| item.get("id")) {
                    Some(Value::String(id)) => id.clone(),
                    _ => return Err(r.malformed(format!("{path}.call_id is missing"))),
                };
                content.extend(r.tool_use(id, name, item.get("arguments"))?);
            }
            // Reasoning summaries, web search calls, … are not ours to handle.
            _ => {}
        }
    }
    let stop_reason = r.stop_reason(calls_tools(&content), || {
        Ok(match status {
            None | Some("completed") if refused => StopReason::Other("refusal".into()),
            None | Some("completed") => StopReason::EndTurn,
            Some("incomplete") => {
                match raw
                    .pointer("/incomplete_details/reason")
                    .and_then(Value::as_str)
                {
                    Some("max_output_tokens") => StopReason::MaxTokens,
                    Some(other) => StopReason::Other(other.to_owned()),
                    None => StopReason::Other("incomplete".into()),
                }
            }
            Some("cancelled") => StopReason::Other("cancelled".into()),
            Some(other) => return Err(r.unknown_stop_reason(other)),
        })
    })?;
    Ok(response(content, stop_reason, raw, INPUT_OUTPUT_TOKENS))
}

/// Chat Completions (`POST {base}/chat/completions`): the API most
/// OpenAI-compatible servers speak.
///
/// Developer messages are sent with the `system` role (many local servers do not
/// know `developer`); tool results become `tool` messages; `max_tokens` is sent as
/// `max_tokens` (the field every compatible server accepts) unless
/// [`ProviderConfig::max_completion_tokens`] asks for the newer name.
pub struct OpenAiChat {
    core: OpenAiCore,
}

impl OpenAiChat {
    /// The provider for `config`.
    pub fn new(config: ProviderConfig) -> Result<Self, LlmError> {
        OpenAiCore::new(CHAT, config).map(|core| OpenAiChat { core })
    }

    /// The JSON body sent for `request`.
    pub(crate) fn request_body(&self, request: &CompletionRequest) -> Value {
        let config = &self.core.config;
        let mut messages = Vec::new();
        if let Some(system) = &request.system {
            messages.push(json!({"role": "system", "content": system}));
        }
        for message in &request.messages {
            chat_messages(message, &mut messages);
        }
        let mut body = Map::new();
        body.insert("model".into(), json!(config.model));
        body.insert("messages".into(), Value::Array(messages));
        insert_tools(&mut body, request, |tool, parameters, strict| {
            json!({"type": "function", "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": parameters,
                "strict": strict,
            }})
        });
        if let Some(max) = request.max_tokens {
            let field = if config.max_completion_tokens {
                "max_completion_tokens"
            } else {
                "max_tokens"
            };
            body.insert(field.into(), json!(max));
        }
        if config.priority {
            body.insert("service_tier".into(), json!("priority"));
        }
        if let Some(effort) = config.reasoning_effort {
            body.insert("reasoning_effort".into(), json!(effort.as_str()));
        }
        if let Some(format) = &request.json_format {
            body.insert(
                "response_format".into(),
                json!({"type": "json_schema", "json_schema": {
                    "name": format.name,
                    "schema": strict_schema(&format.schema),
                    "strict": true,
                }}),
            );
        }
        Value::Object(body)
    }
}

fn chat_messages(message: &crate::Message, out: &mut Vec<Value>) {
    let mut text = String::new();
    let mut calls = Vec::new();
    for block in &message.content {
        match block {
            ContentBlock::Text { text: t } => text.push_str(t),
            ContentBlock::ToolUse { id, name, input } => calls.push(json!({
                "id": id,
                "type": "function",
                "function": {"name": name, "arguments": input.to_string()},
            })),
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                ..
            } => out.push(json!({"role": "tool", "tool_call_id": tool_use_id, "content": content})),
        }
    }
    match message.role {
        Role::Assistant => {
            let mut m = Map::new();
            m.insert("role".into(), json!("assistant"));
            m.insert(
                "content".into(),
                if text.is_empty() {
                    Value::Null
                } else {
                    json!(text)
                },
            );
            if !calls.is_empty() {
                m.insert("tool_calls".into(), Value::Array(calls));
            }
            out.push(Value::Object(m));
        }
        Role::User if !text.is_empty() => out.push(json!({"role": "user", "content": text})),
        Role::Developer if !text.is_empty() => out.push(json!({"role": "system", "content": text})),
        _ => {}
    }
}

backend!(OpenAiChat, core.config, CHAT);

impl OpenAiChat {
    async fn call(&self, request: &CompletionRequest) -> Result<CompletionResponse, LlmError> {
        let body = self.request_body(request);
        let raw: Value = self
            .core
            .client
            .chat()
            .create_byot(body)
            .await
            .map_err(|e| self.core.map_error(e))?;
        self.core.redacted(parse_chat(raw, self.core.provider))
    }
}

/// Reads a Chat Completions reply.
pub(crate) fn parse_chat(
    raw: Value,
    provider: &'static str,
) -> Result<CompletionResponse, LlmError> {
    let r = Reader::reply(provider, &raw)?;
    let choices = r.array(&raw, "choices", "response")?;
    let choice = choices
        .first()
        .ok_or_else(|| r.malformed("response.choices is empty"))?;
    let finish = choice.get("finish_reason").and_then(Value::as_str);
    let r = r.cut_off(matches!(finish, Some("length" | "max_tokens")));
    let message = choice
        .get("message")
        .filter(|m| m.is_object())
        .ok_or_else(|| r.malformed("response.choices[0].message is missing"))?;
    let mut content = Vec::new();
    match message.get("content") {
        Some(Value::String(text)) if !text.is_empty() => content.push(ContentBlock::text(text)),
        Some(Value::Array(parts)) => {
            for part in parts {
                if let Some(text) = part.get("text").and_then(Value::as_str) {
                    content.push(ContentBlock::text(text));
                }
            }
        }
        _ => {}
    }
    if let Some(Value::Array(calls)) = message.get("tool_calls") {
        for (i, call) in calls.iter().enumerate() {
            let path = format!("response.choices[0].message.tool_calls[{i}]");
            let function = call
                .get("function")
                .ok_or_else(|| r.malformed(format!("{path}.function is missing")))?;
            let name = r
                .str(function, "name", &format!("{path}.function"))?
                .to_owned();
            // Some servers omit call ids; the id only has to pair call and result.
            let id = call
                .get("id")
                .and_then(Value::as_str)
                .filter(|id| !id.is_empty())
                .map(str::to_owned)
                .unwrap_or_else(|| format!("call_{i}"));
            content.extend(r.tool_use(id, name, function.get("arguments"))?);
        }
    }
    let stop_reason = r.stop_reason(calls_tools(&content), || {
        Ok(match finish {
            None | Some("stop" | "eos" | "end_turn" | "stop_sequence") => StopReason::EndTurn,
            Some("length" | "max_tokens") => StopReason::MaxTokens,
            Some("tool_calls" | "function_call" | "tool_use") => StopReason::ToolUse,
            Some("content_filter") => StopReason::Other("content_filter".into()),
            Some(other) => return Err(r.unknown_stop_reason(other)),
        })
    })?;
    Ok(response(
        content,
        stop_reason,
        raw,
        ("/usage/prompt_tokens", "/usage/completion_tokens"),
    ))
}

/// A schema as OpenAI's strict mode accepts it: every object lists all its
/// properties as required and forbids others; a property that was optional becomes
/// nullable instead (the agent drops such `null`s before validating); keywords
/// strict mode rejects (`default`, `minLength`, `maxLength`) are left out — the
/// agent still enforces them locally.
pub fn strict_schema(schema: &Value) -> Value {
    let Some(map) = schema.as_object() else {
        return schema.clone();
    };
    let mut out = Map::new();
    for (key, value) in map {
        match key.as_str() {
            "default" | "minLength" | "maxLength" => {}
            "properties" => {
                let props = value.as_object().cloned().unwrap_or_default();
                let required: Vec<&str> = map
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                let mut new_props = Map::new();
                for (name, sub) in &props {
                    let mut sub = strict_schema(sub);
                    if !required.contains(&name.as_str()) {
                        make_nullable(&mut sub);
                    }
                    new_props.insert(name.clone(), sub);
                }
                out.insert("properties".into(), Value::Object(new_props));
                out.insert(
                    "required".into(),
                    Value::Array(props.keys().map(|k| json!(k)).collect()),
                );
            }
            "required" => {}
            "items" => {
                out.insert(key.clone(), strict_schema(value));
            }
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    if out.get("type").and_then(Value::as_str) == Some("object") {
        out.insert("additionalProperties".into(), json!(false));
        out.entry("properties").or_insert_with(|| json!({}));
        out.entry("required").or_insert_with(|| json!([]));
    }
    Value::Object(out)
}

fn make_nullable(schema: &mut Value) {
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    match map.get_mut("type") {
        Some(Value::String(t)) if t != "null" => {
            let t = t.clone();
            map.insert("type".into(), json!([t, "null"]));
        }
        Some(Value::Array(types)) if !types.contains(&json!("null")) => types.push(json!("null")),
        _ => {}
    }
    if let Some(Value::Array(options)) = map.get_mut("enum")
        && !options.contains(&Value::Null)
    {
        options.push(Value::Null);
    }
}

impl ReasoningEffort {
    /// Parses `low`, `medium`, `high`, `xhigh`.
    pub fn parse(text: &str) -> Option<ReasoningEffort> {
        match text {
            "low" => Some(ReasoningEffort::Low),
            "medium" => Some(ReasoningEffort::Medium),
            "high" => Some(ReasoningEffort::High),
            "xhigh" => Some(ReasoningEffort::Xhigh),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_schemas_make_optional_fields_nullable_and_required() {
        let schema = json!({
            "type": "object",
            "properties": {
                "cwd": {"type": "string", "default": ".", "description": "d"},
                "n": {"type": "integer", "minimum": 1, "maximum": 5},
                "mode": {"type": "string", "enum": ["a", "b"]},
                "inner": {"type": "object", "properties": {"x": {"type": "string", "minLength": 1}}, "required": ["x"], "additionalProperties": false}
            },
            "required": ["n"],
            "additionalProperties": false
        });
        assert_eq!(
            strict_schema(&schema),
            json!({
                "type": "object",
                "properties": {
                    "cwd": {"type": ["string", "null"], "description": "d"},
                    "n": {"type": "integer", "minimum": 1, "maximum": 5},
                    "mode": {"type": ["string", "null"], "enum": ["a", "b", null]},
                    "inner": {"type": ["object", "null"], "properties": {"x": {"type": "string"}}, "required": ["x"], "additionalProperties": false}
                },
                "required": ["cwd", "inner", "mode", "n"],
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn responses_replies_are_read_tolerantly() {
        let lean = json!({"status": "completed", "output": [
            {"type": "reasoning", "summary": []},
            {"type": "message", "content": [{"type": "output_text", "text": "Hello"}]}
        ]});
        let r = parse_responses(lean, "t").unwrap();
        assert_eq!(r.text(), "Hello");
        assert_eq!(r.stop_reason, StopReason::EndTurn);
        assert_eq!(r.usage, crate::Usage::default());

        let calls = json!({"output": [{"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{\"a\":1}"}],
                           "usage": {"input_tokens": 3, "output_tokens": 4}});
        let r = parse_responses(calls, "t").unwrap();
        assert_eq!(r.stop_reason, StopReason::ToolUse);
        assert_eq!(r.tool_uses(), vec![("c1", "f", &json!({"a": 1}))]);
        assert_eq!(r.usage.output_tokens, Some(4));

        let cut = json!({"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}, "output": []});
        assert_eq!(
            parse_responses(cut, "t").unwrap().stop_reason,
            StopReason::MaxTokens
        );

        for (bad, fragment) in [
            (json!([]), "not a JSON object"),
            (json!({"status": "completed"}), "response.output is missing"),
            (
                json!({"output": [{"type": "function_call", "name": "f"}]}),
                "call_id is missing",
            ),
            (
                json!({"output": [{"type": "function_call", "call_id": "c"}]}),
                "name is missing",
            ),
            (
                json!({"output": [{"type": "message", "content": [{"type": "output_text"}]}]}),
                "text is missing",
            ),
        ] {
            let err = parse_responses(bad.clone(), "t").unwrap_err().to_string();
            assert!(err.contains(fragment), "{bad}: {err}");
        }
        let args = json!({"output": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": "{oops"}]});
        assert!(matches!(
            parse_responses(args, "t"),
            Err(LlmError::InvalidToolArguments { .. })
        ));
        let odd = json!({"status": "pondering", "output": []});
        assert!(
            matches!(parse_responses(odd, "t"), Err(LlmError::UnknownStopReason { value, .. }) if value == "pondering")
        );
    }

    #[test]
    fn chat_replies_are_read_tolerantly() {
        let ollama = json!({"choices": [{"message": {"role": "assistant", "content": "",
            "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]}, "finish_reason": "stop"}]});
        let r = parse_chat(ollama, "t").unwrap();
        assert_eq!(
            r.stop_reason,
            StopReason::ToolUse,
            "tool calls win over a 'stop' finish"
        );
        assert_eq!(r.tool_uses(), vec![("call_0", "f", &json!({"a": 1}))]);
        let text = json!({"choices": [{"message": {"content": "hi"}, "finish_reason": "length"}], "usage": {"prompt_tokens": 5}});
        let r = parse_chat(text, "t").unwrap();
        assert_eq!(
            (r.text(), r.stop_reason, r.usage.input_tokens),
            ("hi".into(), StopReason::MaxTokens, Some(5))
        );
        assert!(matches!(
            parse_chat(json!({"choices": []}), "t"),
            Err(LlmError::Malformed { .. })
        ));
        assert!(matches!(
            parse_chat(
                json!({"choices": [{"message": {"content": "x"}, "finish_reason": "weird"}]}),
                "t"
            ),
            Err(LlmError::UnknownStopReason { .. })
        ));
    }

    #[test]
    fn cut_replies_keep_their_whole_calls_and_say_they_were_cut() {
        let call = |id: &str, arguments: &str| json!({"id": id, "function": {"name": "emit", "arguments": arguments}});
        let cut = json!({"choices": [{"message": {"tool_calls": [
            call("a", "{\"x\": 1}"),
            call("b", "{\"x\": [1, 2"),
        ]}, "finish_reason": "length"}]});
        let r = parse_chat(cut, "t").unwrap();
        assert_eq!(r.stop_reason, StopReason::MaxTokens);
        assert_eq!(r.tool_uses(), vec![("a", "emit", &json!({"x": 1}))]);
        // Not cut: the same broken arguments are an error.
        let whole = json!({"choices": [{"message": {"tool_calls": [
            call("b", "{\"x\": [1, 2"),
        ]}, "finish_reason": "tool_calls"}]});
        assert!(matches!(
            parse_chat(whole, "t"),
            Err(LlmError::InvalidToolArguments { .. })
        ));
        let responses = json!({
            "status": "incomplete",
            "incomplete_details": {"reason": "max_output_tokens"},
            "output": [
                {"type": "function_call", "call_id": "a", "name": "emit", "arguments": "{}"},
                {"type": "function_call", "call_id": "b", "name": "emit", "arguments": "{\"x\""},
            ],
        });
        let r = parse_responses(responses, "t").unwrap();
        assert_eq!(r.stop_reason, StopReason::MaxTokens);
        assert_eq!(r.tool_uses(), vec![("a", "emit", &json!({}))]);
    }
}
