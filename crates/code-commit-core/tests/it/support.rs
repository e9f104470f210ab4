//! What the test modules share: the provider against a fake server, reply
//! blocks and driving the loop.

use std::fs;
use std::future::Future;
use std::sync::Arc;

use code_commit_core::Error;
use code_commit_core::run::{self, Report, RunOptions, Step};
use llm::{Auth, ProviderConfig, ProviderKind, Redactor, RetryPolicy, Secret};
use testkit::{FakeLlm, Flavor, Reply, TestRepo};

/// The provider a run uses against `server`: Chat Completions without tools,
/// authenticated with `key`, one attempt per request; and its redactor.
pub fn provider(server: &FakeLlm, key: &str) -> (Arc<dyn llm::LlmProvider>, Redactor) {
    let mut config = ProviderConfig::new(ProviderKind::OpenAiChat, "test-model");
    config.base_url = Some(server.base_url());
    config.auth = Auth::ApiKey(Secret::new(key));
    config.tool_use = false;
    config.http.retry = RetryPolicy::immediate(1);
    let redactor = config.redactor();
    (llm::build_provider(config).unwrap(), redactor)
}

/// A `^^^path` … `^^^end` block writing `content` to `path`.
pub fn block(path: &str, content: &str) -> String {
    format!("^^^{path}\n{content}^^^end\n")
}

/// A reply with a block for each (path, content) of `files`, in order.
pub fn blocks(files: &[(&str, &str)]) -> Reply {
    Reply::text(
        &files
            .iter()
            .map(|(path, content)| block(path, content))
            .collect::<String>(),
    )
}

/// The text of the file `name` in the run's log folder.
pub fn log(report: &Report, name: &str) -> String {
    fs::read_to_string(report.log_dir.join(name)).unwrap()
}

/// The reply that makes the test projects pass: `preamble`, then a block
/// writing `fixed` to `src/value.txt`.
pub fn fixing(preamble: &str) -> Reply {
    Reply::text(&format!("{preamble}{}", block("src/value.txt", "fixed\n")))
}

/// Runs the loop over `repo` against a fake Chat Completions server scripted
/// with `script`, authenticated with `key`, with `options`; `beside` runs as
/// another task on the same thread (a `LocalSet`) and is stopped when the
/// loop ends. Returns the report (or error), the steps and the server (for
/// its recorded requests).
pub fn drive(
    repo: &TestRepo,
    script: Vec<Reply>,
    key: &str,
    options: &RunOptions,
    beside: impl Future<Output = ()> + 'static,
) -> (Result<Report, Error>, Vec<Step>, FakeLlm) {
    let server = FakeLlm::start(Flavor::OpenAiChat, script);
    let (provider, redactor) = provider(&server, key);
    let inputs = run::preflight(repo.path()).unwrap();
    let mut steps = Vec::new();
    let runtime = testkit::runtime();
    let local = tokio::task::LocalSet::new();
    let result = local.block_on(&runtime, async {
        let beside = tokio::task::spawn_local(beside);
        let result = run::run(
            repo.path(),
            &inputs,
            provider.as_ref(),
            &redactor,
            options,
            &mut |s: &Step| steps.push(s.clone()),
        )
        .await;
        beside.abort();
        result
    });
    (result, steps, server)
}
