//! `git-agent commit-msg` and `git-agent commit` (both with `--amend`): flags,
//! provider resolution, traces, and the stdout/stderr contracts of spec 004.
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

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

use agent::{ConsoleSink, Event, NullSink, SessionSink, TraceSink, clip_middle};
use clap::{Args, ValueEnum};
use frontend::openai::{self, AuthSource, Flags};
use frontend::{CommandError, Context, ErrorKind, Outcome};
use git_agent_core::commit_msg::{self, MessageRequest, Options, Request};
use git_agent_core::pr_message;
use guidance::FamilyChoice;
use llm::{LlmError, ReasoningEffort};
use release_note::{self as release, RangeSpec};
use serde_json::Value;

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

    /// The output cap of one model call: `--max-output-tokens`, else
    /// [`default_output_cap`] for the effort.
    fn output_cap(&self) -> u32 {
        self.max_output_tokens
            .unwrap_or_else(|| default_output_cap(self.effort()))
    }
}

/// The output cap when `--max-output-tokens` is not given. Reasoning tokens
/// count against the cap, so it grows with the effort asked for:
///
/// | effort | cap |
/// |---|---|
/// | `--low` | 4,096 |
/// | none (the model's default, usually medium) | 8,192 |
/// | `--medium` | 8,192 |
/// | `--high` | 16,384 |
/// | `--xhigh` | 32,768 |
pub const fn default_output_cap(effort: Option<ReasoningEffort>) -> u32 {
    match effort {
        Some(ReasoningEffort::Low) => 4096,
        None | Some(ReasoningEffort::Medium) => 8192,
        Some(ReasoningEffort::High) => 16_384,
        Some(ReasoningEffort::Xhigh) => 32_768,
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

fn options(shared: &Shared, command: &str, amend: bool) -> Options {
    let mut options = Options {
        amend,
        command: command.to_owned(),
        ..Options::default()
    };
    options.shared.guidance_family = shared.guidance_family;
    options.shared.operator_hint = shared.append_prompt.clone();
    options.shared.budgets.max_steps = shared.max_steps;
    options.shared.budgets.max_tokens = Some(shared.output_cap());
    options.shared.budgets.overall_timeout = shared.timeout;
    options
}

/// A hint for provider errors that usually mean expired ChatGPT sign-in or a
/// wrong key.
fn auth_hint(err: &git_agent_core::Error, source: &AuthSource) -> Option<&'static str> {
    let unauthorized = matches!(
        err,
        git_agent_core::Error::Agent(agent::AgentError::Provider(LlmError::Api {
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
/// [`SHOWN_ANSWER_MAX`], with a pointer to `trace` (the session directory, when
/// there is one) for more; a refused key gets a hint.
fn failure(err: git_agent_core::Error, trace: Option<&Path>, source: &AuthSource) -> CommandError {
    let hint = auth_hint(&err, source);
    let mut answer = String::new();
    if let git_agent_core::Error::Invalid { message, .. } = &err {
        answer.push_str("\nthe last message the model gave:\n");
        answer.push_str(&clip_middle(message, SHOWN_ANSWER_MAX));
        if message.len() > SHOWN_ANSWER_MAX
            && let Some(dir) = trace
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

fn prepare(shared: &Shared, command: &str, amend: bool) -> Result<Request, CommandError> {
    Ok(commit_msg::prepare(
        &current_dir()?,
        &options(shared, command, amend),
    )?)
}

/// A command's trace: a session directory, or nothing when `.git-agent/` was
/// refused.
struct Session {
    sink: Box<dyn TraceSink>,
    dir: Option<std::path::PathBuf>,
}

impl Session {
    /// Runs `generate` with this session as its trace, then warns of the
    /// trace's problems; a failure names the trace.
    fn run<T>(
        mut self,
        ctx: &Context,
        source: &AuthSource,
        generate: impl AsyncFnOnce(&mut dyn TraceSink) -> Result<T, git_agent_core::Error>,
    ) -> Result<T, CommandError> {
        let result = ctx.block_on(generate(self.sink.as_mut()))?;
        for problem in self.sink.problems() {
            ctx.warn(format!("trace: {problem}"));
        }
        result.map_err(|err| failure(err, self.dir.as_deref(), source))
    }
}

/// Creates the trace session of a generation-only command (its path on stderr
/// with `--debug`). When `.git-agent/` cannot be written safely — git tracks
/// it, or a symbolic link or special file sits where the session goes — the
/// command runs without a trace and says why on stderr: the repository may
/// refuse us a trace, not the message.
fn open_session(
    ctx: &Context,
    root: &Path,
    command: &str,
    metadata: serde_json::Value,
    redactor: llm::Redactor,
) -> Session {
    let session = git_agent_core::session::create_session_dir(root, command, chrono::Utc::now())
        .map_err(|err| err.to_string())
        .and_then(|dir| {
            let path = dir.path().to_path_buf();
            SessionSink::create(dir, metadata, redactor)
                .map(|sink| (sink, path.clone()))
                .map_err(|err| format!("{}: {err}", path.display()))
        });
    match session {
        Ok((sink, path)) => {
            ctx.debug_line(format!("session: {}", path.display()));
            Session {
                sink: Box::new(sink),
                dir: Some(path),
            }
        }
        Err(why) => {
            ctx.warn(format!("no trace is kept: {why}"));
            Session {
                sink: Box::new(NullSink),
                dir: None,
            }
        }
    }
}

/// Generates the message of a prepared commit or squash `request` of `command`
/// in a trace session: the message for stdout (and `--debug` summaries), or the
/// failure.
fn message_outcome<R: MessageRequest>(
    shared: &Shared,
    ctx: &Context,
    command: &str,
    prepare: impl FnOnce() -> Result<(PathBuf, R, Value), CommandError>,
) -> Result<Outcome, CommandError> {
    let (provider, redactor, source) = provider(shared, shared.timeout, ctx)?;
    let (root, request, metadata) = prepare()?;
    let session = open_session(ctx, &root, command, metadata, redactor);
    let generated = session.run(ctx, &source, async |sink| {
        commit_msg::generate(&request, provider.as_ref(), sink).await
    })?;
    ctx.debug_line(summary(&generated));
    Ok(Outcome::text(generated.message + "\n"))
}

/// `git-agent commit-msg [--amend]`.
pub fn commit_msg(shared: &Shared, amend: bool, ctx: &Context) -> Result<Outcome, CommandError> {
    message_outcome(shared, ctx, "commit-msg", || {
        let request = prepare(shared, "commit-msg", amend)?;
        let metadata = commit_msg::session_metadata(&request, "commit-msg");
        Ok((request.root.clone(), request, metadata))
    })
}

/// `git-agent pr-message`.
pub fn pr_message(shared: &Shared, ctx: &Context) -> Result<Outcome, CommandError> {
    message_outcome(shared, ctx, "pr-message", || {
        let request = pr_message::prepare(&current_dir()?, &options(shared, "pr-message", false))?;
        let metadata = pr_message::session_metadata(&request);
        Ok((request.root.clone(), request, metadata))
    })
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

/// The summarized trace on stdout of a command that acts on its result (writes
/// a file, commits), which begins with `started`.
fn console_trace(redactor: llm::Redactor, started: Event) -> ConsoleSink<std::io::Stdout> {
    let stdout = std::io::stdout();
    let color = stdout.is_terminal();
    let mut sink = ConsoleSink::new(stdout, color, redactor).summarized();
    sink.record(&started);
    sink
}

/// `git-agent release-note [--out FILE] BASE RELEASE | patch|minor|major`.
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
    let request = release::prepare(&cwd, spec, &options(shared, "release-note", false).shared)?;
    match out {
        Some(path) => {
            let mut sink = console_trace(
                redactor,
                Event::info("session.started")
                    .with("command", "release-note")
                    .with("commits", request.context.commits.len())
                    .with("out", path.display().to_string()),
            );
            let note = ctx
                .block_on(release::generate(&request, provider.as_ref(), &mut sink))?
                .map_err(|err| failure(err, None, &source))?;
            ctx.debug_line(note_summary(&note));
            release::write_output(&cwd, path, &note.markdown).map_err(|err| {
                CommandError::from(err).map_message(|message| {
                    format!("{message}; the release note was:\n\n{}", note.markdown)
                })
            })?;
            sink.record(
                &Event::info("output.written")
                    .with("path", path.display().to_string())
                    .with("bytes", note.markdown.len()),
            );
            Ok(Outcome::nothing())
        }
        None => {
            let metadata = release::session_metadata(&request);
            let session = open_session(ctx, &request.root, "release-note", metadata, redactor);
            let note = session.run(ctx, &source, async |sink| {
                release::generate(&request, provider.as_ref(), sink).await
            })?;
            ctx.debug_line(note_summary(&note));
            Ok(Outcome::text(note.markdown))
        }
    }
}

/// `git-agent commit [--amend]`.
pub fn commit(shared: &Shared, amend: bool, ctx: &Context) -> Result<Outcome, CommandError> {
    let (provider, redactor, source) = provider(shared, shared.timeout, ctx)?;
    let request = prepare(shared, "commit", amend)?;
    let mut sink = console_trace(
        redactor,
        Event::info("session.started")
            .with("command", "commit")
            .with("mode", request.prepared.mode.as_str())
            .with("paths", request.prepared.changes.paths.len()),
    );
    let generated = ctx
        .block_on(commit_msg::generate(&request, provider.as_ref(), &mut sink))?
        .map_err(|err| failure(err, None, &source))?;
    ctx.debug_line(summary(&generated));
    let message = format!("{}\n", generated.message);
    match git_agent_core::commit(&request.root, &message, amend) {
        Ok(run) if run.success => {
            sink.record(&Event::info("commit.created").with("amend", amend));
            // git's own words and the user's hooks', passed through as they are.
            eprint!("{}", run.stderr);
            Ok(Outcome::text(run.stdout))
        }
        Ok(run) => {
            sink.record(
                &Event::error("commit.failed")
                    .with("status", run.status.as_str())
                    .with("stderr", run.stderr.as_str()),
            );
            eprint!("{}", run.stderr);
            let refused = CommandError::new(ErrorKind::Git, run.status);
            Err(commit_failure(refused, &message, amend, &request.root))
        }
        Err(err) => {
            sink.record(&Event::error("commit.failed").with("error", err.to_string()));
            Err(commit_failure(err.into(), &message, amend, &request.root))
        }
    }
}

/// `reason` (why git did not commit) as the failure of `git-agent commit`: the
/// generated message is printed and saved, so nothing is lost.
fn commit_failure(reason: CommandError, message: &str, amend: bool, root: &Path) -> CommandError {
    let saved = git_agent_core::session::save_message(root, message).ok();
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
