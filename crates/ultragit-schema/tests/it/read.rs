//! `ultragit-read/v1` output: serde shape, compact vs verbose, error object.

use serde_json::{Value, json};
use ultragit_schema::{
    ConfidenceFactors, ContextLevel, ContextLevelFilter, QueryEcho, READ_SCHEMA_V1, ReadErrorBody,
    ReadErrorCode, ReadOutput,
};

use crate::fixtures::{REGION_OPTIONAL_FIELDS, assert_round_trip, full_read_output, sparse_output};

#[test]
fn every_read_type_round_trips() {
    let output = full_read_output();
    assert_round_trip(&output);
    assert_round_trip(&ReadOutput::new(QueryEcho::default()));
    assert_round_trip(&output.query);
    assert_round_trip(&output.query.scopes[0]);
    assert_round_trip(&output.regions[0]);
    assert_round_trip(&output.regions[0].confidence_factors);
    assert_round_trip(&output.regions[0].related[0]);
    assert_round_trip(&output.dependencies_on_this[0]);
    assert_round_trip(&output.cross_cutting[0]);
    assert_round_trip(&output.stats);
    assert_round_trip(output.trimmed.as_ref().unwrap());
    for filter in [
        ContextLevelFilter::All,
        ContextLevelFilter::Enhanced,
        ContextLevelFilter::Inferred,
    ] {
        assert_round_trip(&filter);
    }
    let error = ReadErrorBody::new(ReadErrorCode::AnchorNotFound, "m")
        .with_details(json!({"available": ["a", "b"]}));
    assert_round_trip(&error);
    assert_round_trip(&error.error);
    assert_round_trip(&ReadErrorCode::from("quota_exceeded"));
}

#[test]
fn json_names_match_the_rust_fields() {
    let value = serde_json::to_value(full_read_output()).unwrap();
    let keys = |v: &Value| {
        let mut keys: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        keys.sort_unstable();
        keys
    };
    assert_eq!(
        keys(&value),
        [
            "$schema",
            "cross_cutting",
            "decisions",
            "dependencies_on_this",
            "query",
            "regions",
            "stats",
            "trimmed",
            "warnings"
        ]
    );
    assert_eq!(value["$schema"], READ_SCHEMA_V1);
    assert_eq!(
        keys(&value["query"]),
        [
            "ambiguous_anchor",
            "anchor",
            "context_level",
            "depth",
            "files",
            "lines",
            "max_regions",
            "max_tokens",
            "min_confidence",
            "scopes",
            "since",
            "tags"
        ]
    );
    assert_eq!(
        keys(&value["query"]["scopes"][0]),
        [
            "ambiguous",
            "anchor_name",
            "anchor_signature",
            "anchor_type",
            "file",
            "line_range",
            "resolved_by"
        ]
    );
    assert_eq!(
        keys(&value["regions"][0]),
        [
            "changed_since",
            "commit_date",
            "commit_sha",
            "confidence",
            "confidence_factors",
            "focus",
            "region",
            "related",
            "timestamp"
        ]
    );
    assert_eq!(keys(&value["regions"][0]["focus"]), ["end", "start"]);
    assert_eq!(
        keys(&value["regions"][0]["changed_since"][0]),
        ["commit", "date", "lines", "summary"]
    );
    assert_eq!(
        keys(&value["regions"][0]["confidence_factors"]),
        ["anchor_stability", "context_level", "provenance", "recency"]
    );
    assert_eq!(
        keys(&value["regions"][0]["related"][0]),
        ["anchor", "commit", "confidence", "intent", "relationship"]
    );
    assert_eq!(
        keys(&value["dependencies_on_this"][0]),
        [
            "anchor",
            "commit",
            "file",
            "nature",
            "target_anchor",
            "target_file"
        ]
    );
    assert_eq!(
        keys(&value["cross_cutting"][0]),
        ["commit", "description", "nature", "regions"]
    );
    assert_eq!(
        keys(&value["stats"]),
        [
            "annotations_found",
            "commits_examined",
            "items_retired",
            "regions_returned",
            "related_hops"
        ]
    );
    assert_eq!(
        keys(&value["trimmed"]),
        [
            "dropped_commits",
            "dropped_decisions",
            "estimated_tokens",
            "original_regions",
            "returned_regions",
            "strategy"
        ]
    );
    assert_eq!(value["regions"][0]["timestamp"], "2025-01-15T10:30:00Z");
    assert_eq!(
        value["regions"][0]["region"]["ast_anchor"]["type"],
        "method"
    );
    assert_eq!(value["query"]["context_level"], "enhanced");
}

#[test]
fn new_output_is_empty_with_the_read_schema() {
    let output = ReadOutput::new(QueryEcho::default());
    assert_eq!(output.schema, "ultragit-read/v1");
    assert!(output.regions.is_empty() && output.warnings.is_empty());
    assert_eq!(output.trimmed, None);
    assert_eq!(output.stats.annotations_found, 0);
}

#[test]
fn query_echo_defaults_are_the_cli_defaults() {
    let query = QueryEcho::default();
    assert_eq!(query.context_level, ContextLevelFilter::All);
    assert_eq!(
        (query.depth, query.max_regions, query.max_tokens),
        (1, 20, None)
    );
    assert_eq!(query.min_confidence, 0.0);
    let read: QueryEcho = serde_json::from_str("{}").unwrap();
    assert_eq!(read, query);
}

#[test]
fn context_level_filter_parses_and_admits() {
    assert_eq!(
        "all".parse::<ContextLevelFilter>(),
        Ok(ContextLevelFilter::All)
    );
    assert_eq!(
        "enhanced".parse::<ContextLevelFilter>(),
        Ok(ContextLevelFilter::Enhanced)
    );
    assert_eq!(
        "Inferred".parse::<ContextLevelFilter>(),
        Ok(ContextLevelFilter::Inferred)
    );
    let err = "both".parse::<ContextLevelFilter>().unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid context level \"both\": expected one of all, enhanced, inferred"
    );
    assert_eq!(ContextLevelFilter::default(), ContextLevelFilter::All);
    assert_eq!(ContextLevelFilter::Enhanced.to_string(), "enhanced");
    assert_eq!(
        serde_json::to_string(&ContextLevelFilter::Inferred).unwrap(),
        r#""inferred""#
    );

    let unknown = ContextLevel::from("verified");
    let table = [
        (ContextLevelFilter::All, [true, true, true]),
        (ContextLevelFilter::Enhanced, [true, false, false]),
        (ContextLevelFilter::Inferred, [false, true, false]),
    ];
    for (filter, expected) in table {
        let got =
            [&ContextLevel::Enhanced, &ContextLevel::Inferred, &unknown].map(|l| filter.admits(l));
        assert_eq!(got, expected, "{filter}");
    }
}

#[test]
fn combined_confidence_uses_the_spec_weights() {
    let only = |i: usize| {
        let mut values = [0.0; 4];
        values[i] = 1.0;
        ConfidenceFactors {
            recency: values[0],
            context_level: values[1],
            anchor_stability: values[2],
            provenance: values[3],
        }
        .combined()
    };
    assert_eq!([only(0), only(1), only(2), only(3)], [0.4, 0.3, 0.2, 0.1]);
    let all = ConfidenceFactors {
        recency: 1.0,
        context_level: 1.0,
        anchor_stability: 1.0,
        provenance: 1.0,
    };
    assert!((all.combined() - 1.0).abs() < 1e-12);
    let mixed = ConfidenceFactors {
        recency: 0.5,
        context_level: 0.5,
        anchor_stability: 0.3,
        provenance: 0.7,
    };
    assert!((mixed.combined() - (0.2 + 0.15 + 0.06 + 0.07)).abs() < 1e-12);
}

#[test]
fn compact_drops_nulls_and_empties() {
    let value = sparse_output().to_json_value(false);
    let top = value.as_object().unwrap();
    for key in [
        "dependencies_on_this",
        "cross_cutting",
        "trimmed",
        "warnings",
    ] {
        assert!(!top.contains_key(key), "{key} should be dropped");
    }
    for key in ["anchor", "lines", "since", "tags", "max_tokens", "scopes"] {
        assert!(
            value["query"].get(key).is_none(),
            "query.{key} should be dropped"
        );
    }
    // Numbers and booleans stay, even when zero or false.
    assert_eq!(value["query"]["ambiguous_anchor"], false);
    assert_eq!(value["query"]["min_confidence"], 0.0);
    assert_eq!(value["regions"][0]["confidence_factors"]["recency"], 0.0);
    assert!(value["regions"][0].get("related").is_none());
    let region = &value["regions"][0]["region"];
    for key in REGION_OPTIONAL_FIELDS {
        assert!(region.get(key).is_none(), "region.{key} should be dropped");
    }
    assert!(region["ast_anchor"].get("signature").is_none());
}

#[test]
fn compact_regions_always_have_intent_and_constraints() {
    let mut output = sparse_output();
    output.regions[0].region.intent = String::new();
    let value = output.to_json_value(false);
    let region = &value["regions"][0]["region"];
    assert_eq!(region["intent"], "");
    assert_eq!(region["constraints"], json!([]));

    let full = full_read_output().to_json_value(false);
    assert_eq!(
        full["regions"][0]["region"]["constraints"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(full["regions"][1]["region"]["constraints"], json!([]));
    for scored in full["regions"].as_array().unwrap() {
        assert!(scored["region"]["intent"].is_string());
    }
}

#[test]
fn compact_always_keeps_schema_query_regions_and_stats() {
    let mut output = ReadOutput::new(QueryEcho::default());
    output
        .warnings
        .push("No Ultragit annotations found. Run 'ultragit init' to set up.".to_owned());
    let value = output.to_json_value(false);
    assert_eq!(value["$schema"], "ultragit-read/v1");
    assert_eq!(value["regions"], json!([]));
    assert_eq!(
        value["stats"],
        json!({"annotations_found": 0, "commits_examined": 0, "regions_returned": 0, "related_hops": 0})
    );
    assert_eq!(
        value["query"],
        json!({"ambiguous_anchor": false, "context_level": "all", "depth": 1, "max_regions": 20, "min_confidence": 0.0})
    );
    assert_eq!(
        value["warnings"][0],
        "No Ultragit annotations found. Run 'ultragit init' to set up."
    );
}

#[test]
fn compact_keeps_array_elements_even_when_empty() {
    let mut output = sparse_output();
    output.regions[0].region.tags = vec![String::new(), "x".to_owned()];
    let value = output.to_json_value(false);
    assert_eq!(value["regions"][0]["region"]["tags"], json!(["", "x"]));
}

#[test]
fn verbose_shows_every_field_including_empty_region_fields() {
    let value = sparse_output().to_json_value(true);
    assert_eq!(value["trimmed"], Value::Null);
    assert_eq!(value["warnings"], json!([]));
    assert_eq!(value["dependencies_on_this"], json!([]));
    assert_eq!(value["cross_cutting"], json!([]));
    assert_eq!(value["query"]["anchor"], Value::Null);
    assert_eq!(value["query"]["tags"], json!([]));
    assert_eq!(value["regions"][0]["related"], json!([]));
    let region = &value["regions"][0]["region"];
    assert_eq!(region["reasoning"], Value::Null);
    assert_eq!(region["risk_notes"], Value::Null);
    for key in [
        "constraints",
        "semantic_dependencies",
        "related_annotations",
        "tags",
    ] {
        assert_eq!(region[key], json!([]), "{key}");
    }
    assert_eq!(region["ast_anchor"]["signature"], Value::Null);
}

#[test]
fn verbose_does_not_overwrite_populated_fields() {
    let mut output = full_read_output();
    output.regions.truncate(1); // the fully populated region
    let verbose = output.to_json_value(true);
    let plain = serde_json::to_value(&output).unwrap();
    assert_eq!(verbose, plain);
}

#[test]
fn compact_and_verbose_json_read_back_into_the_same_output() {
    for output in [
        full_read_output(),
        sparse_output(),
        ReadOutput::new(QueryEcho::default()),
    ] {
        for verbose in [false, true] {
            let text = output.to_json_string(verbose, false);
            let back: ReadOutput = serde_json::from_str(&text).unwrap();
            assert_eq!(back, output, "verbose={verbose}: {text}");
        }
    }
}

#[test]
fn json_string_has_sorted_keys_and_pretty_option() {
    let output = sparse_output();
    let compact = output.to_json_string(false, false);
    assert!(
        compact.starts_with(r#"{"$schema":"ultragit-read/v1","query":{"ambiguous_anchor":false,"#),
        "{compact}"
    );
    assert!(!compact.contains('\n'));
    let pretty = output.to_json_string(false, true);
    assert!(
        pretty.starts_with("{\n  \"$schema\": \"ultragit-read/v1\",\n"),
        "{pretty}"
    );
    let reparsed: Value = serde_json::from_str(&pretty).unwrap();
    assert_eq!(reparsed, output.to_json_value(false));
}

#[test]
fn compact_is_smaller_than_verbose() {
    let output = sparse_output();
    assert!(output.to_json_string(false, false).len() < output.to_json_string(true, false).len());
}

#[test]
fn error_object_matches_the_spec_example_exactly() {
    let body = ReadErrorBody::new(
        ReadErrorCode::FileNotFound,
        "File not found: src/missing.rs. Does it exist at HEAD?",
    );
    assert_eq!(
        body.to_json(),
        r#"{"$schema":"ultragit-read/v1","error":{"code":"file_not_found","message":"File not found: src/missing.rs. Does it exist at HEAD?"}}"#
    );
    assert_eq!(
        body.to_json_pretty(),
        "{\n  \"$schema\": \"ultragit-read/v1\",\n  \"error\": {\n    \"code\": \"file_not_found\",\n    \"message\": \"File not found: src/missing.rs. Does it exist at HEAD?\"\n  }\n}"
    );
}

#[test]
fn error_details_are_written_only_when_present() {
    let body = ReadErrorBody::new(ReadErrorCode::AnchorNotFound, "Anchor not found: conect")
        .with_details(json!({"available_anchors": ["connect", "disconnect"]}));
    assert_eq!(
        body.to_json(),
        r#"{"$schema":"ultragit-read/v1","error":{"code":"anchor_not_found","message":"Anchor not found: conect","details":{"available_anchors":["connect","disconnect"]}}}"#
    );
    let read: ReadErrorBody = serde_json::from_str(
        r#"{"$schema":"ultragit-read/v1","error":{"code":"git","message":"m","details":null}}"#,
    )
    .unwrap();
    assert_eq!(read, ReadErrorBody::new(ReadErrorCode::Git, "m"));
}

#[test]
fn error_codes_are_snake_case() {
    let table = [
        (ReadErrorCode::FileNotFound, "file_not_found"),
        (ReadErrorCode::AnchorNotFound, "anchor_not_found"),
        (
            ReadErrorCode::LineRangeOutOfBounds,
            "line_range_out_of_bounds",
        ),
        (ReadErrorCode::InvalidLineRange, "invalid_line_range"),
        (ReadErrorCode::InvalidSince, "invalid_since"),
        (ReadErrorCode::InvalidArgument, "invalid_argument"),
        (ReadErrorCode::NotARepository, "not_a_repository"),
        (ReadErrorCode::BlameFailed, "blame_failed"),
        (ReadErrorCode::Git, "git"),
        (ReadErrorCode::Config, "config"),
        (ReadErrorCode::Internal, "internal"),
    ];
    assert_eq!(ReadErrorCode::KNOWN.len(), table.len());
    for (code, text) in table {
        assert_eq!(code.as_str(), text);
        assert_eq!(serde_json::to_value(&code).unwrap(), text);
        assert_eq!(
            serde_json::from_value::<ReadErrorCode>(json!(text)).unwrap(),
            code
        );
    }
    let newer: ReadErrorCode = serde_json::from_value(json!("quota_exceeded")).unwrap();
    assert_eq!(newer, ReadErrorCode::Other("quota_exceeded".to_owned()));
    assert_eq!(serde_json::to_value(&newer).unwrap(), "quota_exceeded");
}
