//! Whole runs of the binary on temporary projects, the model behind the fake
//! server on 127.0.0.1.

use std::path::Path;

use testkit::{FakeLlm, Flavor, Reply, TestRepo, assert_starts_with};

use crate::{Run, code_commit_with};

pub(crate) const KEY: &str = "sk-binary-run-secret-7Hq";

/// Runs code-commit in `dir` with a fresh, empty home (no user configuration
/// or key file from the machine running the tests), then `env`.
pub(crate) fn code_commit(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let home = tempfile::tempdir().unwrap();
    code_commit_with(dir, args, home.path(), |cmd| {
        cmd.envs(env.iter().copied());
    })
}

pub(crate) fn project(server: &FakeLlm) -> TestRepo {
    let repo = TestRepo::new();
    set_up(&repo, server);
    repo
}

/// Makes `repo` a project whose build passes once value.txt says fixed, with
/// the query and the rollup in `agent-config/` (and no configuration).
pub(crate) fn set_up_value_project(repo: &TestRepo) {
    repo.code_commit_project(
        "#!/bin/sh\ngrep -q fixed value.txt\n",
        &[("value.txt", "broken\n")],
        &[
            ("query.txt", "Fix value.txt\n"),
            ("codeRollup.txt", "value.txt: broken\n"),
        ],
    );
}

/// [`set_up_value_project`], configured to use `server` with the key in `MY_KEY`.
fn set_up(repo: &TestRepo, server: &FakeLlm) {
    set_up_value_project(repo);
    repo.write(
            "agent-config/config.toml",
            format!(
                "provider = \"openai-chat\"\nmodel = \"local\"\nbase_url = \"{}\"\napi_key_env = \"MY_KEY\"\n",
                server.base_url()
            ),
        );
}

/// Runs code-commit with `args` and the key on a project using a fake server
/// scripted with `replies`, after `setup`; returns the run, the project and
/// the server.
fn run_on(
    replies: Vec<Reply>,
    setup: impl FnOnce(&TestRepo),
    args: &[&str],
) -> (Run, TestRepo, FakeLlm) {
    let server = FakeLlm::start(Flavor::OpenAiChat, replies);
    let repo = project(&server);
    setup(&repo);
    let run = code_commit(repo.path(), args, &[("MY_KEY", KEY)]);
    (run, repo, server)
}

/// The model's reply that makes the build pass.
pub(crate) fn fixed() -> Reply {
    Reply::text("^^^value.txt\nfixed\n^^^end\n")
}

#[test]
fn a_run_that_passes_prints_the_outcome() {
    let server = FakeLlm::start(Flavor::OpenAiChat, vec![fixed()]);
    let repo = project(&server);
    let run = code_commit(repo.path(), &[], &[("MY_KEY", KEY)]);
    run.assert_exit(0);
    assert_starts_with(
        &run.stdout,
        "build.sh passed after 1 attempt(s)\nchanged: value.txt\nlog: ",
    );
    run.stderr_contains("attempt 1: applied 1 file(s); written: value.txt");
    assert_eq!(
        server.requests()[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert!(!run.stdout.contains(KEY) && !run.stderr.contains(KEY));
}

/// A quiet run with one repair round: the first answer applies and fails the
/// build, `second` is the last answer.
fn failing_then(second: Reply) -> Run {
    let first = Reply::text("^^^value.txt\nstill broken\n^^^end\n");
    let args = ["--max-repairs", "1", "--quiet"];
    run_on(vec![first, second], |_| {}, &args).0
}

#[test]
fn a_run_that_keeps_failing_exits_1() {
    let run = failing_then(Reply::text("^^^value.txt\nworse\n^^^end\n"));
    run.assert_exit(1);
    assert_starts_with(
        &run.stdout,
        "failed after 2 attempt(s): build.sh still fails after 1 repair round (build.sh exited with status 1); the end of its output:\n",
    );
    // --quiet prints no steps, only what the failed run left in the tree.
    assert_starts_with(
        &run.stderr,
        "the failed run leaves its changes in the working tree (not staged): value.txt\n",
    );
    assert!(!run.stderr.contains("attempt"), "{}", run.stderr);
}

/// Issue 18 item 14: a run whose last answer was rejected says so, in words
/// for the person running it (not the text written for the model).
#[test]
fn a_rejected_last_answer_is_told_in_the_users_words() {
    let run = failing_then(Reply::text("Just edit value.txt yourself."));
    run.assert_exit(1);
    assert_starts_with(
        &run.stdout,
        "failed after 2 attempt(s): the model's last answer was rejected: the response has no ^^^path … ^^^end blocks. build.sh did not run on it.",
    );
    run.stdout_contains(
        "build.sh did not run on it. 1 repair round used. The last build, of attempt 1, failed (build.sh exited with status 1); its output is 1-build.txt in the log folder.\n",
    );
    for model_text in [
        "still fails",
        "NOTHING from it",
        "File replacements",
        "reply with",
    ] {
        assert!(!run.stdout.contains(model_text), "{}", run.stdout);
    }

    // No build ever ran.
    let (run, _repo, _server) = run_on(
        vec![Reply::text("No.")],
        |_| {},
        &["--max-repairs", "0", "--quiet"],
    );
    run.assert_exit(1);
    run.stdout_contains(
        "build.sh did not run on it. 0 repair rounds used. build.sh never ran: no answer of the model was applied.\n",
    );
}

#[test]
fn the_key_can_live_in_agent_config() {
    let server = FakeLlm::start(Flavor::OpenAiChat, vec![fixed()]);
    let repo = project(&server);
    repo.write("agent-config/api-key", format!("{KEY}\n"));
    let run = code_commit(repo.path(), &["--project", "."], &[]);
    run.assert_exit(0);
    assert_eq!(
        server.requests()[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
}

#[test]
fn configuration_errors_are_clear() {
    let server = FakeLlm::start(Flavor::OpenAiChat, vec![]);
    let repo = project(&server);
    repo.write("agent-config/config.toml", "provider = \"gemini\"\n");
    let run = code_commit(repo.path(), &[], &[]);
    run.assert_exit(1)
        .stderr_contains("agent-config/config.toml: provider 'gemini' is not one of");
    // Hosted provider without a key.
    repo.write("agent-config/config.toml", "provider = \"openai-chat\"\n");
    let run = code_commit(repo.path(), &[], &[]);
    run.assert_exit(1).stderr_contains("no API key");
    assert!(server.requests().is_empty());
}

/// Issue 13 attack 4: code-commit's own git work (discovery, tracked and
/// ignored paths, protected files) runs no program the repository configured.
/// `build.sh` is the user's program and runs; it touches no git here.
#[test]
fn a_run_starts_no_program_the_repository_configured() {
    let hostile = testkit::hostile::Hostile::new();
    let server = FakeLlm::start(Flavor::OpenAiChat, vec![fixed()]);
    let repo = &hostile.repo;
    set_up(repo, &server);
    hostile.make_stat_stale();
    hostile.clear();
    let run = code_commit(repo.path(), &[], &[("MY_KEY", KEY)]);
    run.assert_exit(0);
    hostile.assert_no_program_ran("code-commit");
}

/// Issue 18 item 16: `--max-build-output-bytes` bounds the build output the
/// repair prompt carries, its start and end kept and the cut marked.
#[test]
fn the_build_output_cap_is_a_flag() {
    let (run, _repo, server) = run_on(
        vec![Reply::text("^^^value.txt\nnope\n^^^end\n"), fixed()],
        |repo| {
            repo.write_executable(
                "build.sh",
                "#!/bin/sh\ni=1\nwhile [ $i -le 500 ]; do echo \"output line $i\"; i=$((i+1)); done\ngrep -q fixed value.txt\n",
            );
        },
        &["--max-build-output-bytes", "2048", "--quiet"],
    );
    run.assert_exit(0);
    let body = server.requests()[1].json();
    let repair = body["messages"][1]["content"].as_str().unwrap().to_owned();
    let output = repair.split("\n\n# Query").next().unwrap();
    assert!(output.len() <= 2048 + 32, "{}", output.len());
    assert!(output.contains("output line 1\n") && output.contains("output line 500\n"));
    assert!(
        output.contains(" lines) of output cut here ...]"),
        "{output}"
    );
    assert!(!output.contains("output line 250\n"));
}

/// Issue 18 item 15: a failed run names the files it left changed and how to
/// undo them (also with `--quiet`); `--revert-on-failure` puts them back and
/// leaves an unrelated uncommitted edit alone.
#[test]
fn a_failed_run_says_what_it_left_and_can_revert_it() {
    let answer = || {
        Reply::text(
            "^^^value.txt\nnope\n^^^end\n^^^added.txt\nnew\n^^^end\n^^^notes.txt\nmodel's\n^^^end\n",
        )
    };
    // An untracked file of the user's that the model rewrites.
    let notes = |repo: &TestRepo| {
        repo.write("notes.txt", "mine\n");
    };
    let (run, repo, _server) = run_on(vec![answer()], notes, &["--max-repairs", "0", "--quiet"]);
    run.assert_exit(1);
    let dir = std::fs::canonicalize(repo.path()).unwrap();
    assert_eq!(
        run.stderr,
        format!(
            "the failed run leaves its changes in the working tree (not staged): added.txt, notes.txt, value.txt\nto undo them, run in {}:\n  git restore --source=HEAD --worktree -- value.txt\n  rm -- added.txt\nnotes.txt held changes git does not have before the run (uncommitted, or untracked): git cannot give them back (--revert-on-failure puts back exactly what was there)\n",
            dir.display()
        )
    );

    let (run, repo, _server) = run_on(
        vec![answer()],
        |repo| {
            notes(repo);
            repo.write("unrelated.txt", "my uncommitted work\n");
        },
        &["--max-repairs", "0", "--revert-on-failure"],
    );
    run.assert_exit(1);
    run.stderr_contains(
        "--revert-on-failure: restored notes.txt, value.txt; removed added.txt as before the run; nothing else was touched\n",
    );
    for (path, content) in [
        ("value.txt", "broken\n"),
        ("notes.txt", "mine\n"),
        ("unrelated.txt", "my uncommitted work\n"),
    ] {
        assert_eq!(std::fs::read_to_string(repo.join(path)).unwrap(), content);
    }
    assert!(!repo.join("added.txt").exists());
}
