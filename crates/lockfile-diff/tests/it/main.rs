//! Integration tests of `lockfile-diff` through its public API: one module
//! per concern, with the check helpers and the sample lockfiles (kept in
//! `data/`) they share here.

mod formats;
mod hostile;
mod summary;

use lockfile_diff::{LockKind, PackageChange, Packages, parse};

/// Parses `text` and compares with `expected` (name, versions in any
/// order).
#[track_caller]
pub fn check(kind: LockKind, text: &str, expected: &[(&str, &[&str])]) {
    let packages = match parse(kind, text) {
        Ok(packages) => packages,
        Err(err) => panic!("{kind} sample did not parse: {err}"),
    };
    let expected: Packages = expected
        .iter()
        .map(|(name, versions)| {
            let versions = versions.iter().map(|v| (*v).to_owned()).collect();
            ((*name).to_owned(), versions)
        })
        .collect();
    assert_eq!(packages, expected);
}

#[track_caller]
pub fn parse_error(kind: LockKind, text: &str) -> String {
    match parse(kind, text) {
        Ok(packages) => panic!("expected an error, got {packages:?}"),
        Err(err) => err.to_string(),
    }
}

pub fn change(name: &str, old: &[&str], new: &[&str], kept: &[&str]) -> PackageChange {
    let list = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect();
    PackageChange {
        name: name.to_owned(),
        old: list(old),
        new: list(new),
        kept: list(kept),
    }
}

/// A Cargo.lock with two versions of one crate.
pub const CARGO_LOCK: &str = include_str!("data/cargo-v4.lock");

/// A version 3 package-lock.json with nested installs, a dev package, a
/// workspace link and a workspace folder.
pub const NPM_V3: &str = include_str!("data/package-lock-v3.json");
