//! Shaping and validation of model-written commit messages.
//!
//! git-agent asks a model for a commit message. The raw answer is first
//! [`shape`]d: a deterministic cleanup that removes control characters and
//! terminal escape sequences ([`strip_controls`]), thinking blocks, a fence
//! around the whole answer, lead-in lines ("Here is the commit message:"),
//! `Subject:`/`Body:` labels, AI attribution and trailers nobody asked for,
//! and then reflows the body to [`WIDTH`] columns. The shaped message is then
//! [`validate`]d: every problem comes back as a short imperative sentence,
//! and all of them go to the model in one repair request, so each one says
//! exactly what to fix.
//!
//! The module is pure text processing: no I/O, no git, no model calls.
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

/// Target width, in characters, of the subject and of every body line.
pub const WIDTH: usize = 72;

/// Options for [`shape`].
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
/// [`validate`] to reject. The result has no trailing newline and is a fixed
/// point: shaping it again changes nothing. An answer with no content
/// shapes to the empty string.
pub fn shape(raw: &str, options: &ShapeOptions) -> String {
    let mut current = shape_pass(raw, options);
    for _ in 1..MAX_SHAPE_PASSES {
        let next = shape_pass(&current, options);
        if next == current {
            break;
        }
        current = next;
    }
    current
}

/// One cleanup pass of [`shape`].
fn shape_pass(raw: &str, options: &ShapeOptions) -> String {
    let text = raw.replace("\r\n", "\n").replace('\r', "\n");
    let text = strip_controls(&text);
    let text = strip_think(&text);
    let lines: VecDeque<String> = text
        .split('\n')
        .map(|line| line.trim_end().to_owned())
        .collect();
    let lines = Vec::from(peel(lines));
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
/// and quotes or backticks around the subject line.
///
/// Each step can expose another (a lead-in above a fence, a label inside
/// quotes), so the steps repeat until nothing changes. Every step shortens the
/// text, so the loop ends; removing lines from the front costs nothing (a
/// deque), so it ends in time linear in the lines removed plus the fence checks.
/// Afterwards the first line, if any, is the trimmed, nonblank subject.
fn peel(mut lines: VecDeque<String>) -> VecDeque<String> {
    loop {
        while lines.front().is_some_and(|line| line.trim().is_empty()) {
            lines.pop_front();
        }
        while lines.back().is_some_and(|line| line.trim().is_empty()) {
            lines.pop_back();
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
pub fn strip_controls(text: &str) -> Cow<'_, str> {
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
    Regex::new(
        r"(?i)^(?:(?:here|sure|certainly|okay|ok|of\s+course|absolutely|below\s+is|below['’]s)\b.*|(?:(?:suggested|proposed|updated|revised|final|new)\s+)?commit\s+message)\s*:$",
    )
    .expect("the preamble pattern is valid")
});

/// A `Subject:` label at the start of the subject line.
static SUBJECT_LABEL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^subject(?:\s+line)?\s*:\s*").expect("the subject label pattern is valid")
});

/// A line that is only a `Subject:` label, the subject following on the next.
static SUBJECT_LABEL_ONLY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^subject(?:\s+line)?\s*:$").expect("the subject label pattern is valid")
});

/// A line that is only a `Body:` label.
static BODY_LABEL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)^body\s*:$").expect("the body label pattern is valid"));

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
static THINK_TAG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)<(/?)think(?:ing)?>").expect("the think tag pattern is valid")
});

/// Removes `<think>…</think>` and `<thinking>…</thinking>` blocks.
///
/// Tags match case-insensitively and blocks may span lines and nest. A
/// closing tag with no open block before it (some local servers omit the
/// opening tag) drops everything up to and including it; an opening tag that
/// is never closed drops everything from it to the end. The result contains no
/// thinking tags, even ones that removing a block would have joined together.
pub fn strip_think(text: &str) -> String {
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
    Regex::new(
        r"(?i)^[^\p{L}\p{N}]*(?:generated|created|written|authored|made|produced|assisted)\s+(?:with|by|using|via|in)\b",
    )
    .expect("the attribution pattern is valid")
});

/// A trailer that credits a tool; it is attribution if the value names an AI
/// tool ([`AI_TOOL`]). Group 1 is the key.
static ATTRIBUTION_TRAILER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^\s*(co-authored-by|generated-by|assisted-by|made-with)\s*:")
        .expect("the attribution trailer pattern is valid")
});

/// Names of AI tools and vendors. `AI` itself only in capitals, so a person
/// called "Kai" or "Ai" is not matched.
static AI_TOOL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i:\b(?:claude|chatgpt|gpt|codex|copilot|gemini|git-agent|anthropic|openai|llm)\b)|\bAI\b",
    )
    .expect("the AI tool pattern is valid")
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

/// A trailer line, `Key-Name: value`; group 1 is the key, group 2 the value.
static TRAILER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^([A-Za-z][A-Za-z0-9-]*):\s+(\S.*)$").expect("the trailer pattern is valid")
});

/// Single-word keys that are trailers by convention. Other single-word keys
/// ("Note:", "Example:") usually start prose, which must not be dropped or
/// left unwrapped.
const SINGLE_WORD_TRAILERS: [&str; 12] = [
    "bug",
    "cc",
    "closes",
    "fixes",
    "issue",
    "issues",
    "link",
    "ref",
    "references",
    "refs",
    "resolves",
    "see",
];

/// The key of `line` if it is a trailer: `Key-Name: value` at the start of
/// the line, where the key has a hyphen (`Signed-off-by`) or is a well-known
/// single-word trailer key (`Fixes`, `Refs`, ...).
fn trailer_key(line: &str) -> Option<&str> {
    let key = TRAILER.captures(line)?.get(1)?.as_str();
    let known = key.contains('-')
        || SINGLE_WORD_TRAILERS
            .iter()
            .any(|known| known.eq_ignore_ascii_case(key));
    known.then_some(key)
}

/// Whether `line` is a trailer (see [`trailer_key`]).
fn is_trailer_line(line: &str) -> bool {
    trailer_key(line).is_some()
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

/// The nonblank lines of `text` (trailing whitespace removed), grouped into
/// paragraphs at blank lines.
fn paragraphs(text: &str) -> Vec<Vec<&str>> {
    let mut paragraphs: Vec<Vec<&str>> = Vec::new();
    let mut current = Vec::new();
    for line in text.lines().map(str::trim_end) {
        if line.is_empty() {
            if !current.is_empty() {
                paragraphs.push(std::mem::take(&mut current));
            }
        } else {
            current.push(line);
        }
    }
    if !current.is_empty() {
        paragraphs.push(current);
    }
    paragraphs
}

/// Paragraphs joined with one blank line between them.
fn join_paragraphs<S: AsRef<str>>(paragraphs: Vec<Vec<S>>) -> String {
    paragraphs
        .iter()
        .map(|lines| {
            lines
                .iter()
                .map(AsRef::as_ref)
                .collect::<Vec<&str>>()
                .join("\n")
        })
        .collect::<Vec<String>>()
        .join("\n\n")
}

/// A line that starts a list item: indentation (group 1), a marker `-`, `*`,
/// `+`, `1.` or `1)` (group 2) and the item's text (group 3, if any).
static LIST_ITEM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\s*)([-*+]|[0-9]{1,3}[.)])(?:\s+(.*))?$").expect("the list pattern is valid")
});

/// A word that would start a list item if a wrap put it first on a line.
static MARKER_WORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:[-*+]|[0-9]{1,3}[.)])$").expect("the marker pattern is valid")
});

/// Rewraps `body` to `width` characters.
///
/// Paragraphs are separated by one blank line. Within a paragraph, soft line
/// breaks are joined and the text is wrapped greedily; a word longer than the
/// line (a URL, a long path) stands alone on its line, unbroken. A line that
/// starts with a list marker (`- `, `* `, `+ `, `1. `, `1) `, possibly
/// indented) starts an item, the lines after it up to the next marker
/// continue it, and the item wraps with a hanging indent under its text.
/// Kept verbatim: a paragraph whose first line is indented by four spaces or
/// a tab (code), a paragraph of trailers only (`Signed-off-by: …`), and a
/// paragraph with a table row (`|`) or a fence (```) in it. A trailer line
/// inside a prose paragraph keeps a line of its own.
///
/// Trailers are `Key-Name: value` lines whose key has a hyphen or is a
/// well-known single word (`Fixes`, `Refs`, `Closes`, ...), so that prose
/// such as `Note: …` is still wrapped.
///
/// A marker-like word (`-`, `1.`) is never wrapped to the start of a line, so
/// rewrapping never invents a list item and `reflow` is idempotent.
pub fn reflow(body: &str, width: usize) -> String {
    let paragraphs: Vec<Vec<String>> = paragraphs(body)
        .into_iter()
        .map(|lines| {
            if is_verbatim(&lines) {
                lines.into_iter().map(str::to_owned).collect()
            } else {
                wrap_paragraph(&lines, width)
            }
        })
        .collect();
    join_paragraphs(paragraphs)
}

/// Whether a line is indented as code: four or more spaces, or a tab.
fn is_code_indented(line: &str) -> bool {
    let indent: String = line.chars().take_while(|c| c.is_whitespace()).collect();
    indent.contains('\t') || indent.chars().count() >= 4
}

/// Whether a paragraph must keep its line breaks: code, trailers, a table or
/// a fence.
fn is_verbatim(lines: &[&str]) -> bool {
    lines.first().is_some_and(|first| is_code_indented(first))
        || lines.iter().all(|line| is_trailer_line(line))
        || lines.iter().any(|line| {
            let line = line.trim_start();
            line.starts_with('|') || line.starts_with("```")
        })
}

/// A run of text wrapped as one: a paragraph's leading prose, or a list item.
struct Block {
    /// Text before the first word on the first line (indentation and marker).
    first_prefix: String,
    /// Text before the first word on every other line (the hanging indent).
    hanging: String,
    /// Words to wrap; marker-like words are glued to the word before them.
    words: Vec<String>,
    /// Whether the next line of the paragraph, unless it starts an item, is
    /// joined to this block. A trailer line stands alone and is not joined.
    open: bool,
}

impl Block {
    /// Adds the words of `text`, gluing each marker-like word to the word
    /// before it so no wrapped line can start with it.
    fn push_words(&mut self, text: &str) {
        for word in text.split_whitespace() {
            match self.words.last_mut() {
                Some(last) if MARKER_WORD.is_match(word) => {
                    last.push(' ');
                    last.push_str(word);
                }
                _ => self.words.push(word.to_owned()),
            }
        }
    }
}

/// Joins and rewraps one paragraph of prose and list items.
fn wrap_paragraph(lines: &[&str], width: usize) -> Vec<String> {
    let mut blocks: Vec<Block> = Vec::new();
    for line in lines {
        if let Some(item) = LIST_ITEM.captures(line) {
            let indent = &item[1];
            let marker = &item[2];
            let mut block = Block {
                first_prefix: format!("{indent}{marker} "),
                hanging: format!("{indent}{}", " ".repeat(marker.chars().count() + 1)),
                words: Vec::new(),
                open: true,
            };
            block.push_words(item.get(3).map_or("", |text| text.as_str()));
            blocks.push(block);
        } else if is_trailer_line(line) {
            // A trailer among prose keeps its own line: joined to the prose
            // it would read as a trailer, or as text, that was neither.
            blocks.push(Block {
                first_prefix: String::new(),
                hanging: String::new(),
                words: vec![(*line).to_owned()],
                open: false,
            });
        } else if let Some(block) = blocks.last_mut().filter(|block| block.open) {
            block.push_words(line);
        } else {
            let mut block = Block {
                first_prefix: String::new(),
                hanging: String::new(),
                words: Vec::new(),
                open: true,
            };
            block.push_words(line);
            blocks.push(block);
        }
    }
    let mut wrapped = Vec::new();
    for block in blocks {
        wrap_block(&block, width, &mut wrapped);
    }
    wrapped
}

/// Greedily wraps one block at `width` characters onto `out`.
fn wrap_block(block: &Block, width: usize, out: &mut Vec<String>) {
    let mut line = block.first_prefix.clone();
    let mut length = line.chars().count();
    let mut line_has_word = false;
    for word in &block.words {
        let word_length = word.chars().count();
        if !line_has_word {
            line.push_str(word);
            length += word_length;
            line_has_word = true;
        } else if length + 1 + word_length <= width {
            line.push(' ');
            line.push_str(word);
            length += 1 + word_length;
        } else {
            out.push(std::mem::take(&mut line));
            line.push_str(&block.hanging);
            line.push_str(word);
            length = block.hanging.chars().count() + word_length;
        }
    }
    out.push(line.trim_end().to_owned());
}

/// The first line of `message` (the subject), or `""` for an empty message.
pub fn subject(message: &str) -> &str {
    message.lines().next().unwrap_or("")
}

/// Extra rules for [`validate`], from the task at hand.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    /// When amending: the subject of the commit being amended, which the new
    /// message must keep.
    pub amend_subject: Option<String>,
    /// When amending: the whole original message. Delta phrasing ("also",
    /// "in addition") that already occurs in it, or in the original subject,
    /// is allowed.
    pub amend_original: Option<String>,
    /// Submodules whose new commits the message must mention.
    pub submodules: Vec<SubmoduleRule>,
}

/// A submodule whose pointer the commit moves.
#[derive(Debug, Clone)]
pub struct SubmoduleRule {
    /// The submodule's path in the superproject.
    pub path: String,
    /// Subjects of the submodule commits the pointer move brings in; the
    /// message must contain at least one of them. Empty means no requirement.
    pub subjects: Vec<String>,
}

/// The problem reported for an empty message.
const EMPTY_MESSAGE: &str = "the message is empty; reply with a commit message";

/// Checks a shaped message and returns its problems as imperative sentences
/// for the model, in a stable order; empty means the message is valid.
///
/// Checked, in this order: the message is not empty; no code fences; the
/// subject exists, fits in [`WIDTH`] characters (a task-ID suffix such as
/// ` (ABC-123)` does not count), has a word outside markup tags (a bare
/// `<environment_context>` echoed from the prompt is not a subject) and is
/// followed by a blank line when there is a body; no commentary lines ("Here is…", "Let me know…", "as an AI"); body
/// lines fit in [`WIDTH`] unless they are code, trailers or a single word too
/// long to wrap; when amending ([`Rules::amend_subject`]), the original
/// subject is kept and the message is not phrased as a delta ("also", "the
/// previous commit") unless the original message already was; and each
/// submodule rule's summaries are mentioned. A subject ending with a period
/// is not a problem.
pub fn validate(message: &str, rules: &Rules) -> Vec<String> {
    if message.trim().is_empty() {
        return vec![EMPTY_MESSAGE.to_owned()];
    }
    let lines: Vec<&str> = message.lines().collect();
    let mut problems = Vec::new();
    if message.contains("```") {
        problems
            .push("remove the code fences (```); reply with the plain commit message".to_owned());
    }
    check_subject(&lines, &mut problems);
    check_commentary(&lines, &mut problems);
    check_body_width(&lines, &mut problems);
    if let Some(original) = &rules.amend_subject {
        check_amend(
            message,
            original,
            rules.amend_original.as_deref(),
            &mut problems,
        );
    }
    check_submodules(message, &rules.submodules, &mut problems);
    problems
}

/// The subject exists, fits, and is separated from the body by a blank line.
fn check_subject(lines: &[&str], problems: &mut Vec<String>) {
    let first = lines.first().copied().unwrap_or("");
    if first.trim().is_empty() {
        problems
            .push("start the message with a one-line subject; the first line is blank".to_owned());
        return;
    }
    let task = task_id_suffix(first);
    let counted = match &task {
        Some(task) => first
            .trim_end()
            .strip_suffix(task.suffix.as_str())
            .unwrap_or(first),
        None => first,
    };
    let length = counted.trim_end().chars().count();
    if length > WIDTH {
        let not_counting = if task.is_some() {
            " not counting the task ID"
        } else {
            ""
        };
        problems.push(format!(
            "shorten the subject to at most {WIDTH} characters; it has {length}{not_counting}"
        ));
    }
    if !has_words(counted) {
        problems.push(format!(
            "write a subject that says in words what the change does; '{}' has no words outside markup",
            quote(counted)
        ));
    }
    if lines.get(1).is_some_and(|second| !second.trim().is_empty()) {
        problems.push(
            "put one blank line between the subject and the body; line 2 must be blank".to_owned(),
        );
    }
}

/// A markup tag such as `<environment_context>` or `</diff>`: prompt
/// structure a model sometimes echoes instead of answering.
static MARKUP_TAG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"</?[A-Za-z_][\w.:-]*(?:\s[^<>]*)?/?>").expect("the tag pattern is valid")
});

/// Whether `subject` has a letter outside markup tags.
fn has_words(subject: &str) -> bool {
    MARKUP_TAG
        .replace_all(subject, " ")
        .chars()
        .any(char::is_alphabetic)
}

/// Lines that talk to the reader instead of describing the change.
static COMMENTARY_START: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^(?:(?:here\s+is|here['’]s|i['’]ve|i\s+have|let\s+me\s+know|hope\s+this|this\s+commit\s+message|note\s+to\s+(?:the\s+)?reviewers?)\b|explanation\s*:)",
    )
    .expect("the commentary pattern is valid")
});

/// "As an AI" anywhere in a line.
static AS_AN_AI: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\bas\s+an\s+ai\b").expect("the as-an-AI pattern is valid"));

/// How many characters of an offending line a problem quotes.
const QUOTE_LIMIT: usize = 60;

/// `line`, trimmed and cut to [`QUOTE_LIMIT`] characters, for quoting.
fn quote(line: &str) -> String {
    let line = line.trim();
    if line.chars().count() <= QUOTE_LIMIT {
        line.to_owned()
    } else {
        let cut: String = line.chars().take(QUOTE_LIMIT).collect();
        format!("{}…", cut.trim_end())
    }
}

/// No commentary lines anywhere in the message.
fn check_commentary(lines: &[&str], problems: &mut Vec<String>) {
    for line in lines {
        let core = line.trim_start_matches(|c: char| c.is_whitespace() || matches!(c, '*' | '_'));
        if COMMENTARY_START.is_match(core) || AS_AN_AI.is_match(core) {
            problems.push(format!(
                "remove the commentary '{}'; reply with only the commit message",
                quote(line)
            ));
        }
    }
}

/// A line that cannot be wrapped: one word, maybe after indentation and a
/// list marker.
static UNBREAKABLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:(?:[-*+]|[0-9]{1,3}[.)])\s+)?\S+$").expect("the word pattern is valid")
});

/// Body lines fit in [`WIDTH`], except code, trailers and unbreakable lines.
fn check_body_width(lines: &[&str], problems: &mut Vec<String>) {
    let mut too_long = Vec::new();
    let mut paragraph_starts = true;
    let mut in_code = false;
    for (index, line) in lines.iter().enumerate().skip(1) {
        if line.trim().is_empty() {
            paragraph_starts = true;
            continue;
        }
        if paragraph_starts {
            in_code = is_code_indented(line);
            paragraph_starts = false;
        }
        let length = line.chars().count();
        if length > WIDTH && !in_code && !is_trailer_line(line) && !UNBREAKABLE.is_match(line) {
            too_long.push(format!("line {} ({length} characters)", index + 1));
        }
    }
    if !too_long.is_empty() {
        let more = too_long.len().saturating_sub(MAX_LISTED_LINES);
        too_long.truncate(MAX_LISTED_LINES);
        let mut list = too_long.join(", ");
        if more > 0 {
            list.push_str(&format!(" and {more} more"));
        }
        problems.push(format!(
            "wrap the body at {WIDTH} characters; too long: {list}"
        ));
    }
}

/// How many too-long lines one problem names.
const MAX_LISTED_LINES: usize = 10;

/// Phrases that describe an amended commit as a change on top of the
/// previous version, with the words that name them in problems.
static DELTA_PHRASES: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        r"also",
        r"this\s+amend(?:ment)?",
        r"in\s+addition",
        r"additionally",
        r"as\s+well\s+as\s+the\s+previous",
        r"the\s+previous\s+commit",
    ]
    .iter()
    .map(|phrase| {
        Regex::new(&format!(r"(?i)\b{phrase}\b")).expect("the delta phrase patterns are valid")
    })
    .collect()
});

/// A subject reduced for comparison: trimmed, without a task-ID suffix or
/// trailing periods, whitespace collapsed, lowercase.
fn normalize_subject(subject: &str) -> String {
    // An original subject from history may hold controls the shaped message
    // never can.
    let subject = strip_controls(subject);
    let mut text = subject.trim().trim_end_matches('.').trim_end();
    if let Some(task) = task_id_suffix(text) {
        text = text.strip_suffix(task.suffix.as_str()).unwrap_or(text);
    }
    let text = text.trim_end().trim_end_matches('.');
    collapse_whitespace(text).to_lowercase()
}

/// `text` with every run of whitespace replaced by one space, trimmed.
fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<&str>>().join(" ")
}

/// The amended message keeps the subject and describes the final commit.
fn check_amend(
    message: &str,
    original_subject: &str,
    original_message: Option<&str>,
    problems: &mut Vec<String>,
) {
    if normalize_subject(subject(message)) != normalize_subject(original_subject) {
        problems.push(format!(
            "keep the original subject exactly: '{}'",
            original_subject.trim()
        ));
    }
    for phrase in DELTA_PHRASES.iter() {
        let Some(found) = phrase.find(message) else {
            continue;
        };
        // The kept subject may itself contain a phrase ("Also accept tabs").
        let original = [Some(original_subject), original_message];
        if original
            .into_iter()
            .flatten()
            .any(|text| phrase.is_match(text))
        {
            continue;
        }
        problems.push(format!(
            "remove '{}': describe the final commit as one change, not as changes to the previous version",
            collapse_whitespace(found.as_str())
        ));
    }
}

/// Each submodule's new commits are mentioned by at least one summary.
fn check_submodules(message: &str, submodules: &[SubmoduleRule], problems: &mut Vec<String>) {
    let haystack = collapse_whitespace(message).to_lowercase();
    for rule in submodules {
        let Some(example) = rule.subjects.first() else {
            continue;
        };
        let mentioned = rule.subjects.iter().any(|summary| {
            let needle = collapse_whitespace(summary)
                .to_lowercase()
                .trim_end_matches(|c: char| c.is_ascii_punctuation())
                .to_owned();
            haystack.contains(&needle)
        });
        if !mentioned {
            problems.push(format!(
                "include the commit summaries of submodule '{}', e.g. '{}'",
                rule.path,
                example.trim()
            ));
        }
    }
}

/// A task reference at the end of a subject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskId {
    /// The reference itself: `ABC-123` or `#123`.
    pub id: String,
    /// The suffix as written, with its leading whitespace and brackets, e.g.
    /// `" (ABC-123)"`.
    pub suffix: String,
}

/// A task ID: Jira-style `ABC-123` (a project key of two or more uppercase
/// letters, digits or `_`, starting with a letter, as Jira requires) or a
/// GitHub `#123`.
const TASK_ID: &str = r"[A-Z][A-Z0-9_]+-[0-9]+|#[0-9]+";

/// A task ID at the end of a subject, after whitespace, bare or in `()` or
/// `[]`. Groups 1 to 3 hold the ID for each form.
static TASK_SUFFIX: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"\s+(?:\(({TASK_ID})\)|\[({TASK_ID})\]|({TASK_ID}))$"
    ))
    .expect("the task suffix pattern is valid")
});

/// A whole word that is a task ID.
static TASK_WORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r"^(?:{TASK_ID})$")).expect("the task word pattern is valid")
});

/// Prefixes of standards and algorithms written like Jira keys (`UTF-8`,
/// `SHA-256`), which are never task IDs.
const NOT_TASK_KEYS: [&str; 20] = [
    "AES", "ANSI", "ARM", "CP", "CRC", "ECMA", "GPT", "HTTP", "IEC", "IEEE", "ISO", "MD", "PEP",
    "RFC", "RSA", "SHA", "TLS", "UCS", "UTF", "X",
];

/// Whether `id` (already in task-ID form) is a real task ID rather than a
/// standard such as `UTF-8`.
fn is_task_id(id: &str) -> bool {
    match id.split_once('-') {
        Some((key, _)) => !NOT_TASK_KEYS.contains(&key),
        None => true,
    }
}

/// The task ID at the end of `subject`, if any.
///
/// Recognized: `ABC-123` (Jira-style: a project key of at least two uppercase
/// letters, digits or `_` starting with a letter, a dash, digits) or `#123`
/// (GitHub), bare or in `( )` or `[ ]`, separated from the text before it by
/// whitespace and last on the line (trailing whitespace aside): "Add x
/// (ABC-123)", "Add x [PROJ-9]", "Bump deps (#412)", "Add x ABC-12". Keys
/// of standards and algorithms (`UTF-8`, `SHA-256`, `ISO-9001`, `RFC-2119`,
/// ...) are not task IDs, in any form. A subject that is only an ID has no
/// suffix.
pub fn task_id_suffix(subject: &str) -> Option<TaskId> {
    let subject = subject.trim_end();
    let found = TASK_SUFFIX.captures(subject)?;
    let whole = found.get(0)?;
    if whole.start() == 0 {
        return None;
    }
    let id = (1..=3).find_map(|group| found.get(group))?.as_str();
    is_task_id(id).then(|| TaskId {
        id: id.to_owned(),
        suffix: whole.as_str().to_owned(),
    })
}

/// Whether `subject` mentions a task ID anywhere, in any form (`ABC-1: fix`,
/// `fix #12 crash`, `fix (ABC-1)`).
fn has_task_id(subject: &str) -> bool {
    subject.split_whitespace().any(|word| {
        let word =
            word.trim_matches(|c: char| matches!(c, '(' | ')' | '[' | ']' | ':' | ',' | '.' | ';'));
        TASK_WORD.is_match(word) && is_task_id(word)
    })
}

/// Appends `task.suffix` to the subject of `message` when the subject has no
/// task ID anywhere; otherwise, or when the subject is blank, returns
/// `message` unchanged. The body is never touched. A suffix without leading
/// whitespace gets one space.
pub fn ensure_task_id(message: &str, task: &TaskId) -> String {
    let (first, rest) = match message.split_once('\n') {
        Some((first, rest)) => (first, Some(rest)),
        None => (message, None),
    };
    if first.trim().is_empty() || has_task_id(first) {
        return message.to_owned();
    }
    let mut out = first.trim_end().to_owned();
    if !task.suffix.starts_with(char::is_whitespace) {
        out.push(' ');
    }
    out.push_str(&task.suffix);
    if let Some(rest) = rest {
        out.push('\n');
        out.push_str(rest);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(keep: &[&str]) -> ShapeOptions {
        ShapeOptions {
            keep_trailers: keep.iter().map(|key| (*key).to_owned()).collect(),
        }
    }

    #[track_caller]
    fn check(input: &str, expected: &str) {
        check_keeping(input, &[], expected);
    }

    #[track_caller]
    fn check_keeping(input: &str, keep: &[&str], expected: &str) {
        let options = options(keep);
        let shaped = shape(input, &options);
        assert_eq!(shaped, expected, "shape({input:?})");
        assert_eq!(shape(&shaped, &options), shaped, "shape is not idempotent");
    }

    #[track_caller]
    fn check_reflow(input: &str, width: usize, expected: &str) {
        let wrapped = reflow(input, width);
        assert_eq!(wrapped, expected, "reflow({input:?}, {width})");
        assert_eq!(reflow(&wrapped, width), wrapped, "reflow is not idempotent");
    }

    #[track_caller]
    fn check_validate(message: &str, rules: &Rules, expected: &[&str]) {
        assert_eq!(validate(message, rules), expected, "validate({message:?})");
    }

    #[track_caller]
    fn check_task(subject: &str, expected: Option<(&str, &str)>) {
        let expected = expected.map(|(id, suffix)| TaskId {
            id: id.to_owned(),
            suffix: suffix.to_owned(),
        });
        assert_eq!(
            task_id_suffix(subject),
            expected,
            "task_id_suffix({subject:?})"
        );
    }

    fn task(id: &str, suffix: &str) -> TaskId {
        TaskId {
            id: id.to_owned(),
            suffix: suffix.to_owned(),
        }
    }

    fn amend(subject: &str, original: Option<&str>) -> Rules {
        Rules {
            amend_subject: Some(subject.to_owned()),
            amend_original: original.map(str::to_owned),
            ..Rules::default()
        }
    }

    fn submodule(path: &str, subjects: &[&str]) -> Rules {
        Rules {
            submodules: vec![SubmoduleRule {
                path: path.to_owned(),
                subjects: subjects.iter().map(|s| (*s).to_owned()).collect(),
            }],
            ..Rules::default()
        }
    }

    // --- strip_think and thinking blocks in shape ---

    #[test]
    fn think_blocks_are_removed() {
        check(
            "<think>\nplan the change\n</think>\nFix parser crash",
            "Fix parser crash",
        );
        check("<THINKING>a\nb</Thinking>Fix x\n\nBody.", "Fix x\n\nBody.");
        check("Fix x <think>hmm</think>now", "Fix x now");
        check("<think>a<think>b</think>c</think>Fix x", "Fix x");
    }

    #[test]
    fn unclosed_think_drops_the_rest() {
        check("Fix x\n\nBody.\n<think>second thoughts", "Fix x\n\nBody.");
        assert_eq!(strip_think("keep<think>drop"), "keep");
    }

    #[test]
    fn orphan_close_drops_everything_before_it() {
        check(
            "reasoning without an opening tag\n</think>\n\nFix x\n\nBody.",
            "Fix x\n\nBody.",
        );
        assert_eq!(strip_think("plan</THINK>answer"), "answer");
        assert_eq!(strip_think("<think>a</think>b</think>c"), "c");
    }

    #[test]
    fn strip_think_leaves_no_tags_behind() {
        assert_eq!(strip_think("a<think>x</think>b"), "ab");
        assert_eq!(strip_think("no tags <thin> here"), "no tags <thin> here");
        // Removing the inner block joins `<thi` and `nk>` into a new tag.
        assert_eq!(strip_think("keep<thi<think></think>nk>drop"), "keep");
    }

    // --- fences ---

    #[test]
    fn whole_message_fence_is_unwrapped() {
        check("```\nFix x\n\nBody text.\n```", "Fix x\n\nBody text.");
        check("```text\nFix x\n```", "Fix x");
        check("  ```git-commit\nFix x\n```  ", "Fix x");
    }

    #[test]
    fn fence_after_a_preamble_is_unwrapped() {
        check(
            "Here is the commit message:\n\n```\nFix x\n\nBody.\n```",
            "Fix x\n\nBody.",
        );
    }

    #[test]
    fn inner_fences_are_kept_for_validation() {
        check(
            "Fix x\n\nRun:\n\n```\ncargo test\n```",
            "Fix x\n\nRun:\n\n```\ncargo test\n```",
        );
        check(
            "Fix x\n```\ncode\n```\ntrailing words",
            "Fix x\n\n```\ncode\n```\ntrailing words",
        );
        check(
            "```\nFix x\n```sh\nls\n```\n```",
            "```\n\nFix x\n```sh\nls\n```\n```",
        );
    }

    // --- preambles and labels ---

    #[test]
    fn preambles_are_dropped() {
        check("Here is the commit message:\nFix x", "Fix x");
        check(
            "Here's a commit message for these changes:\n\nFix x\n\nBody.",
            "Fix x\n\nBody.",
        );
        check("Sure! Here is a concise commit message:\nFix x", "Fix x");
        check("Certainly. Below is the message:\nFix x", "Fix x");
        check("OK, here you go:\nFix x", "Fix x");
        check("Commit message:\nFix x", "Fix x");
        check("**Suggested commit message:**\n\nFix x", "Fix x");
        check(
            "Below is the commit message:\nHere is another lead-in:\nFix x",
            "Fix x",
        );
    }

    #[test]
    fn lines_that_only_look_like_preambles_stay() {
        check("Here is not a lead-in", "Here is not a lead-in");
        check("Fix parsing of:\n\nBody.", "Fix parsing of:\n\nBody.");
        check(
            "Fix x\n\nHere is what changed:\n- a",
            "Fix x\n\nHere is what changed:\n- a",
        );
    }

    #[test]
    fn subject_and_body_labels_are_removed() {
        check("Subject: Fix x\n\nBody: \nThe body.", "Fix x\n\nThe body.");
        check("Subject:\nFix x\nBody:\nThe body.", "Fix x\n\nThe body.");
        check("subject line: Fix x", "Fix x");
        check("SUBJECT: \"Fix x\"", "Fix x");
        check(
            "Fix x\n\nBody: kept, it is text",
            "Fix x\n\nBody: kept, it is text",
        );
    }

    // --- subject ---

    #[test]
    fn wrapped_subjects_are_unwrapped() {
        check("\"Fix x\"", "Fix x");
        check("`Fix x`\n\nBody.", "Fix x\n\nBody.");
        check("'Fix x'", "Fix x");
        check("“Fix x”", "Fix x");
        check("\"`Fix x`\"", "Fix x");
        check("'a' and 'b'", "'a' and 'b'");
        check("`foo` returns `bar`", "`foo` returns `bar`");
        check("\"\"\nFix x", "Fix x");
    }

    #[test]
    fn blank_lines_are_normalized() {
        check(
            "\n\n  Fix x  \n\n\n\nPara one.\n\n\n\nPara two.\n\n\n",
            "Fix x\n\nPara one.\n\nPara two.",
        );
        check("Fix x\nBody right after.", "Fix x\n\nBody right after.");
        check("Fix x\r\n\r\nBody\r\nmore\r\n", "Fix x\n\nBody more");
        check("Fix x\rBody", "Fix x\n\nBody");
        check("Fix x   \n\t\n", "Fix x");
        check("", "");
        check("  \n\n<think>only thoughts</think>\n", "");
    }

    // --- attribution and trailers ---

    #[test]
    fn ai_attribution_is_removed() {
        check(
            "Fix x\n\nBody.\n\n🤖 Generated with [Claude Code](https://claude.com/claude-code)\n\nCo-Authored-By: Claude <noreply@anthropic.com>",
            "Fix x\n\nBody.",
        );
        check("Fix x\n\nBody.\nGenerated with ChatGPT", "Fix x\n\nBody.");
        check(
            "Fix x\n\n(Generated by git-agent)\n\nBody.",
            "Fix x\n\nBody.",
        );
        check(
            "Fix x\n\nBody.\nAssisted-by: GPT-4o\nMade-with: Copilot\nGenerated-by: Gemini",
            "Fix x\n\nBody.",
        );
        check("Fix x\n\nWritten by AI.\nBody.", "Fix x\n\nBody.");
    }

    #[test]
    fn attribution_kept_when_its_key_is_kept() {
        check_keeping(
            "Fix x\n\nBody.\n\nCo-authored-by: Claude <noreply@anthropic.com>",
            &["co-authored-by"],
            "Fix x\n\nBody.\n\nCo-authored-by: Claude <noreply@anthropic.com>",
        );
    }

    #[test]
    fn text_that_is_not_attribution_stays() {
        check(
            "Fix x\n\nThe table is generated by the build script.",
            "Fix x\n\nThe table is generated by the build script.",
        );
        check(
            "Fix x\n\nTeach the client to talk to Claude.",
            "Fix x\n\nTeach the client to talk to Claude.",
        );
    }

    #[test]
    fn unrequested_trailers_are_dropped() {
        check(
            "Fix x\n\nBody.\n\nSigned-off-by: A U Thor <a@example.com>",
            "Fix x\n\nBody.",
        );
        check(
            "Fix x\n\nBody.\n\nCo-authored-by: Jane Doe <jane@example.com>",
            "Fix x\n\nBody.",
        );
        check(
            "Fix x\n\nBody.\n\nRefs: #12\n\nSigned-off-by: A <a@x>",
            "Fix x\n\nBody.",
        );
    }

    #[test]
    fn requested_trailers_are_kept() {
        check_keeping(
            "Fix x\n\nBody.\n\nSigned-off-by: A <a@x>\nReviewed-by: B <b@x>",
            &["Signed-off-by"],
            "Fix x\n\nBody.\n\nSigned-off-by: A <a@x>",
        );
        check_keeping(
            "Fix x\n\nBody.\n\nCo-authored-by: Jane Doe <jane@example.com>",
            &["CO-AUTHORED-BY:"],
            "Fix x\n\nBody.\n\nCo-authored-by: Jane Doe <jane@example.com>",
        );
    }

    #[test]
    fn prose_with_a_colon_is_not_a_trailer() {
        check(
            "Fix x\n\nBody.\n\nNote: this needs a migration.",
            "Fix x\n\nBody.\n\nNote: this needs a migration.",
        );
        check(
            "Fix x\n\nFirst line.\nNote: second.",
            "Fix x\n\nFirst line. Note: second.",
        );
        check(
            "Fix x\n\nSigned-off-by: A <a@x>\nand prose after it",
            "Fix x\n\nSigned-off-by: A <a@x>\nand prose after it",
        );
        check(
            "Fix x\n\nBody text\nwraps.\nFixes: #12",
            "Fix x\n\nBody text wraps.\nFixes: #12",
        );
    }

    // --- reflow ---

    #[test]
    fn reflow_joins_soft_wraps_and_keeps_paragraphs() {
        check_reflow("a\nb\nc", 72, "a b c");
        check_reflow("a\nb\n\n\n\nc", 72, "a b\n\nc");
        check_reflow("\n\na   b\t c  \n\n", 72, "a b c");
        check_reflow(
            "the quick brown fox jumps over the lazy dog",
            20,
            "the quick brown fox\njumps over the lazy\ndog",
        );
        check_reflow("", 72, "");
    }

    #[test]
    fn reflow_wraps_bullets_with_a_hanging_indent() {
        check_reflow(
            "- first item that is long enough to wrap\ncontinued here\n- second",
            20,
            "- first item that is\n  long enough to\n  wrap continued\n  here\n- second",
        );
        check_reflow("*   star\n+ plus", 72, "* star\n+ plus");
        check_reflow("Changes:\n- a\n- b", 72, "Changes:\n- a\n- b");
        check_reflow("- a\n  - b b b b", 8, "- a\n  - b b\n    b b");
        check_reflow("-\nfoo", 72, "- foo");
    }

    #[test]
    fn reflow_wraps_numbered_lists() {
        check_reflow(
            "1. alpha beta gamma delta\n2) x",
            15,
            "1. alpha beta\n   gamma delta\n2) x",
        );
        check_reflow("10. a b c d", 8, "10. a b\n    c d");
    }

    #[test]
    fn reflow_keeps_code_trailers_and_tables_verbatim() {
        let code =
            "    cargo test --workspace --all-targets -- --nocapture and more\n    second line";
        check_reflow(&format!("Run:\n\n{code}"), 20, &format!("Run:\n\n{code}"));
        check_reflow(
            "\tlet x = 1;\n\tlet y = 2;",
            5,
            "\tlet x = 1;\n\tlet y = 2;",
        );
        check_reflow(
            "Signed-off-by: A U Thor <a@example.com>\nReviewed-by: B",
            10,
            "Signed-off-by: A U Thor <a@example.com>\nReviewed-by: B",
        );
        check_reflow("| a | b |\n| c | d |", 5, "| a | b |\n| c | d |");
        check_reflow("text\n| a | b |", 3, "text\n| a | b |");
        check_reflow("```\nlet x = 1;\n```", 3, "```\nlet x = 1;\n```");
        check_reflow("code   \n\n    kept  ", 72, "code\n\n    kept");
    }

    #[test]
    fn reflow_puts_long_words_on_their_own_line() {
        check_reflow(
            "See https://example.com/a/very/long/path/that/exceeds/width for details",
            30,
            "See\nhttps://example.com/a/very/long/path/that/exceeds/width\nfor details",
        );
        check_reflow(
            "- https://example.com/a/very/long/path/that/exceeds/width",
            30,
            "- https://example.com/a/very/long/path/that/exceeds/width",
        );
    }

    #[test]
    fn reflow_counts_characters_not_bytes() {
        check_reflow("éé éé éé", 8, "éé éé éé");
        check_reflow("ééééé ééééé ééééé", 10, "ééééé\nééééé\nééééé");
        check_reflow("漢字 漢字 🎉🎉", 10, "漢字 漢字 🎉🎉");
    }

    #[test]
    fn reflow_never_starts_a_line_with_a_list_marker() {
        check_reflow("aaaa bbbb - cccc", 10, "aaaa\nbbbb -\ncccc");
        check_reflow("version one 2. then", 11, "version\none 2. then");
        check_reflow("- a b * c", 5, "- a\n  b *\n  c");
    }

    #[test]
    fn shape_reflows_the_body() {
        let long = "word ".repeat(20);
        check(
            &format!("Fix x\n\n{long}\n- item {long}"),
            &[
                "Fix x",
                "",
                "word ".repeat(14).trim_end(),
                "word ".repeat(6).trim_end(),
                &format!("- item {}", "word ".repeat(13).trim_end()),
                &format!("  {}", "word ".repeat(7).trim_end()),
            ]
            .join("\n"),
        );
    }

    // --- idempotence over a generated corpus ---

    /// A small deterministic generator (xorshift), so failures reproduce.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, bound: usize) -> usize {
            usize::try_from(self.next() % u64::try_from(bound).expect("small bound"))
                .expect("below a usize bound")
        }

        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[self.below(items.len())]
        }
    }

    const FRAGMENTS: &[&str] = &[
        "Fix parser crash",
        "fix(api): handle nulls (ABC-123)",
        "<think>",
        "</think>",
        "<thinking>plan</thinking>",
        "<thi",
        "nk>",
        "```",
        "```text",
        "Here is the commit message:",
        "Sure! Here's one:",
        "**Commit message:**",
        "Okay:",
        "Subject:",
        "Subject: Add cache",
        "Body:",
        "Body: not a label",
        "\"Quoted subject\"",
        "`ticked`",
        "'single'",
        "“curly”",
        "\"",
        "`",
        "- ",
        "-",
        "* item",
        "1. first",
        "2) second",
        "1.",
        "+",
        "    indented code line that is rather long and goes on past the width limit",
        "\tTabbed code",
        "| a | b |",
        "Signed-off-by: A U Thor <a@example.com>",
        "Reviewed-by: B",
        "Co-authored-by: Claude <noreply@anthropic.com>",
        "Co-authored-by: Jane <jane@example.com>",
        "🤖 Generated with [Claude Code](https://claude.com/claude-code)",
        "Generated by git-agent",
        "Refs: #12",
        "Fixes: ABC-9",
        "Note: this matters",
        "https://example.com/a/very/long/path/that/does/not/fit/in/seventy/two/characters/at/all",
        "ünïcödé wörds ñ 漢字 emoji 🎉",
        "word",
        "another word",
        "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor",
        "incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis",
        "Explanation: why",
        "Let me know if you need changes.",
        "  ",
        "",
    ];

    const SEPARATORS: &[&str] = &["\n", "\n\n", " ", "\r\n", "\n\n\n", "\n  ", "\n    ", ""];

    fn generated_inputs(count: usize) -> Vec<String> {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        (0..count)
            .map(|_| {
                let mut input = String::new();
                for _ in 0..=rng.below(16) {
                    input.push_str(rng.pick(FRAGMENTS));
                    input.push_str(rng.pick(SEPARATORS));
                }
                input
            })
            .collect()
    }

    #[test]
    fn shape_is_idempotent_over_a_generated_corpus() {
        let keep_sets: [&[&str]; 3] = [&[], &["Signed-off-by"], &["co-authored-by", "Refs"]];
        for (index, input) in generated_inputs(3000).iter().enumerate() {
            let options = options(keep_sets[index % keep_sets.len()]);
            let shaped = shape(input, &options);
            assert_eq!(shape(&shaped, &options), shaped, "input {input:?}");
            assert!(
                shaped.lines().all(|line| line.trim_end() == line),
                "trailing whitespace in {shaped:?}"
            );
            assert!(!shaped.ends_with('\n'), "ends with a newline: {shaped:?}");
            assert!(!shaped.contains("\n\n\n"), "blank-line run in {shaped:?}");
            assert!(!shaped.starts_with(char::is_whitespace), "{shaped:?}");
            assert!(!shaped.contains('\r'), "{shaped:?}");
        }
    }

    #[test]
    fn reflow_is_idempotent_and_fits_over_a_generated_corpus() {
        const WORDS: &[&str] = &[
            "a",
            "to",
            "the",
            "parser",
            "handles",
            "ünïcödé",
            "漢字",
            "🎉",
            "averyveryverylongidentifierthatexceedsnarrowwidths",
        ];
        const BREAKS: &[&str] = &[" ", " ", " ", "\n", "\n\n", "\n- ", "\n1. ", "\n  * "];
        let mut rng = Rng(42);
        for _ in 0..2000 {
            let mut body = String::new();
            for _ in 0..=rng.below(30) {
                body.push_str(rng.pick(WORDS));
                body.push_str(rng.pick(BREAKS));
            }
            for width in [8, 20, WIDTH] {
                let wrapped = reflow(&body, width);
                assert_eq!(reflow(&wrapped, width), wrapped, "{body:?} at {width}");
                for line in wrapped.lines() {
                    assert!(
                        line.chars().count() <= width || UNBREAKABLE.is_match(line),
                        "{line:?} from {body:?} at {width}"
                    );
                }
            }
        }
    }

    // --- validate ---

    #[test]
    fn valid_messages_have_no_problems() {
        let rules = Rules::default();
        check_validate("Fix parser crash", &rules, &[]);
        check_validate("Fix parser crash.", &rules, &[]);
        check_validate(
            "Fix parser crash\n\nThe parser now handles nulls.",
            &rules,
            &[],
        );
        check_validate("Fix parser crash\n", &rules, &[]);
    }

    #[test]
    fn empty_message_is_one_problem() {
        check_validate("", &Rules::default(), &[EMPTY_MESSAGE]);
        check_validate("  \n\t\n", &amend("Fix x", None), &[EMPTY_MESSAGE]);
    }

    #[test]
    fn code_fences_are_rejected() {
        check_validate(
            "Fix x\n\n```\ncode\n```",
            &Rules::default(),
            &["remove the code fences (```); reply with the plain commit message"],
        );
    }

    #[test]
    fn subject_rules() {
        let rules = Rules::default();
        check_validate(
            "\nFix x",
            &rules,
            &["start the message with a one-line subject; the first line is blank"],
        );
        check_validate(&"a".repeat(72), &rules, &[]);
        check_validate(
            &"a".repeat(73),
            &rules,
            &["shorten the subject to at most 72 characters; it has 73"],
        );
        check_validate(&"é".repeat(72), &rules, &[]);
        check_validate(&format!("{} (ABC-123)", "a".repeat(72)), &rules, &[]);
        check_validate(
            &format!("{} [ABC-1]", "a".repeat(80)),
            &rules,
            &["shorten the subject to at most 72 characters; it has 80 not counting the task ID"],
        );
        check_validate(
            "Fix x\nbody",
            &rules,
            &["put one blank line between the subject and the body; line 2 must be blank"],
        );
        check_validate(
            "<environment_context>",
            &rules,
            &["write a subject that says in words what the change does; \
               '<environment_context>' has no words outside markup"],
        );
        check_validate(
            "</diff> 42 (ABC-1)",
            &rules,
            &["write a subject that says in words what the change does; \
               '</diff> 42' has no words outside markup"],
        );
        check_validate(
            "--- ...",
            &rules,
            &[
                "write a subject that says in words what the change does; '--- ...' has no words outside markup",
            ],
        );
        check_validate("Render <b> tags in <summary> blocks", &rules, &[]);
        check_validate("Bump serde to 1.0.200", &rules, &[]);
    }

    #[test]
    fn commentary_is_rejected() {
        let rules = Rules::default();
        check_validate(
            "Fix x\n\nBody.\n\nHere is the commit message you asked for.\nLet me know if you want changes.",
            &rules,
            &[
                "remove the commentary 'Here is the commit message you asked for.'; reply with only the commit message",
                "remove the commentary 'Let me know if you want changes.'; reply with only the commit message",
            ],
        );
        check_validate(
            "Fix x\n\nI cannot run tests as an AI model.",
            &rules,
            &[
                "remove the commentary 'I cannot run tests as an AI model.'; reply with only the commit message",
            ],
        );
        for line in [
            "Here's why",
            "I've updated it",
            "I have changed it",
            "Hope this helps!",
            "This commit message follows the rules",
            "Explanation: see above",
            "**Note to reviewers:** be kind",
        ] {
            assert_eq!(
                validate(&format!("Fix x\n\n{line}"), &rules).len(),
                1,
                "{line:?} is commentary"
            );
        }
        for line in [
            "Hereafter, parse lazily.",
            "This commit fixes the parser.",
            "Explain the rule.",
        ] {
            check_validate(&format!("Fix x\n\n{line}"), &rules, &[]);
        }
    }

    #[test]
    fn long_commentary_is_quoted_shortened() {
        let line = format!("Here is {}", "x ".repeat(30).trim_end());
        let problems = validate(&format!("Fix x\n\n{line}"), &Rules::default());
        let quoted = format!(
            "{}…",
            line.chars()
                .take(QUOTE_LIMIT)
                .collect::<String>()
                .trim_end()
        );
        assert_eq!(
            problems,
            [format!(
                "remove the commentary '{quoted}'; reply with only the commit message"
            )]
        );
    }

    #[test]
    fn body_width_rules() {
        let rules = Rules::default();
        let long = "word ".repeat(15).trim_end().to_owned(); // 74 characters
        check_validate(
            &format!("Fix x\n\n{long}\nshort\n{long}"),
            &rules,
            &[
                "wrap the body at 72 characters; too long: line 3 (74 characters), line 5 (74 characters)",
            ],
        );
        check_validate(&format!("Fix x\n\n{}", "é".repeat(72)), &rules, &[]);
        let url = format!("https://example.com/{}", "a".repeat(80));
        for exempt in [
            format!("Run:\n\n    {long}"),
            format!("\t{long}"),
            format!("Signed-off-by: {long}"),
            url.clone(),
            format!("- {url}"),
            format!("12. {url}"),
            format!("- see\n  {url}"),
        ] {
            check_validate(&format!("Fix x\n\n{exempt}"), &rules, &[]);
        }
        check_validate(
            &format!("Fix x\n\nSee {url}"),
            &rules,
            &["wrap the body at 72 characters; too long: line 3 (104 characters)"],
        );
        // Code-ness belongs to the paragraph: an indented later line is not code.
        check_validate(
            &format!("Fix x\n\nText\n    {long}"),
            &rules,
            &["wrap the body at 72 characters; too long: line 4 (78 characters)"],
        );
    }

    #[test]
    fn amend_keeps_the_original_subject() {
        let rules = amend("Fix parser crash (ABC-1)", None);
        check_validate("Fix parser crash (ABC-1)", &rules, &[]);
        check_validate("fix  parser crash.", &rules, &[]);
        check_validate("Fix parser crash [ABC-1]\n\nBody.", &rules, &[]);
        check_validate(
            "Fix parser crash in lexer",
            &rules,
            &["keep the original subject exactly: 'Fix parser crash (ABC-1)'"],
        );
    }

    #[test]
    fn amend_rejects_delta_phrasing() {
        let message = "Fix x\n\nAlso handle nulls. In addition, the previous\ncommit missed this amendment.\nAdditionally, as well as the previous fix.";
        let delta =
            "describe the final commit as one change, not as changes to the previous version";
        check_validate(
            message,
            &amend("Fix x", None),
            &[
                &format!("remove 'Also': {delta}"),
                &format!("remove 'this amendment': {delta}"),
                &format!("remove 'In addition': {delta}"),
                &format!("remove 'Additionally': {delta}"),
                &format!("remove 'as well as the previous': {delta}"),
                &format!("remove 'the previous commit': {delta}"),
            ],
        );
        check_validate(
            "Fix x\n\nThe alsoran is additionallyx.",
            &amend("Fix x", None),
            &[],
        );
        check_validate("Fix x\n\nAlso handle nulls.", &Rules::default(), &[]);
        check_validate("Also accept tabs", &amend("Also accept tabs", None), &[]);
    }

    #[test]
    fn amend_allows_phrases_of_the_original_message() {
        let original = "Fix x\n\nAlso handle empty input.";
        check_validate(
            "Fix x\n\nAlso handle empty input and nulls.",
            &amend("Fix x", Some(original)),
            &[],
        );
        check_validate(
            "Fix x\n\nAlso handle nulls; additionally, trim.",
            &amend("Fix x", Some(original)),
            &[
                "remove 'additionally': describe the final commit as one change, not as changes to the previous version",
            ],
        );
    }

    #[test]
    fn submodule_summaries_must_be_included() {
        let rules = submodule("vendor/lib", &["Fix overflow in parser.", "Add API"]);
        check_validate(
            "Update vendor/lib\n\nFix   overflow in\nparser, and more.",
            &rules,
            &[],
        );
        check_validate("Update vendor/lib\n\n- add api", &rules, &[]);
        check_validate(
            "Update vendor/lib",
            &rules,
            &[
                "include the commit summaries of submodule 'vendor/lib', e.g. 'Fix overflow in parser.'",
            ],
        );
        check_validate("Update vendor/lib", &submodule("vendor/lib", &[]), &[]);
    }

    #[test]
    fn all_problems_come_in_a_stable_order() {
        let rules = Rules {
            amend_subject: Some("Fix x".to_owned()),
            amend_original: None,
            submodules: vec![SubmoduleRule {
                path: "sub".to_owned(),
                subjects: vec!["Bump sub".to_owned()],
            }],
        };
        let message = format!(
            "Here is {}\nalso ```\n{}",
            "y".repeat(70),
            "word ".repeat(15).trim_end()
        );
        check_validate(
            &message,
            &rules,
            &[
                "remove the code fences (```); reply with the plain commit message",
                "shorten the subject to at most 72 characters; it has 78",
                "put one blank line between the subject and the body; line 2 must be blank",
                &format!(
                    "remove the commentary 'Here is {}…'; reply with only the commit message",
                    "y".repeat(QUOTE_LIMIT - "Here is ".len())
                ),
                "wrap the body at 72 characters; too long: line 3 (74 characters)",
                "keep the original subject exactly: 'Fix x'",
                "remove 'also': describe the final commit as one change, not as changes to the previous version",
                "include the commit summaries of submodule 'sub', e.g. 'Bump sub'",
            ],
        );
    }

    #[test]
    fn shaped_model_answer_validates() {
        let raw = "<think>The diff adds caching.</think>\nSure! Here's a commit message:\n\n```\nAdd response cache to the HTTP client (ABC-7)\n\nCache GET responses in memory, keyed by URL, so repeated requests during one run do not hit the network again. Entries expire after the TTL from the Cache-Control header.\n\n- Add `Cache` with\nget/insert\n- Honour `no-store`\n\n🤖 Generated with [Claude Code](https://claude.com/claude-code)\n\nCo-Authored-By: Claude <noreply@anthropic.com>\n```";
        let shaped = shape(raw, &ShapeOptions::default());
        assert_eq!(
            shaped,
            "Add response cache to the HTTP client (ABC-7)\n\n\
             Cache GET responses in memory, keyed by URL, so repeated requests during\n\
             one run do not hit the network again. Entries expire after the TTL from\n\
             the Cache-Control header.\n\n\
             - Add `Cache` with get/insert\n\
             - Honour `no-store`"
        );
        check_validate(&shaped, &Rules::default(), &[]);
    }

    // --- subject() ---

    #[test]
    fn subject_is_the_first_line() {
        assert_eq!(subject("Fix x\n\nBody"), "Fix x");
        assert_eq!(subject("Fix x\r\nBody"), "Fix x");
        assert_eq!(subject(""), "");
    }

    // --- task IDs ---

    #[test]
    fn task_id_suffixes_are_found() {
        check_task(
            "fix(api): handle nulls (ABC-123)",
            Some(("ABC-123", " (ABC-123)")),
        );
        check_task("Add x [PROJ-9]", Some(("PROJ-9", " [PROJ-9]")));
        check_task("Bump deps (#412)", Some(("#412", " (#412)")));
        check_task("Add x ABC-12", Some(("ABC-12", " ABC-12")));
        check_task("Fix crash #7", Some(("#7", " #7")));
        check_task("Add x  (AB2-5)  ", Some(("AB2-5", "  (AB2-5)")));
        check_task("Add x (MY_PROJ-1)", Some(("MY_PROJ-1", " (MY_PROJ-1)")));
        check_task("Add x\t[#3]", Some(("#3", "\t[#3]")));
    }

    #[test]
    fn things_that_are_not_task_id_suffixes() {
        for subject in [
            "Upgrade to UTF-8",
            "Use SHA-256",
            "Switch to (UTF-8)",
            "Follow RFC-2119 [RFC-2119]",
            "Read CVE-2024-1234",
            "Fix ISO-8601 parsing",
            "Add x A-1",
            "Add x abc-123",
            "ABC-123",
            "(ABC-123)",
            "Add x (ABC-123",
            "Add x(ABC-123)",
            "Add x (ABC-123).",
            "Bump deps (#abc)",
            "Add x (ABC-)",
            "",
        ] {
            check_task(subject, None);
        }
    }

    #[test]
    fn ensure_task_id_appends_only_when_missing() {
        let abc = task("ABC-1", " (ABC-1)");
        let cases = [
            ("Fix x\n\nBody", "Fix x (ABC-1)\n\nBody"),
            ("Fix x  \n\nBody ABC-1", "Fix x (ABC-1)\n\nBody ABC-1"),
            ("Fix x", "Fix x (ABC-1)"),
            ("Use UTF-8 everywhere", "Use UTF-8 everywhere (ABC-1)"),
            ("Fix x (ABC-1)\n\nBody", "Fix x (ABC-1)\n\nBody"),
            ("Fix x [XYZ-9]", "Fix x [XYZ-9]"),
            ("ABC-2: Fix x", "ABC-2: Fix x"),
            ("Fix #12 crash", "Fix #12 crash"),
            ("", ""),
            ("\nBody", "\nBody"),
        ];
        for (message, expected) in cases {
            assert_eq!(ensure_task_id(message, &abc), expected, "{message:?}");
        }
        assert_eq!(
            ensure_task_id("Fix x", &task("ABC-1", "[ABC-1]")),
            "Fix x [ABC-1]"
        );
    }

    #[test]
    fn ensure_task_id_result_has_a_suffix() {
        let abc = task("ABC-1", " (ABC-1)");
        let message = ensure_task_id("Fix x\n\nBody", &abc);
        assert_eq!(task_id_suffix(subject(&message)), Some(abc));
    }

    // --- control characters ---

    #[test]
    fn control_characters_and_escape_sequences_are_removed() {
        assert!(matches!(strip_controls("plain\ttab\n"), Cow::Borrowed(_)));
        for (input, expected) in [
            ("\x1b[31mred\x1b[0m text", "red text"),
            ("clip\x1b]52;c;ZXZpbA==\x07board", "clipboard"),
            ("st\x1b]0;title\x1b\\ring", "string"),
            ("broken \x1b]0;never ends\nnext line", "broken \nnext line"),
            ("bell\x07 del\x7f c1\u{9b}31m", "bell del c131m"),
            (
                "rtl \u{202e}desrever\u{202c} iso\u{2066}x\u{2069}",
                "rtl desrever isox",
            ),
            ("esc at the end\x1b", "esc at the end"),
            ("esc\x1b\nnewline", "esc\nnewline"),
            ("two-char \x1bMescape", "two-char escape"),
        ] {
            assert_eq!(strip_controls(input), expected, "{input:?}");
        }
        check(
            "\x1b[1mfix: bold\x1b[0m subject\n\nBody\x1b[2J with \u{202e}tricks.\r\n",
            "fix: bold subject\n\nBody with tricks.",
        );
    }

    #[test]
    fn amended_subjects_compare_without_controls() {
        check_validate("Keep me\n\nBody.", &amend("Keep\x1b[0m me", None), &[]);
    }

    #[test]
    fn many_leading_blank_lines_and_preambles_shape_quickly() {
        // Quadratic peeling would take minutes here.
        let input = format!(
            "{}{}fix: the subject",
            "\n".repeat(200_000),
            "Sure:\n".repeat(20_000)
        );
        assert_eq!(shape(&input, &ShapeOptions::default()), "fix: the subject");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(500))]

        #[test]
        fn shaped_messages_hold_no_control_characters(
            input in "(\\PC|[\x00-\x1f\x7f-\u{9f}\u{202a}-\u{202e}\u{2066}-\u{2069}]|\x1b\\[[0-9;]*m|\n){0,200}"
        ) {
            let options = ShapeOptions::default();
            let shaped = shape(&input, &options);
            proptest::prop_assert!(
                !shaped.chars().any(|c| (c.is_control() && c != '\n' && c != '\t')
                    || ('\u{202a}'..='\u{202e}').contains(&c)
                    || ('\u{2066}'..='\u{2069}').contains(&c)),
                "{:?} shaped to {:?}", input, shaped
            );
            proptest::prop_assert_eq!(shape(&shaped, &options), shaped);
        }
    }
}
