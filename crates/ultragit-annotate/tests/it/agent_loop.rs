//! The whole agent over real HTTP against the fake Chat Completions server.

use serde_json::json;
use testkit::{FakeLlm, Flavor, Reply, TestRepo, assert_contains, assert_starts_with, call};
use ultragit_annotate::{
    AgentError, AnnotateConfig, AnnotateError, AuthorContext, LargeCommits, Report, ToolUse,
};
use ultragit_schema::{ConstraintSource, ContextLevel, ProvenanceOperation};

use crate::support::{
    CLIENT_V1, annotate_head, chat, chat_with, client_v2, connect_region, context, emit, provider,
    region, run_agent, stored, tagged_author, tool_names, tool_results,
};

fn repo() -> (TestRepo, String) {
    let repo = TestRepo::new();
    repo.commit_file("src/client.rs", CLIENT_V1, "client");
    let sha = repo.commit_file("src/client.rs", client_v2(), "connect retries three times");
    (repo, sha)
}

#[test]
fn the_full_pipeline_writes_a_note_git_can_show() {
    let (repo, sha) = repo();
    let (server, provider) = chat(vec![
        Reply::tool_calls(vec![call(
            "c2",
            "get_ast_outline",
            json!({"path": "src/client.rs"}),
        )]),
        emit("c3", connect_region("retries the broker three times"))
            .with_text("Makes connect retry.\n\nDetails that are not the summary."),
        Reply::text("Done: the annotation is recorded."),
    ]);
    let report = annotate_head(&repo, None, provider.as_ref()).unwrap();
    assert_eq!(
        report,
        Report::Annotated {
            commit: sha.clone(),
            regions: 1,
            cross_cutting: 0,
            context_level: "inferred".into(),
            warnings: vec![],
            partial: false,
        }
    );
    let note = stored(&repo);
    assert_eq!(note.schema, "ultragit/v1");
    assert_eq!(note.commit, sha);
    assert_eq!(note.summary, "Makes connect retry.");
    assert_eq!(note.context_level, ContextLevel::Inferred);
    assert_eq!(note.task, None);
    assert_eq!(note.provenance.operation, ProvenanceOperation::Initial);
    assert!(chrono::DateTime::parse_from_rfc3339(&note.timestamp).is_ok());
    assert_eq!(note.regions[0].ast_anchor.name, "Client::connect");
    // The model saw the diff and the outline it asked for; the reply whose
    // emission was accepted ended the run (no call for more chatter).
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let first = requests[0].json();
    assert!(
        first["messages"][0]["content"]
            .as_str()
            .unwrap()
            .starts_with("You are a code annotation agent for Ultragit.")
    );
    // The first message is grounded: the commit message, the files and the diff.
    let opening = first["messages"][1]["content"].as_str().unwrap();
    assert_starts_with(
        opening,
        "Analyze the following commit and emit annotations for each meaningful semantic unit affected.",
    );
    assert_contains(opening, "Message:\nconnect retries three times");
    assert_contains(opening, "src/client.rs (modified, +6 -1)");
    assert_contains(opening, "   11 +        for _ in 0..3 {");
    // Spec 000's six read tools are offered even with the whole diff in the
    // first message; only our get_diff_for_file has nothing to add.
    assert_eq!(
        tool_names(&first),
        [
            "get_diff",
            "get_file_content",
            "get_ast_outline",
            "get_surrounding_context",
            "get_commit_info",
            "get_recent_annotations",
            "search_code",
            "emit_annotation",
            "emit_cross_cutting",
            "decline_annotation"
        ]
    );
    let outline = tool_results(&requests[1].json())[0].clone();
    assert_eq!(
        outline["data"]["outline"][3],
        "L10-17 method Client::connect | pub fn connect(&self) -> bool"
    );
    // And the read pipeline finds the note for the annotated function.
    let read = ultragit_read::GitReadPipeline::open(repo.path())
        .unwrap()
        .execute(&ultragit_read::ReadQuery::file("src/client.rs").with_anchor("connect"))
        .unwrap();
    assert_eq!(read.regions.len(), 1);
    assert_eq!(
        read.regions[0].region.intent,
        "retries the broker three times"
    );
    assert_eq!(
        (
            read.regions[0].region.lines.start,
            read.regions[0].region.lines.end
        ),
        (10, 17)
    );
}

use ultragit_read::ReadPipeline;

#[test]
fn author_context_makes_an_enhanced_annotation_with_author_constraints() {
    let (repo, _) = repo();
    let mut emitted = connect_region("survives broker failovers");
    emitted["constraints"] =
        json!([{"text": "at most 3 attempts: the broker bans bursts", "source": "author"}]);
    let (server, provider) = chat(vec![
        Reply::tool_calls(vec![call("c1", "get_commit_info", json!({}))]),
        emit("c2", emitted),
        Reply::text("Retry connect."),
    ]);
    let author = tagged_author(
        "PROJ-42 survive failovers",
        "the broker drops the first attempt",
        "the probe script's schedule",
    );
    annotate_head(&repo, Some(author), provider.as_ref()).unwrap();
    let note = stored(&repo);
    assert_eq!(note.context_level, ContextLevel::Enhanced);
    assert_eq!(note.task.as_deref(), Some("PROJ-42 survive failovers"));
    assert_eq!(
        note.regions[0].constraints[0].source,
        ConstraintSource::Author
    );
    let system = server.requests()[0].json()["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(system.contains("The commit author has provided explicit context:\n  Task: PROJ-42 survive failovers\n  Reasoning: the broker drops the first attempt\n  Dependencies: the probe script's schedule\n  Tags: mqtt, retry\n"), "{system}");
    assert!(!system.contains("No author-provided context is available."));
}

#[test]
fn multi_file_commits_get_cross_cutting_concerns() {
    let repo = TestRepo::new();
    repo.write("src/client.rs", CLIENT_V1).write(
        "tools/probe.py",
        "RETRIES = 1\n\ndef probe():\n    return RETRIES\n",
    );
    repo.commit_all("init");
    repo.write("src/client.rs", client_v2()).write(
        "tools/probe.py",
        "RETRIES = 3\n\ndef probe():\n    return RETRIES\n",
    );
    repo.commit_all("three retries everywhere");
    let (server, provider) = chat(vec![
        Reply::tool_calls(vec![
            call("a", "emit_annotation", connect_region("retries 3 times")),
            call(
                "b",
                "emit_annotation",
                region(
                    "tools/probe.py",
                    "const",
                    "RETRIES",
                    (1, 1),
                    "mirrors the client's retries",
                ),
            ),
            call(
                "c",
                "emit_cross_cutting",
                json!({
                    "description": "the retry count must match in client and probe",
                    "regions": ["src/client.rs:Client::connect", "tools/probe.py:RETRIES"],
                    "nature": "shared constant"
                }),
            ),
        ])
        .with_text("Three retries in client and probe."),
    ]);
    annotate_head(&repo, None, provider.as_ref()).unwrap();
    assert_eq!(server.requests().len(), 1, "every emission in one reply");
    let note = stored(&repo);
    assert_eq!(note.summary, "Three retries in client and probe.");
    assert_eq!(note.regions.len(), 2);
    assert_eq!(note.cross_cutting.len(), 1);
    assert_eq!(note.cross_cutting[0].nature, "shared constant");
}

#[test]
fn duplicates_are_merged_and_invalid_emissions_go_back_to_the_model() {
    let (repo, _) = repo();
    let (server, provider) = chat(vec![
        Reply::tool_calls(vec![
            call("a", "emit_annotation", connect_region("first wording")),
            call("b", "emit_annotation", connect_region("better wording")),
            call(
                "c",
                "emit_annotation",
                region(
                    "src/nowhere.rs",
                    "function",
                    "ghost",
                    (1, 2),
                    "not in the commit",
                ),
            ),
            call("d", "rm_rf", json!({"path": "/"})),
        ]),
        Reply::text("Done."),
    ]);
    let ctx = context(&repo, "HEAD", None);
    let annotated = run_agent(&ctx, provider.as_ref(), &AnnotateConfig::default()).unwrap();
    assert_eq!(
        annotated.annotation.regions.len(),
        1,
        "one region, deduplicated"
    );
    assert_eq!(
        annotated.annotation.regions[0].intent, "better wording",
        "the last emission wins"
    );
    let results = tool_results(&server.requests()[1].json());
    assert_eq!(results[0]["ok"], true);
    assert_eq!(results[2]["error"]["code"], "INVALID_ANNOTATION");
    assert_eq!(results[3]["error"]["code"], "UNKNOWN_TOOL");
}

#[test]
fn running_out_of_turns_keeps_what_was_emitted() {
    let (repo, _) = repo();
    // Emitting beside a read does not end the run.
    let mut script = vec![
        Reply::tool_calls(vec![
            call("a", "emit_annotation", connect_region("retries")),
            call("r", "get_commit_info", json!({})),
        ])
        .with_text("Makes connect retry."),
    ];
    for i in 0..2 {
        script.push(Reply::tool_calls(vec![call(
            &format!("r{i}"),
            "get_commit_info",
            json!({}),
        )]));
    }
    script.push(Reply::text("Out of turns summary."));
    let (server, provider) = chat(script);
    let config = AnnotateConfig {
        max_agent_turns: 4,
        ..AnnotateConfig::default()
    };
    let ctx = context(&repo, "HEAD", None);
    let annotated = run_agent(&ctx, provider.as_ref(), &config).unwrap();
    assert!(annotated.partial);
    assert_eq!(
        annotated.turns, 4,
        "three tool-loop turns and one final turn"
    );
    assert_eq!(server.requests().len(), 4);
    assert_eq!(server.requests()[3].json()["tool_choice"], "none");
    assert!(
        annotated
            .warnings
            .iter()
            .any(|w| w.contains("used all 4 turns"))
    );
    assert_eq!(
        annotated.annotation.summary, "Makes connect retry.",
        "the text that came with the emission, not the final turn's"
    );
    assert_eq!(annotated.annotation.regions.len(), 1);
}

#[test]
fn no_emissions_is_an_error_of_the_right_kind() {
    let (repo, _) = repo();
    let ctx = context(&repo, "HEAD", None);
    // The model ends at once with text only, or with nothing: never taken
    // for a decline (backfill logs it to failed.log and retries it).
    for reply in [Reply::text("Nothing worth annotating."), Reply::text("")] {
        let (server, provider) = chat(vec![reply]);
        let err = run_agent(&ctx, provider.as_ref(), &AnnotateConfig::default()).unwrap_err();
        assert!(
            matches!(err, AgentError::NoAnnotations { turns: 1 }),
            "{err}"
        );
        assert_eq!(server.requests().len(), 1);
    }
    // Only a model that says so declines.
    let (server, provider) = chat(vec![
        Reply::tool_calls(vec![call(
            "d",
            "decline_annotation",
            json!({"reason": "Nothing worth annotating."}),
        )]),
        Reply::text("Declined."),
    ]);
    let declined = run_agent(&ctx, provider.as_ref(), &AnnotateConfig::default()).unwrap();
    assert_eq!(
        declined.declined(),
        Some("the model found nothing semantic to record: Nothing worth annotating.")
    );
    assert!(declined.annotation.regions.is_empty());
    assert_eq!(server.requests().len(), 1, "the decline ends the run");
    // A decline without a reason is refused and goes back to the model.
    let (server, provider) = chat(vec![
        Reply::tool_calls(vec![call(
            "d",
            "decline_annotation",
            json!({"reason": "  "}),
        )]),
        Reply::text("Gave up."),
    ]);
    let err = run_agent(&ctx, provider.as_ref(), &AnnotateConfig::default()).unwrap_err();
    assert!(
        matches!(err, AgentError::NoAnnotations { turns: 2 }),
        "{err}"
    );
    let refused = tool_results(&server.requests()[1].json())[0].clone();
    assert_eq!(refused["ok"], false);
    // Emissions that were all refused are a failure, not a decline.
    let (_s, provider) = chat(vec![
        emit(
            "bad",
            region("src/client.rs", "method", "Client::gone", (10, 17), "x"),
        ),
        Reply::text("Gave up."),
    ]);
    let err = run_agent(&ctx, provider.as_ref(), &AnnotateConfig::default()).unwrap_err();
    assert!(
        matches!(err, AgentError::NoAnnotations { turns: 2 }),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "Agent produced no annotations after 2 turns"
    );
    // The model keeps reading until its turns run out.
    let mut script: Vec<Reply> = (0..2)
        .map(|i| Reply::tool_calls(vec![call(&format!("r{i}"), "get_commit_info", json!({}))]))
        .collect();
    script.push(Reply::text("I never emitted."));
    let (_s, provider) = chat(script);
    let config = AnnotateConfig {
        max_agent_turns: 3,
        ..AnnotateConfig::default()
    };
    let err = run_agent(&ctx, provider.as_ref(), &config).unwrap_err();
    assert!(
        matches!(err, AgentError::MaxTurnsExceeded { max_turns: 3 }),
        "{err}"
    );
    // Every answer is cut by the token limit, the retry with twice the cap
    // too.
    let (server, provider) = chat(vec![
        Reply::max_tokens("I was about to"),
        Reply::max_tokens("I was about to say"),
    ]);
    let err = run_agent(&ctx, provider.as_ref(), &AnnotateConfig::default()).unwrap_err();
    assert!(
        matches!(err, AgentError::TokenBudgetExceeded { budget: 4096 }),
        "spec 000's 4,096-token answers for an unknown model: {err}"
    );
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn max_tokens_after_emissions_is_a_partial_result() {
    let (repo, _) = repo();
    let (_s, provider) = chat(vec![
        Reply::tool_calls(vec![
            call("a", "emit_annotation", connect_region("retries")),
            call("r", "get_commit_info", json!({})),
        ]),
        Reply::max_tokens("And furthermore the"),
        Reply::max_tokens("And furthermore the broker"),
    ]);
    let ctx = context(&repo, "HEAD", None);
    let annotated = run_agent(&ctx, provider.as_ref(), &AnnotateConfig::default()).unwrap();
    assert!(annotated.partial);
    assert_eq!(annotated.annotation.regions.len(), 1);
    assert!(
        annotated
            .warnings
            .iter()
            .any(|w| w.contains("output limit (4096 tokens, asked again with twice that)")),
        "{:?}",
        annotated.warnings
    );
}

#[test]
fn provider_errors_are_reported_and_nothing_is_stored() {
    let (repo, _) = repo();
    let (_s, provider) = chat(vec![Reply::error(400, "model not found")]);
    let err = annotate_head(&repo, None, provider.as_ref()).unwrap_err();
    assert!(
        matches!(err, AnnotateError::Agent(AgentError::Provider(_))),
        "{err}"
    );
    assert!(err.to_string().contains("model not found"));
    let notes = repo
        .command()
        .args(["notes", "--ref=ultragit", "list"])
        .run_unchecked()
        .unwrap();
    assert!(String::from_utf8_lossy(&notes.stdout).trim().is_empty());
}

#[test]
fn trivial_commits_never_reach_the_model() {
    let repo = TestRepo::new();
    repo.commit_file("Cargo.lock", "a\n", "lock");
    repo.commit_file("Cargo.lock", "b\n", "bump");
    let (server, provider) = chat(vec![]);
    let report = annotate_head(&repo, None, provider.as_ref()).unwrap();
    assert!(matches!(
        report,
        Report::Skipped {
            reason: ultragit_annotate::Trivial::LockfilesOnly,
            ..
        }
    ));
    assert!(server.requests().is_empty());
}

/// A commit of 20 files, 150 added lines each: 3,000 lines, too large for
/// one request. Each line names `word`, the name the model's regions give.
fn twenty_modules(word: &str) -> (TestRepo, ultragit_annotate::AnnotationContext) {
    let repo = TestRepo::new();
    repo.commit_file("README.md", "x\n", "init");
    for i in 0..20 {
        let body: String = (0..150)
            .map(|n| format!("// {word} {i} line {n}\n"))
            .collect();
        repo.write(&format!("src/m{i:02}.rs"), body);
    }
    repo.commit_all("twenty modules");
    let ctx = context(&repo, "HEAD", None);
    (repo, ctx)
}

#[test]
fn large_commits_are_annotated_in_chunks_then_across_them() {
    let (_repo, ctx) = twenty_modules("file");
    let config = AnnotateConfig {
        large_commits: LargeCommits::Chunk,
        context_window: Some(128_000),
        ..AnnotateConfig::default()
    };
    let chunks = ultragit_annotate::run::plan_chunks(&ctx, &config);
    assert_eq!(chunks.len(), 4, "{chunks:?}");
    assert!(chunks.iter().all(|c| c.len() == 5));
    let mut script = Vec::new();
    for (i, chunk) in chunks.iter().enumerate() {
        script.push(
            emit(
                &format!("e{i}"),
                region(
                    &chunk[0],
                    "config",
                    "file",
                    (1, 3),
                    &format!("chunk {i} header"),
                ),
            )
            .with_text(&format!("chunk {i} done")),
        );
    }
    script.push(
        Reply::tool_calls(vec![call(
            "x",
            "emit_cross_cutting",
            json!({
                "description": "module headers follow one template",
                "regions": [format!("{}:file", chunks[0][0]), format!("{}:file", chunks[3][0])],
                "nature": "template"
            }),
        )])
        .with_text("Adds twenty modules."),
    );
    let (server, provider) = chat(script);
    let annotated = run_agent(&ctx, provider.as_ref(), &config).unwrap();
    assert_eq!(annotated.annotation.regions.len(), 4);
    assert_eq!(annotated.annotation.cross_cutting.len(), 1);
    assert_eq!(annotated.annotation.summary, "Adds twenty modules.");
    let requests = server.requests();
    assert_eq!(requests.len(), 5, "one call per chunk, one across them");
    let first = requests[0].json();
    let first_prompt = first["messages"][1]["content"].as_str().unwrap().to_owned();
    assert_contains(&first_prompt, "This is chunk 1 of 4 (3 remaining after it)");
    // Each chunk's first message carries the diff of its own files only;
    // get_diff (one of the spec's six) is offered all the same, and
    // get_diff_for_file reads the other chunks' files.
    assert_eq!(
        first_prompt.matches("=== src/").count(),
        5,
        "{first_prompt}"
    );
    let offered = tool_names(&first);
    assert!(
        offered.contains(&"get_diff") && offered.contains(&"get_diff_for_file"),
        "{offered:?}"
    );
    let cross = requests[4].json();
    assert_eq!(
        cross["tools"].as_array().unwrap().len(),
        1,
        "the cross-chunk pass offers emit_cross_cutting only"
    );
    assert!(
        cross["messages"][1]["content"]
            .as_str()
            .unwrap()
            .contains("chunk 3 header")
    );
}

#[test]
fn huge_diffs_are_summarized_for_the_model() {
    let repo = TestRepo::new();
    repo.commit_file("README.md", "x\n", "init");
    let body: String = (0..2500).map(|n| format!("// line {n}\n")).collect();
    repo.commit_file("src/big.rs", body, "big");
    let ctx = context(&repo, "HEAD", None);
    // Skipped with largeCommits = skip: no model call, a note says so.
    let (server, provider) = chat(vec![]);
    let skip = AnnotateConfig {
        large_commits: LargeCommits::Skip,
        ..AnnotateConfig::default()
    };
    let skipped = run_agent(&ctx, provider.as_ref(), &skip).unwrap();
    assert_eq!(
        skipped.declined(),
        Some(
            "skipped as too large: 2,500 changed lines, more than ultragit.maxDiffLines (2,000); \
             set ultragit.largeCommits = chunk to annotate such commits in chunks"
        )
    );
    assert_eq!(skipped.turns, 0);
    assert!(server.requests().is_empty());
    assert_starts_with(
        &skipped.annotation.summary,
        "Not annotated: skipped as too large",
    );
    // Chunked, the default (spec 000 AC7): the diff is summarized.
    let config = AnnotateConfig::default();
    let (server, provider) = chat(vec![
        Reply::tool_calls(vec![call("d", "get_diff", json!({}))]),
        emit(
            "e",
            region("src/big.rs", "config", "line", (1, 2500), "generated table"),
        ),
        Reply::text("Adds a generated table."),
    ]);
    run_agent(&ctx, provider.as_ref(), &config).unwrap();
    // The first message cannot carry the diff, so the diff tools are offered.
    let first = server.requests()[0].json();
    let offered = tool_names(&first);
    assert!(
        offered.contains(&"get_diff") && offered.contains(&"get_diff_for_file"),
        "{offered:?}"
    );
    let summary = tool_results(&server.requests()[1].json())[0]["data"]["summary"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_starts_with(
        &summary,
        "This commit modifies 1 files with 2,500 lines changed.",
    );
}

#[test]
fn providers_without_tools_get_one_structured_prompt() {
    let (repo, sha) = repo();
    let answer = json!({
        "summary": "Connect retries.",
        "regions": [connect_region("retries three times"),
                    region("src/client.rs", "method", "Client::connect", (10, 99), "bad lines")],
        "cross_cutting": []
    });
    let server = FakeLlm::start(
        Flavor::OpenAiChat,
        vec![Reply::text(&format!("```json\n{answer}\n```"))],
    );
    let provider = provider(&server, llm::ProviderKind::OpenAiChat, false);
    let ctx = context(&repo, "HEAD", None);
    let annotated = run_agent(&ctx, provider.as_ref(), &AnnotateConfig::default()).unwrap();
    assert_eq!(annotated.annotation.commit, sha);
    assert_eq!(
        annotated.annotation.regions.len(),
        2,
        "validation cannot know file lengths; both lines ranges are well formed"
    );
    let request = server.requests()[0].json();
    assert!(request.get("tools").is_none());
    let prompt = request["messages"].to_string();
    assert!(
        prompt.contains("for _ in 0..3"),
        "the diff is in the prompt"
    );
    assert!(prompt.contains("matches this JSON Schema"));
}

#[test]
fn squash_sources_make_a_squash_provenance() {
    let (repo, _) = repo();
    let source = repo.rev_parse("HEAD~1");
    let (server, provider) = chat(vec![
        emit("a", connect_region("retries")),
        Reply::text("Squashed."),
    ]);
    let author = AuthorContext {
        squash_sources: Some(vec![source.clone()]),
        ..AuthorContext::default()
    };
    let ctx = context(&repo, "HEAD", Some(author));
    let annotated = run_agent(&ctx, provider.as_ref(), &AnnotateConfig::default()).unwrap();
    // Squash sources alone are not author context: the annotation stays
    // inferred, and the model is told so.
    assert_eq!(annotated.annotation.context_level, ContextLevel::Inferred);
    let system = server.requests()[0].json()["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_contains(&system, "No author-provided context is available.");
    let provenance = &annotated.annotation.provenance;
    assert_eq!(provenance.operation, ProvenanceOperation::Squash);
    assert_eq!(provenance.derived_from, [source]);
    assert!(
        !provenance.original_annotations_preserved,
        "the source had no note"
    );
}

#[test]
fn an_invalid_anchor_gets_a_tool_error_and_the_corrected_one_is_stored() {
    let (repo, _) = repo();
    let (server, provider) = chat(vec![
        emit(
            "bad",
            region(
                "src/client.rs",
                "function",
                "r2990_trip_over_trailing_dot",
                (10, 17),
                "retries",
            ),
        ),
        emit("good", connect_region("retries the broker three times")),
        Reply::text("Makes connect retry."),
    ]);
    annotate_head(&repo, None, provider.as_ref()).unwrap();
    let refused = tool_results(&server.requests()[1].json())[0].clone();
    assert_eq!(refused["error"]["code"], "ANCHOR_MISMATCH");
    assert_contains(
        refused["error"]["message"].as_str().unwrap(),
        "L10-17 method Client::connect",
    );
    let note = stored(&repo);
    assert_eq!(note.regions.len(), 1);
    assert_eq!(note.regions[0].ast_anchor.name, "Client::connect");
}

#[test]
fn tool_use_auto_falls_back_to_the_structured_prompt() {
    let (repo, _) = repo();
    let answer = json!({
        "summary": "Connect retries.",
        "regions": [connect_region("retries three times")],
        "cross_cutting": []
    });
    let (server, provider) = chat(vec![
        Reply::error(
            400,
            "registry.ollama.ai/library/gemma3:4b does not support tools",
        ),
        Reply::text(&answer.to_string()),
    ]);
    let ctx = context(&repo, "HEAD", None);
    let annotated = run_agent(&ctx, provider.as_ref(), &AnnotateConfig::default()).unwrap();
    assert_eq!(annotated.annotation.regions.len(), 1);
    assert_contains(&annotated.warnings[0], "does not support tool calls");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[0].json().get("tools").is_some());
    assert!(requests[1].json().get("tools").is_none());
    // `on` reports the refusal; `off` never offers tools.
    let (_s, provider) = chat(vec![Reply::error(400, "this model does not support tools")]);
    let on = AnnotateConfig {
        tool_use: ToolUse::On,
        ..AnnotateConfig::default()
    };
    let err = run_agent(&ctx, provider.as_ref(), &on).unwrap_err();
    assert!(matches!(err, AgentError::Provider(_)), "{err}");
    let (server, provider) = chat(vec![Reply::text(&answer.to_string())]);
    let off = AnnotateConfig {
        tool_use: ToolUse::Off,
        ..AnnotateConfig::default()
    };
    run_agent(&ctx, provider.as_ref(), &off).unwrap();
    assert!(server.requests()[0].json().get("tools").is_none());
    // Other refusals are not taken for a missing feature.
    let not_tools = llm::LlmError::Api {
        provider: "openai-chat",
        status: 400,
        message: "model not found".to_owned(),
    };
    assert!(!ultragit_annotate::run::tools_unsupported(&not_tools));
}

#[test]
fn a_declined_commit_stores_a_minimal_note_and_is_not_a_failure() {
    let repo = TestRepo::new();
    repo.commit_file(
        "src/version.rs",
        "pub const VERSION: &str = \"1.0\";\n",
        "v1.0",
    );
    repo.commit_file(
        "src/version.rs",
        "pub const VERSION: &str = \"1.1\";\n",
        "Bump to 1.1",
    );
    let (server, provider) = chat(vec![
        Reply::tool_calls(vec![call(
            "d",
            "decline_annotation",
            json!({"reason": "A version bump: nothing a future modifier needs to know."}),
        )])
        .with_text("Declining."),
        Reply::text("Declined, as said."),
    ]);
    let report = annotate_head(&repo, None, provider.as_ref()).unwrap();
    let Report::Declined { reason, .. } = report else {
        panic!("{report:?}");
    };
    assert_eq!(
        reason,
        "the model found nothing semantic to record: A version bump: nothing a future \
         modifier needs to know."
    );
    assert_eq!(server.requests().len(), 1);
    let note = stored(&repo);
    assert!(note.regions.is_empty());
    assert_starts_with(
        &note.summary,
        "Not annotated: the model found nothing semantic",
    );
    assert_eq!(
        note.provenance.synthesis_notes.as_deref(),
        Some(note.summary.as_str())
    );
    // Backfill's selection skips it: the commit has a note.
    let repo_handle = gitctx::Repo::discover(repo.path()).unwrap();
    let notes = repo_handle.notes(ultragit_annotate::NOTES_REF).unwrap();
    let head: gitctx::ObjectId = repo.rev_parse("HEAD").parse().unwrap();
    assert!(notes.read(head).unwrap().is_some());
}

#[test]
fn max_calls_caps_the_model_calls_of_a_commit() {
    let (_repo, ctx) = twelve_files();
    // A model that reads forever.
    let (server, provider) = chat_with(|request| {
        let n = request.json()["messages"].as_array().map_or(0, Vec::len);
        Reply::tool_calls(vec![call(&format!("r{n}"), "get_commit_info", json!({}))])
    });
    let config = AnnotateConfig {
        max_calls: Some(5),
        ..AnnotateConfig::default()
    };
    let err = run_agent(&ctx, provider.as_ref(), &config).unwrap_err();
    assert!(
        matches!(err, AgentError::MaxCallsExceeded { max_calls: 5 }),
        "{err}"
    );
    assert_contains(&err.to_string(), "cap of 5 model calls");
    assert_contains(&err.to_string(), "--max-calls");
    assert_eq!(server.requests().len(), 5, "the cap holds across chunks");
}

#[test]
fn max_calls_cuts_a_run_short_and_keeps_what_was_emitted() {
    let (repo, _) = repo();
    let ctx = context(&repo, "HEAD", None);
    let mut script = vec![Reply::tool_calls(vec![
        call("a", "emit_annotation", connect_region("retries")),
        call("r0", "get_commit_info", json!({})),
    ])];
    script.push(Reply::tool_calls(vec![call(
        "r",
        "get_commit_info",
        json!({}),
    )]));
    script.push(Reply::text("Cut short."));
    let (server, provider) = chat(script);
    let config = AnnotateConfig {
        max_calls: Some(3),
        ..AnnotateConfig::default()
    };
    let annotated = run_agent(&ctx, provider.as_ref(), &config).unwrap();
    assert_eq!(server.requests().len(), 3);
    assert!(annotated.partial);
    assert_eq!(annotated.annotation.regions.len(), 1);
    assert_eq!(
        annotated.warnings,
        [
            "the cap of 3 model calls per commit (--max-calls) was reached; the annotations \
          emitted so far are kept"
        ]
    );
}

/// A commit of twelve files, annotated in three chunks (5, 5, 2).
fn twelve_files() -> (TestRepo, ultragit_annotate::AnnotationContext) {
    let repo = TestRepo::new();
    repo.commit_file("README.md", "x\n", "init");
    for i in 0..12 {
        repo.write(&format!("src/m{i:02}.txt"), format!("entry {i}\n"));
    }
    repo.commit_all("twelve entries");
    let ctx = context(&repo, "HEAD", None);
    (repo, ctx)
}

/// A model that emits a region on the first file of its chunk with the
/// summary, and in the cross-chunk pass (one tool) calls emit_cross_cutting
/// without ever ending.
fn chunk_writer(request: &testkit::RecordedRequest) -> Reply {
    let body = request.json();
    if body["tools"].as_array().map_or(0, Vec::len) == 1 {
        return Reply::tool_calls(vec![call(
            "x",
            "emit_cross_cutting",
            json!({
                "description": "entries share one format",
                "regions": ["src/m00.txt:entry", "src/m05.txt:entry"],
                "nature": "format"
            }),
        )]);
    }
    let opening = body["messages"][1]["content"].as_str().unwrap_or("");
    let file = opening
        .split("annotate only these files: ")
        .nth(1)
        .and_then(|rest| rest.split([',', ' ']).next())
        .map_or("src/m00.txt", |name| name.trim_end_matches('.'))
        .to_owned();
    emit(
        "e",
        region(&file, "config", "entry", (1, 1), "one entry of the table"),
    )
    .with_text("Adds entries.")
}

#[test]
fn the_cross_chunk_pass_stays_within_max_calls() {
    let (_repo, ctx) = twelve_files();
    // Each chunk takes one call, and so does the pass across them (its
    // accepted emission ends it); the pass needs room for two before it
    // starts (one to act, one to finish).
    for (max_calls, requests, chunks, across) in [
        (Some(3), 2, 2, false),
        (Some(4), 3, 3, false),
        (Some(5), 4, 3, true),
        (Some(6), 4, 3, true),
        (None, 4, 3, true),
    ] {
        let (server, provider) = chat_with(chunk_writer);
        let config = AnnotateConfig {
            max_calls,
            ..AnnotateConfig::default()
        };
        let annotated = run_agent(&ctx, provider.as_ref(), &config).unwrap();
        let sent = server.requests();
        let passes = sent
            .iter()
            .filter(|r| r.json()["tools"].as_array().map_or(0, Vec::len) == 1)
            .count();
        let context = format!("--max-calls {max_calls:?}: {:?}", annotated.warnings);
        assert_eq!(sent.len(), requests, "{context}");
        assert_eq!(annotated.turns as usize, requests, "{context}");
        assert_eq!(sent.len() - passes, chunks, "{context}");
        assert_eq!(passes > 0, across, "{context}");
        let capped = annotated
            .warnings
            .iter()
            .any(|w| w.contains("model calls per commit (--max-calls)"));
        assert_eq!(capped, !across, "{context}");
        assert_eq!(annotated.partial, !across, "{context}");
    }
}

#[test]
fn large_commits_in_chunks_stop_at_max_chunks_with_a_warning() {
    let (_repo, ctx) = twenty_modules("entry");
    let config = AnnotateConfig {
        large_commits: LargeCommits::Chunk,
        max_chunks: Some(2),
        ..AnnotateConfig::default()
    };
    let (server, provider) = chat_with(|request| {
        if request.json()["tools"].as_array().map_or(0, Vec::len) == 1 {
            return Reply::text("none");
        }
        chunk_writer(request)
    });
    let annotated = run_agent(&ctx, provider.as_ref(), &config).unwrap();
    // Two chunks of five files, one call each, then the pass across them.
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(annotated.annotation.regions.len(), 2);
    let opening = requests[0].json()["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_contains(&opening, "This is chunk 1 of 2");
    let warning = annotated
        .warnings
        .iter()
        .find(|w| w.contains("ultragit.maxChunks"))
        .unwrap_or_else(|| panic!("{:?}", annotated.warnings));
    assert_starts_with(
        warning,
        "only the first 2 chunks (ultragit.maxChunks) were annotated; not annotated: ",
    );
    // The ten files left, each named once.
    let left = warning.rsplit(": ").next().unwrap();
    assert_eq!(left.split(", ").count(), 10, "{warning}");
    let annotated_files: Vec<&str> = annotated
        .annotation
        .regions
        .iter()
        .map(|r| r.file.as_str())
        .collect();
    for file in annotated_files {
        assert!(!left.contains(file), "{file} was annotated: {warning}");
    }
}

#[test]
fn a_model_that_keeps_calling_tools_past_the_cap_still_counts_its_tokens() {
    let (repo, _) = repo();
    let ctx = context(&repo, "HEAD", None);
    // Emits once, then reads for ever, even when told to stop.
    let (server, provider) = chat_with(|request| {
        let results = request.json()["messages"]
            .as_array()
            .map_or(0, |m| m.iter().filter(|m| m["role"] == "tool").count());
        let reply = if results == 0 {
            Reply::tool_calls(vec![
                call("e", "emit_annotation", connect_region("retries")),
                call("r", "get_commit_info", json!({})),
            ])
        } else {
            Reply::tool_calls(vec![call(
                &format!("r{results}"),
                "get_commit_info",
                json!({}),
            )])
        };
        reply.usage(100, 10)
    });
    let config = AnnotateConfig {
        max_agent_turns: 3,
        ..AnnotateConfig::default()
    };
    let annotated = run_agent(&ctx, provider.as_ref(), &config).unwrap();
    assert!(annotated.partial);
    assert_eq!(annotated.annotation.regions.len(), 1);
    assert_eq!(
        server.requests().len(),
        3,
        "two tool-loop calls and the final one"
    );
    assert_eq!(annotated.turns, 3);
    assert_eq!(annotated.spent.usage.input_tokens, Some(300));
    assert_eq!(annotated.spent.usage.output_tokens, Some(30));
}

#[test]
fn search_code_and_an_earlier_commits_info_reach_the_next_request() {
    let repo = TestRepo::new();
    let planned = repo.commit_file(
        "src/client.rs",
        CLIENT_V1,
        "Add the client\n\nconnect will retry once brokers drop first attempts.",
    );
    repo.commit_file(
        "src/probe.rs",
        "pub fn probe(c: &Client) -> bool {\n    c.connect()\n}\n",
        "Add the probe",
    );
    repo.commit_file(
        "src/client.rs",
        client_v2(),
        &format!("connect retries three times, as {} planned", &planned[..10]),
    );
    let (server, provider) = chat(vec![
        Reply::tool_calls(vec![
            call("s", "search_code", json!({"pattern": ".connect()"})),
            call("i", "get_commit_info", json!({"commit": &planned[..10]})),
        ]),
        emit(
            "e",
            connect_region("retries, as the client's first commit planned"),
        )
        .with_text("Makes connect retry."),
    ]);
    let report = annotate_head(&repo, None, provider.as_ref()).unwrap();
    assert!(
        matches!(report, Report::Annotated { regions: 1, .. }),
        "{report:?}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let results = tool_results(&requests[1].json());
    assert_eq!(results[0]["tool"], "search_code");
    assert_eq!(
        results[0]["data"]["matches"],
        "src/probe.rs:2:    c.connect()\n"
    );
    assert_eq!(results[1]["tool"], "get_commit_info");
    let info = results[1]["data"]["info"].as_str().unwrap();
    assert_contains(info, &format!("Commit: {planned}"));
    assert_contains(info, "connect will retry once brokers drop first attempts.");
    assert_contains(info, "src/client.rs (+13 -0)");
    assert_eq!(stored(&repo).regions.len(), 1);
}
