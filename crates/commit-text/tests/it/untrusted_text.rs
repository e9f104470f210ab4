//! Commit subjects and messages come from the repository's history: whatever
//! the bytes, the parsers never panic and what they produce stays
//! proportional to what they read.

use commit_text::{Conventional, pull_requests};
use proptest::prelude::*;

proptest! {
    #[test]
    fn commit_subjects_and_messages_never_panic(text in any::<String>()) {
        if let Some(header) = Conventional::parse(&text) {
            prop_assert!(header.description.len() <= text.len());
            prop_assert!(!header.kind.is_empty());
        }
        let numbers = pull_requests(&text);
        prop_assert!(numbers.windows(2).all(|w| w[0] < w[1]));
        prop_assert!(numbers.len() <= text.len());
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
    ] {
        let _ = Conventional::parse(&text);
        assert!(pull_requests(&text).len() <= 1);
    }
}
