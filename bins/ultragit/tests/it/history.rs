//! `ultragit history`: the annotations that touched a file or unit, newest
//! first, across a rename; constraints added and dropped.

use serde_json::{Value, json};
use testkit::TestRepo;

use crate::support::{annotate, note, stdout, ultragit};

pub(crate) fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

const V1: &str = "pub struct Client;\n\nimpl Client {\n    pub fn connect(&self) -> bool {\n        true\n    }\n}\n\npub fn helper() {}\n";
const V2: &str = "pub struct Client;\n\nimpl Client {\n    pub fn connect(&self) -> bool {\n        retry()\n    }\n}\n\npub fn helper() {}\n";

fn region(file: &str, name: &str, intent: &str, constraints: &[(&str, &str)]) -> Value {
    json!({
        "file": file,
        "ast_anchor": {"type": "function", "name": name},
        "lines": {"start": 4, "end": 6},
        "intent": intent,
        "constraints": constraints.iter().map(|(t, s)| json!({"text": t, "source": s})).collect::<Vec<_>>(),
    })
}

/// `src/old.rs` annotated (c1), renamed to `src/new.rs` without a note (c2),
/// changed and annotated again (c3).
pub(crate) fn renamed() -> (TestRepo, String, String, String) {
    let repo = TestRepo::new();
    let c1 = repo.commit_file("src/old.rs", V1, "Add the client");
    annotate(
        &repo,
        &note(
            &c1,
            "2024-01-01T00:00:00Z",
            "enhanced",
            "initial",
            "Adds the client.",
            vec![
                region(
                    "src/old.rs",
                    "connect",
                    "Connects once.",
                    &[("Never blocks.", "author"), ("Returns a bool.", "inferred")],
                ),
                region("src/old.rs", "helper", "Helps.", &[]),
            ],
            vec![],
        ),
    );
    repo.rename("src/old.rs", "src/new.rs");
    let c2 = repo.commit("Move the client");
    let c3 = repo.commit_file("src/new.rs", V2, "Retry in connect");
    let mut r = region(
        "src/new.rs",
        "Client::connect",
        "Connects, retrying.",
        &[
            ("Returns a bool.", "inferred"),
            ("At most 3 retries.", "author"),
        ],
    );
    r["risk_notes"] = json!("More retries overload the broker.");
    annotate(
        &repo,
        &note(
            &c3,
            "2024-01-02T00:00:00Z",
            "enhanced",
            "initial",
            "Retries.",
            vec![r],
            vec![],
        ),
    );
    (repo, c1, c2, c3)
}

#[test]
fn the_timeline_of_a_unit_follows_the_rename() {
    let (repo, c1, _c2, c3) = renamed();
    let out = parse(&stdout(
        repo.path(),
        &["history", "src/new.rs", "connect", "--format", "json"],
    ));
    assert_eq!(out["$schema"], "ultragit-history/v1");
    assert_eq!(out["units"], json!(["Client::connect"]));
    assert_eq!(out["commits_examined"], 3);
    assert_eq!(out["annotated_commits"], 2);
    let entries = out["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "{out}");
    assert_eq!(entries[0]["commit"], c3.as_str());
    assert_eq!(entries[0]["file"], "src/new.rs");
    assert_eq!(entries[0]["intent"], "Connects, retrying.");
    assert_eq!(
        entries[0]["constraints_added"],
        json!(["At most 3 retries."])
    );
    assert_eq!(entries[0]["constraints_dropped"], json!(["Never blocks."]));
    assert_eq!(
        entries[0]["risk_notes"],
        "More retries overload the broker."
    );
    assert_eq!(entries[1]["commit"], c1.as_str());
    assert_eq!(entries[1]["file"], "src/old.rs", "the path at that commit");
    assert_eq!(
        entries[1]["constraints_added"],
        json!(["Never blocks.", "Returns a bool."])
    );
    assert!(entries[1]["author"].as_str().is_some_and(|a| !a.is_empty()));

    let whole = parse(&stdout(
        repo.path(),
        &["history", "src/new.rs", "--format", "json"],
    ));
    let anchors: Vec<&str> = whole["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["anchor"].as_str().unwrap())
        .collect();
    assert_eq!(anchors, ["Client::connect", "connect", "helper"]);
}

#[test]
fn markdown_pretty_and_errors() {
    let (repo, _c1, _c2, c3) = renamed();
    let md = stdout(repo.path(), &["history", "src/new.rs", "connect"]);
    assert!(
        md.starts_with("# History of src/new.rs — connect\n"),
        "{md}"
    );
    assert!(
        md.contains(&format!("## {} — Client::connect · ", &c3[..7])),
        "{md}"
    );
    assert!(
        md.contains("**Constraints added:**\n- At most 3 retries.\n"),
        "{md}"
    );
    assert!(
        md.contains("**Constraints dropped:**\n- Never blocks.\n"),
        "{md}"
    );
    assert!(
        md.contains("**Risk:** More retries overload the broker."),
        "{md}"
    );
    let pretty = stdout(
        repo.path(),
        &["history", "src/new.rs", "connect", "--format", "pretty"],
    );
    assert!(
        pretty.starts_with("History of src/new.rs — connect: 2 entries\n"),
        "{pretty}"
    );
    assert!(pretty.contains("    + At most 3 retries.\n"), "{pretty}");
    assert!(pretty.contains("    - Never blocks.\n"), "{pretty}");

    let run = ultragit(repo.path(), &["history", "src/old.rs", "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let body = parse(&run.stdout);
    assert_eq!(body["$schema"], "ultragit-history/v1");
    assert_eq!(body["error"]["code"], "file_not_found");
    let run = ultragit(repo.path(), &["history", "src/old.rs"]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("File not found: src/old.rs"), "{run:?}");
    assert_eq!(ultragit(repo.path(), &["history"]).code, 2);
}
