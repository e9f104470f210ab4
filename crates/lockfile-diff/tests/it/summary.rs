//! Comparing both sides of a lockfile and rendering the result.

use lockfile_diff::{LockKind, LockSummary, summarize};

use crate::{CARGO_LOCK, NPM_V3, change};

// -- summarize -----------------------------------------------------------

#[test]
fn summarize_changed_added_removed() {
    let old = "[[package]]\nname = \"serde\"\nversion = \"1.0.200\"\n\n\
[[package]]\nname = \"syn\"\nversion = \"1.0.109\"\n\n\
[[package]]\nname = \"syn\"\nversion = \"2.0.60\"\n\n\
[[package]]\nname = \"Winapi\"\nversion = \"0.3.9\"\n\n\
[[package]]\nname = \"windows-sys\"\nversion = \"0.52.0\"\n\n\
[[package]]\nname = \"same\"\nversion = \"1.0.0\"\n";
    let new = "[[package]]\nname = \"serde\"\nversion = \"1.0.210\"\n\n\
[[package]]\nname = \"syn\"\nversion = \"2.0.66\"\n\n\
[[package]]\nname = \"memchr\"\nversion = \"2.7.4\"\n\n\
[[package]]\nname = \"windows-sys\"\nversion = \"0.52.0\"\n\n\
[[package]]\nname = \"windows-sys\"\nversion = \"0.59.0\"\n\n\
[[package]]\nname = \"same\"\nversion = \"1.0.0\"\n";
    let summary = summarize("Cargo.lock", LockKind::Cargo, Some(old), Some(new));
    assert_eq!(summary.path, "Cargo.lock");
    assert_eq!(summary.kind, LockKind::Cargo);
    assert_eq!(summary.unparsed, None);
    assert_eq!(
        summary.changed,
        [
            change("serde", &["1.0.200"], &["1.0.210"], &[]),
            change("syn", &["1.0.109", "2.0.60"], &["2.0.66"], &[]),
            change("windows-sys", &[], &["0.59.0"], &["0.52.0"]),
        ]
    );
    assert_eq!(summary.added, [change("memchr", &[], &["2.7.4"], &[])]);
    assert_eq!(summary.removed, [change("Winapi", &["0.3.9"], &[], &[])]);
    assert_eq!(summary.package_count(), 5);
    assert!(!summary.is_empty());
    assert_eq!(
        summary.render(10),
        "Cargo.lock (Cargo): 3 changed, 1 added, 1 removed\n  \
changed: serde 1.0.200 → 1.0.210; syn 1.0.109, 2.0.60 → 2.0.66; windows-sys 0.52.0 → 0.52.0, 0.59.0\n  \
added: memchr 2.7.4\n  \
removed: Winapi 0.3.9"
    );
}

#[test]
fn summarize_added_and_deleted_files() {
    let added = summarize("web/package-lock.json", LockKind::Npm, None, Some(NPM_V3));
    assert!(added.changed.is_empty() && added.removed.is_empty());
    let names: Vec<&str> = added.added.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["@babel/code-frame", "debug", "ms", "send"]);
    assert_eq!(
        added.added[1],
        change("debug", &[], &["2.6.9", "4.3.4"], &[])
    );

    let deleted = summarize("web/package-lock.json", LockKind::Npm, Some(NPM_V3), None);
    assert!(deleted.changed.is_empty() && deleted.added.is_empty());
    assert_eq!(deleted.removed.len(), 4);
    assert_eq!(
        deleted.render(2),
        "web/package-lock.json (npm): 4 removed\n  \
removed: @babel/code-frame 7.24.2; debug 2.6.9, 4.3.4; … and 2 more"
    );

    let neither = summarize("Cargo.lock", LockKind::Cargo, None, None);
    assert!(neither.is_empty());
}

#[test]
fn unchanged_lockfile_is_empty() {
    let summary = summarize(
        "Cargo.lock",
        LockKind::Cargo,
        Some(CARGO_LOCK),
        Some(CARGO_LOCK),
    );
    assert!(summary.is_empty());
    assert_eq!(summary.package_count(), 0);
    assert_eq!(
        summary.render(5),
        "Cargo.lock (Cargo): no package version changes"
    );
    // Reordering entries changes nothing either.
    let reordered = "[[package]]\nname = \"syn\"\nversion = \"2.0.60\"\n\
[[package]]\nname = \"syn\"\nversion = \"1.0.109\"\n\
[[package]]\nname = \"serde\"\nversion = \"1.0.200\"\n\
[[package]]\nname = \"myapp\"\nversion = \"0.1.0\"\n\
[[package]]\nname = \"memchr\"\nversion = \"2.7.4\"\n";
    assert!(
        summarize(
            "Cargo.lock",
            LockKind::Cargo,
            Some(CARGO_LOCK),
            Some(reordered)
        )
        .is_empty()
    );
}

#[test]
fn unparsable_side_is_reported_not_hidden() {
    let summary = summarize(
        "package-lock.json",
        LockKind::Npm,
        Some(NPM_V3),
        Some("{\"packages\": "),
    );
    assert!(!summary.is_empty());
    assert_eq!(summary.package_count(), 0);
    assert_eq!(
        summary.unparsed.as_deref(),
        Some("new content: not JSON: EOF while parsing a value at line 1 column 13")
    );
    assert_eq!(
        summary.render(10),
        "package-lock.json (npm): could not read package versions: \
new content: not JSON: EOF while parsing a value at line 1 column 13"
    );

    let both = summarize("go.sum", LockKind::GoSum, Some("x"), Some("y"));
    assert_eq!(
        both.unparsed.as_deref(),
        Some(
            "old content: no packages found (expected lines like `module version h1:hash`); \
new content: no packages found (expected lines like `module version h1:hash`)"
        )
    );
}

// -- render --------------------------------------------------------------

fn many_changes() -> LockSummary {
    LockSummary {
        path: "yarn.lock".to_owned(),
        kind: LockKind::Yarn,
        changed: vec![
            change("a", &["1.0.0"], &["1.1.0"], &[]),
            change("b", &["2.0.0"], &["3.0.0"], &[]),
            change("c", &["0.1.0"], &["0.2.0"], &[]),
        ],
        added: vec![
            change("d", &[], &["1.0.0"], &[]),
            change("e", &[], &["2.0.0"], &[]),
        ],
        removed: vec![change("f", &["1.0.0"], &[], &[])],
        unparsed: None,
    }
}

#[test]
fn render_shares_max_entries_among_the_groups() {
    let summary = many_changes();
    assert_eq!(
        summary.render(4),
        "yarn.lock (Yarn): 3 changed, 2 added, 1 removed\n  \
changed: a 1.0.0 → 1.1.0; b 2.0.0 → 3.0.0; … and 1 more\n  \
added: d 1.0.0; … and 1 more\n  \
removed: f 1.0.0"
    );
    assert_eq!(
        summary.render(2),
        "yarn.lock (Yarn): 3 changed, 2 added, 1 removed\n  \
changed: a 1.0.0 → 1.1.0; … and 2 more\n  \
added: d 1.0.0; … and 1 more\n  \
removed: … and 1 more"
    );
    assert_eq!(
        summary.render(0),
        "yarn.lock (Yarn): 3 changed, 2 added, 1 removed\n  \
changed: … and 3 more\n  \
added: … and 2 more\n  \
removed: … and 1 more"
    );
    assert_eq!(
        summary.render(usize::MAX),
        "yarn.lock (Yarn): 3 changed, 2 added, 1 removed\n  \
changed: a 1.0.0 → 1.1.0; b 2.0.0 → 3.0.0; c 0.1.0 → 0.2.0\n  \
added: d 1.0.0; e 2.0.0\n  \
removed: f 1.0.0"
    );
}

#[test]
fn render_keeps_a_reason_on_one_line() {
    let summary = LockSummary {
        unparsed: Some("bad\nthing".to_owned()),
        ..many_changes()
    };
    assert_eq!(
        summary.render(3),
        "yarn.lock (Yarn): could not read package versions: bad thing"
    );
}

#[test]
fn display_of_a_package_that_lost_a_version() {
    let lost = change("syn", &["1.0.109"], &[], &["2.0.66"]);
    assert_eq!(lost.to_string(), "syn 1.0.109, 2.0.66 → 2.0.66");
}
