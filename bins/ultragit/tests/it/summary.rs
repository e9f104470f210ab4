//! `ultragit summary`: a rollup per unit of a file, per file of a directory,
//! within a token budget.

use serde_json::json;

use crate::history::{region, renamed};
use crate::support::{annotate_regions, assert_contains, json_error, json_stdout, stdout, texts};

#[test]
fn a_file_rolls_up_per_unit_across_the_rename() {
    let (repo, _c1, c3) = renamed();
    let out = json_stdout(repo.path(), &["summary", "src/new.rs"]);
    assert_eq!(
        (&out["$schema"], &out["kind"]),
        (&json!("ultragit-summary/v1"), &json!("file"))
    );
    let file = &out["files"][0];
    assert_eq!(
        (&file["file"], &file["annotations"]),
        (&json!("src/new.rs"), &json!(2))
    );
    assert_eq!(
        texts(&file["units"], "anchor"),
        ["Client::connect", "helper"],
        "most annotated first, named as the newest note names it"
    );
    let connect = &file["units"][0];
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

    let md = stdout(repo.path(), &["summary", "src/new.rs"]);
    assert_contains(
        &md,
        &[
            "# Summary of src/new.rs\n",
            "\n### Client::connect — 2 annotations · ",
            "\n- At most 3 retries. (author)\n",
        ],
    );
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
    let out = json_stdout(repo.path(), &["summary", "src"]);
    assert_eq!(out["kind"], "directory");
    assert_eq!(
        texts(&out["files"], "file"),
        ["src/new.rs"],
        "files without annotations are left out"
    );
    assert_eq!(out["trimmed"], json!(null));

    // A second annotated file whose one unit says a lot.
    let c4 = repo.commit_file("src/other.rs", "pub fn other() {}\n", "other");
    let long = region("src/other.rs", "other", &"A long intent. ".repeat(30), &[]);
    annotate_regions(&repo, &c4, "2024-01-03T00:00:00Z", vec![long]);
    let full = stdout(repo.path(), &["summary", "src"]);
    assert!(full.contains("## src/other.rs"), "{full}");
    let budget = full.len().div_ceil(4) - 20;
    let trimmed = stdout(
        repo.path(),
        &["summary", "src", "--max-tokens", &budget.to_string()],
    );
    assert!(trimmed.len().div_ceil(4) <= budget, "{trimmed}");
    assert_contains(
        &trimmed,
        &[
            "### Client::connect",
            "### helper",
            "1 unit and 1 file left out",
        ],
    );
    assert!(
        !trimmed.contains("src/other.rs"),
        "the least annotated unit goes first: {trimmed}"
    );

    let body = json_error(repo.path(), &["summary", "nowhere"]);
    assert_eq!(body["$schema"], "ultragit-summary/v1");
}
