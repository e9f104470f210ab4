//! Each tool over a known context (spec 000 "Tool dispatch").

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use testkit::{TestRepo, assert_contains};
use ultragit_annotate::AuthorContext;
use ultragit_annotate::tools::{Collected, Scope, registry};

use crate::support::{CLIENT_V1, client_v2, connect_region, context, region};

fn setup(author: Option<AuthorContext>) -> (TestRepo, agent::ToolRegistry, Arc<Mutex<Collected>>) {
    let repo = TestRepo::new();
    repo.write("src/client.rs", CLIENT_V1)
        .write("config/app.toml", "[server]\nport = 1\n");
    let body: String = (1..=80).map(|i| format!("line {i}\n")).collect();
    repo.write("notes/long.txt", body);
    repo.commit_all("init");
    repo.write("src/client.rs", client_v2())
        .write("config/app.toml", "[server]\nport = 2\n");
    repo.commit_all("retry connect");
    let (tools, collector) = head_tools(&repo, author, false);
    (repo, tools, collector)
}

/// The tools over HEAD of `repo`, scoped to the files it changes, and what
/// they collect.
fn head_tools(
    repo: &TestRepo,
    author: Option<AuthorContext>,
    summarize_diff: bool,
) -> (agent::ToolRegistry, Arc<Mutex<Collected>>) {
    let ctx = Arc::new(context(repo, "HEAD", author));
    let collector = Arc::new(Mutex::new(Collected::default()));
    let scope = Scope {
        files: ctx.paths(),
        summarize_diff,
        not_offered: Vec::new(),
    };
    (registry(ctx, scope, collector.clone()), collector)
}

/// The error code `tool` answers `args` with.
fn error_code(tools: &agent::ToolRegistry, tool: &str, args: Value) -> Value {
    tools.dispatch(tool, &args).to_value()["error"]["code"].clone()
}

fn data(env: &agent::Envelope) -> Value {
    env.to_value()["data"].clone()
}

#[test]
fn get_diff_shows_files_with_line_numbers() {
    let (_repo, tools, _) = setup(None);
    let env = tools.dispatch("get_diff", &json!({}));
    let diff = data(&env)["diff"].as_str().unwrap().to_owned();
    assert_contains(&diff, "=== src/client.rs (modified, +6 -1) ===");
    assert!(diff.contains("   11 +        for _ in 0..3 {"), "{diff}");
    assert_contains(&diff, "      -        !self.host.is_empty()");
    assert!(diff.contains("=== config/app.toml (modified, +1 -1) ==="));
    let one = tools.dispatch("get_diff_for_file", &json!({"path": "config/app.toml"}));
    assert!(
        data(&one)["diff"]
            .as_str()
            .unwrap()
            .contains("    2 +port = 2")
    );
    let missing = error_code(&tools, "get_diff_for_file", json!({"path": "nope.rs"}));
    assert_eq!(missing, "NOT_IN_COMMIT");
}

#[test]
fn file_content_outline_and_surrounding_context() {
    let (_repo, tools, _) = setup(None);
    let content = data(&tools.dispatch("get_file_content", &json!({"path": "src/client.rs"})));
    assert!(
        content["content"]
            .as_str()
            .unwrap()
            .starts_with("1| pub struct Client {\n2|     host: String,\n")
    );
    // Not changed by the commit: read from git at the commit.
    let long = data(&tools.dispatch("get_file_content", &json!({"path": "notes/long.txt"})));
    assert_eq!(long["lines"], 80);
    let around = data(&tools.dispatch(
        "get_surrounding_context",
        &json!({"path": "notes/long.txt", "line": 50, "radius": 10}),
    ));
    assert_eq!(
        (around["from"].as_u64(), around["to"].as_u64()),
        (Some(40), Some(60))
    );
    let text = around["content"].as_str().unwrap();
    assert!(text.starts_with("40| line 40\n") && text.ends_with("60| line 60\n"));
    let default = data(&tools.dispatch(
        "get_surrounding_context",
        &json!({"path": "notes/long.txt", "line": 5}),
    ));
    assert_eq!(
        (default["from"].as_u64(), default["to"].as_u64()),
        (Some(1), Some(25))
    );
    let past = error_code(
        &tools,
        "get_surrounding_context",
        json!({"path": "notes/long.txt", "line": 500}),
    );
    assert_eq!(past, "INVALID_ARGUMENT");
    let outline = data(&tools.dispatch("get_ast_outline", &json!({"path": "src/client.rs"})));
    let names: Vec<&str> = outline["outline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u.as_str().unwrap().split(' ').nth(2).unwrap())
        .collect();
    assert_eq!(
        names,
        ["Client", "Client", "Client::new", "Client::connect"]
    );
    assert_eq!(
        outline["outline"][3],
        "L10-17 method Client::connect | pub fn connect(&self) -> bool"
    );
    let toml = data(&tools.dispatch("get_ast_outline", &json!({"path": "config/app.toml"})));
    assert!(toml["outline"].is_null());
    assert!(toml["message"].as_str().unwrap().contains("line ranges"));
    let gone = error_code(&tools, "get_file_content", json!({"path": "missing.rs"}));
    assert_eq!(gone, "NOT_FOUND");
}

#[test]
fn commit_info_includes_author_context_only_when_present() {
    let (_repo, tools, _) = setup(None);
    let info = data(&tools.dispatch("get_commit_info", &json!({})))["info"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(info.contains("Message:\nretry connect"), "{info}");
    assert!(!info.contains("Author-provided context"));
    let author = AuthorContext {
        task: Some("PROJ-7 make connect survive failovers".into()),
        reasoning: Some("broker drops first attempt".into()),
        tags: Some(vec!["mqtt".into()]),
        ..AuthorContext::default()
    };
    let (_repo, tools, _) = setup(Some(author));
    let info = data(&tools.dispatch("get_commit_info", &json!({})))["info"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(info.contains("Author-provided context:\n  Task: PROJ-7 make connect survive failovers\n  Reasoning: broker drops first attempt\n  Tags: mqtt\n"), "{info}");
}

#[test]
fn recent_annotations_without_history_say_so() {
    let (_repo, tools, _) = setup(None);
    let none = data(&tools.dispatch(
        "get_recent_annotations",
        &json!({"file": "src/client.rs", "n": 3}),
    ));
    assert_eq!(none["annotations"], json!([]));
    assert!(
        none["note"]
            .as_str()
            .unwrap()
            .contains("No recent annotations")
    );
}

#[test]
fn emit_annotation_stores_valid_regions_and_refuses_invalid_ones() {
    let (_repo, tools, collector) = setup(None);
    let ok = tools.dispatch("emit_annotation", &connect_region("retries"));
    assert_eq!(
        data(&ok)["message"],
        "Annotation emitted for src/client.rs:Client::connect"
    );
    for (bad, fragment) in [
        (connect_region("  "), "intent"),
        (
            region("src/other.rs", "method", "x", (1, 2), "elsewhere"),
            "src/other.rs",
        ),
        (
            region(
                "src/client.rs",
                "method",
                "Client::connect",
                (10, 400),
                "too long",
            ),
            "past the end",
        ),
        (
            region("../etc/passwd", "config", "x", (1, 1), "escape"),
            "passwd",
        ),
    ] {
        let env = tools.dispatch("emit_annotation", &bad).to_value();
        assert_eq!(env["error"]["code"], "INVALID_ANNOTATION", "{bad}");
        assert!(
            env["error"]["message"].as_str().unwrap().contains(fragment),
            "{env}"
        );
    }
    let schema_break = tools.dispatch("emit_annotation", &json!({"file": "src/client.rs", "ast_anchor": {"type": "function"}, "lines": {"start": 1, "end": 1}, "intent": "x"})).to_value();
    assert_eq!(
        schema_break["error"]["code"], "INVALID_ARGUMENT",
        "schema checked before the tool runs"
    );
    let cross = tools.dispatch("emit_cross_cutting", &json!({"description": "keep in sync", "regions": ["src/client.rs:Client::connect", "config/app.toml:server"], "nature": "config"}));
    assert!(cross.ok());
    let lonely = tools
        .dispatch(
            "emit_cross_cutting",
            &json!({"description": "x", "regions": ["a:b"], "nature": "y"}),
        )
        .to_value();
    assert_eq!(lonely["error"]["code"], "INVALID_ANNOTATION");
    let collected = collector.lock().unwrap();
    assert_eq!(collected.regions.len(), 1);
    assert_eq!(collected.cross_cutting.len(), 1);
    assert_eq!(collected.rejected, 5);
}

#[test]
fn oversized_diffs_are_summarized() {
    let repo = TestRepo::new();
    repo.commit_file("a.txt", "x\n", "init");
    for i in 0..3 {
        repo.write(
            &format!("src/f{i}.rs"),
            (0..(i + 1) * 10)
                .map(|n| format!("// {n}\n"))
                .collect::<String>(),
        );
    }
    repo.commit_all("three files");
    let (tools, _) = head_tools(&repo, None, true);
    let summary = data(&tools.dispatch("get_diff", &json!({})))["summary"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        summary,
        "This commit modifies 3 files with 60 lines changed.\nTop files by change size:\n  src/f2.rs: +30 -0\n  src/f1.rs: +20 -0\n  src/f0.rs: +10 -0\n\nUse get_file_content(path) to examine specific files,\nor get_diff_for_file(path) to see the diff for a single file.\n"
    );
}

#[test]
fn search_code_greps_the_commit_tree_with_paths_and_line_numbers() {
    let (repo, tools, _) = setup(None);
    // Files changed after the commit are not seen: the search is at the commit.
    repo.write("src/client.rs", "fn later() {}\n");
    let found = data(&tools.dispatch("search_code", &json!({"pattern": "for _ in 0..3"})));
    assert_eq!(
        found["matches"],
        "src/client.rs:11:        for _ in 0..3 {\n"
    );
    assert_eq!(found["count"], 1);
    let scoped =
        data(&tools.dispatch("search_code", &json!({"pattern": "port", "path": "config"})));
    assert_eq!(scoped["matches"], "config/app.toml:2:port = 2\n");
    let regex = data(&tools.dispatch(
        "search_code",
        &json!({"pattern": "^line [0-9]$", "regex": true, "max_results": 3}),
    ));
    let env = tools.dispatch(
        "search_code",
        &json!({"pattern": "^line [0-9]$", "regex": true, "max_results": 3}),
    );
    assert_eq!(
        regex["matches"],
        "notes/long.txt:1:line 1\nnotes/long.txt:2:line 2\nnotes/long.txt:3:line 3\n"
    );
    assert_eq!(env.to_value()["truncation"]["limit"], "entries");
    let none = data(&tools.dispatch("search_code", &json!({"pattern": "no such text"})));
    assert_eq!(none["matches"], "");
    assert_contains(none["note"].as_str().unwrap(), "no line matches");
    // Fixed strings by default: a regex metacharacter is literal.
    let literal = data(&tools.dispatch("search_code", &json!({"pattern": "0..3 {"})));
    assert_eq!(literal["count"], 1);
    for bad in [
        json!({"pattern": ""}),
        json!({"pattern": "x", "path": "../etc"}),
        json!({"pattern": "x\ny"}),
    ] {
        assert_eq!(
            error_code(&tools, "search_code", bad.clone()),
            "INVALID_ARGUMENT",
            "{bad}"
        );
    }
}

#[test]
fn search_code_reads_a_bounded_amount_of_git_grep_output() {
    let repo = TestRepo::new();
    // One minified line of 600 KB that matches, before a file that matches too:
    // git grep prints the whole line, more than search_code reads.
    let minified: String = (0..40_000).map(|i| format!("var a{i}=needle;")).collect();
    repo.write("a.min.js", format!("{minified}\n"))
        .write("b.rs", "let needle = 1;\n");
    repo.commit_all("minified");
    let (tools, _) = head_tools(&repo, None, false);
    let env = tools
        .dispatch("search_code", &json!({"pattern": "needle"}))
        .to_value();
    assert_eq!(env["ok"], true, "{env}");
    assert!(
        env.to_string().len() < 4_096,
        "{} bytes",
        env.to_string().len()
    );
    assert_eq!(env["data"]["matches"], "", "the cut line is not shown");
    assert_eq!(env["truncation"]["limit"], "entries", "{env}");
    assert_contains(
        env["truncation"]["hint"].as_str().unwrap(),
        "more lines match; narrow the search with path",
    );
    // Narrowed, the other file's line comes back.
    let narrowed =
        data(&tools.dispatch("search_code", &json!({"pattern": "needle", "path": "b.rs"})));
    assert_eq!(narrowed["matches"], "b.rs:1:let needle = 1;\n");
}

#[test]
fn commit_info_describes_ancestors_and_refuses_other_commits() {
    let (repo, tools, _) = setup(None);
    let first = repo.rev_parse("HEAD~1");
    let info = data(&tools.dispatch("get_commit_info", &json!({"commit": &first[..10]})));
    let text = info["info"].as_str().unwrap();
    assert_contains(text, &format!("Commit: {first}"));
    assert_contains(text, "Message:\ninit");
    assert_contains(text, "  src/client.rs (+13 -0)");
    assert_eq!(info["commit"], first.as_str());
    // A commit made after the annotated one is not its ancestor.
    repo.commit_file("later.txt", "x\n", "later");
    let later = repo.rev_parse("HEAD");
    let refused = tools
        .dispatch("get_commit_info", &json!({"commit": later}))
        .to_value();
    assert_eq!(refused["error"]["code"], "NOT_REACHABLE");
    assert_contains(
        refused["error"]["message"].as_str().unwrap(),
        "is not reachable from the annotated commit",
    );
    assert_eq!(
        error_code(&tools, "get_commit_info", json!({"commit": "nope-nope"})),
        "NOT_FOUND"
    );
    assert_eq!(
        error_code(&tools, "get_commit_info", json!({"commit": "--all"})),
        "INVALID_ARGUMENT"
    );
}

#[test]
fn emit_annotation_checks_the_anchor_against_the_outline() {
    let (_repo, tools, collector) = setup(None);
    let refused = |args: Value| -> String {
        let env = tools.dispatch("emit_annotation", &args).to_value();
        assert_eq!(env["error"]["code"], "ANCHOR_MISMATCH", "{env}");
        env["error"]["message"].as_str().unwrap().to_owned()
    };
    // A name no unit has: the units at those lines are listed.
    let message = refused(region(
        "src/client.rs",
        "method",
        "Client::reconnect_with_backoff",
        (10, 17),
        "x",
    ));
    assert_contains(
        &message,
        "'Client::reconnect_with_backoff' is not a unit of src/client.rs",
    );
    assert_contains(&message, "L10-17 method Client::connect");
    // The right name with the wrong kind, and with lines elsewhere.
    assert_contains(
        &refused(region(
            "src/client.rs",
            "struct",
            "Client::connect",
            (10, 17),
            "x",
        )),
        "is a method, not a struct",
    );
    assert_contains(
        &refused(region(
            "src/client.rs",
            "method",
            "Client::connect",
            (1, 3),
            "x",
        )),
        "'Client::connect' is at lines 10-17 of src/client.rs, which do not overlap lines 1-3",
    );
    // No grammar: the name must be text of those lines.
    assert_contains(
        &refused(region("config/app.toml", "config", "database", (1, 2), "x")),
        "'database' does not occur in lines 1-2 of config/app.toml",
    );
    // Unqualified names and text anchors that occur are accepted.
    for ok in [
        region("src/client.rs", "method", "connect", (10, 17), "x"),
        region("config/app.toml", "config", "server", (1, 2), "x"),
        region("config/app.toml", "config", "server.port", (1, 2), "x"),
    ] {
        assert!(tools.dispatch("emit_annotation", &ok).ok(), "{ok}");
    }
    assert_eq!(collector.lock().unwrap().rejected, 4);
}

/// A realistic file per language (the outline crate's snapshot fixtures),
/// the qualified name of one unit in the language's own style, its kind and
/// lines.
struct LanguageCase {
    path: &'static str,
    text: String,
    name: &'static str,
    kind: &'static str,
    lines: (u32, u32),
}

fn outline_fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../outline/tests/fixtures")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn language_cases() -> Vec<LanguageCase> {
    let case = |path, fixture: &str, name, kind, lines| LanguageCase {
        path,
        text: outline_fixture(fixture),
        name,
        kind,
        lines,
    };
    vec![
        case("diff.c", "diff.c", "builtin_diff", "function", (119, 141)),
        case("src/engine.cpp", "engine.cpp", "render::Scene::add_layer", "method", (62, 69)),
        case("store/store.go", "store.go", "store.Store.Get", "method", (48, 57)),
        case("web/router.js", "router.js", "Router.add", "method", (13, 17)),
        case("src/session.ts", "session.ts", "Session.refresh", "method", (49, 55)),
        case("src/Profile.tsx", "Profile.tsx", "ProfileCard.render", "method", (30, 32)),
        case(
            "src/org/example/LruCache.java",
            "LruCache.java",
            "LruCache.put",
            "method",
            (34, 43),
        ),
        LanguageCase {
            path: "tools/probe.py",
            text: "class Probe:\n    def __init__(self, host):\n        self.host = host\n\n    def ping(self):\n        return bool(self.host)\n".to_owned(),
            name: "Probe.ping",
            kind: "method",
            lines: (5, 6),
        },
        LanguageCase {
            path: "src/client.rs",
            text: client_v2(),
            name: "Client::connect",
            kind: "method",
            lines: (10, 17),
        },
    ]
}

#[test]
fn anchors_are_checked_in_every_language_the_outline_knows() {
    let repo = TestRepo::new();
    repo.commit_file("README.md", "languages\n", "init");
    let cases = language_cases();
    for case in &cases {
        repo.write(case.path, &case.text);
    }
    repo.commit_all("one file per language");
    let (tools, _) = head_tools(&repo, None, false);
    for case in &cases {
        let emit = |name: &str, kind: &str, lines: (u32, u32)| {
            tools
                .dispatch(
                    "emit_annotation",
                    &region(case.path, kind, name, lines, "why it changed"),
                )
                .to_value()
        };
        let right = emit(case.name, case.kind, case.lines);
        assert_eq!(right["ok"], true, "{}: {right}", case.path);
        // Refused as an anchor mismatch; the error message.
        let mismatch = |name: &str, kind: &str, lines: (u32, u32)| {
            let env = emit(name, kind, lines);
            assert_eq!(
                env["error"]["code"], "ANCHOR_MISMATCH",
                "{}: {env}",
                case.path
            );
            env["error"]["message"].as_str().unwrap().to_owned()
        };
        // A name the file does not define is refused, naming the unit there.
        assert_contains(
            &mismatch("r2990_trip_over_trailing_dot", case.kind, case.lines),
            &format!(
                "L{}-{} {} {}",
                case.lines.0, case.lines.1, case.kind, case.name
            ),
        );
        // The right name at lines it does not cover is refused.
        assert_contains(
            &mismatch(case.name, case.kind, (1, 1)),
            "which do not overlap lines 1-1",
        );
        // A method is not a struct.
        mismatch(case.name, "struct", case.lines);
    }
}
