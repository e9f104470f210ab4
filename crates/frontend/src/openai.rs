//! OpenAI-compatible provider settings the way `git-agent` resolves them (spec
//! 004 "Authentication and environment variables"):
//!
//! 1. an explicit flag (`--model`, `--base-url`);
//! 2. ChatGPT (Codex) sign-in from `auth.json` (`$CODEX_HOME/auth.json`, by
//!    default `~/.codex/auth.json`) when it says `"auth_mode": "chatgpt"` and
//!    holds `tokens.access_token` and `tokens.account_id`: bearer token plus
//!    `ChatGPT-Account-ID`, base URL `https://chatgpt.com/backend-api/codex`
//!    unless `--base-url` is given;
//!    With that sign-in the model is Codex's own: `model` in Codex's
//!    `config.toml` (`$CODEX_HOME/config.toml`, by default
//!    `~/.codex/config.toml`) when it sets one;
//! 3. the environment: `OPENAI_API_KEY`, with `OPENAI_BASE_URL` (only on this
//!    API-key path) and `OPENAI_MODEL`;
//! 4. the default model: `llm::defaults::CHATGPT_MODEL` with ChatGPT sign-in
//!    (the ChatGPT backend serves Codex's models only), else
//!    `llm::defaults::OPENAI_MODEL`.
//!
//! The model and the base URL are keys of one table (flag, Codex's config with
//! ChatGPT sign-in, then variable), resolved by `layered-config`; blank values
//! count as unset. The credentials are not a key: which of them is used
//! decides whether `OPENAI_BASE_URL` and Codex's `config.toml` apply.
//!
//! Choices this module makes where the spec is silent:
//! - `--api chat` (Chat Completions, for local servers) skips ChatGPT sign-in:
//!   that backend only speaks the Responses API.
//! - Without any credentials, a run is still possible against an explicit base
//!   URL (a flag or `OPENAI_BASE_URL`) that is not OpenAI's or ChatGPT's own: local
//!   servers (llama.cpp, Ollama, vLLM) need no key.
//! - An `auth.json` in another mode (e.g. `"auth_mode": "apikey"`) is passed over;
//!   one that is not JSON, or says `chatgpt` without the tokens, is an error that
//!   names the file. So is a Codex `config.toml` that is not TOML, or whose
//!   `model` is not text, when ChatGPT sign-in would read it; only its top-level
//!   `model` is read (not profiles).
//!
//! The binary reads the file and the environment and passes them in; nothing
//! here does I/O.

use std::path::{Path, PathBuf};

use layered_config::{ConfigError, Key, Layer, Section, Stack, parse};
use llm::{Auth, HttpOptions, ProviderConfig, ProviderKind, Secret};
use serde_json::Value;

use crate::env::{self, proxy_config};

/// The model: `--model`, then `OPENAI_MODEL`, then the provider's default.
const MODEL: Key<String> = Key {
    flag: Some("--model"),
    env: Some(env::OPENAI_MODEL),
    blank_is_unset: true,
    ..Key::new("model", parse::text)
};
/// The base URL on the API-key path: `--base-url`, then `OPENAI_BASE_URL`.
const BASE_URL: Key<String> = Key {
    env: Some(env::OPENAI_BASE_URL),
    ..SIGNED_IN_BASE_URL
};
/// The base URL with ChatGPT sign-in: only the flag changes it (the sign-in's
/// own URL is the provider's default; `OPENAI_BASE_URL` belongs to API keys).
const SIGNED_IN_BASE_URL: Key<String> = Key {
    flag: Some("--base-url"),
    blank_is_unset: true,
    ..Key::new("base_url", parse::text)
};

/// Where the credentials came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthSource {
    /// ChatGPT sign-in from this `auth.json`.
    ChatGpt(PathBuf),
    /// `OPENAI_API_KEY`.
    ApiKey,
    /// No credentials (a local server at an explicit base URL).
    None,
}

/// The flags that take part in resolution.
#[derive(Debug, Clone, Copy, Default)]
pub struct Flags<'a> {
    pub model: Option<&'a str>,
    pub base_url: Option<&'a str>,
    /// `--api chat`: Chat Completions instead of the Responses API.
    pub chat: bool,
}

/// Why no provider settings could be resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthError {
    /// No ChatGPT sign-in, no `OPENAI_API_KEY`, and no local base URL.
    NoCredentials { auth_file: Option<PathBuf> },
    /// `auth.json` exists but cannot be used.
    BadAuthFile { path: PathBuf, reason: String },
    /// A setting is unusable (it names its source).
    Config(ConfigError),
}

impl std::fmt::Display for AuthError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AuthError::NoCredentials { auth_file } => {
                let file = auth_file
                    .as_ref()
                    .map_or("~/.codex/auth.json".to_owned(), |p| p.display().to_string());
                write!(
                    f,
                    "no credentials: sign in with Codex ({file} with \"auth_mode\": \"chatgpt\"), or export {}; for a local server pass --base-url",
                    env::OPENAI_API_KEY
                )
            }
            AuthError::BadAuthFile { path, reason } => {
                write!(f, "{}: {reason}", path.display())
            }
            AuthError::Config(err) => err.fmt(f),
        }
    }
}

impl std::error::Error for AuthError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            AuthError::Config(err) => Some(err),
            _ => None,
        }
    }
}

impl From<ConfigError> for AuthError {
    fn from(err: ConfigError) -> Self {
        AuthError::Config(err)
    }
}

/// The resolved settings: a provider config (with auth, base URL, model and
/// proxies) and where its credentials came from.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub config: ProviderConfig,
    pub source: AuthSource,
}

/// Codex's home: `$CODEX_HOME`, else `$HOME/.codex`.
fn codex_home(lookup: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let nonempty = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
    if let Some(home) = nonempty(env::CODEX_HOME) {
        return Some(PathBuf::from(home));
    }
    nonempty(env::HOME).map(|home| Path::new(&home).join(".codex"))
}

/// `auth.json`'s path: `$CODEX_HOME/auth.json`, else `$HOME/.codex/auth.json`.
pub fn codex_auth_path(lookup: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    codex_home(lookup).map(|home| home.join("auth.json"))
}

/// Codex's own settings file: `$CODEX_HOME/config.toml`, else
/// `$HOME/.codex/config.toml`. Read (its top-level `model`) only with ChatGPT
/// sign-in.
pub fn codex_config_path(lookup: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    codex_home(lookup).map(|home| home.join("config.toml"))
}

/// Codex's files as the binary found them: each one's path and text, `None`
/// when it does not exist.
#[derive(Debug, Clone, Copy, Default)]
pub struct CodexFiles<'a> {
    /// `auth.json`.
    pub auth: Option<(&'a Path, &'a str)>,
    /// `config.toml`.
    pub config: Option<(&'a Path, &'a str)>,
}

/// ChatGPT credentials in an `auth.json` text: `Ok(None)` when the file is for
/// another auth mode.
pub(crate) fn parse_codex_auth(text: &str) -> Result<Option<(Secret, String)>, String> {
    let value: Value = serde_json::from_str(text).map_err(|e| format!("not valid JSON ({e})"))?;
    let mode = value.get("auth_mode").and_then(Value::as_str);
    if mode != Some("chatgpt") {
        return Ok(None);
    }
    let tokens = value.get("tokens").ok_or(
        "\"auth_mode\" is \"chatgpt\" but there are no \"tokens\": sign in again with Codex",
    )?;
    let field = |name: &str| {
        tokens
            .get(name)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
            .ok_or(format!(
                "\"tokens.{name}\" is missing or empty: sign in again with Codex"
            ))
    };
    let access = field("access_token")?;
    let account = field("account_id")?;
    Ok(Some((Secret::new(access), account)))
}

fn is_openai_host(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    let host = lower
        .split("://")
        .nth(1)
        .unwrap_or(&lower)
        .split(['/', ':'])
        .next()
        .unwrap_or("");
    host == "api.openai.com" || host == "chatgpt.com" || host.ends_with(".openai.com")
}

/// Resolves the provider settings from the flags, Codex's files (`codex`) and
/// the environment (`lookup`).
pub fn resolve(
    flags: Flags<'_>,
    codex: CodexFiles<'_>,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<Resolved, AuthError> {
    let kind = if flags.chat {
        ProviderKind::OpenAiChat
    } else {
        ProviderKind::OpenAiResponses
    };
    let given = |value: Option<&str>| value.map(str::to_owned);
    let flags_layer = || {
        Layer::flags()
            .flag(&MODEL, given(flags.model))
            .flag(&BASE_URL, given(flags.base_url))
    };
    let http = HttpOptions {
        proxy: proxy_config(&lookup),
        ..HttpOptions::default()
    };

    if !flags.chat
        && let Some((path, text)) = codex.auth
    {
        let parsed = parse_codex_auth(text).map_err(|reason| AuthError::BadAuthFile {
            path: path.to_path_buf(),
            reason,
        })?;
        if let Some((access_token, account_id)) = parsed {
            // Codex's own model comes before the environment's: the ChatGPT
            // backend serves the models Codex is set up for.
            let mut settings = Stack::new().with(flags_layer());
            if let Some((config_path, config_text)) = codex.config {
                let file = config_path.display().to_string();
                settings = settings.with(Layer::user_file(Section::parse(config_text, file)?));
            }
            let mut settings = settings.with(Layer::env(&lookup));
            let model = settings.value(&MODEL, llm::defaults::CHATGPT_MODEL.to_owned())?;
            let mut config = ProviderConfig::new(kind, model);
            config.http = http;
            config.auth = Auth::ChatGpt {
                access_token,
                account_id,
            };
            // Only the flag: Codex's file does not choose our endpoint.
            config.base_url = Stack::new()
                .with(flags_layer())
                .get(&SIGNED_IN_BASE_URL)?
                .map(|url| url.value);
            return Ok(Resolved {
                config,
                source: AuthSource::ChatGpt(path.to_path_buf()),
            });
        }
    }

    let mut settings = Stack::new().with(flags_layer()).with(Layer::env(&lookup));
    let model = settings.value(&MODEL, kind.default_model().to_owned())?;
    let mut config = ProviderConfig::new(kind, model);
    config.http = http;
    config.base_url = settings.get(&BASE_URL)?.map(|url| url.value);
    let key = lookup(env::OPENAI_API_KEY)
        .map(|key| key.trim().to_owned())
        .filter(|key| !key.is_empty());
    if let Some(key) = key {
        config.auth = Auth::ApiKey(Secret::new(key));
        return Ok(Resolved {
            config,
            source: AuthSource::ApiKey,
        });
    }
    match &config.base_url {
        Some(url) if !is_openai_host(url) => Ok(Resolved {
            config,
            source: AuthSource::None,
        }),
        _ => Err(AuthError::NoCredentials {
            auth_file: codex.auth.map(|(p, _)| p.to_path_buf()),
        }),
    }
}

#[cfg(test)]
mod tests;
