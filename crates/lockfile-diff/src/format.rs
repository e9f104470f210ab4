//! One parser per lockfile format, each reading only package names and
//! versions and ignoring the rest, plus what several of them share.
//!
//! Every parser takes non-blank text without a byte-order mark (the caller,
//! [`parse`](crate::parse), strips both) and records through
//! [`insert`](crate::packages::insert).

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::IgnoredAny;

pub(crate) mod composer;
pub(crate) mod gemfile;
pub(crate) mod go_sum;
mod json;
pub(crate) mod npm;
pub(crate) mod pnpm;
pub(crate) mod toml_lock;
pub(crate) mod yarn;

/// Any value, kept only when it is a string: a version written as a number,
/// say, is skipped rather than failing the whole file. The string is borrowed
/// from the input when it has no escapes.
#[derive(Deserialize)]
#[serde(untagged)]
enum Loose<'a> {
    Text(#[serde(borrow)] Cow<'a, str>),
    Other(IgnoredAny),
}

/// The string in an optional [`Loose`] value.
fn text<'s>(value: &'s Option<Loose<'_>>) -> Option<&'s str> {
    match value {
        Some(Loose::Text(text)) => Some(text),
        _ => None,
    }
}

/// `s` without one pair of matching surrounding quotes (`'…'` or `"…"`).
fn unquote(s: &str) -> &str {
    for quote in ['"', '\''] {
        if let Some(inner) = s.strip_prefix(quote).and_then(|r| r.strip_suffix(quote)) {
            return inner;
        }
    }
    s
}

/// The number of leading spaces of `line`.
fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}
