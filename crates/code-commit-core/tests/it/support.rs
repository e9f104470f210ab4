//! What the test modules share: the provider against a fake server, reply
//! blocks, driving the loop, and walking a tree.

use std::fs;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use code_commit_core::Error;
use code_commit_core::run::{self, Report, RunOptions, Step};
use llm::{Auth, HttpOptions, ProviderConfig, ProviderKind, Redactor, RetryPolicy, Secret};
use testkit::{FakeLlm, Flavor, Reply, TestRepo};

/// The provider a run uses against `server`: Chat Completions without tools,
/// authenticated with `key`, one attempt per request; and its redactor.
pub fn provider(server: &FakeLlm, key: &str) -> (Arc<dyn llm::LlmProvider>, Redactor) {
    let mut config = ProviderConfig::new(ProviderKind::OpenAiChat, "test-model");
    config.base_url = Some(server.base_url());
    config.auth = Auth::ApiKey(Secret::new(key));
    config.tool_use = false;
    config.http = HttpOptions {
        retry: RetryPolicy {
            max_attempts: 1,
            initial_backoff: Duration::from_millis(1),
            max_backoff: Duration::from_millis(1),
            max_retry_after: Duration::from_millis(1),
        },
        ..HttpOptions::default()
    };
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
/// another task of the same single-threaded runtime and is stopped when the
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
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
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

/// Every entry below `root` (links not followed) with its path relative to
/// `root`, its path and its metadata; `prune` skips an entry by its relative
/// path (for a directory, with everything below it).
pub fn walk(root: &Path, prune: impl Fn(&str) -> bool) -> Vec<(String, PathBuf, fs::Metadata)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if prune(&rel) {
                continue;
            }
            let meta = fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path.clone());
            }
            out.push((rel, path, meta));
        }
    }
    out
}

/// Fails, showing `haystack`, unless it starts with `prefix`.
#[track_caller]
pub fn assert_starts(haystack: &str, prefix: &str) {
    assert!(
        haystack.starts_with(prefix),
        "not starting with {prefix:?}:\n{haystack}"
    );
}

/// Fails, showing `haystack`, unless it contains `needle`.
#[track_caller]
pub fn assert_contains(haystack: &str, needle: &str) {
    assert!(
        haystack.contains(needle),
        "not containing {needle:?}:\n{haystack}"
    );
}
