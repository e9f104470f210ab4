//! The sources a [`Stack`](crate::Stack) reads: flags, the environment, git
//! config, and sections of TOML files.

use std::fmt;

use crate::key::{Key, Kind};
use crate::value::{ConfigError, Source, Value};

type Lookup<'a> = Box<dyn Fn(&str) -> Option<String> + 'a>;
type GitRead<'a, T> = Box<dyn Fn(&str) -> Result<Option<T>, String> + 'a>;

/// One source of values. A key is looked up by its name for that kind of
/// source ([`Key::flag`], [`Key::env`], [`Key::git`], [`Key::name`] in files);
/// a key without a name for it is not looked up there.
pub struct Layer<'a> {
    pub(crate) source: LayerSource<'a>,
}

pub(crate) enum LayerSource<'a> {
    Flags(Vec<(&'static str, String)>),
    Env(Lookup<'a>),
    GitConfig {
        text: GitRead<'a, String>,
        int: GitRead<'a, i64>,
    },
    File {
        section: Section,
        trusted: bool,
    },
}

impl fmt::Debug for Layer<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.source {
            LayerSource::Flags(flags) => f.debug_tuple("Flags").field(flags).finish(),
            LayerSource::Env(_) => f.write_str("Env"),
            LayerSource::GitConfig { .. } => f.write_str("GitConfig"),
            LayerSource::File { section, trusted } => f
                .debug_struct("File")
                .field("file", &section.file)
                .field("trusted", trusted)
                .finish(),
        }
    }
}

impl<'a> Layer<'a> {
    /// The flags given on the command line; add each key's with
    /// [`Layer::flag`].
    pub fn flags() -> Layer<'a> {
        Layer {
            source: LayerSource::Flags(Vec::new()),
        }
    }

    /// In a flags layer: `key`'s flag, given with `value` (`None`: not given).
    /// Nothing for a key without a flag, or another kind of layer.
    pub fn flag<T>(mut self, key: &Key<T>, value: Option<String>) -> Layer<'a> {
        if let (LayerSource::Flags(given), Some(flag), Some(value)) =
            (&mut self.source, key.flag, value)
        {
            given.push((flag, value));
        }
        self
    }

    /// The environment, through the binary's lookup (`|name|
    /// std::env::var(name).ok()`).
    pub fn env(lookup: impl Fn(&str) -> Option<String> + 'a) -> Layer<'a> {
        Layer {
            source: LayerSource::Env(Box::new(lookup)),
        }
    }

    /// git config, through two readers: one for text and one for integers in
    /// git's own syntax (used for keys of [`Kind::Int`]).
    pub fn git_config<E: fmt::Display>(
        text: impl Fn(&str) -> Result<Option<String>, E> + 'a,
        int: impl Fn(&str) -> Result<Option<i64>, E> + 'a,
    ) -> Layer<'a> {
        Layer {
            source: LayerSource::GitConfig {
                text: Box::new(move |key| text(key).map_err(|e| e.to_string())),
                int: Box::new(move |key| int(key).map_err(|e| e.to_string())),
            },
        }
    }

    /// A section of a file of the user's own (trusted).
    pub fn user_file(section: Section) -> Layer<'a> {
        Layer {
            source: LayerSource::File {
                section,
                trusted: true,
            },
        }
    }

    /// A section of a file that comes with the repository (untrusted): it is
    /// never asked for a steering key. Part of the published API, beside
    /// [`Layer::user_file`]; our readers go through `Stack::with_repo_file`.
    pub fn repo_file(section: Section) -> Layer<'a> {
        Layer {
            source: LayerSource::File {
                section,
                trusted: false,
            },
        }
    }

    /// Whether the layer is the user's own.
    pub(crate) fn trusted(&self) -> bool {
        match &self.source {
            LayerSource::File { trusted, .. } => *trusted,
            _ => true,
        }
    }

    /// The section, for a file layer.
    pub(crate) fn section(&self) -> Option<&Section> {
        match &self.source {
            LayerSource::File { section, .. } => Some(section),
            _ => None,
        }
    }

    /// The raw value this layer holds for `key`, with its source.
    pub(crate) fn lookup<T>(&self, key: &Key<T>) -> Result<Option<(Value, Source)>, ConfigError> {
        match &self.source {
            LayerSource::Flags(given) => {
                let Some(flag) = key.flag else {
                    return Ok(None);
                };
                Ok(given
                    .iter()
                    .find(|(name, _)| *name == flag)
                    .map(|(_, value)| (Value::Text(value.clone()), Source::Flag(flag))))
            }
            LayerSource::Env(lookup) => Ok(key.env.and_then(|name| {
                lookup(name).map(|value| (Value::Text(value), Source::Env(name)))
            })),
            LayerSource::GitConfig { text, int } => {
                let Some(name) = key.git else {
                    return Ok(None);
                };
                let source = Source::GitConfig(name);
                let value = match key.kind {
                    Kind::Int => int(name).map(|v| v.map(Value::Int)),
                    _ => text(name).map(|v| v.map(Value::Text)),
                };
                match value {
                    Ok(value) => Ok(value.map(|value| (value, source))),
                    Err(message) => Err(ConfigError::Unreadable {
                        origin: source,
                        message,
                    }),
                }
            }
            LayerSource::File { section, trusted } => {
                let name = key.name;
                Ok(section.get(name).map(|value| {
                    let (file, key) = (section.file.clone(), section.qualified(name));
                    let source = if *trusted {
                        Source::UserFile { file, key }
                    } else {
                        Source::RepoFile { file, key }
                    };
                    (value, source)
                }))
            }
        }
    }
}

/// A table of a TOML configuration file: the whole file, or a section of it
/// such as `[ultragit.read]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    /// How messages name the file.
    file: String,
    /// The section's path in the file (empty for the whole file).
    path: Vec<String>,
    table: toml::Table,
}

impl Section {
    /// The whole file, from its text; `file` is how messages name it.
    pub fn parse(text: &str, file: impl Into<String>) -> Result<Section, ConfigError> {
        let file = file.into();
        match toml::from_str::<toml::Table>(text) {
            Ok(table) => Ok(Section {
                file,
                path: Vec::new(),
                table,
            }),
            Err(err) => Err(ConfigError::File {
                file,
                message: err.message().to_owned(),
            }),
        }
    }

    /// The whole file, from its bytes (which must be UTF-8).
    pub fn parse_bytes(bytes: &[u8], file: impl Into<String>) -> Result<Section, ConfigError> {
        let file = file.into();
        match std::str::from_utf8(bytes) {
            Ok(text) => Section::parse(text, file),
            Err(err) => Err(ConfigError::File {
                file,
                message: format!("not valid UTF-8 ({err})"),
            }),
        }
    }

    /// The table `name` within this one (`[ultragit]`, then `[ultragit.read]`):
    /// `None` when the file has none, an error when `name` is not a table.
    pub(crate) fn table(&self, name: &str) -> Result<Option<Section>, ConfigError> {
        let mut path = self.path.clone();
        path.push(name.to_owned());
        match self.table.get(name) {
            None => Ok(None),
            Some(toml::Value::Table(table)) => Ok(Some(Section {
                file: self.file.clone(),
                path,
                table: table.clone(),
            })),
            Some(other) => Err(ConfigError::File {
                file: self.file.clone(),
                message: format!(
                    "[{}] must be a table, not {}",
                    path.join("."),
                    convert(other)
                ),
            }),
        }
    }

    /// The table at `path` below this one (`["ultragit", "read"]` for
    /// `[ultragit.read]`): `None` when the file has none, an error when a table
    /// on the way is not one.
    pub fn at(&self, path: &[&str]) -> Result<Option<Section>, ConfigError> {
        let mut section = self.clone();
        for name in path {
            match section.table(name)? {
                Some(inner) => section = inner,
                None => return Ok(None),
            }
        }
        Ok(Some(section))
    }

    /// How messages name the file.
    pub(crate) fn file(&self) -> &str {
        &self.file
    }

    /// The keys the section sets, in order of name.
    pub(crate) fn keys(&self) -> impl Iterator<Item = &str> {
        self.table.keys().map(String::as_str)
    }

    /// The section's name as a heading, `[ultragit.read]`; empty for the whole
    /// file.
    pub(crate) fn heading(&self) -> String {
        if self.path.is_empty() {
            String::new()
        } else {
            format!("[{}]", self.path.join("."))
        }
    }

    /// `name` with the section's path: `ultragit.read.deps_scan_limit`.
    pub(crate) fn qualified(&self, name: &str) -> String {
        let mut parts = self.path.clone();
        parts.push(name.to_owned());
        parts.join(".")
    }

    /// The value of `name`, if the section sets it.
    pub(crate) fn get(&self, name: &str) -> Option<Value> {
        self.table.get(name).map(convert)
    }
}

fn convert(value: &toml::Value) -> Value {
    match value {
        toml::Value::String(text) => Value::Text(text.clone()),
        toml::Value::Integer(n) => Value::Int(*n),
        toml::Value::Float(x) => Value::Float(*x),
        toml::Value::Boolean(b) => Value::Bool(*b),
        toml::Value::Datetime(_) => Value::Other("a date"),
        toml::Value::Array(items) => Value::List(items.iter().map(convert).collect()),
        toml::Value::Table(_) => Value::Other("a table"),
    }
}
