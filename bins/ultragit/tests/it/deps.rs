//! `ultragit deps`: the annotated regions depending on a unit, from the reverse
//! dependency index, in every format; errors as `read` reports them.

use serde_json::{Value, json};

use crate::support::{annotate, fixture, note, stdout, ultragit};

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

fn dependents(out: &Value) -> Vec<(String, String, String)> {
    out["dependents"]
        .as_array()
        .expect("dependents is an array")
        .iter()
        .map(|d| {
            (
                d["file"].as_str().unwrap().to_owned(),
                d["anchor"].as_str().unwrap().to_owned(),
                d["commit"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn json_lists_the_regions_depending_on_the_unit() {
    let f = fixture();
    let out = parse(&stdout(
        f.path(),
        &["deps", "src/client.rs", "connect", "--format", "json"],
    ));
    assert_eq!(out["$schema"], "ultragit-deps/v1");
    assert_eq!(
        out["query"],
        json!({"file": "src/client.rs", "anchor": "connect"})
    );
    assert_eq!(out["units"], json!(["Client::connect"]));
    assert_eq!(
        dependents(&out),
        [("tools/probe.py".into(), "retry".into(), f.c2.clone())]
    );
    let d = &out["dependents"][0];
    assert_eq!(
        d["nature"],
        "treats a false return as retryable, so connect must not block"
    );
    assert_eq!(
        d["intent"],
        "Calls connect until it succeeds or the attempts run out."
    );
    assert_eq!(d["target_anchor"], "Client::connect");
    assert_eq!(d["declarations"], 1);
    assert!(d["commit_date"].as_str().unwrap().starts_with("20"));
    assert_eq!(out["stats"]["annotated_commits"], 4);

    // The other direction: connect (c3) depends on the probe's backoff.
    let out = parse(&stdout(
        f.path(),
        &[
            "deps",
            "tools/probe.py",
            "backoff_delay",
            "--format",
            "json",
        ],
    ));
    assert_eq!(
        dependents(&out),
        [(
            "src/client.rs".into(),
            "Client::connect".into(),
            f.c3.clone()
        )]
    );
    let none = parse(&stdout(
        f.path(),
        &["deps", "src/client.rs", "send", "--format", "json"],
    ));
    assert_eq!(none["dependents"], json!([]));
}

#[test]
fn markdown_and_pretty_show_the_same_answer() {
    let f = fixture();
    let md = stdout(f.path(), &["deps", "src/client.rs", "Client::connect"]);
    assert!(
        md.starts_with("# Dependencies on src/client.rs — Client::connect\n"),
        "{md}"
    );
    assert!(md.contains("## tools/probe.py — retry\n"), "{md}");
    assert!(md.contains(&format!("{} · 2024-01-01", &f.c2[..7])), "{md}");
    assert!(
        md.contains("1 annotated region depends on it (4 annotated commits indexed)."),
        "{md}"
    );
    assert!(
        md.contains("**Nature:** treats a false return as retryable"),
        "{md}"
    );
    assert!(md.contains("**Depends on:** `Client::connect`"), "{md}");
    let pretty = stdout(
        f.path(),
        &["deps", "src/client.rs", "connect", "--format", "pretty"],
    );
    assert!(
        pretty.starts_with("Dependencies on src/client.rs connect: 1 region\n"),
        "{pretty}"
    );
    assert!(pretty.contains("  tools/probe.py retry  ("), "{pretty}");
}

#[test]
fn the_index_follows_new_notes_and_can_be_deleted() {
    let f = fixture();
    let args = ["deps", "src/client.rs", "connect", "--format", "json"];
    let first = parse(&stdout(f.path(), &args));
    assert_eq!(first["stats"]["index"], "cold");
    let index = f.path().join(".git/ultragit/cache/deps/index.json");
    assert!(index.is_file());
    assert_eq!(parse(&stdout(f.path(), &args))["stats"]["index"], "fresh");

    // A new annotated commit depending on connect, with text a terminal
    // would act on.
    let c5 = f
        .repo
        .commit_file("src/main.rs", "fn main() {}\n", "Add main");
    let mut n = note(
        &c5,
        "2024-01-02T00:00:00Z",
        "enhanced",
        "initial",
        "Adds main.",
        vec![json!({
            "file": "src/main.rs",
            "ast_anchor": {"type": "function", "name": "main"},
            "lines": {"start": 1, "end": 1},
            "intent": "Connects \u{1b}[31mfirst",
            "constraints": [],
            "semantic_dependencies": [{"file": "src/client.rs", "anchor": "connect", "nature": "exits when connect fails"}]
        })],
        vec![],
    );
    n["task"] = json!(null);
    annotate(&f.repo, &n);
    let second = parse(&stdout(f.path(), &args));
    assert_eq!(second["stats"]["index"], "incremental");
    assert_eq!(
        dependents(&second),
        [
            ("src/main.rs".into(), "main".into(), c5.clone()),
            ("tools/probe.py".into(), "retry".into(), f.c2.clone()),
        ],
        "newest first"
    );
    assert_eq!(
        second["dependents"][0]["intent"],
        "Connects \u{1b}[31mfirst"
    );
    let md = stdout(f.path(), &["deps", "src/client.rs", "connect"]);
    assert!(!md.contains('\u{1b}'), "escaped in markdown: {md}");

    std::fs::remove_file(&index).unwrap();
    let rebuilt = parse(&stdout(f.path(), &args));
    assert_eq!(rebuilt["stats"]["index"], "cold");
    assert_eq!(rebuilt["dependents"], second["dependents"]);
}

#[test]
fn errors_follow_the_format() {
    let f = fixture();
    let run = ultragit(f.path(), &["deps", "src/nope.rs", "connect"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.is_empty(), "{run:?}");
    assert!(
        run.stderr
            .contains("File not found: src/nope.rs. Does it exist at HEAD?"),
        "{run:?}"
    );
    let run = ultragit(
        f.path(),
        &["deps", "src/nope.rs", "connect", "--format", "json"],
    );
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.is_empty(), "{run:?}");
    let body = parse(&run.stdout);
    assert_eq!(body["$schema"], "ultragit-deps/v1");
    assert_eq!(body["error"]["code"], "file_not_found");

    // A unit that is gone is matched as given, with a warning.
    let run = ultragit(f.path(), &["deps", "src/client.rs", "disconnect"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.contains("no unit matches 'disconnect'"),
        "{run:?}"
    );

    let run = ultragit(f.path(), &["deps", "src/client.rs"]);
    assert_eq!(run.code, 2, "{run:?}");
    let help = stdout(f.path(), &["deps", "--help"]);
    assert!(help.contains("Exit status:"), "{help}");
}
