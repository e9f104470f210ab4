//! Per-file and total byte budgets.

use guidance::{FamilyChoice, Guidance, Options};
use tempfile::TempDir;

use crate::{repo, resolve_with};

fn options(max_file_bytes: usize, max_total_bytes: usize) -> Options {
    Options {
        max_file_bytes,
        max_total_bytes,
    }
}

/// Resolves `targets` under `root` (family `auto`) within the two budgets.
fn within(
    root: &TempDir,
    targets: &[&str],
    max_file_bytes: usize,
    max_total_bytes: usize,
) -> Guidance {
    resolve_with(
        root.path(),
        targets,
        FamilyChoice::Auto,
        &options(max_file_bytes, max_total_bytes),
    )
}

#[test]
fn defaults() {
    assert_eq!(options(32 * 1024, 64 * 1024), Options::default());
}

#[test]
fn a_long_file_is_cut_and_marked() {
    let root = repo(&[
        ("AGENTS.md", "0123456789abcdef\n"),
        ("src/AGENTS.md", "short\n"),
    ]);
    let found = within(&root, &["src/x"], 10, 1000);
    let [first, second] = &found.sources[..] else {
        panic!("two sources: {:?}", found.sources)
    };
    assert_eq!(first.text, "0123456789");
    assert!(first.truncated);
    assert_eq!(first.file_len, 17);
    assert_eq!(second.text, "short\n");
    assert!(!second.truncated);
    assert_eq!(second.file_len, 6);
}

#[test]
fn a_file_exactly_at_the_limit_is_whole() {
    let root = repo(&[("AGENTS.md", "0123456789")]);
    let found = within(&root, &[], 10, 10);
    assert_eq!(found.sources[0].text, "0123456789");
    assert!(!found.sources[0].truncated);
}

#[test]
fn cuts_fall_on_character_boundaries() {
    // "aé€" is 1 + 2 + 3 bytes.
    let root = repo(&[("AGENTS.md", "aé€z")]);
    let cases = [
        (1, "a"),
        (2, "a"),
        (3, "aé"),
        (4, "aé"),
        (5, "aé"),
        (6, "aé€"),
    ];
    for (max, expected) in cases {
        let found = within(&root, &[], max, 100);
        assert_eq!(found.sources[0].text, expected, "max_file_bytes {max}");
        assert!(found.sources[0].truncated);
        let found = within(&root, &[], 100, max);
        assert_eq!(found.sources[0].text, expected, "max_total_bytes {max}");
        assert!(found.sources[0].truncated);
    }
}

#[test]
fn the_total_budget_cuts_then_empties_later_sources() {
    let root = repo(&[
        ("AGENTS.md", "aaaaaaaaaa"),
        ("x/AGENTS.md", "bbbbbbbbbb"),
        ("x/y/AGENTS.md", "cccccccccc"),
    ]);
    let found = within(&root, &["x/y/z"], 100, 15);
    let shown: Vec<(&str, &str, bool)> = found
        .sources
        .iter()
        .map(|s| (s.path.as_str(), s.text.as_str(), s.truncated))
        .collect();
    assert_eq!(
        shown,
        [
            ("AGENTS.md", "aaaaaaaaaa", false),
            ("x/AGENTS.md", "bbbbb", true),
            ("x/y/AGENTS.md", "", true),
        ]
    );
    // Every file found is still listed.
    assert_eq!(found.paths(), ["AGENTS.md", "x/AGENTS.md", "x/y/AGENTS.md"]);
}

#[test]
fn a_file_whose_shown_part_is_blank_does_not_count() {
    let root = repo(&[
        ("AGENTS.md", "     text after the limit\n"),
        ("CLAUDE.md", "claude\n"),
    ]);
    let found = within(&root, &[], 5, 100);
    assert_eq!(found.paths(), ["CLAUDE.md"]);
}

#[test]
fn zero_budgets() {
    let root = repo(&[("AGENTS.md", "rules\n")]);
    // Nothing can be shown of any file, so none counts.
    let found = within(&root, &[], 0, 100);
    assert!(found.is_empty());
    // The file counts, but nothing of it fits the total.
    let found = within(&root, &[], 100, 0);
    assert_eq!(found.paths(), ["AGENTS.md"]);
    assert_eq!(found.sources[0].text, "");
    assert!(found.sources[0].truncated);
}

#[test]
fn huge_budgets_do_not_overflow() {
    let root = repo(&[("AGENTS.md", "rules\n")]);
    let found = within(&root, &[], usize::MAX, usize::MAX);
    assert_eq!(found.sources[0].text, "rules\n");
}
