//! Configuration of the writing agent (spec 000 "Configuration") and of the model
//! it talks to: the table of `ultragit annotate`'s keys and their resolution.
//!
//! | key | flag | git config | `.ultragit-config.toml` | default |
//! |---|---|---|---|---|
//! | limits | — | `ultragit.maxDiffLines`, `maxAgentTurns`, `maxTokensPerResponse`, `recentAnnotationsLimit`, `chunkSize` | `[ultragit.annotate]` `max_diff_lines`, … | [`AnnotateConfig::default`] |
//! | provider | `--provider` | `ultragit.provider` | ignored | `openai-responses` |
//! | model | `--model` | `ultragit.model` | ignored | the provider's ([`llm::defaults`]) |
//! | base URL | `--base-url` | `ultragit.baseUrl` | ignored | the API's own |
//! | key variable | `--api-key-env` | `ultragit.apiKeyEnv` | ignored | the provider's |
//!
//! Precedence, highest first: the flags, then the team file (for the limits: it
//! wins over git config, as for `ultragit read`, spec 003 §6), then git config
//! (the user's own, or `.git/config`), then the defaults. `layered-config`
//! resolves the table; only the value that wins is checked, and a bad one names
//! its source.
//!
//! **Invariant (trust):** the team file is committed, so anyone who can push to the
//! repository (or whoever it was cloned from) wrote it. It may tune the limits; it
//! may never choose the provider, the model, the endpoint or the key's variable.
//! Those keys are steering keys in the table: the file is never asked for them,
//! and where it sets one [`Settings::warnings`] says so, naming the trusted place
//! (`git config …` or the flag).

use gitctx::Repo;
use layered_config::{ConfigError, Key, Kind, Layer, Section, Stack, Value, parse};
use llm::ProviderKind;
use ultragit_schema::team_config::{ANNOTATE_SECTION, TEAM_CONFIG_LIMIT};

use crate::error::AnnotateError;

/// The shared configuration file.
pub const CONFIG_FILE: &str = ultragit_schema::team_config::TEAM_CONFIG_FILE;

/// Limits of the writing agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnnotateConfig {
    /// Past this many changed lines, `get_diff` answers with a per-file summary
    /// and the commit is annotated in chunks.
    pub max_diff_lines: u32,
    /// Model calls per agent run (one call is one turn).
    pub max_agent_turns: u32,
    /// Output tokens per model call.
    pub max_tokens_per_response: u32,
    /// Recent annotations loaded per touched file.
    pub recent_annotations_limit: u32,
    /// Files per chunk when a commit is annotated in chunks.
    pub chunk_size: u32,
}

impl Default for AnnotateConfig {
    fn default() -> Self {
        AnnotateConfig {
            max_diff_lines: 2000,
            max_agent_turns: 20,
            max_tokens_per_response: 4096,
            recent_annotations_limit: 5,
            chunk_size: 5,
        }
    }
}

/// Commits touching more files than this are annotated in chunks.
pub const CHUNK_FILE_THRESHOLD: usize = 10;
/// A chunk stays under this many changed lines (one file larger than that is a
/// chunk of its own).
pub const CHUNK_LINE_BUDGET: u32 = 1500;

const MAX_DIFF_LINES: Key<u32> = Key::new("max_diff_lines", parse::whole::<u32, 1>)
    .git("ultragit.maxDiffLines")
    .file("max_diff_lines")
    .kind(Kind::Int);
const MAX_AGENT_TURNS: Key<u32> = Key::new("max_agent_turns", parse::whole::<u32, 1>)
    .git("ultragit.maxAgentTurns")
    .file("max_agent_turns")
    .kind(Kind::Int);
const MAX_TOKENS_PER_RESPONSE: Key<u32> =
    Key::new("max_tokens_per_response", parse::whole::<u32, 1>)
        .git("ultragit.maxTokensPerResponse")
        .file("max_tokens_per_response")
        .kind(Kind::Int);
const RECENT_ANNOTATIONS_LIMIT: Key<u32> =
    Key::new("recent_annotations_limit", parse::whole::<u32, 0>)
        .git("ultragit.recentAnnotationsLimit")
        .file("recent_annotations_limit")
        .kind(Kind::Int);
const CHUNK_SIZE: Key<u32> = Key::new("chunk_size", parse::whole::<u32, 1>)
    .git("ultragit.chunkSize")
    .file("chunk_size")
    .kind(Kind::Int);

const PROVIDER: Key<ProviderKind> = Key::new("provider", provider_kind)
    .flag("--provider")
    .git("ultragit.provider")
    .file("provider")
    .steering("which provider is used")
    .blank_is_unset();
const MODEL: Key<String> = Key::new("model", parse::text)
    .flag("--model")
    .git("ultragit.model")
    .file("model")
    .steering("which model is used")
    .blank_is_unset();
/// Blank is a value: no URL, the API's own (`--base-url ""` hides git config's).
const BASE_URL: Key<Option<String>> = Key::new("base_url", parse::optional_text)
    .flag("--base-url")
    .git("ultragit.baseUrl")
    .file("base_url")
    .steering("where requests go");
/// Blank or `none` is a value: no key (a local server).
const API_KEY_ENV: Key<Option<String>> = Key::new("api_key_env", key_variable)
    .flag("--api-key-env")
    .git("ultragit.apiKeyEnv")
    .file("api_key_env")
    .steering("which credential is sent");

fn provider_kind(value: &Value) -> Result<ProviderKind, String> {
    ProviderKind::parse_or_explain(&parse::text(value)?)
}

fn key_variable(value: &Value) -> Result<Option<String>, String> {
    let name = parse::text(value)?;
    Ok((!name.is_empty() && !name.eq_ignore_ascii_case("none")).then_some(name))
}

/// Which model annotates, and where its key comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderSettings {
    pub kind: ProviderKind,
    pub model: String,
    /// `None`: the API's default URL.
    pub base_url: Option<String>,
    /// The environment variable holding the key; `None` means no key (a local
    /// server).
    pub api_key_env: Option<String>,
}

/// The provider flags as given (`None`: not given). They win over everything.
#[derive(Debug, Default, Clone)]
pub struct ProviderFlags {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    /// `Some("")` or `Some("none")`: no key.
    pub api_key_env: Option<String>,
}

/// The configuration of a repository, resolved: the limits, the provider
/// settings, and the warnings about what the team file tried to set and may not.
#[derive(Debug, Clone)]
pub struct Settings {
    pub limits: AnnotateConfig,
    pub provider: ProviderSettings,
    /// One line per ignored key of the team file (see the module's trust rule).
    pub warnings: Vec<String>,
}

impl Settings {
    /// Resolves the table over `flags`, `.ultragit-config.toml` (read bounded
    /// and without following links; steering keys ignored) and git config.
    pub fn load(repo: &Repo, flags: &ProviderFlags) -> Result<Settings, AnnotateError> {
        let team = repo
            .read_worktree_file(CONFIG_FILE, TEAM_CONFIG_LIMIT)
            .map_err(|e| AnnotateError::Config(e.to_string()))?;
        let git = Layer::git_config(|key| repo.config_get(key), |key| repo.config_get_i64(key));
        resolve(flags, team.as_deref(), git).map_err(|e| AnnotateError::Config(e.to_string()))
    }
}

/// The table resolved over `flags`, the team file's bytes (if any) and `git`.
fn resolve(
    flags: &ProviderFlags,
    team: Option<&[u8]>,
    git: Layer<'_>,
) -> Result<Settings, ConfigError> {
    let mut stack = Stack::new().with(
        Layer::flags()
            .flag(&PROVIDER, flags.provider.clone())
            .flag(&MODEL, flags.model.clone())
            .flag(&BASE_URL, flags.base_url.clone())
            .flag(&API_KEY_ENV, flags.api_key_env.clone()),
    );
    if let Some(bytes) = team
        && let Some(section) = Section::parse_bytes(bytes, CONFIG_FILE)?.at(ANNOTATE_SECTION)?
    {
        stack = stack.with(Layer::repo_file(section));
    }
    let mut stack = stack.with(git);

    let defaults = AnnotateConfig::default();
    let limits = AnnotateConfig {
        max_diff_lines: stack.value(&MAX_DIFF_LINES, defaults.max_diff_lines)?.value,
        max_agent_turns: stack
            .value(&MAX_AGENT_TURNS, defaults.max_agent_turns)?
            .value,
        max_tokens_per_response: stack
            .value(&MAX_TOKENS_PER_RESPONSE, defaults.max_tokens_per_response)?
            .value,
        recent_annotations_limit: stack
            .value(&RECENT_ANNOTATIONS_LIMIT, defaults.recent_annotations_limit)?
            .value,
        chunk_size: stack.value(&CHUNK_SIZE, defaults.chunk_size)?.value,
    };
    let kind = stack.value(&PROVIDER, ProviderKind::OpenAiResponses)?.value;
    let provider = ProviderSettings {
        kind,
        model: stack.value(&MODEL, kind.default_model().to_owned())?.value,
        base_url: stack.value(&BASE_URL, None)?.value,
        api_key_env: stack
            .value(&API_KEY_ENV, Some(kind.default_key_variable().to_owned()))?
            .value,
    };
    let warnings = stack.finish()?.iter().map(|i| i.warning()).collect();
    Ok(Settings {
        limits,
        provider,
        warnings,
    })
}

#[cfg(test)]
mod tests;
