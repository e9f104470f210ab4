//! Integration tests.

use std::sync::Arc;
use std::time::Duration;

use llm::{Auth, HttpOptions, ProviderConfig, ProviderKind, Redactor, RetryPolicy, Secret};
use testkit::FakeLlm;

mod apply;
mod attacks;
mod build;
mod parse;
mod policy;
mod run;
mod sandbox;

/// The provider a run uses against `server`: Chat Completions without tools,
/// authenticated with `key`, one attempt per request; and its redactor.
fn provider(server: &FakeLlm, key: &str) -> (Arc<dyn llm::LlmProvider>, Redactor) {
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
