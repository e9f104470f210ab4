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

mod fit;
mod structured;
mod text;
mod tool_loop;

use std::time::{Duration, Instant};

use llm::{
    CompletionRequest, CompletionResponse, JsonFormat, LlmError, LlmProvider, Message, StopReason,
    ToolChoice, Usage,
};
use serde_json::{Value, json};

pub use structured::StructuredTask;
pub use text::{extract_json, problem_summary};

use crate::clip::{clip_middle, clip_strings};
use crate::tool::{ToolLimits, ToolRegistry};
use crate::trace::{ARTIFACT_MAX, Event, TraceSink};
use crate::window::ContextWindow;
use text::{check, clipped_text, into_text, problem_list};

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

/// What a run carries from stage to stage: the conversation, the counts and
/// the deadline, and what the tool loop noted on the way.
struct State {
    messages: Vec<Message>,
    steps: u32,
    tool_calls: u32,
    usage: Usage,
    deadline: Instant,
    /// A budget ran out and the final request without tools was made.
    finalized: bool,
    /// [`Outcome::finishing_text`], once a reply has given it.
    finishing_text: Option<String>,
    /// The one retry of a cut-off reply ([`Runner::retry_cut_off_replies`]) is used.
    retried_cut: bool,
}

impl State {
    /// The start of a run of `task`, its deadline `timeout` from now.
    fn new(task: &Task, timeout: Duration) -> Self {
        State {
            messages: task.messages.clone(),
            steps: 0,
            tool_calls: 0,
            usage: Usage::default(),
            deadline: Instant::now() + timeout,
            finalized: false,
            finishing_text: None,
            retried_cut: false,
        }
    }

    /// What the run produced, its answer `checked`.
    fn outcome(&self, checked: Checked) -> Outcome {
        Outcome {
            output: checked.output,
            steps: self.steps,
            tool_calls: self.tool_calls,
            finalized: self.finalized,
            repaired: checked.repaired,
            stop_reason: checked.stop_reason,
            finishing_text: self.finishing_text.clone(),
            usage: self.usage,
            transcript: self.messages.clone(),
        }
    }
}

/// An answer that passed validation, as it came or after the repair pass.
struct Checked {
    output: String,
    stop_reason: StopReason,
    repaired: bool,
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
        let mut state = State::new(task, self.budgets.overall_timeout);
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

    /// The run's stages: the tool loop to an answer, the answer validated (one
    /// repair pass), the outcome.
    async fn run_inner(
        &mut self,
        task: &Task,
        validator: Option<&dyn Validator>,
        state: &mut State,
    ) -> Result<Outcome, AgentError> {
        let answer = self.tool_loop(task, state).await?;
        let checked = self.validate_answer(task, validator, state, answer).await?;
        Ok(state.outcome(checked))
    }

    /// The answer validated: as it is, or after the one repair pass.
    async fn validate_answer(
        &mut self,
        task: &Task,
        validator: Option<&dyn Validator>,
        state: &mut State,
        answer: CompletionResponse,
    ) -> Result<Checked, AgentError> {
        // The text is all that is needed of the reply from here on; a long one
        // must not be held twice while the repair reply arrives.
        let (text, stop_reason) = into_text(answer);
        let cut_off = self.repair_cut_off && stop_reason == StopReason::MaxTokens;
        match self.first_check(validator, &text, cut_off) {
            Ok(output) => Ok(Checked {
                output,
                stop_reason,
                repaired: false,
            }),
            Err(problems) => {
                self.repair_answer(task, validator, state, text, &problems, cut_off)
                    .await
            }
        }
    }

    /// The validator's verdict on the first answer; one the cap cut off
    /// (`cut_off`) fails, with the cut-off problem first.
    fn first_check(
        &self,
        validator: Option<&dyn Validator>,
        text: &str,
        cut_off: bool,
    ) -> Result<String, Vec<String>> {
        match check(validator, text) {
            Ok(_) if cut_off => Err(vec![self.cut_off_problem()]),
            Err(mut problems) if cut_off => {
                problems.insert(0, self.cut_off_problem());
                Err(problems)
            }
            checked => checked,
        }
    }

    /// The repair pass for the invalid answer `text` (asked with a larger cap
    /// when it was cut off), its reply validated; still invalid is an error.
    async fn repair_answer(
        &mut self,
        task: &Task,
        validator: Option<&dyn Validator>,
        state: &mut State,
        text: String,
        problems: &[String],
        cut_off: bool,
    ) -> Result<Checked, AgentError> {
        self.trace(
            Event::warn("validation.failed")
                .with("problems", json!(problems))
                .with("output", clip_middle(&text, ARTIFACT_MAX)),
        );
        let cap = self.budgets.max_tokens;
        if cut_off {
            self.budgets.max_tokens = cap.map(|cap| cap.saturating_mul(CUT_OFF_CAP_FACTOR));
        }
        let repaired = self.repair(task, state, &text, problems).await;
        self.budgets.max_tokens = cap;
        let repaired = repaired?;
        drop(text);
        let (again, stop_reason) = into_text(repaired);
        match check(validator, &again) {
            Ok(output) => Ok(Checked {
                output,
                stop_reason,
                repaired: true,
            }),
            Err(problems) => Err(AgentError::Invalid {
                problems,
                output: again,
            }),
        }
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
        let request = self.sized_request(task, state, choice)?;
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
        self.trace(response_event(state.steps, &response));
        Ok(response)
    }

    /// The one request without tools after a budget ran out.
    async fn finalize(
        &mut self,
        task: &Task,
        state: &mut State,
        which: &str,
    ) -> Result<CompletionResponse, AgentError> {
        state.finalized = true;
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

/// The `response` event of step `step`: the stop reason, token counts, the
/// tools called, and the text and raw body cut for the trace.
fn response_event(step: u32, response: &CompletionResponse) -> Event {
    Event::info("response")
        .with("step", step)
        .with("stop_reason", json!(response.stop_reason))
        .with("input_tokens", json!(response.usage.input_tokens))
        .with("output_tokens", json!(response.usage.output_tokens))
        .with("text", clipped_text(response, ARTIFACT_MAX))
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
        .with("raw", clip_strings(&response.raw, ARTIFACT_MAX))
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
