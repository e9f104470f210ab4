//! The `^^^` block parser: turns a model's response into whole-file edits.
//!
//! A response holds blocks, and anything outside blocks (explanations, fences
//! around blocks) is ignored:
//!
//! ```text
//! ^^^src/main.rs        a header: write this file with the lines below
//! fn main() {}
//! ^^^end
//! ^^^old/file.rs        a header directly followed by ^^^delete: remove the file
//! ^^^delete
//! ```
//!
//! # Rules
//!
//! The parser rejects rather than guesses, and reports every problem, in line order,
//! so that one repair round can fix them all. Each [`ParseError`] displays as an
//! instruction for the model.
//!
//! - **Lines** end with `\n` or `\r\n`; one trailing `\r` is stripped from every line.
//! - **Markers** are lines that start at column 0 with `^^^`. A marker whose rest,
//!   trimmed, is `end` or `delete` (ASCII case-insensitive, so `^^^END` and
//!   `^^^ end ` count) is a terminator; every other marker is a header, whose path is
//!   the rest of the line trimmed. A file literally named `end` or `delete` at the top
//!   of the project is written as `^^^./end`.
//! - **Content** is the lines between a header and `^^^end`, joined with `\n`, plus a
//!   final `\n`; a header directly followed by `^^^end` writes an empty file.
//! - **Errors:** an empty path; a path wrapped in quotes, backticks, brackets or
//!   emphasis (`` ^^^`a.rs` ``, `^^^[a.rs]`); a header while a block is still open,
//!   or the end of the text inside a block (unterminated); a terminator with no open
//!   block; `^^^delete` after content lines; two blocks for one path (paths compared
//!   after trimming and dropping leading `./`), including a write and a delete; a
//!   block whose content starts with a markdown fence opener and ends with a closing
//!   fence (except in markdown files: `.md`, `.markdown`, `.mdx`); a block with an
//!   elision line (see below); no header at all.
//!
//! # Elisions
//!
//! A block replaces the whole file, so a line that stands for omitted code would
//! delete that code. A line is an elision when all of these hold:
//!
//! 1. It is a comment-only line or a bare line. Comment-only: after leading
//!    whitespace it starts with a comment opener — `//` `#` `/*` `*` `<!--` `{/*`
//!    `--` `;` `%` `(*` `{-` — and only `<!--` in markdown files, where `#` is a
//!    heading. Bare: it has only ASCII letters, digits, spaces, `…` and
//!    `. , : - ( ) [ ]`. A placeholder statement `...` (or `…`) followed by a `#` or
//!    `//` comment counts as its comment (`...  # existing code`).
//! 2. Its text, with the comment delimiters removed, has at least one word (a run of
//!    ASCII letters, compared in lower case; text with a non-ASCII letter is never
//!    an elision), and every word is in the elision
//!    vocabulary: `MARKERS` (`rest`, `remaining`, `existing`, `unchanged`,
//!    `omitted`, `same`, `before`, …), `SUBJECTS` (`code`, `file`,
//!    `implementation`, `content`, `lines`, …) and `FILLERS` (`the`, `of`, `here`,
//!    `other`, …). Digits are ignored (`// ... 40 lines omitted`).
//! 3. It has an ellipsis (`...` or `…`), or a marker word and a subject word, or two
//!    different marker words (`rest unchanged`, `same as before`).
//!
//! So `// ... rest of file ...`, `# ... existing code ...`, `/* ... unchanged ... */`,
//! `<!-- rest of the file unchanged -->`, `... (rest unchanged)`,
//! `// remaining code unchanged` and `// (existing implementation)` are elisions,
//! while Python's `...` (no word), `pass  # ...` (code before the comment),
//! `..Default::default()`, `f(...args)`, `println!("...")`, a string holding "rest of
//! the file", and ordinary comments such as `// handle the rest of the input...`
//! (`handle`, `input` are not in the vocabulary) are not.

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;

/// What a block does to its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Create or replace the file with this content.
    Write(String),
    /// Remove the file.
    Delete,
}

/// One `^^^path` block of a response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// The path exactly as the header wrote it, trimmed (not yet validated: see
    /// [`crate::policy`]).
    pub path: String,
    /// Write or delete.
    pub action: Action,
    /// The 1-based line of the header.
    pub line: usize,
}

/// Why a response cannot be used. Each message tells the model what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// The response has no header at all.
    #[error(
        "the response has no ^^^path … ^^^end blocks; reply with whole-file blocks: a line ^^^path/to/file, the complete file content, then a line ^^^end (or ^^^path/to/file followed by ^^^delete to remove a file)"
    )]
    NoBlocks,
    /// A header line with nothing after `^^^`.
    #[error(
        "line {line}: the header `^^^` has no path; write the file's path right after ^^^, like ^^^src/main.rs"
    )]
    EmptyPath {
        /// The header's line.
        line: usize,
    },
    /// A header path wrapped in quotes, backticks, brackets or emphasis.
    #[error(
        "line {line}: the header ^^^{path} decorates the path; write the bare path right after ^^^, like ^^^src/main.rs, without quotes, backticks, brackets or asterisks"
    )]
    DecoratedPath {
        /// The path as written.
        path: String,
        /// The header's line.
        line: usize,
    },
    /// A new header (or an empty one) came while a block was open.
    #[error(
        "unterminated block for {path} (line {line}): it needs ^^^end before the next block (line {next_line})"
    )]
    UnterminatedBeforeHeader {
        /// The open block's path.
        path: String,
        /// The open block's header line.
        line: usize,
        /// The line of the header that came too early.
        next_line: usize,
    },
    /// The text ended while a block was open.
    #[error(
        "unterminated block for {path} (line {line}): the response ends before its ^^^end; close every block with a line ^^^end"
    )]
    UnterminatedAtEnd {
        /// The open block's path.
        path: String,
        /// The open block's header line.
        line: usize,
    },
    /// `^^^end` or `^^^delete` with no open block.
    #[error(
        "line {line}: {marker} has no open block; every ^^^end or ^^^delete must follow a ^^^path header (a file named end or delete is written as ^^^./end)"
    )]
    StrayTerminator {
        /// The terminator as written, trimmed.
        marker: String,
        /// Its line.
        line: usize,
    },
    /// `^^^delete` after content lines.
    #[error(
        "the block for {path} (line {line}) has content before its ^^^delete (line {delete_line}); to delete the file put ^^^delete on the line right after the header, to replace it end the content with ^^^end"
    )]
    DeleteAfterContent {
        /// The block's path.
        path: String,
        /// The header's line.
        line: usize,
        /// The `^^^delete` line.
        delete_line: usize,
    },
    /// Two blocks write (or delete) the same path.
    #[error(
        "{path} has two blocks (lines {first_line} and {line}); send exactly one block per file, with the file's complete final content"
    )]
    DuplicatePath {
        /// The second block's path.
        path: String,
        /// The second block's header line.
        line: usize,
        /// The first block's header line.
        first_line: usize,
    },
    /// One block writes a path and another deletes it.
    #[error(
        "{path} is both written (line {write_line}) and deleted (line {delete_line}); send one block per file: either its new content or ^^^delete"
    )]
    WriteAndDelete {
        /// The path (as the later block wrote it).
        path: String,
        /// The later of the two header lines.
        line: usize,
        /// The writing block's header line.
        write_line: usize,
        /// The deleting block's header line.
        delete_line: usize,
    },
    /// The content is wrapped in a markdown fence.
    #[error(
        "the block for {path} starts and ends with a markdown fence; put the ``` lines outside ^^^ markers (everything between ^^^{path} on line {line} and its ^^^end is written to the file verbatim)"
    )]
    Fenced {
        /// The block's path.
        path: String,
        /// The header's line.
        line: usize,
    },
    /// A line stands for omitted code.
    #[error(
        "the block for {path} (line {line}) leaves code out at line {elision_line} (`{text}`); a block replaces the whole file, so write out the complete file without placeholders"
    )]
    Elision {
        /// The block's path.
        path: String,
        /// The header's line.
        line: usize,
        /// The elision's line in the response.
        elision_line: usize,
        /// The elision line, trimmed.
        text: String,
    },
}

impl ParseError {
    /// The response line the problem is reported at (0 for [`ParseError::NoBlocks`]).
    pub fn line(&self) -> usize {
        match self {
            ParseError::NoBlocks => 0,
            ParseError::EmptyPath { line }
            | ParseError::DecoratedPath { line, .. }
            | ParseError::UnterminatedBeforeHeader { line, .. }
            | ParseError::UnterminatedAtEnd { line, .. }
            | ParseError::StrayTerminator { line, .. }
            | ParseError::DeleteAfterContent { line, .. }
            | ParseError::DuplicatePath { line, .. }
            | ParseError::WriteAndDelete { line, .. }
            | ParseError::Fenced { line, .. }
            | ParseError::Elision { line, .. } => *line,
        }
    }
}

/// Parses a response into blocks, or returns every problem found, in line order.
pub fn parse(response: &str) -> Result<Vec<Block>, Vec<ParseError>> {
    let mut parser = Parser::default();
    let mut lines = response.split('\n').peekable();
    let mut number = 0;
    while let Some(raw) = lines.next() {
        // The empty piece after a final newline is not a line.
        if raw.is_empty() && lines.peek().is_none() {
            break;
        }
        number += 1;
        parser.line(raw.strip_suffix('\r').unwrap_or(raw), number);
    }
    parser.finish()
}

/// A line's role.
#[derive(Debug, PartialEq, Eq)]
enum Line<'a> {
    Header(&'a str),
    End,
    Delete,
    Text(&'a str),
}

fn classify(line: &str) -> Line<'_> {
    let Some(rest) = line.strip_prefix("^^^") else {
        return Line::Text(line);
    };
    let rest = rest.trim();
    if rest.eq_ignore_ascii_case("end") {
        Line::End
    } else if rest.eq_ignore_ascii_case("delete") {
        Line::Delete
    } else {
        Line::Header(rest)
    }
}

/// A block being read.
#[derive(Debug)]
struct Open {
    /// `None` for a header without a usable path: its lines are skipped and its
    /// terminator is not stray.
    path: Option<String>,
    line: usize,
    content: Vec<(usize, String)>,
}

#[derive(Debug, Default)]
struct Parser {
    open: Option<Open>,
    blocks: Vec<Block>,
    errors: Vec<ParseError>,
    /// Normalized path → index in `blocks`.
    seen: HashMap<String, usize>,
    headers: usize,
}

impl Parser {
    fn line(&mut self, text: &str, number: usize) {
        match classify(text) {
            Line::Header(path) => {
                self.headers += 1;
                if let Some(open) = self.open.take()
                    && let Some(open_path) = open.path
                {
                    self.errors.push(ParseError::UnterminatedBeforeHeader {
                        path: open_path,
                        line: open.line,
                        next_line: number,
                    });
                }
                let path = if path.is_empty() {
                    self.errors.push(ParseError::EmptyPath { line: number });
                    None
                } else if is_decorated(path) {
                    self.errors.push(ParseError::DecoratedPath {
                        path: path.to_owned(),
                        line: number,
                    });
                    None
                } else {
                    Some(path.to_owned())
                };
                self.open = Some(Open {
                    path,
                    line: number,
                    content: Vec::new(),
                });
            }
            Line::End => match self.open.take() {
                Some(Open {
                    path: Some(path),
                    line,
                    content,
                }) => self.close_write(path, line, content),
                Some(Open { path: None, .. }) => {}
                None => self.stray(text, number),
            },
            Line::Delete => match self.open.take() {
                Some(Open {
                    path: Some(path),
                    line,
                    content,
                }) => {
                    if content.is_empty() {
                        self.push(Block {
                            path,
                            action: Action::Delete,
                            line,
                        });
                    } else {
                        self.errors.push(ParseError::DeleteAfterContent {
                            path,
                            line,
                            delete_line: number,
                        });
                    }
                }
                Some(Open { path: None, .. }) => {}
                None => self.stray(text, number),
            },
            Line::Text(text) => {
                if let Some(open) = &mut self.open {
                    open.content.push((number, text.to_owned()));
                }
            }
        }
    }

    fn stray(&mut self, text: &str, number: usize) {
        self.errors.push(ParseError::StrayTerminator {
            marker: text.trim().to_owned(),
            line: number,
        });
    }

    fn close_write(&mut self, path: String, line: usize, content: Vec<(usize, String)>) {
        let markdown = is_markdown(&path);
        if !markdown && is_fenced(&content) {
            self.errors.push(ParseError::Fenced {
                path: path.clone(),
                line,
            });
        }
        let syntax = if markdown {
            CommentSyntax::Markdown
        } else {
            CommentSyntax::Code
        };
        for (number, text) in &content {
            if is_elision(text, syntax) {
                self.errors.push(ParseError::Elision {
                    path: path.clone(),
                    line,
                    elision_line: *number,
                    text: text.trim().to_owned(),
                });
            }
        }
        let text = if content.is_empty() {
            String::new()
        } else {
            let mut joined = content
                .iter()
                .map(|(_, l)| l.as_str())
                .collect::<Vec<_>>()
                .join("\n");
            joined.push('\n');
            joined
        };
        // A block with content problems is still registered, so that a second
        // block for its path is reported too.
        self.push(Block {
            path,
            action: Action::Write(text),
            line,
        });
    }

    fn push(&mut self, block: Block) {
        let key = normalize_for_duplicates(&block.path).to_owned();
        if let Some(&earlier) = self.seen.get(&key) {
            let first = &self.blocks[earlier];
            let error = match (&first.action, &block.action) {
                (Action::Delete, Action::Delete) | (Action::Write(_), Action::Write(_)) => {
                    ParseError::DuplicatePath {
                        path: block.path.clone(),
                        line: block.line,
                        first_line: first.line,
                    }
                }
                (Action::Write(_), Action::Delete) => ParseError::WriteAndDelete {
                    path: block.path.clone(),
                    line: block.line,
                    write_line: first.line,
                    delete_line: block.line,
                },
                (Action::Delete, Action::Write(_)) => ParseError::WriteAndDelete {
                    path: block.path.clone(),
                    line: block.line,
                    write_line: block.line,
                    delete_line: first.line,
                },
            };
            self.errors.push(error);
            return;
        }
        self.seen.insert(key, self.blocks.len());
        self.blocks.push(block);
    }

    fn finish(mut self) -> Result<Vec<Block>, Vec<ParseError>> {
        if let Some(Open {
            path: Some(path),
            line,
            ..
        }) = self.open.take()
        {
            self.errors
                .push(ParseError::UnterminatedAtEnd { path, line });
        }
        if self.headers == 0 {
            self.errors.push(ParseError::NoBlocks);
        }
        if self.errors.is_empty() {
            Ok(self.blocks)
        } else {
            // Problems are found when a block closes; report them by the line they
            // name, keeping discovery order for equal lines. NoBlocks stays last.
            self.errors.sort_by_key(|e| match e {
                ParseError::NoBlocks => usize::MAX,
                other => other.line(),
            });
            Err(self.errors)
        }
    }
}

/// The key two headers are compared by: trimmed, without leading `./`.
fn normalize_for_duplicates(path: &str) -> &str {
    let mut path = path.trim();
    while let Some(rest) = path.strip_prefix("./") {
        path = rest;
    }
    path
}

/// A path wrapped in markdown or quoting: `` `a.rs` ``, `"a.rs"`, `[a.rs]`, `**a.rs**`,
/// `<a.rs>`.
fn is_decorated(path: &str) -> bool {
    const DECORATION: &[char] = &['`', '"', '\'', '*', '[', ']', '<', '>'];
    path.starts_with(DECORATION) || path.ends_with(DECORATION)
}

/// Markdown files, where fences are content and `#` starts a heading.
fn is_markdown(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let Some((_, ext)) = name.rsplit_once('.') else {
        return false;
    };
    ["md", "markdown", "mdx"]
        .iter()
        .any(|m| ext.eq_ignore_ascii_case(m))
}

/// An opening fence: up to three spaces, three or more backticks or tildes, and
/// an optional info string (a language) without backticks.
static FENCE_OPEN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^ {0,3}(?:`{3,}[^`]*|~{3,}.*)$").expect("the fence-opener regex is valid")
});

/// A closing fence: a bare run of backticks or tildes.
static FENCE_CLOSE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^ {0,3}(?:`{3,}|~{3,})[ \t]*$").expect("the fence-closer regex is valid")
});

/// True when the first content line opens a fence and the last one closes it.
fn is_fenced(content: &[(usize, String)]) -> bool {
    match (content.first(), content.last()) {
        (Some((_, first)), Some((_, last))) if content.len() >= 2 => {
            FENCE_OPEN.is_match(first) && FENCE_CLOSE.is_match(last)
        }
        _ => false,
    }
}

/// Words that say something was left out.
pub(crate) const MARKERS: &[&str] = &[
    "rest",
    "remaining",
    "remainder",
    "existing",
    "unchanged",
    "omitted",
    "omit",
    "omitting",
    "elided",
    "untouched",
    "unmodified",
    "same",
    "before",
    "previous",
    "previously",
    "original",
    "truncated",
    "snip",
    "snipped",
    "brevity",
    "identical",
    "abbreviated",
    "continues",
    "continued",
];

/// Words naming what was left out.
const SUBJECTS: &[&str] = &[
    "code",
    "file",
    "files",
    "implementation",
    "implementations",
    "impl",
    "impls",
    "content",
    "contents",
    "line",
    "lines",
    "body",
    "bodies",
    "function",
    "functions",
    "method",
    "methods",
    "logic",
    "definition",
    "definitions",
    "field",
    "fields",
    "import",
    "imports",
    "test",
    "tests",
    "item",
    "items",
    "member",
    "members",
    "module",
    "class",
    "classes",
    "section",
    "sections",
    "text",
    "everything",
    "functionality",
    "helpers",
    "cases",
    "variants",
    "declarations",
    "markup",
    "styles",
    "rules",
];

/// Words that may appear around markers and subjects.
pub(crate) const FILLERS: &[&str] = &[
    "a", "above", "all", "an", "and", "any", "are", "as", "be", "below", "else", "etc", "for",
    "from", "goes", "here", "in", "is", "it", "its", "keep", "kept", "left", "like", "more", "my",
    "no", "not", "of", "on", "or", "other", "others", "our", "out", "remain", "remains", "s",
    "shown", "so", "stay", "stays", "that", "the", "there", "these", "this", "those", "to", "was",
    "were", "with", "your",
];

/// How comments look in the file a block writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CommentSyntax {
    /// Source code and configuration: `//`, `#`, `/*`, `--`, …
    Code,
    /// Markdown: only `<!-- … -->` (a `#` line is a heading).
    Markdown,
}

/// Comment openers, longest first so `<!--` wins over `--` and `///` over `//`.
const CODE_OPENERS: &[&str] = &[
    "<!--", "{/*", "///", "//!", "//", "/**", "/*", "(*", "{-", "--", "#", "*", ";", "%",
];

/// Comment closers stripped from the end of a comment-only line.
const CLOSERS: &[&str] = &["-->", "*/}", "*/", "*)", "-}"];

/// True when `line` stands for omitted code (the rule is in the module docs).
fn is_elision(line: &str, syntax: CommentSyntax) -> bool {
    let trimmed = line.trim();
    let openers: &[&str] = match syntax {
        CommentSyntax::Code => CODE_OPENERS,
        CommentSyntax::Markdown => &["<!--"],
    };
    let body = if let Some(opener) = openers.iter().find(|o| trimmed.starts_with(**o)) {
        let mut body = trimmed[opener.len()..].trim();
        // `////`, `##`, `;;`: repeated openers.
        body = body
            .trim_start_matches(['/', '#', ';', '%', '!', '*'])
            .trim();
        for closer in CLOSERS {
            if let Some(rest) = body.strip_suffix(closer) {
                body = rest.trim_end();
                break;
            }
        }
        body
    } else if is_bare(trimmed) {
        trimmed
    } else if let Some(comment) = after_ellipsis_statement(trimmed) {
        // Python's `...  # existing code`: the statement is a placeholder, the
        // comment says what it stands for.
        return judge_words(comment);
    } else {
        return false;
    };
    judge_words(body)
}

/// The comment after a bare `...` / `…` statement (`...  # rest of the code`).
fn after_ellipsis_statement(line: &str) -> Option<&str> {
    let rest = line
        .strip_prefix("...")
        .or_else(|| line.strip_prefix('…'))?
        .trim_start();
    ["#", "//"]
        .iter()
        .find_map(|opener| rest.strip_prefix(opener))
}

/// A line of prose-like characters only (no code punctuation).
fn is_bare(text: &str) -> bool {
    !text.is_empty()
        && text.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(
                    c,
                    ' ' | '\t' | '…' | '.' | ',' | ':' | '-' | '(' | ')' | '[' | ']'
                )
        })
}

/// Step 2 and 3 of the elision rule on a comment's text.
fn judge_words(body: &str) -> bool {
    let ellipsis = body.contains("...") || body.contains('…');
    let mut any_word = false;
    let mut markers: Vec<&str> = Vec::new();
    let mut subject = false;
    for word in body
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| !w.is_empty())
    {
        // Any non-ASCII letter makes the text something else than an elision.
        let lower = word.to_ascii_lowercase();
        any_word = true;
        if let Some(m) = MARKERS.iter().find(|m| **m == lower) {
            if !markers.contains(m) {
                markers.push(m);
            }
        } else if SUBJECTS.contains(&lower.as_str()) {
            subject = true;
        } else if !FILLERS.contains(&lower.as_str()) {
            return false;
        }
    }
    // Letters outside ASCII (`é`, `ß`) belong to words the vocabulary cannot hold.
    if body.chars().any(|c| c.is_alphabetic() && !c.is_ascii()) {
        return false;
    }
    any_word && (ellipsis || (!markers.is_empty() && subject) || markers.len() >= 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classify_markers() {
        for (text, line) in [
            ("^^^end", Line::End),
            ("^^^ END \t", Line::End),
            ("^^^Delete", Line::Delete),
            ("^^^ src/a.rs ", Line::Header("src/a.rs")),
            ("^^^", Line::Header("")),
            ("^^^./end", Line::Header("./end")),
            ("^^^ending.rs", Line::Header("ending.rs")),
            (" ^^^end", Line::Text(" ^^^end")),
        ] {
            assert_eq!(classify(text), line, "{text:?}");
        }
    }

    #[test]
    fn duplicate_keys() {
        assert_eq!(normalize_for_duplicates(" ./././a/b "), "a/b");
        assert_eq!(normalize_for_duplicates("a/./b"), "a/./b");
    }

    #[test]
    fn decorated_paths() {
        for p in [
            "`a.rs`", "\"a.rs\"", "[a.rs]", "**a.rs**", "<a.rs>", "'a.rs'",
        ] {
            assert!(is_decorated(p), "{p}");
        }
        for p in ["a.rs", "src/a b.rs", "it's/a.rs"] {
            assert!(!is_decorated(p), "{p}");
        }
    }

    #[test]
    fn markdown_extensions() {
        for p in ["README.md", "docs/x.MDX", "a.markdown"] {
            assert!(is_markdown(p), "{p}");
        }
        for p in ["md", "a.md/x.rs", "a.rs"] {
            assert!(!is_markdown(p), "{p}");
        }
    }

    #[test]
    fn fences() {
        let c = |lines: &[&str]| -> Vec<(usize, String)> {
            lines.iter().map(|l| (1, (*l).to_owned())).collect()
        };
        for lines in [
            &["```rust", "fn a() {}", "```"][..],
            &["~~~", "x", "~~~ "],
            &["```", "```"],
        ] {
            assert!(is_fenced(&c(lines)), "{lines:?}");
        }
        for lines in [
            &["```"][..],
            &["```rust", "fn a() {}"],
            &["let s = \"```\";", "```"],
            &["```rust", "x", "```rust"],
        ] {
            assert!(!is_fenced(&c(lines)), "{lines:?}");
        }
    }

    #[test]
    fn elision_words() {
        for body in [
            "... rest of file ...",
            "rest unchanged",
            "same as before",
            "... 40 lines omitted ...",
        ] {
            assert!(judge_words(body), "{body}");
        }
        for body in [
            "...",
            "unchanged",
            "handle the rest of the input...",
            "rest of the fichier é...",
        ] {
            assert!(!judge_words(body), "{body}");
        }
    }

    #[test]
    fn elision_lines() {
        use CommentSyntax::{Code, Markdown};
        for (line, syntax, elision) in [
            ("    // ... existing code ...", Code, true),
            ("/* ... unchanged ... */", Code, true),
            (" * ... rest of the implementation", Code, true),
            ("-- remaining lines unchanged", Code, true),
            ("pass  # ...", Code, false),
            ("...", Code, false),
            ("# Existing code", Markdown, false),
            ("<!-- existing content -->", Markdown, true),
        ] {
            assert_eq!(is_elision(line, syntax), elision, "{line:?}");
        }
    }
}
