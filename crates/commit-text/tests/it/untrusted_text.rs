//! Commit subjects and messages come from the repository's history: whatever
//! the bytes, the parsers never panic and what they produce stays
//! proportional to what they read.

use commit_text::{Conventional, Prefix, SubjectStyle, check, issue_references, pull_requests};
use proptest::prelude::*;

proptest! {
    #[test]
    fn commit_subjects_and_messages_never_panic(text in any::<String>()) {
        if let Some(header) = Conventional::parse(&text) {
            prop_assert!(header.description.len() <= text.len());
            prop_assert!(!header.kind.is_empty());
        }
        for numbers in [pull_requests(&text), issue_references(&text)] {
            prop_assert!(numbers.windows(2).all(|w| w[0] < w[1]));
            prop_assert!(numbers.len() <= text.len());
        }
        let prefix = Prefix::of(&text);
        prop_assert!(prefix.description(&text).len() <= text.len());
        let style = SubjectStyle::detect(&[text.as_str()]);
        prop_assert!(style.prefixes.iter().map(String::len).sum::<usize>() <= text.len() * 2);
        // The mood, prefix and style checks of a subject.
        let checks = commit_text::Checks { style: Some(style), ..Default::default() };
        let _ = check(&checks, &text);
    }

    #[test]
    fn conventional_shaped_subjects_never_panic(
        text in "(feat|fix|[a-z]{0,8})(\\([^)\n]{0,10}\\)?)?!?:? ?[^\n]{0,40}(\n[^\n]{0,20}){0,3}",
    ) {
        if let Some(header) = Conventional::parse(&text) {
            prop_assert!(header.description.len() <= text.len());
        }
    }
}

#[test]
fn long_commit_messages_stay_linear() {
    for text in [
        format!("feat({}): x", "(".repeat(1024 * 1024)),
        "(#1) ".repeat(200_000),
        format!("fix: {}", "#".repeat(1024 * 1024)),
        "Merge pull request #".repeat(50_000),
        format!("{}: x", "a,".repeat(500_000)),
        "Fixes: #".repeat(100_000),
    ] {
        let _ = Conventional::parse(&text);
        let _ = Prefix::of(&text);
        assert!(pull_requests(&text).len() <= 1);
        assert!(issue_references(&text).is_empty());
    }
}
