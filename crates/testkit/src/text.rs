//! Assertions on text that show the text when they fail.
//!
//! `assert!(text.contains("x"), "{text}")` split by rustfmt over five lines, again
//! and again, is what these replace: each says what it looks for, and a
//! failure shows what was looked for and the text it was looked for in (its
//! first [`SHOWN`] bytes, so a huge text does not flood the test output). They
//! are `#[track_caller]`: a failure points at the test's line.

/// How much of the text a failed assertion shows, in bytes.
pub const SHOWN: usize = 4096;

/// Asserts that `text` contains `needle`.
#[track_caller]
pub fn assert_contains(text: &str, needle: &str) {
    if !text.contains(needle) {
        fail("to contain", needle, text);
    }
}

/// Asserts that `text` contains every one of `needles`.
#[track_caller]
pub fn assert_contains_all(text: &str, needles: &[&str]) {
    for needle in needles {
        assert_contains(text, needle);
    }
}

/// Asserts that `text` does not contain `needle`.
#[track_caller]
pub fn assert_lacks(text: &str, needle: &str) {
    if text.contains(needle) {
        fail("not to contain", needle, text);
    }
}

/// Asserts that `text` starts with `prefix`.
#[track_caller]
pub fn assert_starts_with(text: &str, prefix: &str) {
    if !text.starts_with(prefix) {
        fail("to start with", prefix, text);
    }
}

/// Asserts that `text` ends with `suffix`.
#[track_caller]
pub fn assert_ends_with(text: &str, suffix: &str) {
    if !text.ends_with(suffix) {
        fail("to end with", suffix, text);
    }
}

/// The first line of `text` that contains `needle`; fails, showing the text,
/// when none does.
#[track_caller]
pub fn line_containing<'a>(text: &'a str, needle: &str) -> &'a str {
    match text.lines().find(|line| line.contains(needle)) {
        Some(line) => line,
        None => fail("to have a line containing", needle, text),
    }
}

#[track_caller]
fn fail(expected: &str, needle: &str, text: &str) -> ! {
    let mut end = text.len().min(SHOWN);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let cut = if end < text.len() {
        format!("\n[… {} more bytes]", text.len() - end)
    } else {
        String::new()
    };
    panic!(
        "expected the text {expected} {needle:?}; the text:\n{}{cut}",
        &text[..end]
    );
}
