//! Values and where they came from: [`Source`], [`Resolved`], [`Value`], and
//! the [`ConfigError`] that names the source of a value it refuses.

use std::fmt;

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

    pub(crate) fn is_blank(&self) -> bool {
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
