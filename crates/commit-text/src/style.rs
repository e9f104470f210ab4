//! The shape of a subject line: its prefix (a Conventional Commits header or a
//! `component: ` prefix), the mood of its first word, and the style a
//! repository's history shows.
//!
//! - [`Prefix::of`] reads a subject's prefix: a [`Conventional`] header whose
//!   type is one of the [known types](KNOWN_TYPES) (`feat`, `fix`, `docs`,
//!   …), else a component prefix (`printer: fix …`, `ignore/types: add …`,
//!   `grep-searcher, grep-printer: bump …`; a capitalized word such as `Fix:`
//!   is prose, not a component), else none. A header with an
//!   unknown lowercase "type" (`printer: fix …`) is a component: that is how
//!   repositories such as ripgrep write subjects.
//! - [`Style::detect`] chooses among Conventional Commits, `component:
//!   subject` and plain imperative from recent subjects ([`Style`] documents
//!   the thresholds).
//! - [`past_tense`] tells whether the first word of a description is a past
//!   tense ("Fixed", "Added", "Built"): a small list of common irregular
//!   verbs plus the `-ed` ending, with a list of exceptions.

use std::sync::LazyLock;

use regex::Regex;

use crate::built_in;
use crate::conventional::Conventional;

/// The Conventional Commits types a repository using that style writes: the
/// Angular set, `revert`, and the aliases release tooling accepts.
pub(crate) const KNOWN_TYPES: [&str; 20] = [
    "feat", "feature", "fix", "bugfix", "hotfix", "docs", "doc", "style", "refactor", "perf",
    "test", "tests", "build", "ci", "chore", "revert", "deps", "security", "ops", "release",
];

/// A component prefix: one or more names (letters, digits, `_`, `.`, `/`,
/// `-`, starting with a letter or digit), comma-separated, then a colon and a
/// space. Groups: 1 the components, 2 the description.
static COMPONENT: LazyLock<Regex> =
    LazyLock::new(|| built_in(r"^([A-Za-z0-9][\w./-]*(?:,\s*[A-Za-z0-9][\w./-]*)*):\s+(\S.*)$"));

/// What a subject starts with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Prefix {
    /// A Conventional Commits header with a [known type](KNOWN_TYPES).
    Conventional(Conventional),
    /// `component: description`: the component (or comma-separated
    /// components) is a scope, not a type.
    Component {
        component: String,
        description: String,
    },
    /// No prefix: the whole subject is the description.
    None,
}

impl Prefix {
    /// The prefix of the first line of `subject`, trimmed.
    pub fn of(subject: &str) -> Prefix {
        let line = subject.lines().next().unwrap_or("").trim();
        if let Some(header) = Conventional::parse(line) {
            if KNOWN_TYPES.contains(&header.kind.as_str()) {
                return Prefix::Conventional(header);
            }
            if header.scope.is_none() && !header.breaking {
                return Prefix::Component {
                    component: header.kind,
                    description: header.description,
                };
            }
        }
        match COMPONENT.captures(line) {
            Some(caps) if !is_capitalized_word(&caps[1]) => Prefix::Component {
                component: caps[1].to_owned(),
                description: caps[2].trim().to_owned(),
            },
            _ => Prefix::None,
        }
    }

    /// The description: the text after the prefix, or the whole subject.
    pub fn description<'a>(&'a self, subject: &'a str) -> &'a str {
        match self {
            Prefix::Conventional(header) => &header.description,
            Prefix::Component { description, .. } => description,
            Prefix::None => subject.lines().next().unwrap_or("").trim(),
        }
    }
}

/// A capitalized word (`Fix`, `Note`): prose with a colon (`Fix: typo`),
/// not a component, which is lowercase (`printer`), all capitals (`README`)
/// or a path (`ignore/types`).
fn is_capitalized_word(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(char::is_uppercase) && chars.all(char::is_lowercase)
}

/// How a repository writes its subjects.
///
/// [`Style::detect`] counts the subjects that are not merge or revert
/// commits. Fewer than [`MIN_SUBJECTS`] show no style: [`Style::Any`].
/// Otherwise [`Style::Conventional`] when more than half have a Conventional
/// Commits header with a known type; else [`Style::Component`] when more than
/// half have a component prefix or a header (some repositories mix the two);
/// else [`Style::Imperative`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// `type(scope): description`.
    Conventional,
    /// `component: description`.
    Component,
    /// A plain imperative sentence without a prefix.
    Imperative,
    /// Too little history to tell: any of the three, Conventional Commits
    /// preferred; nothing is enforced.
    Any,
}

/// The fewest subjects (merges and reverts aside) that show a style.
pub(crate) const MIN_SUBJECTS: usize = 3;

impl Style {
    /// The style most of `subjects` follow (see [`Style`]).
    pub fn detect<S: AsRef<str>>(subjects: &[S]) -> Style {
        let mut counted = 0;
        let mut conventional = 0;
        let mut prefixed = 0;
        for subject in subjects {
            let subject = subject.as_ref().trim();
            let first = subject.split_whitespace().next().unwrap_or("");
            if subject.is_empty() || matches!(first, "Merge" | "Revert") {
                continue;
            }
            counted += 1;
            match Prefix::of(subject) {
                Prefix::Conventional(_) => {
                    conventional += 1;
                    prefixed += 1;
                }
                Prefix::Component { .. } => prefixed += 1,
                Prefix::None => {}
            }
        }
        if counted < MIN_SUBJECTS {
            Style::Any
        } else if conventional * 2 > counted {
            Style::Conventional
        } else if prefixed * 2 > counted {
            Style::Component
        } else {
            Style::Imperative
        }
    }

    /// What the prompt asks for, one sentence with examples.
    pub fn instruction(self) -> &'static str {
        match self {
            Style::Conventional => {
                "The repository writes Conventional Commits subjects: write `type(scope): description` (`feat`, `fix`, `refactor`, `perf`, `docs`, `test`, `build`, `ci`, `chore`, `revert`; `!` before the colon for breaking changes), e.g. `feat(api): add retry budget`."
            }
            Style::Component => {
                "The repository writes `component: subject` subjects: start with the component the change is about, a colon and a space, then an imperative description, e.g. `printer: fix handling of empty lines`. Do not use Conventional Commits types such as `feat:` or `fix:` as the component."
            }
            Style::Imperative => {
                "The repository writes plain imperative subjects: no type or component prefix before a colon, e.g. `Fix handling of empty lines in the printer`."
            }
            Style::Any => {
                "The repository's recent history is too short to show a style: prefer a Conventional Commits subject, `type(scope): description` (`feat`, `fix`, `refactor`, `docs`, `chore`, …), e.g. `feat(api): add retry budget`."
            }
        }
    }

    /// The problem with `subject` under this style, if any.
    pub(crate) fn problem(self, subject: &str) -> Option<String> {
        let subject = subject.trim();
        if subject.is_empty() {
            return None;
        }
        match (self, Prefix::of(subject)) {
            (Style::Any, _) | (Style::Conventional, Prefix::Conventional(_)) => None,
            (Style::Conventional, _) => Some(format!(
                "the subject '{subject}' is not a Conventional Commits subject, which this repository uses: write `type(scope): description` with a type such as feat, fix, refactor, docs or chore, e.g. `feat(api): add retry budget`"
            )),
            (Style::Component, Prefix::Component { .. }) => None,
            (Style::Component, Prefix::Conventional(header)) => Some(format!(
                "the subject '{subject}' uses the Conventional Commits type `{}`; this repository writes `component: subject`: name the component the change is about instead, e.g. `printer: fix handling of empty lines`",
                header.kind
            )),
            (Style::Component, Prefix::None) => Some(format!(
                "the subject '{subject}' has no component; this repository writes `component: subject`, e.g. `printer: fix handling of empty lines`"
            )),
            (Style::Imperative, Prefix::None) => None,
            (Style::Imperative, _) => Some(format!(
                "the subject '{subject}' starts with a prefix; this repository writes plain imperative subjects without `type:` or `component:`, e.g. `Fix handling of empty lines in the printer`"
            )),
        }
    }
}

/// Common irregular past tenses (and past participles) that start subjects
/// written in the wrong mood.
const IRREGULAR_PAST: [&str; 39] = [
    "began", "bought", "brought", "broke", "built", "caught", "chose", "did", "drew", "drove",
    "fell", "forgot", "found", "froze", "gave", "got", "had", "held", "hid", "kept", "knew", "led",
    "left", "lost", "made", "meant", "ran", "rebuilt", "remade", "rewrote", "sent", "spent",
    "stole", "struck", "taught", "thought", "took", "undid", "wrote",
];

/// Words ending in `-ed` that are not past tenses: imperatives (`Embed`,
/// `Seed`, `Shed`) and nouns or adjectives that start subjects (`Speed`,
/// `Red`).
const ED_EXCEPTIONS: [&str; 22] = [
    "bed", "bleed", "breed", "creed", "deed", "embed", "exceed", "feed", "greed", "heed", "need",
    "proceed", "red", "reed", "reseed", "seed", "shed", "shred", "speed", "steed", "succeed",
    "weed",
];

/// Whether `word` (the first word of a description, any case, surrounding
/// punctuation ignored) is a past tense: one of [`IRREGULAR_PAST`], or a word
/// of at least four letters ending in `-ed` that is not one of
/// [`ED_EXCEPTIONS`]. Irregular verbs whose past is their imperative ("Set",
/// "Split", "Put") are not in the list.
pub fn past_tense(word: &str) -> bool {
    let word: String = word
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase();
    if !word.chars().all(|c| c.is_ascii_alphabetic()) {
        return false;
    }
    IRREGULAR_PAST.contains(&word.as_str())
        || (word.len() >= 4 && word.ends_with("ed") && !ED_EXCEPTIONS.contains(&word.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes() {
        #[track_caller]
        fn check(subject: &str, expected: Prefix) {
            assert_eq!(Prefix::of(subject), expected, "{subject}");
        }
        let component = |c: &str, d: &str| Prefix::Component {
            component: c.to_owned(),
            description: d.to_owned(),
        };
        assert!(matches!(Prefix::of("fix(api): y"), Prefix::Conventional(_)));
        check("printer: fix a crash", component("printer", "fix a crash"));
        check(
            "ignore/types: add zig",
            component("ignore/types", "add zig"),
        );
        check(
            "grep-searcher, grep-printer: bump",
            component("grep-searcher, grep-printer", "bump"),
        );
        check("README: mention zsh", component("README", "mention zsh"));
        check("Add a thing", Prefix::None);
        check("Fix parsing of: x", Prefix::None);
        check("Fix: typo", Prefix::None);
        check("printer(x): y", Prefix::None);
        assert_eq!(
            Prefix::of("deps: bump x").description("deps: bump x"),
            "bump x"
        );
        assert_eq!(Prefix::of("Add x").description("Add x"), "Add x");
    }

    #[test]
    fn style_detection() {
        #[track_caller]
        fn check(subjects: &[&str], expected: Style) {
            assert_eq!(Style::detect(subjects), expected, "{subjects:?}");
        }
        check(&[], Style::Any);
        check(&["Add a", "Fix b", "Merge branch 'x'"], Style::Any);
        check(
            &[
                "feat: a",
                "fix(x): b",
                "Add c",
                "Merge pull request #1 from x/y",
            ],
            Style::Conventional,
        );
        // ripgrep's history.
        check(
            &[
                "printer: fix a crash",
                "deps: bump grep-searcher to 0.1.14",
                "doc: fix typo",
                "Fixes #3202",
                "ignore/types: add zig",
            ],
            Style::Component,
        );
        check(&["Add a", "Fix b", "docs: c"], Style::Imperative);
        check(&["feat: a", "fix: b", "chore: c"], Style::Conventional);
    }

    #[test]
    fn style_problems() {
        assert_eq!(Style::Conventional.problem("feat: a"), None);
        assert!(Style::Conventional.problem("printer: a").is_some());
        assert_eq!(Style::Component.problem("printer: fix a"), None);
        assert!(
            Style::Component
                .problem("fix(printer): a")
                .unwrap()
                .contains("`fix`")
        );
        assert!(
            Style::Component
                .problem("Fix a")
                .unwrap()
                .contains("no component")
        );
        assert_eq!(Style::Imperative.problem("Fix a"), None);
        assert!(Style::Imperative.problem("fix: a").is_some());
        for subject in ["fix: a", "printer: a", "Fix a"] {
            assert_eq!(Style::Any.problem(subject), None);
        }
    }

    #[test]
    fn past_tenses() {
        for word in [
            "Fixed", "added", "Updated:", "Built", "made", "Rewrote", "freed",
        ] {
            assert!(past_tense(word), "{word}");
        }
        for word in [
            "Fix", "Add", "Embed", "Need", "Speed", "Seed", "Shed", "Red", "Split", "Bed", "ed",
            "1.2ed", "Feed",
        ] {
            assert!(!past_tense(word), "{word}");
        }
    }
}
