//! The reverse dependency index: cold build, incremental updates as the notes
//! ref moves, and a stored file that is only ever a cache.

use gitctx::Repo;
use serde_json::{Value, json};
use testkit::TestRepo;
use ultragit_read::{DepsIndex, IndexUpdate, ReadQuery};

use crate::support::{annotate, note, read, region};

const REF: &str = "refs/notes/ultragit";

/// A region of `file` named `name` that depends on each `(file, anchor)`.
fn dependent(file: &str, name: &str, targets: &[(&str, &str)]) -> Value {
    let mut r = region(file, "function", name, (1, 1), &format!("{name} does work"));
    r["semantic_dependencies"] = targets
        .iter()
        .map(|(f, a)| json!({"file": f, "anchor": a, "nature": format!("{name} calls {a}")}))
        .collect();
    r
}

/// Commits `file` and annotates the commit with `regions`.
fn annotated(repo: &TestRepo, file: &str, regions: Vec<Value>) -> String {
    let commit = repo.commit_file(file, format!("// {file}\n"), &format!("add {file}"));
    annotate(
        repo,
        &commit,
        &note(&commit, "2024-01-01T00:00:00Z", "enhanced", regions),
    );
    commit
}

/// [`annotated`] with one region, `name` in `file`, depending on each
/// `(file, anchor)`.
fn annotated_unit(repo: &TestRepo, file: &str, name: &str, targets: &[(&str, &str)]) -> String {
    annotated(repo, file, vec![dependent(file, name, targets)])
}

/// Removes the note of `commit`.
fn remove_note(repo: &TestRepo, commit: &str) {
    Repo::discover(repo.path())
        .unwrap()
        .notes(REF)
        .unwrap()
        .remove(commit.parse().unwrap())
        .unwrap();
}

fn open(repo: &TestRepo) -> DepsIndex {
    DepsIndex::open(&Repo::discover(repo.path()).unwrap(), REF).unwrap()
}

/// The index, after an update that read exactly one changed note.
fn updated_once(repo: &TestRepo) -> DepsIndex {
    let index = open(repo);
    assert_eq!(index.update(), IndexUpdate::Incremental { changed: 1 });
    index
}

/// `(source file, source anchor, target anchor)` of a dependency.
type Dep = (String, String, String);

/// The dependents of a unit.
fn dependents(index: &DepsIndex, file: &str, anchor: Option<&str>) -> Vec<Dep> {
    index
        .dependents(file, anchor)
        .iter()
        .map(|d| {
            (
                d.source_file.to_owned(),
                d.source_anchor.to_owned(),
                d.target_anchor.to_owned(),
            )
        })
        .collect()
}

fn all(index: &DepsIndex) -> Vec<Vec<Dep>> {
    ["src/wire.rs", "src/log.rs", "src/a.rs", "src/b.rs"]
        .iter()
        .map(|f| dependents(index, f, None))
        .collect()
}

fn s(a: &str, b: &str, c: &str) -> Dep {
    (a.to_owned(), b.to_owned(), c.to_owned())
}

#[test]
fn builds_cold_then_updates_with_what_changed() {
    let repo = TestRepo::new();
    repo.commit_file("src/wire.rs", "pub fn encode() {}\n", "wire");
    assert_eq!(open(&repo).update(), IndexUpdate::NoNotes);
    let a = annotated_unit(&repo, "src/a.rs", "a", &[("src/wire.rs", "wire::encode")]);
    let index = open(&repo);
    assert_eq!(index.update(), IndexUpdate::Cold { notes: 1 });
    assert!(DepsIndex::path(&Repo::discover(repo.path()).unwrap()).is_file());
    assert_eq!(
        dependents(&index, "src/wire.rs", Some("encode")),
        [s("src/a.rs", "a", "wire::encode")],
        "a qualified target matches the plain name"
    );
    assert!(dependents(&index, "src/wire.rs", Some("decode")).is_empty());
    assert_eq!(open(&repo).update(), IndexUpdate::Fresh);

    // One new note: only it is read.
    let b = annotated_unit(
        &repo,
        "src/b.rs",
        "b",
        &[("src/wire.rs", "encode"), ("src/a.rs", "a")],
    );
    let index = updated_once(&repo);
    assert_eq!(index.annotated_commits(), 2);
    assert_eq!(
        dependents(&index, "src/wire.rs", Some("wire::encode")),
        [
            s("src/b.rs", "b", "encode"),
            s("src/a.rs", "a", "wire::encode")
        ],
        "newest annotated commit first"
    );
    assert_eq!(index.most_recent(1), [b.parse().unwrap()]);

    // A changed note replaces its entries; a removed one drops them.
    annotate(
        &repo,
        &a,
        &note(
            &a,
            "2024-01-02T00:00:00Z",
            "enhanced",
            vec![dependent("src/a.rs", "a", &[("src/log.rs", "log")])],
        ),
    );
    let index = updated_once(&repo);
    assert_eq!(
        dependents(&index, "src/wire.rs", None),
        [s("src/b.rs", "b", "encode")]
    );
    assert_eq!(
        dependents(&index, "src/log.rs", None),
        [s("src/a.rs", "a", "log")]
    );
    remove_note(&repo, &b);
    let index = updated_once(&repo);
    assert!(dependents(&index, "src/wire.rs", None).is_empty());
    assert_eq!(index.annotated_commits(), 1);

    // Whatever the path, the answers are those of a build from scratch.
    let scratch = DepsIndex::build(&Repo::discover(repo.path()).unwrap(), REF).unwrap();
    assert_eq!(all(&index), all(&scratch));
}

/// Two notes with dependencies on `src/wire.rs`, and the index built.
fn indexed() -> (TestRepo, Vec<Vec<Dep>>) {
    let repo = TestRepo::new();
    repo.commit_file("src/wire.rs", "pub fn encode() {}\n", "wire");
    annotated_unit(&repo, "src/a.rs", "a", &[("src/wire.rs", "encode")]);
    annotated_unit(&repo, "src/b.rs", "b", &[("src/wire.rs", "decode")]);
    let answers = all(&open(&repo));
    assert_eq!(answers[0].len(), 2);
    (repo, answers)
}

#[test]
fn deleting_the_cache_is_always_safe() {
    let (repo, answers) = indexed();
    let path = DepsIndex::path(&Repo::discover(repo.path()).unwrap());
    std::fs::remove_file(&path).unwrap();
    // A base of the JSON format before version 3 is left alone, then removed
    // by the next base written.
    let old = path.with_file_name("index.json");
    std::fs::write(&old, "{\"format\":\"ultragit-deps-index\",\"version\":2}").unwrap();
    let index = open(&repo);
    assert_eq!(index.update(), IndexUpdate::Cold { notes: 2 });
    assert_eq!(all(&index), answers);
    assert!(path.is_file() && !old.exists(), "the old base is removed");
    std::fs::remove_dir_all(repo.path().join(".git/ultragit")).unwrap();
    assert_eq!(all(&open(&repo)), answers);
}

#[test]
fn a_damaged_or_foreign_index_is_ignored_and_rebuilt() {
    let (repo, answers) = indexed();
    let path = DepsIndex::path(&Repo::discover(repo.path()).unwrap());
    let good = std::fs::read(&path).unwrap();
    assert!(good.starts_with(b"UGDEPIDX"), "the binary base");
    // The notes commit the base was built from, as it stands in the file.
    let notes_commit: Vec<u8> = (0..20)
        .map(|i| u8::from_str_radix(&repo.rev_parse(REF)[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    let replace = |from: &[u8], to: &[u8]| -> Vec<u8> {
        let at = good
            .windows(from.len())
            .position(|w| w == from)
            .expect("in the base");
        [&good[..at], to, &good[at + from.len()..]].concat()
    };
    let mut trailing = good.clone();
    trailing.push(0);
    for damaged in [
        b"not an index at all".to_vec(),
        Vec::new(),
        // Another format version.
        replace(&[3, 0, 0, 0], &[99, 0, 0, 0]),
        // Another notes ref (of the same length).
        replace(b"refs/notes/ultragit", b"refs/notes/ultragiT"),
        // A notes commit that is not in the repository any more.
        replace(&notes_commit, &[0x11; 20]),
        // A string that is not UTF-8.
        replace(b"src/wire.rs", b"src/wire.r\xff"),
        good[..good.len() / 2].to_vec(),
        good[..good.len() - 1].to_vec(),
        trailing,
    ] {
        std::fs::write(&path, &damaged).unwrap();
        let index = open(&repo);
        assert_eq!(
            index.update(),
            IndexUpdate::Cold { notes: 2 },
            "{}",
            String::from_utf8_lossy(&damaged)
        );
        assert_eq!(
            all(&index),
            answers,
            "{}",
            String::from_utf8_lossy(&damaged)
        );
        assert_eq!(open(&repo).update(), IndexUpdate::Fresh, "rewritten");
    }
}

#[cfg(unix)]
#[test]
fn the_index_is_never_read_or_written_through_a_link() {
    let (repo, answers) = indexed();
    let path = DepsIndex::path(&Repo::discover(repo.path()).unwrap());
    let elsewhere = repo.path().join("outside");
    std::fs::create_dir(&elsewhere).unwrap();
    let outside = elsewhere.join("index.bin");
    std::fs::copy(&path, &outside).unwrap();
    std::fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink(&outside, &path).unwrap();
    let index = open(&repo);
    assert_eq!(
        index.update(),
        IndexUpdate::Cold { notes: 2 },
        "the link is not read"
    );
    assert_eq!(all(&index), answers);
    assert!(
        !std::fs::symlink_metadata(&path).unwrap().is_symlink(),
        "the link is replaced, not written through"
    );
    // A linked directory on the way is neither read nor written through.
    let deps_dir = path.parent().unwrap();
    std::fs::remove_dir_all(deps_dir).unwrap();
    std::os::unix::fs::symlink(&elsewhere, deps_dir).unwrap();
    let before = std::fs::read(&outside).unwrap();
    let index = open(&repo);
    assert_eq!(index.update(), IndexUpdate::Cold { notes: 2 });
    assert_eq!(all(&index), answers, "an unwritable cache costs only speed");
    assert_eq!(std::fs::read(&outside).unwrap(), before);
}

#[test]
fn an_oversized_index_is_ignored() {
    let (repo, answers) = indexed();
    let path = DepsIndex::path(&Repo::discover(repo.path()).unwrap());
    let file = std::fs::File::create(&path).unwrap();
    file.set_len(ultragit_read::INDEX_LIMIT + 1).unwrap();
    let index = open(&repo);
    assert_eq!(index.update(), IndexUpdate::Cold { notes: 2 });
    assert_eq!(all(&index), answers);
    assert!(std::fs::metadata(&path).unwrap().len() < 100_000);
}

/// `notes.txt` has no grammar; its note names three units by line, and
/// others depend on two of them.
fn no_grammar() -> TestRepo {
    let repo = TestRepo::new();
    let text: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    let c1 = repo.commit_file("notes.txt", &text, "notes");
    annotate(
        &repo,
        &c1,
        &note(
            &c1,
            "2024-01-01T00:00:00Z",
            "enhanced",
            vec![
                region("notes.txt", "section", "intro", (1, 10), "introduces"),
                region("notes.txt", "section", "body", (11, 20), "explains"),
                region("notes.txt", "section", "outro", (21, 30), "concludes"),
            ],
        ),
    );
    annotated_unit(
        &repo,
        "src/a.rs",
        "a",
        &[("notes.txt", "intro"), ("notes.txt", "outro")],
    );
    repo
}

#[test]
fn dependencies_are_matched_to_the_units_in_scope_without_a_grammar() {
    let repo = no_grammar();
    let targets = |query: &ReadQuery| -> Vec<String> {
        read(&repo, query)
            .dependencies_on_this
            .iter()
            .map(|d| d.target_anchor.clone())
            .collect()
    };
    let lines = |start, end| ReadQuery::file("notes.txt").with_lines(start, end);
    assert_eq!(targets(&lines(2, 5)), ["intro"]);
    assert!(
        targets(&lines(12, 18)).is_empty(),
        "nothing depends on the body"
    );
    assert_eq!(targets(&lines(25, 26)), ["outro"]);
    let mut both = targets(&ReadQuery::file("notes.txt"));
    both.sort();
    assert_eq!(both, ["intro", "outro"], "the whole file: every unit");
    assert_eq!(
        targets(&ReadQuery::file("notes.txt").with_anchor("outro")),
        ["outro"]
    );
}

#[test]
fn the_scan_limit_counts_only_when_set() {
    let repo = TestRepo::new();
    repo.commit_file("src/wire.rs", "pub fn encode() {}\n", "wire");
    for i in 0..5 {
        annotated(
            &repo,
            &format!("src/d{i}.rs"),
            vec![dependent(
                &format!("src/d{i}.rs"),
                "d",
                &[("src/wire.rs", "encode")],
            )],
        );
    }
    let query = ReadQuery::file("src/wire.rs").with_anchor("encode");
    assert_eq!(
        read(&repo, &query).dependencies_on_this.len(),
        5,
        "unset: all"
    );
    repo.git(&["config", "ultragit.depsScanLimit", "2"]);
    let out = read(&repo, &query);
    let files: Vec<&str> = out
        .dependencies_on_this
        .iter()
        .map(|d| d.file.as_str())
        .collect();
    assert_eq!(
        files,
        ["src/d4.rs", "src/d3.rs"],
        "set: the two most recent"
    );
}

#[test]
fn dependencies_recorded_under_a_former_name_count_after_a_rename() {
    // Fixed: read matched the recorded path only, so a dependency declared on
    // `src/wire.rs` was lost once the file became `src/codec.rs`.
    let repo = TestRepo::new();
    repo.commit_file("src/wire.rs", "pub fn encode() {}\n", "wire");
    annotated_unit(&repo, "src/a.rs", "a", &[("src/wire.rs", "encode")]);
    repo.rename("src/wire.rs", "src/codec.rs");
    repo.commit("rename wire to codec");
    annotated_unit(&repo, "src/b.rs", "b", &[("src/codec.rs", "encode")]);
    // Another unit of the file under its former name is not this one.
    annotated_unit(&repo, "src/c.rs", "c", &[("src/wire.rs", "decode")]);
    let out = read(
        &repo,
        &ReadQuery::file("src/codec.rs").with_anchor("encode"),
    );
    let found: Vec<(&str, &str)> = out
        .dependencies_on_this
        .iter()
        .map(|d| (d.file.as_str(), d.target_file.as_str()))
        .collect();
    assert_eq!(
        found,
        [("src/b.rs", "src/codec.rs"), ("src/a.rs", "src/wire.rs")]
    );
    // A name another file has today stays that file's.
    repo.commit_file("src/wire.rs", "pub fn encode() {}\n", "a new wire");
    let out = read(
        &repo,
        &ReadQuery::file("src/codec.rs").with_anchor("encode"),
    );
    let files: Vec<&str> = out
        .dependencies_on_this
        .iter()
        .map(|d| d.file.as_str())
        .collect();
    assert_eq!(files, ["src/b.rs"]);
}

fn paths(repo: &TestRepo) -> (std::path::PathBuf, std::path::PathBuf) {
    let r = Repo::discover(repo.path()).unwrap();
    (DepsIndex::path(&r), DepsIndex::journal_path(&r))
}

fn scratch(repo: &TestRepo) -> DepsIndex {
    DepsIndex::build(&Repo::discover(repo.path()).unwrap(), REF).unwrap()
}

#[test]
fn journal_replay_equals_a_scratch_build() {
    let (repo, _) = indexed();
    let (base, journal) = paths(&repo);
    let base_bytes = std::fs::read(&base).unwrap();
    assert!(!journal.exists(), "a cold build leaves no journal");

    // Added, changed and removed notes: each update is a journal step, the
    // base is left alone.
    let c = annotated_unit(&repo, "src/c.rs", "c", &[("src/log.rs", "log")]);
    updated_once(&repo);
    let d = annotated_unit(
        &repo,
        "src/d.rs",
        "d",
        &[("src/wire.rs", "encode"), ("src/c.rs", "c")],
    );
    updated_once(&repo);
    annotate(
        &repo,
        &c,
        &note(
            &c,
            "2024-01-02T00:00:00Z",
            "enhanced",
            vec![dependent("src/c.rs", "c", &[("src/a.rs", "a")])],
        ),
    );
    updated_once(&repo);
    remove_note(&repo, &d);
    let updated = updated_once(&repo);
    assert_eq!(
        std::fs::read(&base).unwrap(),
        base_bytes,
        "the base is untouched"
    );
    let steps = serde_json::from_str::<Value>(&std::fs::read_to_string(&journal).unwrap()).unwrap()
        ["steps"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(steps, 4);

    // Replayed from the files, the index is that of a build from scratch.
    let replayed = open(&repo);
    assert_eq!(replayed.update(), IndexUpdate::Fresh);
    let scratch = scratch(&repo);
    assert_eq!(all(&replayed), all(&scratch));
    assert_eq!(all(&updated), all(&scratch));
    assert_eq!(
        dependents(&replayed, "src/a.rs", None),
        [s("src/c.rs", "c", "a")]
    );
    assert!(dependents(&replayed, "src/c.rs", None).is_empty());
    assert_eq!(replayed.most_recent(10), scratch.most_recent(10));
    assert_eq!(replayed.notes_commit(), scratch.notes_commit());
    assert_eq!(replayed.annotated_commits(), 3);
}

#[test]
fn a_damaged_or_unchained_journal_is_ignored() {
    let (repo, _) = indexed();
    let (_, journal) = paths(&repo);
    annotated_unit(&repo, "src/c.rs", "c", &[("src/wire.rs", "encode")]);
    updated_once(&repo);
    let good = std::fs::read_to_string(&journal).unwrap();
    let stored: Value = serde_json::from_str(&good).unwrap();
    let base = stored["base"].as_str().unwrap().to_owned();
    let to = stored["steps"][0]["to"].as_str().unwrap().to_owned();
    let answers = all(&scratch(&repo));
    let gone = "1111111111111111111111111111111111111111";
    for damaged in [
        "not json at all".to_owned(),
        String::new(),
        good[..good.len() / 2].to_owned(),
        good.replace("\"version\":5", "\"version\":99"),
        good.replace("refs/notes/ultragit", "refs/notes/other"),
        // Not on top of this base.
        good.replace(&base, gone),
        // Up to a notes commit that is gone.
        good.replace(&to, gone),
        // An id that is not one.
        good.replace(&to, "not-an-id"),
    ] {
        std::fs::write(&journal, &damaged).unwrap();
        let index = open(&repo);
        assert_eq!(
            index.update(),
            IndexUpdate::Incremental { changed: 1 },
            "diffed from the base: {damaged}"
        );
        assert_eq!(all(&index), answers, "{damaged}");
        assert_eq!(open(&repo).update(), IndexUpdate::Fresh, "rewritten");
    }

    // A well-formed journal chaining to the base and the ref is replayed,
    // not re-diffed (what it says is used, as the base's is).
    std::fs::write(&journal, good.replace("src/c.rs", "src/zzz.rs")).unwrap();
    let index = open(&repo);
    assert_eq!(index.update(), IndexUpdate::Fresh);
    assert!(
        dependents(&index, "src/wire.rs", None)
            .iter()
            .any(|d| d.0 == "src/zzz.rs")
    );
    std::fs::remove_file(&journal).unwrap();
    assert_eq!(all(&open(&repo)), answers, "deleting it is always safe");

    // Through a link it is neither read nor written.
    #[cfg(unix)]
    {
        let outside = repo.path().join("outside.json");
        std::fs::write(&outside, good.replace("src/c.rs", "src/zzz.rs")).unwrap();
        std::fs::remove_file(&journal).ok();
        std::os::unix::fs::symlink(&outside, &journal).unwrap();
        let index = updated_once(&repo);
        assert_eq!(all(&index), answers);
        assert!(!std::fs::symlink_metadata(&journal).unwrap().is_symlink());
        assert!(
            std::fs::read_to_string(&outside)
                .unwrap()
                .contains("src/zzz.rs")
        );
    }
}

#[test]
fn the_journal_is_folded_into_the_base_past_its_bound() {
    let (repo, _) = indexed();
    let (base, journal) = paths(&repo);
    let base_bytes = std::fs::read(&base).unwrap();
    let c = annotated_unit(&repo, "src/c.rs", "c", &[("src/wire.rs", "encode")]);
    let mut steps = 0;
    loop {
        steps += 1;
        annotate(
            &repo,
            &c,
            &note(
                &c,
                "2024-01-01T00:00:00Z",
                "enhanced",
                vec![dependent(
                    "src/c.rs",
                    "c",
                    &[("src/wire.rs", &format!("f{steps}"))],
                )],
            ),
        );
        updated_once(&repo);
        if !journal.exists() {
            break;
        }
        assert_eq!(std::fs::read(&base).unwrap(), base_bytes);
        assert!(steps < 100, "the journal is never folded");
    }
    assert!(steps > 1, "one update is a journal step, not a fold");
    assert_ne!(std::fs::read(&base).unwrap(), base_bytes, "folded");
    let folded = std::fs::read(&base).unwrap();
    // A string is stored as its length (u32, little-endian), then its bytes.
    let has = |text: &[u8]| {
        let stored = [&(text.len() as u32).to_le_bytes()[..], text].concat();
        folded.windows(stored.len()).any(|w| w == stored)
    };
    assert!(
        has(format!("f{steps}").as_bytes()),
        "strings in use are kept"
    );
    assert!(
        !has(b"f1"),
        "strings no note uses any more are dropped on folding"
    );
    let index = open(&repo);
    assert_eq!(index.update(), IndexUpdate::Fresh);
    assert_eq!(all(&index), all(&scratch(&repo)));
    assert_eq!(
        dependents(&index, "src/wire.rs", Some(&format!("f{steps}"))),
        [s("src/c.rs", "c", &format!("f{steps}"))]
    );
}
