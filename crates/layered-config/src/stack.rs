//! The one resolution: layers in precedence order, the trust rule, unknown
//! keys.

use std::fmt;

use crate::key::{Key, Untrusted};
use crate::layer::{Layer, Section};
use crate::value::{ConfigError, Resolved, Source};

/// The layers a command reads, highest precedence first (see the crate docs for
/// the usual order). Resolve every key of the table with [`Stack::get`],
/// [`Stack::resolve`], [`Stack::value`] or [`Stack::all`], then call [`Stack::finish`]: it rejects
/// file keys no key named and returns the steering keys a repository file set.
#[derive(Debug, Default)]
pub struct Stack<'a> {
    layers: Vec<Layer<'a>>,
    /// The file names of the keys resolved so far: the keys a file may hold.
    known: Vec<&'static str>,
    ignored: Vec<Ignored>,
}

/// A steering key a repository file set, which was ignored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ignored {
    /// How messages name the file, e.g. `.ultragit-config.toml`.
    pub file: String,
    /// The key as written in the file, e.g. `ultragit.annotate.base_url`.
    pub key: String,
    /// What it would have chosen, e.g. "where requests go".
    pub chooses: &'static str,
    /// The trusted places to set it, e.g. "`git config ultragit.baseUrl` or
    /// `--base-url`".
    pub trusted_places: String,
}

impl Ignored {
    /// The one-line warning: what was ignored, why, and where to set it.
    pub fn warning(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Ignored {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ignoring {} in {}: a file in the repository may not choose {}; set it with {}",
            self.key, self.file, self.chooses, self.trusted_places
        )
    }
}

impl<'a> Stack<'a> {
    /// No layers yet.
    pub fn new() -> Stack<'a> {
        Stack::default()
    }

    /// `layer` below the layers added before it.
    pub fn with(mut self, layer: Layer<'a>) -> Stack<'a> {
        self.layers.push(layer);
        self
    }

    /// Below the layers so far: the table at `path` of the repository file
    /// `bytes` (TOML; `file` is how messages name it), when there is a file and
    /// it has that table.
    pub fn with_repo_file(
        self,
        bytes: Option<&[u8]>,
        file: &str,
        path: &[&str],
    ) -> Result<Stack<'a>, ConfigError> {
        let Some(bytes) = bytes else {
            return Ok(self);
        };
        Ok(match Section::parse_bytes(bytes, file)?.at(path)? {
            Some(section) => self.with(Layer::repo_file(section)),
            None => self,
        })
    }

    /// The value of `key` from the highest layer that holds one, parsed; `None`
    /// when no layer does. A repository file is not asked for a steering key.
    pub fn get<T>(&mut self, key: &Key<T>) -> Result<Option<Resolved<T>>, ConfigError> {
        self.note(key);
        for layer in &self.layers {
            match self.value_in(layer, key)? {
                Some(resolved) => return resolved.map(Some),
                None => continue,
            }
        }
        Ok(None)
    }

    /// [`Stack::get`], or `default` (from [`Source::Default`]).
    pub fn resolve<T>(&mut self, key: &Key<T>, default: T) -> Result<Resolved<T>, ConfigError> {
        Ok(self.get(key)?.unwrap_or(Resolved {
            value: default,
            source: Source::Default,
        }))
    }

    /// The value of [`Stack::resolve`], without its source.
    pub fn value<T>(&mut self, key: &Key<T>, default: T) -> Result<T, ConfigError> {
        Ok(self.resolve(key, default)?.value)
    }

    /// The value of every layer that holds one, highest first: for lists that
    /// add up across layers.
    pub fn all<T>(&mut self, key: &Key<T>) -> Result<Vec<Resolved<T>>, ConfigError> {
        self.note(key);
        let mut out = Vec::new();
        for layer in &self.layers {
            if let Some(resolved) = self.value_in(layer, key)? {
                out.push(resolved?);
            }
        }
        Ok(out)
    }

    /// The end of resolution: an error for the first key of a file that no
    /// resolved key names, else the steering keys repository files set (in the
    /// order the keys were resolved), which were ignored.
    pub fn finish(self) -> Result<Vec<Ignored>, ConfigError> {
        for section in self.layers.iter().filter_map(Layer::section) {
            if let Some(unknown) = section.keys().find(|key| !self.known.contains(key)) {
                let heading = section.heading();
                let expected: Vec<String> = self.known.iter().map(|k| format!("`{k}`")).collect();
                return Err(ConfigError::File {
                    file: section.file().to_owned(),
                    message: format!(
                        "{}unknown field `{unknown}`, expected one of {}",
                        if heading.is_empty() {
                            String::new()
                        } else {
                            format!("{heading}: ")
                        },
                        expected.join(", ")
                    ),
                });
            }
        }
        Ok(self.ignored)
    }

    /// The parsed value `layer` holds for `key`: `None` when it holds none (or
    /// blank text where blank means unset, or it may not be asked), else the
    /// value or the error naming its source.
    #[allow(clippy::type_complexity)]
    fn value_in<T>(
        &self,
        layer: &Layer<'_>,
        key: &Key<T>,
    ) -> Result<Option<Result<Resolved<T>, ConfigError>>, ConfigError> {
        if !layer.trusted() && matches!(key.untrusted, Untrusted::MayNotChoose(_)) {
            return Ok(None);
        }
        let Some((value, source)) = layer.lookup(key)? else {
            return Ok(None);
        };
        if key.blank_is_unset && value.is_blank() {
            return Ok(None);
        }
        Ok(Some(match (key.parse)(&value) {
            Ok(value) => Ok(Resolved { value, source }),
            Err(problem) => Err(ConfigError::Invalid {
                origin: source,
                problem,
            }),
        }))
    }

    /// Records `key` as known to files, and, for a steering key, every
    /// repository file that sets it (whatever the value).
    fn note<T>(&mut self, key: &Key<T>) {
        let name = key.name;
        if !self.known.contains(&name) {
            self.known.push(name);
        }
        let Untrusted::MayNotChoose(chooses) = key.untrusted else {
            return;
        };
        for layer in self.layers.iter().filter(|layer| !layer.trusted()) {
            let Some(section) = layer.section() else {
                continue;
            };
            if section.get(name).is_none() {
                continue;
            }
            let ignored = Ignored {
                file: section.file().to_owned(),
                key: section.qualified(name),
                chooses,
                trusted_places: key.trusted_places(),
            };
            if !self.ignored.contains(&ignored) {
                self.ignored.push(ignored);
            }
        }
    }
}
