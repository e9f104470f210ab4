//! Reads after new commits, whose blame the cache carries forward from an
//! older HEAD (`gitctx::blame_carry`), answer exactly as reads without the
//! cache: after one commit, after twenty that touch the file elsewhere, and
//! after a merge.

use std::path::Path;

use gitctx::{BlameCache, BlameEngine, BlameOptions, ObjectId, Repo};
use testkit::TestRepo;
use ultragit_read::{GitReadPipeline, ReadPipeline, ReadQuery};

use crate::support::{annotate, assert_same_answers, note, pipeline, read_all, region, shifted};

const FILE: &str = "src/mqtt.rs";

fn reads() -> [ReadQuery; 4] {
    [
        ReadQuery::file(FILE).with_anchor("MqttClient::connect"),
        ReadQuery::file(FILE).with_anchor("MqttClient::new"),
        ReadQuery::file(FILE).with_anchor("parse"),
        ReadQuery::file(FILE),
    ]
}

/// Whether the pipeline's cache, as it is now, would carry HEAD's blame of
/// the whole file from `from`, after handing lines through `steps` commits:
/// asked of a copy, so the pipeline's own next read still does the carrying.
fn carries_from(repo: &TestRepo, from: &str, steps: u32) -> bool {
    let git = Repo::discover(repo.path()).unwrap();
    let source = GitReadPipeline::default_blame_cache(&git)
        .dir()
        .to_path_buf();
    // Inside the test repository's git directory, which goes with it.
    let copy = repo.path().join(".git/carry-probe");
    if copy.exists() {
        std::fs::remove_dir_all(&copy).unwrap();
    }
    copy_tree(&source, &copy);
    let whole = BlameOptions {
        rev: None,
        lines: None,
        engine: BlameEngine::Cli,
    };
    let (_, outcome) = git
        .blame_cached_outcome(FILE, &whole, &BlameCache::new(&copy))
        .unwrap();
    let from: ObjectId = from.parse().unwrap();
    outcome.carried_from == Some((from, steps))
}

fn copy_tree(from: &Path, to: &Path) {
    for file in testkit::files_under(from) {
        let target = to.join(file.strip_prefix(from).unwrap());
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(&file, &target).unwrap();
    }
}

/// Reads every query through the cache and without it; the answers must be
/// the same, and the whole file's must find `annotations`.
fn same_answers(repo: &TestRepo, when: &str, annotations: u32) {
    let cached = pipeline(repo);
    let plain = pipeline(repo).with_blame_cache(None);
    assert_same_answers(&cached, &plain, reads(), when);
    let whole = plain.execute(&ReadQuery::file(FILE)).unwrap();
    assert_eq!(whole.stats.annotations_found, annotations, "{when}");
}

/// The file's text at HEAD with `line` appended.
fn appended(repo: &TestRepo, line: &str) -> String {
    let mut text = std::fs::read_to_string(repo.join(FILE)).unwrap();
    text.push_str(line);
    text.push('\n');
    text
}

#[test]
fn carried_reads_answer_as_reads_without_the_cache() {
    let (repo, _, _) = shifted();
    // The cache warmed at the older HEAD by the same reads.
    read_all(&pipeline(&repo), reads());
    let older = repo.rev_parse("HEAD");

    // One new commit, annotated, that changes `parse`.
    let text = std::fs::read_to_string(repo.join(FILE))
        .unwrap()
        .replace("raw.len() as u32", "raw.trim().len() as u32");
    let one = repo.commit_file(FILE, &text, "trim before measuring");
    annotate(
        &repo,
        &one,
        &note(
            &one,
            "2024-03-01T00:00:00Z",
            "enhanced",
            vec![region(
                FILE,
                "function",
                "parse",
                (18, 20),
                "ignores blanks",
            )],
        ),
    );
    assert!(carries_from(&repo, &older, 1));
    same_answers(&repo, "after one commit", 3);

    // Twenty commits that touch the file elsewhere (below `parse`), one in
    // four annotated.
    let older = repo.rev_parse("HEAD");
    for k in 0..20 {
        let text = appended(&repo, &format!("// note {k}"));
        let commit = repo.commit_file(FILE, &text, &format!("note {k}"));
        if k % 4 == 0 {
            let line = 22 + k;
            annotate(
                &repo,
                &commit,
                &note(
                    &commit,
                    "2024-03-02T00:00:00Z",
                    "basic",
                    vec![region(FILE, "comment", "note", (line, line), "a note")],
                ),
            );
        }
    }
    assert!(carries_from(&repo, &older, 20));
    same_answers(&repo, "after twenty commits", 8);

    // A side branch changes `new`, main changes the end of the file, and the
    // merge brings both.
    let older = repo.rev_parse("HEAD");
    repo.checkout_new("side");
    let text = std::fs::read_to_string(repo.join(FILE))
        .unwrap()
        .replace("host.to_owned()", "host.trim().to_owned()");
    repo.commit_file(FILE, &text, "trim the host");
    repo.checkout("main");
    let text = appended(&repo, "// the end");
    repo.commit_file(FILE, &text, "mark the end");
    repo.git(&["merge", "--no-ff", "--quiet", "-m", "merge side", "side"]);
    // The merge, then both of its parents' commits, then the older HEAD.
    assert!(carries_from(&repo, &older, 3));
    same_answers(&repo, "after a merge", 8);
}
