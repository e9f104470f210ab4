//! `ultragit summary`: a rollup per unit of a file, per file of a directory,
//! within a token budget.

use serde_json::json;

use crate::history::{parse, renamed};
use crate::support::{annotate, note, stdout, ultragit};

#[test]
fn a_file_rolls_up_per_unit_across_the_rename() {
    let (repo, _c1, _c2, c3) = renamed();
    let out = parse(&stdout(
        repo.path(),
        &["summary", "src/new.rs", "--format", "json"],
    ));
    assert_eq!(out["$schema"], "ultragit-summary/v1");
    assert_eq!(out["kind"], "file");
    let file = &out["files"][0];
    assert_eq!(file["file"], "src/new.rs");
    assert_eq!(file["annotations"], 2);
    let connect = &file["units"][0];
    assert_eq!(
        connect["anchor"], "Client::connect",
        "named as the newest note names it"
    );
    assert_eq!(connect["annotations"], 2);
    assert_eq!(connect["latest_intent"], "Connects, retrying.");
    assert_eq!(connect["latest_commit"], c3.as_str());
    assert_eq!(
        connect["constraints"],
        json!([
            {"text": "At most 3 retries.", "source": "author"},
            {"text": "Never blocks.", "source": "author"},
            {"text": "Returns a bool.", "source": "inferred"}
        ]),
        "author constraints first, newest first"
    );
    assert_eq!(
        connect["risk_notes"],
        json!(["More retries overload the broker."])
    );
    assert_eq!(file["units"][1]["anchor"], "helper");
    assert_eq!(file["units"][1]["annotations"], 1);

    let md = stdout(repo.path(), &["summary", "src/new.rs"]);
    assert!(md.starts_with("# Summary of src/new.rs\n"), "{md}");
    assert!(
        md.contains("### Client::connect — 2 annotations · "),
        "{md}"
    );
    assert!(md.contains("- At most 3 retries. (author)\n"), "{md}");
    let pretty = stdout(
        repo.path(),
        &["summary", "src/new.rs", "--format", "pretty"],
    );
    assert!(
        pretty.contains("  Client::connect  (2 annotations, latest "),
        "{pretty}"
    );
}

#[test]
fn a_directory_lists_its_annotated_files_within_the_budget() {
    let (repo, ..) = renamed();
    repo.commit_file("src/plain.rs", "pub fn x() {}\n", "no note");
    let out = parse(&stdout(
        repo.path(),
        &["summary", "src", "--format", "json"],
    ));
    assert_eq!(out["kind"], "directory");
    let files: Vec<&str> = out["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["file"].as_str().unwrap())
        .collect();
    assert_eq!(
        files,
        ["src/new.rs"],
        "files without annotations are left out"
    );
    assert_eq!(out["trimmed"], json!(null));

    // A second annotated file whose one unit says a lot.
    let c4 = repo.commit_file("src/other.rs", "pub fn other() {}\n", "other");
    annotate(
        &repo,
        &note(
            &c4,
            "2024-01-03T00:00:00Z",
            "inferred",
            "initial",
            "Other.",
            vec![json!({
                "file": "src/other.rs",
                "ast_anchor": {"type": "function", "name": "other"},
                "lines": {"start": 1, "end": 1},
                "intent": "A long intent. ".repeat(30),
                "constraints": []
            })],
            vec![],
        ),
    );
    let full = stdout(repo.path(), &["summary", "src"]);
    assert!(full.contains("## src/other.rs"), "{full}");
    let budget = full.len().div_ceil(4) - 20;
    let trimmed = stdout(
        repo.path(),
        &["summary", "src", "--max-tokens", &budget.to_string()],
    );
    assert!(trimmed.len().div_ceil(4) <= budget, "{trimmed}");
    assert!(
        trimmed.contains("### Client::connect"),
        "the most annotated unit stays: {trimmed}"
    );
    assert!(trimmed.contains("### helper"), "{trimmed}");
    assert!(!trimmed.contains("src/other.rs"), "{trimmed}");
    assert!(trimmed.contains("1 unit and 1 file left out"), "{trimmed}");

    let run = ultragit(repo.path(), &["summary", "nowhere", "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(parse(&run.stdout)["$schema"], "ultragit-summary/v1");
}
