//! A commit message read as git reads it: the subject line, the body, and the
//! trailer block.

use crate::trailer::Trailer;

/// A commit message split into its parts ([`Message::parse`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Message {
    /// The first line, trailing whitespace removed.
    pub subject: String,
    /// What follows the subject, without the trailer block: its lines as
    /// written (trailing whitespace removed), blank lines at either end
    /// dropped.
    pub body: String,
    /// The trailer block: the last paragraph when it is not the subject's and
    /// every one of its lines is a [`Trailer`] by syntax, whatever the key.
    pub trailers: Vec<Trailer>,
}

impl Message {
    /// Splits `text` into subject, body and trailers. Never fails: an empty
    /// text is an empty message.
    pub fn parse(text: &str) -> Message {
        let mut lines = text.lines();
        let subject = lines.next().unwrap_or("").trim_end().to_owned();
        let rest: Vec<&str> = lines.map(str::trim_end).collect();
        // The subject's paragraph runs to the first blank line; a trailer
        // block must come after it.
        let subject_paragraph_end = rest
            .iter()
            .position(|line| line.is_empty())
            .unwrap_or(rest.len());
        let mut end = rest.len();
        while end > 0 && rest[end - 1].is_empty() {
            end -= 1;
        }
        let last_start = rest[..end]
            .iter()
            .rposition(|line| line.is_empty())
            .map_or(0, |blank| blank + 1);
        let mut trailers = Vec::new();
        if last_start > subject_paragraph_end && last_start < end {
            let parsed: Option<Vec<Trailer>> = rest[last_start..end]
                .iter()
                .map(|l| Trailer::parse(l))
                .collect();
            if let Some(parsed) = parsed {
                trailers = parsed;
                end = last_start;
            }
        }
        let mut start = 0;
        while start < end && rest[start].is_empty() {
            start += 1;
        }
        while end > start && rest[end - 1].is_empty() {
            end -= 1;
        }
        Message {
            subject,
            body: rest[start..end].join("\n"),
            trailers,
        }
    }
}

/// The first line of `message` (the subject), or `""` for an empty message.
pub(crate) fn subject(message: &str) -> &str {
    message.lines().next().unwrap_or("")
}

/// The nonblank lines of `text` (trailing whitespace removed), grouped into
/// paragraphs at blank lines.
pub(crate) fn paragraphs(text: &str) -> Vec<Vec<&str>> {
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
pub(crate) fn join_paragraphs<S: AsRef<str>>(paragraphs: Vec<Vec<S>>) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn trailer(key: &str, value: &str) -> Trailer {
        Trailer::parse(&format!("{key}: {value}")).expect("a trailer line")
    }

    #[track_caller]
    fn check(text: &str, subject: &str, body: &str, trailers: &[Trailer]) {
        let expected = Message {
            subject: subject.to_owned(),
            body: body.to_owned(),
            trailers: trailers.to_vec(),
        };
        assert_eq!(Message::parse(text), expected, "{text:?}");
    }

    #[test]
    fn messages_split_into_subject_body_and_trailers() {
        check("", "", "", &[]);
        check("Fix x", "Fix x", "", &[]);
        check("Fix x  \r\n\r\nBody.\r\n", "Fix x", "Body.", &[]);
        check(
            "Fix x\n\n\nFirst.\n  indented\n\nSecond.\n\nSigned-off-by: A <a@x>\nRefs: #2\n\n",
            "Fix x",
            "First.\n  indented\n\nSecond.",
            &[trailer("Signed-off-by", "A <a@x>"), trailer("Refs", "#2")],
        );
        check(
            "Fix x\n\nSigned-off-by: A",
            "Fix x",
            "",
            &[trailer("Signed-off-by", "A")],
        );
        // Any key counts in a trailer block, as in git.
        check(
            "Fix x\n\nBody.\n\nNote: later",
            "Fix x",
            "Body.",
            &[trailer("Note", "later")],
        );
    }

    #[test]
    fn what_is_not_a_trailer_block_stays_in_the_body() {
        // Part of the subject's paragraph.
        check("Fix x\nSigned-off-by: A", "Fix x", "Signed-off-by: A", &[]);
        // A paragraph with a line that is not a trailer.
        check(
            "Fix x\n\nSigned-off-by: A\nand prose",
            "Fix x",
            "Signed-off-by: A\nand prose",
            &[],
        );
        // Not the last paragraph.
        check(
            "Fix x\n\nRefs: #1\n\nBody.",
            "Fix x",
            "Refs: #1\n\nBody.",
            &[],
        );
    }

    #[test]
    fn subject_is_the_first_line() {
        assert_eq!(subject("Fix x\n\nBody"), "Fix x");
        assert_eq!(subject("Fix x\r\nBody"), "Fix x");
        assert_eq!(subject(""), "");
    }
}
