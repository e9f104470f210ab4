//! One line of input judged as JSON-RPC 2.0, before rmcp sees it: a message
//! for the MCP service, an error reply to write (JSON-RPC's codes, with a
//! message that says what was wrong), or nothing to answer.
//!
//! The checks run in order, each linear in the line and none recursive: UTF-8,
//! nesting depth (counted by a scan, so a 100,000-deep array costs one pass and
//! never reaches a recursive parser), JSON syntax, the JSON-RPC shape (an
//! object, `"jsonrpc": "2.0"`, a string or integer `id`, a string `method`,
//! object `params`, a response with exactly one of `result`/`error`), the
//! lifecycle (nothing but `initialize` and `ping` before `initialize`, unless
//! the request carries its protocol version in `_meta`), and finally the
//! params of the methods ultragit serves. What passes is handed to rmcp typed.
//!
//! Replies follow JSON-RPC 2.0: `-32700` when the line cannot be parsed,
//! `-32600` when it is not a request, `-32602` when a method's params do not
//! fit; `id` is the request's when it could be read, else `null`.

use rmcp::model::{
    CallToolRequestParams, ClientJsonRpcMessage, ErrorCode, ErrorData, InitializeRequestParams,
    PaginatedRequestParams, RequestId,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// The deepest nesting of arrays and objects accepted. MCP messages nest a
/// few levels (tool arguments, schemas); serde_json's own limit is 128.
pub(crate) const MAX_DEPTH: usize = 64;

/// The `_meta` key of a request that selects MCP's per-request lifecycle
/// (no `initialize`; rmcp serves it).
const INLINE_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// What a line is.
#[derive(Debug)]
pub(crate) enum Judged {
    /// A message for the MCP service.
    Message(Box<ClientJsonRpcMessage>),
    /// Not a message the service can take: the error to reply.
    Reject(ErrorReply),
    /// Nothing to answer; why, for the log.
    Ignore(&'static str),
}

/// A JSON-RPC error response as JSON-RPC 2.0 writes it: `id` is `null` when
/// the request's id could not be read (rmcp would leave it out).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ErrorReply {
    jsonrpc: &'static str,
    id: Option<RequestId>,
    error: ErrorData,
}

impl ErrorReply {
    /// The error `code` with `message`, about the request `id`.
    pub(crate) fn new(code: ErrorCode, message: String, id: Option<RequestId>) -> ErrorReply {
        ErrorReply::of(ErrorData::new(code, message, None), id)
    }

    /// `error` about the request `id`.
    pub(crate) fn of(error: ErrorData, id: Option<RequestId>) -> ErrorReply {
        ErrorReply {
            jsonrpc: "2.0",
            id,
            error,
        }
    }

    /// `-32700`: the line is not JSON we can read.
    pub(crate) fn parse_error(problem: impl std::fmt::Display) -> ErrorReply {
        ErrorReply::new(
            ErrorCode::PARSE_ERROR,
            format!("Parse error: {problem}"),
            None,
        )
    }

    /// `-32600`: JSON, but not a JSON-RPC request, notification or response.
    fn invalid(problem: impl std::fmt::Display, id: Option<RequestId>) -> ErrorReply {
        ErrorReply::new(
            ErrorCode::INVALID_REQUEST,
            format!("Invalid Request: {problem}"),
            id,
        )
    }

    /// The error's code and message.
    pub(crate) fn error(&self) -> &ErrorData {
        &self.error
    }
}

/// Judges lines in the order they arrive; it remembers whether the session
/// has started.
#[derive(Debug, Default)]
pub(crate) struct Judge {
    started: bool,
}

impl Judge {
    /// What `line` (without its newline) is.
    pub(crate) fn line(&mut self, line: &[u8]) -> Judged {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        // RFC 8259 §8.1 lets a parser ignore a byte order mark.
        let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            return Judged::Ignore("a blank line");
        }
        let value = match parse(line) {
            Ok(value) => value,
            Err(reply) => return Judged::Reject(reply),
        };
        match self.message(value) {
            Ok(judged) => judged,
            Err(reply) => Judged::Reject(reply),
        }
    }

    fn message(&mut self, value: Value) -> Result<Judged, ErrorReply> {
        let Value::Object(map) = value else {
            return Err(not_an_object(&value));
        };
        let id = readable_id(map.get("id"));
        match map.get("jsonrpc") {
            Some(Value::String(version)) if version == "2.0" => {}
            Some(other) => {
                let problem = format!("`jsonrpc` must be \"2.0\", got {}", brief(other));
                return Err(ErrorReply::invalid(problem, id));
            }
            None => {
                let problem =
                    "`jsonrpc` is missing; a JSON-RPC 2.0 message carries \"jsonrpc\": \"2.0\"";
                return Err(ErrorReply::invalid(problem, id));
            }
        }
        let is_error_reply = !map.contains_key("method") && map.contains_key("error");
        match map.get("id") {
            None | Some(Value::String(_)) => {}
            Some(Value::Null) if is_error_reply => {}
            Some(other) if id.is_none() => {
                let problem = format!("`id` must be a string or an integer, got {}", brief(other));
                return Err(ErrorReply::invalid(problem, None));
            }
            Some(_) => {}
        }
        match map.get("method") {
            Some(Value::String(method)) => {
                let method = method.clone();
                self.call(method, map, id)
            }
            Some(other) => {
                let problem = format!("`method` must be a string, got {}", brief(other));
                Err(ErrorReply::invalid(problem, id))
            }
            None => self.response(map, id),
        }
    }

    /// A request (with `id`) or a notification.
    fn call(
        &mut self,
        method: String,
        map: Map<String, Value>,
        id: Option<RequestId>,
    ) -> Result<Judged, ErrorReply> {
        if map.contains_key("result") || map.contains_key("error") {
            let problem = "a message has `method` (a request or notification) or `result`/`error` (a response), not both";
            return Err(ErrorReply::invalid(problem, id));
        }
        let params = map.get("params");
        if let Some(params) = params.filter(|p| !p.is_object()) {
            let problem = format!(
                "`params` of `{method}` must be an object, got {}",
                brief(params)
            );
            return Err(ErrorReply::invalid(problem, id));
        }
        let Some(id) = id else {
            // rmcp ends a session whose first message is not a request.
            if !self.started {
                return Ok(Judged::Ignore("a notification before initialize"));
            }
            return typed(map, None, &method).map(Judged::Message);
        };
        if !self.started {
            let inline = params
                .and_then(|p| p.get("_meta"))
                .is_some_and(|meta| meta.get(INLINE_PROTOCOL_VERSION).is_some());
            match method.as_str() {
                "initialize" => {}
                "ping" => return typed(map, Some(id), &method).map(Judged::Message),
                _ if inline => {}
                _ => {
                    let problem = format!(
                        "server not initialized: send `initialize` first (got `{method}` before it)"
                    );
                    return Err(ErrorReply::invalid(problem, Some(id)));
                }
            }
        }
        check_params(&method, params, &id)?;
        let message = typed(map, Some(id), &method)?;
        // `server/discover` is a probe: either lifecycle may follow it.
        self.started |= method != "server/discover";
        Ok(Judged::Message(message))
    }

    /// A response or an error from the client (ultragit never asks the
    /// client anything, so it has nothing to wait for).
    fn response(
        &mut self,
        map: Map<String, Value>,
        id: Option<RequestId>,
    ) -> Result<Judged, ErrorReply> {
        match (map.contains_key("result"), map.contains_key("error")) {
            (false, false) => {
                let problem = "`method` is missing: a request or notification names its method, a response carries `result` or `error`";
                Err(ErrorReply::invalid(problem, id))
            }
            (true, true) => {
                let problem = "a response carries `result` or `error`, not both";
                Err(ErrorReply::invalid(problem, id))
            }
            (true, false) if id.is_none() => {
                let problem = "a response with `result` needs the `id` of its request";
                Err(ErrorReply::invalid(problem, None))
            }
            // rmcp ends a session whose first message is not a request.
            _ if !self.started => Ok(Judged::Ignore("a response before initialize")),
            _ => typed(map, id, "a response").map(Judged::Message),
        }
    }
}

/// The line as JSON, or a parse error: UTF-8 first, then the depth, then the
/// syntax.
fn parse(line: &[u8]) -> Result<Value, ErrorReply> {
    let text = std::str::from_utf8(line).map_err(|err| {
        ErrorReply::parse_error(format_args!(
            "the message is not valid UTF-8 (at byte {})",
            err.valid_up_to()
        ))
    })?;
    if let Some(at) = too_deep(line, MAX_DEPTH) {
        return Err(ErrorReply::parse_error(format_args!(
            "the message nests arrays and objects deeper than {MAX_DEPTH} levels (at byte {at})"
        )));
    }
    serde_json::from_str(text).map_err(ErrorReply::parse_error)
}

/// Where `json` first nests deeper than `max` (the byte offset of the
/// bracket), counting brackets outside strings; `None` when it never does.
/// One pass, no recursion, whatever the input: the parser after it can then
/// recurse safely.
pub(crate) fn too_deep(json: &[u8], max: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (at, byte) in json.iter().enumerate() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return Some(at);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// The `id` as rmcp reads ids (a string or an integer), when it is one.
fn readable_id(id: Option<&Value>) -> Option<RequestId> {
    match id? {
        Value::String(_) | Value::Number(_) => serde_json::from_value(id?.clone()).ok(),
        _ => None,
    }
}

/// The `-32600` for a line that is JSON but not an object.
fn not_an_object(value: &Value) -> ErrorReply {
    let problem = match value {
        Value::Array(items) if items.is_empty() => {
            "an empty array is not a request (and MCP does not take batches)".to_owned()
        }
        Value::Array(_) => {
            "MCP does not take batches (a JSON array of messages); send one message per line"
                .to_owned()
        }
        other => format!("a JSON-RPC message is an object, got {}", brief(other)),
    };
    ErrorReply::invalid(problem, None)
}

/// A short description of `value` for an error message: its kind, and short
/// scalars themselves.
fn brief(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) if s.len() <= 40 => format!("the string {s:?}"),
        Value::String(_) => "a string".to_owned(),
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    }
}

/// The params of the methods ultragit serves, checked against rmcp's types
/// (rmcp would take a `tools/call` without a `name` for an unknown method).
fn check_params(method: &str, params: Option<&Value>, id: &RequestId) -> Result<(), ErrorReply> {
    let problem = match method {
        "initialize" => fits::<InitializeRequestParams>(params),
        "tools/call" => fits::<CallToolRequestParams>(params),
        "tools/list" if params.is_some() => fits::<PaginatedRequestParams>(params),
        _ => None,
    };
    match problem {
        None => Ok(()),
        Some(problem) => Err(ErrorReply::new(
            ErrorCode::INVALID_PARAMS,
            format!("Invalid params for {method}: {problem}"),
            Some(id.clone()),
        )),
    }
}

/// Why `params` is not a `P`, when it is not (read in place: tool arguments
/// can be large).
fn fits<P: DeserializeOwned>(params: Option<&Value>) -> Option<String> {
    let empty = Value::Object(Map::new());
    P::deserialize(params.unwrap_or(&empty))
        .err()
        .map(|err| err.to_string())
}

/// The checked message as rmcp's type.
fn typed(
    map: Map<String, Value>,
    id: Option<RequestId>,
    what: &str,
) -> Result<Box<ClientJsonRpcMessage>, ErrorReply> {
    serde_json::from_value(Value::Object(map))
        .map(Box::new)
        .map_err(|err| ErrorReply::invalid(format_args!("not an MCP message ({what}): {err}"), id))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Judges `lines` in order; the last one's verdict as JSON: the message
    /// rmcp gets, the error reply, or `"ignored"`.
    fn check(lines: &[&[u8]]) -> Value {
        let mut judge = Judge::default();
        let mut last = Value::Null;
        for line in lines {
            last = match judge.line(line) {
                Judged::Message(message) => {
                    json!({"forward": serde_json::to_value(&message).unwrap()})
                }
                Judged::Reject(reply) => serde_json::to_value(&reply).unwrap(),
                Judged::Ignore(_) => json!("ignored"),
            };
        }
        last
    }

    const INIT: &[u8] = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

    /// The error's code, message and id in a verdict.
    fn error(verdict: &Value) -> (i64, &str, &Value) {
        let error = &verdict["error"];
        let code = error["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("{verdict}"));
        (code, error["message"].as_str().unwrap(), &verdict["id"])
    }

    #[test]
    fn unparsable_lines_are_parse_errors_without_an_id() {
        let deep = "[".repeat(100_000) + &"]".repeat(100_000);
        let cases: [(&[u8], &str); 5] = [
            (b"{bad", "Parse error: key must be a string"),
            (deep.as_bytes(), "deeper than 64 levels (at byte 64)"),
            (
                b"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}",
                "not valid UTF-8 (at byte 27)",
            ),
            (b"{\"a\":1} trailing", "Parse error: trailing characters"),
            (b"[[[[", "Parse error: EOF while parsing"),
        ];
        for (line, says) in cases {
            let verdict = check(&[INIT, line]);
            let (code, message, id) = error(&verdict);
            assert_eq!(code, -32700, "{verdict}");
            assert!(message.contains(says), "{message}");
            assert_eq!(id, &Value::Null, "{verdict}");
            // The serialized reply carries `"id": null`, as JSON-RPC 2.0 asks.
            assert!(verdict.as_object().unwrap().contains_key("id"), "{verdict}");
        }
        // Unterminated deep nesting is refused by the scan too.
        let open = "[".repeat(100_000);
        assert!(
            error(&check(&[open.as_bytes()]))
                .1
                .contains("deeper than 64")
        );
    }

    #[test]
    fn json_that_is_not_a_message_is_an_invalid_request() {
        let cases: [(&[u8], &str, Value); 14] = [
            (b"[]", "an empty array is not a request", Value::Null),
            (
                br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
                "does not take batches",
                Value::Null,
            ),
            (
                b"42",
                "a JSON-RPC message is an object, got the number 42",
                Value::Null,
            ),
            (b"\"hi\"", "got the string \"hi\"", Value::Null),
            (b"null", "got null", Value::Null),
            (
                br#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#,
                "`jsonrpc` must be \"2.0\", got the string \"1.0\"",
                json!(7),
            ),
            (
                br#"{"id":"a","method":"ping"}"#,
                "`jsonrpc` is missing",
                json!("a"),
            ),
            (
                br#"{"jsonrpc":"2.0","id":8}"#,
                "`method` is missing",
                json!(8),
            ),
            (
                br#"{"jsonrpc":"2.0","id":9,"method":42}"#,
                "`method` must be a string, got the number 42",
                json!(9),
            ),
            (
                br#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
                "`id` must be a string or an integer, got true",
                Value::Null,
            ),
            (
                br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
                "`id` must be a string or an integer",
                Value::Null,
            ),
            (
                br#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":"x.rs"}"#,
                "`params` of `tools/call` must be an object, got the string \"x.rs\"",
                json!(10),
            ),
            (
                br#"{"jsonrpc":"2.0","id":11,"method":"ping","result":{}}"#,
                "not both",
                json!(11),
            ),
            (
                br#"{"jsonrpc":"2.0","id":12,"result":{},"error":{"code":1,"message":"m"}}"#,
                "`result` or `error`, not both",
                json!(12),
            ),
        ];
        for (line, says, expected_id) in cases {
            let verdict = check(&[INIT, line]);
            let (code, message, id) = error(&verdict);
            assert_eq!(code, -32600, "{verdict}");
            assert!(message.starts_with("Invalid Request: "), "{message}");
            assert!(message.contains(says), "{message}");
            assert_eq!(id, &expected_id, "{verdict}");
        }
    }

    #[test]
    fn only_initialize_and_ping_come_before_initialize() {
        for method in ["tools/list", "tools/call", "server/discover"] {
            let line = format!(r#"{{"jsonrpc":"2.0","id":"x","method":"{method}","params":{{}}}}"#);
            let verdict = check(&[line.as_bytes()]);
            let (code, message, id) = error(&verdict);
            assert_eq!(code, -32600, "{verdict}");
            assert_eq!(
                message,
                format!(
                    "Invalid Request: server not initialized: send `initialize` first (got `{method}` before it)"
                )
            );
            assert_eq!(id, &json!("x"));
        }
        let ping = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        assert!(check(&[ping])["forward"].is_object());
        let initialized = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert_eq!(check(&[initialized]), "ignored");
        assert_eq!(
            check(&[br#"{"jsonrpc":"2.0","id":1,"result":{}}"#]),
            "ignored"
        );
        // The per-request lifecycle (the protocol version in `_meta`) is rmcp's to serve.
        let inline = br#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        assert!(check(&[inline])["forward"].is_object());
        let list = br#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#;
        assert_eq!(check(&[inline, list])["forward"]["method"], "tools/list");
        // A discover probe (the SDKs send it with `_meta`) starts neither lifecycle.
        let discover = br#"{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        assert!(check(&[discover])["forward"].is_object());
        assert!(
            error(&check(&[discover, list]))
                .1
                .contains("not initialized")
        );

        // After initialize: everything goes to rmcp.
        assert_eq!(check(&[INIT, list])["forward"]["method"], "tools/list");
        assert_eq!(
            check(&[INIT, initialized])["forward"]["method"],
            "notifications/initialized"
        );
        let unknown = br#"{"jsonrpc":"2.0","id":4,"method":"tools/frobnicate"}"#;
        assert_eq!(
            check(&[INIT, unknown])["forward"]["method"],
            "tools/frobnicate"
        );
        // A failed initialize does not start the session.
        let bad_init = br#"{"jsonrpc":"2.0","id":5,"method":"initialize","params":{}}"#;
        let verdict = check(&[bad_init]);
        assert_eq!(error(&verdict).0, -32602, "{verdict}");
        assert!(
            error(&check(&[bad_init, list]))
                .1
                .contains("not initialized")
        );
    }

    #[test]
    fn params_of_our_methods_are_checked() {
        let verdict = check(&[
            INIT,
            br#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"arguments":{}}}"#,
        ]);
        let (code, message, id) = error(&verdict);
        assert_eq!((code, id), (-32602, &json!(6)), "{verdict}");
        assert_eq!(
            message,
            "Invalid params for tools/call: missing field `name`"
        );
        let call = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ultragit_read","arguments":{"paths":["a"]}}}"#;
        assert_eq!(
            check(&[INIT, call])["forward"]["params"]["name"],
            "ultragit_read"
        );
    }

    #[test]
    fn blank_lines_and_framing_bytes_are_not_messages() {
        assert_eq!(check(&[b""]), "ignored");
        assert_eq!(check(&[b"  \t\r"]), "ignored");
        let with_bom_and_cr = b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r";
        assert!(check(&[with_bom_and_cr])["forward"].is_object());
    }

    #[test]
    fn depth_is_counted_outside_strings() {
        assert_eq!(too_deep(b"[[1]]", 2), None);
        assert_eq!(too_deep(b"[[[1]]]", 2), Some(2));
        assert_eq!(too_deep(br#"["[[[[", "\"[[[["]"#, 1), None);
        assert_eq!(too_deep(br#"{"a":{"b":[]}}"#, 3), None);
        assert_eq!(too_deep(br#"{"a":{"b":[]}}"#, 2), Some(10));
        assert_eq!(too_deep(b"]]]][", 1), None);
    }
}
