//! The Responses API as server-sent events.

use llm::{Auth, LlmError, ProviderKind, Secret, StopReason, build_provider};
use serde_json::json;
use testkit::{FakeLlm, Flavor, Reply, call, runtime};

use crate::{KEY, complete, config, request};

fn streaming(server: &FakeLlm) -> std::sync::Arc<dyn llm::LlmProvider> {
    let mut cfg = config(ProviderKind::OpenAiResponses, server);
    cfg.stream = Some(true);
    build_provider(cfg).unwrap()
}

#[test]
fn streamed_turns_are_rebuilt_from_their_events() {
    let server = FakeLlm::start(
        Flavor::OpenAiResponses,
        vec![
            Reply::tool_calls(vec![call("c1", "read_file", json!({"path": "a"}))])
                .with_text("Looking."),
            Reply::text("Done.").usage(5, 6),
            Reply::max_tokens("Cut"),
        ],
    );
    let provider = streaming(&server);
    let rt = runtime();
    let first = rt.block_on(provider.complete(&request())).unwrap();
    assert_eq!(first.stop_reason, StopReason::ToolUse);
    assert_eq!(first.text(), "Looking.");
    assert_eq!(
        first.tool_uses(),
        vec![("c1", "read_file", &json!({"path": "a"}))]
    );
    let second = rt.block_on(provider.complete(&request())).unwrap();
    assert_eq!(
        (second.text().as_str(), second.usage.output_tokens),
        ("Done.", Some(6))
    );
    let third = rt.block_on(provider.complete(&request())).unwrap();
    assert_eq!(third.stop_reason, StopReason::MaxTokens);
    assert_eq!(server.requests()[0].json()["stream"], true);
}

#[test]
fn chatgpt_sign_in_streams_by_default_and_api_keys_do_not() {
    let server = FakeLlm::start(
        Flavor::OpenAiResponses,
        vec![Reply::text("a"), Reply::text("b")],
    );
    let chatgpt = complete(&server, ProviderKind::OpenAiResponses, |cfg| {
        cfg.auth = Auth::ChatGpt {
            access_token: Secret::new(KEY),
            account_id: "acct".into(),
        }
    });
    assert_eq!(chatgpt.unwrap().text(), "a");
    let plain = complete(&server, ProviderKind::OpenAiResponses, |_| {});
    assert_eq!(plain.unwrap().text(), "b");
    let requests = server.requests();
    assert_eq!(requests[0].json()["stream"], true);
    assert!(requests[1].json().get("stream").is_none());
}

#[test]
fn lean_final_events_are_completed_from_item_events() {
    let item =
        json!({"type": "message", "content": [{"type": "output_text", "text": "from items"}]});
    let server = FakeLlm::start(
        Flavor::OpenAiResponses,
        vec![Reply::sse(vec![
            json!({"type": "response.created", "response": {"id": "r", "status": "in_progress"}}),
            json!({"type": "response.output_text.delta", "delta": "from "}),
            json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
            json!({"type": "response.completed", "response": {"id": "r", "status": "completed"}}),
        ])],
    );
    let response = runtime()
        .block_on(streaming(&server).complete(&request()))
        .unwrap();
    assert_eq!(response.text(), "from items");
}

#[test]
fn broken_streams_are_typed_errors() {
    let cases = vec![
        (
            Reply::sse(vec![json!({"type": "response.created", "response": {}})]),
            "without response.completed",
        ),
        (
            Reply::sse(vec![json!({"type": "error", "message": "quota exceeded"})]),
            "quota exceeded",
        ),
        (
            Reply::raw(200, "text/event-stream", b"event: x\ndata: {not json\n\n"),
            "malformed",
        ),
    ];
    for (reply, fragment) in cases {
        let server = FakeLlm::start(Flavor::OpenAiResponses, vec![reply]);
        let err = runtime()
            .block_on(streaming(&server).complete(&request()))
            .unwrap_err();
        assert!(err.to_string().contains(fragment), "{err}");
        assert!(!matches!(err, LlmError::RetriesExhausted { .. }));
    }
}
