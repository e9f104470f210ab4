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
//!
//! Around every build the protected files ([`crate::protect`]) are compared:
//! a build that changed, created or deleted one fails its attempt, the files are
//! named in the progress, the log (`N-tampered.txt`) and the report, and the run
//! stops there. The first build reports how it was confined ([`Step::Sandbox`]:
//! Landlock, or why not).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use llm::{CompletionRequest, LlmProvider, Message, Redactor, StopReason, ToolChoice};
use safe_io::{Dir, FileKind};

use crate::apply::{self, Change};
use crate::build::{self, BuildOptions};
use crate::config::CONFIG_DIR;
use crate::error::Error;
use crate::logs::RunLog;
use crate::parse::{self, Action};
use crate::policy::{self, Policy};
use crate::prompts::{self, Replacement};
use crate::protect::{self, Protected, Snapshot};
use crate::sandbox::SandboxPolicy;

/// The files a run needs, relative to the project.
pub const QUERY_FILE: &str = "agent-config/query.txt";
/// The code rollup.
pub const ROLLUP_FILE: &str = "agent-config/codeRollup.txt";
/// The build script.
pub const BUILD_SCRIPT: &str = "build.sh";
/// The largest query read: 4 MiB (far more than anyone types).
pub const QUERY_LIMIT: u64 = 4 * 1024 * 1024;
/// The largest code rollup read: 32 MiB (about eight million tokens, beyond
/// any model's context).
pub const ROLLUP_LIMIT: u64 = 32 * 1024 * 1024;
/// The largest `.gitignore` read.
pub const GITIGNORE_LIMIT: u64 = safe_io::fs::CONFIG_LIMIT;

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
    /// The Landlock sandbox `build.sh` runs in (`None`: unconfined).
    pub sandbox: Option<SandboxPolicy>,
    /// Where a sandboxed build's private temporary directory is created.
    pub temp_root: Option<PathBuf>,
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
            sandbox: None,
            temp_root: None,
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
    pub log_dir: std::path::PathBuf,
}

/// Reads `rel` below the project as an input: a regular file, no link on the
/// way, at most `limit` bytes.
fn read_required(
    root: &Dir,
    rel: &'static str,
    limit: u64,
    hint: &'static str,
) -> Result<String, Error> {
    match root.read(rel, limit) {
        Ok(bytes) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
        Err(err) if err.is_not_found() => Err(Error::MissingFile {
            path: rel.to_owned(),
            hint,
        }),
        Err(err) => Err(unsafe_input(rel, &err)),
    }
}

/// Why an input cannot be used, said for a person.
fn unsafe_input(rel: &str, err: &safe_io::Error) -> Error {
    let reason = match err {
        safe_io::Error::Symlink { path } if path.ends_with(CONFIG_DIR) => format!(
            "{CONFIG_DIR}/ is a symbolic link; code-commit reads its files only from a real directory in the project"
        ),
        safe_io::Error::Symlink { .. } => "is a symbolic link; code-commit reads it only as a regular file in the project, never through a link".to_owned(),
        safe_io::Error::NotRegular { kind, .. } => {
            format!("is {}, not a regular file", kind.describe())
        }
        safe_io::Error::NotDirectory { path, kind } => {
            format!("{} is {}, not a directory", path.display(), kind.describe())
        }
        safe_io::Error::TooLarge { limit, .. } => format!(
            "is larger than the limit of {} MiB",
            (limit / (1024 * 1024)).max(1)
        ),
        other => other.to_string(),
    };
    Error::Unsafe {
        path: rel.to_owned(),
        reason,
    }
}

/// Checks that `.gitignore` keeps `agent-config/` out of git: a line
/// `/agent-config` (or `/agent-config/`). `.gitignore` is read as a regular
/// file of at most 1 MiB, never through a link.
pub fn check_gitignore(project: &Path) -> Result<(), Error> {
    let root = Dir::open(project).map_err(|e| unsafe_input(".", &e))?;
    gitignore_ok(&root)
}

fn gitignore_ok(root: &Dir) -> Result<(), Error> {
    let text = match root.read(".gitignore", GITIGNORE_LIMIT) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(err) if err.is_not_found() => return Err(Error::NotIgnored),
        Err(err) => return Err(unsafe_input(".gitignore", &err)),
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
    /// The project directory, opened.
    pub root: Dir,
    /// Where the protected files are.
    pub protected: Protected,
}

/// Refuses a project whose `agent-config/` git tracks (see [`Error::Tracked`]).
pub fn check_untracked(policy: &Policy) -> Result<(), Error> {
    let tracked = policy.tracked_under(CONFIG_DIR).map_err(Error::Git)?;
    match tracked.split_first() {
        None => Ok(()),
        Some((first, rest)) => Err(Error::Tracked {
            path: first.clone(),
            more: rest.len(),
        }),
    }
}

/// The checks of spec 001 before anything is sent: the project is in a git
/// working tree, git tracks nothing under `agent-config/` (checked before
/// anything is read from it), the query and the rollup exist as regular files,
/// `.gitignore` protects `agent-config/`, and `build.sh` is a regular file.
pub fn preflight(project: &Path) -> Result<Inputs, Error> {
    let policy = Policy::new(project)?;
    check_untracked(&policy)?;
    let root = Dir::open(policy.project_dir()).map_err(|e| unsafe_input(".", &e))?;
    let query = read_required(
        &root,
        QUERY_FILE,
        QUERY_LIMIT,
        "write what you want changed in it (the query is sent to the model as is)",
    )?;
    let codebase = read_required(
        &root,
        ROLLUP_FILE,
        ROLLUP_LIMIT,
        "create it with codeRollup.sh before running code-commit",
    )?;
    gitignore_ok(&root)?;
    match root.kind(BUILD_SCRIPT) {
        Ok(Some(FileKind::File)) => {}
        Ok(None) => {
            return Err(Error::MissingFile {
                path: BUILD_SCRIPT.to_owned(),
                hint: "code-commit judges every change by whether build.sh exits 0",
            });
        }
        Ok(Some(kind)) => {
            return Err(Error::Unsafe {
                path: BUILD_SCRIPT.to_owned(),
                reason: format!(
                    "is {}, not a regular file; code-commit runs only a regular build.sh in the project",
                    kind.describe()
                ),
            });
        }
        Err(err) => return Err(unsafe_input(BUILD_SCRIPT, &err)),
    }
    let protected = Protected::new(policy.project_dir(), Some(&policy.git_common_dir()));
    Ok(Inputs {
        query,
        codebase,
        policy,
        root,
        protected,
    })
}

/// Whether git ignores the project's `Cargo.lock` (an error counts as no).
fn lock_ignored(policy: &Policy) -> bool {
    policy.is_ignored("Cargo.lock").unwrap_or(false)
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
    let log = RunLog::create(&inputs.root, chrono::Utc::now(), redactor.clone())?;
    let mut latest: BTreeMap<String, Option<String>> = BTreeMap::new();
    let mut failure: Option<String> = None;
    let mut previous_response: Option<String> = None;
    let mut attempts = 0;
    let build_options = BuildOptions {
        timeout: options.build_timeout,
        remove_env: options.build_remove_env.clone(),
        scrub_values: options.build_scrub_values.clone(),
        sandbox: options.sandbox.clone(),
        temp_root: options.temp_root.clone(),
    };
    let mut sandbox_line: Option<String> = None;
    let mut tampered: Vec<String> = Vec::new();
    // The protected files after the previous build: a difference before the
    // next one was made by a process that build left running.
    let mut after_previous: Option<Snapshot> = None;
    let finish = |passed: bool,
                  attempts: u32,
                  latest: &BTreeMap<String, Option<String>>,
                  failure: Option<String>,
                  tampered: &[String],
                  sandbox: &Option<String>| {
        let report = Report {
            passed,
            attempts,
            changed: latest.keys().cloned().collect(),
            failure,
            tampered: tampered.to_vec(),
            sandbox: sandbox.clone(),
            log_dir: log.dir().to_path_buf(),
        };
        let summary = format!(
            "result: {}\nattempts: {}\nchanged:\n{}{}{}",
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
                .map_or(String::new(), |f| format!("failure:\n{f}\n"))
        );
        log.write("summary.txt", &summary).map(|_| report)
    };

    // A build that changed protected files fails its attempt loudly, is logged,
    // and ends the run: nothing it produced is trusted for another round.
    macro_rules! stop_tampered {
        ($attempt:expr, $changed:expr, $between:expr) => {{
            let message = protect::message($attempt, $changed, $between);
            tampered = $changed.iter().map(ToString::to_string).collect();
            log.attempt($attempt, "tampered.txt", &message)?;
            progress(&Step::Tampered {
                attempt: $attempt,
                message: message.clone(),
            });
            finish(
                false,
                $attempt,
                &latest,
                Some(message),
                &tampered,
                &sandbox_line,
            )
        }};
    }

    for attempt in 1..=options.max_repairs + 1 {
        attempts = attempt;
        // Whether this attempt's blocks changed a Cargo.toml (cargo may then
        // rewrite Cargo.lock: see `protect::lock_update_allowed`).
        let mut manifest_changed = false;
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
                finish(
                    false,
                    attempt,
                    &latest,
                    Some(err.to_string()),
                    &tampered,
                    &sandbox_line,
                )?;
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
            return finish(false, attempt, &latest, Some(why), &tampered, &sandbox_line);
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
                                    content: content.clone().into_bytes(),
                                },
                                Action::Delete => Change::Delete {
                                    rel: target.rel.clone(),
                                },
                            })
                            .collect();
                        match apply::apply(&inputs.root, &changes) {
                            Ok(applied) => {
                                manifest_changed = applied
                                    .written
                                    .iter()
                                    .chain(&applied.deleted)
                                    .any(|p| p == "Cargo.toml" || p.ends_with("/Cargo.toml"));
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
                                finish(
                                    false,
                                    attempt,
                                    &latest,
                                    Some(text),
                                    &tampered,
                                    &sandbox_line,
                                )?;
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

        let before = inputs.protected.snapshot();
        if let Some(previous) = &after_previous {
            let changed = before.changes(previous);
            if !changed.is_empty() {
                return stop_tampered!(attempt, &changed, true);
            }
        }
        let result = build::run_build(project, &build_options)?;
        log.attempt(attempt, "build.txt", &result.log_text())?;
        if sandbox_line.is_none() && build_options.sandbox.is_some() {
            let line = result.sandbox.describe();
            progress(&Step::Sandbox {
                status: line.clone(),
            });
            sandbox_line = Some(line);
        }
        let after = inputs.protected.snapshot();
        let (lock_updates, changed): (Vec<_>, Vec<_>) =
            after.changes(&before).into_iter().partition(|t| {
                protect::lock_update_allowed(t, manifest_changed, || lock_ignored(&inputs.policy))
            });
        if !lock_updates.is_empty() {
            log.attempt(
                attempt,
                "protected.txt",
                "Cargo.lock was updated by the build (cargo rewrites it when a Cargo.toml changes, or creates it when git ignores it); review it with git diff\n",
            )?;
        }
        if !changed.is_empty() {
            return stop_tampered!(attempt, &changed, false);
        }
        after_previous = Some(after);
        let status = result.status_text();
        progress(&Step::Built {
            attempt,
            passed: result.passed(),
            status: status.clone(),
        });
        if result.passed() {
            return finish(true, attempt, &latest, None, &tampered, &sandbox_line);
        }
        // The build's output goes back to the model: a key it printed (plain or
        // encoded) must not.
        failure = Some(redactor.redact(&result.prompt_text(options.build_output_bytes)));
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
        &tampered,
        &sandbox_line,
    )
}
