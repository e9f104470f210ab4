//! `repo_summary`.

use serde_json::{Value, json};
use testkit::TestRepo;

use crate::{assert_truncation, call, call_limited, code, data};

fn summary(workspace: &std::path::Path) -> Value {
    let env = call(workspace, "repo_summary", json!({}));
    data(&env).clone()
}

#[test]
fn summarizes_a_repository() {
    let repo = TestRepo::new();
    repo.write("Cargo.toml", "[workspace]\n");
    repo.write("src/main.rs", "fn main() {}\n");
    repo.write("src/lib.rs", "\n");
    repo.write("docs/guide.md", "# guide\n");
    repo.write("LICENSE", "MIT\n");
    repo.commit_all("initial");
    repo.tag("v0.1.0");
    repo.commit_file("src/extra.rs", "\n", "add extra");
    repo.tag("v0.2.0");
    for n in 0..5 {
        repo.commit_file("CHANGELOG.md", format!("{n}\n"), &format!("change {n}"));
    }
    repo.set_origin_head("main", "HEAD~1");
    repo.write("untracked-dir/x.txt", "x\n");
    let mut data = summary(repo.path());
    assert_eq!(data["repository_root"], repo.path().to_str().unwrap());
    data["repository_root"] = json!("[root]");
    insta::assert_json_snapshot!("repo_summary", data);
}

#[test]
fn unborn_detached_and_submodules() {
    let repo = TestRepo::new();
    let data = summary(repo.path());
    assert_eq!(
        data["head"],
        json!({"branch": "main", "detached": false, "unborn": true, "commit": null, "subject": null})
    );
    assert_eq!(data["recent_commits"], json!([]));
    assert_eq!(data["latest_semver_tag"], Value::Null);
    assert_eq!(data["tracked_files"], 0);

    repo.commit_file("a.txt", "a\n", "first");
    repo.commit_file("a.txt", "b\n", "second");
    repo.checkout_detached("HEAD~1");
    let data = summary(repo.path());
    assert_eq!(data["head"]["branch"], Value::Null);
    assert_eq!(data["head"]["detached"], true);
    assert_eq!(data["head"]["subject"], "first");
    assert_eq!(data["has_gitmodules"], false);

    let sub = TestRepo::named("sub");
    sub.commit_file("s.txt", "s\n", "sub");
    repo.checkout("main");
    repo.add_submodule("vendor/sub", &sub);
    let data = summary(repo.path());
    assert_eq!(data["has_gitmodules"], true);
}

#[test]
fn a_workspace_below_the_top_counts_its_own_files() {
    let repo = TestRepo::with_commit(
        &[
            ("src/a.rs", "\n"),
            ("src/deep/b.rs", "\n"),
            ("other/c.txt", "\n"),
        ],
        "files",
    );
    let data = summary(&repo.join("src"));
    assert_eq!(data["workspace"], "src");
    assert_eq!(data["repository_root"], repo.path().to_str().unwrap());
    assert_eq!(data["tracked_files"], 2);
    assert_eq!(data["files_at_top_level"], 1);
    assert_eq!(
        data["files_by_top_level_directory"],
        json!([{"directory": "deep", "files": 1}])
    );
    assert_eq!(
        data["top_level_entries"],
        json!([{"name": "a.rs", "kind": "file"}, {"name": "deep", "kind": "dir"}])
    );
}

#[test]
fn long_lists_are_capped_and_failures_coded() {
    let repo = TestRepo::new();
    for n in 0..12 {
        repo.write(&format!("d{n:02}/f.ext{n}"), "\n");
    }
    repo.commit_all("many");
    let env = call_limited(repo.path(), "repo_summary", json!({}), |l| {
        l.max_entries = 5
    });
    assert_truncation(&env, "entries", 12, 5);
    assert_eq!(
        data(&env)["files_by_top_level_directory"]
            .as_array()
            .unwrap()
            .len(),
        5
    );
    assert_eq!(
        data(&env)["files_by_extension"].as_array().unwrap().len(),
        5
    );

    assert_eq!(
        code(&call(repo.path(), "repo_summary", json!({"x": 1}))),
        "INVALID_ARGUMENT"
    );
    let plain = tempfile::tempdir().unwrap();
    assert_eq!(
        code(&call(plain.path(), "repo_summary", json!({}))),
        "NOT_GIT_REPOSITORY"
    );
}
