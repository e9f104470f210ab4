//! `ultragit annotate`, `context` and `show` against a fake Chat Completions
//! server: notes stored, author context consumed, trivial commits skipped,
//! failures recorded, keys kept out of every output.

use std::path::PathBuf;

use serde_json::{Value, json};
use testkit::{
    FakeLlm, Flavor, Reply, TestRepo, assert_contains, assert_starts_with, call, line_containing,
};

use crate::support::{Run, region, ultragit_with, with, write_note};

/// The variable the tests' configuration names for the key.
pub const KEY_VAR: &str = "ULTRAGIT_TEST_KEY";
/// The key itself: it must never show in any output.
pub const KEY: &str = "sk-ultragit-test-4f9c2b7e1d";

/// `src/net.rs` before: `connect` (lines 1–3).
pub const NET_V1: &str = "\
pub fn connect(host: &str) -> bool {
    !host.is_empty()
}
";

/// `src/net.rs` after: `retry_connect` added (lines 5–7).
pub const NET_V2: &str = "\
pub fn connect(host: &str) -> bool {
    !host.is_empty()
}

pub fn retry_connect(host: &str, attempts: u32) -> bool {
    (0..attempts).any(|_| connect(host))
}
";

/// Points the repository's `[ultragit]` configuration at `server`.
pub fn configure(repo: &TestRepo, server: &FakeLlm) {
    for (key, value) in [
        ("ultragit.provider", "openai-chat".to_owned()),
        ("ultragit.baseUrl", server.base_url()),
        ("ultragit.model", "test-model".to_owned()),
        ("ultragit.apiKeyEnv", KEY_VAR.to_owned()),
    ] {
        repo.git(&["config", key, &value]);
    }
}

/// The `emit_annotation` arguments for `retry_connect`.
pub fn retry_region() -> Value {
    with(
        region(
            "src/net.rs",
            "retry_connect",
            (5, 7),
            "Tries to connect up to `attempts` times.",
        ),
        json!({
            "ast_anchor": {"type": "function", "name": "retry_connect", "signature": "pub fn retry_connect(host: &str, attempts: u32) -> bool"},
            "constraints": [{"text": "Never loops more than `attempts` times.", "source": "inferred"}]
        }),
    )
}

/// A model that reads the commit's details (the diff is in its first
/// message), emits the `retry_connect` region, and sums up.
pub fn script() -> Vec<Reply> {
    emits(retry_region(), "Adds a retrying connect.")
}

/// A model that reads the commit's details (the diff is in its first
/// message), then emits `region` with `summary` as the reply's text: the run
/// ends there, in two calls.
pub fn emits(region: Value, summary: &str) -> Vec<Reply> {
    vec![
        Reply::tool_calls(vec![call("c1", "get_commit_info", json!({}))]),
        Reply::tool_calls(vec![call("c2", "emit_annotation", region)]).with_text(summary),
    ]
}

/// A repository with `connect`, then `retry_connect` (HEAD).
pub fn repo() -> (TestRepo, String) {
    let repo = TestRepo::new();
    repo.commit_file("src/net.rs", NET_V1, "Add connect");
    let head = repo.commit_file("src/net.rs", NET_V2, "Add retry_connect");
    (repo, head)
}

/// [`repo`] configured for a server that answers [`script`].
fn configured() -> (TestRepo, String, FakeLlm) {
    let (repo, head) = repo();
    let server = FakeLlm::start(Flavor::OpenAiChat, script());
    configure(&repo, &server);
    (repo, head, server)
}

fn with_key(repo: &TestRepo, args: &[&str]) -> Run {
    ultragit_with(repo.path(), args, &[(KEY_VAR, KEY)])
}

/// `ultragit annotate` with the key, which must annotate `head` with one
/// inferred region.
fn annotate_one_region(repo: &TestRepo, head: &str) -> Run {
    let run = with_key(repo, &["annotate"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stdout,
        format!(
            "annotated {}: 1 region, 0 cross-cutting concerns (inferred)\n",
            &head[..7]
        )
    );
    run
}

/// Asserts that HEAD's note is a minimal one: no regions, and a summary
/// that starts with `summary`.
fn assert_minimal_note(repo: &TestRepo, summary: &str) {
    let note = note_of(repo, "HEAD");
    assert_eq!(note["regions"], json!([]));
    assert_starts_with(note["summary"].as_str().unwrap(), summary);
}

/// The stored note of `rev`, parsed, read with git itself.
pub fn note_of(repo: &TestRepo, rev: &str) -> Value {
    let text = repo
        .command()
        .args(["notes", "--ref=ultragit", "show", rev])
        .run_text()
        .expect("the commit has a note");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("the note is not JSON ({e}): {text}"))
}

fn state_file(repo: &TestRepo, name: &str) -> PathBuf {
    repo.path().join(".git/ultragit").join(name)
}

fn assert_no_key(run: &Run) {
    assert!(!run.stdout.contains(KEY), "{run:?}");
    assert!(!run.stderr.contains(KEY), "{run:?}");
}

#[test]
fn annotate_stores_a_valid_inferred_note() {
    let (repo, head, server) = configured();

    let run = annotate_one_region(&repo, &head);
    assert_eq!(run.stderr, "");

    let note = note_of(&repo, "HEAD");
    assert_eq!(note["$schema"], "ultragit/v1");
    assert_eq!(note["commit"], head.as_str());
    assert_eq!(note["context_level"], "inferred");
    assert_eq!(note["summary"], "Adds a retrying connect.");
    assert_eq!(note["provenance"]["operation"], "initial");
    let regions = note["regions"].as_array().unwrap();
    assert_eq!(regions.len(), 1);
    assert_eq!(regions[0]["file"], "src/net.rs");
    assert_eq!(regions[0]["ast_anchor"]["name"], "retry_connect");
    assert_eq!(regions[0]["lines"], json!({"start": 5, "end": 7}));

    let requests = server.requests();
    assert_eq!(requests.len(), 2, "the accepted emission ends the run");
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(requests[0].json()["model"], "test-model");
    assert!(!state_file(&repo, "failed.log").exists());

    // Round trip: `read` finds the annotated function.
    let run = with_key(
        &repo,
        &["read", "src/net.rs", "retry_connect", "--format", "json"],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    let regions = out["regions"].as_array().unwrap();
    assert_eq!(regions.len(), 1, "{out}");
    assert_eq!(regions[0]["commit_sha"], head.as_str());
    assert_eq!(regions[0]["region"]["ast_anchor"]["name"], "retry_connect");
    assert_eq!(
        regions[0]["region"]["intent"],
        "Tries to connect up to `attempts` times."
    );
}

#[test]
fn context_set_makes_the_next_annotation_enhanced_and_is_consumed() {
    let (repo, _, server) = configured();

    let run = with_key(
        &repo,
        &[
            "context",
            "set",
            "--task",
            "Retry broker connects",
            "--reasoning",
            "The broker drops the first attempt after a failover",
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let pending = state_file(&repo, "pending-context.json");
    assert!(pending.is_file());
    // `set` again updates one field and keeps the others.
    let run = with_key(&repo, &["context", "set", "--tags", "net, retry"]);
    assert_eq!(run.code, 0, "{run:?}");
    let shown = with_key(&repo, &["context", "show"]);
    assert_eq!(shown.code, 0, "{shown:?}");
    assert!(
        shown.stdout.starts_with(
            "task: Retry broker connects\n\
             reasoning: The broker drops the first attempt after a failover\n\
             tags: net, retry\n(from "
        ),
        "{shown:?}"
    );

    let run = with_key(&repo, &["annotate", "--sync"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.ends_with("(enhanced)\n"), "{run:?}");
    let note = note_of(&repo, "HEAD");
    assert_eq!(note["context_level"], "enhanced");
    assert_eq!(note["task"], "Retry broker connects");
    assert!(!pending.exists(), "the pending context is consumed");
    let system = server.requests()[0].json()["messages"][0]["content"].to_string();
    assert!(system.contains("failover"), "{system}");

    let shown = with_key(&repo, &["context", "show"]);
    assert!(
        shown.stdout.starts_with("no author context is pending"),
        "{shown:?}"
    );
}

#[test]
fn ultragit_task_in_the_environment_makes_it_enhanced() {
    let (repo, _, _server) = configured();
    let run = ultragit_with(
        repo.path(),
        &["annotate"],
        &[
            (KEY_VAR, KEY),
            ("ULTRAGIT_TASK", "Retry from the environment"),
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let note = note_of(&repo, "HEAD");
    assert_eq!(note["context_level"], "enhanced");
    assert_eq!(note["task"], "Retry from the environment");
}

#[test]
fn context_clear_forgets_the_pending_context() {
    let (repo, _) = repo();
    let run = with_key(&repo, &["context", "set", "--task", "T"]);
    assert_eq!(run.code, 0, "{run:?}");
    let run = ultragit_with(
        repo.path(),
        &["context", "clear"],
        &[("ULTRAGIT_TAGS", "x")],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, "cleared the pending author context\n");
    assert!(run.stderr.contains("ULTRAGIT_TAGS"), "{run:?}");
    assert!(!state_file(&repo, "pending-context.json").exists());
    let run = with_key(&repo, &["context", "clear"]);
    assert_eq!(run.stdout, "no author context was pending\n");
    // `set` needs a field.
    let run = with_key(&repo, &["context", "set"]);
    assert_eq!(run.code, 2, "{run:?}");
}

#[test]
fn a_lockfile_only_commit_is_skipped_without_calling_the_model() {
    let (repo, _) = repo();
    let lock = repo.commit_file("Cargo.lock", "# lock\n", "Update dependencies");
    let server = FakeLlm::start(Flavor::OpenAiChat, script());
    configure(&repo, &server);
    let run = with_key(&repo, &["annotate", "--commit", &lock]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stdout,
        format!("skipped {}: only lockfiles changed\n", &lock[..7])
    );
    // Without a key, too: a trivial commit needs no model.
    let run = ultragit_with(repo.path(), &["annotate"], &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.starts_with("skipped"), "{run:?}");
    assert!(server.requests().is_empty());
    assert!(!state_file(&repo, "failed.log").exists());
}

#[test]
fn a_provider_error_fails_and_is_recorded_without_the_key() {
    let (repo, head) = repo();
    let server = FakeLlm::start(Flavor::OpenAiChat, vec![Reply::error(400, "bad model")]);
    configure(&repo, &server);
    with_key(&repo, &["context", "set", "--task", "Kept on failure"]);

    let run = with_key(&repo, &["annotate", "--verbose"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.stdout, "");
    let last = run.stderr.lines().last().unwrap_or_default();
    assert!(last.starts_with("error: annotating"), "{run:?}");
    assert!(run.stderr.lines().count() > 1, "--verbose traces: {run:?}");
    assert!(run.stderr.contains("bad model"), "{run:?}");
    assert_no_key(&run);

    let log = std::fs::read_to_string(state_file(&repo, "failed.log")).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 1, "{log}");
    assert!(lines[0].contains(&head), "{log}");
    assert!(lines[0].contains("bad model"), "{log}");
    assert!(!log.contains(KEY));
    assert!(
        state_file(&repo, "pending-context.json").is_file(),
        "a failed annotation does not consume the context"
    );
    let notes = repo
        .command()
        .args(["notes", "--ref=ultragit", "list"])
        .run_unchecked()
        .unwrap();
    assert!(notes.stdout.is_empty(), "no note is stored");
}

#[test]
fn a_missing_key_names_its_variable() {
    let (repo, head, server) = configured();
    let run = ultragit_with(repo.path(), &["annotate"], &[]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        run.stderr,
        format!(
            "error: the API key is not set: export {KEY_VAR} (or set ultragit.apiKeyEnv; `none` for a server without keys)\n"
        )
    );
    assert!(server.requests().is_empty());
    let log = std::fs::read_to_string(state_file(&repo, "failed.log")).unwrap();
    assert!(log.contains(&head) && log.contains(KEY_VAR), "{log}");
}

#[test]
fn flags_override_the_configuration() {
    let (repo, _) = repo();
    let server = FakeLlm::start(Flavor::OpenAiChat, script());
    // The configuration names a provider that does not exist, at a dead address
    // with another key: the flags override all of it.
    for (key, value) in [
        ("ultragit.provider", "bogus-provider"),
        ("ultragit.baseUrl", "http://127.0.0.1:9/v1"),
        ("ultragit.apiKeyEnv", "NO_SUCH_KEY_VARIABLE"),
    ] {
        repo.git(&["config", key, value]);
    }
    let base_url = server.base_url();
    let run = ultragit_with(
        repo.path(),
        &[
            "annotate",
            "--provider",
            "openai-chat",
            "--base-url",
            &base_url,
            "--model",
            "flag-model",
            "--api-key-env",
            "none",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let request = &server.requests()[0];
    assert_eq!(request.json()["model"], "flag-model");
    assert_eq!(request.header("authorization"), None, "no key is sent");

    let run = ultragit_with(repo.path(), &["annotate", "--provider", "gemini"], &[]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("openai-responses"), "{run:?}");
}

#[test]
fn show_prints_the_annotation_pretty_or_as_json() {
    let (repo, head, _server) = configured();
    assert_eq!(with_key(&repo, &["annotate"]).code, 0);

    let run = with_key(&repo, &["show"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_starts_with(&run.stdout, &format!("commit     {head}\n"));
    assert!(
        run.stdout.contains(
            "src/net.rs retry_connect (function, lines 5-7)\n  intent: Tries to connect up to `attempts` times.\n"
        ),
        "{run:?}"
    );
    assert!(run.stdout.contains("summary    Adds a retrying connect.\n"));

    let run = with_key(&repo, &["show", "HEAD", "--format", "json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let shown: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(shown, note_of(&repo, "HEAD"));

    let run = with_key(&repo, &["show", "HEAD~1"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.stdout, "");
    assert!(run.stderr.contains("has no ultragit annotation"), "{run:?}");

    let run = with_key(&repo, &["show", "no-such-rev"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("no-such-rev"), "{run:?}");
}

#[test]
fn show_prints_a_malformed_note_raw() {
    let (repo, head) = repo();
    write_note(&repo, &head, "{\"$schema\": \"ultragit/v1\", oops");
    let run = with_key(&repo, &["show"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.stdout, "{\"$schema\": \"ultragit/v1\", oops\n");
    assert_contains(&run.stderr, "is not a valid ultragit/v1 annotation");
}

#[test]
fn annotate_outside_a_repository_fails() {
    // The temporary directory holding a test repository is no repository.
    let repo = TestRepo::new();
    let outside = repo.path().parent().unwrap();
    let run = ultragit_with(outside, &["annotate"], &[]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_starts_with(&run.stderr, "error: not a git repository");
}

#[test]
fn a_declined_commit_exits_0_with_its_note_and_no_failure() {
    let (repo, _) = repo();
    let bump = repo.commit_file("VERSION", "1.1\n", "Bump the version");
    let server = FakeLlm::start(
        Flavor::OpenAiChat,
        vec![Reply::tool_calls(vec![call(
            "d",
            "decline_annotation",
            json!({"reason": "A version bump: nothing a future modifier needs."}),
        )])],
    );
    configure(&repo, &server);
    let run = with_key(&repo, &["annotate"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stdout,
        format!(
            "declined {}: the model found nothing semantic to record: A version bump: \
             nothing a future modifier needs. (a note records it)\n",
            &bump[..7]
        )
    );
    assert_eq!(run.stderr, "");
    assert_minimal_note(
        &repo,
        "Not annotated: the model found nothing semantic to record",
    );
    assert!(!state_file(&repo, "failed.log").exists());
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn a_too_large_commit_is_skipped_with_a_note_and_needs_no_key() {
    let (repo, head) = repo();
    let server = FakeLlm::start(Flavor::OpenAiChat, script());
    configure(&repo, &server);
    // HEAD changes four lines: more than two is too large here, and such
    // commits are skipped (the default is chunk).
    repo.git(&["config", "ultragit.maxDiffLines", "2"]);
    repo.git(&["config", "ultragit.largeCommits", "skip"]);
    let expected = format!(
        "skipped {}: too large: 4 changed lines, more than ultragit.maxDiffLines (2); set \
         ultragit.largeCommits = chunk to annotate such commits in chunks (a note records it)\n",
        &head[..7]
    );
    // No key in the environment: no model is needed.
    let run = ultragit_with(repo.path(), &["annotate"], &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, expected);
    assert_eq!(run.stderr, "");
    assert_minimal_note(
        &repo,
        "Not annotated: skipped as too large: 4 changed lines",
    );
    // With a key, the same: the model is never asked.
    let run = with_key(&repo, &["annotate"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, expected);
    assert!(server.requests().is_empty());
    assert!(!state_file(&repo, "failed.log").exists());
    // In chunks, the model is asked.
    repo.git(&["config", "ultragit.largeCommits", "chunk"]);
    let run = with_key(&repo, &["annotate"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_starts_with(&run.stdout, &format!("annotated {}: 1 region", &head[..7]));
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn max_calls_caps_the_model_calls_and_names_the_limit() {
    let (repo, head) = repo();
    let server = FakeLlm::start(Flavor::OpenAiChat, Vec::new());
    // A model that reads for ever.
    server.respond_with(|request| {
        let n = request.json()["messages"].as_array().map_or(0, Vec::len);
        Reply::tool_calls(vec![call(&format!("r{n}"), "get_commit_info", json!({}))])
    });
    configure(&repo, &server);
    let run = with_key(&repo, &["annotate", "--max-calls", "3"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(server.requests().len(), 3);
    assert_contains(
        &run.stderr,
        "reached the cap of 3 model calls for this commit (ultragit.maxCalls, --max-calls)",
    );
    let log = std::fs::read_to_string(state_file(&repo, "failed.log")).unwrap();
    assert!(
        log.contains(&head) && log.contains("cap of 3 model calls"),
        "{log}"
    );
    // git config sets it too; the flag wins.
    repo.git(&["config", "ultragit.maxCalls", "2"]);
    let run = with_key(&repo, &["annotate"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(server.requests().len(), 3 + 2);
    let run = with_key(&repo, &["annotate", "--max-calls", "4"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(server.requests().len(), 3 + 2 + 4);
    let run = with_key(&repo, &["annotate", "--max-calls", "0"]);
    assert_eq!(run.code, 2, "{run:?}");
}

#[test]
fn tool_use_off_in_git_config_asks_for_one_structured_answer() {
    let (repo, head) = repo();
    let answer = json!({
        "summary": "Adds a retrying connect.",
        "regions": [retry_region()],
        "cross_cutting": []
    });
    let server = FakeLlm::start(Flavor::OpenAiChat, vec![Reply::text(&answer.to_string())]);
    configure(&repo, &server);
    repo.git(&["config", "ultragit.toolUse", "off"]);
    annotate_one_region(&repo, &head);
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert!(
        requests[0].json().get("tools").is_none(),
        "no tools offered"
    );
    assert_contains(
        &requests[0].json()["messages"].to_string(),
        "matches this JSON Schema",
    );
    assert_eq!(
        note_of(&repo, "HEAD")["summary"],
        "Adds a retrying connect."
    );
}

#[test]
fn verbose_ends_with_the_runs_turns_and_tokens() {
    let (repo, _, server) = configured();
    let run = with_key(&repo, &["annotate", "-v"]);
    assert_eq!(run.code, 0, "{run:?}");
    let stats = line_containing(&run.stderr, "annotate.stats");
    // Two calls, as the fake reports each: 11 tokens in, 7 out.
    assert_contains(stats, "turns=2 input_tokens=22 output_tokens=14");
    assert_contains(stats, "sent_tokens_estimated=");
    assert_contains(stats, "regions=1");
    assert_eq!(server.requests().len(), 2);
    assert_no_key(&run);
}
