//! Commit messages from history, clamped for prepared context (a squash
//! message's branch commits, a release note's commits): each keeps at most
//! [`MAX_LINES`] lines and [`MAX_WORDS`] words, so one long message cannot
//! crowd out the others.
//!
//! **Invariants:** the kept text is a prefix of the message (original spacing
//! and newlines, minus trailing whitespace), cut between words, never inside a
//! word or a UTF-8 sequence; a clamped message ends with the line `[…]`.

/// The most lines a commit message keeps in prepared context.
pub const MAX_LINES: usize = 10;

/// The most whitespace-separated words a commit message keeps in prepared
/// context.
pub const MAX_WORDS: usize = 1000;

/// The line that ends a clamped message.
const MARKER: &str = "[…]";

/// Clamps `message` to `max_lines` lines and `max_words` words, after trimming
/// trailing whitespace and blank lines. Returns the kept text and whether
/// anything was cut; when something was, the text ends with a `[…]` line.
pub fn clamp_message(message: &str, max_lines: usize, max_words: usize) -> (String, bool) {
    let text = message.trim_end();
    let line_end = match max_lines {
        0 => 0,
        n => text
            .match_indices('\n')
            .nth(n - 1)
            .map_or(text.len(), |(i, _)| i),
    };
    let end = word_cut(&text[..line_end], max_words).unwrap_or(line_end);
    if end >= text.len() {
        return (text.to_owned(), false);
    }
    let kept = text[..end].trim_end();
    let clamped = if kept.is_empty() {
        MARKER.to_owned()
    } else {
        format!("{kept}\n{MARKER}")
    };
    (clamped, true)
}

/// The byte offset just past the `max_words`-th word of `text`, when `text`
/// has more words than that.
fn word_cut(text: &str, max_words: usize) -> Option<usize> {
    let mut words = 0;
    let mut in_word = false;
    let mut last_end = 0;
    for (i, c) in text.char_indices() {
        if c.is_whitespace() {
            if in_word {
                in_word = false;
                last_end = i;
            }
        } else if !in_word {
            if words == max_words {
                return Some(last_end);
            }
            words += 1;
            in_word = true;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(input: &str, lines: usize, words: usize, expected: &str, cut: bool) {
        assert_eq!(
            clamp_message(input, lines, words),
            (expected.to_owned(), cut),
            "input: {input:?}"
        );
    }

    #[test]
    fn nothing_to_cut() {
        check("fix: a thing", 10, 1000, "fix: a thing", false);
        check(
            "subject\n\nbody line\n",
            3,
            4,
            "subject\n\nbody line",
            false,
        );
        check("", 10, 1000, "", false);
        check("exactly  three words", 1, 3, "exactly  three words", false);
    }

    #[test]
    fn trailing_blanks_are_trimmed_without_counting_as_cut() {
        check(
            "subject\n\nbody\n\n\n  \n\t\n",
            3,
            1000,
            "subject\n\nbody",
            false,
        );
        check("subject   \n", 1, 1, "subject", false);
    }

    #[test]
    fn line_cut() {
        check("a\nb\nc\nd", 2, 1000, "a\nb\n[…]", true);
        check("a\r\nb\r\nc", 1, 1000, "a\n[…]", true);
        // Blank lines just before the cut do not survive it.
        check("a\n\n\nb", 2, 1000, "a\n[…]", true);
        check("a\nb", 0, 1000, "[…]", true);
    }

    #[test]
    fn word_cut_keeps_spacing() {
        check("one  two\tthree four", 100, 3, "one  two\tthree\n[…]", true);
        check("one\n\ntwo three", 100, 2, "one\n\ntwo\n[…]", true);
        check("one two", 100, 0, "[…]", true);
    }

    #[test]
    fn both_limits() {
        // The line limit cuts first, then the word limit within what is left.
        check("a b c\nd e f\ng h i", 2, 4, "a b c\nd\n[…]", true);
        check("a b c\nd e f\ng h i", 2, 100, "a b c\nd e f\n[…]", true);
        check("a b c\nd e f\ng h i", 1, 5, "a b c\n[…]", true);
    }

    #[test]
    fn unicode() {
        check("héllo wörld ünïcode", 10, 2, "héllo wörld\n[…]", true);
        check(
            "日本語\u{3000}テキスト 追加",
            10,
            2,
            "日本語\u{3000}テキスト\n[…]",
            true,
        );
        check("émoji 🎉\nsecond ligne", 1, 10, "émoji 🎉\n[…]", true);
    }

    #[test]
    fn defaults_are_those_of_the_spec() {
        assert_eq!((MAX_LINES, MAX_WORDS), (10, 1000));
        let long = "word ".repeat(1500);
        let (text, cut) = clamp_message(&long, MAX_LINES, MAX_WORDS);
        assert!(cut);
        assert_eq!(text.split_whitespace().count(), MAX_WORDS + 1);
        let many = (1..=20).map(|i| format!("line {i}\n")).collect::<String>();
        let (text, cut) = clamp_message(&many, MAX_LINES, MAX_WORDS);
        assert!(cut);
        assert_eq!(text.lines().count(), MAX_LINES + 1);
        assert!(text.ends_with("line 10\n[…]"));
    }
}
