//! npm's `package-lock.json` and `npm-shrinkwrap.json`.
//!
//! Lockfile versions 2 and 3 list every installed package in `packages`,
//! keyed by install path; version 1 nests `dependencies` objects instead.
//! Version 2 has both: its `dependencies` tree is skipped in a first pass and
//! read in a second one only when `packages` is missing, so no package is
//! counted twice and no file pays for both.
//!
//! Strings are borrowed from the input where they have no escapes: owned
//! copies of every key of a 1 MB lockfile would cost several times more, all
//! of it in allocation.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};

use super::{Loose, json, text};
use crate::packages::{Packages, ParseError, insert};

const EXPECTED: &str = "a `packages` or `dependencies` object";

/// A JSON object key, borrowed from the input when it has no escapes.
#[derive(Deserialize)]
#[serde(transparent)]
struct Key<'a>(#[serde(borrow)] Cow<'a, str>);

/// A map's entries in the order they come, duplicates included: an object
/// whose keys are data (install paths, package names), walked without the
/// hashing and allocation of a `HashMap`, which made the derived parser
/// slower than the hand-written visitors it replaced.
struct Entries<K, V>(Vec<(K, V)>);

impl<'de, K: Deserialize<'de>, V: Deserialize<'de>> Deserialize<'de> for Entries<K, V> {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        struct EntriesVisitor<K, V>(PhantomData<(K, V)>);
        impl<'de, K: Deserialize<'de>, V: Deserialize<'de>> Visitor<'de> for EntriesVisitor<K, V> {
            type Value = Entries<K, V>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0).min(4096));
                while let Some(entry) = map.next_entry()? {
                    entries.push(entry);
                }
                Ok(Entries(entries))
            }
        }
        de.deserialize_map(EntriesVisitor(PhantomData))
    }
}

/// The first pass: `packages` (versions 2 and 3) read, the version 1
/// `dependencies` tree only noticed; `null` counts as absent.
#[derive(Deserialize)]
#[serde(expecting = "a package-lock.json object")]
struct PackageLock<'a> {
    #[serde(default, borrow)]
    packages: Option<Entries<Key<'a>, Installed<'a>>>,
    #[serde(default)]
    dependencies: Option<IgnoredAny>,
}

/// One entry of the version 2/3 `packages` object.
#[derive(Deserialize)]
#[serde(expecting = "a package entry object")]
struct Installed<'a> {
    #[serde(default, borrow)]
    version: Option<Loose<'a>>,
    #[serde(default)]
    link: Option<Flag>,
}

/// Any value, true only when it is `true`.
#[derive(Deserialize)]
#[serde(untagged)]
enum Flag {
    Bool(bool),
    Other(IgnoredAny),
}

/// The second pass, for version 1: the `dependencies` tree.
#[derive(Deserialize)]
#[serde(expecting = "a package-lock.json object")]
struct DependencyLock<'a> {
    #[serde(default, borrow)]
    dependencies: Option<Entries<Key<'a>, Dependency<'a>>>,
}

/// One version 1 dependency, `{version, dependencies}`. The recursion is
/// bounded by `serde_json`'s nesting limit.
#[derive(Deserialize)]
#[serde(expecting = "a dependency object")]
struct Dependency<'a> {
    #[serde(default, borrow)]
    version: Option<Loose<'a>>,
    #[serde(default, borrow)]
    dependencies: Option<Entries<Key<'a>, Dependency<'a>>>,
}

pub(crate) fn parse(input: &str) -> Result<Packages, ParseError> {
    json::require_object(input)?;
    let lock: PackageLock<'_> = from_str(input)?;
    let mut packages = Packages::new();
    if let Some(installed) = lock.packages {
        for (path, entry) in &installed.0 {
            record_installed(&mut packages, &path.0, entry);
        }
        return Ok(packages);
    }
    if lock.dependencies.is_none() {
        return Err(ParseError::NoPackages { expected: EXPECTED });
    }
    let lock: DependencyLock<'_> = from_str(input)?;
    if let Some(tree) = &lock.dependencies {
        record_tree(&mut packages, tree);
    }
    Ok(packages)
}

/// The whole of `input` as `T`, trailing characters included.
fn from_str<'a, T: Deserialize<'a>>(input: &'a str) -> Result<T, ParseError> {
    serde_json::from_str(input).map_err(json::error)
}

/// Records an installed package. The root entry `""` is the project itself
/// and workspace folders (`packages/foo`) are its own code: only paths under
/// `node_modules/` count, named by what follows the last one; links to
/// workspace folders are skipped.
fn record_installed(packages: &mut Packages, path: &str, entry: &Installed<'_>) {
    const PREFIX: &str = "node_modules/";
    let Some(at) = path.rfind(PREFIX) else {
        return;
    };
    if matches!(entry.link, Some(Flag::Bool(true))) {
        return;
    }
    if let Some(version) = text(&entry.version) {
        insert(packages, &path[at + PREFIX.len()..], version);
    }
}

/// Records a version 1 `dependencies` object and, depth first, the ones
/// nested in it.
fn record_tree(packages: &mut Packages, tree: &Entries<Key<'_>, Dependency<'_>>) {
    for (name, dependency) in &tree.0 {
        if let Some(nested) = &dependency.dependencies {
            record_tree(packages, nested);
        }
        if let Some(version) = text(&dependency.version) {
            insert(packages, &name.0, version);
        }
    }
}
