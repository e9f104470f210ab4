//! Validation of an assembled annotation (spec 000, "Annotation Validation").
//!
//! [`Annotation::validate`] reports every problem, not the first.
//! [`Annotation::strip_invalid`] removes the regions and cross-cutting
//! concerns that have problems and keeps the rest ("partial annotations are
//! better than no annotations").
//!
//! Rules, per the spec, with the choices it left open:
//! - `$schema` is exactly `ultragit/v1`.
//! - `commit` is not empty and, when [`ValidationContext::expected_commit`] is
//!   given, equals it (ASCII case-insensitively, since SHAs are hex).
//!   Abbreviated SHAs are **not** accepted on either side: a note names its
//!   commit by full SHA.
//! - `timestamp` is RFC 3339 with an offset (`Z` or `±HH:MM`). A naive
//!   `YYYY-MM-DDTHH:MM:SS` is rejected: its time zone is unknown, and the
//!   read pipeline scores recency in UTC.
//! - `context_level` and `provenance.operation` are known values.
//! - Each region: `file` is a normalized relative path (not empty, not
//!   absolute, no empty, `.` or `..` components — so `./src/a.rs` is
//!   rejected, because readers compare paths verbatim) and, when
//!   [`ValidationContext::commit_files`] is given, one of them;
//!   `ast_anchor.type` and `ast_anchor.name` are not blank (the type is not
//!   checked against a list, so newer kinds pass); `lines` are 1-based with
//!   `start <= end`; `intent` is not blank; every constraint has non-blank
//!   `text` and a known `source`; every semantic dependency has non-blank
//!   `file`, `anchor` and `nature`; no entry of `retires` is blank.
//! - Beyond the spec's list: each cross-cutting concern has non-blank
//!   `description` and `nature`, at least one region, and no blank region
//!   entry.
//!
//! "Blank" means empty or only whitespace.
//!
//! Corrections (`corrections`) are not checked here: they are checked when
//! written ([`crate::Correction::problems`]), and one from another writer
//! that does not make sense is ignored by readers but never stripped —
//! corrections are append-only.
//!
//! Notes are untrusted (they are fetched from others): validating and
//! stripping take time and memory linear in the note, whatever it holds.

use std::collections::HashSet;
use std::fmt;

use crate::annotation::{Annotation, RegionAnnotation, SCHEMA_V1, parse_timestamp};
use crate::{ConstraintSource, ContextLevel, CrossCuttingConcern, ProvenanceOperation};

/// What to check beyond the document itself. `Default` checks neither.
#[derive(Debug, Clone, Copy, Default)]
pub struct ValidationContext<'a> {
    /// The full SHA of the commit being annotated.
    pub expected_commit: Option<&'a str>,
    /// The files the commit touches (repository-relative paths).
    pub commit_files: Option<&'a [String]>,
}

/// Where a problem is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ProblemLocation {
    /// A document-level field: `$schema`, `commit`, `timestamp`,
    /// `context_level`, `provenance`.
    Document,
    /// The region at `index` in `regions` (before any stripping). `file` and
    /// `anchor` are copied from the region so messages can name it (names longer
    /// than 200 bytes are cut, marked with `…`).
    Region {
        /// Index in `regions`.
        index: usize,
        /// The region's `file`.
        file: String,
        /// The region's `ast_anchor.name`.
        anchor: String,
    },
    /// The concern at `index` in `cross_cutting` (before any stripping).
    CrossCutting {
        /// Index in `cross_cutting`.
        index: usize,
    },
}

/// One problem found by validation.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ValidationProblem {
    /// Where the problem is.
    pub location: ProblemLocation,
    /// What is wrong, naming the field (e.g. `intent is empty`).
    pub message: String,
}

impl fmt::Display for ValidationProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.location {
            ProblemLocation::Document => write!(f, "annotation: {}", self.message),
            ProblemLocation::Region {
                index,
                file,
                anchor,
            } => write!(
                f,
                "region {index} ({}:{}): {}",
                or_placeholder(file),
                or_placeholder(anchor),
                self.message
            ),
            ProblemLocation::CrossCutting { index } => {
                write!(f, "cross-cutting concern {index}: {}", self.message)
            }
        }
    }
}

fn or_placeholder(text: &str) -> &str {
    if text.trim().is_empty() { "?" } else { text }
}

impl Annotation {
    /// Checks the document against the spec's validation list (see the
    /// [module docs](crate::validate)) and returns every problem found, in
    /// document order: document fields, then regions, then cross-cutting
    /// concerns. Empty means valid.
    pub fn validate(&self, ctx: &ValidationContext<'_>) -> Vec<ValidationProblem> {
        let mut problems = Vec::new();
        self.check_document(ctx, &mut problems);
        let commit_files: Option<HashSet<&str>> = ctx
            .commit_files
            .map(|files| files.iter().map(String::as_str).collect());
        for (index, region) in self.regions.iter().enumerate() {
            let file = shortened(&region.file);
            let anchor = shortened(&region.ast_anchor.name);
            let mut report = |message: String| {
                problems.push(ValidationProblem {
                    location: ProblemLocation::Region {
                        index,
                        file: file.clone(),
                        anchor: anchor.clone(),
                    },
                    message,
                });
            };
            check_region(region, commit_files.as_ref(), &mut report);
        }
        for (index, concern) in self.cross_cutting.iter().enumerate() {
            let mut report = |message: String| {
                problems.push(ValidationProblem {
                    location: ProblemLocation::CrossCutting { index },
                    message,
                });
            };
            check_cross_cutting(concern, &mut report);
        }
        problems
    }

    /// Validates, then removes every region and cross-cutting concern that
    /// has a problem. Returns all problems found, with indices as they were
    /// before removal. Document-level problems are returned but remove
    /// nothing.
    pub fn strip_invalid(&mut self, ctx: &ValidationContext<'_>) -> Vec<ValidationProblem> {
        let problems = self.validate(ctx);
        let bad_regions: Vec<usize> = problems
            .iter()
            .filter_map(|p| match p.location {
                ProblemLocation::Region { index, .. } => Some(index),
                _ => None,
            })
            .collect();
        let bad_concerns: Vec<usize> = problems
            .iter()
            .filter_map(|p| match p.location {
                ProblemLocation::CrossCutting { index } => Some(index),
                _ => None,
            })
            .collect();
        retain_indices(&mut self.regions, &bad_regions);
        retain_indices(&mut self.cross_cutting, &bad_concerns);
        problems
    }

    fn check_document(&self, ctx: &ValidationContext<'_>, problems: &mut Vec<ValidationProblem>) {
        let mut report = |message: String| {
            problems.push(ValidationProblem {
                location: ProblemLocation::Document,
                message,
            });
        };
        if self.schema != SCHEMA_V1 {
            report(format!(
                "$schema is {:?}, expected {SCHEMA_V1:?}",
                self.schema
            ));
        }
        if is_blank(&self.commit) {
            report("commit is empty".to_owned());
        } else if let Some(expected) = ctx.expected_commit
            && !self.commit.eq_ignore_ascii_case(expected)
        {
            report(format!(
                "commit {:?} does not match the annotated commit {expected:?}",
                self.commit
            ));
        }
        if parse_timestamp(&self.timestamp).is_none() {
            report(format!(
                "timestamp {:?} is not an RFC 3339 date-time with offset",
                self.timestamp
            ));
        }
        if let ContextLevel::Other(level) = &self.context_level {
            report(format!(
                "context_level {level:?} is not one of: {}",
                ContextLevel::KNOWN.join(", ")
            ));
        }
        if let ProvenanceOperation::Other(operation) = &self.provenance.operation {
            report(format!(
                "provenance.operation {operation:?} is not one of: {}",
                ProvenanceOperation::KNOWN.join(", ")
            ));
        }
    }
}

fn check_region(
    region: &RegionAnnotation,
    commit_files: Option<&HashSet<&str>>,
    report: &mut impl FnMut(String),
) {
    if let Some(problem) = path_problem(&region.file) {
        report(problem);
    } else if let Some(files) = commit_files
        && !files.contains(region.file.as_str())
    {
        report(format!(
            "file {:?} is not among the files of the commit",
            region.file
        ));
    }
    if is_blank(&region.ast_anchor.unit_type) {
        report("ast_anchor.type is empty".to_owned());
    }
    if is_blank(&region.ast_anchor.name) {
        report("ast_anchor.name is empty".to_owned());
    }
    let lines = region.lines;
    if lines.start == 0 || lines.end == 0 {
        report(format!(
            "lines {}:{} must be 1-based (both greater than 0)",
            lines.start, lines.end
        ));
    }
    if lines.start > lines.end {
        report(format!(
            "lines.start ({}) is after lines.end ({})",
            lines.start, lines.end
        ));
    }
    if is_blank(&region.intent) {
        report("intent is empty".to_owned());
    }
    for (i, constraint) in region.constraints.iter().enumerate() {
        if is_blank(&constraint.text) {
            report(format!("constraints[{i}].text is empty"));
        }
        if let ConstraintSource::Other(source) = &constraint.source {
            report(format!(
                "constraints[{i}].source {source:?} is not one of: {}",
                ConstraintSource::KNOWN.join(", ")
            ));
        }
    }
    for (i, dependency) in region.semantic_dependencies.iter().enumerate() {
        for (field, value) in [
            ("file", &dependency.file),
            ("anchor", &dependency.anchor),
            ("nature", &dependency.nature),
        ] {
            if is_blank(value) {
                report(format!("semantic_dependencies[{i}].{field} is empty"));
            }
        }
    }
    for (i, retired) in region.retires.iter().enumerate() {
        if is_blank(retired) {
            report(format!("retires[{i}] is empty"));
        }
    }
}

fn check_cross_cutting(concern: &CrossCuttingConcern, report: &mut impl FnMut(String)) {
    if is_blank(&concern.description) {
        report("description is empty".to_owned());
    }
    if is_blank(&concern.nature) {
        report("nature is empty".to_owned());
    }
    if concern.regions.is_empty() {
        report("regions is empty; a concern names at least one region".to_owned());
    }
    for (i, region) in concern.regions.iter().enumerate() {
        if is_blank(region) {
            report(format!("regions[{i}] is empty"));
        }
    }
}

/// Why `path` is not a normalized repository-relative path, if it is not.
fn path_problem(path: &str) -> Option<String> {
    if is_blank(path) {
        return Some("file is empty".to_owned());
    }
    let bytes = path.as_bytes();
    let windows_drive = bytes.len() >= 3
        && bytes[0].is_ascii_alphabetic()
        && bytes[1] == b':'
        && matches!(bytes[2], b'/' | b'\\');
    if path.starts_with('/') || path.starts_with('\\') || windows_drive {
        return Some(format!("file {path:?} is an absolute path"));
    }
    for component in path.split('/') {
        let problem = match component {
            "" => "an empty component",
            "." => "a '.' component",
            ".." => "a '..' component",
            _ => continue,
        };
        return Some(format!(
            "file {path:?} has {problem}; expected a normalized path relative to the repository root"
        ));
    }
    None
}

fn is_blank(text: &str) -> bool {
    text.trim().is_empty()
}

/// Removes the elements at `bad` (indices may repeat, any order), in linear
/// time: a note may hold many regions, all of them bad.
fn retain_indices<T>(items: &mut Vec<T>, bad: &[usize]) {
    if bad.is_empty() {
        return;
    }
    let mut drop = vec![false; items.len()];
    for &index in bad {
        if let Some(slot) = drop.get_mut(index) {
            *slot = true;
        }
    }
    let mut index = 0;
    items.retain(|_| {
        let keep = !drop[index];
        index += 1;
        keep
    });
}

/// The longest region name (`file`, anchor) a [`ProblemLocation`] copies, in
/// bytes. Each problem of a region names it, so copying a name of any length
/// into each would let a small note validate into a huge list.
pub(crate) const LOCATION_NAME_BYTES: usize = 200;

/// `text`, cut to [`LOCATION_NAME_BYTES`] (at a character boundary) with `…`
/// marking the cut.
fn shortened(text: &str) -> String {
    if text.len() <= LOCATION_NAME_BYTES {
        return text.to_owned();
    }
    let mut end = LOCATION_NAME_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_problems() {
        assert_eq!(path_problem("src/a.rs"), None);
        assert_eq!(path_problem("a.rs"), None);
        assert_eq!(path_problem(".github/ci.yml"), None);
        assert_eq!(path_problem("a..b/c"), None);
        assert_eq!(path_problem("c:notes.txt"), None);
        for bad in [
            "",
            " ",
            "/etc/passwd",
            "\\x",
            "C:/x",
            "./a.rs",
            "a/../b",
            "..",
            "a//b",
            "a/",
        ] {
            assert!(path_problem(bad).is_some(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn retain_indices_removes_exactly_the_given_positions() {
        let mut items = vec!['a', 'b', 'c', 'd', 'e'];
        retain_indices(&mut items, &[3, 1, 3]);
        assert_eq!(items, ['a', 'c', 'e']);
    }

    #[test]
    fn display_names_region_file_and_anchor() {
        let problem = ValidationProblem {
            location: ProblemLocation::Region {
                index: 2,
                file: "src/a.rs".to_owned(),
                anchor: "connect".to_owned(),
            },
            message: "intent is empty".to_owned(),
        };
        assert_eq!(
            problem.to_string(),
            "region 2 (src/a.rs:connect): intent is empty"
        );
        let unnamed = ValidationProblem {
            location: ProblemLocation::Region {
                index: 0,
                file: String::new(),
                anchor: " ".to_owned(),
            },
            message: "file is empty".to_owned(),
        };
        assert_eq!(unnamed.to_string(), "region 0 (?:?): file is empty");
    }
}
