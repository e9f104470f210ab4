//! Finishing tools end a run; replies cut at the output cap are asked again
//! with more room, and a cap that follows what the context window leaves.

use agent::{Budgets, NullSink, Runner, Task, ToolLimits, Validator};
use llm::{Message, ProviderKind, StopReason};
use serde_json::{Value, json};
use testkit::{Reply, assert_contains, call, runtime};

use crate::{KINDS, provider, serve, tools};

fn task() -> Task {
    Task {
        name: "test".into(),
        system: "You record word counts.".into(),
        messages: vec![Message::user("Count the words of 'a b c'.")],
        tools: tools(ToolLimits::default()),
        format_reminder: "Reply with one sentence.".into(),
        json_format: None,
    }
}

/// A writer's validator: the records are what the tools took; any final
/// text, even none, is accepted.
const ANY: Option<&dyn Validator> = Some(&accept_any);

fn accept_any(text: &str) -> Result<String, Vec<String>> {
    Ok(text.to_owned())
}

fn budgets(cap: u32) -> Budgets {
    Budgets {
        max_tokens: Some(cap),
        ..Budgets::default()
    }
}

/// The output cap a Chat Completions request asked for.
fn cap_of(body: &Value) -> u64 {
    body["max_tokens"]
        .as_u64()
        .or_else(|| body["max_completion_tokens"].as_u64())
        .unwrap()
}

/// A reply that only calls finishing tools, all of which succeed, ends the run
/// even without text; the text of the first reply that called one is kept as
/// the finishing text, not the chatter of a later one.
#[test]
fn accepted_finishing_calls_end_the_run_and_the_first_text_is_kept() {
    for kind in KINDS {
        let server = serve(
            kind,
            vec![
                // Refused: the arguments miss `text`.
                Reply::tool_calls(vec![call("t1", "word_count", json!({}))])
                    .with_text("Counts the words of the sample."),
                Reply::tool_calls(vec![call("t2", "word_count", json!({"text": "a b c"}))])
                    .with_text("Re-emitting the corrected call."),
                Reply::text("Done: recorded."),
            ],
        );
        let provider = provider(kind, &server);
        let mut sink = NullSink;
        let mut runner = Runner::new(provider.as_ref(), budgets(500), &mut sink)
            .with_finishing_tools(&["word_count"]);
        let outcome = runtime().block_on(runner.run(&task(), ANY)).unwrap();
        assert_eq!(
            server.requests().len(),
            2,
            "{kind:?}: no call after the accepted one"
        );
        assert_eq!(outcome.steps, 2);
        assert_eq!(outcome.output, "Re-emitting the corrected call.");
        assert_eq!(
            outcome.finishing_text.as_deref(),
            Some("Counts the words of the sample.")
        );
        // Without any text, the accepted calls end the run all the same.
        let server = serve(
            kind,
            vec![
                Reply::tool_calls(vec![call("t1", "word_count", json!({"text": "a b"}))]),
                Reply::text("Done: recorded."),
            ],
        );
        let provider = crate::provider(kind, &server);
        let mut runner = Runner::new(provider.as_ref(), budgets(500), &mut sink)
            .with_finishing_tools(&["word_count"]);
        let outcome = runtime().block_on(runner.run(&task(), ANY)).unwrap();
        assert_eq!(server.requests().len(), 1, "{kind:?}");
        assert_eq!(
            (outcome.output.as_str(), outcome.finishing_text),
            ("", None)
        );
        assert_eq!(outcome.stop_reason, StopReason::EndTurn);
    }
}

/// A reply cut inside its tool calls is dropped unanswered and asked again
/// with twice the cap; the retry's calls are the ones that run.
#[test]
fn a_cut_reply_is_asked_again_with_twice_the_cap() {
    for kind in [ProviderKind::OpenAiChat, ProviderKind::OpenAiResponses] {
        let server = serve(
            kind,
            vec![
                Reply::tool_calls(vec![
                    call("t1", "word_count", json!({"text": "a"})),
                    call("t2", "word_count", json!("{\"text\": \"b c")),
                ])
                .cut_off(),
                Reply::tool_calls(vec![
                    call("t3", "word_count", json!({"text": "a"})),
                    call("t4", "word_count", json!({"text": "b c"})),
                ]),
            ],
        );
        let provider = provider(kind, &server);
        let mut sink = NullSink;
        let mut runner = Runner::new(provider.as_ref(), budgets(300), &mut sink)
            .with_finishing_tools(&["word_count"])
            .retry_cut_off_replies("Make one call per reply.");
        let outcome = runtime().block_on(runner.run(&task(), ANY)).unwrap();
        let requests = server.requests();
        assert_eq!(requests.len(), 2, "{kind:?}");
        let caps: Vec<u64> = requests
            .iter()
            .map(|r| {
                let body = r.json();
                body["max_output_tokens"]
                    .as_u64()
                    .unwrap_or_else(|| cap_of(&body))
            })
            .collect();
        assert_eq!(caps, [300, 600]);
        assert_eq!(outcome.tool_calls, 2, "the cut reply's calls never ran");
        assert_eq!(outcome.steps, 2);
    }
}

/// A reply still cut after the retry: its whole calls run, the cut one is
/// dropped, and the model is told how to go on; the next reply has the usual
/// cap again.
#[test]
fn a_reply_still_cut_keeps_its_whole_calls_and_asks_for_smaller_replies() {
    let kind = ProviderKind::OpenAiChat;
    let cut = || {
        Reply::tool_calls(vec![
            call("t1", "word_count", json!({"text": "a"})),
            call("t2", "word_count", json!("{\"text\": \"b c")),
        ])
        .cut_off()
    };
    let server = serve(
        kind,
        vec![
            cut(),
            cut(),
            Reply::tool_calls(vec![call("t3", "word_count", json!({"text": "b c"}))]),
        ],
    );
    let provider = provider(kind, &server);
    let mut sink = NullSink;
    let mut runner = Runner::new(provider.as_ref(), budgets(300), &mut sink)
        .with_finishing_tools(&["word_count"])
        .retry_cut_off_replies("Make one call per reply.");
    let outcome = runtime().block_on(runner.run(&task(), ANY)).unwrap();
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let third = requests[2].json();
    assert_eq!(cap_of(&third), 300);
    let said = third.to_string();
    assert_contains(&said, "cut off at the 600-token output limit");
    assert_contains(&said, "Make one call per reply.");
    // t1 of the second cut reply ran, t2 was dropped, t3 ran.
    assert_eq!(outcome.tool_calls, 2);
    assert_eq!(outcome.steps, 3);
}

/// Reserving less than the cap: a request asks for the whole cap when the
/// window leaves room for it, and for what is left when not.
#[test]
fn the_cap_follows_what_the_window_leaves() {
    let kind = ProviderKind::OpenAiChat;
    let server = serve(kind, vec![Reply::text("one"), Reply::text("two")]);
    let provider = provider(kind, &server);
    let mut sink = NullSink;
    let mut runner = Runner::new(provider.as_ref(), budgets(4_096), &mut sink)
        .with_context_window_reserving(8_192, 1_024);
    runtime().block_on(runner.run(&task(), None)).unwrap();
    let large = Task {
        messages: vec![Message::user("word ".repeat(4_000))],
        ..task()
    };
    runtime().block_on(runner.run(&large, None)).unwrap();
    let requests = server.requests();
    assert_eq!(cap_of(&requests[0].json()), 4_096);
    let second = cap_of(&requests[1].json());
    assert!(
        (1_024..4_096).contains(&second),
        "a 5,000-token request in an 8,192-token window leaves less than the cap: {second}"
    );
}
