//! Traces: session directories and console streams, with the key redacted.

use std::fs;

use agent::{Budgets, ConsoleSink, Runner, SessionSink, Task, ToolLimits, TraceSink};
use llm::{Message, ProviderKind, Redactor, Secret};
use serde_json::{Value, json};
use testkit::{FakeLlm, Reply, assert_contains, assert_lacks, assert_starts_with, call, runtime};

use crate::{KEY, events, provider, serve, tools};

/// A run in which the key shows up in a tool's output and in the model's text.
fn leaky_run(sink: &mut dyn TraceSink) -> FakeLlm {
    let kind = ProviderKind::OpenAiResponses;
    let server = serve(
        kind,
        vec![
            Reply::tool_calls(vec![call("a", "lines", json!({"count": 300, "echo": KEY}))]),
            Reply::text(&format!(
                "The key is {KEY}, and here is a long answer.\n{}",
                "more text\n".repeat(400)
            )),
        ],
    );
    let provider = provider(kind, &server);
    let mut runner = Runner::new(provider.as_ref(), Budgets::default(), sink);
    let task = Task {
        name: "leak".into(),
        system: "sys".into(),
        messages: vec![Message::user(format!("please do not print {KEY}"))],
        tools: tools(ToolLimits::default()),
        format_reminder: String::new(),
        json_format: None,
    };
    let outcome = runtime().block_on(runner.run(&task, None)).unwrap();
    assert!(
        outcome.output.contains(KEY),
        "the answer itself is the caller's business"
    );
    server
}

fn redactor() -> Redactor {
    Redactor::new([&Secret::new(KEY)])
}

#[test]
fn session_directories_hold_events_snapshot_and_artifacts_without_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join("sessions").join("20240101-000000-test");
    let mut sink = SessionSink::create(
        safe_io::Dir::open(dir.path())
            .unwrap()
            .create_dir_all("sessions/20240101-000000-test")
            .unwrap(),
        json!({"command": "test", "note": format!("key {KEY}")}),
        redactor(),
    )
    .unwrap();
    let server = leaky_run(&mut sink);
    assert!(sink.problems().is_empty(), "{:?}", sink.problems());
    drop(server);

    let parsed = events(&session);
    let kinds: Vec<&str> = parsed
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "run.started",
            "request",
            "response",
            "tool.call",
            "tool.output",
            "request",
            "response",
            "final"
        ]
    );
    assert_eq!(parsed[0]["seq"], 1);
    assert_eq!(parsed[7]["seq"], 8);
    // Large strings moved to artifacts, referenced with their size.
    let final_output = &parsed[7]["output"];
    let artifact = final_output["artifact"].as_str().unwrap();
    assert!(artifact.starts_with("artifacts/") && artifact.ends_with(".txt"));
    let stored = fs::read_to_string(session.join(artifact)).unwrap();
    assert_eq!(final_output["bytes"], stored.len());
    assert!(stored.contains("****R7"), "artifacts are redacted too");

    let snapshot: Value =
        serde_json::from_str(&fs::read_to_string(session.join("session.json")).unwrap()).unwrap();
    assert_eq!(snapshot["events"], 8);
    assert_eq!(snapshot["event_counts"]["request"], 2);
    assert_eq!(snapshot["last_event"], "final");
    assert_eq!(snapshot["session"]["note"], "key ****R7");
    assert_eq!(snapshot["outcome"]["event"], "final");

    // No file anywhere in the session holds the key.
    let mut files = 0;
    for entry in testkit::files_under(&session) {
        files += 1;
        let text = String::from_utf8_lossy(&fs::read(&entry).unwrap()).into_owned();
        assert!(!text.contains(KEY), "{} contains the key", entry.display());
    }
    assert!(files >= 3);
}

#[test]
fn console_traces_redact_and_preview() {
    let mut sink =
        ConsoleSink::new(Vec::new(), false, redactor()).with_clock(|| "12:00:00".to_owned());
    let server = leaky_run(&mut sink);
    drop(server);
    let text = String::from_utf8(sink.into_inner()).unwrap();
    assert_lacks(&text, KEY);
    assert!(text.contains("****R7"));
    assert_starts_with(
        &text,
        "12:00:00 INF run.started task=leak provider=openai-responses",
    );
    assert_contains(&text, "\n12:00:00 INF final output=<");
    assert_contains(&text, "(first 8 lines shown,");
}

/// The same run in a separate process, tracing to its real stdout and reporting a
/// provider error that echoes the key on its real stderr: neither stream may
/// contain the key.
#[test]
fn a_traced_process_never_prints_the_key() {
    let exe = std::env::current_exe().unwrap();
    let output = std::process::Command::new(exe)
        .args([
            "traces::child_traced_run",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("AGENT_TEST_CHILD", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "child failed:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("INF final output=<"),
        "the console trace went to stdout:\n{stdout}"
    );
    assert_contains(&stderr, "HTTP 401: Incorrect API key provided: ****R7");
    assert!(!stdout.contains(KEY), "stdout leaked the key");
    assert!(!stderr.contains(KEY), "stderr leaked the key");
}

/// Entry point for [`a_traced_process_never_prints_the_key`]; does nothing unless
/// started by it.
#[test]
fn child_traced_run() {
    use std::io::Write;
    if std::env::var_os("AGENT_TEST_CHILD").is_none() {
        return;
    }
    let mut sink = ConsoleSink::new(std::io::stdout(), false, redactor());
    drop(leaky_run(&mut sink));
    let echoed = format!("Incorrect API key provided: {KEY}");
    let server = serve(ProviderKind::OpenAiChat, vec![Reply::error(401, &echoed)]);
    let provider = provider(ProviderKind::OpenAiChat, &server);
    let mut runner = Runner::new(provider.as_ref(), Budgets::default(), &mut sink);
    let task = Task {
        name: "fails".into(),
        system: "sys".into(),
        messages: vec![Message::user("hi")],
        tools: agent::ToolRegistry::default(),
        format_reminder: String::new(),
        json_format: None,
    };
    let err = runtime().block_on(runner.run(&task, None)).unwrap_err();
    let mut chain = format!("error: {err}\n");
    let mut source = std::error::Error::source(&err);
    while let Some(cause) = source {
        chain.push_str(&format!("caused by: {cause}\n"));
        source = cause.source();
    }
    std::io::stderr().write_all(chain.as_bytes()).unwrap();
}
