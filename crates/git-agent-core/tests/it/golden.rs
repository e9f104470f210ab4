//! Snapshots of what the model is sent: every request layer for a normal and an
//! amend commit message (guidance included), and the tool definitions.

use git_agent_core::commit_msg::{self, Options, Request};
use git_agent_core::context::Mode;
use testkit::TestRepo;

use crate::support::{project, stage_retries, to_amend};

/// The request layers as one reviewable text, temp paths replaced.
fn layers(request: &Request, repo: &TestRepo) -> String {
    let mut out = format!("=== instructions\n{}\n", request.task.system);
    for message in &request.task.messages {
        out.push_str(&format!("=== {:?}\n{}\n", message.role, message.text()));
    }
    let root = repo.path().to_string_lossy().into_owned();
    let canonical = std::fs::canonicalize(repo.path())
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| root.clone());
    out.replace(&canonical, "[REPO]").replace(&root, "[REPO]")
}

fn guided_project() -> TestRepo {
    let repo = project();
    repo.write("AGENTS.md", "Use Conventional Commits.\n")
        .write("src/AGENTS.md", "Networking code lives in net.rs.\n");
    repo.commit_all("chore: add agent guidance");
    repo
}

#[test]
fn commit_message_request() {
    let repo = guided_project();
    stage_retries(&repo);
    let request = commit_msg::prepare(
        repo.path(),
        &Options {
            shared: git_evidence::Options {
                operator_hint: Some("Mention the <retry> count & keep it short".to_owned()),
                ..git_evidence::Options::default()
            },
            ..Options::default()
        },
    )
    .unwrap();
    assert_eq!(request.prepared.mode, Mode::Staged);
    insta::assert_snapshot!(layers(&request, &repo));
}

#[test]
fn amend_message_request() {
    let repo = guided_project();
    to_amend(
        &repo,
        "fix(net): accept every host\n\nEmpty hosts were refused.\n\nRefs: NET-7",
    );
    let request = commit_msg::prepare(
        repo.path(),
        &Options {
            amend: true,
            ..Options::default()
        },
    )
    .unwrap();
    assert_eq!(request.prepared.mode, Mode::Amend);
    assert_eq!(request.checks.shape_options.keep_trailers, ["Refs"]);
    insta::assert_snapshot!(layers(&request, &repo));
}

#[test]
fn commit_message_tools() {
    let dir = tempfile::tempdir().unwrap();
    let definitions = git_agent_core::tools::registry(dir.path(), Mode::Amend).definitions();
    insta::assert_json_snapshot!(definitions);
}
