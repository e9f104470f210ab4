//! Corrections: their JSON, appending them to a stored note, their checks,
//! and applying them to a region.

use serde_json::{Value, json};
use ultragit_schema::correction::{AppendError, append_to_note, apply};
use ultragit_schema::{
    Annotation, Correction, CorrectionField, CorrectionKind, CorrectionTarget, RegionAnnotation,
};

use crate::fixtures::{SHA, assert_round_trip, full_annotation, full_region};

const ANN: &str = "Ann Example <ann@example.com>";

fn change(kind: &str, field: &str, value: &str, ts: &str) -> Correction {
    Correction {
        target: CorrectionTarget::unit("src/mqtt/client.rs", "MqttClient::connect"),
        kind: CorrectionKind::from(kind),
        field: Some(CorrectionField::from(field)),
        value: Some(value.to_owned()),
        reason: "the code says otherwise".to_owned(),
        author: ANN.to_owned(),
        timestamp: ts.to_owned(),
    }
}

fn flag(target: CorrectionTarget, ts: &str) -> Correction {
    Correction::flag(target, "looks wrong", ANN, ts)
}

#[test]
fn corrections_round_trip_and_are_omitted_when_empty() {
    let mut note = full_annotation();
    let plain: Value = serde_json::from_str(&note.to_json()).unwrap();
    assert!(plain.get("corrections").is_none());
    note.corrections = vec![
        flag(CorrectionTarget::all(), "2025-02-01T00:00:00Z"),
        change("set", "intent", "Connects once.", "2025-02-02T00:00:00Z"),
        change("rewrite", "summary", "x", "2025-02-03T00:00:00Z"),
    ];
    assert_round_trip(&note);
    let value: Value = serde_json::from_str(&note.to_json()).unwrap();
    assert_eq!(
        value["corrections"][0],
        json!({"target": {}, "kind": "flag", "reason": "looks wrong", "author": ANN,
               "timestamp": "2025-02-01T00:00:00Z"})
    );
    assert_eq!(value["corrections"][2]["kind"], "rewrite", "kept verbatim");
}

#[test]
fn appending_keeps_every_other_byte_of_the_note() {
    // Another writer's note: odd spacing, a member this version does not know.
    let note = format!(
        "{{ \"$schema\":\"ultragit/v1\", \"commit\":\"{SHA}\", \"timestamp\":\"2025-01-15T10:30:00Z\",\n\
         \"summary\":\"s\",\"context_level\":\"inferred\",\"future\":{{\"corrections\":[]}},\n\
         \"regions\":[{{\"file\":\"src/mqtt/client.rs\",\"ast_anchor\":{{\"type\":\"method\",\
         \"name\":\"MqttClient::connect\"}},\"lines\":{{\"start\":1,\"end\":2}},\"intent\":\"i\"}}],\n\
         \"provenance\":{{\"operation\":\"initial\"}} }}\n"
    );
    let before = Annotation::from_json(&note).unwrap();
    let first = flag(CorrectionTarget::all(), "2025-02-01T00:00:00Z");
    let once = append_to_note(&note, &first).unwrap();
    let close = note.rfind('}').unwrap();
    assert!(once.starts_with(&note[..close]), "{once}");
    assert!(once.ends_with(&note[close..]), "{once}");
    assert!(once.contains("\"future\":{\"corrections\":[]}"), "{once}");

    let second = change("set", "intent", "Connects.", "2025-02-02T00:00:00Z");
    let twice = append_to_note(&once, &second).unwrap();
    let after = Annotation::from_json(&twice).unwrap();
    assert_eq!(after.corrections, [first, second.clone()]);
    let mut unchanged = after.clone();
    unchanged.corrections.clear();
    assert_eq!(unchanged, before, "every other field as it was");

    // An existing, empty array is filled in place.
    let mut with_empty: Value = serde_json::from_str(&note).unwrap();
    with_empty["corrections"] = json!([]);
    let text = with_empty.to_string();
    let filled = append_to_note(&text, &second).unwrap();
    assert_eq!(filled.matches("\"corrections\"").count(), 2, "{filled}");
    assert_eq!(
        Annotation::from_json(&filled).unwrap().corrections,
        [second]
    );
}

#[test]
fn appending_to_something_that_is_not_a_note_fails() {
    let correction = flag(CorrectionTarget::all(), "2025-02-01T00:00:00Z");
    assert!(matches!(
        append_to_note("{not json", &correction),
        Err(AppendError::Parse(_))
    ));
}

#[test]
fn problems_say_what_does_not_make_sense() {
    let check = |correction: Correction, expected: &[&str]| {
        assert_eq!(correction.problems(), expected, "{correction:?}");
    };
    let ts = "2025-02-01T00:00:00Z";
    check(flag(CorrectionTarget::all(), ts), &[]);
    check(
        flag(
            CorrectionTarget {
                file: Some("a.rs".into()),
                anchor: None,
            },
            ts,
        ),
        &[],
    );
    check(change("set", "intent", "x", ts), &[]);
    check(change("add", "constraints", "x", ts), &[]);
    check(change("remove", "tags", "x", ts), &[]);
    check(
        change("set", "tags", "x", ts),
        &["tags is a list; use add or remove"],
    );
    check(
        change("add", "intent", "x", ts),
        &["intent is a text; use set"],
    );
    check(
        change("set", "summary", "x", ts),
        &[
            "field \"summary\" cannot be corrected; it is one of: intent, reasoning, risk_notes, constraints, tags",
        ],
    );
    check(
        change("set", "intent", " ", ts),
        &["a set correction needs a non-empty value"],
    );
    let mut bad = change("set", "intent", "x", "yesterday");
    bad.reason = " ".into();
    bad.target.file = None;
    bad.value = Some("v".repeat(5000));
    check(
        bad,
        &[
            "reason is empty; say why",
            "timestamp \"yesterday\" is not an RFC 3339 date-time with offset",
            "value is 5000 bytes, over the limit of 4096",
            "target names an anchor without its file",
            "a set correction names one region: its file and anchor",
        ],
    );
    let mut flag_with_field = flag(CorrectionTarget::all(), ts);
    flag_with_field.field = Some(CorrectionField::Intent);
    check(
        flag_with_field,
        &["a flag changes no field; it has no field or value"],
    );
}

#[test]
fn applying_changes_the_targeted_region_only() {
    let region = full_region(); // MqttClient::connect, with constraints and tags
    let other = RegionAnnotation {
        file: "src/other.rs".into(),
        ..full_region()
    };
    let corrections = vec![
        // Applied in time order, not note order: the later set wins.
        change(
            "set",
            "intent",
            "Connects, retrying.",
            "2025-03-01T00:00:00Z",
        ),
        change("set", "intent", "Connects once.", "2025-02-01T00:00:00Z"),
        change(
            "add",
            "constraints",
            "Never blocks.",
            "2025-02-01T00:00:00Z",
        ),
        change(
            "remove",
            "constraints",
            &region.constraints[0].text,
            "2025-02-01T00:00:00Z",
        ),
        change("add", "tags", "tls", "2025-02-01T00:00:00Z"),
        change("remove", "tags", "retry", "2025-02-01T00:00:00Z"),
        change("set", "risk_notes", "None.", "2025-02-01T00:00:00Z"),
        // Changes nothing: not listed.
        change("remove", "tags", "absent", "2025-02-01T00:00:00Z"),
        // Unusable: never applied.
        change("set", "tags", "x", "2025-02-01T00:00:00Z"),
        change("set", "summary", "x", "2025-02-01T00:00:00Z"),
        flag(
            CorrectionTarget::unit("src/mqtt/client.rs", "connect"),
            "2025-02-01T00:00:00Z",
        ),
        flag(CorrectionTarget::all(), "2025-01-01T00:00:00Z"),
    ];
    let (corrected, applied) = apply(&region, &corrections);
    assert_eq!(corrected.intent, "Connects, retrying.");
    let constraints: Vec<&str> = corrected
        .constraints
        .iter()
        .map(|c| c.text.as_str())
        .collect();
    assert_eq!(constraints[constraints.len() - 1], "Never blocks.");
    assert!(!constraints.contains(&region.constraints[0].text.as_str()));
    assert_eq!(corrected.tags, ["networking", "tls"]);
    assert_eq!(corrected.risk_notes.as_deref(), Some("None."));
    assert_eq!(corrected.ast_anchor, region.ast_anchor);

    let listed: Vec<(&str, Option<&str>)> = applied
        .iter()
        .map(|a| (a.correction.kind.as_str(), a.previous.as_deref()))
        .collect();
    assert_eq!(
        listed,
        [
            ("flag", None),
            ("set", Some(region.intent.as_str())),
            ("add", None),
            ("remove", None),
            ("add", None),
            ("remove", None),
            ("set", region.risk_notes.as_deref()),
            ("set", Some("Connects once.")),
        ]
    );

    let (untouched, applied) = apply(&other, &corrections);
    assert_eq!(untouched, other);
    assert_eq!(applied.len(), 1, "only the whole-annotation flag");
    assert!(applied[0].correction.is_flag());
}
