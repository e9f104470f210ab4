//! `ultragit history`: the annotations that touched a file or unit, newest
//! first, across a rename; constraints added and dropped.

use serde_json::{Value, json};
use testkit::TestRepo;

use crate::support::{annotate_regions, json_error, json_stdout, stdout, texts, ultragit};
use testkit::assert_contains_all;

const V1: &str = "pub struct Client;\n\nimpl Client {\n    pub fn connect(&self) -> bool {\n        true\n    }\n}\n\npub fn helper() {}\n";
const V2: &str = "pub struct Client;\n\nimpl Client {\n    pub fn connect(&self) -> bool {\n        retry()\n    }\n}\n\npub fn helper() {}\n";

/// A region of `file` named `name` with `(text, source)` constraints.
pub(crate) fn region(file: &str, name: &str, intent: &str, constraints: &[(&str, &str)]) -> Value {
    let constraints: Vec<Value> = constraints
        .iter()
        .map(|(text, source)| json!({"text": text, "source": source}))
        .collect();
    json!({
        "file": file,
        "ast_anchor": {"type": "function", "name": name},
        "lines": {"start": 4, "end": 6},
        "intent": intent,
        "constraints": constraints,
    })
}

/// `src/old.rs` annotated (c1), renamed to `src/new.rs` without a note (c2),
/// changed and annotated again (c3).
pub(crate) fn renamed() -> (TestRepo, String, String) {
    let repo = TestRepo::new();
    let c1 = repo.commit_file("src/old.rs", V1, "Add the client");
    let first = vec![
        region(
            "src/old.rs",
            "connect",
            "Connects once.",
            &[("Never blocks.", "author"), ("Returns a bool.", "inferred")],
        ),
        region("src/old.rs", "helper", "Helps.", &[]),
    ];
    annotate_regions(&repo, &c1, "2024-01-01T00:00:00Z", first);
    repo.rename("src/old.rs", "src/new.rs");
    repo.commit("Move the client");
    let c3 = repo.commit_file("src/new.rs", V2, "Retry in connect");
    let mut retry = region(
        "src/new.rs",
        "Client::connect",
        "Connects, retrying.",
        &[
            ("Returns a bool.", "inferred"),
            ("At most 3 retries.", "author"),
        ],
    );
    retry["risk_notes"] = json!("More retries overload the broker.");
    annotate_regions(&repo, &c3, "2024-01-02T00:00:00Z", vec![retry]);
    (repo, c1, c3)
}

#[test]
fn the_timeline_of_a_unit_follows_the_rename() {
    let (repo, c1, c3) = renamed();
    let out = json_stdout(repo.path(), &["history", "src/new.rs", "connect"]);
    assert_eq!(out["$schema"], "ultragit-history/v1");
    assert_eq!(out["units"], json!(["Client::connect"]));
    // The notes index lists both annotated commits (no walk of the file's
    // unannotated history); both are in HEAD's history.
    assert_eq!(
        (
            &out["commits_examined"],
            &out["annotated_commits"],
            &out["outside_history"]
        ),
        (&json!(2), &json!(2), &json!(0))
    );
    assert_eq!(out["former_names"], json!(["src/old.rs"]));
    let entries = &out["entries"];
    assert_eq!(texts(entries, "/commit"), [c3.as_str(), c1.as_str()]);
    assert_eq!(
        texts(entries, "/file"),
        ["src/new.rs", "src/old.rs"],
        "the path at each commit"
    );
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
    assert_eq!(
        entries[1]["constraints_added"],
        json!(["Never blocks.", "Returns a bool."])
    );
    assert!(entries[1]["author"].as_str().is_some_and(|a| !a.is_empty()));

    let whole = json_stdout(repo.path(), &["history", "src/new.rs"]);
    assert_eq!(
        texts(&whole["entries"], "/anchor"),
        ["Client::connect", "connect", "helper"]
    );
}

#[test]
fn markdown_pretty_and_errors() {
    let (repo, _c1, c3) = renamed();
    let md = stdout(repo.path(), &["history", "src/new.rs", "connect"]);
    assert_contains_all(
        &md,
        &[
            "# History of src/new.rs — connect\n",
            &format!("\n## {} — Client::connect · ", &c3[..7]),
            "\n**Constraints added:**\n- At most 3 retries.\n",
            "\n**Constraints dropped:**\n- Never blocks.\n",
            "\n**Risk:** More retries overload the broker.\n",
        ],
    );
    let pretty = stdout(
        repo.path(),
        &["history", "src/new.rs", "connect", "--format", "pretty"],
    );
    assert_contains_all(
        &pretty,
        &[
            "History of src/new.rs — connect: 2 entries\n",
            "    + At most 3 retries.\n",
            "    - Never blocks.\n",
        ],
    );

    let body = json_error(repo.path(), &["history", "src/old.rs"]);
    assert_eq!(body["$schema"], "ultragit-history/v1");
    assert_eq!(body["error"]["code"], "file_not_found");
    let run = ultragit(repo.path(), &["history", "src/old.rs"]);
    assert!(
        run.code == 1 && run.stderr.contains("File not found: src/old.rs"),
        "{run:?}"
    );
    assert_eq!(ultragit(repo.path(), &["history"]).code, 2);
}
