//! `doctor::diagnose` on real repositories: notes counted over several batches,
//! oversized and unreachable notes, hooks that are links, older blocks
//! without the cache warm-up, missing warm-up hooks, the commit-graph's
//! changed paths, and repairs that are not made when they would not be safe.

use std::path::Path;

use serde_json::json;
use testkit::{TestRepo, assert_contains, assert_ends_with, assert_starts_with};
use ultragit_notes::NOTES_REF;
use ultragit_notes::doctor::{Check, Inputs, Options, Report, Status, diagnose};
use ultragit_notes::setup::{InitOptions, init};

const EXE: &str = "/bin/sh";

fn run(repo: &TestRepo, fix: bool) -> Report {
    run_with_mode_env(repo, fix, None)
}

/// [`run`] as from an environment where `GIT_NOTES_REWRITE_MODE` is `mode`.
fn run_with_mode_env(repo: &TestRepo, fix: bool, mode: Option<&str>) -> Report {
    let r = gitctx::Repo::discover(repo.path()).unwrap();
    // The writer's crate makes the provider check (tested there).
    let provider = |_: &gitctx::Repo| Check::ok("provider", "a test provider");
    let inputs = Inputs {
        ultragit: Path::new(EXE),
        provider: &provider,
        rewrite_mode_env: mode,
    };
    diagnose(&r, &inputs, &Options { fix })
}

fn check<'a>(report: &'a Report, id: &str) -> &'a Check {
    report
        .checks
        .iter()
        .find(|c| c.id == id)
        .unwrap_or_else(|| panic!("no check {id}: {report:#?}"))
}

/// Check `id` of `report`, which must have `status`.
fn check_with<'a>(report: &'a Report, id: &str, status: Status) -> &'a Check {
    let found = check(report, id);
    assert_eq!(found.status, status, "{found:?}");
    found
}

/// `init` with a program that exists, and the key's variable named.
/// Check `id` is ok, and so is every other.
fn assert_healthy(repo: &TestRepo, id: &str) {
    let report = run(repo, false);
    check_with(&report, id, Status::Ok);
    assert!(report.ok(), "{report:#?}");
}

fn set_up(repo: &TestRepo) {
    let r = gitctx::Repo::discover(repo.path()).unwrap();
    init(&r, Path::new(EXE), &InitOptions::default()).unwrap();
    repo.git(&["config", "ultragit.apiKeyEnv", "DOCTOR_KEY"]);
}

/// A repository of one commit, set up by `init`.
fn initialized() -> TestRepo {
    let repo = TestRepo::new();
    repo.commit_file("a.txt", "a\n", "a");
    set_up(&repo);
    repo
}

fn note(commit: &str) -> String {
    json!({
        "$schema": "ultragit/v1",
        "commit": commit,
        "timestamp": "2024-01-01T00:00:00Z",
        "summary": "s",
        "context_level": "inferred",
        "regions": [],
        "provenance": {"operation": "initial"}
    })
    .to_string()
}

#[test]
fn notes_are_counted_over_batches_with_malformed_oversized_and_unreachable_ones() {
    let repo = TestRepo::new();
    let commits = repo.commit_many(600, "counter.txt");
    set_up(&repo);
    let r = gitctx::Repo::discover(repo.path()).unwrap();
    let notes = r.notes(NOTES_REF).unwrap();
    for commit in &commits {
        notes.write(commit.parse().unwrap(), &note(commit)).unwrap();
    }
    // Past the first batch of 256: two malformed, one too large.
    for bad in [&commits[300], &commits[599]] {
        notes.write(bad.parse().unwrap(), "not json").unwrap();
    }
    let huge = format!("{{\"pad\": \"{}\"}}", "x".repeat(4 * 1024 * 1024 + 1));
    notes.write(commits[400].parse().unwrap(), &huge).unwrap();
    // A note on an object no ref reaches (a commit that never came here).
    let stranger = "1234567890abcdef1234567890abcdef12345678";
    notes
        .write(stranger.parse().unwrap(), &note(stranger))
        .unwrap();

    let report = run(&repo, false);
    assert_eq!(
        check(&report, "notes-ref").message,
        "refs/notes/ultragit: 601 notes"
    );
    let malformed = check_with(&report, "malformed-notes", Status::Fail);
    assert!(
        malformed
            .message
            .starts_with("2 malformed notes `ultragit read` skips: "),
        "{}",
        malformed.message
    );
    assert_contains(&malformed.message, &commits[300][..7]);
    assert!(
        malformed.message.contains(&format!(
            "; 1 note over 4 MiB, never loaded: {}",
            &commits[400][..7]
        )),
        "{}",
        malformed.message
    );
    let unreachable = check_with(&report, "unreachable-notes", Status::Warn);
    assert_starts_with(&unreachable.message, "1 note on commits");
    assert_ends_with(&unreachable.message, ": 1234567");
    assert_eq!(
        unreachable
            .fix
            .as_deref()
            .map(|f| f.starts_with("ultragit remap")),
        Some(true)
    );
    assert!(!report.ok());
}

#[test]
fn a_hook_linked_out_of_the_repository_is_read_but_never_rewritten() {
    let repo = initialized();
    let shared = tempfile::tempdir().unwrap();
    let target = shared.path().join("post-commit");
    std::fs::write(&target, "#!/bin/sh\necho shared\n").unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let hook = repo.join(".git/hooks/post-commit");
    std::fs::remove_file(&hook).unwrap();
    std::os::unix::fs::symlink(&target, &hook).unwrap();

    let report = run(&repo, true);
    let found = check_with(&report, "hooks.post-commit", Status::Fail);
    assert_ends_with(&found.message, "has no ultragit block");
    assert_starts_with(found.fix.as_deref().unwrap(), "edit ");
    // --fix left the link and its target alone.
    assert!(report.fixed.is_empty(), "{:?}", report.fixed);
    assert!(
        std::fs::symlink_metadata(&hook)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "#!/bin/sh\necho shared\n"
    );

    // An older block in the shared file: a warning, to fix by hand.
    let older = format!(
        "#!/bin/sh\n# >>> ultragit post-commit >>>\n{EXE} annotate --async\n# <<< ultragit post-commit <<<\n"
    );
    std::fs::write(&target, &older).unwrap();
    let report = run(&repo, true);
    let found = check_with(&report, "hooks.post-commit", Status::Warn);
    assert_contains(found.fix.as_deref().unwrap(), "by hand");
    assert_contains(found.fix.as_deref().unwrap(), "cache warm");
    assert!(report.fixed.is_empty(), "{:?}", report.fixed);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), older);

    // With the whole block in the shared file, the linked hook is healthy.
    std::fs::write(
        &target,
        format!("#!/bin/sh\n# >>> ultragit post-commit >>>\n{EXE} annotate --async\n{EXE} cache warm --background &\n# <<< ultragit post-commit <<<\n"),
    )
    .unwrap();
    assert_healthy(&repo, "hooks.post-commit");
}

#[test]
fn an_older_post_commit_block_without_the_cache_warm_up_is_a_warning_init_repairs() {
    let repo = initialized();
    assert_healthy(&repo, "hooks.post-commit");
    // The block an older `ultragit init` wrote, after the user's own line.
    let hook = repo.join(".git/hooks/post-commit");
    let older = format!(
        "#!/bin/sh\n# >>> ultragit post-commit >>>\n{EXE} annotate --async >/dev/null 2>&1 || true\n# <<< ultragit post-commit <<<\necho mine\n"
    );
    std::fs::write(&hook, &older).unwrap();

    let report = run(&repo, false);
    let found = check_with(&report, "hooks.post-commit", Status::Warn);
    assert_contains(
        &found.message,
        "does not warm the read caches after a commit",
    );
    assert_starts_with(found.fix.as_deref().unwrap(), "rerun ultragit init");
    assert!(report.ok(), "a warning: commits are still annotated");
    assert_eq!(std::fs::read_to_string(&hook).unwrap(), older);

    // `--fix` rewrites the block as `init` would, keeping the user's line.
    let report = run(&repo, true);
    check_with(&report, "hooks.post-commit", Status::Ok);
    assert!(
        report
            .fixed
            .iter()
            .any(|f| f.contains("rewrote the ultragit block")),
        "{:?}",
        report.fixed
    );
    let text = std::fs::read_to_string(&hook).unwrap();
    assert_contains(&text, "cache warm --background");
    assert_ends_with(&text, "echo mine\n");

    // So does `init` itself.
    std::fs::write(&hook, &older).unwrap();
    set_up(&repo);
    assert_healthy(&repo, "hooks.post-commit");
}

#[test]
fn the_warm_up_hooks_missing_or_older_are_warnings_fix_repairs() {
    let repo = initialized();
    for id in [
        "hooks.post-rewrite",
        "hooks.post-merge",
        "hooks.post-checkout",
    ] {
        assert_healthy(&repo, id);
    }
    // A repository set up before these hooks: no post-merge, no
    // post-checkout, a post-rewrite block without the warm-up.
    std::fs::remove_file(repo.join(".git/hooks/post-merge")).unwrap();
    let checkout = repo.join(".git/hooks/post-checkout");
    std::fs::write(&checkout, "#!/bin/sh\necho mine\n").unwrap();
    let rewrite = repo.join(".git/hooks/post-rewrite");
    let older = std::fs::read_to_string(&rewrite).unwrap().replace(
        " cache warm --background </dev/null >/dev/null 2>&1 &",
        " true",
    );
    std::fs::write(&rewrite, &older).unwrap();

    let report = run(&repo, false);
    assert!(report.ok(), "warnings only: {report:#?}");
    let merge = check_with(&report, "hooks.post-merge", Status::Warn);
    assert_ends_with(
        &merge.message,
        "post-merge: does not exist: the read caches are not warmed after a merge or a git pull, so the first read after one starts cold",
    );
    assert_eq!(
        merge.fix.as_deref(),
        Some("ultragit doctor --fix (or ultragit init)")
    );
    let found = check_with(&report, "hooks.post-checkout", Status::Warn);
    assert_contains(
        &found.message,
        "has no ultragit block: the read caches are not warmed after a branch checkout",
    );
    let found = check_with(&report, "hooks.post-rewrite", Status::Warn);
    assert_contains(
        &found.message,
        "does not warm the read caches after an amend or a rebase (git pull --rebase too)",
    );
    assert_starts_with(found.fix.as_deref().unwrap(), "rerun ultragit init");

    let fixed = run(&repo, true);
    assert_eq!(fixed.fixed.len(), 3, "{:?}", fixed.fixed);
    for id in [
        "hooks.post-rewrite",
        "hooks.post-merge",
        "hooks.post-checkout",
    ] {
        check_with(&fixed, id, Status::Ok);
    }
    assert_ends_with(&std::fs::read_to_string(&checkout).unwrap(), "echo mine\n");

    // A hook in another language: no block is written into it, the fix is
    // by hand.
    let python = "#!/usr/bin/env python3\nprint('mine')\n";
    std::fs::write(&checkout, python).unwrap();
    let report = run(&repo, true);
    let found = check_with(&report, "hooks.post-checkout", Status::Warn);
    assert_contains(&found.message, "it is not a shell script");
    assert_contains(
        found.fix.as_deref().unwrap(),
        "by hand: make it run, in its own language, the lines `ultragit init` prints for it",
    );
    assert!(report.fixed.is_empty(), "{:?}", report.fixed);
    assert_eq!(std::fs::read_to_string(&checkout).unwrap(), python);

    // A link into the working tree is still a failure, warm-up hook or not.
    repo.write_executable("hooks/post-merge", "#!/bin/sh\n");
    std::fs::remove_file(repo.join(".git/hooks/post-merge")).unwrap();
    std::os::unix::fs::symlink(
        repo.join("hooks/post-merge"),
        repo.join(".git/hooks/post-merge"),
    )
    .unwrap();
    check_with(&run(&repo, false), "hooks.post-merge", Status::Fail);
}

#[test]
fn a_missing_changed_path_commit_graph_is_a_warning_fix_writes_one() {
    let repo = initialized();
    assert_healthy(&repo, "commit-graph");
    std::fs::remove_file(repo.join(".git/objects/info/commit-graph")).unwrap();
    let report = run(&repo, false);
    let found = check_with(&report, "commit-graph", Status::Warn);
    assert_starts_with(&found.message, "there is no commit-graph");
    assert_eq!(
        found.fix.as_deref(),
        Some("git commit-graph write --reachable --changed-paths (or ultragit doctor --fix)")
    );
    assert!(report.ok());

    // The graph `git gc` writes by default, without the filters.
    repo.git(&["commit-graph", "write", "--reachable"]);
    let report = run(&repo, false);
    let found = check_with(&report, "commit-graph", Status::Warn);
    assert_starts_with(
        &found.message,
        "the commit-graph has no changed-path Bloom filters",
    );

    let fixed = run(&repo, true);
    check_with(&fixed, "commit-graph", Status::Ok);
    assert!(
        fixed
            .fixed
            .iter()
            .any(|f| f.starts_with("wrote a commit-graph with changed-path Bloom filters")),
        "{:?}",
        fixed.fixed
    );
    let git = gitctx::Repo::discover(repo.path()).unwrap();
    assert!(git.commit_graph().has_changed_paths());

    // Turned off by the user: their choice, nothing to fix.
    std::fs::remove_file(repo.join(".git/objects/info/commit-graph")).unwrap();
    repo.git(&["config", "core.commitGraph", "false"]);
    let report = run(&repo, true);
    let found = check_with(&report, "commit-graph", Status::Ok);
    assert_starts_with(&found.message, "core.commitGraph is false");
    assert!(report.fixed.is_empty(), "{:?}", report.fixed);
    assert!(!repo.join(".git/objects/info/commit-graph").exists());
}

#[test]
fn a_notes_glob_in_rewrite_ref_covers_ultragit() {
    let repo = initialized();
    repo.git(&[
        "config",
        "--replace-all",
        "notes.rewriteRef",
        "refs/notes/*",
    ]);
    repo.git(&["config", "notes.rewriteMode", "overwrite"]);
    assert_healthy(&repo, "rewrite-config");
}

#[test]
fn the_rewrite_mode_is_reported_never_required() {
    let repo = initialized();
    let check = |report: &Report, status: Status, says: &[&str]| {
        let found = check_with(report, "rewrite-config", status);
        for text in says {
            assert_contains(&found.message, text);
        }
        found.clone()
    };
    // `init` leaves it unset: git's default is fine.
    let report = run(&repo, false);
    let found = check(
        &report,
        Status::Ok,
        &[
            "notes.rewriteMode is not set (git's default: concatenate)",
            "the post-rewrite hook rewrites refs/notes/ultragit whatever the mode",
        ],
    );
    assert_eq!(found.fix, None);
    assert!(report.ok(), "{report:#?}");
    for mode in ["concatenate", "cat_sort_uniq", "overwrite", "Ignore"] {
        repo.git(&["config", "notes.rewriteMode", mode]);
        let report = run(&repo, false);
        check(
            &report,
            Status::Ok,
            &[&format!("notes.rewriteMode={mode};")],
        );
        assert!(report.ok(), "{mode}: {report:#?}");
    }
    // `ignore` (what older `init`s set) is pointed out, and left alone.
    repo.git(&["config", "notes.rewriteMode", "ignore"]);
    let report = run(&repo, true);
    check(
        &report,
        Status::Ok,
        &[
            "older versions of `ultragit init` set ignore",
            "git config --unset notes.rewriteMode",
        ],
    );
    assert!(report.fixed.is_empty(), "{:?}", report.fixed);
    assert_eq!(repo.git(&["config", "notes.rewriteMode"]), "ignore\n");
    // The environment's mode wins for git, and is named.
    let report = run_with_mode_env(&repo, false, Some("overwrite"));
    check(
        &report,
        Status::Ok,
        &["notes.rewriteMode=ignore, GIT_NOTES_REWRITE_MODE=overwrite overrides it here"],
    );

    // A mode git does not know is a warning, fixed by hand only.
    repo.git(&["config", "notes.rewriteMode", "bogus"]);
    let report = run(&repo, true);
    let found = check(
        &report,
        Status::Warn,
        &[
            "notes.rewriteMode=bogus is not a mode git knows",
            "git reports an error",
        ],
    );
    assert_starts_with(
        found.fix.as_deref().unwrap(),
        "git config --unset notes.rewriteMode",
    );
    assert!(report.ok() && report.fixed.is_empty(), "{report:#?}");
    repo.git(&["config", "--unset", "notes.rewriteMode"]);
    let report = run_with_mode_env(&repo, false, Some(""));
    let found = check(
        &report,
        Status::Warn,
        &["GIT_NOTES_REWRITE_MODE='' is not a mode git knows"],
    );
    assert_eq!(found.fix.as_deref(), Some("unset GIT_NOTES_REWRITE_MODE"));
}

#[test]
fn rewrite_config_still_fails_without_rewriting_and_fix_never_sets_the_mode() {
    let repo = initialized();
    repo.git(&["config", "--unset-all", "notes.rewriteRef"]);
    repo.git(&["config", "notes.rewrite.amend", "false"]);
    repo.git(&["config", "notes.rewriteMode", "bogus"]);
    let report = run(&repo, false);
    let found = check_with(&report, "rewrite-config", Status::Fail);
    assert_eq!(
        found.message,
        "notes.rewriteRef is not set, so amend and rebase leave annotations behind; \
         notes.rewrite.amend=false; notes.rewriteMode=bogus is not a mode git knows"
    );
    assert_eq!(
        found.fix.as_deref(),
        Some(
            "git config --add notes.rewriteRef refs/notes/ultragit && \
             git config notes.rewrite.amend true && git config --unset notes.rewriteMode \
             (or set one of concatenate, cat_sort_uniq, overwrite, ignore)"
        )
    );

    let report = run(&repo, true);
    assert_eq!(
        report.fixed,
        ["set notes.rewriteRef=refs/notes/ultragit, notes.rewrite.amend=true in .git/config"]
    );
    check_with(&report, "rewrite-config", Status::Warn);
    assert_eq!(repo.git(&["config", "notes.rewriteMode"]), "bogus\n");
    repo.git(&["config", "--unset", "notes.rewriteMode"]);
    assert_healthy(&repo, "rewrite-config");
}
