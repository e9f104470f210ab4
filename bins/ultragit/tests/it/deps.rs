//! `ultragit deps`: the annotated regions depending on a unit, from the reverse
//! dependency index, in every format; errors as `read` reports them.

use serde_json::json;

use crate::support::{annotate_regions, fixture, json_error, json_stdout, stdout, texts, ultragit};
use testkit::assert_contains_all;

const CONNECT: [&str; 3] = ["deps", "src/client.rs", "connect"];

#[test]
fn json_lists_the_regions_depending_on_the_unit() {
    let f = fixture();
    let out = json_stdout(f.path(), &CONNECT);
    assert_eq!(out["$schema"], "ultragit-deps/v1");
    assert_eq!(
        out["query"],
        json!({"file": "src/client.rs", "anchor": "connect"})
    );
    assert_eq!(out["units"], json!(["Client::connect"]));
    assert_eq!(
        out["dependents"],
        json!([{
            "file": "tools/probe.py",
            "anchor": "retry",
            "nature": "treats a false return as retryable, so connect must not block",
            "target_anchor": "Client::connect",
            "commit": f.c2,
            "commit_date": "2024-01-01T00:01:00+00:00",
            "intent": "Calls connect until it succeeds or the attempts run out.",
            "declarations": 1
        }])
    );
    assert_eq!(out["stats"]["annotated_commits"], 4);

    // The other direction: connect (c3) depends on the probe's backoff.
    let out = json_stdout(f.path(), &["deps", "tools/probe.py", "backoff_delay"]);
    assert_eq!(texts(&out["dependents"], "/anchor"), ["Client::connect"]);
    assert_eq!(texts(&out["dependents"], "/commit"), [f.c3.as_str()]);
    let none = json_stdout(f.path(), &["deps", "src/client.rs", "send"]);
    assert_eq!(none["dependents"], json!([]));
}

#[test]
fn markdown_and_pretty_show_the_same_answer() {
    let f = fixture();
    let md = stdout(f.path(), &["deps", "src/client.rs", "Client::connect"]);
    assert_contains_all(
        &md,
        &[
            "# Dependencies on src/client.rs — Client::connect\n\n1 annotated region depends on it (4 annotated commits indexed).\n",
            "\n## tools/probe.py — retry\n",
            &format!("\n{} · 2024-01-01\n", &f.c2[..7]),
            "\n**Nature:** treats a false return as retryable",
            "\n**Depends on:** `Client::connect`\n",
        ],
    );
    let pretty = stdout(f.path(), &[&CONNECT[..], &["--format", "pretty"]].concat());
    assert!(
        pretty.starts_with(
            "Dependencies on src/client.rs connect: 1 region\n\n  tools/probe.py retry  ("
        ),
        "{pretty}"
    );
}

#[test]
fn the_index_follows_new_notes_and_can_be_deleted() {
    let f = fixture();
    assert_eq!(json_stdout(f.path(), &CONNECT)["stats"]["index"], "cold");
    let index = f.path().join(".git/ultragit/cache/deps/index.bin");
    assert!(index.is_file());
    assert_eq!(json_stdout(f.path(), &CONNECT)["stats"]["index"], "fresh");

    // A new annotated commit depending on connect, with text a terminal
    // would act on.
    let c5 = f
        .repo
        .commit_file("src/main.rs", "fn main() {}\n", "Add main");
    let main = json!({
        "file": "src/main.rs",
        "ast_anchor": {"type": "function", "name": "main"},
        "lines": {"start": 1, "end": 1},
        "intent": "Connects \u{1b}[31mfirst",
        "constraints": [],
        "semantic_dependencies": [{"file": "src/client.rs", "anchor": "connect", "nature": "exits when connect fails"}]
    });
    annotate_regions(&f.repo, &c5, "2024-01-02T00:00:00Z", vec![main]);
    let second = json_stdout(f.path(), &CONNECT);
    assert_eq!(second["stats"]["index"], "incremental");
    assert_eq!(
        texts(&second["dependents"], "/commit"),
        [c5.as_str(), f.c2.as_str()],
        "newest first"
    );
    assert_eq!(
        second["dependents"][0]["intent"],
        "Connects \u{1b}[31mfirst"
    );
    let md = stdout(f.path(), &CONNECT);
    assert!(!md.contains('\u{1b}'), "escaped in markdown: {md}");

    std::fs::remove_file(&index).unwrap();
    let rebuilt = json_stdout(f.path(), &CONNECT);
    assert_eq!(rebuilt["stats"]["index"], "cold");
    assert_eq!(rebuilt["dependents"], second["dependents"]);
}

#[test]
fn errors_follow_the_format() {
    let f = fixture();
    let run = ultragit(f.path(), &["deps", "src/nope.rs", "connect"]);
    assert_eq!((run.code, run.stdout.as_str()), (1, ""), "{run:?}");
    assert!(
        run.stderr
            .contains("File not found: src/nope.rs. Does it exist at HEAD?"),
        "{run:?}"
    );
    let body = json_error(f.path(), &["deps", "src/nope.rs", "connect"]);
    assert_eq!(body["$schema"], "ultragit-deps/v1");
    assert_eq!(body["error"]["code"], "file_not_found");

    // A unit that is gone is matched as given (never fuzzily), with a warning.
    let run = ultragit(f.path(), &["deps", "src/client.rs", "disconnect"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.contains("no unit matches 'disconnect'"),
        "{run:?}"
    );

    assert_eq!(ultragit(f.path(), &["deps", "src/client.rs"]).code, 2);
    let help = stdout(f.path(), &["deps", "--help"]);
    assert!(help.contains("Exit status:"), "{help}");
}

/// Annotates `commit` with one region: `name` in `file`, depending on
/// `target_file`'s `connect`.
fn annotate_caller(
    repo: &testkit::TestRepo,
    commit: &str,
    timestamp: &str,
    file: &str,
    name: &str,
    target_file: &str,
) {
    let region = json!({
        "file": file,
        "ast_anchor": {"type": "function", "name": name},
        "lines": {"start": 1, "end": 1},
        "intent": format!("{name} connects first."),
        "constraints": [],
        "semantic_dependencies": [{"file": target_file, "anchor": "connect", "nature": format!("{name} needs a connection")}]
    });
    annotate_regions(repo, commit, timestamp, vec![region]);
}

#[test]
fn dependencies_recorded_before_a_rename_are_found_under_the_new_name() {
    // Fixed: only the recorded path matched, so what depended on
    // `src/old.rs` was lost once the file became `src/net/client.rs`.
    let repo = testkit::TestRepo::new();
    let client = "pub fn connect() -> bool {\n    true\n}\n";
    repo.commit_file("src/old.rs", client, "Add the client");
    let c2 = repo.commit_file("src/early.rs", "pub fn early() {}\n", "Add early");
    annotate_caller(
        &repo,
        &c2,
        "2024-01-01T00:00:00Z",
        "src/early.rs",
        "early",
        "src/old.rs",
    );
    repo.rename("src/old.rs", "src/net/client.rs");
    repo.commit("Move the client");
    let c4 = repo.commit_file("src/late.rs", "pub fn late() {}\n", "Add late");
    annotate_caller(
        &repo,
        &c4,
        "2024-01-02T00:00:00Z",
        "src/late.rs",
        "late",
        "src/net/client.rs",
    );
    let query = ["deps", "src/net/client.rs", "connect"];
    let out = json_stdout(repo.path(), &query);
    assert_eq!(texts(&out["dependents"], "/anchor"), ["late", "early"]);
    assert_eq!(
        texts(&out["dependents"], "/commit"),
        [c4.as_str(), c2.as_str()]
    );
    assert_eq!(out["dependents"][0].get("former_path"), None);
    assert_eq!(out["dependents"][1]["former_path"], "src/old.rs");
    let md = stdout(repo.path(), &query);
    assert!(
        md.contains("**Depends on:** `connect` (as `src/old.rs`, before a rename)"),
        "{md}"
    );

    // A name another file has today is that file's: a new `src/old.rs` keeps
    // what is recorded under its name.
    repo.commit_file("src/old.rs", "pub fn connect() {}\n", "A new old.rs");
    let out = json_stdout(repo.path(), &query);
    assert_eq!(texts(&out["dependents"], "/anchor"), ["late"]);
    let out = json_stdout(repo.path(), &["deps", "src/old.rs", "connect"]);
    assert_eq!(texts(&out["dependents"], "/anchor"), ["early"]);
}
