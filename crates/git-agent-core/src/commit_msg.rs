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
//! commit-msg` measures); [`generate`] talks to the model.

use std::path::{Path, PathBuf};

use agent::{Budgets, Runner, Task, TraceSink};
use commit_text::{Checks, Message, Rules, ShapeOptions, SubmoduleRule};
use gitctx::Repo;
use guidance::{FamilyChoice, Guidance};
use llm::{LlmProvider, Usage};
use serde_json::{Value, json};

use crate::context::{self, Mode, Prepared};
use crate::error::Error;
use crate::prompt::{self, Environment};
use crate::tools;

/// What to generate, and within which limits.
#[derive(Debug, Clone)]
pub struct Options {
    /// The message of `git commit --amend` rather than of a new commit.
    pub amend: bool,
    /// The command, for the environment context and traces (`commit-msg`, `commit`).
    pub command: String,
    pub guidance_family: FamilyChoice,
    /// `--append-prompt`: an operator hint (at most `MAX_OPERATOR_HINT`
    /// characters).
    pub operator_hint: Option<String>,
    pub budgets: Budgets,
    pub limits: context::Limits,
    pub guidance: guidance::Options,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            amend: false,
            command: "commit-msg".to_owned(),
            guidance_family: FamilyChoice::Auto,
            operator_hint: None,
            budgets: default_budgets(),
            limits: context::Limits::default(),
            guidance: guidance::Options {
                max_file_bytes: 16 * 1024,
                max_total_bytes: 16 * 1024,
            },
        }
    }
}

/// The default budgets of a commit-message run: 8 model steps, 12 tool calls,
/// 5 minutes, 8,192 output tokens per call — `git-agent`'s cap when no
/// reasoning effort is asked for (the binary sets the cap of every run from
/// `--max-output-tokens` or the effort; reasoning tokens count against it).
fn default_budgets() -> Budgets {
    Budgets {
        max_steps: 8,
        max_tool_calls: 12,
        tool_limits: tools::LIMITS,
        overall_timeout: std::time::Duration::from_secs(300),
        max_tokens: Some(8192),
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
    check_hint(options)?;
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
        options.guidance_family,
        &options.guidance,
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
        prompt::task_prompt(&prepared, options.operator_hint.as_deref()),
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
        keep_trailers: commit_text::kept_trailers(original, options.operator_hint.as_deref()),
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
        budgets: options.budgets,
    })
}

/// Refuses an operator hint over `MAX_OPERATOR_HINT` characters.
pub fn check_hint(options: &Options) -> Result<(), Error> {
    if let Some(hint) = &options.operator_hint {
        let chars = hint.chars().count();
        if chars > prompt::MAX_OPERATOR_HINT {
            return Err(Error::InvalidOption(format!(
                "--append-prompt is {chars} characters long; the limit is {}",
                prompt::MAX_OPERATOR_HINT
            )));
        }
    }
    Ok(())
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
