//! What a huge or hostile answer costs downstream: the repair request stays
//! small, sessions stay bounded, console traces stay terminal-safe.

use std::fs;

use agent::runner::{REPAIR_ANSWER_MAX, REPAIR_PROBLEMS_MAX};
use agent::trace::{ARTIFACT_MAX, EVENTS_MAX, INLINE_FIELD_MAX, SESSION_ARTIFACTS_MAX};
use agent::{
    AgentError, Budgets, ConsoleSink, Event, Runner, SessionSink, Task, ToolRegistry, TraceSink,
};
use llm::{Message, ProviderKind, Redactor};
use serde_json::{Value, json};
use testkit::{Reply, assert_contains, assert_ends_with, assert_starts_with, runtime};

use crate::{events, provider, run_task, serve};

fn task() -> Task {
    Task {
        name: "limits".into(),
        system: "sys".into(),
        messages: vec![Message::user("answer")],
        tools: ToolRegistry::default(),
        format_reminder: "Reply with GOOD.".into(),
        json_format: None,
    }
}

/// Accepts answers starting with GOOD; otherwise one problem per line.
fn validator(text: &str) -> Result<String, Vec<String>> {
    if text.starts_with("GOOD") {
        Ok(text.to_owned())
    } else {
        Err(text
            .lines()
            .map(|l| format!("line '{l}' is wrong"))
            .collect())
    }
}

#[test]
fn the_repair_request_quotes_a_huge_answer_clipped() {
    let kind = ProviderKind::OpenAiChat;
    // 4 MB of text in 400,000 lines: 400,000 problems too.
    let server = serve(
        kind,
        vec![
            Reply::repeated_text("bad line\n", 400_000),
            Reply::repeated_text("still bad\n", 400_000),
        ],
    );
    let err = run_task(kind, &server, &task(), Some(&validator)).unwrap_err();
    match err {
        AgentError::Invalid { problems, output } => {
            assert_eq!(problems.len(), 400_000);
            assert_eq!(output.len(), 4_000_000, "the caller gets the whole answer");
        }
        other => panic!("{other:?}"),
    }
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let repair = &requests[1];
    assert!(
        repair.body.len() < REPAIR_ANSWER_MAX + 32 * 1024,
        "the repair request is {} bytes",
        repair.body.len()
    );
    let body = repair.json();
    let messages = body["messages"].as_array().unwrap();
    let quoted = messages[messages.len() - 2]["content"].as_str().unwrap();
    // The head and the tail are kept, the cut is marked.
    assert_starts_with(quoted, "bad line\nbad line\n");
    assert_ends_with(quoted, "bad line\n");
    assert_contains(quoted, "bytes cut here: the text is 3600000 bytes");
    let list = messages.last().unwrap()["content"].as_str().unwrap();
    assert_eq!(
        list.matches("\n- line 'bad line' is wrong").count(),
        REPAIR_PROBLEMS_MAX
    );
    assert_contains(
        list,
        &format!("- … and {} more problems", 400_000 - REPAIR_PROBLEMS_MAX),
    );
}

fn session(dir: &tempfile::TempDir) -> SessionSink {
    SessionSink::create(
        safe_io::Dir::open(dir.path()).unwrap(),
        json!({"command": "limits"}),
        Redactor::default(),
    )
    .unwrap()
}

#[test]
fn a_huge_reply_leaves_a_small_trace() {
    let kind = ProviderKind::OpenAiResponses;
    // 12 MB of answer, under the 16 MiB reply limit: accepted, then traced.
    let server = serve(kind, vec![Reply::repeated_text("0123456789ab", 1_000_000)]);
    let provider = provider(kind, &server);
    let dir = tempfile::tempdir().unwrap();
    let mut sink = session(&dir);
    let mut runner = Runner::new(provider.as_ref(), Budgets::default(), &mut sink);
    let outcome = runtime().block_on(runner.run(&task(), None)).unwrap();
    assert_eq!(outcome.output.len(), 12_000_000);
    assert!(sink.problems().is_empty(), "{:?}", sink.problems());
    for path in testkit::files_under(dir.path()) {
        let size = fs::metadata(&path).unwrap().len();
        assert!(
            size <= (ARTIFACT_MAX + 1024) as u64,
            "{} is {size} bytes",
            path.display()
        );
    }
    let events = events(dir.path());
    let response = events.iter().find(|e| e["event"] == "response").unwrap();
    // The runner cut the text before the event was built (the sink keeps no
    // more anyway); the marker inside names the whole answer's size.
    assert!(response["text"]["bytes"].as_u64().unwrap() <= ARTIFACT_MAX as u64);
    let stored = fs::read_to_string(
        dir.path()
            .join(response["text"]["artifact"].as_str().unwrap()),
    )
    .unwrap();
    assert!(stored.starts_with("0123456789ab0123"));
    assert!(stored.contains("bytes cut here: the text is 12000000 bytes"));
}

#[test]
fn sessions_cap_artifacts_fields_and_events() {
    let dir = tempfile::tempdir().unwrap();
    let mut sink = session(&dir);
    // One artifact over the cap: head and tail kept, whole size reported.
    let big = format!("{}{}", "h".repeat(2 * ARTIFACT_MAX), "t".repeat(100));
    sink.record(&Event::info("big").with("text", big.as_str()));
    let first = &events(dir.path())[0];
    assert_eq!(first["text"]["bytes"], big.len());
    assert_eq!(first["text"]["clipped"], true);
    let stored =
        fs::read_to_string(dir.path().join(first["text"]["artifact"].as_str().unwrap())).unwrap();
    assert!(stored.len() <= ARTIFACT_MAX + 200);
    assert!(stored.starts_with("hhh") && stored.ends_with(&"t".repeat(100)));

    // A field of many short strings becomes one JSON artifact.
    let many: Vec<String> = (0..40_000).map(|i| format!("item {i}")).collect();
    sink.record(&Event::info("many").with("items", json!(many)));
    let second = &events(dir.path())[1];
    assert_eq!(second["items"]["format"], "json");
    assert!(second["items"]["bytes"].as_u64().unwrap() > INLINE_FIELD_MAX as u64);

    // Distinct artifacts until the session's budget is used up.
    let per = ARTIFACT_MAX;
    let needed = (SESSION_ARTIFACTS_MAX as usize) / per + 2;
    for i in 0..needed {
        let text = format!("{i:08}{}", "a".repeat(per - 8));
        sink.record(&Event::info("fill").with("text", text));
    }
    let all = events(dir.path());
    let last = all.last().unwrap();
    assert_eq!(last["text"]["artifact"], Value::Null);
    assert!(
        last["text"]["omitted"]
            .as_str()
            .unwrap()
            .contains("32 MiB of artifacts are used up")
    );
    let stored: u64 = testkit::files_under(&dir.path().join("artifacts"))
        .iter()
        .map(|path| fs::metadata(path).unwrap().len())
        .sum();
    assert!(stored <= SESSION_ARTIFACTS_MAX, "{stored}");

    // Events with big inline fields until events.ndjson is full.
    let inline: Vec<String> = (0..(INLINE_FIELD_MAX / 12))
        .map(|i| format!("{i:09}"))
        .collect();
    for _ in 0..(EVENTS_MAX as usize / INLINE_FIELD_MAX + 4) {
        sink.record(&Event::info("wide").with("items", json!(inline)));
    }
    let size = fs::metadata(dir.path().join("events.ndjson"))
        .unwrap()
        .len();
    assert!(size <= EVENTS_MAX + 64 * 1024, "{size}");
    let last = events(dir.path()).pop().unwrap();
    assert_eq!(last["event"], "wide");
    assert!(last.get("items").is_none());
    assert_contains(
        last["omitted"].as_str().unwrap(),
        "events.ndjson reached 8 MiB",
    );
    assert!(sink.problems().is_empty(), "{:?}", sink.problems());
}

#[test]
fn console_traces_escape_control_characters() {
    let mut sink = ConsoleSink::new(Vec::new(), false, Redactor::default())
        .with_clock(|| "12:00:00".to_owned());
    let hostile = "\x1b]52;c;ZXZpbA==\x07\x1b[2J\r\u{202e}";
    sink.record(
        &Event::warn(&format!("kind{hostile}"))
            .with("word", hostile)
            .with("quoted", format!("two words {hostile}"))
            .with(&format!("key{hostile}"), 1)
            .with("json", json!({"v": hostile}))
            .with(
                "block",
                format!("line one {hostile}\nline\ttwo {hostile}\n"),
            ),
    );
    let text = String::from_utf8(sink.into_inner()).unwrap();
    for c in text.chars() {
        assert!(
            c == '\n' || c == '\t' || !(c.is_control() || ('\u{202a}'..='\u{202e}').contains(&c)),
            "{c:?} reached the console: {text:?}"
        );
    }
    assert_contains(&text, "\\x1b]52;c;ZXZpbA==\\x07");
    assert_contains(&text, "\\u{202e}");
    // Tabs stay in previews.
    assert_contains(&text, "      | line\ttwo \\x1b]52");
}

#[test]
fn a_huge_turn_beside_tool_calls_is_kept_clipped_in_the_transcript() {
    let kind = ProviderKind::OpenAiResponses;
    let chatter = "thinking out loud ".repeat(100_000);
    let server = serve(
        kind,
        vec![
            Reply::tool_calls(vec![testkit::call(
                "c1",
                "word_count",
                json!({"text": "x ".repeat(500_000)}),
            )])
            .with_text(&chatter),
            Reply::text("GOOD"),
        ],
    );
    let task = Task {
        tools: crate::tools(agent::ToolLimits::default()),
        ..task()
    };
    let outcome = run_task(kind, &server, &task, None).unwrap();
    assert_eq!(outcome.output, "GOOD");
    let second = &server.requests()[1];
    assert!(
        second.body.len() < 3 * REPAIR_ANSWER_MAX,
        "the second request is {} bytes",
        second.body.len()
    );
    let body = String::from_utf8_lossy(&second.body);
    assert_eq!(
        body.matches("bytes cut here").count(),
        2,
        "text and argument"
    );
}

/// Within a context window, a request too large for it is never sent: the
/// task's own message does not fit, nothing can be dropped, and the run fails
/// with an error that names the window. Results that would overflow it are cut
/// or dropped, so the requests of a tool loop stay within it.
#[test]
fn a_request_larger_than_the_context_window_is_never_sent() {
    let kind = ProviderKind::OpenAiChat;
    let budgets = Budgets {
        max_tokens: Some(500),
        ..Budgets::default()
    };
    let server = serve(kind, vec![Reply::text("GOOD")]);
    let provider = provider(kind, &server);
    let mut sink = agent::NullSink;
    let mut runner = Runner::new(provider.as_ref(), budgets, &mut sink).with_context_window(4_000);
    let huge = Task {
        messages: vec![Message::user("word ".repeat(4_000))],
        ..task()
    };
    let err = runtime().block_on(runner.run(&huge, None)).unwrap_err();
    let message = err.to_string();
    let AgentError::ContextWindowExceeded {
        tokens,
        limit,
        window,
        output,
    } = err
    else {
        panic!("{message}");
    };
    assert_eq!((limit, window, output), (3_100, 4_000, 500));
    assert!(tokens > 5_000, "{tokens}");
    assert_contains(
        &message,
        "more than the 3100 a 4000-token context window leaves for input",
    );
    assert!(server.requests().is_empty(), "nothing was sent");
    // The same message within the window goes out.
    let fits = Task {
        messages: vec![Message::user("word ".repeat(1_000))],
        ..task()
    };
    let outcome = runtime().block_on(runner.run(&fits, None)).unwrap();
    assert_eq!(outcome.output, "GOOD");
    assert_eq!(server.requests().len(), 1);
}
