//! Pinned prompts and tool definitions.

use std::sync::{Arc, Mutex};

use testkit::TestRepo;
use ultragit_annotate::prompt::{system_prompt, user_prompt};
use ultragit_annotate::tools::{Collected, Scope, registry};

use crate::support::{context, tagged_author};

#[test]
fn inferred_system_prompt() {
    insta::assert_snapshot!(system_prompt(None));
}

#[test]
fn enhanced_system_prompt() {
    let author = tagged_author(
        "PROJ-42 survive broker failovers",
        "The broker drops the first connection attempt after a failover.",
        "tools/probe.py assumes connect never sleeps",
    );
    insta::assert_snapshot!(system_prompt(Some(&author)));
}

#[test]
fn chunk_prompt() {
    insta::assert_snapshot!(user_prompt(Some((
        1,
        4,
        &["src/a.rs".to_owned(), "src/b.rs".to_owned()]
    ))));
}

#[test]
fn base_prompt_is_short() {
    // The spec wants the base template under ~500 tokens (bytes / 4).
    assert!(ultragit_annotate::prompt::BASE.len() / 4 < 500);
}

#[test]
fn tool_definitions() {
    let repo = TestRepo::new();
    repo.commit_file("a.rs", "fn a() {}\n", "a");
    let ctx = Arc::new(context(&repo, "HEAD", None));
    let tools = registry(
        ctx.clone(),
        Scope {
            files: ctx.paths(),
            summarize_diff: false,
            not_offered: Vec::new(),
        },
        Arc::new(Mutex::new(Collected::default())),
    );
    insta::assert_json_snapshot!(tools.definitions());
}
