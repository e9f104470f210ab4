//! `list_files`.

use serde_json::json;
use testkit::TestRepo;

use crate::{assert_capped, call, call_limited, code, data};

fn repo() -> TestRepo {
    let repo = TestRepo::new();
    for path in [
        "README.md",
        "src/lib.rs",
        "src/tools/a.rs",
        "src/tools/b.rs",
        "src2/x.rs",
        "docs/guide.md",
    ] {
        repo.write(path, "x\n");
    }
    repo.commit_all("files");
    repo.write("untracked.txt", "not listed\n");
    repo.write("src/new.rs", "staged\n");
    repo.stage(&["src/new.rs"]);
    repo
}

#[test]
fn lists_tracked_files_under_a_prefix() {
    let repo = repo();
    let env = call(repo.path(), "list_files", json!({}));
    assert_eq!(
        data(&env),
        &json!({
            "path": ".",
            "files": ["README.md", "docs/guide.md", "src/lib.rs", "src/new.rs", "src/tools/a.rs", "src/tools/b.rs", "src2/x.rs"],
            "total": 7,
            "refused_links": []
        })
    );
    assert_eq!(env["truncated"], false);
    for prefix in ["src", "src/", "src\\", "./src", "src/tools/.."] {
        let env = call(repo.path(), "list_files", json!({"path": prefix}));
        assert_eq!(
            data(&env)["files"],
            json!([
                "src/lib.rs",
                "src/new.rs",
                "src/tools/a.rs",
                "src/tools/b.rs"
            ]),
            "{prefix}"
        );
        assert_eq!(data(&env)["path"], "src");
    }
    let env = call(
        repo.path(),
        "list_files",
        json!({"path": "src\\tools\\a.rs"}),
    );
    assert_eq!(data(&env)["files"], json!(["src/tools/a.rs"]));
    let env = call(repo.path(), "list_files", json!({"path": "nothing/here"}));
    assert_eq!(data(&env)["files"], json!([]));
    assert_eq!(data(&env)["total"], 0);
}

#[test]
fn a_workspace_below_the_top_lists_relative_to_itself() {
    let repo = repo();
    let env = call(&repo.join("src"), "list_files", json!({"path": "tools"}));
    assert_eq!(data(&env)["files"], json!(["tools/a.rs", "tools/b.rs"]));
    let env = call(&repo.join("src"), "list_files", json!({"path": "../docs"}));
    assert_eq!(code(&env), "INVALID_ARGUMENT");
}

#[test]
fn long_lists_are_capped_with_the_total() {
    let repo = repo();
    let env = call(repo.path(), "list_files", json!({"max_entries": 2}));
    assert_eq!(data(&env)["files"], json!(["README.md", "docs/guide.md"]));
    assert_eq!(data(&env)["total"], 7);
    assert_capped(&env, "entries", 7, 2, "narrower path");
    // The registry's limit wins over a larger request.
    let env = call_limited(
        repo.path(),
        "list_files",
        json!({"max_entries": 100}),
        |l| l.max_entries = 3,
    );
    assert_eq!(data(&env)["files"].as_array().unwrap().len(), 3);
    assert_eq!(env["truncation"]["max"], 3);
    // So does the byte cap.
    let env = call_limited(repo.path(), "list_files", json!({}), |l| l.max_bytes = 100);
    assert_eq!(env["truncation"]["limit"], "bytes");
    assert!(env["data"].to_string().len() <= 100, "{env}");
}

#[test]
fn bad_arguments_and_non_repositories_fail() {
    let repo = repo();
    for args in [
        json!({"max_entries": 0}),
        json!({"max_entries": 201}),
        json!({"max_entries": "5"}),
        json!({"path": "/etc"}),
        json!({"path": "C:\\x"}),
        json!({"path": ".."}),
        json!({"path": ".git"}),
        json!({"path": 3}),
        json!({"other": 1}),
    ] {
        let env = call(repo.path(), "list_files", args.clone());
        assert_eq!(code(&env), "INVALID_ARGUMENT", "{args}");
    }
    let plain = tempfile::tempdir().unwrap();
    let env = call(plain.path(), "list_files", json!({}));
    assert_eq!(code(&env), "NOT_GIT_REPOSITORY");
}
