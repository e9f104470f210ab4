//! The gather phase and the triviality check.

use testkit::TestRepo;
use ultragit_annotate::tools::Scope;
use ultragit_annotate::{AnnotateConfig, AuthorContext, Trivial, triviality};
use ultragit_schema::ContextLevel;

use crate::support::{CLIENT_V1, client_v2, context};

#[test]
fn gathers_diffs_contents_outlines_and_commit_info() {
    let repo = TestRepo::new();
    repo.write("src/client.rs", CLIENT_V1)
        .write("README.md", "hello\n")
        .write("old.txt", "bye\n");
    repo.commit_all("init");
    repo.write("src/client.rs", client_v2())
        .write("logo.png", [0u8, 1, 2, 0])
        .remove("old.txt");
    repo.write("docs/notes.txt", "new file\n");
    let sha = repo.commit_all("connect retries\n\nThe broker drops first attempts.");
    let ctx = context(&repo, "HEAD", None);
    assert_eq!(ctx.commit.sha, sha);
    assert!(ctx.commit.message.starts_with("connect retries"));
    assert_eq!(ctx.commit.author, "Test Author <author@example.com>");
    assert_eq!(ctx.commit.parent_shas.len(), 1);
    let mut paths = ctx.paths();
    paths.sort();
    assert_eq!(paths, ["docs/notes.txt", "old.txt", "src/client.rs"]);
    assert_eq!(ctx.skipped, ["logo.png"], "binary files are not annotated");
    assert!(ctx.file_contents["src/client.rs"].contains("for _ in 0..3"));
    assert!(
        !ctx.file_contents.contains_key("old.txt"),
        "deleted: nothing at the commit"
    );
    assert!(ctx.file_contents.contains_key("docs/notes.txt"));
    let outline = &ctx.ast_outlines["src/client.rs"];
    assert!(
        outline
            .iter()
            .any(|u| u.qualified_name == "Client::connect")
    );
    assert!(
        !ctx.ast_outlines.contains_key("docs/notes.txt"),
        "no grammar for text"
    );
    assert_eq!(ctx.context_level(), ContextLevel::Inferred);
    assert!(ctx.recent_annotations.is_empty());
}

#[test]
fn author_context_makes_it_enhanced() {
    let repo = TestRepo::new();
    repo.commit_file("a.rs", "fn a() {}\n", "a");
    let author = AuthorContext {
        task: Some("PROJ-1 retries".into()),
        ..AuthorContext::default()
    };
    assert_eq!(
        context(&repo, "HEAD", Some(author)).context_level(),
        ContextLevel::Enhanced
    );
    assert_eq!(
        context(&repo, "HEAD", Some(AuthorContext::default())).context_level(),
        ContextLevel::Inferred,
        "an empty context says nothing"
    );
}

#[test]
fn recent_annotations_are_limited_per_file() {
    let repo = TestRepo::new();
    let mut shas = Vec::new();
    for i in 0..8 {
        let sha = repo.commit_file(
            "src/lib.rs",
            format!("pub fn f() -> u32 {{ {i} }}\n"),
            &format!("v{i}"),
        );
        let note = serde_json::json!({
            "$schema": "ultragit/v1", "commit": sha, "timestamp": "2024-01-01T00:00:00Z", "task": null,
            "summary": format!("v{i}"), "context_level": "inferred", "cross_cutting": [],
            "provenance": {"operation": "initial", "original_annotations_preserved": false},
            "regions": [{"file": "src/lib.rs", "ast_anchor": {"type": "function", "name": "f"}, "lines": {"start": 1, "end": 1}, "intent": format!("returns {i}")}]
        });
        if i != 6 {
            gitctx::Repo::discover(repo.path())
                .unwrap()
                .notes("refs/notes/ultragit")
                .unwrap()
                .write(sha.parse().unwrap(), &note.to_string())
                .unwrap();
        }
        shas.push(sha);
    }
    repo.commit_file("src/lib.rs", "pub fn f() -> u32 { 9 }\n", "v9");
    let ctx = context(&repo, "HEAD", None);
    let found: Vec<&str> = ctx
        .recent_annotations
        .iter()
        .map(|e| e.annotation.summary.as_str())
        .collect();
    assert_eq!(
        found,
        ["v7", "v5", "v4", "v3", "v2"],
        "newest first, unannotated v6 skipped, five per file"
    );
    // The spec's six read tools are always offered; our get_diff_for_file
    // is left out only when the first message holds the whole diff.
    let files = ctx.paths();
    assert!(Scope::lean(&ctx, &files, false).is_empty());
    assert_eq!(Scope::lean(&ctx, &files, true), ["get_diff_for_file"]);
    let none = context(&repo, "HEAD~8", None);
    assert!(none.recent_annotations.is_empty());
    assert!(
        Scope::lean(&none, &none.paths(), false).is_empty(),
        "get_recent_annotations is offered even with nothing to show"
    );
}

#[test]
fn trivial_commits_are_recognised() {
    let repo = TestRepo::new();
    repo.write("src/lib.rs", "fn a() {\n    let x = 1;\n}\n")
        .write("Cargo.lock", "v1\n")
        .write("img.bin", [0u8, 9]);
    repo.commit_all("init");
    let check = |expected: Option<Trivial>| {
        let ctx = context(&repo, "HEAD", None);
        assert_eq!(triviality(&ctx, &AnnotateConfig::default()), expected);
    };
    repo.commit("empty");
    check(Some(Trivial::NoChanges));
    repo.commit_file("Cargo.lock", "v2\n", "bump deps");
    check(Some(Trivial::LockfilesOnly));
    repo.commit_file(
        "src/lib.rs",
        "fn a() {\n        let x   = 1;\n\n}\n",
        "reindent",
    );
    check(Some(Trivial::WhitespaceOnly));
    repo.commit_file("img.bin", [0u8, 7], "new image");
    check(Some(Trivial::NothingToAnnotate));
    repo.write("src/lib.rs", "fn a() {\n    let x = 2;\n}\n")
        .write("Cargo.lock", "v3\n");
    repo.commit_all("real change with a lockfile");
    check(None);
    // A merge that brings nothing new relative to its first parent.
    repo.checkout_new("side");
    repo.commit("side empty");
    repo.checkout("main");
    repo.git(&["merge", "--quiet", "--no-ff", "-m", "merge", "side"]);
    check(Some(Trivial::MergeWithoutChanges));
    assert_eq!(Trivial::LockfilesOnly.to_string(), "only lockfiles changed");

    // Release notes and prose alone (git/git's Documentation/RelNotes/*),
    // with a lockfile or not, are documentation; a Makefile beside them is not.
    repo.write(
        "Documentation/RelNotes/2.48.0.adoc",
        "Git v2.48 Release Notes
",
    )
    .write(
        "Documentation/RelNotes/2.48.1",
        "Fixes since v2.48
",
    )
    .write(
        "CHANGELOG",
        "## 1.2
",
    );
    repo.commit_all("Start the 2.48 cycle");
    check(Some(Trivial::DocsOnly));
    repo.write(
        "README.md",
        "# Project
",
    )
    .write(
        "Cargo.lock",
        "v4
",
    );
    repo.commit_all("Describe the project");
    check(Some(Trivial::DocsOnly));
    repo.write(
        "Documentation/Makefile",
        "all:
\ttrue
",
    )
    .write(
        "Documentation/RelNotes/2.48.1",
        "More fixes
",
    );
    repo.commit_all("Build the docs");
    check(None);
    // The rules are configurable: none at all, or a team's own.
    repo.commit_file(
        "notes/plan.md",
        "# Plan
",
        "Plan",
    );
    let ctx = context(&repo, "HEAD", None);
    let none = AnnotateConfig {
        docs_paths: Vec::new(),
        ..AnnotateConfig::default()
    };
    assert_eq!(triviality(&ctx, &none), None);
    let own = AnnotateConfig {
        docs_paths: vec!["notes/**".to_owned()],
        ..AnnotateConfig::default()
    };
    assert_eq!(triviality(&ctx, &own), Some(Trivial::DocsOnly));
}
