//! `backfill`: annotating a repository's existing history, many commits at once.
//!
//! **Selection** ([`select`]): the commits of a range (default `HEAD`), newest
//! first as `git log` lists them, that are not merges, not annotated yet, not
//! trivial, optionally committed since a date, touching given paths, in one
//! shard, at most N. One `git log --numstat` process reads the whole range; the
//! notes are listed once, in-process. Triviality is first judged from the
//! numstat alone (no changes, lockfiles only, binary files only); what needs the
//! diff itself (whitespace-only changes) is found when the commit's context is
//! gathered, before any model call, and the commit is then counted as skipped.
//!
//! **Shards** ([`Shard`]): `I/N` takes the commits whose id, read as a number
//! (its first 64 bits, big-endian), leaves remainder `I − 1` when divided by `N`.
//! The split depends on nothing but the commit id, so it is the same on every
//! machine and every rerun, and each commit is in exactly one of the `N` shards.
//!
//! **Estimate** ([`estimate_input_tokens`]): see [`TOKENS_PER_CHANGED_LINE`].
//!
//! **Running** ([`run`]): up to `concurrency` annotations at once on the tokio
//! runtime, each the same pipeline as `annotate` (gather and store on blocking
//! threads, the agent run in between). The caller gives every request of the
//! provider one shared [`llm::PauseGate`], so a `Retry-After` holds back the
//! whole pool, and passes the gate in [`RunOptions::pause`] too: while it is
//! closed, [`Event::Paused`] says how long the provider asked the pool to
//! wait (every half second), and [`Event::Resumed`] when it opens again.
//!
//! **Storms** ([`http_options`]): the provider of a backfill retries each
//! model call within a time budget ([`BackfillConfig::retry_budget`], 5 min
//! by default) rather than five quick attempts, honouring `Retry-After` up to
//! a minute, and cuts an attempt off after
//! [`BackfillConfig::request_timeout`]. Time spent at the closed gate counts
//! against the budget but is never an attempt, and after each pause one
//! request probes while the rest wait, so a 429 storm of minutes costs about
//! one request per pause, whatever the concurrency. A call still failing when
//! its budget runs out fails the commit with a reason that names the budget
//! ([`llm::LlmError::RetryBudgetSpent`]); errors that are not retryable (400,
//! 401, …) fail it at once. The budget is per model call: a commit of several
//! calls may take longer in all.
//!
//! A note is written only by the final compare-and-swap store (a
//! note that appeared meanwhile is merged with [`ultragit_schema::merge`]), so a
//! run stopped at any point — by the `stop` future, or killed — leaves no partial
//! note, and a rerun selects what is still missing: the notes are the state.
//! Each failure is appended to `failed.log` ([`ultragit_notes::record_failure`]).

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent::NullSink;
use chrono::{DateTime, Utc};
use gitctx::{ObjectId, Repo};
use llm::{
    CompletionRequest, CompletionResponse, HttpOptions, LlmError, LlmProvider, PauseGate, Redactor,
    RetryPolicy, Usage,
};
use tokio::task::JoinSet;
use ultragit_schema::merge::{TextMerge, merge_texts};

use crate::config::{AnnotateConfig, CHUNK_FILE_THRESHOLD, LargeCommits, is_docs};
use crate::error::AnnotateError;
use crate::gather::{AnnotationContext, CommitInfo, Trivial, gather, is_lockfile, triviality};
use crate::run::annotate_commit;
use crate::{NOTES_REF, prompt, tools};
use ultragit_notes::record_failure;

pub use crate::config::{BackfillConfig, parse_request_timeout, parse_retry_budget};

/// The most annotations [`run`] keeps in flight, whatever is asked.
pub const MAX_CONCURRENCY: usize = 64;

/// How often [`run`] looks at the pause gate for [`Event::Paused`].
pub const PAUSE_CHECK_EVERY: Duration = Duration::from_millis(500);

/// The HTTP options of a backfill's provider (module docs, "Storms"): `base`
/// (proxies, size limits) with `config`'s request timeout, a retry policy
/// within its budget, an overall limit of the budget plus one request
/// timeout (the last retry may start at the end of the budget), and every
/// request sharing `gate`.
pub fn http_options(config: &BackfillConfig, base: HttpOptions, gate: &PauseGate) -> HttpOptions {
    HttpOptions {
        request_timeout: config.request_timeout,
        overall_timeout: config.retry_budget + config.request_timeout,
        retry: RetryPolicy::within(config.retry_budget),
        pause: Some(gate.clone()),
        ..base
    }
}

/// `--shard I/N`: one of `N` deterministic parts of the commits (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// 1-based: `1..=count`.
    index: u32,
    count: u32,
}

impl Shard {
    /// The most shards a history can be split into.
    pub const MAX_COUNT: u32 = 100_000;

    /// Shard `index` (1-based) of `count`.
    pub fn new(index: u32, count: u32) -> Result<Shard, String> {
        if count == 0 || count > Shard::MAX_COUNT {
            return Err(format!(
                "the number of shards must be between 1 and {}",
                Shard::MAX_COUNT
            ));
        }
        if index == 0 || index > count {
            return Err(format!(
                "shard {index} does not exist: shards are numbered 1 to {count}"
            ));
        }
        Ok(Shard { index, count })
    }

    /// The 1-based shard number.
    pub fn index(self) -> u32 {
        self.index
    }

    /// How many shards there are.
    pub fn count(self) -> u32 {
        self.count
    }

    /// The shard (1-based) `commit` belongs to when history is split `count` ways.
    pub fn of(commit: ObjectId, count: u32) -> u32 {
        let bytes = commit.as_bytes();
        let mut prefix = [0u8; 8];
        prefix.copy_from_slice(&bytes[..8]);
        let number = u64::from_be_bytes(prefix);
        (number % u64::from(count.max(1))) as u32 + 1
    }

    /// Whether `commit` is in this shard.
    pub fn contains(self, commit: ObjectId) -> bool {
        Shard::of(commit, self.count) == self.index
    }
}

impl FromStr for Shard {
    type Err = String;

    /// `I/N`, e.g. `2/4`.
    fn from_str(text: &str) -> Result<Shard, String> {
        let (index, count) = text
            .trim()
            .split_once('/')
            .ok_or_else(|| format!("expected I/N (e.g. 1/4), got '{text}'"))?;
        let number = |part: &str| {
            part.trim()
                .parse::<u32>()
                .map_err(|_| format!("expected I/N with whole numbers (e.g. 1/4), got '{text}'"))
        };
        Shard::new(number(index)?, number(count)?)
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// What [`select`] picks from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectOptions {
    /// A revision or range as `git log` takes it (`HEAD`, `main~50..main`,
    /// `v1.0..`).
    pub range: String,
    /// Only commits committed at or after this time.
    pub since: Option<DateTime<Utc>>,
    /// Only commits touching these repository-relative paths (files or
    /// directories); the whole commit is annotated all the same.
    pub paths: Vec<String>,
    /// At most this many commits (the newest).
    pub max_commits: Option<usize>,
    pub shard: Option<Shard>,
    /// The documentation path rules ([`AnnotateConfig::docs_paths`]): a
    /// commit touching only such files is trivial.
    pub docs_paths: Vec<String>,
}

impl Default for SelectOptions {
    fn default() -> Self {
        SelectOptions {
            range: "HEAD".to_owned(),
            since: None,
            paths: Vec::new(),
            max_commits: None,
            shard: None,
            docs_paths: AnnotateConfig::default().docs_paths,
        }
    }
}

/// A commit [`select`] picked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidate {
    pub id: ObjectId,
    /// Added plus deleted lines of its text files, lockfiles left out.
    pub changed_lines: u64,
    /// Files it changes.
    pub files: usize,
}

/// The commits to annotate, and how many of the range were left out and why.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// Newest first.
    pub commits: Vec<Candidate>,
    /// Commits of the range (and `--since`, `--paths`) looked at, merges included.
    pub considered: usize,
    pub merges: usize,
    /// Already annotated (a note exists, readable or not).
    pub annotated: usize,
    /// Trivial by their numstat (no changes, lockfiles, documentation or
    /// binary files only).
    pub trivial: usize,
    /// In another shard.
    pub other_shards: usize,
    /// Past `max_commits`.
    pub over_limit: usize,
}

/// Picks the commits to annotate (module docs, "Selection").
pub fn select(repo: &Repo, options: &SelectOptions) -> Result<Selection, AnnotateError> {
    let range = options.range.trim();
    if range.is_empty() || range.starts_with('-') {
        return Err(AnnotateError::Invalid(format!(
            "'{range}' is not a revision range (e.g. HEAD, main~50..main, v1.0..)"
        )));
    }
    let mut cmd = repo.log_command().config("log.showRoot", "true").args([
        "--no-relative",
        "--full-diff",
        "--numstat",
        "-z",
        "--format=commit %H %P",
    ]);
    if let Some(since) = options.since {
        cmd = cmd.arg(format!("--since=@{}", since.timestamp()));
    }
    cmd = cmd.arg("--end-of-options").arg(range).arg("--");
    cmd = cmd.args(&options.paths);
    let output = cmd.run()?;
    let commits = parse_log(&output.stdout).map_err(|reason| gitctx::Error::Parse {
        args: cmd.display_args(),
        reason,
    })?;

    let annotated: HashSet<ObjectId> = repo
        .notes(NOTES_REF)?
        .list()?
        .into_iter()
        .map(|entry| entry.target)
        .collect();
    let mut selection = Selection {
        considered: commits.len(),
        ..Selection::default()
    };
    for commit in commits {
        if commit.parents > 1 {
            selection.merges += 1;
        } else if annotated.contains(&commit.id) {
            selection.annotated += 1;
        } else if cheap_triviality(&commit.files, &options.docs_paths).is_some() {
            selection.trivial += 1;
        } else if options
            .shard
            .is_some_and(|shard| !shard.contains(commit.id))
        {
            selection.other_shards += 1;
        } else if options
            .max_commits
            .is_some_and(|max| selection.commits.len() >= max)
        {
            selection.over_limit += 1;
        } else {
            selection.commits.push(Candidate {
                id: commit.id,
                changed_lines: commit
                    .files
                    .iter()
                    .filter(|f| !is_lockfile(&f.path))
                    .filter_map(|f| f.changed)
                    .sum(),
                files: commit.files.len(),
            });
        }
    }
    Ok(selection)
}

/// One commit of the `git log` output.
#[derive(Debug, Clone, PartialEq, Eq)]
struct LoggedCommit {
    id: ObjectId,
    parents: usize,
    files: Vec<FileStat>,
}

/// One numstat row: `None` lines for a binary file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FileStat {
    path: String,
    changed: Option<u64>,
}

/// Parses `git log --numstat -z --format='commit %H %P'`: NUL-separated
/// records, each either a commit header or a numstat row `[\n]ADDED\tDELETED\tPATH`
/// (`-` counts for binary files). A row always starts with a count or `-` and a
/// tab, a header with `commit `, so a path can never pass for a header.
fn parse_log(bytes: &[u8]) -> Result<Vec<LoggedCommit>, String> {
    let mut out: Vec<LoggedCommit> = Vec::new();
    for record in bytes.split(|&b| b == 0) {
        let record = record.strip_prefix(b"\n").unwrap_or(record);
        if record.is_empty() {
            continue;
        }
        if let Some(header) = record.strip_prefix(b"commit ") {
            let header = String::from_utf8_lossy(header);
            let mut ids = header.split_whitespace();
            let id = ids
                .next()
                .ok_or("a commit header without an id")?
                .parse::<ObjectId>()
                .map_err(|e| e.to_string())?;
            out.push(LoggedCommit {
                id,
                parents: ids.count(),
                files: Vec::new(),
            });
            continue;
        }
        let stat = parse_numstat(record)
            .ok_or_else(|| format!("unexpected record {:?}", String::from_utf8_lossy(record)))?;
        out.last_mut()
            .ok_or("a numstat row before the first commit")?
            .files
            .push(stat);
    }
    Ok(out)
}

fn parse_numstat(record: &[u8]) -> Option<FileStat> {
    let mut parts = record.splitn(3, |&b| b == b'\t');
    let (added, deleted, path) = (parts.next()?, parts.next()?, parts.next()?);
    let count = |field: &[u8]| -> Option<Option<u64>> {
        if field == b"-" {
            Some(None)
        } else {
            std::str::from_utf8(field)
                .ok()?
                .parse::<u64>()
                .ok()
                .map(Some)
        }
    };
    let (added, deleted) = (count(added)?, count(deleted)?);
    Some(FileStat {
        path: String::from_utf8_lossy(path).into_owned(),
        changed: added.zip(deleted).map(|(a, d)| a + d),
    })
}

/// The triviality a numstat alone shows (see [`crate::triviality`] for the rest).
fn cheap_triviality(files: &[FileStat], docs_paths: &[String]) -> Option<Trivial> {
    if files.is_empty() {
        return Some(Trivial::NoChanges);
    }
    if files.iter().all(|f| is_lockfile(&f.path)) {
        return Some(Trivial::LockfilesOnly);
    }
    if files
        .iter()
        .all(|f| is_lockfile(&f.path) || is_docs(docs_paths, &f.path))
    {
        return Some(Trivial::DocsOnly);
    }
    if files
        .iter()
        .all(|f| is_lockfile(&f.path) || f.changed.is_none())
    {
        return Some(Trivial::NothingToAnnotate);
    }
    None
}

/// Input tokens one changed line costs in the estimate: the line as the agent's
/// diff shows it (about 45 characters with its line number), its share of the
/// hunk's context lines (about 15 more), at 4 characters per token.
///
/// The writer's first message carries the commit and its diff (the grounded
/// first turn), and every request sends it again. So the estimate of a commit
/// is `TURNS × (P + D)`: `P` is the request every turn starts from (system
/// prompt, tool definitions and the first message's fixed text, at 4
/// characters per token), `D` is `TOKENS_PER_CHANGED_LINE` × its changed
/// lines, and a typical run takes [`TURNS`] turns (read one more thing, then
/// emit with the summary). A commit past `maxDiffLines` costs nothing with
/// `largeCommits = skip` (no model call); one annotated in chunks (more than
/// ten files, or past `maxDiffLines` with `chunk`) makes such a run per chunk
/// of `chunkSize` files (at most `maxChunks` past `maxDiffLines`), the diff
/// split between them, and one more call looks across the chunks. Real runs
/// vary with what the model reads.
pub const TOKENS_PER_CHANGED_LINE: u64 = 15;

/// Turns of a typical run in the estimate ([`TOKENS_PER_CHANGED_LINE`]).
pub const TURNS: u64 = 2;

/// The estimated input tokens of annotating `commits` (see
/// [`TOKENS_PER_CHANGED_LINE`]).
pub fn estimate_input_tokens(commits: &[Candidate], config: &AnnotateConfig) -> u64 {
    let per_turn = prompt_tokens();
    commits
        .iter()
        .map(|c| {
            let diff = c.changed_lines * TOKENS_PER_CHANGED_LINE;
            let too_large = c.changed_lines > u64::from(config.max_diff_lines);
            if too_large && config.large_commits == LargeCommits::Skip {
                return 0;
            }
            if !too_large && c.files <= CHUNK_FILE_THRESHOLD {
                return TURNS * (per_turn + diff);
            }
            let mut chunks = (c.files as u64).div_ceil(u64::from(config.chunk_size.max(1)));
            if let Some(max_chunks) = config.max_chunks {
                chunks = chunks.min(u64::from(max_chunks));
            }
            TURNS * (chunks.max(1) * per_turn + diff) + per_turn
        })
        .sum()
}

/// The tokens of the request every turn starts from (see
/// [`TOKENS_PER_CHANGED_LINE`]), measured on the real prompts and tools.
fn prompt_tokens() -> u64 {
    let context = AnnotationContext {
        repo_root: PathBuf::new(),
        commit: CommitInfo {
            sha: String::new(),
            message: String::new(),
            author: String::new(),
            timestamp: DateTime::<Utc>::UNIX_EPOCH,
            parent_shas: Vec::new(),
        },
        diffs: Vec::new(),
        skipped: Vec::new(),
        file_contents: HashMap::new(),
        ast_outlines: HashMap::new(),
        author_context: None,
        recent_annotations: Vec::new(),
    };
    let budget = crate::budget::Budget::default();
    let opening = prompt::first_message(&context, &[], None, budget.diff, budget.commit);
    let registry = tools::registry(
        Arc::new(context),
        tools::Scope {
            files: Vec::new(),
            summarize_diff: false,
            not_offered: Vec::new(),
        },
        tools::Collector::default(),
    );
    let tools = serde_json::to_string(&registry.specs()).map_or(0, |t| t.len());
    let chars = prompt::system_prompt(None).len() + opening.len() + tools;
    chars as u64 / 4
}

/// How [`run`] runs.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Annotations in flight at once (1 to [`MAX_CONCURRENCY`]).
    pub concurrency: usize,
    /// Masks the provider's secrets in the reasons written to `failed.log`.
    pub redactor: Redactor,
    /// The gate the provider's requests share ([`HttpOptions::pause`]), watched
    /// for [`Event::Paused`]; `None`: no pause events.
    pub pause: Option<PauseGate>,
}

/// What became of one commit.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// A note was stored.
    Annotated {
        regions: usize,
        /// Validation problems and partial-result notices.
        warnings: Vec<String>,
    },
    /// Trivial once its diff was read; no model call.
    Skipped(Trivial),
    /// Past `maxDiffLines` (`largeCommits = skip`): no model call; a note
    /// records the skip (`reason`), so no later run retries it.
    TooLarge { reason: String },
    /// The model found nothing semantic to record; a note says so
    /// (`reason`), so no later run retries it.
    Declined { reason: String },
    /// The annotation failed (recorded in `failed.log`).
    Failed { reason: String },
}

/// Progress, as [`run`] reports it.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Event<'a> {
    /// The provider asked the pool to wait: the gate of
    /// [`RunOptions::pause`] stays closed for `resuming_in` more (reported
    /// every [`PAUSE_CHECK_EVERY`] while it is closed).
    Paused { resuming_in: Duration },
    /// The gate opened again after [`Event::Paused`].
    Resumed,
    /// The commit's annotation started.
    Started { commit: ObjectId },
    /// The commit is done; `usage` is what its model calls cost.
    Finished {
        commit: ObjectId,
        outcome: &'a Outcome,
        usage: Usage,
    },
}

/// What a [`run`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Commits it was given.
    pub total: usize,
    pub annotated: usize,
    /// The model found nothing to record (a note says so).
    pub declined: usize,
    /// Trivial, or too large (the note of a too-large commit says so).
    pub skipped: usize,
    pub failed: usize,
    /// The `stop` future fired: scheduling stopped and the annotations in flight
    /// were dropped.
    pub interrupted: bool,
    /// In flight when the run was stopped, and dropped. Nothing partial is
    /// stored; one that was already storing its note may still land, whole.
    pub dropped: usize,
    /// Never started because the run was stopped.
    pub not_started: usize,
    /// Tokens of every model call, failed annotations included (0 when the
    /// provider does not report them).
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Failures that could not be appended to `failed.log`, and why.
    pub unrecorded: Vec<String>,
}

impl Summary {
    /// True when every commit was annotated or skipped.
    pub fn complete(&self) -> bool {
        self.failed == 0 && !self.interrupted
    }
}

/// Annotates `commits` (module docs, "Running"). Returns when all are done or
/// `stop` completes; `on_event` sees each start and finish.
pub async fn run(
    repo_path: &Path,
    commits: &[ObjectId],
    provider: Arc<dyn LlmProvider>,
    config: &AnnotateConfig,
    options: &RunOptions,
    stop: impl Future<Output = ()>,
    mut on_event: impl FnMut(Event<'_>),
) -> Summary {
    let concurrency = options.concurrency.clamp(1, MAX_CONCURRENCY);
    let job = Arc::new(Job {
        repo_path: repo_path.to_path_buf(),
        provider,
        config: config.clone(),
        redactor: options.redactor.clone(),
    });
    let mut summary = Summary {
        total: commits.len(),
        ..Summary::default()
    };
    let mut queue = commits.iter().copied();
    let mut tasks: JoinSet<Finished> = JoinSet::new();
    let mut in_flight: HashMap<tokio::task::Id, ObjectId> = HashMap::new();
    let mut stop = std::pin::pin!(stop);
    let mut checks = tokio::time::interval(PAUSE_CHECK_EVERY);
    checks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut paused = false;
    loop {
        while !summary.interrupted && tasks.len() < concurrency {
            let Some(commit) = queue.next() else { break };
            on_event(Event::Started { commit });
            let handle = tasks.spawn(Arc::clone(&job).annotate(commit));
            in_flight.insert(handle.id(), commit);
        }
        if tasks.is_empty() {
            break;
        }
        tokio::select! {
            biased;
            () = &mut stop, if !summary.interrupted => {
                summary.interrupted = true;
                tasks.abort_all();
            }
            joined = tasks.join_next_with_id() => {
                let Some(joined) = joined else { break };
                let (commit, finished) = match joined {
                    Ok((id, finished)) => (in_flight.remove(&id), finished),
                    Err(err) if err.is_cancelled() => {
                        in_flight.remove(&err.id());
                        summary.dropped += 1;
                        continue;
                    }
                    Err(err) => {
                        // A panic in our code: a failure of that commit.
                        let commit = in_flight.remove(&err.id());
                        let reason = "internal error: the annotation task panicked".to_owned();
                        let recorded = commit.map(|c| job.record(c, &reason)).unwrap_or(Ok(()));
                        (commit, Finished {
                            outcome: Outcome::Failed { reason },
                            usage: Usage::default(),
                            recorded,
                        })
                    }
                };
                summary.input_tokens += finished.usage.input_tokens.unwrap_or(0);
                summary.output_tokens += finished.usage.output_tokens.unwrap_or(0);
                match &finished.outcome {
                    Outcome::Annotated { .. } => summary.annotated += 1,
                    Outcome::Declined { .. } => summary.declined += 1,
                    Outcome::Skipped(_) | Outcome::TooLarge { .. } => summary.skipped += 1,
                    Outcome::Failed { .. } => summary.failed += 1,
                }
                if let Err(why) = finished.recorded {
                    summary.unrecorded.push(why);
                }
                if let Some(commit) = commit {
                    on_event(Event::Finished {
                        commit,
                        outcome: &finished.outcome,
                        usage: finished.usage,
                    });
                }
            }
            _ = checks.tick(), if options.pause.is_some() => {
                let resuming_in = options.pause.as_ref().map_or(Duration::ZERO, PauseGate::remaining);
                if !resuming_in.is_zero() {
                    paused = true;
                    on_event(Event::Paused { resuming_in });
                } else if paused {
                    paused = false;
                    on_event(Event::Resumed);
                }
            }
        }
    }
    summary.not_started = queue.count();
    summary
}

/// What every annotation task shares.
#[derive(Debug)]
struct Job {
    repo_path: PathBuf,
    provider: Arc<dyn LlmProvider>,
    config: AnnotateConfig,
    redactor: Redactor,
}

/// One task's result.
#[derive(Debug)]
struct Finished {
    outcome: Outcome,
    usage: Usage,
    /// `Err`: the failure could not be appended to `failed.log`.
    recorded: Result<(), String>,
}

impl Job {
    /// One commit: gather, triviality, agent, store; a failure is recorded.
    async fn annotate(self: Arc<Job>, commit: ObjectId) -> Finished {
        let metered = Metered {
            inner: Arc::clone(&self.provider),
            usage: Mutex::new(Usage::default()),
        };
        let outcome = match self.annotate_metered(commit, &metered).await {
            Ok(outcome) => outcome,
            Err(err) => Outcome::Failed {
                reason: self.redactor.redact(&err.to_string()),
            },
        };
        let usage = *metered.usage.lock().unwrap_or_else(|p| p.into_inner());
        let recorded = match &outcome {
            Outcome::Failed { reason } => {
                let job = Arc::clone(&self);
                let reason = reason.clone();
                tokio::task::spawn_blocking(move || job.record(commit, &reason))
                    .await
                    .unwrap_or_else(|err| Err(err.to_string()))
            }
            _ => Ok(()),
        };
        Finished {
            outcome,
            usage,
            recorded,
        }
    }

    async fn annotate_metered(
        self: &Arc<Job>,
        commit: ObjectId,
        provider: &Metered,
    ) -> Result<Outcome, AnnotateError> {
        let job = Arc::clone(self);
        let context = blocking(move || {
            let repo = Repo::discover(&job.repo_path)?;
            Ok(gather(&repo, &commit.to_hex(), None, &job.config)?)
        })
        .await?;
        if let Some(reason) = triviality(&context, &self.config) {
            return Ok(Outcome::Skipped(reason));
        }
        let annotated = annotate_commit(&context, provider, &self.config, &mut NullSink).await?;
        let outcome = match annotated.declined() {
            Some(reason) if annotated.too_large() => Outcome::TooLarge {
                reason: reason.to_owned(),
            },
            Some(reason) => Outcome::Declined {
                reason: reason.to_owned(),
            },
            None => Outcome::Annotated {
                regions: annotated.annotation.regions.len(),
                warnings: annotated.warnings,
            },
        };
        let job = Arc::clone(self);
        let annotation = annotated.annotation;
        blocking(move || {
            let repo = Repo::discover(&job.repo_path)?;
            store_merged(&repo, commit, &annotation.to_json())
        })
        .await?;
        Ok(outcome)
    }

    /// Appends the failure to `failed.log`.
    fn record(&self, commit: ObjectId, reason: &str) -> Result<(), String> {
        let repo = Repo::discover(&self.repo_path).map_err(|e| e.to_string())?;
        record_failure(&repo, &commit.to_hex(), reason).map_err(|e| e.to_string())
    }
}

/// Runs `work` on a blocking thread.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, AnnotateError> + Send + 'static,
) -> Result<T, AnnotateError> {
    tokio::task::spawn_blocking(work).await.map_err(|err| {
        AnnotateError::Invalid(format!("internal error: a blocking task failed: {err}"))
    })?
}

/// Stores `text` as the note of `commit`; a note that appeared since the
/// selection (another run, a hook, a sync) is merged with it, never replaced.
fn store_merged(repo: &Repo, commit: ObjectId, text: &str) -> Result<(), AnnotateError> {
    let notes = repo.notes(NOTES_REF)?;
    let text = match notes.read(commit)? {
        None => text.to_owned(),
        Some(existing) => match merge_texts(&existing, text).0 {
            TextMerge::Ours => return Ok(()),
            TextMerge::Theirs => text.to_owned(),
            TextMerge::Merged(merged) => merged,
        },
    };
    notes.write(commit, &text)?;
    Ok(())
}

/// A provider that adds up the usage of the calls made through it.
#[derive(Debug)]
struct Metered {
    inner: Arc<dyn LlmProvider>,
    usage: Mutex<Usage>,
}

impl LlmProvider for Metered {
    fn complete<'a>(
        &'a self,
        request: &'a CompletionRequest,
    ) -> Pin<Box<dyn Future<Output = Result<CompletionResponse, LlmError>> + Send + 'a>> {
        Box::pin(async move {
            let response = self.inner.complete(request).await?;
            self.usage
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .add(response.usage);
            Ok(response)
        })
    }

    fn supports_tool_use(&self) -> bool {
        self.inner.supports_tool_use()
    }

    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn model(&self) -> &str {
        self.inner.model()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(hex: &str) -> ObjectId {
        hex.parse().unwrap()
    }

    #[test]
    fn shards_parse_and_split_by_the_id_alone() {
        assert_eq!("2/4".parse::<Shard>().unwrap(), Shard::new(2, 4).unwrap());
        assert_eq!(" 1 / 1 ".parse::<Shard>().unwrap().to_string(), "1/1");
        for bad in ["", "3", "0/4", "5/4", "1/0", "a/b", "-1/4", "1/4/2"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        let commit = id("0000000000000007ffffffffffffffffffffffff");
        assert_eq!(Shard::of(commit, 1), 1);
        assert_eq!(Shard::of(commit, 4), 4, "7 mod 4 = 3: the fourth shard");
        assert_eq!(Shard::of(commit, 7), 1);
        assert!(Shard::new(4, 4).unwrap().contains(commit));
        assert!(!Shard::new(3, 4).unwrap().contains(commit));
    }

    #[test]
    fn the_log_parses_headers_rows_and_odd_paths() {
        let a = "1111111111111111111111111111111111111111";
        let b = "2222222222222222222222222222222222222222";
        let c = "3333333333333333333333333333333333333333";
        let raw = format!(
            "commit {a} {b}\0\n3\t1\tsrc/a.rs\0-\t-\tlogo.png\0\
             1\t0\tcommit {c}\0commit {b} {c} {a}\0commit {c}\0\n2\t2\tCargo.lock\0"
        );
        let log = parse_log(raw.as_bytes()).unwrap();
        assert_eq!(log.len(), 3);
        assert_eq!(log[0].id, id(a));
        assert_eq!(log[0].parents, 1);
        assert_eq!(
            log[0].files,
            vec![
                FileStat {
                    path: "src/a.rs".into(),
                    changed: Some(4)
                },
                FileStat {
                    path: "logo.png".into(),
                    changed: None
                },
                FileStat {
                    path: format!("commit {c}"),
                    changed: Some(1)
                },
            ],
            "a path that looks like a header is still a path"
        );
        assert_eq!(log[1].parents, 2);
        assert!(log[1].files.is_empty());
        assert_eq!(log[2].parents, 0);
        assert_eq!(
            cheap_triviality(&log[2].files, &AnnotateConfig::default().docs_paths),
            Some(Trivial::LockfilesOnly)
        );
        assert_eq!(
            cheap_triviality(&log[1].files, &AnnotateConfig::default().docs_paths),
            Some(Trivial::NoChanges)
        );
        assert_eq!(
            cheap_triviality(&log[0].files, &AnnotateConfig::default().docs_paths),
            None
        );
        assert_eq!(
            cheap_triviality(&log[0].files[1..2], &AnnotateConfig::default().docs_paths),
            Some(Trivial::NothingToAnnotate)
        );
        assert!(
            parse_log(b"3\t1\tsrc/a.rs\0").is_err(),
            "a row before a header"
        );
        assert!(parse_log(b"commit nothex\0").is_err());
    }

    #[test]
    fn the_estimate_follows_the_grounded_flow() {
        let config = AnnotateConfig {
            large_commits: LargeCommits::Skip,
            ..AnnotateConfig::default()
        };
        let commit = |lines, files| Candidate {
            id: id("1111111111111111111111111111111111111111"),
            changed_lines: lines,
            files,
        };
        let base = estimate_input_tokens(&[commit(0, 1)], &config);
        assert!(
            base > 2 * 1000,
            "two turns of the prompt and tools, over 1,000 tokens each: {base}"
        );
        // The diff is in the first message, sent again with the second turn.
        assert_eq!(
            estimate_input_tokens(&[commit(100, 1)], &config),
            base + TURNS * 100 * TOKENS_PER_CHANGED_LINE
        );
        // Past maxDiffLines: no model call with largeCommits = skip; in chunks
        // with chunk (the default), one run per chunk and a pass across them.
        let cap = u64::from(config.max_diff_lines);
        assert_eq!(estimate_input_tokens(&[commit(cap + 1, 1)], &config), 0);
        let chunk = AnnotateConfig {
            large_commits: LargeCommits::Chunk,
            ..config.clone()
        };
        let per_turn = base / TURNS;
        assert_eq!(
            estimate_input_tokens(&[commit(cap + 1, 12)], &chunk),
            TURNS * (3 * per_turn + (cap + 1) * TOKENS_PER_CHANGED_LINE) + per_turn,
            "12 files in chunks of 5"
        );
        // More than ten files are chunked whatever their size.
        assert_eq!(
            estimate_input_tokens(&[commit(100, 12)], &config),
            TURNS * (3 * per_turn + 100 * TOKENS_PER_CHANGED_LINE) + per_turn
        );
        assert_eq!(
            estimate_input_tokens(&[commit(10, 1), commit(20, 1)], &config),
            estimate_input_tokens(&[commit(10, 1)], &config)
                + estimate_input_tokens(&[commit(20, 1)], &config)
        );
    }
}
