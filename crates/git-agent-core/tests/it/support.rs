//! Shared helpers.

use std::sync::Arc;

use git_agent_core::commit_msg::{self, Generated, MessageRequest, Options, Request};
use git_agent_core::context::{self, Limits, Mode, Prepared};
use llm::{LlmProvider, ProviderConfig, ProviderKind, RetryPolicy};
use testkit::{FakeLlm, Flavor, RecordedRequest, Reply, TestRepo};

/// A provider of `kind` for `server`, retrying once at once.
pub fn provider(server: &FakeLlm, kind: ProviderKind) -> Arc<dyn LlmProvider> {
    let mut config = ProviderConfig::new(kind, "test-model");
    config.base_url = Some(server.base_url());
    config.http.retry = RetryPolicy::immediate(2);
    llm::build_provider(config).unwrap()
}

/// A fake Responses API server with `script`, and a provider for it.
pub fn responses(script: Vec<Reply>) -> (FakeLlm, Arc<dyn LlmProvider>) {
    let server = FakeLlm::start(Flavor::OpenAiResponses, script);
    let provider = provider(&server, ProviderKind::OpenAiResponses);
    (server, provider)
}

/// A fake Chat Completions server with `script`, and a provider for it.
pub fn chat(script: Vec<Reply>) -> (FakeLlm, Arc<dyn LlmProvider>) {
    let server = FakeLlm::start(Flavor::OpenAiChat, script);
    let provider = provider(&server, ProviderKind::OpenAiChat);
    (server, provider)
}

pub fn prepared(repo: &TestRepo, mode: Mode) -> Prepared {
    let r = gitctx::Repo::discover(repo.path()).unwrap();
    context::prepare(&r, mode, &Limits::default()).unwrap()
}

pub fn request(repo: &TestRepo, amend: bool) -> Request {
    commit_msg::prepare(
        repo.path(),
        &Options {
            amend,
            ..Options::default()
        },
    )
    .unwrap()
}

/// The string at `pointer` (a JSON pointer) in each item of the array `list`.
pub fn strings<'a>(list: &'a serde_json::Value, pointer: &str) -> Vec<&'a str> {
    let items = list.as_array().unwrap().iter();
    items
        .map(|item| item.pointer(pointer).unwrap().as_str().unwrap())
        .collect()
}

/// Runs `generate` to the end.
pub fn generate(
    request: &impl MessageRequest,
    provider: &dyn LlmProvider,
) -> Result<Generated, git_agent_core::Error> {
    testkit::runtime().block_on(commit_msg::generate(
        request,
        provider,
        &mut agent::NullSink,
    ))
}

/// Runs `request` against a chat server whose first answer fails the checks
/// and whose second, the repair pass's, passes: the message and the requests.
pub fn repaired(
    request: &impl MessageRequest,
    first: &str,
    second: &str,
) -> (String, Vec<RecordedRequest>) {
    let (server, provider) = chat(vec![Reply::text(first), Reply::text(second)]);
    let generated = generate(request, provider.as_ref()).unwrap();
    assert!(generated.repaired);
    (generated.message, server.requests())
}

/// [`repaired`] for a commit in `repo`, where the repair request names
/// `missing` and the repaired answer is the message as it is: the requests.
pub fn repaired_naming(
    repo: &TestRepo,
    first: &str,
    second: &str,
    missing: &str,
) -> Vec<RecordedRequest> {
    repaired_to(&request(repo, false), first, second, missing)
}

/// [`repaired`], where the repair request names `problem` and the repaired
/// answer is the message as it is: the requests.
pub fn repaired_to(
    request: &impl MessageRequest,
    first: &str,
    second: &str,
    problem: &str,
) -> Vec<RecordedRequest> {
    let (message, requests) = repaired(request, first, second);
    assert_eq!(message, second);
    testkit::assert_contains(&requests[1].raw_text(), problem);
    requests
}

/// Stages [`testkit::NET_RS_WITH_RETRIES`] as `src/net.rs`: `connect` tries
/// three times.
pub fn stage_retries(repo: &TestRepo) {
    repo.write("src/net.rs", testkit::NET_RS_WITH_RETRIES)
        .stage(&["src/net.rs"]);
}

/// A commit to amend in `repo`: HEAD becomes a `connect` that accepts every
/// host (committed as `message`), and a README line about it is staged.
pub fn to_amend(repo: &TestRepo, message: &str) {
    repo.write("src/net.rs", "pub fn connect(_: &str) -> bool { true }\n");
    repo.commit_all(message);
    repo.write("README.md", "# demo\n\nConnect accepts any host.\n")
        .stage(&["README.md"]);
}

/// A team that ends subjects with Jira keys, on branch
/// `feature/proj-77-retry` with a change staged.
pub fn task_id_branch() -> TestRepo {
    let repo = TestRepo::new();
    repo.commit_file("a.txt", "1\n", "Add a (PROJ-1)");
    repo.commit_file("a.txt", "2\n", "Change a (PROJ-2)");
    repo.checkout_new("feature/proj-77-retry");
    repo.write("a.txt", "3\n").stage(&["a.txt"]);
    repo
}

/// [`project`] with [`stage_retries`], and the request for a new commit's
/// message.
pub fn retries_request() -> (TestRepo, Request) {
    let repo = project();
    stage_retries(&repo);
    let request = request(&repo, false);
    (repo, request)
}

/// A repository whose submodule `vendor/lib` moved: one commit in the
/// submodule's checkout per entry of `summaries`, then the gitlink staged. The
/// submodule's own repository comes second, to live as long as the test.
pub fn moved_submodule(summaries: &[&str]) -> (TestRepo, TestRepo) {
    let sub = TestRepo::named("lib");
    sub.commit_file("lib.txt", "1\n", "Initial library");
    let parent = TestRepo::new();
    parent.commit_file("app.txt", "app\n", "Initial app");
    parent.add_submodule("vendor/lib", &sub);
    parent.commit_all("Add lib as a submodule");
    // New commits in the submodule's checkout, then the gitlink moves.
    for (n, summary) in summaries.iter().enumerate() {
        std::fs::write(parent.join("vendor/lib/lib.txt"), format!("{}\n", n + 2)).unwrap();
        parent.git(&["-C", "vendor/lib", "commit", "-qam", summary]);
    }
    parent.stage(&["vendor/lib"]);
    (parent, sub)
}

/// A small Rust project with history: `src/lib.rs`, `src/net.rs`, `README.md`.
pub fn project() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("README.md", "# demo\n\nA demo crate.\n")
        .write(
            "src/lib.rs",
            "pub mod net;\n\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
        )
        .write("src/net.rs", testkit::NET_RS);
    repo.commit_all("feat: initial crate");
    repo.write(
        "src/lib.rs",
        "pub mod net;\n\n/// Adds.\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
    );
    repo.commit_all("docs: document add");
    repo
}
