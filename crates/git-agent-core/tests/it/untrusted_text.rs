//! Parsers of text that comes from the repository: diff text fitted into a
//! budget. Whatever the bytes, they never panic and what they produce stays
//! proportional to what they read. (Staged lockfiles have theirs in the
//! `lockfile-diff` crate; commit subjects and messages from history theirs in
//! `commit-text`.)

use git_agent_core::fit::{Shown, cut_at_line, fit_texts};
use proptest::prelude::*;

// -- diff text ---------------------------------------------------------------

/// Fits `texts` and checks the result against them.
fn exercise_fit(texts: &[(String, String)], budget: usize, tool: Option<&str>) {
    let churn: Vec<u32> = texts
        .iter()
        .map(|(_, t)| t.lines().count() as u32)
        .collect();
    let fitted = fit_texts(texts, &churn, budget, tool);
    assert_eq!(fitted.shown.len(), texts.len());
    let total: usize = texts.iter().map(|(_, t)| t.len()).sum();
    if total <= budget {
        assert!(fitted.is_complete());
        assert_eq!(
            fitted.text,
            texts.iter().map(|(_, t)| t.as_str()).collect::<String>()
        );
        return;
    }
    // Within the budget, plus one marker per cut file.
    let markers: usize = texts
        .iter()
        .zip(&fitted.shown)
        .filter(|(_, (_, shown))| matches!(shown, Shown::Cut { .. }))
        .map(|((path, _), _)| 120 + 2 * path.len() + tool.map_or(0, str::len))
        .sum();
    assert!(
        fitted.text.len() <= budget + markers,
        "{} > {budget} + {markers}",
        fitted.text.len()
    );
    let mut rest = fitted.rest.iter();
    for ((path, text), (shown_path, shown)) in texts.iter().zip(&fitted.shown) {
        assert_eq!(path, shown_path);
        if let Shown::Cut { shown, total } = shown {
            assert!(shown <= total);
            let (rest_path, tail) = rest.next().expect("a cut file has a rest");
            assert_eq!(rest_path, path);
            assert!(text.ends_with(tail.as_str()));
        }
    }
    assert!(rest.next().is_none());
}

fn diff_text() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        Just("diff --git a/f b/f".to_owned()),
        Just("@@ -1,2 +1,3 @@".to_owned()),
        Just("+added".to_owned()),
        Just("-removed".to_owned()),
        Just("\\ No newline at end of file".to_owned()),
        Just("é日本語→".to_owned()),
        "[^\n]{0,60}",
    ];
    prop::collection::vec(line, 0..20).prop_map(|lines| lines.join("\n"))
}

proptest! {
    #[test]
    fn fitting_diff_text_never_panics(
        texts in prop::collection::vec(("[a-z/é]{0,12}", diff_text()), 0..8),
        budget in 0usize..3000,
        tool in prop::option::of("[a-z_]{1,12}"),
    ) {
        exercise_fit(&texts, budget, tool.as_deref());
    }

    #[test]
    fn cutting_at_a_line_splits_without_loss(text in any::<String>(), max in 0usize..200) {
        let (head, tail) = cut_at_line(&text, max);
        prop_assert_eq!(format!("{head}{tail}"), text.clone());
        prop_assert!(head.len() <= max || tail.is_empty());
        if !tail.is_empty() && text[..head.len()].contains('\n') {
            prop_assert!(head.ends_with('\n'));
        }
    }
}

#[test]
fn fitting_large_adversarial_diffs_stays_linear() {
    let one_line = ("big".to_owned(), format!("+{}", "x".repeat(1024 * 1024)));
    let many_lines = ("lines".to_owned(), "+\n".repeat(500_000));
    let headers = ("hunks".to_owned(), "@@ -1 +1 @@\n".repeat(100_000));
    exercise_fit(&[one_line, many_lines, headers], 10_000, Some("diff_tool"));
    let many_files: Vec<(String, String)> = (0..100_000)
        .map(|i| (format!("f{i}"), format!("+line {i}\n")))
        .collect();
    exercise_fit(&many_files, 64 * 1024, None);
}
