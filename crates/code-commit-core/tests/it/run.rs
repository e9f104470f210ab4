//! The whole loop on temporary projects, with the model behind the fake Chat
//! Completions server on 127.0.0.1.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use code_commit_core::Error;
use code_commit_core::build::BuildOptions;
use code_commit_core::run::{self, Report, RunOptions, Step};
use code_commit_core::undo::{Kept, Reverted, Undo, Way};
use testkit::{FakeLlm, Reply, TestRepo, assert_contains, assert_starts_with, files_under};

use crate::support::{block, blocks, drive, fixing, log};

const KEY: &str = "sk-code-commit-secret-key-Zq";

/// A project whose build passes when `src/value.txt` says `fixed`.
fn project() -> TestRepo {
    let repo = TestRepo::new();
    repo.code_commit_project(
        "#!/bin/sh\necho building\nif grep -q fixed src/value.txt 2>/dev/null; then echo ok; exit 0; fi\necho 'error: src/value.txt does not say fixed' >&2\nexit 1\n",
        &[
            (".gitignore", "/agent-config\ntarget/\n*.log\n"),
            ("src/value.txt", "broken\n"),
            ("src/other.txt", "other\n"),
            ("Cargo.lock", "# lock\n"),
        ],
        &[
            ("query.txt", "Make src/value.txt say fixed.\n"),
            (
                "codeRollup.txt",
                "=== src/value.txt ===\nbroken\n=== src/other.txt ===\nother\n",
            ),
        ],
    );
    repo
}

/// Runs the loop against `script`; returns the report (or error), the steps and
/// the server (for its recorded requests).
fn go(repo: &TestRepo, script: Vec<Reply>) -> (Result<Report, Error>, Vec<Step>, FakeLlm) {
    go_beside(repo, script, async {})
}

/// [`go`] on a new [`project`], which it returns too.
fn go_project(script: Vec<Reply>) -> (TestRepo, Result<Report, Error>, Vec<Step>, FakeLlm) {
    let repo = project();
    let (result, steps, server) = go(&repo, script);
    (repo, result, steps, server)
}

/// [`go`] with `beside` running as another task on the same thread (a
/// `LocalSet`), stopped when the loop ends.
fn go_beside(
    repo: &TestRepo,
    script: Vec<Reply>,
    beside: impl std::future::Future<Output = ()> + 'static,
) -> (Result<Report, Error>, Vec<Step>, FakeLlm) {
    drive(repo, script, KEY, &options(), beside)
}

/// The options of the tests: a one-minute build that must not see the key.
fn options() -> RunOptions {
    RunOptions {
        build: BuildOptions {
            timeout: Duration::from_secs(60),
            scrub_values: vec![KEY.to_owned()],
            ..BuildOptions::default()
        },
        ..RunOptions::default()
    }
}

/// The names of the files in the run's log folder.
fn log_files(report: &Report) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(&report.log_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The log files of a run of `attempts` model calls, sorted.
fn logs_of(attempts: u32) -> Vec<String> {
    let mut names: Vec<String> = (1..=attempts)
        .flat_map(|n| ["applied", "build", "query", "response"].map(|log| format!("{n}-{log}.txt")))
        .collect();
    names.push("summary.txt".to_owned());
    names
}

/// The user message of the n-th request.
fn prompt(server: &FakeLlm, n: usize) -> String {
    let body = server.requests()[n].json();
    let messages = body["messages"].as_array().unwrap();
    messages
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Every file of the working tree (outside .git and agent-config) with its content.
fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    files_under(root)
        .into_iter()
        .filter_map(|path| {
            let rel = path.strip_prefix(root).unwrap();
            let skipped = rel.starts_with(".git") || rel.starts_with("agent-config");
            let rel = rel.to_string_lossy().into_owned();
            (!skipped).then(|| (rel, std::fs::read(&path).unwrap()))
        })
        .collect()
}

/// Checks that the repair prompt `repair` carries the output of a build of
/// `src/value.txt` saying `still broken`, and that replacement.
fn assert_carries_the_failed_build(repair: &str) {
    assert_contains(repair, "error: src/value.txt does not say fixed");
    assert_contains(
        repair,
        "--- FILE REPLACEMENT [src/value.txt] ---\nstill broken\n",
    );
}

#[test]
fn passes_first_time() {
    let repo = project();
    let (result, steps, server) = go(&repo, vec![fixing("Here you go.\n\n")]);
    let report = result.unwrap();
    assert!(report.passed);
    assert_eq!(report.attempts, 1);
    assert_eq!(report.changed, ["src/value.txt"]);
    assert_eq!(
        std::fs::read_to_string(repo.join("src/value.txt")).unwrap(),
        "fixed\n"
    );
    assert_eq!(log_files(&report), logs_of(1));
    let build = log(&report, "1-build.txt");
    assert_starts_with(&build, "build.sh exited with status 0");
    assert_contains(&build, "building\nok");
    assert!(matches!(
        steps.last(),
        Some(Step::Built { passed: true, .. })
    ));
    // The initial prompt: system prompts, then the query and the codebase.
    let body = server.requests()[0].json();
    let system = body["messages"][0]["content"].as_str().unwrap().to_owned();
    assert_starts_with(&system, "# Project structure");
    assert!(system.contains("# How to change files"));
    assert!(system.ends_with("so that `build.sh` passes. Reply with the blocks of every file you create, change or remove."));
    let user = prompt(&server, 0);
    assert_starts_with(
        &user,
        "# Query\n\nMake src/value.txt say fixed.\n\n# Codebase\n\n=== src/value.txt",
    );
    // The key went in the header only.
    assert_eq!(
        server.requests()[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert!(!String::from_utf8_lossy(&server.requests()[0].body).contains(KEY));
}

#[test]
fn passes_after_one_repair_with_the_build_output_and_the_latest_replacements() {
    let (_repo, result, _steps, server) = go_project(vec![
        blocks(&[
            ("src/value.txt", "still broken\n"),
            ("src/new.txt", "new\n"),
        ]),
        fixing(""),
    ]);
    let report = result.unwrap();
    assert!(report.passed);
    assert_eq!(report.attempts, 2);
    assert_eq!(report.changed, ["src/new.txt", "src/value.txt"]);
    let repair = prompt(&server, 1);
    assert_starts_with(
        &repair,
        "# build.sh output\n\nbuild.sh exited with status 1",
    );
    assert_carries_the_failed_build(&repair);
    assert_contains(&repair, "--- FILE REPLACEMENT [src/new.txt] ---\nnew\n");
    let system = server.requests()[1].json()["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_contains(&system, "# Task: repair");
    assert_eq!(log_files(&report), logs_of(2));
}

#[test]
fn repair_prompts_carry_only_the_latest_replacement_of_each_file() {
    let (repo, result, _steps, server) = go_project(vec![
        blocks(&[
            ("src/value.txt", "version one\n"),
            ("src/other.txt", "changed other\n"),
        ]),
        Reply::text(&format!(
            "{}^^^src/other.txt\n^^^delete\n",
            block("src/value.txt", "version two\n")
        )),
        Reply::text(&block("src/value.txt", "version three\n")),
        fixing(""),
    ]);
    let report = result.unwrap();
    assert!(report.passed);
    assert_eq!(report.attempts, 4, "passes after three repairs");
    let third = prompt(&server, 2);
    assert_contains(
        &third,
        "--- FILE REPLACEMENT [src/value.txt] ---\nversion two\n",
    );
    assert!(!third.contains("version one"), "{third}");
    assert_contains(&third, "--- FILE REMOVED [src/other.txt] ---");
    assert!(!third.contains("changed other"), "{third}");
    let fourth = prompt(&server, 3);
    assert_eq!(
        fourth
            .matches("--- FILE REPLACEMENT [src/value.txt] ---")
            .count(),
        1
    );
    assert!(fourth.contains("version three") && !fourth.contains("version two"));
    assert!(!repo.join("src/other.txt").exists());
}

#[test]
fn fails_after_three_repairs_and_leaves_the_changes_for_review() {
    let repo = project();
    let attempt = |n: usize| Reply::text(&block("src/value.txt", &format!("attempt {n}\n")));
    let (result, _steps, server) = go(&repo, (1..=4).map(attempt).collect());
    let report = result.unwrap();
    assert!(!report.passed);
    assert_eq!(report.attempts, 4);
    assert_eq!(server.requests().len(), 4);
    let failure = report.failure.as_deref().unwrap();
    assert_contains(failure, "still fails after 3 repair rounds");
    assert_eq!(
        std::fs::read_to_string(repo.join("src/value.txt")).unwrap(),
        "attempt 4\n"
    );
    let summary = log(&report, "summary.txt");
    assert_starts_with(&summary, "result: failed\nattempts: 4\n");
}

/// Issue 18 item 15: a failed run says which files it left changed and how to
/// undo them; the commands it gives, run in the project, do.
#[test]
fn a_failed_run_says_how_to_undo_what_it_left() {
    let repo = project();
    // Uncommitted work in a file the model then rewrites, and an untracked file.
    repo.write("src/other.txt", "my uncommitted edit\n");
    repo.write("notes.txt", "untracked\n");
    let before = tree(repo.path());
    let (result, steps, _server) = drive(
        &repo,
        vec![blocks(&[
            ("src/value.txt", "nope\n"),
            ("src/deep/er/new file.txt", "new\n"),
            ("src/other.txt", "model's\n"),
        ])],
        KEY,
        &RunOptions {
            max_repairs: 0,
            ..options()
        },
        async {},
    );
    let report = result.unwrap();
    assert!(!report.passed);
    let kept = Kept {
        files: vec![
            ("src/deep/er/new file.txt".into(), Way::Remove),
            ("src/other.txt".into(), Way::NotInGit),
            ("src/value.txt".into(), Way::Restore),
        ],
    };
    assert_eq!(report.undo, Some(Undo::Kept(kept.clone())));
    assert_eq!(steps.last(), Some(&Step::Undo(Undo::Kept(kept.clone()))));
    let summary = log(&report, "summary.txt");
    assert_contains(
        &summary,
        "left in the working tree (not staged); to undo:\n  git restore --source=HEAD --worktree -- src/value.txt\n  rm -- 'src/deep/er/new file.txt'\n  src/other.txt: its content before the run is not in git\n",
    );
    // Nothing is staged: the index is as HEAD has it.
    assert_eq!(repo.git(&["diff", "--cached", "--name-only"]), "");
    for command in kept.commands() {
        let mut sh = std::process::Command::new("sh");
        sh.args(["-c", &command]).current_dir(repo.path());
        testkit::isolate(&mut sh);
        assert!(sh.status().unwrap().success(), "{command}");
    }
    let mut expected = before;
    expected.insert("src/other.txt".into(), b"model's\n".to_vec());
    assert_eq!(tree(repo.path()), expected);
}

/// Issue 18 item 15: `revert_on_failure` puts back exactly the files the run
/// changed — uncommitted content and permissions included — removes those it
/// created with their new directories, and touches nothing else.
#[test]
fn revert_on_failure_puts_back_exactly_what_the_run_changed() {
    use std::os::unix::fs::PermissionsExt as _;
    let repo = project();
    repo.write_executable("tool.sh", "#!/bin/sh\necho tool\n");
    repo.commit_all("a tool");
    repo.write("src/value.txt", "broken, with my uncommitted edit\n");
    repo.write("src/other.txt", "unrelated uncommitted edit\n");
    repo.write("notes.txt", "untracked\n");
    let before = tree(repo.path());
    let (result, steps, _server) = drive(
        &repo,
        vec![
            Reply::text(&format!(
                "{}{}^^^tool.sh\n^^^delete\n",
                block("src/value.txt", "nope\n"),
                block("src/deep/new.txt", "new\n"),
            )),
            blocks(&[("src/value.txt", "nope again\n")]),
        ],
        KEY,
        &RunOptions {
            max_repairs: 1,
            revert_on_failure: true,
            ..options()
        },
        async {},
    );
    let report = result.unwrap();
    assert!(!report.passed);
    let reverted = Reverted {
        restored: vec!["src/value.txt".into(), "tool.sh".into()],
        removed: vec!["src/deep/new.txt".into()],
        failed: vec![],
    };
    assert_eq!(report.undo, Some(Undo::Reverted(reverted.clone())));
    assert_eq!(steps.last(), Some(&Step::Undo(Undo::Reverted(reverted))));
    assert_eq!(tree(repo.path()), before);
    assert!(!repo.join("src/deep").exists());
    let mode = std::fs::metadata(repo.join("tool.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755);
    assert_contains(
        &log(&report, "summary.txt"),
        "reverted (--revert-on-failure):\n  restored src/value.txt\n  restored tool.sh\n  removed src/deep/new.txt\n",
    );
}

/// A run ended by an error after a change applied also says what it left.
#[test]
fn a_run_ended_by_an_error_says_what_it_left() {
    let failing = blocks(&[("src/value.txt", "nope\n")]);
    let (result, steps, _server) = go(&project(), vec![failing, Reply::error(401, "bad key")]);
    assert!(matches!(result, Err(Error::Provider(_))), "{result:?}");
    let kept = Kept {
        files: vec![("src/value.txt".into(), Way::Restore)],
    };
    assert_eq!(steps.last(), Some(&Step::Undo(Undo::Kept(kept))));
}

#[test]
fn rejected_responses_change_nothing_and_are_repaired() {
    let repo = project();
    let before = tree(repo.path());
    let (result, steps, server) = go(
        &repo,
        vec![
            // A protected path spoils the whole response.
            blocks(&[("src/value.txt", "fixed\n"), ("Cargo.lock", "# mine now\n")]),
            // No blocks at all.
            Reply::text("I think you should edit src/value.txt."),
            // Cut off by the token limit.
            Reply::max_tokens("^^^src/value.txt\nfix"),
            fixing(""),
        ],
    );
    let report = result.unwrap();
    assert!(report.passed);
    assert_eq!(report.attempts, 4);
    let rejected: Vec<u32> = steps
        .iter()
        .filter_map(|s| match s {
            Step::Rejected { attempt, .. } => Some(*attempt),
            _ => None,
        })
        .collect();
    assert_eq!(rejected, [1, 2, 3]);
    let second = prompt(&server, 1);
    assert_contains(&second, "rejected and NOTHING from it was applied");
    assert_contains(&second, "Cargo.lock");
    assert_contains(&second, "(none: no file has been changed yet)");
    assert_contains(&prompt(&server, 2), "no ^^^");
    assert!(prompt(&server, 3).contains("cut off by the output token limit"));
    // Only the final, accepted change differs from the start.
    let mut expected = before;
    expected.insert("src/value.txt".into(), b"fixed\n".to_vec());
    assert_eq!(tree(repo.path()), expected);
    assert!(report.log_dir.join("1-rejected.txt").is_file());
    assert!(!report.log_dir.join("1-build.txt").exists());
}

#[test]
fn a_repair_after_a_rejection_carries_the_reasons_and_the_last_build_output() {
    let failing = Reply::text(&block("src/value.txt", "still broken\n"));
    let rejected = Reply::text("I would change src/value.txt.");
    let (result, _steps, server) = go(&project(), vec![failing, rejected, fixing("")]);
    assert!(result.unwrap().passed);
    let third = prompt(&server, 2);
    assert_starts_with(
        &third,
        "# Rejected response\n\nYour previous response was rejected and NOTHING from it was applied",
    );
    assert_contains(&third, "- the response has no ^^^path");
    assert_contains(
        &third,
        "# build.sh output\n\n(from the build of attempt 1; the files have not changed since)\nbuild.sh exited with status 1\n",
    );
    assert_carries_the_failed_build(&third);
}

/// A build printing about 110 KiB: the repair prompt carries all of it by
/// default (256 KiB), and its start and end with the cut marked under a
/// smaller `build_output_bytes`.
#[test]
fn the_repair_prompt_carries_the_build_output_up_to_its_cap() {
    let build = "#!/bin/sh\ni=1\nwhile [ $i -le 3000 ]; do echo \"line $i of a long and chatty build\" >&2; i=$((i+1)); done\ngrep -q fixed src/value.txt\n";
    let run = |options: &RunOptions| {
        let repo = project();
        repo.write_executable("build.sh", build);
        let (result, _steps, server) = drive(
            &repo,
            vec![blocks(&[("src/value.txt", "nope\n")]), fixing("")],
            KEY,
            options,
            async {},
        );
        assert!(result.unwrap().passed);
        let repair = prompt(&server, 1);
        repair.split("\n\n# Query").next().unwrap().to_owned()
    };
    let whole = run(&options());
    assert!(whole.len() > 100 * 1024, "{}", whole.len());
    for line in ["line 1 of", "line 1500 of", "line 3000 of"] {
        assert_contains(&whole, line);
    }
    assert!(!whole.contains("cut here"));

    let capped = run(&RunOptions {
        build_output_bytes: 4096,
        ..options()
    });
    assert!(
        capped.len() <= 4096 + "# build.sh output\n\n".len(),
        "{}",
        capped.len()
    );
    assert_contains(
        &capped,
        "build.sh exited with status 1\n--- stdout ---\n--- stderr ---\nline 1 of",
    );
    assert_contains(&capped, " bytes (");
    assert_contains(&capped, " lines) of output cut here ...]\n");
    assert!(
        capped
            .trim_end()
            .ends_with("line 3000 of a long and chatty build")
    );
    assert!(!capped.contains("line 1500 of"));
}

#[test]
fn a_repeated_response_stops_the_repairs() {
    let repo = project();
    let same = block("src/value.txt", "nope\n");
    let (result, _steps, server) = go(
        &repo,
        vec![Reply::text(&same), Reply::text(&same), Reply::text(&same)],
    );
    let report = result.unwrap();
    assert!(!report.passed);
    assert_eq!(report.attempts, 2);
    assert_eq!(server.requests().len(), 2);
    assert!(report.failure.unwrap().contains("repeated"));
}

#[test]
fn the_key_never_reaches_the_logs_or_the_build() {
    let repo = project();
    repo.write_executable(
        "build.sh",
        "#!/bin/sh\nenv > build-env.txt\ngrep -q fixed src/value.txt\n",
    );
    repo.write(
        ".gitignore",
        "/agent-config\ntarget/\n*.log\nbuild-env.txt\n",
    );
    let (result, _steps, _server) = go(
        &repo,
        vec![fixing(&format!("By the way your key is {KEY}.\n"))],
    );
    let report = result.unwrap();
    assert!(report.passed);
    for name in log_files(&report) {
        let text = log(&report, &name);
        assert!(!text.contains(KEY), "{name} leaks the key");
    }
    let response = log(&report, "1-response.txt");
    assert!(
        response.contains("Zq"),
        "only the last two characters stay: {response}"
    );
    let env = std::fs::read_to_string(repo.join("build-env.txt")).unwrap();
    assert!(!env.contains(KEY));
}

#[test]
fn preflight_names_what_is_missing() {
    let repo = project();
    std::fs::remove_file(repo.join("agent-config/codeRollup.txt")).unwrap();
    let err = run::preflight(repo.path()).unwrap_err();
    assert_starts_with(&err.to_string(), "agent-config/codeRollup.txt is missing");
    std::fs::remove_file(repo.join("agent-config/query.txt")).unwrap();
    let err = run::preflight(repo.path()).unwrap_err();
    assert_starts_with(&err.to_string(), "agent-config/query.txt is missing");

    let repo = project();
    repo.write(".gitignore", "agent-config\n");
    let err = run::preflight(repo.path()).unwrap_err();
    assert!(matches!(err, Error::NotIgnored), "{err:?}");
    assert!(err.to_string().contains("/agent-config"));
    repo.write(".gitignore", "# code-commit\n/agent-config/\n");
    run::preflight(repo.path()).unwrap();

    std::fs::remove_file(repo.join("build.sh")).unwrap();
    let err = run::preflight(repo.path()).unwrap_err();
    assert_starts_with(&err.to_string(), "build.sh is missing");
}

#[test]
fn provider_errors_stop_the_run_and_are_logged() {
    let repo = project();
    let (result, _steps, _server) = go(&repo, vec![Reply::error(401, &format!("bad key {KEY}"))]);
    let err = result.unwrap_err();
    assert!(matches!(err, Error::Provider(_)), "{err:?}");
    assert!(!err.to_string().contains(KEY), "{err}");
    let logs = repo.join("agent-config/logs");
    let run_dir = std::fs::read_dir(logs)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let error = std::fs::read_to_string(run_dir.join("1-error.txt")).unwrap();
    assert_contains(&error, "401");
    assert!(!error.contains(KEY));
}

#[test]
fn preflight_refuses_a_tracked_agent_config_before_reading_it() {
    let repo = project();
    repo.git(&["add", "-f", "agent-config/query.txt"]);
    repo.commit("track the query");
    // Nothing is read from it: a FIFO there would hang any read.
    std::fs::remove_file(repo.join("agent-config/codeRollup.txt")).unwrap();
    testkit::mkfifo(&repo.join("agent-config/codeRollup.txt"));
    let err = run::preflight(repo.path()).unwrap_err();
    assert!(matches!(&err, Error::Tracked { path, more: 0 } if path == "agent-config/query.txt"));
    let text = err.to_string();
    assert_starts_with(&text, "git tracks agent-config/query.txt: ");
    assert_contains(&text, "git rm -r --cached agent-config");

    // In a subdirectory project, paths are the project's.
    let repo = TestRepo::new();
    repo.write("app/.gitignore", "/agent-config\n")
        .write_executable("app/build.sh", "#!/bin/sh\n")
        .write("app/agent-config/query.txt", "q\n")
        .write("app/agent-config/codeRollup.txt", "r\n")
        .write("app/agent-config/config.toml", "model = \"m\"\n");
    repo.git(&["add", "-f", "app"]);
    repo.commit("app");
    let err = run::preflight(&repo.join("app")).unwrap_err();
    assert_eq!(
        err.to_string().split(':').next().unwrap(),
        "git tracks agent-config/codeRollup.txt (and 2 more file(s) under agent-config/)"
    );
}

/// Replaces the file `rel` of `repo` with a FIFO.
fn replace_with_fifo(repo: &TestRepo, rel: &str) {
    std::fs::remove_file(repo.join(rel)).unwrap();
    testkit::mkfifo(&repo.join(rel));
}

/// Replaces the file `rel` of `repo` with a symbolic link to `target`.
fn replace_with_link(repo: &TestRepo, rel: &str, target: &Path) {
    std::fs::remove_file(repo.join(rel)).unwrap();
    std::os::unix::fs::symlink(target, repo.join(rel)).unwrap();
}

#[test]
fn preflight_reads_only_regular_files_without_links() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("text"), "/agent-config\n").unwrap();
    let check = |setup: &dyn Fn(&TestRepo), says: &str| {
        let repo = project();
        setup(&repo);
        let err = run::preflight(repo.path()).unwrap_err().to_string();
        assert_starts_with(&err, says);
    };
    check(
        &|repo| replace_with_fifo(repo, "agent-config/query.txt"),
        "agent-config/query.txt: is a FIFO, not a regular file",
    );
    check(
        &|repo| {
            replace_with_link(
                repo,
                "agent-config/codeRollup.txt",
                &outside.path().join("text"),
            )
        },
        "agent-config/codeRollup.txt: is a symbolic link",
    );
    check(
        &|repo| replace_with_link(repo, ".gitignore", &outside.path().join("text")),
        ".gitignore: is a symbolic link",
    );
    check(
        &|repo| {
            let mut text = "/agent-config\n".to_owned();
            text.push_str(&"#\n".repeat(600 * 1024));
            repo.write(".gitignore", text);
        },
        ".gitignore: is larger than the limit of 1 MiB",
    );
    check(
        &|repo| replace_with_fifo(repo, "build.sh"),
        "build.sh: is a FIFO, not a regular file",
    );
    check(
        &|repo| replace_with_link(repo, "build.sh", Path::new("/bin/true")),
        "build.sh: is a symbolic link, not a regular file",
    );
    // agent-config/ itself a link.
    check(
        &|repo| {
            let real = repo.join("agent-config");
            std::fs::rename(&real, outside.path().join("moved")).unwrap();
            std::os::unix::fs::symlink(outside.path().join("moved"), &real).unwrap();
        },
        "agent-config/query.txt: agent-config/ is a symbolic link",
    );
}

/// `build.sh` runs off the runtime's thread: here it waits for a file that
/// another task of the same single-threaded runtime writes once the build has
/// started. A build blocking the thread would never see it, and fail.
#[test]
fn the_build_does_not_block_the_runtime() {
    let repo = project();
    repo.write_executable(
        "build.sh",
        "#!/bin/sh\ntouch started\ni=0\nwhile [ ! -e go ]; do\n  i=$((i+1))\n  if [ $i -gt 1200 ]; then echo 'nobody said go' >&2; exit 1; fi\n  sleep 0.05\ndone\necho went\n",
    );
    let root = repo.path().to_path_buf();
    let beside = async move {
        while !root.join("started").exists() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        std::fs::write(root.join("go"), "").unwrap();
    };
    let (result, steps, _server) = go_beside(&repo, vec![fixing("")], beside);
    let report = result.unwrap();
    assert!(report.passed, "{:?}", report.failure);
    assert!(steps.contains(&Step::Built {
        attempt: 1,
        passed: true,
        status: "build.sh exited with status 0".to_owned(),
    }));
}
