//! From a binary's provider settings (API, model, base URL, the NAME of the
//! environment variable holding the key) to a ready [`LlmProvider`].
//!
//! The key and the proxies come from the environment through the lookup the
//! binary passes (`|name| std::env::var(name).ok()`); this module reads nothing
//! itself. A key variable that is unset or empty is a [`ProviderError::MissingKey`]
//! naming the variable; no variable (`None`) means no key at all (local servers).

use std::fmt;
use std::sync::Arc;

use llm::{
    Auth, HttpOptions, LlmError, LlmProvider, ProviderConfig, ProviderKind, Redactor, Secret,
};

use crate::Context;
use crate::env::proxy_config;

/// Which provider to build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProviderRequest<'a> {
    pub kind: ProviderKind,
    pub model: &'a str,
    /// `None`: the API's default URL.
    pub base_url: Option<&'a str>,
    /// The environment variable that holds the API key; `None`: send no key.
    pub api_key_env: Option<&'a str>,
}

/// Why no provider could be built.
#[derive(Debug)]
#[non_exhaustive]
pub enum ProviderError {
    /// The variable that should hold the key is unset or empty.
    MissingKey { variable: String },
    /// The settings are unusable (no model, a bad base URL or proxy, …).
    Llm(LlmError),
}

impl fmt::Display for ProviderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProviderError::MissingKey { variable } => {
                write!(f, "the API key is not set: export {variable}")
            }
            ProviderError::Llm(err) => err.fmt(f),
        }
    }
}

impl std::error::Error for ProviderError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ProviderError::MissingKey { .. } => None,
            ProviderError::Llm(err) => Some(err),
        }
    }
}

impl From<LlmError> for ProviderError {
    fn from(err: LlmError) -> Self {
        ProviderError::Llm(err)
    }
}

/// The [`ProviderConfig`] for `request`: the key read from its variable, proxies
/// from the usual variables ([`proxy_config`]), every other option at its default.
pub fn provider_config(
    request: &ProviderRequest<'_>,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<ProviderConfig, ProviderError> {
    let auth = match request.api_key_env {
        None => Auth::None,
        Some(variable) => {
            let key = lookup(variable)
                .map(Secret::new)
                .filter(|key| !key.is_empty())
                .ok_or_else(|| ProviderError::MissingKey {
                    variable: variable.to_owned(),
                })?;
            Auth::ApiKey(key)
        }
    };
    let mut config = ProviderConfig::new(request.kind, request.model.trim());
    config.base_url = request
        .base_url
        .map(str::trim)
        .filter(|url| !url.is_empty())
        .map(str::to_owned);
    config.auth = auth;
    config.http = HttpOptions {
        proxy: proxy_config(&lookup),
        ..HttpOptions::default()
    };
    Ok(config)
}

/// The one way a binary turns its resolved [`ProviderConfig`] into a provider:
/// from here on everything the runner prints on stderr is masked with the key
/// (`Context::redact_with`), and the returned [`Redactor`] masks it in traces.
/// Each binary resolves the config its own way (`ultragit`: [`provider_config`];
/// `git-agent`: [`crate::openai::resolve`]; `code-commit`: its key table), then
/// calls this.
pub fn connect(
    config: ProviderConfig,
    ctx: &Context,
) -> Result<(Arc<dyn LlmProvider>, Redactor), LlmError> {
    let redactor = config.redactor();
    ctx.redact_with(&redactor);
    Ok((llm::build_provider(config)?, redactor))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::lookup;

    const KEY: &str = "sk-test-0123456789abcdef";

    fn request<'a>(api_key_env: Option<&'a str>) -> ProviderRequest<'a> {
        ProviderRequest {
            kind: ProviderKind::OpenAiChat,
            model: "test-model",
            base_url: Some("http://127.0.0.1:9/v1"),
            api_key_env,
        }
    }

    #[test]
    fn reads_the_key_from_the_named_variable() {
        let config = provider_config(
            &request(Some("MY_KEY")),
            lookup(&[("MY_KEY", &format!(" {KEY}\n"))]),
        )
        .unwrap();
        assert_eq!(config.auth, Auth::ApiKey(Secret::new(KEY)));
        assert_eq!(config.kind, ProviderKind::OpenAiChat);
        assert_eq!(config.model, "test-model");
        assert_eq!(config.base_url.as_deref(), Some("http://127.0.0.1:9/v1"));
        assert!(config.tool_use);
    }

    #[test]
    fn a_missing_or_empty_key_names_the_variable() {
        for vars in [&[][..], &[("MY_KEY", "  ")][..]] {
            let err = provider_config(&request(Some("MY_KEY")), lookup(vars)).unwrap_err();
            assert!(
                matches!(&err, ProviderError::MissingKey { variable } if variable == "MY_KEY"),
                "{err:?}"
            );
            assert_eq!(err.to_string(), "the API key is not set: export MY_KEY");
        }
    }

    #[test]
    fn no_variable_means_no_key() {
        let config = provider_config(&request(None), lookup(&[("MY_KEY", KEY)])).unwrap();
        assert_eq!(config.auth, Auth::None);
    }

    #[test]
    fn blank_base_url_means_the_default_and_proxies_come_from_the_lookup() {
        let mut req = request(None);
        req.base_url = Some("  ");
        let config = provider_config(
            &req,
            lookup(&[
                ("HTTPS_PROXY", "http://proxy:3128"),
                ("no_proxy", "localhost"),
            ]),
        )
        .unwrap();
        assert_eq!(config.base_url, None);
        assert_eq!(
            config.http.proxy.https.as_deref(),
            Some("http://proxy:3128")
        );
        assert_eq!(config.http.proxy.no_proxy.as_deref(), Some("localhost"));
    }

    /// Stderr the test can read back.
    #[derive(Clone, Default)]
    struct Captured(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.borrow_mut().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn connect_builds_the_provider_and_masks_the_key_from_then_on() {
        let stderr = Captured::default();
        let ctx = Context::new(false, Box::new(stderr.clone()));
        let config = provider_config(&request(Some("MY_KEY")), lookup(&[("MY_KEY", KEY)])).unwrap();
        let (provider, redactor) = connect(config, &ctx).unwrap();
        assert_eq!(provider.name(), "openai-chat");
        assert_eq!(provider.model(), "test-model");
        assert!(!redactor.redact(&format!("key={KEY}")).contains(KEY));
        ctx.warn(format!("the server echoed key={KEY}"));
        let printed = String::from_utf8(stderr.0.borrow().clone()).unwrap();
        assert!(
            printed.starts_with("warning: the server echoed key="),
            "{printed}"
        );
        assert!(!printed.contains(KEY), "{printed}");

        let mut no_model = request(None);
        no_model.model = " ";
        let config = provider_config(&no_model, lookup(&[])).unwrap();
        let err = connect(config, &ctx).unwrap_err();
        assert!(err.to_string().contains("no model"), "{err}");
    }
}
