//! Stage 3: notes of the blamed commits, and their filters.

use testkit::TestRepo;
use ultragit_read::{
    ContextLevelFilter, NO_NOTES_HINT, ReadError, ReadPipeline, ReadQuery, SinceFilter,
};

use crate::support::{annotate, commit_file_at, names, note, pipeline, read, region, write_raw};

/// Three commits, each adding one function, made in 2024-01, 2024-06 and
/// 2024-07; the first two annotated (inferred, enhanced), the third not.
fn repo() -> (TestRepo, [String; 3]) {
    let repo = TestRepo::new();
    let a = "pub fn a() {}\n";
    let ab = "pub fn a() {}\n\npub fn b() {}\n";
    let abc = "pub fn a() {}\n\npub fn b() {}\n\npub fn c() {}\n";
    let c1 = commit_file_at(&repo, "src/lib.rs", a, "a", "2024-01-10T00:00:00Z");
    let c2 = commit_file_at(&repo, "src/lib.rs", ab, "b", "2024-06-10T00:00:00Z");
    let c3 = commit_file_at(&repo, "src/lib.rs", abc, "c", "2024-07-10T00:00:00Z");
    annotate(
        &repo,
        &c1,
        &note(
            &c1,
            "2024-01-10T00:00:00Z",
            "inferred",
            vec![region("src/lib.rs", "function", "a", (1, 1), "a")],
        ),
    );
    annotate(
        &repo,
        &c2,
        &note(
            &c2,
            "2024-06-10T00:00:00Z",
            "enhanced",
            vec![region("src/lib.rs", "function", "b", (3, 3), "b")],
        ),
    );
    (repo, [c1, c2, c3])
}

#[test]
fn notes_are_found_and_unannotated_commits_counted() {
    let (repo, _) = repo();
    let out = read(&repo, &ReadQuery::file("src/lib.rs"));
    assert_eq!(out.stats.commits_examined, 3);
    assert_eq!(out.stats.annotations_found, 2);
    let mut found = names(&out);
    found.sort();
    assert_eq!(found, ["a", "b"]);
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
}

#[test]
fn malformed_notes_are_skipped_with_a_warning() {
    let (repo, [_, _, c3]) = repo();
    write_raw(&repo, &c3, "{ this is not json");
    let out = read(&repo, &ReadQuery::file("src/lib.rs"));
    assert!(
        out.warnings
            .contains(&format!("Skipping malformed annotation on commit {c3}")),
        "{:?}",
        out.warnings
    );
    assert_eq!(out.stats.annotations_found, 2);
    // A note with a valid shape but an unparseable timestamp is malformed too.
    write_raw(
        &repo,
        &c3,
        &note(&c3, "last tuesday", "inferred", vec![]).to_string(),
    );
    let out = read(&repo, &ReadQuery::file("src/lib.rs"));
    assert!(out.warnings.iter().any(|w| w.contains(&c3)));
}

#[test]
fn since_filters_by_date_and_by_commit() {
    let (repo, [c1, c2, _]) = repo();
    let mut query = ReadQuery::file("src/lib.rs");
    query.since = Some(SinceFilter::parse("2024-03-01").unwrap());
    assert_eq!(names(&read(&repo, &query)), ["b"]);
    query.since = Some(SinceFilter::parse("2025-01-01T00:00:00Z").unwrap());
    assert!(read(&repo, &query).regions.is_empty());
    // A commit: its time is the cutoff, and a commit at the cutoff passes.
    query.since = Some(SinceFilter::Sha(c1.clone()));
    let mut found = names(&read(&repo, &query));
    found.sort();
    assert_eq!(found, ["a", "b"], "both commits are at or after the first");
    query.since = Some(SinceFilter::Sha(c2.clone()));
    assert_eq!(names(&read(&repo, &query)), ["b"]);
    query.since = Some(SinceFilter::Sha(c2[..8].to_owned()));
    assert_eq!(read(&repo, &query).query.since.as_deref(), Some(&c2[..8]));
    query.since = Some(SinceFilter::Sha("no-such-rev".into()));
    assert!(matches!(
        pipeline(&repo).execute(&query),
        Err(ReadError::InvalidSince { .. })
    ));
}

#[test]
fn since_judges_the_commit_not_the_note() {
    // A note written in 2025 (a backfill) on the commit of 2024-01: `--since
    // 2024-03-01` leaves it out, since the code it describes is older.
    let (repo, [c1, _, _]) = repo();
    annotate(
        &repo,
        &c1,
        &note(
            &c1,
            "2025-05-01T00:00:00Z",
            "inferred",
            vec![region("src/lib.rs", "function", "a", (1, 1), "a")],
        ),
    );
    let mut query = ReadQuery::file("src/lib.rs");
    query.since = Some(SinceFilter::parse("2024-03-01").unwrap());
    assert_eq!(names(&read(&repo, &query)), ["b"]);
    let all = read(&repo, &ReadQuery::file("src/lib.rs"));
    let a = all
        .regions
        .iter()
        .find(|r| r.region.ast_anchor.name == "a")
        .unwrap();
    assert_eq!(
        a.commit_date.unwrap().to_rfc3339(),
        "2024-01-10T00:00:00+00:00"
    );
    assert_eq!(a.timestamp.to_rfc3339(), "2025-05-01T00:00:00+00:00");
}

#[test]
fn context_level_filters() {
    let (repo, _) = repo();
    let mut query = ReadQuery::file("src/lib.rs");
    query.context_level = ContextLevelFilter::Enhanced;
    assert_eq!(names(&read(&repo, &query)), ["b"]);
    query.context_level = ContextLevelFilter::Inferred;
    assert_eq!(names(&read(&repo, &query)), ["a"]);
    query.context_level = ContextLevelFilter::All;
    assert_eq!(read(&repo, &query).regions.len(), 2);
}

#[test]
fn a_repository_without_notes_gets_the_hint() {
    let repo = TestRepo::new();
    repo.commit_file("src/lib.rs", "pub fn a() {}\n", "a");
    let out = read(&repo, &ReadQuery::file("src/lib.rs"));
    assert!(out.regions.is_empty());
    assert_eq!(out.stats.annotations_found, 0);
    assert_eq!(out.warnings, [NO_NOTES_HINT]);
    assert_eq!(
        NO_NOTES_HINT,
        "No Ultragit annotations found. Run 'ultragit init' to set up."
    );
}
