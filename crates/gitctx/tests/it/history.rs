//! The walks that choose which commits to compare: unreachable from some
//! commits or from every ref, committed since a date, what the reflog says.

use crate::patch_id::forked;
use crate::{id, open};
use testkit::assert_starts_with;

/// With a commit-graph the walks are git's (`git rev-list`), without one
/// libgit2's: the answers are the same.
fn graphed(repo: &testkit::TestRepo, graph: bool) {
    if graph {
        repo.git(&["commit-graph", "write", "--reachable"]);
        assert_ne!(open(repo).commit_graph(), gitctx::CommitGraph::None);
    }
}

#[test]
fn unreachable_commits_and_commits_since_a_date() {
    unreachable_and_since(false);
    unreachable_and_since(true);
}

fn unreachable_and_since(graph: bool) {
    let (repo, base, topic) = forked();
    graphed(&repo, graph);
    let on_main = repo.commit_file("other.txt", "x\n", "other");
    let r = open(&repo);
    let found = r
        .unreachable_from(
            &[id(&topic), id(&base), id(&on_main), id(&"cd".repeat(20))],
            &[id(&on_main)],
        )
        .unwrap();
    assert_eq!(found, vec![id(&topic)]);
    assert!(
        r.unreachable_from(&[id(&topic)], &[id(&topic)])
            .unwrap()
            .is_empty()
    );

    let all = r.commits_since(id(&on_main), 0, 100).unwrap();
    assert_eq!(all, vec![id(&on_main), id(&base)]);
    let info = r.commit_info_by_id(id(&on_main)).unwrap();
    let recent = r
        .commits_since(id(&on_main), info.committer.time.seconds, 100)
        .unwrap();
    assert_eq!(recent, vec![id(&on_main)]);
    assert_eq!(r.commits_since(id(&on_main), 0, 1).unwrap().len(), 1);
}

#[test]
fn the_reflog_tells_a_cherry_pick() {
    let (repo, _, topic) = forked();
    repo.git(&["cherry-pick", &topic]);
    let picked = repo.rev_parse("HEAD");
    let plain = repo.commit_file("z.txt", "z\n", "plain");
    let r = open(&repo);
    let message = r.reflog_message("HEAD", id(&picked), 50).unwrap().unwrap();
    assert_starts_with(&message, "cherry-pick");
    let message = r.reflog_message("HEAD", id(&plain), 50).unwrap().unwrap();
    assert_starts_with(&message, "commit");
    assert_eq!(r.reflog_message("HEAD", id(&topic), 0).unwrap(), None);
    assert_eq!(
        r.reflog_message("refs/heads/nope", id(&topic), 50).unwrap(),
        None
    );
}

#[test]
fn unreachable_from_every_ref_counts_missing_commits() {
    unreachable_from_refs(false);
    unreachable_from_refs(true);
}

fn unreachable_from_refs(graph: bool) {
    let (repo, base, topic) = forked();
    graphed(&repo, graph);
    let r = open(&repo);
    let missing = id(&"cd".repeat(20));
    // `topic` is still a branch: everything but the missing id is reachable.
    assert_eq!(
        r.unreachable_from_refs(&[id(&topic), id(&base), missing])
            .unwrap(),
        vec![missing]
    );
    repo.git(&["branch", "-D", "topic"]);
    let mut expected = vec![id(&topic), missing];
    expected.sort();
    assert_eq!(
        r.unreachable_from_refs(&[missing, id(&base), id(&topic)])
            .unwrap(),
        expected
    );
    // A tag on a blob hides nothing and breaks nothing.
    let blob = repo.git(&["hash-object", "-w", "f.txt"]);
    repo.git(&["tag", "blob-tag", blob.trim()]);
    assert_eq!(
        r.unreachable_from_refs(&[id(&topic)]).unwrap(),
        vec![id(&topic)]
    );
    assert!(r.unreachable_from_refs(&[]).unwrap().is_empty());
}

#[test]
fn the_reflog_names_an_amend_only_at_depth_one_when_it_is_newest() {
    let (repo, _, _) = forked();
    repo.commit_file("a.txt", "a\n", "first");
    let amended = repo.amend(Some("first, amended"));
    let r = open(&repo);
    let message = r.reflog_message("HEAD", id(&amended), 1).unwrap().unwrap();
    assert_starts_with(&message, "commit (amend)");
    let later = repo.commit_file("b.txt", "b\n", "later");
    assert_eq!(r.reflog_message("HEAD", id(&amended), 1).unwrap(), None);
    assert!(r.reflog_message("HEAD", id(&later), 1).unwrap().is_some());
}
