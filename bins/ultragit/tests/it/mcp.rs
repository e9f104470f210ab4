//! `ultragit mcp` as a process: JSON-RPC over its stdin and stdout, as an MCP
//! client speaks it (initialize, tools/list, tools/call), on the annotated
//! fixture repository.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{Fixture, fixture, ultragit};

/// How long a test waits for one answer before it gives up (a hung server
/// fails the test instead of hanging it; no speed is asserted).
const HANG_GUARD: Duration = Duration::from_secs(120);

/// A running `ultragit mcp` and the lines it has written on stdout.
struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// Every stdout line seen so far.
    seen: Vec<String>,
    next_id: u64,
}

impl Session {
    /// Starts `ultragit mcp args…` in `dir` and initializes the session.
    fn start(dir: &Path, args: &[&str]) -> (Session, Value) {
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
        let stdin = child.stdin.take();
        let mut session = Session {
            child,
            stdin,
            lines,
            seen: Vec::new(),
            next_id: 1,
        };
        let init = session.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "ultragit-tests", "version": "1"}
            }),
        );
        session.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        (session, init)
    }

    fn send(&mut self, message: &Value) {
        self.send_raw(&message.to_string());
    }

    fn send_raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("the session is open");
        writeln!(stdin, "{line}").expect("write to ultragit mcp");
        stdin.flush().expect("flush");
    }

    /// Sends a request and returns its whole response (`result` or `error`).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.response(&json!(id))
    }

    /// The response with `id` (other messages are kept in `seen`).
    fn response(&mut self, id: &Value) -> Value {
        loop {
            let line = match self.lines.recv_timeout(HANG_GUARD) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => panic!("no answer to {id}: {:?}", self.seen),
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("ultragit mcp closed stdout: {:?}", self.seen)
                }
            };
            self.seen.push(line.clone());
            let message: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {line}"));
            // An error about a request whose id could not be read has none.
            if message.get("id").unwrap_or(&Value::Null) == id {
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
        let status = self.child.wait().expect("wait for ultragit mcp");
        self.seen.extend(self.lines.iter());
        let mut stderr = String::new();
        std::io::Read::read_to_string(
            self.child.stderr.as_mut().expect("piped stderr"),
            &mut stderr,
        )
        .expect("read stderr");
        (status.code().unwrap_or(-1), self.seen, stderr)
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
fn assert_only_json_rpc(lines: &[String]) {
    assert!(!lines.is_empty());
    for line in lines {
        let message: Value = serde_json::from_str(line).expect("JSON on stdout");
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
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
        (json!({}), "missing field `paths`"),
        (json!({"paths": "src/client.rs"}), "invalid type"),
        (
            json!({"paths": ["src/client.rs"], "format": "json"}),
            "unknown field `format`",
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
    // Malformed params: a JSON-RPC error; a line that is not JSON: ignored.
    session.send(
        &json!({"jsonrpc": "2.0", "id": 900, "method": "tools/call", "params": "src/client.rs"}),
    );
    let response = session.response(&Value::Null);
    assert_eq!(response["error"]["code"], -32600, "{response}");
    session.send_raw("this is not JSON");
    session.send(
        &json!({"jsonrpc": "2.0", "id": 901, "method": "tools/call", "params": {"arguments": {}}}),
    );
    let response = session.response(&json!(901));
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
    assert!(text(&result).contains("missing field `anchor`"), "{result}");
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
