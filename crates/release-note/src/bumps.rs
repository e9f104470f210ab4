//! Internal version bumps: a commit that only raises the versions of a Cargo
//! workspace's own crates (`deps: bump grep-searcher to 0.1.14`), which a
//! release note groups into one line instead of one item per commit.
//!
//! [`internal_bumps`] reads the commit's diff. It is such a commit when every
//! changed file is a `Cargo.toml` or `Cargo.lock`, and every added or removed
//! line is one of:
//!
//! - a package's `version = "…"` line (in a manifest: the crate's own version,
//!   a crate of the repository, so of the workspace; in the lockfile: a
//!   package with no `source = ` line after its version, which is how Cargo
//!   writes workspace members and path dependencies — a crates.io or git
//!   package always has one);
//! - a dependency on a crate by `path` (`grep-searcher = { version = "0.1.14",
//!   path = "../searcher" }`), a workspace-internal requirement;
//! - blank.
//!
//! and at least one manifest is bumped, and every crate the lockfile bumps is
//! one a manifest of the commit bumps. The crate names come from the `name =
//! "…"` line above a version line in the same hunk (the diff's context), else
//! the manifest's folder.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use gitctx::diff::LineKind;
use gitctx::{FileDiff, diff::DiffLine};
use regex::Regex;

use crate::built_in;

/// A `version = "…"` line; group 1 the version.
static VERSION: LazyLock<Regex> = LazyLock::new(|| built_in(r#"^version\s*=\s*"([^"]+)""#));

/// A `name = "…"` line; group 1 the name.
static NAME: LazyLock<Regex> = LazyLock::new(|| built_in(r#"^name\s*=\s*"([^"]+)""#));

/// A dependency by path: `name = { …path = … }`; group 1 the name.
static PATH_DEPENDENCY: LazyLock<Regex> =
    LazyLock::new(|| built_in(r#"^([A-Za-z0-9_-]+)\s*=\s*\{.*\bpath\s*="#));

/// A `version = "…"` inside an inline table; group 1 the version.
static INLINE_VERSION: LazyLock<Regex> = LazyLock::new(|| built_in(r#"\bversion\s*=\s*"([^"]+)""#));

/// The workspace crates `files` bump, as `name version` sorted and unique,
/// when the commit does nothing else (see the module documentation); empty
/// otherwise.
pub(crate) fn internal_bumps(files: &[FileDiff]) -> Vec<String> {
    // Crate names bumped in manifests and in lockfiles, `name version`.
    let mut manifests = BTreeSet::new();
    let mut locks = BTreeSet::new();
    for file in files {
        let path = file.path();
        let (folder, name) = path.rsplit_once('/').unwrap_or(("", path));
        let lockfile = match name {
            "Cargo.lock" => true,
            "Cargo.toml" => false,
            _ => return Vec::new(),
        };
        if file.binary {
            return Vec::new();
        }
        for hunk in &file.hunks {
            for (at, line) in hunk.lines.iter().enumerate() {
                if line.kind == LineKind::Context {
                    continue;
                }
                let text = line.content.trim();
                if text.is_empty() {
                    continue;
                }
                let bump = if let Some(version) = VERSION.captures(text) {
                    if lockfile && from_a_registry(&hunk.lines[at + 1..]) {
                        return Vec::new();
                    }
                    let crate_name = name_above(&hunk.lines[..at]).unwrap_or(folder);
                    (crate_name.to_owned(), version[1].to_owned())
                } else if let Some(dependency) =
                    PATH_DEPENDENCY.captures(text).filter(|_| !lockfile)
                {
                    let Some(version) = INLINE_VERSION.captures(text) else {
                        continue;
                    };
                    (dependency[1].to_owned(), version[1].to_owned())
                } else {
                    return Vec::new();
                };
                if line.kind == LineKind::Added {
                    let bumps = if lockfile { &mut locks } else { &mut manifests };
                    bumps.insert(format!("{} {}", bump.0, bump.1));
                }
            }
        }
    }
    // A lockfile-only change is not one: every crate it bumps must be one
    // whose manifest (or a path dependency on it) the commit bumps too.
    if manifests.is_empty() || !locks.is_subset(&manifests) {
        return Vec::new();
    }
    manifests.into_iter().collect()
}

/// The `name = "…"` of the table a line at the end of `above` belongs to.
fn name_above(above: &[DiffLine]) -> Option<&str> {
    for line in above.iter().rev() {
        let text = line.content.trim();
        if text.starts_with('[') {
            return None;
        }
        if let Some(caps) = NAME.captures(text) {
            return caps.get(1).map(|m| m.as_str());
        }
    }
    None
}

/// Whether the lockfile lines after a version line say the package comes
/// from a registry or git (`source = …`) rather than the workspace.
fn from_a_registry(below: &[DiffLine]) -> bool {
    below
        .iter()
        .map(|line| line.content.trim())
        .find(|text| !VERSION.is_match(text))
        .is_some_and(|text| text.starts_with("source"))
}
