//! `search_files`.

use serde_json::{Value, json};
use testkit::TestRepo;

use crate::{assert_truncation, call, call_limited, code, data, symlink};

fn search(repo: &TestRepo, args: Value) -> Value {
    call(repo.path(), "search_files", args)
}

fn repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        "src/lib.rs",
        "pub fn alpha() {}\n// TODO: beta\npub fn Gamma() {}\n",
    );
    repo.write("src/tools/x.rs", "fn alpha_helper() {}\r\n");
    repo.write("docs/notes.md", "alpha in docs\n");
    repo.write("bin.dat", b"alpha\0binary\n");
    repo.write("big.txt", format!("alpha\n{}", "x".repeat(1024 * 1024)));
    repo.write(
        "long.txt",
        format!("{}needle{}\n", "a".repeat(1000), "b".repeat(1000)),
    );
    repo.commit_all("files");
    repo.write("untracked.rs", "pub fn alpha() {}\n");
    repo
}

#[test]
fn finds_matching_lines_in_tracked_text_files() {
    let repo = repo();
    let env = search(&repo, json!({"pattern": "fn alpha"}));
    assert_eq!(
        data(&env),
        &json!({
            "pattern": "fn alpha",
            "path": ".",
            "matches": [
                {"path": "src/lib.rs", "line": 1, "text": "pub fn alpha() {}"},
                {"path": "src/tools/x.rs", "line": 1, "text": "fn alpha_helper() {}"}
            ],
            "total_matches": 2,
            "files_searched": 4,
            "files_skipped": {"binary": 1, "too_large": 1, "unreadable": 0}
        })
    );
    assert_eq!(env["truncated"], false);
    let env = search(&repo, json!({"pattern": "^pub fn [a-z]+", "path": "src\\"}));
    assert_eq!(data(&env)["total_matches"], 1);
    let env = search(
        &repo,
        json!({"pattern": "^pub fn [a-z]+", "case_insensitive": true, "path": "src"}),
    );
    assert_eq!(data(&env)["matches"][1]["text"], "pub fn Gamma() {}");
    let env = search(&repo, json!({"pattern": "alpha", "path": "docs"}));
    assert_eq!(
        data(&env)["matches"],
        json!([{"path": "docs/notes.md", "line": 1, "text": "alpha in docs"}])
    );
    // Long lines are shown around the match.
    let env = search(&repo, json!({"pattern": "needle"}));
    let text = data(&env)["matches"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with('…') && text.ends_with('…') && text.contains("needle"),
        "{text}"
    );
    assert!(text.len() < 300);
}

#[test]
fn many_matches_are_capped_with_the_total() {
    let repo = TestRepo::new();
    let text: String = (0..30).map(|n| format!("hit {n}\n")).collect();
    repo.commit_file("many.txt", &text, "many");
    let env = search(&repo, json!({"pattern": "hit", "max_results": 5}));
    assert_eq!(data(&env)["matches"].as_array().unwrap().len(), 5);
    assert_eq!(data(&env)["total_matches"], 30);
    assert_truncation(&env, "entries", 30, 5);
    let env = call_limited(
        repo.path(),
        "search_files",
        json!({"pattern": "hit"}),
        |l| l.max_entries = 7,
    );
    assert_eq!(data(&env)["matches"].as_array().unwrap().len(), 7);
    let env = call_limited(
        repo.path(),
        "search_files",
        json!({"pattern": "hit"}),
        |l| l.max_bytes = 400,
    );
    assert_eq!(env["truncation"]["limit"], "bytes");
    assert!(env["data"].to_string().len() <= 400, "{env}");
}

#[test]
fn symlinks_out_of_the_workspace_are_not_followed() {
    let repo = TestRepo::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "password\n").unwrap();
    symlink(&outside.path().join("secret.txt"), &repo.join("link.txt"));
    repo.commit_file("plain.txt", "password here\n", "files");
    repo.stage(&["link.txt"]);
    let env = search(&repo, json!({"pattern": "password"}));
    assert_eq!(
        data(&env)["matches"],
        json!([{"path": "plain.txt", "line": 1, "text": "password here"}])
    );
    assert_eq!(data(&env)["files_skipped"]["unreadable"], 1);
}

#[test]
fn bad_patterns_and_arguments_are_invalid() {
    let repo = repo();
    for args in [
        json!({"pattern": "("}),
        json!({"pattern": "a{100000}{100000}"}),
        json!({"pattern": ""}),
        json!({"pattern": "x".repeat(1001)}),
        json!({}),
        json!({"pattern": "a", "path": "/abs"}),
        json!({"pattern": "a", "path": "../up"}),
        json!({"pattern": "a", "max_results": 0}),
        json!({"pattern": "a", "case_insensitive": "yes"}),
    ] {
        let env = search(&repo, args.clone());
        assert_eq!(code(&env), "INVALID_ARGUMENT", "{args}");
    }
    let plain = tempfile::tempdir().unwrap();
    let env = call(plain.path(), "search_files", json!({"pattern": "a"}));
    assert_eq!(code(&env), "NOT_GIT_REPOSITORY");
}
