//! One run of the edit loop: a [`Session`] holds what its attempts share (the
//! log, the latest content of every changed file, what the next prompt asks
//! to repair, the protected files after the previous build) and runs them.
//!
//! Each round is one [`Session::attempt`] — ask the model, check every block,
//! apply them all or none — returning `Result<Applied, Rejected>`, then, for an
//! applied response, one build. A round either leaves something to repair (a
//! rejected response, a failing build) or ends the run ([`Ending`]).
//! `build.sh` runs on tokio's blocking pool: a build takes minutes and must not
//! hold up the runtime's thread.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use llm::{
    CompletionRequest, CompletionResponse, LlmProvider, Message, Redactor, StopReason, ToolChoice,
};
use safe_io::Dir;

use crate::apply::{self, Applied, Change};
use crate::build::{self, BuildError, BuildOptions, BuildResult};
use crate::config::DEFAULT_BUILD_OUTPUT_BYTES;
use crate::error::Error;
use crate::logs::RunLog;
use crate::parse::{self, Action};
use crate::policy::{self, Policy, Target};
use crate::prompts::{self, Failure, Replacement};
use crate::protect::{self, Protected, Snapshot, Tampered};
use crate::undo::{Before, Undo, Way};

/// How a run behaves.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Repair rounds after the first attempt (the spec's three).
    pub max_repairs: u32,
    /// Output tokens per response.
    pub max_tokens: u32,
    /// How `build.sh` runs: its time limit (15 minutes by default), the
    /// environment variables it must not see (the key's) and the secret
    /// values none of them may contain, its Landlock sandbox and where a
    /// sandboxed build's private temporary directory is created.
    pub build: BuildOptions,
    /// The build output a repair prompt carries, at most (256 KiB by default):
    /// beyond it, the start and the end are kept and the cut is marked.
    pub build_output_bytes: usize,
    /// A failed run puts back exactly the files it changed (and removes those
    /// it created) instead of leaving them for review.
    pub revert_on_failure: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            max_repairs: 3,
            max_tokens: 32_000,
            build: BuildOptions {
                timeout: Duration::from_secs(900),
                ..BuildOptions::default()
            },
            build_output_bytes: DEFAULT_BUILD_OUTPUT_BYTES,
            revert_on_failure: false,
        }
    }
}

/// What happened in one attempt, for progress output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Asking the model (attempt number, 1-based).
    Asking { attempt: u32 },
    /// The response was rejected; nothing was applied.
    Rejected { attempt: u32, reasons: Vec<String> },
    /// The response was applied.
    Applied {
        attempt: u32,
        written: Vec<String>,
        deleted: Vec<String>,
    },
    /// How `build.sh` is confined: reported once, at the first build.
    Sandbox { status: String },
    /// `build.sh` finished.
    Built {
        attempt: u32,
        passed: bool,
        status: String,
    },
    /// The build changed protected files; the run stops.
    Tampered { attempt: u32, message: String },
    /// The run failed after changing files: how the working tree is left
    /// (reported last, also when the run ends with an error).
    Undo(Undo),
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// `build.sh` passed.
    pub passed: bool,
    /// Model calls made.
    pub attempts: u32,
    /// Every file changed on disk (written or removed), sorted.
    pub changed: Vec<String>,
    /// Why the run failed, when it did.
    pub failure: Option<String>,
    /// The protected files a build changed (the run stopped there), as
    /// `path (changed|created|deleted)`.
    pub tampered: Vec<String>,
    /// How the builds were confined (the line [`Step::Sandbox`] reported), when
    /// a build ran.
    pub sandbox: Option<String>,
    /// The run's log folder.
    pub log_dir: PathBuf,
    /// A failed run that changed files: the changes it left, or what
    /// `--revert-on-failure` put back.
    pub undo: Option<Undo>,
}

/// Everything a run reads before the first model call.
#[derive(Debug)]
pub struct Inputs {
    pub(crate) query: String,
    pub(crate) codebase: String,
    pub policy: Policy,
    /// The project directory, opened.
    pub(crate) root: Dir,
    /// Where the protected files are.
    pub(crate) protected: Protected,
}

/// Why an attempt applied nothing.
enum Rejected {
    /// The response was refused before anything was written (cut off, bad
    /// syntax, a path the policy refuses, an apply that was rolled back); the
    /// reasons go back to the model.
    Response(Vec<String>),
    /// The run ends here.
    End(Ending),
}

/// How a run ends.
enum Ending {
    /// `build.sh` passed.
    Passed,
    /// The run failed for this reason (the report's `failure`).
    Failed(String),
    /// The run stops with this error, which the summary records first (the
    /// model could not be asked; applying failed and could not be undone).
    Error(Error),
    /// The run stops with this error at once, without a summary (the log
    /// could not be written, `build.sh` could not be run).
    Abort(Error),
}

impl From<Error> for Ending {
    fn from(error: Error) -> Ending {
        Ending::Abort(error)
    }
}

impl From<Error> for Rejected {
    fn from(error: Error) -> Rejected {
        Rejected::End(Ending::Abort(error))
    }
}

/// One run: its inputs, its log, and what its attempts share.
pub(crate) struct Session<'r> {
    project: Arc<Path>,
    inputs: &'r Inputs,
    provider: &'r dyn LlmProvider,
    redactor: &'r Redactor,
    options: &'r RunOptions,
    progress: &'r mut dyn FnMut(&Step),
    log: RunLog,
    build_options: Arc<BuildOptions>,
    /// Model calls made so far.
    attempts: u32,
    /// Every path changed so far, with its latest content (`None`: deleted).
    latest: BTreeMap<String, Option<String>>,
    /// What every path a response was about to change held before the run.
    before: Before,
    /// Why the previous attempt's response was rejected (empty when it was
    /// applied, or on the first attempt).
    rejected: Vec<String>,
    /// The last build, which failed (`None` until a build ran).
    last_build: Option<LastBuild>,
    previous_response: Option<String>,
    /// How the builds are confined, once a build said so.
    sandbox_line: Option<String>,
    /// The protected files a build changed, as shown in the report.
    tampered: Vec<String>,
    /// The protected files after the previous build: a difference before the
    /// next one was made by a process that build left running.
    after_previous: Option<Snapshot>,
}

impl<'r> Session<'r> {
    /// A session on `project`, its log folder created under
    /// `agent-config/logs/`.
    pub(crate) fn start(
        project: &Path,
        inputs: &'r Inputs,
        provider: &'r dyn LlmProvider,
        redactor: &'r Redactor,
        options: &'r RunOptions,
        progress: &'r mut dyn FnMut(&Step),
    ) -> Result<Session<'r>, Error> {
        let log = RunLog::create(&inputs.root, chrono::Utc::now(), redactor.clone())?;
        Ok(Session {
            project: Arc::from(project),
            inputs,
            provider,
            redactor,
            options,
            progress,
            log,
            build_options: Arc::new(options.build.clone()),
            attempts: 0,
            latest: BTreeMap::new(),
            before: Before::default(),
            rejected: Vec::new(),
            last_build: None,
            previous_response: None,
            sandbox_line: None,
            tampered: Vec::new(),
            after_previous: None,
        })
    }

    /// Runs the rounds, writes the summary and reports.
    pub(crate) async fn run(mut self) -> Result<Report, Error> {
        let ending = self.rounds().await;
        let undo = match ending {
            Ending::Passed => None,
            _ => self.undo(),
        };
        match ending {
            Ending::Passed => self.finish(true, None, None),
            Ending::Failed(failure) => self.finish(false, Some(failure), undo),
            Ending::Error(error) => {
                self.finish(false, Some(error.to_string()), undo)?;
                Err(error)
            }
            Ending::Abort(error) => Err(error),
        }
    }

    /// After a failure: the files changed, kept for review or put back as
    /// they were (`revert_on_failure`), reported as a step; `None` when
    /// nothing was changed.
    fn undo(&mut self) -> Option<Undo> {
        if self.latest.is_empty() {
            return None;
        }
        let undo = if self.options.revert_on_failure {
            Undo::Reverted(self.before.revert(&self.inputs.root, &self.latest))
        } else {
            Undo::Kept(self.before.kept(&self.inputs.policy, &self.latest))
        };
        (self.progress)(&Step::Undo(undo.clone()));
        Some(undo)
    }

    /// The first attempt and the repair rounds, until one ends the run or
    /// none are left.
    async fn rounds(&mut self) -> Ending {
        for attempt in 1..=self.options.max_repairs.saturating_add(1) {
            self.attempts = attempt;
            if let Err(ending) = self.round(attempt).await {
                return ending;
            }
        }
        Ending::Failed(self.exhausted())
    }

    /// One attempt and, when it applied the response, its build: `Ok` when
    /// there is something to repair (the response was rejected, or the build
    /// failed), or how the run ends.
    async fn round(&mut self, attempt: u32) -> Result<(), Ending> {
        let applied = match self.attempt(attempt).await {
            Ok(applied) => applied,
            Err(Rejected::Response(reasons)) => return Ok(self.reject(attempt, reasons)?),
            Err(Rejected::End(ending)) => return Err(ending),
        };
        self.rejected.clear();
        let result = self.build(attempt, &applied).await?;
        if result.passed() {
            return Err(Ending::Passed);
        }
        // The build's output goes back to the model, and its end to the user: a
        // key it printed (plain or encoded) must reach neither, and is masked
        // before any cut could split it.
        let redacted = self.redactor.redact(&result.log_text());
        self.last_build = Some(LastBuild {
            attempt,
            status: result.status_text(),
            prompt: build::cut_middle(redacted.clone(), self.options.build_output_bytes),
            tail: tail(&redacted).to_owned(),
        });
        Ok(())
    }

    /// Why the run failed when every round was used, said for the person
    /// running it: what happened to the last answer, and the last build.
    fn exhausted(&self) -> String {
        let repairs = self.attempts.saturating_sub(1);
        let rounds = plural(repairs, "repair round");
        let last_build = self.last_build.as_ref();
        if self.rejected.is_empty() {
            return match last_build {
                Some(build) => format!(
                    "build.sh still fails after {rounds} ({}); the end of its output:\n{}\n(the whole output is {}-build.txt in the log folder)",
                    build.status,
                    build.tail.trim_end(),
                    build.attempt
                ),
                None => format!("build.sh still fails after {rounds}"),
            };
        }
        let build = match last_build {
            Some(build) => format!(
                "The last build, of attempt {}, failed ({}); its output is {}-build.txt in the log folder.",
                build.attempt, build.status, build.attempt
            ),
            None => "build.sh never ran: no answer of the model was applied.".to_owned(),
        };
        format!(
            "the model's last answer was rejected: {}. build.sh did not run on it. {rounds} used. {build}",
            self.rejected
                .iter()
                .map(|r| what_went_wrong(r))
                .collect::<Vec<_>>()
                .join("; ")
        )
    }

    /// Asks the model, then checks every block of its response before
    /// touching anything, then applies them all or none.
    async fn attempt(&mut self, attempt: u32) -> Result<Applied, Rejected> {
        let response = self.ask(attempt).await?;
        let text = response.text();
        self.log.attempt(attempt, "response.txt", &text)?;
        self.refuse_repetition(attempt, &text)?;
        let targets = self.verify(&response, &text)?;
        self.apply(attempt, targets)
    }

    /// The prompt (initial, or a repair with the files as changed so far),
    /// logged, and the model's response.
    async fn ask(&mut self, attempt: u32) -> Result<CompletionResponse, Rejected> {
        let inputs = self.inputs;
        let prompt = match attempt {
            1 => prompts::initial(&inputs.query, &inputs.codebase),
            _ => {
                let failure = Failure {
                    rejected: self.rejected.clone(),
                    build: self
                        .last_build
                        .as_ref()
                        .map(|b| (b.attempt, b.prompt.clone())),
                };
                let replacements: Vec<Replacement> = self
                    .latest
                    .iter()
                    .map(|(path, content)| Replacement {
                        path: path.clone(),
                        content: content.clone(),
                    })
                    .collect();
                prompts::repair(&failure, &inputs.query, &inputs.codebase, &replacements)
            }
        };
        self.log.attempt(attempt, "query.txt", &prompt.text())?;
        (self.progress)(&Step::Asking { attempt });
        let request = CompletionRequest {
            system: Some(prompt.system.clone()),
            messages: vec![Message::user(prompt.user.clone())],
            tools: Vec::new(),
            tool_choice: ToolChoice::None,
            max_tokens: Some(self.options.max_tokens),
            json_format: None,
        };
        match self.provider.complete(&request).await {
            Ok(response) => Ok(response),
            Err(err) => {
                self.log.attempt(attempt, "error.txt", &err.to_string())?;
                Err(Rejected::End(Ending::Error(Error::Provider(err))))
            }
        }
    }

    /// Ends the run when the model repeated its previous response: another
    /// round would not go anywhere.
    fn refuse_repetition(&mut self, attempt: u32, text: &str) -> Result<(), Rejected> {
        if self.previous_response.as_deref().map(str::trim) == Some(text.trim()) {
            let why =
                "the model repeated its previous response; stopping the repair rounds".to_owned();
            (self.progress)(&Step::Rejected {
                attempt,
                reasons: vec![why.clone()],
            });
            self.log.attempt(attempt, "rejected.txt", &why)?;
            return Err(Rejected::End(Ending::Failed(why)));
        }
        self.previous_response = Some(text.to_owned());
        Ok(())
    }

    /// Every block of a complete response parsed, and its path judged.
    fn verify(
        &self,
        response: &CompletionResponse,
        text: &str,
    ) -> Result<Vec<(Target, Action)>, Rejected> {
        if response.stop_reason == StopReason::MaxTokens {
            return Err(Rejected::Response(vec![format!(
                "the response was cut off by the output token limit ({} tokens), so its last block may be incomplete; change fewer files per response",
                self.options.max_tokens
            )]));
        }
        let blocks = parse::parse(text).map_err(|problems| {
            Rejected::Response(problems.iter().map(ToString::to_string).collect())
        })?;
        policy::verify(&self.inputs.policy, &blocks).map_err(|rejections| {
            Rejected::Response(
                rejections
                    .iter()
                    .map(|r| format!("{}: {}", r.path, r.reason))
                    .collect(),
            )
        })
    }

    /// Applies the verified blocks all or nothing, and remembers each path's
    /// new content for the repair prompts.
    fn apply(&mut self, attempt: u32, targets: Vec<(Target, Action)>) -> Result<Applied, Rejected> {
        let changes: Vec<Change> = targets
            .iter()
            .map(|(target, action)| match action {
                Action::Write(content) => Change::Write {
                    rel: target.rel.clone(),
                    content: content.clone().into_bytes(),
                },
                Action::Delete => Change::Delete {
                    rel: target.rel.clone(),
                },
            })
            .collect();
        for change in &changes {
            self.before.keep(&self.inputs.root, change.rel());
        }
        let applied = match apply::apply(&self.inputs.root, &changes) {
            Ok(applied) => applied,
            Err(err) if err.restored() => {
                return Err(Rejected::Response(vec![format!(
                    "applying the response failed and every file was restored: {err}"
                )]));
            }
            Err(err) => {
                self.log.attempt(attempt, "error.txt", &err.to_string())?;
                return Err(Rejected::End(Ending::Error(Error::Apply(err))));
            }
        };
        for (target, action) in targets {
            let content = match action {
                Action::Write(content) => Some(content),
                Action::Delete => None,
            };
            self.latest.insert(target.rel, content);
        }
        let mut list = String::new();
        for p in &applied.written {
            list.push_str(&format!("written {p}\n"));
        }
        for p in &applied.deleted {
            list.push_str(&format!("deleted {p}\n"));
        }
        self.log.attempt(attempt, "applied.txt", &list)?;
        (self.progress)(&Step::Applied {
            attempt,
            written: applied.written.clone(),
            deleted: applied.deleted.clone(),
        });
        Ok(applied)
    }

    /// Logs and reports why a response was rejected, and keeps the reasons
    /// for the next prompt.
    fn reject(&mut self, attempt: u32, reasons: Vec<String>) -> Result<(), Error> {
        self.log
            .attempt(attempt, "rejected.txt", &reasons.join("\n"))?;
        (self.progress)(&Step::Rejected {
            attempt,
            reasons: reasons.clone(),
        });
        self.rejected = reasons;
        Ok(())
    }

    /// Runs `build.sh` on the applied response, comparing the protected files
    /// before and after it (and with the previous build's).
    async fn build(&mut self, attempt: u32, applied: &Applied) -> Result<BuildResult, Ending> {
        // Whether this attempt's blocks changed a Cargo.toml (cargo may then
        // rewrite Cargo.lock: see `protect::lock_update_allowed`).
        let manifest_changed = applied
            .written
            .iter()
            .chain(&applied.deleted)
            .any(|p| p == "Cargo.toml" || p.ends_with("/Cargo.toml"));
        let before = self.inputs.protected.snapshot();
        if let Some(previous) = &self.after_previous {
            let changed = before.changes(previous);
            if !changed.is_empty() {
                return Err(self.stop_tampered(attempt, &changed, true)?);
            }
        }
        let result = self.run_build().await?;
        self.log.attempt(attempt, "build.txt", &result.log_text())?;
        if self.sandbox_line.is_none() && self.build_options.sandbox.is_some() {
            let line = result.sandbox.describe();
            (self.progress)(&Step::Sandbox {
                status: line.clone(),
            });
            self.sandbox_line = Some(line);
        }
        let after = self.inputs.protected.snapshot();
        let policy = &self.inputs.policy;
        let (lock_updates, changed): (Vec<_>, Vec<_>) =
            after.changes(&before).into_iter().partition(|t| {
                protect::lock_update_allowed(t, manifest_changed, || lock_ignored(policy))
            });
        if !lock_updates.is_empty() {
            self.log.attempt(
                attempt,
                "protected.txt",
                "Cargo.lock was updated by the build (cargo rewrites it when a Cargo.toml changes, or creates it when git ignores it); review it with git diff\n",
            )?;
        }
        if !changed.is_empty() {
            return Err(self.stop_tampered(attempt, &changed, false)?);
        }
        self.after_previous = Some(after);
        (self.progress)(&Step::Built {
            attempt,
            passed: result.passed(),
            status: result.status_text(),
        });
        Ok(result)
    }

    /// `build.sh` on tokio's blocking pool. A panic in the build runner goes on
    /// as a panic, as it would have on this thread.
    async fn run_build(&self) -> Result<BuildResult, Error> {
        let project = Arc::clone(&self.project);
        let options = Arc::clone(&self.build_options);
        let result = tokio::task::spawn_blocking(move || build::run_build(&project, &options))
            .await
            .unwrap_or_else(|join| match join.try_into_panic() {
                Ok(panic) => std::panic::resume_unwind(panic),
                Err(join) => Err(BuildError::Wait {
                    source: std::io::Error::other(join),
                }),
            });
        Ok(result?)
    }

    /// A build that changed protected files fails its attempt loudly, is
    /// logged, and ends the run: nothing it produced is trusted for another
    /// round.
    fn stop_tampered(
        &mut self,
        attempt: u32,
        changed: &[Tampered],
        between_builds: bool,
    ) -> Result<Ending, Error> {
        let message = protect::message(attempt, changed, between_builds);
        self.tampered = changed.iter().map(ToString::to_string).collect();
        self.log.attempt(attempt, "tampered.txt", &message)?;
        (self.progress)(&Step::Tampered {
            attempt,
            message: message.clone(),
        });
        Ok(Ending::Failed(message))
    }

    /// Writes `summary.txt` and returns the report.
    fn finish(
        &self,
        passed: bool,
        failure: Option<String>,
        undo: Option<Undo>,
    ) -> Result<Report, Error> {
        let report = Report {
            passed,
            attempts: self.attempts,
            changed: self.latest.keys().cloned().collect(),
            failure,
            tampered: self.tampered.clone(),
            sandbox: self.sandbox_line.clone(),
            log_dir: self.log.dir().to_path_buf(),
            undo,
        };
        let summary = format!(
            "result: {}\nattempts: {}\nchanged:\n{}{}{}{}",
            if passed { "build passed" } else { "failed" },
            report.attempts,
            report
                .changed
                .iter()
                .map(|p| format!("  {p}\n"))
                .collect::<String>(),
            report
                .sandbox
                .as_ref()
                .map_or(String::new(), |s| format!("{s}\n")),
            report
                .failure
                .as_ref()
                .map_or(String::new(), |f| format!("failure:\n{f}\n")),
            report.undo.as_ref().map_or(String::new(), undo_summary)
        );
        self.log.write("summary.txt", &summary).map(|_| report)
    }
}

/// Whether git ignores the project's `Cargo.lock` (an error counts as no).
fn lock_ignored(policy: &Policy) -> bool {
    policy.is_ignored("Cargo.lock").unwrap_or(false)
}

/// The part of a rejection reason that says what went wrong, for the person:
/// reasons are written for the model as `what went wrong; what to do
/// instead` (parse errors, the policy, the token limit), and the advice is
/// the model's.
fn what_went_wrong(reason: &str) -> &str {
    reason
        .split_once("; ")
        .map_or(reason, |(what, _)| what)
        .trim_end_matches('.')
}

/// A failed build, as the next prompt and the report show it.
struct LastBuild {
    /// The attempt it built.
    attempt: u32,
    /// How it ended (`build.sh exited with status 1`).
    status: String,
    /// Its output for the repair prompt (bounded, redacted).
    prompt: String,
    /// The end of its output for the person (redacted).
    tail: String,
}

/// The lines of a failed build's output the report shows, at most.
const TAIL_LINES: usize = 20;
/// The bytes of a failed build's output the report shows, at most.
const TAIL_BYTES: usize = 4 * 1024;

/// The last [`TAIL_LINES`] lines of `text`, at most [`TAIL_BYTES`] bytes.
fn tail(text: &str) -> &str {
    let text = text.trim_end();
    let by_lines = text
        .rmatch_indices('\n')
        .nth(TAIL_LINES - 1)
        .map_or(0, |(i, _)| i + 1);
    let mut start = by_lines.max(text.len().saturating_sub(TAIL_BYTES));
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// `n` and `what`, plural when `n` is not 1: `1 repair round`, `0 repair rounds`.
fn plural(n: u32, what: &str) -> String {
    if n == 1 {
        format!("{n} {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// How `summary.txt` says what a failed run left in the working tree.
fn undo_summary(undo: &Undo) -> String {
    match undo {
        Undo::Kept(kept) => {
            let mut out = String::from("left in the working tree (not staged); to undo:\n");
            for command in kept.commands() {
                out.push_str(&format!("  {command}\n"));
            }
            for rel in kept.by(Way::NotInGit) {
                out.push_str(&format!(
                    "  {rel}: its content before the run is not in git\n"
                ));
            }
            out
        }
        Undo::Reverted(reverted) => {
            let mut out = String::from("reverted (--revert-on-failure):\n");
            for rel in &reverted.restored {
                out.push_str(&format!("  restored {rel}\n"));
            }
            for rel in &reverted.removed {
                out.push_str(&format!("  removed {rel}\n"));
            }
            for why in &reverted.failed {
                out.push_str(&format!("  not reverted: {why}\n"));
            }
            out
        }
    }
}
