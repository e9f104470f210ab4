//! The one trailer grammar: `Key: value` lines such as `Signed-off-by: A
//! <a@x>` or `Fixes: #12`.
//!
//! **Syntax** ([`Trailer::parse`]): at the start of the line a key of ASCII
//! letters, digits and hyphens that starts with a letter, a colon, whitespace,
//! and a value that is not blank. That is git's trailer (`git
//! interpret-trailers`) without its configurable separators and continuation
//! lines.
//!
//! **Recognized trailers** ([`is_trailer_line`]): the syntax alone makes every
//! `Note: …` line a trailer, so where prose must be told apart — shaping a
//! model's answer, picking a body line for a release-note draft — a trailer
//! also needs a key with a hyphen (`Signed-off-by`, `Co-authored-by`) or one of
//! the single words used as trailer keys by convention (`Bug`, `Cc`, `Close`,
//! `Closed`, `Closes`, `Fix`, `Fixes`, `Issue`, `Issues`, `Jira`, `Link`, `Ref`,
//! `References`, `Refs`, `Related`, `Resolves`, `See`, `Task`, `Ticket`, in any
//! case). A commit's own trailer block, by
//! contrast, is read with the syntax alone ([`crate::Message::parse`]), as git
//! reads it.

use std::sync::LazyLock;

use regex::Regex;

use crate::built_in;

/// A trailer line, `Key-Name: value`; group 1 is the key, group 2 the value.
static TRAILER: LazyLock<Regex> =
    LazyLock::new(|| built_in(r"^([A-Za-z][A-Za-z0-9-]*):\s+(\S.*)$"));

/// Single-word keys that are trailers by convention (compared
/// case-insensitively): references to issues, tickets and reviews. Other
/// single-word keys ("Note:", "Example:") usually start prose, which must not
/// be dropped or left unwrapped.
const KNOWN_SINGLE_WORD: [&str; 19] = [
    "bug",
    "cc",
    "close",
    "closed",
    "closes",
    "fix",
    "fixes",
    "issue",
    "issues",
    "jira",
    "link",
    "ref",
    "references",
    "refs",
    "related",
    "resolves",
    "see",
    "task",
    "ticket",
];

/// One `Key: value` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trailer {
    /// The key as written (`Signed-off-by`).
    pub key: String,
    /// The value, trailing whitespace removed.
    pub value: String,
}

impl Trailer {
    /// `line` as a trailer by its syntax alone (see the module documentation),
    /// whatever its key.
    pub fn parse(line: &str) -> Option<Trailer> {
        let found = TRAILER.captures(line.trim_end())?;
        Some(Trailer {
            key: found[1].to_owned(),
            value: found[2].to_owned(),
        })
    }
}

/// Whether `key` is a trailer key by convention: it has a hyphen or is one of
/// [`KNOWN_SINGLE_WORD`].
fn is_known_key(key: &str) -> bool {
    key.contains('-')
        || KNOWN_SINGLE_WORD
            .iter()
            .any(|known| known.eq_ignore_ascii_case(key))
}

/// The key of `line` if it is a recognized trailer: the syntax of
/// [`Trailer::parse`] and a key with a hyphen (`Signed-off-by`) or a well-known
/// single word (`Fixes`, `Refs`, ...).
pub(crate) fn trailer_key(line: &str) -> Option<&str> {
    let key = TRAILER.captures(line)?.get(1)?.as_str();
    is_known_key(key).then_some(key)
}

/// Whether `line` is a recognized trailer — the syntax of [`Trailer::parse`]
/// and a key with a hyphen or a single word used as a trailer key by
/// convention (see the module documentation) — not prose that
/// happens to start with a word and a colon.
pub fn is_trailer_line(line: &str) -> bool {
    trailer_key(line).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailer_syntax() {
        #[track_caller]
        fn check(line: &str, expected: Option<(&str, &str)>) {
            let got = Trailer::parse(line);
            let got = got.as_ref().map(|t| (t.key.as_str(), t.value.as_str()));
            assert_eq!(got, expected, "{line:?}");
        }
        check("Signed-off-by: A <a@x>", Some(("Signed-off-by", "A <a@x>")));
        check("Fixes:\t#12  ", Some(("Fixes", "#12")));
        check("Note: prose", Some(("Note", "prose")));
        check("Fixes:#12", None);
        check("Fixes: ", None);
        check(" Fixes: #12", None);
        check("1x: y", None);
        check("Key word: y", None);
        check("", None);
    }

    #[test]
    fn recognized_trailers_need_a_hyphen_or_a_known_word() {
        for line in [
            "Signed-off-by: A <a@x>",
            "Co-Authored-By: B",
            "Fixes: #12",
            "refs: ABC-1",
            "Jira: ABC-1",
            "Ticket: 42",
            "Closes: #3",
        ] {
            assert!(is_trailer_line(line), "{line}");
        }
        for line in ["Note: this needs a migration.", "Example: x", "Fixes #12"] {
            assert!(!is_trailer_line(line), "{line}");
        }
    }
}
