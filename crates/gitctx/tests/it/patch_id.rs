//! Patch-ids: equal for a cherry-pick and a clean rebase, different after a code
//! change, none for merges and empty commits; combined diffs of a branch.

use std::collections::HashMap;

use gitctx::{ObjectId, PatchId};
use testkit::TestRepo;

use crate::{id, open};

fn ids(hexes: &[&String]) -> Vec<ObjectId> {
    hexes.iter().map(|h| id(h)).collect()
}

/// main: base (file with 20 lines); branch `topic` changes line 15.
pub(crate) fn forked() -> (TestRepo, String, String) {
    let (repo, topic) = TestRepo::with_topic_change("change line 15");
    repo.checkout("main");
    let base = repo.rev_parse("main");
    (repo, base, topic)
}

#[test]
fn a_cherry_pick_has_the_patch_id_of_its_original_with_or_without_x() {
    let (repo, _, topic) = forked();
    // Move main on in an unrelated file so the pick has another parent.
    repo.commit_file("other.txt", "x\n", "other");
    repo.git(&["cherry-pick", "-x", &topic]);
    let with_x = repo.rev_parse("HEAD");
    repo.git(&["reset", "--hard", "--quiet", "HEAD~1"]);
    repo.git(&["cherry-pick", &topic]);
    let plain = repo.rev_parse("HEAD");
    assert_ne!(with_x, plain);
    let r = open(&repo);
    let map = r.patch_ids(&ids(&[&topic, &with_x, &plain])).unwrap();
    assert_eq!(map.len(), 3);
    assert_eq!(map[&id(&topic)], map[&id(&with_x)]);
    assert_eq!(map[&id(&topic)], map[&id(&plain)]);
}

#[test]
fn a_rebase_onto_another_base_keeps_the_patch_id_and_a_code_change_does_not() {
    let (repo, _, topic) = forked();
    // main gains lines at the top: the change moves down, without conflict.
    let lines = testkit::twenty_lines();
    repo.commit_file("f.txt", format!("new top\nnew top 2\n{lines}"), "prepend");
    repo.checkout("topic");
    repo.git(&["rebase", "--quiet", "main"]);
    let rebased = repo.rev_parse("HEAD");
    // The same line changed differently.
    let other = repo.commit_file(
        "f.txt",
        format!("new top\nnew top 2\n{lines}").replace("line 15\n", "line 15!\n"),
        "different change",
    );
    let r = open(&repo);
    let map = r.patch_ids(&ids(&[&topic, &rebased, &other])).unwrap();
    assert_eq!(map[&id(&topic)], map[&id(&rebased)]);
    assert_ne!(map[&id(&topic)], map[&id(&other)]);
}

#[test]
fn merges_and_empty_commits_have_no_patch_id() {
    let (repo, base, topic) = forked();
    repo.commit_file("other.txt", "x\n", "other");
    repo.git(&["merge", "--quiet", "--no-ff", "--no-edit", "topic"]);
    let merge = repo.rev_parse("HEAD");
    let empty = repo.commit("empty");
    let r = open(&repo);
    let not_a_commit = id(&"ab".repeat(20));
    let map: HashMap<ObjectId, PatchId> = r
        .patch_ids(&[id(&merge), id(&empty), not_a_commit, id(&topic), id(&base)])
        .unwrap();
    assert!(!map.contains_key(&id(&merge)));
    assert!(!map.contains_key(&id(&empty)));
    assert!(!map.contains_key(&not_a_commit));
    // The root commit has one (everything added) and so does the topic.
    assert!(map.contains_key(&id(&base)));
    assert!(map.contains_key(&id(&topic)));
    assert!(r.patch_ids(&[]).unwrap().is_empty());
}

#[test]
fn a_branch_squashed_has_the_patch_id_of_its_combined_diff() {
    let (repo, base, _) = forked();
    repo.checkout("topic");
    repo.commit_file("g.txt", "g\n", "add g");
    let tip = repo.rev_parse("HEAD");
    repo.checkout("main");
    repo.commit_file("other.txt", "x\n", "other");
    repo.git(&["merge", "--quiet", "--squash", "topic"]);
    let squash = repo.commit("squashed topic");
    let r = open(&repo);
    let combined = r.range_patch_id(id(&base), id(&tip)).unwrap();
    let single = r.patch_ids(&[id(&squash)]).unwrap();
    assert_eq!(combined, Some(single[&id(&squash)]));
    // A range over no change has none.
    assert_eq!(r.range_patch_id(id(&tip), id(&tip)).unwrap(), None);
    // One commit's range equals its own patch-id.
    let one = r.range_patch_ids(&[(id(&base), id(&base))]).unwrap();
    assert!(one.is_empty());
}
