//! `run_build`: running `build.sh` with real processes, through the public API.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use code_commit_core::build::{
    BuildError, BuildOptions, BuildResult, BuildStatus, MAX_STREAM_BYTES, run_build,
};

use testkit::{assert_contains, assert_starts_with};

/// A project directory holding `build.sh` with `script` and `mode`.
fn project(script: &str, mode: u32) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("build.sh");
    fs::write(&path, script).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
    dir
}

/// Generous: only the timeout test relies on a timeout firing.
fn options() -> BuildOptions {
    BuildOptions {
        timeout: Duration::from_secs(120),
        ..BuildOptions::default()
    }
}

/// Runs an executable `build.sh` holding `script` with [`options`]; the
/// project directory lives as long as the returned handle.
fn build(script: &str) -> (tempfile::TempDir, BuildResult) {
    let dir = project(script, 0o755);
    let result = run_build(dir.path(), &options()).unwrap();
    (dir, result)
}

fn text(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).unwrap()
}

#[test]
fn exit_zero_passes_even_with_stderr_output() {
    let (_dir, result) = build(
        "#!/bin/sh\necho building\necho 'warning: informational' >&2\nread line\necho \"stdin rc=$?\"\n",
    );
    assert_eq!(result.status, BuildStatus::Exited(0));
    assert!(result.passed());
    // stdin is /dev/null: `read` sees end of input at once.
    assert_eq!(text(&result.stdout), "building\nstdin rc=1\n");
    assert_eq!(text(&result.stderr), "warning: informational\n");
    assert!(!result.truncated);
}

#[test]
fn nonzero_exit_fails() {
    let (_dir, result) = build("#!/bin/sh\necho 'error: no' >&2\nexit 3\n");
    assert_eq!(result.status, BuildStatus::Exited(3));
    assert!(!result.passed());
}

#[test]
fn killed_by_a_signal_fails() {
    let (_dir, result) = build("#!/bin/sh\nkill -9 $$\n");
    assert_eq!(result.status, BuildStatus::Signaled);
    assert!(!result.passed());
    assert_starts_with(&result.log_text(), "build.sh was killed by a signal\n");
}

#[test]
fn log_text_has_the_exact_format() {
    let (_dir, result) = build("#!/bin/sh\necho out\nprintf 'no newline'\necho err >&2\nexit 3\n");
    assert_eq!(
        result.log_text(),
        "build.sh exited with status 3\n--- stdout ---\nout\nno newline\n--- stderr ---\nerr\n"
    );
    // Small output fits any reasonable prompt budget unchanged.
    assert_eq!(result.prompt_text(10_000), result.log_text());
}

#[test]
fn an_executable_script_runs_with_its_shebang() {
    // `#!/bin/cat` makes the kernel run `cat build.sh`: the output is the script.
    let script = "#!/bin/cat\nnot a shell command\n";
    let (_dir, result) = build(script);
    assert!(result.passed());
    assert_eq!(text(&result.stdout), script);
}

#[test]
fn a_script_that_is_not_executable_runs_with_sh() {
    let dir = project("#!/bin/cat\necho \"via sh: $0\"\n", 0o644);
    let result = run_build(dir.path(), &options()).unwrap();
    assert!(result.passed(), "{}", result.log_text());
    let stdout = text(&result.stdout);
    assert!(
        stdout.starts_with("via sh: ") && stdout.ends_with("build.sh\n"),
        "{stdout}"
    );
}

#[test]
fn an_executable_script_without_a_shebang_runs_with_sh() {
    let (_dir, result) = build("echo no shebang\n");
    assert!(result.passed(), "{}", result.log_text());
    assert_eq!(text(&result.stdout), "no shebang\n");
}

#[test]
fn runs_in_the_project_directory() {
    let (dir, result) = build("#!/bin/sh\npwd -P\n");
    let expected = dir.path().canonicalize().unwrap();
    assert_eq!(text(&result.stdout).trim_end(), expected.to_str().unwrap());
}

#[test]
fn a_missing_build_sh_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = run_build(dir.path(), &options()).unwrap_err();
    assert!(
        matches!(&err, BuildError::Missing { path } if path.ends_with("build.sh")),
        "{err:?}"
    );
    assert_contains(&err.to_string(), "build.sh");
}

#[test]
fn a_build_sh_directory_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("build.sh")).unwrap();
    let err = run_build(dir.path(), &options()).unwrap_err();
    assert!(matches!(err, BuildError::NotAFile { .. }), "{err:?}");
}

/// Whether `pid` is gone (or a zombie nobody has reaped yet: it no longer runs).
fn gone(pid: u32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z')),
    }
}

#[test]
fn a_timeout_kills_the_whole_process_group() {
    let dir = project(
        "#!/bin/sh\n\
         sleep 60 &\n\
         echo $! > background.pid\n\
         ( sleep 60; echo never ) &\n\
         echo $! > subshell.pid\n\
         echo started\n\
         sleep 60\n\
         echo never\n",
        0o755,
    );
    let options = BuildOptions {
        timeout: Duration::from_secs(2),
        ..BuildOptions::default()
    };
    let result = run_build(dir.path(), &options).unwrap();
    assert_eq!(result.status, BuildStatus::TimedOut);
    assert!(!result.passed());
    assert_eq!(text(&result.stdout), "started\n");
    assert_starts_with(&result.log_text(), "build.sh timed out after ");

    for name in ["background.pid", "subshell.pid"] {
        let pid: u32 = fs::read_to_string(dir.path().join(name))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // SIGKILL is delivered at once; give the exits a generous while to land.
        let until = Instant::now() + Duration::from_secs(30);
        while !gone(pid) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(gone(pid), "{name}: process {pid} survived the timeout");
    }
}

const ENV_PROBE_DIR: &str = "CODE_COMMIT_TEST_ENV_PROBE_DIR";
const SECRET: &str = "sk-test-0123456789abcdef";

/// Does its work only when [`build_sh_never_sees_secrets_or_removed_variables`]
/// re-runs this test binary with a prepared environment (a test cannot set its
/// own environment without `unsafe`).
#[test]
fn env_probe() {
    let Some(dir) = std::env::var_os(ENV_PROBE_DIR) else {
        return;
    };
    let options = BuildOptions {
        remove_env: vec!["CODE_COMMIT_TEST_REMOVE_ME".to_owned()],
        scrub_values: vec![SECRET.to_owned()],
        ..options()
    };
    let result = run_build(Path::new(&dir), &options).unwrap();
    assert!(result.passed(), "{}", result.log_text());
}

#[test]
fn build_sh_never_sees_secrets_or_removed_variables() {
    let dir = project("#!/bin/sh\nenv > env.txt\n", 0o755);
    let output = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "build::env_probe", "--test-threads=1"])
        .env(ENV_PROBE_DIR, dir.path())
        .env("CODE_COMMIT_TEST_API_KEY", SECRET)
        .env(
            "CODE_COMMIT_TEST_HEADER",
            format!("Authorization: Bearer {SECRET}"),
        )
        .env("CODE_COMMIT_TEST_REMOVE_ME", "removed by name")
        .env("CODE_COMMIT_TEST_KEEP_ME", "kept")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}{}",
        text(&output.stdout),
        text(&output.stderr)
    );
    let env = fs::read_to_string(dir.path().join("env.txt")).expect("the probe ran build.sh");
    assert!(
        env.lines()
            .any(|line| line == "CODE_COMMIT_TEST_KEEP_ME=kept"),
        "{env}"
    );
    assert!(!env.contains(SECRET), "{env}");
    assert!(!env.contains("CODE_COMMIT_TEST_API_KEY"), "{env}");
    assert!(!env.contains("CODE_COMMIT_TEST_HEADER"), "{env}");
    assert!(!env.contains("CODE_COMMIT_TEST_REMOVE_ME"), "{env}");
}

#[test]
fn several_megabytes_on_both_streams_do_not_deadlock() {
    // stderr first: a runner reading only stdout would block forever here.
    let (_dir, result) =
        build("#!/bin/sh\nseq 1 300000 >&2\nseq 1 400000\necho 'error: at the end' >&2\nexit 1\n");
    assert_eq!(result.status, BuildStatus::Exited(1));
    assert!(!result.truncated);
    let expected_stdout: String = (1..=400_000).map(|i| format!("{i}\n")).collect();
    assert!(result.stdout == expected_stdout.as_bytes());
    assert!(result.stderr.len() > 1_000_000);

    let prompt = result.prompt_text(20_000);
    assert!(prompt.len() <= 20_000, "{}", prompt.len());
    assert_starts_with(
        &prompt,
        "build.sh exited with status 1\n--- stdout ---\n1\n2\n3\n",
    );
    assert!(
        prompt.ends_with("\n299999\n300000\nerror: at the end\n"),
        "{prompt}"
    );
    let note = prompt
        .lines()
        .find(|line| line.starts_with("[... "))
        .expect("a line notes the cut");
    assert!(
        note.contains(" bytes (") && note.ends_with(" lines) of output cut here ...]"),
        "{note}"
    );
}

#[test]
fn output_beyond_the_limit_keeps_head_and_tail() {
    let total = MAX_STREAM_BYTES + 8 * 1024 * 1024;
    let (_dir, result) = build(&format!(
        "#!/bin/sh\necho FIRST\nhead -c {total} /dev/zero | tr '\\0' 'x'\necho\necho LAST\n"
    ));
    assert!(result.passed());
    assert!(result.truncated);
    assert!(
        result.stdout.len() <= MAX_STREAM_BYTES + 100,
        "{}",
        result.stdout.len()
    );
    assert!(result.stdout.starts_with(b"FIRST\nxxx"));
    assert!(result.stdout.ends_with(b"xxx\nLAST\n"));
    let log = result.log_text();
    assert!(
        log.lines()
            .nth(1)
            .unwrap()
            .starts_with("note: the output exceeded 32 MiB"),
        "{}",
        &log[..200]
    );
    assert!(log.contains(" bytes of output cut here ...]\n"));
}
