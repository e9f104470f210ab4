//! Running the binary, writing notes, and the annotated fixture repository.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use testkit::TestRepo;

/// What a run of the binary left behind.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `ultragit args…` in `dir` with a hermetic environment.
pub fn ultragit(dir: &Path, args: &[&str]) -> Run {
    ultragit_with(dir, args, &[])
}

/// Runs `ultragit args…` in `dir` with a hermetic environment plus `env`.
pub fn ultragit_with(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ultragit"));
    cmd.args(args).current_dir(dir);
    testkit::isolate(&mut cmd).env_remove(crate::annotate::KEY_VAR);
    cmd.envs(env.iter().copied());
    let out = cmd.output().expect("run the ultragit binary");
    let text = |b: &[u8]| String::from_utf8(b.to_vec()).expect("UTF-8 output");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: text(&out.stdout),
        stderr: text(&out.stderr),
    }
}

/// Runs `ultragit args…` in `dir`, expects success, returns stdout.
pub fn stdout(dir: &Path, args: &[&str]) -> String {
    let run = ultragit(dir, args);
    assert_eq!(run.code, 0, "ultragit {args:?} failed: {run:?}");
    run.stdout
}

/// Writes `text` as the ultragit note of `commit`, with gitctx, as the writing
/// agent does.
pub fn write_note(repo: &TestRepo, commit: &str, text: &str) {
    gitctx::Repo::discover(repo.path())
        .expect("open the test repository")
        .notes("refs/notes/ultragit")
        .expect("the notes ref name is valid")
        .write(commit.parse().expect("a full commit id"), text)
        .expect("write a note");
}

/// Writes `annotation` (an `ultragit/v1` document) on its commit.
pub fn annotate(repo: &TestRepo, annotation: &Value) {
    let commit = annotation["commit"]
        .as_str()
        .expect("the note names its commit");
    write_note(repo, commit, &annotation.to_string());
}

/// Every note parses as `ultragit/v1` and `read` runs over the file without
/// warning about a malformed note.
pub fn assert_notes_readable(repo: &TestRepo, file: &str) {
    let listed = repo.git(&["notes", "--ref=ultragit", "list"]);
    for line in listed.lines() {
        let commit = line.split_whitespace().nth(1).unwrap();
        let text = repo.git(&["notes", "--ref=ultragit", "show", commit]);
        ultragit_schema::Annotation::from_json(&text)
            .unwrap_or_else(|e| panic!("the note of {commit} does not parse: {e}"));
    }
    let run = ultragit(repo.path(), &["read", file]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!run.stderr.contains("malformed"), "{run:?}");
}

/// An `ultragit/v1` document for `commit`.
pub fn note(
    commit: &str,
    timestamp: &str,
    level: &str,
    operation: &str,
    summary: &str,
    regions: Vec<Value>,
    cross_cutting: Vec<Value>,
) -> Value {
    json!({
        "$schema": "ultragit/v1",
        "commit": commit,
        "timestamp": timestamp,
        "task": null,
        "summary": summary,
        "context_level": level,
        "regions": regions,
        "cross_cutting": cross_cutting,
        "provenance": {"operation": operation, "original_annotations_preserved": false}
    })
}

/// The fixture's Rust file as first committed (`c1`):
///
/// ```text
///  1 /// A connection to the broker.
///  2 pub struct Client {            Client             1–5
///  7 impl Client {
///  8     pub fn new(…) -> Self {    Client::new        8–10
/// 12     pub fn connect(…) -> bool  Client::connect   12–14
/// 16     pub fn send(…) -> usize    Client::send      16–18
/// 21 pub fn parse_frame(…)          parse_frame       21–23
/// ```
pub const CLIENT_V1: &str = "\
/// A connection to the broker.
pub struct Client {
    host: String,
    retries: u32,
}

impl Client {
    pub fn new(host: &str) -> Self {
        Client { host: host.to_owned(), retries: 3 }
    }

    pub fn connect(&self) -> bool {
        !self.host.is_empty()
    }

    pub fn send(&self, payload: &[u8]) -> usize {
        payload.len()
    }
}

pub fn parse_frame(raw: &[u8]) -> Option<u32> {
    raw.first().map(|b| u32::from(*b))
}
";

/// `c3`: connect retries (line 13 only changes).
fn client_v3() -> String {
    CLIENT_V1.replace(
        "!self.host.is_empty()",
        "(0..self.retries).any(|_| !self.host.is_empty())",
    )
}

/// `c4`: send caps its payload (line 17), parse_frame guards empty input (new
/// lines 22–24; the function is now 21–26, 26 lines in all).
fn client_v4() -> String {
    client_v3()
        .replace("payload.len()\n", "payload.len().min(4096)\n")
        .replace(
            "    raw.first()",
            "    if raw.is_empty() {\n        return None;\n    }\n    raw.first()",
        )
}

/// The fixture's Python file (`c2`): `backoff_delay` 4–6, `retry` 9–14.
pub const PROBE: &str = r#"import time


def backoff_delay(attempt, base=0.5):
    """Seconds to wait before retry number `attempt`."""
    return min(base * (2 ** attempt), 30.0)


def retry(connect, attempts=3):
    for attempt in range(attempts):
        if connect():
            return True
        time.sleep(backoff_delay(attempt))
    return False
"#;

/// The annotated fixture repository and its four commits.
#[derive(Debug)]
pub struct Fixture {
    pub repo: TestRepo,
    /// Adds `src/client.rs` (inferred, initial).
    pub c1: String,
    /// Adds `tools/probe.py` (enhanced; `retry` depends on `Client::connect`).
    pub c2: String,
    /// Makes `connect` retry (enhanced; related to c1's connect, cross-cutting).
    pub c3: String,
    /// Caps `send`, guards `parse_frame` (inferred, amend).
    pub c4: String,
}

impl Fixture {
    pub fn path(&self) -> &Path {
        self.repo.path()
    }
}

/// Builds the fixture: four pinned commits, each with its note. HEAD's commit
/// time is 2024-01-01T00:03:00Z; the notes are dated from ten months to one day
/// before it, so recency spreads from about 0.3 to 1.0.
pub fn fixture() -> Fixture {
    let repo = TestRepo::new();
    let c1 = repo.commit_file("src/client.rs", CLIENT_V1, "Add the broker client");
    let c2 = repo.commit_file(
        "tools/probe.py",
        PROBE,
        "Add a probe script for broker outages",
    );
    let c3 = repo.commit_file(
        "src/client.rs",
        client_v3(),
        "Retry connect a bounded number of times",
    );
    let c4 = repo.commit_file(
        "src/client.rs",
        client_v4(),
        "Cap send and guard parse_frame",
    );

    annotate(
        &repo,
        &note(
            &c1,
            "2023-03-01T09:00:00Z",
            "inferred",
            "initial",
            "Adds a minimal broker client and a frame parser.",
            vec![
                json!({
                    "file": "src/client.rs",
                    "ast_anchor": {"type": "struct", "name": "Client"},
                    "lines": {"start": 1, "end": 5},
                    "intent": "Holds the broker host and the retry budget of one connection.",
                    "constraints": [{"text": "The host is never changed after construction.", "source": "inferred"}]
                }),
                json!({
                    "file": "src/client.rs",
                    "ast_anchor": {"type": "method", "name": "Client::new", "signature": "pub fn new(host: &str) -> Self"},
                    "lines": {"start": 8, "end": 10},
                    "intent": "Builds a client for a broker host with the default retry budget of 3.",
                    "constraints": [{"text": "Never fails: validation happens in connect().", "source": "inferred"}]
                }),
                json!({
                    "file": "src/client.rs",
                    "ast_anchor": {"type": "method", "name": "Client::connect", "signature": "pub fn connect(&self) -> bool"},
                    "lines": {"start": 12, "end": 14},
                    "intent": "Reports whether the client can reach its broker; an empty host never connects.",
                    "constraints": [{"text": "Returns false, never panics, for an empty host.", "source": "inferred"}]
                }),
                json!({
                    "file": "src/client.rs",
                    "ast_anchor": {"type": "method", "name": "Client::send", "signature": "pub fn send(&self, payload: &[u8])"},
                    "lines": {"start": 16, "end": 18},
                    "intent": "Sends a payload and returns the number of bytes written.",
                    "constraints": [{"text": "Returns the byte count, never an error.", "source": "inferred"}]
                }),
                json!({
                    "file": "src/client.rs",
                    "ast_anchor": {"type": "function", "name": "parse_frame", "signature": "pub fn parse_frame(raw: &[u8]) -> Option<u32>"},
                    "lines": {"start": 21, "end": 23},
                    "intent": "Reads the frame length from the first byte.",
                    "constraints": [{"text": "Returns None when there is no first byte.", "source": "inferred"}]
                }),
            ],
            vec![],
        ),
    );

    let mut probe = note(
        &c2,
        "2023-09-01T14:30:00Z",
        "enhanced",
        "initial",
        "Adds a probe script that retries the broker connection with backoff.",
        vec![
            json!({
                "file": "tools/probe.py",
                "ast_anchor": {"type": "function", "name": "backoff_delay", "signature": "def backoff_delay(attempt, base=0.5)"},
                "lines": {"start": 4, "end": 6},
                "intent": "Exponential backoff in seconds, capped at 30.",
                "reasoning": "Capped so that a long outage never stalls the probe for minutes.",
                "constraints": [{"text": "The 30-second cap matches the broker's session timeout.", "source": "author"}],
                "tags": ["retry"]
            }),
            json!({
                "file": "tools/probe.py",
                "ast_anchor": {"type": "function", "name": "retry", "signature": "def retry(connect, attempts=3)"},
                "lines": {"start": 9, "end": 14},
                "intent": "Calls connect until it succeeds or the attempts run out.",
                "constraints": [{"text": "Gives up after `attempts` tries; never loops forever.", "source": "author"}],
                "semantic_dependencies": [{"file": "src/client.rs", "anchor": "Client::connect", "nature": "treats a false return as retryable, so connect must not block"}],
                "tags": ["retry", "probe"]
            }),
        ],
        vec![],
    );
    probe["task"] = json!("Add a probe script for broker outages");
    annotate(&repo, &probe);

    let mut retries = note(
        &c3,
        "2023-12-20T08:00:00Z",
        "enhanced",
        "initial",
        "Makes connect retry up to the client's retry budget.",
        vec![json!({
            "file": "src/client.rs",
            "ast_anchor": {"type": "method", "name": "Client::connect", "signature": "pub fn connect(&self) -> bool"},
            "lines": {"start": 12, "end": 14},
            "intent": "Tries to reach the broker up to `retries` times before giving up.",
            "reasoning": "The broker drops the first attempt after a failover. Retrying in-process is cheaper than surfacing the error to every caller. A backoff sleep was rejected: connect must stay non-blocking.",
            "constraints": [
                {"text": "Never retry more than `retries` times: the broker bans clients that reconnect in bursts.", "source": "author"},
                {"text": "Returns false rather than panicking for an empty host.", "source": "inferred"}
            ],
            "semantic_dependencies": [{"file": "tools/probe.py", "anchor": "backoff_delay", "nature": "the probe's schedule assumes connect itself never sleeps"}],
            "related_annotations": [{"commit": c1, "anchor": "Client::connect", "relationship": "replaces the single-attempt connect written here"}],
            "tags": ["networking", "retry"],
            "risk_notes": "Raising `retries` multiplies broker load during an outage. Keep it at 3 or below."
        })],
        vec![json!({
            "description": "Retry budgets must agree between the client and the probe script",
            "regions": ["src/client.rs:Client::connect", "tools/probe.py:retry"],
            "nature": "shared constant"
        })],
    );
    retries["task"] = json!("Retry connect a bounded number of times");
    annotate(&repo, &retries);

    annotate(
        &repo,
        &note(
            &c4,
            "2023-12-31T12:00:00Z",
            "inferred",
            "amend",
            "Caps send at 4096 bytes and makes parse_frame reject empty input.",
            vec![
                json!({
                    "file": "src/client.rs",
                    "ast_anchor": {"type": "method", "name": "Client::send", "signature": "pub fn send(&self, payload: &[u8]) -> usize"},
                    "lines": {"start": 16, "end": 18},
                    "intent": "Sends at most 4096 bytes per call and reports how many were sent.",
                    "constraints": [{"text": "Never reports more than 4096 bytes.", "source": "inferred"}],
                    "tags": ["networking"],
                    "risk_notes": "Callers that ignore the returned count lose the tail of large payloads."
                }),
                json!({
                    "file": "src/client.rs",
                    "ast_anchor": {"type": "function", "name": "parse_frame", "signature": "pub fn parse_frame(raw: &[u8]) -> Option<u32>"},
                    "lines": {"start": 21, "end": 26},
                    "intent": "Reads the frame length from the first byte; empty input has no frame.",
                    "constraints": [{"text": "Returns None for empty input instead of panicking.", "source": "inferred"}],
                    "related_annotations": [{"commit": c1, "anchor": "parse_frame", "relationship": "adds the empty-input guard to"}]
                }),
            ],
            vec![],
        ),
    );

    Fixture {
        repo,
        c1,
        c2,
        c3,
        c4,
    }
}

/// `ultragit args… --format json` in `dir`: expects success and returns the
/// document.
pub fn json_stdout(dir: &Path, args: &[&str]) -> Value {
    json_run(dir, args, 0)
}

/// `ultragit args… --format json` in `dir`, expected to fail: exit 1, nothing
/// on stderr; returns the JSON error object printed on stdout.
pub fn json_error(dir: &Path, args: &[&str]) -> Value {
    json_run(dir, args, 1)
}

fn json_run(dir: &Path, args: &[&str], code: i32) -> Value {
    let run = ultragit(dir, &[args, &["--format", "json"]].concat());
    assert!(run.code == code && run.stderr.is_empty(), "{run:?}");
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {run:?}"))
}

/// The string `field` of every element of the array `list`.
pub fn texts<'v>(list: &'v Value, field: &str) -> Vec<&'v str> {
    let items = list.as_array().expect("an array");
    items
        .iter()
        .filter_map(|item| item[field].as_str())
        .collect()
}

/// Annotates `commit` with `regions`: an enhanced, initial note written at
/// `timestamp`.
pub fn annotate_regions(repo: &TestRepo, commit: &str, timestamp: &str, regions: Vec<Value>) {
    let summary = format!("{} regions.", regions.len());
    let document = note(
        commit,
        timestamp,
        "enhanced",
        "initial",
        &summary,
        regions,
        vec![],
    );
    annotate(repo, &document);
}

/// Asserts that `text` contains each of `expected`.
pub fn assert_contains(text: &str, expected: &[&str]) {
    for fragment in expected {
        assert!(text.contains(fragment), "{fragment:?} in {text}");
    }
}
