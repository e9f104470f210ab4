//! Stage 1: scope resolution, and its errors.

use testkit::TestRepo;
use ultragit_read::{ReadError, ReadPipeline, ReadQuery};

use crate::support::{commit_annotated, mqtt_v1_repo, one_annotated_file, pipeline, read, region};

fn scope_of(repo: &TestRepo, anchor: &str) -> Vec<(String, u32, u32, String, bool)> {
    let out = read(repo, &ReadQuery::file("src/mqtt.rs").with_anchor(anchor));
    out.query
        .scopes
        .iter()
        .map(|s| {
            let r = s.line_range.unwrap();
            (
                s.anchor_name.clone().unwrap(),
                r.start,
                r.end,
                s.anchor_type.clone().unwrap(),
                s.ambiguous,
            )
        })
        .collect()
}

#[test]
fn anchors_resolve_exactly_unqualified_and_to_every_kind() {
    let (repo, _) = mqtt_v1_repo();
    let check = |anchor: &str, expected: (&str, u32, u32, &str)| {
        let scopes = scope_of(&repo, anchor);
        assert_eq!(scopes.len(), 1, "{anchor}: {scopes:?}");
        let (name, start, end, kind, ambiguous) = &scopes[0];
        assert_eq!(
            (name.as_str(), *start, *end, kind.as_str()),
            expected,
            "{anchor}"
        );
        assert!(!ambiguous);
    };
    check(
        "MqttClient::connect",
        ("MqttClient::connect", 10, 12, "method"),
    );
    check("connect", ("MqttClient::connect", 10, 12, "method"));
    check("parse", ("parse", 15, 17, "function"));
    check("MqttClient", ("MqttClient", 1, 3, "struct"));
    check("impl MqttClient", ("MqttClient", 5, 13, "impl"));
    check("MqttClient.new", ("MqttClient::new", 6, 8, "method"));
}

#[test]
fn fuzzy_anchors_resolve_with_a_warning() {
    let (repo, _) = mqtt_v1_repo();
    let out = read(&repo, &ReadQuery::file("src/mqtt.rs").with_anchor("conect"));
    assert_eq!(
        out.query.scopes[0].anchor_name.as_deref(),
        Some("MqttClient::connect")
    );
    assert!(
        out.warnings
            .iter()
            .any(|w| w.contains("conect") && w.contains("MqttClient::connect")),
        "{:?}",
        out.warnings
    );
    assert_eq!(
        out.regions.len(),
        1,
        "the region of connect is found by the fuzzy query"
    );
}

#[test]
fn unknown_anchors_list_the_available_ones() {
    let (repo, _) = mqtt_v1_repo();
    let err = pipeline(&repo)
        .execute(&ReadQuery::file("src/mqtt.rs").with_anchor("disconnect_everything"))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Anchor 'disconnect_everything' not found in src/mqtt.rs. Available anchors: MqttClient, MqttClient::connect, MqttClient::new, parse"
    );
    let body = err.body();
    assert_eq!(body.error.code.as_str(), "anchor_not_found");
    assert_eq!(
        body.error.details.unwrap()["available_anchors"][1],
        "MqttClient::connect"
    );
}

#[test]
fn ambiguous_anchors_keep_every_match() {
    let repo = TestRepo::new();
    let text = "pub struct A;\npub struct B;\n\nimpl A {\n    pub fn run(&self) {}\n}\n\nimpl B {\n    pub fn run(&self) {}\n}\n";
    commit_annotated(
        &repo,
        "src/two.rs",
        text,
        "two runs",
        vec![
            region("src/two.rs", "method", "A::run", (5, 5), "runs A"),
            region("src/two.rs", "method", "B::run", (9, 9), "runs B"),
        ],
    );
    let out = read(&repo, &ReadQuery::file("src/two.rs").with_anchor("run"));
    assert!(out.query.ambiguous_anchor);
    let scopes: Vec<_> = out
        .query
        .scopes
        .iter()
        .map(|s| (s.anchor_name.clone().unwrap(), s.ambiguous))
        .collect();
    assert_eq!(
        scopes,
        [("A::run".to_owned(), true), ("B::run".to_owned(), true)]
    );
    let mut found = crate::support::names(&out);
    found.sort();
    assert_eq!(found, ["A::run", "B::run"]);
    assert_eq!(
        out.stats.commits_examined, 1,
        "one commit, blamed twice, counted once"
    );
}

#[test]
fn line_ranges_are_validated() {
    let (repo, _) = mqtt_v1_repo();
    let p = pipeline(&repo);
    let out = p
        .execute(&ReadQuery::file("src/mqtt.rs").with_lines(10, 12))
        .unwrap();
    assert_eq!(out.query.scopes[0].line_range.unwrap().start, 10);
    let err = p
        .execute(&ReadQuery::file("src/mqtt.rs").with_lines(1, 999))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Line range 1:999 exceeds file length (17 lines)"
    );
    assert_eq!(err.body().error.code.as_str(), "line_range_out_of_bounds");
    let err = p
        .execute(&ReadQuery::file("src/mqtt.rs").with_lines(12, 10))
        .unwrap_err();
    assert!(matches!(err, ReadError::InvalidLineRange { .. }), "{err}");
    let both = ReadQuery::file("src/mqtt.rs")
        .with_lines(1, 2)
        .with_anchor("parse");
    assert!(matches!(
        p.execute(&both),
        Err(ReadError::InvalidArgument(_))
    ));
    assert_eq!(
        ultragit_read::parse_lines("20:10").unwrap_err().to_string(),
        "Invalid line range 20:10: START is after END"
    );
}

#[test]
fn missing_files_are_reported_as_the_spec_says() {
    let (repo, _) = mqtt_v1_repo();
    repo.write("src/untracked.rs", "fn x() {}\n");
    for path in ["src/missing.rs", "src/untracked.rs", "src"] {
        let err = pipeline(&repo).execute(&ReadQuery::file(path)).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("File not found: {path}. Does it exist at HEAD?")
        );
        assert_eq!(
            err.body().to_json(),
            format!(
                "{{\"$schema\":\"ultragit-read/v1\",\"error\":{{\"code\":\"file_not_found\",\"message\":\"File not found: {path}. Does it exist at HEAD?\"}}}}"
            )
        );
    }
    let empty = TestRepo::new();
    let err = pipeline(&empty)
        .execute(&ReadQuery::file("a.rs"))
        .unwrap_err();
    assert!(
        matches!(err, ReadError::FileNotFound { .. }),
        "unborn HEAD: {err}"
    );
    let outside = tempfile_dir();
    assert!(matches!(
        ultragit_read::GitReadPipeline::open(outside.path()),
        Err(ReadError::NotARepository { .. })
    ));
}

fn tempfile_dir() -> TestDir {
    let path = std::env::temp_dir().join(format!("ultragit-read-outside-{}", std::process::id()));
    std::fs::create_dir_all(&path).unwrap();
    TestDir(path)
}

pub struct TestDir(std::path::PathBuf);

impl TestDir {
    fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn unsupported_languages_fall_back_to_line_ranges() {
    let repo = TestRepo::new();
    commit_annotated(
        &repo,
        "config/app.toml",
        "[server]\nport = 8080\nhost = \"x\"\n",
        "config",
        vec![region(
            "config/app.toml",
            "config",
            "server",
            (1, 3),
            "server settings",
        )],
    );
    let out = read(&repo, &ReadQuery::file("config/app.toml"));
    assert!(
        out.warnings.contains(
            &"No tree-sitter grammar for toml. Anchor resolution unavailable.".to_owned()
        )
    );
    assert_eq!(crate::support::names(&out), ["server"]);
    // An anchor cannot be resolved, but regions are still matched by name.
    let named = read(
        &repo,
        &ReadQuery::file("config/app.toml").with_anchor("server"),
    );
    assert_eq!(crate::support::names(&named), ["server"]);
    let lines = read(&repo, &ReadQuery::file("config/app.toml").with_lines(2, 2));
    assert_eq!(crate::support::names(&lines), ["server"]);
    assert_eq!(lines.regions[0].confidence_factors.anchor_stability, 0.4);
}

/// A test file whose tests a macro defines (`rgtest!(name, …)`): tree-sitter
/// sees the invocations, not units named after the tests.
const MACRO_TESTS: &str = "macro_rules! rgtest {\n    ($name:ident, $body:block) => {\n        #[test]\n        fn $name() $body\n    };\n}\n\nrgtest!(reads_stdin, {\n    assert!(true);\n});\n\nrgtest!(follows_symlinks, {\n    assert_eq!(1, 1);\n});\n\nfn reads_stdn() {}\n";

#[test]
fn anchors_only_the_notes_know_resolve_through_blame() {
    let (repo, c1) = one_annotated_file(
        "tests/misc.rs",
        MACRO_TESTS,
        vec![
            region("tests/misc.rs", "test", "reads_stdin", (8, 10), "stdin"),
            region(
                "tests/misc.rs",
                "test",
                "follows_symlinks",
                (12, 14),
                "links",
            ),
        ],
    );
    // An unannotated commit moves everything down two lines.
    repo.commit_file(
        "tests/misc.rs",
        format!("// Misc tests.\n\n{MACRO_TESTS}"),
        "header",
    );
    let out = read(
        &repo,
        &ReadQuery::file("tests/misc.rs").with_anchor("follows_symlinks"),
    );
    let scope = &out.query.scopes[0];
    assert_eq!(
        (
            scope.anchor_name.as_deref(),
            scope.line_range.map(|r| (r.start, r.end)),
            scope.resolved_by.as_deref(),
            scope.anchor_type.as_deref(),
        ),
        (
            Some("follows_symlinks"),
            Some((14, 16)),
            Some("notes"),
            Some("test")
        )
    );
    assert_eq!(
        crate::support::regions(&out),
        [(
            "tests/misc.rs".to_owned(),
            "follows_symlinks".to_owned(),
            14,
            16
        )]
    );
    assert_eq!(out.regions[0].commit_sha, c1);
    assert_eq!(
        out.regions[0].confidence_factors.anchor_stability, 0.4,
        "the outline cannot vouch for it"
    );
    let text = ultragit_read::format_markdown(&out, false);
    assert!(
        text.contains("`follows_symlinks` in tests/misc.rs: test, lines 14–16 (resolved through the annotations that name it"),
        "{text}"
    );
    // A note naming the anchor exactly beats a fuzzy outline match.
    let out = read(
        &repo,
        &ReadQuery::file("tests/misc.rs").with_anchor("reads_stdin"),
    );
    assert_eq!(crate::support::names(&out), ["reads_stdin"]);
    assert_eq!(
        out.query.scopes[0].line_range.map(|r| (r.start, r.end)),
        Some((10, 12))
    );
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    // An outline unit still resolves through the outline.
    let out = read(
        &repo,
        &ReadQuery::file("tests/misc.rs").with_anchor("rgtest"),
    );
    assert_eq!(out.query.scopes[0].resolved_by.as_deref(), Some("outline"));
    // An anchor neither knows is still an error.
    assert!(matches!(
        pipeline(&repo).execute(&ReadQuery::file("tests/misc.rs").with_anchor("nowhere_at_all")),
        Err(ReadError::AnchorNotFound { .. })
    ));
}

#[test]
fn files_without_a_grammar_resolve_anchors_through_the_notes() {
    let (repo, _) = one_annotated_file(
        "config/app.toml",
        "[client]\nretries = 3\n\n[server]\nport = 8080\nhost = \"x\"\n",
        vec![
            region("config/app.toml", "config", "client", (1, 2), "client"),
            region("config/app.toml", "config", "server", (4, 6), "server"),
        ],
    );
    let out = read(
        &repo,
        &ReadQuery::file("config/app.toml").with_anchor("server"),
    );
    let scope = &out.query.scopes[0];
    assert_eq!(scope.line_range.map(|r| (r.start, r.end)), Some((4, 6)));
    assert_eq!(scope.resolved_by.as_deref(), Some("notes"));
    assert_eq!(crate::support::names(&out), ["server"]);
}
