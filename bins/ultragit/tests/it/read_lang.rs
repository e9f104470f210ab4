//! `ultragit read <file> <anchor>` in the languages beyond Rust and Python:
//! a C function in a file like git's `diff.c`, a C++ member function defined
//! out of line, a Go method, a TypeScript class method and a Java method each
//! resolve through the outline to their unit's lines, and only the note
//! regions on that unit come back.

use testkit::TestRepo;

use crate::support::{annotate_regions, json_stdout, region, texts, ultragit};

/// A language's file (its path in the repository, its fixture in the outline
/// crate), the qualified name of the unit a query names, the unit's lines
/// (comments and annotations above it included), and a neighbouring unit
/// whose note must not come back.
struct Case {
    path: &'static str,
    fixture: &'static str,
    qualified: &'static str,
    lines: (u32, u32),
    other: (&'static str, (u32, u32)),
}

#[rustfmt::skip]
const CASES: &[Case] = &[
    Case { path: "diff.c", fixture: "diff.c", qualified: "builtin_diff", lines: (119, 141), other: ("quote_two", (75, 92)) },
    Case { path: "src/engine.cpp", fixture: "engine.cpp", qualified: "render::Scene::add_layer", lines: (62, 69), other: ("Scene::remove_layer", (71, 77)) },
    Case { path: "store/store.go", fixture: "store.go", qualified: "store.Store.Get", lines: (48, 57), other: ("Store.Put", (59, 74)) },
    Case { path: "src/session.ts", fixture: "session.ts", qualified: "Session.refresh", lines: (49, 55), other: ("Session.id", (45, 47)) },
    Case { path: "src/org/example/LruCache.java", fixture: "LruCache.java", qualified: "LruCache.put", lines: (34, 43), other: ("LruCache.get", (28, 32)) },
];

/// The realistic sample files of the outline crate's snapshots.
fn fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../crates/outline/tests/fixtures")
        .join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()))
}

/// A repository holding the case's file in one commit whose note has a
/// region on the unit (anchored by `noted`) and one on its neighbour.
fn repository(case: &Case, noted: &str) -> TestRepo {
    let repo = TestRepo::new();
    let commit = repo.commit_file(case.path, fixture(case.fixture), "Add the file");
    let (other, other_lines) = case.other;
    annotate_regions(
        &repo,
        &commit,
        "2024-01-01T00:00:00Z",
        vec![
            region(case.path, noted, case.lines, "The unit's intent."),
            region(case.path, other, other_lines, "The neighbour's intent."),
        ],
    );
    repo
}

/// The anchor in both separator styles, qualified and without its first
/// qualifier (`Store.Get` for `store.Store.Get`: a bare `Get` is ambiguous
/// with the interface's).
fn queries(case: &Case) -> Vec<String> {
    let colons = case.qualified.replace('.', "::");
    let unqualified = colons
        .split_once("::")
        .map_or(colons.as_str(), |(_, rest)| rest)
        .to_owned();
    let mut queries = vec![
        case.qualified.to_owned(),
        colons.replace("::", "."),
        colons.clone(),
        unqualified.replace("::", "."),
        unqualified,
    ];
    queries.dedup();
    queries
}

#[test]
fn anchors_resolve_in_every_language() {
    for case in CASES {
        let repo = repository(case, case.qualified);
        for query in queries(case) {
            let output = json_stdout(repo.path(), &["read", case.path, &query]);
            let context = format!("{} {query}: {output}", case.path);
            let scope = &output["query"]["scopes"][0];
            assert_eq!(scope["resolved_by"], "outline", "{context}");
            assert_eq!(scope["anchor_name"], case.qualified, "{context}");
            assert_eq!(scope["line_range"]["start"], case.lines.0, "{context}");
            assert_eq!(scope["line_range"]["end"], case.lines.1, "{context}");
            assert_eq!(
                texts(&output["regions"], "/region/intent"),
                ["The unit's intent."],
                "{context}"
            );
            let no_warnings = output["warnings"].as_array().is_none_or(Vec::is_empty);
            assert!(no_warnings, "{context}");
        }
    }
}

/// A note anchored in the other separator style (a model writing
/// `Scene.add_layer` for C++ or `Store::Get` for Go) still matches the unit.
#[test]
fn notes_in_the_other_separator_style_match() {
    for case in CASES {
        let noted = if case.qualified.contains("::") {
            case.qualified.replace("::", ".")
        } else {
            case.qualified.replace('.', "::")
        };
        let repo = repository(case, &noted);
        let output = json_stdout(repo.path(), &["read", case.path, case.qualified]);
        assert_eq!(
            texts(&output["regions"], "/region/intent"),
            ["The unit's intent."],
            "{}: {output}",
            case.path
        );
    }
}

#[test]
fn the_grammar_warning_is_gone_and_other_files_read_by_lines() {
    let case = &CASES[0];
    let repo = repository(case, case.qualified);
    let run = ultragit(repo.path(), &["read", case.path, "builtin_diff"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!run.stderr.contains("grammar"), "{run:?}");

    let commit = repo.commit_file("diff.kt", "fun builtin_diff() {}\n", "Add Kotlin");
    annotate_regions(
        &repo,
        &commit,
        "2024-01-02T00:00:00Z",
        vec![region(
            "diff.kt",
            "builtin_diff",
            (1, 1),
            "Kotlin's intent.",
        )],
    );
    let run = ultragit(repo.path(), &["read", "diff.kt", "--lines", "1:1"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stderr,
        "warning: No tree-sitter grammar for kt. Anchor resolution unavailable.\n"
    );
}
