//! `build.sh` in the Landlock sandbox, with real processes.
//!
//! Whether the kernel has Landlock is found out independently of the code under
//! test ([`testkit::landlock_available`]). Where it has, the denials are asserted; where it has not, the
//! build must say that the sandbox is unavailable and still run.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::time::Duration;

use code_commit_core::build::{BuildOptions, BuildResult, run_build};
use code_commit_core::sandbox::{SandboxPolicy, SandboxStatus};

use testkit::{assert_contains, assert_starts_with, landlock_available};

/// Asserts the status matches the kernel; returns whether Landlock enforced.
pub fn check_status(status: &SandboxStatus) -> bool {
    if landlock_available() {
        assert!(
            matches!(status, SandboxStatus::Enforced { .. }),
            "{status:?}"
        );
        true
    } else {
        let SandboxStatus::Unavailable(why) = status else {
            panic!("no Landlock here, yet {status:?}");
        };
        assert!(!why.is_empty());
        assert_contains(&status.describe(), "unavailable");
        false
    }
}

struct Setup {
    project: tempfile::TempDir,
    temp_root: tempfile::TempDir,
    outside: tempfile::TempDir,
}

impl Setup {
    fn new(script: &str) -> Setup {
        let setup = Setup {
            project: tempfile::tempdir().unwrap(),
            temp_root: tempfile::tempdir().unwrap(),
            outside: tempfile::tempdir().unwrap(),
        };
        let root = setup.project.path();
        fs::create_dir_all(root.join("agent-config")).unwrap();
        fs::write(
            root.join("agent-config/api-key"),
            "sk-sandbox-key-0123456789\n",
        )
        .unwrap();
        fs::create_dir_all(root.join("src")).unwrap();
        fs::write(root.join("src/main.c"), "int main(void) { return 0; }\n").unwrap();
        let script = script.replace("$OUTSIDE", &setup.outside.path().display().to_string());
        fs::write(root.join("build.sh"), script).unwrap();
        fs::set_permissions(root.join("build.sh"), fs::Permissions::from_mode(0o755)).unwrap();
        setup
    }

    fn options(&self, deny: Vec<PathBuf>) -> BuildOptions {
        BuildOptions {
            timeout: Duration::from_secs(120),
            sandbox: Some(SandboxPolicy::new(
                self.project.path(),
                deny,
                vec![self.temp_root.path().to_path_buf()],
            )),
            temp_root: Some(self.temp_root.path().to_path_buf()),
            ..BuildOptions::default()
        }
    }

    fn build(&self, deny: Vec<PathBuf>) -> BuildResult {
        run_build(self.project.path(), &self.options(deny)).unwrap()
    }

    fn key_dir(&self) -> PathBuf {
        self.project.path().join("agent-config")
    }
}

fn stdout(result: &BuildResult) -> String {
    String::from_utf8_lossy(&result.stdout).into_owned()
}

/// The build reads the key, writes outside, and does ordinary work in
/// subdirectories, the temporary directory and /dev/null.
const PROBE: &str = r#"#!/bin/sh
if cat agent-config/api-key >/dev/null 2>&1; then echo "key: read"; else echo "key: denied"; fi
if base64 agent-config/api-key >/dev/null 2>&1; then echo "base64: read"; else echo "base64: denied"; fi
if ls agent-config >/dev/null 2>&1; then echo "list: ok"; else echo "list: denied"; fi
if echo x > "$OUTSIDE/escape" 2>/dev/null; then echo "outside: written"; else echo "outside: denied"; fi
if head -c 1 "/proc/$PPID/mem" >/dev/null 2>&1; then echo "parent memory: read"; else echo "parent memory: denied"; fi
mkdir -p src/gen && echo generated > src/gen/out.txt && cat src/gen/out.txt
echo temp > "$TMPDIR/t" && cat "$TMPDIR/t"
cc -o src/gen/main src/main.c 2>&1 && ./src/gen/main && echo "compiled and ran"
echo quiet > /dev/null && echo "devnull: ok"
echo "via /dev/stdout" > /dev/stdout
echo "via /dev/stderr" > /dev/stderr
cat /etc/passwd >/dev/null && echo "system: readable"
"#;

#[test]
fn the_key_folder_is_unreadable_and_writes_stay_inside() {
    let setup = Setup::new(PROBE);
    let result = setup.build(vec![setup.key_dir()]);
    let out = stdout(&result);
    assert!(result.passed(), "{}", result.log_text());
    assert!(String::from_utf8_lossy(&result.stderr).ends_with("via /dev/stderr\n"));
    // Ordinary work succeeds either way.
    for line in [
        "list: ok",
        "generated",
        "temp",
        "compiled and ran",
        "devnull: ok",
        "via /dev/stdout",
        "system: readable",
    ] {
        assert!(out.lines().any(|l| l == line), "{line} missing:\n{out}");
    }
    if check_status(&result.sandbox) {
        for line in [
            "key: denied",
            "base64: denied",
            "outside: denied",
            "parent memory: denied",
        ] {
            assert!(out.lines().any(|l| l == line), "{line} missing:\n{out}");
        }
        assert!(!setup.outside.path().join("escape").exists());
        assert!(!out.contains("sk-sandbox-key"));
        let SandboxStatus::Enforced { denied, .. } = &result.sandbox else {
            unreachable!()
        };
        assert_eq!(denied, &[fs::canonicalize(setup.key_dir()).unwrap()]);
        assert_contains(&result.sandbox.describe(), "cannot read");
    } else {
        // Detection only: the build was not confined.
        assert!(out.lines().any(|l| l == "key: read"), "{out}");
    }
    // The private temporary directory is gone after the build.
    assert_eq!(fs::read_dir(setup.temp_root.path()).unwrap().count(), 0);
}

#[test]
fn without_a_key_in_the_project_the_whole_project_is_readable() {
    // The key in a user-level folder outside the project.
    let user = tempfile::tempdir().unwrap();
    let key_dir = user.path().join("code-commit");
    fs::create_dir_all(&key_dir).unwrap();
    fs::write(key_dir.join("api-key"), "sk-user-level-key-000\n").unwrap();
    let script = format!(
        "#!/bin/sh\nif cat '{}' >/dev/null 2>&1; then echo 'user key: read'; else echo 'user key: denied'; fi\nmkdir -p target/debug && echo built > target/debug/app && cat target/debug/app\necho obj > main.o && cat main.o\n",
        key_dir.join("api-key").display()
    );
    let setup = Setup::new(&script);
    let result = setup.build(vec![key_dir.clone()]);
    let out = stdout(&result);
    assert!(result.passed(), "{}", result.log_text());
    assert!(result.notes.is_empty(), "{:?}", result.notes);
    assert_contains(&out, "built\nobj\n");
    if check_status(&result.sandbox) {
        assert_starts_with(&out, "user key: denied\n");
    }
}

#[test]
fn new_entries_in_the_project_root_are_run_again_when_the_build_fails_on_them() {
    // A fresh clone: target/ does not exist yet and the build creates it at the
    // top of the project, where the sandbox cannot grant new entries.
    let setup = Setup::new(
        "#!/bin/sh\nmkdir -p target/debug && echo built > target/debug/app && cat target/debug/app\n",
    );
    let result = setup.build(vec![setup.key_dir()]);
    assert!(result.passed(), "{}", result.log_text());
    assert_eq!(stdout(&result), "built\n");
    if check_status(&result.sandbox) {
        assert_eq!(result.notes.len(), 1, "{:?}", result.notes);
        let note = &result.notes[0];
        assert_contains(note, "target");
        assert_contains(note, "was run again");
        assert!(result.log_text().contains(note.as_str()));
    } else {
        assert!(result.notes.is_empty());
    }

    // A build that keeps creating unreadable entries at the top is told what
    // to do.
    let setup = Setup::new("#!/bin/sh\nname=out-$$.o\necho obj > $name && cat $name\n");
    let result = setup.build(vec![setup.key_dir()]);
    if check_status(&result.sandbox) {
        assert!(!result.passed());
        assert_eq!(result.notes.len(), 4, "{:?}", result.notes);
        assert_contains(&result.notes[3], "~/.config/code-commit/api-key");
    } else {
        assert!(result.passed());
    }
}

#[test]
fn a_symlink_planted_in_the_project_does_not_open_the_key_folder() {
    // A link to agent-config/ next to it is not followed when the rules are
    // made, so reading through it is denied like the folder itself.
    let setup = Setup::new(
        "#!/bin/sh\nif cat alias/api-key >/dev/null 2>&1; then echo read; else echo denied; fi\n",
    );
    std::os::unix::fs::symlink("agent-config", setup.project.path().join("alias")).unwrap();
    let result = setup.build(vec![setup.key_dir()]);
    if check_status(&result.sandbox) {
        assert_eq!(stdout(&result), "denied\n");
    }
}

#[test]
fn no_sandbox_asked_means_none() {
    let setup = Setup::new("#!/bin/sh\ncat agent-config/api-key\n");
    let result = run_build(
        setup.project.path(),
        &BuildOptions {
            timeout: Duration::from_secs(60),
            ..BuildOptions::default()
        },
    )
    .unwrap();
    assert_eq!(result.sandbox, SandboxStatus::Off);
    assert!(stdout(&result).contains("sk-sandbox-key"));
}

/// An ordinary Rust build in a fresh clone (no Cargo.lock, no target/) with the
/// key in agent-config/: it compiles and runs its tests, through the reruns.
#[test]
fn a_fresh_rust_project_builds_and_tests_in_the_sandbox() {
    let setup = Setup::new(
        "#!/bin/sh\nset -e\ncargo build --offline -q 2>&1\n./target/debug/hello\ncargo test --offline -q 2>&1\n",
    );
    let root = setup.project.path();
    fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"hello\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[workspace]\n",
    )
    .unwrap();
    fs::write(
        root.join("src/main.rs"),
        "fn main() { println!(\"hello from cargo\"); }\n#[test]\nfn works() { assert_eq!(1 + 1, 2); }\n",
    )
    .unwrap();
    let mut options = setup.options(vec![setup.key_dir()]);
    // The caches the binary grants, found the way it finds them.
    let home = PathBuf::from(std::env::var("HOME").unwrap());
    let cargo_home = std::env::var("CARGO_HOME").map_or(home.join(".cargo"), PathBuf::from);
    let rustup_home = std::env::var("RUSTUP_HOME").map_or(home.join(".rustup"), PathBuf::from);
    let policy = options.sandbox.as_mut().unwrap();
    policy.writable.extend([cargo_home, rustup_home]);
    let result = run_build(root, &options).unwrap();
    assert!(result.passed(), "{}", result.log_text());
    assert!(
        stdout(&result).contains("hello from cargo\n"),
        "{}",
        result.log_text()
    );
    if check_status(&result.sandbox) {
        // Cargo.lock, then target/: each one rerun.
        assert_eq!(result.notes.len(), 2, "{:?}", result.notes);
        // The next build needs none.
        let again = run_build(root, &options).unwrap();
        assert!(
            again.passed() && again.notes.is_empty(),
            "{}",
            again.log_text()
        );
    }
}
