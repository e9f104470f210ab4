//! The one Conventional Commits header grammar: `type(scope)!: description`.
//!
//! [`Conventional::parse`] reads the first line of a subject, trimmed:
//!
//! - **type**: a lowercase ASCII letter, then lowercase letters, digits and
//!   hyphens (`feat`, `fix`, `build-deps`, `i18n`). The Conventional Commits
//!   specification allows any noun as a type, and commitlint-style
//!   configurations accept hyphenated types such as `build-deps`, so a squash
//!   message with such a subject is valid and a release note reads its
//!   description rather than the raw subject. Uppercase (`Fix: typo`) is not a
//!   header: in practice it is prose with a colon, and neither the squash rules
//!   nor the release candidates ever accepted it.
//! - **scope** (optional): any text but parentheses and line breaks, in
//!   parentheses; blank means none.
//! - **`!`** (optional) before the colon: a breaking change.
//! - **description**: after the colon and at least one space or tab, starting
//!   with a non-blank character; surrounding whitespace is trimmed. More than
//!   one space is tolerated, as release tooling's parsers do, since history
//!   holds such subjects.
//!
//! One grammar serves the squash-message check (git-agent `pr-message`) and
//! the release-note candidates alike. It replaces two that disagreed: the
//! squash check took hyphens and digits in the type but exactly one space
//! after the colon, the release candidates only letters but any whitespace.

use std::sync::LazyLock;

use regex::Regex;

use crate::built_in;

/// The header; groups: 1 type, 2 scope, 3 `!`, 4 description.
static HEADER: LazyLock<Regex> =
    LazyLock::new(|| built_in(r"^([a-z][a-z0-9-]*)(?:\(([^()\r\n]+)\))?(!)?:\s+(\S.*)$"));

/// A Conventional Commits header: `type(scope)!: description`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conventional {
    /// The type (`feat`, `fix`, `build-deps`, …).
    pub kind: String,
    /// The scope between parentheses, trimmed; `None` without one.
    pub scope: Option<String>,
    /// A `!` before the colon.
    pub breaking: bool,
    /// The text after the colon, trimmed.
    pub description: String,
}

impl Conventional {
    /// Parses the header of the first line of `subject` (see the module
    /// documentation); `None` when it is not one.
    pub fn parse(subject: &str) -> Option<Conventional> {
        let caps = HEADER.captures(subject.lines().next()?.trim())?;
        Some(Conventional {
            kind: caps[1].to_owned(),
            scope: caps
                .get(2)
                .map(|m| m.as_str().trim().to_owned())
                .filter(|s| !s.is_empty()),
            breaking: caps.get(3).is_some(),
            description: caps[4].trim().to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conventional_headers() {
        #[track_caller]
        fn check(subject: &str, expected: Option<(&str, Option<&str>, bool, &str)>) {
            let got = Conventional::parse(subject);
            let got = got.as_ref().map(|h| {
                (
                    h.kind.as_str(),
                    h.scope.as_deref(),
                    h.breaking,
                    h.description.as_str(),
                )
            });
            assert_eq!(got, expected, "{subject}");
        }
        check("feat: add x", Some(("feat", None, false, "add x")));
        check("fix(api): y", Some(("fix", Some("api"), false, "y")));
        check(
            "feat(cli)!: drop z",
            Some(("feat", Some("cli"), true, "drop z")),
        );
        check(
            "refactor!:  spaces  ",
            Some(("refactor", None, true, "spaces")),
        );
        check(
            "chore( deps ): bump",
            Some(("chore", Some("deps"), false, "bump")),
        );
        check("fix: a\n\nbody", Some(("fix", None, false, "a")));
        check("Fix: capitalized", None);
        check("feat:no space", None);
        check("feat: ", None);
        check("feat(): empty scope", None);
        // Fixed when the two grammars became one: the release candidates
        // used to reject a hyphenated type the squash check accepted.
        check("feat-x: dash", Some(("feat-x", None, false, "dash")));
        check(
            "build-deps: bump",
            Some(("build-deps", None, false, "bump")),
        );
        check("i18n: translate", Some(("i18n", None, false, "translate")));
        check("Add a thing", None);
        check("", None);
    }
}
