//! The commit-graph's changed-path Bloom filters, told from the headers of
//! what a real `git commit-graph write` leaves behind.

use gitctx::CommitGraph;
use testkit::TestRepo;

use crate::open;

/// A repository with three commits (and so something to graph).
fn three_commits() -> TestRepo {
    let repo = TestRepo::new();
    repo.commit_many(3, "n.txt");
    repo
}

fn graph(repo: &TestRepo) -> CommitGraph {
    open(repo).commit_graph()
}

#[test]
fn a_repository_without_a_graph_has_none() {
    let repo = three_commits();
    assert_eq!(graph(&repo), CommitGraph::None);
    assert!(!graph(&repo).has_changed_paths());
}

#[test]
fn a_single_graph_file_with_and_without_changed_paths() {
    let repo = three_commits();
    repo.git(&["commit-graph", "write", "--reachable"]);
    assert!(repo.join(".git/objects/info/commit-graph").is_file());
    assert_eq!(graph(&repo), CommitGraph::WithoutChangedPaths);

    open(&repo).write_commit_graph().unwrap();
    assert_eq!(graph(&repo), CommitGraph::WithChangedPaths);
    assert!(graph(&repo).has_changed_paths());
}

#[test]
fn later_writes_without_the_flag_keep_the_filters() {
    // What `ultragit init` tells the user: once written, git keeps them.
    let repo = three_commits();
    open(&repo).write_commit_graph().unwrap();
    repo.commit_file("m.txt", "m\n", "one more");
    repo.git(&["commit-graph", "write", "--reachable"]);
    assert_eq!(graph(&repo), CommitGraph::WithChangedPaths);
    repo.commit_file("m.txt", "mm\n", "and another");
    repo.git(&["gc", "--quiet"]);
    assert_eq!(graph(&repo), CommitGraph::WithChangedPaths);
    // Only an explicit `--no-changed-paths` drops them.
    repo.git(&["commit-graph", "write", "--reachable", "--no-changed-paths"]);
    assert_eq!(graph(&repo), CommitGraph::WithoutChangedPaths);
}

#[test]
fn a_split_chain_has_changed_paths_only_when_every_layer_has() {
    let repo = three_commits();
    repo.git(&[
        "commit-graph",
        "write",
        "--reachable",
        "--split=no-merge",
        "--changed-paths",
    ]);
    repo.commit_file("m.txt", "m\n", "one more");
    repo.git(&[
        "commit-graph",
        "write",
        "--reachable",
        "--split=no-merge",
        "--changed-paths",
    ]);
    let chain = repo.join(".git/objects/info/commit-graphs/commit-graph-chain");
    assert_eq!(
        std::fs::read_to_string(&chain).unwrap().lines().count(),
        2,
        "two layers"
    );
    assert!(!repo.join(".git/objects/info/commit-graph").exists());
    assert_eq!(graph(&repo), CommitGraph::WithChangedPaths);

    // A layer on top without filters.
    repo.commit_file("m.txt", "mm\n", "and another");
    repo.git(&[
        "commit-graph",
        "write",
        "--reachable",
        "--split=no-merge",
        "--no-changed-paths",
    ]);
    assert_eq!(std::fs::read_to_string(&chain).unwrap().lines().count(), 3);
    assert_eq!(graph(&repo), CommitGraph::WithoutChangedPaths);
}

#[test]
fn a_linked_worktree_reads_the_common_graph() {
    let repo = three_commits();
    open(&repo).write_commit_graph().unwrap();
    let linked = repo.add_worktree("linked", "side");
    let git = gitctx::Repo::discover(&linked).unwrap();
    assert_eq!(git.commit_graph(), CommitGraph::WithChangedPaths);
}

#[test]
fn what_cannot_be_read_counts_as_none() {
    let repo = three_commits();
    open(&repo).write_commit_graph().unwrap();
    let file = repo.join(".git/objects/info/commit-graph");
    let bytes = std::fs::read(&file).unwrap();

    // Truncated inside the chunk table.
    let mut permissions = std::fs::metadata(&file).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    permissions.set_readonly(false);
    std::fs::set_permissions(&file, permissions).unwrap();
    std::fs::write(&file, &bytes[..20]).unwrap();
    assert_eq!(graph(&repo), CommitGraph::None);

    // A link is not followed, even to a good graph.
    let elsewhere = repo.join("graph-copy");
    std::fs::write(&elsewhere, &bytes).unwrap();
    std::fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &file).unwrap();
    assert_eq!(graph(&repo), CommitGraph::None);

    // A chain that names something other than a hash.
    std::fs::remove_file(&file).unwrap();
    let graphs = repo.join(".git/objects/info/commit-graphs");
    std::fs::create_dir_all(&graphs).unwrap();
    std::fs::write(graphs.join("commit-graph-chain"), "../../../graph-copy\n").unwrap();
    assert_eq!(graph(&repo), CommitGraph::None);
}

#[test]
fn core_commit_graph_is_read_as_git_reads_it() {
    let repo = three_commits();
    let git = open(&repo);
    assert!(git.commit_graph_enabled().unwrap(), "on when unset");
    repo.git(&["config", "core.commitGraph", "off"]);
    assert!(!git.commit_graph_enabled().unwrap());
    repo.git(&["config", "core.commitGraph", "yes"]);
    assert!(git.commit_graph_enabled().unwrap());
    repo.git(&["config", "core.commitGraph", "maybe"]);
    assert!(git.commit_graph_enabled().is_err(), "git refuses it too");
}
