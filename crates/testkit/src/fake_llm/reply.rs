//! Scripted replies and how each flavor renders them.

use std::time::Duration;

use serde_json::{Value, json};

use super::Flavor;
use super::http::{Body, Response};

/// The model name every rendered turn reports (unless [`Reply::lean`] drops it).
pub const FAKE_MODEL: &str = "fake-model";

/// The creation time every rendered turn reports (unless [`Reply::lean`] drops it).
const CREATED: u64 = 1_700_000_000;

/// Usage reported when a test does not say otherwise: 11 input, 7 output tokens.
const DEFAULT_USAGE: (u64, u64) = (11, 7);

/// A tool call the fake model makes.
///
/// `arguments` is usually an object. The OpenAI flavors send it serialized as a JSON
/// string, Anthropic sends it as the `input` value. A [`Value::String`] is sent
/// verbatim as the OpenAI `arguments` string, so `json!("{not json")` scripts
/// malformed arguments.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    /// The call id (`call_id` in Responses, `id` in Chat and Anthropic).
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments (see the type's docs).
    pub arguments: Value,
}

/// A [`ToolCall`].
pub fn call(id: &str, name: &str, arguments: Value) -> ToolCall {
    ToolCall {
        id: id.to_owned(),
        name: name.to_owned(),
        arguments,
    }
}

/// One scripted reply: a model turn rendered in the server's [`Flavor`], an error,
/// an exact body, or a transport fault. Build with the constructors, refine with
/// the `self -> Reply` modifiers.
///
/// [`Reply::with_text`], [`Reply::usage`], [`Reply::without_usage`] and
/// [`Reply::lean`] apply to model turns only and panic on other replies (a mistake
/// in the test). [`Reply::header`], [`Reply::retry_after`], [`Reply::delayed`] and
/// [`Reply::chunked`] apply to every reply ([`Reply::hangup`] ignores headers).
#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    kind: Kind,
    headers: Vec<(String, String)>,
    delay: Option<Duration>,
    chunked: bool,
}

/// Stands for the repeated text of [`Reply::repeated_text`] while a turn is
/// rendered; its JSON form is then replaced by the repeated unit as the body is
/// written. Control characters make a clash with real text impossible in tests.
const REPEAT_MARK: &str = "\u{1}fake-llm:repeated-text\u{1}";

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Turn(Turn),
    Error {
        status: u16,
        message: String,
    },
    Json {
        status: u16,
        body: Value,
    },
    Raw {
        status: u16,
        content_type: String,
        body: Vec<u8>,
    },
    Truncated {
        status: u16,
        body: Vec<u8>,
        declared_len: usize,
    },
    Hangup,
    Sse {
        events: Vec<Value>,
    },
}

#[derive(Clone, Debug, PartialEq)]
struct Turn {
    text: Option<String>,
    calls: Vec<ToolCall>,
    stop: Stop,
    usage: Option<(u64, u64)>,
    lean: bool,
    /// The text is `unit` × `times`, written as the body goes out.
    repeat: Option<(String, usize)>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Stop {
    EndTurn,
    ToolUse,
    MaxTokens,
}

impl Reply {
    fn new(kind: Kind) -> Reply {
        Reply {
            kind,
            headers: Vec::new(),
            delay: None,
            chunked: false,
        }
    }

    fn turn(text: Option<&str>, calls: Vec<ToolCall>, stop: Stop) -> Reply {
        Reply::new(Kind::Turn(Turn {
            text: text.map(str::to_owned),
            calls,
            stop,
            usage: Some(DEFAULT_USAGE),
            lean: false,
            repeat: None,
        }))
    }

    /// A final answer: the turn ends with `text`.
    pub fn text(text: &str) -> Reply {
        Reply::turn(Some(text), Vec::new(), Stop::EndTurn)
    }

    /// A final answer whose text is `unit` repeated `times` times (e.g. 100 MB
    /// for a memory test). The text is never built: the turn is rendered around a
    /// placeholder and the server writes the repeated unit into the body as it
    /// sends it, in blocks, so a huge reply costs the test a few kilobytes. The
    /// body is exactly what [`Reply::text`] with the whole text would send, in
    /// every flavor and as server-sent events too.
    pub fn repeated_text(unit: &str, times: usize) -> Reply {
        let mut reply = Reply::turn(Some(REPEAT_MARK), Vec::new(), Stop::EndTurn);
        reply.turn_mut("repeated_text").repeat = Some((unit.to_owned(), times));
        reply
    }

    /// A turn that stops to call tools (no text unless [`Reply::with_text`]).
    pub fn tool_calls(calls: Vec<ToolCall>) -> Reply {
        Reply::turn(None, calls, Stop::ToolUse)
    }

    /// A turn cut short by the output-token limit after `partial_text`.
    pub fn max_tokens(partial_text: &str) -> Reply {
        Reply::turn(Some(partial_text), Vec::new(), Stop::MaxTokens)
    }

    /// Marks the turn as cut short by the output-token limit (`length`,
    /// `max_output_tokens`, `max_tokens`), whatever it holds: with tool calls,
    /// a reply cut inside its calls (script the cut call's arguments as a
    /// string of broken JSON).
    pub fn cut_off(mut self) -> Reply {
        self.turn_mut("cut_off").stop = Stop::MaxTokens;
        self
    }

    /// Sets the turn's text (before any tool calls).
    pub fn with_text(mut self, text: &str) -> Reply {
        self.turn_mut("with_text").text = Some(text.to_owned());
        self
    }

    /// Reports `input` and `output` tokens instead of the default 11 and 7.
    pub fn usage(mut self, input: u64, output: u64) -> Reply {
        self.turn_mut("usage").usage = Some((input, output));
        self
    }

    /// Omits `usage` from the body entirely.
    pub fn without_usage(mut self) -> Reply {
        self.turn_mut("without_usage").usage = None;
        self
    }

    /// Omits the optional fields real servers sometimes omit. Responses: usage
    /// details, `created_at`, `model`. Chat: `usage.total_tokens`, `created`.
    /// Anthropic: `stop_sequence`, `id`.
    pub fn lean(mut self) -> Reply {
        self.turn_mut("lean").lean = true;
        self
    }

    fn turn_mut(&mut self, modifier: &str) -> &mut Turn {
        match &mut self.kind {
            Kind::Turn(turn) => turn,
            other => panic!(
                "Reply::{modifier} applies to model turns (text, tool_calls, max_tokens), \
                 not to {other:?}"
            ),
        }
    }

    /// An error with the provider's error body: OpenAI
    /// `{"error":{"message","type","param","code"}}`, Anthropic
    /// `{"type":"error","error":{"type","message"}}`, with the error type the
    /// provider uses for `status`.
    pub fn error(status: u16, message: &str) -> Reply {
        Reply::new(Kind::Error {
            status,
            message: message.to_owned(),
        })
    }

    /// Sends the body with `Transfer-Encoding: chunked` instead of a
    /// `Content-Length`, so the client learns its size only by reading it.
    pub fn chunked(mut self) -> Reply {
        self.chunked = true;
        self
    }

    /// Adds a `Retry-After` header.
    pub fn retry_after(self, value: &str) -> Reply {
        self.header("Retry-After", value)
    }

    /// Adds a response header. A header named `Content-Type`, `Content-Length` or
    /// `Connection` replaces the default one.
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Exactly `body`, as `application/json`, in any flavor.
    pub fn json(status: u16, body: Value) -> Reply {
        Reply::new(Kind::Json { status, body })
    }

    /// Exactly `body` with `content_type` (e.g. malformed JSON, an HTML error page).
    pub fn raw(status: u16, content_type: &str, body: &[u8]) -> Reply {
        Reply::new(Kind::Raw {
            status,
            content_type: content_type.to_owned(),
            body: body.to_vec(),
        })
    }

    /// Declares `Content-Length: declared_len` (JSON), sends only `body`, then
    /// closes: the client sees the connection end mid-body.
    pub fn truncated(status: u16, body: &[u8], declared_len: usize) -> Reply {
        Reply::new(Kind::Truncated {
            status,
            body: body.to_vec(),
            declared_len,
        })
    }

    /// Reads the request, then closes the connection without a response: the
    /// client sees end-of-stream where the status line should be.
    pub fn hangup() -> Reply {
        Reply::new(Kind::Hangup)
    }

    /// Waits `by` before answering (the request is recorded on arrival, and other
    /// connections are served meanwhile). Dropping the server cuts the wait short
    /// and closes the connection without a response.
    pub fn delayed(mut self, by: Duration) -> Reply {
        self.delay = Some(by);
        self
    }

    /// A `text/event-stream` body with exactly these events: each is sent as
    /// `event: <its "type">` and `data: <the JSON>` (for streaming edge cases).
    pub fn sse(events: Vec<Value>) -> Reply {
        Reply::new(Kind::Sse { events })
    }

    /// Renders the reply in `flavor`, numbering ids with `ids`; `stream`: the
    /// request asked for server-sent events (honoured for the Responses flavor).
    pub(super) fn render(self, flavor: Flavor, ids: &mut Ids, stream: bool) -> Outgoing {
        let response = match self.kind {
            Kind::Hangup => {
                return Outgoing {
                    delay: self.delay,
                    response: None,
                };
            }
            Kind::Turn(turn) if stream && flavor == Flavor::OpenAiResponses => {
                let response = sse_response(&responses_events(&turn.render(flavor, ids)));
                turn.expand(response)
            }
            Kind::Turn(turn) => {
                let response = Response::json(200, &turn.render(flavor, ids));
                turn.expand(response)
            }
            Kind::Sse { events } => sse_response(&events),
            Kind::Error { status, message } => {
                Response::json(status, &error_body(flavor, status, &message))
            }
            Kind::Json { status, body } => Response::json(status, &body),
            Kind::Raw {
                status,
                content_type,
                body,
            } => Response {
                status,
                content_type,
                body: Body::Bytes(body),
                declared_len: None,
                chunked: false,
                headers: Vec::new(),
            },
            Kind::Truncated {
                status,
                body,
                declared_len,
            } => Response {
                status,
                content_type: "application/json".to_owned(),
                body: Body::Bytes(body),
                declared_len: Some(declared_len),
                chunked: false,
                headers: Vec::new(),
            },
        };
        Outgoing {
            delay: self.delay,
            response: Some(Response {
                headers: self.headers,
                chunked: self.chunked,
                ..response
            }),
        }
    }
}

/// The events a streaming Responses API answer consists of, for a complete
/// response object: `response.created` (lean, as real servers send it), one
/// `response.output_item.done` per output item, then `response.completed` (or
/// `response.incomplete`) carrying the whole response.
fn responses_events(response: &Value) -> Vec<Value> {
    let mut events = vec![json!({
        "type": "response.created",
        "response": {"id": response["id"], "object": "response", "status": "in_progress"},
    })];
    if let Some(items) = response["output"].as_array() {
        for (index, item) in items.iter().enumerate() {
            events.push(
                json!({"type": "response.output_item.done", "output_index": index, "item": item}),
            );
        }
    }
    let last = if response["status"] == "incomplete" {
        "response.incomplete"
    } else {
        "response.completed"
    };
    events.push(json!({"type": last, "response": response}));
    events
}

fn sse_response(events: &[Value]) -> Response {
    let mut body = String::new();
    for event in events {
        let name = event["type"].as_str().unwrap_or("message");
        body.push_str(&format!("event: {name}\ndata: {event}\n\n"));
    }
    Response {
        status: 200,
        content_type: "text/event-stream".to_owned(),
        body: Body::Bytes(body.into_bytes()),
        declared_len: None,
        chunked: false,
        headers: Vec::new(),
    }
}

/// What a connection does with a consumed reply.
#[derive(Debug)]
pub(super) struct Outgoing {
    pub delay: Option<Duration>,
    /// `None`: hang up.
    pub response: Option<Response>,
}

/// Per-server counters behind the deterministic ids (`resp_1`, `msg_1`, …).
#[derive(Debug, Default)]
pub(super) struct Ids {
    responses: u64,
    messages: u64,
    function_calls: u64,
}

impl Turn {
    /// For a [`Reply::repeated_text`] turn: the rendered body cut at each
    /// occurrence of the placeholder's JSON form, to be joined by the repeated
    /// unit (JSON-escaped) as it is written. Other turns pass through.
    fn expand(&self, response: Response) -> Response {
        let (Some((unit, times)), Body::Bytes(bytes)) = (&self.repeat, &response.body) else {
            return response;
        };
        let quoted = |text: &str| {
            let json = Value::String(text.to_owned()).to_string();
            json.as_bytes()[1..json.len() - 1].to_vec()
        };
        let mark = quoted(REPEAT_MARK);
        let mut parts = Vec::new();
        let mut rest = &bytes[..];
        while let Some(at) = rest.windows(mark.len()).position(|w| w == mark) {
            parts.push(rest[..at].to_vec());
            rest = &rest[at + mark.len()..];
        }
        parts.push(rest.to_vec());
        Response {
            body: Body::Repeated {
                parts,
                unit: quoted(unit),
                times: *times,
            },
            ..response
        }
    }

    fn render(&self, flavor: Flavor, ids: &mut Ids) -> Value {
        ids.responses += 1;
        match flavor {
            Flavor::OpenAiResponses => self.responses(ids),
            Flavor::OpenAiChat => self.chat(ids.responses),
            Flavor::Anthropic => self.anthropic(ids.responses),
        }
    }

    fn responses(&self, ids: &mut Ids) -> Value {
        let incomplete = self.stop == Stop::MaxTokens;
        let mut output = Vec::new();
        if let Some(text) = &self.text {
            ids.messages += 1;
            output.push(json!({
                "type": "message",
                "id": format!("msg_{}", ids.messages),
                "status": if incomplete { "incomplete" } else { "completed" },
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }));
        }
        for call in &self.calls {
            ids.function_calls += 1;
            output.push(json!({
                "type": "function_call",
                "id": format!("fc_{}", ids.function_calls),
                "call_id": call.id,
                "name": call.name,
                "arguments": arguments_string(call),
                "status": "completed",
            }));
        }
        let mut body = json!({
            "id": format!("resp_{}", ids.responses),
            "object": "response",
            "status": if incomplete { "incomplete" } else { "completed" },
            "output": output,
            "incomplete_details": if incomplete {
                json!({"reason": "max_output_tokens"})
            } else {
                Value::Null
            },
        });
        if !self.lean {
            body["created_at"] = json!(CREATED);
            body["model"] = json!(FAKE_MODEL);
        }
        if let Some((input, output)) = self.usage {
            let mut usage = json!({
                "input_tokens": input,
                "output_tokens": output,
                "total_tokens": input.saturating_add(output),
            });
            if !self.lean {
                usage["input_tokens_details"] = json!({"cached_tokens": 0});
                usage["output_tokens_details"] = json!({"reasoning_tokens": 0});
            }
            body["usage"] = usage;
        }
        body
    }

    fn chat(&self, number: u64) -> Value {
        let mut message = json!({"role": "assistant", "content": self.text});
        if !self.calls.is_empty() {
            message["tool_calls"] = self
                .calls
                .iter()
                .map(|call| {
                    json!({
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": arguments_string(call)},
                    })
                })
                .collect();
        }
        let finish_reason = match self.stop {
            Stop::EndTurn => "stop",
            Stop::ToolUse => "tool_calls",
            Stop::MaxTokens => "length",
        };
        let mut body = json!({
            "id": format!("chatcmpl-{number}"),
            "object": "chat.completion",
            "model": FAKE_MODEL,
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        });
        if !self.lean {
            body["created"] = json!(CREATED);
        }
        if let Some((input, output)) = self.usage {
            let mut usage = json!({"prompt_tokens": input, "completion_tokens": output});
            if !self.lean {
                usage["total_tokens"] = json!(input.saturating_add(output));
            }
            body["usage"] = usage;
        }
        body
    }

    fn anthropic(&self, number: u64) -> Value {
        let mut content = Vec::new();
        if let Some(text) = &self.text {
            content.push(json!({"type": "text", "text": text}));
        }
        for call in &self.calls {
            content.push(json!({
                "type": "tool_use",
                "id": call.id,
                "name": call.name,
                "input": call.arguments,
            }));
        }
        let stop_reason = match self.stop {
            Stop::EndTurn => "end_turn",
            Stop::ToolUse => "tool_use",
            Stop::MaxTokens => "max_tokens",
        };
        let mut body = json!({
            "type": "message",
            "role": "assistant",
            "model": FAKE_MODEL,
            "content": content,
            "stop_reason": stop_reason,
        });
        if !self.lean {
            body["id"] = json!(format!("msg_{number}"));
            body["stop_sequence"] = Value::Null;
        }
        if let Some((input, output)) = self.usage {
            body["usage"] = json!({"input_tokens": input, "output_tokens": output});
        }
        body
    }
}

/// OpenAI sends tool arguments as a string of JSON; a string value is sent as is.
fn arguments_string(call: &ToolCall) -> String {
    match &call.arguments {
        Value::String(raw) => raw.clone(),
        other => other.to_string(),
    }
}

/// The provider's error body for `status`.
pub(super) fn error_body(flavor: Flavor, status: u16, message: &str) -> Value {
    match flavor {
        Flavor::OpenAiResponses | Flavor::OpenAiChat => {
            let kind = match status {
                429 => "rate_limit_error",
                500..=599 => "server_error",
                _ => "invalid_request_error",
            };
            json!({"error": {"message": message, "type": kind, "param": null, "code": null}})
        }
        Flavor::Anthropic => {
            let kind = match status {
                401 => "authentication_error",
                403 => "permission_error",
                404 => "not_found_error",
                413 => "request_too_large",
                429 => "rate_limit_error",
                529 => "overloaded_error",
                500..=599 => "api_error",
                _ => "invalid_request_error",
            };
            json!({"type": "error", "error": {"type": kind, "message": message}})
        }
    }
}
