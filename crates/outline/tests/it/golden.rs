//! Outlines of the realistic fixtures, pinned: Rust and Python in the
//! workspace's `fixtures/outline/`, the other languages in this crate's
//! `tests/fixtures/`.

use crate::{fixture, render};

fn golden(name: &str) -> String {
    let units = outline::outline(name, &fixture(name)).expect("fixture has a grammar");
    render(&units)
}

/// Every fixture (one per language) and its snapshot's name.
#[rustfmt::skip]
const FIXTURES: &[(&str, &str)] = &[
    ("sample.rs", "rust_sample"), ("sample.py", "python_sample"), ("diff.c", "c_sample"),
    ("engine.cpp", "cpp_sample"), ("store.go", "go_sample"), ("LruCache.java", "java_sample"),
    ("router.js", "javascript_sample"), ("session.ts", "typescript_sample"), ("Profile.tsx", "tsx_sample"),
];

#[test]
fn samples() {
    for (name, snapshot) in FIXTURES.iter().copied() {
        insta::assert_snapshot!(snapshot, golden(name));
    }
}

/// CRLF line endings change nothing but the bytes.
#[test]
fn crlf_fixtures_give_the_same_outlines() {
    for (name, _) in FIXTURES.iter().copied() {
        let crlf = fixture(name).replace('\n', "\r\n");
        let units = outline::outline(name, &crlf).expect("fixture has a grammar");
        assert_eq!(render(&units), golden(name), "{name}");
    }
}
