//! `ultragit` as a process: version, help, usage errors and generated completions.

#[test]
fn version_help_usage_and_completions() {
    let exe = std::path::Path::new(env!("CARGO_BIN_EXE_ultragit"));
    testkit::cli::assert_basics(exe, "ultragit", env!("CARGO_PKG_VERSION"));
    let out = testkit::cli::run(exe, &[]);
    assert_eq!(out.code, 2, "no arguments prints usage and fails");
    assert!(out.stderr.contains("Usage: ultragit"), "{}", out.stderr);
}
