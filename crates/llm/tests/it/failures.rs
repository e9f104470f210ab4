//! Malformed replies and provider errors are typed errors, never panics, and never
//! carry the key.

use llm::LlmError;
use serde_json::json;
use testkit::{FakeLlm, Reply, assert_contains, assert_contains_all, call};

use crate::{KEY, KINDS, assert_no_key, complete, each_backend, flavor};

fn run(server: &FakeLlm, kind: llm::ProviderKind) -> LlmError {
    complete(server, kind, |_| {}).unwrap_err()
}

#[test]
fn non_json_and_truncated_json_are_malformed_and_not_retried() {
    for kind in KINDS {
        for body in [&b"<html>oops</html>"[..], b"{\"output\": [", b""] {
            let server = FakeLlm::start(
                flavor(kind),
                vec![Reply::raw(200, "application/json", body)],
            );
            let err = run(&server, kind);
            assert!(matches!(err, LlmError::Malformed { .. }), "{kind:?}: {err}");
            assert_eq!(
                server.requests().len(),
                1,
                "a garbled answer is not retried"
            );
        }
    }
}

#[test]
fn missing_fields_are_named() {
    let cases = [
        (
            llm::ProviderKind::OpenAiResponses,
            json!({"id": "x", "status": "completed"}),
            "output is missing",
        ),
        (
            llm::ProviderKind::OpenAiChat,
            json!({"id": "x", "choices": [{"index": 0}]}),
            "message is missing",
        ),
        (
            llm::ProviderKind::OpenAiChat,
            json!({"id": "x"}),
            "choices is missing",
        ),
        (
            llm::ProviderKind::Anthropic,
            json!({"id": "x", "content": [{"type": "tool_use", "name": "f", "input": {}}]}),
            "id is missing",
        ),
    ];
    for (kind, body, fragment) in cases {
        let server = FakeLlm::start(flavor(kind), vec![Reply::json(200, body)]);
        let err = run(&server, kind).to_string();
        assert!(
            err.contains("malformed response") && err.contains(fragment),
            "{kind:?}: {err}"
        );
    }
}

#[test]
fn tool_arguments_that_are_not_json_are_a_typed_error() {
    for kind in [
        llm::ProviderKind::OpenAiResponses,
        llm::ProviderKind::OpenAiChat,
    ] {
        let server = FakeLlm::start(
            flavor(kind),
            vec![Reply::tool_calls(vec![call(
                "c1",
                "read_file",
                json!("{\"path\": \"a"),
            )])],
        );
        match run(&server, kind) {
            LlmError::InvalidToolArguments { tool, .. } => assert_eq!(tool, "read_file"),
            other => panic!("{kind:?}: {other}"),
        }
    }
}

#[test]
fn unknown_stop_reasons_are_a_typed_error() {
    let cases = [
        (
            llm::ProviderKind::OpenAiResponses,
            json!({"status": "daydreaming", "output": []}),
        ),
        (
            llm::ProviderKind::OpenAiChat,
            json!({"choices": [{"message": {"content": "x"}, "finish_reason": "nap"}]}),
        ),
        (
            llm::ProviderKind::Anthropic,
            json!({"content": [], "stop_reason": "nap"}),
        ),
    ];
    for (kind, body) in cases {
        let server = FakeLlm::start(flavor(kind), vec![Reply::json(200, body)]);
        assert!(
            matches!(run(&server, kind), LlmError::UnknownStopReason { .. }),
            "{kind:?}"
        );
    }
}

#[test]
fn client_errors_fail_at_once_with_the_providers_message_redacted() {
    let echoed = format!("Incorrect API key provided: {KEY}");
    let script = || vec![Reply::error(401, &echoed), Reply::text("unused")];
    each_backend(script, |kind, server| {
        let err = run(server, kind);
        let text = err.to_string();
        assert_eq!(err.status(), Some(401), "{kind:?}");
        assert_contains_all(&text, &["HTTP 401", "Incorrect API key provided: ****Zq"]);
        assert_eq!(server.requests().len(), 1, "4xx is not retried");
        assert_no_key(server, &[&text, &format!("{err:?}")]);
        // The key went in a header only.
        let request = &server.requests()[0];
        assert!(request.headers.iter().any(|(_, v)| v.contains(KEY)));
    });
}

#[test]
fn a_failed_response_status_is_reported() {
    let server = FakeLlm::start(
        flavor(llm::ProviderKind::OpenAiResponses),
        vec![Reply::json(
            200,
            json!({"status": "failed", "output": [], "error": {"message": "model overloaded"}}),
        )],
    );
    let text = run(&server, llm::ProviderKind::OpenAiResponses).to_string();
    assert_contains(&text, "the response failed: model overloaded");
}
