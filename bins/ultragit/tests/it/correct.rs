//! `ultragit flag` and `ultragit correct` as processes: what `read` shows and
//! scores afterwards, the note left as it was plus its corrections, the
//! errors, and corrections travelling through `ultragit sync`.

use serde_json::{Value, json};
use testkit::TestRepo;
use ultragit_schema::Annotation;

use crate::support::{annotate, note, stdout, ultragit, ultragit_with};

const LIB: &str = "\
pub fn connect() -> bool {
    true
}

pub fn send() -> usize {
    0
}
";

const AUTHOR: &str = "Test Author <author@example.com>";

/// One commit adding `src/lib.rs` (`connect`, `send`), and its note.
fn annotated(repo: &TestRepo) -> String {
    let commit = repo.commit_file("src/lib.rs", LIB, "Add connect and send");
    let region = |name: &str, lines: (u32, u32), intent: &str| {
        json!({
            "file": "src/lib.rs",
            "ast_anchor": {"type": "function", "name": name},
            "lines": {"start": lines.0, "end": lines.1},
            "intent": intent,
            "constraints": [{"text": "Never blocks.", "source": "author"}],
            "tags": ["net"]
        })
    };
    annotate(
        repo,
        &note(
            &commit,
            "2023-12-31T00:00:00Z",
            "enhanced",
            "initial",
            "Adds connect and send.",
            vec![
                region("connect", (1, 3), "Connects with retries."),
                region("send", (5, 7), "Sends a payload."),
            ],
            vec![],
        ),
    );
    commit
}

/// The note of `commit` with its pending corrections (read with git).
fn stored(repo: &TestRepo, commit: &str) -> Annotation {
    let text = repo.git(&["notes", "--ref=ultragit", "show", commit]);
    let mut note = Annotation::from_json(&text).expect("the note stays a valid annotation");
    let pending = repo
        .command()
        .args(["notes", "--ref=ultragit-corrections", "show", commit])
        .run_unchecked()
        .unwrap();
    if pending.status.success() {
        let record = String::from_utf8_lossy(&pending.stdout);
        ultragit_schema::pending::join(&mut note, &ultragit_schema::pending::parse_record(&record));
    }
    note
}

/// The one region `read --format json` returns for `anchor`.
fn read_json(repo: &TestRepo, anchor: &str) -> Value {
    let out = stdout(
        repo.path(),
        &["read", "src/lib.rs", anchor, "--format", "json"],
    );
    let output: Value = serde_json::from_str(&out).unwrap();
    let regions = output["regions"].as_array().unwrap();
    assert_eq!(regions.len(), 1, "{out}");
    regions[0].clone()
}

/// `correct COMMIT --file src/lib.rs --anchor ANCHOR --field FIELD HOW VALUE
/// --reason REASON` as arguments.
fn correct_args(
    commit: &str,
    anchor: &str,
    (field, how, value): (&str, &str, &str),
    reason: &str,
) -> Vec<String> {
    [
        "correct",
        commit,
        "--file",
        "src/lib.rs",
        "--anchor",
        anchor,
        "--field",
        field,
        how,
        value,
        "--reason",
        reason,
    ]
    .map(str::to_owned)
    .to_vec()
}

/// Runs `ultragit args…`, expects success, returns stdout.
fn succeed(repo: &TestRepo, args: &[String]) -> String {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    stdout(repo.path(), &args)
}

/// The first line of `text` that starts with `prefix`.
fn line_starting<'t>(text: &'t str, prefix: &str) -> &'t str {
    text.lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line starts with {prefix:?} in:\n{text}"))
}

fn confidence(region: &Value) -> f64 {
    region["confidence"].as_f64().unwrap()
}

#[test]
fn a_flag_halves_confidence_and_read_says_why() {
    let repo = TestRepo::new();
    let commit = annotated(&repo);
    let before = read_json(&repo, "connect");
    let note_before = stored(&repo, &commit);

    let out = stdout(
        repo.path(),
        &[
            "flag",
            &commit[..7],
            "--file",
            "src/lib.rs",
            "--anchor",
            "connect",
            "--reason",
            "connect stopped retrying",
        ],
    );
    assert_eq!(
        out,
        format!(
            "flagged src/lib.rs:connect of commit {} (by {AUTHOR}: connect stopped retrying)\n",
            &commit[..7]
        )
    );

    let after = read_json(&repo, "connect");
    assert!(
        (confidence(&after) - confidence(&before) * 0.5).abs() < 1e-9,
        "{before} → {after}"
    );
    assert_eq!(after["confidence_factors"], before["confidence_factors"]);
    assert_eq!(after["region"], before["region"], "a flag changes no text");
    assert_eq!(after["corrections"][0]["kind"], "flag");
    assert_eq!(
        after["corrections"][0]["reason"],
        "connect stopped retrying"
    );
    assert_eq!(after["corrections"][0]["author"], AUTHOR);
    // The other region is not flagged.
    assert!(read_json(&repo, "send").get("corrections").is_none());

    let markdown = stdout(repo.path(), &["read", "src/lib.rs", "connect"]);
    let flagged = format!("by {AUTHOR}: connect stopped retrying — its items are withheld");
    let flag_line = line_starting(&markdown, "  **Flagged** ");
    assert!(flag_line.ends_with(&flagged), "{markdown}");
    let region_line = line_starting(&markdown, "- `");
    assert!(
        region_line.ends_with(": Connects with retries."),
        "{markdown}"
    );
    assert!(
        markdown.contains(&format!("{region_line}\n{flag_line}\n")),
        "the flag follows its region's line: {markdown}"
    );
    // A flagged region's constraint is not handed over as a decision.
    assert!(!markdown.contains("Never blocks."), "{markdown}");
    assert!(markdown.contains("_1 retired item withheld"), "{markdown}");

    let mut note_after = stored(&repo, &commit);
    assert_eq!(note_after.corrections.len(), 1);
    note_after.corrections.clear();
    assert_eq!(
        note_after, note_before,
        "the annotation itself is unchanged"
    );
}

#[test]
fn a_flag_without_a_target_covers_every_region() {
    let repo = TestRepo::new();
    let commit = annotated(&repo);
    let out = stdout(
        repo.path(),
        &["flag", "HEAD", "--reason", "wrong diff", "--format", "json"],
    );
    let stored: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(stored["commit"], commit.as_str());
    assert_eq!(
        stored["regions"],
        json!(["src/lib.rs:connect", "src/lib.rs:send"])
    );
    assert_eq!(stored["correction"]["target"], json!({}));
    for anchor in ["connect", "send"] {
        assert_eq!(read_json(&repo, anchor)["corrections"][0]["kind"], "flag");
    }
}

#[test]
fn a_corrected_intent_replaces_the_original_and_is_marked() {
    let repo = TestRepo::new();
    let commit = annotated(&repo);
    let mut args = correct_args(
        &commit,
        "connect",
        ("intent", "--set", "Connects once; the caller retries."),
        "retrying moved to the caller",
    );
    args.extend(["--format".to_owned(), "json".to_owned()]);
    let out = succeed(&repo, &args);
    let stored_json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(stored_json["correction"]["kind"], "set");
    assert_eq!(stored_json["correction"]["field"], "intent");

    let region = read_json(&repo, "connect");
    assert_eq!(
        region["region"]["intent"],
        "Connects once; the caller retries."
    );
    assert_eq!(
        region["corrections"][0]["previous"],
        "Connects with retries."
    );
    assert_eq!(
        region["corrections"][0]["reason"],
        "retrying moved to the caller"
    );

    let markdown = stdout(repo.path(), &["read", "src/lib.rs", "connect"]);
    assert!(
        markdown.contains(": Connects once; the caller retries.\n"),
        "{markdown}"
    );
    let marked = line_starting(&markdown, "  **Corrected** intent (corrected ");
    assert!(
        marked.ends_with(&format!(
            " by {AUTHOR}: retrying moved to the caller); was: Connects with retries."
        )),
        "{marked}"
    );
    // Not flagged: the confidence is the factors' weighted sum.
    let f = &region["confidence_factors"];
    let sum = f["recency"].as_f64().unwrap() * 0.4
        + f["context_level"].as_f64().unwrap() * 0.3
        + f["anchor_stability"].as_f64().unwrap() * 0.2
        + f["provenance"].as_f64().unwrap() * 0.1;
    assert!((confidence(&region) - sum).abs() < 1e-9, "{region}");
    // The note keeps the original intent.
    assert_eq!(
        stored(&repo, &commit).regions[0].intent,
        "Connects with retries."
    );
}

#[test]
fn constraints_and_tags_are_added_and_removed() {
    let repo = TestRepo::new();
    let commit = annotated(&repo);
    let correct = |field: &str, how: &str, value: &str| {
        succeed(
            &repo,
            &correct_args(&commit, "send", (field, how, value), "reviewed"),
        )
    };
    let out = correct("constraints", "--add", "Returns the bytes written.");
    assert!(
        out.starts_with("added to constraints: \"Returns the bytes written.\" in src/lib.rs:send"),
        "{out}"
    );
    correct("constraints", "--remove", "Never blocks.");
    correct("tags", "--add", "io");
    correct("tags", "--remove", "net");

    let region = read_json(&repo, "send");
    assert_eq!(
        region["region"]["constraints"],
        json!([{"text": "Returns the bytes written.", "source": "author"}])
    );
    assert_eq!(region["region"]["tags"], json!(["io"]));
    let kinds = ["add", "remove", "add", "remove"];
    assert_eq!(region["corrections"].as_array().map(Vec::len), Some(4));
    for (i, kind) in kinds.iter().enumerate() {
        assert_eq!(region["corrections"][i]["kind"], *kind, "{region}");
    }
    let markdown = stdout(repo.path(), &["read", "src/lib.rs", "send"]);
    assert!(
        markdown.contains("  **Corrected** constraints: one removed (corrected "),
        "{markdown}"
    );
    // `connect` is untouched, and so is the note's own text.
    assert_eq!(
        read_json(&repo, "connect")["region"]["constraints"][0]["text"],
        "Never blocks."
    );
    let note = stored(&repo, &commit);
    assert_eq!(note.regions[1].tags, ["net"]);
    assert_eq!(note.corrections.len(), 4);
}

#[test]
fn bad_input_is_one_clear_error() {
    let repo = TestRepo::new();
    let commit = annotated(&repo);
    let unannotated = repo.commit_file("README", "hi\n", "Add a readme");
    let check = |args: &[&str], code: i32, expected: &str| {
        let run = ultragit(repo.path(), args);
        assert_eq!(run.code, code, "{args:?}: {run:?}");
        assert!(run.stderr.contains(expected), "{args:?}: {run:?}");
        assert!(run.stdout.is_empty(), "{run:?}");
    };
    let target = ["--file", "src/lib.rs", "--anchor", "connect"];
    let flag = |commit: &str, extra: &[&str]| -> Vec<String> {
        let mut args = vec!["flag".to_owned(), commit.to_owned()];
        args.extend(target.iter().chain(extra).map(|s| (*s).to_owned()));
        args
    };
    let run = |args: Vec<String>, code: i32, expected: &str| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        check(&args, code, expected);
    };
    run(flag("nope", &["--reason", "r"]), 1, "nope");
    run(
        flag(&unannotated, &["--reason", "r"]),
        1,
        &format!(
            "error: commit {} has no ultragit annotation to correct",
            &unannotated[..7]
        ),
    );
    run(flag(&commit, &[]), 2, "--reason");
    run(
        flag(&commit, &["--reason", "  "]),
        1,
        "error: invalid correction: reason is empty; say why",
    );
    check(
        &[
            "flag",
            &commit,
            "--file",
            "src/lib.rs",
            "--anchor",
            "Connect",
            "--reason",
            "r",
        ],
        1,
        "has no region src/lib.rs:Connect; its regions are: src/lib.rs:connect, src/lib.rs:send",
    );
    check(
        &["flag", &commit, "--anchor", "connect", "--reason", "r"],
        2,
        "--file",
    );
    let correct = |field: &str, how: &str, value: &str| {
        correct_args(&commit, "connect", (field, how, value), "r")
    };
    let refused = [
        (
            "constraints",
            "--set",
            "x",
            2,
            "--field constraints takes --add or --remove, not --set",
        ),
        (
            "intent",
            "--add",
            "x",
            2,
            "--field intent takes --set, not --add",
        ),
        ("summary", "--set", "x", 2, "summary"),
        (
            "constraints",
            "--remove",
            "Is fast.",
            1,
            "changes nothing: src/lib.rs:connect has no constraints entry \"Is fast.\"; it has: \"Never blocks.\"",
        ),
        (
            "tags",
            "--add",
            "net",
            1,
            "already has the tags entry \"net\"",
        ),
    ];
    for (field, how, value, code, expected) in refused {
        run(correct(field, how, value), code, expected);
    }
    check(
        &[
            "correct",
            &commit,
            "--file",
            "src/lib.rs",
            "--anchor",
            "connect",
            "--field",
            "intent",
            "--reason",
            "r",
        ],
        2,
        "--set",
    );
    let run = ultragit_with(
        repo.path(),
        &["flag", &commit, "--reason", "r"],
        &[("GIT_AUTHOR_NAME", "")],
    );
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr
            .starts_with("error: no git identity to record as the correction's author; set one with `git config user.name"),
        "{run:?}"
    );
    // Nothing was written by any of them.
    assert!(stored(&repo, &commit).corrections.is_empty());
}

#[test]
fn corrections_travel_with_sync_and_merge_across_clones() {
    let a = TestRepo::new();
    let commit = annotated(&a);
    let bare = a.path().parent().unwrap().join("shared.git");
    let url = bare.to_str().unwrap();
    a.git(&["clone", "--quiet", "--bare", ".", url]);
    a.git(&["remote", "add", "origin", url]);
    stdout(a.path(), &["sync"]);
    let b = TestRepo::new();
    b.git(&["remote", "add", "origin", url]);
    b.git(&["fetch", "--quiet", "origin"]);
    b.git(&["reset", "--quiet", "--hard", "origin/main"]);
    stdout(b.path(), &["sync"]);

    // Each clone corrects the same note before seeing the other's.
    stdout(
        b.path(),
        &["flag", &commit, "--reason", "annotated from a stale diff"],
    );
    succeed(
        &a,
        &correct_args(
            &commit,
            "connect",
            ("intent", "--set", "Connects once."),
            "no retries",
        ),
    );
    stdout(b.path(), &["sync"]);
    stdout(a.path(), &["sync"]);
    stdout(b.path(), &["sync"]);

    for clone in [&a, &b] {
        let note = stored(clone, &commit);
        let mut kinds: Vec<&str> = note.corrections.iter().map(|c| c.kind.as_str()).collect();
        kinds.sort_unstable();
        assert_eq!(kinds, ["flag", "set"], "{note:?}");
        assert_eq!(note.regions[0].intent, "Connects with retries.");
        let region = read_json(clone, "connect");
        assert_eq!(region["region"]["intent"], "Connects once.");
        assert_eq!(region["corrections"].as_array().unwrap().len(), 2);
    }
    assert_eq!(stored(&a, &commit), stored(&b, &commit));
}

#[test]
fn correction_text_reaches_the_terminal_escaped() {
    let repo = TestRepo::new();
    let commit = annotated(&repo);
    let reason = "clears \u{1b}[2J the screen";
    let out = stdout(repo.path(), &["flag", &commit, "--reason", reason]);
    assert!(
        !out.contains('\u{1b}') && out.contains("clears "),
        "{out:?}"
    );
    for format in ["markdown", "pretty"] {
        let shown = stdout(
            repo.path(),
            &["read", "src/lib.rs", "connect", "--format", format],
        );
        assert!(!shown.contains('\u{1b}'), "{shown:?}");
        assert!(shown.contains("clears "), "{shown:?}");
    }
    // JSON keeps the exact text.
    assert_eq!(
        read_json(&repo, "connect")["corrections"][0]["reason"],
        reason
    );
}
