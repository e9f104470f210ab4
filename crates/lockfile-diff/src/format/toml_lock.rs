//! `Cargo.lock`, `poetry.lock` and `uv.lock`: TOML documents with one
//! `[[package]]` table per package, read with the `toml` crate.
//!
//! Only the top level of each `[[package]]` table counts: sub-tables such as
//! `[package.dependencies]` or `[[package.wheels]]`, inline dependency
//! entries (uv's `{ name = "…" }`) and other tables (`[metadata]`) are never
//! mistaken for packages. A table without a string `name` and `version` (uv's
//! virtual workspace members) is skipped.

use serde::Deserialize;
use toml::de::Deserializer;

use super::NameVersion;
use crate::packages::{Packages, ParseError};

const EXPECTED: &str = "`[[package]]` tables with `name` and `version`";

/// The longest parser message we repeat: a type error quotes the offending
/// value, which could be a whole line of the file.
const MAX_MESSAGE: usize = 160;

#[derive(Deserialize)]
struct Lock<'a> {
    #[serde(default, borrow)]
    package: Option<Vec<NameVersion<'a>>>,
}

/// Text that is not TOML is [`ParseError::NotToml`] when it has a
/// `[[package]]` header and [`ParseError::NoPackages`] otherwise; a document
/// whose `package` is not an array of tables is
/// [`ParseError::UnexpectedToml`], one without `package` `NoPackages`.
pub(crate) fn parse(input: &str) -> Result<Packages, ParseError> {
    match Deserializer::parse(input) {
        Ok(document) => packages(input, document),
        Err(err) => match relaxed_headers(input) {
            Headers::None => Err(ParseError::NoPackages { expected: EXPECTED }),
            Headers::Strict => Err(ParseError::NotToml {
                reason: describe(input, &err),
            }),
            Headers::Relaxed(fixed) => match Deserializer::parse(&fixed) {
                Ok(document) => packages(&fixed, document),
                Err(err) => Err(ParseError::NotToml {
                    reason: describe(&fixed, &err),
                }),
            },
        },
    }
}

fn packages(input: &str, document: Deserializer<'_>) -> Result<Packages, ParseError> {
    let lock = Lock::deserialize(document).map_err(|err| ParseError::UnexpectedToml {
        reason: describe(input, &err),
    })?;
    let Some(list) = &lock.package else {
        return Err(ParseError::NoPackages { expected: EXPECTED });
    };
    let mut packages = Packages::new();
    for package in list {
        package.record(&mut packages);
    }
    Ok(packages)
}

/// The parser's message, bounded and on one line, and where in `input` it
/// points (`… at line 4 column 1`); the `toml` crate's own `Display` quotes
/// the offending line, which could be most of the file.
fn describe(input: &str, err: &toml::de::Error) -> String {
    let message = err.message().trim();
    let mut reason: String = match message.char_indices().nth(MAX_MESSAGE) {
        Some((end, _)) => format!("{}…", &message[..end]),
        None => message.to_owned(),
    };
    reason = reason.replace(['\n', '\r'], " ");
    let before = err.span().and_then(|span| input.get(..span.start));
    if let Some(before) = before {
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().unwrap_or(before).chars().count() + 1;
        reason.push_str(&format!(" at line {line} column {column}"));
    }
    reason
}

/// The `[[package]]` header lines of text that did not parse as TOML.
enum Headers {
    /// None: nothing here looks like a TOML lockfile.
    None,
    /// Some, all written as TOML writes them.
    Strict,
    /// Some written with spaces between their brackets (`[ [package] ]`),
    /// which TOML does not allow; the text with those lines rewritten.
    Relaxed(String),
}

/// Finds the `[[package]]` header lines (spaces anywhere and a trailing
/// comment allowed). The hand-written scanner this parser replaced read
/// `[ [package] ]` as a header, so a file written that way by hand still
/// reads the same; any other TOML error stays an error.
fn relaxed_headers(input: &str) -> Headers {
    let is_header = |line: &str| {
        let header = line.split('#').next().unwrap_or(line);
        header
            .chars()
            .filter(|c| !c.is_whitespace())
            .eq("[[package]]".chars())
    };
    let strict = |line: &str| {
        let header = line.split('#').next().unwrap_or(line).trim();
        header.starts_with("[[") && header.ends_with("]]")
    };
    let mut found = false;
    let mut relaxed = false;
    for line in input.lines().filter(|line| is_header(line)) {
        found = true;
        relaxed |= !strict(line);
    }
    if !relaxed {
        return if found {
            Headers::Strict
        } else {
            Headers::None
        };
    }
    let mut fixed = String::with_capacity(input.len());
    for line in input.split_inclusive('\n') {
        if is_header(line) {
            fixed.push_str("[[package]]\n");
        } else {
            fixed.push_str(line);
        }
    }
    Headers::Relaxed(fixed)
}
