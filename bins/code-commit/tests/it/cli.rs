//! `code-commit` as a process: version, help, usage errors and generated completions.

use std::process::Command;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_code-commit"))
        .args(args)
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (
        out.status.code().unwrap_or(-1),
        text(&out.stdout),
        text(&out.stderr),
    )
}

#[test]
fn version_help_usage_and_completions() {
    let (code, out, _) = run(&["--version"]);
    assert_eq!(
        (code, out.trim()),
        (0, concat!("code-commit ", env!("CARGO_PKG_VERSION")))
    );
    let (code, out, _) = run(&["--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("Usage: code-commit"), "{out}");
    assert!(
        !out.contains("--generate"),
        "the completions flag stays hidden: {out}"
    );
    // Without arguments it runs in the current directory, which is no project.
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_code-commit"))
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error: agent-config/query.txt is missing"),
        "{err}"
    );
    let (code, _, err) = run(&["--no-such-flag"]);
    assert_eq!(code, 2);
    assert!(err.contains("--no-such-flag"), "{err}");
    let (code, out, _) = run(&["--generate", "complete-fish"]);
    assert_eq!(code, 0);
    assert!(out.contains("complete -c code-commit"), "{out}");
    assert!(!out.contains("-l generate"), "{out}");
    let (code, _, err) = run(&["--generate", "man"]);
    assert_eq!(code, 2);
    assert!(err.contains("complete-fish"), "{err}");
}
