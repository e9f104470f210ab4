//! Confidence scoring (spec 003 §4.7): four factors, weighted 0.4 / 0.3 / 0.2 /
//! 0.1.
//!
//! - **Recency:** `0.5 ^ (age_days / half_life)`, age measured from HEAD's commit
//!   time in whole days; annotations newer than HEAD count as age 0.
//! - **Context level:** `enhanced` 1.0, `inferred` 0.5 (an unknown level from a
//!   newer writer: 0.5).
//! - **Anchor stability** against today's outline: name and signature match 1.0,
//!   name matches but the signature differs 0.7, name not found 0.3; a region
//!   matched by line overlap only 0.4, as is any region of a file without a grammar.
//!   A region matched fuzzily scores at most 0.7 (its name only approximately
//!   matches what was asked) — our choice, so that an exact match never scores
//!   below a fuzzy one.
//! - **Provenance:** `initial` 1.0, `amend` 0.8, `squash` 0.7 (unknown: 0.7).
//!
//! Beyond the spec: a region someone flagged (`ultragit flag`) has its
//! combined confidence multiplied by [`FLAGGED_FACTOR`] (0.5), once however
//! many flags it has. The four `confidence_factors` stay the spec's, so a
//! flagged region's `confidence` is below their weighted sum; its
//! `corrections` say why.

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
pub const FLAGGED_FACTOR: f64 = 0.5;

/// `confidence`, times [`FLAGGED_FACTOR`] when `flagged`.
pub fn flag_penalty(confidence: f64, flagged: bool) -> f64 {
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
