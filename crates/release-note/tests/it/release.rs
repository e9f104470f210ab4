//! `release-note` on real repositories: ranges and shortcuts, the prepared
//! evidence, submodules with and without their history, the model's JSON and the
//! Markdown built from it, over real HTTP.

use std::sync::Arc;

use git_evidence::{Error, Options};
use gitctx::Bump;
use llm::{LlmProvider, ProviderConfig, ProviderKind};
use release_note::{self as release, RangeSpec, Section, Signal};
use serde_json::json;
use testkit::{FakeLlm, Flavor, Reply, TestRepo, assert_contains_all, call};

/// A fake server of `flavor` playing `script`, and a provider of `kind` for it.
fn fake(flavor: Flavor, kind: ProviderKind, script: Vec<Reply>) -> (FakeLlm, Arc<dyn LlmProvider>) {
    let server = FakeLlm::start(flavor, script);
    let mut config = ProviderConfig::new(kind, "test-model");
    config.base_url = Some(server.base_url());
    let provider = llm::build_provider(config).unwrap();
    (server, provider)
}

fn responses(script: Vec<Reply>) -> (FakeLlm, Arc<dyn LlmProvider>) {
    fake(
        Flavor::OpenAiResponses,
        ProviderKind::OpenAiResponses,
        script,
    )
}

pub(crate) fn chat(script: Vec<Reply>) -> (FakeLlm, Arc<dyn LlmProvider>) {
    fake(Flavor::OpenAiChat, ProviderKind::OpenAiChat, script)
}

/// v1.0.0, then a feature (PR #12), a fix, a docs change, a test-only change
/// and a dependency bump; origin is a GitHub repository.
fn history() -> TestRepo {
    let repo = TestRepo::new();
    repo.git(&["remote", "add", "origin", "https://github.com/acme/app.git"]);
    repo.write("src/server.rs", "pub fn serve() {}\n")
        .write("README.md", "# app\n")
        .write(
            "Cargo.lock",
            "version = 3\n\n[[package]]\nname = \"tokio\"\nversion = \"1.37.0\"\n",
        );
    repo.commit_all("feat: first release");
    repo.tag("v1.0.0");
    repo.write(
        "src/server.rs",
        "pub fn serve() {}\npub fn serve_tls() {}\n",
    );
    repo.commit_all("feat(server): serve TLS (#12)\n\nAdds serve_tls, configured with --tls-cert.");
    repo.write(
        "src/server.rs",
        "pub fn serve() { /* no panic on empty host */ }\npub fn serve_tls() {}\n",
    );
    let long_body: String = (1..=15)
        .map(|i| format!("Line {i} of a long explanation.\n"))
        .collect();
    repo.commit_all(&format!(
        "fix(server): do not panic on an empty host\n\n{long_body}"
    ));
    repo.write("docs/internal.md", "notes\n");
    repo.commit_all("docs: internal notes");
    repo.write("tests/server.rs", "#[test]\nfn t() {}\n");
    repo.commit_all("test: cover serve");
    repo.write(
        "Cargo.lock",
        "version = 3\n\n[[package]]\nname = \"tokio\"\nversion = \"1.38.1\"\n",
    );
    repo.commit_all("build(deps): bump tokio to 1.38.1");
    repo
}

/// The range `spec` names in `repo`, or why there is none.
fn range_of(repo: &TestRepo, spec: &RangeSpec) -> Result<release::Range, Error> {
    release::prepare(repo.path(), spec, &Options::default()).map(|req| req.context.range)
}

/// The evidence gathered from `repo` for `spec`.
pub(crate) fn prepared(repo: &TestRepo, spec: &RangeSpec) -> release::ReleaseContext {
    request(repo, spec.clone()).context
}

/// The evidence as the model sees it: the `<prepared_context>` block of the
/// task prompt.
pub(crate) fn evidence(request: &release::Request) -> String {
    let text = request.task.messages.last().unwrap().text();
    let start = text.find("<prepared_context mode=").expect("the evidence");
    let end = text.rfind("</prepared_context>\n").expect("its end");
    text[start..end + "</prepared_context>\n".len()].to_owned()
}

fn subjects(commits: &[release::ReleaseCommit]) -> Vec<&str> {
    commits.iter().map(|c| c.subject.as_str()).collect()
}

pub(crate) fn explicit(base: &str, release: &str) -> RangeSpec {
    RangeSpec::Explicit {
        base: base.to_owned(),
        release: release.to_owned(),
    }
}

#[test]
fn explicit_ranges_are_peeled_and_validated() {
    let repo = history();
    repo.tag_annotated("v1.1.0", "HEAD", "Release 1.1.0");
    let range = range_of(&repo, &explicit("v1.0.0", "v1.1.0")).unwrap();
    assert_eq!(
        range.base.commit.to_hex(),
        repo.rev_parse("v1.0.0^{commit}")
    );
    assert_eq!(range.release.commit.to_hex(), repo.rev_parse("HEAD"));
    assert_eq!(range.version.as_deref(), Some("1.1.0"));
    assert_eq!(range.bump, None);
    let err = range_of(&repo, &explicit("v9.9.9", "HEAD")).unwrap_err();
    assert!(
        err.to_string().contains("unknown revision 'v9.9.9'"),
        "{err}"
    );
    let err = range_of(&repo, &explicit("HEAD", "v1.1.0")).unwrap_err();
    assert!(matches!(err, Error::EmptyRange { .. }), "{err:?}");
    // Reversed: no commits from HEAD to v1.0.0.
    let err = range_of(&repo, &explicit("HEAD", "v1.0.0")).unwrap_err();
    assert!(
        err.to_string().contains("is the order BASE RELEASE?"),
        "{err}"
    );
}

#[test]
fn shortcuts_bump_the_latest_reachable_version_tag() {
    let repo = history();
    let range = range_of(&repo, &RangeSpec::Bump(Bump::Minor)).unwrap();
    assert_eq!(range.base.name, "v1.0.0");
    assert_eq!(range.release.name, "HEAD");
    assert_eq!(range.version.as_deref(), Some("1.1.0"));
    assert_eq!(range.bump.as_deref(), Some("minor"));
    let range = range_of(&repo, &RangeSpec::Bump(Bump::Major)).unwrap();
    assert_eq!(range.version.as_deref(), Some("2.0.0"));

    // Without the `v`, and a later tag on another branch is not reachable.
    let plain = TestRepo::new();
    plain.commit_file("a.txt", "1\n", "one");
    plain.tag("1.4.2");
    plain.commit_file("a.txt", "2\n", "two");
    plain.checkout_new("other");
    plain.commit_file("b.txt", "x\n", "elsewhere");
    plain.tag("9.0.0");
    plain.checkout("main");
    let range = range_of(&plain, &RangeSpec::Bump(Bump::Patch)).unwrap();
    assert_eq!(range.base.name, "1.4.2");
    assert_eq!(range.version.as_deref(), Some("1.4.3"));
}

#[test]
fn no_version_tag_is_a_clear_error() {
    let repo = TestRepo::new();
    repo.commit_file("a.txt", "1\n", "one");
    repo.tag("release-candidate");
    let err = range_of(&repo, &RangeSpec::Bump(Bump::Patch)).unwrap_err();
    assert!(matches!(err, Error::NoVersionTag), "{err:?}");
    assert!(err.to_string().contains("pass BASE and RELEASE"), "{err}");
}

#[test]
fn the_evidence_of_each_commit() {
    let req = request(&history(), explicit("v1.0.0", "HEAD"));
    let ctx = &req.context;
    assert_eq!(
        subjects(&ctx.commits),
        [
            "build(deps): bump tokio to 1.38.1",
            "test: cover serve",
            "docs: internal notes",
            "fix(server): do not panic on an empty host",
            "feat(server): serve TLS (#12)",
        ]
    );
    let feat = &ctx.commits[4];
    assert_eq!(feat.pull_requests, [12]);
    assert_eq!(feat.signals, [Signal::Runtime]);
    assert_eq!((feat.additions, feat.deletions), (1, 0));
    assert_contains_all(&feat.excerpt, &["+pub fn serve_tls() {}"]);
    let fix = &ctx.commits[3];
    assert!(fix.clamped);
    assert!(fix.message.lines().count() <= 11, "{}", fix.message);
    assert_eq!(ctx.commits[0].signals, [Signal::Dependency]);
    assert_eq!(ctx.commits[1].signals, [Signal::Tests]);
    assert_eq!(ctx.commits[2].signals, [Signal::Docs]);
    assert!(ctx.touched_code);
    let links = ctx.links.as_ref().unwrap();
    assert_eq!(links.web, "https://github.com/acme/app");
    // Candidates: the feature and the fix are in, tests out.
    let feature = ctx
        .candidates
        .iter()
        .find(|c| c.section == Section::Features)
        .unwrap();
    assert!(feature.include);
    assert!(
        ctx.candidates
            .iter()
            .any(|c| c.section == Section::Fixes && c.include)
    );
    let text = evidence(&req);
    assert_contains_all(
        &text,
        &[
            "<candidates count=",
            "<commits count=\"5\"",
            "signals=\"runtime\"",
            "pull_requests=\"#12\"",
            "Include/omit policy",
            "<excerpt>",
            "clamped=\"true\"",
        ],
    );
}

/// A parent whose `vendor/lib` submodule moves from one commit to another.
fn with_submodule(checked_out: bool) -> (TestRepo, TestRepo) {
    let sub = TestRepo::named("lib");
    sub.commit_file("lib.txt", "1\n", "Initial library");
    let parent = TestRepo::new();
    parent.git(&["remote", "add", "origin", "git@github.com:acme/app.git"]);
    parent.commit_file("app.txt", "app\n", "feat: app");
    parent.add_submodule("vendor/lib", &sub);
    parent.commit_all("build: add lib");
    // .gitmodules points at a sibling repository of origin.
    parent.git(&[
        "config",
        "-f",
        ".gitmodules",
        "submodule.vendor/lib.url",
        "../lib.git",
    ]);
    parent.commit_all("build: lib lives next to app");
    parent.tag("v0.1.0");
    if checked_out {
        std::fs::write(parent.join("vendor/lib/lib.txt"), "2\n").unwrap();
        parent.git(&["-C", "vendor/lib", "commit", "-qam", "fix: parser overflow"]);
        std::fs::write(parent.join("vendor/lib/lib.txt"), "3\n").unwrap();
        parent.git(&[
            "-C",
            "vendor/lib",
            "commit",
            "-qam",
            "feat: streaming decode",
        ]);
        parent.stage(&["vendor/lib"]);
    } else {
        let new = sub.commit_file("lib.txt", "9\n", "not fetched here");
        parent.git(&[
            "update-index",
            "--cacheinfo",
            &format!("160000,{new},vendor/lib"),
        ]);
    }
    parent.commit("build: update lib");
    (parent, sub)
}

#[test]
fn a_moved_submodule_with_its_history_groups_its_commits() {
    let (parent, _sub) = with_submodule(true);
    let req = request(&parent, explicit("v0.1.0", "HEAD"));
    let ctx = &req.context;
    assert_eq!(ctx.submodules.len(), 1);
    let group = &ctx.submodules[0];
    assert_eq!(group.path, "vendor/lib");
    assert_eq!(
        subjects(&group.commits),
        ["feat: streaming decode", "fix: parser overflow"]
    );
    assert_eq!(
        group.links.as_ref().unwrap().web,
        "https://github.com/acme/lib"
    );
    assert_eq!(ctx.commits[0].signals, [Signal::Submodule]);
    assert!(ctx.touched_code);
    let text = evidence(&req);
    assert_contains_all(
        &text,
        &["<submodule path=\"vendor/lib\"", "feat: streaming decode"],
    );
}

#[test]
fn a_moved_submodule_without_its_checkout_is_noted() {
    let (parent, _sub) = with_submodule(false);
    let ctx = prepared(&parent, &explicit("v0.1.0", "HEAD"));
    let group = &ctx.submodules[0];
    assert!(group.commits.is_empty());
    assert!(
        group.note.as_deref().unwrap().contains("not"),
        "{:?}",
        group.note
    );
}

fn context() -> (TestRepo, release::ReleaseContext) {
    let repo = history();
    let ctx = prepared(&repo, &RangeSpec::Bump(Bump::Minor));
    (repo, ctx)
}

/// A model answer citing the context's real short ids.
fn good_answer(ctx: &release::ReleaseContext) -> serde_json::Value {
    let id = |subject: &str| {
        ctx.commits
            .iter()
            .find(|c| c.subject.starts_with(subject))
            .unwrap()
            .short
            .clone()
    };
    json!({"sections": [
        {"section": "fixes", "items": [
            {"text": "The server no longer panics when the host is empty.", "refs": [{"kind": "commit", "id": id("fix(server)")}]}
        ]},
        {"section": "features", "items": [
            {"text": "Serve TLS with `serve_tls`, configured by `--tls-cert`.", "refs": [{"kind": "commit", "id": id("feat(server)")}, {"kind": "pull_request", "id": "#12"}]}
        ]},
        {"section": "dependencies", "items": [
            {"text": "tokio 1.37.0 → 1.38.1.", "refs": [{"kind": "commit", "id": id("build(deps)")}]}
        ]}
    ]})
}

#[test]
fn golden_release_evidence_and_markdown() {
    let (repo, ctx) = context();
    let req = request(&repo, RangeSpec::Bump(Bump::Minor));
    let root = repo.path().to_string_lossy().into_owned();
    insta::assert_snapshot!(
        "release_prepared_context",
        evidence(&req).replace(&root, "[REPO]")
    );
    // The answer passes every check (refs, sections, the Markdown built from
    // it) the first time.
    let (_server, provider) = chat(vec![Reply::text(&good_answer(&ctx).to_string())]);
    let note = run(&req, provider.as_ref()).unwrap();
    assert!(!note.repaired);
    assert!(note.markdown.starts_with("### "), "{}", note.markdown);
    insta::assert_snapshot!("release_markdown", note.markdown);
}

pub(crate) fn request(repo: &TestRepo, spec: RangeSpec) -> release::Request {
    release::prepare(repo.path(), &spec, &Options::default()).unwrap()
}

pub(crate) fn run(
    request: &release::Request,
    provider: &dyn llm::LlmProvider,
) -> Result<release::Note, Error> {
    testkit::runtime().block_on(release::generate(request, provider, &mut agent::NullSink))
}

#[test]
fn the_fallback_tool_then_a_structured_answer() {
    let (repo, ctx) = context();
    let req = request(&repo, RangeSpec::Bump(Bump::Minor));
    assert_eq!(req.task.tools.names(), ["repo_summary"]);
    // A release note gets at least 6 model steps, whatever it is given.
    let mut few = Options::default();
    few.budgets.max_steps = 1;
    let floored = release::prepare(repo.path(), &RangeSpec::Bump(Bump::Minor), &few).unwrap();
    assert_eq!(floored.budgets.max_steps, 6);
    let (server, provider) = responses(vec![
        Reply::tool_calls(vec![call("c1", "repo_summary", json!({}))]),
        Reply::text(&good_answer(&ctx).to_string()),
    ]);
    let note = run(&req, provider.as_ref()).unwrap();
    assert!(
        note.markdown.starts_with("### Features\n"),
        "{}",
        note.markdown
    );
    assert_contains_all(
        &note.markdown,
        &["### Full Changelog", "https://github.com/acme/app/pull/12"],
    );
    assert_eq!(note.tool_calls, 1);
    let first = server.requests()[0].json();
    assert_eq!(first["text"]["format"]["type"], json!("json_schema"));
    let tools = first["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0]["name"], json!("repo_summary"));
}

#[test]
fn an_answer_with_unknown_refs_is_repaired_once() {
    let (repo, ctx) = context();
    let req = request(&repo, RangeSpec::Bump(Bump::Minor));
    let bad = json!({"sections": [
        {"section": "features", "items": [{"text": "Serve TLS, enabling operators to secure traffic.", "refs": [{"kind": "commit", "id": "deadbeef"}]}]},
        {"section": "features", "items": [{"text": "Also this.", "refs": []}]}
    ]});
    let (server, provider) = chat(vec![
        Reply::text(&bad.to_string()),
        Reply::text(&good_answer(&ctx).to_string()),
    ]);
    let note = run(&req, provider.as_ref()).unwrap();
    assert!(note.repaired);
    let repair = server.requests()[1].raw_text();
    assert_contains_all(&repair, &["deadbeef", "enabling operators", "features"]);
    // Still bad after the repair: an error that says why.
    let (_server, provider) = chat(vec![Reply::text(&bad.to_string()), Reply::text("not json")]);
    let err = run(&req, provider.as_ref()).unwrap_err();
    assert!(matches!(err, Error::Invalid { .. }), "{err:?}");
}

#[test]
fn a_cut_off_answer_is_repaired_once_with_twice_the_cap() {
    let (repo, ctx) = context();
    let mut options = Options::default();
    options.budgets.max_tokens = Some(1000);
    let req = release::prepare(repo.path(), &RangeSpec::Bump(Bump::Minor), &options).unwrap();
    let good = good_answer(&ctx).to_string();
    let half = &good[..good.len() / 2];
    let (server, provider) = responses(vec![Reply::max_tokens(half), Reply::text(&good)]);
    let note = run(&req, provider.as_ref()).unwrap();
    assert!(note.repaired);
    assert!(
        note.markdown.starts_with("### Features\n"),
        "{}",
        note.markdown
    );
    let sent = server.requests();
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[0].json()["max_output_tokens"], json!(1000));
    assert_eq!(sent[1].json()["max_output_tokens"], json!(2000));
    testkit::assert_contains(
        &sent[1].raw_text(),
        "cut off by the output token limit (1000 tokens)",
    );
    // Cut off twice: a clear failure, not half a note.
    let (_server, provider) = responses(vec![Reply::max_tokens(half), Reply::max_tokens(half)]);
    let err = run(&req, provider.as_ref()).unwrap_err();
    assert!(matches!(err, Error::Invalid { .. }), "{err:?}");
}

#[test]
fn release_note_request() {
    let (repo, _ctx) = context();
    let req = request(&repo, RangeSpec::Bump(Bump::Minor));
    let mut out = format!("=== instructions\n{}\n", req.task.system);
    for message in &req.task.messages[..req.task.messages.len() - 1] {
        out.push_str(&format!("=== {:?}\n{}\n", message.role, message.text()));
    }
    let root = repo.path().to_string_lossy().into_owned();
    insta::assert_snapshot!(out.replace(&root, "[REPO]"));
    let format = req.task.json_format.as_ref().expect("a structured answer");
    insta::assert_json_snapshot!("release_answer_schema", format.schema);
}
