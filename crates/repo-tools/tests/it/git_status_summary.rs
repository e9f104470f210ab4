//! `git_status_summary` against spec 002 §11, item by item.

use agent::{Tool, ToolLimits};
use repo_tools::GIT_STATUS_SUMMARY;
use repo_tools::git_status_summary::{NAME, REV_PARSE_ARGS, STATUS_ARGS, TIMEOUT};
use serde_json::{Value, json};
use testkit::TestRepo;

use crate::{call, call_limited, code, data, symlink};

/// What git itself prints for the two spec commands, run by the test through
/// `TestRepo::command()` (in `dir`, relative to the repository, via `-C`).
fn expected(repo: &TestRepo, dir: &str) -> (String, String) {
    let run = |args: &[&str]| {
        let out = repo
            .command()
            .args(["-C", dir])
            .args(args)
            .run()
            .expect("git runs");
        String::from_utf8(out.stdout).expect("UTF-8 output")
    };
    let top = run(&["rev-parse", "--show-toplevel"]);
    let raw = run(&[
        "-c",
        "core.quotePath=false",
        "status",
        "--porcelain=v1",
        "--branch",
    ]);
    (top.trim().to_owned(), raw)
}

fn status(repo_or_dir: &std::path::Path, args: Value) -> Value {
    call(repo_or_dir, NAME, args)
}

/// Asserts that a call with each of `cwds` fails with the error `expected`.
fn assert_cwds_fail(repo: &TestRepo, cwds: &[&str], expected: &str) {
    for cwd in cwds {
        let env = status(repo.path(), json!({"cwd": cwd}));
        assert_eq!(code(&env), expected, "{cwd}");
    }
}

/// A repository with history, a staged, a modified and an untracked file, and a
/// `src/tools` directory.
fn busy_repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.commit_file("README.md", "hello\n", "first");
    repo.commit_file("src/tools/a.rs", "fn a() {}\n", "second");
    repo.write("README.md", "hello again\n");
    repo.write("src/tools/b.rs", "fn b() {}\n");
    repo.stage(&["src/tools/b.rs"]);
    repo.write("notes.txt", "untracked\n");
    repo
}

#[test]
fn the_commands_are_the_spec_s() {
    assert_eq!(REV_PARSE_ARGS, ["rev-parse", "--show-toplevel"]);
    assert_eq!(
        STATUS_ARGS,
        [
            "-c",
            "core.quotePath=false",
            "status",
            "--porcelain=v1",
            "--branch"
        ]
    );
    assert_eq!(TIMEOUT.as_millis(), 30_000);
}

#[test]
fn a_directory_in_a_repository_gives_root_branch_and_raw() {
    let repo = busy_repo();
    let (top, raw) = expected(&repo, "src");
    let env = status(repo.path(), json!({"cwd": "src"}));
    let data = data(&env);
    assert_eq!(data["repository_root"], top.as_str());
    assert_eq!(data["repository_root"], repo.path().to_str().unwrap());
    assert_eq!(data["branch"], "main");
    assert_eq!(data["raw"], raw.as_str());
    assert!(
        raw.ends_with('\n'),
        "raw keeps git's trailing newline: {raw:?}"
    );
    assert_eq!(
        raw,
        "## main\n M README.md\nA  src/tools/b.rs\n?? notes.txt\n"
    );
    assert_eq!(env["truncated"], false);
    assert_eq!(
        data.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["branch", "raw", "repository_root"],
        "exactly the spec's three fields"
    );
}

#[test]
fn the_same_status_gives_the_same_result() {
    let repo = busy_repo();
    let first = status(repo.path(), json!({}));
    let second = status(repo.path(), json!({}));
    assert_eq!(first, second);
}

#[test]
fn upstream_tracking_still_names_the_branch() {
    let repo = busy_repo();
    repo.git(&["remote", "add", "origin", "/nonexistent/origin.git"]);
    repo.set_origin_head("main", "HEAD~1");
    repo.git(&["branch", "--set-upstream-to=origin/main"]);
    let (_, raw) = expected(&repo, ".");
    assert!(
        raw.starts_with("## main...origin/main [ahead 1]\n"),
        "{raw}"
    );
    let env = status(repo.path(), json!({}));
    assert_eq!(data(&env)["branch"], "main");
    assert_eq!(data(&env)["raw"], raw.as_str());
    repo.checkout_new("feature/x");
    let env = status(repo.path(), json!({}));
    assert_eq!(data(&env)["branch"], "feature/x");
}

#[test]
fn detached_head_has_a_null_branch() {
    let repo = busy_repo();
    repo.checkout_detached("HEAD~1");
    let (_, raw) = expected(&repo, ".");
    assert!(raw.starts_with("## HEAD (no branch)\n"), "{raw}");
    let env = status(repo.path(), json!({}));
    assert_eq!(data(&env)["branch"], Value::Null);
    assert_eq!(data(&env)["raw"], raw.as_str());
}

#[test]
fn an_unborn_branch_is_named() {
    let repo = TestRepo::new();
    repo.write("first.txt", "x\n");
    let (_, raw) = expected(&repo, ".");
    assert_eq!(raw, "## No commits yet on main\n?? first.txt\n");
    let env = status(repo.path(), json!({}));
    assert_eq!(data(&env)["branch"], "main");
    assert_eq!(data(&env)["raw"], raw.as_str());
}

#[test]
fn missing_or_file_cwd_is_not_a_directory() {
    let repo = busy_repo();
    assert_cwds_fail(
        &repo,
        &[
            "missing",
            "src/missing/deeper",
            "README.md",
            "README.md/x",
            "src/tools/a.rs",
        ],
        "NOT_DIRECTORY",
    );
    // A workspace root that does not exist, with the default cwd.
    let env = status(&repo.join("nowhere"), json!({}));
    assert_eq!(code(&env), "NOT_DIRECTORY");
}

#[test]
fn the_default_cwd_is_the_workspace_root() {
    let repo = busy_repo();
    let (top, raw) = expected(&repo, ".");
    for args in [json!({}), json!({"cwd": null}), json!({"cwd": "."})] {
        let env = status(repo.path(), args.clone());
        assert_eq!(data(&env)["repository_root"], top.as_str(), "{args}");
        assert_eq!(data(&env)["raw"], raw.as_str(), "{args}");
    }
    // The workspace root, not the process's directory (which is inside this
    // project's own repository): a workspace below the top still reports the top.
    let env = status(&repo.join("src/tools"), json!({}));
    assert_eq!(data(&env)["repository_root"], top.as_str());
    // Without a cwd, a plain directory as workspace root is outside any repository.
    let plain = tempfile::tempdir().unwrap();
    assert_eq!(code(&status(plain.path(), json!({}))), "NOT_GIT_REPOSITORY");
}

#[test]
fn slash_and_backslash_resolve_the_same_directory() {
    // `src/tools` is its own repository here, so the result shows which directory
    // the command ran in.
    let repo = busy_repo();
    repo.git(&["init", "--quiet", "--initial-branch=inner", "src/nested"]);
    std::fs::write(repo.join("src/nested/x.txt"), "x\n").unwrap();
    let (inner_top, inner_raw) = expected(&repo, "src/nested");
    assert_eq!(inner_top, repo.join("src/nested").to_str().unwrap());
    for cwd in [
        "src/nested",
        "src\\nested",
        "src\\\\nested\\",
        "./src/../src/nested/",
        "src/tools/../nested",
    ] {
        let env = status(repo.path(), json!({"cwd": cwd}));
        assert_eq!(data(&env)["repository_root"], inner_top.as_str(), "{cwd}");
        assert_eq!(data(&env)["branch"], "inner", "{cwd}");
        assert_eq!(data(&env)["raw"], inner_raw.as_str(), "{cwd}");
    }
    let env = status(repo.path(), json!({"cwd": "src\\tools"}));
    assert_eq!(data(&env)["repository_root"], repo.path().to_str().unwrap());
}

#[test]
fn an_inner_repository_is_its_own_root() {
    let repo = busy_repo();
    repo.git(&["init", "--quiet", "--initial-branch=main", "vendor/inner"]);
    std::fs::write(repo.join("vendor/inner/lib.txt"), "lib\n").unwrap();
    std::fs::create_dir_all(repo.join("vendor/inner/deep")).unwrap();
    let (top, raw) = expected(&repo, "vendor/inner/deep");
    let env = status(repo.path(), json!({"cwd": "vendor/inner/deep"}));
    assert_eq!(data(&env)["repository_root"], top.as_str());
    assert_eq!(top, repo.join("vendor/inner").to_str().unwrap());
    assert_eq!(data(&env)["raw"], raw.as_str());
    assert_eq!(raw, "## No commits yet on main\n?? lib.txt\n");
}

#[test]
fn outside_any_repository_is_not_a_git_repository() {
    let plain = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(plain.path().join("a/b")).unwrap();
    for args in [json!({}), json!({"cwd": "a/b"}), json!({"cwd": "a\\b"})] {
        let env = status(plain.path(), args.clone());
        assert_eq!(code(&env), "NOT_GIT_REPOSITORY", "{args}");
    }
    // Directory validation comes first (§7).
    let env = status(plain.path(), json!({"cwd": "missing"}));
    assert_eq!(code(&env), "NOT_DIRECTORY");
    // A bare repository has no working tree to report.
    let bare = TestRepo::new();
    bare.git(&["init", "--quiet", "--bare", "store.git"]);
    let env = status(bare.path(), json!({"cwd": "store.git"}));
    assert_eq!(code(&env), "NOT_GIT_REPOSITORY");
}

#[test]
fn quoted_paths_are_kept_as_git_prints_them() {
    let repo = TestRepo::new();
    repo.commit_file("base.txt", "base\n", "base");
    for name in [
        "a\"quote.txt",
        "tab\there.txt",
        "new\nline.txt",
        "日本語.txt",
        "sp ace.txt",
        "back\\slash.txt",
    ] {
        repo.write(name, "x\n");
    }
    repo.stage(&["日本語.txt", "a\"quote.txt"]);
    let (_, raw) = expected(&repo, ".");
    // Even with core.quotePath=false, git 2.47 quotes names with `"`, control
    // characters, backslashes or spaces; non-ASCII stays verbatim.
    assert!(raw.contains("A  \"a\\\"quote.txt\"\n"), "{raw}");
    assert!(raw.contains("?? \"tab\\there.txt\"\n"), "{raw}");
    assert!(raw.contains("?? \"new\\nline.txt\"\n"), "{raw}");
    assert!(raw.contains("?? \"back\\\\slash.txt\"\n"), "{raw}");
    assert!(raw.contains("A  日本語.txt\n"), "{raw}");
    let env = status(repo.path(), json!({}));
    assert_eq!(data(&env)["raw"], raw.as_str());
}

#[test]
fn paths_leaving_the_workspace_are_invalid() {
    let repo = busy_repo();
    let outside = tempfile::tempdir().unwrap();
    symlink(outside.path(), &repo.join("src/out"));
    symlink(&repo.join(".git"), &repo.join("gitlink"));
    symlink(&repo.join("src/tools"), &repo.join("tools-link"));
    let absolute = repo.join("src").to_str().unwrap().to_owned();
    assert_cwds_fail(
        &repo,
        &[
            absolute.as_str(),
            "/",
            "\\src",
            "C:\\work",
            "C:/work",
            "C:work",
            "\\\\server\\share",
            "//server/share",
            "..",
            "../..",
            "src/../..",
            "src\\..\\..\\x",
            "src/out",
            "src/out/deeper",
            ".git",
            "src/../.git",
            "gitlink",
        ],
        "INVALID_ARGUMENT",
    );
    // A symlink that stays inside the workspace is fine.
    let env = status(repo.path(), json!({"cwd": "tools-link"}));
    assert_eq!(data(&env)["branch"], "main");
}

#[test]
fn empty_and_non_string_cwd_are_invalid() {
    let repo = busy_repo();
    for args in [
        json!({"cwd": ""}),
        json!({"cwd": 1}),
        json!({"cwd": true}),
        json!({"cwd": ["src"]}),
        json!({"cwd": {"path": "src"}}),
        json!({"path": "src"}),
        json!("src"),
    ] {
        // Through the registry (schema check first) …
        let env = status(repo.path(), args.clone());
        assert_eq!(code(&env), "INVALID_ARGUMENT", "{args}");
        // … and called directly, without the registry's check.
        let direct = GIT_STATUS_SUMMARY
            .bind(repo.path().to_path_buf())
            .call(&args, &ToolLimits::default());
        assert_eq!(direct.unwrap_err().code, "INVALID_ARGUMENT", "{args}");
    }
}

#[test]
fn a_long_status_is_raw_exactly_and_only_the_byte_cap_cuts() {
    // Over 600 status lines: spec 002's raw is git's output unmodified, with
    // no line cap of the tool's own.
    let repo = TestRepo::new();
    repo.commit_file("base.txt", "base\n", "base");
    for i in 0..700 {
        repo.write(&format!("u{i:03}.txt"), "x\n");
    }
    let (_, raw) = expected(&repo, ".");
    assert_eq!(raw.lines().count(), 701);
    let env = status(repo.path(), json!({}));
    assert_eq!(data(&env)["raw"].as_str().unwrap(), raw);
    assert_eq!(env["truncated"], false, "{env}");
    // A small line cap changes nothing: raw is not cut by lines.
    let env = call_limited(repo.path(), NAME, json!({}), |l| l.max_lines = 10);
    assert_eq!(data(&env)["raw"].as_str().unwrap(), raw);
    assert_eq!(env["truncated"], false, "{env}");
    // The registry's generic byte cap decides what a model sees, and says so.
    let env = call_limited(repo.path(), NAME, json!({}), |l| l.max_bytes = 400);
    let shown = data(&env)["raw"].as_str().unwrap();
    let kept = shown
        .strip_suffix("\n[… cut: result exceeded the byte cap]")
        .unwrap();
    assert!(raw.starts_with(kept), "{shown:?}");
    assert_eq!(data(&env)["branch"], "main");
    assert_eq!(env["truncated"], true);
    assert_eq!(env["truncation"]["limit"], "bytes");
    assert!(env["data"].to_string().len() <= 400, "{env}");
}
