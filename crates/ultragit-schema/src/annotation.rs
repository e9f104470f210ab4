//! The `ultragit/v1` annotation document: one JSON git note per commit under
//! `refs/notes/ultragit` (spec 000, "Annotation Schema Types").
//!
//! Field names and omit-when-empty rules are exactly the spec's. Reading is
//! tolerant (see the crate docs): unknown fields are ignored, missing lists and
//! optional values read as empty, unknown enum values are kept as `Other`.
//! Fields the spec requires (`$schema`, `commit`, `timestamp`, `summary`,
//! `context_level`, `provenance`, and in each region `file`, `ast_anchor`
//! with its `type` and `name`, `lines`, `intent`, …) must be present, or
//! [`Annotation::from_json`] returns a [`NoteParseError`].

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// The `$schema` value of every annotation this crate writes.
pub const SCHEMA_V1: &str = "ultragit/v1";

/// The top-level annotation document stored as a git note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Annotation {
    /// Schema id; [`SCHEMA_V1`] for documents this crate writes.
    #[serde(rename = "$schema")]
    pub schema: String,
    /// Full SHA of the annotated commit.
    pub commit: String,
    /// When the annotation was written, RFC 3339 (e.g. `2025-01-15T10:30:00Z`).
    pub timestamp: String,
    /// The author's task description, when one was given. Always written
    /// (`null` when absent).
    #[serde(default)]
    pub task: Option<String>,
    /// One-paragraph summary of the commit.
    pub summary: String,
    /// Whether the author supplied context (`enhanced`) or not (`inferred`).
    pub context_level: ContextLevel,
    /// One entry per annotated semantic unit.
    #[serde(default)]
    pub regions: Vec<RegionAnnotation>,
    /// Concerns spanning several regions. Always written (`[]` when empty).
    #[serde(default)]
    pub cross_cutting: Vec<CrossCuttingConcern>,
    /// How this annotation came to be (fresh, squash, amend).
    pub provenance: Provenance,
    /// What people said about it since, oldest first (`ultragit flag`,
    /// `ultragit correct`; see [`crate::correction`]). Append-only. Our
    /// addition to the spec's schema: omitted when empty, so notes without
    /// corrections are unchanged and older readers ignore it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub corrections: Vec<Correction>,
}

/// The spec 003 name for a region annotation (`schema::Region`).
pub type Region = RegionAnnotation;

/// The annotation of one semantic code unit touched by the commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegionAnnotation {
    /// Path relative to the repository root, `/`-separated.
    pub file: String,
    /// The AST unit this region describes.
    pub ast_anchor: AstAnchor,
    /// Line range in the coordinates of the annotated commit (1-based,
    /// inclusive).
    pub lines: LineRange,
    /// What the code is for. Never empty in a valid region.
    pub intent: String,
    /// Why it was done this way. Omitted when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// Rules the code must keep obeying. Omitted when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub constraints: Vec<Constraint>,
    /// Other code this region relies on. Omitted when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub semantic_dependencies: Vec<SemanticDependency>,
    /// Links to earlier annotations. Omitted when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub related_annotations: Vec<RelatedAnnotation>,
    /// Free-form tags. Omitted when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// What could go wrong when changing this code. Omitted when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub risk_notes: Option<String>,
    /// What this change makes no longer true: items earlier notes recorded
    /// on this unit (the text of a constraint, of a risk note, or of a
    /// dependency's `nature`, as that note has it) that are dropped or
    /// replaced here. A replacement is one of this region's own
    /// `constraints`. Readers stop delivering a retired item: it is matched
    /// to the items of older notes on the same unit by text, whitespace
    /// runs collapsed and case ignored ([`same_item_text`]). Omitted when
    /// empty; older readers ignore it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retires: Vec<String>,
}

/// Whether two item texts (a constraint, a risk note, a dependency's
/// nature, or an entry of [`RegionAnnotation::retires`]) are the same item:
/// equal once trimmed, whitespace runs collapsed and case ignored.
pub fn same_item_text(a: &str, b: &str) -> bool {
    let mut a = a.split_whitespace();
    let mut b = b.split_whitespace();
    loop {
        match (a.next(), b.next()) {
            (None, None) => return true,
            (Some(x), Some(y)) if x.to_lowercase() == y.to_lowercase() => {}
            _ => return false,
        }
    }
}

/// The text [`same_item_text`] compares: the words of `text`, lowercased,
/// one space apart. Two texts are the same item exactly when their keys are
/// equal, so a set of items can be deduplicated by key in one pass.
pub fn item_text_key(text: &str) -> String {
    let mut key = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !key.is_empty() {
            key.push(' ');
        }
        key.push_str(&word.to_lowercase());
    }
    key
}

/// Names the AST unit a region describes.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AstAnchor {
    /// Unit kind: `function`, `method`, `struct`, `class`, `impl`, `module`,
    /// `const`, `type`, `config`, … Serialized as `"type"`. Not restricted to
    /// that list, so newer writers' kinds still read.
    #[serde(rename = "type")]
    pub unit_type: String,
    /// Unit name, possibly qualified (`MqttClient::connect`).
    pub name: String,
    /// The unit's signature. Omitted when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

/// An inclusive, 1-based line range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LineRange {
    /// First line (1-based).
    pub start: u32,
    /// Last line (inclusive).
    pub end: u32,
}

/// A rule the code must keep obeying.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Constraint {
    /// The rule, in prose.
    pub text: String,
    /// Who stated it.
    pub source: ConstraintSource,
}

/// A dependency of a region on another unit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SemanticDependency {
    /// File of the unit depended on.
    pub file: String,
    /// Anchor name of the unit depended on.
    pub anchor: String,
    /// What the dependency is.
    pub nature: String,
}

/// A link to an annotation on an earlier commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RelatedAnnotation {
    /// The commit whose note holds the related region.
    pub commit: String,
    /// The related region's anchor name.
    pub anchor: String,
    /// How the two relate.
    pub relationship: String,
}

/// A group of regions that must change together.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrossCuttingConcern {
    /// What the concern is.
    pub description: String,
    /// The regions involved, each as `file:anchor`.
    #[serde(default)]
    pub regions: Vec<String>,
    /// The kind of coupling.
    pub nature: String,
}

/// How an annotation was produced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    /// Fresh annotation, or derived by squash/amend.
    pub operation: ProvenanceOperation,
    /// Commits whose annotations this one was derived from. Omitted when
    /// empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub derived_from: Vec<String>,
    /// Whether the source annotations were kept alongside. Always written;
    /// reads as `false` when missing.
    #[serde(default)]
    pub original_annotations_preserved: bool,
    /// Notes on how derived annotations were merged. Omitted when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub synthesis_notes: Option<String>,
}

open_enum! {
    /// Whether the committing author supplied context.
    pub enum ContextLevel {
        /// The author gave task, reasoning or constraints.
        Enhanced => "enhanced",
        /// Everything was inferred from the code and diff.
        Inferred => "inferred",
    }
}

open_enum! {
    /// Who stated a constraint.
    pub enum ConstraintSource {
        /// The committing author (high confidence).
        Author => "author",
        /// Deduced by the annotation agent (may be wrong).
        Inferred => "inferred",
    }
}

open_enum! {
    /// How an annotation came to be.
    pub enum ProvenanceOperation {
        /// Written for this commit.
        Initial => "initial",
        /// Synthesized from the annotations of squashed commits.
        Squash => "squash",
        /// Carried over from the commit this one amended.
        Amend => "amend",
    }
}

/// What kind of problem made a note unreadable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NoteParseErrorKind {
    /// The bytes are not UTF-8.
    Encoding,
    /// Not JSON (bad token, trailing characters).
    Syntax,
    /// The input ends early (empty or truncated).
    Truncated,
    /// Valid JSON of the wrong shape: not an object, a required field
    /// missing, a value of the wrong type or out of range.
    Data,
}

/// A note that cannot be read as an `ultragit/v1` annotation.
///
/// Keeps everything `serde_json` reported (message with line and column,
/// category) as plain values, so no foreign type is in this crate's API.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed ultragit/v1 annotation: {reason}")]
pub struct NoteParseError {
    kind: NoteParseErrorKind,
    reason: String,
    line: usize,
    column: usize,
}

impl NoteParseError {
    /// Why the note could not be read, e.g.
    /// `missing field `intent` at line 1 column 120`.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// The kind of problem.
    pub fn kind(&self) -> NoteParseErrorKind {
        self.kind
    }

    /// 1-based line of the problem; 0 when unknown (encoding errors).
    pub fn line(&self) -> usize {
        self.line
    }

    /// 1-based column of the problem; 0 when unknown. Part of the published
    /// API (with [`line`](Self::line)); our readers report only the line.
    pub fn column(&self) -> usize {
        self.column
    }

    fn from_json_error(err: &serde_json::Error) -> Self {
        use serde_json::error::Category;
        let kind = match err.classify() {
            Category::Eof => NoteParseErrorKind::Truncated,
            Category::Data => NoteParseErrorKind::Data,
            // An I/O error cannot happen on an in-memory slice; treat it as
            // syntax rather than panicking.
            Category::Syntax | Category::Io => NoteParseErrorKind::Syntax,
        };
        Self {
            kind,
            reason: err.to_string(),
            line: err.line(),
            column: err.column(),
        }
    }
}

impl Annotation {
    /// A new `ultragit/v1` document with no regions, no task, and
    /// [`Provenance::initial`].
    pub fn new(
        commit: impl Into<String>,
        timestamp: impl Into<String>,
        summary: impl Into<String>,
        context_level: ContextLevel,
    ) -> Self {
        Self {
            schema: SCHEMA_V1.to_owned(),
            commit: commit.into(),
            timestamp: timestamp.into(),
            task: None,
            summary: summary.into(),
            context_level,
            regions: Vec::new(),
            cross_cutting: Vec::new(),
            provenance: Provenance::initial(),
            corrections: Vec::new(),
        }
    }

    /// Parses a note body. Never panics; any input that is not an
    /// `ultragit/v1`-shaped JSON object is an error carrying serde's reason.
    ///
    /// The top level must be an object: serde would otherwise accept an array
    /// of the fields in declaration order.
    pub fn from_json(text: &str) -> Result<Self, NoteParseError> {
        let body = text.trim_start_matches([' ', '\t', '\n', '\r']);
        if body.starts_with('[') {
            let before = &text[..text.len() - body.len()];
            let line = before.matches('\n').count() + 1;
            let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
            return Err(NoteParseError {
                kind: NoteParseErrorKind::Data,
                reason: format!(
                    "invalid type: sequence, expected an ultragit/v1 annotation object \
                     at line {line} column {column}"
                ),
                line,
                column,
            });
        }
        serde_json::from_str(text).map_err(|err| NoteParseError::from_json_error(&err))
    }

    /// Parses a note body given as bytes (as git stores it). Invalid UTF-8 is
    /// an [`NoteParseErrorKind::Encoding`] error.
    pub fn from_slice(bytes: &[u8]) -> Result<Self, NoteParseError> {
        let text = std::str::from_utf8(bytes).map_err(|err| NoteParseError {
            kind: NoteParseErrorKind::Encoding,
            reason: format!("note is not valid UTF-8: {err}"),
            line: 0,
            column: 0,
        })?;
        Self::from_json(text)
    }

    /// Compact JSON, as stored in the note.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self)
            .expect("an Annotation has only string keys and no floats, so it always serializes")
    }

    /// Indented JSON, for people.
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self)
            .expect("an Annotation has only string keys and no floats, so it always serializes")
    }

    /// The timestamp as UTC, when it is valid RFC 3339 (`None` otherwise).
    pub fn timestamp_utc(&self) -> Option<DateTime<Utc>> {
        parse_timestamp(&self.timestamp)
    }
}

/// Parses an RFC 3339 timestamp with offset into UTC.
pub(crate) fn parse_timestamp(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|stamp| stamp.with_timezone(&Utc))
}

impl RegionAnnotation {
    /// A region with the required fields set and every optional one empty.
    pub fn new(
        file: impl Into<String>,
        ast_anchor: AstAnchor,
        lines: LineRange,
        intent: impl Into<String>,
    ) -> Self {
        Self {
            file: file.into(),
            ast_anchor,
            lines,
            intent: intent.into(),
            reasoning: None,
            constraints: Vec::new(),
            semantic_dependencies: Vec::new(),
            related_annotations: Vec::new(),
            tags: Vec::new(),
            risk_notes: None,
            retires: Vec::new(),
        }
    }
}

impl AstAnchor {
    /// An anchor without a signature.
    pub fn new(unit_type: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            unit_type: unit_type.into(),
            name: name.into(),
            signature: None,
        }
    }
}

impl LineRange {
    /// The range `start..=end`.
    pub fn new(start: u32, end: u32) -> Self {
        Self { start, end }
    }

    /// Whether the two inclusive ranges share at least one line
    /// (`self.start <= other.end && self.end >= other.start`).
    pub fn overlaps(&self, other: &LineRange) -> bool {
        self.start <= other.end && self.end >= other.start
    }
}

impl Constraint {
    /// A constraint with the given text and source.
    pub fn new(text: impl Into<String>, source: ConstraintSource) -> Self {
        Self {
            text: text.into(),
            source,
        }
    }
}

impl Provenance {
    /// Provenance of a fresh annotation: `initial`, derived from nothing.
    pub fn initial() -> Self {
        Self {
            operation: ProvenanceOperation::Initial,
            derived_from: Vec::new(),
            original_annotations_preserved: false,
            synthesis_notes: None,
        }
    }
}

/// One correction of an annotation, as stored in the note's `corrections`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Correction {
    /// The region(s) corrected; empty for the whole annotation.
    #[serde(default)]
    pub target: CorrectionTarget,
    /// `flag`, `set`, `add` or `remove`.
    pub kind: CorrectionKind,
    /// The field changed; absent for a flag.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<CorrectionField>,
    /// The new text (`set`) or the list entry added or removed; absent for a
    /// flag.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Why, in the corrector's words. Never blank.
    pub reason: String,
    /// Who: `Name <email>` from the corrector's git identity.
    pub author: String,
    /// When, RFC 3339 with offset.
    pub timestamp: String,
}

/// Which regions of the annotation a correction is about: a file and an
/// anchor name (one unit), a file (all its regions), or nothing (every
/// region).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CorrectionTarget {
    /// The region's `file`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The region's `ast_anchor.name`, exactly.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anchor: Option<String>,
}

open_enum! {
    /// What a correction does.
    pub enum CorrectionKind {
        /// Marks the target as doubtful; changes no text.
        Flag => "flag",
        /// Replaces a text field.
        Set => "set",
        /// Adds an entry to a list field.
        Add => "add",
        /// Removes an entry from a list field.
        Remove => "remove",
    }
}

open_enum! {
    /// A region field a correction can change.
    pub enum CorrectionField {
        /// What the code is for (text; never blank).
        Intent => "intent",
        /// Why it was done this way (text).
        Reasoning => "reasoning",
        /// What could go wrong (text).
        RiskNotes => "risk_notes",
        /// Rules the code must keep obeying (list; an added one is stated by
        /// a person, so its source is `author`).
        Constraints => "constraints",
        /// Free-form tags (list).
        Tags => "tags",
    }
}

impl CorrectionField {
    /// Whether the field is a list (`add`/`remove`) rather than a text
    /// (`set`); `None` for a field this version does not know.
    pub fn is_list(&self) -> Option<bool> {
        match self {
            Self::Intent | Self::Reasoning | Self::RiskNotes => Some(false),
            Self::Constraints | Self::Tags => Some(true),
            Self::Other(_) => None,
        }
    }

    /// The kinds of correction that make sense for this field.
    pub fn kinds(&self) -> &'static [&'static str] {
        match self.is_list() {
            Some(false) => &["set"],
            Some(true) => &["add", "remove"],
            None => &[],
        }
    }
}

impl CorrectionTarget {
    /// The whole annotation.
    pub fn all() -> Self {
        Self::default()
    }

    /// One unit: `file` and `anchor`.
    pub fn unit(file: impl Into<String>, anchor: impl Into<String>) -> Self {
        Self {
            file: Some(file.into()),
            anchor: Some(anchor.into()),
        }
    }

    /// Whether `region` is one of the target's regions.
    pub fn covers(&self, region: &RegionAnnotation) -> bool {
        self.file.as_ref().is_none_or(|f| *f == region.file)
            && self
                .anchor
                .as_ref()
                .is_none_or(|a| *a == region.ast_anchor.name)
    }

    /// `file:anchor`, `file`, or `the whole annotation`, for messages.
    pub fn describe(&self) -> String {
        match (&self.file, &self.anchor) {
            (Some(file), Some(anchor)) => format!("{file}:{anchor}"),
            (Some(file), None) => file.clone(),
            (None, Some(anchor)) => format!("?:{anchor}"),
            (None, None) => "the whole annotation".to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_enums_map_known_strings_to_variants() {
        assert_eq!(ContextLevel::from("enhanced"), ContextLevel::Enhanced);
        assert_eq!(ConstraintSource::from("author"), ConstraintSource::Author);
        assert_eq!(
            ProvenanceOperation::from(String::from("squash")),
            ProvenanceOperation::Squash
        );
        assert_eq!(
            ContextLevel::from("Enhanced"),
            ContextLevel::Other("Enhanced".to_owned())
        );
        assert_eq!(ProvenanceOperation::KNOWN, ["initial", "squash", "amend"]);
        assert!(ContextLevel::Inferred.is_known());
        assert!(!ContextLevel::Other("x".to_owned()).is_known());
        assert_eq!(ConstraintSource::Other("x y".to_owned()).to_string(), "x y");
    }

    #[test]
    fn open_enum_rejects_non_strings_with_known_values_listed() {
        let err = serde_json::from_str::<ContextLevel>("3").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid type: integer `3`, expected a string (known values: enhanced, inferred) at line 1 column 1"
        );
    }

    #[test]
    fn line_ranges_overlap_inclusively() {
        let range = LineRange::new(10, 20);
        assert!(range.overlaps(&LineRange::new(20, 30)));
        assert!(range.overlaps(&LineRange::new(1, 10)));
        assert!(range.overlaps(&LineRange::new(12, 13)));
        assert!(!range.overlaps(&LineRange::new(21, 30)));
        assert!(!range.overlaps(&LineRange::new(1, 9)));
    }

    #[test]
    fn timestamp_utc_converts_offsets() {
        let mut note = Annotation::new(
            "c",
            "2025-01-15T12:30:00+02:00",
            "s",
            ContextLevel::Inferred,
        );
        assert_eq!(
            note.timestamp_utc().map(|t| t.to_rfc3339()),
            Some("2025-01-15T10:30:00+00:00".to_owned())
        );
        note.timestamp = "yesterday".to_owned();
        assert_eq!(note.timestamp_utc(), None);
    }
}
