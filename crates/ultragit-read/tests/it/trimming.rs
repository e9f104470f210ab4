//! `--max-tokens` trimming, end to end and step by step.

use chrono::{TimeZone, Utc};
use serde_json::json;
use testkit::TestRepo;
use ultragit_read::{Format, ReadOutput, ReadQuery, estimate_tokens, render, trim::trim_to_budget};
use ultragit_schema::{
    ConfidenceFactors, Constraint, ConstraintSource, QueryEcho, ReadStats, RegionAnnotation,
    ResolvedRelated, ScoredRegion,
};

use crate::support::{annotate, note, read, region};

/// Twelve functions, each annotated by its own commit with long reasoning.
fn many() -> TestRepo {
    let repo = TestRepo::new();
    let mut text = String::new();
    for i in 0..12 {
        text.push_str(&format!("pub fn f{i}() -> u32 {{\n    {i}\n}}\n\n"));
        let c = repo.commit_file("src/lib.rs", &text, &format!("f{i}"));
        let start = i * 4 + 1;
        let mut r = region(
            "src/lib.rs",
            "function",
            &format!("f{i}"),
            (start, start + 2),
            &format!("f{i} returns {i} for the table of constants"),
        );
        r["reasoning"] = json!(format!(
            "Chosen over a lookup table. A lookup table would cost a page of memory for {i} values and more words follow here to make it long."
        ));
        r["risk_notes"] = json!(
            "Callers index by this value. Changing it breaks persisted data and more words follow."
        );
        r["tags"] = json!(["constants", "table"]);
        annotate(
            &repo,
            &c,
            &note(
                &c,
                &format!("2024-01-{:02}T00:00:00Z", i + 1),
                "inferred",
                vec![r],
            ),
        );
    }
    repo
}

#[test]
fn a_generous_budget_changes_nothing() {
    let repo = many();
    let mut query = ReadQuery::file("src/lib.rs");
    query.max_tokens = Some(1_000_000);
    let out = read(&repo, &query);
    assert_eq!(out.regions.len(), 12);
    assert!(out.trimmed.is_none());
}

#[test]
fn max_tokens_500_keeps_every_decision_and_drops_the_lowest_ranked_regions() {
    let repo = many();
    for format in [Format::Markdown, Format::Json, Format::Pretty] {
        let mut query = ReadQuery::file("src/lib.rs");
        query.max_tokens = Some(500);
        query.format = format;
        let out = read(&repo, &query);
        let trimmed = out.trimmed.clone().expect("trimmed");
        assert!(estimate_tokens(&out, format, false) <= 500, "{format:?}");
        assert_eq!(
            trimmed.estimated_tokens,
            estimate_tokens(&out, format, false)
        );
        assert_eq!(trimmed.original_regions, 12);
        assert_eq!(trimmed.returned_regions as usize, out.regions.len());
        assert_eq!(out.stats.regions_returned as usize, out.regions.len());
        assert_eq!(trimmed.strategy, "lowest_confidence_first");
        assert!(
            !out.regions.is_empty(),
            "{format:?}: something fits in 500 tokens"
        );
        // The survivors are the best ranked: here the newest annotations
        // (recency is the only factor that differs).
        let oldest_kept = out.regions.iter().map(|r| r.timestamp).min().unwrap();
        let dropped = &trimmed.dropped_commits;
        assert_eq!(dropped.len() + out.regions.len(), 12);
        assert!(out.regions.iter().all(|r| !dropped.contains(&r.commit_sha)));
        assert!(oldest_kept > Utc.with_ymd_and_hms(2024, 1, 1, 0, 0, 0).unwrap());
        for r in &out.regions {
            assert!(!r.region.intent.is_empty());
            assert!(!r.region.constraints.is_empty());
        }
        // Every unit's constraint is still handed over, whether or not its
        // region made it.
        if format == Format::Markdown {
            let text = render(&out, format, false);
            for i in 0..12 {
                assert!(text.contains(&format!("f{i} keeps its contract")), "{text}");
            }
            assert_eq!(trimmed.dropped_decisions, 0);
        }
        if format == Format::Json {
            let value: serde_json::Value =
                serde_json::from_str(&render(&out, format, false)).unwrap();
            assert_eq!(value["trimmed"]["original_regions"], 12);
        }
    }
}

#[test]
fn decisions_go_last_from_the_end_and_the_notice_says_how_many() {
    let repo = many();
    let full = read(&repo, &ReadQuery::file("src/lib.rs"));
    assert_eq!(
        full.decisions.len(),
        13,
        "12 constraints and one risk note, recorded by all 12"
    );
    let risk = full.decisions.iter().find(|d| d.kind == "risk").unwrap();
    assert_eq!(risk.commits.len(), 12);
    assert_eq!(
        full.decisions[1].kind, "risk",
        "after the best region's constraint"
    );
    let mut out = full.clone();
    let minimum = {
        let mut bare = full.clone();
        bare.decisions.clear();
        bare.regions.truncate(1);
        estimate_tokens(&bare, Format::Markdown, false)
    };
    trim_to_budget(&mut out, minimum + 60, Format::Markdown, false);
    let trimmed = out.trimmed.clone().unwrap();
    assert_eq!(out.regions.len(), 1);
    assert!(trimmed.dropped_decisions > 0);
    assert_eq!(out.decisions.len() + trimmed.dropped_decisions as usize, 13);
    // What stays is the head of the list.
    assert_eq!(out.decisions[..], full.decisions[..out.decisions.len()]);
    let text = render(&out, Format::Markdown, false);
    assert!(text.contains("lowest-ranked decisions left out"), "{text}");
}

fn scored(n: u32, day: u32) -> ScoredRegion {
    let mut region = RegionAnnotation::new(
        "src/lib.rs",
        ultragit_schema::AstAnchor::new("function", format!("f{n}")),
        ultragit_schema::LineRange::new(1, 3),
        format!("intent {n}"),
    );
    region.constraints = vec![Constraint::new(
        format!("constraint {n}"),
        ConstraintSource::Author,
    )];
    region.reasoning =
        Some("First sentence. Second sentence that is long enough to matter here.".into());
    region.risk_notes = Some("Risky! More words about the risk that take room.".into());
    region.tags = vec!["a".into(), "b".into()];
    ScoredRegion {
        region,
        commit_sha: format!("{n:040}"),
        timestamp: Utc.with_ymd_and_hms(2024, 1, day, 0, 0, 0).unwrap(),
        commit_date: None,
        confidence: 0.5,
        confidence_factors: ConfidenceFactors::default(),
        related: vec![ResolvedRelated {
            commit: "c".repeat(40),
            anchor: "g".into(),
            relationship: "calls".into(),
            confidence: 0.5,
            intent: Some("a long related intent that costs tokens ".repeat(12)),
        }],
        corrections: Vec::new(),
        changed_since: Vec::new(),
        focus: None,
    }
}

fn output(regions: Vec<ScoredRegion>) -> ReadOutput {
    let mut out = ReadOutput::new(QueryEcho {
        files: vec!["src/lib.rs".into()],
        ..QueryEcho::default()
    });
    out.stats = ReadStats {
        regions_returned: regions.len() as u32,
        ..ReadStats::default()
    };
    out.regions = regions;
    out
}

#[test]
fn fields_are_trimmed_in_order_before_any_region_goes() {
    let full = output(vec![scored(1, 1), scored(2, 2)]);
    let size = estimate_tokens(&full, Format::Json, false);
    let reasoning = full.regions[0].region.reasoning.clone();
    let risk = full.regions[0].region.risk_notes.clone();
    let mut seen_first_sentence = false;
    let mut seen_without_related = false;
    for budget in (1..size).rev() {
        let mut out = full.clone();
        trim_to_budget(&mut out, budget, Format::Json, false);
        for r in &out.regions {
            assert!(
                "intent 1".starts_with(r.region.intent.trim_end_matches('…'))
                    || "intent 2".starts_with(r.region.intent.trim_end_matches('…')),
                "intent is never removed"
            );
            assert_eq!(
                r.region.constraints.len(),
                1,
                "constraints are never removed"
            );
        }
        if out.regions.len() < 2 {
            // A region goes only once every field step is done.
            let r = &out.regions[0];
            assert!(r.related.is_empty() && r.region.reasoning.is_none());
            assert!(r.region.risk_notes.is_none() && r.region.tags.is_empty());
            continue;
        }
        let r = &out.regions[0];
        let related_kept = !r.related.is_empty();
        let reasoning_whole = r.region.reasoning == reasoning;
        let risk_whole = r.region.risk_notes == risk;
        // Each step happens only after every earlier one.
        if !reasoning_whole {
            assert!(!related_kept, "related goes before reasoning ({budget})");
        }
        if !risk_whole {
            assert!(
                r.region.reasoning.is_none(),
                "reasoning goes before risk notes ({budget})"
            );
        }
        if r.region.tags.is_empty() {
            assert!(
                r.region.risk_notes.is_none(),
                "risk notes go before tags ({budget})"
            );
        }
        seen_without_related |= !related_kept && reasoning_whole;
        seen_first_sentence |= r.region.reasoning.as_deref() == Some("First sentence.");
    }
    assert!(seen_without_related, "some budget removes only `related`");
    assert!(
        seen_first_sentence,
        "reasoning is cut to its first sentence before it goes"
    );
}

#[test]
fn the_lowest_ranked_regions_go_first() {
    let mut best = scored(2, 9);
    best.confidence = 0.9;
    let mut worst = scored(3, 2);
    worst.confidence = 0.1;
    let full = output(vec![scored(1, 5), best, worst]);
    // One region with every field trimmed, and the notice.
    let mut one = output(vec![scored(3, 2)]);
    trim_to_budget(&mut one, 1, Format::Json, false);
    let one = estimate_tokens(&one, Format::Json, false);
    let mut out = full.clone();
    trim_to_budget(&mut out, one + 10, Format::Json, false);
    let kept: Vec<&str> = out
        .regions
        .iter()
        .map(|r| r.region.ast_anchor.name.as_str())
        .collect();
    assert_eq!(kept, ["f2"], "the best survives");
    let trimmed = out.trimmed.unwrap();
    assert_eq!(
        trimmed.dropped_commits,
        [format!("{:040}", 3), format!("{:040}", 1)]
    );
    assert_eq!((trimmed.original_regions, trimmed.returned_regions), (3, 1));
}

#[test]
fn a_budget_too_small_for_one_region_keeps_the_top_one_with_a_warning() {
    let mut best = scored(2, 9);
    best.confidence = 0.9;
    let full = output(vec![best, scored(1, 5), scored(3, 2)]);
    for format in [Format::Markdown, Format::Json, Format::Pretty] {
        let mut out = full.clone();
        trim_to_budget(&mut out, 10, format, false);
        assert_eq!(out.regions.len(), 1, "{format:?}");
        let top = &out.regions[0];
        assert_eq!(top.region.ast_anchor.name, "f2", "the best, not the oldest");
        assert_eq!(top.region.intent, "intent 2");
        assert_eq!(top.region.constraints.len(), 1);
        assert!(top.related.is_empty() && top.region.reasoning.is_none());
        assert!(top.region.tags.is_empty() && top.region.risk_notes.is_none());
        assert_eq!(
            out.warnings,
            [
                "--max-tokens 10 is too small for one full region: the top region is returned with only its intent and constraints"
            ]
        );
        let trimmed = out.trimmed.as_ref().unwrap();
        assert_eq!((trimmed.original_regions, trimmed.returned_regions), (3, 1));
        assert_eq!(
            trimmed.dropped_commits,
            [format!("{:040}", 3), format!("{:040}", 1)]
        );
        assert_eq!(out.stats.regions_returned, 1);
        assert_eq!(
            trimmed.estimated_tokens,
            estimate_tokens(&out, format, false)
        );
    }
}

#[test]
fn a_tiny_budget_still_answers_end_to_end() {
    let out = read(
        &many(),
        &ReadQuery {
            max_tokens: Some(20),
            ..ReadQuery::file("src/lib.rs")
        },
    );
    assert_eq!(out.regions.len(), 1);
    assert!(out.regions[0].region.intent.starts_with('f'));
    assert!(
        out.warnings
            .iter()
            .any(|w| w.contains("too small for one full region"))
    );
    let text = render(&out, Format::Markdown, false);
    assert!(text.contains("## Annotated changes"), "{text}");
}
