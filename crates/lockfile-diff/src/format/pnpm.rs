//! pnpm's `pnpm-lock.yaml`, lockfile versions 5, 6 and 9, read line by line
//! (the layout pnpm writes, not YAML in general).

use super::{indent, unquote};
use crate::packages::{Packages, ParseError, finish, insert};

/// Entries under the top-level `packages:` key. Lockfile version 9 also lists
/// every package under `snapshots:` (once per peer set); reading `packages`
/// alone counts each version once. Keys are `/name/version_peers` (v5),
/// `/name@version(peers)` (v6) or `name@version` (v9), possibly quoted; an
/// entry with its own `version:` field (git, tarball and local packages)
/// uses that field, and its `name:` field when present.
pub(crate) fn parse(text: &str) -> Result<Packages, ParseError> {
    let mut packages = Packages::new();
    let mut recognized = false;
    let mut in_packages = false;
    let mut key_indent: Option<usize> = None;
    let mut body_indent: Option<usize> = None;
    let mut entry: Option<PnpmEntry<'_>> = None;
    for line in text.lines() {
        let line = line.trim_end();
        let content = line.trim_start_matches(' ');
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        let depth = indent(line);
        if depth == 0 {
            if let Some(entry) = entry.take() {
                entry.record(&mut packages);
            }
            let key = yaml_key(content).map(|(key, _)| key);
            in_packages = key == Some("packages");
            recognized |= matches!(key, Some("packages" | "lockfileVersion"));
            key_indent = None;
            continue;
        }
        if !in_packages {
            continue;
        }
        let keys_at = *key_indent.get_or_insert(depth);
        if depth < keys_at {
            continue;
        }
        if depth == keys_at {
            if let Some(entry) = entry.take() {
                entry.record(&mut packages);
            }
            entry = yaml_key(content).map(|(key, _)| PnpmEntry {
                key,
                name: None,
                version: None,
            });
            body_indent = None;
            continue;
        }
        let Some(current) = entry.as_mut() else {
            continue;
        };
        if depth != *body_indent.get_or_insert(depth) {
            continue;
        }
        match yaml_key(content) {
            Some(("name", value)) => current.name = Some(unquote(value)),
            Some(("version", value)) => current.version = Some(unquote(value)),
            _ => {}
        }
    }
    if let Some(entry) = entry.take() {
        entry.record(&mut packages);
    }
    finish(
        packages,
        recognized,
        "a `packages:` map keyed by `name@version`",
    )
}

struct PnpmEntry<'a> {
    key: &'a str,
    name: Option<&'a str>,
    version: Option<&'a str>,
}

impl PnpmEntry<'_> {
    fn record(self, packages: &mut Packages) {
        let from_key = pnpm_key(self.key);
        let (name, version) = match (self.name, self.version) {
            (Some(name), Some(version)) => (name, version),
            (None, Some(version)) => match from_key {
                Some((name, _)) => (name, version),
                None => return,
            },
            _ => match from_key {
                Some(pair) => pair,
                None => return,
            },
        };
        insert(packages, name, version);
    }
}

/// Name and version from a `packages:` key of any lockfile version.
fn pnpm_key(key: &str) -> Option<(&str, &str)> {
    let key = key.strip_prefix('/').unwrap_or(key);
    // v6 and v9: `name@version`, peers in parentheses after the version.
    let bare = key.find('(').map_or(key, |open| &key[..open]);
    if let Some((at, _)) = bare.char_indices().skip(1).find(|&(_, c)| c == '@') {
        let (name, version) = (&bare[..at], &bare[at + 1..]);
        if npm_name_shape(name) && !version.is_empty() {
            return Some((name, version));
        }
    }
    // v5: `name/version`, peers after an underscore.
    let name_end = if key.starts_with('@') {
        let scope_end = key.find('/')?;
        scope_end + 1 + key[scope_end + 1..].find('/')?
    } else {
        key.find('/')?
    };
    let name = &key[..name_end];
    let version = key[name_end + 1..].split('_').next()?;
    (npm_name_shape(name) && !version.is_empty()).then_some((name, version))
}

/// Whether `name` is shaped like an npm package name: `name` or
/// `@scope/name`, no other slashes, no whitespace.
fn npm_name_shape(name: &str) -> bool {
    if name.is_empty() || name.contains(char::is_whitespace) {
        return false;
    }
    match name.strip_prefix('@') {
        Some(scoped) => matches!(scoped.split_once('/'),
            Some((scope, base)) if !scope.is_empty() && !base.is_empty() && !base.contains('/')),
        None => !name.contains('/'),
    }
}

/// A YAML mapping line `key: value` or `key:` (key possibly quoted), with
/// leading spaces already removed: the key and the trimmed value.
fn yaml_key(content: &str) -> Option<(&str, &str)> {
    if let Some(quote) = content.chars().next().filter(|c| *c == '\'' || *c == '"') {
        let inner = &content[1..];
        let end = inner.find(quote)?;
        let rest = inner[end + 1..].strip_prefix(':')?;
        return Some((&inner[..end], rest.trim()));
    }
    let end = match content.find(": ") {
        Some(end) => end,
        None => content.strip_suffix(':')?.len(),
    };
    Some((&content[..end], content[end + 1..].trim()))
}
