//! The protected files, and the check that the build left them alone.
//!
//! Model-written code runs in `build.sh`; a `Makefile` the model edits can
//! append `exit 0` to `build.sh` (the failing build then "passes"), install a
//! git hook or rewrite code-commit's own configuration. Before every build,
//! [`Protected::snapshot`] records each protected file's kind, permission bits
//! and SHA-256; after the build a second snapshot is compared with it
//! ([`Snapshot::changes`]). Any difference fails the attempt, names the files and
//! stops the run: a build that tampered with them is not trusted for further
//! repair rounds.
//!
//! Protected, relative to the project directory:
//! - `build.sh`, `.gitignore`, `Cargo.lock`, `codeRollup.sh` (cargo may update
//!   `Cargo.lock` after the model changed a `Cargo.toml`, and create an ignored
//!   one: `lock_update_allowed`);
//! - everything under `agent-config/` except `agent-config/logs/` (the run logs
//!   are written while the build is checked);
//! - the repository's `hooks/` directory (everything under it) and `config`, in
//!   the git directory shared by all worktrees (`.git/hooks/`, `.git/config`).
//!
//! The model's own blocks never write these (the path policy refuses them), and
//! the snapshot before a build is taken after its blocks were applied, so
//! whatever differs was done by the build (or by a process an earlier build left
//! running: the run also compares each snapshot with the one after the previous
//! build).
//!
//! **Invariant:** the walk never follows a symbolic link (a link is recorded
//! with its target), never opens a FIFO or device, and reads files as streams
//! into the hash, so memory stays bounded; at most `MAX_ENTRIES` entries are
//! recorded, and a tree larger than that counts as changed.

use std::collections::BTreeMap;
use std::fmt;
use std::io::Read as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use safe_io::{Dir, FileKind};
use sha2::{Digest as _, Sha256};

/// The protected files at the top of the project.
pub(crate) const PROTECTED_FILES: &[&str] =
    &["build.sh", ".gitignore", "Cargo.lock", "codeRollup.sh"];

/// The most entries a snapshot records.
pub(crate) const MAX_ENTRIES: usize = 20_000;

/// What one protected path was.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Entry {
    File {
        mode: u32,
        sha256: [u8; 32],
    },
    Dir,
    Symlink(PathBuf),
    Special(FileKind),
    Unreadable(String),
    /// More than `MAX_ENTRIES` below this directory.
    Overflow,
}

/// The protected files of one project at one moment.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Snapshot {
    entries: BTreeMap<String, Entry>,
}

/// How a protected file differs between two snapshots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChangeKind {
    Changed,
    Created,
    Deleted,
}

/// One protected file the build changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tampered {
    /// The path as shown (relative to the project, or absolute outside it).
    pub path: String,
    pub kind: ChangeKind,
}

impl fmt::Display for Tampered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            ChangeKind::Changed => "changed",
            ChangeKind::Created => "created",
            ChangeKind::Deleted => "deleted",
        };
        write!(f, "{} ({what})", self.path)
    }
}

impl Snapshot {
    /// What differs from `before` to `self`, sorted by path.
    pub(crate) fn changes(&self, before: &Snapshot) -> Vec<Tampered> {
        let mut out = Vec::new();
        for (path, entry) in &self.entries {
            match before.entries.get(path) {
                None => out.push(Tampered {
                    path: path.clone(),
                    kind: ChangeKind::Created,
                }),
                Some(old) if old != entry || *entry == Entry::Overflow => out.push(Tampered {
                    path: path.clone(),
                    kind: ChangeKind::Changed,
                }),
                Some(_) => {}
            }
        }
        for path in before.entries.keys() {
            if !self.entries.contains_key(path) {
                out.push(Tampered {
                    path: path.clone(),
                    kind: ChangeKind::Deleted,
                });
            }
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        out
    }

    /// The recorded paths (for tests).
    #[cfg(test)]
    pub(crate) fn paths(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }
}

/// Where the protected files are.
#[derive(Debug)]
pub(crate) struct Protected {
    project: PathBuf,
    /// The git directory shared by all worktrees, and how paths in it are shown
    /// (`.git` when it is the project's own).
    git: Option<(PathBuf, String)>,
}

impl Protected {
    /// The protected files of `project`, whose repository keeps its shared git
    /// directory at `git_common_dir` (when there is one).
    pub(crate) fn new(project: &Path, git_common_dir: Option<&Path>) -> Protected {
        let git = git_common_dir.map(|dir| {
            let shown = match dir.strip_prefix(project) {
                Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
                _ => dir.display().to_string(),
            };
            (dir.to_path_buf(), shown)
        });
        Protected {
            project: project.to_path_buf(),
            git,
        }
    }

    /// Records every protected file now.
    pub(crate) fn snapshot(&self) -> Snapshot {
        let mut walk = Walk::default();
        match Dir::open(&self.project) {
            Ok(project) => {
                for name in PROTECTED_FILES {
                    walk.record(&project, name, name, false);
                }
                walk.record(
                    &project,
                    crate::config::CONFIG_DIR,
                    crate::config::CONFIG_DIR,
                    true,
                );
            }
            Err(err) => {
                walk.entries
                    .insert(".".to_owned(), Entry::Unreadable(err.to_string()));
            }
        }
        if let Some((dir, shown)) = &self.git {
            match Dir::open(dir) {
                Ok(git) => {
                    walk.record(&git, "config", &format!("{shown}/config"), false);
                    walk.record(&git, "hooks", &format!("{shown}/hooks"), true);
                }
                Err(err) => {
                    walk.entries
                        .insert(shown.clone(), Entry::Unreadable(err.to_string()));
                }
            }
        }
        Snapshot {
            entries: walk.entries,
        }
    }
}

#[derive(Default)]
struct Walk {
    entries: BTreeMap<String, Entry>,
}

impl Walk {
    /// Records `rel` below `dir` as `shown`; with `recurse`, a directory's
    /// contents too (except the run logs).
    fn record(&mut self, dir: &Dir, rel: &str, shown: &str, recurse: bool) {
        if self.entries.len() >= MAX_ENTRIES {
            return;
        }
        if shown == crate::logs::LOGS_DIR {
            return;
        }
        let kind = match dir.kind(rel) {
            Ok(None) => return,
            Ok(Some(kind)) => kind,
            Err(err) => {
                self.entries
                    .insert(shown.to_owned(), Entry::Unreadable(err.to_string()));
                return;
            }
        };
        let entry = match kind {
            FileKind::File => hash(dir, rel),
            FileKind::Dir => Entry::Dir,
            FileKind::Symlink => {
                Entry::Symlink(std::fs::read_link(dir.path().join(rel)).unwrap_or_default())
            }
            other => Entry::Special(other),
        };
        self.entries.insert(shown.to_owned(), entry);
        if kind == FileKind::Dir && recurse {
            let listed = dir.open_dir(rel).and_then(|sub| Ok((sub.entries()?, sub)));
            match listed {
                Ok((children, sub)) => {
                    for (name, _) in children {
                        if self.entries.len() >= MAX_ENTRIES {
                            self.entries.insert(shown.to_owned(), Entry::Overflow);
                            return;
                        }
                        let name = name.to_string_lossy().into_owned();
                        self.record(&sub, &name, &format!("{shown}/{name}"), true);
                    }
                }
                Err(err) => {
                    self.entries
                        .insert(shown.to_owned(), Entry::Unreadable(err.to_string()));
                }
            }
        }
    }
}

/// The mode and SHA-256 of the regular file `rel` below `dir`, streamed.
fn hash(dir: &Dir, rel: &str) -> Entry {
    let mut file = match dir.open_file(rel) {
        Ok(file) => file,
        Err(err) => return Entry::Unreadable(err.to_string()),
    };
    let mode = match file.metadata() {
        Ok(meta) => meta.permissions().mode() & 0o7777,
        Err(err) => return Entry::Unreadable(err.to_string()),
    };
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => hasher.update(&buf[..n]),
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(err) => return Entry::Unreadable(err.to_string()),
        }
    }
    Entry::File {
        mode,
        sha256: hasher.finalize().into(),
    }
}

/// The one exception to "a build may not change a protected file": cargo
/// writes `Cargo.lock` itself. A build may create or change the top-level
/// `Cargo.lock` (never delete it) when the attempt's blocks changed a
/// `Cargo.toml` (cargo records the new dependencies), or create it when git
/// ignores it (a library that does not commit its lock file, in a fresh clone).
/// `lock_ignored` is asked only when it matters.
pub(crate) fn lock_update_allowed(
    change: &Tampered,
    manifest_changed: bool,
    lock_ignored: impl FnOnce() -> bool,
) -> bool {
    change.path == "Cargo.lock"
        && match change.kind {
            ChangeKind::Deleted => false,
            ChangeKind::Changed => manifest_changed,
            ChangeKind::Created => manifest_changed || lock_ignored(),
        }
}

/// The one-line message for a build that changed protected files.
pub(crate) fn message(attempt: u32, tampered: &[Tampered], between_builds: bool) -> String {
    let by = if between_builds {
        format!(
            "by a process an earlier build left running (noticed before the build of attempt {attempt})"
        )
    } else {
        format!("by the build (attempt {attempt})")
    };
    let review = "a tampered build is not trusted for further repair rounds, so the run stops; review with git status and git diff (and ls .git/hooks) and restore what you did not intend";
    match tampered {
        [one] => {
            let what = match one.kind {
                ChangeKind::Changed => "changed",
                ChangeKind::Created => "created",
                ChangeKind::Deleted => "deleted",
            };
            format!("{} was {what} {by}; {review}", one.path)
        }
        many => {
            let list: Vec<String> = many.iter().map(ToString::to_string).collect();
            format!(
                "protected files were changed {by}: {}; {review}",
                list.join(", ")
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("build.sh"), "#!/bin/sh\nmake\n").unwrap();
        std::fs::write(root.join(".gitignore"), "/agent-config\n").unwrap();
        std::fs::create_dir_all(root.join("agent-config/logs/0001")).unwrap();
        std::fs::write(root.join("agent-config/api-key"), "sk-x\n").unwrap();
        std::fs::write(root.join("agent-config/logs/0001/1-query.txt"), "q").unwrap();
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
        std::fs::write(root.join("src.rs"), "fn main() {}\n").unwrap();
        dir
    }

    #[test]
    fn records_the_protected_files_only() {
        let dir = project();
        let protected = Protected::new(dir.path(), Some(&dir.path().join(".git")));
        let snap = protected.snapshot();
        let paths: Vec<&str> = snap.paths().collect();
        assert_eq!(
            paths,
            [
                ".git/config",
                ".git/hooks",
                ".gitignore",
                "agent-config",
                "agent-config/api-key",
                "build.sh"
            ]
        );
    }

    #[test]
    fn every_kind_of_change_is_named() {
        let dir = project();
        let root = dir.path();
        let protected = Protected::new(root, Some(&root.join(".git")));
        let before = protected.snapshot();
        // Untouched: nothing to report, logs and other files included.
        std::fs::write(root.join("agent-config/logs/0001/1-build.txt"), "b").unwrap();
        std::fs::write(root.join("src.rs"), "changed").unwrap();
        assert_eq!(protected.snapshot().changes(&before), []);

        std::fs::write(root.join("build.sh"), "#!/bin/sh\nmake\nexit 0\n").unwrap();
        std::fs::write(root.join(".git/hooks/pre-commit"), "#!/bin/sh\n").unwrap();
        std::fs::remove_file(root.join(".gitignore")).unwrap();
        std::fs::set_permissions(
            root.join("agent-config/api-key"),
            std::fs::Permissions::from_mode(0o600),
        )
        .unwrap();
        std::os::unix::fs::symlink("/etc/passwd", root.join("Cargo.lock")).unwrap();
        let changes = protected.snapshot().changes(&before);
        let shown: Vec<String> = changes.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                ".git/hooks/pre-commit (created)",
                ".gitignore (deleted)",
                "Cargo.lock (created)",
                "agent-config/api-key (changed)",
                "build.sh (changed)",
            ]
        );
        let text = message(2, &changes[4..], false);
        assert!(
            text.starts_with("build.sh was changed by the build (attempt 2); "),
            "{text}"
        );
        assert!(text.contains("git diff"), "{text}");
        let text = message(3, &changes, true);
        assert!(
            text.starts_with(
                "protected files were changed by a process an earlier build left running"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_fifo_is_recorded_not_opened() {
        let dir = project();
        testkit::mkfifo(&dir.path().join("codeRollup.sh"));
        let snap = Protected::new(dir.path(), None).snapshot();
        assert!(snap.paths().any(|p| p == "codeRollup.sh"));
    }
}
