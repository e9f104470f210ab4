//! Outlines of the realistic fixtures, pinned: Rust and Python in the
//! workspace's `fixtures/outline/`, the other languages in this crate's
//! `tests/fixtures/`.

use std::path::PathBuf;

use crate::render;

fn fixture(name: &str) -> String {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let own = crate_dir.join("tests/fixtures").join(name);
    let path = if own.exists() {
        own
    } else {
        crate_dir.join("../../fixtures/outline").join(name)
    };
    std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("cannot read fixture {}: {error}", path.display()))
}

fn golden(name: &str) -> String {
    let units = outline::outline(name, &fixture(name)).expect("fixture has a grammar");
    render(&units)
}

#[test]
fn rust_sample() {
    insta::assert_snapshot!(golden("sample.rs"));
}

#[test]
fn python_sample() {
    insta::assert_snapshot!(golden("sample.py"));
}

#[test]
fn c_sample() {
    insta::assert_snapshot!(golden("diff.c"));
}

#[test]
fn cpp_sample() {
    insta::assert_snapshot!(golden("engine.cpp"));
}

#[test]
fn go_sample() {
    insta::assert_snapshot!(golden("store.go"));
}

#[test]
fn java_sample() {
    insta::assert_snapshot!(golden("LruCache.java"));
}

#[test]
fn javascript_sample() {
    insta::assert_snapshot!(golden("router.js"));
}

#[test]
fn typescript_sample() {
    insta::assert_snapshot!(golden("session.ts"));
}

#[test]
fn tsx_sample() {
    insta::assert_snapshot!(golden("Profile.tsx"));
}

/// Every fixture, one per language.
const FIXTURES: &[&str] = &[
    "sample.rs",
    "sample.py",
    "diff.c",
    "engine.cpp",
    "store.go",
    "LruCache.java",
    "router.js",
    "session.ts",
    "Profile.tsx",
];

/// CRLF line endings change nothing but the bytes.
#[test]
fn crlf_fixtures_give_the_same_outlines() {
    for name in FIXTURES.iter().copied() {
        let crlf = fixture(name).replace('\n', "\r\n");
        let units = outline::outline(name, &crlf).expect("fixture has a grammar");
        assert_eq!(render(&units), golden(name), "{name}");
    }
}
