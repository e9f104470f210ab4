//! Bundler's `Gemfile.lock`.

use super::indent;
use crate::packages::{Packages, ParseError, finish, insert};

/// In each `specs:` section (under `GEM`, `GIT`, `PATH` or `PLUGIN SOURCE`),
/// lines indented exactly four spaces are gems, `name (version)`; lines
/// indented six are their dependencies' requirements and are skipped. A
/// platform suffix (`1.15.4-x86_64-linux`) stays part of the version.
pub(crate) fn parse(text: &str) -> Result<Packages, ParseError> {
    let mut packages = Packages::new();
    let mut recognized = false;
    let mut in_specs = false;
    for line in text.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            continue;
        }
        match indent(line) {
            0 => {
                in_specs = false;
                recognized |= matches!(line, "GEM" | "GIT" | "PATH" | "PLUGIN SOURCE");
            }
            2 => {
                in_specs = line.trim_start() == "specs:";
                recognized |= in_specs;
            }
            4 if in_specs => {
                if let Some((name, version)) = gem_spec(line.trim_start()) {
                    insert(&mut packages, name, version);
                }
            }
            _ => {}
        }
    }
    finish(
        packages,
        recognized,
        "`specs:` sections of `name (version)` lines",
    )
}

/// `name (version)`.
fn gem_spec(spec: &str) -> Option<(&str, &str)> {
    let (name, rest) = spec.split_once(" (")?;
    let (version, _) = rest.split_once(')')?;
    Some((name, version))
}
