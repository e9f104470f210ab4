//! Property tests of the §8 invariants.

use chrono::{Duration, TimeZone, Utc};
use proptest::prelude::*;
use ultragit_read::score::{
    MatchType, compute_confidence, score_anchor_stability, score_context_level, score_provenance,
    score_recency,
};
use ultragit_read::{Format, ReadOutput, estimate_tokens, render, trim::trim_to_budget};
use ultragit_schema::{
    AstAnchor, ConfidenceFactors, Constraint, ConstraintSource, ContextLevel, CrossCuttingEntry,
    DependencyEntry, LineRange, ProvenanceOperation, QueryEcho, RegionAnnotation, ResolvedRelated,
    ScoredRegion,
};

fn units() -> Vec<outline::Unit> {
    outline::outline("src/lib.rs", "pub fn connect(a: u8) {}\n").unwrap()
}

fn factors(
    age_days: i64,
    enhanced: bool,
    matched: MatchType,
    op: u8,
    half_life: f64,
) -> ConfidenceFactors {
    let head = Utc.with_ymd_and_hms(2025, 6, 1, 0, 0, 0).unwrap();
    let mut region = RegionAnnotation::new(
        "src/lib.rs",
        AstAnchor::new("function", "connect"),
        LineRange::new(1, 1),
        "x",
    );
    if matches!(matched, MatchType::FuzzyAnchor { .. }) {
        region.ast_anchor.name = "conect".into();
    }
    let units = units();
    ConfidenceFactors {
        recency: score_recency(head - Duration::days(age_days), head, half_life),
        context_level: score_context_level(&if enhanced {
            ContextLevel::Enhanced
        } else {
            ContextLevel::Inferred
        }),
        anchor_stability: score_anchor_stability(&region, Some(&units), matched),
        provenance: score_provenance(&match op % 3 {
            0 => ProvenanceOperation::Initial,
            1 => ProvenanceOperation::Amend,
            _ => ProvenanceOperation::Squash,
        }),
    }
}

fn match_type(choice: u8) -> MatchType {
    match choice % 5 {
        0 => MatchType::ExactAnchor,
        1 => MatchType::UnqualifiedAnchor,
        2 => MatchType::FuzzyAnchor { distance: 1 },
        3 => MatchType::LineOverlap { overlap_ratio: 0.5 },
        _ => MatchType::WholeFile,
    }
}

proptest! {
    #[test]
    fn scores_stay_in_the_unit_interval(age in -1000i64..100_000, enhanced: bool, m in 0u8..5, op in 0u8..3, half_life in 1.0f64..5000.0) {
        let f = factors(age, enhanced, match_type(m), op, half_life);
        for x in [f.recency, f.context_level, f.anchor_stability, f.provenance, compute_confidence(&f)] {
            prop_assert!((0.0..=1.0).contains(&x), "{x}");
        }
    }

    #[test]
    fn newer_scores_at_least_as_high(a in 0i64..10_000, b in 0i64..10_000, enhanced: bool, m in 0u8..5, op in 0u8..3) {
        let (newer, older) = (a.min(b), a.max(b));
        let n = compute_confidence(&factors(newer, enhanced, match_type(m), op, 180.0));
        let o = compute_confidence(&factors(older, enhanced, match_type(m), op, 180.0));
        prop_assert!(n >= o);
    }

    #[test]
    fn enhanced_scores_at_least_as_high(age in 0i64..10_000, m in 0u8..5, op in 0u8..3) {
        let e = compute_confidence(&factors(age, true, match_type(m), op, 180.0));
        let i = compute_confidence(&factors(age, false, match_type(m), op, 180.0));
        prop_assert!(e >= i);
    }

    #[test]
    fn exact_anchor_matches_score_at_least_as_high_as_fuzzy(age in 0i64..10_000, enhanced: bool, op in 0u8..3) {
        let exact = compute_confidence(&factors(age, enhanced, MatchType::ExactAnchor, op, 180.0));
        let fuzzy = compute_confidence(&factors(age, enhanced, MatchType::FuzzyAnchor { distance: 2 }, op, 180.0));
        prop_assert!(exact >= fuzzy);
    }
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec("[a-zA-Z0-9 .,!?é]{0,60}", 0..4).prop_map(|parts| parts.join(". "))
}

fn region_strategy() -> impl Strategy<Value = ScoredRegion> {
    (
        "[a-z]{1,12}",
        "[a-z]{1,30}",
        prop::collection::vec(text(), 0..3),
        proptest::option::of(text()),
        proptest::option::of(text()),
        prop::collection::vec("[a-z]{1,8}", 0..4),
        0u32..365,
        0.0f64..=1.0,
        prop::collection::vec(text(), 0..3),
    )
        .prop_map(
            |(name, intent, constraints, reasoning, risk, tags, day, confidence, related)| {
                let mut region = RegionAnnotation::new(
                    "src/lib.rs",
                    AstAnchor::new("function", name),
                    LineRange::new(1, 9),
                    format!("i{intent}"),
                );
                region.constraints = constraints
                    .into_iter()
                    .map(|c| Constraint::new(format!("c{c}"), ConstraintSource::Inferred))
                    .collect();
                region.reasoning = reasoning;
                region.risk_notes = risk;
                region.tags = tags;
                ScoredRegion {
                    region,
                    commit_sha: format!("{day:040}"),
                    timestamp: Utc.with_ymd_and_hms(2024, 1, 1, 0, 0, 0).unwrap()
                        + Duration::days(i64::from(day)),
                    commit_date: None,
                    confidence,
                    confidence_factors: ConfidenceFactors::default(),
                    related: related
                        .into_iter()
                        .map(|intent| ResolvedRelated {
                            commit: "c".repeat(40),
                            anchor: "g".into(),
                            relationship: "r".into(),
                            confidence: 0.5,
                            intent: Some(intent),
                        })
                        .collect(),
                    corrections: Vec::new(),
                    changed_since: Vec::new(),
                    focus: None,
                }
            },
        )
}

fn output_strategy() -> impl Strategy<Value = ReadOutput> {
    (
        prop::collection::vec(region_strategy(), 0..8),
        prop::collection::vec(text(), 0..4),
        prop::collection::vec(text(), 0..4),
    )
        .prop_map(|(regions, deps, concerns)| {
            let mut out = ReadOutput::new(QueryEcho {
                files: vec!["src/lib.rs".into()],
                anchor: Some("f".into()),
                ..QueryEcho::default()
            });
            out.stats.regions_returned = regions.len() as u32;
            out.regions = regions;
            out.dependencies_on_this = deps
                .into_iter()
                .map(|nature| DependencyEntry {
                    file: "src/a.rs".into(),
                    anchor: "a".into(),
                    nature,
                    commit: "d".repeat(40),
                    target_file: "src/lib.rs".into(),
                    target_anchor: "f".into(),
                })
                .collect();
            out.cross_cutting = concerns
                .into_iter()
                .map(|description| CrossCuttingEntry {
                    description,
                    regions: vec!["src/lib.rs:f".into()],
                    nature: "n".into(),
                    commit: "e".repeat(40),
                })
                .collect();
            out
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn trimmed_output_fits_stays_valid_and_keeps_intent_and_constraints(
        output in output_strategy(),
        slack in 0u32..3000,
        format_choice in 0u8..3,
        verbose: bool,
    ) {
        let format = [Format::Markdown, Format::Json, Format::Pretty][format_choice as usize];
        // The smallest possible output: nothing but the query, stats and the notice.
        let mut floor = output.clone();
        floor.regions.clear();
        floor.dependencies_on_this.clear();
        floor.cross_cutting.clear();
        floor.decisions.clear();
        floor.trimmed = Some(ultragit_schema::TrimmedInfo { original_regions: 99, returned_regions: 99, dropped_commits: output.regions.iter().map(|r| r.commit_sha.clone()).collect(), strategy: "lowest_confidence_first".into(), estimated_tokens: 999_999, dropped_decisions: 999 });
        let budget = estimate_tokens(&floor, format, verbose) + slack;
        let before: Vec<(String, usize)> = output.regions.iter().map(|r| (r.region.intent.clone(), r.region.constraints.len())).collect();
        let mut trimmed = output.clone();
        trim_to_budget(&mut trimmed, budget, format, verbose);
        // It fits, or not even the top region at its minimum does, and says so;
        // a read with regions never trims to none.
        let fits = estimate_tokens(&trimmed, format, verbose) <= budget;
        let too_small = trimmed.regions.len() == 1
            && trimmed.warnings.iter().any(|w| w.contains("too small for one full region"));
        prop_assert!(fits || too_small);
        prop_assert!(output.regions.is_empty() || !trimmed.regions.is_empty());
        // Intents may be shortened (a prefix, perhaps with an ellipsis), never removed.
        for r in &trimmed.regions {
            let intent = r.region.intent.trim_end_matches('…');
            prop_assert!(!r.region.intent.trim().is_empty());
            prop_assert!(before.iter().any(|(i, n)| i.starts_with(intent) && *n == r.region.constraints.len()));
        }
        if format == Format::Json {
            let value: serde_json::Value = serde_json::from_str(&render(&trimmed, format, verbose)).unwrap();
            for region in value["regions"].as_array().unwrap() {
                prop_assert!(region["region"].get("intent").is_some());
                prop_assert!(region["region"].get("constraints").is_some());
            }
        }
        match &trimmed.trimmed {
            None => prop_assert_eq!(trimmed.regions.len(), output.regions.len()),
            Some(t) => {
                prop_assert_eq!(t.returned_regions as usize, trimmed.regions.len());
                prop_assert_eq!(t.estimated_tokens, estimate_tokens(&trimmed, format, verbose));
            }
        }
    }
}
