//! A repository that attacks the tools run in it: every kind of program a
//! repository can have git run, each leaving a mark in a file outside the
//! repository when it runs.
//!
//! `.gitattributes` (committed, so untrusted) turns the drivers on for every
//! file; `.git/config` defines them, as a clone plus one `git config` by its
//! victim — or a tool the victim ran — would:
//!
//! | mark | how git would start it |
//! |---|---|
//! | `textconv` | `diff.evil.textconv`, for `* diff=evil` (diff, log -p, blame) |
//! | `external-diff` | `diff.evil.command` and `diff.external` (diff output) |
//! | `clean` / `smudge` | `filter.evil.*`, for `*.rs filter=evil` (status with stale stat data, checkout) |
//! | `process` | `filter.evilproc.process`, for `*.txt filter=evilproc` |
//! | `fsmonitor` | `core.fsmonitor` (status, diff against the work tree) |
//! | `pager` | `core.pager`, `pager.<cmd>` (a command that pages) |
//!
//! [`Hostile::new`] proves the traps work by running plain `git` once (without
//! our hardening) and checking that marks appear, then clears them; a test then
//! runs a tool and calls [`Hostile::assert_no_program_ran`].

use std::path::{Path, PathBuf};

use crate::TestRepo;

/// A hostile repository and the file its programs mark.
#[derive(Debug)]
pub struct Hostile {
    pub repo: TestRepo,
    _marks_dir: tempfile::TempDir,
    marks: PathBuf,
    /// Each [`Hostile::make_stat_stale`] picks another time: a plain `git
    /// status` may have stored the previous one in the index.
    stale: std::cell::Cell<u64>,
}

/// The source file every hostile repository holds, with two functions.
pub const SOURCE: &str = "\
pub fn connect(host: &str) -> bool {
    !host.is_empty()
}

pub fn retry(host: &str, attempts: u32) -> bool {
    (0..attempts).any(|_| connect(host))
}
";

impl Hostile {
    /// A repository with two commits of `src/net.rs` and `notes.txt`, the
    /// drivers configured, and the stat data of its files stale (so `git
    /// status` would compare their contents through the clean filter).
    pub fn new() -> Hostile {
        let marks_dir = tempfile::tempdir().expect("create a temporary directory");
        let marks = marks_dir.path().join("marks");
        let repo = TestRepo::new();
        repo.write(
            ".gitattributes",
            "* diff=evil\n*.rs filter=evil\n*.proc filter=evilproc\n",
        );
        repo.write("zz.proc", "unchanged\n");
        repo.write(
            "src/net.rs",
            &SOURCE[..SOURCE.find("\npub fn retry").unwrap_or(0) + 1],
        );
        repo.write("notes.txt", "first\n");
        repo.stage_all();
        repo.commit("Add connect");
        repo.write("src/net.rs", SOURCE);
        repo.write("notes.txt", "first\nsecond\n");
        repo.stage_all();
        repo.commit("Add retry");
        let hostile = Hostile {
            repo,
            _marks_dir: marks_dir,
            marks,
            stale: std::cell::Cell::new(1_000_000_000),
        };
        hostile.arm();
        hostile.prove_armed();
        hostile
    }

    fn mark(&self, what: &str) -> String {
        format!("echo {what} >> '{}'", self.marks.display())
    }

    /// Configures the drivers in `.git/config`.
    fn arm(&self) {
        let script = self.marks.with_file_name("fsmonitor.sh");
        std::fs::write(&script, format!("#!/bin/sh\n{}\n", self.mark("fsmonitor")))
            .expect("write the fsmonitor script");
        set_executable(&script);
        let cat_through =
            |what: &str| format!("sh -c '{}; cat' --", self.mark(what).replace('\'', "'\\''"));
        let settings = [
            (
                "diff.evil.textconv".to_owned(),
                format!(
                    "sh -c '{}; cat \"$1\"' --",
                    self.mark("textconv").replace('\'', "'\\''")
                ),
            ),
            (
                "diff.evil.command".to_owned(),
                format!(
                    "sh -c '{}' --",
                    self.mark("external-diff").replace('\'', "'\\''")
                ),
            ),
            (
                "diff.external".to_owned(),
                format!(
                    "sh -c '{}' --",
                    self.mark("external-diff").replace('\'', "'\\''")
                ),
            ),
            ("filter.evil.clean".to_owned(), cat_through("clean")),
            ("filter.evil.smudge".to_owned(), cat_through("smudge")),
            (
                "filter.evilproc.process".to_owned(),
                format!(
                    "sh -c '{}; exit 1'",
                    self.mark("process").replace('\'', "'\\''")
                ),
            ),
            ("core.fsmonitor".to_owned(), script.display().to_string()),
            ("core.pager".to_owned(), cat_through("pager")),
            ("pager.status".to_owned(), cat_through("pager")),
            ("pager.log".to_owned(), cat_through("pager")),
            ("pager.blame".to_owned(), cat_through("pager")),
        ];
        for (key, value) in settings {
            self.repo.git(&["config", &key, &value]);
        }
        self.make_stat_stale();
    }

    /// Gives the tracked files another modification time (same content), so
    /// their stat data no longer matches the index and git compares contents —
    /// through the clean filter.
    pub fn make_stat_stale(&self) {
        self.stale.set(self.stale.get() + 100);
        let stale =
            std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(self.stale.get());
        for rel in ["src/net.rs", "notes.txt", "zz.proc", ".gitattributes"] {
            std::fs::File::options()
                .write(true)
                .open(self.repo.join(rel))
                .and_then(|file| file.set_modified(stale))
                .expect("change a tracked file's modification time");
        }
    }

    /// Runs plain git (no hardening) the way a careless tool would and checks
    /// that the traps fire, so a test that sees no mark means something.
    fn prove_armed(&self) {
        let git = |args: &[&str]| {
            let mut cmd = std::process::Command::new("git");
            crate::isolate(&mut cmd)
                .current_dir(self.repo.path())
                .args(args)
                .output()
                .expect("run git")
        };
        git(&["blame", "--porcelain", "HEAD", "--", "src/net.rs"]);
        git(&["status", "--porcelain=v1"]);
        self.make_stat_stale();
        git(&["-c", "core.fsmonitor=false", "status", "--porcelain=v1"]);
        git(&["diff", "HEAD~1", "HEAD"]);
        let marks = self.marks();
        for expected in ["textconv", "fsmonitor", "clean", "process", "external-diff"] {
            assert!(
                marks.iter().any(|m| m == expected),
                "the hostile repository's {expected} trap did not fire with plain git: {marks:?}"
            );
        }
        self.clear();
        self.make_stat_stale();
    }

    /// The marks left so far, one per program run.
    pub fn marks(&self) -> Vec<String> {
        std::fs::read_to_string(&self.marks)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// Forgets the marks so far.
    pub fn clear(&self) {
        let _ = std::fs::remove_file(&self.marks);
    }

    /// Panics, naming `what` ran and which programs, if any program the
    /// repository configured has run.
    pub fn assert_no_program_ran(&self, what: &str) {
        let marks = self.marks();
        assert!(
            marks.is_empty(),
            "{what} ran programs the repository configured: {marks:?}"
        );
    }

    /// The working tree.
    pub fn path(&self) -> &Path {
        self.repo.path()
    }
}

impl Default for Hostile {
    fn default() -> Self {
        Self::new()
    }
}

fn set_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mut permissions = std::fs::metadata(path)
        .expect("stat the script")
        .permissions();
    permissions.set_mode(0o755);
    std::fs::set_permissions(path, permissions).expect("make the script executable");
}
