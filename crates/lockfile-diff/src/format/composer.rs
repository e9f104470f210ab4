//! Composer's `composer.lock`: `packages` and `packages-dev` arrays of
//! `{name, version}` objects.

use serde::Deserialize;

use super::{NameVersion, json};
use crate::packages::{Packages, ParseError};

#[derive(Deserialize)]
#[serde(expecting = "a composer.lock object")]
struct ComposerLock<'a> {
    #[serde(default, borrow)]
    packages: Option<Vec<NameVersion<'a>>>,
    #[serde(default, borrow, rename = "packages-dev")]
    packages_dev: Option<Vec<NameVersion<'a>>>,
}

pub(crate) fn parse(input: &str) -> Result<Packages, ParseError> {
    json::require_object(input)?;
    let lock: ComposerLock<'_> = serde_json::from_str(input).map_err(json::error)?;
    if lock.packages.is_none() && lock.packages_dev.is_none() {
        return Err(ParseError::NoPackages {
            expected: "`packages` or `packages-dev` arrays",
        });
    }
    let mut packages = Packages::new();
    for package in lock.packages.iter().chain(&lock.packages_dev).flatten() {
        package.record(&mut packages);
    }
    Ok(packages)
}
