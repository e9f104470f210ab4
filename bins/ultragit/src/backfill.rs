//! `ultragit backfill [RANGE] [--since DATE] [--max-commits N] [--paths P…]
//! [--concurrency N] [--shard I/N] [--retry-budget D] [--request-timeout D]
//! [--dry-run]`: annotates a repository's existing history, many commits at
//! once (`ultragit_annotate::backfill`).
//!
//! The selection, the shard split, the token estimate and the HTTP options
//! for storms (`backfill::http_options`) are the library's. This module
//! resolves the arguments (`--since` as `read` takes it, `--paths` relative to
//! the current directory; `--retry-budget` and `--request-timeout` over
//! `ultragit.backfill.retryBudget` and `ultragit.backfill.requestTimeout`),
//! builds one provider whose requests all share one `llm::PauseGate` (a
//! `Retry-After` pauses the whole pool, and each call retries within the
//! budget), shows progress on stderr — an `indicatif` bar on a terminal,
//! otherwise a plain line every [`PLAIN_EVERY`], one per failure, and "paused
//! by the provider, resuming in N s" when a pause begins (at most one every
//! [`PLAIN_EVERY`]) — and stops on Ctrl-C or SIGTERM:
//! nothing new is scheduled, the annotations in flight are dropped (a note is
//! only ever written whole, by its final compare-and-swap store), and the
//! summary is printed. A rerun continues where the last one stopped: the notes
//! are the state.
//!
//! A commit the model declines, or one past `maxDiffLines` (no model call), gets
//! its short note and counts as declined or skipped, not as annotated; no later
//! run retries it.
//!
//! Exit status: 0 when every selected commit was annotated, declined or skipped
//! (or a dry run); 1 when any failed or the run was interrupted.

use std::fmt::Write as _;
use std::io::{IsTerminal as _, Write as _};
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, Instant};

use crate::invocation::Invocation;
use clap::Args;
use frontend::provider::{ProviderRequest, connect, provider_config};
use frontend::{CommandError, ErrorKind, Outcome};
use gitctx::{ObjectId, Repo};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use llm::{PauseGate, Redactor};
use safe_io::term::sanitize_line;
use ultragit_annotate::backfill::{
    self, BackfillConfig, Event, Outcome as CommitOutcome, RunOptions, SelectOptions, Selection,
    Shard, Summary,
};
use ultragit_annotate::tools::thousands;
use ultragit_annotate::{AnnotateConfig, LargeCommits, Settings};
use ultragit_read::SinceFilter;

use crate::annotate::{ProviderArgs, count};

/// How often the plain progress line is printed when stderr is not a terminal.
pub const PLAIN_EVERY: Duration = Duration::from_secs(10);

/// The arguments of `ultragit backfill`.
#[derive(Debug, Args)]
#[command(after_long_help = AFTER_HELP)]
pub struct BackfillArgs {
    /// The commits to consider, as `git log` takes them: a revision (with all its
    /// history) or a range such as main~50..main or v1.0.. [default: HEAD]
    #[arg(value_name = "RANGE")]
    range: Option<String>,

    /// Only commits committed at or after DATE: 2025-01-31, 2025-01-31T12:00:00Z,
    /// or a commit (its committer date)
    #[arg(long, value_name = "DATE")]
    since: Option<String>,

    /// At most N commits, the newest
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_commits: Option<u64>,

    /// Only commits touching these files or directories (relative to the current
    /// directory); such a commit is annotated whole
    #[arg(long, value_name = "PATH", num_args = 1..)]
    paths: Vec<String>,

    /// Annotations in flight at once (1 to 64)
    #[arg(long, value_name = "N", default_value_t = 4,
          value_parser = clap::value_parser!(u16).range(1..=backfill::MAX_CONCURRENCY as i64))]
    concurrency: u16,

    /// Only shard I of N (1-based), for N machines or CI jobs sharing one history
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    shard: Option<Shard>,

    /// How long each model call may keep retrying 429s, 5xx answers and timeouts,
    /// pauses included: 90s, 5m, 1h [default: ultragit.backfill.retryBudget, or 5m]
    #[arg(long, value_name = "DURATION", value_parser = backfill::parse_retry_budget)]
    retry_budget: Option<Duration>,

    /// Cut off one attempt of a model call after DURATION (then retried within the
    /// budget) [default: ultragit.backfill.requestTimeout, or 3m]
    #[arg(long, value_name = "DURATION", value_parser = backfill::parse_request_timeout)]
    request_timeout: Option<Duration>,

    /// List the commits and estimate the input tokens; no model call, nothing written
    #[arg(long)]
    dry_run: bool,

    #[command(flatten)]
    provider: ProviderArgs,
}

const AFTER_HELP: &str = "\
Picks the commits of RANGE that are not merges, not annotated yet and not trivial \
(no changes, lockfiles, whitespace or binary files only), newest first, and annotates \
them as `ultragit annotate` would, N at once. A 429 (or any answer with Retry-After) \
pauses every annotation in flight, not just the one that got it; when the pause ends, \
one request goes first and the rest follow once it is answered, so a rate-limit storm \
costs about one request per pause, whatever the concurrency. Meanwhile the progress says \
\"paused by the provider, resuming in N s\".

Storms are ridden out, not failed: each model call retries 429s, 5xx answers, \
timeouts and dropped connections for up to --retry-budget (default 5m; git config \
ultragit.backfill.retryBudget), waiting as Retry-After asks (up to a minute) or \
backing off, the pauses counted in the budget. An attempt that gets no answer within \
--request-timeout (default 3m; ultragit.backfill.requestTimeout) is cut off and \
retried. A call still failing when the budget runs out fails its commit, saying so. \
Errors that retrying cannot fix (400, 401, 403) fail the commit at once. \
.ultragit-config.toml may set backfill_retry_budget (30s to 1h) and \
backfill_request_timeout (10s to 30m) under [ultragit.annotate].

Resumable: the notes are the state. Ctrl-C (or SIGTERM) stops scheduling, drops the \
annotations in flight and prints the summary; a note is only ever stored whole, so \
running the same command again continues with what is left. Failures are listed in \
.git/ultragit/failed.log and retried by the next run.

--shard I/N takes the commits whose id, read as a number (its first 64 bits), leaves \
remainder I-1 when divided by N: the split depends on the commit id alone, so it is \
the same on every machine and every rerun, and each commit is in exactly one shard. \
Run N jobs with --shard 1/N ... N/N and join their notes with `ultragit sync`.

--dry-run lists the commits (full id and changed lines, newest first; a commit past \
maxDiffLines is marked: it will be skipped with a note, no model call) and estimates \
the input tokens: per commit 2 x (P + D), where P is the prompt and tool definitions \
every model call starts from and D is 15 tokens per changed line (the first message \
carries the diff, sent again with the second call), for a typical run of two calls; \
nothing for a commit past maxDiffLines (unless ultragit.largeCommits = chunk: one \
such run per chunk and a call across them).

A commit the model finds nothing to record on is counted as declined, one past \
maxDiffLines as skipped; both get a short note saying so and are not retried.

Progress goes to stderr: a progress bar on a terminal (done/total, failures, tokens, \
ETA), otherwise a line every 10 seconds, one per failure, and one when the provider \
pauses the pool (at most one every 10 seconds). The summary goes to stdout.

--paths takes every word after it: give RANGE before it (or end the paths with --).

Examples:
  ultragit backfill --dry-run
  ultragit backfill --since 2025-01-01 --concurrency 8
  ultragit backfill main~200..main --paths src
  ultragit backfill --shard 2/4
  ultragit backfill --retry-budget 30m --request-timeout 10m   # a slow, busy provider

Provider configuration as for `ultragit annotate` (see `ultragit annotate --help`).

Exit status: 0 when every selected commit was annotated, declined or skipped, and for \
--dry-run; \
1 when any commit failed, the run was interrupted, or the command failed; 2 on usage \
errors.";

fn parse_shard(text: &str) -> Result<Shard, String> {
    text.parse()
}

/// Runs `ultragit backfill` in the repository containing `cwd`; `lookup` reads
/// the environment.
pub fn run(args: &BackfillArgs, at: &Invocation) -> Result<Outcome, CommandError> {
    let cwd = at.cwd();
    let lookup = |name: &str| at.env(name);
    let ctx = at.ctx;
    let repo = Repo::discover(cwd)?;
    let settings = Settings::load(&repo, &args.provider.flags())?;
    for warning in &settings.warnings {
        ctx.warn(warning);
    }
    let options = SelectOptions {
        range: args.range.clone().unwrap_or_else(|| "HEAD".to_owned()),
        since: args
            .since
            .as_deref()
            .map(|text| since(&repo, text))
            .transpose()?,
        paths: args
            .paths
            .iter()
            .map(|p| repo_relative(repo.root(), cwd, p))
            .collect::<Result<_, _>>()?,
        max_commits: args
            .max_commits
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
        shard: args.shard,
        docs_paths: settings.limits.docs_paths.clone(),
    };
    let selection = backfill::select(&repo, &options)?;
    if args.dry_run {
        return Ok(Outcome::text(dry_run(&selection, &settings.limits)));
    }
    if selection.commits.is_empty() {
        return Ok(Outcome::text(format!(
            "backfill: nothing to annotate ({})\n",
            left_out(&selection)
        )));
    }

    let provider_settings = &settings.provider;
    let request = ProviderRequest {
        kind: provider_settings.kind,
        model: &provider_settings.model,
        base_url: provider_settings.base_url.as_deref(),
        api_key_env: provider_settings.api_key_env.as_deref(),
    };
    let mut config = provider_config(&request, lookup).map_err(|err| {
        CommandError::from(err).map_message(|message| {
            format!("{message} (or set ultragit.apiKeyEnv; `none` for a server without keys)")
        })
    })?;
    let patience = BackfillConfig {
        retry_budget: args.retry_budget.unwrap_or(settings.backfill.retry_budget),
        request_timeout: args
            .request_timeout
            .unwrap_or(settings.backfill.request_timeout),
    };
    let gate = PauseGate::new();
    config.http = backfill::http_options(&patience, config.http, &gate);
    let (provider, redactor) = connect(config, ctx)?;

    let commits: Vec<ObjectId> = selection.commits.iter().map(|c| c.id).collect();
    let concurrency = usize::from(args.concurrency);
    let mut progress = Progress::new(commits.len(), redactor.clone());
    progress.line(&format!(
        "backfill: {} to annotate, {concurrency} at once ({})",
        count(commits.len(), "commit", "commits"),
        left_out(&selection)
    ));
    let summary = ctx.block_on(backfill::run(
        repo.root(),
        &commits,
        provider,
        &settings.limits,
        &RunOptions {
            concurrency,
            redactor,
            pause: Some(gate.clone()),
        },
        stop_signal(),
        |event| progress.on_event(event),
    ))?;
    progress.finish();
    for why in &summary.unrecorded {
        ctx.warn(format!(
            "a failure could not be written to failed.log: {why}"
        ));
    }
    let text = summary_text(&summary, gate.pauses());
    Ok(if summary.complete() {
        Outcome::text(text)
    } else {
        Outcome::text(text).failed()
    })
}

/// `--since`: a date, or a commit's committer date.
fn since(repo: &Repo, text: &str) -> Result<chrono::DateTime<chrono::Utc>, CommandError> {
    match SinceFilter::parse(text) {
        Ok(SinceFilter::Date(when)) => Ok(when),
        Ok(SinceFilter::Sha(rev)) => {
            let id = repo.resolve_commit(&rev).map_err(|err| {
                CommandError::from(err).context(format_args!(
                    "--since '{rev}' is neither a date (2025-01-31) nor a commit"
                ))
            })?;
            Ok(repo.commit_info_by_id(id)?.committer.time.to_utc())
        }
        Err(err) => Err(CommandError::new(ErrorKind::Usage, err.to_string())),
    }
}

/// `arg` (relative to `cwd`, or absolute) as a path relative to the top of the
/// working tree; an error when it lies outside.
fn repo_relative(root: &Path, cwd: &Path, arg: &str) -> Result<String, CommandError> {
    let canonical = |path: &Path| path.canonicalize().unwrap_or_else(|_| path.to_owned());
    let (root, cwd) = (canonical(root), canonical(cwd));
    let mut joined = PathBuf::new();
    for component in cwd.join(arg).components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                joined.pop();
            }
            other => joined.push(other),
        }
    }
    let outside = || {
        CommandError::new(
            ErrorKind::User,
            format!(
                "--paths '{arg}' is outside the working tree {}",
                root.display()
            ),
        )
    };
    let rel = joined.strip_prefix(&root).map_err(|_| outside())?;
    let parts: Vec<&str> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(part) => part.to_str(),
            _ => None,
        })
        .collect();
    Ok(if parts.is_empty() {
        ".".to_owned()
    } else {
        parts.join("/")
    })
}

/// The dry run's report: one line per commit, then the totals and estimate.
fn dry_run(selection: &Selection, limits: &AnnotateConfig) -> String {
    let mut out = String::new();
    let mut too_large = 0;
    for commit in &selection.commits {
        let skip = commit.changed_lines > u64::from(limits.max_diff_lines)
            && limits.large_commits == LargeCommits::Skip;
        too_large += usize::from(skip);
        let _ = writeln!(
            out,
            "{} {}{}",
            commit.id.to_hex(),
            count(
                usize::try_from(commit.changed_lines).unwrap_or(usize::MAX),
                "changed line",
                "changed lines"
            ),
            if skip {
                " (too large: a note, no model call)"
            } else {
                ""
            }
        );
    }
    let tokens = backfill::estimate_input_tokens(&selection.commits, limits);
    let _ = writeln!(
        out,
        "dry run: {} to annotate ({}{}); about {} input tokens \
         (2 x (prompt + 15 per changed line) per commit)",
        count(selection.commits.len(), "commit", "commits"),
        left_out(selection),
        if too_large > 0 {
            format!("; {too_large} too large: a note each, no model call")
        } else {
            String::new()
        },
        thousands(tokens)
    );
    out
}

/// What the selection left out, e.g. `of 12 commits: 1 merge, 3 annotated, …`.
fn left_out(selection: &Selection) -> String {
    let mut parts = vec![format!(
        "of {} in the range",
        count(selection.considered, "commit", "commits")
    )];
    for (n, what) in [
        (selection.merges, "merges"),
        (selection.annotated, "already annotated"),
        (selection.trivial, "trivial"),
        (selection.other_shards, "in other shards"),
        (selection.over_limit, "past --max-commits"),
    ] {
        if n > 0 {
            parts.push(format!("{n} {what}"));
        }
    }
    parts.join(", ")
}

/// The final summary for stdout.
fn summary_text(summary: &Summary, pauses: u64) -> String {
    let declined = if summary.declined > 0 {
        format!(" {} declined,", summary.declined)
    } else {
        String::new()
    };
    let mut out = format!(
        "backfill: {} annotated,{declined} {} skipped, {} failed of {}; {} input and {} output \
         tokens\n",
        summary.annotated,
        summary.skipped,
        summary.failed,
        count(summary.total, "commit", "commits"),
        thousands(summary.input_tokens),
        thousands(summary.output_tokens),
    );
    if pauses > 0 {
        let _ = writeln!(
            out,
            "the provider asked to slow down {}; every annotation paused meanwhile",
            count(
                usize::try_from(pauses).unwrap_or(usize::MAX),
                "time",
                "times"
            )
        );
    }
    if summary.failed > 0 {
        out.push_str("failures are listed in .git/ultragit/failed.log; a rerun retries them\n");
    }
    if summary.interrupted {
        let _ = writeln!(
            out,
            "interrupted: {} dropped in flight, {} not started; run the same command again to continue",
            summary.dropped, summary.not_started
        );
    }
    out
}

/// `paused by the provider, resuming in N s`, N rounded up (at least 1).
fn pause_text(resuming_in: Duration) -> String {
    let seconds = resuming_in.as_secs() + u64::from(resuming_in.subsec_nanos() > 0);
    format!("paused by the provider, resuming in {} s", seconds.max(1))
}

/// Completes on Ctrl-C (SIGINT) or SIGTERM; never when the handlers cannot be
/// installed.
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) {
            (Ok(mut interrupt), Ok(mut terminate)) => {
                tokio::select! {
                    _ = interrupt.recv() => {}
                    _ = terminate.recv() => {}
                }
            }
            _ => std::future::pending().await,
        }
    }
    #[cfg(not(unix))]
    {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// Progress on stderr: a bar on a terminal, plain lines otherwise.
struct Progress {
    total: usize,
    done: usize,
    failed: usize,
    tokens: u64,
    started: Instant,
    redactor: Redactor,
    view: View,
    /// When the plain pause line was last printed: at most one every
    /// [`PLAIN_EVERY`], however often the gate opens and closes.
    pause_line_at: Option<Instant>,
}

enum View {
    Bar(ProgressBar),
    Lines { last: Instant },
}

impl Progress {
    fn new(total: usize, redactor: Redactor) -> Progress {
        let now = Instant::now();
        let view = if std::io::stderr().is_terminal() {
            let bar =
                ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
            let style =
                ProgressStyle::with_template("{wide_bar} {pos}/{len} {msg} [{elapsed}, ETA {eta}]")
                    .unwrap_or_else(|_| ProgressStyle::default_bar());
            bar.set_style(style);
            bar.enable_steady_tick(Duration::from_millis(500));
            View::Bar(bar)
        } else {
            View::Lines { last: now }
        };
        Progress {
            total,
            done: 0,
            failed: 0,
            tokens: 0,
            started: now,
            redactor,
            view,
            pause_line_at: None,
        }
    }

    /// One line on stderr (above the bar when there is one), control characters
    /// escaped and secrets masked.
    fn line(&self, text: &str) {
        let text = sanitize_line(&self.redactor.redact(text)).into_owned();
        match &self.view {
            View::Bar(bar) => bar.println(text),
            View::Lines { .. } => {
                let _ = writeln!(std::io::stderr(), "{text}");
            }
        }
    }

    fn on_event(&mut self, event: Event<'_>) {
        let (commit, outcome, usage) = match event {
            Event::Finished {
                commit,
                outcome,
                usage,
            } => (commit, outcome, usage),
            Event::Paused { resuming_in } => return self.paused(resuming_in),
            Event::Resumed => return self.resumed(),
            _ => return,
        };
        self.done += 1;
        self.tokens += usage.input_tokens.unwrap_or(0) + usage.output_tokens.unwrap_or(0);
        if let CommitOutcome::Failed { reason } = outcome {
            self.failed += 1;
            self.line(&format!("failed {}: {reason}", commit.short()));
        }
        let message = self.message();
        match &mut self.view {
            View::Bar(bar) => {
                bar.set_position(self.done as u64);
                bar.set_message(message);
            }
            View::Lines { last } => {
                if last.elapsed() >= PLAIN_EVERY {
                    *last = Instant::now();
                    let eta = self
                        .eta()
                        .map(|e| format!(", about {e} left"))
                        .unwrap_or_default();
                    self.line(&format!(
                        "backfill: {}/{} done, {message}{eta}",
                        self.done, self.total
                    ));
                }
            }
        }
    }

    /// The provider keeps the pool paused for `resuming_in` more: the bar says
    /// so; a plain line when a pause begins, at most one every [`PLAIN_EVERY`]
    /// (a storm opens and closes the gate every second).
    fn paused(&mut self, resuming_in: Duration) {
        let text = pause_text(resuming_in);
        match &self.view {
            View::Bar(bar) => bar.set_message(text),
            View::Lines { .. } => {
                if self
                    .pause_line_at
                    .is_none_or(|at| at.elapsed() >= PLAIN_EVERY)
                {
                    self.pause_line_at = Some(Instant::now());
                    self.line(&format!(
                        "backfill: {text} ({}/{} done)",
                        self.done, self.total
                    ));
                }
            }
        }
    }

    fn resumed(&mut self) {
        if let View::Bar(bar) = &self.view {
            bar.set_message(self.message());
        }
    }

    fn message(&self) -> String {
        format!("{} failed, {} tokens", self.failed, thousands(self.tokens))
    }

    /// The time left at the pace so far.
    fn eta(&self) -> Option<String> {
        if self.done == 0 || self.done >= self.total {
            return None;
        }
        let per = self.started.elapsed() / self.done as u32;
        let left = per * (self.total - self.done) as u32;
        let secs = left.as_secs();
        Some(if secs >= 3600 {
            format!("{}h {}m", secs / 3600, secs % 3600 / 60)
        } else if secs >= 60 {
            format!("{}m {}s", secs / 60, secs % 60)
        } else {
            format!("{secs}s")
        })
    }

    fn finish(&self) {
        if let View::Bar(bar) = &self.view {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_made_relative_to_the_top() {
        let dir = tempfile_dir();
        let root = dir.as_path();
        let sub = root.join("src");
        std::fs::create_dir_all(&sub).unwrap();
        assert_eq!(repo_relative(root, &sub, "lib.rs").unwrap(), "src/lib.rs");
        assert_eq!(repo_relative(root, &sub, "../docs/").unwrap(), "docs");
        assert_eq!(repo_relative(root, &sub, "..").unwrap(), ".");
        assert_eq!(repo_relative(root, root, "./a//b").unwrap(), "a/b");
        let absolute = root.join("x/y").display().to_string();
        assert_eq!(repo_relative(root, &sub, &absolute).unwrap(), "x/y");
        assert!(repo_relative(root, &sub, "../..").is_err());
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn the_pause_reads_in_whole_seconds_rounded_up() {
        for (millis, text) in [
            (1, "1 s"),
            (999, "1 s"),
            (1000, "1 s"),
            (1001, "2 s"),
            (59_500, "60 s"),
        ] {
            assert_eq!(
                pause_text(Duration::from_millis(millis)),
                format!("paused by the provider, resuming in {text}")
            );
        }
    }

    fn tempfile_dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ultragit-backfill-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.canonicalize().unwrap()
    }
}
