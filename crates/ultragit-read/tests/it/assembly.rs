//! Stage 7: dependencies on the queried code, cross-cutting concerns, multi-file
//! queries, configuration.

use serde_json::json;
use testkit::TestRepo;
use ultragit_read::{ReadConfig, ReadError, ReadPipeline, ReadQuery};

use crate::support::{annotate, names, note, pipeline, read, read_with, region};

/// `src/wire.rs` (encode, decode) and `src/client.rs` (send, recv). The client's
/// regions declare dependencies on the wire format; one cross-cutting concern ties
/// encode and decode, another ties send to encode.
fn repo() -> (TestRepo, String, String) {
    let repo = TestRepo::new();
    repo.write("src/wire.rs", "pub fn encode() {}\n\npub fn decode() {}\n");
    repo.write("src/client.rs", "pub fn send() {}\n\npub fn recv() {}\n");
    let c1 = repo.commit_all("wire and client");
    let mut n = note(
        &c1,
        "2024-01-01T00:00:00Z",
        "enhanced",
        vec![
            region(
                "src/wire.rs",
                "function",
                "encode",
                (1, 1),
                "encodes frames",
            ),
            region(
                "src/wire.rs",
                "function",
                "decode",
                (3, 3),
                "decodes frames",
            ),
            region("src/client.rs", "function", "send", (1, 1), "sends a frame"),
            region(
                "src/client.rs",
                "function",
                "recv",
                (3, 3),
                "receives a frame",
            ),
        ],
    );
    n["regions"][2]["semantic_dependencies"] = json!([{"file": "src/wire.rs", "anchor": "encode", "nature": "relies on the frame layout"}]);
    n["regions"][3]["semantic_dependencies"] = json!([{"file": "src/wire.rs", "anchor": "decode", "nature": "expects length-prefixed frames"}]);
    n["cross_cutting"] = json!([
        {"description": "encode and decode must agree on the layout", "regions": ["src/wire.rs:encode", "src/wire.rs:decode"], "nature": "format symmetry"},
        {"description": "send must encode before writing", "regions": ["src/client.rs:send", "src/wire.rs:encode"], "nature": "ordering"}
    ]);
    annotate(&repo, &c1, &n);
    // A later, unrelated commit whose note also depends on decode.
    let c2 = repo.commit_file("src/log.rs", "pub fn log() {}\n", "log");
    let mut n2 = note(
        &c2,
        "2024-01-02T00:00:00Z",
        "inferred",
        vec![region(
            "src/log.rs",
            "function",
            "log",
            (1, 1),
            "logs frames",
        )],
    );
    n2["regions"][0]["semantic_dependencies"] = json!([{"file": "src/wire.rs", "anchor": "wire::decode", "nature": "pretty-prints decoded frames"}]);
    annotate(&repo, &c2, &n2);
    (repo, c1, c2)
}

#[test]
fn dependencies_on_the_queried_anchor_are_collected() {
    let (repo, c1, c2) = repo();
    let out = read(&repo, &ReadQuery::file("src/wire.rs").with_anchor("decode"));
    let deps: Vec<(String, String, String, String)> = out
        .dependencies_on_this
        .iter()
        .map(|d| {
            (
                d.file.clone(),
                d.anchor.clone(),
                d.commit.clone(),
                d.target_anchor.clone(),
            )
        })
        .collect();
    assert_eq!(
        deps,
        [
            (
                "src/log.rs".to_owned(),
                "log".to_owned(),
                c2,
                "wire::decode".to_owned()
            ),
            (
                "src/client.rs".to_owned(),
                "recv".to_owned(),
                c1,
                "decode".to_owned()
            ),
        ],
        "newest annotated commits first; qualified and plain anchors both match"
    );
    let whole = read(&repo, &ReadQuery::file("src/wire.rs"));
    assert_eq!(
        whole.dependencies_on_this.len(),
        3,
        "whole file: every dependency on it"
    );
    let none = read(&repo, &ReadQuery::file("src/log.rs"));
    assert!(none.dependencies_on_this.is_empty());
}

#[test]
fn the_scan_limit_bounds_the_dependency_scan() {
    let (repo, _, _) = repo();
    let one = ReadConfig {
        deps_scan_limit: Some(1),
        ..ReadConfig::default()
    };
    let out = read_with(
        &repo,
        one,
        &ReadQuery::file("src/wire.rs").with_anchor("decode"),
    );
    assert_eq!(
        out.dependencies_on_this.len(),
        1,
        "only the most recent annotated commit"
    );
    assert_eq!(out.dependencies_on_this[0].file, "src/log.rs");
    let off = ReadConfig {
        deps_scan_limit: Some(0),
        ..ReadConfig::default()
    };
    let out = read_with(
        &repo,
        off,
        &ReadQuery::file("src/wire.rs").with_anchor("decode"),
    );
    assert!(out.dependencies_on_this.is_empty());
}

#[test]
fn cross_cutting_concerns_that_mention_the_query() {
    let (repo, _, _) = repo();
    let encode = read(&repo, &ReadQuery::file("src/wire.rs").with_anchor("encode"));
    let found: Vec<&str> = encode
        .cross_cutting
        .iter()
        .map(|c| c.nature.as_str())
        .collect();
    assert_eq!(found, ["format symmetry", "ordering"]);
    let decode = read(&repo, &ReadQuery::file("src/wire.rs").with_anchor("decode"));
    let found: Vec<&str> = decode
        .cross_cutting
        .iter()
        .map(|c| c.nature.as_str())
        .collect();
    assert_eq!(found, ["format symmetry"]);
}

#[test]
fn multi_file_queries_merge_and_surface_cross_file_concerns() {
    let (repo, _, _) = repo();
    let mut query = ReadQuery::file("src/client.rs");
    query.files.push("src/wire.rs".into());
    query.files.push("src/client.rs".into());
    let out = read(&repo, &query);
    assert_eq!(
        out.query.files,
        ["src/client.rs", "src/wire.rs"],
        "deduplicated"
    );
    assert_eq!(out.query.scopes.len(), 2);
    assert_eq!(
        out.stats.commits_examined, 1,
        "one commit blamed in both files, counted once"
    );
    let mut found = names(&out);
    found.sort();
    assert_eq!(found, ["decode", "encode", "recv", "send"]);
    assert!(
        out.regions
            .iter()
            .all(|r| r.region.file == "src/client.rs" || r.region.file == "src/wire.rs")
    );
    assert_eq!(
        out.cross_cutting.len(),
        2,
        "both concerns span the queried files"
    );
    assert!(
        out.dependencies_on_this
            .iter()
            .any(|d| d.file == "src/client.rs" && d.target_file == "src/wire.rs")
    );
    // One bad path fails the whole query with that path named.
    query.files.push("src/nope.rs".into());
    let err = pipeline(&repo).execute(&query).unwrap_err();
    assert_eq!(
        err.to_string(),
        "File not found: src/nope.rs. Does it exist at HEAD?"
    );
}

#[test]
fn configuration_comes_from_git_config_then_the_team_file() {
    let (repo, _, _) = repo();
    repo.git(&["config", "ultragit.depsScanLimit", "7"]);
    repo.git(&["config", "ultragit.defaultMaxRegions", "3"]);
    repo.git(&["config", "ultragit.recencyHalfLife", "90.5"]);
    let config = *pipeline(&repo).config();
    assert_eq!(
        config,
        ReadConfig {
            deps_scan_limit: Some(7),
            default_max_regions: 3,
            recency_half_life: 90.5
        }
    );
    repo.write(
        ".ultragit-config.toml",
        "[ultragit.read]\ndefault_max_regions = 2\n\n[ultragit.annotate]\nfuture = true\n",
    );
    let config = *pipeline(&repo).config();
    assert_eq!(
        config,
        ReadConfig {
            deps_scan_limit: Some(7),
            default_max_regions: 2,
            recency_half_life: 90.5
        },
        "the file overrides git config"
    );
    assert_eq!(
        read(&repo, &ReadQuery::file("src/wire.rs").with_anchor("encode"))
            .query
            .max_regions,
        2
    );

    for (text, fragment) in [
        (
            "[ultragit.read]\ndefault_max_regions = 0\n",
            "default_max_regions must be a whole number of at least 1",
        ),
        (
            "[ultragit.read]\nrecency_half_life = -3.0\n",
            "recency_half_life must be a positive number",
        ),
        ("[ultragit.read]\ndeps_scan_limt = 3\n", "deps_scan_limt"),
        ("[ultragit.read\n", ".ultragit-config.toml"),
    ] {
        repo.write(".ultragit-config.toml", text);
        let err = ultragit_read::GitReadPipeline::open(repo.path()).unwrap_err();
        assert!(matches!(err, ReadError::Config(_)), "{text}: {err}");
        assert!(err.to_string().contains(fragment), "{text}: {err}");
    }
    repo.remove(".ultragit-config.toml");
    repo.git(&["config", "ultragit.depsScanLimit", "lots"]);
    let err = ultragit_read::GitReadPipeline::open(repo.path()).unwrap_err();
    assert!(err.to_string().contains("ultragit.depsScanLimit"), "{err}");
}

#[test]
fn multi_file_regions_are_grouped_by_file_in_query_order() {
    let (repo, _, _) = repo();
    let mut query = ReadQuery::file("src/wire.rs");
    query.files.push("src/client.rs".into());
    let out = read(&repo, &query);
    let files: Vec<&str> = out.regions.iter().map(|r| r.region.file.as_str()).collect();
    assert_eq!(
        files,
        [
            "src/wire.rs",
            "src/wire.rs",
            "src/client.rs",
            "src/client.rs"
        ]
    );
}

#[test]
fn with_several_files_an_anchor_needs_to_exist_in_one_of_them() {
    let (repo, _, _) = repo();
    let mut query = ReadQuery::file("src/client.rs").with_anchor("decode");
    query.files.push("src/wire.rs".into());
    let out = read(&repo, &query);
    assert_eq!(names(&out), ["decode"]);
    assert!(
        out.warnings
            .contains(&"src/client.rs: no unit matches 'decode'; the file is left out".to_owned()),
        "{:?}",
        out.warnings
    );
    let mut nowhere = ReadQuery::file("src/client.rs").with_anchor("zzz_nothing");
    nowhere.files.push("src/wire.rs".into());
    let err = pipeline(&repo).execute(&nowhere).unwrap_err();
    assert!(
        matches!(err, ReadError::AnchorNotFound { ref path, .. } if path == "src/client.rs"),
        "{err}"
    );
}
