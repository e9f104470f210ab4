//! Running the binary, writing notes, and the annotated fixture repository.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

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
    spawn(dir, args, env, None)
}

/// Runs `ultragit args…` in `dir` with `input` on its standard input.
pub fn ultragit_input(dir: &Path, args: &[&str], input: &str) -> Run {
    spawn(dir, args, &[], Some(input))
}

fn spawn(dir: &Path, args: &[&str], env: &[(&str, &str)], input: Option<&str>) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ultragit"));
    cmd.args(args).current_dir(dir);
    testkit::isolate(&mut cmd).env_remove(crate::annotate::KEY_VAR);
    cmd.envs(env.iter().copied());
    cmd.stdin(if input.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("run the ultragit binary");
    if let Some(input) = input {
        let mut stdin = child.stdin.take().expect("stdin is piped");
        stdin
            .write_all(input.as_bytes())
            .expect("write ultragit's input");
    }
    let out = child.wait_with_output().expect("wait for ultragit");
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

/// The fixture's four notes (`ultragit/v1`), one per commit in order, with the
/// commits (their own and those they relate to) named `c1`…`c4`.
const FIXTURE_NOTES: &str = include_str!("data/fixture_notes.json");

/// Replaces every `"commit"` field of `value` that holds one of the names in
/// `commits` with that commit's id.
fn name_commits(value: &mut Value, commits: &[(&str, &String)]) {
    match value {
        Value::Object(fields) => {
            for (key, field) in fields.iter_mut() {
                let named = field
                    .as_str()
                    .and_then(|name| commits.iter().find(|(n, _)| *n == name));
                match named {
                    Some((_, id)) if key == "commit" => *field = Value::from(id.as_str()),
                    _ => name_commits(field, commits),
                }
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|item| name_commits(item, commits)),
        _ => {}
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

    let notes: Vec<Value> =
        serde_json::from_str(FIXTURE_NOTES).expect("the fixture's notes are a JSON array");
    let commits = [("c1", &c1), ("c2", &c2), ("c3", &c3), ("c4", &c4)];
    for mut note in notes {
        name_commits(&mut note, &commits);
        annotate(&repo, &note);
    }

    Fixture {
        repo,
        c1,
        c2,
        c3,
        c4,
    }
}

/// A region of an `ultragit/v1` note on the function `name` (add more fields
/// with [`with`]).
pub fn region(file: &str, name: &str, (start, end): (u32, u32), intent: &str) -> Value {
    json!({
        "file": file,
        "ast_anchor": {"type": "function", "name": name},
        "lines": {"start": start, "end": end},
        "intent": intent
    })
}

/// `value` (an object) with the fields of `more` added.
pub fn with(mut value: Value, more: Value) -> Value {
    let Value::Object(more) = more else {
        panic!("not an object: {more}")
    };
    value
        .as_object_mut()
        .expect("an object to add fields to")
        .extend(more);
    value
}

/// Whether `commit` has an ultragit note.
pub fn has_note(repo: &TestRepo, commit: &str) -> bool {
    repo.command()
        .args(["notes", "--ref=ultragit", "list", commit])
        .run_unchecked()
        .expect("run git notes list")
        .status
        .success()
}

/// The text at JSON `pointer` (`/ast_anchor/name`) in every element of the
/// array `items`.
pub fn texts<'a>(items: &'a Value, pointer: &str) -> Vec<&'a str> {
    let items = items
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {items}"));
    items
        .iter()
        .map(|item| item.pointer(pointer).and_then(Value::as_str).expect("text"))
        .collect()
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
