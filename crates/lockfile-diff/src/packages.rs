//! What a parser yields: the package versions of one side of a lockfile, or
//! why there are none. Every format module records through [`insert`], so the
//! rules for a usable name or version are in one place.

use std::collections::{BTreeMap, BTreeSet};

/// The packages of one lockfile: package name → the versions present.
///
/// A lockfile can hold several versions of one package (npm, Cargo), so each
/// name maps to a set. The set's own order is plain string order; use
/// [`summarize`](crate::summarize) for version order.
pub type Packages = BTreeMap<String, BTreeSet<String>>;

/// Why the contents of a lockfile could not be read as package versions.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    /// A JSON lockfile (npm, Composer) is not well-formed JSON.
    #[error("not JSON: {0}")]
    NotJson(#[source] serde_json::Error),
    /// A JSON lockfile is valid JSON but not laid out as that lockfile is.
    #[error("unexpected JSON layout: {0}")]
    UnexpectedJson(#[source] serde_json::Error),
    /// A TOML lockfile (Cargo, Poetry, uv) has `[[package]]` tables but is
    /// not well-formed TOML (a merge conflict, a truncated file): what is
    /// wrong and where (`… at line 4 column 1`).
    #[error("not TOML: {reason}")]
    NotToml {
        /// The TOML parser's message, bounded, with the line and column.
        reason: String,
    },
    /// A TOML lockfile is valid TOML but its `package` key is not an array of
    /// tables.
    #[error("unexpected TOML layout: {reason}")]
    UnexpectedToml {
        /// The TOML parser's message, bounded, with the line and column.
        reason: String,
    },
    /// Nothing in the text looks like the lockfile's format.
    #[error("no packages found (expected {expected})")]
    NoPackages {
        /// What the format's package entries look like.
        expected: &'static str,
    },
}

/// Records `version` of `name`, skipping empty values and values with control
/// characters (which could only come from a mangled file and would break the
/// one-line-per-group rendering).
pub(crate) fn insert(packages: &mut Packages, name: &str, version: &str) {
    let (name, version) = (name.trim(), version.trim());
    let bad = |s: &str| s.is_empty() || s.chars().any(char::is_control);
    if bad(name) || bad(version) {
        return;
    }
    match packages.get_mut(name) {
        Some(versions) => {
            if !versions.contains(version) {
                versions.insert(version.to_owned());
            }
        }
        None => {
            packages.insert(name.to_owned(), BTreeSet::from([version.to_owned()]));
        }
    }
}

/// The result of a line-based parser: its packages, or `NoPackages` when it
/// recognized none of the format's structure.
pub(crate) fn finish(
    packages: Packages,
    recognized: bool,
    expected: &'static str,
) -> Result<Packages, ParseError> {
    if recognized || !packages.is_empty() {
        Ok(packages)
    } else {
        Err(ParseError::NoPackages { expected })
    }
}
