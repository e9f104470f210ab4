//! `agent-config/config.toml`: which model code-commit talks to, and where
//! its key comes from.
//!
//! ```toml
//! provider = "openai-chat"        # openai-responses (default) | openai-chat | anthropic
//! model = "gpt-5-mini"            # default: gpt-5-mini, or claude-sonnet-4-5 for anthropic
//! base_url = "http://127.0.0.1:8080/v1"   # optional; default: the provider's own
//! api_key_file = "api-key"        # optional; a file under agent-config/ holding the key
//! api_key_env = "OPENAI_API_KEY"  # optional; default OPENAI_API_KEY / ANTHROPIC_API_KEY
//! max_tokens = 32000              # optional; output tokens per response (default 32000)
//! build_timeout_secs = 900        # optional; build.sh time limit (default 900)
//! request_timeout_secs = 600      # optional; one model request (default 600)
//! ```
//!
//! The file is optional: without it every key has its default. The key is read
//! from `api_key_file` when set (or from `agent-config/api-key` when that file
//! exists), else from the environment variable; with neither, a run is allowed
//! only against an explicit `base_url` (local servers need no key). The key is
//! a [`Secret`]: it goes into a request header and nowhere else.

use std::path::{Component, Path};
use std::time::Duration;

use llm::{Auth, ProviderConfig, ProviderKind, Secret};
use serde::Deserialize;

use crate::error::Error;

/// The directory of code-commit's own files.
pub const CONFIG_DIR: &str = "agent-config";
/// The configuration file, relative to the project.
pub const CONFIG_FILE: &str = "agent-config/config.toml";
/// The key file used when the configuration names none.
pub const DEFAULT_KEY_FILE: &str = "api-key";

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    provider: Option<String>,
    model: Option<String>,
    base_url: Option<String>,
    api_key_file: Option<String>,
    api_key_env: Option<String>,
    max_tokens: Option<u32>,
    build_timeout_secs: Option<u64>,
    request_timeout_secs: Option<u64>,
}

/// The resolved configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub provider: ProviderKind,
    pub model: String,
    pub base_url: Option<String>,
    /// A file under `agent-config/` holding the key.
    pub api_key_file: Option<String>,
    /// The environment variable holding the key.
    pub api_key_env: String,
    pub max_tokens: u32,
    pub build_timeout: Duration,
    pub request_timeout: Duration,
}

fn config_error(message: impl Into<String>) -> Error {
    Error::Config(format!("{CONFIG_FILE}: {}", message.into()))
}

/// Reads `agent-config/config.toml` in `project` (defaults when it is absent).
pub fn load(project: &Path) -> Result<Config, Error> {
    let path = project.join(CONFIG_FILE);
    let file: File = match std::fs::read_to_string(&path) {
        Ok(text) => toml::from_str(&text).map_err(|e| config_error(e.message().to_owned()))?,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => File::default(),
        Err(err) => return Err(config_error(err.to_string())),
    };
    let provider = match file.provider.as_deref() {
        None => ProviderKind::OpenAiResponses,
        Some(name) => ProviderKind::parse(name).ok_or_else(|| {
            config_error(format!(
                "provider '{name}' is not one of {}",
                ProviderKind::NAMES.join(", ")
            ))
        })?,
    };
    let (default_model, default_env) = match provider {
        ProviderKind::Anthropic => ("claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
        _ => ("gpt-5-mini", "OPENAI_API_KEY"),
    };
    let nonempty = |v: Option<String>| v.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty());
    let api_key_file = nonempty(file.api_key_file);
    if let Some(name) = &api_key_file {
        let p = Path::new(name);
        if p.is_absolute() || p.components().any(|c| !matches!(c, Component::Normal(_))) {
            return Err(config_error(format!(
                "api_key_file '{name}' must be a plain path inside {CONFIG_DIR}/"
            )));
        }
    }
    let positive = |name: &str, v: Option<u64>, default: u64| match v {
        Some(0) => Err(config_error(format!("{name} must be at least 1"))),
        Some(v) => Ok(v),
        None => Ok(default),
    };
    Ok(Config {
        provider,
        model: nonempty(file.model).unwrap_or_else(|| default_model.to_owned()),
        base_url: nonempty(file.base_url),
        api_key_file,
        api_key_env: nonempty(file.api_key_env).unwrap_or_else(|| default_env.to_owned()),
        max_tokens: u32::try_from(positive(
            "max_tokens",
            file.max_tokens.map(u64::from),
            32_000,
        )?)
        .unwrap_or(32_000),
        build_timeout: Duration::from_secs(positive(
            "build_timeout_secs",
            file.build_timeout_secs,
            900,
        )?),
        request_timeout: Duration::from_secs(positive(
            "request_timeout_secs",
            file.request_timeout_secs,
            600,
        )?),
    })
}

/// The key: from the key file (the configured one, or `agent-config/api-key`
/// when it exists), else from the environment variable through `lookup`.
pub fn key(
    config: &Config,
    project: &Path,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<Option<Secret>, Error> {
    let dir = project.join(CONFIG_DIR);
    let file = match &config.api_key_file {
        Some(name) => Some(dir.join(name)),
        None => Some(dir.join(DEFAULT_KEY_FILE)).filter(|p| p.is_file()),
    };
    if let Some(path) = file {
        let text = std::fs::read_to_string(&path)
            .map_err(|e| Error::Config(format!("the key file {}: {e}", path.display())))?;
        let key = text.trim();
        if key.is_empty() {
            return Err(Error::Config(format!(
                "the key file {} is empty",
                path.display()
            )));
        }
        return Ok(Some(Secret::new(key)));
    }
    Ok(lookup(&config.api_key_env)
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
        .map(Secret::new))
}

/// The provider settings for `config` with `key`.
pub fn provider_config(config: &Config, key: Option<Secret>) -> Result<ProviderConfig, Error> {
    let mut out = ProviderConfig::new(config.provider, config.model.clone());
    out.base_url = config.base_url.clone();
    out.auth = match key {
        Some(key) => Auth::ApiKey(key),
        None if config.base_url.is_some() => Auth::None,
        None => {
            return Err(Error::Config(format!(
                "no API key: put it in {CONFIG_DIR}/{} (or name a file with api_key_file in {CONFIG_FILE}), or export {}; a local server needs none, given base_url",
                config.api_key_file.as_deref().unwrap_or(DEFAULT_KEY_FILE),
                config.api_key_env
            )));
        }
    };
    out.http.request_timeout = config.request_timeout;
    out.http.overall_timeout = config.request_timeout.saturating_mul(2);
    out.tool_use = false;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(config: Option<&str>) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(CONFIG_DIR)).unwrap();
        if let Some(text) = config {
            std::fs::write(dir.path().join(CONFIG_FILE), text).unwrap();
        }
        dir
    }

    #[test]
    fn defaults_without_a_file() {
        let dir = project(None);
        let c = load(dir.path()).unwrap();
        assert_eq!(c.provider, ProviderKind::OpenAiResponses);
        assert_eq!(c.model, "gpt-5-mini");
        assert_eq!(c.api_key_env, "OPENAI_API_KEY");
        assert_eq!(c.max_tokens, 32_000);
        assert_eq!(c.build_timeout, Duration::from_secs(900));
    }

    #[test]
    fn the_file_sets_everything_and_is_checked() {
        let dir = project(Some(
            "provider = \"anthropic\"\nbase_url = \"http://127.0.0.1:9/\"\nmax_tokens = 1000\nbuild_timeout_secs = 5\n",
        ));
        let c = load(dir.path()).unwrap();
        assert_eq!(c.provider, ProviderKind::Anthropic);
        assert_eq!(c.model, "claude-sonnet-4-5");
        assert_eq!(c.api_key_env, "ANTHROPIC_API_KEY");
        assert_eq!(c.max_tokens, 1000);
        for (bad, says) in [
            ("provider = \"gemini\"", "not one of"),
            ("modle = \"x\"", "unknown field"),
            ("max_tokens = 0", "at least 1"),
            ("api_key_file = \"../key\"", "inside agent-config"),
            ("api_key_file = \"/etc/key\"", "inside agent-config"),
        ] {
            let dir = project(Some(bad));
            let err = load(dir.path()).unwrap_err().to_string();
            assert!(err.contains(says), "{bad}: {err}");
            assert!(err.starts_with(CONFIG_FILE), "{err}");
        }
    }

    #[test]
    fn the_key_comes_from_a_file_then_the_environment() {
        let dir = project(None);
        let c = load(dir.path()).unwrap();
        let env = |name: &str| (name == "OPENAI_API_KEY").then(|| "sk-env-1234".to_owned());
        assert_eq!(
            key(&c, dir.path(), env).unwrap(),
            Some(Secret::new("sk-env-1234"))
        );
        std::fs::write(dir.path().join("agent-config/api-key"), "sk-file-5678\n").unwrap();
        assert_eq!(
            key(&c, dir.path(), env).unwrap(),
            Some(Secret::new("sk-file-5678"))
        );
        assert_eq!(
            key(&c, dir.path(), |_| None).unwrap(),
            Some(Secret::new("sk-file-5678"))
        );
        let none = project(None);
        let c = load(none.path()).unwrap();
        assert_eq!(key(&c, none.path(), |_| None).unwrap(), None);
        let err = provider_config(&c, None).unwrap_err().to_string();
        assert!(
            err.contains("OPENAI_API_KEY") && err.contains("agent-config/api-key"),
            "{err}"
        );
        let mut local = c.clone();
        local.base_url = Some("http://127.0.0.1:8080/v1".into());
        assert_eq!(provider_config(&local, None).unwrap().auth, Auth::None);
    }
}
