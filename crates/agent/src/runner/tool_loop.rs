//! The tool loop, one stage per step of a round: check the budgets, one model
//! turn, its tool calls read off the reply, run, and handed back, until a reply
//! answers or a budget runs out.

use llm::{CompletionResponse, ContentBlock, Message, Role, StopReason, ToolChoice, Usage};
use serde_json::{Value, json};

use super::text::transcript_block;
use super::{AgentError, REPAIR_ANSWER_MAX, Runner, State, Task};
use crate::clip::clip_middle;
use crate::trace::Event;

/// One tool call of a reply, owned, so the reply can go before the calls run.
struct Call {
    id: String,
    name: String,
    input: Value,
}

/// A reply of the tool loop.
struct Turn {
    response: CompletionResponse,
    /// The output cap cut it (after the retry, if one was made).
    still_cut: bool,
}

/// What a reply amounts to.
enum Reply {
    /// It calls no tool: it is the answer.
    Answer(CompletionResponse),
    /// Its tool calls, and what decides how their round ends.
    Calls(Vec<Call>, Finish),
}

/// What of a reply with tool calls decides how its round ends.
struct Finish {
    /// Every call is to a finishing tool and the reply was not cut.
    finishing: bool,
    /// The reply's text when `finishing`, else empty.
    alongside: String,
    stop: StopReason,
    still_cut: bool,
}

/// The results of a reply's tool calls.
struct Results {
    blocks: Vec<ContentBlock>,
    /// A call found the tool-call budget used up.
    exhausted: bool,
}

/// How a round of the loop ended.
enum Round {
    /// Its finishing tools all succeeded: this is the answer.
    Answer(CompletionResponse),
    /// The tool-call budget ran out.
    OutOfCalls,
    /// The results went back: ask the model again.
    Continue,
}

impl Runner<'_> {
    /// Rounds of model turn and tool calls until a reply answers, or a budget
    /// runs out and the final tool-free request answers.
    pub(super) async fn tool_loop(
        &mut self,
        task: &Task,
        state: &mut State,
    ) -> Result<CompletionResponse, AgentError> {
        loop {
            if let Some(budget) = self.exhausted_budget(task, state) {
                return self.finalize(task, state, budget).await;
            }
            let turn = self.model_turn(task, state).await?;
            let (calls, finish) = match self.read_turn(task, state, turn)? {
                Reply::Answer(response) => return Ok(response),
                Reply::Calls(calls, finish) => (calls, finish),
            };
            let results = self.run_calls(task, state, calls).await;
            match self.hand_back(state, finish, results) {
                Round::Answer(response) => return Ok(response),
                Round::OutOfCalls => return self.finalize(task, state, "tool-call").await,
                Round::Continue => {}
            }
        }
    }

    /// The budget that allows no further turn: `step` when the steps are used
    /// up, else `context` when the conversation cannot be fitted to the window
    /// (it is trimmed on the way).
    fn exhausted_budget(&mut self, task: &Task, state: &mut State) -> Option<&'static str> {
        if state.steps >= self.budgets.max_steps {
            return Some("step");
        }
        if !self.fit_window(task, state, &[], 0) {
            return Some("context");
        }
        None
    }

    /// One model call with tools on; a reply the cap cut is asked again, once
    /// per run, with a larger cap ([`Runner::retry_cut_off_replies`]).
    async fn model_turn(&mut self, task: &Task, state: &mut State) -> Result<Turn, AgentError> {
        let mut response = self.call(task, state, ToolChoice::Auto).await?;
        let mut still_cut = false;
        if response.stop_reason == StopReason::MaxTokens && self.cut_off_hint.is_some() {
            if !state.retried_cut
                && let Some(more) = self.larger_cap(task, state)
            {
                state.retried_cut = true;
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
        Ok(Turn {
            response,
            still_cut,
        })
    }

    /// The reply read: the answer if it calls no tool; else it joins the
    /// transcript, the finishing text is noted, and its calls are taken before
    /// it is dropped.
    fn read_turn(&self, task: &Task, state: &mut State, turn: Turn) -> Result<Reply, AgentError> {
        let Turn {
            response,
            still_cut,
        } = turn;
        let calls: Vec<Call> = response
            .tool_uses()
            .into_iter()
            .map(|(id, name, input)| Call {
                id: id.to_owned(),
                name: name.to_owned(),
                input: input.clone(),
            })
            .collect();
        if calls.is_empty() {
            return Ok(Reply::Answer(response));
        }
        if task.tools.is_empty() {
            return Err(AgentError::ToolsNotAllowed {
                tool: calls[0].name.clone(),
            });
        }
        state.messages.push(Message {
            role: Role::Assistant,
            content: response.content.iter().map(transcript_block).collect(),
        });
        let finishing = !still_cut && calls.iter().all(|c| self.finishing.contains(&c.name));
        let alongside = if finishing {
            response.text()
        } else {
            String::new()
        };
        if state.finishing_text.is_none() && calls.iter().any(|c| self.finishing.contains(&c.name))
        {
            let text = response.text();
            if !text.trim().is_empty() {
                state.finishing_text = Some(clip_middle(&text, REPAIR_ANSWER_MAX).into_owned());
            }
        }
        let stop = response.stop_reason.clone();
        drop(response);
        let finish = Finish {
            finishing,
            alongside,
            stop,
            still_cut,
        };
        Ok(Reply::Calls(calls, finish))
    }

    /// Runs the calls in order, each traced with its result; a call beyond the
    /// tool-call budget gets a `BUDGET_EXHAUSTED` error instead.
    async fn run_calls(&mut self, task: &Task, state: &mut State, calls: Vec<Call>) -> Results {
        let mut blocks = Vec::with_capacity(calls.len());
        let mut exhausted = false;
        for Call { id, name, input } in calls {
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
                self.dispatch_within(task, state, &blocks, &id, &name, &input)
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
            blocks.push(ContentBlock::ToolResult {
                tool_use_id: id,
                content: envelope.to_string(),
                is_error: !ok,
            });
        }
        Results { blocks, exhausted }
    }

    /// The results go back as one user turn (after a reply still cut, with the
    /// hint how to go on); the round is the answer when finishing tools all
    /// succeeded.
    fn hand_back(&mut self, state: &mut State, finish: Finish, results: Results) -> Round {
        let Results {
            mut blocks,
            exhausted,
        } = results;
        let all_ok = blocks.iter().all(|r| {
            matches!(
                r,
                ContentBlock::ToolResult {
                    is_error: false,
                    ..
                }
            )
        });
        if finish.still_cut
            && let Some(hint) = &self.cut_off_hint
        {
            blocks.push(ContentBlock::Text {
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
            content: blocks,
        });
        if finish.finishing && all_ok {
            self.trace(Event::info("finished.with_tools"));
            return Round::Answer(finishing_answer(finish.alongside, finish.stop));
        }
        if exhausted {
            Round::OutOfCalls
        } else {
            Round::Continue
        }
    }
}

/// The answer of a round whose finishing tools all succeeded: the text beside
/// the calls, stopped at the cap if the reply was, else as a finished turn.
fn finishing_answer(alongside: String, stop: StopReason) -> CompletionResponse {
    CompletionResponse {
        content: vec![ContentBlock::Text { text: alongside }],
        stop_reason: if stop == StopReason::MaxTokens {
            stop
        } else {
            StopReason::EndTurn
        },
        usage: Usage::default(),
        model: None,
        raw: Value::Null,
    }
}
