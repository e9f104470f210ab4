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
//! - [`SubjectStyle::detect`] chooses among Conventional Commits, `component:
//!   subject` and plain imperative from recent subjects ([`SubjectStyle`]
//!   documents the rule) and remembers the prefixes they use. Many known
//!   types are also component names (`doc:`, `deps:`, `ci:`, `test:`,
//!   `build:`, `release:` are ripgrep components), so only the marks that
//!   Conventional Commits alone makes ([`MARKED_TYPES`], a scope in
//!   parentheses, `!`) count for it.
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

/// The known types that only Conventional Commits writes: a repository of
/// `component: subject` has components named `doc`, `deps`, `ci`, `test`,
/// `build` or `release` (ripgrep has all six), but hardly one named `feat`
/// or `refactor`.
pub(crate) const MARKED_TYPES: [&str; 9] = [
    "feat", "feature", "fix", "bugfix", "hotfix", "chore", "refactor", "perf", "style",
];

/// Whether `header` carries a mark only Conventional Commits makes: a
/// [marked type](MARKED_TYPES), a scope in parentheses or `!`.
fn marked(header: &Conventional) -> bool {
    header.scope.is_some() || header.breaking || MARKED_TYPES.contains(&header.kind.as_str())
}

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
/// See [`SubjectStyle::detect`] for how it is told from history.
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

/// The most prefixes a [`SubjectStyle`] remembers.
const MAX_PREFIXES: usize = 64;

/// The style a repository's recent subjects show, with the prefixes they use.
///
/// [`SubjectStyle::detect`] counts the subjects that are not merge or revert
/// commits; fewer than [`MIN_SUBJECTS`] show no style: [`Style::Any`]. When
/// at most half of them have a prefix (a Conventional Commits header or a
/// component), the style is [`Style::Imperative`]. Otherwise the prefixed
/// subjects fall in three kinds: *marked* headers, which only Conventional
/// Commits writes ([`MARKED_TYPES`] such as `feat`, `fix`, `chore`, or any
/// type with a scope in parentheses or `!`); *components*, prefixes that are
/// no Conventional type (`printer:`, `ignore/types:`); and *shared* ones,
/// known types that are also component names (`doc:`, `deps:`, `ci:`,
/// `test:`, `build:`, `release:`), which say nothing either way.
/// [`Style::Conventional`] when marked headers outnumber components, else
/// [`Style::Component`]: a window of `deps:` and `doc:` commits in a
/// repository that writes `printer: …` stays a component repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubjectStyle {
    /// The style the subjects show: what the prompt asks for and the check
    /// enforces.
    pub kind: Style,
    /// The prefixes the subjects use (types and component names, each once,
    /// in order of first use, at most 64). In [`Style::Component`] a marked
    /// type the history itself uses as a component (a bare `style:`) is a
    /// component too.
    pub prefixes: Vec<String>,
}

impl SubjectStyle {
    /// A style of `kind` whose history used no prefix.
    #[cfg(test)]
    pub(crate) fn of(kind: Style) -> SubjectStyle {
        SubjectStyle {
            kind,
            prefixes: Vec::new(),
        }
    }

    /// The style most of `subjects` follow (see [`SubjectStyle`]).
    pub fn detect<S: AsRef<str>>(subjects: &[S]) -> SubjectStyle {
        let mut counted = 0;
        let mut prefixed = 0;
        let mut marks = 0;
        let mut components = 0;
        let mut prefixes: Vec<String> = Vec::new();
        let mut remember = |name: &str| {
            let name = name.trim().to_lowercase();
            if prefixes.len() < MAX_PREFIXES && !name.is_empty() && !prefixes.contains(&name) {
                prefixes.push(name);
            }
        };
        for subject in subjects {
            let subject = subject.as_ref().trim();
            let first = subject.split_whitespace().next().unwrap_or("");
            if subject.is_empty() || matches!(first, "Merge" | "Revert") {
                continue;
            }
            counted += 1;
            match Prefix::of(subject) {
                Prefix::Conventional(header) => {
                    prefixed += 1;
                    if marked(&header) {
                        marks += 1;
                    }
                    if header.scope.is_none() && !header.breaking {
                        remember(&header.kind);
                    }
                }
                Prefix::Component { component, .. } => {
                    prefixed += 1;
                    components += 1;
                    component.split(',').for_each(&mut remember);
                }
                Prefix::None => {}
            }
        }
        let kind = if counted < MIN_SUBJECTS {
            Style::Any
        } else if prefixed * 2 <= counted {
            Style::Imperative
        } else if marks > components {
            Style::Conventional
        } else {
            Style::Component
        };
        SubjectStyle { kind, prefixes }
    }

    /// What the prompt asks for: [`Style::instruction`].
    pub fn instruction(&self) -> &'static str {
        self.kind.instruction()
    }

    /// The problem with `subject` under this style, if any: only what
    /// contradicts it.
    pub(crate) fn problem(&self, subject: &str) -> Option<String> {
        let subject = subject.trim();
        if subject.is_empty() {
            return None;
        }
        match (self.kind, Prefix::of(subject)) {
            (Style::Any, _) | (Style::Conventional, Prefix::Conventional(_)) => None,
            (Style::Conventional, _) => Some(format!(
                "the subject '{subject}' is not a Conventional Commits subject, which this repository uses: write `type(scope): description` with a type such as feat, fix, refactor, docs or chore, e.g. `feat(api): add retry budget`"
            )),
            (Style::Component, Prefix::Component { .. }) => None,
            (Style::Component, Prefix::Conventional(header)) => {
                // `doc: …`, `deps: …`, or a type the history itself uses bare:
                // a component name.
                let bare = header.scope.is_none() && !header.breaking;
                let component = !MARKED_TYPES.contains(&header.kind.as_str())
                    || self.prefixes.contains(&header.kind);
                (!(bare && component)).then(|| component_problem(subject, &header))
            }
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

/// A Conventional Commits header where `component: subject` is the style.
fn component_problem(subject: &str, header: &Conventional) -> String {
    format!(
        "the subject '{subject}' uses the Conventional Commits type `{}`{}; this repository writes `component: subject`: name the component the change is about instead, e.g. `printer: fix handling of empty lines`",
        header.kind,
        if header.scope.is_some() {
            " with a scope in parentheses"
        } else if header.breaking {
            " with `!`"
        } else {
            ""
        }
    )
}

impl Style {
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
pub(crate) fn past_tense(word: &str) -> bool {
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
            assert_eq!(
                SubjectStyle::detect(subjects).kind,
                expected,
                "{subjects:?}"
            );
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
        // Fixed: a window of ripgrep's `deps:`, `doc:` and `ci:` commits read
        // as Conventional Commits.
        check(
            &[
                "deps: bump regex",
                "doc: fix typo",
                "deps: bump memchr",
                "ci: test on aarch64",
                "printer: fix a crash",
                "release: 14.1.1",
                "test: add a regression test",
            ],
            Style::Component,
        );
        check(
            &["deps: a", "doc: b", "ci: c", "build: d"],
            Style::Component,
        );
        // A Conventional repository writing mostly docs and tests.
        check(
            &["docs: a", "test: b", "feat(cli): c", "ci: d", "fix: e"],
            Style::Conventional,
        );
        check(&["Add a", "Fix b", "docs: c"], Style::Imperative);
        check(&["feat: a", "fix: b", "chore: c"], Style::Conventional);
        assert_eq!(
            SubjectStyle::detect(&["printer: a", "grep-cli, Style: b", "doc: c", "feat(x)!: d"])
                .prefixes,
            ["printer", "grep-cli", "style", "doc"]
        );
    }

    #[test]
    fn style_problems() {
        let style = SubjectStyle::of;
        assert_eq!(style(Style::Conventional).problem("feat: a"), None);
        assert_eq!(style(Style::Conventional).problem("doc: a"), None);
        assert!(style(Style::Conventional).problem("printer: a").is_some());
        let component = style(Style::Component);
        for subject in [
            "printer: fix a",
            "doc: fix a",
            "deps: bump a",
            "ci: a",
            "release: 1.0",
        ] {
            assert_eq!(component.problem(subject), None, "{subject}");
        }
        for (subject, problem) in [
            ("fix(printer): a", "`fix` with a scope"),
            ("feat: a", "`feat`"),
            ("doc!: a", "`doc` with `!`"),
            ("Fix a", "no component"),
        ] {
            assert_mentions(&component.problem(subject).unwrap(), problem);
        }
        // A marked type the history uses bare is one of its components.
        let history = SubjectStyle::detect(&["style: a", "printer: b", "doc: c"]);
        assert_eq!(history.kind, Style::Component);
        assert_eq!(history.problem("style: fix clippy lints"), None);
        assert!(history.problem("chore: a").is_some());
        assert!(history.problem("style(x): a").is_some());
        assert_eq!(style(Style::Imperative).problem("Fix a"), None);
        assert!(style(Style::Imperative).problem("fix: a").is_some());
        for subject in ["fix: a", "printer: a", "Fix a"] {
            assert_eq!(style(Style::Any).problem(subject), None);
        }
    }

    #[track_caller]
    fn assert_mentions(text: &str, part: &str) {
        assert!(text.contains(part), "{part:?} not in {text:?}");
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
