//! Joining annotations without losing any of them: the JSON-aware merge used
//! wherever two notes meet on one commit (`ultragit sync`, `import`, an amend's
//! kept regions plus its delta, a squash of several sources).
//!
//! Git's own notes merge strategies work on text: `concatenate` produces two
//! JSON documents back to back, which no reader can parse. These functions work
//! on parsed [`Annotation`]s and always produce one valid document.
//!
//! **Rules** (documented choices, pinned by the tests below):
//! - Regions are a union. Two regions are the *same* when they name the same
//!   file, the same anchor (kind and name) and the same intent (whitespace
//!   trimmed); the same region appears once, its lists (constraints,
//!   dependencies, related annotations, tags) joined without repeats and its
//!   optional texts (`reasoning`, `risk_notes`) taken from the first side that
//!   has them. Regions on the same unit with different intents are both kept:
//!   each is a separate statement about the code.
//! - Cross-cutting concerns are a union; equal ones (description, nature and
//!   the set of regions) appear once.
//! - The summary and task come from the first side that has one; the context
//!   level is `enhanced` when either side is; the timestamp is the later one.
//! - Corrections (see [`crate::correction`]) are a union, in order: ours,
//!   then those of theirs that ours lacks. Two are the same when every member
//!   is (target, kind, field, value, reason, author, timestamp), so a
//!   correction synced back and forth appears once and none is ever lost.
//! - The provenance of the first side is kept; `derived_from` gains the other
//!   side's entries. Callers that derive a new annotation (amend, squash) set
//!   the provenance themselves afterwards.
//! - Merging is idempotent (`merge(a, a) == a`), and a side merged with a
//!   document it already contains yields that document.

use crate::annotation::{Annotation, ContextLevel, CrossCuttingConcern, RegionAnnotation};

/// What [`merge_texts`] decided for one commit's two note bodies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextMerge {
    /// Keep our note as it is (equal, already containing theirs, or theirs
    /// unreadable).
    Ours,
    /// Take their note as it is (it already contains ours, or ours is
    /// unreadable and theirs readable).
    Theirs,
    /// Both were readable and differ: store this merged document.
    Merged(String),
}

/// Which side of a [`merge_texts`] could not be parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unreadable {
    Ours,
    Theirs,
    Both,
}

/// Merges two note bodies of one commit, as `sync` and `import` do.
///
/// Never concatenates and never fails: a side that does not parse as an
/// annotation is *kept where it is* (the notes ref's history still holds it,
/// and `read` skips it with a warning) and the readable side wins; when
/// neither parses, ours is kept. The second value names the unreadable side,
/// for the caller's warning.
pub fn merge_texts(ours: &str, theirs: &str) -> (TextMerge, Option<Unreadable>) {
    if ours == theirs {
        return (TextMerge::Ours, None);
    }
    match (Annotation::from_json(ours), Annotation::from_json(theirs)) {
        (Ok(a), Ok(b)) => {
            let merged = merge(&a, &b);
            if merged == a {
                (TextMerge::Ours, None)
            } else if merged == b || merge(&b, &a) == b {
                // Theirs already says everything ours does (perhaps in another
                // order): take it as it is, so both sides hold one text.
                (TextMerge::Theirs, None)
            } else {
                (TextMerge::Merged(merged.to_json()), None)
            }
        }
        (Ok(_), Err(_)) => (TextMerge::Ours, Some(Unreadable::Theirs)),
        (Err(_), Ok(_)) => (TextMerge::Theirs, Some(Unreadable::Ours)),
        (Err(_), Err(_)) => (TextMerge::Ours, Some(Unreadable::Both)),
    }
}

/// Merges `theirs` into `ours` (see the module docs for the rules). The result
/// keeps `ours`'s commit id and `$schema`.
pub fn merge(ours: &Annotation, theirs: &Annotation) -> Annotation {
    if ours == theirs {
        return ours.clone();
    }
    let mut merged = ours.clone();
    if merged.summary.trim().is_empty() {
        merged.summary = theirs.summary.clone();
    }
    if merged.task.as_deref().is_none_or(|t| t.trim().is_empty()) && theirs.task.is_some() {
        merged.task = theirs.task.clone();
    }
    if theirs.context_level == ContextLevel::Enhanced {
        merged.context_level = ContextLevel::Enhanced;
    }
    if later(&theirs.timestamp, &merged.timestamp) {
        merged.timestamp = theirs.timestamp.clone();
    }
    for region in &theirs.regions {
        add_region(&mut merged.regions, region);
    }
    for concern in &theirs.cross_cutting {
        add_concern(&mut merged.cross_cutting, concern);
    }
    for commit in &theirs.provenance.derived_from {
        push_unique(&mut merged.provenance.derived_from, commit);
    }
    for correction in &theirs.corrections {
        push_unique(&mut merged.corrections, correction);
    }
    merged
}

/// Adds `region` to `regions` unless the same region (see the module docs) is
/// there; then joins the two instead. Returns whether a new region was added.
pub fn add_region(regions: &mut Vec<RegionAnnotation>, region: &RegionAnnotation) -> bool {
    match regions.iter_mut().find(|r| same_region(r, region)) {
        Some(existing) => {
            join_region(existing, region);
            false
        }
        None => {
            regions.push(region.clone());
            true
        }
    }
}

/// Adds `concern` to `concerns` unless an equal one is there. Returns whether
/// it was added.
pub fn add_concern(concerns: &mut Vec<CrossCuttingConcern>, concern: &CrossCuttingConcern) -> bool {
    if concerns.iter().any(|c| same_concern(c, concern)) {
        return false;
    }
    concerns.push(concern.clone());
    true
}

/// Whether two regions are the same statement about the same unit.
fn same_region(a: &RegionAnnotation, b: &RegionAnnotation) -> bool {
    a.file == b.file
        && a.ast_anchor.unit_type == b.ast_anchor.unit_type
        && a.ast_anchor.name == b.ast_anchor.name
        && a.intent.trim() == b.intent.trim()
}

fn same_concern(a: &CrossCuttingConcern, b: &CrossCuttingConcern) -> bool {
    fn sorted(c: &CrossCuttingConcern) -> Vec<&str> {
        let mut regions: Vec<&str> = c.regions.iter().map(String::as_str).collect();
        regions.sort_unstable();
        regions.dedup();
        regions
    }
    a.description.trim() == b.description.trim()
        && a.nature.trim() == b.nature.trim()
        && sorted(a) == sorted(b)
}

fn join_region(into: &mut RegionAnnotation, from: &RegionAnnotation) {
    if into.reasoning.is_none() {
        into.reasoning = from.reasoning.clone();
    }
    if into.risk_notes.is_none() {
        into.risk_notes = from.risk_notes.clone();
    }
    if into.ast_anchor.signature.is_none() {
        into.ast_anchor.signature = from.ast_anchor.signature.clone();
    }
    for c in &from.constraints {
        push_unique(&mut into.constraints, c);
    }
    for d in &from.semantic_dependencies {
        push_unique(&mut into.semantic_dependencies, d);
    }
    for r in &from.related_annotations {
        push_unique(&mut into.related_annotations, r);
    }
    for t in &from.tags {
        push_unique(&mut into.tags, t);
    }
    for r in &from.retires {
        push_unique(&mut into.retires, r);
    }
}

fn push_unique<T: PartialEq + Clone>(list: &mut Vec<T>, item: &T) {
    if !list.contains(item) {
        list.push(item.clone());
    }
}

/// Whether RFC 3339 timestamp `a` is later than `b`; unparsable ones never win.
fn later(a: &str, b: &str) -> bool {
    use chrono::DateTime;
    match (
        DateTime::parse_from_rfc3339(a),
        DateTime::parse_from_rfc3339(b),
    ) {
        (Ok(a), Ok(b)) => a > b,
        (Ok(_), Err(_)) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::annotation::{
        AstAnchor, Constraint, ConstraintSource, LineRange, ProvenanceOperation,
    };

    const C: &str = "4f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39";

    fn region(file: &str, name: &str, intent: &str) -> RegionAnnotation {
        RegionAnnotation::new(
            file,
            AstAnchor::new("function", name),
            LineRange::new(1, 5),
            intent,
        )
    }

    fn note(ts: &str, regions: Vec<RegionAnnotation>) -> Annotation {
        let mut a = Annotation::new(C, ts, "summary", ContextLevel::Inferred);
        a.regions = regions;
        a
    }

    #[test]
    fn merging_with_itself_changes_nothing() {
        let a = note("2025-01-01T00:00:00Z", vec![region("a.rs", "f", "Does f.")]);
        assert_eq!(merge(&a, &a), a);
    }

    #[test]
    fn union_keeps_both_sides_and_joins_the_same_region() {
        let mut f1 = region("a.rs", "f", "Does f.");
        f1.constraints
            .push(Constraint::new("keep sorted", ConstraintSource::Author));
        let mut f2 = region("a.rs", "f", "  Does f.\n");
        f2.constraints
            .push(Constraint::new("keep sorted", ConstraintSource::Author));
        f2.constraints
            .push(Constraint::new("no alloc", ConstraintSource::Inferred));
        f2.risk_notes = Some("hot path".into());
        let g = region("b.rs", "g", "Does g.");
        let f_other = region("a.rs", "f", "Another view of f.");

        let ours = note("2025-01-01T00:00:00Z", vec![f1]);
        let mut theirs = note("2025-02-01T00:00:00Z", vec![f2, g.clone(), f_other.clone()]);
        theirs.context_level = ContextLevel::Enhanced;
        theirs.provenance.derived_from = vec!["abc".into()];

        let merged = merge(&ours, &theirs);
        assert_eq!(merged.regions.len(), 3);
        assert_eq!(merged.regions[0].constraints.len(), 2);
        assert_eq!(merged.regions[0].risk_notes.as_deref(), Some("hot path"));
        assert_eq!(merged.regions[1], g);
        assert_eq!(merged.regions[2], f_other);
        assert_eq!(merged.context_level, ContextLevel::Enhanced);
        assert_eq!(merged.timestamp, "2025-02-01T00:00:00Z");
        assert_eq!(merged.provenance.operation, ProvenanceOperation::Initial);
        assert_eq!(merged.provenance.derived_from, vec!["abc".to_owned()]);
        // Merging again adds nothing.
        assert_eq!(merge(&merged, &theirs), merged);
        assert_eq!(merge(&merged, &ours), merged);
    }

    #[test]
    fn concerns_are_equal_regardless_of_region_order() {
        let concern = |regions: &[&str]| CrossCuttingConcern {
            description: "lock order".into(),
            regions: regions.iter().map(|s| (*s).to_owned()).collect(),
            nature: "coupling".into(),
        };
        let mut ours = note("2025-01-01T00:00:00Z", vec![]);
        ours.cross_cutting.push(concern(&["a.rs:f", "b.rs:g"]));
        let mut theirs = ours.clone();
        theirs.cross_cutting = vec![concern(&["b.rs:g", "a.rs:f"]), concern(&["c.rs:h"])];
        let merged = merge(&ours, &theirs);
        assert_eq!(merged.cross_cutting.len(), 2);
    }

    #[test]
    fn texts_merge_without_concatenation() {
        let a = note("2025-01-01T00:00:00Z", vec![region("a.rs", "f", "Does f.")]);
        let b = note("2025-01-01T00:00:00Z", vec![region("b.rs", "g", "Does g.")]);
        let (ja, jb) = (a.to_json(), b.to_json());
        assert_eq!(merge_texts(&ja, &ja), (TextMerge::Ours, None));
        let (TextMerge::Merged(text), None) = merge_texts(&ja, &jb) else {
            panic!("expected a merged document");
        };
        assert_eq!(Annotation::from_json(&text).map(|m| m.regions.len()), Ok(2));
        assert_eq!(merge_texts(&text, &ja), (TextMerge::Ours, None));
        assert_eq!(merge_texts(&ja, &text), (TextMerge::Theirs, None));
        assert_eq!(
            merge_texts(&ja, "{not json"),
            (TextMerge::Ours, Some(Unreadable::Theirs))
        );
        assert_eq!(
            merge_texts("{}", &jb),
            (TextMerge::Theirs, Some(Unreadable::Ours))
        );
        assert_eq!(
            merge_texts("x", "y"),
            (TextMerge::Ours, Some(Unreadable::Both))
        );
    }

    #[test]
    fn corrections_are_a_union_without_repeats() {
        use crate::correction::{Correction, CorrectionTarget};
        let flag = |reason: &str, ts: &str| {
            Correction::flag(CorrectionTarget::unit("a.rs", "f"), reason, "Ann <a@x>", ts)
        };
        let base = note("2025-01-01T00:00:00Z", vec![region("a.rs", "f", "Does f.")]);
        let mut ours = base.clone();
        ours.corrections = vec![flag("stale", "2025-03-01T00:00:00Z")];
        let mut theirs = base.clone();
        theirs.corrections = vec![
            flag("wrong", "2025-02-01T00:00:00Z"),
            flag("stale", "2025-03-01T00:00:00Z"),
            // Same words at another time: another correction.
            flag("stale", "2025-03-02T00:00:00Z"),
        ];
        let merged = merge(&ours, &theirs);
        let reasons: Vec<(&str, &str)> = merged
            .corrections
            .iter()
            .map(|c| (c.reason.as_str(), c.timestamp.as_str()))
            .collect();
        assert_eq!(
            reasons,
            [
                ("stale", "2025-03-01T00:00:00Z"),
                ("wrong", "2025-02-01T00:00:00Z"),
                ("stale", "2025-03-02T00:00:00Z")
            ]
        );
        assert_eq!(merged.regions, base.regions);
        assert_eq!(merge(&merged, &theirs), merged);
        assert_eq!(merge(&merged, &ours), merged);
        assert_eq!(merge(&base, &ours), ours);
        // Theirs already holds every correction of ours, in another order:
        // taken as it is, so both sides end with one text.
        assert_eq!(
            merge_texts(&ours.to_json(), &theirs.to_json()),
            (TextMerge::Theirs, None)
        );
        let mut more = ours.clone();
        more.corrections.push(flag("mine", "2025-04-01T00:00:00Z"));
        let (TextMerge::Merged(text), None) = merge_texts(&more.to_json(), &theirs.to_json())
        else {
            panic!("expected a merged document");
        };
        assert_eq!(
            Annotation::from_json(&text).map(|m| m.corrections.len()),
            Ok(4)
        );
    }

    #[test]
    fn unparsable_timestamps_never_win() {
        assert!(!later("yesterday", "2025-01-01T00:00:00Z"));
        assert!(later("2025-01-01T00:00:00Z", "yesterday"));
        assert!(later("2025-01-02T01:00:00+01:00", "2025-01-01T23:30:00Z"));
    }
}
