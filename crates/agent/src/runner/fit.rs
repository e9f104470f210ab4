//! The run within a context window ([`Runner::with_context_window`]): each
//! request's output cap sized to what the window leaves (and refused when it
//! does not fit), old tool results dropped to make room, and each tool result
//! cut to the room left.

use llm::{CompletionRequest, ContentBlock, Message, Role, ToolChoice};
use serde_json::{Value, json};

use super::{AgentError, CUT_OFF_CAP_FACTOR, Runner, State, Task};
use crate::tool::ToolLimits;
use crate::trace::Event;
use crate::window::{ContextWindow, estimate_tokens, request_tokens};

/// Tokens a tool result should have room for before old results are dropped.
const MIN_RESULT_ROOM: u32 = 1_000;
/// Below this byte cap a tool result is not worth sending: the call fails with
/// `CONTEXT_FULL` instead.
const MIN_RESULT_BYTES: usize = 400;

impl Runner<'_> {
    /// The request one model call sends: the current conversation, its output
    /// cap sized to the window (and noted as the last cap); an error, and
    /// nothing sent, when its input exceeds what the window allows.
    pub(super) fn sized_request(
        &mut self,
        task: &Task,
        state: &State,
        choice: ToolChoice,
    ) -> Result<CompletionRequest, AgentError> {
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
        Ok(request)
    }

    /// The cap a cut-off reply is asked again with: [`CUT_OFF_CAP_FACTOR`]
    /// times the cap, within what the context window leaves the request;
    /// `None` when that is no more than the cap (or there is no cap).
    pub(super) fn larger_cap(&self, task: &Task, state: &State) -> Option<u32> {
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

    /// Makes the conversation (plus `pending` tool results) fit the window with
    /// `needed` tokens to spare, dropping old tool results and arguments; the
    /// task's own messages and the newest turn are kept. True if it fits (or
    /// there is no window).
    pub(super) fn fit_window(
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
    pub(super) async fn dispatch_within(
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
