//! Parsers of text that comes from the repository: staged lockfiles and diff
//! text fitted into a budget (commit subjects and messages from history are
//! `commit-text`'s, tested there). Whatever
//! the bytes, they never panic and what they produce stays proportional to what
//! they read.
//!
//! `lockfile.rs` has its own property tests (arbitrary text, lockfile-like
//! text, mangled samples); these add arbitrary bytes, per-format hostile lines,
//! output bounds, and large adversarial inputs that a quadratic or recursive
//! parser could not get through.

use git_agent_core::fit::{Shown, cut_at_line, fit_texts};
use git_agent_core::lockfile::{LockKind, Packages, parse, summarize};
use proptest::prelude::*;

/// Bytes of names and versions a parse may yield per byte read (a JSON
/// `\u0041` escape only shrinks; a pnpm key yields a name and a version from
/// distinct parts of one line).
fn output_bytes(packages: &Packages) -> usize {
    packages
        .iter()
        .map(|(name, versions)| name.len() + versions.iter().map(String::len).sum::<usize>())
        .sum()
}

/// Parses `text` as every kind and summarizes it against another side,
/// checking the documented guarantees and the bounds.
fn exercise_lockfile(text: &str) {
    for kind in LockKind::ALL {
        if let Ok(packages) = parse(kind, text) {
            assert!(
                output_bytes(&packages) <= text.len(),
                "{kind}: {} bytes of packages from {} bytes",
                output_bytes(&packages),
                text.len()
            );
            for (name, versions) in &packages {
                assert!(!name.is_empty() && !name.chars().any(char::is_control));
                for version in versions {
                    assert!(!version.is_empty() && !version.chars().any(char::is_control));
                }
            }
        }
        let summary = summarize("lock", kind, Some(text), Some("x"));
        for max in [0, 3] {
            let rendered = summary.render(max);
            assert!(rendered.lines().count() <= 4, "{rendered}");
            if max == 0 {
                // No package listed: only counts and "… and N more".
                assert!(rendered.len() <= 400, "{rendered}");
            }
        }
    }
}

/// One line of some lockfile format, with hostile values.
fn lockfile_line() -> impl Strategy<Value = String> {
    let value = prop_oneof![
        Just(String::new()),
        Just("1.0.0".to_owned()),
        Just("\u{1b}[2J".to_owned()),
        Just("é→日本".to_owned()),
        "[0-9.]{0,40}",
        "[^\n\"]{0,20}",
    ];
    prop_oneof![
        Just("[[package]]".to_owned()),
        Just("[package.dependencies]".to_owned()),
        value.clone().prop_map(|v| format!("name = \"{v}\"")),
        value.clone().prop_map(|v| format!("version = \"{v}\"")),
        Just("desc = \"\"\"".to_owned()),
        Just("deps = [".to_owned()),
        Just("]".to_owned()),
        value
            .clone()
            .prop_map(|v| format!("\"{v}@^1\", \"{v}@^2\":")),
        value.clone().prop_map(|v| format!("  version \"{v}\"")),
        value.clone().prop_map(|v| format!("  version: {v}")),
        Just("__metadata:".to_owned()),
        Just("packages:".to_owned()),
        value.clone().prop_map(|v| format!("  /{v}/1.0.0_peer@2:")),
        value
            .clone()
            .prop_map(|v| format!("  '/@s/{v}@1.0.0(d@1.0.0)':")),
        value.clone().prop_map(|v| format!("    version: {v}")),
        value
            .clone()
            .prop_map(|v| format!("github.com/a/{v} v1.0.0 h1:abc=")),
        Just("GEM".to_owned()),
        Just("  specs:".to_owned()),
        value.clone().prop_map(|v| format!("    {v} (3.0.0)")),
        value.prop_map(|v| format!(
            "{{\"packages\": {{\"node_modules/{v}\": {{\"version\": \"{v}\"}}}}}}"
        )),
        "[^\n]{0,30}",
    ]
}

proptest! {
    #[test]
    fn lockfiles_of_arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..1024)) {
        exercise_lockfile(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn lockfile_lines_with_hostile_values_never_panic(
        lines in prop::collection::vec(lockfile_line(), 0..30),
        crlf in any::<bool>(),
    ) {
        exercise_lockfile(&lines.join(if crlf { "\r\n" } else { "\n" }));
    }
}

#[test]
fn large_adversarial_lockfiles_stay_linear() {
    let megabyte = |marker: &str| marker.repeat(1024 * 1024 / marker.len());
    for marker in [
        "[[package]]\n",
        "\"\"\"",
        "[",
        "{",
        "{\"a\":",
        "name = \"",
        "version",
        "  ",
        "packages:\n",
        "@",
        "\"a@1\", ",
        "  version \"1\"\n",
        "a b h1:x\n",
        "    a (1)\n",
        "\\",
        "x",
    ] {
        exercise_lockfile(&megabyte(marker));
    }
    // Many packages, each a few lines: all read, and compared in n log n.
    let many = |minor: usize| -> String {
        (0..50_000)
            .map(|i| format!("[[package]]\nname = \"p{i}\"\nversion = \"{minor}.{i}\"\n"))
            .collect()
    };
    let (old, new) = (many(1), many(2));
    assert_eq!(parse(LockKind::Cargo, &old).unwrap().len(), 50_000);
    let summary = summarize("Cargo.lock", LockKind::Cargo, Some(&old), Some(&new));
    assert_eq!(summary.changed.len(), 50_000);
    assert_eq!(summary.render(10).lines().count(), 2);
    // Deeply nested npm v1 dependencies and JSON nesting: an error, not a
    // stack overflow.
    for depth in [100, 10_000, 200_000] {
        let nested = format!(
            "{{\"lockfileVersion\": 1, {}\"version\": \"1\"{}}}",
            "\"dependencies\": {\"a\": {".repeat(depth),
            "}}".repeat(depth)
        );
        exercise_lockfile(&nested);
        let arrays = format!(
            "{{\"packages\": {}{}}}",
            "[".repeat(depth),
            "]".repeat(depth)
        );
        exercise_lockfile(&arrays);
    }
    // One very long version, many names sharing a key line.
    let long_version = format!(
        "{}:\n  version \"{}\"\n",
        (0..20_000)
            .map(|i| format!("\"p{i}@^1\""))
            .collect::<Vec<_>>()
            .join(", "),
        "9".repeat(100_000)
    );
    let packages = parse(LockKind::Yarn, &long_version).unwrap();
    assert_eq!(packages.len(), 1);
    exercise_lockfile(&long_version);
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
