//! The three backends over real HTTP against `testkit`'s fake servers.

mod backends;
mod budget;
mod failures;
mod limits;
mod pause;
mod streaming;
mod transport;

use std::time::Duration;

use llm::{
    Auth, CompletionRequest, CompletionResponse, HttpOptions, LlmError, Message, ProviderConfig,
    ProviderKind, RetryPolicy, Secret, build_provider,
};
use testkit::{FakeLlm, Flavor, Reply, runtime};

/// A key the tests look for everywhere it must not appear.
pub const KEY: &str = "sk-test-SECRET-0123456789-abcdefghij-Zq";

pub fn flavor(kind: ProviderKind) -> Flavor {
    match kind {
        ProviderKind::OpenAiResponses => Flavor::OpenAiResponses,
        ProviderKind::OpenAiChat => Flavor::OpenAiChat,
        ProviderKind::Anthropic => Flavor::Anthropic,
    }
}

pub const KINDS: [ProviderKind; 3] = [
    ProviderKind::OpenAiResponses,
    ProviderKind::OpenAiChat,
    ProviderKind::Anthropic,
];

/// Runs `check` once per backend, each time against a fresh fake server of
/// its flavor that answers with `script()`.
pub fn each_backend(script: impl Fn() -> Vec<Reply>, check: impl Fn(ProviderKind, &FakeLlm)) {
    for kind in KINDS {
        let server = FakeLlm::start(flavor(kind), script());
        check(kind, &server);
    }
}

/// A provider config pointed at `server`, with the test key and fast retries.
pub fn config(kind: ProviderKind, server: &FakeLlm) -> ProviderConfig {
    let mut config = ProviderConfig::new(kind, "test-model");
    config.base_url = Some(server.base_url());
    config.auth = Auth::ApiKey(Secret::new(KEY));
    config.http = HttpOptions {
        request_timeout: Duration::from_secs(10),
        overall_timeout: Duration::from_secs(30),
        connect_timeout: Duration::from_secs(5),
        retry: RetryPolicy {
            max_attempts: 4,
            initial_backoff: Duration::from_millis(1),
            max_backoff: Duration::from_millis(5),
            max_retry_after: Duration::from_millis(50),
            retry_budget: None,
        },
        proxy: Default::default(),
        max_response_bytes: llm::DEFAULT_MAX_RESPONSE_BYTES,
        pause: None,
    };
    config
}

/// A one-message request: "hi" from the user.
pub fn request() -> CompletionRequest {
    CompletionRequest {
        messages: vec![Message::user("hi")],
        ..Default::default()
    }
}

/// Sends [`request`] once to `kind`'s backend at `server`, its config first
/// changed by `edit`.
pub fn complete(
    server: &FakeLlm,
    kind: ProviderKind,
    edit: impl FnOnce(&mut ProviderConfig),
) -> Result<CompletionResponse, LlmError> {
    let mut config = config(kind, server);
    edit(&mut config);
    let provider = build_provider(config).unwrap();
    runtime().block_on(provider.complete(&request()))
}

/// Asserts no recorded request and no text contains the key in clear.
pub fn assert_no_key(server: &FakeLlm, texts: &[&str]) {
    for text in texts {
        assert!(!text.contains(KEY), "the key leaked into: {text}");
    }
    for request in server.requests() {
        let body = String::from_utf8_lossy(&request.body);
        assert!(!body.contains(KEY), "the key is in a request body");
        assert!(!request.target.contains(KEY), "the key is in a URL");
    }
}
