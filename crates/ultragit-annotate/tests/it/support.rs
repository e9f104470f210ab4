//! Shared helpers.

use std::sync::Arc;

use llm::{HttpOptions, LlmProvider, ProviderConfig, ProviderKind, RetryPolicy};
use serde_json::{Value, json};
use testkit::{FakeLlm, Flavor, Reply, TestRepo, call};
use ultragit_annotate::{AnnotateConfig, AnnotationContext, AuthorContext, gather};
use ultragit_schema::Annotation;

/// A provider for `server` (Chat Completions flavor unless told otherwise).
pub fn provider(server: &FakeLlm, kind: ProviderKind, tool_use: bool) -> Arc<dyn LlmProvider> {
    let mut config = ProviderConfig::new(kind, "test-model");
    config.base_url = Some(server.base_url());
    config.tool_use = tool_use;
    config.http = HttpOptions {
        retry: RetryPolicy::immediate(2),
        ..HttpOptions::default()
    };
    llm::build_provider(config).unwrap()
}

pub fn chat(script: Vec<Reply>) -> (FakeLlm, Arc<dyn LlmProvider>) {
    let server = FakeLlm::start(Flavor::OpenAiChat, script);
    let provider = provider(&server, ProviderKind::OpenAiChat, true);
    (server, provider)
}

/// A fake Chat Completions server that answers every request with
/// `responder`, and a provider with tool use that talks to it.
pub fn chat_with(
    responder: impl Fn(&testkit::RecordedRequest) -> Reply + Send + Sync + 'static,
) -> (FakeLlm, Arc<dyn LlmProvider>) {
    let (server, provider) = chat(Vec::new());
    server.respond_with(responder);
    (server, provider)
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// An author context with a task, reasoning and dependencies, tagged `mqtt`
/// and `retry`.
pub fn tagged_author(task: &str, reasoning: &str, dependencies: &str) -> AuthorContext {
    AuthorContext {
        task: Some(task.into()),
        reasoning: Some(reasoning.into()),
        dependencies: Some(dependencies.into()),
        tags: Some(vec!["mqtt".into(), "retry".into()]),
        squash_sources: None,
    }
}

/// `annotate` of HEAD with the default limits and no trace.
pub fn annotate_head(
    repo: &TestRepo,
    author: Option<AuthorContext>,
    provider: &dyn LlmProvider,
) -> Result<ultragit_annotate::Report, ultragit_annotate::AnnotateError> {
    runtime().block_on(ultragit_annotate::annotate_with(
        repo.path(),
        "HEAD",
        author,
        provider,
        &AnnotateConfig::default(),
        &mut agent::NullSink,
        &ultragit_annotate::AnnotateOptions::default(),
    ))
}

/// `annotate_commit` (the agent alone, nothing stored) with no trace.
pub fn run_agent(
    context: &AnnotationContext,
    provider: &dyn LlmProvider,
    config: &AnnotateConfig,
) -> Result<ultragit_annotate::Annotated, ultragit_annotate::AgentError> {
    runtime().block_on(ultragit_annotate::annotate_commit(
        context,
        provider,
        config,
        &mut agent::NullSink,
    ))
}

pub fn context(repo: &TestRepo, rev: &str, author: Option<AuthorContext>) -> AnnotationContext {
    let r = gitctx::Repo::discover(repo.path()).unwrap();
    gather(&r, rev, author, &AnnotateConfig::default()).unwrap()
}

/// The arguments of an `emit_annotation` call.
pub fn region(file: &str, kind: &str, name: &str, lines: (u32, u32), intent: &str) -> Value {
    json!({
        "file": file,
        "ast_anchor": {"type": kind, "name": name},
        "lines": {"start": lines.0, "end": lines.1},
        "intent": intent,
        "constraints": [{"text": format!("{name} must stay cheap"), "source": "inferred"}]
    })
}

/// The `emit_annotation` arguments for `Client::connect` (lines 10–17) of
/// [`client_v2`], saying `intent`.
pub fn connect_region(intent: &str) -> Value {
    region(
        "src/client.rs",
        "method",
        "Client::connect",
        (10, 17),
        intent,
    )
}

/// A model turn that calls `emit_annotation` once, as `id`, with `region`.
pub fn emit(id: &str, region: Value) -> Reply {
    Reply::tool_calls(vec![call(id, "emit_annotation", region)])
}

/// A client file (lines 1-13) changed by a second commit in `connect`.
pub const CLIENT_V1: &str = "pub struct Client {\n    host: String,\n}\n\nimpl Client {\n    pub fn new(host: &str) -> Self {\n        Client { host: host.to_owned() }\n    }\n\n    pub fn connect(&self) -> bool {\n        !self.host.is_empty()\n    }\n}\n";

/// `connect` now retries.
pub fn client_v2() -> String {
    CLIENT_V1.replace(
        "        !self.host.is_empty()\n",
        "        for _ in 0..3 {\n            if !self.host.is_empty() {\n                return true;\n            }\n        }\n        false\n",
    )
}

/// The tool results the n-th request sent back (Chat Completions shape).
pub fn tool_results(body: &Value) -> Vec<Value> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| serde_json::from_str(m["content"].as_str().unwrap()).unwrap())
        .collect()
}

/// The names of the tools a request offers.
pub fn tool_names(body: &Value) -> Vec<&str> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str())
                .collect()
        })
        .unwrap_or_default()
}

/// HEAD's note, read with git itself.
pub fn stored(repo: &TestRepo) -> Annotation {
    let text = repo
        .command()
        .args(["notes", "--ref=ultragit", "show", "HEAD"])
        .run_text()
        .unwrap();
    Annotation::from_json(&text).unwrap()
}
