//! `llm`: language models behind one trait, [`LlmProvider`].
//!
//! Normalized requests and responses ([`CompletionRequest`], [`Message`],
//! [`ContentBlock`] with text, tool use and tool results, [`ToolSpec`] with strict
//! JSON Schema, [`StopReason`], [`Usage`]) and three real HTTP backends:
//! - [`OpenAiResponses`]: OpenAI's Responses API through `async-openai`;
//! - [`OpenAiChat`]: Chat Completions through `async-openai` (Ollama, vLLM,
//!   llama.cpp's server, LM Studio, OpenRouter, OpenAI);
//! - [`Anthropic`]: the Messages API over `reqwest`.
//!
//! All three share `http`: retries with backoff and jitter on 429/5xx, timeouts
//! and dropped connections, honouring `Retry-After` (up to a cap), for a number
//! of attempts or within a time budget ([`RetryPolicy::within`], failing with
//! [`LlmError::RetryBudgetSpent`]); per-attempt and overall timeouts; explicit
//! proxies; bounded bodies; optionally a [`PauseGate`] shared by a pool of
//! callers, which one `Retry-After` closes for all of them and which, when the
//! pause ends, lets one request probe before the rest follow.
//! [`RetryPolicy::immediate`] retries without waiting, for servers on this
//! machine (a local model server, tests' fake servers). Errors that are not
//! retryable (400, 401, 403, …) fail at once, whatever the policy. Redirects
//! are never followed; TLS is rustls with the ring provider (no OpenSSL).
//!
//! The OpenAI backends send our own request JSON and parse replies
//! tolerantly (async-openai's `byot` calls), through our own transport (its
//! middleware hook) and our own config (it never reads `OPENAI_*`). The
//! Responses backend can stream (server-sent events, split one event at a
//! time from the bounded body), and does with ChatGPT sign-in. Every backend
//! implements [`LlmProvider`] the same way, through one crate-private macro
//! (a config, a provider name and an async `call`), and reads replies through
//! one reader that names the missing or mistyped field. [`defaults`] holds
//! each provider's default model and key variable, for every binary's
//! configuration and help.
//!
//! - **Dependencies:** none of our crates. This is the only crate that talks HTTP.
//! - **API boundary:** no `reqwest`, `async-openai` or `http` type in the public API.
//! - **Invariant:** credentials are [`Secret`]s. They travel only in HTTP headers
//!   (marked sensitive), show as at most their last two characters, and every error
//!   built from a provider's reply is passed through the provider's [`Redactor`].
//! - **Invariant:** a reply is untrusted input with a size bound. Bodies are read
//!   chunk by chunk up to [`HttpOptions::max_response_bytes`] (16 MiB by
//!   default; [`LlmError::TooLarge`] past it, never retried), error bodies up to
//!   64 KiB; server-sent events are split one at a time from that
//!   bounded body. Reply text quoted in an error (a provider's message, a stop
//!   reason, a tool name) is cut short and redacted, so no error carries an
//!   unbounded string.
//! - **Invariant:** malformed replies (not JSON, missing fields, tool arguments that
//!   are not JSON, unknown stop reasons) are typed [`LlmError`]s, never panics.
//!   Optional fields real servers leave out (usage details, ids, timestamps) are
//!   simply optional.
//! - The library reads no files and no environment: auth, base URLs and proxies
//!   are passed in by the binary.

mod anthropic;
pub mod defaults;
mod error;
mod http;
mod openai;
mod parse;
mod secret;
mod sse;
mod types;

use std::sync::Arc;

pub use anthropic::Anthropic;
pub use error::LlmError;
pub use http::{DEFAULT_MAX_RESPONSE_BYTES, HttpOptions, PauseGate, ProxyConfig, RetryPolicy};
pub use openai::{OPENAI_BASE_URL, OpenAiChat, OpenAiResponses, strict_schema};
pub use secret::{Redactor, Secret};
pub use types::*;

/// How requests are authenticated.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Auth {
    /// No credentials (local servers).
    #[default]
    None,
    /// An API key: `Authorization: Bearer …` for OpenAI, `x-api-key` for Anthropic.
    ApiKey(Secret),
    /// ChatGPT (Codex) sign-in: `Authorization: Bearer <access token>` plus
    /// `ChatGPT-Account-ID`. The base URL defaults to ChatGPT's Codex backend.
    ChatGpt {
        access_token: Secret,
        account_id: String,
    },
}

impl Auth {
    /// The secrets this auth carries.
    pub(crate) fn secrets(&self) -> Vec<&Secret> {
        match self {
            Auth::None => Vec::new(),
            Auth::ApiKey(secret) => vec![secret],
            Auth::ChatGpt { access_token, .. } => vec![access_token],
        }
    }
}

/// Which API a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    OpenAiResponses,
    OpenAiChat,
    Anthropic,
}

impl ProviderKind {
    /// The names [`ProviderKind::parse`] accepts, canonical first.
    pub const NAMES: &'static [&'static str] = &["openai-responses", "openai-chat", "anthropic"];

    /// Parses `openai-responses` (or `responses`, `openai`), `openai-chat` (or
    /// `chat`), `anthropic`.
    pub fn parse(text: &str) -> Option<ProviderKind> {
        match text.trim().to_ascii_lowercase().as_str() {
            "openai-responses" | "responses" | "openai" => Some(ProviderKind::OpenAiResponses),
            "openai-chat" | "chat" | "chat-completions" => Some(ProviderKind::OpenAiChat),
            "anthropic" | "claude" => Some(ProviderKind::Anthropic),
            _ => None,
        }
    }

    /// The canonical name.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::OpenAiResponses => "openai-responses",
            ProviderKind::OpenAiChat => "openai-chat",
            ProviderKind::Anthropic => "anthropic",
        }
    }
}

/// Everything needed to build a provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderConfig {
    pub kind: ProviderKind,
    pub model: String,
    /// `None`: the API's default (or ChatGPT's Codex backend with ChatGPT sign-in).
    pub base_url: Option<String>,
    pub auth: Auth,
    pub http: HttpOptions,
    /// OpenAI: send `service_tier: "priority"`.
    pub priority: bool,
    /// OpenAI: send a reasoning effort.
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Whether the backend may be given tools (some local servers cannot).
    pub tool_use: bool,
    /// Chat Completions: send the token cap as `max_completion_tokens` rather than
    /// `max_tokens` (newer OpenAI models want the former, most servers the latter).
    pub max_completion_tokens: bool,
    /// Responses API: ask for server-sent events (`"stream": true`) and rebuild the
    /// response from them. `None` decides: streaming with ChatGPT sign-in (its
    /// backend wants it), plain JSON otherwise.
    pub stream: Option<bool>,
}

impl ProviderConfig {
    /// A config with defaults for everything but the API and the model.
    pub fn new(kind: ProviderKind, model: impl Into<String>) -> Self {
        ProviderConfig {
            kind,
            model: model.into(),
            base_url: None,
            auth: Auth::None,
            http: HttpOptions::default(),
            priority: false,
            reasoning_effort: None,
            tool_use: true,
            max_completion_tokens: false,
            stream: None,
        }
    }

    /// The redactor for this config's secrets.
    pub fn redactor(&self) -> Redactor {
        Redactor::new(self.auth.secrets())
    }
}

/// Builds the provider `config` describes.
pub fn build_provider(config: ProviderConfig) -> Result<Arc<dyn LlmProvider>, LlmError> {
    if config.model.trim().is_empty() {
        return Err(LlmError::Config {
            provider: config.kind.as_str(),
            message: "no model given".to_owned(),
        });
    }
    Ok(match config.kind {
        ProviderKind::OpenAiResponses => Arc::new(OpenAiResponses::new(config)?),
        ProviderKind::OpenAiChat => Arc::new(OpenAiChat::new(config)?),
        ProviderKind::Anthropic => Arc::new(Anthropic::new(config)?),
    })
}
