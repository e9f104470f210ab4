//! The `ultragit/v1` note document: serde shape, tolerant reading, errors.

use serde_json::{Value, json};
use ultragit_schema::{
    Annotation, AstAnchor, Constraint, ConstraintSource, ContextLevel, CrossCuttingConcern,
    LineRange, NoteParseErrorKind, Provenance, ProvenanceOperation, RegionAnnotation,
    RelatedAnnotation, SCHEMA_V1, SemanticDependency,
};

use crate::fixtures::{
    REGION_OPTIONAL_FIELDS, SHA, assert_round_trip, full_annotation, full_region, minimal_region,
};

/// An in-place change to a note's JSON.
type Edit = fn(&mut Value);

fn json_of(annotation: &Annotation) -> Value {
    serde_json::from_str(&annotation.to_json()).unwrap()
}

/// A minimal valid note as another writer might produce it.
fn minimal_note() -> Value {
    json!({
        "$schema": "ultragit/v1",
        "commit": SHA,
        "timestamp": "2025-01-15T10:30:00Z",
        "summary": "s",
        "context_level": "inferred",
        "regions": [{
            "file": "src/a.rs",
            "ast_anchor": {"type": "function", "name": "connect"},
            "lines": {"start": 1, "end": 2},
            "intent": "i"
        }],
        "cross_cutting": [],
        "provenance": {"operation": "initial", "original_annotations_preserved": false}
    })
}

#[test]
fn every_annotation_type_round_trips() {
    let note = full_annotation();
    assert_round_trip(&note);
    assert_round_trip(&Annotation::new(
        SHA,
        "2025-01-15T10:30:00Z",
        "s",
        ContextLevel::Inferred,
    ));
    assert_round_trip(&full_region());
    assert_round_trip(&minimal_region("src/a.rs", "f"));
    assert_round_trip(&note.regions[0].ast_anchor);
    assert_round_trip(&AstAnchor::new("struct", "S"));
    assert_round_trip(&LineRange::new(3, 9));
    assert_round_trip(&note.regions[0].constraints[0]);
    assert_round_trip(&note.regions[0].semantic_dependencies[0]);
    assert_round_trip(&note.regions[0].related_annotations[0]);
    assert_round_trip(&note.cross_cutting[0]);
    assert_round_trip(&note.provenance);
    assert_round_trip(&Provenance::initial());
    for level in [
        ContextLevel::Enhanced,
        ContextLevel::Inferred,
        ContextLevel::from("x"),
    ] {
        assert_round_trip(&level);
    }
    for source in [
        ConstraintSource::Author,
        ConstraintSource::Inferred,
        ConstraintSource::from("y"),
    ] {
        assert_round_trip(&source);
    }
    for op in [
        ProvenanceOperation::Initial,
        ProvenanceOperation::Squash,
        ProvenanceOperation::Amend,
        ProvenanceOperation::from("rebase"),
    ] {
        assert_round_trip(&op);
    }
}

#[test]
fn from_json_and_to_json_agree() {
    let note = full_annotation();
    assert_eq!(Annotation::from_json(&note.to_json()).unwrap(), note);
    assert_eq!(Annotation::from_json(&note.to_json_pretty()).unwrap(), note);
    assert_eq!(
        Annotation::from_slice(note.to_json().as_bytes()).unwrap(),
        note
    );
    assert!(!note.to_json().contains('\n'));
    assert!(note.to_json_pretty().contains("\n  \"commit\""));
}

#[test]
fn renames_schema_and_anchor_type() {
    let value = json_of(&full_annotation());
    assert_eq!(value["$schema"], "ultragit/v1");
    assert!(value.get("schema").is_none());
    let anchor = &value["regions"][0]["ast_anchor"];
    assert_eq!(anchor["type"], "method");
    assert!(anchor.get("unit_type").is_none());
    assert!(note_text_starts_with_schema(&full_annotation().to_json()));
}

fn note_text_starts_with_schema(text: &str) -> bool {
    text.starts_with(r#"{"$schema":"ultragit/v1","commit":"#)
}

#[test]
fn new_sets_schema_and_initial_provenance() {
    let note = Annotation::new(SHA, "2025-01-15T10:30:00Z", "sum", ContextLevel::Enhanced);
    assert_eq!(note.schema, SCHEMA_V1);
    assert_eq!(note.provenance.operation, ProvenanceOperation::Initial);
    assert!(note.provenance.derived_from.is_empty());
    assert!(!note.provenance.original_annotations_preserved);
    assert_eq!(note.task, None);
}

#[test]
fn empty_optional_region_fields_are_omitted() {
    let mut note = Annotation::new(SHA, "2025-01-15T10:30:00Z", "s", ContextLevel::Inferred);
    note.regions.push(minimal_region("src/a.rs", "f"));
    let value = json_of(&note);
    let region = value["regions"][0].as_object().unwrap();
    let mut keys: Vec<&str> = region.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["ast_anchor", "file", "intent", "lines"]);
    assert!(region["ast_anchor"].get("signature").is_none());
    let provenance = value["provenance"].as_object().unwrap();
    let mut keys: Vec<&str> = provenance.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["operation", "original_annotations_preserved"]);
}

#[test]
fn populated_optional_fields_are_written() {
    let value = json_of(&full_annotation());
    let region = &value["regions"][0];
    for key in REGION_OPTIONAL_FIELDS.into_iter().chain(["constraints"]) {
        assert!(region.get(key).is_some(), "{key} missing");
    }
    assert!(region["ast_anchor"].get("signature").is_some());
    assert!(value["provenance"].get("derived_from").is_some());
    assert!(value["provenance"].get("synthesis_notes").is_some());
}

#[test]
fn unmarked_fields_are_always_written() {
    let note = Annotation::new(SHA, "2025-01-15T10:30:00Z", "s", ContextLevel::Inferred);
    let value = json_of(&note);
    assert_eq!(value["task"], Value::Null);
    assert!(value.as_object().unwrap().contains_key("task"));
    assert_eq!(value["regions"], json!([]));
    assert_eq!(value["cross_cutting"], json!([]));
    assert_eq!(value["provenance"]["original_annotations_preserved"], false);
    let concern = CrossCuttingConcern {
        description: "d".to_owned(),
        regions: Vec::new(),
        nature: "n".to_owned(),
    };
    assert_eq!(
        serde_json::to_value(&concern).unwrap()["regions"],
        json!([])
    );
}

#[test]
fn unknown_fields_are_ignored_at_every_level() {
    let mut note = minimal_note();
    note["future"] = json!({"deep": [1, 2, {"x": null}]});
    note["regions"][0]["confidence_hint"] = json!(0.9);
    note["regions"][0]["ast_anchor"]["visibility"] = json!("pub");
    note["regions"][0]["lines"]["columns"] = json!([1, 2]);
    note["provenance"]["tool"] = json!("ultragit 9");
    let parsed = Annotation::from_json(&note.to_string()).unwrap();
    assert_eq!(parsed.regions[0].ast_anchor.name, "connect");
    assert!(!parsed.to_json().contains("future"));
}

#[test]
fn missing_optional_fields_read_as_empty() {
    let mut note = minimal_note();
    let top = note.as_object_mut().unwrap();
    top.remove("cross_cutting");
    top.remove("task");
    top["provenance"]
        .as_object_mut()
        .unwrap()
        .remove("original_annotations_preserved");
    let parsed = Annotation::from_json(&note.to_string()).unwrap();
    assert_eq!(parsed.task, None);
    assert!(parsed.cross_cutting.is_empty());
    assert!(!parsed.provenance.original_annotations_preserved);
    let region = &parsed.regions[0];
    assert_eq!(region.reasoning, None);
    assert!(region.constraints.is_empty());
    assert!(region.semantic_dependencies.is_empty());
    assert!(region.related_annotations.is_empty());
    assert!(region.tags.is_empty());
    assert_eq!(region.risk_notes, None);
    assert_eq!(region.ast_anchor.signature, None);

    let mut no_regions = minimal_note();
    no_regions.as_object_mut().unwrap().remove("regions");
    assert!(
        Annotation::from_json(&no_regions.to_string())
            .unwrap()
            .regions
            .is_empty()
    );

    let mut concern_without_regions = minimal_note();
    concern_without_regions["cross_cutting"] = json!([{"description": "d", "nature": "n"}]);
    let parsed = Annotation::from_json(&concern_without_regions.to_string()).unwrap();
    assert!(parsed.cross_cutting[0].regions.is_empty());
}

#[test]
fn null_optional_values_read_as_none() {
    let mut note = minimal_note();
    note["task"] = Value::Null;
    note["regions"][0]["reasoning"] = Value::Null;
    let parsed = Annotation::from_json(&note.to_string()).unwrap();
    assert_eq!(parsed.task, None);
    assert_eq!(parsed.regions[0].reasoning, None);
}

#[test]
fn unknown_enum_values_read_and_write_back_verbatim() {
    let mut note = minimal_note();
    note["context_level"] = json!("verified");
    note["provenance"]["operation"] = json!("rebase");
    note["regions"][0]["constraints"] = json!([
        {"text": "t", "source": "reviewer"},
        {"text": "u", "source": "Author"},
        {"text": "v", "source": "author"}
    ]);
    let text = note.to_string();
    let parsed = Annotation::from_json(&text).unwrap();
    assert_eq!(
        parsed.context_level,
        ContextLevel::Other("verified".to_owned())
    );
    assert_eq!(parsed.context_level.as_str(), "verified");
    assert_eq!(
        parsed.provenance.operation,
        ProvenanceOperation::Other("rebase".to_owned())
    );
    let sources: Vec<&ConstraintSource> = parsed.regions[0]
        .constraints
        .iter()
        .map(|c| &c.source)
        .collect();
    assert_eq!(
        sources,
        [
            &ConstraintSource::Other("reviewer".to_owned()),
            &ConstraintSource::Other("Author".to_owned()),
            &ConstraintSource::Author,
        ]
    );
    let written = json_of(&parsed);
    assert_eq!(written["context_level"], "verified");
    assert_eq!(written["provenance"]["operation"], "rebase");
    assert_eq!(
        written["regions"][0]["constraints"][0]["source"],
        "reviewer"
    );
    assert_eq!(written["regions"][0]["constraints"][1]["source"], "Author");
}

#[test]
fn enums_serialize_lowercase() {
    let value = json_of(&full_annotation());
    assert_eq!(value["context_level"], "enhanced");
    assert_eq!(value["provenance"]["operation"], "squash");
    assert_eq!(value["regions"][0]["constraints"][0]["source"], "author");
    assert_eq!(value["regions"][0]["constraints"][1]["source"], "inferred");
    assert_eq!(
        serde_json::to_string(&ProvenanceOperation::Amend).unwrap(),
        r#""amend""#
    );
    assert_eq!(ContextLevel::Inferred.as_str(), "inferred");
}

fn parse_error(text: &str) -> ultragit_schema::NoteParseError {
    match Annotation::from_json(text) {
        Ok(parsed) => panic!("{text:?} parsed as {parsed:?}"),
        Err(err) => err,
    }
}

/// [`minimal_note`] without `field` of the object at `pointer`.
fn without(pointer: &str, field: &str) -> Value {
    let mut note = minimal_note();
    let object = note.pointer_mut(pointer).unwrap().as_object_mut().unwrap();
    object.remove(field).unwrap();
    note
}

#[test]
fn missing_required_fields_are_errors_naming_the_field() {
    let cases = [
        ("", "$schema"),
        ("", "commit"),
        ("", "timestamp"),
        ("", "summary"),
        ("", "context_level"),
        ("", "provenance"),
        ("/regions/0", "intent"),
        ("/regions/0", "file"),
        ("/regions/0", "lines"),
        ("/regions/0/ast_anchor", "name"),
    ];
    for (pointer, field) in cases {
        let err = parse_error(&without(pointer, field).to_string());
        assert_eq!(err.kind(), NoteParseErrorKind::Data, "{field}");
        assert!(
            err.reason()
                .starts_with(&format!("missing field `{field}`")),
            "{field}: {}",
            err.reason()
        );
    }
    for (pointer, field) in [
        ("/regions/0/ast_anchor", "type"),
        ("/provenance", "operation"),
    ] {
        let err = parse_error(&without(pointer, field).to_string());
        assert!(
            err.reason()
                .starts_with(&format!("missing field `{field}`")),
            "{err}"
        );
    }
}

#[test]
fn malformed_inputs_are_errors_with_a_reason() {
    let cases: [(&str, NoteParseErrorKind, &str); 10] = [
        (
            "",
            NoteParseErrorKind::Truncated,
            "EOF while parsing a value at line 1 column 0",
        ),
        ("   \n", NoteParseErrorKind::Truncated, "EOF while parsing"),
        (
            r#"{"$schema": "ultragit/v1", "commit": "#,
            NoteParseErrorKind::Truncated,
            "EOF",
        ),
        (
            "[]",
            NoteParseErrorKind::Data,
            "invalid type: sequence, expected an ultragit/v1 annotation object at line 1 column 1",
        ),
        (
            " \n [1]",
            NoteParseErrorKind::Data,
            "invalid type: sequence, expected an ultragit/v1 annotation object at line 2 column 2",
        ),
        ("42", NoteParseErrorKind::Data, "invalid type: integer `42`"),
        ("null", NoteParseErrorKind::Data, "invalid type: null"),
        (
            "not json",
            NoteParseErrorKind::Syntax,
            "expected ident at line 1 column 2",
        ),
        (
            "{} trailing",
            NoteParseErrorKind::Data,
            "missing field `$schema` at line 1 column 2",
        ),
        ("{\"a\" 1}", NoteParseErrorKind::Syntax, "expected `:`"),
    ];
    for (input, kind, reason) in cases {
        let err = parse_error(input);
        assert_eq!(err.kind(), kind, "{input:?}: {err}");
        assert!(err.reason().contains(reason), "{input:?}: {}", err.reason());
        assert_eq!(
            err.to_string(),
            format!("malformed ultragit/v1 annotation: {}", err.reason())
        );
    }
}

#[test]
fn trailing_text_after_a_valid_note_is_an_error() {
    let err = parse_error(&format!("{} x", minimal_note()));
    assert_eq!(err.kind(), NoteParseErrorKind::Syntax);
    assert!(
        err.reason().starts_with("trailing characters"),
        "{}",
        err.reason()
    );
    let two_notes = format!("{0}{0}", minimal_note());
    assert_eq!(parse_error(&two_notes).kind(), NoteParseErrorKind::Syntax);
}

#[test]
fn a_positional_array_is_not_a_note() {
    // serde would read a struct from an array of its fields in order; a note
    // is an object, so the top level rejects arrays of any shape.
    let note = Annotation::from_json(&minimal_note().to_string()).unwrap();
    let positional = json!([
        note.schema, note.commit, note.timestamp, note.task, note.summary,
        "inferred", [], [], {"operation": "initial"}
    ]);
    let err = parse_error(&positional.to_string());
    assert_eq!(err.kind(), NoteParseErrorKind::Data);
    assert_eq!((err.line(), err.column()), (1, 1));
}

#[test]
fn wrong_types_and_out_of_range_values_are_errors() {
    let cases: [(Edit, &str); 6] = [
        (
            |v| v["commit"] = json!(12),
            "invalid type: integer `12`, expected a string",
        ),
        (
            |v| v["regions"] = json!({}),
            "invalid type: map, expected a sequence",
        ),
        (
            |v| v["regions"][0]["lines"]["start"] = json!(-1),
            "invalid value: integer `-1`",
        ),
        (
            |v| v["regions"][0]["lines"]["end"] = json!(4_294_967_296_u64),
            "invalid value",
        ),
        (
            |v| v["regions"][0]["lines"]["end"] = json!(2.5),
            "invalid type: floating point",
        ),
        (
            |v| v["context_level"] = json!(["enhanced"]),
            "invalid type: sequence, expected a string",
        ),
    ];
    for (mutate, reason) in cases {
        let mut note = minimal_note();
        mutate(&mut note);
        let err = parse_error(&note.to_string());
        assert_eq!(err.kind(), NoteParseErrorKind::Data);
        assert!(err.reason().contains(reason), "{}", err.reason());
        assert!(err.line() >= 1 && err.column() >= 1, "{err:?}");
    }
}

#[test]
fn error_reports_line_and_column() {
    let err = parse_error("{\n  \"$schema\": \"ultragit/v1\",\n  \"commit\": 7\n}");
    assert_eq!((err.line(), err.column()), (3, 13));
    assert!(
        err.reason().ends_with("at line 3 column 13"),
        "{}",
        err.reason()
    );
}

#[test]
fn invalid_utf8_is_an_encoding_error() {
    let mut bytes = minimal_note().to_string().into_bytes();
    bytes.extend_from_slice(&[0xff, 0xfe]);
    let err = Annotation::from_slice(&bytes).unwrap_err();
    assert_eq!(err.kind(), NoteParseErrorKind::Encoding);
    assert!(
        err.reason().starts_with("note is not valid UTF-8"),
        "{}",
        err.reason()
    );
    assert_eq!((err.line(), err.column()), (0, 0));
}

#[test]
fn hostile_inputs_do_not_panic() {
    let deep_array = "[".repeat(100_000);
    let deep_unknown = format!(
        r#"{{"$schema":"ultragit/v1","x":{}{}}}"#,
        "[".repeat(50_000),
        "]".repeat(50_000)
    );
    let inputs = [
        deep_array.as_str(),
        deep_unknown.as_str(),
        "\u{0}",
        "{\"commit\": \"\\ud800\"}",
        "{\"$schema\": 1e999}",
        "\"ultragit/v1\"",
    ];
    for input in inputs {
        assert!(Annotation::from_json(input).is_err(), "{:.40}", input);
        assert!(Annotation::from_slice(input.as_bytes()).is_err());
    }
}

#[test]
fn truncations_of_a_valid_note_never_parse_and_never_panic() {
    let text = full_annotation().to_json();
    for cut in 0..text.len() {
        if !text.is_char_boundary(cut) {
            continue;
        }
        let err = Annotation::from_json(&text[..cut]).unwrap_err();
        assert!(!err.reason().is_empty());
    }
    let bytes = full_annotation().to_json_pretty().into_bytes();
    for cut in (0..bytes.len()).step_by(7) {
        assert!(Annotation::from_slice(&bytes[..cut]).is_err());
    }
}

#[test]
fn constructors_fill_required_fields_only() {
    let region = RegionAnnotation::new(
        "src/a.rs",
        AstAnchor::new("fn", "f"),
        LineRange::new(1, 2),
        "i",
    );
    assert_eq!(region.file, "src/a.rs");
    assert_eq!(region.ast_anchor.unit_type, "fn");
    assert_eq!(region.lines, LineRange { start: 1, end: 2 });
    assert_eq!(region.intent, "i");
    assert!(region.reasoning.is_none() && region.constraints.is_empty() && region.tags.is_empty());
    assert_eq!(
        Constraint::new("t", ConstraintSource::Author),
        Constraint {
            text: "t".to_owned(),
            source: ConstraintSource::Author
        }
    );
    let dependency = SemanticDependency {
        file: "f".to_owned(),
        anchor: "a".to_owned(),
        nature: "n".to_owned(),
    };
    assert_json(
        &dependency,
        json!({"file": "f", "anchor": "a", "nature": "n"}),
    );
    let related = RelatedAnnotation {
        commit: "c".to_owned(),
        anchor: "a".to_owned(),
        relationship: "r".to_owned(),
    };
    assert_json(
        &related,
        json!({"commit": "c", "anchor": "a", "relationship": "r"}),
    );
}

/// `value` serializes to exactly `expected`.
fn assert_json<T: serde::Serialize>(value: &T, expected: serde_json::Value) {
    assert_eq!(serde_json::to_value(value).unwrap(), expected);
}
