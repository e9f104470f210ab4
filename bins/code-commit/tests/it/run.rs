//! Whole runs of the binary on temporary projects, the model behind the fake
//! server on 127.0.0.1.

use std::path::Path;
use std::process::Command;

use testkit::{FakeLlm, Flavor, Reply, TestRepo};

pub(crate) const KEY: &str = "sk-binary-run-secret-7Hq";

pub(crate) struct Run {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// Runs code-commit in `dir` with a fresh, empty home (no user configuration
/// or key file from the machine running the tests), then `env`.
pub(crate) fn code_commit(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let home = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_code-commit"));
    cmd.args(args).current_dir(dir);
    testkit::isolate(&mut cmd);
    cmd.env("HOME", home.path())
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_CACHE_HOME");
    cmd.envs(env.iter().copied());
    let out = cmd.output().expect("run code-commit");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: text(&out.stdout),
        stderr: text(&out.stderr),
    }
}

pub(crate) fn project(server: &FakeLlm) -> TestRepo {
    let repo = TestRepo::new();
    set_up(&repo, server);
    repo
}

/// Commits the project's files to `repo` and writes its `agent-config/`.
fn set_up(repo: &TestRepo, server: &FakeLlm) {
    repo.write(".gitignore", "/agent-config\n")
        .write_executable("build.sh", "#!/bin/sh\ngrep -q fixed value.txt\n")
        .write("value.txt", "broken\n");
    repo.commit_all("project");
    repo.write("agent-config/query.txt", "Fix value.txt\n")
        .write("agent-config/codeRollup.txt", "value.txt: broken\n")
        .write(
            "agent-config/config.toml",
            format!(
                "provider = \"openai-chat\"\nmodel = \"local\"\nbase_url = \"{}\"\napi_key_env = \"MY_KEY\"\n",
                server.base_url()
            ),
        );
}

#[test]
fn a_run_that_passes_prints_the_outcome() {
    let server = FakeLlm::start(
        Flavor::OpenAiChat,
        vec![Reply::text("^^^value.txt\nfixed\n^^^end\n")],
    );
    let repo = project(&server);
    let run = code_commit(repo.path(), &[], &[("MY_KEY", KEY)]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .starts_with("build.sh passed after 1 attempt(s)\nchanged: value.txt\nlog: "),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr
            .contains("attempt 1: applied 1 file(s); written: value.txt"),
        "{}",
        run.stderr
    );
    assert_eq!(
        server.requests()[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert!(!run.stdout.contains(KEY) && !run.stderr.contains(KEY));
}

#[test]
fn a_run_that_keeps_failing_exits_1() {
    let bad = || Reply::text("^^^value.txt\nstill broken\n^^^end\n");
    let server = FakeLlm::start(
        Flavor::OpenAiChat,
        vec![bad(), Reply::text("^^^value.txt\nworse\n^^^end\n")],
    );
    let repo = project(&server);
    let run = code_commit(
        repo.path(),
        &["--max-repairs", "1", "--quiet"],
        &[("MY_KEY", KEY)],
    );
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .starts_with("failed after 2 attempt(s): build.sh still fails after 1 repair rounds"),
        "{}",
        run.stdout
    );
    assert_eq!(run.stderr, "", "--quiet prints no steps");
}

#[test]
fn the_key_can_live_in_agent_config() {
    let server = FakeLlm::start(
        Flavor::OpenAiChat,
        vec![Reply::text("^^^value.txt\nfixed\n^^^end\n")],
    );
    let repo = project(&server);
    repo.write("agent-config/api-key", format!("{KEY}\n"));
    let run = code_commit(repo.path(), &["--project", "."], &[]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
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
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("agent-config/config.toml: provider 'gemini' is not one of"),
        "{}",
        run.stderr
    );
    // Hosted provider without a key.
    repo.write("agent-config/config.toml", "provider = \"openai-chat\"\n");
    let run = code_commit(repo.path(), &[], &[]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("no API key"), "{}", run.stderr);
    assert!(server.requests().is_empty());
}

/// Issue 13 attack 4: code-commit's own git work (discovery, tracked and
/// ignored paths, protected files) runs no program the repository configured.
/// `build.sh` is the user's program and runs; it touches no git here.
#[test]
fn a_run_starts_no_program_the_repository_configured() {
    let hostile = testkit::hostile::Hostile::new();
    let server = FakeLlm::start(
        Flavor::OpenAiChat,
        vec![Reply::text("^^^value.txt\nfixed\n^^^end\n")],
    );
    let repo = &hostile.repo;
    set_up(repo, &server);
    hostile.make_stat_stale();
    hostile.clear();
    let run = code_commit(repo.path(), &[], &[("MY_KEY", KEY)]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    hostile.assert_no_program_ran("code-commit");
}
