//! The `ultragit-read/v1` output of `ultragit read` (spec 003 §3.2, §4.8, §5).
//!
//! JSON field names are the Rust field names, except `schema`, which is
//! `"$schema"`. A [`ScoredRegion`] nests its annotation under `"region"`.
//!
//! [`ReadOutput::to_json_value`] renders the two shapes of spec 003 §4.8:
//! - **verbose**: every field, with `null` and `[]` included — including the
//!   region fields the `ultragit/v1` note omits when empty (`reasoning`,
//!   `constraints`, `semantic_dependencies`, `related_annotations`, `tags`,
//!   `risk_notes`, `ast_anchor.signature`), which are inserted as `null`/`[]`.
//! - **compact** (default output): object members that are `null`, `""`,
//!   `[]` or `{}` are dropped, recursively (array elements are never dropped,
//!   so positions keep their meaning). Two exceptions: the top-level
//!   `$schema`, `query`, `regions` and `stats` always stay, and every region
//!   object always has `intent` and `constraints` (`[]` when empty) —
//!   **Invariant:** a region present in the output has intent and
//!   constraints.
//!
//! Fields added after the first release that are `Option`s or lists marked
//! "omitted when empty" (`ScoredRegion::commit_date`,
//! `ScoredRegion::changed_since`) are left out of both shapes when empty, so
//! older consumers see the same documents as before.
//!
//! Object keys in these values are sorted, so the text is the same whether or
//! not some other crate in the build enables `serde_json/preserve_order`.
//!
//! Reading is tolerant: lists, options, strings and flags missing from the
//! JSON read as empty, so compact output reads back into the same values.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::annotation::{ContextLevel, LineRange, RegionAnnotation};
use crate::correction::AppliedCorrection;

/// The `$schema` value of every read output and read error.
pub const READ_SCHEMA_V1: &str = "ultragit-read/v1";

/// The complete output of a read query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadOutput {
    /// Schema id, [`READ_SCHEMA_V1`].
    #[serde(rename = "$schema")]
    pub schema: String,
    /// The query as understood, with its resolved scopes.
    pub query: QueryEcho,
    /// Matching regions, best first.
    #[serde(default)]
    pub regions: Vec<ScoredRegion>,
    /// Regions elsewhere that declare a semantic dependency on the queried
    /// code ("what breaks if I change this").
    #[serde(default)]
    pub dependencies_on_this: Vec<DependencyEntry>,
    /// Cross-cutting concerns that mention the queried code.
    #[serde(default)]
    pub cross_cutting: Vec<CrossCuttingEntry>,
    /// The items an agent acts on — the constraints, risk notes and
    /// semantic dependencies of every matched region, the region cap
    /// (`--max-regions`) notwithstanding — each once (by
    /// [`crate::same_item_text`]), constraints and risks before
    /// dependencies, each group best region first. Items of flagged regions
    /// and items a later note retired ([`RegionAnnotation::retires`]) are
    /// not among them. Trimming to a budget removes them last, from the end
    /// (our addition to spec 003; omitted when empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub decisions: Vec<Decision>,
    /// Counters.
    #[serde(default)]
    pub stats: ReadStats,
    /// Present when the token budget forced trimming.
    #[serde(default)]
    pub trimmed: Option<TrimmedInfo>,
    /// Non-fatal notices: fuzzy anchor matches, skipped malformed notes,
    /// "No Ultragit annotations found. Run 'ultragit init' to set up."
    /// (our addition to the spec's type).
    #[serde(default)]
    pub warnings: Vec<String>,
}

/// The query echoed back, so a consumer knows what the answer is for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct QueryEcho {
    /// Queried files, repository-relative.
    pub files: Vec<String>,
    /// Queried anchor, if any.
    pub anchor: Option<String>,
    /// Queried `--lines`, if any.
    pub lines: Option<LineRange>,
    /// `--since` as given (date or SHA).
    pub since: Option<String>,
    /// `--tags` filter.
    pub tags: Vec<String>,
    /// `--context-level` filter.
    pub context_level: ContextLevelFilter,
    /// `--min-confidence`.
    pub min_confidence: f64,
    /// `--depth` (hops of related annotations followed).
    pub depth: u32,
    /// `--max-regions`.
    pub max_regions: u32,
    /// `--max-tokens`, if any.
    pub max_tokens: Option<u32>,
    /// The resolved scopes (one or more per file).
    pub scopes: Vec<ScopeEcho>,
    /// Whether the anchor resolved to several units.
    pub ambiguous_anchor: bool,
}

impl Default for QueryEcho {
    /// The CLI defaults of spec 003 §3.1: no files, `--context-level all`,
    /// `--min-confidence 0`, `--depth 1`, `--max-regions 20`.
    fn default() -> Self {
        Self {
            files: Vec::new(),
            anchor: None,
            lines: None,
            since: None,
            tags: Vec::new(),
            context_level: ContextLevelFilter::All,
            min_confidence: 0.0,
            depth: 1,
            max_regions: 20,
            max_tokens: None,
            scopes: Vec::new(),
            ambiguous_anchor: false,
        }
    }
}

/// One resolved query scope (spec 003's `ResolvedScope`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ScopeEcho {
    /// The file, repository-relative.
    pub file: String,
    /// Lines in today's coordinates; `None` for the whole file.
    pub line_range: Option<LineRange>,
    /// The unit's name as found in the code.
    pub anchor_name: Option<String>,
    /// The unit's kind (`function`, `struct`, …).
    pub anchor_type: Option<String>,
    /// The unit's signature.
    pub anchor_signature: Option<String>,
    /// Whether this is one of several units the anchor matched.
    pub ambiguous: bool,
    /// How the anchor was resolved: `outline` (a unit of today's tree-sitter
    /// outline) or `notes` (no such unit — a macro-defined item, a file
    /// without a grammar — so the lines are those of the annotated regions
    /// that name the anchor, carried to today's lines by blame). `None`
    /// without an anchor.
    pub resolved_by: Option<String>,
    /// For a line range: the units of today's outline the lines lie in (for
    /// each line, the innermost unit holding it). Their annotations count as
    /// if the unit had been asked for by name, so a read of some lines of a
    /// function finds what a read of the function finds. Omitted when empty
    /// (no line range, no grammar, lines outside every unit).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub units: Vec<ScopeUnit>,
}

/// A unit of today's outline a line-range scope lies in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScopeUnit {
    /// Its qualified name.
    pub name: String,
    /// Its kind (`function`, `struct`, …).
    #[serde(rename = "type")]
    pub unit_type: String,
    /// Its lines today.
    pub lines: LineRange,
}

/// The `--context-level` filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ContextLevelFilter {
    /// Every annotation.
    #[default]
    All,
    /// Only `enhanced` annotations.
    Enhanced,
    /// Only `inferred` annotations.
    Inferred,
}

impl ContextLevelFilter {
    /// `all`, `enhanced` or `inferred`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::All => "all",
            Self::Enhanced => "enhanced",
            Self::Inferred => "inferred",
        }
    }

    /// Whether an annotation with this context level passes the filter.
    /// `All` admits everything, including levels this version does not know.
    pub fn admits(self, level: &ContextLevel) -> bool {
        match self {
            Self::All => true,
            Self::Enhanced => *level == ContextLevel::Enhanced,
            Self::Inferred => *level == ContextLevel::Inferred,
        }
    }
}

impl fmt::Display for ContextLevelFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A `--context-level` value that is not `all`, `enhanced` or `inferred`:
/// the error of [`ContextLevelFilter`]'s `FromStr`, so part of the published
/// API.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid context level {value:?}: expected one of all, enhanced, inferred")]
pub struct ParseContextLevelFilterError {
    /// The rejected value.
    pub value: String,
}

impl FromStr for ContextLevelFilter {
    type Err = ParseContextLevelFilterError;

    /// Accepts `all`, `enhanced`, `inferred`, ASCII case-insensitively.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        [Self::All, Self::Enhanced, Self::Inferred]
            .into_iter()
            .find(|filter| filter.as_str().eq_ignore_ascii_case(text))
            .ok_or_else(|| ParseContextLevelFilterError {
                value: text.to_owned(),
            })
    }
}

/// A region that matched the query, with its score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoredRegion {
    /// The region as stored in the note.
    pub region: RegionAnnotation,
    /// The commit whose note holds the region.
    #[serde(default)]
    pub commit_sha: String,
    /// The annotation's timestamp: when the note was written.
    pub timestamp: DateTime<Utc>,
    /// The committer date of the annotated commit: what recency and
    /// `--since` are judged by (a backfilled note on an old commit is old).
    /// Omitted when unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_date: Option<DateTime<Utc>>,
    /// Combined confidence in `[0, 1]`.
    pub confidence: f64,
    /// The factors `confidence` was computed from.
    pub confidence_factors: ConfidenceFactors,
    /// Related annotations that were followed.
    #[serde(default)]
    pub related: Vec<ResolvedRelated>,
    /// The corrections applied to this region (`ultragit flag`, `ultragit
    /// correct`), in the order applied; omitted when empty, verbose or not.
    /// `region` shows the corrected text; a `set` keeps the text it replaced
    /// in `previous`, and the note itself is unchanged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub corrections: Vec<AppliedCorrection>,
    /// Later commits without an annotation that changed some of the region's
    /// lines (blame attributes them today's lines in the region's span): the
    /// region's text may be stale. Oldest first; omitted when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed_since: Vec<UnannotatedChange>,
    /// Where the note's own lines are today when they are narrower than
    /// `region.lines`: the region is reported at its whole unit (blame
    /// attributes the unit's other lines to other commits), and this is the
    /// part of it the note was written about (the span of its surviving
    /// lines). Omitted when the region's lines are its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focus: Option<LineRange>,
}

impl ScoredRegion {
    /// The date the region speaks for: the annotated commit's date, or the
    /// note's timestamp when that is unknown.
    pub fn date(&self) -> DateTime<Utc> {
        self.commit_date.unwrap_or(self.timestamp)
    }
}

/// A commit without an annotation that changed lines of a region after the
/// annotated commit (see [`ScoredRegion::changed_since`]).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct UnannotatedChange {
    /// The commit.
    pub commit: String,
    /// Its committer date.
    pub date: Option<DateTime<Utc>>,
    /// Its subject line.
    pub summary: String,
    /// How many of the region's lines today it last changed.
    pub lines: u32,
}

/// The four factors of a region's confidence (spec 003 §4.7), each in
/// `[0, 1]`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ConfidenceFactors {
    /// Exponential decay with the annotation's age.
    pub recency: f64,
    /// `enhanced` 1.0, `inferred` 0.5.
    pub context_level: f64,
    /// How well the anchor still matches today's code.
    pub anchor_stability: f64,
    /// `initial` 1.0, `amend` 0.8, `squash` 0.7.
    pub provenance: f64,
}

impl ConfidenceFactors {
    /// The weighted sum: recency 0.4, context level 0.3, anchor stability
    /// 0.2, provenance 0.1.
    pub fn combined(&self) -> f64 {
        self.recency * 0.4
            + self.context_level * 0.3
            + self.anchor_stability * 0.2
            + self.provenance * 0.1
    }
}

/// A related annotation that was followed and resolved.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ResolvedRelated {
    /// The commit whose note holds the related region.
    pub commit: String,
    /// The related region's anchor.
    pub anchor: String,
    /// How it relates, as the note says.
    pub relationship: String,
    /// Confidence in the related region.
    pub confidence: f64,
    /// The related region's intent, when it was found.
    pub intent: Option<String>,
}

/// Counters describing the work a read did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ReadStats {
    /// Distinct commits blame pointed at.
    pub commits_examined: u32,
    /// How many of them had a readable note.
    pub annotations_found: u32,
    /// Regions in the output.
    pub regions_returned: u32,
    /// Related-annotation hops followed.
    pub related_hops: u32,
    /// Items of the matched regions left out because a later note retired
    /// them ([`RegionAnnotation::retires`]) or their region is flagged;
    /// omitted when none (our addition).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub items_retired: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// One item of [`ReadOutput::decisions`].
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Decision {
    /// `constraint`, `risk` or `dependency`.
    pub kind: String,
    /// The constraint's text, the risk note, or the dependency's nature.
    pub text: String,
    /// A constraint's source (`author`, `inferred`); omitted otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// A dependency's target as `file:anchor`; omitted otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on: Option<String>,
    /// The commits whose notes record it, best region first.
    pub commits: Vec<String>,
    /// The file of the best region that records it (its path at that
    /// commit).
    pub file: String,
    /// The anchor of that region: the unit it is about.
    pub anchor: String,
}

impl Decision {
    /// The kind of a constraint.
    pub const CONSTRAINT: &'static str = "constraint";
    /// The kind of a risk note.
    pub const RISK: &'static str = "risk";
    /// The kind of a semantic dependency.
    pub const DEPENDENCY: &'static str = "dependency";
}

/// What token-budget trimming did.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct TrimmedInfo {
    /// Regions before trimming.
    pub original_regions: u32,
    /// Regions after trimming.
    pub returned_regions: u32,
    /// Commits whose regions were dropped.
    pub dropped_commits: Vec<String>,
    /// Strategy name, e.g. `lowest_confidence_first`.
    pub strategy: String,
    /// Items of [`ReadOutput::decisions`] left out, from the end; omitted
    /// when none (our addition).
    #[serde(skip_serializing_if = "is_zero")]
    pub dropped_decisions: u32,
    /// Estimated tokens of the trimmed output.
    pub estimated_tokens: u32,
}

/// A region that declares a semantic dependency on the queried code.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct DependencyEntry {
    /// The dependent region's file.
    pub file: String,
    /// The dependent region's anchor.
    pub anchor: String,
    /// What the dependency is.
    pub nature: String,
    /// The commit whose note declares the dependency.
    pub commit: String,
    /// The queried file depended on.
    pub target_file: String,
    /// The queried anchor depended on.
    pub target_anchor: String,
}

/// A cross-cutting concern that mentions the queried code.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CrossCuttingEntry {
    /// What the concern is.
    pub description: String,
    /// The regions involved, each as `file:anchor`.
    pub regions: Vec<String>,
    /// The kind of coupling.
    pub nature: String,
    /// The commit whose note declares it.
    pub commit: String,
}

/// Region keys the `ultragit/v1` note omits when absent; verbose output
/// shows them as `null`.
const REGION_OPTIONAL_SCALARS: [&str; 2] = ["reasoning", "risk_notes"];

/// Region keys the `ultragit/v1` note omits when empty; verbose output shows
/// them as `[]`.
const REGION_OPTIONAL_LISTS: [&str; 4] = [
    "constraints",
    "semantic_dependencies",
    "related_annotations",
    "tags",
];

fn empty_array() -> Value {
    Value::Array(Vec::new())
}

impl ReadOutput {
    /// An output for `query` with no results yet.
    pub fn new(query: QueryEcho) -> Self {
        Self {
            schema: READ_SCHEMA_V1.to_owned(),
            query,
            regions: Vec::new(),
            dependencies_on_this: Vec::new(),
            cross_cutting: Vec::new(),
            decisions: Vec::new(),
            stats: ReadStats::default(),
            trimmed: None,
            warnings: Vec::new(),
        }
    }

    /// The JSON of this output, verbose or compact (see the
    /// [module docs](crate::read)), with object keys sorted.
    pub fn to_json_value(&self, verbose: bool) -> Value {
        let mut value = to_value(self);
        if let Value::Object(top) = &mut value {
            if verbose {
                fill_region_optionals(top);
            } else {
                prune_empty_members(top);
                self.restore_required(top);
            }
        }
        sort_keys(&mut value);
        value
    }

    /// [`to_json_value`](Self::to_json_value) as text, compact or indented.
    pub fn to_json_string(&self, verbose: bool, pretty: bool) -> String {
        let value = self.to_json_value(verbose);
        let text = if pretty {
            serde_json::to_string_pretty(&value)
        } else {
            serde_json::to_string(&value)
        };
        text.expect("a serde_json::Value has string keys only, so it always serializes")
    }

    fn restore_required(&self, top: &mut Map<String, Value>) {
        top.entry("$schema")
            .or_insert_with(|| Value::String(self.schema.clone()));
        top.entry("query").or_insert_with(|| to_value(&self.query));
        top.entry("regions").or_insert_with(empty_array);
        top.entry("stats").or_insert_with(|| to_value(&self.stats));
        for (region, scored) in region_objects(top).zip(&self.regions) {
            region
                .entry("intent")
                .or_insert_with(|| Value::String(scored.region.intent.clone()));
            region.entry("constraints").or_insert_with(empty_array);
        }
    }
}

/// Verbose mode: shows the region keys the note omits when empty.
fn fill_region_optionals(top: &mut Map<String, Value>) {
    for region in region_objects(top) {
        for key in REGION_OPTIONAL_SCALARS {
            region.entry(key).or_insert(Value::Null);
        }
        for key in REGION_OPTIONAL_LISTS {
            region.entry(key).or_insert_with(empty_array);
        }
        if let Some(Value::Object(anchor)) = region.get_mut("ast_anchor") {
            anchor.entry("signature").or_insert(Value::Null);
        }
    }
}

/// The `region` object of every entry of `regions`, created if missing.
fn region_objects(top: &mut Map<String, Value>) -> impl Iterator<Item = &mut Map<String, Value>> {
    let entries = match top.get_mut("regions") {
        Some(Value::Array(entries)) => entries.as_mut_slice(),
        _ => &mut [],
    };
    entries.iter_mut().filter_map(|entry| {
        let Value::Object(scored) = entry else {
            return None;
        };
        let region = scored
            .entry("region")
            .or_insert_with(|| Value::Object(Map::new()));
        match region {
            Value::Object(region) => Some(region),
            _ => None,
        }
    })
}

/// Drops object members that are (after pruning their own members) `null`,
/// `""`, `[]` or `{}`. Array elements are pruned inside but never dropped.
fn prune_empty_members(map: &mut Map<String, Value>) {
    for child in map.values_mut() {
        prune_value(child);
    }
    map.retain(|_, child| !is_empty_value(child));
}

fn prune_value(value: &mut Value) {
    match value {
        Value::Object(map) => prune_empty_members(map),
        Value::Array(items) => items.iter_mut().for_each(prune_value),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
    }
}

fn is_empty_value(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(text) => text.is_empty(),
        Value::Array(items) => items.is_empty(),
        Value::Object(map) => map.is_empty(),
        Value::Bool(_) | Value::Number(_) => false,
    }
}

/// Sorts every object's keys, whatever map type `serde_json` was built with.
fn sort_keys(value: &mut Value) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = std::mem::take(map).into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            for (_, child) in &mut entries {
                sort_keys(child);
            }
            *map = entries.into_iter().collect();
        }
        Value::Array(items) => items.iter_mut().for_each(sort_keys),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
    }
}

fn to_value<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value)
        .expect("read types have string keys only, and serde_json writes non-finite floats as null")
}

open_enum! {
    /// The `code` of a read error (spec 003 §5), written in snake_case.
    pub enum ReadErrorCode {
        /// The file does not exist at HEAD.
        FileNotFound => "file_not_found",
        /// The anchor matches no unit, even fuzzily.
        AnchorNotFound => "anchor_not_found",
        /// `--lines` goes past the end of the file.
        LineRangeOutOfBounds => "line_range_out_of_bounds",
        /// `--lines` is malformed or inverted.
        InvalidLineRange => "invalid_line_range",
        /// `--since` is neither a date nor a known commit.
        InvalidSince => "invalid_since",
        /// Any other bad argument.
        InvalidArgument => "invalid_argument",
        /// Not inside a git repository.
        NotARepository => "not_a_repository",
        /// `git blame` failed.
        BlameFailed => "blame_failed",
        /// Any other git failure.
        Git => "git",
        /// Bad configuration.
        Config => "config",
        /// A bug.
        Internal => "internal",
    }
}

/// The error object of spec 003 §5:
/// `{"$schema":"ultragit-read/v1","error":{"code":…,"message":…}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadErrorBody {
    /// Schema id, [`READ_SCHEMA_V1`].
    #[serde(rename = "$schema")]
    pub schema: String,
    /// The error.
    pub error: ReadErrorDetail,
}

/// The `error` member of a [`ReadErrorBody`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadErrorDetail {
    /// Machine-readable code.
    pub code: ReadErrorCode,
    /// One line for a person: what went wrong and what to do.
    pub message: String,
    /// Structured extras (e.g. the available anchors). Omitted when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

impl ReadErrorBody {
    /// An error object with no details.
    pub fn new(code: ReadErrorCode, message: impl Into<String>) -> Self {
        Self {
            schema: READ_SCHEMA_V1.to_owned(),
            error: ReadErrorDetail {
                code,
                message: message.into(),
                details: None,
            },
        }
    }

    /// The same error with `details` attached.
    pub fn with_details(mut self, details: Value) -> Self {
        self.error.details = Some(details);
        self
    }

    /// Compact JSON in field order (`$schema`, `error`; `code`, `message`,
    /// `details`).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("an error body has string keys only")
    }

    /// Indented JSON.
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).expect("an error body has string keys only")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn prune_drops_empty_members_recursively_but_keeps_array_elements() {
        let mut value = json!({
            "a": null, "b": "", "c": [], "d": {}, "e": {"f": null, "g": [""]},
            "h": {"i": {"j": []}}, "k": 0, "l": false, "m": [{}, null, ""]
        });
        let Value::Object(map) = &mut value else {
            panic!("object literal");
        };
        prune_empty_members(map);
        assert_eq!(
            value,
            json!({"e": {"g": [""]}, "k": 0, "l": false, "m": [{}, null, ""]})
        );
    }

    #[test]
    fn sort_keys_orders_nested_objects() {
        let mut value = json!({"b": [{"z": 1, "a": 2}], "a": {"y": 1, "$x": 2}});
        sort_keys(&mut value);
        assert_eq!(
            serde_json::to_string(&value).unwrap(),
            r#"{"a":{"$x":2,"y":1},"b":[{"a":2,"z":1}]}"#
        );
    }
}
