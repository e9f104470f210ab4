//! Hand-built release evidence for the release modules' unit tests.

use gitctx::ObjectId;

use crate::types::{Host, LinkHints, RefInfo, ReleaseCommit, Signal};

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
