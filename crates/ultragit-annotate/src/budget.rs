//! The writing agent's token budget (spec 000 "Token Budget Management"),
//! computed from the model's context window (`ultragit.contextWindow`).
//!
//! | part | allocation |
//! |---|---|
//! | output per call | `maxTokensPerResponse` (4,096 by default) when the window leaves room for it, else what it leaves, never less than the reserve |
//! | output reserve | `maxTokensPerResponse`, at most an eighth of the window: what the input budgets leave for the answer |
//! | input per request | nine tenths of the window (a margin for the providers' JSON wrapping), less the reserve |
//! | fixed | system prompt and tool definitions, measured |
//! | diff | at most half of what the fixed part leaves: the first message carries the diff when it fits, else a per-file summary |
//! | commit | the rest of the first message (task, commit message, author context, file list): at most a quarter of what the fixed part leaves, each part cut with a note naming the tool that reads all of it |
//! | recent annotations | at most 2,000 tokens (and a quarter of what is left) |
//! | tool results and turns | the rest; every tool result is cut to the room left (`agent::window`) |
//!
//! Tokens are estimated as bytes / 4 ([`agent::estimate_tokens`]).

/// The spec's cap on recent annotations, in tokens.
pub(crate) const RECENT_ANNOTATIONS_TOKENS: u32 = 2_000;

/// The token allocation of one agent run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// The model's context window.
    pub window: u32,
    /// Output tokens each call asks for when the window leaves room
    /// (`maxTokensPerResponse`).
    pub cap: u32,
    /// Output tokens the input budgets reserve for the answer: the cap, at
    /// most an eighth of the window.
    pub output: u32,
    /// Tokens of the system prompt and tool definitions.
    pub fixed: u32,
    /// The most the diff may take in the first message.
    pub diff: u32,
    /// The most the rest of the first message may take: the task, the
    /// commit's message and author context, the list of files.
    pub commit: u32,
    /// The most recent annotations may take in one tool result.
    pub recent: u32,
}

impl Budget {
    /// The allocation for a window of `window` tokens, answers of at most
    /// `max_tokens_per_response`, and `fixed` tokens of prompt and tools.
    pub fn new(window: u32, max_tokens_per_response: u32, fixed: u32) -> Budget {
        let output = max_tokens_per_response.min(window / 8).max(1);
        let input = (window / 10 * 9).saturating_sub(output);
        let left = input.saturating_sub(fixed);
        Budget {
            window,
            cap: max_tokens_per_response.max(1),
            output,
            fixed,
            diff: left / 2,
            commit: left / 4,
            recent: RECENT_ANNOTATIONS_TOKENS.min(left / 4),
        }
    }

    /// The most input tokens one request may hold.
    pub fn input_limit(&self) -> u32 {
        agent::ContextWindow {
            tokens: self.window,
            output: self.output,
        }
        .input_limit()
    }
}

impl Default for Budget {
    /// A 128k window with 4,096-token answers and about 2,500 tokens of
    /// prompt and tools.
    fn default() -> Self {
        Budget::new(128_000, 4_096, 2_500)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_windows_get_a_proportionate_split() {
        let small = Budget::new(8_192, 4_096, 2_500);
        assert_eq!(small.output, 1_024);
        assert_eq!(small.input_limit(), 6_347);
        assert_eq!(small.diff, (6_347 - 2_500) / 2);
        assert_eq!(small.commit, (6_347 - 2_500) / 4);
        assert_eq!(small.recent, (6_347 - 2_500) / 4);
        let large = Budget::default();
        assert_eq!(large.output, 4_096);
        assert_eq!(large.recent, RECENT_ANNOTATIONS_TOKENS);
    }
}
