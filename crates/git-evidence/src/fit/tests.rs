//! The fitting of diff text into a budget; diff text comes from the
//! repository, so the property tests feed it arbitrary text: whatever the
//! bytes, fitting never panics and what it produces stays proportional to
//! what it read.

use proptest::prelude::*;

use super::*;

fn texts(sizes: &[usize]) -> Vec<(String, String)> {
    sizes
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let line = format!("+line of file {i:02} padded to forty bytes..\n");
            let mut t = format!("diff --git a/f{i} b/f{i}\n");
            while t.len() < n {
                t.push_str(&line);
            }
            (format!("f{i}"), t)
        })
        .collect()
}

#[test]
fn everything_fits_whole() {
    let t = texts(&[100, 200]);
    let f = fit_texts(&t, &[1, 2], 10_000, Some("t"));
    assert!(f.is_complete());
    assert_eq!(f.text, format!("{}{}", t[0].1, t[1].1));
}

#[test]
fn one_big_file_cannot_hide_the_small_ones() {
    let t = texts(&[20_000, 300, 300, 300]);
    let f = fit_texts(&t, &[500, 5, 5, 5], 4_000, Some("t"));
    assert!(f.text.len() <= 4_000 + 200, "{}", f.text.len());
    assert!(matches!(f.shown[0].1, Shown::Cut { .. }));
    for (_, s) in &f.shown[1..] {
        assert_eq!(*s, Shown::Whole);
    }
    assert!(f.text.contains("more lines of the diff of f0 not shown"));
    assert_eq!(f.rest.len(), 1);
    assert_eq!(f.incomplete().collect::<Vec<_>>(), ["f0"]);
}

#[test]
fn too_many_files_keep_the_most_changed() {
    let sizes = vec![2_000; 40];
    let t = texts(&sizes);
    let mut churn = vec![1; 40];
    churn[7] = 100;
    churn[33] = 90;
    let f = fit_texts(&t, &churn, 2 * MIN_SHARE, Some("t"));
    let shown: Vec<&str> = f
        .shown
        .iter()
        .filter(|(_, s)| *s != Shown::Omitted)
        .map(|(p, _)| p.as_str())
        .collect();
    assert_eq!(shown, ["f7", "f33"]);
}

#[test]
fn shares_fill_small_items_first() {
    assert_eq!(shares(&[10, 20], &[0, 0], 100, 5), [Some(10), Some(20)]);
    assert_eq!(
        shares(&[10, 500, 500], &[0, 0, 0], 110, 5),
        [Some(10), Some(50), Some(50)]
    );
    // Too many for the minimum share: the earlier ones at equal priority.
    assert_eq!(
        shares(&[100, 100, 100], &[0, 0, 0], 100, 50),
        [Some(50), Some(50), None]
    );
}

#[test]
fn cuts_fall_on_line_ends_and_char_boundaries() {
    assert_eq!(cut_at_line("ab\ncd\nef\n", 7), ("ab\ncd\n", "ef\n"));
    assert_eq!(cut_at_line("abc", 10), ("abc", ""));
    let (head, tail) = cut_at_line("ééééé", 3);
    assert_eq!(head, "é");
    assert_eq!(tail, "éééé");
}

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
