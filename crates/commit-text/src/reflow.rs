//! Reflowing a message body to a width: paragraphs, list items with a hanging
//! indent, and the paragraphs that keep their line breaks (code, trailers,
//! tables, fences).

use std::sync::LazyLock;

use regex::Regex;

use crate::built_in;
use crate::message::{join_paragraphs, paragraphs};
use crate::trailer::is_trailer_line;

/// A line that starts a list item: indentation (group 1), a marker `-`, `*`,
/// `+`, `1.` or `1)` (group 2) and the item's text (group 3, if any).
static LIST_ITEM: LazyLock<Regex> =
    LazyLock::new(|| built_in(r"^(\s*)([-*+]|[0-9]{1,3}[.)])(?:\s+(.*))?$"));

/// A word that would start a list item if a wrap put it first on a line.
static MARKER_WORD: LazyLock<Regex> = LazyLock::new(|| built_in(r"^(?:[-*+]|[0-9]{1,3}[.)])$"));

/// A line that cannot be wrapped: one word, maybe after indentation and a
/// list marker.
pub(crate) static UNBREAKABLE: LazyLock<Regex> =
    LazyLock::new(|| built_in(r"^\s*(?:(?:[-*+]|[0-9]{1,3}[.)])\s+)?\S+$"));

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
/// Trailers are the recognized ones of [`crate::trailer`]: `Key-Name: value`
/// lines whose key has a hyphen or is a well-known single word (`Fixes`,
/// `Refs`, `Closes`, ...), so that prose such as `Note: …` is still wrapped.
///
/// A marker-like word (`-`, `1.`) is never wrapped to the start of a line, so
/// rewrapping never invents a list item and `reflow` is idempotent.
pub(crate) fn reflow(body: &str, width: usize) -> String {
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
pub(crate) fn is_code_indented(line: &str) -> bool {
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

#[cfg(test)]
mod tests;
