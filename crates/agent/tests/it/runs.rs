//! Multi-turn runs, budgets, repair, unknown tools, truncation, structured output.

use std::time::Duration;

use agent::{
    AgentError, Budgets, NullSink, Runner, StructuredTask, Task, ToolLimits, ToolRegistry,
};
use llm::{Message, ProviderKind, StopReason};
use serde_json::{Value, json};
use testkit::{Reply, assert_contains, assert_contains_all, call, runtime};

use crate::{KINDS, provider, run_task, run_task_within, serve, tools};

fn task(tools: ToolRegistry) -> Task {
    Task {
        name: "test".into(),
        system: "You answer briefly.".into(),
        messages: vec![
            Message::developer("Tools are read-only."),
            Message::user("How many words in 'a b c'? Then show 2 lines."),
        ],
        tools,
        format_reminder: "Reply with one sentence.".into(),
        json_format: None,
    }
}

/// The text of every tool result the request sends back, per backend's shape.
fn tool_results(kind: ProviderKind, body: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    match kind {
        ProviderKind::OpenAiResponses => {
            for item in body["input"].as_array().unwrap() {
                if item["type"] == "function_call_output" {
                    out.push(serde_json::from_str(item["output"].as_str().unwrap()).unwrap());
                }
            }
        }
        ProviderKind::OpenAiChat => {
            for m in body["messages"].as_array().unwrap() {
                if m["role"] == "tool" {
                    out.push(serde_json::from_str(m["content"].as_str().unwrap()).unwrap());
                }
            }
        }
        ProviderKind::Anthropic => {
            for m in body["messages"].as_array().unwrap() {
                for block in m["content"].as_array().unwrap() {
                    if block["type"] == "tool_result" {
                        out.push(serde_json::from_str(block["content"].as_str().unwrap()).unwrap());
                    }
                }
            }
        }
    }
    out
}

#[test]
fn every_backend_completes_a_two_tool_conversation() {
    for kind in KINDS {
        let server = serve(
            kind,
            vec![
                Reply::tool_calls(vec![call("t1", "word_count", json!({"text": "a b c"}))])
                    .with_text("Counting."),
                Reply::tool_calls(vec![call("t2", "lines", json!({"count": 2}))]),
                Reply::text("Three words; two lines shown."),
            ],
        );
        let outcome = run_task(kind, &server, &task(tools(ToolLimits::default())), None).unwrap();
        assert_eq!(outcome.output, "Three words; two lines shown.", "{kind:?}");
        assert_eq!((outcome.steps, outcome.tool_calls), (3, 2));
        assert!(!outcome.finalized && !outcome.repaired);
        assert_eq!(outcome.stop_reason, StopReason::EndTurn);
        assert_eq!(outcome.usage.input_tokens, Some(33));
        let requests = server.requests();
        assert_eq!(requests.len(), 3);
        let second = tool_results(kind, &requests[1].json());
        assert_eq!(
            second,
            vec![
                json!({"ok": true, "tool": "word_count", "data": {"words": 3}, "truncated": false})
            ]
        );
        let third = tool_results(kind, &requests[2].json());
        assert_eq!(third.len(), 2, "{kind:?}: the whole history is resent");
        assert_eq!(third[1]["data"]["text"], "1| line 1\n2| line 2\n");
        // Both tools were offered on every request.
        for request in &requests {
            let body = request.json();
            assert_eq!(body["tools"].as_array().unwrap().len(), 2, "{kind:?}");
        }
    }
}

#[test]
fn the_step_budget_ends_with_one_request_without_tools() {
    let kind = ProviderKind::OpenAiResponses;
    let server = serve(
        kind,
        vec![
            Reply::tool_calls(vec![call("a", "word_count", json!({"text": "x"}))]),
            Reply::tool_calls(vec![call("b", "word_count", json!({"text": "y"}))]),
            Reply::text("Final answer from what I have."),
        ],
    );
    let budgets = Budgets {
        max_steps: 2,
        ..Budgets::default()
    };
    let task = task(tools(ToolLimits::default()));
    let outcome = run_task_within(kind, &server, budgets, &task, None).unwrap();
    assert!(outcome.finalized);
    assert_eq!((outcome.steps, outcome.tool_calls), (3, 2));
    let last = server.requests()[2].json();
    assert_eq!(last["tool_choice"], "none");
    let prompt = last["input"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_contains_all(
        &prompt,
        &["step budget is used up", "Reply with one sentence."],
    );
}

#[test]
fn the_tool_call_budget_answers_extra_calls_with_an_error_and_finalizes() {
    let kind = ProviderKind::OpenAiChat;
    let server = serve(
        kind,
        vec![
            Reply::tool_calls(vec![
                call("a", "word_count", json!({"text": "x"})),
                call("b", "word_count", json!({"text": "y z"})),
            ]),
            Reply::text("Done."),
        ],
    );
    let budgets = Budgets {
        max_tool_calls: 1,
        ..Budgets::default()
    };
    let task = task(tools(ToolLimits::default()));
    let outcome = run_task_within(kind, &server, budgets, &task, None).unwrap();
    assert!(outcome.finalized);
    assert_eq!(outcome.tool_calls, 1);
    let results = tool_results(kind, &server.requests()[1].json());
    assert_eq!(results[0]["ok"], true);
    assert_eq!(results[1]["error"]["code"], "BUDGET_EXHAUSTED");
    assert_eq!(server.requests()[1].json()["tool_choice"], "none");
}

#[test]
fn one_repair_pass_then_a_clear_error() {
    let validator = |text: &str| -> Result<String, Vec<String>> {
        if text.starts_with("GOOD") {
            Ok(text.trim().to_owned())
        } else {
            Err(vec![
                "must start with GOOD".to_owned(),
                "no apologies".to_owned(),
            ])
        }
    };
    let kind = ProviderKind::Anthropic;
    let server = serve(
        kind,
        vec![Reply::text("sorry, bad"), Reply::text("GOOD answer  ")],
    );
    let plain = task(ToolRegistry::default());
    let outcome = run_task(kind, &server, &plain, Some(&validator)).unwrap();
    assert_eq!(outcome.output, "GOOD answer");
    assert!(outcome.repaired);
    let repair = server.requests()[1].json();
    let messages = repair["messages"].as_array().unwrap();
    let last = messages.last().unwrap()["content"][0]["text"]
        .as_str()
        .unwrap();
    assert_contains(last, "- must start with GOOD\n- no apologies\n");
    assert_eq!(
        messages[messages.len() - 2]["content"][0]["text"],
        "sorry, bad"
    );

    let server = serve(
        kind,
        vec![
            Reply::text("bad"),
            Reply::text("still bad"),
            Reply::text("unused"),
        ],
    );
    match run_task(kind, &server, &plain, Some(&validator)) {
        Err(AgentError::Invalid { problems, output }) => {
            assert_eq!(output, "still bad");
            assert_eq!(problems[0], "must start with GOOD");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(server.requests().len(), 2, "exactly one repair");
}

#[test]
fn unknown_tools_and_bad_arguments_go_back_to_the_model() {
    let kind = ProviderKind::OpenAiResponses;
    let server = serve(
        kind,
        vec![
            Reply::tool_calls(vec![
                call("a", "delete_everything", json!({})),
                call("b", "lines", json!({"count": "many"})),
            ]),
            Reply::text("Recovered."),
        ],
    );
    let outcome = run_task(kind, &server, &task(tools(ToolLimits::default())), None).unwrap();
    assert_eq!(outcome.output, "Recovered.");
    let results = tool_results(kind, &server.requests()[1].json());
    assert_eq!(results[0]["error"]["code"], "UNKNOWN_TOOL");
    assert!(
        results[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("word_count, lines")
    );
    assert_eq!(results[1]["error"]["code"], "INVALID_ARGUMENT");
}

#[test]
fn truncated_results_carry_metadata_to_the_model() {
    let kind = ProviderKind::OpenAiChat;
    let server = serve(
        kind,
        vec![
            Reply::tool_calls(vec![call("a", "lines", json!({"count": 500}))]),
            Reply::text("ok"),
        ],
    );
    let limits = ToolLimits {
        max_lines: 10,
        ..ToolLimits::default()
    };
    run_task(kind, &server, &task(tools(limits)), None).unwrap();
    let result = &tool_results(kind, &server.requests()[1].json())[0];
    assert_eq!(result["truncated"], true);
    assert_eq!(
        result["truncation"],
        json!({"limit": "lines", "max": 10, "total": 500, "shown": 10, "hint": "ask for lines from 11 on"})
    );
}

#[test]
fn a_task_without_tools_rejects_tool_calls() {
    let kind = ProviderKind::OpenAiResponses;
    let server = serve(
        kind,
        vec![Reply::tool_calls(vec![call(
            "a",
            "word_count",
            json!({"text": "x"}),
        )])],
    );
    let err = run_task(kind, &server, &task(ToolRegistry::default()), None).unwrap_err();
    assert!(
        matches!(&err, AgentError::ToolsNotAllowed { tool } if tool == "word_count"),
        "{err}"
    );
    let body = server.requests()[0].json();
    assert!(body.get("tools").is_none(), "no tools were offered");
}

#[test]
fn empty_answers_are_repaired_too() {
    let kind = ProviderKind::OpenAiChat;
    let server = serve(
        kind,
        vec![Reply::max_tokens(""), Reply::text("Now complete.")],
    );
    let outcome = run_task(kind, &server, &task(ToolRegistry::default()), None).unwrap();
    assert_eq!(outcome.output, "Now complete.");
    assert!(outcome.repaired);
}

#[test]
fn the_overall_timeout_bounds_a_run() {
    let kind = ProviderKind::Anthropic;
    let server = serve(
        kind,
        vec![Reply::text("late").delayed(Duration::from_secs(30))],
    );
    let budgets = Budgets {
        overall_timeout: Duration::from_millis(300),
        ..Budgets::default()
    };
    let err =
        run_task_within(kind, &server, budgets, &task(ToolRegistry::default()), None).unwrap_err();
    assert!(matches!(err, AgentError::Timeout { .. }), "{err}");
}

#[test]
fn structured_output_is_parsed_validated_and_repaired() {
    let schema = json!({"type": "object", "properties": {"summary": {"type": "string"}, "count": {"type": "integer", "minimum": 0, "maximum": 10}},
                        "required": ["summary", "count"], "additionalProperties": false});
    for kind in KINDS {
        let server = serve(
            kind,
            vec![
                Reply::text("{\"summary\": \"x\", \"count\": 99}"),
                Reply::text("```json\n{\"summary\": \"fine\", \"count\": 3}\n```"),
            ],
        );
        let provider = provider(kind, &server);
        let mut sink = NullSink;
        let mut runner = Runner::new(provider.as_ref(), Budgets::default(), &mut sink);
        let task = StructuredTask {
            name: "structured".into(),
            system: "Summarize.".into(),
            messages: vec![Message::user("Summarize the repo.")],
            schema_name: "summary".into(),
            schema: schema.clone(),
        };
        let (value, outcome) = runtime().block_on(runner.run_structured(&task)).unwrap();
        assert_eq!(value, json!({"summary": "fine", "count": 3}), "{kind:?}");
        assert!(outcome.repaired);
        let first = server.requests()[0].json();
        let text = first.to_string();
        assert!(text.contains("matches this JSON Schema"), "{kind:?}");
        assert!(first.get("tools").is_none());
        let repair = server.requests()[1].json().to_string();
        assert!(
            repair.contains("99 is above the maximum 10"),
            "{kind:?}: {repair}"
        );
    }
}
