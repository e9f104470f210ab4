//! Lockfiles are untrusted input: whatever the bytes, parsing and
//! summarizing never panic and what they produce stays proportional to what
//! they read — arbitrary text, lockfile-like text, mangled samples, arbitrary
//! bytes, per-format hostile lines, and large adversarial inputs that a
//! quadratic or recursive parser could not get through.

use lockfile_diff::{LockKind, Packages, parse, summarize};
use proptest::prelude::*;

use crate::{CARGO_LOCK, NPM_V3};

// -- robustness ----------------------------------------------------------

/// Samples to mangle, one or more per format.
fn samples() -> Vec<&'static str> {
    vec![
        CARGO_LOCK,
        NPM_V3,
        "{\"dependencies\": {\"a\": {\"version\": \"1\", \"dependencies\": {\"b\": {\"version\": \"2\"}}}}}",
        "{\"packages\": [{\"name\": \"a/b\", \"version\": \"1\"}], \"packages-dev\": []}",
        "\"@a/b@^1\", \"@a/b@^2\":\n  version \"1.2.3\"\n\n__metadata:\n  version: 8\n\"c@npm:1\":\n  version: 1.0.0\n",
        "lockfileVersion: 5.4\npackages:\n  /a/1.0.0_b@2.0.0:\n    dev: true\n  '/@s/c@1.0.0(d@1.0.0)':\n    name: x\n    version: 2\n",
        "github.com/a/b v1.0.0 h1:abc=\ngithub.com/a/b v1.0.0/go.mod h1:def=\n",
        "GEM\n  remote: https://rubygems.org/\n  specs:\n    rack (3.0.0)\n      x (~> 1)\n",
        "[[package]]\nname = \"a\"\nversion = \"1\"\ndeps = [\n { name = \"b\" },\n]\ndesc = \"\"\"\nx\n\"\"\"\n",
    ]
}

fn exercise(text: &str) {
    for kind in LockKind::ALL {
        let _ = parse(kind, text);
        let summary = summarize("lock", kind, Some(text), Some(CARGO_LOCK));
        let _ = summary.render(3);
        let summary = summarize("lock", kind, None, Some(text));
        let _ = summary.render(0);
    }
}

proptest! {
    #[test]
    fn never_panics_on_arbitrary_text(text in any::<String>()) {
        exercise(&text);
    }

    #[test]
    fn never_panics_on_lockfile_like_text(
        text in "([\\[\\]{}\"'#:@/(),=_ \n\t\r\\\\.a-z0-9é→-]|node_modules/|version|name|packages|specs:|\\[\\[package\\]\\]|\"\"\"|    |  ){0,80}"
    ) {
        exercise(&text);
    }

    #[test]
    fn never_panics_on_mangled_samples(
        sample in 0..9usize,
        cut in any::<prop::sample::Index>(),
        noise in "[\\[\\]{}\"':@/(), \n_a-z0-9.é]{0,12}",
        truncate in any::<bool>(),
    ) {
        let text = samples()[sample];
        let boundaries: Vec<usize> = text
            .char_indices()
            .map(|(i, _)| i)
            .chain([text.len()])
            .collect();
        let at = boundaries[cut.index(boundaries.len())];
        let mangled = if truncate {
            text[..at].to_owned()
        } else {
            format!("{}{noise}{}", &text[..at], &text[at..])
        };
        exercise(&mangled);
    }
}

// -- bounds on hostile input ---------------------------------------------

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

#[test]
fn deeply_nested_toml_is_an_error_not_a_stack_overflow() {
    for depth in [100, 10_000, 200_000] {
        for (open, close) in [("[", "]"), ("{ a = ", "}")] {
            let text = format!(
                "[[package]]\nname = \"a\"\nversion = \"1\"\nx = {}{}\n",
                open.repeat(depth),
                close.repeat(depth)
            );
            exercise_lockfile(&text);
            let _ = parse(LockKind::Uv, &text);
        }
    }
}
