//! `code-commit` as a process: version, help, usage errors and generated completions.

#[test]
fn version_help_usage_and_completions() {
    let exe = std::path::Path::new(env!("CARGO_BIN_EXE_code-commit"));
    testkit::cli::assert_basics(exe, "code-commit", env!("CARGO_PKG_VERSION"));
    // Without arguments it runs in the current directory, which is no project.
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(exe)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error: ") && err.contains("is not inside a git working tree"),
        "{err}"
    );
}
