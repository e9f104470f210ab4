//! `ultragit doctor` on real repositories: a healthy set-up passes, each broken
//! state it names is detected, `--fix` repairs the safe ones (a second run is
//! clean) and never deletes a note or a hook line, the JSON shape, exit codes,
//! and `--online` against the fake server.

use serde_json::{Value, json};
use testkit::{
    FakeLlm, Flavor, Reply, TestRepo, assert_contains, assert_ends_with, assert_starts_with,
};

use crate::annotate::{KEY, KEY_VAR, configure};
use crate::support::{Run, note, stdout, texts, ultragit, ultragit_with, write_note};

/// Every check a repository without sync gets, in order.
const IDS: &[&str] = &[
    "hooks.post-commit",
    "hooks.post-rewrite",
    "hooks.post-merge",
    "hooks.post-checkout",
    "rewrite-config",
    "notes-ref",
    "malformed-notes",
    "unreachable-notes",
    "provider",
    "sync",
    "cache",
    "commit-graph",
    "failures",
];

/// A repository set up as `ultragit init` leaves it, with the provider's key
/// variable named `KEY_VAR`, and one commit.
fn healthy() -> (TestRepo, String) {
    let repo = TestRepo::new();
    let head = repo.commit_file("src/lib.rs", "pub fn a() {}\n", "Add a");
    stdout(repo.path(), &["init"]);
    repo.git(&["config", "ultragit.apiKeyEnv", KEY_VAR]);
    (repo, head)
}

/// `ultragit doctor args…` with the key variable set.
fn doctor(repo: &TestRepo, args: &[&str]) -> Run {
    let mut all = vec!["doctor"];
    all.extend_from_slice(args);
    ultragit_with(repo.path(), &all, &[(KEY_VAR, KEY)])
}

/// `doctor --format json`, parsed, with its exit code.
fn json_report(repo: &TestRepo, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["--format", "json"];
    all.extend_from_slice(args);
    let run = doctor(repo, &all);
    let report = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|err| panic!("doctor's JSON does not parse ({err}): {run:?}"));
    (run.code, report)
}

fn check<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no check {id}: {report:#}"))
}

/// Asserts that the check `id` of `report` has `status` and a message
/// containing `says`, and returns it; `case` names what is checked in a failure.
fn assert_check<'a>(
    report: &'a Value,
    id: &str,
    status: &str,
    says: &str,
    case: &str,
) -> &'a Value {
    let found = check(report, id);
    assert_eq!(found["status"], status, "{case}: {report:#}");
    let message = found["message"].as_str().unwrap();
    assert!(message.contains(says), "{case}: {message}");
    found
}

/// The ids of the checks that are not ok.
fn not_ok(report: &Value) -> Vec<String> {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] != "ok")
        .map(|c| {
            format!(
                "{}={}",
                c["id"].as_str().unwrap(),
                c["status"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn a_healthy_repository_passes_and_the_json_is_stable() {
    let (repo, _) = healthy();
    let run = doctor(&repo, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_ends_with(&run.stdout, "all 13 checks passed\n");
    assert_starts_with(&run.stdout, "ok    hooks.post-commit   ");
    assert!(!run.stdout.contains(KEY), "the key is never printed");

    let (code, report) = json_report(&repo, &[]);
    assert_eq!(code, 0);
    assert_eq!(report["ok"], true);
    assert_eq!(report["fixed"], json!([]));
    let checks = report["checks"].as_array().unwrap();
    assert_eq!(texts(&report["checks"], "/id"), IDS);
    for check in checks {
        let mut keys: Vec<&String> = check.as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(keys, ["fix", "id", "message", "status"], "{check}");
        assert_eq!(check["status"], "ok", "{check}");
        assert_eq!(check["fix"], Value::Null, "{check}");
    }
    assert!(
        check(&report, "provider")["message"]
            .as_str()
            .unwrap()
            .contains(&format!("key from ${KEY_VAR}"))
    );
    // The rewrite mode is reported, never required: `init` leaves it unset.
    let rewrite = check(&report, "rewrite-config")["message"]
        .as_str()
        .unwrap();
    assert_contains(
        rewrite,
        "notes.rewriteMode is not set (git's default: concatenate)",
    );
    // git's environment override reaches the check.
    let run = ultragit_with(
        repo.path(),
        &["doctor", "--format", "json"],
        &[(KEY_VAR, KEY), ("GIT_NOTES_REWRITE_MODE", "overwrite")],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_contains(
        &run.stdout,
        "GIT_NOTES_REWRITE_MODE=overwrite overrides it here",
    );
}

/// One broken state: how to break a healthy repository, the check that must
/// notice, its status, and a piece of its message.
struct Broken {
    name: &'static str,
    apply: fn(&TestRepo, &str),
    id: &'static str,
    status: &'static str,
    says: &'static str,
}

fn set_hook(repo: &TestRepo, name: &str, text: &str) {
    repo.write_executable(&format!(".git/hooks/{name}"), text);
}

fn chmod(repo: &TestRepo, rel: &str, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(repo.join(rel), std::fs::Permissions::from_mode(mode)).unwrap();
}

const BROKEN: &[Broken] = &[
    Broken {
        name: "missing post-commit hook",
        apply: |repo, _| {
            std::fs::remove_file(repo.join(".git/hooks/post-commit")).unwrap();
        },
        id: "hooks.post-commit",
        status: "fail",
        says: "does not exist",
    },
    Broken {
        name: "non-executable post-rewrite hook",
        apply: |repo, _| chmod(repo, ".git/hooks/post-rewrite", 0o644),
        id: "hooks.post-rewrite",
        status: "fail",
        says: "is not executable",
    },
    Broken {
        name: "missing post-merge hook (set up by an older init)",
        apply: |repo, _| {
            std::fs::remove_file(repo.join(".git/hooks/post-merge")).unwrap();
        },
        id: "hooks.post-merge",
        status: "warn",
        says: "does not exist: the read caches are not warmed after a merge or a git pull",
    },
    Broken {
        name: "post-checkout block without the warm-up",
        apply: |repo, _| {
            set_hook(
                repo,
                "post-checkout",
                "#!/bin/sh\n# >>> ultragit post-checkout >>>\ntrue\n# <<< ultragit post-checkout <<<\n",
            )
        },
        id: "hooks.post-checkout",
        status: "warn",
        says: "does not warm the read caches after a branch checkout",
    },
    Broken {
        name: "hook without the ultragit block",
        apply: |repo, _| set_hook(repo, "post-commit", "#!/bin/sh\necho mine >> mine.log\n"),
        id: "hooks.post-commit",
        status: "fail",
        says: "has no ultragit block",
    },
    Broken {
        name: "hook running a program that is gone",
        apply: |repo, _| {
            set_hook(
                repo,
                "post-commit",
                "#!/bin/sh\n# >>> ultragit post-commit >>>\n/nonexistent/ultragit annotate --async || true\n# <<< ultragit post-commit <<<\n",
            )
        },
        id: "hooks.post-commit",
        status: "fail",
        says: "runs /nonexistent/ultragit, which is not an executable file",
    },
    Broken {
        name: "hook linked into the working tree",
        apply: |repo, _| {
            repo.write_executable("hooks/post-commit", "#!/bin/sh\n");
            std::fs::remove_file(repo.join(".git/hooks/post-commit")).unwrap();
            std::os::unix::fs::symlink(
                repo.join("hooks/post-commit"),
                repo.join(".git/hooks/post-commit"),
            )
            .unwrap();
        },
        id: "hooks.post-commit",
        status: "fail",
        says: "is a link into the working tree",
    },
    Broken {
        name: "malformed note",
        apply: |repo, head| {
            write_note(
                repo,
                head,
                "{\"$schema\": \"ultragit/v1\"}\n{\"concatenated\": true}",
            )
        },
        id: "malformed-notes",
        status: "fail",
        says: "1 malformed note `ultragit read` skips",
    },
    Broken {
        name: "note on an unreachable commit",
        apply: |repo, _| {
            repo.checkout_new("topic");
            let lost = repo.commit_file("src/lib.rs", "pub fn b() {}\n", "Add b");
            write_note(repo, &lost, &valid_note(&lost).to_string());
            repo.checkout("main");
            repo.git(&["branch", "-D", "topic"]);
        },
        id: "unreachable-notes",
        status: "warn",
        says: "1 note on commits no branch, tag or remote reaches",
    },
    Broken {
        name: "failed annotation never retried",
        apply: |repo, head| {
            repo.write(
                ".git/ultragit/failed.log",
                format!("2024-01-01T00:00:00Z {head} Provider error: HTTP 500\n"),
            );
        },
        id: "failures",
        status: "warn",
        says: "1 commit still without a note after a failed annotation",
    },
];

fn valid_note(commit: &str) -> Value {
    note(
        commit,
        "2024-01-01T00:00:00Z",
        "inferred",
        "initial",
        "Adds a function.",
        vec![],
        vec![],
    )
}

/// The broken states that git commands alone make (config, refs, remotes): an
/// object each with the fields of [`Broken`], `git` (argument lists, run in
/// order) in place of `apply`.
const BROKEN_BY_GIT: &str = include_str!("data/doctor_broken_by_git.json");

#[test]
fn each_broken_state_is_detected() {
    for broken in BROKEN {
        let (repo, head) = healthy();
        (broken.apply)(&repo, &head);
        assert_detected(&repo, broken.name, broken.id, broken.status, broken.says);
    }
    let by_git: Value = serde_json::from_str(BROKEN_BY_GIT).expect("the cases are JSON");
    let by_git = by_git.as_array().expect("an array of cases");
    assert_eq!(by_git.len(), 13, "the table is whole");
    for case in by_git {
        let text = |key: &str| {
            case[key]
                .as_str()
                .unwrap_or_else(|| panic!("no {key}: {case}"))
        };
        let (repo, _) = healthy();
        for args in case["git"].as_array().expect("git argument lists") {
            repo.git(&texts(args, ""));
        }
        assert_detected(
            &repo,
            text("name"),
            text("id"),
            text("status"),
            text("says"),
        );
    }
}

/// Asserts that doctor on `repo` reports the broken state `name` in check `id`
/// with `status`, a message containing `says` and a fix, exits accordingly, and
/// finds nothing else wrong.
fn assert_detected(repo: &TestRepo, name: &str, id: &str, status: &str, says: &str) {
    let (code, report) = json_report(repo, &[]);
    let found = assert_check(&report, id, status, says, name);
    assert!(found["fix"].is_string(), "{name}: a fix is named: {found}");
    let failing = status == "fail";
    assert_eq!(code, i32::from(failing), "{name}: exit code");
    assert_eq!(report["ok"], !failing, "{name}");
    // Nothing else is wrong (the pre-push hook goes with an enabled sync).
    let others: Vec<String> = not_ok(&report)
        .into_iter()
        .filter(|c| !c.starts_with(&format!("{id}=")))
        .filter(|c| !(id == "sync" && c.starts_with("hooks.pre-push=")))
        .filter(|c| !(id == "hooks.pre-push" && c.starts_with("sync=")))
        .collect();
    assert!(others.is_empty(), "{name}: {others:?}");
}

#[test]
fn fix_repairs_the_safe_ones_and_a_second_run_is_clean() {
    let (repo, _) = healthy();
    // Several things broken at once; the user's own hook lines must survive.
    set_hook(&repo, "post-commit", "#!/bin/sh\necho mine >> mine.log\n");
    std::fs::remove_file(repo.join(".git/hooks/post-rewrite")).unwrap();
    repo.git(&["config", "notes.rewriteMode", "concatenate"]);
    repo.git(&["config", "--unset-all", "notes.rewriteRef"]);
    repo.git(&["config", "notes.rewrite.rebase", "false"]);
    repo.git(&["update-ref", "-d", "refs/notes/ultragit"]);
    repo.git(&["remote", "add", "origin", "/nonexistent/remote.git"]);
    repo.git(&["config", "ultragit.syncRemote", "origin"]);
    // The pre-push hook is `ultragit sync --enable`'s to install.
    set_hook(
        &repo,
        "pre-push",
        "#!/bin/sh\n# >>> ultragit pre-push >>>\ntrue\n# <<< ultragit pre-push <<<\n",
    );

    let before = doctor(&repo, &[]);
    assert_eq!(before.code, 1, "{before:?}");
    assert_contains(&before.stdout, "5 checks failed");

    let fixed = doctor(&repo, &["--fix"]);
    assert_eq!(fixed.code, 0, "{fixed:?}");
    for change in [
        "fixed: added the ultragit block to the post-commit hook",
        "fixed: created the post-rewrite hook",
        "fixed: set notes.rewriteRef=refs/notes/ultragit, notes.rewrite.rebase=true in .git/config",
        "fixed: created refs/notes/ultragit",
        "fixed: set remote.origin.fetch=+refs/notes/ultragit:refs/notes/remotes/origin/ultragit in .git/config",
    ] {
        assert!(fixed.stdout.contains(change), "{change}: {}", fixed.stdout);
    }
    assert_ends_with(&fixed.stdout, "all 15 checks passed\n");

    assert_eq!(
        repo.git(&["config", "notes.rewriteMode"]),
        "concatenate\n",
        "the user's mode is kept"
    );
    let hook = std::fs::read_to_string(repo.join(".git/hooks/post-commit")).unwrap();
    assert!(hook.contains("echo mine >> mine.log\n"), "{hook}");
    assert!(hook.contains("# >>> ultragit post-commit >>>"), "{hook}");

    let (code, report) = json_report(&repo, &[]);
    assert_eq!(code, 0, "{report:#}");
    assert!(not_ok(&report).is_empty(), "{report:#}");
    assert_eq!(report["fixed"], json!([]));
    // Fixed once is fixed: a second --fix changes nothing.
    let (code, report) = json_report(&repo, &["--fix"]);
    assert_eq!((code, report["fixed"].clone()), (0, json!([])));
}

#[test]
fn fix_never_deletes_a_note() {
    let (repo, head) = healthy();
    let broken = "{\"a\": 1}{\"b\": 2}";
    write_note(&repo, &head, broken);
    let (code, report) = json_report(&repo, &["--fix"]);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(check(&report, "malformed-notes")["status"], "fail");
    assert_eq!(report["fixed"], json!([]));
    let kept = repo.git(&["notes", "--ref", "refs/notes/ultragit", "show", &head]);
    assert_eq!(kept.trim_end(), broken);
}

#[test]
fn notes_git_carried_over_on_amend_are_not_reported_unreachable() {
    let (repo, head) = healthy();
    write_note(&repo, &head, &valid_note(&head).to_string());
    // git's own rewrite copies the note verbatim (hooks off: this is about git).
    repo.git(&[
        "-c",
        "core.hooksPath=/nonexistent",
        "commit",
        "--quiet",
        "--amend",
        "--allow-empty",
        "-m",
        "Add a, amended",
    ]);
    let (code, report) = json_report(&repo, &[]);
    assert_eq!(code, 0, "{report:#}");
    assert_check(
        &report,
        "unreachable-notes",
        "ok",
        "(1 note on rewritten commits whose annotation was carried over)",
        "amended",
    );
}

#[test]
fn a_failure_annotated_since_is_resolved() {
    let (repo, head) = healthy();
    repo.write(
        ".git/ultragit/failed.log",
        format!("2024-01-01T00:00:00Z {head} Provider error: HTTP 500\n"),
    );
    write_note(&repo, &head, &valid_note(&head).to_string());
    let (_, report) = json_report(&repo, &[]);
    assert_check(
        &report,
        "failures",
        "ok",
        "every one since annotated",
        "annotated since",
    );
}

#[test]
fn online_sends_one_tiny_request_and_classifies_errors() {
    let (repo, _) = healthy();
    let server = FakeLlm::start(Flavor::OpenAiChat, vec![Reply::text("ok")]);
    configure(&repo, &server);
    let (code, report) = json_report(&repo, &["--online"]);
    assert_eq!(code, 0, "{report:#}");
    let ids = texts(&report["checks"], "/id");
    let at = ids.iter().position(|id| *id == "provider").unwrap();
    assert_eq!(ids[at + 1], "provider-online");
    assert_eq!(
        check(&report, "provider-online")["status"],
        "ok",
        "{report:#}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );

    // Without --online nothing reaches the server.
    let (code, _) = json_report(&repo, &[]);
    assert_eq!(code, 0);
    assert_eq!(server.requests().len(), 1);

    // A refused key: one attempt, classified, the key never printed.
    let refusing = FakeLlm::start(Flavor::OpenAiChat, vec![Reply::error(401, "bad key")]);
    configure(&repo, &refusing);
    let run = doctor(&repo, &["--online"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_contains(&run.stdout, "provider-online");
    assert_contains(&run.stdout, "the key was refused");
    assert!(!run.stdout.contains(KEY) && !run.stderr.contains(KEY));
    assert_eq!(refusing.requests().len(), 1);
}

#[test]
fn outside_a_repository_it_is_an_error() {
    // The temporary directory holding a test repository is no repository.
    let repo = TestRepo::new();
    let run = ultragit(repo.path().parent().unwrap(), &["doctor"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_starts_with(&run.stderr, "error: not a git repository");
}
