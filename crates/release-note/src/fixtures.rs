//! Hand-built release evidence for the release modules' unit tests, and the
//! reader of their tables of cases ([`grouped`]).

use gitctx::ObjectId;

use crate::types::{Host, LinkHints, Range, RefInfo, ReleaseCommit, Signal, SubmoduleGroup};

/// `prefix` padded with zeros to a full id.
pub fn hex(prefix: &str) -> String {
    format!("{prefix:0<40}")
}

/// [`hex`] as an id.
pub fn oid(prefix: &str) -> ObjectId {
    hex(prefix).parse().expect("test ids are hex")
}

/// A one-line runtime commit whose id starts with `prefix`.
pub fn commit(prefix: &str, subject: &str) -> ReleaseCommit {
    let id = oid(prefix);
    ReleaseCommit {
        short: id.short(),
        id,
        subject: subject.to_owned(),
        message: subject.to_owned(),
        clamped: false,
        author: "A U Thor".to_owned(),
        date: "2024-05-01".to_owned(),
        merge: false,
        paths: Vec::new(),
        paths_total: 0,
        additions: 1,
        deletions: 0,
        excerpt: String::new(),
        signals: vec![Signal::Runtime],
        pull_requests: Vec::new(),
        issues: Vec::new(),
        internal_bumps: Vec::new(),
    }
}

/// Links of `github.com/{slug}`.
pub fn github(slug: &str) -> LinkHints {
    LinkHints {
        host: Host::GitHub,
        web: format!("https://github.com/{slug}"),
        slug: slug.to_owned(),
    }
}

/// One end of a range.
pub fn end(name: &str, prefix: &str) -> RefInfo {
    RefInfo {
        name: name.to_owned(),
        commit: oid(prefix),
        subject: String::new(),
        date: "2024-05-01".to_owned(),
    }
}

/// The range `v1.2.0` (`0a0a0a0`) .. `v1.3.0` (`abc1234`), version 1.3.0.
pub fn range() -> Range {
    Range {
        base: end("v1.2.0", "0a0a0a0"),
        release: end("v1.3.0", "abc1234"),
        version: Some("1.3.0".to_owned()),
        bump: None,
    }
}

/// `vendor/lib`, linked to `acme/lib`, moving from `1111111` to `2222222` with
/// `commits` and `more` unlisted ones; then `vendor/old`, unlinked and not
/// checked out, moving from `4444444` to `old_to`.
pub fn submodules(
    commits: Vec<ReleaseCommit>,
    more: usize,
    old_to: Option<ObjectId>,
) -> Vec<SubmoduleGroup> {
    vec![
        SubmoduleGroup {
            path: "vendor/lib".to_owned(),
            old: Some(oid("1111111")),
            new: Some(oid("2222222")),
            commits,
            more,
            note: None,
            links: Some(github("acme/lib")),
        },
        SubmoduleGroup {
            path: "vendor/old".to_owned(),
            old: Some(oid("4444444")),
            new: old_to,
            commits: Vec::new(),
            more: 0,
            note: Some("not checked out".to_owned()),
            links: None,
        },
    ]
}

/// Every item of a table of cases in groups (a JSON array of objects, each
/// with what it is `about` and its items under `key`), with its group: `count`
/// items, so that a table cut short fails rather than passes.
pub fn grouped(
    table: &str,
    key: &str,
    count: usize,
) -> Vec<(serde_json::Value, serde_json::Value)> {
    let groups: Vec<serde_json::Value> =
        serde_json::from_str(table).expect("a table of cases is a JSON array");
    let items: Vec<(serde_json::Value, serde_json::Value)> = groups
        .iter()
        .flat_map(|group| {
            let items = group[key]
                .as_array()
                .unwrap_or_else(|| panic!("no {key} in {group}"));
            items.iter().map(|item| (group.clone(), item.clone()))
        })
        .collect();
    assert_eq!(items.len(), count, "the table is whole");
    items
}
