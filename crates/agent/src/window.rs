//! Keeping a conversation within a model's context window.
//!
//! Tokens are estimated the one way the workspace does it (spec 003 §4.8, as
//! `ultragit-read`'s `estimate_tokens`): bytes / 4, rounded up. A request is
//! measured as the JSON it serializes to (system prompt, messages, tool specs),
//! which is what providers send give or take their own wrapping; the input
//! limit keeps a tenth of the window as a margin for that wrapping, plus the
//! output tokens the request asks for.
//!
//! Two mechanisms keep a run inside the window (see [`crate::Runner::with_context_window`]):
//! old tool results and old tool-call arguments are replaced by a short
//! marker, one at a time, oldest first ([`ContextWindow::fit`]), so the newest
//! turn is never touched; and a tool result is cut to what is left
//! ([`ContextWindow::room`]). A result that fits goes back whole without
//! touching anything older; a larger one may claim up to half the input by
//! dropping old results, and is cut beyond that.

use llm::{CompletionRequest, ContentBlock, Message, Role};
use serde_json::json;

/// Estimated tokens of `text`: bytes / 4, rounded up.
pub fn estimate_tokens(text: &str) -> u32 {
    u32::try_from(text.len().div_ceil(4)).unwrap_or(u32::MAX)
}

/// Estimated tokens of a request: its JSON.
pub(crate) fn request_tokens(request: &CompletionRequest) -> u32 {
    serde_json::to_string(request)
        .map(|s| estimate_tokens(&s))
        .unwrap_or(u32::MAX)
}

/// What replaces an old tool result.
const ELIDED_RESULT: &str = "{\"ok\":true,\"elided\":\"this result was dropped to keep the conversation within the context window; call the tool again if you need it\"}";

/// A block longer than this (bytes of JSON) is worth eliding.
const ELIDE_OVER: usize = 160;

/// The window of one run: the model's context, less the output it may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextWindow {
    /// The model's context window, in tokens.
    pub tokens: u32,
    /// Output tokens each request reserves.
    pub output: u32,
}

impl ContextWindow {
    /// The most input tokens a request may hold: nine tenths of the window
    /// (the margin covers the providers' own JSON wrapping), less the output.
    pub fn input_limit(&self) -> u32 {
        (self.tokens / 10 * 9).saturating_sub(self.output)
    }

    /// Tokens left for more input after `request`.
    pub fn room(&self, request: &CompletionRequest) -> u32 {
        self.input_limit().saturating_sub(request_tokens(request))
    }

    /// Shrinks `request.messages[keep_head..len-keep_tail]` (old tool results
    /// first, then old tool-call arguments, oldest first) until the request
    /// fits with `needed` tokens to spare. Returns whether it fits.
    pub fn fit(
        &self,
        request: &mut CompletionRequest,
        keep_head: usize,
        keep_tail: usize,
        needed: u32,
    ) -> bool {
        let limit = self.input_limit().saturating_sub(needed);
        let mut tokens = request_tokens(request);
        if tokens <= limit {
            return true;
        }
        let end = request.messages.len().saturating_sub(keep_tail);
        for pass in [Pass::Results, Pass::Arguments] {
            for index in keep_head.min(end)..end {
                // One block at a time: a turn's other results stay if they fit.
                while elide_one(&mut request.messages[index], pass) {
                    tokens = request_tokens(request);
                    if tokens <= limit {
                        return true;
                    }
                }
            }
        }
        tokens <= limit
    }
}

#[derive(Clone, Copy)]
enum Pass {
    Results,
    Arguments,
}

/// Elides the first long block of `message` that `pass` is about; true if
/// there was one.
fn elide_one(message: &mut Message, pass: Pass) -> bool {
    // The markers are shorter than ELIDE_OVER, so an elided block is never
    // elided again.
    for block in &mut message.content {
        match (pass, &message.role, block) {
            (Pass::Results, Role::User, ContentBlock::ToolResult { content, .. })
                if content.len() > ELIDE_OVER =>
            {
                *content = ELIDED_RESULT.to_owned();
                return true;
            }
            (Pass::Arguments, Role::Assistant, ContentBlock::ToolUse { input, .. })
                if input.to_string().len() > ELIDE_OVER =>
            {
                *input = json!({"elided": "arguments dropped to keep within the context window"});
                return true;
            }
            (Pass::Arguments, Role::Assistant, ContentBlock::Text { text })
                if text.len() > ELIDE_OVER =>
            {
                *text = "[earlier reasoning dropped to keep within the context window]".to_owned();
                return true;
            }
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(id: &str, text: &str) -> Message {
        Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: id.to_owned(),
                content: text.to_owned(),
                is_error: false,
            }],
        }
    }

    #[test]
    fn old_results_go_first_and_the_newest_stays() {
        let window = ContextWindow {
            tokens: 2_000,
            output: 200,
        };
        let mut request = CompletionRequest {
            messages: vec![
                Message::user("first"),
                result("a", &"x".repeat(4_000)),
                result("b", &"y".repeat(4_000)),
            ],
            ..CompletionRequest::default()
        };
        assert!(request_tokens(&request) > window.input_limit());
        assert!(window.fit(&mut request, 1, 1, 0));
        let json = serde_json::to_string(&request).unwrap();
        assert!(json.contains("yyyy") && !json.contains("xxxx"));
        assert!(request_tokens(&request) <= window.input_limit());
        // Nothing left to elide: it cannot fit.
        let mut request = CompletionRequest {
            messages: vec![Message::user("z".repeat(9_000))],
            ..CompletionRequest::default()
        };
        assert!(!window.fit(&mut request, 1, 0, 0));
    }

    #[test]
    fn one_result_of_a_turn_goes_at_a_time() {
        let window = ContextWindow {
            tokens: 3_000,
            output: 200,
        };
        let turn = Message {
            role: Role::User,
            content: ["a", "b", "c"]
                .iter()
                .map(|id| ContentBlock::ToolResult {
                    tool_use_id: (*id).to_owned(),
                    content: id.repeat(4_000),
                    is_error: false,
                })
                .collect(),
        };
        let mut request = CompletionRequest {
            messages: vec![Message::user("first"), turn, Message::user("newest")],
            ..CompletionRequest::default()
        };
        assert!(window.fit(&mut request, 1, 1, 0));
        let json = serde_json::to_string(&request).unwrap();
        assert!(!json.contains("aaaa"), "the oldest result went");
        assert!(
            json.contains("bbbb") && json.contains("cccc"),
            "the others stayed"
        );
        assert!(ELIDED_RESULT.len() <= ELIDE_OVER);
    }

    #[test]
    fn tokens_are_bytes_over_four() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("abcde"), 2);
    }
}
