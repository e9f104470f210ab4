//! [`Key`]: one setting's names in each kind of source, its trust, its parser.

use crate::parse;
use crate::value::Value;

/// How git config spells a key's value. git has its own syntax for integers
/// (`1k`, `2m`), so an integer key is read as one; everything else reaches the
/// parser as text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Text,
    Int,
}

/// Whether a file in the repository may set a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Untrusted {
    /// Tuning (limits, scoring): a repository file may set it.
    MayTune,
    /// Steering: it chooses where requests go, which credential is sent, which
    /// provider or model is used, or which program runs. A repository file that
    /// sets it is ignored with a warning; the text says what it would choose
    /// ("where requests go").
    MayNotChoose(&'static str),
}

/// One setting: its names in each kind of source, whether a repository file may
/// set it, and how a raw value becomes a `T`. Built in `const` tables, with
/// [`Key::new`] (or [`Key::whole`]) and struct update syntax:
///
/// ```
/// use layered_config::{Key, Untrusted, parse};
///
/// const MAX_TURNS: Key<u32> = Key::whole::<1>("max_turns", "tool.maxTurns");
/// const MODEL: Key<String> = Key {
///     flag: Some("--model"),
///     git: Some("tool.model"),
///     untrusted: Untrusted::MayNotChoose("which model is used"),
///     ..Key::new("model", parse::text)
/// };
/// assert_eq!(MAX_TURNS.git, Some("tool.maxTurns"));
/// assert_eq!(MODEL.name, "model");
/// ```
#[derive(Debug)]
pub struct Key<T> {
    /// The key in a configuration file (in its section), e.g. `model`.
    pub name: &'static str,
    /// The command-line flag, e.g. `--model`.
    pub flag: Option<&'static str>,
    /// The environment variable, e.g. `OPENAI_MODEL`.
    pub env: Option<&'static str>,
    /// The git config key, e.g. `ultragit.model`.
    pub git: Option<&'static str>,
    /// How git config spells the value.
    pub kind: Kind,
    /// Whether a repository file may set it.
    pub untrusted: Untrusted,
    /// Whether blank text (empty or white space) counts as not set, so that
    /// the next layer is asked.
    pub blank_is_unset: bool,
    /// From a raw value to the setting, or the problem (a phrase that reads
    /// after the source's name: "must be a whole number of at least 1, not 0").
    pub parse: fn(&Value) -> Result<T, String>,
}

impl<T> Key<T> {
    /// The key `name` of configuration files, read from no other source yet:
    /// tuning, text in git config, blank text is a value.
    pub const fn new(name: &'static str, parse: fn(&Value) -> Result<T, String>) -> Key<T> {
        Key {
            name,
            flag: None,
            env: None,
            git: None,
            kind: Kind::Text,
            untrusted: Untrusted::MayTune,
            blank_is_unset: false,
            parse,
        }
    }

    /// The trusted places to set the key, for a warning: "`git config x` or
    /// `--x`".
    pub(crate) fn trusted_places(&self) -> String {
        let git = self.git.map(|key| format!("`git config {key}`"));
        let flag = self.flag.map(|flag| format!("`{flag}`"));
        let env = self.env.map(|name| format!("`${name}`"));
        let places: Vec<String> = [git, flag, env].into_iter().flatten().collect();
        places.join(" or ")
    }
}

impl<N: TryFrom<i64>> Key<N> {
    /// The common tuning key: a whole number of at least `MIN`, `name` in
    /// files and `git` in git config (read in git's integer syntax).
    pub const fn whole<const MIN: i64>(name: &'static str, git: &'static str) -> Key<N> {
        Key {
            git: Some(git),
            kind: Kind::Int,
            ..Key::new(name, parse::whole::<N, MIN>)
        }
    }
}
