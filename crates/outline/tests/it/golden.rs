//! Outlines of the realistic fixtures in `fixtures/outline/`, pinned.

use std::path::PathBuf;

use crate::render;

fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/outline")
        .join(name);
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

/// CRLF line endings change nothing but the bytes.
#[test]
fn crlf_fixtures_give_the_same_outlines() {
    for name in ["sample.rs", "sample.py"] {
        let crlf = fixture(name).replace('\n', "\r\n");
        let units = outline::outline(name, &crlf).expect("fixture has a grammar");
        assert_eq!(render(&units), golden(name), "{name}");
    }
}
