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
