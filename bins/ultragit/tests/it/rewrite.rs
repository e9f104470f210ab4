//! Rewrites never lose a note: `git commit --amend` and `git rebase -i` with
//! the hooks `ultragit init` installs, running this binary, against a fake
//! Chat Completions server.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use testkit::{FakeLlm, Flavor, Reply, TestRepo, assert_contains};

use crate::annotate::{KEY, KEY_VAR, configure, emits, note_of};
use crate::support::{annotate, note, region, stdout, ultragit_input, ultragit_with, with};

/// `src/lib.rs` at the start: `base_fn` (1–3).
const BASE: &str = "\
pub fn base_fn() -> u32 {
    0
}
";

fn function(name: &str, value: u32) -> String {
    format!("\npub fn {name}() -> u32 {{\n    {value}\n}}\n")
}

/// Appends `fn name` to `src/lib.rs` and commits.
fn add_function(repo: &TestRepo, name: &str, value: u32) -> String {
    let path = repo.join("src/lib.rs");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(&function(name, value));
    repo.commit_file("src/lib.rs", text, &format!("Add {name}"))
}

/// The line range of `fn name` in `text` (1-based: its three lines).
fn lines_of(text: &str, name: &str) -> (u32, u32) {
    let index = text
        .lines()
        .position(|l| l.starts_with(&format!("pub fn {name}(")))
        .unwrap_or_else(|| panic!("{name} is in the file"));
    let start = index as u32 + 1;
    (start, start + 2)
}

/// An enhanced note for `commit` with one region on `fn name` at its lines in
/// `text`, with an author constraint.
fn annotate_function(repo: &TestRepo, commit: &str, name: &str, text: &str) {
    let (start, end) = lines_of(text, name);
    let mut value = note(
        commit,
        "2024-01-01T00:00:00Z",
        "enhanced",
        "initial",
        &format!("Adds {name}."),
        vec![with(
            region(
                "src/lib.rs",
                name,
                (start, end),
                &format!("Returns the value {name} stands for."),
            ),
            json!({"constraints": [{"text": format!("{name} never panics."), "source": "author"}]}),
        )],
        vec![],
    );
    value["task"] = json!(format!("Task of {name}"));
    annotate(repo, &value);
}

fn file_at(repo: &TestRepo, rev: &str) -> String {
    repo.git(&["show", &format!("{rev}:src/lib.rs")])
}

/// A repository set up by `ultragit init`, configured for `server`, with
/// `src/lib.rs` committed.
fn setup(server: &FakeLlm) -> TestRepo {
    let repo = TestRepo::new();
    repo.commit_file("src/lib.rs", BASE, "Add base_fn");
    configure(&repo, server);
    stdout(repo.path(), &["init"]);
    repo
}

/// `git args…` as a user runs it: hooks on, the key in the environment.
fn git_with_hooks(repo: &TestRepo, args: &[&str], env: &[(&str, &str)]) {
    let mut cmd = repo.command().args(args).env(KEY_VAR, KEY);
    for (key, value) in env {
        cmd = cmd.env(key, value);
    }
    let out = cmd.run_unchecked().unwrap();
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn log(repo: &TestRepo) -> String {
    std::fs::read_to_string(repo.join(".git/ultragit/annotate.log")).unwrap_or_default()
}

/// Waits (no timing assertion) until `done` holds for `rev`'s note.
fn wait_for_note(repo: &TestRepo, rev: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let note = repo
            .command()
            .args(["notes", "--ref=ultragit", "show", rev])
            .run_text()
            .ok()
            .and_then(|text| serde_json::from_str::<Value>(&text).ok());
        if let Some(note) = note
            && done(&note)
        {
            return note;
        }
        if Instant::now() > deadline {
            panic!(
                "the note of {rev} did not arrive; annotate.log:\n{}",
                log(repo)
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Commits `alpha` with an annotation, then amends it (hooks on) adding
/// `beta`: the original and the amended commit.
/// [`add_function`], then its note as the writing agent leaves it.
fn add_annotated(repo: &TestRepo, name: &str, value: u32) -> String {
    let commit = add_function(repo, name, value);
    annotate_function(repo, &commit, name, &file_at(repo, &commit));
    commit
}

fn annotate_alpha_then_amend_adding_beta(repo: &TestRepo) -> (String, String) {
    let old = add_annotated(repo, "alpha", 1);
    let mut text = file_at(repo, &old);
    text.push_str(&function("beta", 2));
    repo.write("src/lib.rs", text);
    repo.git(&["add", "--", "src/lib.rs"]);
    git_with_hooks(repo, &["commit", "--quiet", "--amend", "--no-edit"], &[]);
    (old, repo.rev_parse("HEAD"))
}

/// Every commit `show` prints as a valid annotation.
fn assert_readable(repo: &TestRepo, rev: &str) -> Value {
    let run = ultragit_with(repo.path(), &["show", rev, "--format", "json"], &[]);
    assert_eq!(run.code, 0, "{rev}: {run:?}");
    serde_json::from_str(&run.stdout).unwrap()
}

#[test]
fn init_installs_every_hook_once() {
    let server = FakeLlm::start(Flavor::OpenAiChat, vec![]);
    let repo = setup(&server);
    let again = stdout(repo.path(), &["init"]);
    assert!(again.contains("post-rewrite hook"), "{again}");
    assert_eq!(
        again.matches("(already installed; updated)").count(),
        4,
        "post-commit, post-rewrite, post-merge, post-checkout: {again}"
    );
    assert!(
        !again.contains("notes.rewriteMode"),
        "the mode is the user's: {again}"
    );
    let hook = std::fs::read_to_string(repo.join(".git/hooks/post-rewrite")).unwrap();
    assert_eq!(
        hook.matches("# >>> ultragit post-rewrite >>>").count(),
        1,
        "{hook}"
    );
    assert!(hook.contains(" rewritten \"$1\""), "{hook}");
    let mode = repo
        .command()
        .args(["config", "notes.rewriteMode"])
        .run_unchecked()
        .unwrap();
    assert_eq!(
        mode.status.code(),
        Some(1),
        "notes.rewriteMode is left unset"
    );
}

#[test]
fn a_message_only_amend_copies_the_note_without_a_model_call() {
    let server = FakeLlm::start(Flavor::OpenAiChat, vec![]);
    let repo = setup(&server);
    let old = add_annotated(&repo, "alpha", 1);

    git_with_hooks(
        &repo,
        &["commit", "--quiet", "--amend", "-m", "Add alpha (reworded)"],
        &[],
    );
    let new = repo.rev_parse("HEAD");
    assert_ne!(new, old);

    let copied = assert_readable(&repo, &new);
    assert_eq!(copied["commit"], new.as_str());
    assert_eq!(copied["context_level"], "enhanced");
    assert_eq!(copied["task"], "Task of alpha");
    assert_eq!(copied["provenance"]["operation"], "amend");
    assert_eq!(copied["provenance"]["derived_from"], json!([old]));
    assert_eq!(copied["regions"][0]["lines"], json!({"start": 5, "end": 7}));
    assert!(server.requests().is_empty(), "no model call");
    let log = log(&repo);
    assert!(log.contains("rewritten copied"), "{log}");
    assert!(
        !log.contains(&format!("annotate {new}")),
        "post-commit left the amend to post-rewrite: {log}"
    );
}

#[test]
fn an_amend_that_changes_code_keeps_the_context_and_annotates_the_delta() {
    let beta = with(
        region("src/lib.rs", "beta", (9, 11), "Adds beta next to alpha."),
        json!({"constraints": [{"text": "Inferred from the amend.", "source": "inferred"}]}),
    );
    let server = FakeLlm::start(Flavor::OpenAiChat, emits(beta, "Adds beta in an amend."));
    let repo = setup(&server);
    let (old, new) = annotate_alpha_then_amend_adding_beta(&repo);

    let merged = wait_for_note(&repo, &new, |n| {
        n["regions"].as_array().is_some_and(|r| r.len() == 2)
    });
    assert_eq!(merged["commit"], new.as_str());
    assert_eq!(merged["context_level"], "enhanced");
    assert_eq!(merged["task"], "Task of alpha");
    assert_eq!(merged["provenance"]["operation"], "amend");
    assert_eq!(merged["provenance"]["derived_from"], json!([old]));
    assert_eq!(merged["provenance"]["original_annotations_preserved"], true);
    let alpha = &merged["regions"][0];
    assert_eq!(alpha["ast_anchor"]["name"], "alpha");
    assert_eq!(alpha["constraints"][0]["source"], "author");
    assert_eq!(merged["regions"][1]["ast_anchor"]["name"], "beta");
    assert_readable(&repo, &new);

    // The model saw only the delta: beta, not alpha.
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let diff = requests[1].raw_text();
    assert!(diff.contains("beta"), "{diff}");
    assert!(!diff.contains("+pub fn alpha"), "{diff}");
    assert!(!log(&repo).contains("failed"), "{}", log(&repo));
}

#[test]
fn an_interactive_rebase_leaves_a_readable_note_on_every_commit() {
    let server = FakeLlm::start(Flavor::OpenAiChat, vec![]);
    let repo = setup(&server);
    repo.git(&["checkout", "--quiet", "-b", "feature"]);
    let names = ["a", "b", "c", "d", "e", "f"];
    let mut commits = Vec::new();
    for (i, name) in names.iter().enumerate() {
        commits.push(add_annotated(&repo, name, i as u32));
    }
    // Upstream puts a function at the top: every line below moves.
    repo.git(&["checkout", "--quiet", "main"]);
    repo.commit_file(
        "src/lib.rs",
        format!("pub fn upstream() -> u32 {{\n    9\n}}\n\n{BASE}"),
        "Add upstream",
    );
    repo.git(&["checkout", "--quiet", "feature"]);
    // The user's own notes on c and d, rewritten with git's default mode.
    repo.git(&["config", "--add", "notes.rewriteRef", "refs/notes/commits"]);
    repo.git(&["notes", "add", "-m", "user note of c", &commits[2]]);
    repo.git(&["notes", "add", "-m", "user note of d", &commits[3]]);

    // pick a, reword b, edit c, squash d, fixup e, drop f.
    let sequence = "sed -i -e 's/^pick \\([0-9a-f]*\\) Add b$/reword \\1 Add b/' \
                    -e 's/^pick \\([0-9a-f]*\\) Add c$/edit \\1 Add c/' \
                    -e 's/^pick \\([0-9a-f]*\\) Add d$/squash \\1 Add d/' \
                    -e 's/^pick \\([0-9a-f]*\\) Add e$/fixup \\1 Add e/' \
                    -e 's/^pick \\([0-9a-f]*\\) Add f$/drop \\1 Add f/'";
    let editor = "sed -i -e '1s/^/Edited: /'";
    let env = [("GIT_SEQUENCE_EDITOR", sequence), ("GIT_EDITOR", editor)];
    git_with_hooks(&repo, &["rebase", "--quiet", "-i", "main"], &env);
    // Stopped at c: amend nothing, continue.
    git_with_hooks(&repo, &["rebase", "--continue"], &env);
    assert!(
        !repo.join(".git/rebase-merge").exists(),
        "the rebase finished"
    );

    let head = file_at(&repo, "HEAD");
    let revs = ["HEAD~2", "HEAD~1", "HEAD"];
    let a = assert_readable(&repo, revs[0]);
    assert_eq!(a["regions"][0]["ast_anchor"]["name"], "a");
    let (start, end) = lines_of(&head, "a");
    assert_eq!(
        a["regions"][0]["lines"],
        json!({"start": start, "end": end})
    );
    assert_eq!(
        a["provenance"]["operation"], "initial",
        "a clean pick keeps it"
    );
    let b = assert_readable(&repo, revs[1]);
    assert_eq!(b["regions"][0]["ast_anchor"]["name"], "b");
    assert_eq!(b["commit"], repo.rev_parse(revs[1]).as_str());

    let squash = assert_readable(&repo, "HEAD");
    assert_eq!(squash["commit"], repo.rev_parse("HEAD").as_str());
    assert_eq!(squash["provenance"]["operation"], "squash");
    assert_eq!(
        squash["provenance"]["derived_from"],
        json!([commits[2], commits[3], commits[4]]),
        "{squash}"
    );
    assert_eq!(squash["provenance"]["original_annotations_preserved"], true);
    let regions: Vec<(String, Value)> = squash["regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["ast_anchor"]["name"].as_str().unwrap().to_owned(),
                r["lines"].clone(),
            )
        })
        .collect();
    let expected: Vec<(String, Value)> = ["c", "d", "e"]
        .iter()
        .map(|name| {
            let (start, end) = lines_of(&head, name);
            ((*name).to_owned(), json!({"start": start, "end": end}))
        })
        .collect();
    assert_eq!(regions, expected);
    assert_eq!(squash["context_level"], "enhanced");
    assert!(server.requests().is_empty(), "no model call");
    assert_eq!(
        repo.git(&["notes", "show", "HEAD"]),
        "user note of c\n\nuser note of d\n",
        "the user's notes are concatenated, as git's default mode does"
    );

    // `read` parses every note: no malformed-note warning.
    let run = ultragit_with(
        repo.path(),
        &["read", "src/lib.rs", "--format", "json"],
        &[],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!run.stdout.contains("malformed"), "{}", run.stdout);
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(out["regions"].as_array().unwrap().len() >= 4, "{out}");
}

#[test]
fn the_background_annotation_keeps_a_note_that_appeared_meanwhile() {
    let server = FakeLlm::start(Flavor::OpenAiChat, crate::annotate::script());
    let repo = TestRepo::new();
    repo.commit_file("src/net.rs", crate::annotate::NET_V1, "Add connect");
    let head = repo.commit_file("src/net.rs", crate::annotate::NET_V2, "Add retry_connect");
    configure(&repo, &server);
    let existing = note(
        &head,
        "2024-01-01T00:00:00Z",
        "enhanced",
        "amend",
        "Carried.",
        vec![],
        vec![],
    );
    annotate(&repo, &existing);
    let run = ultragit_with(
        repo.path(),
        &["annotate", "--sync", "--keep-existing"],
        &[(KEY_VAR, KEY)],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.starts_with("kept "), "{run:?}");
    assert_eq!(note_of(&repo, "HEAD"), existing);
}

#[test]
fn squash_sources_alone_do_not_make_an_annotation_enhanced() {
    let server = FakeLlm::start(Flavor::OpenAiChat, crate::annotate::script());
    let repo = TestRepo::new();
    let first = repo.commit_file("src/net.rs", crate::annotate::NET_V1, "Add connect");
    repo.commit_file("src/net.rs", crate::annotate::NET_V2, "Add retry_connect");
    configure(&repo, &server);
    let run = ultragit_with(
        repo.path(),
        &["annotate", "--squash-sources", &first],
        &[(KEY_VAR, KEY)],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.ends_with("(inferred)\n"), "{run:?}");
    let stored = note_of(&repo, "HEAD");
    assert_eq!(stored["context_level"], "inferred");
    assert_eq!(stored["provenance"]["operation"], "squash");
    let system = server.requests()[0].json()["messages"][0]["content"].to_string();
    assert!(!system.contains("explicit context"), "{system}");
    assert!(system.contains("No author-provided context"), "{system}");
}

#[test]
fn malformed_rewrite_input_writes_nothing() {
    let server = FakeLlm::start(Flavor::OpenAiChat, vec![]);
    let repo = setup(&server);
    let old = add_annotated(&repo, "alpha", 1);
    let new = repo.amend(Some("Reworded"));
    // The hook has copied the note already: remove it, then feed bad input.
    repo.git(&["notes", "--ref=ultragit", "remove", &new]);
    let input = format!("{old} {new}\nnot a pair\n");
    let run = ultragit_input(repo.path(), &["rewritten", "amend"], &input);
    assert_eq!(run.code, 1, "{run:?}");
    assert_contains(&run.stderr, "line 2 of the post-rewrite input");
    let notes = repo.git(&["notes", "--ref=ultragit", "list"]);
    assert_eq!(notes.lines().count(), 1, "only the old note: {notes}");
}

#[test]
fn a_failed_delta_annotation_keeps_the_carried_note_and_is_recorded() {
    let server = FakeLlm::start(Flavor::OpenAiChat, vec![Reply::error(400, "bad model")]);
    let repo = setup(&server);
    let (_, new) = annotate_alpha_then_amend_adding_beta(&repo);

    let failed = repo.join(".git/ultragit/failed.log");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !std::fs::read_to_string(&failed).is_ok_and(|log| log.contains(&new)) {
        assert!(
            Instant::now() < deadline,
            "no failure recorded; annotate.log:\n{}",
            log(&repo)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let carried = assert_readable(&repo, &new);
    assert_eq!(carried["provenance"]["operation"], "amend");
    assert_eq!(carried["regions"][0]["ast_anchor"]["name"], "alpha");
    assert_eq!(carried["task"], "Task of alpha");
    assert!(!std::fs::read_to_string(&failed).unwrap().contains(KEY));
}
