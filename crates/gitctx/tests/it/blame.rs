//! Blame with both engines against real histories.

use gitctx::{BlameEngine, BlameEntry, BlameOptions, Error};
use testkit::TestRepo;

use crate::open;

fn blame(
    repo: &TestRepo,
    path: &str,
    lines: Option<(u32, u32)>,
    engine: BlameEngine,
) -> Vec<BlameEntry> {
    open(repo)
        .blame(
            path,
            &BlameOptions {
                rev: None,
                lines,
                engine,
            },
        )
        .unwrap()
}

/// Both engines must give identical answers.
fn blame_both(repo: &TestRepo, path: &str, lines: Option<(u32, u32)>) -> Vec<BlameEntry> {
    let cli = blame(repo, path, lines, BlameEngine::Cli);
    let lib = blame(repo, path, lines, BlameEngine::Libgit2);
    assert_eq!(cli, lib, "engines disagree on {path} {lines:?}");
    cli
}

fn numbered(range: std::ops::RangeInclusive<u32>) -> String {
    range.map(|i| format!("line {i}\n")).collect()
}

/// A history where lines move: an insertion above shifts today's coordinates away
/// from the commit's own.
fn shifting_history() -> (TestRepo, String, String, String) {
    let repo = TestRepo::new();
    let c1 = repo.commit_file("f.txt", numbered(1..=10), "ten lines");
    let mut text = numbered(1..=10);
    text = text.replace("line 5\n", "line five\n");
    let c2 = repo.commit_file("f.txt", &text, "rename line 5");
    let text = format!("header a\nheader b\nheader c\n{text}");
    let c3 = repo.commit_file("f.txt", &text, "insert a header");
    (repo, c1, c2, c3)
}

#[test]
fn whole_file_blame_maps_original_and_final_coordinates() {
    let (repo, c1, c2, c3) = shifting_history();
    let entries = blame_both(&repo, "f.txt", None);
    let view: Vec<(String, u32, u32, u32, u32)> = entries
        .iter()
        .map(|e| {
            (
                e.commit.to_hex(),
                e.original_start,
                e.original_end,
                e.final_start,
                e.final_end,
            )
        })
        .collect();
    assert_eq!(
        view,
        [
            (c3.clone(), 1, 3, 1, 3),
            (c1.clone(), 1, 4, 4, 7),
            (c2.clone(), 5, 5, 8, 8),
            (c1.clone(), 6, 10, 9, 13),
        ]
    );
    assert!(entries.iter().all(|e| e.original_path == "f.txt"));
    let line_five = &entries[2];
    assert_eq!(line_five.to_final(5), Some(8));
    assert_eq!(line_five.len(), 1);
}

#[test]
fn scoped_blame_returns_only_lines_in_range() {
    let (repo, c1, c2, _) = shifting_history();
    let entries = blame_both(&repo, "f.txt", Some((7, 9)));
    let view: Vec<(String, u32, u32)> = entries
        .iter()
        .map(|e| (e.commit.to_hex(), e.final_start, e.final_end))
        .collect();
    assert_eq!(view, [(c1.clone(), 7, 7), (c2, 8, 8), (c1, 9, 9)]);
}

#[test]
fn single_commit_file_blames_to_one_entry() {
    let repo = TestRepo::new();
    let c = repo.commit_file("one.rs", numbered(1..=50), "all at once");
    let entries = blame_both(&repo, "one.rs", None);
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].commit.to_hex(), c);
    assert_eq!((entries[0].final_start, entries[0].final_end), (1, 50));
}

#[test]
fn renamed_files_report_the_original_path() {
    let repo = TestRepo::new();
    let c1 = repo.commit_file("old/name.rs", numbered(1..=20), "create");
    repo.rename("old/name.rs", "new/name.rs");
    repo.commit("move");
    repo.write(
        "new/name.rs",
        numbered(1..=20).replace("line 20\n", "line twenty\n"),
    );
    let c3 = repo.commit_all("edit");
    let entries = blame(&repo, "new/name.rs", None, BlameEngine::Cli);
    assert_eq!(entries[0].commit.to_hex(), c1);
    assert_eq!(entries[0].original_path, "old/name.rs");
    assert_eq!(entries[1].commit.to_hex(), c3);
    assert_eq!(entries[1].original_path, "new/name.rs");
    let lib = blame(&repo, "new/name.rs", None, BlameEngine::Libgit2);
    assert_eq!(lib[0].commit, entries[0].commit);
    assert_eq!((lib[1].final_start, lib[1].final_end), (20, 20));
}

#[test]
fn non_ascii_and_spaced_paths() {
    let repo = TestRepo::new();
    let c = repo.commit_file("src/módulo con espacios.py", "a = 1\nb = 2\n", "init");
    let entries = blame_both(&repo, "src/módulo con espacios.py", None);
    assert_eq!(entries[0].commit.to_hex(), c);
    assert_eq!(entries[0].original_path, "src/módulo con espacios.py");
}

#[test]
fn empty_files_blame_to_nothing_and_bad_ranges_are_typed_errors() {
    let repo = TestRepo::new();
    repo.commit_file("empty.txt", "", "empty");
    repo.commit_file("f.txt", numbered(1..=5), "five");
    assert!(blame_both(&repo, "empty.txt", None).is_empty());
    let r = open(&repo);
    for (start, end) in [(0, 2), (3, 2), (4, 6)] {
        let err = r
            .blame(
                "f.txt",
                &BlameOptions {
                    lines: Some((start, end)),
                    ..Default::default()
                },
            )
            .unwrap_err();
        assert!(
            matches!(err, Error::InvalidLineRange { len: 5, .. }),
            "{start}:{end} gave {err:?}"
        );
    }
    assert!(matches!(
        r.blame("missing.txt", &BlameOptions::default()),
        Err(Error::PathNotFound { .. })
    ));
    assert!(matches!(
        r.blame(
            "f.txt",
            &BlameOptions {
                rev: Some("nope".into()),
                ..Default::default()
            }
        ),
        Err(Error::RevNotFound { .. })
    ));
}

#[test]
fn blames_an_older_revision_and_a_detached_head() {
    let (repo, c1, c2, _) = shifting_history();
    let r = open(&repo);
    let old = r
        .blame(
            "f.txt",
            &BlameOptions {
                rev: Some("HEAD~1".into()),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(old.len(), 3);
    assert_eq!(old[1].commit.to_hex(), c2);
    repo.checkout_detached(&c1);
    let detached = blame_both(&repo, "f.txt", None);
    assert_eq!(detached.len(), 1);
}

#[test]
fn uncommitted_changes_do_not_affect_blame() {
    let (repo, _, _, c3) = shifting_history();
    repo.write("f.txt", "totally different\n");
    let entries = blame_both(&repo, "f.txt", Some((1, 1)));
    assert_eq!(entries[0].commit.to_hex(), c3);
}
