//! The grounded first turn and the token budget: every request within the
//! configured context window, over real HTTP against the fake server.

use serde_json::json;
use testkit::{FakeLlm, Flavor, Reply, TestRepo, assert_contains, call, line_containing};
use ultragit_annotate::AnnotateConfig;

use crate::support::{chat, context, emit, provider, region, run_agent};

/// A commit that changes 20 lines in each of 20 files of 300 lines.
fn twenty_files() -> TestRepo {
    let repo = TestRepo::new();
    let file = |i: usize, version: &str| -> String {
        (0..300)
            .map(|n| {
                if n % 15 == 0 {
                    format!("// file {i} line {n} holds the {version} value of the tuned table\n")
                } else {
                    format!("// file {i} line {n} stays as it was in every version\n")
                }
            })
            .collect()
    };
    for i in 0..20 {
        repo.write(&format!("src/m{i:02}.txt"), file(i, "old"));
    }
    repo.commit_all("twenty tables");
    for i in 0..20 {
        repo.write(&format!("src/m{i:02}.txt"), file(i, "new"));
    }
    repo.commit_all("Retune every table");
    repo
}

/// The estimated tokens of a request body (bytes / 4).
fn body_tokens(body: &[u8]) -> usize {
    body.len().div_ceil(4)
}

/// Checks the rule the runner keeps: each request's tokens (its body, bytes /
/// 4) plus the answer it asks for fit in `window`; an answer asks for spec
/// 000's 4,096 tokens when the window leaves room, and never less than an
/// eighth of the window (what the input budgets reserve).
fn assert_within(requests: &[testkit::RecordedRequest], window: usize) {
    assert!(!requests.is_empty());
    for (i, request) in requests.iter().enumerate() {
        let tokens = body_tokens(&request.body);
        let answer = request.json()["max_tokens"].as_u64().unwrap_or(0) as usize;
        assert!(
            answer >= (window / 8).min(4_096) && answer <= 4_096,
            "request {i} asks for {answer}"
        );
        assert!(
            tokens + answer <= window,
            "request {i} holds about {tokens} tokens and asks for {answer}: more than the \
             {window}-token window"
        );
    }
}

#[test]
fn every_request_stays_within_a_small_window_on_a_twenty_file_commit() {
    let repo = twenty_files();
    let ctx = context(&repo, "HEAD", None);
    assert_eq!(ctx.changed_lines(), 800);
    let server = FakeLlm::start(Flavor::OpenAiChat, Vec::new());
    // A greedy model: it reads whole files (and the diff) five times over,
    // then emits one region for the first file it was given, then ends.
    server.respond_with(|request| {
        let body = request.json();
        let tools = body["tools"].as_array().map_or(0, Vec::len);
        if tools == 1 {
            return Reply::text("none");
        }
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        let opening = messages[1]["content"].as_str().unwrap_or("").to_owned();
        let file = opening
            .split("  src/")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .map(|name| format!("src/{name}"))
            .unwrap_or_default();
        let results = messages.iter().filter(|m| m["role"] == "tool").count();
        match results {
            0..=9 => Reply::tool_calls(vec![
                call(
                    &format!("f{results}"),
                    "get_file_content",
                    json!({"path": file}),
                ),
                call(&format!("d{results}"), "get_diff", json!({})),
            ]),
            10 | 11 => emit(
                &format!("e{results}"),
                region(&file, "config", "tuned table", (1, 2), "the tuned table"),
            ),
            _ => Reply::text("Retunes every table."),
        }
    });
    let provider = provider(&server, llm::ProviderKind::OpenAiChat, true);
    let config = AnnotateConfig {
        context_window: Some(8_192),
        ..AnnotateConfig::default()
    };
    let annotated = run_agent(&ctx, provider.as_ref(), &config).unwrap();
    assert!(!annotated.annotation.regions.is_empty());
    let requests = server.requests();
    assert!(requests.len() > 8, "{} requests", requests.len());
    assert_within(&requests, 8_192);
    let largest = requests.iter().map(|r| body_tokens(&r.body)).max().unwrap();
    assert!(largest > 5_000, "the window was under pressure: {largest}");
    // Results were cut with a note naming how to read on, and old ones dropped.
    let all: String = requests
        .iter()
        .map(|r| String::from_utf8_lossy(&r.body).into_owned())
        .collect();
    assert_contains(&all, "call get_file_content with path=src/m");
    assert_contains(&all, "and offset=");
    assert_contains(
        &all,
        "dropped to keep the conversation within the context window",
    );
    assert!(annotated.spent.sent_tokens > 0);
}

#[test]
fn the_first_message_carries_the_commit_and_names_the_tool_when_the_diff_is_too_large() {
    let repo = twenty_files();
    let ctx = context(&repo, "HEAD", None);
    // Small enough for one chunk: the first five files only.
    let files: Vec<String> = ctx.paths().into_iter().take(5).collect();
    let small = ultragit_annotate::prompt::first_message(&ctx, &files, None, 100_000, 100_000);
    assert_contains(&small, "Message:\nRetune every table");
    assert_contains(&small, "Files changed (5 files, +100 -100):");
    assert_contains(&small, "  src/m00.txt (modified, +20 -20)");
    assert_contains(&small, "Diff (line numbers are the file's at this commit):");
    assert_contains(&small, "=== src/m00.txt (modified, +20 -20) ===");
    let tight = ultragit_annotate::prompt::first_message(&ctx, &files, None, 100, 100_000);
    assert_contains(&tight, "Message:\nRetune every table");
    assert_contains(&tight, "  src/m04.txt (modified, +20 -20)");
    assert!(!tight.contains("=== src/m00.txt"), "{tight}");
    assert_contains(
        &tight,
        "is larger than this conversation's diff budget (100 tokens): call get_diff_for_file",
    );
}

#[test]
fn a_long_message_and_a_long_file_list_are_cut_to_the_first_messages_share() {
    let repo = TestRepo::new();
    let file = |i: usize, value: &str| format!("// module {i}\nconst VALUE: u32 = {value};\n");
    for i in 0..60 {
        repo.write(
            &format!("src/a/rather/deep/path/module_{i:03}.rs"),
            file(i, "1"),
        );
    }
    repo.commit_all("sixty modules");
    for i in 0..60 {
        repo.write(
            &format!("src/a/rather/deep/path/module_{i:03}.rs"),
            file(i, "2"),
        );
    }
    let body: String = (0..1_500)
        .map(|n| format!("Line {n} of a pasted log that explains nothing.\n"))
        .collect();
    repo.commit_all(&format!(
        "Raise every value\n\n{body}The end of the message."
    ));
    let ctx = context(&repo, "HEAD", None);
    let files = ctx.paths();
    let message = ultragit_annotate::prompt::first_message(&ctx, &files, None, 100_000, 1_000);
    // The share is 4,000 bytes; the diff is on top of it.
    let (head, diff) = message.split_once("\nDiff (").unwrap();
    assert!(head.len() <= 4_000 + 400, "{} bytes", head.len());
    assert_contains(head, "Message:\nRaise every value");
    assert_contains(head, "The end of the message.");
    assert_contains(head, "call get_commit_info to read more");
    assert_contains(head, "Files changed (60 files, +60 -60):");
    assert_contains(
        head,
        "  src/a/rather/deep/path/module_000.rs (modified, +1 -1)",
    );
    assert_contains(head, "more files: get_diff lists them all");
    assert!(!head.contains("module_059.rs ("), "{head}");
    assert_contains(diff, "=== src/a/rather/deep/path/module_059.rs");
}

#[test]
fn a_huge_commit_message_and_author_context_stay_within_a_small_window() {
    let repo = TestRepo::new();
    repo.commit_file("src/lib.rs", "pub fn a() -> u32 {\n    1\n}\n", "a");
    let body: String = (0..1_500)
        .map(|n| format!("Line {n} of a pasted build log that explains nothing.\n"))
        .collect();
    repo.commit_file(
        "src/lib.rs",
        "pub fn a() -> u32 {\n    2\n}\n",
        &format!("Raise a to two\n\n{body}"),
    );
    let reasoning = "The caller counts from two now. ".repeat(3_000);
    let author = ultragit_annotate::AuthorContext {
        task: Some("Count from two".to_owned()),
        reasoning: Some(reasoning),
        ..Default::default()
    };
    let ctx = context(&repo, "HEAD", Some(author));
    assert!(ctx.commit.message.len() > 80_000);
    // The model reads the whole description, then emits.
    let (server, provider) = crate::support::chat(vec![
        Reply::tool_calls(vec![call("i", "get_commit_info", json!({}))]),
        emit(
            "e",
            region("src/lib.rs", "function", "a", (1, 3), "a is two"),
        )
        .with_text("Raises a."),
    ]);
    let config = AnnotateConfig {
        context_window: Some(8_192),
        ..AnnotateConfig::default()
    };
    let annotated = run_agent(&ctx, provider.as_ref(), &config).unwrap();
    assert_eq!(annotated.annotation.regions.len(), 1);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_within(&requests, 8_192);
    let first = requests[0].json();
    let system = first["messages"][0]["content"].as_str().unwrap();
    assert_contains(
        system,
        "more bytes: see the commit's context in get_commit_info",
    );
    let opening = first["messages"][1]["content"].as_str().unwrap();
    assert_contains(opening, "Message:\nRaise a to two");
    assert_contains(opening, "call get_commit_info to read more");
    assert_contains(opening, "    2 +    2");
    let info = &crate::support::tool_results(&requests[1].json())[0];
    assert_eq!(info["ok"], true, "{info}");
    assert_eq!(info["truncation"]["limit"], "bytes", "{info}");
}

#[test]
fn a_first_message_that_cannot_fit_is_never_sent() {
    let repo = TestRepo::new();
    repo.commit_file("src/lib.rs", "pub fn a() -> u32 {\n    1\n}\n", "a");
    repo.commit_file("src/lib.rs", "pub fn a() -> u32 {\n    2\n}\n", "Raise a");
    let ctx = context(&repo, "HEAD", None);
    let (server, provider) = crate::support::chat(vec![Reply::text("never asked")]);
    // A window the configuration would refuse (under 4,096 tokens) does not
    // hold the prompt and tools alone.
    let config = AnnotateConfig {
        context_window: Some(2_000),
        ..AnnotateConfig::default()
    };
    let err = run_agent(&ctx, provider.as_ref(), &config).unwrap_err();
    assert!(
        matches!(
            err,
            ultragit_annotate::AgentError::ContextWindowExceeded { .. }
        ),
        "{err}"
    );
    assert_contains(&err.to_string(), "2000-token context window");
    assert_contains(&err.to_string(), "raise ultragit.contextWindow");
    assert!(server.requests().is_empty());
}

/// The context of a commit that raises `a` in `src/lib.rs` from one to two.
fn raise_a() -> (TestRepo, ultragit_annotate::AnnotationContext) {
    let repo = TestRepo::new();
    repo.commit_file("src/lib.rs", "pub fn a() -> u32 {\n    1\n}\n", "a");
    repo.commit_file(
        "src/lib.rs",
        "pub fn a() -> u32 {\n    2\n}\n",
        "Raise a to two\n\nThe caller counts from two now.",
    );
    let ctx = context(&repo, "HEAD", None);
    (repo, ctx)
}

#[test]
fn the_first_request_holds_the_commit_message_and_the_diff() {
    let (_repo, ctx) = raise_a();
    let summarized = emit(
        "e",
        region("src/lib.rs", "function", "a", (1, 3), "a is two"),
    );
    let (server, provider) = chat(vec![summarized.with_text("Raises a.")]);
    let annotated = run_agent(&ctx, provider.as_ref(), &AnnotateConfig::default()).unwrap();
    assert_eq!(
        annotated.turns, 1,
        "no turn spent on get_commit_info or get_diff"
    );
    let body = String::from_utf8_lossy(&server.requests()[0].body).into_owned();
    assert_contains(&body, "Raise a to two\\n\\nThe caller counts from two now.");
    assert_contains(&body, "    2 +    2");
    assert_contains(&body, "src/lib.rs (modified, +1 -1)");
}

#[test]
fn emissions_with_the_summary_in_one_reply_finish_the_run() {
    let (_repo, ctx) = raise_a();
    let good = region("src/lib.rs", "function", "a", (1, 3), "a is two");
    let (server, provider) = chat(vec![emit("e", good.clone()).with_text("Raises a to two.")]);
    let annotated = run_agent(&ctx, provider.as_ref(), &AnnotateConfig::default()).unwrap();
    assert_eq!(annotated.turns, 1);
    assert_eq!(annotated.annotation.summary, "Raises a to two.");
    assert_eq!(server.requests().len(), 1);
    // A refused emission goes back to the model even with a summary beside it.
    let bad = region("src/lib.rs", "function", "b", (1, 3), "no such function");
    let (server, provider) = chat(vec![
        emit("x", bad).with_text("Raises a."),
        emit("y", good).with_text("Raises a to two."),
    ]);
    let annotated = run_agent(&ctx, provider.as_ref(), &AnnotateConfig::default()).unwrap();
    assert_eq!(annotated.turns, 2);
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn the_trace_ends_with_the_runs_turns_and_tokens() {
    let (_repo, ctx) = raise_a();
    let a_is_two = region("src/lib.rs", "function", "a", (1, 3), "a is two");
    let (_server, provider) = chat(vec![emit("e", a_is_two).with_text("Raises a.")]);
    let mut sink = agent::ConsoleSink::new(Vec::new(), false, llm::Redactor::default());
    crate::support::runtime()
        .block_on(ultragit_annotate::annotate_commit(
            &ctx,
            provider.as_ref(),
            &AnnotateConfig::default(),
            &mut sink,
        ))
        .unwrap();
    let shown = String::from_utf8(sink.into_inner()).unwrap();
    let stats = line_containing(&shown, "annotate.stats");
    assert_contains(stats, "turns=1 input_tokens=");
    assert_contains(stats, "output_tokens=");
    assert_contains(stats, "sent_tokens_estimated=");
    assert_contains(stats, "regions=1");
}
