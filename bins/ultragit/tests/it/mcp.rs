//! `ultragit mcp` as a process: JSON-RPC over its stdin and stdout, as an MCP
//! client speaks it (initialize, tools/list, tools/call), on the annotated
//! fixture repository; and as a hostile or careless client speaks it (lines
//! that are not JSON or not JSON-RPC, requests before `initialize`, a line
//! of hundreds of megabytes, a client that queues work and goes away).

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Fixture, fixture, ultragit};

/// How long a test waits for one answer, or for the server to exit, before
/// it gives up (a hung server fails the test instead of hanging it; no speed
/// is asserted).
const HANG_GUARD: Duration = Duration::from_secs(120);

/// A running `ultragit mcp` and the lines it has written on stdout.
struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// Every stdout line seen so far.
    seen: Vec<String>,
    /// Everything written on stderr, once the server has exited (read all
    /// along, so a chatty server never blocks on a full pipe).
    stderr: Option<JoinHandle<String>>,
    next_id: u64,
}

impl Session {
    /// Starts `ultragit mcp args…` in `dir` and initializes the session.
    fn start(dir: &Path, args: &[&str]) -> (Session, Value) {
        let mut session = Session::spawn(dir, args);
        let init = session.initialize();
        (session, init)
    }

    /// Starts `ultragit mcp args…` in `dir`, sending nothing.
    fn spawn(dir: &Path, args: &[&str]) -> Session {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ultragit"));
        cmd.arg("mcp").args(args).current_dir(dir);
        testkit::isolate(&mut cmd);
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start ultragit mcp");
        let stdout = child.stdout.take().expect("piped stdout");
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let mut stderr = child.stderr.take().expect("piped stderr");
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            stderr.read_to_string(&mut text).expect("read stderr");
            text
        });
        let stdin = child.stdin.take();
        Session {
            child,
            stdin,
            lines,
            seen: Vec::new(),
            stderr: Some(stderr),
            next_id: 1,
        }
    }

    /// The `initialize` request and the `initialized` notification; the
    /// response to the request.
    fn initialize(&mut self) -> Value {
        let init = self.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "ultragit-tests", "version": "1"}
            }),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        init
    }

    fn send(&mut self, message: &Value) {
        self.send_raw(&message.to_string());
    }

    fn send_raw(&mut self, line: &str) {
        self.send_bytes(line.as_bytes());
    }

    /// `line` and a newline, as they are.
    fn send_bytes(&mut self, line: &[u8]) {
        let stdin = self.stdin.as_mut().expect("the session is open");
        stdin.write_all(line).expect("write to ultragit mcp");
        stdin.write_all(b"\n").expect("write to ultragit mcp");
        stdin.flush().expect("flush");
    }

    /// A fresh request id.
    fn id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// Sends a request and returns its whole response (`result` or `error`).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.id();
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.response(&json!(id))
    }

    /// The next line on stdout, as JSON.
    fn next_message(&mut self, waiting_for: &Value) -> Value {
        let line = match self.lines.recv_timeout(HANG_GUARD) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => {
                panic!("no answer to {waiting_for}: {:?}", self.seen)
            }
            Err(RecvTimeoutError::Disconnected) => {
                panic!("ultragit mcp closed stdout: {:?}", self.seen)
            }
        };
        self.seen.push(line.clone());
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {line}"))
    }

    /// The response with `id` (other messages are kept in `seen`). An error
    /// about a request whose id could not be read has `"id": null`.
    fn response(&mut self, id: &Value) -> Value {
        loop {
            let message = self.next_message(id);
            if message.get("id") == Some(id) {
                return message;
            }
        }
    }

    /// `tools/call name arguments` → the result (panics on a protocol error).
    fn call(&mut self, name: &str, arguments: Value) -> Value {
        let response = self.request("tools/call", json!({"name": name, "arguments": arguments}));
        response
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("a protocol error for {name}: {response}"))
    }

    /// Closes stdin and checks that the server exited 0 having written only
    /// JSON-RPC messages on stdout; returns its stderr.
    fn close(self) -> String {
        let (code, lines, stderr) = self.finish();
        assert_eq!(code, 0, "{stderr}");
        assert_only_json_rpc(&lines);
        stderr
    }

    /// Closes stdin; returns the exit code, every stdout line and stderr.
    fn finish(mut self) -> (i32, Vec<String>, String) {
        drop(self.stdin.take());
        let status = wait_for_exit(&mut self.child);
        self.seen.extend(self.lines.iter());
        let stderr = self
            .stderr
            .take()
            .expect("stderr is read once")
            .join()
            .expect("the stderr reader");
        (status.code().unwrap_or(-1), self.seen, stderr)
    }
}

/// Waits for `child` to exit, or kills it and fails after [`HANG_GUARD`]: a
/// liveness check (the server must not keep working after its client has
/// gone), not a speed one.
fn wait_for_exit(child: &mut Child) -> ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait for ultragit mcp") {
            return status;
        }
        if started.elapsed() > HANG_GUARD {
            let _ = child.kill();
            panic!("ultragit mcp still running {HANG_GUARD:?} after its stdin closed");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The fixture repository and a session serving it.
fn served_fixture() -> (Fixture, Session) {
    let fx = fixture();
    let (session, _) = Session::start(fx.path(), &[]);
    (fx, session)
}

/// The text content of a tool result (exactly one text block).
fn text(result: &Value) -> &str {
    let content = result["content"].as_array().expect("content is a list");
    assert_eq!(content.len(), 1, "{result}");
    assert_eq!(content[0]["type"], "text", "{result}");
    content[0]["text"].as_str().expect("text")
}

/// `text` contains every one of `fragments`.
fn assert_has(text: &str, fragments: &[&str]) {
    for fragment in fragments {
        assert!(
            text.contains(fragment),
            "{fragment:?} is missing from:\n{text}"
        );
    }
}

/// Every object in `schema` forbids unknown properties.
fn assert_strict(schema: &Value) {
    match schema {
        Value::Object(map) => {
            if map.get("type") == Some(&json!("object")) {
                assert_eq!(map["additionalProperties"], json!(false), "{schema}");
            }
            map.values().for_each(assert_strict);
        }
        Value::Array(items) => items.iter().for_each(assert_strict),
        _ => {}
    }
}

#[test]
fn lists_strict_tools_and_reads_a_note() {
    let fx = fixture();
    let (mut session, init) = Session::start(fx.path(), &[]);
    let info = &init["result"];
    assert_eq!(info["serverInfo"]["name"], "ultragit", "{init}");
    assert!(info["capabilities"]["tools"].is_object(), "{init}");
    assert_eq!(info["protocolVersion"], "2025-06-18", "{init}");

    let listed = session.request("tools/list", json!({}));
    let tools = listed["result"]["tools"].as_array().expect("tools");
    let names = testkit::field_strs(&listed["result"]["tools"], "name");
    // The library's own tests pin the list; here: the server lists all of it, in order.
    assert_eq!(names, ultragit_mcp::tools::Registry::all().names());
    for tool in tools {
        let schema = &tool["inputSchema"];
        assert_eq!(schema["type"], "object", "{tool}");
        assert_strict(schema);
        assert!(tool["description"].as_str().unwrap().len() > 40, "{tool}");
    }
    assert_eq!(tools[0]["inputSchema"]["required"], json!(["paths"]));
    assert_eq!(tools[0]["annotations"]["readOnlyHint"], true);
    assert_eq!(tools[4]["annotations"]["readOnlyHint"], false);
    assert_eq!(tools[5]["annotations"]["idempotentHint"], false);

    let result = session.call(
        "ultragit_read",
        json!({"paths": ["src/client.rs"], "anchor": "connect"}),
    );
    assert_eq!(result["isError"], false, "{result}");
    assert_has(
        text(&result),
        &[
            "# Context for src/client.rs — connect\n",
            "Tries to reach the broker up to `retries` times before giving up.",
        ],
    );
    let structured = &result["structuredContent"];
    assert_eq!(structured["$schema"], "ultragit-read/v1", "{structured}");
    assert_eq!(
        structured["regions"][0]["region"]["intent"],
        "Tries to reach the broker up to `retries` times before giving up.",
        "{structured}"
    );
    assert_eq!(
        structured["regions"][0]["commit_sha"], fx.c3,
        "{structured}"
    );

    // The same answer as `ultragit read --format json`.
    let cli = crate::support::stdout(
        fx.path(),
        &["read", "src/client.rs", "connect", "--format", "json"],
    );
    let cli: Value = serde_json::from_str(&cli).expect("read's JSON");
    assert_eq!(structured["regions"], cli["regions"]);

    // Lines, a budget, a tag filter.
    let result = session.call(
        "ultragit_read",
        json!({"paths": ["tools/probe.py"], "lines": "4:6", "tags": ["retry"], "max_tokens": 2000, "min_confidence": 0.1}),
    );
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(
        result["structuredContent"]["regions"][0]["region"]["intent"],
        "Exponential backoff in seconds, capped at 30."
    );
    let stderr = session.close();
    assert!(stderr.contains("ultragit mcp: serving "), "{stderr}");
    assert!(
        stderr.contains("ultragit mcp: ultragit_read: ok"),
        "{stderr}"
    );
}

/// Every line on stdout is a JSON-RPC 2.0 message.
/// Every error has an `id` (`null` when the request's could not be read), and
/// none is the never-written reply of a call dropped because the client left.
fn assert_only_json_rpc(lines: &[String]) {
    assert!(!lines.is_empty());
    for line in lines {
        let message: Value = serde_json::from_str(line).expect("JSON on stdout");
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
        if let Some(error) = message.get("error") {
            assert!(message.get("id").is_some(), "{line}");
            assert_ne!(error["code"], -32800, "{line}");
        }
    }
}

#[test]
fn failures_are_tool_errors_with_reads_messages() {
    let (_fx, mut session) = served_fixture();

    let result = session.call("ultragit_read", json!({"paths": ["src/missing.rs"]}));
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(
        text(&result),
        "File not found: src/missing.rs. Does it exist at HEAD?"
    );
    assert_eq!(
        result["structuredContent"]["error"]["code"],
        "file_not_found"
    );

    let result = session.call(
        "ultragit_read",
        json!({"paths": ["src/client.rs"], "anchor": "reconnect_later"}),
    );
    assert_eq!(result["isError"], true, "{result}");
    assert!(
        text(&result).starts_with("Anchor 'reconnect_later' not found in src/client.rs."),
        "{result}"
    );
    let details = &result["structuredContent"]["error"]["details"]["available_anchors"];
    assert!(
        details
            .as_array()
            .unwrap()
            .contains(&json!("Client::connect")),
        "{result}"
    );

    let result = session.call(
        "ultragit_read",
        json!({"paths": ["src/client.rs"], "lines": "20:10"}),
    );
    assert_eq!(
        text(&result),
        "Invalid line range 20:10: START is after END"
    );

    for (arguments, fragment) in [
        (json!({}), "missing required field 'paths'"),
        (
            json!({"paths": "src/client.rs"}),
            "expected array, got string",
        ),
        (
            json!({"paths": ["src/client.rs"], "format": "json"}),
            "unknown field 'format' (allowed: anchor, lines,",
        ),
        (json!({"paths": ["../outside.rs"]}), "contains `..`"),
        (json!({"paths": ["/etc/passwd"]}), "is absolute"),
        (
            json!({"paths": ["src/client.rs"], "anchor": "connect", "lines": "1:2"}),
            "`anchor` and `lines` cannot be combined",
        ),
    ] {
        let result = session.call("ultragit_read", arguments.clone());
        assert_eq!(result["isError"], true, "{arguments}: {result}");
        let message = text(&result);
        assert!(
            message.starts_with("Invalid arguments for ultragit_read: ")
                && message.contains(fragment),
            "{arguments}: {message}"
        );
        assert_eq!(
            result["structuredContent"]["error"]["code"],
            "invalid_argument"
        );
    }
    let result = session.call("ultragit_context_set", json!({}));
    assert_eq!(result["isError"], true, "{result}");
    assert!(text(&result).contains("give at least one of"), "{result}");

    // Not a tool of ours: a protocol error, and the session goes on.
    let response = session.request(
        "tools/call",
        json!({"name": "ultragit_push", "arguments": {}}),
    );
    assert_eq!(response["error"]["code"], -32602, "{response}");
    assert!(
        response["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Available tools: ultragit_read, ultragit_deps,"),
        "{response}"
    );
    // Params that are not an object: an invalid request; params without a
    // tool name: invalid params; both about the request's id.
    session.send(
        &json!({"jsonrpc": "2.0", "id": 900, "method": "tools/call", "params": "src/client.rs"}),
    );
    let response = session.response(&json!(900));
    assert_eq!(response["error"]["code"], -32600, "{response}");
    session.send(
        &json!({"jsonrpc": "2.0", "id": 901, "method": "tools/call", "params": {"arguments": {}}}),
    );
    let response = session.response(&json!(901));
    assert_eq!(response["error"]["code"], -32602, "{response}");
    assert_eq!(
        response["error"]["message"],
        "Invalid params for tools/call: missing field `name`"
    );
    // A method nobody serves.
    let response = session.request("tools/frobnicate", json!({}));
    assert_eq!(response["error"]["code"], -32601, "{response}");

    let pong = session.request("ping", json!({}));
    assert_eq!(pong["result"], json!({}), "{pong}");
    let result = session.call("ultragit_read", json!({"paths": ["src/client.rs"]}));
    assert_eq!(result["isError"], false, "{result}");

    let stderr = session.close();
    assert_has(
        &stderr,
        &["ultragit_read: error: File not found: src/missing.rs."],
    );
}

#[test]
fn context_set_records_what_context_set_records() {
    let (fx, mut session) = served_fixture();
    let result = session.call(
        "ultragit_context_set",
        json!({"task": "  Retry broker connects ", "tags": ["net", " net", "retry", ""]}),
    );
    assert_eq!(result["isError"], false, "{result}");
    let pending = fx.path().join(".git/ultragit/pending-context.json");
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(&pending).unwrap()).unwrap();
    assert_eq!(stored["task"], "Retry broker connects", "{stored}");
    assert_eq!(stored["tags"], json!(["net", "retry"]), "{stored}");
    assert_eq!(
        result["structuredContent"]["context"],
        json!({"task": "Retry broker connects", "tags": ["net", "retry"]})
    );
    assert!(
        result["structuredContent"]["pending_context_file"]
            .as_str()
            .unwrap()
            .ends_with("ultragit/pending-context.json"),
        "{result}"
    );
    assert!(
        text(&result).contains("**task:** Retry broker connects"),
        "{result}"
    );

    // A second call adds reasoning and keeps the task, like `context set`.
    let result = session.call(
        "ultragit_context_set",
        json!({"reasoning": "The broker drops the first attempt after a failover"}),
    );
    assert_eq!(result["isError"], false, "{result}");
    let (code, _, stderr) = session.finish();
    assert_eq!(code, 0, "{stderr}");
    let shown = crate::support::stdout(fx.path(), &["context", "show"]);
    assert_has(
        &shown,
        &[
            "task: Retry broker connects",
            "reasoning: The broker drops the first attempt after a failover",
            "tags: net, retry",
        ],
    );
}

#[test]
fn serves_the_repository_it_is_given() {
    let fx = fixture();
    let elsewhere =
        std::env::temp_dir().join(format!("ultragit-mcp-no-repo-{}", std::process::id()));
    std::fs::create_dir_all(&elsewhere).unwrap();
    let outside = ultragit(&elsewhere, &["mcp"]);
    assert_eq!(outside.code, 1, "{outside:?}");
    assert_eq!(outside.stdout, "", "{outside:?}");
    assert!(
        outside.stderr.starts_with("error: not a git repository"),
        "{outside:?}"
    );
    assert!(
        outside.stderr.contains("hint: start `ultragit mcp` inside"),
        "{outside:?}"
    );

    let repo = fx.path().to_str().unwrap();
    let (mut session, _) = Session::start(&elsewhere, &["--repo", repo]);
    let result = session.call(
        "ultragit_read",
        json!({"paths": ["tools/probe.py"], "anchor": "retry"}),
    );
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(
        result["structuredContent"]["regions"][0]["region"]["intent"],
        "Calls connect until it succeeds or the attempts run out."
    );
    session.close();
    std::fs::remove_dir_all(&elsewhere).unwrap();
}

#[test]
fn deps_history_and_summary_answer_as_the_commands_do() {
    let (fx, mut session) = served_fixture();
    for (tool, arguments, command) in [
        (
            "ultragit_deps",
            json!({"path": "src/client.rs", "anchor": "connect"}),
            vec!["deps", "src/client.rs", "connect"],
        ),
        (
            "ultragit_history",
            json!({"path": "src/client.rs", "anchor": "connect"}),
            vec!["history", "src/client.rs", "connect"],
        ),
        (
            "ultragit_summary",
            json!({"path": "src", "max_tokens": 4000}),
            vec!["summary", "src", "--max-tokens", "4000"],
        ),
    ] {
        let result = session.call(tool, arguments);
        assert_eq!(result["isError"], false, "{tool}: {result}");
        let markdown = crate::support::stdout(fx.path(), &command);
        assert_eq!(text(&result), markdown, "{tool}");
        let mut json_command = command.clone();
        json_command.extend(["--format", "json"]);
        let mut json: Value =
            serde_json::from_str(&crate::support::stdout(fx.path(), &json_command)).unwrap();
        let mut structured = result["structuredContent"].clone();
        // How warm the reverse index was differs between the two runs.
        for doc in [&mut json, &mut structured] {
            if let Some(stats) = doc.get_mut("stats").and_then(Value::as_object_mut) {
                stats.remove("index");
            }
        }
        assert_eq!(structured, json, "{tool}");
    }
    let result = session.call(
        "ultragit_deps",
        json!({"path": "src/client.rs", "anchor": "connect"}),
    );
    let dependent = &result["structuredContent"]["dependents"][0];
    assert_eq!(dependent["file"], "tools/probe.py", "{result}");
    assert_eq!(dependent["anchor"], "retry", "{result}");
    let result = session.call("ultragit_summary", json!({"path": "."}));
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(result["structuredContent"]["kind"], "directory", "{result}");

    let result = session.call(
        "ultragit_history",
        json!({"path": "src/gone.rs", "anchor": "connect"}),
    );
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(
        text(&result),
        "File not found: src/gone.rs. Does it exist at HEAD?"
    );
    assert_eq!(
        result["structuredContent"]["$schema"], "ultragit-history/v1",
        "{result}"
    );
    let result = session.call("ultragit_deps", json!({"path": "src/client.rs"}));
    assert_eq!(result["isError"], true, "{result}");
    assert!(
        text(&result).contains("missing required field 'anchor'"),
        "{result}"
    );
    session.close();
}

#[test]
fn flag_and_correct_change_what_read_shows() {
    let (fx, mut session) = served_fixture();
    let flagged = session.call(
        "ultragit_flag",
        json!({"commit": fx.c3, "file": "src/client.rs", "anchor": "Client::connect",
               "reason": "the retry moved to the pool"}),
    );
    assert_eq!(flagged["isError"], false, "{flagged}");
    assert_eq!(flagged["structuredContent"]["commit"], fx.c3.as_str());
    assert_eq!(
        flagged["structuredContent"]["regions"],
        json!(["src/client.rs:Client::connect"])
    );
    testkit::assert_starts_with(text(&flagged), "flagged src/client.rs:Client::connect");

    let corrected = session.call(
        "ultragit_correct",
        json!({"commit": fx.c3, "file": "src/client.rs", "anchor": "Client::connect",
               "field": "intent", "operation": "set",
               "value": "Connect once; the pool retries.", "reason": "retry moved"}),
    );
    assert_eq!(corrected["isError"], false, "{corrected}");
    assert_eq!(
        corrected["structuredContent"]["correction"]["value"],
        "Connect once; the pool retries."
    );

    // What the tools stored is what `ultragit read` now shows.
    let read: Value = serde_json::from_str(&crate::support::stdout(
        fx.path(),
        &["read", "src/client.rs", "connect", "--format", "json"],
    ))
    .unwrap();
    let region = read["regions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["commit_sha"] == fx.c3.as_str())
        .expect("c3's region");
    assert_eq!(
        region["region"]["intent"], "Connect once; the pool retries.",
        "{region}"
    );
    let kinds = testkit::field_strs(&region["corrections"], "kind");
    assert_eq!(kinds, ["flag", "set"], "{region}");

    // Refusals are tool errors with the library's message; nothing is stored.
    for (arguments, says) in [
        (
            json!({"commit": fx.c3, "file": "src/client.rs", "anchor": "Client::connect",
                   "field": "constraints", "operation": "set", "value": "x", "reason": "r"}),
            "constraints is a list",
        ),
        (
            json!({"commit": fx.c3, "file": "src/client.rs", "anchor": "Client::nope",
                   "field": "intent", "operation": "set", "value": "x", "reason": "r"}),
            "Client::connect",
        ),
        (
            json!({"commit": fx.c3, "file": "../x.rs", "anchor": "a",
                   "field": "intent", "operation": "set", "value": "x", "reason": "r"}),
            "contains `..`",
        ),
    ] {
        let result = session.call("ultragit_correct", arguments.clone());
        assert_eq!(result["isError"], true, "{arguments}: {result}");
        testkit::assert_contains(text(&result), says);
    }
    let unknown = session.call(
        "ultragit_flag",
        json!({"commit": fx.c3, "reason": "r", "severity": "high"}),
    );
    assert_eq!(unknown["isError"], true, "{unknown}");
    session.close();
    let after: Value = serde_json::from_str(&crate::support::stdout(
        fx.path(),
        &["show", &fx.c3, "--format", "json"],
    ))
    .unwrap();
    assert_eq!(
        after["corrections"].as_array().map(Vec::len),
        Some(2),
        "{after}"
    );
}

/// The error of `response`: its code and message (panics on a result).
fn error_of(response: &Value) -> (i64, &str) {
    let error = &response["error"];
    let code = error["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("an error expected: {response}"));
    (code, error["message"].as_str().expect("a message"))
}

#[test]
fn malformed_lines_get_json_rpc_errors_and_the_session_goes_on() {
    let (_fx, mut session) = served_fixture();
    let deep_array = "[".repeat(100_000) + &"]".repeat(100_000);
    let cases: [(&[u8], i64, Value, &str); 10] = [
        (
            b"{bad",
            -32700,
            Value::Null,
            "Parse error: key must be a string",
        ),
        (
            deep_array.as_bytes(),
            -32700,
            Value::Null,
            "deeper than 64 levels",
        ),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\xff\"}",
            -32700,
            Value::Null,
            "not valid UTF-8",
        ),
        (
            b"[]",
            -32600,
            Value::Null,
            "an empty array is not a request",
        ),
        (
            b"42",
            -32600,
            Value::Null,
            "a JSON-RPC message is an object",
        ),
        (
            br#"{"jsonrpc":"1.0","id":70,"method":"ping"}"#,
            -32600,
            json!(70),
            "`jsonrpc` must be \"2.0\"",
        ),
        (
            br#"{"jsonrpc":"2.0","id":71}"#,
            -32600,
            json!(71),
            "`method` is missing",
        ),
        (
            br#"{"jsonrpc":"2.0","id":"s72","method":7}"#,
            -32600,
            json!("s72"),
            "`method` must be a string",
        ),
        (
            br#"{"jsonrpc":"2.0","id":{"n":73},"method":"ping"}"#,
            -32600,
            Value::Null,
            "`id` must be a string or an integer",
        ),
        (
            br#"[{"jsonrpc":"2.0","id":74,"method":"ping"}]"#,
            -32600,
            Value::Null,
            "does not take batches",
        ),
    ];
    for (line, code, id, says) in cases {
        session.send_bytes(line);
        let response = session.response(&id);
        let (got, message) = error_of(&response);
        let shown = String::from_utf8_lossy(&line[..line.len().min(60)]).into_owned();
        assert_eq!(got, code, "{shown}: {response}");
        assert!(message.contains(says), "{shown}: {message}");
        // The session goes on: the next request is answered.
        let pong = session.request("ping", json!({}));
        assert_eq!(pong["result"], json!({}), "after {shown}: {pong}");
    }
    let result = session.call("ultragit_read", json!({"paths": ["src/client.rs"]}));
    assert_eq!(result["isError"], false, "{result}");
    let stderr = session.close();
    assert!(
        stderr.contains("ultragit mcp: refused a message (-32700): Parse error: "),
        "{stderr}"
    );
}

#[test]
fn requests_before_initialize_are_told_to_initialize() {
    let fx = fixture();
    let mut session = Session::spawn(fx.path(), &[]);
    for (method, params) in [
        ("tools/list", json!({})),
        (
            "tools/call",
            json!({"name": "ultragit_read", "arguments": {"paths": ["src/client.rs"]}}),
        ),
    ] {
        let response = session.request(method, params);
        let (code, message) = error_of(&response);
        assert_eq!(code, -32600, "{response}");
        assert_eq!(
            message,
            format!(
                "Invalid Request: server not initialized: send `initialize` first (got `{method}` before it)"
            )
        );
    }
    // A notification before initialize is not answered and ends nothing;
    // ping is allowed.
    session.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let pong = session.request("ping", json!({}));
    assert_eq!(pong["result"], json!({}), "{pong}");

    let init = session.initialize();
    assert_eq!(init["result"]["serverInfo"]["name"], "ultragit", "{init}");
    let listed = session.request("tools/list", json!({}));
    assert_eq!(
        testkit::field_strs(&listed["result"]["tools"], "name"),
        ultragit_mcp::tools::Registry::all().names()
    );
    let stderr = session.close();
    assert!(
        stderr.contains("ultragit mcp: ignored a notification before initialize"),
        "{stderr}"
    );
}

/// Peak resident memory of process `pid` in KiB (Linux's `VmHWM`).
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc status")
}

#[test]
fn a_line_over_the_cap_is_discarded_streaming_and_answered() {
    const LINE_MIB: usize = 200;
    let (_fx, mut session) = served_fixture();
    // One request line of 200 MiB, written 1 MiB at a time.
    let stdin = session.stdin.as_mut().expect("the session is open");
    stdin
        .write_all(br#"{"jsonrpc":"2.0","id":1000,"method":"ping","params":{"pad":""#)
        .expect("write to ultragit mcp");
    let chunk = vec![b'x'; 1 << 20];
    for _ in 0..LINE_MIB {
        stdin.write_all(&chunk).expect("write to ultragit mcp");
    }
    session.send_raw(r#""}}"#);

    let response = session.response(&Value::Null);
    let (code, message) = error_of(&response);
    assert_eq!(code, -32700, "{response}");
    assert!(
        message.contains("over the 16777216-byte (16 MiB) line cap; it was discarded unread"),
        "{message}"
    );
    let pong = session.request("ping", json!({}));
    assert_eq!(pong["result"], json!({}), "{pong}");
    let result = session.call("ultragit_read", json!({"paths": ["src/client.rs"]}));
    assert_eq!(result["isError"], false, "{result}");

    // Never more than the cap (16 MiB) and the process itself: far below the
    // line's 200 MiB.
    let peak_mib = peak_rss_kib(session.child.id()) / 1024;
    assert!(
        peak_mib < 100,
        "peak RSS {peak_mib} MiB for a {LINE_MIB} MiB line"
    );
    session.close();
}

#[test]
fn closing_stdin_drops_queued_calls_and_exits() {
    const QUEUED: usize = 700;
    let (fx, mut session) = served_fixture();
    let first = session.next_id;
    let mut batch = String::new();
    for n in 0..QUEUED {
        let id = session.id();
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "ultragit_correct",
            "arguments": {"commit": fx.c3, "file": "src/client.rs", "anchor": "Client::connect",
                          "field": "intent", "operation": "set",
                          "value": format!("Connect, version {n}."), "reason": "queued"}}});
        batch.push_str(&request.to_string());
        batch.push('\n');
    }
    session
        .stdin
        .as_mut()
        .expect("the session is open")
        .write_all(batch.as_bytes())
        .expect("write to ultragit mcp");
    // The server is working through the queue; the client goes away.
    let reply = session.next_message(&json!("a first correction"));
    assert_eq!(reply["result"]["isError"], false, "{reply}");
    let (code, lines, stderr) = session.finish();
    assert_eq!(code, 0, "{stderr}");
    assert_only_json_rpc(&lines);

    // Every reply written is a stored correction; most of the queue never ran.
    let shown: Value = serde_json::from_str(&crate::support::stdout(
        fx.path(),
        &["show", &fx.c3, "--format", "json"],
    ))
    .expect("show's JSON");
    let stored = shown["corrections"].as_array().map_or(0, Vec::len);
    let replies: Vec<Value> = lines
        .iter()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|message| message["id"].as_u64().is_some_and(|id| id >= first))
        .collect();
    assert!(
        replies.iter().all(|r| r["result"]["isError"] == false),
        "{replies:?}"
    );
    assert!(
        (1..=stored).contains(&replies.len()),
        "{} replies, {stored} stored",
        replies.len()
    );
    assert!(
        stored < QUEUED / 2,
        "{stored} of {QUEUED} queued corrections ran after the client closed stdin"
    );
    assert!(
        stderr.contains("queued calls dropped: the client closed the session"),
        "{stderr}"
    );
}
