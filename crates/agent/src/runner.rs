//! The one loop every task runs: ask the model, run the tools it asks for, stop
//! within the budgets, validate, repair once.
//!
//! ```text
//! request ─▶ model ─▶ tool calls? ── yes ─▶ run read-only tools ─▶ (budget left?) ─▶ request
//!                        │ no                                        │ no
//!                        ▼                                           ▼
//!                   final text ◀──────────── one final request with tools off
//!                        │
//!                   validate ── invalid ─▶ one repair request ─▶ validate ─▶ error if still invalid
//! ```
//!
//! Turns are counted as spec 000 says: one `complete` call is one step, whatever
//! it contains. The step budget bounds the tool loop; the finalization and repair
//! requests come on top of it (one each at most).
//!
//! A runner made with [`Runner::repair_cut_off`] also treats an answer cut off
//! by the output cap (stop reason `MaxTokens`) as invalid: its one repair
//! request is asked with twice the cap ([`CUT_OFF_CAP_FACTOR`]), since
//! reasoning tokens count against the cap too.
//!
//! A runner made with [`Runner::retry_cut_off_replies`] asks again, once per
//! run, for a tool-loop reply the cap cut (twice the cap, within the window);
//! a reply still cut runs its whole calls and is told how to go on in smaller
//! replies. With [`Runner::with_context_window_reserving`] a request asks for
//! the whole cap when the window leaves room for it, and for what is left
//! (never less than the reserve) when not.
//!
//! Each `request` event records the body the provider sends over the wire
//! ([`LlmProvider::wire_body`]: model, service tier, reasoning, `store`,
//! `stream`, the cap as the API names it), or our normalized request for a
//! provider that cannot tell; credentials are headers, never in it.
//!
//! **Invariant:** with a context window ([`Runner::with_context_window`]), no
//! request larger than the window allows is sent: the run fails with
//! [`AgentError::ContextWindowExceeded`] instead.
//!
//! **Invariant:** the requests stay small whatever the model sent: the invalid
//! answer the repair request quotes back is cut to [`REPAIR_ANSWER_MAX`] bytes
//! (head and tail around a marker, [`crate::clip_middle`]), and the problems to
//! at most [`REPAIR_PROBLEMS_MAX`] of `REPAIR_PROBLEM_MAX` bytes each; a turn
//! kept in the transcript (text beside tool calls, tool arguments) is cut the
//! same way, since every later request sends it again. A reply is dropped as
//! soon as its text is taken, so a long one is not held twice. Traces get
//! strings of a reply cut to [`crate::trace::ARTIFACT_MAX`] before they are
//! copied into an event, which is all a session keeps of them anyway.

use std::time::{Duration, Instant};

use llm::{
    CompletionRequest, CompletionResponse, ContentBlock, JsonFormat, LlmError, LlmProvider,
    Message, Role, StopReason, ToolChoice, Usage,
};
use serde_json::{Value, json};

use crate::clip::{clip_middle, clip_strings};
use crate::schema;
use crate::tool::{ToolLimits, ToolRegistry};
use crate::trace::{ARTIFACT_MAX, Event, TraceSink};
use crate::window::{ContextWindow, estimate_tokens, request_tokens};

/// The most of an invalid answer the repair request quotes back: 32 KiB, what
/// an answer of 8,192 tokens takes at 4 bytes a token (the default cap of
/// 4,096 doubled for the repair of a cut-off answer, [`CUT_OFF_CAP_FACTOR`]);
/// a task with a smaller cap gets far less back. A longer answer is quoted as
/// its head and tail around a marker that says how much was cut.
pub const REPAIR_ANSWER_MAX: usize = 32 * 1024;
/// The most problems one repair request lists (the rest are counted).
pub const REPAIR_PROBLEMS_MAX: usize = 20;
/// The longest one listed problem may be, in bytes.
pub(crate) const REPAIR_PROBLEM_MAX: usize = 500;
/// Tokens a tool result should have room for before old results are dropped.
const MIN_RESULT_ROOM: u32 = 1_000;
/// Below this byte cap a tool result is not worth sending: the call fails with
/// `CONTEXT_FULL` instead.
const MIN_RESULT_BYTES: usize = 400;

/// How much larger the output cap of the repair request is than the budget's
/// when the answer was cut off by it (see [`Runner::repair_cut_off`]).
pub(crate) const CUT_OFF_CAP_FACTOR: u32 = 2;

/// The problem a cut-off answer is repaired for (the words users and the
/// conformance judge know).
const CUT_OFF_PROBLEM: &str = "the answer was cut off by the output token limit";

/// Limits of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budgets {
    /// Model calls in the tool loop (one call = one step).
    pub max_steps: u32,
    /// Tool calls in all.
    pub max_tool_calls: u32,
    /// Caps of each tool result.
    pub tool_limits: ToolLimits,
    /// The whole run, every model call and tool included.
    pub overall_timeout: Duration,
    /// Output tokens per model call.
    pub max_tokens: Option<u32>,
}

impl Default for Budgets {
    fn default() -> Self {
        Budgets {
            max_steps: 12,
            max_tool_calls: 24,
            tool_limits: ToolLimits::default(),
            overall_timeout: Duration::from_secs(900),
            max_tokens: Some(4096),
        }
    }
}

/// Checks (and may reshape) a task's final text: `Ok(shaped)` or the problems.
pub trait Validator: Send + Sync {
    fn validate(&self, output: &str) -> Result<String, Vec<String>>;
}

impl<F> Validator for F
where
    F: Fn(&str) -> Result<String, Vec<String>> + Send + Sync,
{
    fn validate(&self, output: &str) -> Result<String, Vec<String>> {
        self(output)
    }
}

/// One task: its prompt layers, its tools and what its answer must look like.
#[derive(Debug, Clone)]
pub struct Task {
    /// A short name for traces (`commit-msg`, `annotate`).
    pub name: String,
    /// Top-level instructions.
    pub system: String,
    /// Developer layers (tool policy, environment, guidance) and the user prompt.
    pub messages: Vec<Message>,
    /// The tools offered; empty means the model may not call any.
    pub tools: ToolRegistry,
    /// One sentence restating the required output format, used when the budget
    /// runs out and in the repair request (e.g. "Reply with the commit message
    /// only.").
    pub format_reminder: String,
    /// Ask the provider for JSON matching a schema.
    pub json_format: Option<JsonFormat>,
}

/// What a run produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The validated (and possibly reshaped) answer.
    pub output: String,
    /// Model calls made, finalization and repair included.
    pub steps: u32,
    /// Tool calls executed.
    pub tool_calls: u32,
    /// The budget ran out and a final request without tools was made.
    pub finalized: bool,
    /// The first answer failed validation and the repair pass fixed it.
    pub repaired: bool,
    /// Why the model stopped on the answer that was used.
    pub stop_reason: StopReason,
    /// The text of the first reply that called a finishing tool
    /// ([`Runner::with_finishing_tools`]) and said something beside the
    /// calls: for a writer, the summary that came with its records, whatever
    /// later turns said.
    pub finishing_text: Option<String>,
    pub usage: Usage,
    /// The whole conversation, for callers that continue it.
    pub transcript: Vec<Message>,
}

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error(transparent)]
    Provider(#[from] LlmError),
    #[error("the model called the tool '{tool}', but this task offers no tools")]
    ToolsNotAllowed { tool: String },
    #[error("the model kept calling tools after being told to answer without them")]
    KeptCallingTools,
    #[error(
        "the answer is still invalid after one repair pass: {}",
        problem_summary(problems)
    )]
    Invalid {
        problems: Vec<String>,
        /// The last answer, for the user to fix by hand.
        output: String,
    },
    #[error("the run did not finish within {} s", after.as_secs())]
    Timeout { after: Duration },
    /// A request would not fit the context window even with every old tool
    /// result dropped (the task's own messages are too large): it is not sent.
    #[error(
        "the request holds about {tokens} input tokens, more than the {limit} a \
         {window}-token context window leaves for input (a tenth as margin, {output} \
         reserved for the answer); nothing was sent"
    )]
    ContextWindowExceeded {
        tokens: u32,
        limit: u32,
        window: u32,
        output: u32,
    },
}

/// Runs tasks against one provider with one set of budgets, tracing to a sink.
pub struct Runner<'a> {
    provider: &'a dyn LlmProvider,
    budgets: Budgets,
    trace: &'a mut dyn TraceSink,
    window: Option<ContextWindow>,
    finishing: Vec<String>,
    repair_cut_off: bool,
    /// [`Runner::retry_cut_off_replies`]: the instruction for a reply still cut.
    cut_off_hint: Option<String>,
    /// The output cap the last request asked for.
    last_cap: Option<u32>,
}

impl std::fmt::Debug for Runner<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runner")
            .field("provider", &self.provider.name())
            .field("budgets", &self.budgets)
            .finish_non_exhaustive()
    }
}

struct State {
    messages: Vec<Message>,
    steps: u32,
    tool_calls: u32,
    usage: Usage,
    deadline: Instant,
}

impl<'a> Runner<'a> {
    /// A runner for `provider`.
    pub fn new(
        provider: &'a dyn LlmProvider,
        budgets: Budgets,
        trace: &'a mut dyn TraceSink,
    ) -> Self {
        Runner {
            provider,
            budgets,
            trace,
            window: None,
            finishing: Vec::new(),
            repair_cut_off: false,
            cut_off_hint: None,
            last_cap: None,
        }
    }

    /// Tools whose successful calls end the run: a reply that calls only
    /// these, all of which succeed, is the answer (its text, which may be
    /// empty), without another call to hand the results back. A writer that
    /// emits its records (and its summary) in one reply so takes one turn
    /// instead of two, and is never invited to chatter after its records
    /// were taken; a failed call still goes back to the model. A reply cut by
    /// the output cap never ends the run this way. The text of the first
    /// reply that called one of these tools is [`Outcome::finishing_text`].
    pub fn with_finishing_tools(mut self, names: &[&str]) -> Self {
        self.finishing = names.iter().map(|n| (*n).to_owned()).collect();
        self
    }

    /// Keeps every request of this runner within a context window of `tokens`
    /// (see [`crate::window`]): a tool result that fits the room left goes back
    /// whole, a larger one may take up to half the input by dropping old tool
    /// results and arguments (oldest first, one at a time) and is cut beyond
    /// that, and old ones are dropped whenever the conversation would not fit; when even that is not enough, the tool loop
    /// ends with the final tool-free request (budget `context`). A request
    /// that still exceeds the window (the task's own messages are too large)
    /// is never sent: the run fails with [`AgentError::ContextWindowExceeded`].
    pub fn with_context_window(mut self, tokens: u32) -> Self {
        self.window = Some(ContextWindow {
            tokens,
            output: self.budgets.max_tokens.unwrap_or(0),
        });
        self
    }

    /// [`Runner::with_context_window`], reserving only `reserve` output tokens
    /// when the conversation is fitted: each request still asks for the
    /// budget's cap (`Budgets::max_tokens`) when the window leaves room for
    /// it, and for what the window leaves (never less than `reserve`) when
    /// not. A small window so keeps room for input, and an answer gets the
    /// whole cap whenever it fits.
    pub fn with_context_window_reserving(mut self, tokens: u32, reserve: u32) -> Self {
        let cap = self.budgets.max_tokens.unwrap_or(0);
        self.window = Some(ContextWindow {
            tokens,
            output: reserve.min(cap),
        });
        self
    }

    /// Treats an answer cut off by the output cap as invalid: it gets the
    /// run's one repair pass, asked with [`CUT_OFF_CAP_FACTOR`] times the
    /// budget's cap (`Budgets::max_tokens`). For tasks whose answer is the
    /// final text (a commit message); without it a cut-off answer is
    /// validated like any other and the caller sees the `MaxTokens` stop.
    pub fn repair_cut_off(mut self) -> Self {
        self.repair_cut_off = true;
        self
    }

    /// Asks again, once per run, for a tool-loop reply the output cap cut
    /// short (stop reason `MaxTokens`): the same request with
    /// [`CUT_OFF_CAP_FACTOR`] times the cap, within what the context window
    /// leaves; the cut reply is dropped unanswered. A reply still cut (or one
    /// that cannot be given more room) is handled as it is: its whole tool
    /// calls run (the provider dropped a call whose arguments were cut) and
    /// `hint` follows their results, telling the model how to go on in
    /// smaller replies (e.g. one record per call).
    pub fn retry_cut_off_replies(mut self, hint: &str) -> Self {
        self.cut_off_hint = Some(hint.to_owned());
        self
    }

    /// Records an event on the run's trace (for callers adding their own).
    pub fn trace(&mut self, event: Event) {
        self.trace.record(&event);
    }

    /// Runs `task` to a validated answer.
    pub async fn run(
        &mut self,
        task: &Task,
        validator: Option<&dyn Validator>,
    ) -> Result<Outcome, AgentError> {
        let mut state = State {
            messages: task.messages.clone(),
            steps: 0,
            tool_calls: 0,
            usage: Usage::default(),
            deadline: Instant::now() + self.budgets.overall_timeout,
        };
        self.trace(
            Event::info("run.started")
                .with("task", task.name.as_str())
                .with("provider", self.provider.name())
                .with("model", self.provider.model())
                .with("tools", json!(task.tools.names()))
                .with("max_steps", self.budgets.max_steps)
                .with("max_tool_calls", self.budgets.max_tool_calls),
        );
        let result = self.run_inner(task, validator, &mut state).await;
        match &result {
            Ok(outcome) => self.trace(
                Event::info("final")
                    .with("output", outcome.output.as_str())
                    .with("steps", outcome.steps)
                    .with("tool_calls", outcome.tool_calls)
                    .with("finalized", outcome.finalized)
                    .with("repaired", outcome.repaired),
            ),
            Err(err) => self.trace(Event::error("error").with("message", err.to_string())),
        }
        result
    }

    async fn run_inner(
        &mut self,
        task: &Task,
        validator: Option<&dyn Validator>,
        state: &mut State,
    ) -> Result<Outcome, AgentError> {
        let mut finalized = false;
        let mut finishing_text: Option<String> = None;
        let mut retried_cut = false;
        let answer = loop {
            if state.steps >= self.budgets.max_steps {
                finalized = true;
                break self.finalize(task, state, "step").await?;
            }
            if !self.fit_window(task, state, &[], 0) {
                finalized = true;
                break self.finalize(task, state, "context").await?;
            }
            let mut response = self.call(task, state, ToolChoice::Auto).await?;
            let mut still_cut = false;
            if response.stop_reason == StopReason::MaxTokens && self.cut_off_hint.is_some() {
                if !retried_cut && let Some(more) = self.larger_cap(task, state) {
                    retried_cut = true;
                    self.trace(
                        Event::warn("cut_off.retry")
                            .with("cap", json!(self.last_cap))
                            .with("retry_cap", more),
                    );
                    drop(response);
                    let cap = self.budgets.max_tokens;
                    self.budgets.max_tokens = Some(more);
                    let again = self.call(task, state, ToolChoice::Auto).await;
                    self.budgets.max_tokens = cap;
                    response = again?;
                }
                still_cut = response.stop_reason == StopReason::MaxTokens;
            }
            let uses: Vec<(String, String, Value)> = response
                .tool_uses()
                .into_iter()
                .map(|(id, name, input)| (id.to_owned(), name.to_owned(), input.clone()))
                .collect();
            if uses.is_empty() {
                break response;
            }
            if task.tools.is_empty() {
                return Err(AgentError::ToolsNotAllowed {
                    tool: uses[0].1.clone(),
                });
            }
            state.messages.push(Message {
                role: Role::Assistant,
                content: response.content.iter().map(transcript_block).collect(),
            });
            let finishing = !still_cut
                && uses
                    .iter()
                    .all(|(_, name, _)| self.finishing.contains(name));
            let alongside = if finishing {
                response.text()
            } else {
                String::new()
            };
            if finishing_text.is_none()
                && uses
                    .iter()
                    .any(|(_, name, _)| self.finishing.contains(name))
            {
                let text = response.text();
                if !text.trim().is_empty() {
                    finishing_text = Some(clip_middle(&text, REPAIR_ANSWER_MAX).into_owned());
                }
            }
            let stop = response.stop_reason.clone();
            drop(response);
            let mut results = Vec::with_capacity(uses.len());
            let mut exhausted = false;
            for (id, name, input) in uses {
                self.trace(
                    Event::info("tool.call")
                        .with("id", id.as_str())
                        .with("tool", name.as_str())
                        .with("arguments", input.clone()),
                );
                let envelope = if state.tool_calls >= self.budgets.max_tool_calls {
                    exhausted = true;
                    json!({"ok": false, "tool": name, "error": {
                        "code": "BUDGET_EXHAUSTED",
                        "message": "the tool-call budget is used up; answer with what you have",
                    }})
                } else {
                    state.tool_calls += 1;
                    self.dispatch_within(task, state, &results, &id, &name, &input)
                        .await
                };
                let ok = envelope.get("ok") == Some(&Value::Bool(true));
                self.trace(
                    Event::info("tool.output")
                        .with("id", id.as_str())
                        .with("tool", name.as_str())
                        .with("ok", ok)
                        .with("output", envelope.to_string()),
                );
                results.push(ContentBlock::ToolResult {
                    tool_use_id: id,
                    content: envelope.to_string(),
                    is_error: !ok,
                });
            }
            let all_ok = results.iter().all(|r| {
                matches!(
                    r,
                    ContentBlock::ToolResult {
                        is_error: false,
                        ..
                    }
                )
            });
            if still_cut && let Some(hint) = &self.cut_off_hint {
                results.push(ContentBlock::Text {
                    text: format!(
                        "Your reply was cut off at the {}-token output limit: the results \
                         above are of the calls that arrived whole (a call cut short was \
                         dropped). {hint}",
                        self.last_cap.unwrap_or(0)
                    ),
                });
            }
            state.messages.push(Message {
                role: Role::User,
                content: results,
            });
            if finishing && all_ok {
                self.trace(Event::info("finished.with_tools"));
                break CompletionResponse {
                    content: vec![ContentBlock::Text { text: alongside }],
                    stop_reason: if stop == StopReason::MaxTokens {
                        stop
                    } else {
                        StopReason::EndTurn
                    },
                    usage: Usage::default(),
                    model: None,
                    raw: Value::Null,
                };
            }
            if exhausted {
                finalized = true;
                break self.finalize(task, state, "tool-call").await?;
            }
        };
        // The text is all that is needed of the reply from here on; a long one
        // must not be held twice while the repair reply arrives.
        let (text, stop_reason) = into_text(answer);
        let cut_off = self.repair_cut_off && stop_reason == StopReason::MaxTokens;
        let first = match check(validator, &text) {
            Ok(_) if cut_off => Err(vec![self.cut_off_problem()]),
            Err(mut problems) if cut_off => {
                problems.insert(0, self.cut_off_problem());
                Err(problems)
            }
            checked => checked,
        };
        let (output, stop_reason, repaired) = match first {
            Ok(output) => (output, stop_reason, false),
            Err(problems) => {
                self.trace(
                    Event::warn("validation.failed")
                        .with("problems", json!(problems))
                        .with("output", clip_middle(&text, ARTIFACT_MAX)),
                );
                let cap = self.budgets.max_tokens;
                if cut_off {
                    self.budgets.max_tokens = cap.map(|cap| cap.saturating_mul(CUT_OFF_CAP_FACTOR));
                }
                let repaired = self.repair(task, state, &text, &problems).await;
                self.budgets.max_tokens = cap;
                let repaired = repaired?;
                drop(text);
                let (again, stop_reason) = into_text(repaired);
                match check(validator, &again) {
                    Ok(output) => (output, stop_reason, true),
                    Err(problems) => {
                        return Err(AgentError::Invalid {
                            problems,
                            output: again,
                        });
                    }
                }
            }
        };
        Ok(Outcome {
            output,
            steps: state.steps,
            tool_calls: state.tool_calls,
            finalized,
            repaired,
            stop_reason,
            finishing_text,
            usage: state.usage,
            transcript: state.messages.clone(),
        })
    }

    /// The cap a cut-off reply is asked again with: [`CUT_OFF_CAP_FACTOR`]
    /// times the cap, within what the context window leaves the request;
    /// `None` when that is no more than the cap (or there is no cap).
    fn larger_cap(&self, task: &Task, state: &State) -> Option<u32> {
        let cap = self.last_cap?;
        let mut more = cap.saturating_mul(CUT_OFF_CAP_FACTOR);
        if let Some(window) = self.window {
            let request = self.request(task, state, ToolChoice::Auto);
            let total = ContextWindow {
                output: 0,
                ..window
            };
            more = more.min(total.room(&request));
        }
        (more > cap).then_some(more)
    }

    /// The request for the current conversation.
    fn request(&self, task: &Task, state: &State, choice: ToolChoice) -> CompletionRequest {
        CompletionRequest {
            system: Some(task.system.clone()),
            messages: state.messages.clone(),
            tools: task.tools.specs(),
            tool_choice: choice,
            max_tokens: self.budgets.max_tokens,
            json_format: task.json_format.clone(),
        }
    }

    /// Makes the conversation (plus `pending` tool results) fit the window with
    /// `needed` tokens to spare, dropping old tool results and arguments; the
    /// task's own messages and the newest turn are kept. True if it fits (or
    /// there is no window).
    fn fit_window(
        &mut self,
        task: &Task,
        state: &mut State,
        pending: &[ContentBlock],
        needed: u32,
    ) -> bool {
        let Some(window) = self.window else {
            return true;
        };
        let mut request = self.request(task, state, ToolChoice::Auto);
        let mut tail = 1;
        if !pending.is_empty() {
            request.messages.push(Message {
                role: Role::User,
                content: pending.to_vec(),
            });
            tail = 2;
        }
        let before = request.messages.clone();
        let fits = window.fit(&mut request, task.messages.len(), tail, needed);
        if request.messages != before {
            self.trace(
                Event::info("context.trimmed")
                    .with("window", window.tokens)
                    .with("fits", fits),
            );
            if !pending.is_empty() {
                request.messages.pop();
            }
            state.messages = request.messages;
        }
        fits
    }

    /// Runs one tool call within the window. A result that fits what the
    /// conversation leaves goes back whole and nothing older is touched; a
    /// larger one may claim up to half the window's input by dropping old
    /// results (oldest first, one at a time), and is cut to the room left
    /// beyond that.
    async fn dispatch_within(
        &mut self,
        task: &Task,
        state: &mut State,
        pending: &[ContentBlock],
        id: &str,
        name: &str,
        input: &Value,
    ) -> Value {
        let limits = task.tools.limits();
        let Some(window) = self.window else {
            return task
                .tools
                .dispatch_async(name, input, limits)
                .await
                .to_value();
        };
        let size = |envelope: &Value| {
            let block = ContentBlock::ToolResult {
                tool_use_id: id.to_owned(),
                content: envelope.to_string(),
                is_error: false,
            };
            serde_json::to_string(&block)
                .map(|s| estimate_tokens(&s))
                .unwrap_or(u32::MAX)
        };
        let whole = limits.max_bytes.min(window.input_limit() as usize * 3);
        let first = if whole < MIN_RESULT_BYTES {
            None
        } else {
            let envelope = dispatch_capped(task, name, input, limits, whole).await;
            let tokens = size(&envelope);
            if tokens <= self.room(task, state, pending, window) {
                return envelope;
            }
            Some((envelope, tokens))
        };
        let wanted = first
            .as_ref()
            .map_or(MIN_RESULT_ROOM, |(_, tokens)| *tokens);
        self.fit_window(
            task,
            state,
            pending,
            wanted.min(window.input_limit() / 2).max(MIN_RESULT_ROOM),
        );
        let room = self.room(task, state, pending, window);
        if let Some((envelope, tokens)) = first
            && tokens <= room
        {
            return envelope;
        }
        let mut max_bytes = limits.max_bytes.min(room as usize * 3);
        for _ in 0..4 {
            if max_bytes < MIN_RESULT_BYTES {
                break;
            }
            let envelope = dispatch_capped(task, name, input, limits, max_bytes).await;
            let tokens = size(&envelope);
            if tokens <= room {
                return envelope;
            }
            // Escaping made it larger than its byte cap: scale down and retry.
            max_bytes = max_bytes * room as usize / tokens as usize * 9 / 10;
        }
        json!({"ok": false, "tool": name, "error": {
            "code": "CONTEXT_FULL",
            "message": format!(
                "the result does not fit in what is left of the {}-token context window; \
                 ask for less (one file, a line range, a smaller radius) or emit what you have",
                window.tokens
            ),
        }})
    }

    /// Tokens the window leaves after the conversation and `pending` results.
    fn room(
        &self,
        task: &Task,
        state: &State,
        pending: &[ContentBlock],
        window: ContextWindow,
    ) -> u32 {
        let mut probe = self.request(task, state, ToolChoice::Auto);
        probe.messages.push(Message {
            role: Role::User,
            content: pending.to_vec(),
        });
        window.room(&probe)
    }

    /// The repair problem of an answer cut off by the output cap.
    fn cut_off_problem(&self) -> String {
        match self.budgets.max_tokens {
            Some(cap) => format!(
                "{CUT_OFF_PROBLEM} ({cap} tokens), so it is incomplete: give the whole answer \
                 again, reasoning less and writing only what the answer needs"
            ),
            None => format!("{CUT_OFF_PROBLEM}, so it is incomplete: give the whole answer again"),
        }
    }

    /// One model call with the current conversation.
    async fn call(
        &mut self,
        task: &Task,
        state: &mut State,
        choice: ToolChoice,
    ) -> Result<CompletionResponse, AgentError> {
        let mut request = self.request(task, state, choice);
        self.last_cap = request.max_tokens;
        if let Some(window) = self.window {
            // The cap this call asks for (a repair may ask for more), within
            // what the window leaves, and never less than the reserve.
            let cap = self.budgets.max_tokens.unwrap_or(0);
            let total = ContextWindow {
                output: 0,
                ..window
            };
            let asked = cap.min(total.room(&request)).max(window.output.min(cap));
            if request.max_tokens.is_some() {
                request.max_tokens = Some(asked);
            }
            self.last_cap = request.max_tokens;
            let window = ContextWindow {
                output: asked,
                ..window
            };
            let tokens = request_tokens(&request);
            if tokens > window.input_limit() {
                return Err(AgentError::ContextWindowExceeded {
                    tokens,
                    limit: window.input_limit(),
                    window: window.tokens,
                    output: window.output,
                });
            }
        }
        state.steps += 1;
        self.trace(
            Event::info("request")
                .with("step", state.steps)
                .with("tool_choice", json!(choice))
                .with(
                    "request",
                    self.provider
                        .wire_body(&request)
                        .unwrap_or_else(|| serde_json::to_value(&request).unwrap_or(Value::Null)),
                ),
        );
        let remaining = state.deadline.saturating_duration_since(Instant::now());
        let response = match tokio::time::timeout(remaining, self.provider.complete(&request)).await
        {
            Ok(Ok(response)) => response,
            Ok(Err(err)) => return Err(AgentError::Provider(err)),
            Err(_) => {
                return Err(AgentError::Timeout {
                    after: self.budgets.overall_timeout,
                });
            }
        };
        state.usage.add(response.usage);
        self.trace(
            Event::info("response")
                .with("step", state.steps)
                .with("stop_reason", json!(response.stop_reason))
                .with("input_tokens", json!(response.usage.input_tokens))
                .with("output_tokens", json!(response.usage.output_tokens))
                .with("text", clipped_text(&response, ARTIFACT_MAX))
                .with(
                    "tool_calls",
                    json!(
                        response
                            .tool_uses()
                            .iter()
                            .map(|(_, name, _)| *name)
                            .collect::<Vec<_>>()
                    ),
                )
                .with("raw", clip_strings(&response.raw, ARTIFACT_MAX)),
        );
        Ok(response)
    }

    /// The one request without tools after a budget ran out.
    async fn finalize(
        &mut self,
        task: &Task,
        state: &mut State,
        which: &str,
    ) -> Result<CompletionResponse, AgentError> {
        self.trace(
            Event::warn("budget.exhausted")
                .with("budget", which)
                .with("steps", state.steps)
                .with("tool_calls", state.tool_calls),
        );
        state.messages.push(Message::user(format!(
            "The {which} budget is used up: you cannot call tools any more. Answer now from \
             the evidence you have. {}",
            task.format_reminder
        )));
        // The last results may go now that a newer message follows them.
        self.fit_window(task, state, &[], 0);
        self.call_without_tools(task, state).await
    }

    /// The one repair request after a failed validation.
    async fn repair(
        &mut self,
        task: &Task,
        state: &mut State,
        answer: &str,
        problems: &[String],
    ) -> Result<CompletionResponse, AgentError> {
        self.trace(Event::info("repair").with("problems", json!(problems)));
        state
            .messages
            .push(Message::assistant(clip_middle(answer, REPAIR_ANSWER_MAX)));
        let list = problem_list(problems);
        state.messages.push(Message::user(format!(
            "Your answer did not pass validation:\n{list}Reply again with a corrected answer \
             that fixes every problem listed. Do not call tools. {}",
            task.format_reminder
        )));
        self.call_without_tools(task, state).await
    }

    async fn call_without_tools(
        &mut self,
        task: &Task,
        state: &mut State,
    ) -> Result<CompletionResponse, AgentError> {
        let response = self.call(task, state, ToolChoice::None).await?;
        if let Some((_, name, _)) = response.tool_uses().first() {
            if task.tools.is_empty() {
                return Err(AgentError::ToolsNotAllowed {
                    tool: (*name).to_owned(),
                });
            }
            return Err(AgentError::KeptCallingTools);
        }
        Ok(response)
    }
}

/// The reply's text and stop reason, the reply consumed: a reply of one text
/// block (the usual answer) gives its string up without a copy.
fn into_text(response: CompletionResponse) -> (String, StopReason) {
    let CompletionResponse {
        mut content,
        stop_reason,
        raw,
        ..
    } = response;
    drop(raw);
    let texts = content
        .iter()
        .filter(|b| matches!(b, ContentBlock::Text { .. }))
        .count();
    if texts == 1
        && let Some(ContentBlock::Text { text }) = content
            .iter_mut()
            .find(|b| matches!(b, ContentBlock::Text { .. }))
    {
        return (std::mem::take(text), stop_reason);
    }
    (llm::text_of(&content), stop_reason)
}

/// The reply's text for a trace, cut to `max` bytes, without first joining a
/// long single block into a copy.
fn clipped_text(response: &CompletionResponse, max: usize) -> String {
    let mut texts = response.content.iter().filter_map(|b| match b {
        ContentBlock::Text { text } => Some(text.as_str()),
        _ => None,
    });
    match (texts.next(), texts.next()) {
        (None, _) => String::new(),
        (Some(only), None) => clip_middle(only, max).into_owned(),
        _ => clip_middle(&response.text(), max).into_owned(),
    }
}

/// A block of a model turn as the transcript keeps it (and sends it back on
/// every later request): text and the strings of tool arguments cut to
/// [`REPAIR_ANSWER_MAX`] bytes each.
fn transcript_block(block: &ContentBlock) -> ContentBlock {
    match block {
        ContentBlock::Text { text } => ContentBlock::Text {
            text: clip_middle(text, REPAIR_ANSWER_MAX).into_owned(),
        },
        ContentBlock::ToolUse { id, name, input } => ContentBlock::ToolUse {
            id: id.clone(),
            name: name.clone(),
            input: clip_strings(input, REPAIR_ANSWER_MAX),
        },
        other => other.clone(),
    }
}

/// The problems as a `- …` list for the repair request: at most
/// [`REPAIR_PROBLEMS_MAX`] of them, each cut to `REPAIR_PROBLEM_MAX` bytes.
fn problem_list(problems: &[String]) -> String {
    let mut list: String = problems
        .iter()
        .take(REPAIR_PROBLEMS_MAX)
        .map(|p| format!("- {}\n", clip_middle(p, REPAIR_PROBLEM_MAX)))
        .collect();
    if problems.len() > REPAIR_PROBLEMS_MAX {
        list.push_str(&format!(
            "- … and {} more problems like these\n",
            problems.len() - REPAIR_PROBLEMS_MAX
        ));
    }
    list
}

/// The problems joined with `; ` for one line of an error message: at most
/// five, each cut to `REPAIR_PROBLEM_MAX` bytes, the rest counted.
pub fn problem_summary(problems: &[String]) -> String {
    let mut text = problems
        .iter()
        .take(5)
        .map(|p| clip_middle(p, REPAIR_PROBLEM_MAX))
        .collect::<Vec<_>>()
        .join("; ");
    if problems.len() > 5 {
        text.push_str(&format!("; and {} more", problems.len() - 5));
    }
    text
}

/// The task's validator decides; without one, any non-empty answer passes.
/// (A task whose real output is collected by its tools, like annotation, passes a
/// validator that accepts an empty final text.)
fn check(validator: Option<&dyn Validator>, text: &str) -> Result<String, Vec<String>> {
    match validator {
        Some(v) => v.validate(text),
        None if text.trim().is_empty() => Err(vec!["the answer is empty".to_owned()]),
        None => Ok(text.to_owned()),
    }
}

/// A task whose answer is one JSON value matching a schema: the structured-output
/// mode for providers without tool use.
#[derive(Debug, Clone)]
pub struct StructuredTask {
    pub name: String,
    pub system: String,
    /// Developer layers and the user prompt; the schema is appended to the last
    /// message.
    pub messages: Vec<Message>,
    /// A short name for the schema (`[a-zA-Z0-9_-]`).
    pub schema_name: String,
    pub schema: Value,
}

impl Runner<'_> {
    /// Asks for one JSON value matching `task.schema`, validates it (one repair
    /// pass), and returns it.
    pub async fn run_structured(
        &mut self,
        task: &StructuredTask,
    ) -> Result<(Value, Outcome), AgentError> {
        let schema_text = serde_json::to_string_pretty(&task.schema).unwrap_or_default();
        let mut messages = task.messages.clone();
        messages.push(Message::user(format!(
            "Reply with one JSON value that matches this JSON Schema, and nothing else (no \
             prose, no code fences):\n{schema_text}"
        )));
        let plain = Task {
            name: task.name.clone(),
            system: task.system.clone(),
            messages,
            tools: ToolRegistry::default(),
            format_reminder: "Reply with the JSON value only.".to_owned(),
            json_format: Some(JsonFormat {
                name: task.schema_name.clone(),
                schema: task.schema.clone(),
            }),
        };
        let schema = task.schema.clone();
        let validator = move |text: &str| -> Result<String, Vec<String>> {
            let value = extract_json(text).map_err(|e| vec![e])?;
            schema::validate(&value, &schema).map_err(|e| vec![e])?;
            Ok(value.to_string())
        };
        let outcome = self.run(&plain, Some(&validator)).await?;
        let value = serde_json::from_str(&outcome.output).map_err(|e| AgentError::Invalid {
            problems: vec![e.to_string()],
            output: outcome.output.clone(),
        })?;
        Ok((value, outcome))
    }
}

/// The JSON value in a model's answer: the whole text, or the text inside a code
/// fence, or the span from the first `{`/`[` to the last `}`/`]`.
pub fn extract_json(text: &str) -> Result<Value, String> {
    let trimmed = text.trim();
    if let Ok(value) = serde_json::from_str(trimmed) {
        return Ok(value);
    }
    let fenced = trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|rest| rest.trim_end().strip_suffix("```"));
    if let Some(inner) = fenced
        && let Ok(value) = serde_json::from_str(inner.trim())
    {
        return Ok(value);
    }
    let start = trimmed.find(['{', '[']);
    let end = trimmed.rfind(['}', ']']);
    if let (Some(start), Some(end)) = (start, end)
        && start < end
        && let Ok(value) = serde_json::from_str(&trimmed[start..=end])
    {
        return Ok(value);
    }
    Err("the answer is not valid JSON".to_owned())
}

/// `name`'s result envelope, its output cut at `max_bytes`.
async fn dispatch_capped(
    task: &Task,
    name: &str,
    input: &Value,
    limits: ToolLimits,
    max_bytes: usize,
) -> Value {
    task.tools
        .dispatch_async(
            name,
            input,
            ToolLimits {
                max_bytes,
                ..limits
            },
        )
        .await
        .to_value()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_found_in_fences_and_prose() {
        assert_eq!(extract_json(" {\"a\":1} ").unwrap(), json!({"a": 1}));
        assert_eq!(
            extract_json("```json\n{\"a\":2}\n```").unwrap(),
            json!({"a": 2})
        );
        assert_eq!(
            extract_json("Here you go: [1,2] thanks").unwrap(),
            json!([1, 2])
        );
        assert!(extract_json("no json here").is_err());
        assert!(extract_json("{broken").is_err());
    }
}
