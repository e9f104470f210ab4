use super::*;
use crate::message::subject;

#[track_caller]
fn check_task(subject: &str, expected: Option<(&str, &str)>) {
    let expected = expected.map(|(id, suffix)| TaskId {
        id: id.to_owned(),
        suffix: suffix.to_owned(),
    });
    assert_eq!(
        task_id_suffix(subject),
        expected,
        "task_id_suffix({subject:?})"
    );
}

fn task(id: &str, suffix: &str) -> TaskId {
    TaskId {
        id: id.to_owned(),
        suffix: suffix.to_owned(),
    }
}

// --- task IDs ---

#[test]
fn task_id_suffixes_are_found() {
    check_task(
        "fix(api): handle nulls (ABC-123)",
        Some(("ABC-123", " (ABC-123)")),
    );
    check_task("Add x [PROJ-9]", Some(("PROJ-9", " [PROJ-9]")));
    check_task("Bump deps (#412)", Some(("#412", " (#412)")));
    check_task("Add x ABC-12", Some(("ABC-12", " ABC-12")));
    check_task("Fix crash #7", Some(("#7", " #7")));
    check_task("Add x  (AB2-5)  ", Some(("AB2-5", "  (AB2-5)")));
    check_task("Add x (MY_PROJ-1)", Some(("MY_PROJ-1", " (MY_PROJ-1)")));
    check_task("Add x\t[#3]", Some(("#3", "\t[#3]")));
}

#[test]
fn things_that_are_not_task_id_suffixes() {
    for subject in [
        "Upgrade to UTF-8",
        "Use SHA-256",
        "Switch to (UTF-8)",
        "Follow RFC-2119 [RFC-2119]",
        "Read CVE-2024-1234",
        "Fix ISO-8601 parsing",
        "Add x A-1",
        "Add x abc-123",
        "ABC-123",
        "(ABC-123)",
        "Add x (ABC-123",
        "Add x(ABC-123)",
        "Add x (ABC-123).",
        "Bump deps (#abc)",
        "Add x (ABC-)",
        "",
    ] {
        check_task(subject, None);
    }
}

#[test]
fn ensure_task_id_appends_only_when_missing() {
    let abc = task("ABC-1", " (ABC-1)");
    let cases = [
        ("Fix x\n\nBody", "Fix x (ABC-1)\n\nBody"),
        ("Fix x  \n\nBody ABC-1", "Fix x (ABC-1)\n\nBody ABC-1"),
        ("Fix x", "Fix x (ABC-1)"),
        ("Use UTF-8 everywhere", "Use UTF-8 everywhere (ABC-1)"),
        ("Fix x (ABC-1)\n\nBody", "Fix x (ABC-1)\n\nBody"),
        ("Fix x [XYZ-9]", "Fix x [XYZ-9]"),
        ("ABC-2: Fix x", "ABC-2: Fix x"),
        ("Fix #12 crash", "Fix #12 crash"),
        ("", ""),
        ("\nBody", "\nBody"),
    ];
    for (message, expected) in cases {
        assert_eq!(ensure_task_id(message, &abc), expected, "{message:?}");
    }
    assert_eq!(
        ensure_task_id("Fix x", &task("ABC-1", "[ABC-1]")),
        "Fix x [ABC-1]"
    );
}

#[test]
fn ensure_task_id_result_has_a_suffix() {
    let abc = task("ABC-1", " (ABC-1)");
    let message = ensure_task_id("Fix x\n\nBody", &abc);
    assert_eq!(task_id_suffix(subject(&message)), Some(abc));
}

// --- pull requests ---

#[track_caller]
fn check_numbers(parse: fn(&str) -> Vec<u64>, message: &str, expected: &[u64]) {
    assert_eq!(parse(message), expected, "{message}");
}

#[test]
fn pull_request_numbers() {
    for (message, expected) in [
        ("Add x (#123)", &[123][..]),
        ("Add x (#12) (#7)\n\nSee (#12)", &[7, 12]),
        ("Merge pull request #45 from a/b", &[45]),
        ("Merged in feature (pull request #9)", &[9]),
        ("Fix y\n\nSee merge request group/sub/repo!45", &[45]),
        ("Fix #12 and issue #13", &[]),
        ("Add x (#abc) (# 5) #6 (#0)", &[]),
        ("Use a!3 in code", &[]),
        ("feat!: drop v1\n\nwow!2", &[]),
        // Fixed: ripgrep's `PR #3192` and GitLab's bare `!N` were not
        // recognised.
        ("printer: fix a crash\n\nPR #3192", &[3192]),
        ("searcher: tweak\n\nThis is PR#77 and pr #78.", &[77, 78]),
        ("Fix y\n\nSee !45 and (!46), [!47]\n!48", &[45, 46, 47, 48]),
        (
            "Merge pull request #1234 from user/branch-with-a-long-name",
            &[1234],
        ),
        ("Fixes #3202", &[]),
    ] {
        check_numbers(pull_requests, message, expected);
    }
}

#[test]
fn issue_references_are_the_issues_a_message_closes() {
    for (message, expected) in [
        ("ignore: fix a glob\n\nFixes #3202", &[3202][..]),
        (
            "x\n\nfixes: #1\nCloses #2, resolves #3\nRESOLVED: #4",
            &[1, 2, 3, 4],
        ),
        (
            "x\n\nFix #5 close #6 closed #7 fixed #8 resolve #9",
            &[5, 6, 7, 8, 9],
        ),
        ("x\n\nSee #10; PR #11 (#12); prefixes #13", &[]),
    ] {
        check_numbers(issue_references, message, expected);
    }
}
