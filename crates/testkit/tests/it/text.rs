//! The text assertions: they pass on a match, and a failure names what was
//! looked for and shows the text, cut to `SHOWN` bytes.

use testkit::text::SHOWN;
use testkit::{
    assert_contains, assert_contains_all, assert_ends_with, assert_lacks, assert_starts_with,
};

/// The panic message of `f`, which must panic.
fn failure(f: impl FnOnce() + std::panic::UnwindSafe) -> String {
    let payload = std::panic::catch_unwind(f).expect_err("the assertion should fail");
    payload
        .downcast_ref::<String>()
        .cloned()
        .expect("a formatted panic message")
}

#[test]
fn matching_text_passes() {
    let text = "error: no remote\ncaused by: offline\n";
    assert_contains(text, "no remote");
    assert_contains_all(text, &["error:", "caused by: offline"]);
    assert_lacks(text, "panicked");
    assert_starts_with(text, "error: ");
    assert_ends_with(text, "offline\n");
}

#[test]
fn a_failure_names_the_needle_and_shows_the_text() {
    let text = "error: no remote";
    for (message, expected) in [
        (
            failure(|| assert_contains(text, "hint")),
            "expected the text to contain \"hint\"; the text:\nerror: no remote",
        ),
        (
            failure(|| assert_contains_all(text, &["error", "hint"])),
            "expected the text to contain \"hint\"; the text:\nerror: no remote",
        ),
        (
            failure(|| assert_lacks(text, "remote")),
            "expected the text not to contain \"remote\"; the text:\nerror: no remote",
        ),
        (
            failure(|| assert_starts_with(text, "warning")),
            "expected the text to start with \"warning\"; the text:\nerror: no remote",
        ),
        (
            failure(|| assert_ends_with(text, "\n")),
            "expected the text to end with \"\\n\"; the text:\nerror: no remote",
        ),
    ] {
        assert_eq!(message, expected);
    }
}

#[test]
fn a_huge_text_is_cut_on_a_character_boundary() {
    let text = format!("{}é{}", "x".repeat(SHOWN - 1), "y".repeat(10_000));
    let message = failure(|| assert_contains(&text, "z"));
    let shown = message.split_once("the text:\n").unwrap().1;
    let expected = format!("{}\n[… {} more bytes]", "x".repeat(SHOWN - 1), 10_002);
    assert_eq!(shown, expected);
}

#[test]
fn a_run_keeps_its_exit_code_and_streams_and_its_failures_show_both() {
    let mut sh = std::process::Command::new("sh");
    sh.args(["-c", "echo out; echo err >&2; exit 3"]);
    let run = testkit::cli::run_command(&mut sh);
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (3, "out\n", "err\n")
    );
    run.assert_exit(3)
        .stdout_contains("out")
        .stderr_contains("err");
    let message = failure(|| {
        run.assert_exit(0);
    });
    assert_contains_all(&message, &["stdout:\nout\n", "stderr:\nerr\n"]);
    let message = failure(|| {
        run.stderr_contains("out");
    });
    assert_contains(
        &message,
        "expected the text to contain \"out\"; the text:\nerr\n",
    );
}
