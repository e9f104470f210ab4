//! `layered-config`: settings as typed keys, read from layers of sources and
//! resolved in one place, with the rule of which keys an untrusted file may set.
//!
//! A [`Key`] says where one setting may come from — a command-line flag, an
//! environment variable, a git config key, a key in a configuration file —,
//! whether a file in the repository may set it ([`Untrusted`]), and how a raw
//! [`Value`] becomes the typed setting (its parser; [`parse`] holds the common
//! ones). Each tool family keeps its keys in one table. A [`Stack`] holds the
//! [`Layer`]s a command reads, highest precedence first, and resolves a key by
//! walking them once: the first layer that holds a value wins, and the value comes
//! back with its [`Source`] ([`Resolved`]), so an error or a debug line can say
//! where it came from.
//!
//! **Precedence** is the order of the layers. The usual order is flag, then
//! environment, then git config, then the user's own files, then the
//! repository's files, then the default. A tool whose specification says
//! otherwise stacks its layers in that order instead (`ultragit`'s team file,
//! `.ultragit-config.toml`, overrides git config for the keys it may set: spec
//! 003 §6); the order is visible where the stack is built.
//!
//! - **Invariant (trust):** a layer from the repository ([`Layer::repo_file`]) is
//!   never consulted for a key it may not set ([`Untrusted::MayNotChoose`]).
//!   Where it sets one anyway, whatever the value, [`Stack::finish`] reports an
//!   [`Ignored`] whose warning names the file, what the key would have chosen, and
//!   the trusted places to set it (the key's git config key, flag and variable).
//! - **Invariant:** a bad value is a [`ConfigError`] that names its source
//!   (`git config ultragit.maxDiffLines must be …`, `agent-config/config.toml:
//!   provider 'x' is not one of …`). Only the value that wins is parsed: one a
//!   higher layer overrides is never looked at, as in git. A key in a file that no
//!   key of the table names is an error at [`Stack::finish`]: a typo does not pass
//!   silently.
//! - **Invariant:** this crate reads nothing. Flags, environment lookups, git
//!   config readers and file contents are handed in; it never touches the
//!   environment, the file system or the terminal.
//! - **Dependencies:** none of our crates (`toml` to read configuration files,
//!   `thiserror`). Published: `ultragit-read` depends on it.

mod layer;
pub mod parse;
mod stack;

use std::fmt;

pub use layer::{Layer, Section};
pub use stack::{Ignored, Stack};

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A command-line flag, e.g. `--model`.
    Flag(&'static str),
    /// An environment variable, e.g. `OPENAI_MODEL`.
    Env(&'static str),
    /// A git config key (the user's, the system's or the repository's
    /// `.git/config`, as git resolves them), e.g. `ultragit.model`.
    GitConfig(&'static str),
    /// A key in a file of the user's own (trusted): their configuration
    /// directory, or a project file git does not track.
    UserFile { file: String, key: String },
    /// A key in a file that comes with the repository (untrusted).
    RepoFile { file: String, key: String },
    /// The built-in default.
    Default,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Flag(flag) => f.write_str(flag),
            Source::Env(name) => write!(f, "${name}"),
            Source::GitConfig(key) => write!(f, "git config {key}"),
            Source::UserFile { file, key } | Source::RepoFile { file, key } => {
                write!(f, "{file}: {key}")
            }
            Source::Default => f.write_str("the default"),
        }
    }
}

/// A setting's value and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved<T> {
    pub value: T,
    pub source: Source,
}

/// A raw value, as a source holds it: text from flags, variables and git config,
/// typed values from files.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Text(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    List(Vec<Value>),
    /// Something no key takes (a table, a date), described for messages.
    Other(&'static str),
}

impl Value {
    /// The text, when the value is text.
    pub(crate) fn as_text(&self) -> Option<&str> {
        match self {
            Value::Text(text) => Some(text),
            _ => None,
        }
    }

    fn is_blank(&self) -> bool {
        self.as_text().is_some_and(|text| text.trim().is_empty())
    }
}

/// As a configuration file would spell it: text quoted, lists in brackets.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Text(text) => write!(f, "{text:?}"),
            Value::Int(n) => write!(f, "{n}"),
            Value::Float(x) => write!(f, "{x}"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::List(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str("]")
            }
            Value::Other(what) => f.write_str(what),
        }
    }
}

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

/// A setting that cannot be used, naming where it came from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A value the key's parser refused.
    #[error("{origin} {problem}")]
    Invalid { origin: Source, problem: String },
    /// A source could not be read (git config).
    #[error("{origin}: {message}")]
    Unreadable { origin: Source, message: String },
    /// A file that is not valid TOML, has a key no table names, or a section
    /// that is not a table.
    #[error("{file}: {message}")]
    File { file: String, message: String },
}

#[cfg(test)]
mod tests;
