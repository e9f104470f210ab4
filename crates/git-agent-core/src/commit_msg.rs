//! The commit-message task: `commit-msg`, `commit-msg --amend`, and the message
//! half of `commit` / `commit --amend`.
//!
//! ```text
//! prepare(): open repo ─▶ prepared context ─▶ guidance for its paths ─▶ request layers + tools
//! generate(): agent loop ─▶ shape ─▶ validate ─(invalid)─▶ one repair ─▶ shape ─▶ validate
//!                                 └─▶ preserve task-ID suffix ─▶ final validate ─▶ message
//! ```
//!
//! [`prepare`] is synchronous and does all the git work (what `cargo xtask bench
//! commit-msg` measures); [`generate`] talks to the model. [`run`]
//! (`git-agent commit-msg`) and [`commit`] (`git-agent commit`) are each
//! command's one call: options from the binary's settings, prepare, the trace
//! (a session, or the console for `commit`), generate, and for `commit` the
//! commit itself.

use std::path::{Path, PathBuf};

use agent::{Budgets, Event, Runner, Task, TraceSink};
use commit_text::{Checks, Message, Rules, ShapeOptions, SubmoduleRule};
use git_evidence::{Console, Error, Failed, Host, Settings, Trace, session};
use gitctx::{CommitRun, Repo};
use guidance::Guidance;
use llm::{LlmProvider, Usage};
use serde_json::{Value, json};

use crate::context::{self, Mode, Prepared};
use crate::prompt::{self, Environment};
use crate::tools;

/// What to generate, and within which limits.
#[derive(Debug, Clone)]
pub struct Options {
    /// The message of `git commit --amend` rather than of a new commit.
    pub amend: bool,
    /// The command, for the environment context and traces (`commit-msg`, `commit`).
    pub command: String,
    pub limits: context::Limits,
    /// What every git-agent task is run with: budgets, guidance, the operator
    /// hint.
    pub shared: git_evidence::Options,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            amend: false,
            command: "commit-msg".to_owned(),
            limits: context::Limits::default(),
            shared: git_evidence::Options::default(),
        }
    }
}

impl Options {
    /// The options of `command` (with `amend`) that `settings` ask for.
    pub fn new(command: &str, amend: bool, settings: &Settings) -> Options {
        Options {
            amend,
            command: command.to_owned(),
            shared: git_evidence::Options::from_settings(settings),
            ..Options::default()
        }
    }
}

/// Everything prepared for the model: the evidence, the guidance, the request.
#[derive(Debug, Clone)]
pub struct Request {
    pub root: PathBuf,
    pub cwd: PathBuf,
    pub prepared: Prepared,
    pub guidance: Guidance,
    pub task: Task,
    pub checks: Checks,
    pub budgets: Budgets,
}

/// The generated message and how it was reached.
#[derive(Debug, Clone, PartialEq)]
pub struct Generated {
    pub message: String,
    pub steps: u32,
    pub tool_calls: u32,
    pub repaired: bool,
    pub finalized: bool,
    pub usage: Usage,
}

/// Prepares a commit-message request for the repository containing `cwd`.
pub fn prepare(cwd: &Path, options: &Options) -> Result<Request, Error> {
    options.shared.check_hint()?;
    let repo = Repo::discover(cwd)?;
    let root = repo.root().to_path_buf();
    let mode = if options.amend {
        Mode::Amend
    } else {
        Mode::Staged
    };
    let prepared = context::prepare(&repo, mode, &options.limits)?;
    let guidance = guidance::resolve(
        &root,
        &prepared.target_paths(),
        options.shared.guidance_family,
        &options.shared.guidance,
    )?;
    let family = guidance.family.map_or("none", |f| f.name());
    let stdout_contract = match options.command.as_str() {
        "commit" => {
            "the message becomes the commit (git commit --file -); stdout shows the trace and git's summary"
        }
        _ => "stdout receives only the final commit message",
    };
    let environment = prompt::environment(&Environment {
        cwd,
        root: &root,
        command: &options.command,
        mode: mode.as_str(),
        guidance_family: family,
        stdout_contract,
    });
    let messages = prompt::layers(
        prompt::TOOL_POLICY,
        environment,
        &guidance,
        prompt::task_prompt(&prepared, options.shared.operator_hint.as_deref()),
    );
    let task = Task {
        name: options.command.clone(),
        system: prompt::instructions(mode),
        messages,
        tools: tools::registry(&root, mode),
        format_reminder: prompt::FORMAT_REMINDER.to_owned(),
        json_format: None,
    };
    let original = prepared.original_message();
    let original_subject = original.map(|m| Message::parse(m).subject);
    let rules = Rules {
        amend_subject: original_subject.as_deref().map(|s| s.trim().to_owned()),
        amend_original: original.map(str::to_owned),
        submodules: submodule_rules(&prepared.changes),
    };
    let shape_options = ShapeOptions {
        keep_trailers: commit_text::kept_trailers(
            original,
            options.shared.operator_hint.as_deref(),
        ),
    };
    let task_id = match mode {
        Mode::Amend => original_subject
            .as_deref()
            .and_then(commit_text::task_id_suffix),
        Mode::Staged => prepared.task_id.clone(),
    };
    let lockfile_packages = lockfile_packages(&prepared.changes);
    Ok(Request {
        root,
        cwd: cwd.to_path_buf(),
        prepared,
        guidance,
        task,
        checks: Checks {
            rules,
            shape_options,
            task_id,
            lockfile_packages,
            squash: None,
            style: None,
        },
        budgets: options.shared.budgets,
    })
}

/// The packages a lockfile-only change touches (empty otherwise).
pub(crate) fn lockfile_packages(changes: &context::Changes) -> Vec<String> {
    if !changes.lockfile_only() {
        return Vec::new();
    }
    changes
        .lockfiles
        .iter()
        .flat_map(|l| l.changed.iter().chain(&l.added).chain(&l.removed))
        .map(|p| p.name.clone())
        .collect()
}

/// The submodules whose new commits a message about `changes` must mention.
pub(crate) fn submodule_rules(changes: &context::Changes) -> Vec<SubmoduleRule> {
    changes
        .submodules
        .iter()
        .filter(|s| !s.commits.is_empty())
        .map(|s| SubmoduleRule {
            path: s.path.clone(),
            subjects: s.commits.clone(),
        })
        .collect()
}

/// A prepared request of a message task: a commit's ([`Request`]) or a
/// squash's ([`crate::pr_message::Request`]). [`generate`] runs either.
pub trait MessageRequest {
    /// The agent task, its budgets, and the checks its answer must pass.
    fn parts(&self) -> (&Task, Budgets, &Checks);
}

impl MessageRequest for Request {
    fn parts(&self) -> (&Task, Budgets, &Checks) {
        (&self.task, self.budgets, &self.checks)
    }
}

/// Runs the model on a prepared request and returns the final message: the
/// loop every message task shares, the agent run with the request's checks as
/// its validator (one repair pass), the task-ID suffix put back, a final check.
pub async fn generate(
    request: &impl MessageRequest,
    provider: &dyn LlmProvider,
    trace: &mut dyn TraceSink,
) -> Result<Generated, Error> {
    let (task, budgets, checks) = request.parts();
    let validator = |raw: &str| commit_text::check(checks, raw);
    // A message cut off by the output cap is repaired once with a larger cap.
    let mut runner = Runner::new(provider, budgets, trace).repair_cut_off();
    let outcome = runner.run(task, Some(&validator)).await?;
    if outcome.stop_reason == llm::StopReason::MaxTokens {
        return Err(Error::Invalid {
            problems: vec![
                "the answer was cut off by the output token limit, so the message may be incomplete"
                    .to_owned(),
            ],
            message: outcome.output,
        });
    }
    let mut message = outcome.output.clone();
    if let Some(task_id) = &checks.task_id {
        message = commit_text::ensure_task_id(&message, task_id);
    }
    // The final check, after the task ID was put back.
    let message = commit_text::check(checks, &message).map_err(|problems| Error::Invalid {
        problems,
        message: message.clone(),
    })?;
    Ok(Generated {
        message,
        steps: outcome.steps,
        tool_calls: outcome.tool_calls,
        repaired: outcome.repaired,
        finalized: outcome.finalized,
        usage: outcome.usage,
    })
}

/// What a session trace records about the request.
pub fn session_metadata(request: &Request, command: &str) -> Value {
    let prepared = &request.prepared;
    let paths: Vec<&str> = prepared
        .changes
        .paths
        .iter()
        .take(500)
        .map(|p| p.path.as_str())
        .collect();
    json!({
        "command": command,
        "mode": prepared.mode.as_str(),
        "repository": {
            "root": request.root.display().to_string(),
            "branch": prepared.branch,
            "head": prepared.head.as_ref().map(|h| h.brief.id.to_hex()),
        },
        "paths": paths,
        "paths_total": prepared.changes.paths.len(),
        "guidance": request.guidance.paths(),
    })
}

/// `git-agent commit-msg [--amend]`: the message for the staged changes (or
/// the final amended commit) of the repository containing `cwd`, with the
/// options `settings` ask for, its trace in a session directory
/// (`.git-agent/sessions/<timestamp>-commit-msg/`).
pub async fn run(
    cwd: &Path,
    amend: bool,
    settings: &Settings,
    host: Host<'_>,
) -> Result<Generated, Failed> {
    let options = Options::new("commit-msg", amend, settings);
    let request = prepare(cwd, &options)?;
    let metadata = session_metadata(&request, &options.command);
    generate_in_session(&request, &request.root, &options.command, metadata, host).await
}

/// [`generate`] for a generation-only `command` whose request was prepared
/// for the working tree at `root`, traced in a session holding `metadata`.
pub(crate) async fn generate_in_session(
    request: &impl MessageRequest,
    root: &Path,
    command: &str,
    metadata: Value,
    host: Host<'_>,
) -> Result<Generated, Failed> {
    let mut trace = Trace::session(root, command, metadata, host.redactor, host.notices);
    let result = generate(request, host.provider, trace.sink()).await;
    trace.finish(result, host.notices)
}

/// What `git-agent commit` did: the generated message, and what git made of
/// it.
#[derive(Debug)]
pub struct Commit {
    pub generated: Generated,
    /// The message as `git commit` was given it (with its final newline).
    pub message: String,
    pub committed: Committed,
}

/// What `git commit` did with the generated message.
#[derive(Debug)]
pub enum Committed {
    /// The commit was created; git's own output.
    Created(CommitRun),
    /// git refused the commit (a hook, signing): its output, and where the
    /// message was saved for the user (`.git-agent/COMMIT_MSG`, when it could
    /// be written).
    Refused {
        run: CommitRun,
        saved: Option<PathBuf>,
    },
    /// git could not be run; where the message was saved.
    NotRun {
        error: Error,
        saved: Option<PathBuf>,
    },
}

/// `git-agent commit [--amend]`: the message as [`run`] writes it, with a
/// summarized trace streamed to `console`, then `git commit --file -` (with
/// `--amend`: `--amend --file -`) at the top of the working tree. A refused
/// commit is not a failure of this function: its message is saved and
/// returned in [`Committed`].
pub async fn commit(
    cwd: &Path,
    amend: bool,
    settings: &Settings,
    host: Host<'_>,
    console: Console,
) -> Result<Commit, Failed> {
    let options = Options::new("commit", amend, settings);
    let request = prepare(cwd, &options)?;
    let started = Event::info("session.started")
        .with("command", "commit")
        .with("mode", request.prepared.mode.as_str())
        .with("paths", request.prepared.changes.paths.len());
    let mut trace = Trace::console(console, host.redactor, &started);
    let result = generate(&request, host.provider, trace.sink()).await;
    let generated = trace.finish(result, host.notices)?;
    let message = format!("{}\n", generated.message);
    let committed = match crate::commit(&request.root, &message, amend) {
        Ok(run) if run.success => {
            trace.record(&Event::info("commit.created").with("amend", amend));
            Committed::Created(run)
        }
        Ok(run) => {
            trace.record(
                &Event::error("commit.failed")
                    .with("status", run.status.as_str())
                    .with("stderr", run.stderr.as_str()),
            );
            let saved = session::save_message(&request.root, &message).ok();
            Committed::Refused { run, saved }
        }
        Err(error) => {
            trace.record(&Event::error("commit.failed").with("error", error.to_string()));
            let saved = session::save_message(&request.root, &message).ok();
            Committed::NotRun { error, saved }
        }
    };
    Ok(Commit {
        generated,
        message,
        committed,
    })
}
