//! What the test modules share: running the binary, the project and home
//! folders, the fake server and what a run leaves behind.

use std::path::{Path, PathBuf};
use std::process::Command;

use testkit::{FakeLlm, Flavor, Reply, TestRepo, texts_under};

pub(crate) const KEY: &str = "sk-test-0123456789-secret-key";

/// What a run left behind.
pub(crate) use testkit::cli::Output as Run;

/// Runs `git-agent args…` in `dir` with a hermetic environment: no OpenAI
/// variables, no proxies, and a home without Codex credentials unless `env` adds
/// them.
pub(crate) fn git_agent(dir: &Path, home: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_git-agent"));
    cmd.args(args).current_dir(dir);
    testkit::isolate(&mut cmd);
    cmd.env("HOME", home);
    cmd.envs(env.iter().copied());
    testkit::cli::run_command(&mut cmd)
}

/// `git_agent` with `OPENAI_API_KEY` set and `OPENAI_BASE_URL` pointing at `url`.
pub(crate) fn with_key(repo: &TestRepo, home: &tempfile::TempDir, args: &[&str], url: &str) -> Run {
    git_agent(
        repo.path(),
        home.path(),
        args,
        &[("OPENAI_API_KEY", KEY), ("OPENAI_BASE_URL", url)],
    )
}

pub(crate) fn project() -> TestRepo {
    TestRepo::with_staged_change()
}

pub(crate) fn home() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

/// Every file under `dir`, read as text.
pub(crate) fn all_text(dir: &Path) -> String {
    texts_under(dir).into_iter().map(|(_, text)| text).collect()
}

pub(crate) fn sessions(repo: &TestRepo) -> Vec<PathBuf> {
    let dir = repo.join(".git-agent/sessions");
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries.map(|e| e.unwrap().path()).collect()
}

pub(crate) const MESSAGE: &str = "fix(net): retry connect three times";

/// A fake Responses API server scripted with `script`, and its base URL.
pub(crate) fn responses(script: Vec<Reply>) -> (FakeLlm, String) {
    serve(Flavor::OpenAiResponses, script)
}

/// A fake Chat Completions server scripted with `script`, and its base URL.
pub(crate) fn chat(script: Vec<Reply>) -> (FakeLlm, String) {
    serve(Flavor::OpenAiChat, script)
}

fn serve(flavor: Flavor, script: Vec<Reply>) -> (FakeLlm, String) {
    let server = FakeLlm::start(flavor, script);
    let url = server.base_url();
    (server, url)
}

/// `git-agent commit-msg` in a new project against a Responses server playing
/// `script`, which must fail: the project, the server and the run.
pub(crate) fn failed_commit_msg(script: Vec<Reply>) -> (TestRepo, FakeLlm, Run) {
    let repo = project();
    let home = home();
    let (server, url) = responses(script);
    let run = with_key(&repo, &home, &["commit-msg"], &url);
    assert_eq!(run.code, 1, "{run:?}");
    (repo, server, run)
}

/// A Codex home below `home` signed in with ChatGPT (`auth.json` with the
/// access token `chatgpt-access-token-xyz` of account `acct-42`) and, when
/// given, Codex's `config.toml`: its path, for `CODEX_HOME`.
pub(crate) fn codex_home(home: &tempfile::TempDir, config: Option<&str>) -> PathBuf {
    let codex = home.path().join("codex");
    std::fs::create_dir_all(&codex).unwrap();
    std::fs::write(
        codex.join("auth.json"),
        r#"{"auth_mode": "chatgpt", "tokens": {"access_token": "chatgpt-access-token-xyz", "account_id": "acct-42"}}"#,
    )
    .unwrap();
    if let Some(config) = config {
        std::fs::write(codex.join("config.toml"), config).unwrap();
    }
    codex
}
