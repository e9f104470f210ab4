//! The agent loop and assembly (spec 000 "Agent Loop", "Token Budget
//! Management", "Large Diff Chunking Strategy", "Annotation Validation", step 8
//! "Structured-output fallback").
//!
//! - **Grounded first turn:** the first user message holds the commit (message,
//!   author context or squash sources), the files with their change statistics,
//!   and the diff when it fits the diff budget ([`crate::budget`]); otherwise it
//!   names `get_diff_for_file`. Tools remain for more.
//! - **Window:** every request stays within the model's context window
//!   (`ultragit.contextWindow`, default by model family): the first message's
//!   parts are cut to their shares, the runner cuts each tool result to the
//!   room left and drops old results first (`agent::window`), and a request
//!   that still would not fit is not sent
//!   ([`AgentError::ContextWindowExceeded`]). Each request asks for
//!   `maxTokensPerResponse` output tokens (4,096 by default, spec 000) when the
//!   window leaves room for them, and for what it leaves otherwise; an eighth
//!   of the window is what the input budget reserves for the answer.
//! - **Turns:** one model call is one turn; a run makes at most `maxAgentTurns`
//!   calls: the tool loop gets `maxAgentTurns - 1` of them and, if it is still
//!   calling tools then, one last call without tools finishes the run (its text is
//!   the summary). A reply whose emissions are all accepted ends the run at
//!   once, with or without text. With `maxCalls` set (`--max-calls`), a commit
//!   makes at most that many calls in all, the cross-chunk pass included;
//!   stopped by that cap before emitting anything, the run fails with
//!   [`AgentError::MaxCallsExceeded`]. Whatever was emitted by then is kept:
//!   partial results, with a warning. By default there is no such cap: each
//!   run (one per chunk) is bounded by `maxAgentTurns`.
//! - **Summary:** the text of the first reply that carried emissions (the
//!   prompt asks for the one-sentence summary there), never a later turn's —
//!   after a corrected anchor, a later reply says "Re-emitting …" or "Done";
//!   without such text, the first intents.
//! - **Cut-off replies:** a reply cut at the output cap is asked again once
//!   with twice the cap (within the window); still cut, its whole emissions
//!   are kept (the provider drops a call whose arguments were cut) and the
//!   model is told to emit the rest one region per call. An answer cut with
//!   nothing emitted fails with [`AgentError::TokenBudgetExceeded`].
//! - **Large commits** (spec 000 AC7): past `maxDiffLines` changed lines, and
//!   for any commit touching more than 10 files, the commit is annotated in
//!   chunks (`largeCommits = chunk`, the default): files sorted by changed
//!   lines (descending) and grouped `chunkSize` at a time, each chunk under
//!   1,500 changed lines (a larger file is a chunk of its own), every chunk
//!   unless `maxChunks` is set. One agent run per chunk; then one more call
//!   that sees every emitted region and records cross-cutting concerns
//!   spanning chunks. With `largeCommits = skip`, a commit past `maxDiffLines`
//!   gets no model call: a note records it as skipped as too large.
//! - **Declined commits:** only a model that *says* the commit holds nothing
//!   worth recording (`decline_annotation`, or `decline` in the structured
//!   answer) gets a note that says so, with no regions
//!   ([`Annotated::declined`]); it is not a failure. A run that ends with
//!   nothing emitted and nothing said (an empty or broken reply) fails with
//!   [`AgentError::NoAnnotations`], which backfill logs to `failed.log` and
//!   retries on its next run.
//! - **Structured output:** `toolUse = off`, a provider without tool use, or
//!   (`toolUse = auto`) a provider that answers that the model does not support
//!   tools ([`tools_unsupported`]) gets one prompt with the whole context (the
//!   diff within the budget) and answers with one JSON document, validated with
//!   one repair pass.
//! - **Statistics:** each run ends with an `annotate.stats` trace event (turns,
//!   the provider's input and output tokens, the estimated tokens sent), which
//!   `ultragit annotate -v` shows.
//! - **Assembly:** `$schema`, commit, timestamp (now, UTC), task, summary, context
//!   level, regions (exact duplicates removed — the last emission of a region wins),
//!   cross-cutting concerns (deduplicated), provenance (`initial`, or `squash` with
//!   `derived_from` when squash sources were given); then validation strips invalid
//!   regions with a warning and keeps the rest.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent::{Budgets, Runner, StructuredTask, Task, TraceSink};
use llm::{LlmProvider, Message, StopReason};
use serde_json::{Value, json};
use ultragit_schema::{
    Annotation, CrossCuttingConcern, Provenance, ProvenanceOperation, RegionAnnotation, SCHEMA_V1,
    ValidationContext,
};

use crate::budget::Budget;
use crate::config::{
    AnnotateConfig, CHUNK_FILE_THRESHOLD, CHUNK_LINE_BUDGET, LargeCommits, ToolUse,
};
use crate::error::AgentError;
use crate::gather::AnnotationContext;
use crate::prompt;
use crate::tools::{self, Collected, Collector, Scope};

/// What an agent run produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Annotated {
    pub annotation: Annotation,
    /// Validation problems that removed regions, partial-result notices.
    pub warnings: Vec<String>,
    /// Model calls made.
    pub turns: u32,
    /// The turn or token budget cut the run short.
    pub partial: bool,
    /// What the calls cost in tokens.
    pub spent: Spent,
}

/// How the note of a commit nothing was annotated on begins its summary and
/// `provenance.synthesis_notes`.
const NOT_ANNOTATED: &str = "Not annotated: ";

/// How the reason of a commit skipped past `maxDiffLines` begins.
const TOO_LARGE: &str = "skipped as too large: ";

impl Annotated {
    /// Why nothing was annotated, when the note records that instead of
    /// regions: the commit was too large (`maxDiffLines`, `largeCommits =
    /// skip`) or the model declined (it found nothing semantic to record).
    pub fn declined(&self) -> Option<&str> {
        if !self.annotation.regions.is_empty() {
            return None;
        }
        self.annotation
            .provenance
            .synthesis_notes
            .as_deref()
            .and_then(|notes| notes.strip_prefix(NOT_ANNOTATED))
    }

    /// True when the commit was skipped as too large (`maxDiffLines`,
    /// `largeCommits = skip`): no model call, a note records it.
    pub fn too_large(&self) -> bool {
        self.declined()
            .is_some_and(|reason| reason.starts_with(TOO_LARGE))
    }
}

/// The time one agent run may take, all model calls included.
pub const RUN_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// Annotates the commit of `context` (spec 000 `annotate_commit`).
///
/// A commit past `maxDiffLines` gets no model call with `largeCommits = skip`:
/// a note records the skip. The model is asked with tools
/// unless `toolUse = off` or the provider has no tool use; with `toolUse =
/// auto`, a provider that answers that the model does not support tools gets
/// the structured prompt instead.
pub async fn annotate_commit(
    context: &AnnotationContext,
    provider: &dyn LlmProvider,
    config: &AnnotateConfig,
    trace: &mut dyn TraceSink,
) -> Result<Annotated, AgentError> {
    let annotated = annotate_inner(context, provider, config, trace).await?;
    trace.record(&stats_event(&annotated));
    Ok(annotated)
}

/// The per-run statistics `-v` shows: turns, input and output tokens (as the
/// provider reported them, and as estimated from the requests sent).
fn stats_event(annotated: &Annotated) -> agent::Event {
    let tokens = |n: Option<u64>| n.map_or(Value::Null, Value::from);
    agent::Event::info("annotate.stats")
        .with("turns", annotated.turns)
        .with("input_tokens", tokens(annotated.spent.usage.input_tokens))
        .with("output_tokens", tokens(annotated.spent.usage.output_tokens))
        .with("sent_tokens_estimated", annotated.spent.sent_tokens)
        .with("regions", annotated.annotation.regions.len())
        .with(
            "declined",
            annotated.declined().map_or(Value::Null, Value::from),
        )
}

async fn annotate_inner(
    context: &AnnotationContext,
    provider: &dyn LlmProvider,
    config: &AnnotateConfig,
    trace: &mut dyn TraceSink,
) -> Result<Annotated, AgentError> {
    if let Some(skipped) = too_large(context, config) {
        return Ok(skipped);
    }
    let window = config.window_for(provider.model());
    let ask = Ask {
        context,
        provider,
        config,
        window,
    };
    if config.tool_use == ToolUse::Off || !provider.supports_tool_use() {
        return structured(&ask, trace).await;
    }
    match with_tools(&ask, trace).await {
        Err(AgentError::Provider(err))
            if config.tool_use == ToolUse::Auto && tools_unsupported(&err) =>
        {
            let mut annotated = structured(&ask, trace).await?;
            annotated.warnings.insert(
                0,
                format!(
                    "the model does not support tool calls ({err}); annotated with one \
                     structured prompt instead (set ultragit.toolUse = off to skip the attempt)"
                ),
            );
            Ok(annotated)
        }
        other => other,
    }
}

/// The note of a commit past `maxDiffLines` when `largeCommits = skip`: it
/// records the skip; no model is needed. `None` for any other commit.
pub(crate) fn too_large(context: &AnnotationContext, config: &AnnotateConfig) -> Option<Annotated> {
    let changed = context.changed_lines();
    if changed <= config.max_diff_lines || config.large_commits != LargeCommits::Skip {
        return None;
    }
    let reason = format!(
        "{TOO_LARGE}{} changed lines, more than ultragit.maxDiffLines ({}); \
         set ultragit.largeCommits = chunk to annotate such commits in chunks",
        tools::thousands(u64::from(changed)),
        tools::thousands(u64::from(config.max_diff_lines))
    );
    Some(declined(context, reason, 0, Vec::new(), Spent::default()))
}

/// Whether the provider refused the request because the model cannot call
/// tools (Ollama: "does not support tools"; vLLM: "tool choice requires
/// --enable-auto-tool-choice"; llama.cpp: "tools param requires --jinja").
pub fn tools_unsupported(err: &llm::LlmError) -> bool {
    let llm::LlmError::Api {
        status, message, ..
    } = err
    else {
        return false;
    };
    let message = message.to_ascii_lowercase();
    (400..500).contains(status)
        && message.contains("tool")
        && [
            "not support",
            "unsupported",
            "enable-auto-tool-choice",
            "--jinja",
            "not enabled",
        ]
        .iter()
        .any(|hint| message.contains(hint))
}

/// What the calls of a commit cost in tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Spent {
    /// As the provider reported them, all calls summed.
    pub usage: llm::Usage,
    /// Estimated input tokens sent (bytes / 4 of every request), all calls.
    pub sent_tokens: u64,
}

impl Spent {
    fn add(&mut self, outcome: &agent::Outcome, sent: u64) {
        self.usage.add(outcome.usage);
        self.sent_tokens += sent;
    }
}

/// The note of a commit nothing was annotated on, and why.
fn declined(
    context: &AnnotationContext,
    reason: String,
    turns: u32,
    warnings: Vec<String>,
    spent: Spent,
) -> Annotated {
    let summary = format!("{NOT_ANNOTATED}{reason}");
    let (mut annotation, _) = assemble(context, Vec::new(), Vec::new(), clip(&summary, 400));
    annotation.provenance.synthesis_notes = Some(clip(&summary, 400));
    Annotated {
        annotation,
        warnings,
        turns,
        partial: false,
        spent,
    }
}

/// What one annotation asks of which model, within which window.
struct Ask<'a> {
    context: &'a AnnotationContext,
    provider: &'a dyn LlmProvider,
    config: &'a AnnotateConfig,
    /// The model's context window, in tokens.
    window: u32,
}

/// The tool-using agent, chunk by chunk: one run per chunk ([`chunk_task`]),
/// what the runs spent and said gathered in [`Progress`], then the cross-chunk
/// pass when there were several chunks, then the assembled note.
async fn with_tools(ask: &Ask<'_>, trace: &mut dyn TraceSink) -> Result<Annotated, AgentError> {
    let Ask {
        context,
        provider,
        config,
        ..
    } = *ask;
    let shared = Arc::new(context.clone());
    let collector: Collector = Arc::new(Mutex::new(Collected::default()));
    let mut progress = Progress::default();
    let chunks = planned_chunks(context, config, &mut progress.warnings);
    let total = chunks.len();
    for (index, files) in chunks.iter().enumerate() {
        // A run needs two calls: one to act, one to finish.
        if progress.turns.saturating_add(2) > config.call_cap() {
            progress.ran_out = true;
            progress.capped = true;
            progress.warnings.push(format!(
                "the cap of {} model calls per commit (--max-calls) was reached; chunks {}-{} \
                 were not annotated",
                config.call_cap(),
                index + 1,
                total
            ));
            break;
        }
        let chunk = (total > 1).then_some((index, total));
        let (task, budget) = chunk_task(ask, &shared, &collector, files, chunk);
        let by_calls = config.call_cap() - progress.turns - 1;
        let steps = by_calls.min(config.max_agent_turns.saturating_sub(1));
        let (outcome, sent) = run(provider, config, trace, &task, budget, steps).await?;
        let limits = RunLimits {
            chunk,
            by_calls,
            steps,
            budget,
        };
        progress.record(outcome, sent, config, &limits);
    }
    let mut collected = tools::collected(&collector).clone();
    if collected.regions.is_empty() {
        return nothing_emitted(ask, &mut collected, progress);
    }
    if total > 1 {
        // The pass needs two calls (one to act, one to finish), within the cap.
        let left = config.call_cap().saturating_sub(progress.turns);
        if left >= 2 {
            let (summary, steps, sent, usage) = cross_chunk_pass(
                provider, config, trace, context, &collector, &collected, left,
            )
            .await?;
            progress.turns += steps;
            progress.spent.usage.add(usage);
            progress.spent.sent_tokens += sent;
            collected = tools::collected(&collector).clone();
            if let Some(summary) = summary {
                progress.summaries.insert(0, summary);
            }
        } else {
            progress.capped = true;
            progress.warnings.push(format!(
                "the cap of {} model calls per commit (--max-calls) was reached; no \
                 cross-cutting concerns across chunks were looked for",
                config.call_cap()
            ));
        }
    }
    let Progress {
        turns,
        spent,
        summaries,
        mut warnings,
        ran_out,
        capped,
        cut_short,
    } = progress;
    let summary = summarize(summaries.first().map(String::as_str), &collected.regions);
    let (annotation, mut problems) =
        assemble(context, collected.regions, collected.cross_cutting, summary);
    warnings.append(&mut problems);
    if annotation.regions.is_empty() {
        return Err(AgentError::NoAnnotations { turns });
    }
    Ok(Annotated {
        annotation,
        warnings,
        turns,
        partial: ran_out || capped || cut_short,
        spent,
    })
}

/// What the chunks' runs of one annotation have spent and said so far.
#[derive(Default)]
struct Progress {
    turns: u32,
    spent: Spent,
    /// Each run's summary: the text that came with its emissions, never a
    /// later turn's.
    summaries: Vec<String>,
    warnings: Vec<String>,
    /// A run was cut short by its turns or the call cap.
    ran_out: bool,
    /// The per-commit cap (`maxCalls`), not `maxAgentTurns`, cut a run short.
    capped: bool,
    /// An answer hit the output limit.
    cut_short: bool,
}

/// What one chunk's run was allowed.
#[derive(Clone, Copy)]
struct RunLimits {
    /// Its index and the number of chunks, when there are several.
    chunk: Option<(usize, usize)>,
    /// The tool-loop calls the per-commit call cap left it.
    by_calls: u32,
    /// The tool-loop calls it was given.
    steps: u32,
    budget: Budget,
}

impl Progress {
    /// Adds one chunk's run, which `sent` about that many input tokens.
    fn record(
        &mut self,
        outcome: agent::Outcome,
        sent: u64,
        config: &AnnotateConfig,
        limits: &RunLimits,
    ) {
        let RunLimits {
            chunk,
            by_calls,
            steps,
            budget,
        } = *limits;
        self.turns += outcome.steps;
        self.spent.add(&outcome, sent);
        if outcome.finalized {
            self.ran_out = true;
            let by_cap = by_calls < config.max_agent_turns.saturating_sub(1);
            self.capped |= by_cap;
            let on =
                chunk.map_or_else(String::new, |(index, _)| format!(" on chunk {}", index + 1));
            self.warnings.push(if by_cap {
                format!(
                    "the cap of {} model calls per commit (--max-calls) was reached{on}; the \
                     annotations emitted so far are kept",
                    config.call_cap()
                )
            } else {
                format!(
                    "the agent used all {} turns{on}; the annotations emitted so far are kept",
                    steps + 1
                )
            });
        }
        if outcome.stop_reason == StopReason::MaxTokens {
            self.cut_short = true;
            self.warnings.push(format!(
                "an answer hit the output limit ({} tokens, asked again with twice that); \
                 the annotations emitted so far are kept",
                budget.cap
            ));
        }
        if let Some(text) = outcome.finishing_text {
            self.summaries.push(text);
        }
    }
}

/// The chunks of `context` to annotate, at most `ultragit.maxChunks` of them
/// (a warning in `warnings` names the files left out).
fn planned_chunks(
    context: &AnnotationContext,
    config: &AnnotateConfig,
    warnings: &mut Vec<String>,
) -> Vec<Vec<String>> {
    let mut chunks = plan_chunks(context, config);
    if let Some(max_chunks) = config.max_chunks
        && chunks.len() > max_chunks as usize
    {
        let left: Vec<String> = chunks
            .split_off(max_chunks as usize)
            .into_iter()
            .flatten()
            .collect();
        warnings.push(format!(
            "only the first {max_chunks} chunks (ultragit.maxChunks) were annotated; not \
             annotated: {}",
            left.join(", ")
        ));
    }
    chunks
}

/// The task of one run over `files` (`chunk`: its index and the number of
/// chunks, when there are several), and its budget: the first message within
/// the window left after the system prompt and the tool definitions, and only
/// the tools that can add to that message.
fn chunk_task(
    ask: &Ask<'_>,
    shared: &Arc<AnnotationContext>,
    collector: &Collector,
    files: &[String],
    chunk: Option<(usize, usize)>,
) -> (Task, Budget) {
    let Ask {
        context,
        config,
        window,
        ..
    } = *ask;
    let lines: u32 = files
        .iter()
        .filter_map(|f| context.diff_for(f))
        .map(gitctx::FileDiff::changed_lines)
        .sum();
    let mut scope = Scope {
        files: files.to_vec(),
        summarize_diff: lines > config.max_diff_lines
            || (chunk.is_some() && lines > CHUNK_LINE_BUDGET),
        not_offered: Vec::new(),
    };
    let system = prompt::system_prompt(context.author_context.as_ref());
    let probe = tools::registry(shared.clone(), scope.clone(), collector.clone());
    let fixed = agent::estimate_tokens(&system)
        + agent::estimate_tokens(&serde_json::to_string(&probe.specs()).unwrap_or_default());
    let budget = Budget::new(window, config.max_tokens_per_response, fixed);
    let diff_budget = if scope.summarize_diff { 0 } else { budget.diff };
    // The budget counts every tool; the run offers only those that can add
    // to the first message, which makes each request smaller still.
    let (opening, whole_diff) =
        prompt::grounded_message(context, files, chunk, diff_budget, budget.commit);
    scope.not_offered = Scope::lean(context, files, whole_diff);
    let task = Task {
        name: match chunk {
            Some((index, total)) => format!("annotate chunk {}/{total}", index + 1),
            None => "annotate".to_owned(),
        },
        system,
        messages: vec![Message::user(opening)],
        tools: tools::registry_within(shared.clone(), scope, collector.clone(), budget),
        format_reminder: "Reply with a one-sentence summary of the commit.".to_owned(),
        json_format: None,
    };
    (task, budget)
}

/// The result of runs that emitted no region: the model's decline as a note,
/// else the error saying what stopped it.
fn nothing_emitted(
    ask: &Ask<'_>,
    collected: &mut Collected,
    progress: Progress,
) -> Result<Annotated, AgentError> {
    let config = ask.config;
    if let Some(reason) = collected.declined.take() {
        // The model said the commit holds nothing worth recording.
        return Ok(declined(
            ask.context,
            format!("the model found nothing semantic to record: {reason}"),
            progress.turns,
            progress.warnings,
            progress.spent,
        ));
    }
    Err(if progress.cut_short {
        AgentError::TokenBudgetExceeded {
            budget: Budget::new(ask.window, config.max_tokens_per_response, 0).cap,
        }
    } else if progress.capped {
        AgentError::MaxCallsExceeded {
            max_calls: config.call_cap(),
        }
    } else if progress.ran_out {
        AgentError::MaxTurnsExceeded {
            max_turns: config.max_agent_turns,
        }
    } else {
        // Nothing emitted and nothing said: a failure, retried later.
        AgentError::NoAnnotations {
            turns: progress.turns,
        }
    })
}

/// What a reply still cut at the output cap is told (after the results of
/// its whole calls).
const CUT_OFF_HINT: &str = "Emit the regions not recorded yet one region per emit_annotation \
call, one call per reply, and do not repeat the ones recorded above.";

/// One agent run with the writing agent's budgets, at most `steps` tool-loop
/// calls (plus the final one), every request within `budget`'s window.
/// Returns the outcome and the estimated input tokens sent.
async fn run(
    provider: &dyn LlmProvider,
    config: &AnnotateConfig,
    trace: &mut dyn TraceSink,
    task: &Task,
    budget: Budget,
    steps: u32,
) -> Result<(agent::Outcome, u64), AgentError> {
    let budgets = Budgets {
        max_steps: steps.max(1),
        max_tool_calls: config.max_agent_turns.saturating_mul(20),
        tool_limits: tools::LIMITS,
        overall_timeout: RUN_TIMEOUT,
        max_tokens: Some(budget.cap),
    };
    // The annotations are what the tools collect; the final text (the summary)
    // may be empty.
    let accept_any = |text: &str| -> Result<String, Vec<String>> { Ok(text.trim().to_owned()) };
    let mut counter = SentCounter {
        inner: trace,
        sent: 0,
        usage: llm::Usage::default(),
    };
    let mut runner = Runner::new(provider, budgets, &mut counter)
        .with_context_window_reserving(budget.window, budget.output)
        .with_finishing_tools(&[
            "emit_annotation",
            "emit_cross_cutting",
            "decline_annotation",
        ])
        .retry_cut_off_replies(CUT_OFF_HINT);
    let result = runner.run(task, Some(&accept_any)).await;
    let (sent, usage) = (counter.sent, counter.usage);
    match result {
        Ok(outcome) => Ok((outcome, sent)),
        Err(agent::AgentError::Provider(err)) => Err(AgentError::Provider(err)),
        Err(agent::AgentError::Timeout { after }) => Err(AgentError::Timeout {
            seconds: after.as_secs(),
        }),
        // Still calling tools when told to stop: keep what was emitted (and
        // count what the calls cost, as the trace reported it).
        Err(agent::AgentError::KeptCallingTools) => Ok((
            agent::Outcome {
                output: String::new(),
                steps: steps + 1,
                tool_calls: 0,
                finalized: true,
                repaired: false,
                stop_reason: StopReason::ToolUse,
                finishing_text: None,
                usage,
                transcript: Vec::new(),
            },
            sent,
        )),
        Err(err @ agent::AgentError::ContextWindowExceeded { .. }) => {
            Err(AgentError::ContextWindowExceeded {
                message: err.to_string(),
            })
        }
        Err(other) => Err(AgentError::InvalidAnnotation {
            message: other.to_string(),
        }),
    }
}

/// A trace sink that passes every event on and adds up the estimated tokens
/// of the requests it sees and the usage the responses report (which a run
/// that ends in an error does not return).
struct SentCounter<'a> {
    inner: &'a mut dyn TraceSink,
    sent: u64,
    usage: llm::Usage,
}

impl TraceSink for SentCounter<'_> {
    fn record(&mut self, event: &agent::Event) {
        let field = |name: &str| event.fields.iter().find(|(k, _)| k == name).map(|(_, v)| v);
        if event.kind == "request"
            && let Some(request) = field("request")
        {
            self.sent += u64::from(agent::estimate_tokens(&request.to_string()));
        }
        if event.kind == "response" {
            self.usage.add(llm::Usage {
                input_tokens: field("input_tokens").and_then(Value::as_u64),
                output_tokens: field("output_tokens").and_then(Value::as_u64),
            });
        }
        self.inner.record(event);
    }

    fn problems(&self) -> Vec<String> {
        self.inner.problems()
    }
}

/// Files grouped for chunked annotation; one group for an ordinary commit.
pub fn plan_chunks(context: &AnnotationContext, config: &AnnotateConfig) -> Vec<Vec<String>> {
    let files = context.paths();
    let total = context.changed_lines();
    if files.len() <= CHUNK_FILE_THRESHOLD && total <= config.max_diff_lines {
        return vec![files];
    }
    let mut sized: Vec<(String, u32)> = context
        .diffs
        .iter()
        .map(|d| (d.path().to_owned(), d.changed_lines()))
        .collect();
    sized.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let per_chunk = config.chunk_size.max(1) as usize;
    let mut chunks: Vec<Vec<String>> = Vec::new();
    let mut current: Vec<String> = Vec::new();
    let mut current_lines = 0;
    for (path, lines) in sized {
        let full = current.len() >= per_chunk
            || (current_lines + lines > CHUNK_LINE_BUDGET && !current.is_empty());
        if full {
            chunks.push(std::mem::take(&mut current));
            current_lines = 0;
        }
        current.push(path);
        current_lines += lines;
    }
    if !current.is_empty() {
        chunks.push(current);
    }
    chunks
}

/// The call that looks across chunks for cross-cutting concerns, in at most
/// `calls` model calls (at least two). Returns its summary, the turns it took,
/// the tokens sent and the usage reported.
async fn cross_chunk_pass(
    provider: &dyn LlmProvider,
    config: &AnnotateConfig,
    trace: &mut dyn TraceSink,
    context: &AnnotationContext,
    collector: &Collector,
    collected: &Collected,
    calls: u32,
) -> Result<(Option<String>, u32, u64, llm::Usage), AgentError> {
    let mut listing = String::new();
    for region in &collected.regions {
        listing.push_str(&format!(
            "- {}:{} — {}\n",
            region.file,
            region.ast_anchor.name,
            clip(&region.intent, 300)
        ));
    }
    let window = config.window_for(provider.model());
    let room = Budget::new(window, config.max_tokens_per_response, 2_000).diff as usize * 4;
    let listing = agent::clip_middle(&listing, room).into_owned();
    let task = Task {
        name: "annotate cross-chunk".to_owned(),
        system: prompt::pass_system_prompt(context.author_context.as_ref()),
        messages: vec![Message::user(prompt::cross_chunk_prompt(&listing))],
        tools: tools::cross_cutting_registry(collector.clone()),
        format_reminder: "Reply with a one-sentence summary of the commit.".to_owned(),
        json_format: None,
    };
    let window = config.window_for(provider.model());
    let budget = Budget::new(window, config.max_tokens_per_response, 0);
    // At most two tool-loop calls and the final one.
    let steps = config
        .max_agent_turns
        .saturating_sub(1)
        .min(2)
        .min(calls.saturating_sub(1));
    let (outcome, sent) = run(provider, config, trace, &task, budget, steps).await?;
    // The text that came with its concerns, or its answer when it had none.
    let summary = outcome
        .finishing_text
        .or(Some(outcome.output))
        .filter(|s| !s.trim().is_empty() && !s.trim().eq_ignore_ascii_case("none"));
    Ok((summary, outcome.steps, sent, outcome.usage))
}

/// The summary: the model's final text (first paragraph, at most 400 characters),
/// or one made from the intents.
fn summarize(text: Option<&str>, regions: &[RegionAnnotation]) -> String {
    if let Some(text) = text {
        let first = text.trim().split("\n\n").next().unwrap_or("").trim();
        if !first.is_empty() {
            return clip(first, 400);
        }
    }
    let intents: Vec<&str> = regions.iter().map(|r| r.intent.trim()).take(3).collect();
    clip(&intents.join("; "), 400)
}

fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max - 1).collect();
    out.push('…');
    out
}

/// Builds and validates the annotation. Returns it with the validation warnings.
pub(crate) fn assemble(
    context: &AnnotationContext,
    regions: Vec<RegionAnnotation>,
    cross_cutting: Vec<CrossCuttingConcern>,
    summary: String,
) -> (Annotation, Vec<String>) {
    let mut unique: Vec<RegionAnnotation> = Vec::new();
    for region in regions {
        let same = |r: &RegionAnnotation| {
            r.file == region.file
                && r.ast_anchor.name == region.ast_anchor.name
                && r.lines == region.lines
        };
        match unique.iter_mut().find(|r| same(r)) {
            Some(existing) => *existing = region,
            None => unique.push(region),
        }
    }
    let mut concerns: Vec<CrossCuttingConcern> = Vec::new();
    for concern in cross_cutting {
        if !concerns
            .iter()
            .any(|c| c.description == concern.description && c.regions == concern.regions)
        {
            concerns.push(concern);
        }
    }
    let author = context.author_context.as_ref();
    let sources: Vec<String> = author
        .and_then(|a| a.squash_sources.clone())
        .unwrap_or_default();
    let provenance = if sources.is_empty() {
        Provenance::initial()
    } else {
        let preserved = context.recent_annotations.iter().any(|e| {
            sources
                .iter()
                .any(|s| e.commit_sha.starts_with(s.as_str()) || s == &e.commit_sha)
        });
        Provenance {
            operation: ProvenanceOperation::Squash,
            derived_from: sources,
            original_annotations_preserved: preserved,
            synthesis_notes: None,
        }
    };
    let mut annotation = Annotation {
        schema: SCHEMA_V1.to_owned(),
        commit: context.commit.sha.clone(),
        timestamp: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        task: author
            .and_then(|a| a.task.clone())
            .filter(|t| !t.trim().is_empty()),
        summary,
        context_level: context.context_level(),
        regions: unique,
        cross_cutting: concerns,
        provenance,
        corrections: Vec::new(),
    };
    let files = context.all_paths();
    let problems = annotation.strip_invalid(&ValidationContext {
        expected_commit: Some(&context.commit.sha),
        commit_files: Some(&files),
    });
    let warnings = problems
        .iter()
        .map(|p| format!("dropped an invalid annotation: {p}"))
        .collect();
    (annotation, warnings)
}

/// The structured-output mode: the whole context in one prompt, one JSON answer.
async fn structured(ask: &Ask<'_>, trace: &mut dyn TraceSink) -> Result<Annotated, AgentError> {
    let (context, provider, config) = (ask.context, ask.provider, ask.config);
    let window = ask.window;
    let system = prompt::pass_system_prompt(context.author_context.as_ref());
    let schema = structured_schema();
    // The schema is sent twice (in the prompt and as the response format).
    let fixed = agent::estimate_tokens(&system) + 2 * agent::estimate_tokens(&schema.to_string());
    let budget = Budget::new(window, config.max_tokens_per_response, fixed);
    let room = (budget.input_limit().saturating_sub(fixed + 600)) as usize * 3;
    let text = context_text(context, config, budget.diff);
    let task = StructuredTask {
        name: "annotate (structured)".to_owned(),
        system,
        messages: vec![Message::user(prompt::structured_prompt(
            &agent::clip_middle(&text, room),
        ))],
        schema_name: "ultragit_annotation".to_owned(),
        schema,
    };
    let budgets = Budgets {
        max_steps: 1,
        max_tool_calls: 0,
        tool_limits: tools::LIMITS,
        overall_timeout: RUN_TIMEOUT,
        max_tokens: Some(budget.cap),
    };
    let mut counter = SentCounter {
        inner: trace,
        sent: 0,
        usage: llm::Usage::default(),
    };
    let mut runner = Runner::new(provider, budgets, &mut counter)
        .with_context_window_reserving(window, budget.output);
    let (value, outcome) = runner
        .run_structured(&task)
        .await
        .map_err(|err| match err {
            agent::AgentError::Provider(err) => AgentError::Provider(err),
            agent::AgentError::Timeout { after } => AgentError::Timeout {
                seconds: after.as_secs(),
            },
            err @ agent::AgentError::ContextWindowExceeded { .. } => {
                AgentError::ContextWindowExceeded {
                    message: err.to_string(),
                }
            }
            other => AgentError::InvalidAnnotation {
                message: other.to_string(),
            },
        })?;
    let spent = Spent {
        usage: outcome.usage,
        sent_tokens: counter.sent,
    };
    let mut dropped = Vec::new();
    let regions: Vec<RegionAnnotation> = items(&value, "regions", &mut dropped);
    let cross_cutting: Vec<CrossCuttingConcern> = items(&value, "cross_cutting", &mut dropped);
    let decline = value["decline"].as_str().map(str::trim).unwrap_or("");
    if regions.is_empty() && dropped.is_empty() && !decline.is_empty() {
        let why = clip(decline, 300);
        return Ok(declined(
            context,
            format!("the model found nothing semantic to record: {why}"),
            outcome.steps,
            Vec::new(),
            spent,
        ));
    }
    if regions.is_empty() {
        return Err(AgentError::NoAnnotations {
            turns: outcome.steps,
        });
    }
    let summary = summarize(value["summary"].as_str(), &regions);
    let (annotation, mut warnings) = assemble(context, regions, cross_cutting, summary);
    if annotation.regions.is_empty() {
        return Err(AgentError::NoAnnotations {
            turns: outcome.steps,
        });
    }
    dropped.append(&mut warnings);
    Ok(Annotated {
        annotation,
        warnings: dropped,
        turns: outcome.steps,
        partial: false,
        spent,
    })
}

/// The entries of the array `value[key]` that read as `T`; each one that does not
/// is reported in `dropped` (the schema check makes that rare, not impossible).
fn items<T: serde::de::DeserializeOwned>(
    value: &Value,
    key: &str,
    dropped: &mut Vec<String>,
) -> Vec<T> {
    let Some(entries) = value[key].as_array() else {
        return Vec::new();
    };
    entries
        .iter()
        .enumerate()
        .filter_map(|(i, item)| match serde_json::from_value(item.clone()) {
            Ok(parsed) => Some(parsed),
            Err(err) => {
                dropped.push(format!(
                    "dropped {key}[{i}] of the structured answer: {err}"
                ));
                None
            }
        })
        .collect()
}

/// The JSON Schema of the structured answer.
pub(crate) fn structured_schema() -> Value {
    let region = tools::emit_annotation_schema();
    json!({
        "type": "object",
        "properties": {
            "summary": {"type": "string"},
            "regions": {"type": "array", "items": region},
            "cross_cutting": {"type": "array", "items": tools::emit_cross_cutting_schema()},
            "decline": {"type": "string"}
        },
        "required": ["summary", "regions", "cross_cutting"],
        "additionalProperties": false
    })
}

/// The context of the structured prompt: commit, author context, diff (or its
/// summary past `maxDiffLines`), outlines, recent annotations.
fn context_text(context: &AnnotationContext, config: &AnnotateConfig, diff_budget: u32) -> String {
    let mut text = tools::commit_text(context);
    text.push_str("\nDiff (line numbers are the file's at this commit):\n");
    let (diff, _) = tools::scope_diff(context, &context.paths());
    if context.changed_lines() > config.max_diff_lines
        || agent::estimate_tokens(&diff) > diff_budget
    {
        text.push_str(&tools::diff_summary(context, &context.paths()));
    } else {
        text.push_str(&diff);
    }
    for (path, units) in &context.ast_outlines {
        text.push_str(&format!("\nOutline of {path}:\n"));
        for unit in units {
            text.push_str(&format!(
                "  {} {} (lines {}-{})\n",
                unit.kind.as_str(),
                unit.qualified_name,
                unit.lines.start,
                unit.lines.end
            ));
        }
    }
    if !context.recent_annotations.is_empty() {
        text.push_str("\nRecent annotations of these files:\n");
        for existing in context.recent_annotations.iter().take(10) {
            for region in &existing.annotation.regions {
                text.push_str(&format!(
                    "  {} {}:{} — {}\n",
                    &existing.commit_sha[..existing.commit_sha.len().min(12)],
                    region.file,
                    region.ast_anchor.name,
                    region.intent
                ));
            }
        }
    }
    text
}
