//! Each commit-message tool through the registry, as the model calls it: strict
//! arguments, envelopes, bounds, and read-only behaviour.

use git_agent_core::context::Mode;
use git_agent_core::tools;
use serde_json::{Value, json};
use testkit::{TestRepo, assert_contains};

use crate::support::{project, strings};

/// The tools of one mode over a repository, called as the model calls them.
struct Tools(agent::ToolRegistry);

impl Tools {
    fn new(repo: &TestRepo, mode: Mode) -> Tools {
        Tools(tools::registry(repo.path(), mode))
    }

    /// Calls `name` with `args` and returns the envelope.
    fn call(&self, name: &str, args: Value) -> Value {
        self.0.dispatch(name, &args).to_value()
    }

    /// Calls `name` with `args`, which must succeed, and returns the data.
    #[track_caller]
    fn data(&self, name: &str, args: Value) -> Value {
        let envelope = self.call(name, args);
        assert_eq!(envelope["ok"], json!(true), "{envelope:#}");
        envelope["data"].clone()
    }
}

/// Asserts that `value` is a string containing `needle`.
#[track_caller]
fn assert_str_has(value: &Value, needle: &str) {
    assert_contains(value.as_str().unwrap(), needle);
}

/// `project()` with HEAD changing net.rs and a staged change to lib.rs plus a
/// lockfile; README has an unstaged edit and notes.txt is untracked.
fn amend_scene() -> TestRepo {
    let repo = project();
    repo.write(
        "Cargo.lock",
        "version = 3\n\n[[package]]\nname = \"serde\"\nversion = \"1.0.200\"\n",
    );
    repo.write("src/net.rs", "pub fn connect(_: &str) -> bool { true }\n");
    repo.commit_all("fix(net): accept every host");
    repo.write("src/lib.rs", "pub mod net;\n\n/// Adds two numbers.\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n")
        .write("Cargo.lock", "version = 3\n\n[[package]]\nname = \"serde\"\nversion = \"1.0.210\"\n")
        .stage(&["src/lib.rs", "Cargo.lock"]);
    repo.write("README.md", "unstaged\n");
    repo.write("notes.txt", "untracked\n");
    repo
}

#[test]
fn staged_paths_status_and_stat() {
    let repo = amend_scene();
    let staged = Tools::new(&repo, Mode::Staged);
    let data = staged.data("git_staged_paths", json!({}));
    assert_eq!(
        data,
        json!({"paths": [{"path": "Cargo.lock", "status": "M"}, {"path": "src/lib.rs", "status": "M"}], "count": 2})
    );
    let data = staged.data("git_staged_status", json!({}));
    assert_eq!(data["branch"], json!("main"));
    assert_eq!(data["untracked"], json!(1));
    let entries = &data["entries"];
    assert_eq!(strings(entries, "/xy"), ["M ", " M", "M "]);
    assert_eq!(
        strings(entries, "/path"),
        ["Cargo.lock", "README.md", "src/lib.rs"]
    );
    let data = staged.data("git_staged_stat", json!({}));
    assert_eq!(data["additions"], json!(2));
    assert_eq!(data["files"][0]["kind"], json!("lockfile (Cargo)"));
    // Arguments that are not in the schema are refused.
    let envelope = staged.call("git_staged_stat", json!({"all": true}));
    assert_eq!(envelope["ok"], json!(false));
}

#[test]
fn staged_diffs_summarize_lockfiles_unless_asked_by_path() {
    let repo = amend_scene();
    let staged = Tools::new(&repo, Mode::Staged);
    let data = staged.data("git_staged_diff", json!({}));
    let diff = data["diff"].as_str().unwrap();
    assert!(diff.contains("+/// Adds two numbers."), "{diff}");
    assert!(!diff.contains("Cargo.lock"), "{diff}");
    assert_str_has(&data["lockfile_summaries"][0], "serde 1.0.200 → 1.0.210");
    let data = staged.data(
        "git_staged_diff_for_paths",
        json!({"paths": ["Cargo.lock"], "context_lines": 0}),
    );
    assert_str_has(&data["diff"], "+version = \"1.0.210\"");
    assert_eq!(data["files"].as_array().unwrap().len(), 1);
    for bad in [json!({"paths": []}), json!({"paths": ["../x"]}), json!({})] {
        let envelope = staged.call("git_staged_diff_for_paths", bad.clone());
        assert_eq!(envelope["ok"], json!(false), "{bad}");
    }
}

#[test]
fn head_and_amend_views() {
    let repo = amend_scene();
    let staged = Tools::new(&repo, Mode::Staged);
    let amend = Tools::new(&repo, Mode::Amend);
    let data = amend.data("git_head_show", json!({}));
    assert_eq!(data["message"], json!("fix(net): accept every host\n"));
    assert_eq!(data["files"].as_array().unwrap().len(), 2);
    assert_eq!(data["parents"].as_array().unwrap().len(), 1);

    let data = amend.data("git_diff_against_parent", json!({"paths": ["src"]}));
    assert_str_has(&data["diff"], "+pub fn connect(_: &str) -> bool { true }");

    // Final = HEAD's change and the staged one, against HEAD's parent.
    let data = amend.data("git_final_amended_diff", json!({}));
    assert_eq!(
        strings(&data["files"], "/path"),
        ["Cargo.lock", "src/lib.rs", "src/net.rs"]
    );
    let data = amend.data("git_amend_delta", json!({"paths": ["src"]}));
    let diff = data["diff"].as_str().unwrap();
    assert!(
        diff.contains("src/lib.rs") && !diff.contains("src/net.rs"),
        "{diff}"
    );

    // Normal mode does not offer the amend tools.
    let envelope = staged.call("git_final_amended_diff", json!({}));
    assert_eq!(envelope["ok"], json!(false));
}

#[test]
fn recent_commits_and_files_at_revisions() {
    let repo = amend_scene();
    let staged = Tools::new(&repo, Mode::Staged);
    let data = staged.data("git_recent_commits", json!({"limit": 2}));
    assert_eq!(
        strings(&data["commits"], "/subject"),
        ["fix(net): accept every host", "docs: document add"]
    );
    assert_eq!(
        staged.call("git_recent_commits", json!({"limit": 500}))["ok"],
        json!(false)
    );

    let data = staged.data(
        "git_show_file_at_rev",
        json!({"rev": "HEAD~1", "path": "src/net.rs"}),
    );
    assert_eq!(
        data["content"],
        json!(
            "     1\tpub fn connect(host: &str) -> bool {\n     2\t    !host.is_empty()\n     3\t}\n"
        )
    );
    let data = staged.data(
        "git_show_file_at_rev",
        json!({"rev": "INDEX", "path": "src/lib.rs", "start_line": 3, "max_lines": 1}),
    );
    assert_eq!(data["content"], json!("     3\t/// Adds two numbers.\n"));
    let envelope = staged.call(
        "git_show_file_at_rev",
        json!({"rev": "INDEX", "path": "src/lib.rs", "start_line": 3, "max_lines": 1}),
    );
    assert_eq!(envelope["truncated"], json!(true));
    assert_str_has(&envelope["truncation"]["hint"], "start_line 4");
    for (args, code) in [
        (
            json!({"rev": "nope", "path": "src/lib.rs"}),
            "UNKNOWN_REVISION",
        ),
        (json!({"rev": "HEAD", "path": "missing.rs"}), "NOT_FOUND"),
        (
            json!({"rev": "--output=x", "path": "src/lib.rs"}),
            "INVALID_ARGUMENT",
        ),
        (
            json!({"rev": "HEAD", "path": "../../etc/passwd"}),
            "INVALID_ARGUMENT",
        ),
        (
            json!({"rev": "HEAD", "path": "src/lib.rs", "start_line": 99}),
            "INVALID_ARGUMENT",
        ),
    ] {
        let envelope = staged.call("git_show_file_at_rev", args.clone());
        assert_eq!(envelope["error"]["code"], json!(code), "{args}: {envelope}");
    }
}

#[test]
fn big_results_are_cut_with_a_hint() {
    let repo = project();
    let big: String = (0..3000).map(|i| format!("line number {i}\n")).collect();
    repo.write("big.txt", &big).stage(&["big.txt"]);
    let staged = Tools::new(&repo, Mode::Staged);
    let envelope = staged.call("git_staged_diff", json!({}));
    assert_eq!(envelope["truncated"], json!(true));
    let truncation = &envelope["truncation"];
    assert_eq!(truncation["limit"], json!("lines"));
    assert_str_has(&truncation["hint"], "git_staged_diff_for_paths");
    assert!(envelope.to_string().len() <= tools::LIMITS.max_bytes);
}

#[test]
fn the_tools_change_nothing() {
    let repo = amend_scene();
    let before = (
        repo.git(&["status", "--porcelain"]),
        std::fs::read(repo.join(".git/index")).unwrap(),
        repo.rev_parse("HEAD"),
    );
    let registry = tools::registry(repo.path(), Mode::Amend);
    for name in registry.names() {
        let args = match name {
            "git_staged_diff_for_paths" => json!({"paths": ["src"]}),
            "git_show_file_at_rev" => json!({"rev": "HEAD", "path": "src/lib.rs"}),
            "read_file" => json!({"path": "src/lib.rs"}),
            "search_files" => json!({"pattern": "add"}),
            _ => json!({}),
        };
        let envelope = registry.dispatch(name, &args).to_value();
        assert_eq!(envelope["ok"], json!(true), "{name}: {envelope}");
    }
    let after = (
        repo.git(&["status", "--porcelain"]),
        std::fs::read(repo.join(".git/index")).unwrap(),
        repo.rev_parse("HEAD"),
    );
    assert_eq!(before, after);
}
