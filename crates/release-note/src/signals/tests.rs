use lockfile_diff::LockKind;

use super::*;
use crate::fixtures::grouped;

#[test]
fn class_comes_first() {
    let cases = [
        (Class::Submodule, Signal::Submodule),
        (Class::Lockfile(LockKind::Cargo), Signal::Dependency),
        (Class::Generated("*.pb.go".into()), Signal::Generated),
    ];
    for (class, expected) in cases {
        // Even where the path alone would say tests or docs.
        assert_eq!(signal_of("tests/docs/x.md", &class), expected);
    }
}

#[test]
fn binary_falls_through_to_the_path() {
    assert_eq!(signal_of("docs/img/arch.png", &Class::Binary), Signal::Docs);
    assert_eq!(
        signal_of("tests/fixtures/a.bin", &Class::Binary),
        Signal::Tests
    );
    assert_eq!(
        signal_of("assets/logo.png", &Class::Binary),
        Signal::Runtime
    );
}

/// Paths and the signal each must get (a hand-written file): groups with what
/// they are `about`, the `signal` (as it serializes) and the `paths`.
const PATHS: &str = include_str!("paths.json");

#[test]
fn each_path_gets_its_signal() {
    for (group, path) in grouped(PATHS, "paths", 131) {
        let path = path.as_str().expect("a path");
        let signal = signal_of(path, &Class::Handwritten);
        assert_eq!(
            serde_json::to_value(signal).expect("a signal serializes"),
            group["signal"],
            "{}: {path} is {signal:?}",
            group["about"]
        );
    }
}

#[test]
fn commit_signals_are_sorted_and_unique() {
    let path = |path: &str, signal| ChangedPath {
        path: path.to_owned(),
        status: 'M',
        additions: 1,
        deletions: 0,
        binary: false,
        signal,
    };
    let paths = [
        path("src/cli.rs", Signal::Cli),
        path("src/a.rs", Signal::Runtime),
        path("tests/a.rs", Signal::Tests),
        path("src/b.rs", Signal::Runtime),
    ];
    assert_eq!(
        commit_signals(&paths),
        [Signal::Runtime, Signal::Cli, Signal::Tests]
    );
    assert_eq!(commit_signals(&[]), []);
}
