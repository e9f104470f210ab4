//! Reply bodies are bounded: a reply over `max_response_bytes` (declared, chunked
//! or streamed) is a clear `TooLarge` error, not retried; error bodies are read
//! only as far as a message needs.

use llm::{DEFAULT_MAX_RESPONSE_BYTES, LlmError, ProviderKind};
use testkit::{FakeLlm, Reply, assert_starts_with};

use crate::{KEY, KINDS, complete, each_backend, flavor};

/// 100 MB of reply text.
const HUGE: usize = 100_000_000;

fn assert_too_large(err: &LlmError, kind: ProviderKind, limit: &str) {
    assert!(
        matches!(err, LlmError::TooLarge { .. }),
        "{kind:?}: expected TooLarge, got {err}"
    );
    let text = err.to_string();
    assert_starts_with(
        &text,
        &format!("the reply from {} was larger than {limit}", kind.as_str()),
    );
    assert!(!text.contains(KEY));
    assert!(text.len() < 300, "{text}");
}

#[test]
fn a_huge_reply_with_its_length_declared_is_refused_and_not_retried() {
    let script = || vec![Reply::repeated_text("x", HUGE), Reply::text("unused")];
    each_backend(script, |kind, server| {
        let err = complete(server, kind, |_| {}).unwrap_err();
        assert_too_large(&err, kind, "16 MiB");
        assert_eq!(server.requests().len(), 1, "{kind:?}: not retried");
        assert_eq!(server.remaining(), 1);
    });
}

#[test]
fn a_huge_declared_length_is_refused_before_the_body_arrives() {
    // Only one byte of the declared 100 MB is ever sent: reading the body would
    // end in a broken connection (a transport error), so `TooLarge` shows the
    // length alone decided.
    let script = || vec![Reply::truncated(200, b"{", HUGE)];
    each_backend(script, |kind, server| {
        let err = complete(server, kind, |_| {}).unwrap_err();
        assert_too_large(&err, kind, "16 MiB");
    });
}

#[test]
fn a_huge_chunked_reply_is_refused_while_it_is_read() {
    let script = || vec![Reply::repeated_text("chunk of text ", HUGE / 14).chunked()];
    each_backend(script, |kind, server| {
        let err = complete(server, kind, |_| {}).unwrap_err();
        assert_too_large(&err, kind, "16 MiB");
        assert_eq!(server.requests().len(), 1);
    });
}

#[test]
fn a_huge_event_stream_is_refused() {
    for chunked in [false, true] {
        let mut reply = Reply::repeated_text("delta ", HUGE / 6);
        if chunked {
            reply = reply.chunked();
        }
        let server = FakeLlm::start(flavor(ProviderKind::OpenAiResponses), vec![reply]);
        let err = complete(&server, ProviderKind::OpenAiResponses, |cfg| {
            cfg.stream = Some(true)
        })
        .unwrap_err();
        assert_too_large(&err, ProviderKind::OpenAiResponses, "16 MiB");
        assert_eq!(server.requests()[0].json()["stream"], true);
    }
}

#[test]
fn the_limit_is_the_callers_and_exact() {
    // The body of a reply with `n` bytes of text, measured on a throwaway server.
    let body_len = |kind: ProviderKind, stream: bool, n: usize| {
        let server = FakeLlm::start(flavor(kind), vec![Reply::repeated_text("y", n)]);
        let body = if stream { r#"{"stream":true}"# } else { "{}" };
        let mut stream_ = std::net::TcpStream::connect(server.addr()).unwrap();
        use std::io::{Read, Write};
        write!(
            stream_,
            "POST {} HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n{body}",
            flavor(kind).path(),
            body.len()
        )
        .unwrap();
        let mut raw = Vec::new();
        stream_.read_to_end(&mut raw).unwrap();
        let head = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        (raw.len() - head) as u64
    };
    for kind in KINDS {
        for stream in [false, true] {
            if stream && kind != ProviderKind::OpenAiResponses {
                continue;
            }
            let exact = body_len(kind, stream, 5000);
            for (limit, fits) in [(exact, true), (exact - 1, false)] {
                for chunked in [false, true] {
                    let mut reply = Reply::repeated_text("y", 5000);
                    if chunked {
                        reply = reply.chunked();
                    }
                    let server = FakeLlm::start(flavor(kind), vec![reply]);
                    let result = complete(&server, kind, |cfg| {
                        cfg.http.max_response_bytes = limit;
                        cfg.stream = Some(stream);
                    });
                    match result {
                        Ok(response) if fits => assert_eq!(response.text(), "y".repeat(5000)),
                        Err(err) if !fits => {
                            assert_too_large(&err, kind, &format!("{limit} bytes"))
                        }
                        other => panic!(
                            "{kind:?} stream={stream} chunked={chunked} limit={limit}: {other:?}"
                        ),
                    }
                }
            }
        }
    }
    assert_eq!(DEFAULT_MAX_RESPONSE_BYTES, 16 * 1024 * 1024);
    assert_eq!(
        llm::HttpOptions::default().max_response_bytes,
        DEFAULT_MAX_RESPONSE_BYTES
    );
}

#[test]
fn huge_error_bodies_give_a_short_message() {
    for kind in KINDS {
        for reply in [
            Reply::raw(400, "text/plain", &vec![b'e'; 5_000_000]),
            Reply::raw(400, "text/plain", &vec![b'e'; 5_000_000]).chunked(),
            Reply::truncated(400, b"{\"error\":{\"message\":\"short\"}}", HUGE),
        ] {
            let server = FakeLlm::start(flavor(kind), vec![reply]);
            let err = complete(&server, kind, |_| {}).unwrap_err();
            match &err {
                LlmError::Api {
                    status, message, ..
                } => {
                    assert_eq!(*status, 400);
                    assert!(message.len() < 700, "{kind:?}: {} bytes", message.len());
                }
                other => panic!("{kind:?}: {other}"),
            }
        }
    }
}

#[test]
fn reply_text_quoted_in_errors_is_short_and_redacted() {
    let long = format!("{KEY}{}", "z".repeat(100_000));
    let cases = [
        (
            ProviderKind::OpenAiChat,
            serde_json::json!({"choices": [{"message": {"content": "x"}, "finish_reason": long}]}),
        ),
        (
            ProviderKind::OpenAiResponses,
            serde_json::json!({"status": "failed", "output": [], "error": {"message": long}}),
        ),
        (
            ProviderKind::OpenAiResponses,
            serde_json::json!({"output": [{"type": "function_call", "call_id": "c", "name": long, "arguments": "{oops"}]}),
        ),
        (
            ProviderKind::Anthropic,
            serde_json::json!({"content": [], "stop_reason": long}),
        ),
    ];
    for (kind, body) in cases {
        let server = FakeLlm::start(flavor(kind), vec![Reply::json(200, body)]);
        let err = complete(&server, kind, |_| {}).unwrap_err().to_string();
        assert!(err.len() < 900, "{kind:?}: {} bytes", err.len());
        assert!(!err.contains(KEY), "{kind:?}: {err}");
        assert!(
            err.contains("****"),
            "{kind:?}: the key shows masked: {err}"
        );
    }
}
