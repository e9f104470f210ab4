//! code-commit's configuration: which model it talks to, where its key comes
//! from, and how the build is sandboxed.
//!
//! Two files, both optional, both read as regular files of at most 1 MiB
//! ([`CONFIG_LIMIT`]):
//!
//! 1. the project's `agent-config/config.toml` (never through a symbolic link:
//!    neither `agent-config/` nor the file may be one), and
//! 2. the user's own `$XDG_CONFIG_HOME/code-commit/config.toml` (by default
//!    `~/.config/code-commit/config.toml`; the binary resolves the path, see
//!    [`UserFiles`]).
//!
//! For each key the project file wins over the user file; `build_writable` lists
//! of both are joined. Both are trusted: code-commit refuses to run at all when
//! git tracks anything under `agent-config/` (see [`crate::run::preflight`]), so
//! an `agent-config/` that exists is the user's own, not the repository's.
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
//! build_sandbox = true            # optional; false turns the Landlock sandbox off
//! build_writable = ["/opt/cache"] # optional; absolute paths build.sh may also write
//! ```
//!
//! # The key
//!
//! The first of these that exists is used ([`key`]):
//!
//! 1. the project's key file: `api_key_file` when set (it must exist), else
//!    `agent-config/api-key` — a regular file inside `agent-config/`, at most
//!    64 KiB ([`KEY_LIMIT`]), never a link;
//! 2. the user's key file `$XDG_CONFIG_HOME/code-commit/api-key` (by default
//!    `~/.config/code-commit/api-key`), outside every project;
//! 3. the environment variable `api_key_env` names.
//!
//! With none, a run is allowed only against an explicit `base_url` (local
//! servers need no key). The key is a [`Secret`]: it goes into a request header
//! and nowhere else; [`KeySource`] says where it came from, so the build's
//! sandbox can keep that place unreadable.

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use llm::{Auth, ProviderConfig, ProviderKind, Secret};
use safe_io::Dir;
use serde::Deserialize;

use crate::error::Error;

/// The directory of code-commit's own files.
pub const CONFIG_DIR: &str = "agent-config";
/// The configuration file, relative to the project.
pub const CONFIG_FILE: &str = "agent-config/config.toml";
/// The key file used when the configuration names none.
pub const DEFAULT_KEY_FILE: &str = "api-key";
/// The largest configuration file read (either of them).
pub const CONFIG_LIMIT: u64 = safe_io::fs::CONFIG_LIMIT;
/// The largest key file read.
pub const KEY_LIMIT: u64 = 64 * 1024;

/// The user's own files, outside every project. The binary resolves them (from
/// `$XDG_CONFIG_HOME` or `$HOME`); the library reads no environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserFiles {
    /// `$XDG_CONFIG_HOME/code-commit/config.toml`.
    pub config: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME/code-commit/api-key`.
    pub key: Option<PathBuf>,
}

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
    build_sandbox: Option<bool>,
    build_writable: Option<Vec<String>>,
}

impl File {
    /// `self`, with the keys it lacks taken from `lower`; lists joined.
    fn over(self, lower: File) -> File {
        let writable = match (self.build_writable, lower.build_writable) {
            (None, None) => None,
            (a, b) => Some(a.into_iter().chain(b).flatten().collect()),
        };
        File {
            provider: self.provider.or(lower.provider),
            model: self.model.or(lower.model),
            base_url: self.base_url.or(lower.base_url),
            api_key_file: self.api_key_file.or(lower.api_key_file),
            api_key_env: self.api_key_env.or(lower.api_key_env),
            max_tokens: self.max_tokens.or(lower.max_tokens),
            build_timeout_secs: self.build_timeout_secs.or(lower.build_timeout_secs),
            request_timeout_secs: self.request_timeout_secs.or(lower.request_timeout_secs),
            build_sandbox: self.build_sandbox.or(lower.build_sandbox),
            build_writable: writable,
        }
    }
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
    /// Whether `build.sh` runs in the Landlock sandbox where the kernel has it.
    pub build_sandbox: bool,
    /// Extra absolute paths `build.sh` may write (beyond the project, the
    /// temporary directory and the usual build caches).
    pub build_writable: Vec<PathBuf>,
}

/// Reads one configuration file's text into a [`File`]; `name` is how messages
/// name it.
fn parse(text: &[u8], name: &str) -> Result<File, Error> {
    let text =
        std::str::from_utf8(text).map_err(|_| Error::Config(format!("{name}: not valid UTF-8")))?;
    toml::from_str(text).map_err(|e| Error::Config(format!("{name}: {}", e.message())))
}

/// Why a file under `agent-config/` cannot be read, said for a person.
fn unsafe_file(rel: &str, err: &safe_io::Error, what: &str) -> Error {
    let reason = match err {
        safe_io::Error::Symlink { path } if path.ends_with(CONFIG_DIR) => format!(
            "{CONFIG_DIR}/ is a symbolic link; code-commit reads its files only from a real directory in the project"
        ),
        safe_io::Error::Symlink { .. } => format!(
            "is a symbolic link; code-commit reads {what} only from a regular file inside {CONFIG_DIR}/, never through a link"
        ),
        safe_io::Error::NotRegular { kind, .. } => {
            format!(
                "is {}, not a regular file; {what} must be a plain file",
                kind.describe()
            )
        }
        safe_io::Error::NotDirectory { kind, .. } => {
            format!("{CONFIG_DIR} is {}, not a directory", kind.describe())
        }
        safe_io::Error::TooLarge { limit, .. } => {
            format!("is larger than {} KiB, too large for {what}", limit / 1024)
        }
        other => other.to_string(),
    };
    Error::Config(format!("{rel}: {reason}"))
}

/// Reads `agent-config/config.toml` in `project` and the user's configuration
/// file (each optional; defaults for what neither sets).
pub fn load(project: &Path, user: &UserFiles) -> Result<Config, Error> {
    let project_dir = Dir::open(project).map_err(|e| Error::Config(e.to_string()))?;
    let project_file = match project_dir.read_optional(CONFIG_FILE, CONFIG_LIMIT) {
        Ok(Some(bytes)) => parse(&bytes, CONFIG_FILE)?,
        Ok(None) => File::default(),
        Err(err) => return Err(unsafe_file(CONFIG_FILE, &err, "the configuration")),
    };
    let user_file = match &user.config {
        None => File::default(),
        Some(path) => {
            let name = path.display().to_string();
            match safe_io::fs::read_regular_optional(path, CONFIG_LIMIT) {
                Ok(Some(bytes)) => parse(&bytes, &name)?,
                Ok(None) => File::default(),
                Err(err) => return Err(Error::Config(err.to_string())),
            }
        }
    };
    check(&project_file, CONFIG_FILE)?;
    if let Some(path) = &user.config {
        check(&user_file, &path.display().to_string())?;
    }
    let file = project_file.over(user_file);
    let provider = match file.provider.as_deref() {
        None => ProviderKind::OpenAiResponses,
        Some(name) => ProviderKind::parse(name).expect("checked"),
    };
    let (default_model, default_env) = match provider {
        ProviderKind::Anthropic => ("claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
        _ => ("gpt-5-mini", "OPENAI_API_KEY"),
    };
    let or = |v: Option<u64>, default: u64| v.unwrap_or(default);
    Ok(Config {
        provider,
        model: nonempty(file.model).unwrap_or_else(|| default_model.to_owned()),
        base_url: nonempty(file.base_url),
        api_key_file: nonempty(file.api_key_file),
        api_key_env: nonempty(file.api_key_env).unwrap_or_else(|| default_env.to_owned()),
        max_tokens: file.max_tokens.unwrap_or(32_000),
        build_timeout: Duration::from_secs(or(file.build_timeout_secs, 900)),
        request_timeout: Duration::from_secs(or(file.request_timeout_secs, 600)),
        build_sandbox: file.build_sandbox.unwrap_or(true),
        build_writable: file
            .build_writable
            .unwrap_or_default()
            .iter()
            .map(|entry| PathBuf::from(entry.trim()))
            .collect(),
    })
}

fn nonempty(v: Option<String>) -> Option<String> {
    v.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty())
}

/// Checks the values one file sets; errors name the file `name`.
fn check(file: &File, name: &str) -> Result<(), Error> {
    let error = |message: String| Error::Config(format!("{name}: {message}"));
    if let Some(provider) = &file.provider
        && ProviderKind::parse(provider).is_none()
    {
        return Err(error(format!(
            "provider '{provider}' is not one of {}",
            ProviderKind::NAMES.join(", ")
        )));
    }
    if let Some(key_file) = nonempty(file.api_key_file.clone()) {
        let p = Path::new(&key_file);
        if p.is_absolute() || p.components().any(|c| !matches!(c, Component::Normal(_))) {
            return Err(error(format!(
                "api_key_file '{key_file}' must be a plain path inside {CONFIG_DIR}/ (for a key outside the project, use the user key file)"
            )));
        }
    }
    for entry in file.build_writable.iter().flatten() {
        let path = Path::new(entry.trim());
        if !path.is_absolute() || path.components().any(|c| c == Component::ParentDir) {
            return Err(error(format!(
                "build_writable entry '{entry}' must be an absolute path without '..'"
            )));
        }
    }
    for (key, value) in [
        ("max_tokens", file.max_tokens.map(u64::from)),
        ("build_timeout_secs", file.build_timeout_secs),
        ("request_timeout_secs", file.request_timeout_secs),
    ] {
        if value == Some(0) {
            return Err(error(format!("{key} must be at least 1")));
        }
    }
    Ok(())
}

/// Where the key came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// A file inside `agent-config/` (the path relative to the project).
    ProjectFile(String),
    /// The user's key file.
    UserFile(PathBuf),
    /// The environment variable of this name.
    Env(String),
    /// No key (a local server).
    None,
}

impl std::fmt::Display for KeySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeySource::ProjectFile(rel) => f.write_str(rel),
            KeySource::UserFile(path) => write!(f, "{}", path.display()),
            KeySource::Env(name) => write!(f, "${name}"),
            KeySource::None => f.write_str("no key"),
        }
    }
}

/// The key and where it came from: the project's key file, else the user's,
/// else the environment variable through `lookup` (see the module docs).
pub fn key(
    config: &Config,
    project: &Path,
    user: &UserFiles,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<(Option<Secret>, KeySource), Error> {
    let project_dir = Dir::open(project).map_err(|e| Error::Config(e.to_string()))?;
    let name = config.api_key_file.as_deref().unwrap_or(DEFAULT_KEY_FILE);
    let rel = format!("{CONFIG_DIR}/{name}");
    let required = config.api_key_file.is_some();
    let bytes = match project_dir.read(&rel, KEY_LIMIT) {
        Ok(bytes) => Some(bytes),
        Err(err) if err.is_not_found() && !required => None,
        Err(err) if err.is_not_found() => {
            return Err(Error::Config(format!(
                "{rel} does not exist, but api_key_file names it; put the key there or remove api_key_file"
            )));
        }
        Err(err) => return Err(unsafe_file(&rel, &err, "the key")),
    };
    if let Some(bytes) = bytes {
        return Ok((Some(key_text(&bytes, &rel)?), KeySource::ProjectFile(rel)));
    }
    if let Some(path) = &user.key {
        match safe_io::fs::read_regular_optional(path, KEY_LIMIT) {
            Ok(Some(bytes)) => {
                let shown = path.display().to_string();
                return Ok((
                    Some(key_text(&bytes, &shown)?),
                    KeySource::UserFile(path.clone()),
                ));
            }
            Ok(None) => {}
            Err(err) => return Err(Error::Config(format!("the key file {err}"))),
        }
    }
    Ok(
        match lookup(&config.api_key_env)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
        {
            Some(value) => (
                Some(Secret::new(value)),
                KeySource::Env(config.api_key_env.clone()),
            ),
            None => (None, KeySource::None),
        },
    )
}

fn key_text(bytes: &[u8], shown: &str) -> Result<Secret, Error> {
    let text = std::str::from_utf8(bytes)
        .map_err(|_| Error::Config(format!("the key file {shown} is not valid UTF-8")))?;
    let key = text.trim();
    if key.is_empty() {
        return Err(Error::Config(format!("the key file {shown} is empty")));
    }
    Ok(Secret::new(key))
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
                "no API key: put it in ~/.config/code-commit/api-key (outside every project; $XDG_CONFIG_HOME is honoured), or export {}, or put it in {CONFIG_DIR}/{} (or name a file with api_key_file in {CONFIG_FILE}); a local server needs none, given base_url",
                config.api_key_env,
                config.api_key_file.as_deref().unwrap_or(DEFAULT_KEY_FILE),
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

    fn none() -> UserFiles {
        UserFiles::default()
    }

    /// A user configuration directory with `config.toml` and/or `api-key`.
    fn user(config: Option<&str>, key: Option<&str>) -> (tempfile::TempDir, UserFiles) {
        let dir = tempfile::tempdir().unwrap();
        let files = UserFiles {
            config: Some(dir.path().join("config.toml")),
            key: Some(dir.path().join("api-key")),
        };
        if let Some(text) = config {
            std::fs::write(dir.path().join("config.toml"), text).unwrap();
        }
        if let Some(text) = key {
            std::fs::write(dir.path().join("api-key"), text).unwrap();
        }
        (dir, files)
    }

    #[test]
    fn defaults_without_a_file() {
        let dir = project(None);
        let c = load(dir.path(), &none()).unwrap();
        assert_eq!(c.provider, ProviderKind::OpenAiResponses);
        assert_eq!(c.model, "gpt-5-mini");
        assert_eq!(c.api_key_env, "OPENAI_API_KEY");
        assert_eq!(c.max_tokens, 32_000);
        assert_eq!(c.build_timeout, Duration::from_secs(900));
        assert!(c.build_sandbox);
        assert!(c.build_writable.is_empty());
        // A missing user file is no error either.
        let (_home, files) = user(None, None);
        assert_eq!(load(dir.path(), &files).unwrap(), c);
    }

    #[test]
    fn the_file_sets_everything_and_is_checked() {
        let dir = project(Some(
            "provider = \"anthropic\"\nbase_url = \"http://127.0.0.1:9/\"\nmax_tokens = 1000\nbuild_timeout_secs = 5\nbuild_sandbox = false\nbuild_writable = [\"/opt/cache\"]\n",
        ));
        let c = load(dir.path(), &none()).unwrap();
        assert_eq!(c.provider, ProviderKind::Anthropic);
        assert_eq!(c.model, "claude-sonnet-4-5");
        assert_eq!(c.api_key_env, "ANTHROPIC_API_KEY");
        assert_eq!(c.max_tokens, 1000);
        assert!(!c.build_sandbox);
        assert_eq!(c.build_writable, [PathBuf::from("/opt/cache")]);
        for (bad, says) in [
            ("provider = \"gemini\"", "not one of"),
            ("modle = \"x\"", "unknown field"),
            ("max_tokens = 0", "at least 1"),
            ("api_key_file = \"../key\"", "inside agent-config"),
            ("api_key_file = \"/etc/key\"", "inside agent-config"),
            ("build_writable = [\"cache\"]", "absolute path"),
            ("build_writable = [\"/a/../b\"]", "absolute path"),
        ] {
            let dir = project(Some(bad));
            let err = load(dir.path(), &none()).unwrap_err().to_string();
            assert!(err.contains(says), "{bad}: {err}");
            assert!(err.starts_with(CONFIG_FILE), "{err}");
        }
    }

    #[test]
    fn the_project_file_wins_over_the_user_file_key_by_key() {
        let dir = project(Some(
            "model = \"project-model\"\nbuild_writable = [\"/p\"]\n",
        ));
        let (_home, files) = user(
            Some(
                "provider = \"openai-chat\"\nmodel = \"user-model\"\nbase_url = \"http://127.0.0.1:1/v1\"\nbuild_writable = [\"/u\"]\n",
            ),
            None,
        );
        let c = load(dir.path(), &files).unwrap();
        assert_eq!(c.provider, ProviderKind::OpenAiChat);
        assert_eq!(c.model, "project-model");
        assert_eq!(c.base_url.as_deref(), Some("http://127.0.0.1:1/v1"));
        assert_eq!(c.build_writable, [PathBuf::from("/p"), PathBuf::from("/u")]);
        // Errors in the user file name it.
        let (home, files) = user(Some("provider = 3\n"), None);
        let err = load(dir.path(), &files).unwrap_err().to_string();
        assert!(
            err.starts_with(&home.path().join("config.toml").display().to_string()),
            "{err}"
        );
    }

    #[test]
    fn project_files_are_never_read_through_links_or_special_files() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("config.toml"), "model = \"evil\"\n").unwrap();
        std::fs::write(outside.path().join("secret"), "sk-outside-secret-1\n").unwrap();

        let dir = project(None);
        std::os::unix::fs::symlink(
            outside.path().join("config.toml"),
            dir.path().join(CONFIG_FILE),
        )
        .unwrap();
        let err = load(dir.path(), &none()).unwrap_err().to_string();
        assert!(
            err.starts_with("agent-config/config.toml: is a symbolic link"),
            "{err}"
        );

        let dir = project(None);
        std::os::unix::fs::symlink(
            outside.path().join("secret"),
            dir.path().join("agent-config/api-key"),
        )
        .unwrap();
        let c = load(dir.path(), &none()).unwrap();
        let err = key(&c, dir.path(), &none(), |_| None)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("agent-config/api-key: is a symbolic link"),
            "{err}"
        );
        assert!(!err.contains("sk-outside"), "{err}");

        // agent-config/ itself a link.
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join(CONFIG_DIR)).unwrap();
        let err = load(dir.path(), &none()).unwrap_err().to_string();
        assert!(err.contains("agent-config/ is a symbolic link"), "{err}");

        // A FIFO neither hangs nor counts as a file.
        let dir = project(None);
        testkit::mkfifo(&dir.path().join(CONFIG_FILE));
        let err = load(dir.path(), &none()).unwrap_err().to_string();
        assert!(err.contains("is a FIFO, not a regular file"), "{err}");
        let dir = project(None);
        testkit::mkfifo(&dir.path().join("agent-config/api-key"));
        let c = load(dir.path(), &none()).unwrap();
        let err = key(&c, dir.path(), &none(), |_| None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("is a FIFO"), "{err}");

        // Size caps.
        let dir = project(Some(&"#".repeat(CONFIG_LIMIT as usize + 1)));
        let err = load(dir.path(), &none()).unwrap_err().to_string();
        assert!(err.contains("larger than 1024 KiB"), "{err}");
        let dir = project(None);
        std::fs::write(
            dir.path().join("agent-config/api-key"),
            "k".repeat(KEY_LIMIT as usize + 1),
        )
        .unwrap();
        let c = load(dir.path(), &none()).unwrap();
        let err = key(&c, dir.path(), &none(), |_| None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("larger than 64 KiB"), "{err}");
    }

    #[test]
    fn the_key_comes_from_the_project_then_the_user_then_the_environment() {
        let dir = project(None);
        let c = load(dir.path(), &none()).unwrap();
        let env = |name: &str| (name == "OPENAI_API_KEY").then(|| "sk-env-1234".to_owned());
        assert_eq!(
            key(&c, dir.path(), &none(), env).unwrap(),
            (
                Some(Secret::new("sk-env-1234")),
                KeySource::Env("OPENAI_API_KEY".into())
            )
        );
        let (home, files) = user(None, Some("sk-user-0000\n"));
        assert_eq!(
            key(&c, dir.path(), &files, env).unwrap(),
            (
                Some(Secret::new("sk-user-0000")),
                KeySource::UserFile(home.path().join("api-key"))
            )
        );
        std::fs::write(dir.path().join("agent-config/api-key"), "sk-file-5678\n").unwrap();
        assert_eq!(
            key(&c, dir.path(), &files, env).unwrap(),
            (
                Some(Secret::new("sk-file-5678")),
                KeySource::ProjectFile("agent-config/api-key".into())
            )
        );
        let none_dir = project(None);
        let c = load(none_dir.path(), &none()).unwrap();
        assert_eq!(
            key(&c, none_dir.path(), &none(), |_| None).unwrap(),
            (None, KeySource::None)
        );
        let err = provider_config(&c, None).unwrap_err().to_string();
        assert!(
            err.contains("OPENAI_API_KEY")
                && err.contains("agent-config/api-key")
                && err.contains("~/.config/code-commit/api-key"),
            "{err}"
        );
        let mut local = c.clone();
        local.base_url = Some("http://127.0.0.1:8080/v1".into());
        assert_eq!(provider_config(&local, None).unwrap().auth, Auth::None);
        // A named key file must exist.
        let named = project(Some("api_key_file = \"keys/mine\"\n"));
        let c = load(named.path(), &none()).unwrap();
        let err = key(&c, named.path(), &none(), env).unwrap_err().to_string();
        assert!(
            err.contains("agent-config/keys/mine does not exist"),
            "{err}"
        );
    }

    proptest::proptest! {
        /// The configuration parser over arbitrary bytes: a value or an
        /// error naming the file, never a panic.
        #[test]
        fn arbitrary_bytes_parse_or_fail_cleanly(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..2048)
        ) {
            if let Err(err) = parse(&bytes, CONFIG_FILE) {
                proptest::prop_assert!(err.to_string().contains(CONFIG_FILE));
            }
        }
    }
}
