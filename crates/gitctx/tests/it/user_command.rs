//! `git commit` runs in the user's own environment: their hooks see none of
//! the variables that harden every other git process.

use testkit::TestRepo;

use crate::open;

/// The variables the hardened environment sets.
const HARDENING: &[&str] = &[
    "GIT_LITERAL_PATHSPECS",
    "GIT_OPTIONAL_LOCKS",
    "GIT_TERMINAL_PROMPT",
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG_KEY_0",
    "GIT_CONFIG_VALUE_0",
    "GIT_ATTR_SOURCE",
    "GIT_PAGER",
    "LC_ALL",
    "LANG",
    "LANGUAGE",
];

/// A pre-commit hook in `repo` that writes its environment to `env` and what a
/// glob pathspec matches among the staged files to `glob` (in `out`).
fn spying_hook(repo: &TestRepo, out: &std::path::Path) {
    repo.write_executable(
        ".git/hooks/pre-commit",
        format!(
            "#!/bin/sh\nenv > '{dir}/env'\ngit diff --cached --name-only -- '*.rs' > '{dir}/glob'\n",
            dir = out.display()
        ),
    );
}

/// `NAME=value` lines of `env` output, as pairs.
fn env_of(text: &str) -> std::collections::HashMap<String, String> {
    text.lines()
        .filter_map(|line| line.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

#[test]
fn hooks_of_git_commit_see_the_users_environment() {
    let repo = TestRepo::new();
    repo.commit_file("README.md", "hello\n", "one");
    repo.write("src/lib.rs", "pub fn f() {}\n")
        .write("README.md", "hello again\n")
        .stage(&["src/lib.rs", "README.md"]);
    let out = tempfile::tempdir().unwrap();
    spying_hook(&repo, out.path());
    let run = open(&repo).run_commit("Add f\n", false).unwrap();
    assert!(run.success, "{run:?}");
    // The glob pathspec matched: no GIT_LITERAL_PATHSPECS reached the hook.
    assert_eq!(
        std::fs::read_to_string(out.path().join("glob")).unwrap(),
        "src/lib.rs\n"
    );
    // Each hardening variable is as the user (this test process) has it.
    let seen = env_of(&std::fs::read_to_string(out.path().join("env")).unwrap());
    for name in HARDENING {
        assert_eq!(
            seen.get(*name),
            std::env::var(name).ok().as_ref(),
            "{name} reached the hook"
        );
    }
}
