//! Stages 2 and 4: blame and region filtering, in the right coordinates.

use testkit::TestRepo;
use ultragit_read::ReadQuery;

use crate::support::{
    MQTT_V1, commit_annotated, mqtt_v1_regions, names, read, region, regions, shifted,
};

/// One function, `compute`, on lines 1-3.
const COMPUTE: &str = "pub fn compute() -> u32 {\n    1 + 1\n}\n";

/// A repository whose one commit writes [`COMPUTE`] as `src/lib.rs`, annotated
/// with one function region on lines 1-3 per `(name, intent)`.
fn compute_annotated(functions: &[(&str, &str)]) -> TestRepo {
    let repo = TestRepo::new();
    let regions = functions
        .iter()
        .map(|(name, intent)| region("src/lib.rs", "function", name, (1, 3), intent))
        .collect();
    commit_annotated(&repo, "src/lib.rs", COMPUTE, "compute", regions);
    repo
}

#[test]
fn regions_are_reported_in_todays_lines() {
    let (repo, c1, c2) = shifted();
    let out = read(&repo, &ReadQuery::file("src/mqtt.rs").with_anchor("parse"));
    assert_eq!(
        regions(&out),
        [("src/mqtt.rs".to_owned(), "parse".to_owned(), 18, 20)],
        "written as 15-17, now 18-20"
    );
    assert_eq!(out.regions[0].commit_sha, c1);
    let connect = read(
        &repo,
        &ReadQuery::file("src/mqtt.rs").with_anchor("connect"),
    );
    let found: Vec<(String, u32, u32)> = connect
        .regions
        .iter()
        .map(|r| {
            (
                r.commit_sha.clone(),
                r.region.lines.start,
                r.region.lines.end,
            )
        })
        .collect();
    assert_eq!(
        found,
        [(c2, 13, 15), (c1, 13, 15)],
        "newer enhanced first; the old region's surviving lines 10 and 12 now sit at 13 and 15"
    );
}

#[test]
fn overlap_is_judged_in_the_annotating_commits_coordinates() {
    let (repo, _, _) = shifted();
    // Today's lines 18-20 are parse; the first commit wrote them as 15-17. A naive
    // comparison of today's range with the stored 15-17 would miss it.
    let out = read(&repo, &ReadQuery::file("src/mqtt.rs").with_lines(18, 19));
    assert_eq!(names(&out), ["parse"]);
    assert_eq!(
        out.regions[0].confidence_factors.anchor_stability, 1.0,
        "the lines lie in parse, so its note matches by name, as a read of parse would"
    );
    // The scope says which unit the lines lie in.
    assert_eq!(
        out.query.scopes[0]
            .units
            .iter()
            .map(|u| u.name.as_str())
            .collect::<Vec<_>>(),
        ["parse"]
    );
    // Today's lines 1-3 (the new header) belong to no annotated region of theirs.
    let header = read(&repo, &ReadQuery::file("src/mqtt.rs").with_lines(1, 3));
    assert!(header.regions.is_empty(), "{:?}", names(&header));
}

#[test]
fn whole_file_mode_returns_every_current_region() {
    let (repo, _, _) = shifted();
    let out = read(&repo, &ReadQuery::file("src/mqtt.rs"));
    let mut found: Vec<_> = regions(&out)
        .into_iter()
        .map(|(_, n, s, e)| (n, s, e))
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            ("MqttClient".to_owned(), 4, 6),
            ("MqttClient::connect".to_owned(), 13, 15),
            ("MqttClient::connect".to_owned(), 13, 15),
            ("MqttClient::new".to_owned(), 9, 11),
            ("parse".to_owned(), 18, 20),
        ]
    );
}

#[test]
fn a_region_whose_lines_are_all_gone_is_not_current() {
    let repo = TestRepo::new();
    commit_annotated(
        &repo,
        "src/lib.rs",
        "pub fn old() -> u8 {\n    1\n}\n\npub fn keep() {}\n",
        "two",
        vec![
            region("src/lib.rs", "function", "old", (1, 3), "old behaviour"),
            region("src/lib.rs", "function", "keep", (5, 5), "kept"),
        ],
    );
    repo.commit_file(
        "src/lib.rs",
        "pub fn new() -> u8 { 2 }\n\npub fn keep() {}\n",
        "rewrite old as new",
    );
    let out = read(&repo, &ReadQuery::file("src/lib.rs"));
    assert_eq!(names(&out), ["keep"], "old's lines were all rewritten");
    assert_eq!(regions(&out)[0].2, 3, "keep moved from line 5 to line 3");
}

#[test]
fn file_paths_must_match_and_renames_are_followed() {
    let repo = TestRepo::new();
    commit_annotated(
        &repo,
        "src/old.rs",
        "pub fn f() {}\n\npub fn g() {}\n",
        "f and g",
        vec![
            region("src/old.rs", "function", "f", (1, 1), "f"),
            region(
                "src/elsewhere.rs",
                "function",
                "g",
                (3, 3),
                "a region of another file",
            ),
        ],
    );
    repo.rename("src/old.rs", "src/new.rs");
    repo.commit("move");
    let out = read(&repo, &ReadQuery::file("src/new.rs"));
    assert_eq!(
        regions(&out),
        [("src/old.rs".to_owned(), "f".to_owned(), 1, 1)],
        "found through the rename; other files' regions ignored"
    );
}

#[test]
fn anchor_matching_prefers_names_and_falls_back_to_overlap() {
    // The note names the function differently (written before a rename), but its
    // lines are compute's lines: overlap still finds it.
    let repo = compute_annotated(&[
        ("calculate", "adds"),
        ("compute", "computes"),
        ("compte", "typo"),
    ]);
    let out = read(&repo, &ReadQuery::file("src/lib.rs").with_anchor("compute"));
    let kinds: Vec<(String, f64)> = out
        .regions
        .iter()
        .map(|r| {
            (
                r.region.ast_anchor.name.clone(),
                r.confidence_factors.anchor_stability,
            )
        })
        .collect();
    assert_eq!(kinds.len(), 3);
    assert_eq!(
        kinds[0],
        ("compute".to_owned(), 1.0),
        "exact name, signature not recorded"
    );
    assert!(
        kinds.contains(&("compte".to_owned(), 0.4)),
        "an exact name exists, so the typo matches by line overlap: {kinds:?}"
    );
    assert!(
        kinds.contains(&("calculate".to_owned(), 0.4)),
        "line overlap only: {kinds:?}"
    );
}

#[test]
fn only_some_regions_of_an_annotation_match() {
    let repo = TestRepo::new();
    commit_annotated(&repo, "src/mqtt.rs", MQTT_V1, "mqtt", mqtt_v1_regions());
    let out = read(&repo, &ReadQuery::file("src/mqtt.rs").with_lines(6, 12));
    let mut found = names(&out);
    found.sort();
    assert_eq!(found, ["MqttClient::connect", "MqttClient::new"]);
}

#[test]
fn a_file_with_one_commit_blames_to_it() {
    let repo = TestRepo::new();
    let c = commit_annotated(&repo, "src/mqtt.rs", MQTT_V1, "mqtt", mqtt_v1_regions());
    let out = read(&repo, &ReadQuery::file("src/mqtt.rs"));
    assert_eq!(out.stats.commits_examined, 1);
    assert_eq!(out.regions.len(), 4);
    assert!(out.regions.iter().all(|r| r.commit_sha == c));
}

#[test]
fn fuzzy_region_names_count_only_without_exact_ones() {
    let repo = compute_annotated(&[("compte", "written with a typo")]);
    let out = read(&repo, &ReadQuery::file("src/lib.rs").with_anchor("compute"));
    assert_eq!(names(&out), ["compte"]);
    assert_eq!(
        out.regions[0].confidence_factors.anchor_stability, 0.3,
        "fuzzy name match, not in today's outline"
    );
}
