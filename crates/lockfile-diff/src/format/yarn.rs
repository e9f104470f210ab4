//! Yarn's `yarn.lock`, classic (v1) and berry.

use super::unquote;
use crate::packages::{Packages, ParseError, finish, insert};

/// Classic (v1) and berry lockfiles: an unindented header line of
/// descriptors ending in `:`, then indented fields of which we read the
/// two-space `version "1.2.3"` (v1) or `version: 1.2.3` (berry). Berry's
/// `__metadata` block and the project's own `workspace:`, `link:` and
/// `portal:` entries are skipped.
pub(crate) fn parse(text: &str) -> Result<Packages, ParseError> {
    let mut packages = Packages::new();
    let mut recognized = false;
    // `Some(Some(name))` inside a package entry, `Some(None)` inside an entry
    // we skip, `None` outside any entry.
    let mut entry: Option<Option<&str>> = None;
    for line in text.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            continue;
        }
        if line.starts_with('#') {
            recognized |= line.contains("yarn lockfile v1");
            continue;
        }
        if !line.starts_with([' ', '\t']) {
            entry = line.strip_suffix(':').map(|key| {
                if unquote(key.trim()) == "__metadata" {
                    recognized = true;
                    None
                } else {
                    yarn_entry_name(key)
                }
            });
            continue;
        }
        let Some(field) = line.strip_prefix("  ") else {
            continue;
        };
        if field.starts_with([' ', '\t']) {
            continue;
        }
        if let (Some(entry), Some(version)) = (entry, yarn_version(field)) {
            recognized = true;
            if let Some(name) = entry {
                insert(&mut packages, name, version);
            }
        }
    }
    finish(
        packages,
        recognized,
        "entries like `name@range:` with a `version` field",
    )
}

/// The package name of an entry header (without its trailing `:`), or `None`
/// for an entry to skip. The name runs up to the `@` that starts the range
/// of the first descriptor; a scoped name's leading `@` is part of the name.
fn yarn_entry_name(key: &str) -> Option<&str> {
    let descriptor = key.split(',').next()?.trim().trim_matches('"').trim();
    let (at, _) = descriptor.char_indices().skip(1).find(|&(_, c)| c == '@')?;
    let range = &descriptor[at + 1..];
    if ["workspace:", "link:", "portal:"]
        .iter()
        .any(|p| range.starts_with(p))
    {
        return None;
    }
    Some(&descriptor[..at])
}

/// The value of a `version "1.2.3"` or `version: 1.2.3` field.
fn yarn_version(field: &str) -> Option<&str> {
    let rest = field.strip_prefix("version")?;
    let rest = match rest.strip_prefix(':') {
        Some(rest) => rest,
        None if rest.starts_with(' ') => rest,
        None => return None,
    };
    let version = unquote(rest.trim());
    (!version.is_empty()).then_some(version)
}
