//! `git-agent` as a process: version, help, usage errors, generated completions
//! and the `tools` subcommands.

use serde_json::Value;
use testkit::TestRepo;

fn exe() -> &'static std::path::Path {
    std::path::Path::new(env!("CARGO_BIN_EXE_git-agent"))
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = testkit::cli::run(exe(), args);
    (out.code, out.stdout, out.stderr)
}

#[test]
fn version_help_usage_and_completions() {
    testkit::cli::assert_basics(exe(), "git-agent", env!("CARGO_PKG_VERSION"));
    let (code, _, stderr) = run(&[]);
    assert_eq!(code, 2, "no arguments prints usage and fails");
    assert!(stderr.contains("Usage: git-agent"), "{stderr}");
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|err| panic!("not JSON ({err}): {text}"))
}

#[test]
fn tools_list_prints_the_definitions() {
    let (code, out, _) = run(&["tools", "list"]);
    assert_eq!(code, 0);
    let definitions = json(&out);
    let names: Vec<&str> = definitions
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "git_status_summary",
            "repo_summary",
            "list_files",
            "read_file",
            "search_files"
        ]
    );
}

#[test]
fn tools_call_prints_the_envelope() {
    let repo = TestRepo::new();
    repo.commit_file("a.txt", "a\n", "first");
    repo.checkout_new("topic");
    repo.write("b.txt", "b\n");
    let workspace = repo.path().to_str().unwrap();

    let (code, out, _) = run(&[
        "tools",
        "call",
        "git_status_summary",
        "{}",
        "--workspace",
        workspace,
    ]);
    assert_eq!(code, 0, "{out}");
    let envelope = json(&out);
    assert_eq!(envelope["ok"], true);
    assert_eq!(envelope["tool"], "git_status_summary");
    assert_eq!(envelope["truncated"], false);
    assert_eq!(envelope["data"]["branch"], "topic");
    assert_eq!(envelope["data"]["raw"], "## topic\n?? b.txt\n");
    assert_eq!(envelope["data"]["repository_root"], workspace);

    let (code, out, _) = run(&[
        "tools",
        "call",
        "git_status_summary",
        r#"{"cwd": "missing"}"#,
        "--workspace",
        workspace,
    ]);
    assert_eq!(code, 1);
    let envelope = json(&out);
    assert_eq!(envelope["ok"], false);
    assert_eq!(envelope["error"]["code"], "NOT_DIRECTORY");

    let (code, out, _) = run(&[
        "tools",
        "call",
        "no_such_tool",
        "{}",
        "--workspace",
        workspace,
    ]);
    assert_eq!(code, 1);
    assert_eq!(json(&out)["error"]["code"], "UNKNOWN_TOOL");

    let (code, out, err) = run(&[
        "tools",
        "call",
        "read_file",
        "{not json",
        "--workspace",
        workspace,
    ]);
    assert_eq!(code, 2);
    assert_eq!(out, "");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: JSON-ARGS is not valid JSON"),
        "{err}"
    );
}
