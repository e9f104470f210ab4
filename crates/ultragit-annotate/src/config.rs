//! Configuration of the writing agent (spec 000 "Configuration") and of the model
//! it talks to.
//!
//! Sources, lowest precedence first: defaults; git config `[ultragit]`
//! (`maxDiffLines`, `maxAgentTurns`, `maxTokensPerResponse`,
//! `recentAnnotationsLimit`, `chunkSize`, `provider`, `model`, `baseUrl`,
//! `apiKeyEnv`); `.ultragit-config.toml` at the top of the working tree
//! (`[ultragit.annotate]`: `max_diff_lines`, `max_agent_turns`,
//! `max_tokens_per_response`, `recent_annotations_limit`, `chunk_size`) — the team
//! file wins for these limits, as for `ultragit read`. The binary's flags override
//! all of these.
//!
//! **Invariant (trust):** the team file is committed, so anyone who can push to the
//! repository (or whoever it was cloned from) wrote it. It may tune the limits; it
//! may never choose the provider, the model, the endpoint or the key's variable.
//! Those come only from git config (the user's own, or `.git/config`) and flags;
//! where the file sets them they are ignored and [`Settings::warnings`] says so,
//! naming the trusted place (see [`ultragit_schema::team_config`]).

use gitctx::Repo;
use llm::ProviderKind;
use ultragit_schema::team_config::{TEAM_CONFIG_LIMIT, TeamAnnotate, TeamConfig};

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

impl ProviderSettings {
    /// The defaults for a provider: a current model and the usual key variable.
    pub fn defaults(kind: ProviderKind) -> ProviderSettings {
        let (model, key) = match kind {
            ProviderKind::OpenAiResponses | ProviderKind::OpenAiChat => {
                ("gpt-5-mini", "OPENAI_API_KEY")
            }
            ProviderKind::Anthropic => ("claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
        };
        ProviderSettings {
            kind,
            model: model.to_owned(),
            base_url: None,
            api_key_env: Some(key.to_owned()),
        }
    }
}

/// Both configurations of a repository, as written: the limits resolved, the
/// provider settings not yet (flags may override them), and the warnings about
/// what the team file tried to set and may not.
#[derive(Debug, Clone)]
pub struct Settings {
    pub limits: AnnotateConfig,
    pub provider: RawProvider,
    /// One line per ignored key of the team file (see the module's trust rule).
    pub warnings: Vec<String>,
}

impl Settings {
    /// Loads defaults, then git config, then `.ultragit-config.toml` (read
    /// bounded and without following links; steering keys ignored).
    pub fn load(repo: &Repo) -> Result<Settings, AnnotateError> {
        load_parts(repo)
    }
}

fn load_parts(repo: &Repo) -> Result<Settings, AnnotateError> {
    let mut limits = AnnotateConfig::default();
    let int = |key: &str, min: i64| -> Result<Option<u32>, AnnotateError> {
        let source = format!("git config ultragit.{key}");
        match repo.config_get_i64(&format!("ultragit.{key}")) {
            Ok(Some(v)) => bounded(&source, v, min).map(Some),
            Ok(None) => Ok(None),
            Err(err) => Err(AnnotateError::Config(format!("{source}: {err}"))),
        }
    };
    let text = |key: &str| -> Result<Option<String>, AnnotateError> {
        repo.config_get(&format!("ultragit.{key}"))
            .map_err(|err| AnnotateError::Config(format!("git config ultragit.{key}: {err}")))
    };
    if let Some(v) = int("maxDiffLines", 1)? {
        limits.max_diff_lines = v;
    }
    if let Some(v) = int("maxAgentTurns", 1)? {
        limits.max_agent_turns = v;
    }
    if let Some(v) = int("maxTokensPerResponse", 1)? {
        limits.max_tokens_per_response = v;
    }
    if let Some(v) = int("recentAnnotationsLimit", 0)? {
        limits.recent_annotations_limit = v;
    }
    if let Some(v) = int("chunkSize", 1)? {
        limits.chunk_size = v;
    }
    let non_empty = |v: Option<String>| v.filter(|v| !v.trim().is_empty());
    let raw = RawProvider {
        kind: non_empty(text("provider")?),
        model: non_empty(text("model")?),
        base_url: non_empty(text("baseUrl")?),
        api_key_env: text("apiKeyEnv")?,
    };
    let mut warnings = Vec::new();
    let bytes = repo
        .read_worktree_file(CONFIG_FILE, TEAM_CONFIG_LIMIT)
        .map_err(|e| AnnotateError::Config(e.to_string()))?;
    if let Some(bytes) = bytes {
        let team = TeamConfig::parse_bytes(&bytes)
            .and_then(|team| team.annotate())
            .map_err(|e| AnnotateError::Config(e.to_string()))?;
        apply_team(&team.limits, &mut limits)?;
        warnings = team.warnings();
    }
    Ok(Settings {
        limits,
        provider: raw,
        warnings,
    })
}

/// Provider settings as written, before defaults fill the gaps.
#[derive(Debug, Default, Clone)]
pub struct RawProvider {
    pub kind: Option<String>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    /// `Some("")` or `Some("none")`: no key.
    pub api_key_env: Option<String>,
}

impl RawProvider {
    /// The settings, with the provider's defaults where nothing was said.
    pub fn resolve(&self) -> Result<ProviderSettings, AnnotateError> {
        let kind = match &self.kind {
            None => ProviderKind::OpenAiResponses,
            Some(name) => ProviderKind::parse(name).ok_or_else(|| {
                AnnotateError::Config(format!(
                    "unknown provider '{name}': use one of {}",
                    ProviderKind::NAMES.join(", ")
                ))
            })?,
        };
        let mut settings = ProviderSettings::defaults(kind);
        if let Some(model) = &self.model {
            settings.model = model.trim().to_owned();
        }
        settings.base_url = self.base_url.clone().filter(|u| !u.trim().is_empty());
        if let Some(env) = &self.api_key_env {
            let env = env.trim();
            settings.api_key_env = if env.is_empty() || env.eq_ignore_ascii_case("none") {
                None
            } else {
                Some(env.to_owned())
            };
        }
        Ok(settings)
    }

    /// `other`'s values where it has them.
    pub fn overridden_by(mut self, other: &RawProvider) -> RawProvider {
        if other.kind.is_some() {
            self.kind = other.kind.clone();
        }
        if other.model.is_some() {
            self.model = other.model.clone();
        }
        if other.base_url.is_some() {
            self.base_url = other.base_url.clone();
        }
        if other.api_key_env.is_some() {
            self.api_key_env = other.api_key_env.clone();
        }
        self
    }
}

/// The team file's limits (the only thing it may set here).
fn apply_team(a: &TeamAnnotate, limits: &mut AnnotateConfig) -> Result<(), AnnotateError> {
    let source = |key: &str| format!("{CONFIG_FILE} ultragit.annotate.{key}");
    if let Some(v) = a.max_diff_lines {
        limits.max_diff_lines = bounded(&source("max_diff_lines"), v, 1)?;
    }
    if let Some(v) = a.max_agent_turns {
        limits.max_agent_turns = bounded(&source("max_agent_turns"), v, 1)?;
    }
    if let Some(v) = a.max_tokens_per_response {
        limits.max_tokens_per_response = bounded(&source("max_tokens_per_response"), v, 1)?;
    }
    if let Some(v) = a.recent_annotations_limit {
        limits.recent_annotations_limit = bounded(&source("recent_annotations_limit"), v, 0)?;
    }
    if let Some(v) = a.chunk_size {
        limits.chunk_size = bounded(&source("chunk_size"), v, 1)?;
    }
    Ok(())
}

fn bounded(source: &str, value: i64, min: i64) -> Result<u32, AnnotateError> {
    if value < min || value > i64::from(u32::MAX) {
        return Err(AnnotateError::Config(format!(
            "{source} must be a whole number of at least {min}, not {value}"
        )));
    }
    Ok(value as u32)
}
