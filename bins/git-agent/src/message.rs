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
//! passes through [`safe_io::term::sanitize`] (escape sequences, `CR`, C1
//! controls and bidi overrides show as visible escapes), and a failure shows at
//! most [`SHOWN_ANSWER_MAX`] bytes of the model's last answer (head and tail)
//! and names the session trace that keeps more of it. Messages on stdout are
//! shaped by `git-agent-core`, which removes control characters from them.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use agent::{ConsoleSink, Event, NullSink, SessionSink, TraceSink, clip_middle};
use clap::{Args, ValueEnum};
use frontend::openai::{self, AuthSource, Flags};
use git_agent_core::commit_msg::{self, Options, Request};
use git_agent_core::pr_message;
use guidance::FamilyChoice;
use llm::{LlmError, ReasoningEffort};
use release_note::{self as release, RangeSpec};
use safe_io::term::sanitize;

/// The most of the model's last answer a failure prints (head and tail): 4 KiB.
pub const SHOWN_ANSWER_MAX: usize = 4 * 1024;

/// The flags every generation command shares.
#[derive(Debug, Clone, Args)]
pub struct Shared {
    /// The model [default: OPENAI_MODEL, or gpt-5-mini]
    #[arg(long, value_name = "MODEL")]
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

/// One line on stderr (control characters escaped), and the exit status of a
/// failure.
pub fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {}", sanitize(&message.to_string()));
    ExitCode::FAILURE
}

/// A warning on stderr, control characters escaped.
fn warn(message: impl std::fmt::Display) {
    eprintln!("warning: {}", sanitize(&message.to_string()));
}

/// The largest Codex `auth.json` read.
const AUTH_FILE_LIMIT: u64 = 1024 * 1024;

/// A `--debug` line on stderr, control characters escaped.
fn debug_line(message: impl std::fmt::Display) {
    eprintln!("{}", sanitize(&message.to_string()));
}

fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(&format!("\n  caused by: {cause}"));
        source = cause.source();
    }
    text
}

/// Builds the provider from the flags, `auth.json` and the environment.
fn provider(
    shared: &Shared,
    timeout: Duration,
) -> Result<
    (
        std::sync::Arc<dyn llm::LlmProvider>,
        llm::Redactor,
        AuthSource,
    ),
    String,
> {
    let lookup = |name: &str| std::env::var(name).ok();
    let auth_path = openai::codex_auth_path(lookup);
    let auth_text = auth_path
        .as_ref()
        // The user's own file, but still read as a bounded regular file: a
        // FIFO or a device there must not hang or flood us.
        .and_then(|p| match safe_io::fs::read_regular(p, AUTH_FILE_LIMIT) {
            Ok(bytes) => Some(Ok(String::from_utf8_lossy(&bytes).into_owned())),
            Err(err) if err.is_not_found() => None,
            Err(err) => Some(Err(err.to_string())),
        });
    let auth_text = auth_text.transpose()?;
    let auth_file = match (&auth_path, &auth_text) {
        (Some(path), Some(text)) => Some((path.as_path(), text.as_str())),
        _ => None,
    };
    let resolved = openai::resolve(
        Flags {
            model: shared.model.as_deref(),
            base_url: shared.base_url.as_deref(),
            chat: shared.api == Api::Chat,
        },
        auth_file,
        lookup,
    )
    .map_err(|e| e.to_string())?;
    let mut config = resolved.config;
    config.priority = shared.fast;
    config.reasoning_effort = if shared.low {
        Some(ReasoningEffort::Low)
    } else if shared.medium {
        Some(ReasoningEffort::Medium)
    } else if shared.high {
        Some(ReasoningEffort::High)
    } else if shared.xhigh {
        Some(ReasoningEffort::Xhigh)
    } else {
        None
    };
    config.http.overall_timeout = timeout;
    config.http.request_timeout = timeout.min(config.http.request_timeout);
    let redactor = config.redactor();
    let provider = llm::build_provider(config).map_err(|e| e.to_string())?;
    Ok((provider, redactor, resolved.source))
}

fn options(shared: &Shared, command: &str, amend: bool) -> Options {
    let mut options = Options {
        amend,
        command: command.to_owned(),
        guidance_family: shared.guidance_family,
        operator_hint: shared.append_prompt.clone(),
        ..Options::default()
    };
    options.budgets.max_steps = shared.max_steps;
    options.budgets.overall_timeout = shared.timeout;
    options
}

/// A hint added to provider errors that usually mean expired ChatGPT sign-in.
fn auth_hint(err: &git_agent_core::Error, source: &AuthSource) -> &'static str {
    let unauthorized = matches!(
        err,
        git_agent_core::Error::Agent(agent::AgentError::Provider(LlmError::Api {
            status: 401 | 403,
            ..
        }))
    );
    match (unauthorized, source) {
        (true, AuthSource::ChatGpt(_)) => {
            "\nhint: the ChatGPT sign-in may have expired; run `codex` once to refresh it"
        }
        (true, AuthSource::ApiKey) => "\nhint: check OPENAI_API_KEY",
        _ => "",
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))
}

/// The failure for stderr; an invalid answer is shown cut to
/// [`SHOWN_ANSWER_MAX`], with a pointer to `trace` (the session directory, when
/// there is one) for more.
fn describe_failure(err: &git_agent_core::Error, debug: bool, trace: Option<&Path>) -> String {
    let mut text = if debug {
        error_chain(err)
    } else {
        err.to_string()
    };
    if let git_agent_core::Error::Invalid { message, .. } = err {
        text.push_str("\nthe last message the model gave:\n");
        text.push_str(&clip_middle(message, SHOWN_ANSWER_MAX));
        if message.len() > SHOWN_ANSWER_MAX
            && let Some(dir) = trace
        {
            text.push_str(&format!(
                "\nthe answer was {} bytes; the session trace keeps more of it: {}",
                message.len(),
                dir.join("events.ndjson").display()
            ));
        }
    }
    text
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

fn prepare(shared: &Shared, command: &str, amend: bool) -> Result<Request, ExitCode> {
    let cwd = std::env::current_dir().map_err(|e| fail(format!("the current directory: {e}")))?;
    commit_msg::prepare(&cwd, &options(shared, command, amend)).map_err(|err| {
        fail(if shared.debug {
            error_chain(&err)
        } else {
            err.to_string()
        })
    })
}

/// A command's trace: a session directory, or nothing when `.git-agent/` was
/// refused.
struct Session {
    sink: Box<dyn TraceSink>,
    dir: Option<std::path::PathBuf>,
}

/// Creates the trace session of a generation-only command (its path on stderr
/// with `--debug`). When `.git-agent/` cannot be written safely — git tracks
/// it, or a symbolic link or special file sits where the session goes — the
/// command runs without a trace and says why on stderr: the repository may
/// refuse us a trace, not the message.
fn open_session(
    shared: &Shared,
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
            if shared.debug {
                debug_line(format!("session: {}", path.display()));
            }
            Session {
                sink: Box::new(sink),
                dir: Some(path),
            }
        }
        Err(why) => {
            warn(format!("no trace is kept: {why}"));
            Session {
                sink: Box::new(NullSink),
                dir: None,
            }
        }
    }
}

/// Prints a generated message on stdout (and `--debug` summaries), or the
/// failure on stderr.
fn print_message(
    shared: &Shared,
    result: Result<commit_msg::Generated, git_agent_core::Error>,
    session: &Session,
    source: &AuthSource,
) -> ExitCode {
    for problem in session.sink.problems() {
        warn(format!("trace: {problem}"));
    }
    match result {
        Ok(generated) => {
            if shared.debug {
                debug_line(summary(&generated));
            }
            let mut text = generated.message;
            text.push('\n');
            frontend::output_status(std::io::stdout().write_all(text.as_bytes()))
        }
        Err(err) => fail(format!(
            "{}{}",
            describe_failure(&err, shared.debug, session.dir.as_deref()),
            auth_hint(&err, source)
        )),
    }
}

/// `git-agent commit-msg [--amend]`.
pub fn commit_msg(shared: &Shared, amend: bool) -> ExitCode {
    let (provider, redactor, source) = match provider(shared, shared.timeout) {
        Ok(p) => p,
        Err(message) => return fail(message),
    };
    let request = match prepare(shared, "commit-msg", amend) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let metadata = commit_msg::session_metadata(&request, "commit-msg");
    let mut session = open_session(shared, &request.root, "commit-msg", metadata, redactor);
    let runtime = match runtime() {
        Ok(r) => r,
        Err(message) => return fail(message),
    };
    let result = runtime.block_on(commit_msg::generate(
        &request,
        provider.as_ref(),
        session.sink.as_mut(),
    ));
    print_message(shared, result, &session, &source)
}

/// `git-agent pr-message`.
pub fn pr_message(shared: &Shared) -> ExitCode {
    let (provider, redactor, source) = match provider(shared, shared.timeout) {
        Ok(p) => p,
        Err(message) => return fail(message),
    };
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(err) => return fail(format!("the current directory: {err}")),
    };
    let request = match pr_message::prepare(&cwd, &options(shared, "pr-message", false)) {
        Ok(r) => r,
        Err(err) => return fail(describe_failure(&err, shared.debug, None)),
    };
    let metadata = pr_message::session_metadata(&request);
    let mut session = open_session(shared, &request.root, "pr-message", metadata, redactor);
    let runtime = match runtime() {
        Ok(r) => r,
        Err(message) => return fail(message),
    };
    let result = runtime.block_on(pr_message::generate(
        &request,
        provider.as_ref(),
        session.sink.as_mut(),
    ));
    print_message(shared, result, &session, &source)
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
pub fn release_note(shared: &Shared, out: Option<&Path>, spec: &RangeSpec) -> ExitCode {
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(err) => return fail(format!("the current directory: {err}")),
    };
    if let Some(path) = out
        && let Err(err) = release::task::preflight_output(&cwd, path)
    {
        return fail(err);
    }
    let (provider, redactor, source) =
        match provider(shared, shared.timeout.max(release::task::MIN_TIMEOUT)) {
            Ok(p) => p,
            Err(message) => return fail(message),
        };
    let request = match release::task::prepare(&cwd, spec, &options(shared, "release-note", false))
    {
        Ok(r) => r,
        Err(err) => return fail(describe_failure(&err, shared.debug, None)),
    };
    let runtime = match runtime() {
        Ok(r) => r,
        Err(message) => return fail(message),
    };
    let failure = |err: git_agent_core::Error, trace: Option<&Path>| {
        fail(format!(
            "{}{}",
            describe_failure(&err, shared.debug, trace),
            auth_hint(&err, &source)
        ))
    };
    match out {
        Some(path) => {
            let stdout = std::io::stdout();
            let color = stdout.is_terminal();
            let mut sink = ConsoleSink::new(stdout, color, redactor).summarized();
            sink.record(
                &Event::info("session.started")
                    .with("command", "release-note")
                    .with("commits", request.context.commits.len())
                    .with("out", path.display().to_string()),
            );
            let note = match runtime.block_on(release::task::generate(
                &request,
                provider.as_ref(),
                &mut sink,
            )) {
                Ok(note) => note,
                Err(err) => return failure(err, None),
            };
            if shared.debug {
                debug_line(note_summary(&note));
            }
            match release::task::write_output(&cwd, path, &note.markdown) {
                Ok(()) => {
                    sink.record(
                        &Event::info("output.written")
                            .with("path", path.display().to_string())
                            .with("bytes", note.markdown.len()),
                    );
                    ExitCode::SUCCESS
                }
                Err(err) => fail(format!("{err}; the release note was:\n\n{}", note.markdown)),
            }
        }
        None => {
            let metadata = release::task::session_metadata(&request);
            let mut session =
                open_session(shared, &request.root, "release-note", metadata, redactor);
            let result = runtime.block_on(release::task::generate(
                &request,
                provider.as_ref(),
                session.sink.as_mut(),
            ));
            for problem in session.sink.problems() {
                warn(format!("trace: {problem}"));
            }
            match result {
                Ok(note) => {
                    if shared.debug {
                        debug_line(note_summary(&note));
                    }
                    frontend::output_status(std::io::stdout().write_all(note.markdown.as_bytes()))
                }
                Err(err) => failure(err, session.dir.as_deref()),
            }
        }
    }
}

/// `git-agent commit [--amend]`.
pub fn commit(shared: &Shared, amend: bool) -> ExitCode {
    let (provider, redactor, source) = match provider(shared, shared.timeout) {
        Ok(p) => p,
        Err(message) => return fail(message),
    };
    let request = match prepare(shared, "commit", amend) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let stdout = std::io::stdout();
    let color = stdout.is_terminal();
    let mut sink = ConsoleSink::new(stdout, color, redactor).summarized();
    sink.record(
        &Event::info("session.started")
            .with("command", "commit")
            .with("mode", request.prepared.mode.as_str())
            .with("paths", request.prepared.changes.paths.len()),
    );
    let runtime = match runtime() {
        Ok(r) => r,
        Err(message) => return fail(message),
    };
    let result = runtime.block_on(commit_msg::generate(&request, provider.as_ref(), &mut sink));
    let generated = match result {
        Ok(generated) => generated,
        Err(err) => {
            return fail(format!(
                "{}{}",
                describe_failure(&err, shared.debug, None),
                auth_hint(&err, &source)
            ));
        }
    };
    if shared.debug {
        debug_line(summary(&generated));
    }
    let message = format!("{}\n", generated.message);
    match git_agent_core::commit(&request.root, &message, amend) {
        Ok(run) if run.success => {
            sink.record(&Event::info("commit.created").with("amend", amend));
            // git's own words and the user's hooks', passed through as they are.
            eprint!("{}", run.stderr);
            frontend::output_status(std::io::stdout().write_all(run.stdout.as_bytes()))
        }
        Ok(run) => {
            sink.record(
                &Event::error("commit.failed")
                    .with("status", run.status.as_str())
                    .with("stderr", run.stderr.as_str()),
            );
            eprint!("{}", run.stderr);
            commit_failure(&run.status, &message, amend, &request.root)
        }
        Err(err) => {
            sink.record(&Event::error("commit.failed").with("error", err.to_string()));
            commit_failure(&err.to_string(), &message, amend, &request.root)
        }
    }
}

fn commit_failure(reason: &str, message: &str, amend: bool, root: &Path) -> ExitCode {
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
    fail(format!(
        "git commit failed ({reason}); the generated message was:\n\n{message}{saved_note}"
    ))
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
