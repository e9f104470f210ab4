//! Stage 5: following `related_annotations`.

use serde_json::json;
use testkit::TestRepo;
use ultragit_read::ReadQuery;

use crate::support::{annotate, note, read, region};

/// Three commits on three functions: c3's `top` relates to c2's `mid`, which
/// relates to c1's `low`, which relates back to c3's `top` (a cycle). A fourth link
/// points at a commit that does not exist.
fn chain() -> (TestRepo, [String; 3]) {
    let repo = TestRepo::new();
    let c1 = repo.commit_file("src/lib.rs", "pub fn low() {}\n", "low");
    let c2 = repo.commit_file("src/lib.rs", "pub fn low() {}\n\npub fn mid() {}\n", "mid");
    let c3 = repo.commit_file(
        "src/lib.rs",
        "pub fn low() {}\n\npub fn mid() {}\n\npub fn top() {}\n",
        "top",
    );
    let low_links = json!([{"commit": c3, "anchor": "top", "relationship": "used by"}]);
    let mid_links = json!([{"commit": c1, "anchor": "low", "relationship": "builds on"}]);
    let top_links = json!([
        {"commit": c2, "anchor": "mid", "relationship": "calls"},
        {"commit": "0123456789abcdef0123456789abcdef01234567", "anchor": "ghost", "relationship": "gone"},
        {"commit": c2, "anchor": "not_there", "relationship": "renamed away"}
    ]);
    for (commit, day, level, name, line, intent, related) in [
        (&c1, "01", "inferred", "low", 1, "the base", low_links),
        (&c2, "02", "inferred", "mid", 3, "the middle", mid_links),
        (&c3, "03", "enhanced", "top", 5, "the top", top_links),
    ] {
        let mut r = region("src/lib.rs", "function", name, (line, line), intent);
        r["related_annotations"] = related;
        let timestamp = format!("2024-01-{day}T00:00:00Z");
        annotate(&repo, commit, &note(commit, &timestamp, level, vec![r]));
    }
    (repo, [c1, c2, c3])
}

fn related(repo: &TestRepo, depth: u32) -> (Vec<(String, String, String)>, u32) {
    let mut query = ReadQuery::file("src/lib.rs").with_anchor("top");
    query.depth = depth;
    let out = read(repo, &query);
    assert_eq!(out.regions.len(), 1);
    let list = out.regions[0]
        .related
        .iter()
        .map(|r| {
            (
                r.anchor.clone(),
                r.relationship.clone(),
                r.intent.clone().unwrap_or_default(),
            )
        })
        .collect();
    (list, out.stats.related_hops)
}

#[test]
fn depth_zero_follows_nothing() {
    let (repo, _) = chain();
    assert_eq!(related(&repo, 0), (vec![], 0));
}

#[test]
fn one_hop_resolves_direct_links_and_skips_missing_ones() {
    let (repo, [_, c2, _]) = chain();
    let (list, hops) = related(&repo, 1);
    assert_eq!(
        list,
        [(
            "mid".to_owned(),
            "calls".to_owned(),
            "the middle".to_owned()
        )]
    );
    assert_eq!(hops, 1);
    let out = read(&repo, &ReadQuery::file("src/lib.rs").with_anchor("top"));
    let first = &out.regions[0].related[0];
    assert_eq!(first.commit, c2);
    assert!(first.confidence > 0.0 && first.confidence <= 1.0);
}

#[test]
fn two_hops_follow_links_of_links_and_cycles_stop() {
    let (repo, _) = chain();
    let (list, hops) = related(&repo, 2);
    let anchors: Vec<&str> = list.iter().map(|(a, _, _)| a.as_str()).collect();
    assert_eq!(anchors, ["mid", "low"]);
    assert_eq!(hops, 2);
    // Depth 5 would go low -> top, but top is where we started.
    let (list, _) = related(&repo, 5);
    let anchors: Vec<&str> = list.iter().map(|(a, _, _)| a.as_str()).collect();
    assert_eq!(anchors, ["mid", "low"]);
}
