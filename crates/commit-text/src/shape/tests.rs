use std::borrow::Cow;

use super::*;
use crate::corpus::generated_inputs;

/// [`super::shape`] with no kept subject.
fn shape(raw: &str, options: &ShapeOptions) -> String {
    super::shape(raw, options, &|_| false)
}

fn options(keep: &[&str]) -> ShapeOptions {
    ShapeOptions {
        keep_trailers: keep.iter().map(|key| (*key).to_owned()).collect(),
    }
}

#[track_caller]
fn check(input: &str, expected: &str) {
    check_keeping(input, &[], expected);
}

#[track_caller]
fn check_keeping(input: &str, keep: &[&str], expected: &str) {
    let options = options(keep);
    let shaped = shape(input, &options);
    assert_eq!(shaped, expected, "shape({input:?})");
    assert_eq!(shape(&shaped, &options), shaped, "shape is not idempotent");
}

// --- strip_think and thinking blocks in shape ---

#[test]
fn think_blocks_are_removed() {
    check(
        "<think>\nplan the change\n</think>\nFix parser crash",
        "Fix parser crash",
    );
    check("<THINKING>a\nb</Thinking>Fix x\n\nBody.", "Fix x\n\nBody.");
    check("Fix x <think>hmm</think>now", "Fix x now");
    check("<think>a<think>b</think>c</think>Fix x", "Fix x");
}

#[test]
fn unclosed_think_drops_the_rest() {
    check("Fix x\n\nBody.\n<think>second thoughts", "Fix x\n\nBody.");
    assert_eq!(strip_think("keep<think>drop"), "keep");
}

#[test]
fn orphan_close_drops_everything_before_it() {
    check(
        "reasoning without an opening tag\n</think>\n\nFix x\n\nBody.",
        "Fix x\n\nBody.",
    );
    assert_eq!(strip_think("plan</THINK>answer"), "answer");
    assert_eq!(strip_think("<think>a</think>b</think>c"), "c");
}

#[test]
fn strip_think_leaves_no_tags_behind() {
    assert_eq!(strip_think("a<think>x</think>b"), "ab");
    assert_eq!(strip_think("no tags <thin> here"), "no tags <thin> here");
    // Removing the inner block joins `<thi` and `nk>` into a new tag.
    assert_eq!(strip_think("keep<thi<think></think>nk>drop"), "keep");
}

// --- fences ---

#[test]
fn whole_message_fence_is_unwrapped() {
    check("```\nFix x\n\nBody text.\n```", "Fix x\n\nBody text.");
    check("```text\nFix x\n```", "Fix x");
    check("  ```git-commit\nFix x\n```  ", "Fix x");
}

#[test]
fn fence_after_a_preamble_is_unwrapped() {
    check(
        "Here is the commit message:\n\n```\nFix x\n\nBody.\n```",
        "Fix x\n\nBody.",
    );
}

#[test]
fn inner_fences_are_kept_for_validation() {
    check(
        "Fix x\n\nRun:\n\n```\ncargo test\n```",
        "Fix x\n\nRun:\n\n```\ncargo test\n```",
    );
    check(
        "Fix x\n```\ncode\n```\ntrailing words",
        "Fix x\n\n```\ncode\n```\ntrailing words",
    );
    check(
        "```\nFix x\n```sh\nls\n```\n```",
        "```\n\nFix x\n```sh\nls\n```\n```",
    );
}

// --- preambles and labels ---

#[test]
fn preambles_are_dropped() {
    check("Here is the commit message:\nFix x", "Fix x");
    check(
        "Here's a commit message for these changes:\n\nFix x\n\nBody.",
        "Fix x\n\nBody.",
    );
    check("Sure! Here is a concise commit message:\nFix x", "Fix x");
    check("Certainly. Below is the message:\nFix x", "Fix x");
    check("OK, here you go:\nFix x", "Fix x");
    check("Commit message:\nFix x", "Fix x");
    check("**Suggested commit message:**\n\nFix x", "Fix x");
    check(
        "Below is the commit message:\nHere is another lead-in:\nFix x",
        "Fix x",
    );
}

#[test]
fn lines_that_only_look_like_preambles_stay() {
    check("Here is not a lead-in", "Here is not a lead-in");
    check("Fix parsing of:\n\nBody.", "Fix parsing of:\n\nBody.");
    check(
        "Fix x\n\nHere is what changed:\n- a",
        "Fix x\n\nHere is what changed:\n- a",
    );
}

#[test]
fn subject_and_body_labels_are_removed() {
    check("Subject: Fix x\n\nBody: \nThe body.", "Fix x\n\nThe body.");
    check("Subject:\nFix x\nBody:\nThe body.", "Fix x\n\nThe body.");
    check("subject line: Fix x", "Fix x");
    check("SUBJECT: \"Fix x\"", "Fix x");
    check(
        "Fix x\n\nBody: kept, it is text",
        "Fix x\n\nBody: kept, it is text",
    );
}

// --- subject ---

#[test]
fn wrapped_subjects_are_unwrapped() {
    check("\"Fix x\"", "Fix x");
    check("`Fix x`\n\nBody.", "Fix x\n\nBody.");
    check("'Fix x'", "Fix x");
    check("“Fix x”", "Fix x");
    check("\"`Fix x`\"", "Fix x");
    check("'a' and 'b'", "'a' and 'b'");
    check("`foo` returns `bar`", "`foo` returns `bar`");
    check("\"\"\nFix x", "Fix x");
}

#[test]
fn blank_lines_are_normalized() {
    check(
        "\n\n  Fix x  \n\n\n\nPara one.\n\n\n\nPara two.\n\n\n",
        "Fix x\n\nPara one.\n\nPara two.",
    );
    check("Fix x\nBody right after.", "Fix x\n\nBody right after.");
    check("Fix x\r\n\r\nBody\r\nmore\r\n", "Fix x\n\nBody more");
    check("Fix x\rBody", "Fix x\n\nBody");
    check("Fix x   \n\t\n", "Fix x");
    check("", "");
    check("  \n\n<think>only thoughts</think>\n", "");
}

// --- attribution and trailers ---

#[test]
fn ai_attribution_is_removed() {
    check(
        "Fix x\n\nBody.\n\n🤖 Generated with [Claude Code](https://claude.com/claude-code)\n\nCo-Authored-By: Claude <noreply@anthropic.com>",
        "Fix x\n\nBody.",
    );
    check("Fix x\n\nBody.\nGenerated with ChatGPT", "Fix x\n\nBody.");
    check(
        "Fix x\n\n(Generated by git-agent)\n\nBody.",
        "Fix x\n\nBody.",
    );
    check(
        "Fix x\n\nBody.\nAssisted-by: GPT-4o\nMade-with: Copilot\nGenerated-by: Gemini",
        "Fix x\n\nBody.",
    );
    check("Fix x\n\nWritten by AI.\nBody.", "Fix x\n\nBody.");
}

#[test]
fn attribution_kept_when_its_key_is_kept() {
    check_keeping(
        "Fix x\n\nBody.\n\nCo-authored-by: Claude <noreply@anthropic.com>",
        &["co-authored-by"],
        "Fix x\n\nBody.\n\nCo-authored-by: Claude <noreply@anthropic.com>",
    );
}

#[test]
fn text_that_is_not_attribution_stays() {
    check(
        "Fix x\n\nThe table is generated by the build script.",
        "Fix x\n\nThe table is generated by the build script.",
    );
    check(
        "Fix x\n\nTeach the client to talk to Claude.",
        "Fix x\n\nTeach the client to talk to Claude.",
    );
}

#[test]
fn unrequested_trailers_are_dropped() {
    check(
        "Fix x\n\nBody.\n\nSigned-off-by: A U Thor <a@example.com>",
        "Fix x\n\nBody.",
    );
    check(
        "Fix x\n\nBody.\n\nCo-authored-by: Jane Doe <jane@example.com>",
        "Fix x\n\nBody.",
    );
    check(
        "Fix x\n\nBody.\n\nRefs: #12\n\nSigned-off-by: A <a@x>",
        "Fix x\n\nBody.",
    );
}

#[test]
fn requested_trailers_are_kept() {
    check_keeping(
        "Fix x\n\nBody.\n\nSigned-off-by: A <a@x>\nReviewed-by: B <b@x>",
        &["Signed-off-by"],
        "Fix x\n\nBody.\n\nSigned-off-by: A <a@x>",
    );
    check_keeping(
        "Fix x\n\nBody.\n\nCo-authored-by: Jane Doe <jane@example.com>",
        &["CO-AUTHORED-BY:"],
        "Fix x\n\nBody.\n\nCo-authored-by: Jane Doe <jane@example.com>",
    );
}

#[test]
fn prose_with_a_colon_is_not_a_trailer() {
    check(
        "Fix x\n\nBody.\n\nNote: this needs a migration.",
        "Fix x\n\nBody.\n\nNote: this needs a migration.",
    );
    check(
        "Fix x\n\nFirst line.\nNote: second.",
        "Fix x\n\nFirst line. Note: second.",
    );
    check(
        "Fix x\n\nSigned-off-by: A <a@x>\nand prose after it",
        "Fix x\n\nSigned-off-by: A <a@x>\nand prose after it",
    );
    check(
        "Fix x\n\nBody text\nwraps.\nFixes: #12",
        "Fix x\n\nBody text wraps.\nFixes: #12",
    );
}

#[test]
fn shape_reflows_the_body() {
    let long = "word ".repeat(20);
    check(
        &format!("Fix x\n\n{long}\n- item {long}"),
        &[
            "Fix x",
            "",
            "word ".repeat(14).trim_end(),
            "word ".repeat(6).trim_end(),
            &format!("- item {}", "word ".repeat(13).trim_end()),
            &format!("  {}", "word ".repeat(7).trim_end()),
        ]
        .join("\n"),
    );
}

#[test]
fn shape_is_idempotent_over_a_generated_corpus() {
    let keep_sets: [&[&str]; 3] = [&[], &["Signed-off-by"], &["co-authored-by", "Refs"]];
    for (index, input) in generated_inputs(3000).iter().enumerate() {
        let options = options(keep_sets[index % keep_sets.len()]);
        let shaped = shape(input, &options);
        assert_eq!(shape(&shaped, &options), shaped, "input {input:?}");
        assert!(
            shaped.lines().all(|line| line.trim_end() == line),
            "trailing whitespace in {shaped:?}"
        );
        assert!(!shaped.ends_with('\n'), "ends with a newline: {shaped:?}");
        assert!(!shaped.contains("\n\n\n"), "blank-line run in {shaped:?}");
        assert!(!shaped.starts_with(char::is_whitespace), "{shaped:?}");
        assert!(!shaped.contains('\r'), "{shaped:?}");
    }
}

// --- control characters ---

#[test]
fn control_characters_and_escape_sequences_are_removed() {
    assert!(matches!(strip_controls("plain\ttab\n"), Cow::Borrowed(_)));
    for (input, expected) in [
        ("\x1b[31mred\x1b[0m text", "red text"),
        ("clip\x1b]52;c;ZXZpbA==\x07board", "clipboard"),
        ("st\x1b]0;title\x1b\\ring", "string"),
        ("broken \x1b]0;never ends\nnext line", "broken \nnext line"),
        ("bell\x07 del\x7f c1\u{9b}31m", "bell del c131m"),
        (
            "rtl \u{202e}desrever\u{202c} iso\u{2066}x\u{2069}",
            "rtl desrever isox",
        ),
        ("esc at the end\x1b", "esc at the end"),
        ("esc\x1b\nnewline", "esc\nnewline"),
        ("two-char \x1bMescape", "two-char escape"),
    ] {
        assert_eq!(strip_controls(input), expected, "{input:?}");
    }
    check(
        "\x1b[1mfix: bold\x1b[0m subject\n\nBody\x1b[2J with \u{202e}tricks.\r\n",
        "fix: bold subject\n\nBody with tricks.",
    );
}

#[test]
fn a_kept_subject_is_never_unwrapped() {
    // Fixed: when amending, a subject that reads like a lead-in, a label or a
    // quotation was peeled off or unquoted, and the amend could never keep it.
    for subject in [
        "Here is the fix for the searcher's binary detection:",
        "Sure, a fix for empty lines:",
        "Commit message:",
        "Subject: keep the subject",
        "\"Quoted subject\"",
        "`printer`",
        "'single quotes'",
    ] {
        let kept = |line: &str| line == subject;
        let check = |input: &str, expected: &str| {
            let shaped = super::shape(input, &ShapeOptions::default(), &kept);
            assert_eq!(shaped, expected, "shape({input:?})");
            let again = super::shape(&shaped, &ShapeOptions::default(), &kept);
            assert_eq!(again, shaped, "not idempotent");
        };
        check(subject, subject);
        check(
            &format!("  {subject}\n\nThe body."),
            &format!("{subject}\n\nThe body."),
        );
        // What wraps it still goes.
        check(
            &format!("Here is the commit message:\n\n```\n{subject}\n\nThe body.\n```"),
            &format!("{subject}\n\nThe body."),
        );
        // Without the kept subject, it is unwrapped like any other.
        assert_ne!(
            shape(&format!("{subject}\n\nThe body."), &ShapeOptions::default()),
            format!("{subject}\n\nThe body.")
        );
    }
}

#[test]
fn many_leading_blank_lines_and_preambles_shape_quickly() {
    // Quadratic peeling would take minutes here.
    let input = format!(
        "{}{}fix: the subject",
        "\n".repeat(200_000),
        "Sure:\n".repeat(20_000)
    );
    assert_eq!(shape(&input, &ShapeOptions::default()), "fix: the subject");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(500))]

    #[test]
    fn shaped_messages_hold_no_control_characters(
        input in "(\\PC|[\x00-\x1f\x7f-\u{9f}\u{202a}-\u{202e}\u{2066}-\u{2069}]|\x1b\\[[0-9;]*m|\n){0,200}"
    ) {
        let options = ShapeOptions::default();
        let shaped = shape(&input, &options);
        proptest::prop_assert!(
            !shaped.chars().any(|c| (c.is_control() && c != '\n' && c != '\t')
                || ('\u{202a}'..='\u{202e}').contains(&c)
                || ('\u{2066}'..='\u{2069}').contains(&c)),
            "{:?} shaped to {:?}", input, shaped
        );
        proptest::prop_assert_eq!(shape(&shaped, &options), shaped);
    }
}

// --- kept trailers ---

#[test]
fn trailers_kept_from_the_original_and_the_hint() {
    assert_eq!(
        kept_trailers(
            Some(
                "Subject\n\nBody: not a trailer, the paragraph goes on\nlike this.\n\nSigned-off-by: A <a@x>\n"
            ),
            Some("please add a Refs: line")
        ),
        ["Refs", "Signed-off-by"]
    );
    assert!(kept_trailers(None, None).is_empty());
}
