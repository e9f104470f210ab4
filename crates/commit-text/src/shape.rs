//! Shaping: the deterministic cleanup of a model's raw answer into a commit
//! message.
//!
//! [`shape`] removes control characters and terminal escape sequences
//! ([`strip_controls`]), thinking blocks ([`strip_think`]), a fence around the
//! whole answer, lead-in lines ("Here is the commit message:"),
//! `Subject:`/`Body:` labels, AI attribution and trailers nobody asked for,
//! and then [`reflow`]s the body to [`WIDTH`] columns. The shaped message then
//! goes to [`validate`](crate::validate::validate).
//!
//! **Invariants:**
//! - `shape(shape(x)) == shape(x)` for every input.
//! - Output of [`shape`] holds no control character but `\n` and `\t`, no
//!   escape sequence and no bidirectional override: model text is untrusted, and
//!   the message reaches `git commit`, `git log` and terminals. Cleaning rather
//!   than rejecting costs no repair round, and nobody means a control
//!   character in a commit message.
//! - Output of [`shape`] and [`reflow`] has no trailing whitespace on any
//!   line, no blank-line runs, and does not end with a newline.
//! - Widths are counted in `char`s, never bytes.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::LazyLock;

use regex::Regex;

use crate::WIDTH;
use crate::built_in;
use crate::message::Message;
use crate::message::{join_paragraphs, paragraphs};
use crate::reflow::reflow;
use crate::trailer::{is_trailer_line, trailer_key};

/// Options for shaping a model's answer ([`check`](crate::check())).
#[derive(Debug, Clone, Default)]
pub struct ShapeOptions {
    /// Trailer keys (compared case-insensitively) that may remain in the
    /// message, e.g. `Signed-off-by` because the original message had it or
    /// the operator asked for it. Every other trailer in the final paragraph,
    /// and every AI-attribution trailer, is removed.
    pub keep_trailers: Vec<String>,
}

impl ShapeOptions {
    /// Whether the trailer `key` is allowed to remain.
    fn keeps(&self, key: &str) -> bool {
        self.keep_trailers
            .iter()
            .any(|kept| kept.trim().trim_end_matches(':').eq_ignore_ascii_case(key))
    }
}

/// Trailer keys the operator may ask for by naming them in a hint.
const HINTABLE_KEYS: [&str; 9] = [
    "Signed-off-by",
    "Co-authored-by",
    "Reviewed-by",
    "Acked-by",
    "Tested-by",
    "Refs",
    "Fixes",
    "Closes",
    "Change-Id",
];

/// Trailer keys that may stay in a generated message, sorted and unique: the
/// keys of the trailer block of the `original` message (when amending) and
/// those of the usual keys (`Signed-off-by`, `Co-authored-by`, `Reviewed-by`,
/// `Acked-by`, `Tested-by`, `Refs`, `Fixes`, `Closes`, `Change-Id`) the
/// operator's `hint` names (case-insensitively).
pub fn kept_trailers(original: Option<&str>, hint: Option<&str>) -> Vec<String> {
    let mut keys: Vec<String> = original
        .map(Message::parse)
        .map(|message| message.trailers.into_iter().map(|t| t.key).collect())
        .unwrap_or_default();
    if let Some(hint) = hint {
        let lower = hint.to_ascii_lowercase();
        keys.extend(
            HINTABLE_KEYS
                .iter()
                .filter(|key| lower.contains(&key.to_ascii_lowercase()))
                .map(|key| (*key).to_owned()),
        );
    }
    keys.sort();
    keys.dedup();
    keys
}

/// How many times [`shape`] repeats its cleanup pass at most.
///
/// One pass is nearly always a fixed point already; a second is needed when
/// a late step exposes structure an early step looks for (dropping a trailer
/// paragraph can leave a message that is one fenced block). The bound only
/// guards against a pathological input that keeps changing.
const MAX_SHAPE_PASSES: usize = 8;

/// Cleans up a model's raw answer into a commit message.
///
/// In order: normalizes line endings, removes control characters and escape
/// sequences ([`strip_controls`]) and thinking blocks ([`strip_think`]); unwraps a fence around the whole answer; drops lead-in
/// lines ("Here is the commit message:"), a `Subject:` label and `Body:`
/// lines; takes the first nonblank line (unquoted) as the subject and the
/// rest as the body, separated by one blank line; removes AI attribution
/// lines anywhere in the body and trailers in the final paragraph whose keys
/// are not in [`ShapeOptions::keep_trailers`]; and [`reflow`]s the body to
/// [`WIDTH`].
///
/// Fences that do not wrap the whole answer are left in place for
/// [`validate`](crate::validate::validate) to reject. The result has no trailing newline and is a fixed
/// point: shaping it again changes nothing. An answer with no content
/// shapes to the empty string.
///
/// A line for which `kept` holds is the subject as it is: when amending, the
/// commit's own subject may look like a lead-in ("Here is the fix for …:"), a
/// label or a quotation, and must stay exactly as it was. Unwrapping stops at
/// it; what wraps it (a fence, a lead-in line above it) still goes.
pub(crate) fn shape(raw: &str, options: &ShapeOptions, kept: &dyn Fn(&str) -> bool) -> String {
    let mut current = shape_pass(raw, options, kept);
    for _ in 1..MAX_SHAPE_PASSES {
        let next = shape_pass(&current, options, kept);
        if next == current {
            break;
        }
        current = next;
    }
    current
}

/// One cleanup pass of [`shape`].
fn shape_pass(raw: &str, options: &ShapeOptions, kept: &dyn Fn(&str) -> bool) -> String {
    let text = raw.replace("\r\n", "\n").replace('\r', "\n");
    let text = strip_controls(&text);
    let text = strip_think(&text);
    let lines: VecDeque<String> = text
        .split('\n')
        .map(|line| line.trim_end().to_owned())
        .collect();
    let lines = Vec::from(peel(lines, kept));
    let Some((subject, body)) = lines.split_first() else {
        return String::new();
    };
    let body: Vec<&str> = body
        .iter()
        .map(String::as_str)
        .filter(|line| !BODY_LABEL.is_match(line.trim()) && !is_attribution(line, options))
        .collect();
    let body = reflow(&body.join("\n"), WIDTH);
    let body = drop_final_trailers(&body, options);
    if body.is_empty() {
        subject.clone()
    } else {
        format!("{subject}\n\n{body}")
    }
}

/// Removes wrapping around the start of the message until none is left: blank
/// edges, a fence around everything, lead-in lines, `Subject:`/`Body:` labels,
/// and quotes or backticks around the subject line — but never a line for
/// which `kept` holds (the kept amend subject), which ends the unwrapping.
///
/// Each step can expose another (a lead-in above a fence, a label inside
/// quotes), so the steps repeat until nothing changes. Every step shortens the
/// text, so the loop ends; removing lines from the front costs nothing (a
/// deque), so it ends in time linear in the lines removed plus the fence checks.
/// Afterwards the first line, if any, is the trimmed, nonblank subject.
fn peel(mut lines: VecDeque<String>, kept: &dyn Fn(&str) -> bool) -> VecDeque<String> {
    loop {
        while lines.front().is_some_and(|line| line.trim().is_empty()) {
            lines.pop_front();
        }
        while lines.back().is_some_and(|line| line.trim().is_empty()) {
            lines.pop_back();
        }
        if let Some(first) = lines.front_mut().filter(|line| kept(line.trim())) {
            *first = first.trim().to_owned();
            return lines;
        }
        if let Some(inner) = unwrap_fence(lines.make_contiguous()) {
            lines = inner.into();
            continue;
        }
        let Some(first) = lines.front() else {
            return lines;
        };
        let first = first.trim();
        if is_preamble(first) || SUBJECT_LABEL_ONLY.is_match(first) || BODY_LABEL.is_match(first) {
            lines.pop_front();
            continue;
        }
        let replacement = if let Some(found) = SUBJECT_LABEL.find(first) {
            first[found.end()..].to_owned()
        } else if let Some(inner) = unwrap_quoted(first) {
            inner.to_owned()
        } else if first.len() != lines[0].len() {
            first.to_owned()
        } else {
            return lines;
        };
        lines[0] = replacement;
    }
}

/// `text` without control characters (but `\n` and `\t`), DEL, C1 controls and
/// bidirectional embeddings, overrides and isolates; an escape sequence goes
/// as a whole (`ESC [ … final`, `ESC ] … BEL` or `ESC \`, `ESC` and one more
/// character), so `\x1b[31mred` becomes `red`, not `[31mred`.
pub(crate) fn strip_controls(text: &str) -> Cow<'_, str> {
    let unwanted = |c: char| {
        (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !text.chars().any(unwanted) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            if !unwanted(c) {
                out.push(c);
            }
            continue;
        }
        match chars.peek() {
            // CSI: parameters and intermediates up to a final byte.
            Some('[') => {
                chars.next();
                skip_until(&mut chars, |c| ('\u{40}'..='\u{7e}').contains(&c));
            }
            // OSC, DCS, SOS, PM, APC: a string up to BEL or ST (`ESC \`).
            Some(']' | 'P' | 'X' | '^' | '_') => {
                chars.next();
                skip_until(&mut chars, |c| c == '\u{7}' || c == '\u{1b}');
                chars.next_if_eq(&'\\');
            }
            Some('\n' | '\t') | None => {}
            // Any other escape is two characters.
            Some(_) => {
                chars.next();
            }
        }
    }
    Cow::Owned(out)
}

/// Skips the characters of an escape sequence through the first for which
/// `end` holds. A sequence ends at the end of its line at the latest: a broken
/// one never swallows the rest of the message.
fn skip_until(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, end: fn(char) -> bool) {
    while let Some(&c) = chars.peek() {
        if c == '\n' {
            return;
        }
        chars.next();
        if end(c) {
            return;
        }
    }
}

/// The lines inside a fence that wraps all of `lines` (``` or ```lang on the
/// first line, ``` on the last, no other fence line between), or `None`.
fn unwrap_fence(lines: &[String]) -> Option<Vec<String>> {
    let (first, rest) = lines.split_first()?;
    let (last, inner) = rest.split_last()?;
    let opening = first.trim().strip_prefix("```")?;
    let is_lang = opening
        .chars()
        .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '+' | '.'));
    let wraps_all = is_lang
        && last.trim() == "```"
        && !inner
            .iter()
            .any(|line| line.trim_start().starts_with("```"));
    wraps_all.then(|| inner.to_vec())
}

/// Lead-in lines: "Here is the commit message:", "Sure! Here's one:",
/// "Commit message:" and the like (after markdown emphasis is removed).
static PREAMBLE: LazyLock<Regex> = LazyLock::new(|| {
    built_in(
        r"(?i)^(?:(?:here|sure|certainly|okay|ok|of\s+course|absolutely|below\s+is|below['’]s)\b.*|(?:(?:suggested|proposed|updated|revised|final|new)\s+)?commit\s+message)\s*:$",
    )
});

/// A `Subject:` label at the start of the subject line.
static SUBJECT_LABEL: LazyLock<Regex> =
    LazyLock::new(|| built_in(r"(?i)^subject(?:\s+line)?\s*:\s*"));

/// A line that is only a `Subject:` label, the subject following on the next.
static SUBJECT_LABEL_ONLY: LazyLock<Regex> =
    LazyLock::new(|| built_in(r"(?i)^subject(?:\s+line)?\s*:$"));

/// A line that is only a `Body:` label.
static BODY_LABEL: LazyLock<Regex> = LazyLock::new(|| built_in(r"(?i)^body\s*:$"));

/// Whether the (trimmed) line is a lead-in to the message rather than part of
/// it: it must end with `:` and start like a reply ("here", "sure", ...) or be
/// a "commit message:" heading.
fn is_preamble(line: &str) -> bool {
    let core = line.trim_matches(|c: char| c.is_whitespace() || matches!(c, '*' | '_' | '#'));
    PREAMBLE.is_match(core)
}

/// The text inside backticks or matching quotes that wrap all of `text`, if
/// the delimiter does not also occur inside (so `'a' and 'b'` stays as is).
fn unwrap_quoted(text: &str) -> Option<&str> {
    const PAIRS: [(char, char); 5] = [('`', '`'), ('"', '"'), ('\'', '\''), ('“', '”'), ('‘', '’')];
    PAIRS.iter().find_map(|&(open, close)| {
        let inner = text.strip_prefix(open)?.strip_suffix(close)?;
        (!inner.contains(open) && !inner.contains(close)).then_some(inner)
    })
}

/// An opening or closing thinking tag; group 1 is `/` for a closing tag.
static THINK_TAG: LazyLock<Regex> = LazyLock::new(|| built_in(r"(?i)<(/?)think(?:ing)?>"));

/// Removes `<think>…</think>` and `<thinking>…</thinking>` blocks.
///
/// Tags match case-insensitively and blocks may span lines and nest. A
/// closing tag with no open block before it (some local servers omit the
/// opening tag) drops everything up to and including it; an opening tag that
/// is never closed drops everything from it to the end. The result contains no
/// thinking tags, even ones that removing a block would have joined together.
pub(crate) fn strip_think(text: &str) -> String {
    let mut current = strip_think_once(text);
    // Removing a block can join `<thi` and `nk>` into a new tag; every round
    // that changes the text removes a tag, so this ends.
    loop {
        let next = strip_think_once(&current);
        if next == current {
            return current;
        }
        current = next;
    }
}

/// One left-to-right pass of [`strip_think`] over the tags in `text`.
fn strip_think_once(text: &str) -> String {
    let mut kept = String::with_capacity(text.len());
    let mut depth = 0_usize;
    let mut position = 0;
    for tag in THINK_TAG.captures_iter(text) {
        let whole = tag.get(0).expect("group 0 is the whole match");
        let closing = tag.get(1).is_some_and(|slash| !slash.is_empty());
        if depth == 0 {
            kept.push_str(&text[position..whole.start()]);
        }
        match (closing, depth) {
            (true, 0) => kept.clear(),
            (true, _) => depth -= 1,
            (false, _) => depth += 1,
        }
        position = whole.end();
    }
    if depth == 0 {
        kept.push_str(&text[position..]);
    }
    kept
}

/// A line that says the message or change came from an AI tool, e.g.
/// `🤖 Generated with [Claude Code](…)`; it must also name one ([`AI_TOOL`]).
static ATTRIBUTION_LINE: LazyLock<Regex> = LazyLock::new(|| {
    built_in(
        r"(?i)^[^\p{L}\p{N}]*(?:generated|created|written|authored|made|produced|assisted)\s+(?:with|by|using|via|in)\b",
    )
});

/// A trailer that credits a tool; it is attribution if the value names an AI
/// tool ([`AI_TOOL`]). Group 1 is the key.
static ATTRIBUTION_TRAILER: LazyLock<Regex> =
    LazyLock::new(|| built_in(r"(?i)^\s*(co-authored-by|generated-by|assisted-by|made-with)\s*:"));

/// Names of AI tools and vendors. `AI` itself only in capitals, so a person
/// called "Kai" or "Ai" is not matched.
static AI_TOOL: LazyLock<Regex> = LazyLock::new(|| {
    built_in(
        r"(?i:\b(?:claude|chatgpt|gpt|codex|copilot|gemini|git-agent|anthropic|openai|llm)\b)|\bAI\b",
    )
});

/// Whether `line` credits an AI tool and must go: an attribution line always,
/// an attribution trailer unless its key is kept.
fn is_attribution(line: &str, options: &ShapeOptions) -> bool {
    if !AI_TOOL.is_match(line) {
        return false;
    }
    if let Some(trailer) = ATTRIBUTION_TRAILER.captures(line) {
        return !options.keeps(&trailer[1]);
    }
    ATTRIBUTION_LINE.is_match(line)
}

/// Drops the trailers the operator did not ask for from the final paragraph,
/// if it consists of trailers only. When that empties the paragraph, the
/// paragraph before it is now final and is treated the same way.
fn drop_final_trailers(body: &str, options: &ShapeOptions) -> String {
    let mut paragraphs = paragraphs(body);
    while let Some(last) = paragraphs.last_mut() {
        if !last.iter().all(|line| is_trailer_line(line)) {
            break;
        }
        let before = last.len();
        last.retain(|line| trailer_key(line).is_some_and(|key| options.keeps(key)));
        if !last.is_empty() || before == 0 {
            break;
        }
        paragraphs.pop();
    }
    join_paragraphs(paragraphs)
}

#[cfg(test)]
mod tests;
