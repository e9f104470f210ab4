//! The generation commands of `git-agent` (`commit-msg`, `commit`, `pr-message`,
//! `release-note`): flags, provider resolution, and the stdout/stderr contracts
//! of spec 004.
//!
//! - `commit-msg`: stdout is the message and nothing else; the trace goes to
//!   `.git-agent/sessions/<timestamp>-commit-msg/` (its path on stderr with
//!   `--debug`).
//! - `commit`: stdout streams the console trace, then git's own commit summary;
//!   no session directory. If git refuses the commit (a hook, signing), the exit
//!   status is 1 and stderr carries git's reason and the generated message, so
//!   nothing is lost.
//!
//! Model text is untrusted on the way to a terminal too. Every line on stderr
//! goes through the runner (`frontend::Context`), which escapes control
//! characters (escape sequences, `CR`, C1 controls and bidi overrides show as
//! visible escapes) and masks the provider's key; a failure shows at most
//! [`SHOWN_ANSWER_MAX`] bytes of the model's last answer (head and tail) and
//! names the session trace that keeps more of it. Messages on stdout are
//! shaped by `git-agent-core`, which removes control characters from them.
//!
//! Each command is one library call (`git_agent_core::commit_msg::run`,
//! `commit_msg::commit`, `pr_message::run`, `release_note::run`), handed the
//! provider, the flags as `git_evidence::Settings`, stdout as a
//! `git_evidence::Console` where the trace streams there, and the runner's
//! stderr lines as `git_evidence::Notices`; what comes back is printed here
//! and its errors mapped.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

use agent::clip_middle;
use clap::{Args, ValueEnum};
use frontend::openai::{self, AuthSource, Flags};
use frontend::{CommandError, Context, ErrorKind, Outcome};
use git_agent_core::commit_msg::{self, Committed};
use git_agent_core::pr_message;
use git_evidence::{Console, Error, Failed, Host, Notices, Settings};
use guidance::FamilyChoice;
use llm::{LlmError, ReasoningEffort};
use release_note::{self as release, RangeSpec};

/// The most of the model's last answer a failure prints (head and tail): 4 KiB.
pub const SHOWN_ANSWER_MAX: usize = 4 * 1024;

/// The flags every generation command shares.
#[derive(Debug, Clone, Args)]
pub struct Shared {
    #[arg(long, value_name = "MODEL", help = format!(
        "The model [default: with ChatGPT sign-in, model in Codex's config.toml, else OPENAI_MODEL, else {}; with a key, OPENAI_MODEL, else {}]",
        llm::defaults::CHATGPT_MODEL,
        llm::defaults::OPENAI_MODEL
    ))]
    pub model: Option<String>,
    /// Ask for priority processing (service_tier=priority)
    #[arg(long)]
    pub fast: bool,
    /// Reasoning effort low
    #[arg(long, group = "effort")]
    pub low: bool,
    /// Reasoning effort medium
    #[arg(long, group = "effort")]
    pub medium: bool,
    /// Reasoning effort high
    #[arg(long, group = "effort")]
    pub high: bool,
    /// Reasoning effort xhigh
    #[arg(long, group = "effort")]
    pub xhigh: bool,
    /// The API's base URL, e.g. http://127.0.0.1:8080/v1 for a local server
    /// [default: ChatGPT's with Codex sign-in, else OPENAI_BASE_URL, else OpenAI's]
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Which API to speak: the Responses API, or Chat Completions (Ollama, llama.cpp, vLLM, LM Studio)
    #[arg(long, value_enum, default_value_t = Api::Responses)]
    pub api: Api,
    /// The most output tokens one model answer may take, reasoning included (256-1000000) [default: by reasoning effort: 8192; --low 4096, --medium 8192, --high 16384, --xhigh 32768]. An answer cut off by it is asked again once with twice the cap. Not sent to ChatGPT's backend, which refuses a cap
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(256..=1_000_000))]
    pub max_output_tokens: Option<u32>,
    /// The whole run's time limit: seconds, or a number with s, m or h
    #[arg(long, value_name = "DURATION", default_value = "300s", value_parser = parse_duration)]
    pub timeout: Duration,
    /// Model calls the tool loop may make before it must answer (1-50)
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=50))]
    pub max_steps: u32,
    /// Which project guidance family to use: auto (AGENTS.md, else CLAUDE.md), agents, claude or none
    #[arg(long, value_name = "FAMILY", default_value = "auto", value_parser = parse_family)]
    pub guidance_family: FamilyChoice,
    /// A hint for the model, lower in priority than the task, the guidance and the evidence
    #[arg(long, value_name = "TEXT")]
    pub append_prompt: Option<String>,
    /// Print the trace session directory, run summaries and full error chains on stderr
    #[arg(long)]
    pub debug: bool,
}

impl Shared {
    /// The reasoning effort the flags ask for (`None`: the model's default).
    fn effort(&self) -> Option<ReasoningEffort> {
        [
            (self.low, ReasoningEffort::Low),
            (self.medium, ReasoningEffort::Medium),
            (self.high, ReasoningEffort::High),
            (self.xhigh, ReasoningEffort::Xhigh),
        ]
        .into_iter()
        .find_map(|(given, effort)| given.then_some(effort))
    }

    /// The flags a task's options are built from (`git_evidence::Options`).
    fn settings(&self) -> Settings {
        Settings {
            effort: self.effort(),
            max_output_tokens: self.max_output_tokens,
            timeout: self.timeout,
            max_steps: self.max_steps,
            guidance_family: self.guidance_family,
            append_prompt: self.append_prompt.clone(),
        }
    }
}

/// The API `--api` selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Api {
    /// OpenAI's Responses API (default; ChatGPT sign-in works only with this)
    Responses,
    /// Chat Completions
    Chat,
}

fn parse_family(text: &str) -> Result<FamilyChoice, String> {
    text.parse::<FamilyChoice>().map_err(|e| e.to_string())
}

/// `300`, `300s`, `5m`, `1h` (at least 1 s, at most 24 h).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let (number, unit) = match t.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => t.split_at(i),
        None => (t, "s"),
    };
    let n: u64 = number
        .parse()
        .map_err(|_| format!("'{text}' is not a duration: use seconds like 300, or 90s, 5m, 1h"))?;
    let seconds = match unit {
        "s" | "sec" => n,
        "m" | "min" => n.saturating_mul(60),
        "h" => n.saturating_mul(3600),
        _ => {
            return Err(format!(
                "'{text}' has an unknown unit '{unit}': use s, m or h"
            ));
        }
    };
    if !(1..=86_400).contains(&seconds) {
        return Err(format!("'{text}' is out of range: use 1s to 24h"));
    }
    Ok(Duration::from_secs(seconds))
}

/// The largest Codex file (`auth.json`, `config.toml`) read.
const AUTH_FILE_LIMIT: u64 = 1024 * 1024;

/// A file of Codex's (`auth.json`, `config.toml`) as text: `None` when it does
/// not exist. The user's own file, but still read as a bounded regular file: a
/// FIFO or a device there must not hang or flood us.
fn read_codex_file(path: Option<&Path>) -> Result<Option<String>, CommandError> {
    let Some(path) = path else {
        return Ok(None);
    };
    match safe_io::fs::read_regular(path, AUTH_FILE_LIMIT) {
        Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
        Err(err) if err.is_not_found() => Ok(None),
        Err(err) => Err(err.into()),
    }
}

/// A file that was found: its path and text.
fn found<'a>(path: &'a Option<PathBuf>, text: &'a Option<String>) -> Option<(&'a Path, &'a str)> {
    match (path, text) {
        (Some(path), Some(text)) => Some((path.as_path(), text.as_str())),
        _ => None,
    }
}

/// Builds the provider from the flags, Codex's `auth.json` and `config.toml`,
/// and the environment.
fn provider(
    shared: &Shared,
    timeout: Duration,
    ctx: &Context,
) -> Result<
    (
        std::sync::Arc<dyn llm::LlmProvider>,
        llm::Redactor,
        AuthSource,
    ),
    CommandError,
> {
    let lookup = |name: &str| std::env::var(name).ok();
    let auth_path = openai::codex_auth_path(lookup);
    let auth_text = read_codex_file(auth_path.as_deref())?;
    let config_path = openai::codex_config_path(lookup);
    let config_text = read_codex_file(config_path.as_deref())?;
    let resolved = openai::resolve(
        Flags {
            model: shared.model.as_deref(),
            base_url: shared.base_url.as_deref(),
            chat: shared.api == Api::Chat,
        },
        openai::CodexFiles {
            auth: found(&auth_path, &auth_text),
            config: found(&config_path, &config_text),
        },
        lookup,
    )?;
    let mut config = resolved.config;
    config.priority = shared.fast;
    config.reasoning_effort = shared.effort();
    config.http.overall_timeout = timeout;
    config.http.request_timeout = timeout.min(config.http.request_timeout);
    let (provider, redactor) = frontend::provider::connect(config, ctx)?;
    Ok((provider, redactor, resolved.source))
}

/// A hint for provider errors that usually mean expired ChatGPT sign-in or a
/// wrong key.
fn auth_hint(err: &Error, source: &AuthSource) -> Option<&'static str> {
    let unauthorized = matches!(
        err,
        Error::Agent(agent::AgentError::Provider(LlmError::Api {
            status: 401 | 403,
            ..
        }))
    );
    match (unauthorized, source) {
        (true, AuthSource::ChatGpt(_)) => {
            Some("the ChatGPT sign-in may have expired; run `codex` once to refresh it")
        }
        (true, AuthSource::ApiKey) => Some("check OPENAI_API_KEY"),
        _ => None,
    }
}

/// A failed generation: an invalid answer is shown below the message, cut to
/// [`SHOWN_ANSWER_MAX`], with a pointer to its trace (the session directory,
/// when there is one) for more; a refused key gets a hint.
fn failure(failed: Failed, source: &AuthSource) -> CommandError {
    let Failed { error: err, trace } = failed;
    let hint = auth_hint(&err, source);
    let mut answer = String::new();
    if let Error::Invalid { message, .. } = &err {
        answer.push_str("\nthe last message the model gave:\n");
        answer.push_str(&clip_middle(message, SHOWN_ANSWER_MAX));
        if message.len() > SHOWN_ANSWER_MAX
            && let Some(dir) = &trace
        {
            answer.push_str(&format!(
                "\nthe answer was {} bytes; the session trace keeps more of it: {}",
                message.len(),
                dir.join("events.ndjson").display()
            ));
        }
    }
    let err = CommandError::from(err).map_message(|message| message + &answer);
    match hint {
        Some(hint) => err.with_hint(hint),
        None => err,
    }
}

fn summary(generated: &commit_msg::Generated) -> String {
    format!(
        "steps={} tool_calls={} repaired={} finalized={} input_tokens={} output_tokens={}",
        generated.steps,
        generated.tool_calls,
        generated.repaired,
        generated.finalized,
        generated
            .usage
            .input_tokens
            .map_or("?".to_owned(), |n| n.to_string()),
        generated
            .usage
            .output_tokens
            .map_or("?".to_owned(), |n| n.to_string()),
    )
}

/// The current directory, where every command starts.
fn current_dir() -> Result<std::path::PathBuf, CommandError> {
    std::env::current_dir().map_err(|err| {
        CommandError::from_error(ErrorKind::Internal, err).context("the current directory")
    })
}

/// The runner's stderr lines, as the libraries' notices.
struct Lines<'a>(&'a Context);

impl Notices for Lines<'_> {
    fn warn(&mut self, line: &str) {
        self.0.warn(line);
    }

    fn debug(&mut self, line: &str) {
        self.0.debug_line(line);
    }
}

/// stdout, for a command that streams its trace there.
fn console() -> Console {
    let stdout = std::io::stdout();
    let color = stdout.is_terminal();
    Console::new(stdout, color)
}

/// `git-agent commit-msg [--amend]`.
pub fn commit_msg(shared: &Shared, amend: bool, ctx: &Context) -> Result<Outcome, CommandError> {
    let (provider, redactor, source) = provider(shared, shared.timeout, ctx)?;
    let cwd = current_dir()?;
    let host = Host {
        provider: provider.as_ref(),
        redactor,
        notices: &mut Lines(ctx),
    };
    let generated = ctx
        .block_on(commit_msg::run(&cwd, amend, &shared.settings(), host))?
        .map_err(|failed| failure(failed, &source))?;
    ctx.debug_line(summary(&generated));
    Ok(Outcome::text(generated.message + "\n"))
}

/// `git-agent pr-message`.
pub fn pr_message(shared: &Shared, ctx: &Context) -> Result<Outcome, CommandError> {
    let (provider, redactor, source) = provider(shared, shared.timeout, ctx)?;
    let cwd = current_dir()?;
    let host = Host {
        provider: provider.as_ref(),
        redactor,
        notices: &mut Lines(ctx),
    };
    let generated = ctx
        .block_on(pr_message::run(&cwd, &shared.settings(), host))?
        .map_err(|failed| failure(failed, &source))?;
    ctx.debug_line(summary(&generated));
    Ok(Outcome::text(generated.message + "\n"))
}

/// What `release-note` covers, from its positional arguments.
pub fn range_spec(words: &[String]) -> Result<RangeSpec, String> {
    match words {
        [word] => RangeSpec::bump(word)
            .map(RangeSpec::Bump)
            .ok_or_else(|| {
                format!(
                    "'{word}' is not a range: give BASE RELEASE (e.g. v1.2.0 HEAD) or one of patch, minor, major"
                )
            }),
        [base, release] => Ok(RangeSpec::Explicit {
            base: base.clone(),
            release: release.clone(),
        }),
        _ => Err("give BASE RELEASE, or one of patch, minor, major".to_owned()),
    }
}

fn note_summary(note: &release::Note) -> String {
    format!(
        "steps={} tool_calls={} repaired={} finalized={}",
        note.steps, note.tool_calls, note.repaired, note.finalized
    )
}

/// `git-agent release-note [--out FILE] BASE RELEASE | patch|minor|major`.
/// `--out` is checked before the provider is resolved.
pub fn release_note(
    shared: &Shared,
    out: Option<&Path>,
    spec: &RangeSpec,
    ctx: &Context,
) -> Result<Outcome, CommandError> {
    let cwd = current_dir()?;
    if let Some(path) = out {
        release::preflight_output(&cwd, path)?;
    }
    let (provider, redactor, source) =
        provider(shared, shared.timeout.max(release::MIN_TIMEOUT), ctx)?;
    let host = Host {
        provider: provider.as_ref(),
        redactor,
        notices: &mut Lines(ctx),
    };
    let out_file = out.map(|path| release::OutFile {
        path,
        console: console(),
    });
    let released = ctx
        .block_on(release::run(&cwd, spec, out_file, &shared.settings(), host))?
        .map_err(|failed| failure(failed, &source))?;
    let note = released.note;
    ctx.debug_line(note_summary(&note));
    if let Some(err) = released.unwritten {
        return Err(CommandError::from(err).map_message(|message| {
            format!("{message}; the release note was:\n\n{}", note.markdown)
        }));
    }
    Ok(match out {
        Some(_) => Outcome::nothing(),
        None => Outcome::text(note.markdown),
    })
}

/// `git-agent commit [--amend]`.
pub fn commit(shared: &Shared, amend: bool, ctx: &Context) -> Result<Outcome, CommandError> {
    let (provider, redactor, source) = provider(shared, shared.timeout, ctx)?;
    let cwd = current_dir()?;
    let host = Host {
        provider: provider.as_ref(),
        redactor,
        notices: &mut Lines(ctx),
    };
    let commit = ctx
        .block_on(commit_msg::commit(
            &cwd,
            amend,
            &shared.settings(),
            host,
            console(),
        ))?
        .map_err(|failed| failure(failed, &source))?;
    ctx.debug_line(summary(&commit.generated));
    match commit.committed {
        Committed::Created(run) => {
            // git's own words and the user's hooks', passed through as they are.
            eprint!("{}", run.stderr);
            Ok(Outcome::text(run.stdout))
        }
        Committed::Refused { run, saved } => {
            eprint!("{}", run.stderr);
            let refused = CommandError::new(ErrorKind::Git, run.status);
            Err(commit_failure(refused, &commit.message, amend, saved))
        }
        Committed::NotRun { error, saved } => {
            Err(commit_failure(error.into(), &commit.message, amend, saved))
        }
    }
}

/// `reason` (why git did not commit) as the failure of `git-agent commit`: the
/// generated message is printed, and was `saved` (`.git-agent/COMMIT_MSG`)
/// when it could be, so nothing is lost.
fn commit_failure(
    reason: CommandError,
    message: &str,
    amend: bool,
    saved: Option<PathBuf>,
) -> CommandError {
    let how = if amend {
        "git commit --amend -F"
    } else {
        "git commit -F"
    };
    let saved_note = match &saved {
        Some(path) => format!(
            "\nthe message is saved in {}; commit it yourself with `{how} {}`",
            path.display(),
            path.display()
        ),
        None => format!("\ncommit it yourself with `{how} -` and the message above"),
    };
    reason.map_message(|reason| {
        format!("git commit failed ({reason}); the generated message was:\n\n{message}{saved_note}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("300").unwrap(), Duration::from_secs(300));
        assert_eq!(parse_duration("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(parse_duration("1h").unwrap(), Duration::from_secs(3600));
        assert!(parse_duration("0").is_err());
        assert!(parse_duration("5d").unwrap_err().contains("unknown unit"));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("25h").is_err());
    }
}
