//! Go's `go.sum`.

use crate::packages::{Packages, ParseError, finish, insert};

/// `module version[/go.mod] h1:hash` lines. go.sum also lists the go.mod
/// hashes of versions that were only consulted; they count as present, as
/// the line format does not tell them apart.
pub(crate) fn parse(text: &str) -> Result<Packages, ParseError> {
    let mut packages = Packages::new();
    let mut recognized = false;
    for line in text.lines() {
        let mut fields = line.split_whitespace();
        let (Some(module), Some(version), Some(hash), None) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        if !(hash.starts_with('h') && hash.contains(':')) {
            continue;
        }
        recognized = true;
        let version = version.strip_suffix("/go.mod").unwrap_or(version);
        insert(&mut packages, module, version);
    }
    finish(packages, recognized, "lines like `module version h1:hash`")
}
