use proptest::prelude::RngExt;

use super::*;
use crate::WIDTH;
use crate::corpus::{pick, rng};

#[track_caller]
fn check_reflow(input: &str, width: usize, expected: &str) {
    let wrapped = reflow(input, width);
    assert_eq!(wrapped, expected, "reflow({input:?}, {width})");
    assert_eq!(reflow(&wrapped, width), wrapped, "reflow is not idempotent");
}

/// [`check_reflow`] of text that must come back as it is.
#[track_caller]
fn check_verbatim(input: &str, width: usize) {
    check_reflow(input, width, input);
}

// --- reflow ---

#[test]
fn reflow_joins_soft_wraps_and_keeps_paragraphs() {
    check_reflow("a\nb\nc", 72, "a b c");
    check_reflow("a\nb\n\n\n\nc", 72, "a b\n\nc");
    check_reflow("\n\na   b\t c  \n\n", 72, "a b c");
    check_reflow(
        "the quick brown fox jumps over the lazy dog",
        20,
        "the quick brown fox\njumps over the lazy\ndog",
    );
    check_reflow("", 72, "");
}

#[test]
fn reflow_wraps_bullets_with_a_hanging_indent() {
    check_reflow(
        "- first item that is long enough to wrap\ncontinued here\n- second",
        20,
        "- first item that is\n  long enough to\n  wrap continued\n  here\n- second",
    );
    check_reflow("*   star\n+ plus", 72, "* star\n+ plus");
    check_reflow("Changes:\n- a\n- b", 72, "Changes:\n- a\n- b");
    check_reflow("- a\n  - b b b b", 8, "- a\n  - b b\n    b b");
    check_reflow("-\nfoo", 72, "- foo");
}

#[test]
fn reflow_wraps_numbered_lists() {
    check_reflow(
        "1. alpha beta gamma delta\n2) x",
        15,
        "1. alpha beta\n   gamma delta\n2) x",
    );
    check_reflow("10. a b c d", 8, "10. a b\n    c d");
}

#[test]
fn reflow_keeps_code_trailers_and_tables_verbatim() {
    let code = "    cargo test --workspace --all-targets -- --nocapture and more\n    second line";
    check_verbatim(&format!("Run:\n\n{code}"), 20);
    check_verbatim("\tlet x = 1;\n\tlet y = 2;", 5);
    check_verbatim(
        "Signed-off-by: A U Thor <a@example.com>\nReviewed-by: B",
        10,
    );
    check_verbatim("| a | b |\n| c | d |", 5);
    check_verbatim("text\n| a | b |", 3);
    check_verbatim("```\nlet x = 1;\n```", 3);
    check_reflow("code   \n\n    kept  ", 72, "code\n\n    kept");
}

#[test]
fn reflow_puts_long_words_on_their_own_line() {
    check_reflow(
        "See https://example.com/a/very/long/path/that/exceeds/width for details",
        30,
        "See\nhttps://example.com/a/very/long/path/that/exceeds/width\nfor details",
    );
    check_verbatim(
        "- https://example.com/a/very/long/path/that/exceeds/width",
        30,
    );
}

#[test]
fn reflow_counts_characters_not_bytes() {
    check_reflow("éé éé éé", 8, "éé éé éé");
    check_reflow("ééééé ééééé ééééé", 10, "ééééé\nééééé\nééééé");
    check_reflow("漢字 漢字 🎉🎉", 10, "漢字 漢字 🎉🎉");
}

#[test]
fn reflow_never_starts_a_line_with_a_list_marker() {
    check_reflow("aaaa bbbb - cccc", 10, "aaaa\nbbbb -\ncccc");
    check_reflow("version one 2. then", 11, "version\none 2. then");
    check_reflow("- a b * c", 5, "- a\n  b *\n  c");
}

#[test]
fn reflow_is_idempotent_and_fits_over_a_generated_corpus() {
    const WORDS: &[&str] = &[
        "a",
        "to",
        "the",
        "parser",
        "handles",
        "ünïcödé",
        "漢字",
        "🎉",
        "averyveryverylongidentifierthatexceedsnarrowwidths",
    ];
    const BREAKS: &[&str] = &[" ", " ", " ", "\n", "\n\n", "\n- ", "\n1. ", "\n  * "];
    let mut rng = rng();
    for _ in 0..2000 {
        let mut body = String::new();
        for _ in 0..=rng.random_range(0..30_usize) {
            body.push_str(pick(&mut rng, WORDS));
            body.push_str(pick(&mut rng, BREAKS));
        }
        for width in [8, 20, WIDTH] {
            let wrapped = reflow(&body, width);
            assert_eq!(reflow(&wrapped, width), wrapped, "{body:?} at {width}");
            for line in wrapped.lines() {
                assert!(
                    line.chars().count() <= width || UNBREAKABLE.is_match(line),
                    "{line:?} from {body:?} at {width}"
                );
            }
        }
    }
}
