//! Integration tests of the fake LLM servers, driven by hand-written HTTP over
//! `std::net::TcpStream`.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use testkit::{FakeLlm, Flavor, Reply, call};

/// Upper bound on any single wait, so a broken server fails the test instead of
/// hanging it. Never asserted on.
const PATIENCE: Duration = Duration::from_secs(30);

#[derive(Debug)]
struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    /// Everything after the head, up to end-of-stream (not cut to Content-Length).
    body: Vec<u8>,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|err| {
            panic!("not JSON ({err}): {}", String::from_utf8_lossy(&self.body))
        })
    }
}

fn connect(addr: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    stream
}

fn read_all(stream: &mut TcpStream) -> Vec<u8> {
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).unwrap();
    bytes
}

/// Sends `raw` on a new connection and returns every byte until the server closes.
fn exchange(addr: SocketAddr, raw: &[u8]) -> Vec<u8> {
    let mut stream = connect(addr);
    stream.write_all(raw).unwrap();
    read_all(&mut stream)
}

fn parse(bytes: &[u8]) -> Response {
    let end = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no response head in {:?}", String::from_utf8_lossy(bytes)));
    let head = std::str::from_utf8(&bytes[..end]).unwrap();
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap();
    let mut parts = status_line.splitn(3, ' ');
    assert_eq!(parts.next(), Some("HTTP/1.1"), "{status_line}");
    let status = parts.next().unwrap().parse().unwrap();
    let headers = lines
        .map(|line| {
            let (name, value) = line.split_once(':').unwrap();
            (name.to_owned(), value.trim().to_owned())
        })
        .collect();
    Response {
        status,
        headers,
        body: bytes[end + 4..].to_vec(),
    }
}

fn request(path: &str, body: &str) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// POSTs `body` to the flavor's path and parses the answer.
fn post(server: &FakeLlm, body: &str) -> Response {
    let raw = request(server.flavor().path(), body);
    parse(&exchange(server.addr(), raw.as_bytes()))
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < PATIENCE, "gave up waiting for {what}");
        thread::sleep(Duration::from_millis(5));
    }
}

fn arguments(item: &Value) -> Value {
    serde_json::from_str(item.as_str().unwrap()).unwrap()
}

#[test]
fn every_response_is_framed_and_closed() {
    let server = FakeLlm::start(Flavor::OpenAiResponses, vec![Reply::text("hi")]);
    let response = post(&server, "{}");
    assert_eq!(response.status, 200);
    assert_eq!(response.header("content-type"), Some("application/json"));
    assert_eq!(response.header("connection"), Some("close"));
    assert_eq!(
        response.header("content-length"),
        Some(response.body.len().to_string().as_str())
    );
    assert!(server.base_url().starts_with("http://127.0.0.1:"));
    assert!(server.base_url().ends_with("/v1"));
    assert_eq!(
        server.base_url(),
        format!("http://127.0.0.1:{}/v1", server.addr().port())
    );
}

#[test]
fn responses_shapes() {
    let server = FakeLlm::start(
        Flavor::OpenAiResponses,
        vec![
            Reply::text("hello"),
            Reply::tool_calls(vec![
                call("call_a", "read_file", json!({"path": "a.rs"})),
                call("call_b", "grep", json!({"pattern": "x"})),
            ])
            .with_text("looking"),
            Reply::max_tokens("partial"),
        ],
    );

    let text = post(&server, "{}").json();
    assert_eq!(text["id"], "resp_1");
    assert_eq!(text["object"], "response");
    assert_eq!(text["status"], "completed");
    assert_eq!(text["model"], "fake-model");
    assert_eq!(text["created_at"], 1_700_000_000);
    assert_eq!(text["incomplete_details"], Value::Null);
    let output = text["output"].as_array().unwrap();
    assert_eq!(output.len(), 1);
    assert_eq!(output[0]["type"], "message");
    assert_eq!(output[0]["id"], "msg_1");
    assert_eq!(output[0]["role"], "assistant");
    assert_eq!(output[0]["status"], "completed");
    assert_eq!(output[0]["content"][0]["type"], "output_text");
    assert_eq!(output[0]["content"][0]["text"], "hello");
    assert_eq!(output[0]["content"][0]["annotations"], json!([]));
    assert_eq!(
        text["usage"],
        json!({
            "input_tokens": 11, "output_tokens": 7, "total_tokens": 18,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        })
    );

    let tools = post(&server, "{}").json();
    assert_eq!(tools["id"], "resp_2");
    assert_eq!(tools["status"], "completed");
    let output = tools["output"].as_array().unwrap();
    assert_eq!(output.len(), 3);
    assert_eq!(output[0]["type"], "message");
    assert_eq!(output[0]["id"], "msg_2");
    assert_eq!(output[0]["content"][0]["text"], "looking");
    for (item, (fc, call_id, name)) in output[1..]
        .iter()
        .zip([("fc_1", "call_a", "read_file"), ("fc_2", "call_b", "grep")])
    {
        assert_eq!(item["type"], "function_call");
        assert_eq!(item["id"], fc);
        assert_eq!(item["call_id"], call_id);
        assert_eq!(item["name"], name);
        assert_eq!(item["status"], "completed");
    }
    assert_eq!(arguments(&output[1]["arguments"]), json!({"path": "a.rs"}));

    let cut = post(&server, "{}").json();
    assert_eq!(cut["id"], "resp_3");
    assert_eq!(cut["status"], "incomplete");
    assert_eq!(cut["incomplete_details"]["reason"], "max_output_tokens");
    assert_eq!(cut["output"][0]["content"][0]["text"], "partial");
    assert_eq!(server.remaining(), 0);
}

#[test]
fn responses_lean_usage_and_no_usage() {
    let server = FakeLlm::start(
        Flavor::OpenAiResponses,
        vec![
            Reply::text("a").lean().usage(100, 20),
            Reply::text("b").without_usage(),
        ],
    );
    let lean = post(&server, "{}").json();
    assert_eq!(lean["created_at"], Value::Null);
    assert_eq!(lean["model"], Value::Null);
    assert_eq!(
        lean["usage"],
        json!({"input_tokens": 100, "output_tokens": 20, "total_tokens": 120})
    );
    let bare = post(&server, "{}").json();
    assert!(bare.get("usage").is_none(), "{bare}");
    assert_eq!(bare["model"], "fake-model");
}

#[test]
fn chat_shapes() {
    let server = FakeLlm::start(
        Flavor::OpenAiChat,
        vec![
            Reply::text("hello"),
            Reply::tool_calls(vec![
                call("call_a", "read_file", json!({"path": "a.rs"})),
                call("call_b", "broken", json!("{not json")),
            ]),
            Reply::max_tokens("part").lean(),
        ],
    );

    let text = post(&server, "{}").json();
    assert_eq!(text["id"], "chatcmpl-1");
    assert_eq!(text["object"], "chat.completion");
    assert_eq!(text["created"], 1_700_000_000);
    assert_eq!(text["model"], "fake-model");
    let choice = &text["choices"][0];
    assert_eq!(choice["index"], 0);
    assert_eq!(choice["finish_reason"], "stop");
    assert_eq!(choice["message"]["role"], "assistant");
    assert_eq!(choice["message"]["content"], "hello");
    assert!(choice["message"].get("tool_calls").is_none(), "{choice}");
    assert_eq!(
        text["usage"],
        json!({"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18})
    );

    let tools = post(&server, "{}").json();
    assert_eq!(tools["id"], "chatcmpl-2");
    let choice = &tools["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls");
    assert!(choice["message"]["content"].is_null());
    let calls = choice["message"]["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["id"], "call_a");
    assert_eq!(calls[0]["type"], "function");
    assert_eq!(calls[0]["function"]["name"], "read_file");
    assert_eq!(
        arguments(&calls[0]["function"]["arguments"]),
        json!({"path": "a.rs"})
    );
    // A string is sent verbatim: malformed arguments on purpose.
    assert_eq!(calls[1]["function"]["arguments"], "{not json");

    let cut = post(&server, "{}").json();
    assert_eq!(cut["choices"][0]["finish_reason"], "length");
    assert_eq!(cut["choices"][0]["message"]["content"], "part");
    assert!(cut.get("created").is_none(), "{cut}");
    assert_eq!(
        cut["usage"],
        json!({"prompt_tokens": 11, "completion_tokens": 7})
    );
}

#[test]
fn anthropic_shapes() {
    let server = FakeLlm::start(
        Flavor::Anthropic,
        vec![
            Reply::text("hello"),
            Reply::tool_calls(vec![call("toolu_1", "read_file", json!({"path": "a.rs"}))])
                .with_text("let me look"),
            Reply::max_tokens("part").lean().without_usage(),
        ],
    );

    let text = post(&server, "{}").json();
    assert_eq!(text["id"], "msg_1");
    assert_eq!(text["type"], "message");
    assert_eq!(text["role"], "assistant");
    assert_eq!(text["model"], "fake-model");
    assert_eq!(text["content"], json!([{"type": "text", "text": "hello"}]));
    assert_eq!(text["stop_reason"], "end_turn");
    assert_eq!(text.get("stop_sequence"), Some(&Value::Null));
    assert_eq!(
        text["usage"],
        json!({"input_tokens": 11, "output_tokens": 7})
    );

    let tools = post(&server, "{}").json();
    assert_eq!(tools["id"], "msg_2");
    assert_eq!(tools["stop_reason"], "tool_use");
    assert_eq!(
        tools["content"],
        json!([
            {"type": "text", "text": "let me look"},
            {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.rs"}},
        ])
    );

    let cut = post(&server, "{}").json();
    assert_eq!(cut["stop_reason"], "max_tokens");
    assert_eq!(cut["content"][0]["text"], "part");
    for absent in ["id", "stop_sequence", "usage"] {
        assert!(cut.get(absent).is_none(), "{absent} in {cut}");
    }
}

#[test]
fn error_shapes() {
    let check = |flavor: Flavor, status: u16, expected: Value| {
        let server = FakeLlm::start(flavor, vec![Reply::error(status, "nope")]);
        let response = post(&server, "{}");
        assert_eq!(response.status, status);
        assert_eq!(response.header("content-type"), Some("application/json"));
        assert_eq!(response.json(), expected, "{flavor:?} {status}");
    };
    let openai = |kind: &str| json!({"error": {"message": "nope", "type": kind, "param": null, "code": null}});
    let anthropic =
        |kind: &str| json!({"type": "error", "error": {"type": kind, "message": "nope"}});
    check(
        Flavor::OpenAiResponses,
        400,
        openai("invalid_request_error"),
    );
    check(Flavor::OpenAiResponses, 429, openai("rate_limit_error"));
    check(Flavor::OpenAiChat, 503, openai("server_error"));
    check(Flavor::Anthropic, 400, anthropic("invalid_request_error"));
    check(Flavor::Anthropic, 401, anthropic("authentication_error"));
    check(Flavor::Anthropic, 429, anthropic("rate_limit_error"));
    check(Flavor::Anthropic, 529, anthropic("overloaded_error"));
    check(Flavor::Anthropic, 500, anthropic("api_error"));
}

#[test]
fn records_requests() {
    let server = FakeLlm::start(
        Flavor::OpenAiChat,
        vec![Reply::text("one"), Reply::text("two")],
    );
    let body = r#"{"model":"m","messages":[]}"#;
    let raw = format!(
        "POST /v1/chat/completions?api-version=2 HTTP/1.1\r\nHost: 127.0.0.1\r\n\
         Authorization: Bearer sk-secret\r\nX-Custom-Thing:  spaced  \r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    parse(&exchange(server.addr(), raw.as_bytes()));
    parse(&exchange(
        server.addr(),
        b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n",
    ));

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let first = &requests[0];
    assert_eq!(first.method, "POST");
    assert_eq!(first.target, "/v1/chat/completions?api-version=2");
    assert_eq!(first.path, "/v1/chat/completions");
    let names: Vec<&str> = first.headers.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "host",
            "authorization",
            "x-custom-thing",
            "content-type",
            "content-length"
        ]
    );
    assert_eq!(first.header("AUTHORIZATION"), Some("Bearer sk-secret"));
    assert_eq!(first.header("x-custom-thing"), Some("spaced"));
    assert_eq!(first.header("missing"), None);
    assert_eq!(first.body, body.as_bytes());
    assert_eq!(first.json()["model"], "m");
    let raw_text = first.raw_text();
    assert!(raw_text.starts_with("POST /v1/chat/completions?api-version=2 HTTP/1.1\r\n"));
    assert!(raw_text.contains("authorization: Bearer sk-secret\r\n"));
    assert!(raw_text.ends_with(body));

    assert_eq!(requests[1].method, "GET");
    assert_eq!(requests[1].path, "/v1/models");
    assert!(requests[1].body.is_empty());
}

#[test]
#[should_panic(expected = "request body is not JSON")]
fn recorded_json_panics_with_the_body() {
    let server = FakeLlm::start(Flavor::Anthropic, vec![Reply::text("x")]);
    exchange(server.addr(), request("/v1/messages", "plain").as_bytes());
    server.requests()[0].json();
}

#[test]
fn retry_after_and_extra_headers() {
    let server = FakeLlm::start(
        Flavor::Anthropic,
        vec![
            Reply::error(429, "slow down")
                .retry_after("2")
                .header("anthropic-ratelimit-requests-remaining", "0"),
            Reply::text("ok").header("x-request-id", "req_1"),
        ],
    );
    let limited = post(&server, "{}");
    assert_eq!(limited.status, 429);
    assert_eq!(limited.header("retry-after"), Some("2"));
    assert_eq!(
        limited.header("anthropic-ratelimit-requests-remaining"),
        Some("0")
    );
    assert_eq!(limited.json()["error"]["type"], "rate_limit_error");
    let ok = post(&server, "{}");
    assert_eq!(ok.header("x-request-id"), Some("req_1"));
    assert_eq!(ok.json()["content"][0]["text"], "ok");
}

#[test]
fn exact_raw_and_truncated_bodies() {
    let server = FakeLlm::start(
        Flavor::OpenAiResponses,
        vec![
            Reply::json(202, json!({"anything": [1, 2]})),
            Reply::raw(200, "text/html", b"<html>{not json"),
            Reply::truncated(200, br#"{"id":"resp_"#, 500),
        ],
    );
    let exact = post(&server, "{}");
    assert_eq!(exact.status, 202);
    assert_eq!(exact.json(), json!({"anything": [1, 2]}));

    let raw = post(&server, "{}");
    assert_eq!(raw.status, 200);
    assert_eq!(raw.header("content-type"), Some("text/html"));
    assert_eq!(raw.body, b"<html>{not json");

    let truncated = post(&server, "{}");
    assert_eq!(truncated.status, 200);
    assert_eq!(truncated.header("content-length"), Some("500"));
    assert_eq!(truncated.body, br#"{"id":"resp_"#);
}

#[test]
fn hangup_closes_without_a_response() {
    let server = FakeLlm::start(
        Flavor::OpenAiChat,
        vec![Reply::hangup(), Reply::text("after")],
    );
    let bytes = exchange(
        server.addr(),
        request("/v1/chat/completions", "{}").as_bytes(),
    );
    assert!(bytes.is_empty(), "{:?}", String::from_utf8_lossy(&bytes));
    assert_eq!(server.requests().len(), 1);
    assert_eq!(
        post(&server, "{}").json()["choices"][0]["message"]["content"],
        "after"
    );
}

#[test]
fn a_delayed_reply_does_not_block_others_and_drop_cuts_it_short() {
    let server = FakeLlm::start(
        Flavor::OpenAiResponses,
        vec![
            Reply::text("slow").delayed(Duration::from_secs(600)),
            Reply::text("fast"),
        ],
    );
    let mut slow = connect(server.addr());
    slow.write_all(request("/v1/responses", "{}").as_bytes())
        .unwrap();
    // Recorded on arrival, before the delay.
    wait_until("the slow request to be recorded", || {
        server.requests().len() == 1
    });

    let fast = post(&server, "{}");
    assert_eq!(fast.json()["output"][0]["content"][0]["text"], "fast");

    slow.set_nonblocking(true).unwrap();
    let mut byte = [0u8; 1];
    let pending = slow.read(&mut byte).unwrap_err();
    assert_eq!(pending.kind(), ErrorKind::WouldBlock, "{pending}");

    drop(server);
    slow.set_nonblocking(false).unwrap();
    assert!(read_all(&mut slow).is_empty());
}

#[test]
fn a_delayed_reply_arrives() {
    let server = FakeLlm::start(
        Flavor::Anthropic,
        vec![Reply::text("late").delayed(Duration::from_millis(20))],
    );
    assert_eq!(post(&server, "{}").json()["content"][0]["text"], "late");
}

#[test]
fn a_client_leaving_mid_delay_does_not_hurt_the_server() {
    let delay = Duration::from_millis(50);
    let server = FakeLlm::start(
        Flavor::OpenAiChat,
        vec![Reply::text("never read").delayed(delay), Reply::text("ok")],
    );
    let mut leaving = connect(server.addr());
    leaving
        .write_all(request("/v1/chat/completions", "{}").as_bytes())
        .unwrap();
    wait_until("the request to be recorded", || {
        server.requests().len() == 1
    });
    drop(leaving);
    // Let the delayed write hit the closed connection (not an assertion on time).
    thread::sleep(delay * 4);
    assert_eq!(
        post(&server, "{}").json()["choices"][0]["message"]["content"],
        "ok"
    );
}

#[test]
fn an_exhausted_script_answers_500() {
    let server = FakeLlm::start(Flavor::OpenAiResponses, vec![Reply::text("only")]);
    assert_eq!(post(&server, "{}").status, 200);
    for _ in 0..2 {
        let response = post(&server, "{}");
        assert_eq!(response.status, 500);
        let body = response.json();
        assert_eq!(
            body["error"]["message"],
            "fake server: script exhausted after 1 requests"
        );
        assert_eq!(body["error"]["type"], "server_error");
    }
    assert_eq!(server.requests().len(), 3);
    assert_eq!(server.remaining(), 0);

    let anthropic = FakeLlm::start(Flavor::Anthropic, Vec::new());
    let body = post(&anthropic, "{}").json();
    assert_eq!(body["type"], "error");
    assert_eq!(
        body["error"]["message"],
        "fake server: script exhausted after 0 requests"
    );
}

#[test]
fn push_appends_to_the_script() {
    let server = FakeLlm::start(Flavor::Anthropic, vec![Reply::text("first")]);
    server.push(Reply::text("second"));
    assert_eq!(server.remaining(), 2);
    assert_eq!(post(&server, "{}").json()["content"][0]["text"], "first");
    assert_eq!(post(&server, "{}").json()["content"][0]["text"], "second");
    assert_eq!(server.remaining(), 0);
}

#[test]
fn absolute_form_target() {
    let server = FakeLlm::start(Flavor::OpenAiResponses, vec![Reply::text("proxied")]);
    let response = parse(&exchange(
        server.addr(),
        b"POST http://llm.invalid/v1/responses HTTP/1.1\r\nHost: llm.invalid\r\n\
          Content-Length: 2\r\n\r\n{}",
    ));
    assert_eq!(response.status, 200);
    let recorded = &server.requests()[0];
    assert_eq!(recorded.target, "http://llm.invalid/v1/responses");
    assert_eq!(recorded.path, "/v1/responses");
}

#[test]
fn chunked_request_body() {
    let server = FakeLlm::start(Flavor::OpenAiChat, vec![Reply::text("ok")]);
    let response = parse(&exchange(
        server.addr(),
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n\
          5;name=value\r\n{\"a\":\r\nA\r\n\"chunked\"}\r\n0\r\nX-Trailer: t\r\n\r\n",
    ));
    assert_eq!(response.status, 200);
    assert_eq!(server.requests()[0].json(), json!({"a": "chunked"}));
}

#[test]
fn expect_100_continue() {
    let server = FakeLlm::start(Flavor::Anthropic, vec![Reply::text("ok")]);
    let mut stream = connect(server.addr());
    stream
        .write_all(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n")
        .unwrap();
    let mut interim = [0u8; 25];
    stream.read_exact(&mut interim).unwrap();
    assert_eq!(&interim, b"HTTP/1.1 100 Continue\r\n\r\n");
    stream.write_all(b"{}").unwrap();
    let response = parse(&read_all(&mut stream));
    assert_eq!(response.status, 200);
    assert_eq!(server.requests()[0].body, b"{}");
}

#[test]
fn malformed_requests_get_400_and_are_not_recorded() {
    let server = FakeLlm::start(Flavor::OpenAiResponses, vec![Reply::text("ok")]);
    let garbage: &[&[u8]] = &[
        b"garbage\r\n\r\n",
        b"POST /v1/responses\r\n\r\n",
        b"POST /v1/responses HTTP/2.0\r\n\r\n",
        b"\xff\xfe /x HTTP/1.1\r\n\r\n",
        b"POST /v1/responses HTTP/1.1\r\nno colon here\r\n\r\n",
        b"POST /v1/responses HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
        b"POST /v1/responses HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
        b"POST /v1/responses HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"POST /v1/responses HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
    ];
    for raw in garbage {
        let response = parse(&exchange(server.addr(), raw));
        assert_eq!(response.status, 400, "{:?}", String::from_utf8_lossy(raw));
        let message = response.json()["error"]["message"].clone();
        assert!(
            message
                .as_str()
                .unwrap()
                .starts_with("fake server: malformed request: "),
            "{message}"
        );
    }
    // A body shorter than its Content-Length, then a half-close.
    let mut stream = connect(server.addr());
    stream
        .write_all(b"POST /v1/responses HTTP/1.1\r\nContent-Length: 10\r\n\r\n{}")
        .unwrap();
    stream.shutdown(std::net::Shutdown::Write).unwrap();
    assert_eq!(parse(&read_all(&mut stream)).status, 400);
    // Connecting and leaving without a byte is ignored.
    drop(connect(server.addr()));

    assert!(server.requests().is_empty());
    assert_eq!(server.remaining(), 1);
    assert_eq!(post(&server, "{}").status, 200);
}

#[test]
fn drop_stops_the_server() {
    let server = FakeLlm::start(Flavor::OpenAiChat, vec![Reply::text("x")]);
    let addr = server.addr();
    drop(server);
    assert!(TcpStream::connect_timeout(&addr, PATIENCE).is_err());
}

#[test]
#[should_panic(expected = "Reply::with_text applies to model turns")]
fn turn_modifiers_on_other_replies_panic() {
    let _ = Reply::error(500, "x").with_text("y");
}

#[test]
fn streaming_responses_requests_get_server_sent_events() {
    let server = FakeLlm::start(
        Flavor::OpenAiResponses,
        vec![
            Reply::tool_calls(vec![call("c1", "f", json!({"a": 1}))]).with_text("hi"),
            Reply::text("plain"),
            Reply::sse(vec![json!({"type": "error", "message": "boom"})]),
        ],
    );
    let streamed = post(&server, r#"{"stream": true}"#);
    assert_eq!(streamed.status, 200);
    assert!(
        streamed
            .headers
            .iter()
            .any(|(k, v)| k.eq_ignore_ascii_case("content-type") && v == "text/event-stream")
    );
    let text = String::from_utf8(streamed.body).unwrap();
    let events: Vec<Value> = text
        .split("\n\n")
        .filter(|chunk| !chunk.is_empty())
        .map(|chunk| {
            let data = chunk
                .lines()
                .find_map(|l| l.strip_prefix("data: "))
                .unwrap();
            serde_json::from_str(data).unwrap()
        })
        .collect();
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "response.created",
            "response.output_item.done",
            "response.output_item.done",
            "response.completed"
        ]
    );
    assert_eq!(events[2]["item"]["call_id"], "c1");
    assert_eq!(events[3]["response"]["output"].as_array().unwrap().len(), 2);
    // Without "stream": true the same flavor answers JSON.
    let plain = post(&server, "{}");
    assert_eq!(
        serde_json::from_slice::<Value>(&plain.body).unwrap()["status"],
        "completed"
    );
    let raw = String::from_utf8(post(&server, "{}").body).unwrap();
    assert_eq!(
        raw,
        "event: error\ndata: {\"message\":\"boom\",\"type\":\"error\"}\n\n"
    );
}

/// Undoes `Transfer-Encoding: chunked`; panics on bad framing.
fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let end = body.windows(2).position(|w| w == b"\r\n").unwrap();
        let size = usize::from_str_radix(std::str::from_utf8(&body[..end]).unwrap(), 16).unwrap();
        body = &body[end + 2..];
        if size == 0 {
            assert_eq!(body, b"\r\n", "the last chunk ends the body");
            return out;
        }
        out.extend_from_slice(&body[..size]);
        assert_eq!(&body[size..size + 2], b"\r\n");
        body = &body[size + 2..];
    }
}

#[test]
fn repeated_text_sends_what_the_whole_text_would() {
    // Units that need JSON escaping, and counts on both sides of a write block.
    for (unit, times) in [("ab", 3), ("line \"q\" \\ é\n", 20_000), ("x", 0)] {
        let whole = unit.repeat(times);
        for flavor in [
            Flavor::OpenAiResponses,
            Flavor::OpenAiChat,
            Flavor::Anthropic,
        ] {
            for body in ["{}", r#"{"stream": true}"#] {
                // One server each, so both turns get the same ids.
                let whole_server = FakeLlm::start(flavor, vec![Reply::text(&whole)]);
                let server = FakeLlm::start(flavor, vec![Reply::repeated_text(unit, times)]);
                let expected = post(&whole_server, body);
                let got = post(&server, body);
                assert_eq!(got.headers, expected.headers, "{flavor:?} {body}");
                assert!(
                    got.body == expected.body,
                    "{flavor:?} {body} {unit:?}×{times}"
                );
            }
        }
    }
}

#[test]
fn chunked_replies_have_no_content_length() {
    let server = FakeLlm::start(
        Flavor::OpenAiChat,
        vec![
            Reply::repeated_text("0123456789", 30_000).chunked(),
            Reply::error(429, "slow down").chunked(),
        ],
    );
    let response = post(&server, "{}");
    assert_eq!(response.header("transfer-encoding"), Some("chunked"));
    assert_eq!(response.header("content-length"), None);
    let body: Value = serde_json::from_slice(&dechunk(&response.body)).unwrap();
    assert_eq!(
        body["choices"][0]["message"]["content"],
        "0123456789".repeat(30_000)
    );
    let error = post(&server, "{}");
    assert_eq!(error.status, 429);
    let body: Value = serde_json::from_slice(&dechunk(&error.body)).unwrap();
    assert_eq!(body["error"]["message"], "slow down");
}

#[test]
fn a_responder_answers_what_the_script_does_not() {
    let server = FakeLlm::start(Flavor::OpenAiChat, vec![Reply::text("scripted")]);
    server.respond_with(|request| {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        Reply::text(&format!("echo {}", body["n"]))
    });
    let text = |response: Response| {
        response.json()["choices"][0]["message"]["content"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(text(post(&server, r#"{"n": 1}"#)), "scripted");
    assert_eq!(text(post(&server, r#"{"n": 2}"#)), "echo 2");
    assert_eq!(text(post(&server, r#"{"n": 3}"#)), "echo 3");
    assert_eq!(server.requests().len(), 3);
    // A scripted reply pushed later still comes first.
    server.push(Reply::error(429, "slow down"));
    assert_eq!(post(&server, "{}").status, 429);
    assert_eq!(text(post(&server, r#"{"n": 5}"#)), "echo 5");
}

#[test]
fn exchanges_are_timed_in_request_order() {
    let server = FakeLlm::start(
        Flavor::OpenAiChat,
        vec![
            Reply::error(429, "wait").retry_after("1"),
            Reply::text("ok"),
            Reply::hangup(),
        ],
    );
    assert_eq!(post(&server, "{}").status, 429);
    assert_eq!(post(&server, "{}").status, 200);
    let bytes = exchange(
        server.addr(),
        request("/v1/chat/completions", "{}").as_bytes(),
    );
    assert!(bytes.is_empty());
    let exchanges = server.exchanges();
    assert_eq!(exchanges.len(), server.requests().len());
    assert_eq!(exchanges[0].status, Some(429));
    assert_eq!(exchanges[1].status, Some(200));
    assert_eq!(exchanges[2].status, None, "a hang-up is never answered");
    assert_eq!(exchanges[2].answered, None);
    for pair in exchanges.windows(2) {
        assert!(pair[0].arrived <= pair[1].arrived);
    }
    for exchange in &exchanges[..2] {
        let answered = exchange.answered.unwrap();
        assert!(exchange.arrived <= answered);
    }
    assert!(exchanges[0].answered.unwrap() <= exchanges[1].arrived);
}
