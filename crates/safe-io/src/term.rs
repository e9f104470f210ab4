//! Text from notes and models, made safe to print on a terminal.
//!
//! Notes come from teammates and from models; model replies are arbitrary text.
//! Printed raw, `ESC ] 52 ; c ; …` writes the reader's clipboard, `ESC [ 2 J`
//! clears the screen, a carriage return overwrites what came before, and
//! U+202E reverses what follows. [`sanitize`] replaces each such character by a
//! visible escape (`\x1b`, `\r`, `\u{202e}`), so the reader sees that something
//! was there and nothing acts on their terminal. JSON output never goes through
//! here: it is exact, and JSON escapes control characters itself.

use std::borrow::Cow;

/// True for characters a terminal acts on or that reorder text: C0 controls,
/// DEL, C1 controls, and the bidirectional embeddings, overrides and isolates.
fn is_unsafe(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
        | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn escape(c: char, out: &mut String) {
    use std::fmt::Write as _;
    let code = c as u32;
    if code <= 0xff {
        match c {
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            _ => {
                let _ = write!(out, "\\x{code:02x}");
            }
        }
    } else {
        let _ = write!(out, "\\u{{{code:04x}}}");
    }
}

fn sanitize_with(text: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    let unsafe_char = |c: char| is_unsafe(c) && !keep(c);
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if unsafe_char(c) {
            escape(c, &mut out);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `text` with every unsafe character escaped; newlines and tabs are kept, so
/// multi-line text keeps its shape.
pub fn sanitize(text: &str) -> Cow<'_, str> {
    sanitize_with(text, |c| c == '\n' || c == '\t')
}

/// `text` for one line of output: newlines and tabs are escaped too.
pub fn sanitize_line(text: &str) -> Cow<'_, str> {
    sanitize_with(text, |_| false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_a_terminal_would_act_on() {
        let check = |text: &str, shown: &str| assert_eq!(sanitize(text), shown, "{text:?}");
        check("plain text, ünïcode ✓", "plain text, ünïcode ✓");
        assert!(matches!(sanitize("plain"), Cow::Borrowed(_)));
        check("a\x1b]52;c;ZXZpbA==\x07b", "a\\x1b]52;c;ZXZpbA==\\x07b");
        check("\x1b[2Jcleared", "\\x1b[2Jcleared");
        check("one\ntwo\tthree\rfour", "one\ntwo\tthree\\rfour");
        check("c1 \u{9b}31m", "c1 \\x9b31m");
        check("del\u{7f}", "del\\x7f");
        check("abc\u{202e}fed", "abc\\u{202e}fed");
        check("\u{2066}iso", "\\u{2066}iso");
        assert_eq!(sanitize_line("one\ntwo\tx"), "one\\ntwo\\tx");
    }
}
