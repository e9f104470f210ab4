//! Configuration of the writing agent (spec 000 "Configuration") and of the model
//! it talks to: the table of `ultragit annotate`'s keys and their resolution.
//!
//! | key | flag | git config | `.ultragit-config.toml` | default |
//! |---|---|---|---|---|
//! | limits | — | `ultragit.maxDiffLines`, `maxAgentTurns`, `maxTokensPerResponse`, `recentAnnotationsLimit`, `chunkSize`, `maxChunks`, `maxCalls` | `[ultragit.annotate]` `max_diff_lines`, … | [`AnnotateConfig::default`] |
//! | context window | — | `ultragit.contextWindow` | `context_window` | by model family ([`default_context_window`]) |
//! | large commits | — | `ultragit.largeCommits` (`chunk`, `skip`) | `large_commits` | `chunk` (spec 000 AC7: handled by chunking) |
//! | chunks per commit | — | `ultragit.maxChunks` | `max_chunks` | every chunk |
//! | docs-only paths | — | `ultragit.docsPaths` (rules separated by commas or spaces; empty: none) | `docs_paths` (a list) | [`DEFAULT_DOCS_PATHS`] |
//! | tool use | — | `ultragit.toolUse` (`auto`, `on`, `off`) | `tool_use` | `auto` |
//! | calls per commit | — (`ultragit annotate --max-calls` overrides the resolved value) | `ultragit.maxCalls` | `max_calls` | no cap beyond `maxAgentTurns` per run |
//! | provider | `--provider` | `ultragit.provider` | ignored | `openai-responses` |
//! | model | `--model` | `ultragit.model` | ignored | the provider's ([`llm::defaults`]) |
//! | base URL | `--base-url` | `ultragit.baseUrl` | ignored | the API's own |
//! | key variable | `--api-key-env` | `ultragit.apiKeyEnv` | ignored | the provider's |
//! | backfill retry budget | — (`ultragit backfill --retry-budget` overrides the resolved value) | `ultragit.backfill.retryBudget` | `backfill_retry_budget`, only 30 s to 1 h | 5 min ([`BackfillConfig`]) |
//! | backfill request timeout | — (`ultragit backfill --request-timeout` overrides the resolved value) | `ultragit.backfill.requestTimeout` | `backfill_request_timeout`, only 10 s to 30 min | 180 s, the provider's |
//!
//! The two backfill keys are durations: `90`, `90s`, `5m`, `5min`, `1h` (a
//! number alone is seconds; an integer in the team file too), between 1 s and
//! 24 h for the budget and 1 s and 1 h for the timeout. The team file may set
//! them only within the narrower bounds shown: a value outside is brought to
//! the nearest bound, with a warning, so a committed file can neither make a
//! backfill give up at the first 429 nor keep it waiting for a day.
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

use std::time::Duration;

use gitctx::Repo;
use layered_config::{
    ConfigError, Key, Kind, Layer, Resolved, Source, Stack, Untrusted, Value, parse,
};
use llm::ProviderKind;
use ultragit_schema::team_config::{ANNOTATE_SECTION, TEAM_CONFIG_LIMIT};

use crate::error::AnnotateError;

/// The shared configuration file.
pub const CONFIG_FILE: &str = ultragit_schema::team_config::TEAM_CONFIG_FILE;

/// Limits of the writing agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnnotateConfig {
    /// Past this many changed lines the commit is large: with `large_commits
    /// = chunk` (the default) it is annotated in chunks, and `get_diff`
    /// answers with a per-file summary; with `skip` no model is called and a
    /// note records the skip.
    pub max_diff_lines: u32,
    /// Model calls per agent run (one call is one turn).
    pub max_agent_turns: u32,
    /// Output tokens per model call.
    pub max_tokens_per_response: u32,
    /// Recent annotations loaded per touched file.
    pub recent_annotations_limit: u32,
    /// Files per chunk when a commit is annotated in chunks.
    pub chunk_size: u32,
    /// The model's context window in tokens; `None`: the model family's
    /// ([`default_context_window`]). Every request stays within it.
    pub context_window: Option<u32>,
    /// What happens to a commit with more than `max_diff_lines` changed lines.
    pub large_commits: LargeCommits,
    /// At most this many chunks of a commit (the largest files first; the
    /// rest are listed in a warning); `None` (the default): every chunk.
    pub max_chunks: Option<u32>,
    /// Whether the model is offered tools or asked for one structured answer.
    pub tool_use: ToolUse,
    /// Model calls for one commit in all (chunks and passes included): a
    /// safety cap above `max_agent_turns`; `None` (the default): no cap but
    /// `max_agent_turns` for each run (one per chunk, and the cross-chunk
    /// pass).
    pub max_calls: Option<u32>,
    /// Path rules of documentation: a commit that touches only files matching
    /// them is trivial (no model call). `*` matches within a path component,
    /// `**` across them; a rule without `/` matches the file name.
    pub docs_paths: Vec<String>,
}

/// The documentation a commit may touch alone and still be trivial:
/// release notes and change logs by name and place, and prose by extension
/// (not `.txt`, which is as often a build or dependency file:
/// `CMakeLists.txt`, `requirements.txt`). Code, build files and configuration
/// in documentation folders (a `Documentation/Makefile`) are not matched.
pub const DEFAULT_DOCS_PATHS: &[&str] = &[
    "*.md",
    "*.markdown",
    "*.rst",
    "*.adoc",
    "*.asciidoc",
    "**/RelNotes/*",
    "**/release-notes/*",
    "**/changelog.d/*",
    "**/changes/*.rst",
    "CHANGELOG*",
    "CHANGES*",
    "NEWS*",
    "HISTORY*",
    "RELEASE-NOTES*",
    "RELEASE_NOTES*",
    "AUTHORS*",
    "CONTRIBUTORS*",
    ".mailmap",
];

impl Default for AnnotateConfig {
    fn default() -> Self {
        AnnotateConfig {
            max_diff_lines: 2000,
            max_agent_turns: 20,
            max_tokens_per_response: 4096,
            recent_annotations_limit: 5,
            chunk_size: 5,
            context_window: None,
            large_commits: LargeCommits::Chunk,
            max_chunks: None,
            tool_use: ToolUse::Auto,
            max_calls: None,
            docs_paths: DEFAULT_DOCS_PATHS.iter().map(|p| (*p).to_owned()).collect(),
        }
    }
}

/// `ultragit.largeCommits`: what a commit past `maxDiffLines` gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LargeCommits {
    /// Annotated in chunks of `chunkSize` files (spec 000 AC7: large commits
    /// "are handled via chunking without exceeding the context window").
    #[default]
    Chunk,
    /// No model call: a note that records the commit as skipped (to save
    /// tokens on histories full of generated commits).
    Skip,
}

/// `ultragit.toolUse`: how the model is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolUse {
    /// Tools, unless the provider answers that the model does not support
    /// them: then one structured prompt.
    #[default]
    Auto,
    /// Tools, always.
    On,
    /// One structured prompt with the whole context (models without tools).
    Off,
}

/// The context window of `model`'s family: 128k tokens for the hosted
/// families (GPT-4.x, GPT-5, the o-series, Claude, Gemini), 8,192 for anything
/// else (local models: set `ultragit.contextWindow`).
pub(crate) fn default_context_window(model: &str) -> u32 {
    let model = model.to_ascii_lowercase();
    let model = model.rsplit('/').next().unwrap_or(&model);
    const HOSTED: &[&str] = &[
        "gpt-4o",
        "gpt-4.1",
        "gpt-4-turbo",
        "gpt-4.5",
        "gpt-5",
        "o1",
        "o3",
        "o4",
        "claude",
        "gemini",
    ];
    if HOSTED.iter().any(|family| model.starts_with(family)) {
        128_000
    } else {
        8_192
    }
}

impl AnnotateConfig {
    /// The per-commit cap on model calls (`u32::MAX` when there is none).
    pub(crate) fn call_cap(&self) -> u32 {
        self.max_calls.unwrap_or(u32::MAX)
    }

    /// Whether `path` is documentation by [`AnnotateConfig::docs_paths`].
    pub fn is_docs(&self, path: &str) -> bool {
        is_docs(&self.docs_paths, path)
    }

    /// The context window for `model`: the configured one, or the family's.
    pub(crate) fn window_for(&self, model: &str) -> u32 {
        self.context_window
            .unwrap_or_else(|| default_context_window(model))
    }
}

/// Commits touching more files than this are annotated in chunks.
pub(crate) const CHUNK_FILE_THRESHOLD: usize = 10;
/// A chunk stays under this many changed lines (one file larger than that is a
/// chunk of its own).
pub(crate) const CHUNK_LINE_BUDGET: u32 = 1500;

const MAX_DIFF_LINES: Key<u32> = Key::whole::<1>("max_diff_lines", "ultragit.maxDiffLines");
const MAX_AGENT_TURNS: Key<u32> = Key::whole::<1>("max_agent_turns", "ultragit.maxAgentTurns");
const MAX_TOKENS_PER_RESPONSE: Key<u32> =
    Key::whole::<1>("max_tokens_per_response", "ultragit.maxTokensPerResponse");
const RECENT_ANNOTATIONS_LIMIT: Key<u32> = Key::whole::<0>(
    "recent_annotations_limit",
    "ultragit.recentAnnotationsLimit",
);
const CHUNK_SIZE: Key<u32> = Key::whole::<1>("chunk_size", "ultragit.chunkSize");
const MAX_CHUNKS: Key<Option<u32>> = Key {
    git: Some("ultragit.maxChunks"),
    kind: Kind::Int,
    ..Key::new("max_chunks", some_whole)
};
const MAX_CALLS: Key<Option<u32>> = Key {
    git: Some("ultragit.maxCalls"),
    kind: Kind::Int,
    ..Key::new("max_calls", some_whole)
};
const DOCS_PATHS: Key<Vec<String>> = Key {
    git: Some("ultragit.docsPaths"),
    ..Key::new("docs_paths", docs_paths)
};

fn some_whole(value: &Value) -> Result<Option<u32>, String> {
    parse::whole::<u32, 1>(value).map(Some)
}

/// The most rules `docsPaths` may hold, and the longest rule.
const DOCS_RULES_MAX: usize = 200;
const DOCS_RULE_LEN_MAX: usize = 200;

/// A list (the team file), or one text of rules separated by commas or
/// spaces (git config); empty: no documentation rules at all.
fn docs_paths(value: &Value) -> Result<Vec<String>, String> {
    let rules = match value {
        Value::Text(text) => text
            .split(|c: char| c == ',' || c.is_whitespace())
            .map(str::to_owned)
            .collect(),
        other => parse::text_list(other)?,
    };
    if rules.len() > DOCS_RULES_MAX {
        return Err(format!("expected at most {DOCS_RULES_MAX} rules"));
    }
    if let Some(long) = rules.iter().find(|r| r.len() > DOCS_RULE_LEN_MAX) {
        return Err(format!(
            "the rule '{}…' is longer than {DOCS_RULE_LEN_MAX} bytes",
            long.chars().take(40).collect::<String>()
        ));
    }
    Ok(rules
        .into_iter()
        .map(|r| r.trim().trim_start_matches("./").to_owned())
        .filter(|r| !r.is_empty())
        .collect())
}

/// Whether `path` matches one of the documentation path `rules`.
pub(crate) fn is_docs(rules: &[String], path: &str) -> bool {
    rules.iter().any(|rule| path_rule_matches(rule, path))
}

/// Whether the path rule `rule` matches `path`: `*` matches within one path
/// component, `**` any number of components; a rule without `/` is matched
/// against the file name (case-insensitively for the name rules such as
/// `CHANGELOG*`, as release files are written either way).
pub(crate) fn path_rule_matches(rule: &str, path: &str) -> bool {
    if !rule.contains('/') {
        let name = path.rsplit('/').next().unwrap_or(path);
        return glob(&rule.to_ascii_lowercase(), &name.to_ascii_lowercase());
    }
    let rule: Vec<&str> = rule.split('/').collect();
    let path: Vec<&str> = path.split('/').collect();
    components(&rule, &path)
}

fn components(rule: &[&str], path: &[&str]) -> bool {
    match rule.split_first() {
        None => path.is_empty(),
        Some((&"**", rest)) => (0..=path.len()).any(|skip| components(rest, &path[skip..])),
        Some((first, rest)) => match path.split_first() {
            Some((name, tail)) => glob(first, name) && components(rest, tail),
            None => false,
        },
    }
}

/// `*` (any run of characters) and `?` (one) within one component.
fn glob(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}
const CONTEXT_WINDOW: Key<Option<u32>> = Key {
    git: Some("ultragit.contextWindow"),
    kind: Kind::Int,
    ..Key::new("context_window", context_window)
};
const LARGE_COMMITS: Key<LargeCommits> = Key {
    git: Some("ultragit.largeCommits"),
    ..Key::new("large_commits", large_commits)
};
const TOOL_USE: Key<ToolUse> = Key {
    git: Some("ultragit.toolUse"),
    ..Key::new("tool_use", tool_use)
};

/// The smallest context window that holds the prompt, tools and one turn.
pub(crate) const MIN_CONTEXT_WINDOW: u32 = 4_096;

fn context_window(value: &Value) -> Result<Option<u32>, String> {
    let tokens: u32 = parse::whole::<u32, 1>(value)?;
    if tokens < MIN_CONTEXT_WINDOW {
        return Err(format!(
            "expected at least {MIN_CONTEXT_WINDOW} tokens (the prompt and tools alone take about 2,500)"
        ));
    }
    Ok(Some(tokens))
}

fn large_commits(value: &Value) -> Result<LargeCommits, String> {
    match parse::text(value)?.to_ascii_lowercase().as_str() {
        "skip" => Ok(LargeCommits::Skip),
        "chunk" => Ok(LargeCommits::Chunk),
        _ => Err("expected skip or chunk".to_owned()),
    }
}

fn tool_use(value: &Value) -> Result<ToolUse, String> {
    match parse::text(value)?.to_ascii_lowercase().as_str() {
        "auto" => Ok(ToolUse::Auto),
        "on" | "true" | "yes" => Ok(ToolUse::On),
        "off" | "false" | "no" => Ok(ToolUse::Off),
        _ => Err("expected auto, on or off".to_owned()),
    }
}

/// How `ultragit backfill` rides out a provider's bad spells (module docs,
/// the two backfill keys; [`crate::backfill::http_options`] applies them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BackfillConfig {
    /// How long each model call may go on retrying 429s, 5xx answers,
    /// timeouts and dropped connections, waits and pauses included
    /// ([`llm::RetryPolicy::retry_budget`]).
    pub retry_budget: Duration,
    /// One attempt of a model call: a provider that has not answered by then
    /// is cut off, and the call retried within the budget.
    pub request_timeout: Duration,
}

impl Default for BackfillConfig {
    fn default() -> Self {
        BackfillConfig {
            retry_budget: Duration::from_secs(5 * 60),
            request_timeout: llm::HttpOptions::default().request_timeout,
        }
    }
}

/// The bounds of a duration key: from any source, and from the team file.
struct Bounds {
    any: (Duration, Duration),
    team: (Duration, Duration),
    flag: &'static str,
}

const RETRY_BUDGET_BOUNDS: Bounds = Bounds {
    any: (Duration::from_secs(1), Duration::from_secs(24 * 3600)),
    team: (Duration::from_secs(30), Duration::from_secs(3600)),
    flag: "--retry-budget",
};
const REQUEST_TIMEOUT_BOUNDS: Bounds = Bounds {
    any: (Duration::from_secs(1), Duration::from_secs(3600)),
    team: (Duration::from_secs(10), Duration::from_secs(30 * 60)),
    flag: "--request-timeout",
};

const BACKFILL_RETRY_BUDGET: Key<Duration> = Key {
    git: Some("ultragit.backfill.retryBudget"),
    ..Key::new("backfill_retry_budget", |value| {
        duration_value(value, &RETRY_BUDGET_BOUNDS)
    })
};
const BACKFILL_REQUEST_TIMEOUT: Key<Duration> = Key {
    git: Some("ultragit.backfill.requestTimeout"),
    ..Key::new("backfill_request_timeout", |value| {
        duration_value(value, &REQUEST_TIMEOUT_BOUNDS)
    })
};

/// `ultragit backfill --retry-budget`: a duration (module docs) within the
/// bounds of `ultragit.backfill.retryBudget`.
pub fn parse_retry_budget(text: &str) -> Result<Duration, String> {
    duration_flag(text, &RETRY_BUDGET_BOUNDS)
}

/// `ultragit backfill --request-timeout`: a duration (module docs) within the
/// bounds of `ultragit.backfill.requestTimeout`.
pub fn parse_request_timeout(text: &str) -> Result<Duration, String> {
    duration_flag(text, &REQUEST_TIMEOUT_BOUNDS)
}

fn duration_flag(text: &str, bounds: &Bounds) -> Result<Duration, String> {
    let duration = duration_text(text)
        .ok_or_else(|| format!("expected a duration such as 90s, 5m or 1h, not '{text}'"))?;
    within(duration, bounds.any).map_err(|range| format!("expected {range}"))
}

fn duration_value(value: &Value, bounds: &Bounds) -> Result<Duration, String> {
    let duration = match value {
        Value::Int(seconds) => u64::try_from(*seconds).ok().map(Duration::from_secs),
        Value::Text(text) => duration_text(text),
        _ => None,
    }
    .ok_or_else(|| format!("must be a duration such as 90s, 5m or 1h, not {value}"))?;
    within(duration, bounds.any).map_err(|range| format!("must be {range}, not {value}"))
}

/// `duration`, or the range it is outside of ("between 1 s and 24 h").
fn within(duration: Duration, (low, high): (Duration, Duration)) -> Result<Duration, String> {
    if (low..=high).contains(&duration) {
        Ok(duration)
    } else {
        Err(format!(
            "between {} and {}",
            duration_words(low),
            duration_words(high)
        ))
    }
}

/// `90`, `90s`, `90 sec`, `5m`, `5min`, `1h` (whole numbers; no unit:
/// seconds).
fn duration_text(text: &str) -> Option<Duration> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number.parse().ok()?;
    let scale = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "s" | "sec" | "secs" | "second" | "seconds" => 1,
        "m" | "min" | "mins" | "minute" | "minutes" => 60,
        "h" | "hour" | "hours" => 3600,
        _ => return None,
    };
    number.checked_mul(scale).map(Duration::from_secs)
}

/// A whole-second duration as people write it: `30 s`, `5 min`, `1 h`.
fn duration_words(duration: Duration) -> String {
    let secs = duration.as_secs();
    if secs >= 3600 && secs.is_multiple_of(3600) {
        format!("{} h", secs / 3600)
    } else if secs >= 60 && secs.is_multiple_of(60) {
        format!("{} min", secs / 60)
    } else {
        format!("{secs} s")
    }
}

/// A value the team file set outside its narrower bounds is brought to the
/// nearest bound; `warnings` says so.
fn team_bounded(
    resolved: Resolved<Duration>,
    key: &Key<Duration>,
    bounds: &Bounds,
    warnings: &mut Vec<String>,
) -> Duration {
    let Source::RepoFile { file, key: name } = &resolved.source else {
        return resolved.value;
    };
    let (low, high) = bounds.team;
    let value = resolved.value.clamp(low, high);
    if value != resolved.value {
        warnings.push(format!(
            "using {} for {name} in {file} rather than {}: a file in the repository may set it \
             only between {} and {}; for another value use `{}` (or `git config {}` without the file's setting)",
            duration_words(value),
            duration_words(resolved.value),
            duration_words(low),
            duration_words(high),
            bounds.flag,
            key.git.unwrap_or(key.name),
        ));
    }
    value
}

const PROVIDER: Key<ProviderKind> = Key {
    flag: Some("--provider"),
    git: Some("ultragit.provider"),
    untrusted: Untrusted::MayNotChoose("which provider is used"),
    blank_is_unset: true,
    ..Key::new("provider", provider_kind)
};
const MODEL: Key<String> = Key {
    flag: Some("--model"),
    git: Some("ultragit.model"),
    untrusted: Untrusted::MayNotChoose("which model is used"),
    blank_is_unset: true,
    ..Key::new("model", parse::text)
};
/// Blank is a value: no URL, the API's own (`--base-url ""` hides git config's).
const BASE_URL: Key<Option<String>> = Key {
    flag: Some("--base-url"),
    git: Some("ultragit.baseUrl"),
    untrusted: Untrusted::MayNotChoose("where requests go"),
    ..Key::new("base_url", parse::optional_text)
};
/// Blank or `none` is a value: no key (a local server).
const API_KEY_ENV: Key<Option<String>> = Key {
    flag: Some("--api-key-env"),
    git: Some("ultragit.apiKeyEnv"),
    untrusted: Untrusted::MayNotChoose("which credential is sent"),
    ..Key::new("api_key_env", key_variable)
};

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

impl ProviderSettings {
    /// `{kind} {model} at {url}`, as `init` and `doctor` show it (the URL is
    /// "the API's default URL" when none is set).
    pub fn describe(&self) -> String {
        format!(
            "{} {} at {}",
            self.kind.as_str(),
            self.model,
            self.base_url.as_deref().unwrap_or("the API's default URL"),
        )
    }
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

/// Where each provider setting came from: a flag, git config, or the default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderSources {
    pub kind: Source,
    pub model: Source,
    pub base_url: Source,
    pub api_key_env: Source,
}

/// The configuration of a repository, resolved: the limits, the provider
/// settings and where they came from, and the warnings about what the team file
/// tried to set and may not.
#[derive(Debug, Clone)]
pub struct Settings {
    pub limits: AnnotateConfig,
    /// `ultragit backfill`'s retry budget and request timeout.
    pub backfill: BackfillConfig,
    pub provider: ProviderSettings,
    pub sources: ProviderSources,
    /// One line per ignored key of the team file (see the module's trust rule).
    pub warnings: Vec<String>,
}

impl Settings {
    /// Resolves the table over `flags`, `.ultragit-config.toml` (read bounded
    /// and without following links; steering keys ignored) and git config.
    pub fn load(repo: &Repo, flags: &ProviderFlags) -> Result<Settings, AnnotateError> {
        let team = repo
            .read_worktree_file(CONFIG_FILE, TEAM_CONFIG_LIMIT)
            .map_err(AnnotateError::ConfigFile)?;
        let git = Layer::git_config(|key| repo.config_get(key), |key| repo.config_get_i64(key));
        resolve(flags, team.as_deref(), git).map_err(AnnotateError::Config)
    }
}

/// The table resolved over `flags`, the team file's bytes (if any) and `git`.
fn resolve(
    flags: &ProviderFlags,
    team: Option<&[u8]>,
    git: Layer<'_>,
) -> Result<Settings, ConfigError> {
    let flags = Layer::flags()
        .flag(&PROVIDER, flags.provider.clone())
        .flag(&MODEL, flags.model.clone())
        .flag(&BASE_URL, flags.base_url.clone())
        .flag(&API_KEY_ENV, flags.api_key_env.clone());
    let mut stack = Stack::new()
        .with(flags)
        .with_repo_file(team, CONFIG_FILE, ANNOTATE_SECTION)?
        .with(git);

    let defaults = AnnotateConfig::default();
    let limits = AnnotateConfig {
        max_diff_lines: stack.value(&MAX_DIFF_LINES, defaults.max_diff_lines)?,
        max_agent_turns: stack.value(&MAX_AGENT_TURNS, defaults.max_agent_turns)?,
        max_tokens_per_response: stack
            .value(&MAX_TOKENS_PER_RESPONSE, defaults.max_tokens_per_response)?,
        recent_annotations_limit: stack
            .value(&RECENT_ANNOTATIONS_LIMIT, defaults.recent_annotations_limit)?,
        chunk_size: stack.value(&CHUNK_SIZE, defaults.chunk_size)?,
        context_window: stack.value(&CONTEXT_WINDOW, defaults.context_window)?,
        large_commits: stack.value(&LARGE_COMMITS, defaults.large_commits)?,
        max_chunks: stack.value(&MAX_CHUNKS, defaults.max_chunks)?,
        tool_use: stack.value(&TOOL_USE, defaults.tool_use)?,
        max_calls: stack.value(&MAX_CALLS, defaults.max_calls)?,
        docs_paths: stack.value(&DOCS_PATHS, defaults.docs_paths.clone())?,
    };
    let mut bounded = Vec::new();
    let backfill_defaults = BackfillConfig::default();
    let backfill = BackfillConfig {
        retry_budget: team_bounded(
            stack.resolve(&BACKFILL_RETRY_BUDGET, backfill_defaults.retry_budget)?,
            &BACKFILL_RETRY_BUDGET,
            &RETRY_BUDGET_BOUNDS,
            &mut bounded,
        ),
        request_timeout: team_bounded(
            stack.resolve(&BACKFILL_REQUEST_TIMEOUT, backfill_defaults.request_timeout)?,
            &BACKFILL_REQUEST_TIMEOUT,
            &REQUEST_TIMEOUT_BOUNDS,
            &mut bounded,
        ),
    };
    let kind = stack.resolve(&PROVIDER, ProviderKind::OpenAiResponses)?;
    let model = stack.resolve(&MODEL, kind.value.default_model().to_owned())?;
    let base_url = stack.resolve(&BASE_URL, None)?;
    let default_key = Some(kind.value.default_key_variable().to_owned());
    let api_key_env = stack.resolve(&API_KEY_ENV, default_key)?;
    let provider = ProviderSettings {
        kind: kind.value,
        model: model.value,
        base_url: base_url.value,
        api_key_env: api_key_env.value,
    };
    let sources = ProviderSources {
        kind: kind.source,
        model: model.source,
        base_url: base_url.source,
        api_key_env: api_key_env.source,
    };
    let mut warnings: Vec<String> = stack.finish()?.iter().map(|i| i.warning()).collect();
    warnings.extend(bounded);
    Ok(Settings {
        limits,
        backfill,
        provider,
        sources,
        warnings,
    })
}

#[cfg(test)]
mod tests;
