//! Stage 6: confidence, and the filters applied after scoring.

use serde_json::json;
use testkit::TestRepo;
use ultragit_read::ReadQuery;

use crate::support::{
    MQTT_V1, annotate, commit_annotated, commit_file_at, mqtt_v1_repo, names, note, read,
    read_configured, region,
};

/// One file, four functions, annotated by commits of different ages (c's a
/// year older than HEAD), levels and provenance, with tags.
fn repo() -> TestRepo {
    let repo = TestRepo::new();
    let text = "pub fn a() {}\n\npub fn b() {}\n\npub fn c() {}\n\npub fn d() {}\n";
    let c = commit_file_at(&repo, "src/lib.rs", text, "four", "2024-01-01T00:05:00Z");
    let mut regions = vec![
        region("src/lib.rs", "function", "a", (1, 1), "a"),
        region("src/lib.rs", "function", "b", (3, 3), "b"),
    ];
    regions[0]["tags"] = json!(["net", "retry"]);
    regions[1]["tags"] = json!(["Storage"]);
    annotate(
        &repo,
        &c,
        &note(&c, "2024-01-01T00:05:00Z", "enhanced", regions),
    );
    // Notes written later on the same commit would overwrite; use further commits
    // touching c and d for older/other-provenance annotations.
    let touched_c = text.replace("pub fn c() {}", "pub fn c() { }");
    let touched_d = touched_c.replace("pub fn d() {}", "pub fn d() { }");
    let c = region("src/lib.rs", "function", "c", (5, 5), "c");
    let mut d = region("src/lib.rs", "function", "d", (7, 7), "d");
    d["ast_anchor"]["signature"] = json!("pub fn d(x: u8)");
    let commits = [
        (&touched_c, "touch c", "2023-01-01T00:10:00Z"),
        (&touched_d, "touch d", "2024-01-01T00:10:00Z"),
    ];
    let notes = [
        ("2023-01-01T00:00:00Z", c, "squash"),
        ("2024-01-01T00:10:00Z", d, "amend"),
    ];
    for ((text, message, committed), (noted, region, operation)) in commits.into_iter().zip(notes) {
        let commit = commit_file_at(&repo, "src/lib.rs", text, message, committed);
        let mut n = note(&commit, noted, "inferred", vec![region]);
        n["provenance"]["operation"] = json!(operation);
        annotate(&repo, &commit, &n);
    }
    repo
}

#[test]
fn factors_follow_the_tables() {
    let repo = repo();
    let out = read(&repo, &ReadQuery::file("src/lib.rs"));
    let by_name = |name: &str| {
        out.regions
            .iter()
            .find(|r| r.region.ast_anchor.name == name)
            .unwrap()
    };
    let a = by_name("a").confidence_factors;
    assert_eq!(
        (a.context_level, a.anchor_stability, a.provenance),
        (1.0, 1.0, 1.0)
    );
    assert_eq!(a.recency, 1.0, "annotated the day of HEAD");
    let c = by_name("c").confidence_factors;
    assert_eq!((c.context_level, c.provenance), (0.5, 0.7));
    assert!(
        (c.recency - 0.5_f64.powf(365.0 / 180.0)).abs() <= 5e-4,
        "a year older than HEAD: {}",
        c.recency
    );
    let d = by_name("d").confidence_factors;
    assert_eq!(
        (d.anchor_stability, d.provenance),
        (0.7, 0.8),
        "signature changed; amended"
    );
    for r in &out.regions {
        let f = r.confidence_factors;
        let expected =
            f.recency * 0.4 + f.context_level * 0.3 + f.anchor_stability * 0.2 + f.provenance * 0.1;
        // Factors and confidence are rounded to 3 decimals each.
        assert!((r.confidence - expected).abs() <= 1e-3, "{r:?}");
        for value in [r.confidence, f.recency, f.anchor_stability] {
            assert_eq!(value, (value * 1000.0).round() / 1000.0);
        }
    }
    // Best first.
    assert_eq!(names(&out), ["a", "b", "d", "c"]);
}

#[test]
fn min_confidence_tags_and_max_regions() {
    let repo = repo();
    let mut query = ReadQuery::file("src/lib.rs");
    query.min_confidence = 0.8;
    assert_eq!(names(&read(&repo, &query)), ["a", "b"]);
    query.min_confidence = 0.0;
    query.tags = Some(vec!["storage".into(), "nothing".into()]);
    assert_eq!(
        names(&read(&repo, &query)),
        ["b"],
        "tags compare case-insensitively"
    );
    query.tags = None;
    query.max_regions = Some(2);
    let out = read(&repo, &query);
    assert_eq!(names(&out), ["a", "b"]);
    assert_eq!(out.query.max_regions, 2);
    let out = read_configured(
        &repo,
        |c| c.default_max_regions = 1,
        &ReadQuery::file("src/lib.rs"),
    );
    assert_eq!(
        names(&out),
        ["a"],
        "the configured default applies when the query sets none"
    );
}

#[test]
fn the_half_life_comes_from_configuration() {
    let repo = repo();
    let out = read_configured(
        &repo,
        |c| c.recency_half_life = 365.0,
        &ReadQuery::file("src/lib.rs").with_anchor("c"),
    );
    assert!((out.regions[0].confidence_factors.recency - 0.5).abs() < 0.01);
}

#[test]
fn removed_anchors_score_low() {
    let repo = TestRepo::new();
    commit_annotated(
        &repo,
        "src/lib.rs",
        "pub fn renamed() {\n    1;\n}\n",
        "f",
        vec![region(
            "src/lib.rs",
            "function",
            "original_name",
            (1, 3),
            "f",
        )],
    );
    let out = read(&repo, &ReadQuery::file("src/lib.rs"));
    assert_eq!(out.regions[0].confidence_factors.anchor_stability, 0.3);
}

#[test]
fn recency_is_the_commits_age_not_the_notes() {
    // A backfill in 2025 annotated a commit of 2006: its region is old.
    let repo = TestRepo::new();
    let old = commit_file_at(
        &repo,
        "src/lib.rs",
        "pub fn old() {}\n",
        "old",
        "2006-03-01T00:00:00Z",
    );
    annotate(
        &repo,
        &old,
        &note(
            &old,
            "2025-06-01T00:00:00Z",
            "enhanced",
            vec![region("src/lib.rs", "function", "old", (1, 1), "old")],
        ),
    );
    commit_file_at(
        &repo,
        "src/new.rs",
        "pub fn new() {}\n",
        "new",
        "2025-06-01T00:00:00Z",
    );
    let out = read(&repo, &ReadQuery::file("src/lib.rs"));
    let r = &out.regions[0];
    assert_eq!(
        r.confidence_factors.recency, 0.0,
        "19 years at a 180-day half-life"
    );
    assert_eq!(
        r.commit_date.unwrap().to_rfc3339(),
        "2006-03-01T00:00:00+00:00"
    );
    assert_eq!(r.confidence, 0.6);
}

#[test]
fn later_unannotated_changes_mark_a_region_stale() {
    let (repo, c1) = mqtt_v1_repo();
    let c2 = repo.commit_file(
        "src/mqtt.rs",
        MQTT_V1.replace("!self.host.is_empty()", "!self.host.trim().is_empty()"),
        "Trim the host before connecting",
    );
    let v3 = MQTT_V1
        .replace("!self.host.is_empty()", "!self.host.trim().is_empty()")
        .replace(
            "    pub fn connect(&self) -> bool {\n",
            "    pub fn connect(&self) -> bool {\n        // An empty host never connects.\n",
        );
    let c3 = repo.commit_file("src/mqtt.rs", v3, "Explain connect");
    let out = read(
        &repo,
        &ReadQuery::file("src/mqtt.rs").with_anchor("connect"),
    );
    let r = &out.regions[0];
    assert_eq!(r.commit_sha, c1);
    let changed = r
        .changed_since
        .iter()
        .map(|c| (&c.commit, &c.summary[..], c.lines));
    let expected = [
        (&c2, "Trim the host before connecting", 1),
        (&c3, "Explain connect", 1),
    ];
    assert!(changed.eq(expected), "{:?}", r.changed_since);
    // 2 of the unit's 4 lines today: stability × (1 − 0.5 × 2/4).
    assert_eq!(r.confidence_factors.anchor_stability, 0.75);
    let text = ultragit_read::format_markdown(&out, false);
    let (s2, s3) = (&c2[..7], &c3[..7]);
    let line = format!(
        "**Changed since** by 2 unannotated commits: `{s2}` Trim the host before connecting, `{s3}` Explain connect"
    );
    assert!(text.contains(&line), "{text}");
    let json = ultragit_read::format_json(&out, false);
    assert!(json.contains("\"changed_since\":[{"), "{json}");

    // Once the later commit is annotated, it no longer counts; a region
    // nobody changed since has no `changed_since` at all.
    annotate(
        &repo,
        &c3,
        &note(
            &c3,
            "2024-01-02T00:00:00Z",
            "inferred",
            vec![region("src/mqtt.rs", "method", "connect", (11, 11), "why")],
        ),
    );
    let out = read(
        &repo,
        &ReadQuery::file("src/mqtt.rs").with_anchor("connect"),
    );
    let r = out.regions.iter().find(|r| r.commit_sha == c1).unwrap();
    assert_eq!(r.changed_since.len(), 1, "{:?}", r.changed_since);
    let out = read(&repo, &ReadQuery::file("src/mqtt.rs").with_anchor("parse"));
    assert!(out.regions[0].changed_since.is_empty());
    assert_eq!(out.regions[0].confidence_factors.anchor_stability, 1.0);
    assert!(!ultragit_read::format_json(&out, false).contains("changed_since"));
}
