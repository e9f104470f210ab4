//! Request shapes and reply parsing of each backend.

use llm::{
    Auth, CompletionRequest, ContentBlock, JsonFormat, Message, ProviderKind, ReasoningEffort,
    Role, Secret, StopReason, ToolChoice, ToolSpec, build_provider,
};
use serde_json::{Value, json};
use testkit::{FakeLlm, RecordedRequest, Reply, assert_contains, call, runtime};

use crate::{KEY, config, each_backend, flavor};

fn tool(name: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: format!("The {name} tool."),
        parameters: json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "limit": {"type": "integer", "minimum": 1, "maximum": 50}},
            "required": ["path"],
            "additionalProperties": false
        }),
        strict: true,
    }
}

/// What `kind`'s backend sent for `request`, its config first changed by
/// `edit`.
fn sent(
    kind: ProviderKind,
    request: &CompletionRequest,
    edit: impl FnOnce(&mut llm::ProviderConfig),
) -> RecordedRequest {
    let server = FakeLlm::start(flavor(kind), vec![Reply::text("ok")]);
    let mut cfg = config(kind, &server);
    edit(&mut cfg);
    let provider = build_provider(cfg).unwrap();
    runtime().block_on(provider.complete(request)).unwrap();
    server.requests().remove(0)
}

/// A conversation midway: a user prompt, an assistant tool call and its result.
fn history() -> CompletionRequest {
    CompletionRequest {
        system: Some("You are careful.".into()),
        messages: vec![
            Message::developer("Tools are read-only."),
            Message::user("Summarize a.txt."),
            Message {
                role: Role::Assistant,
                content: vec![
                    ContentBlock::text("Reading it."),
                    ContentBlock::ToolUse {
                        id: "call_1".into(),
                        name: "read_file".into(),
                        input: json!({"path": "a.txt"}),
                    },
                ],
            },
            Message {
                role: Role::User,
                content: vec![ContentBlock::ToolResult {
                    tool_use_id: "call_1".into(),
                    content: "{\"ok\":true}".into(),
                    is_error: false,
                }],
            },
        ],
        tools: vec![tool("read_file"), tool("search_files")],
        tool_choice: ToolChoice::Auto,
        max_tokens: Some(321),
        json_format: None,
    }
}

#[test]
fn each_backend_parses_text_tool_calls_and_max_tokens() {
    let script = || {
        vec![
            Reply::tool_calls(vec![
                call("c1", "read_file", json!({"path": "a.txt"})),
                call("c2", "search_files", json!({"path": "b"})),
            ])
            .with_text("Let me look."),
            Reply::text("All done.").usage(40, 12),
            Reply::max_tokens("Partial ans"),
            Reply::text("lean").lean().without_usage(),
        ]
    };
    each_backend(script, |kind, server| {
        let provider = build_provider(config(kind, server)).unwrap();
        let rt = runtime();
        let request = history();
        let first = rt.block_on(provider.complete(&request)).unwrap();
        assert_eq!(first.stop_reason, StopReason::ToolUse, "{kind:?}");
        assert_eq!(first.text(), "Let me look.");
        assert_eq!(
            first.tool_uses(),
            vec![
                ("c1", "read_file", &json!({"path": "a.txt"})),
                ("c2", "search_files", &json!({"path": "b"}))
            ]
        );
        let second = rt.block_on(provider.complete(&request)).unwrap();
        assert_eq!(
            (second.text().as_str(), second.stop_reason.clone()),
            ("All done.", StopReason::EndTurn)
        );
        assert_eq!(
            (second.usage.input_tokens, second.usage.output_tokens),
            (Some(40), Some(12))
        );
        let third = rt.block_on(provider.complete(&request)).unwrap();
        assert_eq!(third.stop_reason, StopReason::MaxTokens, "{kind:?}");
        assert_eq!(third.text(), "Partial ans");
        let lean = rt.block_on(provider.complete(&request)).unwrap();
        assert_eq!(lean.text(), "lean");
        assert_eq!(lean.usage.input_tokens, None);
        assert_eq!(server.requests().len(), 4);
    });
}

#[test]
fn responses_requests_carry_the_layers_items_and_flags() {
    let request = &sent(ProviderKind::OpenAiResponses, &history(), |cfg| {
        cfg.priority = true;
        cfg.reasoning_effort = Some(ReasoningEffort::Xhigh);
    });
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("POST", "/v1/responses")
    );
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    let body = request.json();
    assert_eq!(body["model"], "test-model");
    assert_eq!(body["instructions"], "You are careful.");
    assert_eq!(body["store"], false);
    assert_eq!(body["parallel_tool_calls"], false);
    assert_eq!(body["tool_choice"], "auto");
    assert_eq!(body["max_output_tokens"], 321);
    assert_eq!(body["service_tier"], "priority");
    assert_eq!(body["reasoning"], json!({"effort": "xhigh"}));
    assert!(body.get("max_tool_calls").is_none(), "never sent");
    assert_eq!(
        body["input"],
        json!([
            {"type": "message", "role": "developer", "content": "Tools are read-only."},
            {"type": "message", "role": "user", "content": "Summarize a.txt."},
            {"type": "message", "role": "assistant", "content": "Reading it."},
            {"type": "function_call", "call_id": "call_1", "name": "read_file", "arguments": "{\"path\":\"a.txt\"}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "{\"ok\":true}"}
        ])
    );
    let tool = &body["tools"][0];
    assert_eq!(tool["type"], "function");
    assert_eq!(tool["strict"], true);
    assert_eq!(tool["parameters"]["required"], json!(["limit", "path"]));
    assert_eq!(
        tool["parameters"]["properties"]["limit"]["type"],
        json!(["integer", "null"])
    );
}

#[test]
fn responses_without_tools_omit_tool_fields_and_ask_for_json_when_told() {
    let request = CompletionRequest {
        messages: vec![Message::user("hi")],
        json_format: Some(JsonFormat {
            name: "answer".into(),
            schema: json!({"type": "object", "properties": {}}),
        }),
        ..Default::default()
    };
    let body = sent(ProviderKind::OpenAiResponses, &request, |_| {}).json();
    for absent in [
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "instructions",
        "service_tier",
        "reasoning",
        "max_output_tokens",
    ] {
        assert!(
            body.get(absent).is_none(),
            "{absent} should be absent: {body}"
        );
    }
    assert_eq!(body["text"]["format"]["type"], "json_schema");
    assert_eq!(body["text"]["format"]["strict"], true);
}

#[test]
fn chatgpt_auth_sends_the_bearer_token_and_account_header() {
    let request = &sent(ProviderKind::OpenAiResponses, &history(), signed_in);
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(request.header("chatgpt-account-id"), Some("acct-42"));
}

/// ChatGPT sign-in instead of the API key.
fn signed_in(cfg: &mut llm::ProviderConfig) {
    cfg.auth = Auth::ChatGpt {
        access_token: Secret::new(KEY),
        account_id: "acct-42".into(),
    };
}

/// The top-level fields of a body, one per line: scalars with their value,
/// objects and arrays with their keys or length.
fn shape(body: &Value) -> String {
    let mut lines = Vec::new();
    for (key, value) in body.as_object().expect("a JSON object body") {
        let text = match value {
            Value::Object(map) => {
                format!("{{{}}}", map.keys().cloned().collect::<Vec<_>>().join(", "))
            }
            Value::Array(items) => format!("[{} items]", items.len()),
            Value::String(text) if text.len() > 40 => "\"…\"".to_owned(),
            scalar => scalar.to_string(),
        };
        lines.push(format!("  {key}: {text}"));
    }
    lines.join("\n")
}

#[test]
fn the_request_shape_of_each_backend_is_pinned() {
    // The same request (tools, an output cap) with priority and a reasoning
    // effort, to each backend; what the fake server received is pinned.
    let flags = |cfg: &mut llm::ProviderConfig| {
        cfg.priority = true;
        cfg.reasoning_effort = Some(ReasoningEffort::High);
    };
    let chatgpt = |cfg: &mut llm::ProviderConfig| {
        flags(cfg);
        signed_in(cfg);
    };
    let mut shapes = Vec::new();
    for (name, request) in [
        (
            "OpenAI Chat Completions (API key)",
            sent(ProviderKind::OpenAiChat, &history(), flags),
        ),
        (
            "OpenAI Responses (API key)",
            sent(ProviderKind::OpenAiResponses, &history(), flags),
        ),
        (
            "ChatGPT Codex backend (ChatGPT sign-in)",
            sent(ProviderKind::OpenAiResponses, &history(), chatgpt),
        ),
        (
            "Anthropic Messages (API key)",
            sent(ProviderKind::Anthropic, &history(), flags),
        ),
    ] {
        let body = request.json();
        assert!(
            !String::from_utf8_lossy(&request.body).contains(KEY),
            "{name}: the key is in the body"
        );
        shapes.push(format!(
            "{name} {} {}\n{}",
            request.method,
            request.path,
            shape(&body)
        ));
    }
    insta::assert_snapshot!(shapes.join("\n\n"));
}

#[test]
fn the_chatgpt_backend_gets_what_codex_sends_and_nothing_else() {
    let request = &sent(ProviderKind::OpenAiResponses, &history(), signed_in);
    assert_eq!(request.header("accept"), Some("text/event-stream"));
    let body = request.json();
    // No top-level output cap, although the request has one (321).
    assert!(body.get("max_output_tokens").is_none(), "{body}");
    assert_eq!(body["store"], false);
    assert_eq!(body["stream"], true);
}

#[test]
fn chat_requests_use_system_tool_and_tool_call_messages() {
    let request = &sent(ProviderKind::OpenAiChat, &history(), |_| {});
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    let body = request.json();
    assert_eq!(
        body["messages"],
        json!([
            {"role": "system", "content": "You are careful."},
            {"role": "system", "content": "Tools are read-only."},
            {"role": "user", "content": "Summarize a.txt."},
            {"role": "assistant", "content": "Reading it.", "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a.txt\"}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "{\"ok\":true}"}
        ])
    );
    assert_eq!(body["tools"][1]["function"]["name"], "search_files");
    assert_eq!(body["tools"][1]["function"]["strict"], true);
    assert_eq!(body["parallel_tool_calls"], false);
    assert_eq!(body["max_tokens"], 321);
}

#[test]
fn anthropic_requests_use_headers_system_and_blocks() {
    let mut request = history();
    request.tool_choice = ToolChoice::None;
    let recorded = &sent(ProviderKind::Anthropic, &request, |_| {});
    assert_eq!(recorded.path, "/v1/messages");
    assert_eq!(recorded.header("x-api-key"), Some(KEY));
    assert_eq!(recorded.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(recorded.header("authorization"), None);
    let body = recorded.json();
    assert_eq!(body["system"], "You are careful.\n\nTools are read-only.");
    assert_eq!(body["max_tokens"], 321);
    assert_eq!(body["tool_choice"], json!({"type": "none"}));
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "Summarize a.txt."}]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Reading it."},
                {"type": "tool_use", "id": "call_1", "name": "read_file", "input": {"path": "a.txt"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "{\"ok\":true}", "is_error": false}]}
        ])
    );
    assert_eq!(
        body["tools"][0]["input_schema"]["required"],
        json!(["path"])
    );
}

#[test]
fn configuration_errors_are_clear() {
    let server = FakeLlm::start(flavor(ProviderKind::Anthropic), vec![]);
    let mut cfg = config(ProviderKind::Anthropic, &server);
    cfg.auth = Auth::ChatGpt {
        access_token: Secret::new(KEY),
        account_id: "a".into(),
    };
    let err = build_provider(cfg).unwrap_err().to_string();
    assert_contains(
        &err,
        "ChatGPT sign-in works with the OpenAI Responses API only",
    );
    let mut cfg = config(ProviderKind::OpenAiChat, &server);
    cfg.base_url = Some("ftp://nowhere".into());
    assert!(
        build_provider(cfg)
            .unwrap_err()
            .to_string()
            .contains("http:// or https://")
    );
    let mut cfg = config(ProviderKind::OpenAiChat, &server);
    cfg.model = " ".into();
    assert!(
        build_provider(cfg)
            .unwrap_err()
            .to_string()
            .contains("no model")
    );
    assert_eq!(server.requests().len(), 0);
    let _: Option<Value> = None;
}
