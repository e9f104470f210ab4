//! Fitting results into [`ToolLimits`]: sizes measured as the model sees them
//! (JSON-encoded), cuts at line and character boundaries, and the bookkeeping that
//! tells which cap applied.
//!
//! The registry cuts any result still over `max_bytes` as a last resort; the tools
//! cap themselves first so that what is left out is whole entries or lines, and the
//! hint can say how to ask for the rest.

use agent::{ToolLimits, ToolOutput, Truncation, TruncationLimit};
use serde_json::Value;

/// The bytes the capped part of a result may take: `max_bytes` less the size of
/// `skeleton`, the result with that part empty (and unknown numbers set to
/// [`usize::MAX`], so they take their largest room).
pub(crate) fn room(limits: &ToolLimits, skeleton: &Value) -> usize {
    limits.max_bytes.saturating_sub(skeleton.to_string().len())
}

/// The bytes `c` takes inside a JSON string (serde_json's escaping).
fn json_char_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

/// The length of `s` as a JSON string, quotes included.
pub(crate) fn json_len(s: &str) -> usize {
    2 + s.chars().map(json_char_len).sum::<usize>()
}

/// The longest prefix of `s` whose JSON-encoded content (quotes excluded) takes at
/// most `max` bytes. Always ends on a character boundary.
pub(crate) fn cut_json(s: &str, max: usize) -> &str {
    let mut used = 0;
    for (at, c) in s.char_indices() {
        used += json_char_len(c);
        if used > max {
            return &s[..at];
        }
    }
    s
}

/// A running budget of entries and bytes for one result.
#[derive(Debug)]
pub(crate) struct Budget {
    max_entries: usize,
    entries_left: usize,
    bytes_left: usize,
}

impl Budget {
    /// A budget of `max_entries` entries and `max_bytes` JSON bytes.
    pub(crate) fn new(max_entries: usize, max_bytes: usize) -> Budget {
        Budget {
            max_entries,
            entries_left: max_entries,
            bytes_left: max_bytes,
        }
    }

    /// The result `data` of a list: complete when nothing `stop`ped it, else cut
    /// by that cap with `shown` of `total` entries in it and `hint` on how to see
    /// the rest.
    pub(crate) fn output(
        &self,
        data: Value,
        stop: Option<TruncationLimit>,
        limits: &ToolLimits,
        (shown, total): (usize, usize),
        hint: String,
    ) -> ToolOutput {
        let Some(limit) = stop else {
            return ToolOutput::complete(data);
        };
        let max = match limit {
            TruncationLimit::Bytes => limits.max_bytes,
            _ => self.max_entries,
        };
        let truncation = Truncation {
            limit,
            max,
            total: Some(total),
            shown,
            hint,
        };
        ToolOutput::truncated(data, truncation)
    }

    /// Takes one entry of `json_bytes` (a separator is added), or says which cap
    /// stops it. Nothing is taken when it does not fit.
    pub(crate) fn take(&mut self, json_bytes: usize) -> Result<(), TruncationLimit> {
        if self.entries_left == 0 {
            return Err(TruncationLimit::Entries);
        }
        let cost = json_bytes + 1;
        if cost > self.bytes_left {
            return Err(TruncationLimit::Bytes);
        }
        self.entries_left -= 1;
        self.bytes_left -= cost;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_sizes_match_serde() {
        for s in [
            "",
            "plain",
            "q\"b\\s",
            "tab\tnl\nnul\0",
            "ü日本",
            "\u{1}\u{7f}",
        ] {
            assert_eq!(
                json_len(s),
                serde_json::to_string(s).unwrap().len(),
                "{s:?}"
            );
        }
        assert_eq!(cut_json("aé\"b", 3), "aé");
        assert_eq!(cut_json("aé\"b", 4), "aé");
        assert_eq!(cut_json("aé\"b", 5), "aé\"");
        assert_eq!(cut_json("abc", 10), "abc");
    }

    #[test]
    fn budget_counts_entries_and_bytes() {
        let mut budget = Budget::new(2, 10);
        assert_eq!(budget.take(4), Ok(()));
        assert_eq!(budget.take(6), Err(TruncationLimit::Bytes));
        assert_eq!(budget.take(3), Ok(()));
        assert_eq!(budget.take(0), Err(TruncationLimit::Entries));
    }
}
