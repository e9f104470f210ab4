//! One parser per lockfile format, each reading only package names and
//! versions and ignoring the rest, plus what several of them share.
//!
//! Every parser takes non-blank text without a byte-order mark (the caller,
//! [`parse`](crate::parse), strips both) and records through
//! [`insert`](crate::packages::insert).

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::packages::{Packages, insert};

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
///
/// Hand-written rather than an untagged enum: that would buffer every value
/// before trying it as a string, measurably slowing the parse of a large npm
/// lockfile (`cargo xtask bench commit-msg`).
enum Loose<'a> {
    Text(Cow<'a, str>),
    Other,
}

impl<'de: 'a, 'a> Deserialize<'de> for Loose<'a> {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        de.deserialize_any(LooseVisitor)
    }
}

struct LooseVisitor;

impl<'de> Visitor<'de> for LooseVisitor {
    type Value = Loose<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }
    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(Loose::Text(Cow::Borrowed(s)))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Loose::Text(Cow::Owned(s.to_owned())))
    }
    fn visit_string<E: de::Error>(self, s: String) -> Result<Self::Value, E> {
        Ok(Loose::Text(Cow::Owned(s)))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Loose::Other)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Loose::Other)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Loose::Other)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Loose::Other)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Loose::Other)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Loose::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Loose::Other)
    }
}

/// A package entry with a `name` and a `version` (Composer's objects, the
/// TOML formats' `[[package]]` tables); other keys are ignored.
#[derive(Deserialize)]
#[serde(expecting = "a package entry")]
struct NameVersion<'a> {
    #[serde(default, borrow)]
    name: Option<Loose<'a>>,
    #[serde(default, borrow)]
    version: Option<Loose<'a>>,
}

impl NameVersion<'_> {
    /// Records the entry when both its name and version are strings.
    fn record(&self, packages: &mut Packages) {
        if let (Some(name), Some(version)) = (text(&self.name), text(&self.version)) {
            insert(packages, name, version);
        }
    }
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
