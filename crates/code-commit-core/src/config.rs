//! code-commit's configuration: which model it talks to, where its key comes
//! from, and how the build is sandboxed.
//!
//! Two files, both optional, both read as regular files of at most 1 MiB
//! (`CONFIG_LIMIT`):
//!
//! 1. the project's `agent-config/config.toml` (never through a symbolic link:
//!    neither `agent-config/` nor the file may be one), and
//! 2. the user's own `$XDG_CONFIG_HOME/code-commit/config.toml` (by default
//!    `~/.config/code-commit/config.toml`; the binary resolves the path, see
//!    [`UserFiles`]).
//!
//! For each key the project file wins over the user file, and a command-line
//! flag ([`Flags`]: `--max-build-output-bytes`) over both; `build_writable`
//! lists of both files are joined. The keys are one table resolved by `layered-config`, so a
//! bad value or an unknown key is an error naming the file (and the key). Both
//! files are trusted: code-commit refuses to run at all when
//! git tracks anything under `agent-config/` (see [`crate::run::preflight`]), so
//! an `agent-config/` that exists is the user's own, not the repository's.
//!
//! ```toml
//! provider = "openai-chat"        # openai-responses (default) | openai-chat | anthropic
//! model = "gpt-5-mini"            # default: llm::defaults (gpt-5-mini, or claude-sonnet-4-5 for anthropic)
//! base_url = "http://127.0.0.1:8080/v1"   # optional; default: the provider's own
//! api_key_file = "api-key"        # optional; a file under agent-config/ holding the key
//! api_key_env = "OPENAI_API_KEY"  # optional; default OPENAI_API_KEY / ANTHROPIC_API_KEY
//! max_tokens = 32000              # optional; output tokens per response (default 32000)
//! max_build_output_bytes = 262144 # optional; build output per repair prompt (default 256 KiB, at least 1024)
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
//!    64 KiB (`KEY_LIMIT`), never a link;
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

use layered_config::parse as parsers;
use layered_config::{ConfigError, Key, Layer, Section, Stack, Value};
use llm::{Auth, ProviderConfig, ProviderKind, Secret};
use safe_io::Dir;

use crate::error::Error;

/// The directory of code-commit's own files.
pub const CONFIG_DIR: &str = "agent-config";
/// The configuration file, relative to the project.
pub(crate) const CONFIG_FILE: &str = "agent-config/config.toml";
/// The key file used when the configuration names none.
pub(crate) const DEFAULT_KEY_FILE: &str = "api-key";
/// The largest configuration file read (either of them).
pub(crate) const CONFIG_LIMIT: u64 = safe_io::fs::CONFIG_LIMIT;
/// The largest key file read.
pub(crate) const KEY_LIMIT: u64 = 64 * 1024;

/// The build output a repair prompt carries by default: 256 KiB (spec 001
/// asks for the entire output; a bound keeps a runaway build from filling the
/// model's context).
pub(crate) const DEFAULT_BUILD_OUTPUT_BYTES: usize = 256 * 1024;

/// The user's own files, outside every project. The binary resolves them (from
/// `$XDG_CONFIG_HOME` or `$HOME`); the library reads no environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserFiles {
    /// `$XDG_CONFIG_HOME/code-commit/config.toml`.
    pub config: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME/code-commit/api-key`.
    pub key: Option<PathBuf>,
}

/// The table: each key's name in the files, and its parser. Blank text is a
/// value that means "not set" (the default), and it hides the user's value.
const PROVIDER: Key<ProviderKind> = Key::new("provider", provider_kind);
const MODEL: Key<Option<String>> = Key::new("model", parsers::optional_text);
const BASE_URL: Key<Option<String>> = Key::new("base_url", parsers::optional_text);
const API_KEY_FILE: Key<Option<String>> = Key::new("api_key_file", key_file);
const API_KEY_ENV: Key<Option<String>> = Key::new("api_key_env", parsers::optional_text);
const MAX_TOKENS: Key<u32> = Key::new("max_tokens", parsers::whole::<u32, 1>);
/// At least 1 KiB: room for the status line, the cut marker and some output.
const MAX_BUILD_OUTPUT_BYTES: Key<usize> = Key {
    flag: Some("--max-build-output-bytes"),
    ..Key::new("max_build_output_bytes", parsers::whole::<usize, 1024>)
};
const BUILD_TIMEOUT_SECS: Key<u64> = Key::new("build_timeout_secs", parsers::whole::<u64, 1>);
const REQUEST_TIMEOUT_SECS: Key<u64> = Key::new("request_timeout_secs", parsers::whole::<u64, 1>);
const BUILD_SANDBOX: Key<bool> = Key::new("build_sandbox", parsers::boolean);
/// Joined across the files (the project's entries first).
const BUILD_WRITABLE: Key<Vec<PathBuf>> = Key::new("build_writable", writable_paths);

fn provider_kind(value: &Value) -> Result<ProviderKind, String> {
    ProviderKind::parse_or_explain(&parsers::text(value)?)
}

/// A plain relative path inside `agent-config/` (checked when not blank).
fn key_file(value: &Value) -> Result<Option<String>, String> {
    let Some(key_file) = parsers::optional_text(value)? else {
        return Ok(None);
    };
    let p = Path::new(&key_file);
    if p.is_absolute() || p.components().any(|c| !matches!(c, Component::Normal(_))) {
        return Err(format!(
            "'{key_file}' must be a plain path inside {CONFIG_DIR}/ (for a key outside the project, use the user key file)"
        ));
    }
    Ok(Some(key_file))
}

/// Absolute paths without `..`.
fn writable_paths(value: &Value) -> Result<Vec<PathBuf>, String> {
    parsers::text_list(value)?
        .into_iter()
        .map(|entry| {
            let path = PathBuf::from(&entry);
            if !path.is_absolute() || path.components().any(|c| c == Component::ParentDir) {
                return Err(format!(
                    "entry '{entry}' must be an absolute path without '..'"
                ));
            }
            Ok(path)
        })
        .collect()
}

/// What the command line sets over both files: the flags layer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Flags {
    /// `--max-build-output-bytes`: the build output a repair prompt carries.
    pub max_build_output_bytes: Option<u64>,
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
    /// The build output a repair prompt carries, at most: beyond it, its start
    /// and end are kept and the cut is marked.
    pub max_build_output_bytes: usize,
    pub build_timeout: Duration,
    pub request_timeout: Duration,
    /// Whether `build.sh` runs in the Landlock sandbox where the kernel has it.
    pub build_sandbox: bool,
    /// Extra absolute paths `build.sh` may write (beyond the project, the
    /// temporary directory and the usual build caches).
    pub build_writable: Vec<PathBuf>,
}

/// Reads one configuration file's text into a [`Section`]; `name` is how
/// messages name it.
fn parse(text: &[u8], name: &str) -> Result<Section, Error> {
    Section::parse_bytes(text, name).map_err(config_error)
}

fn config_error(err: ConfigError) -> Error {
    Error::ConfigValue(err)
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
/// file (each optional; defaults for what neither sets), under `flags`.
pub fn load(project: &Path, user: &UserFiles, flags: &Flags) -> Result<Config, Error> {
    let project_dir = Dir::open(project).map_err(|e| Error::Config(e.to_string()))?;
    let project_file = match project_dir.read_optional(CONFIG_FILE, CONFIG_LIMIT) {
        Ok(Some(bytes)) => Some(parse(&bytes, CONFIG_FILE)?),
        Ok(None) => None,
        Err(err) => return Err(unsafe_file(CONFIG_FILE, &err, "the configuration")),
    };
    let user_file = match &user.config {
        None => None,
        Some(path) => match safe_io::fs::read_regular_optional(path, CONFIG_LIMIT) {
            Ok(Some(bytes)) => Some(parse(&bytes, &path.display().to_string())?),
            Ok(None) => None,
            Err(err) => return Err(Error::Config(err.to_string())),
        },
    };
    let flags = Layer::flags().flag(
        &MAX_BUILD_OUTPUT_BYTES,
        flags.max_build_output_bytes.map(|bytes| bytes.to_string()),
    );
    // Both files are the user's own: code-commit refuses a tracked agent-config/.
    let stack = [project_file, user_file]
        .into_iter()
        .flatten()
        .fold(Stack::new().with(flags), |stack, file| {
            stack.with(Layer::user_file(file))
        });
    resolve(stack).map_err(config_error)
}

/// The table resolved over `stack`.
fn resolve(mut stack: Stack<'_>) -> Result<Config, ConfigError> {
    let provider = stack.value(&PROVIDER, ProviderKind::OpenAiResponses)?;
    let text = |value: Option<String>, default: &str| value.unwrap_or_else(|| default.to_owned());
    let config = Config {
        provider,
        model: text(stack.value(&MODEL, None)?, provider.default_model()),
        base_url: stack.value(&BASE_URL, None)?,
        api_key_file: stack.value(&API_KEY_FILE, None)?,
        api_key_env: text(
            stack.value(&API_KEY_ENV, None)?,
            provider.default_key_variable(),
        ),
        max_tokens: stack.value(&MAX_TOKENS, 32_000)?,
        max_build_output_bytes: stack.value(&MAX_BUILD_OUTPUT_BYTES, DEFAULT_BUILD_OUTPUT_BYTES)?,
        build_timeout: Duration::from_secs(stack.value(&BUILD_TIMEOUT_SECS, 900)?),
        request_timeout: Duration::from_secs(stack.value(&REQUEST_TIMEOUT_SECS, 600)?),
        build_sandbox: stack.value(&BUILD_SANDBOX, true)?,
        build_writable: stack
            .all(&BUILD_WRITABLE)?
            .into_iter()
            .flat_map(|resolved| resolved.value)
            .collect(),
    };
    stack.finish()?;
    Ok(config)
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
mod tests;
