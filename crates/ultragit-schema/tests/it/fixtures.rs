//! Sample values shared by the test modules.

use chrono::{TimeZone, Utc};
use serde::Serialize;
use serde::de::DeserializeOwned;
use ultragit_schema::{
    Annotation, AstAnchor, ConfidenceFactors, Constraint, ConstraintSource, ContextLevel,
    ContextLevelFilter, CrossCuttingConcern, CrossCuttingEntry, Decision, DependencyEntry,
    LineRange, Provenance, ProvenanceOperation, QueryEcho, ReadOutput, ReadStats, RegionAnnotation,
    RelatedAnnotation, ResolvedRelated, ScopeEcho, ScoredRegion, SemanticDependency, TrimmedInfo,
    UnannotatedChange,
};

pub const SHA: &str = "4f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39";
pub const OLD_SHA: &str = "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567";

/// A region's optional fields besides `constraints` (which a compact read
/// output always keeps): omitted from the JSON when empty.
pub const REGION_OPTIONAL_FIELDS: [&str; 6] = [
    "reasoning",
    "semantic_dependencies",
    "related_annotations",
    "tags",
    "risk_notes",
    "retires",
];

/// Serializes, deserializes, and checks both the value and the text survive.
pub fn assert_round_trip<T>(value: &T)
where
    T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let text = serde_json::to_string(value).unwrap();
    let back: T = serde_json::from_str(&text).unwrap();
    assert_eq!(&back, value, "value changed through {text}");
    assert_eq!(serde_json::to_string(&back).unwrap(), text);
}

/// A region with only the required fields.
pub fn minimal_region(file: &str, name: &str) -> RegionAnnotation {
    RegionAnnotation::new(
        file,
        AstAnchor::new("function", name),
        LineRange::new(10, 20),
        format!("{name} does its job"),
    )
}

/// A region with every field populated.
pub fn full_region() -> RegionAnnotation {
    RegionAnnotation {
        file: "src/mqtt/client.rs".to_owned(),
        ast_anchor: AstAnchor {
            unit_type: "method".to_owned(),
            name: "MqttClient::connect".to_owned(),
            signature: Some(
                "pub async fn connect(&mut self, opts: ConnectOptions) -> Result<()>".to_owned(),
            ),
        },
        lines: LineRange::new(42, 87),
        intent: "Open the broker connection with TLS and a bounded retry.".to_owned(),
        reasoning: Some(
            "The broker drops idle sockets after 30s; retries must back off.".to_owned(),
        ),
        constraints: vec![
            Constraint::new(
                "Must not block the executor thread.",
                ConstraintSource::Author,
            ),
            Constraint::new("Retry at most 5 times.", ConstraintSource::Inferred),
        ],
        semantic_dependencies: vec![SemanticDependency {
            file: "src/tls/session.rs".to_owned(),
            anchor: "TlsSession::handshake".to_owned(),
            nature: "relies on the handshake completing before CONNECT".to_owned(),
        }],
        related_annotations: vec![RelatedAnnotation {
            commit: OLD_SHA.to_owned(),
            anchor: "MqttClient::disconnect".to_owned(),
            relationship: "mirrors the teardown order".to_owned(),
        }],
        tags: vec!["networking".to_owned(), "retry".to_owned()],
        risk_notes: Some("Changing the retry count affects reconnect storms.".to_owned()),
        retires: vec!["Retries back off linearly.".to_owned()],
    }
}

/// An annotation with every field populated.
pub fn full_annotation() -> Annotation {
    Annotation {
        schema: "ultragit/v1".to_owned(),
        commit: SHA.to_owned(),
        timestamp: "2025-01-15T10:30:00Z".to_owned(),
        task: Some("Add TLS reconnect".to_owned()),
        summary: "Adds TLS to the MQTT connect path with bounded retries.".to_owned(),
        context_level: ContextLevel::Enhanced,
        regions: vec![
            full_region(),
            minimal_region("src/tls/session.rs", "TlsSession::handshake"),
        ],
        cross_cutting: vec![CrossCuttingConcern {
            description: "Connect and handshake timeouts must agree.".to_owned(),
            regions: vec![
                "src/mqtt/client.rs:MqttClient::connect".to_owned(),
                "src/tls/session.rs:TlsSession::handshake".to_owned(),
            ],
            nature: "shared timeout".to_owned(),
        }],
        provenance: Provenance {
            operation: ProvenanceOperation::Squash,
            derived_from: vec![OLD_SHA.to_owned()],
            original_annotations_preserved: true,
            synthesis_notes: Some("Merged two annotations of connect.".to_owned()),
        },
        corrections: Vec::new(),
    }
}

/// A read output with every field populated (the second region is minimal,
/// so compact output has something to drop).
pub fn full_read_output() -> ReadOutput {
    let mut output = ReadOutput::new(QueryEcho {
        files: vec!["src/mqtt/client.rs".to_owned()],
        anchor: Some("connect".to_owned()),
        lines: Some(LineRange::new(40, 90)),
        since: Some("2024-06-01".to_owned()),
        tags: vec!["retry".to_owned()],
        context_level: ContextLevelFilter::Enhanced,
        min_confidence: 0.25,
        depth: 2,
        max_regions: 10,
        max_tokens: Some(2000),
        scopes: vec![ScopeEcho {
            file: "src/mqtt/client.rs".to_owned(),
            line_range: Some(LineRange::new(44, 89)),
            anchor_name: Some("MqttClient::connect".to_owned()),
            anchor_type: Some("method".to_owned()),
            anchor_signature: Some("pub async fn connect(&mut self)".to_owned()),
            ambiguous: false,
            resolved_by: Some("outline".to_owned()),
            units: Vec::new(),
        }],
        ambiguous_anchor: false,
    });
    output.regions = vec![
        ScoredRegion {
            region: full_region(),
            commit_sha: SHA.to_owned(),
            timestamp: Utc.with_ymd_and_hms(2025, 1, 15, 10, 30, 0).unwrap(),
            commit_date: Some(Utc.with_ymd_and_hms(2025, 1, 15, 10, 2, 0).unwrap()),
            confidence: 0.875,
            confidence_factors: ConfidenceFactors {
                recency: 1.0,
                context_level: 1.0,
                anchor_stability: 0.5,
                provenance: 0.75,
            },
            related: vec![ResolvedRelated {
                commit: OLD_SHA.to_owned(),
                anchor: "MqttClient::disconnect".to_owned(),
                relationship: "mirrors the teardown order".to_owned(),
                confidence: 0.5,
                intent: Some("Close the connection cleanly.".to_owned()),
            }],
            corrections: Vec::new(),
            changed_since: vec![UnannotatedChange {
                commit: "9f8e7d6c5b4a3928170605f4e3d2c1b0a9f8e7d6".to_owned(),
                date: Some(Utc.with_ymd_and_hms(2025, 2, 1, 9, 0, 0).unwrap()),
                summary: "Bump the handshake timeout".to_owned(),
                lines: 2,
            }],
            focus: Some(LineRange::new(60, 71)),
        },
        ScoredRegion {
            region: minimal_region("src/mqtt/client.rs", "MqttClient::connect"),
            commit_sha: OLD_SHA.to_owned(),
            timestamp: Utc.with_ymd_and_hms(2024, 7, 1, 8, 0, 0).unwrap(),
            commit_date: None,
            confidence: 0.5,
            confidence_factors: ConfidenceFactors {
                recency: 0.5,
                context_level: 0.5,
                anchor_stability: 0.5,
                provenance: 0.5,
            },
            related: Vec::new(),
            corrections: Vec::new(),
            changed_since: Vec::new(),
            focus: None,
        },
    ];
    output.dependencies_on_this = vec![DependencyEntry {
        file: "src/app.rs".to_owned(),
        anchor: "App::start".to_owned(),
        nature: "calls connect before subscribing".to_owned(),
        commit: OLD_SHA.to_owned(),
        target_file: "src/mqtt/client.rs".to_owned(),
        target_anchor: "MqttClient::connect".to_owned(),
    }];
    output.cross_cutting = vec![CrossCuttingEntry {
        description: "Connect and handshake timeouts must agree.".to_owned(),
        regions: vec!["src/mqtt/client.rs:MqttClient::connect".to_owned()],
        nature: "shared timeout".to_owned(),
        commit: SHA.to_owned(),
    }];
    output.stats = ReadStats {
        commits_examined: 3,
        annotations_found: 2,
        regions_returned: 2,
        related_hops: 1,
        items_retired: 1,
    };
    output.trimmed = Some(TrimmedInfo {
        original_regions: 3,
        returned_regions: 2,
        dropped_commits: vec!["9f8e7d6c5b4a3928170605f4e3d2c1b0a9f8e7d6".to_owned()],
        strategy: "lowest_confidence_first".to_owned(),
        estimated_tokens: 1980,
        dropped_decisions: 2,
    });
    output.decisions = vec![
        Decision {
            kind: Decision::CONSTRAINT.to_owned(),
            text: "Must not block the executor thread.".to_owned(),
            source: Some("author".to_owned()),
            on: None,
            commits: vec![SHA.to_owned(), OLD_SHA.to_owned()],
            file: "src/mqtt/client.rs".to_owned(),
            anchor: "MqttClient::connect".to_owned(),
        },
        Decision {
            kind: Decision::DEPENDENCY.to_owned(),
            text: "relies on the handshake completing before CONNECT".to_owned(),
            source: None,
            on: Some("src/tls/session.rs:TlsSession::handshake".to_owned()),
            commits: vec![SHA.to_owned()],
            file: "src/mqtt/client.rs".to_owned(),
            anchor: "MqttClient::connect".to_owned(),
        },
    ];
    output.warnings = vec!["Skipping malformed annotation on commit 1234567".to_owned()];
    output
}

/// An output whose regions have nothing optional.
pub fn sparse_output() -> ReadOutput {
    let mut output = ReadOutput::new(QueryEcho {
        files: vec!["src/a.rs".to_owned()],
        ..QueryEcho::default()
    });
    output.regions.push(ScoredRegion {
        region: minimal_region("src/a.rs", "f"),
        commit_sha: OLD_SHA.to_owned(),
        timestamp: Utc.with_ymd_and_hms(2024, 7, 1, 8, 0, 0).unwrap(),
        confidence: 0.5,
        commit_date: None,
        confidence_factors: ConfidenceFactors::default(),
        related: Vec::new(),
        corrections: Vec::new(),
        changed_since: Vec::new(),
        focus: None,
    });
    output
}
