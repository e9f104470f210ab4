//! The edit loop of spec 001: one initial attempt and up to three repair
//! rounds.
//!
//! ```text
//! preflight ─▶ prompt ─▶ model ─▶ parse ─▶ verify every block ─▶ apply all-or-nothing ─▶ build.sh
//!                ▲                  │ rejected (no blocks, bad syntax, a        │ fails
//!                │                  │ protected path, cut off, elided…)          │
//!                └── repair prompt ◀┴────────────────────────────────────────────┘
//! ```
//!
//! A rejected response changes nothing on disk and counts as a failed attempt;
//! the repair prompt then carries why it was rejected in place of build output.
//! Repair stops early when the model repeats its previous response. Changes are
//! not rolled back when the run fails: the supervisor reviews them with git.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use llm::{CompletionRequest, LlmProvider, Message, Redactor, StopReason, ToolChoice};

use crate::apply::{self, Change};
use crate::build::{self, BuildOptions};
use crate::config::CONFIG_DIR;
use crate::error::Error;
use crate::logs::RunLog;
use crate::parse::{self, Action};
use crate::policy::{self, Policy};
use crate::prompts::{self, Replacement};

/// The files a run needs, relative to the project.
pub const QUERY_FILE: &str = "agent-config/query.txt";
/// The code rollup.
pub const ROLLUP_FILE: &str = "agent-config/codeRollup.txt";
/// The build script.
pub const BUILD_SCRIPT: &str = "build.sh";

/// How a run behaves.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Repair rounds after the first attempt (the spec's three).
    pub max_repairs: u32,
    /// Output tokens per response.
    pub max_tokens: u32,
    /// `build.sh`'s time limit.
    pub build_timeout: Duration,
    /// Environment variables `build.sh` must not see (the key's).
    pub build_remove_env: Vec<String>,
    /// Secret values no environment variable of `build.sh` may contain.
    pub build_scrub_values: Vec<String>,
    /// The build output a repair prompt carries, at most.
    pub build_output_bytes: usize,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            max_repairs: 3,
            max_tokens: 32_000,
            build_timeout: Duration::from_secs(900),
            build_remove_env: Vec::new(),
            build_scrub_values: Vec::new(),
            build_output_bytes: 24 * 1024,
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
    /// `build.sh` finished.
    Built {
        attempt: u32,
        passed: bool,
        status: String,
    },
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
    /// The run's log folder.
    pub log_dir: std::path::PathBuf,
}

fn read_required(project: &Path, rel: &'static str, hint: &'static str) -> Result<String, Error> {
    let path = project.join(rel);
    match std::fs::read(&path) {
        Ok(bytes) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Err(Error::MissingFile {
            path: rel.to_owned(),
            hint,
        }),
        Err(source) => Err(Error::Io { path, source }),
    }
}

/// Checks that `.gitignore` keeps `agent-config/` out of git: a line
/// `/agent-config` (or `/agent-config/`).
pub fn check_gitignore(project: &Path) -> Result<(), Error> {
    let path = project.join(".gitignore");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Err(Error::NotIgnored),
        Err(source) => return Err(Error::Io { path, source }),
    };
    let ok = text
        .lines()
        .map(str::trim)
        .any(|l| l == format!("/{CONFIG_DIR}") || l == format!("/{CONFIG_DIR}/"));
    if ok { Ok(()) } else { Err(Error::NotIgnored) }
}

/// Everything a run reads before the first model call.
#[derive(Debug)]
pub struct Inputs {
    pub query: String,
    pub codebase: String,
    pub policy: Policy,
}

/// The checks of spec 001 before anything is sent: the query and the rollup
/// exist, `.gitignore` protects `agent-config/`, `build.sh` exists, the project
/// is in a git working tree.
pub fn preflight(project: &Path) -> Result<Inputs, Error> {
    let query = read_required(
        project,
        QUERY_FILE,
        "write what you want changed in it (the query is sent to the model as is)",
    )?;
    let codebase = read_required(
        project,
        ROLLUP_FILE,
        "create it with codeRollup.sh before running code-commit",
    )?;
    check_gitignore(project)?;
    if !project.join(BUILD_SCRIPT).is_file() {
        return Err(Error::MissingFile {
            path: BUILD_SCRIPT.to_owned(),
            hint: "code-commit judges every change by whether build.sh exits 0",
        });
    }
    let policy = Policy::new(project)?;
    Ok(Inputs {
        query,
        codebase,
        policy,
    })
}

fn rejection_text(reasons: &[String]) -> String {
    let mut out = String::from(
        "Your previous response was rejected and NOTHING from it was applied (the files are as listed under File replacements):\n",
    );
    for r in reasons {
        out.push_str("- ");
        out.push_str(r);
        out.push('\n');
    }
    out
}

/// Runs the loop on `project` with `provider`, logging under
/// `agent-config/logs/`. `progress` hears about every step.
pub async fn run(
    project: &Path,
    inputs: &Inputs,
    provider: &dyn LlmProvider,
    redactor: &Redactor,
    options: &RunOptions,
    progress: &mut dyn FnMut(&Step),
) -> Result<Report, Error> {
    let log = RunLog::create(project, chrono::Utc::now(), redactor.clone())?;
    let mut latest: BTreeMap<String, Option<String>> = BTreeMap::new();
    let mut failure: Option<String> = None;
    let mut previous_response: Option<String> = None;
    let mut attempts = 0;
    let build_options = BuildOptions {
        timeout: options.build_timeout,
        remove_env: options.build_remove_env.clone(),
        scrub_values: options.build_scrub_values.clone(),
    };
    let finish = |passed: bool,
                  attempts: u32,
                  latest: &BTreeMap<String, Option<String>>,
                  failure: Option<String>| {
        let report = Report {
            passed,
            attempts,
            changed: latest.keys().cloned().collect(),
            failure,
            log_dir: log.dir().to_path_buf(),
        };
        let summary = format!(
            "result: {}\nattempts: {}\nchanged:\n{}{}",
            if passed { "build passed" } else { "failed" },
            report.attempts,
            report
                .changed
                .iter()
                .map(|p| format!("  {p}\n"))
                .collect::<String>(),
            report
                .failure
                .as_ref()
                .map_or(String::new(), |f| format!("failure:\n{f}\n"))
        );
        log.write("summary.txt", &summary).map(|_| report)
    };

    for attempt in 1..=options.max_repairs + 1 {
        attempts = attempt;
        let prompt = match &failure {
            None => prompts::initial(&inputs.query, &inputs.codebase),
            Some(text) => {
                let replacements: Vec<Replacement> = latest
                    .iter()
                    .map(|(path, content)| Replacement {
                        path: path.clone(),
                        content: content.clone(),
                    })
                    .collect();
                prompts::repair(text, &inputs.query, &inputs.codebase, &replacements)
            }
        };
        log.attempt(attempt, "query.txt", &prompt.text())?;
        progress(&Step::Asking { attempt });
        let request = CompletionRequest {
            system: Some(prompt.system.clone()),
            messages: vec![Message::user(prompt.user.clone())],
            tools: Vec::new(),
            tool_choice: ToolChoice::None,
            max_tokens: Some(options.max_tokens),
            json_format: None,
        };
        let response = match provider.complete(&request).await {
            Ok(r) => r,
            Err(err) => {
                log.attempt(attempt, "error.txt", &err.to_string())?;
                finish(false, attempt, &latest, Some(err.to_string()))?;
                return Err(Error::Provider(err));
            }
        };
        let text = response.text();
        log.attempt(attempt, "response.txt", &text)?;

        if previous_response.as_deref().map(str::trim) == Some(text.trim()) {
            let why =
                "the model repeated its previous response; stopping the repair rounds".to_owned();
            progress(&Step::Rejected {
                attempt,
                reasons: vec![why.clone()],
            });
            log.attempt(attempt, "rejected.txt", &why)?;
            return finish(false, attempt, &latest, Some(why));
        }
        previous_response = Some(text.clone());

        // Parse and verify everything before touching anything.
        let reasons: Vec<String> = if response.stop_reason == StopReason::MaxTokens {
            vec![format!(
                "the response was cut off by the output token limit ({} tokens), so its last block may be incomplete: change fewer files per response",
                options.max_tokens
            )]
        } else {
            match parse::parse(&text) {
                Err(problems) => problems.iter().map(ToString::to_string).collect(),
                Ok(blocks) => match policy::verify(&inputs.policy, &blocks) {
                    Err(rejections) => rejections
                        .iter()
                        .map(|r| format!("{}: {}", r.path, r.reason))
                        .collect(),
                    Ok(targets) => {
                        let changes: Vec<Change> = targets
                            .iter()
                            .map(|(target, action)| match action {
                                Action::Write(content) => Change::Write {
                                    rel: target.rel.clone(),
                                    abs: target.abs.clone(),
                                    content: content.clone().into_bytes(),
                                },
                                Action::Delete => Change::Delete {
                                    rel: target.rel.clone(),
                                    abs: target.abs.clone(),
                                },
                            })
                            .collect();
                        match apply::apply(&changes) {
                            Ok(applied) => {
                                for (target, action) in &targets {
                                    latest.insert(
                                        target.rel.clone(),
                                        match action {
                                            Action::Write(c) => Some(c.clone()),
                                            Action::Delete => None,
                                        },
                                    );
                                }
                                let mut list = String::new();
                                for p in &applied.written {
                                    list.push_str(&format!("written {p}\n"));
                                }
                                for p in &applied.deleted {
                                    list.push_str(&format!("deleted {p}\n"));
                                }
                                log.attempt(attempt, "applied.txt", &list)?;
                                progress(&Step::Applied {
                                    attempt,
                                    written: applied.written.clone(),
                                    deleted: applied.deleted.clone(),
                                });
                                Vec::new()
                            }
                            Err(err) if err.restored() => vec![format!(
                                "applying the response failed and every file was restored: {err}"
                            )],
                            Err(err) => {
                                let text = err.to_string();
                                log.attempt(attempt, "error.txt", &text)?;
                                finish(false, attempt, &latest, Some(text))?;
                                return Err(Error::Apply(err));
                            }
                        }
                    }
                },
            }
        };
        if !reasons.is_empty() {
            log.attempt(attempt, "rejected.txt", &reasons.join("\n"))?;
            progress(&Step::Rejected {
                attempt,
                reasons: reasons.clone(),
            });
            failure = Some(rejection_text(&reasons));
            continue;
        }

        let result = build::run_build(project, &build_options)?;
        log.attempt(attempt, "build.txt", &result.log_text())?;
        let status = result.status_text();
        progress(&Step::Built {
            attempt,
            passed: result.passed(),
            status: status.clone(),
        });
        if result.passed() {
            return finish(true, attempt, &latest, None);
        }
        failure = Some(result.prompt_text(options.build_output_bytes));
    }
    let last = failure.unwrap_or_default();
    finish(
        false,
        attempts,
        &latest,
        Some(format!(
            "build.sh still fails after {} repair rounds; the last failure:\n{last}",
            options.max_repairs
        )),
    )
}
