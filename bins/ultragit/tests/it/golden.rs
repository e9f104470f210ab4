//! The rendered output of `ultragit read` on the annotated fixture, pinned with
//! insta. Commit hashes are deterministic (testkit pins dates and identities), so
//! no filters are needed.

use crate::support::{fixture, stdout};

#[test]
fn markdown_anchor() {
    let f = fixture();
    insta::assert_snapshot!(stdout(f.path(), &["read", "src/client.rs", "connect"]));
}

#[test]
fn markdown_whole_file() {
    let f = fixture();
    insta::assert_snapshot!(stdout(f.path(), &["read", "src/client.rs"]));
}

#[test]
fn json_anchor() {
    let f = fixture();
    insta::assert_snapshot!(stdout(
        f.path(),
        &["read", "src/client.rs", "connect", "--format", "json"]
    ));
}

#[test]
fn pretty_anchor() {
    let f = fixture();
    insta::assert_snapshot!(stdout(
        f.path(),
        &["read", "src/client.rs", "connect", "--format", "pretty"]
    ));
}

#[test]
fn verbose_markdown_anchor() {
    let f = fixture();
    insta::assert_snapshot!(stdout(
        f.path(),
        &["read", "src/client.rs", "connect", "--verbose"]
    ));
}

#[test]
fn markdown_trimmed_to_300_tokens() {
    let f = fixture();
    insta::assert_snapshot!(stdout(
        f.path(),
        &["read", "src/client.rs", "--max-tokens", "300"]
    ));
}

#[test]
fn markdown_multi_file() {
    let f = fixture();
    insta::assert_snapshot!(stdout(
        f.path(),
        &["read", "src/client.rs", "tools/probe.py"]
    ));
}
