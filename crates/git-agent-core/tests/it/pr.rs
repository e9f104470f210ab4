//! `pr-message`: the branch against `origin/HEAD`, with and without it, and the
//! squash task over real HTTP.

use commit_text::Style;
use git_agent_core::commit_msg::Options;
use git_agent_core::context::Limits;
use git_agent_core::{Error, pr_message};
use serde_json::json;
use testkit::{Reply, TestRepo, assert_contains, call};

use crate::support::{chat, generate, project, repaired, repaired_to};

/// The total budget of the branch's commit messages (16 KiB).
const BRANCH_MESSAGES_BYTES: usize = 16 * 1024;

/// `project()` on main (origin/main = HEAD), then a feature branch with three
/// commits, and one more commit on origin/main after the branch forked.
fn branch() -> TestRepo {
    let repo = project();
    repo.set_origin_head("main", "HEAD");
    repo.checkout_new("feature/retry");
    repo.write("src/net.rs", testkit::NET_RS_WITH_RETRIES);
    repo.commit_all("wip: retry loop");
    repo.write("README.md", "# demo\n\nConnect retries three times.\n");
    repo.commit_all("docs: mention retries\n\nRefs: NET-12");
    repo.write("src/lib.rs", "pub mod net;\n\n/// Adds.\npub fn add(a: i32, b: i32) -> i32 {\n    a.wrapping_add(b)\n}\n");
    repo.commit_all("address review");
    // origin/main moves on after the fork: not part of the branch.
    repo.checkout("main");
    repo.commit_file("CHANGELOG.md", "# changes\n", "chore: start a changelog");
    repo.set_origin_head("main", "HEAD");
    repo.checkout("feature/retry");
    repo
}

fn request(repo: &TestRepo) -> pr_message::Request {
    pr_message::prepare(repo.path(), &Options::default()).unwrap()
}

/// The squash-message request for `repo`, which must read as written in
/// `style`.
#[track_caller]
fn request_in(repo: &TestRepo, style: Style) -> pr_message::Request {
    let req = request(repo);
    assert_eq!(req.context.style.kind, style);
    req
}

#[test]
fn the_scope_is_the_branch_against_its_merge_base() {
    let repo = branch();
    let r = gitctx::Repo::discover(repo.path()).unwrap();
    let pr = pr_message::prepare_context(&r, &Limits::default()).unwrap();
    assert_eq!(pr.base.name, "origin/main");
    assert_eq!(pr.base.tip.subject, "chore: start a changelog");
    assert_eq!(pr.base.merge_base.to_hex(), repo.rev_parse("main~1"));
    assert_eq!(pr.branch.as_deref(), Some("feature/retry"));
    assert_eq!(
        pr.commits
            .iter()
            .map(|c| c.brief.subject.as_str())
            .collect::<Vec<_>>(),
        ["address review", "docs: mention retries", "wip: retry loop"]
    );
    assert!(pr.commits[1].message.contains("Refs: NET-12"));
    // The changelog that landed on origin/main after the fork is not ours.
    assert_eq!(
        pr.changes.path_names(),
        ["README.md", "src/lib.rs", "src/net.rs"]
    );
    assert!(pr.changes.diff.is_complete());
    assert_eq!(pr.recent[0].subject, "chore: start a changelog");
    let text = pr_message::render(&pr);
    assert!(text.contains("Base: origin/main at "), "{text}");
    assert!(text.contains("<changed_paths files=\"3\""), "{text}");
    assert!(text.contains("<branch_diff "), "{text}");
    assert!(text.contains("<branch_commits count=\"3\""), "{text}");
    assert!(!text.contains("CHANGELOG"), "{text}");
}

#[test]
fn without_origin_head_it_says_how_to_set_it() {
    let repo = project();
    repo.checkout_new("topic");
    repo.commit_file("x.txt", "x\n", "add x");
    let err = pr_message::prepare(repo.path(), &Options::default()).unwrap_err();
    assert!(matches!(err, Error::NoOriginHead), "{err:?}");
    assert_contains(&err.to_string(), "git remote set-head origin --auto");
}

#[test]
fn a_branch_without_commits_of_its_own_has_nothing_to_describe() {
    let repo = project();
    repo.set_origin_head("main", "HEAD");
    let err = pr_message::prepare(repo.path(), &Options::default()).unwrap_err();
    assert!(matches!(err, Error::NothingToDescribe { .. }), "{err:?}");
    assert!(err.to_string().contains("origin/main"), "{err}");
}

#[test]
fn no_tools_are_offered_and_calling_one_fails() {
    let repo = branch();
    let req = request(&repo);
    assert!(req.task.tools.is_empty());
    let (server, provider) = chat(vec![Reply::tool_calls(vec![call(
        "c1",
        "git_staged_diff",
        json!({}),
    )])]);
    let err = generate(&req, provider.as_ref()).unwrap_err();
    assert!(
        matches!(err, Error::Agent(agent::AgentError::ToolsNotAllowed { ref tool }) if tool == "git_staged_diff"),
        "{err:?}"
    );
    let body = server.requests()[0].json();
    assert!(
        body.get("tools")
            .is_none_or(|t| t.as_array().is_none_or(Vec::is_empty)),
        "{body}"
    );
}

#[test]
fn the_squash_message_is_conventional_and_repaired_once_without_tools() {
    let repo = branch();
    let req = request(&repo);
    let (message, requests) = repaired(
        &req,
        "Retry connects\n\n## Summary\n\nThis PR makes connect retry.\n\n- wip: retry loop\n- docs: mention retries\n- address review",
        "feat(net): retry connects three times\n\nConnect retries a failed attempt up to three times; the README says so and add() no longer overflows.",
    );
    assert_eq!(
        message,
        "feat(net): retry connects three times\n\nConnect retries a failed attempt up to three times; the README says so\nand add() no longer overflows."
    );
    let repair = requests[1].raw_text();
    assert!(repair.contains("Conventional Commits"), "{repair}");
    assert!(repair.contains("pull-request prose"), "{repair}");
    assert!(repair.contains("one by one"), "{repair}");
    // The repair request offers no tools either.
    assert!(requests[1].json().get("tools").is_none());
}

/// A ripgrep-like repository: origin/main writes `component: subject`; the
/// branch fixes the printer with a long message.
fn component_branch(body_lines: usize) -> TestRepo {
    let repo = TestRepo::new();
    repo.commit_file(
        "crates/printer/src/lib.rs",
        "pub fn p() {}\n",
        "printer: add the printer",
    );
    repo.commit_file(
        "crates/searcher/src/lib.rs",
        "pub fn s() {}\n",
        "searcher: add a searcher",
    );
    repo.commit_file(
        "Cargo.toml",
        "[workspace]\n",
        "deps: bump grep-searcher to 0.1.14",
    );
    repo.commit_file("README.md", "# rg\n", "doc: mention the printer");
    repo.commit_file("GUIDE.md", "# guide\n", "Fixes #3202");
    repo.set_origin_head("main", "HEAD");
    repo.checkout_new("printer-empty-lines");
    let body: String = (1..=body_lines)
        .map(|n| format!("Line {n} of why the printer needs this.\n"))
        .collect();
    repo.commit_file(
        "crates/printer/src/lib.rs",
        "pub fn p() { let _ = 1; }\n",
        &format!(
            "printer: fix empty lines\n\n{body}\nThe last reason, at the very end.\n\nPR #3192"
        ),
    );
    repo
}

#[test]
fn the_squash_subject_follows_the_repository_style() {
    let repo = component_branch(2);
    let req = request_in(&repo, Style::Component);
    assert_contains(&req.task.system, "writes `component: subject` subjects");
    assert!(!req.task.system.contains("follows Conventional Commits"));
    repaired_to(
        &req,
        "fix(printer): handle empty lines",
        "printer: handle empty lines",
        "uses the Conventional Commits type `fix`",
    );
}

#[test]
fn a_conventional_repository_gets_a_conventional_subject() {
    // Fixed: `net: …` passed as a Conventional Commits subject with type `net`.
    let repo = branch();
    let req = request_in(&repo, Style::Conventional);
    repaired_to(
        &req,
        "net: retry connects three times",
        "feat(net): retry connects three times",
        "is not a Conventional Commits subject",
    );
}

/// A repository whose origin/main has one commit for each of `subjects`
/// (oldest first), and a branch fixing the printer.
fn branch_after(subjects: &[&str]) -> TestRepo {
    let repo = TestRepo::new();
    for (n, subject) in subjects.iter().enumerate() {
        repo.commit_file("CHANGELOG.md", format!("{n}\n"), subject);
    }
    repo.set_origin_head("main", "HEAD");
    repo.checkout_new("printer-empty-lines");
    repo.commit_file(
        "crates/printer/src/lib.rs",
        "pub fn p() {}\n",
        "printer: fix empty lines",
    );
    repo
}

/// `answer` is accepted as it is, without a repair.
#[track_caller]
fn accepted(req: &pr_message::Request, answer: &str) {
    let (_server, provider) = chat(vec![Reply::text(answer)]);
    let generated = generate(req, provider.as_ref()).unwrap();
    assert!(!generated.repaired, "{answer}");
    assert_eq!(generated.message, answer);
}

#[test]
fn ripgrep_components_named_like_conventional_types_pass() {
    // Fixed: `doc: …` and `deps: …`, components ripgrep writes, were
    // rejected as Conventional Commits types.
    let repo = component_branch(2);
    let req = request_in(&repo, Style::Component);
    for answer in [
        "doc: explain how the printer handles empty lines",
        "deps: bump grep-printer to 0.2.1",
        "ci: test the printer on empty input",
        "printer: handle empty lines",
    ] {
        accepted(&req, answer);
    }
    repaired_to(
        &req,
        "feat: handle empty lines",
        "printer: handle empty lines",
        "uses the Conventional Commits type `feat`",
    );
}

#[test]
fn a_window_of_deps_doc_and_ci_commits_stays_a_component_repository() {
    // Fixed: ten recent `deps:`/`doc:`/`ci:` subjects read as Conventional
    // Commits, and `printer: …` was then rejected.
    let repo = branch_after(&[
        "printer: add the printer",
        "searcher: add a searcher",
        "ignore/types: add zig",
        "deps: bump regex to 1.10.4",
        "doc: fix a typo in the guide",
        "deps: bump memchr to 2.7.2",
        "ci: test on aarch64",
        "doc: mention --json in the FAQ",
        "deps: bump bstr to 1.9.1",
        "release: 14.1.0",
        "ci: pin the toolchain",
        "deps: bump globset to 0.4.14",
        "doc: update the changelog",
    ]);
    let req = request_in(&repo, Style::Component);
    accepted(&req, "printer: fix empty lines");
    accepted(&req, "deps: bump grep-printer to 0.2.1");
}

#[test]
fn a_conventional_repository_writing_mostly_docs_and_tests_stays_conventional() {
    let repo = branch_after(&[
        "docs: describe the printer",
        "test: cover empty lines",
        "feat(cli): add --json",
        "ci: cache the registry",
        "fix: handle a missing newline",
        "docs: fix a typo",
    ]);
    let req = request_in(&repo, Style::Conventional);
    accepted(&req, "fix(printer): handle empty lines");
    accepted(&req, "docs: explain empty lines");
    repaired_to(
        &req,
        "printer: handle empty lines",
        "fix(printer): handle empty lines",
        "is not a Conventional Commits subject",
    );
}

#[test]
fn branch_messages_are_sent_whole_when_short() {
    // Fixed: messages were cut after 10 lines, losing the end of the why.
    let repo = component_branch(30);
    let req = request(&repo);
    let message = &req.context.commits[0].message;
    assert!(
        message.ends_with("The last reason, at the very end.\n\nPR #3192"),
        "{message}"
    );
    assert_contains(
        &req.task.messages.last().unwrap().text(),
        "The last reason, at the very end.",
    );
}

#[test]
fn branch_messages_are_clamped_by_their_total_budget() {
    let repo = component_branch(2);
    let long: String = (1..=900)
        .map(|n| format!("Line {n} of a very long explanation.\n"))
        .collect();
    repo.commit_file(
        "crates/printer/src/lib.rs",
        "pub fn p() { let _ = 2; }\n",
        &format!("printer: explain\n\n{long}"),
    );
    repo.commit_file(
        "crates/printer/src/lib.rs",
        "pub fn p() { let _ = 3; }\n",
        "printer: short\n\nShort why.",
    );
    let req = request(&repo);
    let messages: Vec<&str> = req
        .context
        .commits
        .iter()
        .map(|c| c.message.as_str())
        .collect();
    assert_eq!(messages[0], "printer: short\n\nShort why.");
    assert!(
        messages[1].starts_with("printer: explain\n\nLine 1 of"),
        "{}",
        messages[1]
    );
    assert!(messages[1].ends_with("\n[…]"), "{}", messages[1]);
    assert!(messages[2].ends_with("PR #3192"), "{}", messages[2]);
    let total: usize = messages.iter().map(|m| m.len()).sum();
    assert!(total <= BRANCH_MESSAGES_BYTES + 16, "{total}");
    assert!(total > BRANCH_MESSAGES_BYTES / 2, "{total}");
}

#[test]
fn pr_message_request() {
    let repo = branch();
    let req = request(&repo);
    let mut out = format!("=== instructions\n{}\n", req.task.system);
    for message in &req.task.messages {
        out.push_str(&format!("=== {:?}\n{}\n", message.role, message.text()));
    }
    let root = repo.path().to_string_lossy().into_owned();
    insta::assert_snapshot!(out.replace(&root, "[REPO]"));
}
