//! Which file is which lockfile (`data/kinds.json`), each format's parser on
//! real-world samples (`data/samples.json`), and what text that is not the
//! format yields (`data/errors.json`).

use std::fs;
use std::path::Path;

use lockfile_diff::{LockKind, Packages, kind_of, parse};
use serde_json::Value;

use crate::{check, parse_error};

// -- the tables ----------------------------------------------------------

/// File paths and the kind of lockfile `kind_of` must take each for: an
/// object per case with its `path` and `kind` (a `LockKind` variant, or `null`
/// for none).
const KINDS: &str = include_str!("data/kinds.json");

/// What each format's parser must find: an object per case with what it is
/// `about`, the format's `kind` (a `LockKind` variant), the lockfile as a
/// `file` in `data/` or as `text`, and its `packages` (name → versions).
const SAMPLES: &str = include_str!("data/samples.json");

/// Text each format's parser must refuse: an object per case with what it is
/// `about`, the `kind`, the `text`, and what the error message `is`, or what it
/// `starts_with` (and, optionally, `contains`).
const ERRORS: &str = include_str!("data/errors.json");

/// The cases of a table, parsed: `count` of them, so that a table cut short
/// fails rather than passes.
fn cases(table: &str, count: usize) -> Vec<Value> {
    let cases: Vec<Value> = serde_json::from_str(table).expect("the cases are a JSON array");
    assert_eq!(cases.len(), count, "the table is whole");
    cases
}

/// The field `key` of `case`, which must be text.
fn text<'a>(case: &'a Value, key: &str) -> &'a str {
    case[key]
        .as_str()
        .unwrap_or_else(|| panic!("no text {key}: {case}"))
}

/// The `LockKind` the case names.
fn kind(case: &Value) -> LockKind {
    let name = text(case, "kind");
    LockKind::ALL
        .into_iter()
        .find(|kind| format!("{kind:?}") == name)
        .unwrap_or_else(|| panic!("no lockfile kind {name}"))
}

// -- kinds ---------------------------------------------------------------

#[test]
fn kind_of_matches_exact_file_names() {
    for case in cases(KINDS, 17) {
        let path = text(&case, "path");
        assert!(
            case.get("kind").is_some(),
            "no kind (null for none): {case}"
        );
        let expected = (!case["kind"].is_null()).then(|| kind(&case));
        assert_eq!(kind_of(path), expected, "{path}");
    }
}

#[test]
fn kind_names_are_ecosystem_labels() {
    let names: Vec<&str> = LockKind::ALL.iter().map(|k| k.name()).collect();
    assert_eq!(
        names,
        [
            "Cargo", "npm", "Yarn", "pnpm", "Poetry", "uv", "Go", "Bundler", "Composer"
        ]
    );
    assert_eq!(LockKind::Npm.to_string(), "npm");
}

// -- samples -------------------------------------------------------------

#[test]
fn each_sample_yields_its_packages() {
    for case in cases(SAMPLES, 23) {
        let about = text(&case, "about");
        let lockfile = match case.get("file") {
            Some(_) => {
                let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("tests/it/data")
                    .join(text(&case, "file"));
                fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            }
            None => text(&case, "text").to_owned(),
        };
        let kind = kind(&case);
        let packages = parse(kind, &lockfile)
            .unwrap_or_else(|err| panic!("{about}: the {kind} sample did not parse: {err}"));
        let expected: Packages =
            serde_json::from_value(case["packages"].clone()).expect("packages: name → versions");
        assert_eq!(packages, expected, "{about}");
    }
}

#[test]
fn each_error_says_what_was_wrong() {
    for case in cases(ERRORS, 19) {
        let about = text(&case, "about");
        let message = parse_error(kind(&case), text(&case, "text"));
        if case.get("is").is_some() {
            assert_eq!(message, text(&case, "is"), "{about}");
        } else {
            let start = text(&case, "starts_with");
            assert!(message.starts_with(start), "{about}: {message}");
        }
        if case.get("contains").is_some() {
            let piece = text(&case, "contains");
            assert!(message.contains(piece), "{about}: {message}");
        }
    }
}

#[test]
fn blank_text_holds_no_packages() {
    for kind in LockKind::ALL {
        check(kind, "", &[]);
        check(kind, " \n\t\n", &[]);
    }
}
