//! The rendered output of `ultragit read` on the annotated fixture, pinned with
//! insta. Commit hashes are deterministic (testkit pins dates and identities), so
//! no filters are needed.

use crate::support::{fixture, stdout};

/// `ultragit read args…` on a fresh fixture.
fn read(args: &[&str]) -> String {
    let mut all = vec!["read"];
    all.extend_from_slice(args);
    stdout(fixture().path(), &all)
}

#[test]
fn markdown_anchor() {
    insta::assert_snapshot!(read(&["src/client.rs", "connect"]));
}

#[test]
fn markdown_whole_file() {
    insta::assert_snapshot!(read(&["src/client.rs"]));
}

#[test]
fn json_anchor() {
    insta::assert_snapshot!(read(&["src/client.rs", "connect", "--format", "json"]));
}

#[test]
fn pretty_anchor() {
    insta::assert_snapshot!(read(&["src/client.rs", "connect", "--format", "pretty"]));
}

#[test]
fn verbose_markdown_anchor() {
    insta::assert_snapshot!(read(&["src/client.rs", "connect", "--verbose"]));
}

#[test]
fn markdown_trimmed_to_300_tokens() {
    insta::assert_snapshot!(read(&["src/client.rs", "--max-tokens", "300"]));
}

#[test]
fn markdown_multi_file() {
    insta::assert_snapshot!(read(&["src/client.rs", "tools/probe.py"]));
}
