//! The model behaviours seen on real histories (issue 30), reproduced with the
//! fake model: chatter after a corrected anchor, a text-less final reply, a
//! reply cut at the output cap, an empty reply, a docs-only commit.

use serde_json::{Value, json};
use testkit::{Reply, TestRepo, annotator, assert_contains, call};
use ultragit_annotate::backfill::{self, RunOptions, SelectOptions};
use ultragit_annotate::{AgentError, AnnotateConfig, Report, Trivial};

use crate::support::{
    CLIENT_V1, annotate_head, chat, chat_with, client_v2, connect_region, context, emit, region,
    run_agent, runtime, stored, tool_results,
};

fn repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.commit_file("src/client.rs", CLIENT_V1, "client");
    repo.commit_file("src/client.rs", client_v2(), "connect retries three times");
    repo
}

fn new_region() -> Value {
    region(
        "src/client.rs",
        "method",
        "Client::new",
        (6, 8),
        "keeps the host as given",
    )
}

/// The output cap a request asked for.
fn cap(request: &testkit::RecordedRequest) -> u64 {
    request.json()["max_tokens"].as_u64().unwrap()
}

/// After an anchor correction the model says "Re-emitting …", and would say
/// "Done …" if asked again: the stored summary is the first reply's, and the
/// accepted re-emission ends the run.
#[test]
fn the_summary_is_the_emitting_replys_not_the_chatter_after_a_correction() {
    let repo = repo();
    let (server, provider) = chat(vec![
        emit(
            "bad",
            region(
                "src/client.rs",
                "function",
                "connect_once",
                (10, 17),
                "retries",
            ),
        )
        .with_text("Makes connect retry three times before giving up."),
        emit("good", connect_region("retries the broker three times"))
            .with_text("Re-emitting the rejected annotation under the unit the outline names."),
        Reply::text("Done: the annotation for Client::connect is recorded."),
    ]);
    annotate_head(&repo, None, provider.as_ref()).unwrap();
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "the accepted re-emission ends the run");
    assert_eq!(
        tool_results(&requests[1].json())[0]["error"]["code"],
        "ANCHOR_MISMATCH"
    );
    let note = stored(&repo);
    assert_eq!(
        note.summary,
        "Makes connect retry three times before giving up."
    );
    assert_eq!(note.regions[0].ast_anchor.name, "Client::connect");
}

/// A reply whose emissions are all accepted and that says nothing ends the
/// run: one request, and a summary made from the intents.
#[test]
fn a_text_less_reply_whose_emissions_are_accepted_ends_the_run() {
    let repo = repo();
    let (server, provider) = chat(vec![
        Reply::tool_calls(vec![
            call("a", "emit_annotation", connect_region("retries the broker")),
            call("b", "emit_annotation", new_region()),
        ]),
        Reply::text("Done: both annotations are recorded."),
    ]);
    annotate_head(&repo, None, provider.as_ref()).unwrap();
    assert_eq!(server.requests().len(), 1);
    let note = stored(&repo);
    assert_eq!(note.regions.len(), 2);
    assert_eq!(
        note.summary, "retries the broker; keeps the host as given",
        "no later turn's chatter"
    );
}

/// A model the tables do not know asks for spec 000's 4,096 tokens; a reply
/// cut inside its second emission is asked again with twice the cap, and the
/// whole retry is what is stored.
#[test]
fn a_cut_reply_is_retried_with_twice_the_cap() {
    let repo = repo();
    let cut = Reply::tool_calls(vec![
        call("a", "emit_annotation", connect_region("retries the broker")),
        call(
            "b",
            "emit_annotation",
            json!("{\"file\": \"src/client.rs\", \"ast_anchor\": {\"type\": \"meth"),
        ),
    ])
    .cut_off();
    let (server, provider) = chat(vec![
        cut,
        Reply::tool_calls(vec![
            call(
                "a2",
                "emit_annotation",
                connect_region("retries the broker"),
            ),
            call("b2", "emit_annotation", new_region()),
        ])
        .with_text("Makes connect retry."),
    ]);
    let report = annotate_head(&repo, None, provider.as_ref()).unwrap();
    let Report::Annotated {
        regions, partial, ..
    } = report
    else {
        panic!("{report:?}");
    };
    assert_eq!((regions, partial), (2, false));
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let first = cap(&requests[0]);
    assert_eq!(first, 4_096, "spec 000's maxTokensPerResponse");
    assert!(
        cap(&requests[1]) > first,
        "the retry asks for more, within the window: {}",
        cap(&requests[1])
    );
    assert_eq!(
        requests[0].json()["messages"],
        requests[1].json()["messages"],
        "the cut reply is dropped unanswered"
    );
    assert_eq!(stored(&repo).summary, "Makes connect retry.");
}

/// Still cut after the retry: the whole emission is kept, the model is told
/// to emit the rest one region per call, and the commit is annotated.
#[test]
fn a_reply_still_cut_keeps_its_whole_emissions_and_asks_for_one_region_per_call() {
    let repo = repo();
    let cut = || {
        Reply::tool_calls(vec![
            call("a", "emit_annotation", connect_region("retries the broker")),
            call(
                "b",
                "emit_annotation",
                json!("{\"file\": \"src/client.rs\", \"ast_anchor\""),
            ),
        ])
        .with_text("Makes connect retry.")
        .cut_off()
    };
    let (server, provider) = chat(vec![
        cut(),
        cut(),
        emit("c", new_region()),
        Reply::text("Done."),
    ]);
    let report = annotate_head(&repo, None, provider.as_ref()).unwrap();
    assert!(
        matches!(report, Report::Annotated { regions: 2, .. }),
        "{report:?}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let third = requests[2].json();
    let said = third["messages"].to_string();
    assert_contains(&said, "cut off at the");
    assert_contains(&said, "one region per emit_annotation call");
    assert_eq!(tool_results(&third).len(), 1, "the cut call was dropped");
    assert_eq!(cap(&requests[2]), 4_096, "the usual cap again");
    let note = stored(&repo);
    assert_eq!(note.regions.len(), 2);
    assert_eq!(note.summary, "Makes connect retry.");
}

/// An empty reply is a failure (retried by the next backfill), never a
/// decline: backfill logs it to failed.log and writes no note.
#[test]
fn an_empty_reply_fails_the_commit_and_is_logged_for_a_retry() {
    let repo = repo();
    let ctx = context(&repo, "HEAD", None);
    let (_server, provider) = chat(vec![Reply::text("")]);
    let err = run_agent(&ctx, provider.as_ref(), &AnnotateConfig::default()).unwrap_err();
    assert!(
        matches!(err, AgentError::NoAnnotations { turns: 1 }),
        "{err}"
    );

    let empty_for_v2 = annotator(std::time::Duration::ZERO, None);
    let (_server, provider) = chat_with(move |request| {
        if String::from_utf8_lossy(&request.body).contains("connect retries three times") {
            Reply::text("")
        } else {
            empty_for_v2(request)
        }
    });
    let gitrepo = gitctx::Repo::discover(repo.path()).unwrap();
    let selection = backfill::select(&gitrepo, &SelectOptions::default()).unwrap();
    let commits: Vec<_> = selection.commits.iter().map(|c| c.id).collect();
    assert_eq!(commits.len(), 2);
    let summary = runtime().block_on(backfill::run(
        repo.path(),
        &commits,
        provider,
        &AnnotateConfig::default(),
        &RunOptions {
            concurrency: 1,
            redactor: llm::Redactor::default(),
            pause: None,
        },
        std::future::pending(),
        |_| {},
    ));
    assert_eq!(
        (summary.annotated, summary.declined, summary.failed),
        (1, 0, 1),
        "{summary:?}"
    );
    let log = std::fs::read_to_string(repo.join(".git/ultragit/failed.log")).unwrap();
    assert_contains(&log, &repo.rev_parse("HEAD"));
    assert_contains(&log, "no annotations");
    let notes = gitrepo.notes(ultragit_annotate::NOTES_REF).unwrap();
    assert!(
        notes
            .read(repo.rev_parse("HEAD").parse().unwrap())
            .unwrap()
            .is_none(),
        "no note, so the next backfill retries it"
    );
}

/// A commit touching only release notes costs no model call.
#[test]
fn a_docs_only_commit_is_trivial_without_a_model_call() {
    let repo = repo();
    repo.write(
        "Documentation/RelNotes/2.48.0.adoc",
        "Git v2.48 Release Notes\n",
    )
    .write("CHANGELOG.md", "## 2.48\n");
    repo.commit_all("Start the 2.48 cycle");
    let (server, provider) = chat(vec![]);
    let report = annotate_head(&repo, None, provider.as_ref()).unwrap();
    assert!(
        matches!(
            report,
            Report::Skipped {
                reason: Trivial::DocsOnly,
                ..
            }
        ),
        "{report:?}"
    );
    assert!(server.requests().is_empty());
    // Backfill does not even pick it.
    let gitrepo = gitctx::Repo::discover(repo.path()).unwrap();
    let selection = backfill::select(&gitrepo, &SelectOptions::default()).unwrap();
    assert_eq!(selection.trivial, 1, "{:?}", selection.commits);
}

/// The structured mode (no tools) declines only through its `decline` field.
#[test]
fn a_structured_answer_declines_only_when_it_says_so() {
    let repo = repo();
    let ctx = context(&repo, "HEAD", None);
    let answer = |decline: Value| {
        let mut value = json!({"summary": "A version bump.", "regions": [], "cross_cutting": []});
        if !decline.is_null() {
            value["decline"] = decline;
        }
        Reply::text(&value.to_string())
    };
    let off = AnnotateConfig {
        tool_use: ultragit_annotate::ToolUse::Off,
        ..AnnotateConfig::default()
    };
    let (_server, provider) = chat(vec![answer(json!("Only a version bump."))]);
    let declined = run_agent(&ctx, provider.as_ref(), &off).unwrap();
    assert_eq!(
        declined.declined(),
        Some("the model found nothing semantic to record: Only a version bump.")
    );
    let (_server, provider) = chat(vec![answer(Value::Null)]);
    let err = run_agent(&ctx, provider.as_ref(), &off).unwrap_err();
    assert!(matches!(err, AgentError::NoAnnotations { .. }), "{err}");
}
