//! Lockfile summaries: the package versions a staged lockfile changes.
//!
//! A lockfile diff is long, repetitive and mostly hashes: shown raw it would
//! drown the diff budget, and hidden the commit message could not say what it
//! bumps. Instead each staged lockfile is reduced to package version changes
//! (`package: old → new`) computed from its old (HEAD) and new (index)
//! contents:
//!
//! - [`kind_of`] recognizes a lockfile by its file name;
//! - [`parse`] reads the package versions of one side;
//! - [`summarize`] compares both sides into a [`LockSummary`];
//! - [`LockSummary::render`] writes one compact plain-text block for a prompt.
//!
//! The parsers are our own, line-based for the text formats and `serde_json`
//! for the JSON ones; they read only names and versions and ignore the rest.
//! This module does no I/O and knows nothing of git: callers pass contents.
//!
//! **Invariants**: no input makes it panic (garbage, truncated files, huge
//! lines, non-ASCII); work is linear in the input size; output is
//! deterministic (packages alphabetical by name, versions in version order).

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// The lockfile formats we can summarize, one per package manager.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LockKind {
    /// Rust's `Cargo.lock`.
    Cargo,
    /// npm's `package-lock.json` or `npm-shrinkwrap.json`.
    Npm,
    /// Yarn's `yarn.lock`, classic (v1) or berry.
    Yarn,
    /// pnpm's `pnpm-lock.yaml` (lockfile versions 5, 6 and 9).
    Pnpm,
    /// Poetry's `poetry.lock`.
    Poetry,
    /// uv's `uv.lock`.
    Uv,
    /// Go's `go.sum`.
    GoSum,
    /// Bundler's `Gemfile.lock`.
    Bundler,
    /// Composer's `composer.lock`.
    Composer,
}

impl LockKind {
    /// Every kind, in declaration order.
    pub const ALL: [LockKind; 9] = [
        LockKind::Cargo,
        LockKind::Npm,
        LockKind::Yarn,
        LockKind::Pnpm,
        LockKind::Poetry,
        LockKind::Uv,
        LockKind::GoSum,
        LockKind::Bundler,
        LockKind::Composer,
    ];

    /// The ecosystem label shown to the model, such as `"Cargo"` or `"npm"`.
    pub fn name(self) -> &'static str {
        match self {
            LockKind::Cargo => "Cargo",
            LockKind::Npm => "npm",
            LockKind::Yarn => "Yarn",
            LockKind::Pnpm => "pnpm",
            LockKind::Poetry => "Poetry",
            LockKind::Uv => "uv",
            LockKind::GoSum => "Go",
            LockKind::Bundler => "Bundler",
            LockKind::Composer => "Composer",
        }
    }
}

impl fmt::Display for LockKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The lockfile kind of `path`, judged by its file name alone (the last path
/// component, exact and case-sensitive), or `None` for any other file.
///
/// Both `/` and `\` separate components, so Windows-style paths work too.
pub fn kind_of(path: &str) -> Option<LockKind> {
    let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
    match file {
        "Cargo.lock" => Some(LockKind::Cargo),
        "package-lock.json" | "npm-shrinkwrap.json" => Some(LockKind::Npm),
        "yarn.lock" => Some(LockKind::Yarn),
        "pnpm-lock.yaml" => Some(LockKind::Pnpm),
        "poetry.lock" => Some(LockKind::Poetry),
        "uv.lock" => Some(LockKind::Uv),
        "go.sum" => Some(LockKind::GoSum),
        "Gemfile.lock" => Some(LockKind::Bundler),
        "composer.lock" => Some(LockKind::Composer),
        _ => None,
    }
}

/// The packages of one lockfile: package name → the versions present.
///
/// A lockfile can hold several versions of one package (npm, Cargo), so each
/// name maps to a set. The set's own order is plain string order; use
/// [`summarize`] for version order.
pub type Packages = BTreeMap<String, BTreeSet<String>>;

/// Why the contents of a lockfile could not be read as package versions.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    /// A JSON lockfile (npm, Composer) is not well-formed JSON.
    #[error("not JSON: {0}")]
    NotJson(#[source] serde_json::Error),
    /// A JSON lockfile is valid JSON but not laid out as that lockfile is.
    #[error("unexpected JSON layout: {0}")]
    UnexpectedJson(#[source] serde_json::Error),
    /// Nothing in the text looks like the lockfile's format.
    #[error("no packages found (expected {expected})")]
    NoPackages {
        /// What the format's package entries look like.
        expected: &'static str,
    },
}

/// Reads the package versions held in `text`, a lockfile of `kind`.
///
/// Blank text holds no packages. Otherwise the text must show the format's
/// structure (for example a `[[package]]` table, a `packages` object or a
/// `specs:` section), though that structure may list no packages: a
/// structurally valid but empty lockfile is `Ok` with no packages, while text
/// in which nothing is recognized is [`ParseError::NoPackages`]. Entries
/// without a version, and names or versions containing control characters,
/// are skipped. A leading byte-order mark is ignored.
pub fn parse(kind: LockKind, text: &str) -> Result<Packages, ParseError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Ok(Packages::new());
    }
    match kind {
        LockKind::Cargo | LockKind::Poetry | LockKind::Uv => parse_toml(text),
        LockKind::Npm => parse_npm(text),
        LockKind::Yarn => parse_yarn(text),
        LockKind::Pnpm => parse_pnpm(text),
        LockKind::GoSum => parse_go_sum(text),
        LockKind::Bundler => parse_gemfile(text),
        LockKind::Composer => parse_composer(text),
    }
}

/// How the versions of one package differ between the old and new contents.
///
/// Every list is in version order (see [`summarize`]). For a package only in
/// the new contents `old` and `kept` are empty; for one only in the old
/// contents `new` and `kept` are empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageChange {
    /// The package name as the lockfile writes it (npm scope included).
    pub name: String,
    /// Versions present only in the old contents.
    pub old: Vec<String>,
    /// Versions present only in the new contents.
    pub new: Vec<String>,
    /// Versions present in both; only a changed package has any.
    pub kept: Vec<String>,
}

impl fmt::Display for PackageChange {
    /// Writes `name old → new` for a changed package, `name new` for an added
    /// one and `name old` for a removed one. When a changed package only
    /// gained or only lost versions, both sides list all their versions
    /// (`name 1.0 → 1.0, 2.0`) so that the change does not read as a
    /// replacement.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = &self.name;
        if self.kept.is_empty() && self.old.is_empty() {
            return write!(f, "{name} {}", self.new.join(", "));
        }
        if self.kept.is_empty() && self.new.is_empty() {
            return write!(f, "{name} {}", self.old.join(", "));
        }
        if self.old.is_empty() || self.new.is_empty() {
            let before = version_union(&self.kept, &self.old);
            let after = version_union(&self.kept, &self.new);
            return write!(f, "{name} {} → {}", before.join(", "), after.join(", "));
        }
        write!(
            f,
            "{name} {} → {}",
            self.old.join(", "),
            self.new.join(", ")
        )
    }
}

/// The package version changes of one staged lockfile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockSummary {
    /// The lockfile's path, as given to [`summarize`].
    pub path: String,
    /// The lockfile's format.
    pub kind: LockKind,
    /// Packages present on both sides whose versions differ.
    pub changed: Vec<PackageChange>,
    /// Packages present only in the new contents.
    pub added: Vec<PackageChange>,
    /// Packages present only in the old contents.
    pub removed: Vec<PackageChange>,
    /// Why a side could not be parsed; when set, the three lists are empty.
    pub unparsed: Option<String>,
}

/// Compares the old and new contents of the lockfile at `path`.
///
/// `old` is `None` when the file is added (typically: absent at HEAD) and
/// `new` is `None` when it is deleted (absent from the index); a missing side
/// holds no packages. If either present side fails to [`parse`], `unparsed`
/// says why (naming the side) and no changes are listed. The lists are
/// alphabetical by name (case-insensitively, ties in byte order), and the
/// versions within each change are in version order: digit runs compare
/// numerically (`1.10.0` after `1.9.0`), other runs as strings, with plain
/// string order to break ties.
pub fn summarize(path: &str, kind: LockKind, old: Option<&str>, new: Option<&str>) -> LockSummary {
    let mut summary = LockSummary {
        path: path.to_owned(),
        kind,
        changed: Vec::new(),
        added: Vec::new(),
        removed: Vec::new(),
        unparsed: None,
    };
    let read = |text: Option<&str>| text.map_or_else(|| Ok(Packages::new()), |t| parse(kind, t));
    let (old, new) = match (read(old), read(new)) {
        (Ok(old), Ok(new)) => (old, new),
        (old, new) => {
            let reasons: Vec<String> = [("old", old.err()), ("new", new.err())]
                .into_iter()
                .filter_map(|(side, err)| err.map(|err| format!("{side} content: {err}")))
                .collect();
            summary.unparsed = Some(reasons.join("; "));
            return summary;
        }
    };

    for (name, before) in &old {
        match new.get(name) {
            None => summary.removed.push(PackageChange {
                name: name.clone(),
                old: in_version_order(before.iter()),
                new: Vec::new(),
                kept: Vec::new(),
            }),
            Some(after) if after == before => {}
            Some(after) => summary.changed.push(PackageChange {
                name: name.clone(),
                old: in_version_order(before.difference(after)),
                new: in_version_order(after.difference(before)),
                kept: in_version_order(before.intersection(after)),
            }),
        }
    }
    for (name, after) in &new {
        if !old.contains_key(name) {
            summary.added.push(PackageChange {
                name: name.clone(),
                old: Vec::new(),
                new: in_version_order(after.iter()),
                kept: Vec::new(),
            });
        }
    }
    for list in [
        &mut summary.changed,
        &mut summary.added,
        &mut summary.removed,
    ] {
        list.sort_by(|a, b| compare_names(&a.name, &b.name));
    }
    summary
}

impl LockSummary {
    /// True when there is nothing to report: no package changed and both
    /// sides were read. An unreadable side is worth reporting, so it is not
    /// empty.
    pub fn is_empty(&self) -> bool {
        self.unparsed.is_none() && self.package_count() == 0
    }

    /// The number of packages changed, added or removed.
    pub fn package_count(&self) -> usize {
        self.changed.len() + self.added.len() + self.removed.len()
    }

    /// One compact plain-text block for a prompt, without a trailing newline:
    ///
    /// ```text
    /// Cargo.lock (Cargo): 2 changed, 1 added, 1 removed
    ///   changed: serde 1.0.200 → 1.0.210; syn 1.0.109, 2.0.60 → 2.0.66
    ///   added: memchr 2.7.4
    ///   removed: winapi 0.3.9
    /// ```
    ///
    /// The header counts only non-empty groups. At most `max_entries`
    /// packages are listed in all, shared among the groups so that a long
    /// "changed" list cannot crowd out the added and removed ones; a group
    /// that is cut ends with `… and N more`. An unreadable lockfile
    /// is one line, `path (kind): could not read package versions: reason`,
    /// and one with no changes reads `path (kind): no package version
    /// changes`.
    pub fn render(&self, max_entries: usize) -> String {
        let head = format!("{} ({})", self.path, self.kind.name());
        if let Some(reason) = &self.unparsed {
            let reason: String = reason
                .chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect();
            return format!("{head}: could not read package versions: {reason}");
        }
        let groups = [
            ("changed", &self.changed),
            ("added", &self.added),
            ("removed", &self.removed),
        ];
        let counts: Vec<String> = groups
            .iter()
            .filter(|(_, list)| !list.is_empty())
            .map(|(label, list)| format!("{} {label}", list.len()))
            .collect();
        if counts.is_empty() {
            return format!("{head}: no package version changes");
        }
        let mut out = format!("{head}: {}", counts.join(", "));
        let lens = groups.map(|(_, list)| list.len());
        let allowance = share_out(lens, max_entries);
        for ((label, list), shown) in groups.into_iter().zip(allowance) {
            if list.is_empty() {
                continue;
            }
            let mut items: Vec<String> = list.iter().take(shown).map(ToString::to_string).collect();
            if shown < list.len() {
                items.push(format!("… and {} more", list.len() - shown));
            }
            out.push_str(&format!("\n  {label}: {}", items.join("; ")));
        }
        out
    }
}

/// Shares `budget` entries among groups of `lens` sizes so that no group with
/// entries is crowded out by another: equal shares, and what a small group
/// leaves goes to the others (in group order for the remainder).
fn share_out(lens: [usize; 3], budget: usize) -> [usize; 3] {
    let mut shown = [0usize; 3];
    let mut left = budget;
    loop {
        let open: Vec<usize> = (0..3).filter(|&i| shown[i] < lens[i]).collect();
        if open.is_empty() || left == 0 {
            return shown;
        }
        let share = (left / open.len()).max(1);
        for i in open {
            let take = share.min(lens[i] - shown[i]).min(left);
            shown[i] += take;
            left -= take;
        }
    }
}

// ---------------------------------------------------------------------------
// Ordering

/// Sorts versions into version order (see [`compare_versions`]).
fn in_version_order<'a>(versions: impl Iterator<Item = &'a String>) -> Vec<String> {
    let mut out: Vec<String> = versions.cloned().collect();
    out.sort_by(|a, b| compare_versions(a, b));
    out
}

/// The versions of both lists, in version order.
fn version_union(a: &[String], b: &[String]) -> Vec<String> {
    in_version_order(a.iter().chain(b))
}

/// Alphabetical order ignoring case, ties broken by byte order so the order
/// is total.
fn compare_names(a: &str, b: &str) -> Ordering {
    a.chars()
        .flat_map(char::to_lowercase)
        .cmp(b.chars().flat_map(char::to_lowercase))
        .then_with(|| a.cmp(b))
}

/// Version order: both versions split into runs of ASCII digits and runs of
/// anything else, compared run by run. Digit runs compare as numbers (of any
/// length) and before other runs; other runs compare as strings; a version
/// that runs out first is smaller. Equal runs fall back to string order.
///
/// This is deliberately not semver: `1.0.0-rc.1` sorts after `1.0.0`. It
/// only has to put the versions of one package in a readable order.
fn compare_versions(a: &str, b: &str) -> Ordering {
    let (mut left, mut right) = (Runs(a), Runs(b));
    loop {
        match (left.next(), right.next()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => {
                let order = compare_runs(x, y);
                if order != Ordering::Equal {
                    return order;
                }
            }
        }
    }
}

fn compare_runs(x: &str, y: &str) -> Ordering {
    let digits = |s: &str| s.starts_with(|c: char| c.is_ascii_digit());
    match (digits(x), digits(y)) {
        (true, true) => {
            let (x, y) = (x.trim_start_matches('0'), y.trim_start_matches('0'));
            x.len().cmp(&y.len()).then_with(|| x.cmp(y))
        }
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        (false, false) => x.cmp(y),
    }
}

/// Maximal runs of ASCII digits and of other characters.
struct Runs<'a>(&'a str);

impl<'a> Iterator for Runs<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let digit = self.0.chars().next()?.is_ascii_digit();
        let end = self
            .0
            .find(|c: char| c.is_ascii_digit() != digit)
            .unwrap_or(self.0.len());
        let (run, rest) = self.0.split_at(end);
        self.0 = rest;
        Some(run)
    }
}

// ---------------------------------------------------------------------------
// Shared helpers

/// Records `version` of `name`, skipping empty values and values with control
/// characters (which could only come from a mangled file and would break the
/// one-line-per-group rendering).
fn insert(packages: &mut Packages, name: &str, version: &str) {
    let (name, version) = (name.trim(), version.trim());
    let bad = |s: &str| s.is_empty() || s.chars().any(char::is_control);
    if bad(name) || bad(version) {
        return;
    }
    match packages.get_mut(name) {
        Some(versions) => {
            if !versions.contains(version) {
                versions.insert(version.to_owned());
            }
        }
        None => {
            packages.insert(name.to_owned(), BTreeSet::from([version.to_owned()]));
        }
    }
}

/// The result of a line-based parser: its packages, or `NoPackages` when it
/// recognized none of the format's structure.
fn finish(
    packages: Packages,
    recognized: bool,
    expected: &'static str,
) -> Result<Packages, ParseError> {
    if recognized || !packages.is_empty() {
        Ok(packages)
    } else {
        Err(ParseError::NoPackages { expected })
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

// ---------------------------------------------------------------------------
// Cargo.lock, poetry.lock, uv.lock: TOML `[[package]]` tables

/// Reads `name` and `version` from the top level of each `[[package]]` table.
///
/// Not a TOML parser: lines are taken one by one, but multi-line arrays,
/// inline tables and multi-line strings are tracked so that their contents
/// (uv's `{ name = "…" }` dependency entries, for example) are never mistaken
/// for keys. Any table header ends the current package, so sub-tables such as
/// `[package.dependencies]` or `[[package.wheels]]` are ignored.
fn parse_toml(text: &str) -> Result<Packages, ParseError> {
    let mut packages = Packages::new();
    let mut scanner = TomlScanner::default();
    let mut recognized = false;
    let mut in_package = false;
    let mut name: Option<Cow<'_, str>> = None;
    let mut version: Option<Cow<'_, str>> = None;
    for line in text.lines() {
        if !scanner.inside_value() {
            let trimmed = line.trim();
            if trimmed.starts_with('[') {
                flush_toml_package(&mut packages, &mut name, &mut version);
                // A valid header cannot open a value, so it is not scanned.
                in_package = is_package_header(trimmed);
                recognized |= in_package;
                continue;
            }
            if in_package && let Some((key, value)) = toml_string_pair(trimmed) {
                match key {
                    "name" => name = Some(value),
                    "version" => version = Some(value),
                    _ => {}
                }
            }
        }
        scanner.scan(line);
    }
    flush_toml_package(&mut packages, &mut name, &mut version);
    finish(
        packages,
        recognized,
        "`[[package]]` tables with `name` and `version`",
    )
}

/// Records the table just read if it had both a name and a version, and
/// clears both either way.
fn flush_toml_package(
    packages: &mut Packages,
    name: &mut Option<Cow<'_, str>>,
    version: &mut Option<Cow<'_, str>>,
) {
    if let (Some(name), Some(version)) = (name.take(), version.take()) {
        insert(packages, &name, &version);
    }
}

/// Whether `line` (trimmed) is the header `[[package]]`, spaces and a
/// trailing comment allowed.
fn is_package_header(line: &str) -> bool {
    let header = line.split('#').next().unwrap_or(line);
    header
        .chars()
        .filter(|c| !c.is_whitespace())
        .eq("[[package]]".chars())
}

/// `key = "string"` (or a literal `'string'`) on one trimmed line.
fn toml_string_pair(line: &str) -> Option<(&str, Cow<'_, str>)> {
    let (key, value) = line.split_once('=')?;
    let key = unquote(key.trim());
    let value = value.trim_start();
    let string = if let Some(rest) = value.strip_prefix('\'') {
        if rest.starts_with("''") {
            return None;
        }
        Cow::Borrowed(&rest[..rest.find('\'')?])
    } else {
        let rest = value.strip_prefix('"')?;
        if rest.starts_with("\"\"") {
            return None;
        }
        let end = rest.find(['"', '\\'])?;
        if rest[end..].starts_with('"') {
            return Some((key, Cow::Borrowed(&rest[..end])));
        }
        // Backslash escapes keep the escaped character; names and versions
        // never need more than `\"` and `\\`.
        let mut out = String::new();
        let mut chars = rest.chars();
        loop {
            match chars.next()? {
                '"' => break Cow::Owned(out),
                '\\' => out.push(chars.next()?),
                c => out.push(c),
            }
        }
    };
    Some((key, string))
}

/// Tracks, across lines, whether we are inside a TOML value that spans lines:
/// an array or inline table (by bracket depth) or a multi-line string.
#[derive(Default)]
struct TomlScanner {
    depth: usize,
    /// The closing delimiter of the multi-line string we are in, if any.
    multiline: Option<&'static [u8]>,
}

impl TomlScanner {
    fn inside_value(&self) -> bool {
        self.depth > 0 || self.multiline.is_some()
    }

    fn scan(&mut self, line: &str) {
        let bytes = line.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if let Some(delimiter) = self.multiline {
                let escapes = delimiter == b"\"\"\"";
                match find_delimiter(bytes, i, delimiter, escapes) {
                    Some(end) => {
                        self.multiline = None;
                        i = end;
                    }
                    None => return,
                }
                continue;
            }
            match bytes[i] {
                b'#' => return,
                quote @ (b'"' | b'\'') => {
                    if bytes[i..].starts_with(&[quote, quote, quote]) {
                        self.multiline = Some(if quote == b'"' { b"\"\"\"" } else { b"'''" });
                        i += 3;
                        continue;
                    }
                    i += 1;
                    while i < bytes.len() && bytes[i] != quote {
                        if quote == b'"' && bytes[i] == b'\\' {
                            i += 1;
                        }
                        i += 1;
                    }
                    i += 1;
                }
                b'[' | b'{' => {
                    self.depth += 1;
                    i += 1;
                }
                b']' | b'}' => {
                    self.depth = self.depth.saturating_sub(1);
                    i += 1;
                }
                _ => i += 1,
            }
        }
    }
}

/// The index just past `delimiter` in `bytes[from..]`, skipping backslash
/// escapes when `escapes` is set.
fn find_delimiter(bytes: &[u8], from: usize, delimiter: &[u8], escapes: bool) -> Option<usize> {
    let mut i = from;
    while i < bytes.len() {
        if escapes && bytes[i] == b'\\' {
            i += 2;
            continue;
        }
        if bytes[i..].starts_with(delimiter) {
            return Some(i + delimiter.len());
        }
        i += 1;
    }
    None
}

// ---------------------------------------------------------------------------
// JSON lockfiles: package-lock.json, npm-shrinkwrap.json, composer.lock
//
// The JSON is read with `serde` visitors that record names and versions as
// they stream past, borrowing strings from the input where they have no
// escapes: building a `serde_json::Value` (or maps of owned strings) for a
// 1 MB lockfile would cost several times more, all of it in allocation.

fn json_error(err: serde_json::Error) -> ParseError {
    match err.classify() {
        serde_json::error::Category::Data => ParseError::UnexpectedJson(err),
        _ => ParseError::NotJson(err),
    }
}

/// Rejects JSON whose top level is not an object before `serde` gets to it:
/// a derived struct would also accept an array, field by field, and report a
/// confusing error about its first element.
fn require_json_object(text: &str) -> Result<(), ParseError> {
    if text.trim_start().starts_with('{') {
        return Ok(());
    }
    serde_json::from_str::<IgnoredAny>(text).map_err(json_error)?;
    Err(ParseError::UnexpectedJson(serde::de::Error::custom(
        "the top level is not an object",
    )))
}

/// Runs `seed` over the whole of `text`, trailing characters included.
fn json_with_seed<'de, S: DeserializeSeed<'de>>(
    text: &'de str,
    seed: S,
) -> Result<S::Value, ParseError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = seed.deserialize(&mut de).map_err(json_error)?;
    de.end().map_err(json_error)?;
    Ok(value)
}

/// A JSON string, borrowed from the input when it has no escapes.
struct Text<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(s.to_owned())))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(s)))
            }
        }
        de.deserialize_str(TextVisitor)
    }
}

/// Any JSON value, kept only when it is a string (a version written as a
/// number, say, is skipped rather than failing the whole file).
#[derive(Default)]
struct LenientText<'de>(Option<Cow<'de, str>>);

/// Any JSON value, true only when it is `true`.
#[derive(Default)]
struct LenientTrue(bool);

/// Accepts any JSON value, keeping strings and booleans and telling objects
/// from other values.
struct LenientVisitor;

enum Lenient<'de> {
    Text(Cow<'de, str>),
    Bool(bool),
    Map,
    Other,
}

impl<'de> Visitor<'de> for LenientVisitor {
    type Value = Lenient<'de>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Lenient<'de>, E> {
        Ok(Lenient::Text(Cow::Borrowed(s)))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Lenient<'de>, E> {
        Ok(Lenient::Text(Cow::Owned(s.to_owned())))
    }
    fn visit_string<E: de::Error>(self, s: String) -> Result<Lenient<'de>, E> {
        Ok(Lenient::Text(Cow::Owned(s)))
    }
    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Lenient<'de>, E> {
        Ok(Lenient::Bool(b))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Lenient<'de>, E> {
        Ok(Lenient::Other)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Lenient<'de>, E> {
        Ok(Lenient::Other)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Lenient<'de>, E> {
        Ok(Lenient::Other)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Lenient<'de>, E> {
        Ok(Lenient::Other)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Lenient<'de>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Lenient::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Lenient<'de>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Lenient::Map)
    }
}

impl<'de> Deserialize<'de> for Lenient<'de> {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        de.deserialize_any(LenientVisitor)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for LenientText<'a> {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        Ok(match de.deserialize_any(LenientVisitor)? {
            Lenient::Text(text) => LenientText(Some(text)),
            _ => LenientText(None),
        })
    }
}

impl<'de> Deserialize<'de> for LenientTrue {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        Ok(LenientTrue(matches!(
            de.deserialize_any(LenientVisitor)?,
            Lenient::Bool(true)
        )))
    }
}

const NPM_EXPECTED: &str = "a `packages` or `dependencies` object";

/// Lockfile versions 2 and 3 list every installed package in `packages`,
/// keyed by install path; version 1 nests `dependencies` objects instead.
/// Version 2 has both: its `dependencies` tree is skipped in a first pass and
/// read in a second one only when `packages` is missing, so no package is
/// counted twice and no file pays for both.
fn parse_npm(text: &str) -> Result<Packages, ParseError> {
    require_json_object(text)?;
    let mut packages = Packages::new();
    let found = json_with_seed(
        text,
        NpmTop {
            packages: &mut packages,
            v1: false,
        },
    )?;
    if found.packages {
        return Ok(packages);
    }
    if !found.dependencies {
        return Err(ParseError::NoPackages {
            expected: NPM_EXPECTED,
        });
    }
    json_with_seed(
        text,
        NpmTop {
            packages: &mut packages,
            v1: true,
        },
    )?;
    Ok(packages)
}

/// Which of the two package sections a package-lock.json has (as objects).
struct NpmSections {
    packages: bool,
    dependencies: bool,
}

/// The top-level object: reads `packages`, or with `v1` the `dependencies`
/// tree, and skips everything else.
struct NpmTop<'p> {
    packages: &'p mut Packages,
    v1: bool,
}

impl<'de> DeserializeSeed<'de> for NpmTop<'_> {
    type Value = NpmSections;
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<NpmSections, D::Error> {
        de.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for NpmTop<'_> {
    type Value = NpmSections;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a package-lock.json object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<NpmSections, A::Error> {
        let mut found = NpmSections {
            packages: false,
            dependencies: false,
        };
        while let Some(key) = map.next_key::<Text<'de>>()? {
            match key.0.as_ref() {
                "packages" if !self.v1 => {
                    found.packages = map.next_value_seed(NpmInstalled(&mut *self.packages))?;
                }
                "dependencies" if self.v1 => {
                    found.dependencies = map.next_value_seed(NpmTree(&mut *self.packages))?;
                }
                "dependencies" => {
                    found.dependencies = matches!(map.next_value::<Lenient<'de>>()?, Lenient::Map);
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(found)
    }
}

/// One entry of the version 2/3 `packages` object.
#[derive(Deserialize)]
#[serde(expecting = "a package entry object")]
struct NpmPackage<'a> {
    #[serde(default, borrow)]
    version: LenientText<'a>,
    #[serde(default)]
    link: LenientTrue,
}

/// The version 2/3 `packages` object, keyed by install path; `null` counts
/// as absent. Yields whether it was an object.
struct NpmInstalled<'p>(&'p mut Packages);

impl<'de> DeserializeSeed<'de> for NpmInstalled<'_> {
    type Value = bool;
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<bool, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NpmInstalled<'_> {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a `packages` object")
    }
    fn visit_unit<E: de::Error>(self) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        const PREFIX: &str = "node_modules/";
        while let Some(path) = map.next_key::<Text<'de>>()? {
            let entry: NpmPackage<'de> = map.next_value()?;
            // The root entry `""` is the project itself and workspace folders
            // (`packages/foo`) are its own code: only installed packages count.
            let Some(at) = path.0.rfind(PREFIX) else {
                continue;
            };
            if entry.link.0 {
                continue;
            }
            if let Some(version) = &entry.version.0 {
                insert(self.0, &path.0[at + PREFIX.len()..], version);
            }
        }
        Ok(true)
    }
}

/// A version 1 `dependencies` object, `{name: {version, dependencies}}`,
/// walked recursively; `null` counts as absent. The recursion is bounded by
/// `serde_json`'s nesting limit. Yields whether it was an object.
struct NpmTree<'p>(&'p mut Packages);

impl<'de> DeserializeSeed<'de> for NpmTree<'_> {
    type Value = bool;
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<bool, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NpmTree<'_> {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a `dependencies` object")
    }
    fn visit_unit<E: de::Error>(self) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        while let Some(name) = map.next_key::<Text<'de>>()? {
            let version = map.next_value_seed(NpmDependency(&mut *self.0))?;
            if let Some(version) = version {
                insert(self.0, &name.0, &version);
            }
        }
        Ok(true)
    }
}

/// One version 1 dependency: yields its version after recording its nested
/// dependencies.
struct NpmDependency<'p>(&'p mut Packages);

impl<'de> DeserializeSeed<'de> for NpmDependency<'_> {
    type Value = Option<Cow<'de, str>>;
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        de.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for NpmDependency<'_> {
    type Value = Option<Cow<'de, str>>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a dependency object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut version = None;
        while let Some(key) = map.next_key::<Text<'de>>()? {
            match key.0.as_ref() {
                "version" => version = map.next_value::<LenientText<'de>>()?.0,
                "dependencies" => {
                    map.next_value_seed(NpmTree(&mut *self.0))?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(version)
    }
}

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
    name: LenientText<'a>,
    #[serde(default, borrow)]
    version: LenientText<'a>,
}

/// `packages` and `packages-dev` arrays of `{name, version}` objects.
fn parse_composer(text: &str) -> Result<Packages, ParseError> {
    require_json_object(text)?;
    let lock: ComposerLock<'_> = serde_json::from_str(text).map_err(json_error)?;
    if lock.packages.is_none() && lock.packages_dev.is_none() {
        return Err(ParseError::NoPackages {
            expected: "`packages` or `packages-dev` arrays",
        });
    }
    let mut packages = Packages::new();
    for package in lock.packages.iter().chain(&lock.packages_dev).flatten() {
        if let (Some(name), Some(version)) = (&package.name.0, &package.version.0) {
            insert(&mut packages, name, version);
        }
    }
    Ok(packages)
}

// ---------------------------------------------------------------------------
// yarn.lock

/// Classic (v1) and berry lockfiles: an unindented header line of
/// descriptors ending in `:`, then indented fields of which we read the
/// two-space `version "1.2.3"` (v1) or `version: 1.2.3` (berry). Berry's
/// `__metadata` block and the project's own `workspace:`, `link:` and
/// `portal:` entries are skipped.
fn parse_yarn(text: &str) -> Result<Packages, ParseError> {
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

// ---------------------------------------------------------------------------
// pnpm-lock.yaml

/// Entries under the top-level `packages:` key. Lockfile version 9 also lists
/// every package under `snapshots:` (once per peer set); reading `packages`
/// alone counts each version once. Keys are `/name/version_peers` (v5),
/// `/name@version(peers)` (v6) or `name@version` (v9), possibly quoted; an
/// entry with its own `version:` field (git, tarball and local packages)
/// uses that field, and its `name:` field when present.
fn parse_pnpm(text: &str) -> Result<Packages, ParseError> {
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

// ---------------------------------------------------------------------------
// go.sum

/// `module version[/go.mod] h1:hash` lines. go.sum also lists the go.mod
/// hashes of versions that were only consulted; they count as present, as
/// the line format does not tell them apart.
fn parse_go_sum(text: &str) -> Result<Packages, ParseError> {
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

// ---------------------------------------------------------------------------
// Gemfile.lock

/// In each `specs:` section (under `GEM`, `GIT`, `PATH` or `PLUGIN SOURCE`),
/// lines indented exactly four spaces are gems, `name (version)`; lines
/// indented six are their dependencies' requirements and are skipped. A
/// platform suffix (`1.15.4-x86_64-linux`) stays part of the version.
fn parse_gemfile(text: &str) -> Result<Packages, ParseError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Parses `text` and compares with `expected` (name, versions in any
    /// order).
    #[track_caller]
    fn check(kind: LockKind, text: &str, expected: &[(&str, &[&str])]) {
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
    fn parse_error(kind: LockKind, text: &str) -> String {
        match parse(kind, text) {
            Ok(packages) => panic!("expected an error, got {packages:?}"),
            Err(err) => err.to_string(),
        }
    }

    fn change(name: &str, old: &[&str], new: &[&str], kept: &[&str]) -> PackageChange {
        let list = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect();
        PackageChange {
            name: name.to_owned(),
            old: list(old),
            new: list(new),
            kept: list(kept),
        }
    }

    // -- kinds ---------------------------------------------------------------

    #[test]
    fn kind_of_matches_exact_file_names() {
        let cases = [
            ("Cargo.lock", Some(LockKind::Cargo)),
            ("crates/x/Cargo.lock", Some(LockKind::Cargo)),
            ("web/package-lock.json", Some(LockKind::Npm)),
            ("npm-shrinkwrap.json", Some(LockKind::Npm)),
            ("yarn.lock", Some(LockKind::Yarn)),
            ("pnpm-lock.yaml", Some(LockKind::Pnpm)),
            ("poetry.lock", Some(LockKind::Poetry)),
            ("py/uv.lock", Some(LockKind::Uv)),
            ("go.sum", Some(LockKind::GoSum)),
            ("Gemfile.lock", Some(LockKind::Bundler)),
            ("php\\composer.lock", Some(LockKind::Composer)),
            ("cargo.lock", None),
            ("Cargo.lock.orig", None),
            ("package.json", None),
            ("go.mod", None),
            ("Cargo.lock/README", None),
            ("", None),
        ];
        for (path, kind) in cases {
            assert_eq!(kind_of(path), kind, "{path}");
        }
    }

    #[test]
    fn kind_names_are_ecosystem_labels() {
        let names: Vec<&str> = LockKind::ALL.iter().map(|k| k.name()).collect();
        assert_eq!(
            names,
            [
                "Cargo", "npm", "Yarn", "pnpm", "Poetry", "uv", "Go", "Bundler", "Composer"
            ]
        );
        assert_eq!(LockKind::Npm.to_string(), "npm");
    }

    // -- TOML formats --------------------------------------------------------

    const CARGO_LOCK: &str = r#"# This file is automatically @generated by Cargo.
# It is not intended for manual editing.
version = 4

[[package]]
name = "memchr"
version = "2.7.4"
source = "registry+https://github.com/rust-lang/crates.io-index"
checksum = "78ca9ab1a0babb1e7d5695e3530886289c18cf2f87ec19a575a0abdce112e3a3"

[[package]]
name = "myapp"
version = "0.1.0"
dependencies = [
 "memchr",
 "serde",
 "syn 1.0.109",
 "syn 2.0.60",
]

[[package]]
name = "serde"
version = "1.0.200"
source = "registry+https://github.com/rust-lang/crates.io-index"

[[package]]
name = "syn"
version = "1.0.109"
source = "registry+https://github.com/rust-lang/crates.io-index"

[[package]]
name = "syn"
version = "2.0.60"
source = "registry+https://github.com/rust-lang/crates.io-index"
dependencies = [
 "unicode-ident",
]
"#;

    #[test]
    fn cargo_lock_with_two_versions_of_one_crate() {
        check(
            LockKind::Cargo,
            CARGO_LOCK,
            &[
                ("memchr", &["2.7.4"]),
                ("myapp", &["0.1.0"]),
                ("serde", &["1.0.200"]),
                ("syn", &["1.0.109", "2.0.60"]),
            ],
        );
    }

    #[test]
    fn cargo_lock_v1_metadata_table_is_ignored() {
        let text = r#"[[package]]
name = "libc"
version = "0.2.50"
source = "registry+https://github.com/rust-lang/crates.io-index"

[metadata]
"checksum libc 0.2.50 (registry+https://github.com/rust-lang/crates.io-index)" = "aab692d7759f5cd8c859e169db98ae5b52c924add2af5fbbca11d12fefb567c1"
name = "not-a-package"
version = "9.9.9"
"#;
        check(LockKind::Cargo, text, &[("libc", &["0.2.50"])]);
    }

    #[test]
    fn cargo_lock_tolerates_crlf_comments_and_key_order() {
        let text = "[[package]]\r\nversion = \"1.0.0\" # pinned\r\nname = \"a\"\r\n\r\n[ [package] ]\r\nname = 'b'\r\nversion = '2.0.0'\r\n";
        check(
            LockKind::Cargo,
            text,
            &[("a", &["1.0.0"]), ("b", &["2.0.0"])],
        );
    }

    #[test]
    fn poetry_lock_ignores_sub_tables_and_multiline_values() {
        let text = r#"# This file is automatically @generated by Poetry 1.8.2 and should not be changed by hand.

[[package]]
name = "certifi"
version = "2024.2.2"
description = "Python package for providing Mozilla's CA Bundle."
optional = false
python-versions = ">=3.6"
files = [
    {file = "certifi-2024.2.2-py3-none-any.whl", hash = "sha256:dc383c07b76109f368f6106eee2b593b04a011ea4d55f652c6ca24a754d1cdd1"},
    {file = "certifi-2024.2.2.tar.gz", hash = "sha256:0569859f95fc761b18b45ef421b1290a0f65f147e92a1e5eb3e635f9a5e4e66f"},
]

[[package]]
name = "requests"
version = "2.31.0"
description = """
A multi-line description that mentions
name = "fake"
version = "6.6.6"
"""
optional = false
python-versions = ">=3.7"

[package.dependencies]
certifi = ">=2017.4.17"
name = "not-a-package"

[package.extras]
socks = ["PySocks (>=1.5.6,!=1.5.7)"]

[metadata]
lock-version = "2.0"
python-versions = "^3.11"
content-hash = "0123"
"#;
        check(
            LockKind::Poetry,
            text,
            &[("certifi", &["2024.2.2"]), ("requests", &["2.31.0"])],
        );
    }

    #[test]
    fn uv_lock_skips_versionless_packages_and_nested_names() {
        let text = r#"version = 1
requires-python = ">=3.12"

[manifest]
members = ["member", "project"]

[[package]]
name = "anyio"
version = "4.4.0"
source = { registry = "https://pypi.org/simple" }
dependencies = [
    { name = "idna" },
    { name = "sniffio" },
]
sdist = { url = "https://files.pythonhosted.org/anyio-4.4.0.tar.gz", hash = "sha256:5aad", size = 170 }
wheels = [
    { url = "https://files.pythonhosted.org/anyio-4.4.0-py3-none-any.whl", hash = "sha256:c1b2", size = 86 },
]

[[package]]
name = "idna"
version = "3.7"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "member"
source = { virtual = "packages/member" }

[[package]]
name = "project"
version = "0.1.0"
source = { editable = "." }
dependencies = [
    { name = "anyio" },
]

[package.optional-dependencies]
dev = [
    { name = "pytest" },
]

[package.metadata]
requires-dist = [
    { name = "anyio", specifier = ">=4" },
]

[[package]]
name = "sniffio"
version = "1.3.1"
source = { registry = "https://pypi.org/simple" }
"#;
        check(
            LockKind::Uv,
            text,
            &[
                ("anyio", &["4.4.0"]),
                ("idna", &["3.7"]),
                ("project", &["0.1.0"]),
                ("sniffio", &["1.3.1"]),
            ],
        );
    }

    #[test]
    fn toml_lock_without_packages_is_an_error_unless_structured() {
        let message = parse_error(LockKind::Cargo, "hello world\n");
        assert_eq!(
            message,
            "no packages found (expected `[[package]]` tables with `name` and `version`)"
        );
        // A `[[package]]` table that lacks a version is structure, not garbage.
        check(
            LockKind::Uv,
            "version = 1\n\n[[package]]\nname = \"root\"\n",
            &[],
        );
    }

    // -- npm -----------------------------------------------------------------

    const NPM_V3: &str = r#"{
  "name": "web",
  "version": "1.0.0",
  "lockfileVersion": 3,
  "requires": true,
  "packages": {
    "": { "name": "web", "version": "1.0.0", "workspaces": ["packages/*"] },
    "node_modules/@babel/code-frame": {
      "version": "7.24.2",
      "resolved": "https://registry.npmjs.org/@babel/code-frame/-/code-frame-7.24.2.tgz",
      "integrity": "sha512-y5+tLQyV8pg3fsiln67BVLD1P13Eg4lh5RW9mF0zUuvLrv9uIQ4MCL+CRT+FTsBlBjcIan6PGsLcBN0m3ClUyQ==",
      "dependencies": { "picocolors": "^1.0.0" }
    },
    "node_modules/debug": { "version": "4.3.4" },
    "node_modules/ms": { "version": "2.1.2" },
    "node_modules/send/node_modules/debug": { "version": "2.6.9" },
    "node_modules/send/node_modules/ms": { "version": "2.0.0" },
    "node_modules/send": { "version": "0.18.0", "dev": true },
    "node_modules/@web/ui": { "resolved": "packages/ui", "link": true },
    "node_modules/optional-thing": { "optional": true },
    "packages/ui": { "name": "@web/ui", "version": "0.3.0" }
  }
}"#;

    #[test]
    fn npm_v3_packages_map() {
        check(
            LockKind::Npm,
            NPM_V3,
            &[
                ("@babel/code-frame", &["7.24.2"]),
                ("debug", &["2.6.9", "4.3.4"]),
                ("ms", &["2.0.0", "2.1.2"]),
                ("send", &["0.18.0"]),
            ],
        );
    }

    #[test]
    fn npm_v2_reads_packages_and_not_the_v1_section() {
        let text = r#"{
  "name": "web",
  "lockfileVersion": 2,
  "packages": {
    "": { "name": "web", "version": "1.0.0" },
    "node_modules/@types/node": { "version": "20.12.7" }
  },
  "dependencies": {
    "@types/node": { "version": "20.12.7" },
    "only-in-v1-section": { "version": "1.0.0" }
  }
}"#;
        check(LockKind::Npm, text, &[("@types/node", &["20.12.7"])]);
    }

    #[test]
    fn npm_v1_nested_dependencies() {
        let text = r#"{
  "name": "old",
  "version": "1.0.0",
  "lockfileVersion": 1,
  "requires": true,
  "dependencies": {
    "@types/node": { "version": "14.0.0", "dev": true },
    "ms": { "version": "2.1.2" },
    "send": {
      "version": "0.17.1",
      "requires": { "ms": "2.1.1" },
      "dependencies": {
        "ms": { "version": "2.1.1" },
        "debug": {
          "version": "2.6.9",
          "dependencies": { "ms": { "version": "2.0.0" } }
        }
      }
    }
  }
}"#;
        check(
            LockKind::Npm,
            text,
            &[
                ("@types/node", &["14.0.0"]),
                ("debug", &["2.6.9"]),
                ("ms", &["2.0.0", "2.1.1", "2.1.2"]),
                ("send", &["0.17.1"]),
            ],
        );
    }

    #[test]
    fn npm_errors_say_what_was_wrong() {
        let message = parse_error(LockKind::Npm, "{\"lockfileVersion\": 3, \"packages\": {");
        assert!(
            message.starts_with("not JSON: EOF while parsing"),
            "{message}"
        );
        let message = parse_error(LockKind::Npm, "<<<<<<< HEAD\n");
        assert!(message.starts_with("not JSON: "), "{message}");
        let message = parse_error(LockKind::Npm, "[1, 2]");
        assert_eq!(
            message,
            "unexpected JSON layout: the top level is not an object"
        );
        let message = parse_error(LockKind::Npm, "{\"lockfileVersion\": 3}");
        assert_eq!(
            message,
            "no packages found (expected a `packages` or `dependencies` object)"
        );
        // A project without dependencies is valid and empty.
        check(
            LockKind::Npm,
            r#"{"packages": {"": {"version": "1.0.0"}}}"#,
            &[],
        );
        // Odd value types are skipped, not fatal.
        check(
            LockKind::Npm,
            r#"{"packages": {"node_modules/a": {"version": 1, "link": "yes"}, "node_modules/b": {"version": "1.0.0"}}}"#,
            &[("b", &["1.0.0"])],
        );
    }

    // -- composer ------------------------------------------------------------

    #[test]
    fn composer_lock_includes_dev_packages() {
        let text = r#"{
    "_readme": ["This file locks the dependencies of your project to a known state"],
    "content-hash": "abc",
    "packages": [
        { "name": "monolog/monolog", "version": "3.6.0", "type": "library" },
        { "name": "psr/log", "version": "3.0.0" }
    ],
    "packages-dev": [
        { "name": "phpunit/phpunit", "version": "10.5.20" },
        { "name": "psr/log", "version": "2.0.0" }
    ],
    "aliases": [],
    "minimum-stability": "stable"
}"#;
        check(
            LockKind::Composer,
            text,
            &[
                ("monolog/monolog", &["3.6.0"]),
                ("phpunit/phpunit", &["10.5.20"]),
                ("psr/log", &["2.0.0", "3.0.0"]),
            ],
        );
        check(
            LockKind::Composer,
            r#"{"packages": [], "packages-dev": null}"#,
            &[],
        );
        let message = parse_error(LockKind::Composer, r#"{"content-hash": "abc"}"#);
        assert_eq!(
            message,
            "no packages found (expected `packages` or `packages-dev` arrays)"
        );
        let message = parse_error(LockKind::Composer, "[]");
        assert_eq!(
            message,
            "unexpected JSON layout: the top level is not an object"
        );
        let message = parse_error(LockKind::Composer, r#"{"packages": {"name": "a"}}"#);
        assert!(
            message.starts_with("unexpected JSON layout: invalid type: map, expected a sequence"),
            "{message}"
        );
        let message = parse_error(LockKind::Composer, "packages:\n");
        assert!(
            message.starts_with("not JSON: expected value at line 1"),
            "{message}"
        );
    }

    // -- yarn ----------------------------------------------------------------

    #[test]
    fn yarn_v1_lockfile() {
        let text = r#"# THIS IS AN AUTOGENERATED FILE. DO NOT EDIT THIS FILE DIRECTLY.
# yarn lockfile v1


"@babel/code-frame@^7.0.0", "@babel/code-frame@^7.10.4":
  version "7.12.13"
  resolved "https://registry.yarnpkg.com/@babel/code-frame/-/code-frame-7.12.13.tgz#dcfc826beef65e75c50e21d3837d7d95798dd658"
  integrity sha512-HV1Cm0Q3ZrpCR93tkWOYiuYIgLxZXZFVG2VgK+MBWjUqZTundupbfx2aXarXuw5Ko5aMcjtJgbSs4vUGBS5v6g==
  dependencies:
    "@babel/highlight" "^7.12.13"
    version "^1.0.0"

lodash@^4.17.20, lodash@^4.17.21:
  version "4.17.21"

lodash@^3.0.0:
  version "3.10.1"

"string-width-cjs@npm:string-width@^4.2.0":
  version "4.2.3"
"#;
        check(
            LockKind::Yarn,
            text,
            &[
                ("@babel/code-frame", &["7.12.13"]),
                ("lodash", &["3.10.1", "4.17.21"]),
                ("string-width-cjs", &["4.2.3"]),
            ],
        );
    }

    #[test]
    fn yarn_berry_lockfile() {
        let text = r#"# This file is generated by running "yarn install" inside your project.
# Manual changes might be lost - proceed with caution!

__metadata:
  version: 8
  cacheKey: 10c0

"@babel/code-frame@npm:^7.0.0, @babel/code-frame@npm:^7.24.2":
  version: 7.24.2
  resolution: "@babel/code-frame@npm:7.24.2"
  dependencies:
    "@babel/highlight": "npm:^7.24.2"
  checksum: 10c0/d1d4cba89475ab6aab7a88242e1fd73b15ecb9f30c109b69752956434d10a26a52cbd37727c4eca104b6d45227bd1dfce39a6a6f4a14c9b2f07f871e968cf406
  languageName: node
  linkType: hard

"resolve@npm:^1.20.0":
  version: 1.22.8
  resolution: "resolve@npm:1.22.8"

"resolve@patch:resolve@npm%3A^1.20.0#optional!builtin<compat/resolve>":
  version: 1.22.8
  resolution: "resolve@patch:resolve@npm%3A1.22.8#optional!builtin<compat/resolve>::version=1.22.8&hash=c3c19d"

"my-app@workspace:.":
  version: 0.0.0-use.local
  resolution: "my-app@workspace:."
  languageName: unknown
  linkType: soft

"local-lib@link:../lib::locator=my-app%40workspace%3A.":
  version: 0.0.0-use.local
"#;
        check(
            LockKind::Yarn,
            text,
            &[("@babel/code-frame", &["7.24.2"]), ("resolve", &["1.22.8"])],
        );
        // Only metadata and workspaces: a valid, empty lockfile.
        let empty =
            "__metadata:\n  version: 8\n\n\"app@workspace:.\":\n  version: 0.0.0-use.local\n";
        check(LockKind::Yarn, empty, &[]);
    }

    #[test]
    fn yarn_garbage_is_an_error() {
        let message = parse_error(LockKind::Yarn, "just some text\nwith lines\n");
        assert_eq!(
            message,
            "no packages found (expected entries like `name@range:` with a `version` field)"
        );
    }

    // -- pnpm ----------------------------------------------------------------

    #[test]
    fn pnpm_v5_keys_with_peer_suffixes() {
        let text = r#"lockfileVersion: 5.4

specifiers:
  react: ^17.0.2
  react-dom: ^17.0.2

dependencies:
  react: 17.0.2
  react-dom: 17.0.2_react@17.0.2

packages:

  /@babel/core/7.12.3:
    resolution: {integrity: sha512-0qXcZYKZp3/6N2jKYVxZv0aNCsxTSVCiK72DTiTYZAu7sjg73W0/aynWjMbiGd87EQL4WyA8reiJVh92AVla9g==}
    engines: {node: '>=6.9.0'}
    dev: true

  /@emotion/react/11.10.5_@types+react@18.0.0:
    resolution: {integrity: sha512-abc}
    peerDependencies:
      '@types/react': '*'

  /loose-envify/1.4.0:
    resolution: {integrity: sha512-def}
    hasBin: true

  /react-dom/17.0.2_react@17.0.2:
    resolution: {integrity: sha512-ghi}
    dependencies:
      version: 1.0.0

  /react/17.0.2:
    resolution: {integrity: sha512-jkl}
    dev: false

  /react/18.2.0:
    resolution: {integrity: sha512-mno}

  registry.npmjs.org/tarball-dep/-/tarball-dep-2.0.0.tgz:
    resolution: {tarball: https://registry.npmjs.org/tarball-dep/-/tarball-dep-2.0.0.tgz}
    name: tarball-dep
    version: 2.0.0
"#;
        check(
            LockKind::Pnpm,
            text,
            &[
                ("@babel/core", &["7.12.3"]),
                ("@emotion/react", &["11.10.5"]),
                ("loose-envify", &["1.4.0"]),
                ("react", &["17.0.2", "18.2.0"]),
                ("react-dom", &["17.0.2"]),
                ("tarball-dep", &["2.0.0"]),
            ],
        );
    }

    #[test]
    fn pnpm_v6_keys_with_peer_parentheses() {
        let text = r#"lockfileVersion: '6.0'

settings:
  autoInstallPeers: true
  excludeLinksFromLockfile: false

dependencies:
  react-dom:
    specifier: ^18.2.0
    version: 18.2.0(react@18.2.0)

packages:

  /@scope/a@1.2.3:
    resolution: {integrity: sha512-aaa}

  '/@tanstack/react-query@5.0.0(react@18.2.0)':
    resolution: {integrity: sha512-bbb}
    peerDependencies:
      react: ^18.0.0

  /react-dom@18.2.0(react@18.2.0):
    resolution: {integrity: sha512-ccc}

  /react@18.2.0:
    resolution: {integrity: sha512-ddd}
    engines: {node: '>=0.10.0'}

  file:packages/local:
    resolution: {directory: packages/local, type: directory}
    name: '@app/local'
    version: 0.1.0
"#;
        check(
            LockKind::Pnpm,
            text,
            &[
                ("@app/local", &["0.1.0"]),
                ("@scope/a", &["1.2.3"]),
                ("@tanstack/react-query", &["5.0.0"]),
                ("react", &["18.2.0"]),
                ("react-dom", &["18.2.0"]),
            ],
        );
    }

    #[test]
    fn pnpm_v9_reads_packages_not_snapshots() {
        let text = r#"lockfileVersion: '9.0'

settings:
  autoInstallPeers: true
  excludeLinksFromLockfile: false

importers:

  .:
    dependencies:
      react-dom:
        specifier: ^18.2.0
        version: 18.2.0(react@18.2.0)

packages:

  '@babel/code-frame@7.24.2':
    resolution: {integrity: sha512-y5+tLQyV8pg3fsiln67BVLD1P13Eg4lh5RW9mF0zUuvLrv9uIQ4MCL+CRT+FTsBlBjcIan6PGsLcBN0m3ClUyQ==}
    engines: {node: '>=6.9.0'}

  react-dom@18.2.0:
    resolution: {integrity: sha512-6IMTriUmvsjHUjNtEDudZfuDQUoWXVxKHhlEGSk81n4YFS+r/Kl99wXiwlVXtPBtJenozv2P+hxDsw9eA7Xo6g==}
    peerDependencies:
      react: ^18.2.0

  react@18.2.0:
    resolution: {integrity: sha512-/3IjMdb2L9QbBdWiW5e3P2/npwMBaU9mHCSCUzNln0ZCYbcfTsGbTJrU/kGemdH2IWmB2ioZ+zkxtmq6g09fGQ==}
    engines: {node: '>=0.10.0'}

snapshots:

  '@babel/code-frame@7.24.2': {}

  react-dom@18.2.0(react@18.2.0):
    dependencies:
      react: 18.2.0

  react@18.2.0: {}

  snapshot-only@1.0.0: {}
"#;
        check(
            LockKind::Pnpm,
            text,
            &[
                ("@babel/code-frame", &["7.24.2"]),
                ("react", &["18.2.0"]),
                ("react-dom", &["18.2.0"]),
            ],
        );
        check(
            LockKind::Pnpm,
            "lockfileVersion: '9.0'\n\nimporters:\n\n  .: {}\n",
            &[],
        );
        let message = parse_error(LockKind::Pnpm, "foo bar\n");
        assert_eq!(
            message,
            "no packages found (expected a `packages:` map keyed by `name@version`)"
        );
    }

    // -- go.sum --------------------------------------------------------------

    #[test]
    fn go_sum_merges_go_mod_lines() {
        let text = "github.com/BurntSushi/toml v1.3.2 h1:o7IhLm0Msx3BaB+n3Ag7L8EVlByGKpq14C2gzO/DOok=\n\
github.com/BurntSushi/toml v1.3.2/go.mod h1:CxXYINrC8qIiEnFrOxCa7Jy5BFHlXnUU2pbicEuybxQ=\n\
golang.org/x/sys v0.0.0-20220811171246-fbc7d0a398ab/go.mod h1:oPkhp1MJrh7nUepCBck5+mAzfO9JrbApNNgaTdGDITg=\n\
golang.org/x/sys v0.20.0 h1:Od9JTbYCk261bKm4M/mw7AklTlFYIa0bIp9BgSm1S8Y=\n\
golang.org/x/sys v0.20.0/go.mod h1:/VUhepiaJMQUp4+oa/7Zr1D23ma6VTLIYjOOTFZPUcA=\n";
        check(
            LockKind::GoSum,
            text,
            &[
                ("github.com/BurntSushi/toml", &["v1.3.2"]),
                (
                    "golang.org/x/sys",
                    &["v0.0.0-20220811171246-fbc7d0a398ab", "v0.20.0"],
                ),
            ],
        );
        let message = parse_error(LockKind::GoSum, "module example.com/x\n\ngo 1.22\n");
        assert_eq!(
            message,
            "no packages found (expected lines like `module version h1:hash`)"
        );
    }

    // -- Gemfile.lock --------------------------------------------------------

    #[test]
    fn gemfile_lock_reads_four_space_specs_only() {
        let text = "GIT
  remote: https://github.com/rails/rails.git
  revision: 0123456789abcdef
  branch: main
  specs:
    rails (7.2.0.alpha)
      actionpack (= 7.2.0.alpha)

PATH
  remote: .
  specs:
    myapp (0.1.0)
      rack (>= 2.0)

GEM
  remote: https://rubygems.org/
  specs:
    actionpack (7.1.3)
      rack (~> 3.0)
    nokogiri (1.15.4-arm64-darwin)
      racc (~> 1.4)
    nokogiri (1.15.4-x86_64-linux)
      racc (~> 1.4)
    rack (3.0.10)
    racc (1.7.3)

PLATFORMS
  arm64-darwin
  x86_64-linux

DEPENDENCIES
  myapp!
  nokogiri (~> 1.15)
  rails!

BUNDLED WITH
   2.5.6
";
        check(
            LockKind::Bundler,
            text,
            &[
                ("actionpack", &["7.1.3"]),
                ("myapp", &["0.1.0"]),
                ("nokogiri", &["1.15.4-arm64-darwin", "1.15.4-x86_64-linux"]),
                ("racc", &["1.7.3"]),
                ("rack", &["3.0.10"]),
                ("rails", &["7.2.0.alpha"]),
            ],
        );
        let message = parse_error(
            LockKind::Bundler,
            "source 'https://rubygems.org'\ngem 'rails'\n",
        );
        assert_eq!(
            message,
            "no packages found (expected `specs:` sections of `name (version)` lines)"
        );
    }

    #[test]
    fn blank_text_holds_no_packages() {
        for kind in LockKind::ALL {
            check(kind, "", &[]);
            check(kind, " \n\t\n", &[]);
        }
    }

    // -- ordering ------------------------------------------------------------

    #[test]
    fn versions_compare_numerically_by_component() {
        let ordered = [
            "0.9",
            "1.2.3",
            "1.9.0",
            "1.10.0",
            "1.10.0-beta",
            "2.0.0",
            "10.0.0",
            "99999999999999999999999.0",
            "v0.0.0-20220811171246-fbc7d0a398ab",
            "v0.20.0",
        ];
        for window in ordered.windows(2) {
            assert_eq!(
                compare_versions(window[0], window[1]),
                Ordering::Less,
                "{window:?}"
            );
            assert_eq!(
                compare_versions(window[1], window[0]),
                Ordering::Greater,
                "{window:?}"
            );
        }
        assert_eq!(compare_versions("1.01", "1.1"), "1.01".cmp("1.1"));
        assert_eq!(compare_versions("1.0", "1.0"), Ordering::Equal);
    }

    // -- summarize -----------------------------------------------------------

    #[test]
    fn summarize_changed_added_removed() {
        let old = "[[package]]\nname = \"serde\"\nversion = \"1.0.200\"\n\n\
[[package]]\nname = \"syn\"\nversion = \"1.0.109\"\n\n\
[[package]]\nname = \"syn\"\nversion = \"2.0.60\"\n\n\
[[package]]\nname = \"Winapi\"\nversion = \"0.3.9\"\n\n\
[[package]]\nname = \"windows-sys\"\nversion = \"0.52.0\"\n\n\
[[package]]\nname = \"same\"\nversion = \"1.0.0\"\n";
        let new = "[[package]]\nname = \"serde\"\nversion = \"1.0.210\"\n\n\
[[package]]\nname = \"syn\"\nversion = \"2.0.66\"\n\n\
[[package]]\nname = \"memchr\"\nversion = \"2.7.4\"\n\n\
[[package]]\nname = \"windows-sys\"\nversion = \"0.52.0\"\n\n\
[[package]]\nname = \"windows-sys\"\nversion = \"0.59.0\"\n\n\
[[package]]\nname = \"same\"\nversion = \"1.0.0\"\n";
        let summary = summarize("Cargo.lock", LockKind::Cargo, Some(old), Some(new));
        assert_eq!(summary.path, "Cargo.lock");
        assert_eq!(summary.kind, LockKind::Cargo);
        assert_eq!(summary.unparsed, None);
        assert_eq!(
            summary.changed,
            [
                change("serde", &["1.0.200"], &["1.0.210"], &[]),
                change("syn", &["1.0.109", "2.0.60"], &["2.0.66"], &[]),
                change("windows-sys", &[], &["0.59.0"], &["0.52.0"]),
            ]
        );
        assert_eq!(summary.added, [change("memchr", &[], &["2.7.4"], &[])]);
        assert_eq!(summary.removed, [change("Winapi", &["0.3.9"], &[], &[])]);
        assert_eq!(summary.package_count(), 5);
        assert!(!summary.is_empty());
        assert_eq!(
            summary.render(10),
            "Cargo.lock (Cargo): 3 changed, 1 added, 1 removed\n  \
changed: serde 1.0.200 → 1.0.210; syn 1.0.109, 2.0.60 → 2.0.66; windows-sys 0.52.0 → 0.52.0, 0.59.0\n  \
added: memchr 2.7.4\n  \
removed: Winapi 0.3.9"
        );
    }

    #[test]
    fn summarize_added_and_deleted_files() {
        let added = summarize("web/package-lock.json", LockKind::Npm, None, Some(NPM_V3));
        assert!(added.changed.is_empty() && added.removed.is_empty());
        let names: Vec<&str> = added.added.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["@babel/code-frame", "debug", "ms", "send"]);
        assert_eq!(
            added.added[1],
            change("debug", &[], &["2.6.9", "4.3.4"], &[])
        );

        let deleted = summarize("web/package-lock.json", LockKind::Npm, Some(NPM_V3), None);
        assert!(deleted.changed.is_empty() && deleted.added.is_empty());
        assert_eq!(deleted.removed.len(), 4);
        assert_eq!(
            deleted.render(2),
            "web/package-lock.json (npm): 4 removed\n  \
removed: @babel/code-frame 7.24.2; debug 2.6.9, 4.3.4; … and 2 more"
        );

        let neither = summarize("Cargo.lock", LockKind::Cargo, None, None);
        assert!(neither.is_empty());
    }

    #[test]
    fn unchanged_lockfile_is_empty() {
        let summary = summarize(
            "Cargo.lock",
            LockKind::Cargo,
            Some(CARGO_LOCK),
            Some(CARGO_LOCK),
        );
        assert!(summary.is_empty());
        assert_eq!(summary.package_count(), 0);
        assert_eq!(
            summary.render(5),
            "Cargo.lock (Cargo): no package version changes"
        );
        // Reordering entries changes nothing either.
        let reordered = "[[package]]\nname = \"syn\"\nversion = \"2.0.60\"\n\
[[package]]\nname = \"syn\"\nversion = \"1.0.109\"\n\
[[package]]\nname = \"serde\"\nversion = \"1.0.200\"\n\
[[package]]\nname = \"myapp\"\nversion = \"0.1.0\"\n\
[[package]]\nname = \"memchr\"\nversion = \"2.7.4\"\n";
        assert!(
            summarize(
                "Cargo.lock",
                LockKind::Cargo,
                Some(CARGO_LOCK),
                Some(reordered)
            )
            .is_empty()
        );
    }

    #[test]
    fn unparsable_side_is_reported_not_hidden() {
        let summary = summarize(
            "package-lock.json",
            LockKind::Npm,
            Some(NPM_V3),
            Some("{\"packages\": "),
        );
        assert!(!summary.is_empty());
        assert_eq!(summary.package_count(), 0);
        assert_eq!(
            summary.unparsed.as_deref(),
            Some("new content: not JSON: EOF while parsing a value at line 1 column 13")
        );
        assert_eq!(
            summary.render(10),
            "package-lock.json (npm): could not read package versions: \
new content: not JSON: EOF while parsing a value at line 1 column 13"
        );

        let both = summarize("go.sum", LockKind::GoSum, Some("x"), Some("y"));
        assert_eq!(
            both.unparsed.as_deref(),
            Some(
                "old content: no packages found (expected lines like `module version h1:hash`); \
new content: no packages found (expected lines like `module version h1:hash`)"
            )
        );
    }

    // -- render --------------------------------------------------------------

    fn many_changes() -> LockSummary {
        LockSummary {
            path: "yarn.lock".to_owned(),
            kind: LockKind::Yarn,
            changed: vec![
                change("a", &["1.0.0"], &["1.1.0"], &[]),
                change("b", &["2.0.0"], &["3.0.0"], &[]),
                change("c", &["0.1.0"], &["0.2.0"], &[]),
            ],
            added: vec![
                change("d", &[], &["1.0.0"], &[]),
                change("e", &[], &["2.0.0"], &[]),
            ],
            removed: vec![change("f", &["1.0.0"], &[], &[])],
            unparsed: None,
        }
    }

    #[test]
    fn render_shares_max_entries_among_the_groups() {
        let summary = many_changes();
        assert_eq!(
            summary.render(4),
            "yarn.lock (Yarn): 3 changed, 2 added, 1 removed\n  \
changed: a 1.0.0 → 1.1.0; b 2.0.0 → 3.0.0; … and 1 more\n  \
added: d 1.0.0; … and 1 more\n  \
removed: f 1.0.0"
        );
        assert_eq!(
            summary.render(2),
            "yarn.lock (Yarn): 3 changed, 2 added, 1 removed\n  \
changed: a 1.0.0 → 1.1.0; … and 2 more\n  \
added: d 1.0.0; … and 1 more\n  \
removed: … and 1 more"
        );
        assert_eq!(
            summary.render(0),
            "yarn.lock (Yarn): 3 changed, 2 added, 1 removed\n  \
changed: … and 3 more\n  \
added: … and 2 more\n  \
removed: … and 1 more"
        );
        assert_eq!(
            summary.render(usize::MAX),
            "yarn.lock (Yarn): 3 changed, 2 added, 1 removed\n  \
changed: a 1.0.0 → 1.1.0; b 2.0.0 → 3.0.0; c 0.1.0 → 0.2.0\n  \
added: d 1.0.0; e 2.0.0\n  \
removed: f 1.0.0"
        );
    }

    #[test]
    fn render_keeps_a_reason_on_one_line() {
        let summary = LockSummary {
            unparsed: Some("bad\nthing".to_owned()),
            ..many_changes()
        };
        assert_eq!(
            summary.render(3),
            "yarn.lock (Yarn): could not read package versions: bad thing"
        );
    }

    #[test]
    fn display_of_a_package_that_lost_a_version() {
        let lost = change("syn", &["1.0.109"], &[], &["2.0.66"]);
        assert_eq!(lost.to_string(), "syn 1.0.109, 2.0.66 → 2.0.66");
    }

    // -- robustness ----------------------------------------------------------

    /// Samples to mangle, one or more per format.
    fn samples() -> Vec<&'static str> {
        vec![
            CARGO_LOCK,
            NPM_V3,
            "{\"dependencies\": {\"a\": {\"version\": \"1\", \"dependencies\": {\"b\": {\"version\": \"2\"}}}}}",
            "{\"packages\": [{\"name\": \"a/b\", \"version\": \"1\"}], \"packages-dev\": []}",
            "\"@a/b@^1\", \"@a/b@^2\":\n  version \"1.2.3\"\n\n__metadata:\n  version: 8\n\"c@npm:1\":\n  version: 1.0.0\n",
            "lockfileVersion: 5.4\npackages:\n  /a/1.0.0_b@2.0.0:\n    dev: true\n  '/@s/c@1.0.0(d@1.0.0)':\n    name: x\n    version: 2\n",
            "github.com/a/b v1.0.0 h1:abc=\ngithub.com/a/b v1.0.0/go.mod h1:def=\n",
            "GEM\n  remote: https://rubygems.org/\n  specs:\n    rack (3.0.0)\n      x (~> 1)\n",
            "[[package]]\nname = \"a\"\nversion = \"1\"\ndeps = [\n { name = \"b\" },\n]\ndesc = \"\"\"\nx\n\"\"\"\n",
        ]
    }

    fn exercise(text: &str) {
        for kind in LockKind::ALL {
            let _ = parse(kind, text);
            let summary = summarize("lock", kind, Some(text), Some(CARGO_LOCK));
            let _ = summary.render(3);
            let summary = summarize("lock", kind, None, Some(text));
            let _ = summary.render(0);
        }
    }

    proptest! {
        #[test]
        fn never_panics_on_arbitrary_text(text in any::<String>()) {
            exercise(&text);
        }

        #[test]
        fn never_panics_on_lockfile_like_text(
            text in "([\\[\\]{}\"'#:@/(),=_ \n\t\r\\\\.a-z0-9é→-]|node_modules/|version|name|packages|specs:|\\[\\[package\\]\\]|\"\"\"|    |  ){0,80}"
        ) {
            exercise(&text);
        }

        #[test]
        fn never_panics_on_mangled_samples(
            sample in 0..9usize,
            cut in any::<prop::sample::Index>(),
            noise in "[\\[\\]{}\"':@/(), \n_a-z0-9.é]{0,12}",
            truncate in any::<bool>(),
        ) {
            let text = samples()[sample];
            let boundaries: Vec<usize> = text
                .char_indices()
                .map(|(i, _)| i)
                .chain([text.len()])
                .collect();
            let at = boundaries[cut.index(boundaries.len())];
            let mangled = if truncate {
                text[..at].to_owned()
            } else {
                format!("{}{noise}{}", &text[..at], &text[at..])
            };
            exercise(&mangled);
        }
    }
}
