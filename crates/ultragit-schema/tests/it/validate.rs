//! `Annotation::validate` and `strip_invalid`: one test per rule, plus
//! several problems at once.

use ultragit_schema::{
    Annotation, ConstraintSource, ContextLevel, CrossCuttingConcern, ProblemLocation,
    ProvenanceOperation, Region, SemanticDependency, ValidationContext, ValidationProblem,
};

use crate::fixtures::{SHA, full_annotation, minimal_region};

fn valid_note() -> Annotation {
    let mut note = Annotation::new(SHA, "2025-01-15T10:30:00Z", "s", ContextLevel::Inferred);
    note.regions.push(minimal_region("src/a.rs", "connect"));
    note.regions.push(minimal_region("src/b.rs", "serve"));
    note
}

fn rendered(problems: &[ValidationProblem]) -> Vec<String> {
    problems.iter().map(ToString::to_string).collect()
}

/// Validates with the default context and compares the rendered problems.
fn check(note: &Annotation, expected: &[&str]) {
    check_with(note, &ValidationContext::default(), expected);
}

fn check_with(note: &Annotation, ctx: &ValidationContext<'_>, expected: &[&str]) {
    assert_eq!(rendered(&note.validate(ctx)), expected);
}

fn with_region(edit: impl FnOnce(&mut Region)) -> Annotation {
    let mut note = valid_note();
    edit(&mut note.regions[1]);
    note
}

#[test]
fn valid_documents_have_no_problems() {
    check(&valid_note(), &[]);
    let note = full_annotation();
    let files = vec![
        "src/mqtt/client.rs".to_owned(),
        "src/tls/session.rs".to_owned(),
    ];
    let ctx = ValidationContext {
        expected_commit: Some(SHA),
        commit_files: Some(&files),
    };
    check_with(&note, &ctx, &[]);
}

#[test]
fn intent_must_not_be_blank() {
    check(
        &with_region(|r| r.intent = String::new()),
        &["region 1 (src/b.rs:serve): intent is empty"],
    );
    check(
        &with_region(|r| r.intent = " \n\t".to_owned()),
        &["region 1 (src/b.rs:serve): intent is empty"],
    );
}

#[test]
fn anchor_name_and_type_must_not_be_blank() {
    check(
        &with_region(|r| r.ast_anchor.name = String::new()),
        &["region 1 (src/b.rs:?): ast_anchor.name is empty"],
    );
    check(
        &with_region(|r| r.ast_anchor.unit_type = " ".to_owned()),
        &["region 1 (src/b.rs:serve): ast_anchor.type is empty"],
    );
}

#[test]
fn anchor_type_is_not_restricted_to_the_emit_tool_list() {
    check(
        &with_region(|r| r.ast_anchor.unit_type = "trait".to_owned()),
        &[],
    );
}

#[test]
fn lines_must_be_one_based_and_ordered() {
    check(
        &with_region(|r| r.lines.start = 0),
        &["region 1 (src/b.rs:serve): lines 0:20 must be 1-based (both greater than 0)"],
    );
    check(
        &with_region(|r| (r.lines.start, r.lines.end) = (30, 20)),
        &["region 1 (src/b.rs:serve): lines.start (30) is after lines.end (20)"],
    );
    check(
        &with_region(|r| (r.lines.start, r.lines.end) = (5, 0)),
        &[
            "region 1 (src/b.rs:serve): lines 5:0 must be 1-based (both greater than 0)",
            "region 1 (src/b.rs:serve): lines.start (5) is after lines.end (0)",
        ],
    );
    check(&with_region(|r| (r.lines.start, r.lines.end) = (7, 7)), &[]);
}

#[test]
fn constraints_need_text_and_a_known_source() {
    let note = with_region(|r| {
        r.constraints = vec![
            ultragit_schema::Constraint::new("ok", ConstraintSource::Author),
            ultragit_schema::Constraint::new("", ConstraintSource::Inferred),
            ultragit_schema::Constraint::new("t", ConstraintSource::from("reviewer")),
        ];
    });
    check(
        &note,
        &[
            "region 1 (src/b.rs:serve): constraints[1].text is empty",
            "region 1 (src/b.rs:serve): constraints[2].source \"reviewer\" is not one of: author, inferred",
        ],
    );
}

#[test]
fn semantic_dependencies_need_file_anchor_and_nature() {
    let note = with_region(|r| {
        r.semantic_dependencies = vec![
            SemanticDependency {
                file: "f".to_owned(),
                anchor: "a".to_owned(),
                nature: "n".to_owned(),
            },
            SemanticDependency {
                file: String::new(),
                anchor: " ".to_owned(),
                nature: String::new(),
            },
        ];
    });
    check(
        &note,
        &[
            "region 1 (src/b.rs:serve): semantic_dependencies[1].file is empty",
            "region 1 (src/b.rs:serve): semantic_dependencies[1].anchor is empty",
            "region 1 (src/b.rs:serve): semantic_dependencies[1].nature is empty",
        ],
    );
}

#[test]
fn region_files_must_be_normalized_relative_paths() {
    let cases = [
        ("", "region 1 (?:serve): file is empty"),
        (
            "/src/b.rs",
            "region 1 (/src/b.rs:serve): file \"/src/b.rs\" is an absolute path",
        ),
        (
            "C:\\src\\b.rs",
            "region 1 (C:\\src\\b.rs:serve): file \"C:\\\\src\\\\b.rs\" is an absolute path",
        ),
        (
            "../b.rs",
            "region 1 (../b.rs:serve): file \"../b.rs\" has a '..' component; expected a normalized path relative to the repository root",
        ),
        (
            "./src/b.rs",
            "region 1 (./src/b.rs:serve): file \"./src/b.rs\" has a '.' component; expected a normalized path relative to the repository root",
        ),
        (
            "src//b.rs",
            "region 1 (src//b.rs:serve): file \"src//b.rs\" has an empty component; expected a normalized path relative to the repository root",
        ),
    ];
    for (file, expected) in cases {
        check(&with_region(|r| r.file = file.to_owned()), &[expected]);
    }
}

#[test]
fn region_files_must_be_in_the_commit_when_files_are_given() {
    let files = vec!["src/a.rs".to_owned()];
    let ctx = ValidationContext {
        expected_commit: None,
        commit_files: Some(&files),
    };
    check_with(
        &valid_note(),
        &ctx,
        &["region 1 (src/b.rs:serve): file \"src/b.rs\" is not among the files of the commit"],
    );
    let none: Vec<String> = Vec::new();
    let ctx = ValidationContext {
        expected_commit: None,
        commit_files: Some(&none),
    };
    assert_eq!(valid_note().validate(&ctx).len(), 2);
}

#[test]
fn schema_must_be_ultragit_v1() {
    let mut note = valid_note();
    note.schema = "ultragit/v2".to_owned();
    check(
        &note,
        &["annotation: $schema is \"ultragit/v2\", expected \"ultragit/v1\""],
    );
}

#[test]
fn commit_must_match_the_expected_full_sha() {
    let note = valid_note();
    let upper = SHA.to_ascii_uppercase();
    check_with(
        &note,
        &ValidationContext {
            expected_commit: Some(&upper),
            commit_files: None,
        },
        &[],
    );
    let other = "1111111111111111111111111111111111111111";
    check_with(
        &note,
        &ValidationContext {
            expected_commit: Some(other),
            commit_files: None,
        },
        &[&format!(
            "annotation: commit \"{SHA}\" does not match the annotated commit \"{other}\""
        )],
    );
    // Abbreviated SHAs are not accepted, in either direction.
    let prefix = &SHA[..12];
    assert_eq!(
        note.validate(&ValidationContext {
            expected_commit: Some(prefix),
            commit_files: None
        })
        .len(),
        1
    );
    let mut abbreviated = valid_note();
    abbreviated.commit = prefix.to_owned();
    assert_eq!(
        abbreviated
            .validate(&ValidationContext {
                expected_commit: Some(SHA),
                commit_files: None
            })
            .len(),
        1
    );
}

#[test]
fn commit_must_not_be_empty() {
    let mut note = valid_note();
    note.commit = String::new();
    check(&note, &["annotation: commit is empty"]);
}

#[test]
fn timestamp_must_be_rfc3339_with_offset() {
    for good in [
        "2025-01-15T10:30:00Z",
        "2025-01-15T10:30:00.123+02:00",
        "2025-01-15T10:30:00-05:30",
    ] {
        let mut note = valid_note();
        note.timestamp = good.to_owned();
        check(&note, &[]);
    }
    for bad in [
        "2025-01-15T10:30:00",
        "2025-01-15",
        "yesterday",
        "",
        "2025-13-01T00:00:00Z",
    ] {
        let mut note = valid_note();
        note.timestamp = bad.to_owned();
        check(
            &note,
            &[&format!(
                "annotation: timestamp {bad:?} is not an RFC 3339 date-time with offset"
            )],
        );
    }
}

#[test]
fn context_level_and_operation_must_be_known() {
    let mut note = valid_note();
    note.context_level = ContextLevel::from("verified");
    note.provenance.operation = ProvenanceOperation::from("rebase");
    check(
        &note,
        &[
            "annotation: context_level \"verified\" is not one of: enhanced, inferred",
            "annotation: provenance.operation \"rebase\" is not one of: initial, squash, amend",
        ],
    );
}

#[test]
fn cross_cutting_concerns_need_description_nature_and_regions() {
    let mut note = valid_note();
    note.cross_cutting = vec![
        CrossCuttingConcern {
            description: "d".to_owned(),
            regions: vec!["src/a.rs:connect".to_owned()],
            nature: "n".to_owned(),
        },
        CrossCuttingConcern {
            description: " ".to_owned(),
            regions: Vec::new(),
            nature: String::new(),
        },
        CrossCuttingConcern {
            description: "d".to_owned(),
            regions: vec!["src/a.rs:connect".to_owned(), String::new()],
            nature: "n".to_owned(),
        },
    ];
    check(
        &note,
        &[
            "cross-cutting concern 1: description is empty",
            "cross-cutting concern 1: nature is empty",
            "cross-cutting concern 1: regions is empty; a concern names at least one region",
            "cross-cutting concern 2: regions[1] is empty",
        ],
    );
}

#[test]
fn several_problems_in_one_document_are_all_reported() {
    let mut note = valid_note();
    note.schema = "x".to_owned();
    note.timestamp = "now".to_owned();
    note.regions[0].intent = String::new();
    note.regions[0].lines.start = 0;
    note.regions[1].file = "/abs.rs".to_owned();
    note.regions[1].ast_anchor.name = String::new();
    note.cross_cutting.push(CrossCuttingConcern {
        description: "d".to_owned(),
        regions: Vec::new(),
        nature: "n".to_owned(),
    });
    let problems = note.validate(&ValidationContext::default());
    assert_eq!(
        rendered(&problems),
        [
            "annotation: $schema is \"x\", expected \"ultragit/v1\"",
            "annotation: timestamp \"now\" is not an RFC 3339 date-time with offset",
            "region 0 (src/a.rs:connect): lines 0:20 must be 1-based (both greater than 0)",
            "region 0 (src/a.rs:connect): intent is empty",
            "region 1 (/abs.rs:?): file \"/abs.rs\" is an absolute path",
            "region 1 (/abs.rs:?): ast_anchor.name is empty",
            "cross-cutting concern 0: regions is empty; a concern names at least one region",
        ]
    );
    assert_eq!(problems[0].location, ProblemLocation::Document);
    assert_eq!(
        problems[2].location,
        ProblemLocation::Region {
            index: 0,
            file: "src/a.rs".to_owned(),
            anchor: "connect".to_owned()
        }
    );
    assert_eq!(
        problems[6].location,
        ProblemLocation::CrossCutting { index: 0 }
    );
    assert_eq!(problems[3].message, "intent is empty");
}

#[test]
fn strip_invalid_keeps_valid_regions_and_concerns() {
    let mut note = valid_note();
    note.regions.insert(1, minimal_region("src/c.rs", "bad"));
    note.regions[1].intent = String::new();
    note.regions.push(minimal_region("/abs.rs", "also_bad"));
    note.regions[3].lines.end = 1;
    let good_concern = CrossCuttingConcern {
        description: "d".to_owned(),
        regions: vec!["src/a.rs:connect".to_owned()],
        nature: "n".to_owned(),
    };
    note.cross_cutting = vec![
        CrossCuttingConcern {
            description: String::new(),
            ..good_concern.clone()
        },
        good_concern.clone(),
    ];
    note.timestamp = "later".to_owned();

    let problems = note.strip_invalid(&ValidationContext::default());

    let names: Vec<&str> = note
        .regions
        .iter()
        .map(|r| r.ast_anchor.name.as_str())
        .collect();
    assert_eq!(names, ["connect", "serve"]);
    assert_eq!(note.cross_cutting, [good_concern]);
    // Document problems are reported but remove nothing; indices refer to
    // positions before stripping.
    assert_eq!(note.timestamp, "later");
    assert_eq!(
        rendered(&problems),
        [
            "annotation: timestamp \"later\" is not an RFC 3339 date-time with offset",
            "region 1 (src/c.rs:bad): intent is empty",
            "region 3 (/abs.rs:also_bad): file \"/abs.rs\" is an absolute path",
            "region 3 (/abs.rs:also_bad): lines.start (10) is after lines.end (1)",
            "cross-cutting concern 0: description is empty",
        ]
    );
    // What is left validates clean except for the document problem.
    assert_eq!(note.validate(&ValidationContext::default()).len(), 1);
}

#[test]
fn strip_invalid_on_a_valid_document_changes_nothing() {
    let mut note = full_annotation();
    let before = note.clone();
    assert!(note.strip_invalid(&ValidationContext::default()).is_empty());
    assert_eq!(note, before);
}
