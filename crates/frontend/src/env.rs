//! The environment variables the binaries read, in one place, and the pure
//! functions that turn them into library settings. Binaries pass a lookup
//! (`|name| std::env::var(name).ok()`); this crate never reads the environment.

use llm::ProxyConfig;

/// Proxy for `https://` URLs (also read in lower case).
pub(crate) const HTTPS_PROXY: &str = "HTTPS_PROXY";
/// Proxy for `http://` URLs (also read in lower case).
pub(crate) const HTTP_PROXY: &str = "HTTP_PROXY";
/// Fallback proxy for both schemes (also read in lower case).
pub(crate) const ALL_PROXY: &str = "ALL_PROXY";
/// Hosts that bypass the proxies (also read in lower case).
pub(crate) const NO_PROXY: &str = "NO_PROXY";

/// `git-agent`: the OpenAI API key (the fallback after ChatGPT sign-in); the
/// default key variable of the OpenAI providers ([`llm::defaults`]).
pub const OPENAI_API_KEY: &str = llm::defaults::OPENAI_API_KEY;
/// `git-agent`: the base URL on the API-key path.
pub(crate) const OPENAI_BASE_URL: &str = "OPENAI_BASE_URL";
/// `git-agent`: the model when `--model` is not given.
pub const OPENAI_MODEL: &str = "OPENAI_MODEL";
/// `git-agent`: Codex's home directory (`auth.json` lives there); default `~/.codex`.
pub(crate) const CODEX_HOME: &str = "CODEX_HOME";
/// The user's home directory.
pub const HOME: &str = "HOME";

/// `code-commit`: the user's configuration directory (default `$HOME/.config`);
/// its `code-commit/` holds the user's `config.toml` and `api-key`.
pub const XDG_CONFIG_HOME: &str = "XDG_CONFIG_HOME";
/// `code-commit`: the user's cache directory (default `$HOME/.cache`); build.sh
/// may write it.
pub const XDG_CACHE_HOME: &str = "XDG_CACHE_HOME";
/// `code-commit`: Cargo's home (default `$HOME/.cargo`); build.sh may write it.
pub const CARGO_HOME: &str = "CARGO_HOME";
/// `code-commit`: rustup's home (default `$HOME/.rustup`); build.sh may write it.
pub const RUSTUP_HOME: &str = "RUSTUP_HOME";
/// `code-commit`: Go's workspace (default `$HOME/go`); build.sh may write it.
pub const GOPATH: &str = "GOPATH";
/// `code-commit`: Go's build cache; build.sh may write it.
pub const GOCACHE: &str = "GOCACHE";
/// `code-commit`: Go's module cache; build.sh may write it.
pub const GOMODCACHE: &str = "GOMODCACHE";

/// `ultragit`: the task behind the next commit (author context; wins over
/// `ultragit context set`).
pub const ULTRAGIT_TASK: &str = "ULTRAGIT_TASK";
/// `ultragit`: why the next commit is made the way it is (author context).
pub const ULTRAGIT_REASONING: &str = "ULTRAGIT_REASONING";
/// `ultragit`: what the next commit's code depends on (author context).
pub const ULTRAGIT_DEPENDENCIES: &str = "ULTRAGIT_DEPENDENCIES";
/// `ultragit`: comma-separated tags for the next commit's annotations.
pub const ULTRAGIT_TAGS: &str = "ULTRAGIT_TAGS";

/// The proxy settings the usual variables describe. Upper case wins over lower
/// case; `ALL_PROXY` fills in for a scheme without its own; empty values count as
/// unset.
pub fn proxy_config(lookup: impl Fn(&str) -> Option<String>) -> ProxyConfig {
    let get = |name: &str| {
        lookup(name)
            .or_else(|| lookup(&name.to_ascii_lowercase()))
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    let all = get(ALL_PROXY);
    ProxyConfig {
        https: get(HTTPS_PROXY).or_else(|| all.clone()),
        http: get(HTTP_PROXY).or(all),
        no_proxy: get(NO_PROXY),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::lookup;

    fn from(vars: &[(&str, &str)]) -> ProxyConfig {
        proxy_config(lookup(vars))
    }

    #[test]
    fn reads_the_usual_variables() {
        assert_eq!(from(&[]), ProxyConfig::default());
        let config = from(&[
            ("HTTPS_PROXY", "http://proxy:3128"),
            ("no_proxy", "localhost,.corp"),
        ]);
        assert_eq!(config.https.as_deref(), Some("http://proxy:3128"));
        assert_eq!(config.http, None);
        assert_eq!(config.no_proxy.as_deref(), Some("localhost,.corp"));
        let config = from(&[
            ("https_proxy", "http://lower"),
            ("HTTPS_PROXY", "http://upper"),
            ("all_proxy", "socks://all"),
            ("HTTP_PROXY", " "),
        ]);
        assert_eq!(config.https.as_deref(), Some("http://upper"));
        assert_eq!(config.http.as_deref(), Some("socks://all"));
    }
}
