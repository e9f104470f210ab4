//! The whole task over real HTTP against the fake servers: tool round trips,
//! finish states, the repair pass, malformed replies, shaping, and the rules a
//! message must keep.

use git_agent_core::Error;
use serde_json::{Value, json};
use testkit::{Reply, TestRepo, assert_contains, call};

use crate::support::{
    chat, generate, moved_submodule, project, repaired, repaired_naming, repaired_to, request,
    responses, retries_request, strings, task_id_branch, to_amend,
};

#[test]
fn a_tool_round_trip_over_the_responses_api() {
    let (_repo, req) = retries_request();
    let (server, provider) = responses(vec![
        Reply::tool_calls(vec![call(
            "c1",
            "git_staged_diff_for_paths",
            json!({"paths": ["src/net.rs"], "context_lines": 1}),
        )]),
        Reply::text(
            "fix(net): retry connect three times\n\nConnect now retries a failed attempt up to three times before giving up, so a broker that drops the first attempt after a failover no longer fails the caller.",
        ),
    ]);
    let generated = generate(&req, provider.as_ref()).unwrap();
    assert_eq!(
        generated.message,
        "fix(net): retry connect three times\n\nConnect now retries a failed attempt up to three times before giving up,\nso a broker that drops the first attempt after a failover no longer\nfails the caller."
    );
    assert_eq!((generated.steps, generated.tool_calls), (2, 1));
    assert!(!generated.repaired && !generated.finalized);

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let first = requests[0].json();
    assert_eq!(first["store"], json!(false));
    assert_eq!(first["parallel_tool_calls"], json!(false));
    assert!(first.get("max_tool_calls").is_none());
    assert_contains(first["instructions"].as_str().unwrap(), "You are git-agent");
    let tools = first["tools"].as_array().unwrap();
    assert!(tools.iter().all(|t| t["strict"] == json!(true)));
    assert!(
        tools
            .iter()
            .any(|t| t["name"] == "git_staged_diff_for_paths")
    );
    // Developer layers before the task prompt.
    let input = first["input"].as_array().unwrap();
    let roles: Vec<&str> = input
        .iter()
        .map(|i| i["role"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(roles, ["developer", "developer", "user"]);
    // The tool's envelope went back as a function_call_output.
    let second = requests[1].json();
    let output = second["input"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["type"] == "function_call_output")
        .expect("a function_call_output item");
    let envelope: Value = serde_json::from_str(output["output"].as_str().unwrap()).unwrap();
    assert_eq!(envelope["ok"], json!(true));
    assert_eq!(envelope["tool"], json!("git_staged_diff_for_paths"));
    assert_contains(
        envelope["data"]["diff"].as_str().unwrap(),
        "+    for _ in 0..3 {",
    );
}

#[test]
fn think_blocks_fences_and_unrequested_trailers_are_shaped_away() {
    let (_repo, req) = retries_request();
    let (_server, provider) = chat(vec![Reply::text(
        "<think>The user wants a message. Let me look.</think>\n```\nfix(net): retry connect\n\nRetries three times.\n\nCo-authored-by: Claude <noreply@anthropic.com>\n```",
    )]);
    let generated = generate(&req, provider.as_ref()).unwrap();
    assert_eq!(
        generated.message,
        "fix(net): retry connect\n\nRetries three times."
    );
}

#[test]
fn one_repair_pass_fixes_an_invalid_message() {
    let (_repo, req) = retries_request();
    let long = format!("fix(net): {}", "retry ".repeat(15));
    let (message, requests) = repaired(
        &req,
        &format!("{long}\n\nLet me know if you want changes."),
        "fix(net): retry connect three times",
    );
    assert_eq!(message, "fix(net): retry connect three times");
    let repair = requests[1].raw_text();
    assert!(repair.contains("did not pass validation"), "{repair}");
    assert!(repair.contains("72"), "{repair}");
    assert!(repair.contains("Let me know"), "{repair}");
    // The repair request offers no tool calls.
    assert_eq!(requests[1].json()["tool_choice"], json!("none"));
}

#[test]
fn a_message_still_invalid_after_the_repair_is_an_error_that_keeps_it() {
    let (_repo, req) = retries_request();
    let (_server, provider) = chat(vec![
        Reply::text("Here is my explanation of the change.\n\n```rust\nfn x() {}\n```"),
        Reply::text("Still:\n\n```\ncode\n``` and more"),
    ]);
    let err = generate(&req, provider.as_ref()).unwrap_err();
    match err {
        Error::Invalid { problems, message } => {
            assert!(problems.iter().any(|p| p.contains("fence")), "{problems:?}");
            assert!(message.contains("code"), "{message}");
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn the_step_budget_ends_in_one_request_without_tools() {
    let (_repo, mut req) = retries_request();
    req.budgets.max_steps = 2;
    let look = || Reply::tool_calls(vec![call("c", "git_staged_stat", json!({}))]);
    let (server, provider) = chat(vec![
        look(),
        look(),
        Reply::text("fix(net): retry connect three times"),
    ]);
    let generated = generate(&req, provider.as_ref()).unwrap();
    assert!(generated.finalized);
    assert_eq!(generated.tool_calls, 2);
    let last = server.requests()[2].json();
    assert_eq!(last["tool_choice"], json!("none"));
    assert_contains(&server.requests()[2].raw_text(), "budget is used up");
}

#[test]
fn unknown_tools_and_bad_arguments_come_back_as_errors_the_model_can_read() {
    let (repo, req) = retries_request();
    // A file of this test's own: /tmp is shared with whatever else runs.
    let leak = repo.join("leaked-output");
    let (server, provider) = chat(vec![
        Reply::tool_calls(vec![
            call("a", "run_shell", json!({"cmd": "rm -rf /"})),
            call(
                "b",
                "git_staged_diff_for_paths",
                json!({"paths": ["../../etc/passwd"]}),
            ),
            call(
                "c",
                "git_show_file_at_rev",
                json!({"rev": format!("--output={}", leak.display()), "path": "src/net.rs"}),
            ),
        ]),
        Reply::text("fix(net): retry connect three times"),
    ]);
    let generated = generate(&req, provider.as_ref()).unwrap();
    assert_eq!(generated.tool_calls, 3);
    let body = server.requests()[1].json();
    let results: Vec<Value> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| serde_json::from_str(m["content"].as_str().unwrap()).unwrap())
        .collect();
    assert_eq!(results.len(), 3);
    assert!(
        results.iter().all(|r| r["ok"] == json!(false)),
        "{results:?}"
    );
    assert!(!leak.exists());
}

#[test]
fn malformed_provider_replies_are_typed_errors() {
    let (_repo, req) = retries_request();
    let (_server, provider) = responses(vec![Reply::json(200, json!({"output": "not a list"}))]);
    let err = generate(&req, provider.as_ref()).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Agent(agent::AgentError::Provider(llm::LlmError::Malformed { .. }))
        ),
        "{err:?}"
    );
    let (_server, provider) = chat(vec![Reply::error(400, "model not found")]);
    let err = generate(&req, provider.as_ref()).unwrap_err();
    assert!(err.to_string().contains("model not found"), "{err}");
}

#[test]
fn amend_keeps_the_original_subject_and_rejects_delta_phrasing() {
    let repo = project();
    to_amend(
        &repo,
        "fix(net): accept every host (NET-7)\n\nEmpty hosts were refused.",
    );
    let req = request(&repo, true);
    // The repaired answer keeps the subject but drops the task ID.
    let (message, requests) = repaired(
        &req,
        "docs: also mention hosts in the README\n\nThis amend also updates the README.",
        "fix(net): accept every host\n\nEmpty hosts were refused; the README now says any host is accepted.",
    );
    assert_eq!(
        message,
        "fix(net): accept every host (NET-7)\n\nEmpty hosts were refused; the README now says any host is accepted."
    );
    let repair = requests[1].raw_text();
    assert_contains(&repair, "fix(net): accept every host (NET-7)");
    assert!(repair.to_lowercase().contains("also"), "{repair}");
    // Amend mode offers the amend tools.
    let body = requests[0].json();
    let tools = strings(&body["tools"], "/function/name");
    assert!(tools.contains(&"git_final_amended_diff"));
    assert!(tools.contains(&"git_amend_delta"));
}

#[test]
fn amend_keeps_a_subject_that_breaks_the_subject_rules() {
    // Fixed: "keep the subject exactly" contradicted "shorten it to 72" and
    // "remove commentary", so these amends could not succeed.
    for subject in [
        "Merge pull request #1234 from someone/branch-with-a-rather-long-name-here",
        "Here is the fix for the empty host check",
    ] {
        let repo = project();
        to_amend(&repo, subject);
        let req = request(&repo, true);
        let answer = format!("{subject}\n\nConnect accepts every host, and the README says so.");
        let (_server, provider) = chat(vec![Reply::text(&answer)]);
        let generated = generate(&req, provider.as_ref()).unwrap();
        assert!(!generated.repaired, "{subject}");
        assert_eq!(generated.message, answer);
    }
}

#[test]
fn amend_compares_the_kept_subject_exactly() {
    // Fixed: a change of case or punctuation passed as keeping the subject.
    let repo = project();
    to_amend(&repo, "Fix: accept every host");
    let req = request(&repo, true);
    repaired_to(
        &req,
        "fix: accept every host.",
        "Fix: accept every host\n\nThe README says so.",
        "keep the original subject exactly, character for character",
    );
}

#[test]
fn a_final_period_and_a_past_tense_get_the_repair_pass() {
    // Fixed: "Fixed stuff." passed validation.
    let (_repo, req) = retries_request();
    let (message, requests) = repaired(&req, "Fixed stuff.", "fix(net): retry connect");
    assert_eq!(message, "fix(net): retry connect");
    let repair = requests[1].raw_text();
    for problem in [
        "remove the period at the end of the subject",
        "'Fixed' is past tense",
    ] {
        assert_contains(&repair, problem);
    }
}

#[test]
fn the_branch_task_id_is_kept_on_the_subject() {
    let repo = task_id_branch();
    let req = request(&repo, false);
    let (_server, provider) = chat(vec![Reply::text("Set a to three")]);
    let generated = generate(&req, provider.as_ref()).unwrap();
    assert_eq!(generated.message, "Set a to three (PROJ-77)");
}

#[test]
fn submodule_summaries_must_be_in_the_message() {
    let (parent, _sub) = moved_submodule(&["Fix overflow in the parser"]);
    repaired_naming(
        &parent,
        "Update submodule",
        "Update vendor/lib\n\n- Fix overflow in the parser",
        "vendor/lib",
    );
}

#[test]
fn a_lockfile_only_message_must_name_a_package() {
    let repo = TestRepo::new();
    repo.write(
        "Cargo.lock",
        "version = 3\n\n[[package]]\nname = \"serde\"\nversion = \"1.0.200\"\n",
    );
    repo.commit_all("lock");
    repo.write(
        "Cargo.lock",
        "version = 3\n\n[[package]]\nname = \"serde\"\nversion = \"1.0.210\"\n",
    )
    .stage(&["Cargo.lock"]);
    let requests = repaired_naming(
        &repo,
        "Update dependencies",
        "Bump serde from 1.0.200 to 1.0.210",
        "serde",
    );
    assert_contains(&requests[0].raw_text(), "serde 1.0.200 → 1.0.210");
}

#[test]
fn an_answer_cut_off_by_the_token_limit_is_not_a_message() {
    let (_repo, req) = retries_request();
    // Cut off again after the repair pass (asked with a larger cap).
    let cut = || Reply::max_tokens("fix(net): retry connect three");
    let (_server, provider) = chat(vec![cut(), cut()]);
    let err = generate(&req, provider.as_ref()).unwrap_err();
    match err {
        Error::Invalid { problems, message } => {
            assert!(problems[0].contains("cut off"), "{problems:?}");
            assert_eq!(message, "fix(net): retry connect three");
        }
        other => panic!("unexpected {other:?}"),
    }
}
