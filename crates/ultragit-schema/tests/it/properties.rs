//! Notes are untrusted input (they arrive with `git fetch` from anyone who can
//! push): whatever the bytes, parsing, validating and stripping never panic, and
//! what they produce stays proportional to the note.
//!
//! Properties run over arbitrary bytes, over arbitrary JSON, and over notes of
//! the right shape with hostile values (line numbers that are zero, negative,
//! huge or reversed, long strings, deep nesting in unknown fields). Large
//! adversarial notes pin the bounds: a quadratic step or an amplification would
//! make them fail (or take minutes), not merely slow.

use proptest::prelude::*;
use serde_json::{Value, json};
use ultragit_schema::{Annotation, ProblemLocation, ValidationContext};

use crate::fixtures::SHA;

/// Bytes of rendered problems allowed per byte of note (plus a constant).
const PROBLEM_BYTES_PER_NOTE_BYTE: usize = 64;

/// Parses `bytes` and, when they are a note, validates and strips it under two
/// contexts, checking the invariants.
fn exercise(bytes: &[u8]) {
    let parsed = Annotation::from_slice(bytes);
    if let Ok(text) = std::str::from_utf8(bytes) {
        assert_eq!(
            Annotation::from_json(text).ok(),
            parsed.clone().ok(),
            "from_slice and from_json disagree"
        );
    }
    let Ok(note) = parsed else {
        return;
    };
    let files = vec![
        "src/a.rs".to_owned(),
        note.regions
            .first()
            .map_or(String::new(), |r| r.file.clone()),
    ];
    let contexts = [
        ValidationContext::default(),
        ValidationContext {
            expected_commit: Some(SHA),
            commit_files: Some(&files),
        },
    ];
    for ctx in &contexts {
        let problems = note.validate(ctx);
        let rendered: usize = problems.iter().map(|p| p.to_string().len()).sum();
        assert!(
            rendered <= PROBLEM_BYTES_PER_NOTE_BYTE * bytes.len() + 4096,
            "{rendered} bytes of problems for a {}-byte note",
            bytes.len()
        );
        let mut stripped = note.clone();
        assert_eq!(stripped.strip_invalid(ctx), problems);
        assert!(stripped.regions.len() <= note.regions.len());
        assert!(
            stripped
                .validate(ctx)
                .iter()
                .all(|p| p.location == ProblemLocation::Document),
            "stripping left an invalid region or concern"
        );
        let text = stripped.to_json();
        assert_eq!(Annotation::from_json(&text).ok(), Some(stripped));
    }
}

/// A JSON number or other value where a line number belongs.
fn hostile_line() -> impl Strategy<Value = Value> {
    prop_oneof![
        (0u32..5).prop_map(|n| json!(n)),
        any::<u32>().prop_map(|n| json!(n)),
        Just(json!(u64::from(u32::MAX) + 1)),
        Just(json!(-1)),
        Just(json!(i64::MIN)),
        Just(json!(u64::MAX)),
        Just(json!(1.5)),
        Just(json!(1e300)),
        Just(json!("7")),
        Just(Value::Null),
    ]
}

/// Fixed string values: blank, path-like, control characters.
const HOSTILE_STRINGS: [&str; 7] = [
    "",
    " \t",
    "../../etc/passwd",
    "/abs/path",
    "C:/x",
    "src/a.rs",
    "\u{1b}]52;c;ZXZpbA==\u{7}\u{202e}",
];

/// A string value: ordinary, blank, path-like, control characters, long
/// (each fixed string as likely as each generated kind).
fn hostile_text() -> impl Strategy<Value = String> {
    prop_oneof![
        7 => prop::sample::select(&HOSTILE_STRINGS[..]).prop_map(str::to_owned),
        1 => "[a-z/._ ]{0,24}",
        1 => any::<String>(),
        1 => (1usize..20_000).prop_map(|n| "x".repeat(n)),
    ]
}

/// Arrays nested `depth` deep.
fn nested(depth: usize) -> Value {
    (0..depth).fold(json!(0), |inner, _| json!([inner]))
}

fn region() -> impl Strategy<Value = Value> {
    (
        hostile_text(),
        hostile_text(),
        hostile_text(),
        hostile_line(),
        hostile_line(),
        hostile_text(),
        prop::collection::vec((hostile_text(), hostile_text()), 0..4),
        prop::collection::vec(hostile_text(), 0..3),
        0usize..150,
    )
        .prop_map(
            |(file, kind, name, start, end, intent, constraints, tags, depth)| {
                json!({
                    "file": file,
                    "ast_anchor": {"type": kind, "name": name},
                    "lines": {"start": start, "end": end},
                    "intent": intent,
                    "constraints": constraints
                        .into_iter()
                        .map(|(text, source)| json!({"text": text, "source": source}))
                        .collect::<Vec<_>>(),
                    "semantic_dependencies": [{"file": "", "anchor": "a", "nature": " "}],
                    "tags": tags,
                    "unknown": nested(depth),
                })
            },
        )
}

fn note() -> impl Strategy<Value = Value> {
    (
        prop_oneof![Just("ultragit/v1".to_owned()), Just("ultragit/v2".to_owned()), hostile_text()],
        prop_oneof![Just(SHA.to_owned()), hostile_text()],
        prop_oneof![Just("2025-01-15T10:30:00Z".to_owned()), hostile_text()],
        prop_oneof![Just("enhanced".to_owned()), Just("inferred".to_owned()), hostile_text()],
        prop::collection::vec(region(), 0..6),
        prop::collection::vec(prop::collection::vec(hostile_text(), 0..3), 0..3),
        prop_oneof![Just("initial".to_owned()), Just("squash".to_owned()), hostile_text()],
    )
        .prop_map(
            |(schema, commit, timestamp, level, regions, concerns, operation)| {
                json!({
                    "$schema": schema,
                    "commit": commit,
                    "timestamp": timestamp,
                    "summary": "s",
                    "context_level": level,
                    "regions": regions,
                    "cross_cutting": concerns
                        .into_iter()
                        .map(|regions| json!({"description": "d", "regions": regions, "nature": "n"}))
                        .collect::<Vec<_>>(),
                    "provenance": {"operation": operation, "derived_from": [SHA]},
                })
            },
        )
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        exercise(&bytes);
    }

    #[test]
    fn arbitrary_json_never_panics(text in "[\\[\\]{}\",:0-9a-z$ .\\-]{0,300}") {
        exercise(text.as_bytes());
    }

    #[test]
    fn hostile_values_in_the_right_shape_never_panic(note in note()) {
        exercise(note.to_string().as_bytes());
    }

    #[test]
    fn mangled_notes_never_panic(
        note in note(),
        cut in any::<prop::sample::Index>(),
        noise in prop::collection::vec(any::<u8>(), 0..8),
    ) {
        let mut bytes = note.to_string().into_bytes();
        let at = cut.index(bytes.len() + 1);
        bytes.splice(at..at, noise);
        exercise(&bytes);
    }
}

/// A note with `regions` as its regions, as text.
fn note_with_regions(regions: &str) -> String {
    format!(
        r#"{{"$schema":"ultragit/v1","commit":"{SHA}","timestamp":"2025-01-15T10:30:00Z","summary":"s","context_level":"inferred","regions":[{regions}],"cross_cutting":[],"provenance":{{"operation":"initial"}}}}"#
    )
}

#[test]
fn a_megabyte_of_one_marker_is_refused_quickly() {
    for marker in [
        "[",
        "{",
        "{\"a\":",
        "\"",
        "\\",
        "0",
        " ",
        "[0,",
        "{\"$schema\":[",
    ] {
        let text = marker.repeat(1024 * 1024 / marker.len());
        exercise(text.as_bytes());
        assert!(Annotation::from_json(&text).is_err(), "{marker}");
    }
}

/// Unknown fields are skipped without recursion, however deep; nesting where a
/// known field is expected is an error. Neither overflows the stack.
#[test]
fn deep_nesting_is_skipped_or_refused_without_recursion() {
    for depth in [200, 10_000, 500_000] {
        let deep = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let region = |extra: &str| {
            note_with_regions(&format!(
                r#"{{"file":"a","ast_anchor":{{"type":"f","name":"n"}},"lines":{{"start":1,"end":2}},"intent":"i",{extra}}}"#
            ))
        };
        let unknown = region(&format!(r#""x":{deep}"#));
        exercise(unknown.as_bytes());
        let note = Annotation::from_json(&unknown).unwrap();
        assert_eq!(note.regions.len(), 1, "depth {depth}");
        let known = region(&format!(r#""tags":{deep}"#));
        exercise(known.as_bytes());
        assert!(Annotation::from_json(&known).is_err(), "depth {depth}");
    }
}

/// Many invalid regions: stripping them is linear in their number (it was
/// quadratic: 50,000 regions took minutes).
#[test]
fn stripping_many_invalid_regions_is_linear() {
    let bad =
        r#"{"file":"","ast_anchor":{"type":"","name":""},"lines":{"start":0,"end":0},"intent":""}"#;
    let good = r#"{"file":"a.rs","ast_anchor":{"type":"f","name":"n"},"lines":{"start":1,"end":2},"intent":"i"}"#;
    let regions: Vec<&str> = (0..50_000)
        .map(|i| if i % 1000 == 0 { good } else { bad })
        .collect();
    let text = note_with_regions(&regions.join(","));
    let mut note = Annotation::from_json(&text).unwrap();
    let files: Vec<String> = (0..10_000)
        .map(|i| format!("f{i}.rs"))
        .chain(["a.rs".to_owned()])
        .collect();
    let ctx = ValidationContext {
        expected_commit: None,
        commit_files: Some(&files),
    };
    let problems = note.strip_invalid(&ctx);
    assert_eq!(note.regions.len(), 50);
    assert_eq!(problems.len(), 49_950 * 5);
}

/// One region with a long name and many bad constraints: each problem names
/// the region, but not by copying a long name into every one of them (that made
/// a 90 KB note validate into hundreds of megabytes).
#[test]
fn problems_do_not_multiply_long_names() {
    let name = "n".repeat(20_000);
    let constraints = vec![r#"{"text":"","source":"x"}"#; 2_000].join(",");
    let text = note_with_regions(&format!(
        r#"{{"file":"{name}","ast_anchor":{{"type":"f","name":"{name}"}},"lines":{{"start":1,"end":2}},"intent":"i","constraints":[{constraints}]}}"#
    ));
    let note = Annotation::from_json(&text).unwrap();
    let problems = note.validate(&ValidationContext::default());
    assert_eq!(problems.len(), 4_000);
    exercise(text.as_bytes());
    let first = problems[0].to_string();
    assert!(first.len() < 1_000, "{} bytes", first.len());
    assert!(first.starts_with("region 0 (nnn"), "{first:.60}");
}

#[test]
fn long_strings_and_extreme_numbers_read_or_fail_cleanly() {
    let long = "é".repeat(1024 * 1024);
    let text = note_with_regions(&format!(
        r#"{{"file":"a","ast_anchor":{{"type":"f","name":"n"}},"lines":{{"start":4294967295,"end":1}},"intent":"{long}"}}"#
    ));
    exercise(text.as_bytes());
    let note = Annotation::from_json(&text).unwrap();
    let problems = note.validate(&ValidationContext::default());
    assert_eq!(problems.len(), 1, "{problems:?}");
    for lines in [
        r#"{"start":-1,"end":1}"#,
        r#"{"start":4294967296,"end":1}"#,
        r#"{"start":1e3,"end":1}"#,
    ] {
        let text = note_with_regions(&format!(
            r#"{{"file":"a","ast_anchor":{{"type":"f","name":"n"}},"lines":{lines},"intent":"i"}}"#
        ));
        assert!(Annotation::from_json(&text).is_err(), "{lines}");
    }
}
