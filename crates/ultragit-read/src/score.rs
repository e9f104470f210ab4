//! Confidence scoring (spec 003 §4.7): four factors, weighted 0.4 / 0.3 / 0.2 /
//! 0.1.
//!
//! - **Recency:** `0.5 ^ (age_days / half_life)`, age measured from HEAD's commit
//!   time in whole days; annotations newer than HEAD count as age 0.
//!   **Deviation from spec 003 §4.7:** the age is that of the *annotated
//!   commit* (its committer date), not of the note (`timestamp`, when the note
//!   was written). A note written today by `ultragit backfill` on a 2006 commit
//!   describes 2006 code and must not look newest; `--since` is judged by the
//!   same date, and trimming drops the newest commits first by it too.
//! - **Context level:** `enhanced` 1.0, `inferred` 0.5 (an unknown level from a
//!   newer writer: 0.5).
//! - **Anchor stability** against today's outline: name and signature match 1.0,
//!   name matches but the signature differs 0.7, name not found 0.3; a region
//!   matched by line overlap only 0.4, as is any region of a file without a grammar
//!   or found through an anchor the outline does not have (resolved through the
//!   notes: a macro-defined test, say).
//!   A region matched fuzzily scores at most 0.7 (its name only approximately
//!   matches what was asked) — our choice, so that an exact match never scores
//!   below a fuzzy one.
//!   **Staleness** (our addition): when later commits without an annotation
//!   changed some of the region's lines today (blame names them for lines in
//!   its span), the factor is multiplied by `1 − 0.5 × changed / span`
//!   (`score_staleness`): a region whose lines were all rewritten since keeps
//!   half its stability, one untouched since keeps all of it.
//! - **Provenance:** `initial` 1.0, `amend` 0.8, `squash` 0.7 (unknown: 0.7).
//!
//! Beyond the spec: a region someone flagged (`ultragit flag`) has its
//! combined confidence multiplied by `FLAGGED_FACTOR` (0.5), once however
//! many flags it has. The four `confidence_factors` stay the spec's, so a
//! flagged region's `confidence` is below their weighted sum; its
//! `corrections` say why.
//!
//! The output carries every factor and the combined confidence rounded to 3
//! decimals (`rounded`); the confidence is computed from the unrounded
//! factors, so it can differ from the rounded factors' weighted sum by up to
//! 0.001.

use chrono::{DateTime, Utc};
use outline::{Unit, anchor_stability};
use ultragit_schema::{ConfidenceFactors, ContextLevel, ProvenanceOperation, RegionAnnotation};

/// How a region was matched to the query (spec 003 §4.5 `MatchType`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MatchType {
    ExactAnchor,
    UnqualifiedAnchor,
    FuzzyAnchor { distance: u32 },
    LineOverlap { overlap_ratio: f64 },
    WholeFile,
}

impl MatchType {
    /// Smaller is better (for keeping the best of duplicate matches).
    pub(crate) fn rank(&self) -> u32 {
        match self {
            MatchType::ExactAnchor => 0,
            MatchType::UnqualifiedAnchor => 1,
            MatchType::FuzzyAnchor { distance } => 2 + distance,
            MatchType::WholeFile => 10,
            MatchType::LineOverlap { .. } => 11,
        }
    }
}

/// `0.5 ^ (age_days / half_life)`, in `[0, 1]`.
pub fn score_recency(annotation: DateTime<Utc>, head: DateTime<Utc>, half_life_days: f64) -> f64 {
    let age_days = (head - annotation).num_days().max(0) as f64;
    0.5_f64.powf(age_days / half_life_days).clamp(0.0, 1.0)
}

/// `enhanced` 1.0, anything else 0.5.
pub fn score_context_level(level: &ContextLevel) -> f64 {
    match level {
        ContextLevel::Enhanced => 1.0,
        _ => 0.5,
    }
}

/// `initial` 1.0, `amend` 0.8, `squash` (or unknown) 0.7.
pub fn score_provenance(operation: &ProvenanceOperation) -> f64 {
    match operation {
        ProvenanceOperation::Initial => 1.0,
        ProvenanceOperation::Amend => 0.8,
        _ => 0.7,
    }
}

/// Anchor stability of `region` against today's outline of its file (`None`: no
/// grammar for the file).
pub fn score_anchor_stability(
    region: &RegionAnnotation,
    current: Option<&[Unit]>,
    matched: MatchType,
) -> f64 {
    let Some(units) = current else {
        return 0.4;
    };
    if let MatchType::LineOverlap { .. } = matched {
        return 0.4;
    }
    let score = anchor_stability(
        units,
        &region.ast_anchor.name,
        region.ast_anchor.signature.as_deref(),
    )
    .score();
    if let MatchType::FuzzyAnchor { .. } = matched {
        score.min(0.7)
    } else {
        score
    }
}

/// What a flag multiplies a region's confidence by.
pub(crate) const FLAGGED_FACTOR: f64 = 0.5;

/// `confidence`, times [`FLAGGED_FACTOR`] when `flagged`.
pub(crate) fn flag_penalty(confidence: f64, flagged: bool) -> f64 {
    if flagged {
        confidence * FLAGGED_FACTOR
    } else {
        confidence
    }
}

/// The weighted sum, clamped to `[0, 1]`.
pub fn compute_confidence(factors: &ConfidenceFactors) -> f64 {
    factors.combined().clamp(0.0, 1.0)
}

/// The anchor-stability multiplier for a region `changed` of whose `span`
/// lines later unannotated commits last changed: `1 − 0.5 × changed / span`,
/// in `[0.5, 1]`.
pub(crate) fn score_staleness(changed: u32, span: u32) -> f64 {
    if span == 0 {
        return 1.0;
    }
    let share = (f64::from(changed) / f64::from(span)).clamp(0.0, 1.0);
    1.0 - 0.5 * share
}

/// `value` rounded to 3 decimals, as scores appear in the output.
pub(crate) fn round3(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}

/// The factors and their confidence as the output shows them: the confidence
/// of the exact factors, then everything rounded to 3 decimals.
pub(crate) fn rounded(factors: ConfidenceFactors) -> (ConfidenceFactors, f64) {
    let confidence = round3(compute_confidence(&factors));
    let factors = ConfidenceFactors {
        recency: round3(factors.recency),
        context_level: round3(factors.context_level),
        anchor_stability: round3(factors.anchor_stability),
        provenance: round3(factors.provenance),
    };
    (factors, confidence)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{Duration, TimeZone};

    fn day(n: i64) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2025, 1, 1, 12, 0, 0).unwrap() + Duration::days(n)
    }

    #[test]
    fn recency_halves_every_half_life() {
        let head = day(400);
        assert_eq!(score_recency(day(400), head, 180.0), 1.0);
        assert!((score_recency(day(220), head, 180.0) - 0.5).abs() < 1e-12);
        assert!((score_recency(day(40), head, 180.0) - 0.25).abs() < 1e-12);
        assert_eq!(score_recency(day(500), head, 180.0), 1.0, "newer than HEAD");
        assert!((score_recency(day(390), head, 10.0) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn level_and_provenance_tables() {
        assert_eq!(score_context_level(&ContextLevel::Enhanced), 1.0);
        assert_eq!(score_context_level(&ContextLevel::Inferred), 0.5);
        assert_eq!(
            score_context_level(&ContextLevel::Other("manual".into())),
            0.5
        );
        assert_eq!(score_provenance(&ProvenanceOperation::Initial), 1.0);
        assert_eq!(score_provenance(&ProvenanceOperation::Amend), 0.8);
        assert_eq!(score_provenance(&ProvenanceOperation::Squash), 0.7);
    }

    #[test]
    fn staleness_and_rounding() {
        assert_eq!(score_staleness(0, 10), 1.0);
        assert_eq!(score_staleness(10, 10), 0.5);
        assert_eq!(score_staleness(5, 10), 0.75);
        assert_eq!(score_staleness(3, 0), 1.0);
        assert_eq!(round3(0.123_456), 0.123);
        assert_eq!(round3(0.9995), 1.0);
        let (f, c) = rounded(ConfidenceFactors {
            recency: 0.961_234,
            context_level: 1.0,
            anchor_stability: 0.7,
            provenance: 1.0,
        });
        assert_eq!(f.recency, 0.961);
        assert_eq!(c, 0.924);
    }

    #[test]
    fn combined_is_the_weighted_sum() {
        let f = ConfidenceFactors {
            recency: 0.5,
            context_level: 1.0,
            anchor_stability: 0.7,
            provenance: 0.8,
        };
        assert!((compute_confidence(&f) - (0.2 + 0.3 + 0.14 + 0.08)).abs() < 1e-12);
    }
}
