//! Composer's `composer.lock`: `packages` and `packages-dev` arrays of
//! `{name, version}` objects.

use serde::Deserialize;

use super::{Loose, json, text};
use crate::packages::{Packages, ParseError, insert};

#[derive(Deserialize)]
#[serde(expecting = "a composer.lock object")]
struct ComposerLock<'a> {
    #[serde(default, borrow)]
    packages: Option<Vec<ComposerPackage<'a>>>,
    #[serde(default, borrow, rename = "packages-dev")]
    packages_dev: Option<Vec<ComposerPackage<'a>>>,
}

#[derive(Deserialize)]
#[serde(expecting = "a package object")]
struct ComposerPackage<'a> {
    #[serde(default, borrow)]
    name: Option<Loose<'a>>,
    #[serde(default, borrow)]
    version: Option<Loose<'a>>,
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
        if let (Some(name), Some(version)) = (text(&package.name), text(&package.version)) {
            insert(&mut packages, name, version);
        }
    }
    Ok(packages)
}
