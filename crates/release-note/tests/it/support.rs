//! Helpers shared by the test modules.

/// Asserts that `text` contains every one of `needles`, showing `text` when one
/// is missing.
#[track_caller]
pub fn assert_contains_all(text: &str, needles: &[&str]) {
    for needle in needles {
        assert!(text.contains(needle), "{needle:?} missing in\n{text}");
    }
}
