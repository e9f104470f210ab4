//! The catalog and the tool definitions.

use agent::schema::strictness_problems;
use repo_tools::git_status_summary::{CWD_DESCRIPTION, DESCRIPTION};
use serde_json::json;

const NAMES: [&str; 5] = [
    "git_status_summary",
    "repo_summary",
    "list_files",
    "read_file",
    "search_files",
];

#[test]
fn the_catalog_registers_the_five_tools() {
    let dir = tempfile::tempdir().unwrap();
    let registry = repo_tools::catalog(dir.path());
    assert_eq!(registry.names(), NAMES);
    assert_eq!(registry.definitions(), repo_tools::definitions());
    let unknown = registry.dispatch("rm_rf", &json!({})).to_value();
    assert_eq!(unknown["error"]["code"], "UNKNOWN_TOOL");
}

#[test]
fn every_definition_is_strict() {
    let definitions = repo_tools::definitions();
    let list = definitions.as_array().unwrap();
    assert_eq!(list.len(), NAMES.len());
    for (definition, name) in list.iter().zip(NAMES) {
        assert_eq!(definition["name"], name);
        assert_eq!(
            definition.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["description", "name", "parameters"]
        );
        assert!(!definition["description"].as_str().unwrap().is_empty());
        let problems = strictness_problems(&definition["parameters"]);
        assert!(problems.is_empty(), "{name}: {problems:?}");
    }
}

#[test]
fn git_status_summary_texts_are_byte_exact() {
    // Spec 002 §4.4. The TypeScript literal `\\\\` is two backslash characters in
    // the text; in this (non-raw) Rust literal each is written `\\`.
    let description =
        "Returns current git branch and raw porcelain status output for a workspace directory.";
    let cwd = "Workspace path to inspect (default: workspace root). Accepts / or \\\\ as separator; escape backslash in JSON (e.g. src\\\\tools).";
    assert_eq!(DESCRIPTION, description);
    assert_eq!(CWD_DESCRIPTION, cwd);
    assert_eq!(CWD_DESCRIPTION.matches('\\').count(), 4);
    assert!(CWD_DESCRIPTION.contains(r"/ or \\ as") && CWD_DESCRIPTION.contains(r"src\\tools"));
    let definitions = repo_tools::definitions();
    let definition = &definitions[0];
    assert_eq!(
        definition,
        &json!({
            "name": "git_status_summary",
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {
                    "cwd": {"type": "string", "default": ".", "description": cwd}
                },
                "required": [],
                "additionalProperties": false
            }
        })
    );
    // As JSON on the wire, each of those backslashes is escaped once more.
    let wire = definition.to_string();
    assert!(
        wire.contains(
            r#"Accepts / or \\\\ as separator; escape backslash in JSON (e.g. src\\\\tools)."#
        ),
        "{wire}"
    );
}
