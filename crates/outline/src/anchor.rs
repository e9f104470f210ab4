//! Anchor resolution: which units of an outline a name like
//! `MqttClient::connect`, `connect` or `Client.connect` refers to.
//!
//! Three tiers; the first that matches anything wins:
//! 1. **Exact**: the query equals a unit's qualified name.
//! 2. **Unqualified**: the query equals a unit's name, or is a `::`-suffix of
//!    its qualified name (`Client::connect` matches `net::Client::connect`).
//! 3. **Fuzzy**: the smallest Levenshtein distance (on characters) between
//!    the query and the unit's name, its qualified name, or any `::`-suffix of
//!    it is at most [`MAX_FUZZY_DISTANCE`]; every unit at the minimal distance
//!    matches, with a warning.
//!
//! Separators do not matter: outlines qualify names in each language's own
//! style (`Client::connect` in Rust and C++, `Client.connect` in Python,
//! Java, JavaScript, TypeScript and Go), and queries and names are compared
//! with every `.` read as `::`, so either form resolves in every language
//! (and old notes' `Type::method` anchors keep resolving in Python).
//! Within a tier, impl blocks give way to other units (see
//! [`resolve_anchor`]).

use std::fmt;

use crate::{Unit, UnitKind};

/// The largest edit distance a fuzzy match accepts.
///
/// Short names accept less: the distance must also be smaller than the
/// shorter string's length in characters, so `id` never "matches" `new`.
/// Part of the published API: the bound of [`MatchKind::Fuzzy`]'s distance.
pub const MAX_FUZZY_DISTANCE: usize = 3;

/// How many available anchors [`AnchorError::NotFound`]'s message lists.
const LISTED_ANCHORS: usize = 30;

/// How a name matched. Orders from best (`Exact`) to worst (the largest
/// fuzzy distance).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MatchKind {
    /// The query is the unit's qualified name.
    Exact,
    /// The query is the unit's name or a `::`-suffix of its qualified name.
    Unqualified,
    /// The query is within `distance` edits of the unit's name.
    Fuzzy {
        /// The Levenshtein distance, 1..=[`MAX_FUZZY_DISTANCE`] (0 only when
        /// two names differ in nothing but separators or spacing).
        distance: u32,
    },
}

/// The units an anchor resolved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnchorResolution {
    /// The tier that matched.
    pub match_kind: MatchKind,
    /// The matched units, in outline order; never empty.
    pub units: Vec<Unit>,
    /// More than one unit matched (e.g. the same method name in two impls).
    pub ambiguous: bool,
    /// Set for fuzzy matches: what the caller should tell the user.
    pub warning: Option<String>,
}

/// Why an anchor did not resolve.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnchorError {
    /// The query was empty (or only whitespace and separators).
    #[error("empty anchor: name a function, type or other unit of the file")]
    EmptyQuery,
    /// Nothing matched, not even fuzzily.
    #[error("{}", NotFoundMessage { query, available })]
    NotFound {
        /// The query as given (trimmed).
        query: String,
        /// Every qualified name of the outline, sorted and deduplicated.
        available: Vec<String>,
    },
}

struct NotFoundMessage<'a> {
    query: &'a str,
    available: &'a [String],
}

impl fmt::Display for NotFoundMessage<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "anchor '{}' not found", self.query)?;
        if self.available.is_empty() {
            return f.write_str("; the file has no anchors");
        }
        f.write_str("; available anchors: ")?;
        for (index, name) in self.available.iter().take(LISTED_ANCHORS).enumerate() {
            if index > 0 {
                f.write_str(", ")?;
            }
            f.write_str(name)?;
        }
        if self.available.len() > LISTED_ANCHORS {
            write!(f, " and {} more", self.available.len() - LISTED_ANCHORS)?;
        }
        Ok(())
    }
}

/// Resolves `query` against an outline.
///
/// Within a tier, `impl` units give way to other units: `Foo` resolves to
/// `struct Foo` rather than also to `impl Foo`, so a type query is not made
/// ambiguous by its impl blocks. An impl is still found when only impls
/// match (`Display for Foo`, or `Foo` when the struct lives elsewhere), and
/// a query `impl Foo` considers impl units only.
pub fn resolve_anchor(units: &[Unit], query: &str) -> Result<AnchorResolution, AnchorError> {
    let normalized = normalize(query);
    // `impl Foo` addresses the impl blocks of `Foo` rather than the type.
    let (normalized, only_impls) = match normalized.strip_prefix("impl ") {
        Some(target) => (target.trim().to_owned(), true),
        None => (normalized, false),
    };
    if normalized.is_empty() {
        return Err(AnchorError::EmptyQuery);
    }
    // Each unit with its qualified name in `::` form.
    let candidates: Vec<(&Unit, String)> = units
        .iter()
        .filter(|unit| !only_impls || unit.kind == UnitKind::Impl)
        .map(|unit| (unit, normalize(&unit.qualified_name)))
        .collect();

    let exact: Vec<&Unit> = candidates
        .iter()
        .filter(|(_, qualified)| *qualified == normalized)
        .map(|(unit, _)| *unit)
        .collect();
    if !exact.is_empty() {
        return Ok(resolution(MatchKind::Exact, exact, None));
    }

    let unqualified: Vec<&Unit> = candidates
        .iter()
        .filter(|(unit, qualified)| unit.name == normalized || is_suffix(qualified, &normalized))
        .map(|(unit, _)| *unit)
        .collect();
    if !unqualified.is_empty() {
        return Ok(resolution(MatchKind::Unqualified, unqualified, None));
    }

    let mut best = usize::MAX;
    let mut closest: Vec<&Unit> = Vec::new();
    for (unit, qualified) in &candidates {
        let Some(distance) = unit_distance(&normalized, unit, qualified) else {
            continue;
        };
        if distance < best {
            best = distance;
            closest.clear();
        }
        if distance == best {
            closest.push(*unit);
        }
    }
    if closest.is_empty() {
        let mut available: Vec<String> = units
            .iter()
            .map(|unit| unit.qualified_name.clone())
            .collect();
        available.sort();
        available.dedup();
        return Err(AnchorError::NotFound {
            query: query.trim().to_owned(),
            available,
        });
    }
    let closest = prefer_non_impl(closest);
    let names: Vec<String> = closest
        .iter()
        .map(|unit| format!("'{}'", unit.qualified_name))
        .collect();
    let warning = format!(
        "anchor '{}' not found; using closest match{} {} (edit distance {best})",
        query.trim(),
        if names.len() > 1 { "es" } else { "" },
        names.join(", "),
    );
    let distance = u32::try_from(best).unwrap_or(u32::MAX);
    Ok(resolution(
        MatchKind::Fuzzy { distance },
        closest,
        Some(warning),
    ))
}

/// Matches a free-standing name (e.g. an annotation's `ast_anchor.name`)
/// against a query with the tiers of [`resolve_anchor`]; `None` if neither
/// is within fuzzy distance of the other.
///
/// The unqualified tier works both ways: either name may be a `::`-suffix of
/// the other (`connect` ~ `Client::connect` ~ `net::Client::connect`).
pub fn match_name(query: &str, candidate_qualified: &str) -> Option<MatchKind> {
    let query = normalize(query);
    let candidate = normalize(candidate_qualified);
    if query.is_empty() || candidate.is_empty() {
        return None;
    }
    if let Some(kind) = strict_match(&query, &candidate) {
        return Some(kind);
    }
    let forward = suffixes(&candidate).filter_map(|suffix| fuzzy_distance(&query, suffix));
    let backward = suffixes(&query).filter_map(|suffix| fuzzy_distance(suffix, &candidate));
    let distance = forward.chain(backward).min()?;
    Some(MatchKind::Fuzzy {
        distance: u32::try_from(distance).unwrap_or(u32::MAX),
    })
}

/// [`MatchKind::Exact`] or [`MatchKind::Unqualified`] for two normalized,
/// non-empty names; `None` for anything fuzzier.
fn strict_match(query: &str, candidate: &str) -> Option<MatchKind> {
    if query == candidate {
        Some(MatchKind::Exact)
    } else if is_suffix(candidate, query) || is_suffix(query, candidate) {
        Some(MatchKind::Unqualified)
    } else {
        None
    }
}

/// How well an annotation's anchor still fits the current code (spec 003
/// §4.7 "Anchor stability").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stability {
    /// The name matches and so does the signature (whitespace ignored), or no
    /// signature was recorded.
    Exact,
    /// The name matches but no matching unit has the recorded signature.
    SignatureChanged,
    /// No unit has the name: the anchor was renamed or removed.
    NotFound,
}

impl Stability {
    /// The confidence factor of spec 003: 1.0, 0.7 or 0.3.
    pub fn score(self) -> f64 {
        match self {
            Stability::Exact => 1.0,
            Stability::SignatureChanged => 0.7,
            Stability::NotFound => 0.3,
        }
    }
}

/// Compares an annotation's anchor (`name`, optional `signature`) with the
/// current outline.
///
/// The name matches exactly or unqualified (never fuzzily: a renamed unit is
/// [`Stability::NotFound`]); units matching exactly are preferred. Signatures
/// compare with all whitespace removed and a trailing `{`, `:` or `;`
/// ignored.
pub fn anchor_stability(units: &[Unit], anchor_name: &str, signature: Option<&str>) -> Stability {
    // Only exact and unqualified matches count: no edit distance is
    // computed (a read scores every region against every unit of its file).
    let query = normalize(anchor_name);
    let matches: Vec<(&Unit, MatchKind)> = if query.is_empty() {
        Vec::new()
    } else {
        units
            .iter()
            .filter_map(|unit| {
                let candidate = normalize(&unit.qualified_name);
                if candidate.is_empty() {
                    return None;
                }
                Some((unit, strict_match(&query, &candidate)?))
            })
            .collect()
    };
    let best = matches.iter().map(|(_, kind)| *kind).min();
    let Some(best) = best else {
        return Stability::NotFound;
    };
    let recorded = signature.map(squeeze).unwrap_or_default();
    if recorded.is_empty() {
        return Stability::Exact;
    }
    let same_signature = matches
        .iter()
        .filter(|(_, kind)| *kind == best)
        .any(|(unit, _)| signature_matches(&unit.signature, &recorded));
    if same_signature {
        Stability::Exact
    } else {
        Stability::SignatureChanged
    }
}

/// The Levenshtein (edit) distance between `a` and `b`, counted in
/// characters (Unicode scalar values, not bytes): the distance fuzzy anchor
/// matching uses. A thin wrapper over [`strsim::levenshtein`], kept so the
/// unit is part of this crate's contract.
pub fn levenshtein(a: &str, b: &str) -> usize {
    strsim::levenshtein(a, b)
}

fn resolution(kind: MatchKind, units: Vec<&Unit>, warning: Option<String>) -> AnchorResolution {
    let units: Vec<Unit> = prefer_non_impl(units).into_iter().cloned().collect();
    AnchorResolution {
        match_kind: kind,
        ambiguous: units.len() > 1,
        units,
        warning,
    }
}

/// Drops impl units when other units matched too.
fn prefer_non_impl(units: Vec<&Unit>) -> Vec<&Unit> {
    let impls = units
        .iter()
        .filter(|unit| unit.kind == UnitKind::Impl)
        .count();
    if impls == 0 || impls == units.len() {
        return units;
    }
    units
        .into_iter()
        .filter(|unit| unit.kind != UnitKind::Impl)
        .collect()
}

/// Trimmed, `.` separators turned into `::`, whitespace collapsed.
fn normalize(name: &str) -> String {
    let name = name.split_whitespace().collect::<Vec<_>>().join(" ");
    let name = name.replace('.', "::");
    name.trim_matches(':').trim().to_owned()
}

/// Whether `suffix` is a `::`-suffix of `qualified` (and shorter than it).
fn is_suffix(qualified: &str, suffix: &str) -> bool {
    qualified.len() > suffix.len()
        && qualified.ends_with(suffix)
        && qualified[..qualified.len() - suffix.len()].ends_with("::")
}

/// `a::b::c`, `b::c`, `c`.
fn suffixes(qualified: &str) -> impl Iterator<Item = &str> {
    std::iter::once(qualified).chain(
        qualified
            .match_indices("::")
            .map(move |(index, separator)| &qualified[index + separator.len()..])
            .filter(|suffix| !suffix.is_empty()),
    )
}

/// The smallest accepted distance between `query` and the unit's name or a
/// suffix of its qualified name (`qualified`, in `::` form).
fn unit_distance(query: &str, unit: &Unit, qualified: &str) -> Option<usize> {
    std::iter::once(unit.name.as_str())
        .chain(suffixes(qualified))
        .filter_map(|candidate| fuzzy_distance(query, candidate))
        .min()
}

/// The edit distance between `a` and `b` if a fuzzy match accepts it.
fn fuzzy_distance(a: &str, b: &str) -> Option<usize> {
    let (len_a, len_b) = (a.chars().count(), b.chars().count());
    let limit = MAX_FUZZY_DISTANCE.min(len_a.min(len_b).saturating_sub(1));
    if len_a.abs_diff(len_b) > limit {
        return None;
    }
    let distance = levenshtein(a, b);
    (distance <= limit).then_some(distance)
}

/// A signature with all whitespace removed and a trailing `{`, `:` or `;`
/// dropped.
fn squeeze(signature: &str) -> String {
    let squeezed: String = signature.chars().filter(|c| !c.is_whitespace()).collect();
    squeezed.trim_end_matches(['{', ':', ';']).to_owned()
}

/// Whether a current signature (possibly cut with `…`) equals a squeezed
/// recorded one.
fn signature_matches(current: &str, recorded: &str) -> bool {
    let current = squeeze(current);
    match current.strip_suffix('…') {
        Some(prefix) => recorded.starts_with(prefix),
        None => current == recorded,
    }
}

#[cfg(test)]
mod tests {
    use super::{is_suffix, normalize, squeeze, suffixes};

    #[test]
    fn normalizes_separators_and_space() {
        let check = |query, normalized| assert_eq!(normalize(query), normalized, "{query:?}");
        check("  Client.connect ", "Client::connect");
        check("Display  for\tFoo", "Display for Foo");
        check("::", "");
        check(" . ", "");
    }

    #[test]
    fn suffix_needs_a_separator_boundary() {
        for (name, suffix, expected) in [
            ("net::Client::connect", "Client::connect", true),
            ("net::Client::connect", "connect", true),
            ("net::Client::connect", "nect", false),
            ("connect", "connect", false),
        ] {
            assert_eq!(is_suffix(name, suffix), expected, "{suffix} of {name}");
        }
    }

    #[test]
    fn lists_suffixes() {
        let all: Vec<&str> = suffixes("a::b::c").collect();
        assert_eq!(all, ["a::b::c", "b::c", "c"]);
    }

    #[test]
    fn squeezes_signatures() {
        assert_eq!(squeeze("def f(a, b) :"), "deff(a,b)");
        assert_eq!(squeeze("fn f( a: u8 ) {"), "fnf(a:u8)");
    }
}
