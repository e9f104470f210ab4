//! The data model of ultragit's git notes and of `ultragit read`'s output:
//! the **only** serde model of notes in the workspace. Everything that writes
//! or reads a note, or produces or consumes read output, goes through these
//! types.
//!
//! - [`annotation`]: the `ultragit/v1` document stored as one JSON note per
//!   commit under `refs/notes/ultragit` (spec 000).
//! - [`correction`]: corrections people append to an annotation (`flag`,
//!   `correct`), stored in the note's `corrections`, and how readers apply
//!   them.
//! - [`merge`]: the JSON-aware union of two annotations of one commit
//!   (sync, import, amend, squash); never text concatenation.
//! - [`validate`]: the writing agent's validation list, reporting every
//!   problem and able to strip invalid regions while keeping the rest.
//! - [`read`]: the `ultragit-read/v1` output and error object (spec 003), with
//!   compact and verbose JSON.
//! - [`team_config`]: the shape of `.ultragit-config.toml`, the team's
//!   committed (untrusted) settings: its name, size limit and sections; the
//!   keys and the trust rule are in the readers' key tables.
//!
//! These modules are part of the published API, for their documentation (the
//! document's rules, the validation list, the JSON shapes); their types are
//! also re-exported here, and this workspace uses those names.
//!
//! This crate depends on none of our crates (only serde, serde_json, chrono,
//! thiserror), so `ultragit-read`'s users get a small dependency tree.
//!
//! **Invariants**
//! - JSON field names, renames (`"$schema"`, `"type"`) and omit-when-empty
//!   rules are exactly the specs'; golden tests pin them.
//! - Reading is tolerant and forward-compatible: unknown fields are ignored,
//!   missing lists and options read as empty, and an enum value from a newer
//!   writer reads as `Other(text)` and writes back verbatim instead of failing
//!   the document. Missing required fields are parse errors.
//! - Parsing never panics on any input; it returns [`NoteParseError`] with
//!   the reason. Validation is separate from parsing: parse → validate
//!   everything → act.
//! - No I/O, no printing, no environment.
//!
//! ```
//! use ultragit_schema::{Annotation, ValidationContext};
//!
//! let note = r#"{"$schema":"ultragit/v1","commit":"4f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39",
//!   "timestamp":"2025-01-15T10:30:00Z","task":null,"summary":"Add retry",
//!   "context_level":"inferred","cross_cutting":[],"provenance":{"operation":"initial"},
//!   "regions":[
//!     {"file":"src/a.rs","ast_anchor":{"type":"function","name":"connect"},
//!      "lines":{"start":3,"end":9},"intent":"Connect with retry."},
//!     {"file":"../b.rs","ast_anchor":{"type":"function","name":"x"},
//!      "lines":{"start":1,"end":2},"intent":""}]}"#;
//!
//! let mut annotation = Annotation::from_json(note)?;
//! let problems = annotation.strip_invalid(&ValidationContext::default());
//! assert_eq!(problems.len(), 2); // bad path and empty intent, both in region 1
//! assert_eq!(problems[1].to_string(), "region 1 (../b.rs:x): intent is empty");
//! assert_eq!(annotation.regions.len(), 1);
//! # Ok::<(), ultragit_schema::NoteParseError>(())
//! ```

#[macro_use]
mod open_enum;

pub mod annotation;
pub mod correction;
pub mod merge;
pub mod pending;
pub mod read;
pub mod team_config;
pub mod validate;

pub use annotation::{
    Annotation, AstAnchor, Constraint, ConstraintSource, ContextLevel, CrossCuttingConcern,
    LineRange, NoteParseError, NoteParseErrorKind, Provenance, ProvenanceOperation, Region,
    RegionAnnotation, RelatedAnnotation, SCHEMA_V1, SemanticDependency, item_text_key,
    same_item_text,
};
pub use correction::{
    AppliedCorrection, Correction, CorrectionField, CorrectionKind, CorrectionTarget,
};
pub use read::{
    ConfidenceFactors, ContextLevelFilter, CrossCuttingEntry, Decision, DependencyEntry,
    ParseContextLevelFilterError, QueryEcho, READ_SCHEMA_V1, ReadErrorBody, ReadErrorCode,
    ReadErrorDetail, ReadOutput, ReadStats, ResolvedRelated, ScopeEcho, ScopeUnit, ScoredRegion,
    TrimmedInfo, UnannotatedChange,
};
pub use validate::{ProblemLocation, ValidationContext, ValidationProblem};
