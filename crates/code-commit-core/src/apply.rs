//! Applying a verified set of whole-file changes, all or nothing.
//!
//! The changes reaching [`apply`] have been parsed and verified already (safe
//! relative paths, nothing protected, no symlinks on the way, deletes target
//! existing regular files). This module only makes them land together.
//!
//! - **Invariant:** [`apply`] either lands every change and returns [`Applied`], or
//!   undoes everything it did, in reverse order, and returns an [`ApplyError`]. When
//!   the undo itself fails, the error is [`ApplyError::RollbackIncomplete`] and lists
//!   every path that could not be put back ([`Leftover`]); nothing is left behind
//!   silently.
//! - **Invariant:** an existing file is never modified in place. New content goes
//!   to a temporary file in the target's own directory (same filesystem), is synced,
//!   gets the original's permissions, and is renamed into place after the original
//!   has been renamed aside to a backup. Deleted files are renamed aside too. Backups
//!   are unlinked only once every change has landed.
//! - **Invariant:** temporary and backup names are recognizable
//!   (`.{name}.code-commit-{pid}-{n}.tmp` / `.bak`, with `name` shortened to stay
//!   within file-name limits) and never replace an existing file.
//! - Missing parent directories are created one level at a time, so exactly the
//!   directories this call created are known, and removed again (when empty) on
//!   rollback.
//! - Permission bits are carried over to replacements; ownership and extended
//!   attributes are not (the file is rewritten by the current user). New files and
//!   directories get the default permissions (the process umask applies).
//! - Two changes to the same path are refused before anything is touched.

use std::collections::HashSet;
use std::fmt;
use std::fs::{self, OpenOptions};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// One verified change to the working tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Replace the file at `abs` with `content`, creating it (and any missing
    /// parent directories) if it does not exist.
    Write {
        /// The path as the response named it, relative to the project.
        rel: String,
        /// The absolute path to write.
        abs: PathBuf,
        /// The complete new content.
        content: Vec<u8>,
    },
    /// Remove the existing regular file at `abs`.
    Delete {
        /// The path as the response named it, relative to the project.
        rel: String,
        /// The absolute path to remove.
        abs: PathBuf,
    },
}

impl Change {
    /// The path as the response named it, relative to the project.
    pub fn rel(&self) -> &str {
        match self {
            Change::Write { rel, .. } | Change::Delete { rel, .. } => rel,
        }
    }

    /// The absolute path the change touches.
    pub fn abs(&self) -> &Path {
        match self {
            Change::Write { abs, .. } | Change::Delete { abs, .. } => abs,
        }
    }
}

/// What a successful [`apply`] did, in the order of the changes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Applied {
    /// Every written path, new files included.
    pub written: Vec<String>,
    /// The written paths that did not exist before (a subset of `written`).
    pub created: Vec<String>,
    /// The deleted paths.
    pub deleted: Vec<String>,
    /// Backups of replaced or deleted files that could not be unlinked after every
    /// change had landed. The changes stand; these files are junk the caller may
    /// want to mention. Almost always empty.
    pub unremoved_backups: Vec<PathBuf>,
}

/// A step of applying one change, named in errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Step {
    /// Checking the changes before touching anything.
    Validate,
    /// Looking at what is at the target path now.
    Inspect,
    /// Creating a missing parent directory.
    CreateDir,
    /// Creating the temporary file next to the target.
    CreateTemp,
    /// Writing the new content to the temporary file.
    WriteTemp,
    /// Giving the temporary file the original's permissions.
    CopyPermissions,
    /// Syncing the temporary file to disk.
    SyncTemp,
    /// Renaming the original aside to its backup name.
    MoveAside,
    /// Renaming the temporary file onto the target.
    Place,
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Step::Validate => "validate the changes",
            Step::Inspect => "inspect the target",
            Step::CreateDir => "create a missing directory",
            Step::CreateTemp => "create the temporary file",
            Step::WriteTemp => "write the temporary file",
            Step::CopyPermissions => "copy the original's permissions",
            Step::SyncTemp => "sync the temporary file",
            Step::MoveAside => "move the original aside",
            Step::Place => "move the new content into place",
        })
    }
}

/// Something a failed rollback could not put back.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Leftover {
    /// A file this call created could not be removed again.
    #[error("new file {} could not be removed: {source}", path.display())]
    NewFile {
        /// The file that should not exist.
        path: PathBuf,
        /// Why removing it failed.
        #[source]
        source: io::Error,
    },
    /// The original could not be renamed back from its backup; its content is
    /// still in `backup`.
    #[error(
        "{} could not be restored; its original content is in {}: {source}",
        path.display(),
        backup.display()
    )]
    NotRestored {
        /// Where the original belongs.
        path: PathBuf,
        /// Where the original is now.
        backup: PathBuf,
        /// Why renaming it back failed.
        #[source]
        source: io::Error,
    },
    /// A temporary file could not be removed.
    #[error("temporary file {} could not be removed: {source}", path.display())]
    TempFile {
        /// The temporary file.
        path: PathBuf,
        /// Why removing it failed.
        #[source]
        source: io::Error,
    },
    /// A directory this call created could not be removed.
    #[error("created directory {} could not be removed: {source}", path.display())]
    Directory {
        /// The directory.
        path: PathBuf,
        /// Why removing it failed.
        #[source]
        source: io::Error,
    },
}

/// Why [`apply`] failed, and whether the tree is back as it was.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApplyError {
    /// Two changes name the same file; nothing was touched.
    #[error("`{rel}` is changed more than once in one response; nothing was changed")]
    Duplicate {
        /// The path named twice (as the second change names it).
        rel: String,
    },
    /// A step failed and every change was undone: the tree is exactly as before.
    #[error(
        "could not {step} for `{rel}` ({}): {source}; every change was rolled back",
        path.display()
    )]
    RolledBack {
        /// The change that failed, as the response named it.
        rel: String,
        /// The path the failing step worked on (the target, a directory, a
        /// temporary or backup file).
        path: PathBuf,
        /// The step that failed.
        step: Step,
        /// The error of that step.
        #[source]
        source: io::Error,
    },
    /// A step failed and undoing the earlier steps failed too: `leftovers` says
    /// what is not as it was.
    #[error(
        "could not {step} for `{rel}` ({}): {source}; the rollback was incomplete: {}",
        path.display(),
        join(leftovers)
    )]
    RollbackIncomplete {
        /// The change that failed, as the response named it.
        rel: String,
        /// The path the failing step worked on.
        path: PathBuf,
        /// The step that failed.
        step: Step,
        /// The error of that step.
        #[source]
        source: io::Error,
        /// Everything the rollback could not put back, in the order it was tried.
        leftovers: Vec<Leftover>,
    },
}

impl ApplyError {
    /// True when the working tree is exactly as it was before [`apply`].
    pub fn restored(&self) -> bool {
        !matches!(self, ApplyError::RollbackIncomplete { .. })
    }
}

fn join(leftovers: &[Leftover]) -> String {
    leftovers
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Applies every change, in order, or none of them (see the module invariants).
pub fn apply(changes: &[Change]) -> Result<Applied, ApplyError> {
    let mut seen = HashSet::new();
    for change in changes {
        if !seen.insert(change.abs()) {
            return Err(ApplyError::Duplicate {
                rel: change.rel().to_owned(),
            });
        }
    }

    let mut tx = Transaction::default();
    let mut applied = Applied::default();
    for change in changes {
        let outcome = match change {
            Change::Write { rel, abs, content } => tx.write(abs, content).map(|created| {
                applied.written.push(rel.clone());
                if created {
                    applied.created.push(rel.clone());
                }
            }),
            Change::Delete { rel, abs } => {
                tx.delete(abs).map(|()| applied.deleted.push(rel.clone()))
            }
        };
        if let Err(failure) = outcome {
            let leftovers = tx.roll_back();
            let Failure { step, path, source } = failure;
            let rel = change.rel().to_owned();
            return Err(if leftovers.is_empty() {
                ApplyError::RolledBack {
                    rel,
                    path,
                    step,
                    source,
                }
            } else {
                ApplyError::RollbackIncomplete {
                    rel,
                    path,
                    step,
                    source,
                    leftovers,
                }
            });
        }
    }
    applied.unremoved_backups = tx.commit();
    Ok(applied)
}

/// A failed forward step.
struct Failure {
    step: Step,
    path: PathBuf,
    source: io::Error,
}

/// Runs one forward step: the test fault point first, then `op`.
fn step<T>(step: Step, path: &Path, op: impl FnOnce() -> io::Result<T>) -> Result<T, Failure> {
    fault::check(fault::Kind::Step)
        .and_then(|()| op())
        .map_err(|source| Failure {
            step,
            path: path.to_owned(),
            source,
        })
}

/// Something done that the rollback must undo.
#[derive(Debug)]
enum Done {
    /// A directory that did not exist.
    CreatedDir(PathBuf),
    /// A temporary file that is not in place yet.
    Temp(PathBuf),
    /// The original moved to `backup`.
    MovedAside { original: PathBuf, backup: PathBuf },
    /// New content renamed onto `target`. When it replaced a file, the
    /// `MovedAside` just before it restores the original over it; when `new`, the
    /// file must be removed.
    Placed { target: PathBuf, new: bool },
}

/// The journal of one [`apply`] call.
#[derive(Debug, Default)]
struct Transaction {
    journal: Vec<Done>,
}

impl Transaction {
    /// Writes `content` to `target`; returns whether the file is new.
    fn write(&mut self, target: &Path, content: &[u8]) -> Result<bool, Failure> {
        let original = step(Step::Inspect, target, || {
            match fs::symlink_metadata(target) {
                Ok(meta) if meta.is_file() => Ok(Some(meta.permissions())),
                Ok(_) => Err(not_a_regular_file()),
                Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
                Err(err) => Err(err),
            }
        })?;
        let dir = parent(target)?;
        if original.is_none() {
            self.create_missing_dirs(dir)?;
        }

        let (temp, mut file) = step(Step::CreateTemp, dir, || create_temp(dir, target))?;
        let temp_index = self.journal.len();
        self.journal.push(Done::Temp(temp.clone()));
        step(Step::WriteTemp, &temp, || file.write_all(content))?;
        if let Some(permissions) = &original {
            step(Step::CopyPermissions, &temp, || {
                file.set_permissions(permissions.clone())
            })?;
        }
        step(Step::SyncTemp, &temp, || file.sync_all())?;
        drop(file);

        if original.is_some() {
            self.move_aside(target)?;
        }
        step(Step::Place, target, || fs::rename(&temp, target))?;
        // The temporary name is gone; undoing the placement replaces its entry.
        self.journal.remove(temp_index);
        self.journal.push(Done::Placed {
            target: target.to_owned(),
            new: original.is_none(),
        });
        Ok(original.is_none())
    }

    /// Moves the regular file `target` aside, to be unlinked on commit.
    fn delete(&mut self, target: &Path) -> Result<(), Failure> {
        step(Step::Inspect, target, || {
            let meta = fs::symlink_metadata(target)?;
            if meta.is_file() {
                Ok(())
            } else {
                Err(not_a_regular_file())
            }
        })?;
        self.move_aside(target)
    }

    fn move_aside(&mut self, original: &Path) -> Result<(), Failure> {
        let dir = parent(original)?;
        let backup = step(Step::MoveAside, original, || {
            let backup = free_name(dir, original, "bak")?;
            fs::rename(original, &backup)?;
            Ok(backup)
        })?;
        self.journal.push(Done::MovedAside {
            original: original.to_owned(),
            backup,
        });
        Ok(())
    }

    /// Creates the missing ancestors of `dir` (and `dir`), outermost first.
    fn create_missing_dirs(&mut self, dir: &Path) -> Result<(), Failure> {
        let mut missing = Vec::new();
        let mut current = Some(dir);
        while let Some(path) = current {
            match fs::symlink_metadata(path) {
                Err(err) if err.kind() == io::ErrorKind::NotFound => {
                    missing.push(path);
                    current = path.parent();
                }
                // Anything else (a directory, or a file in the way) is left for the
                // next step to succeed or fail on.
                _ => break,
            }
        }
        for path in missing.into_iter().rev() {
            step(Step::CreateDir, path, || fs::create_dir(path))?;
            self.journal.push(Done::CreatedDir(path.to_owned()));
        }
        Ok(())
    }

    /// Undoes the journal in reverse order; returns what could not be undone.
    fn roll_back(self) -> Vec<Leftover> {
        let mut leftovers = Vec::new();
        for done in self.journal.into_iter().rev() {
            let undo = |op: &dyn Fn() -> io::Result<()>| {
                fault::check(fault::Kind::Undo).and_then(|()| op())
            };
            let leftover = match done {
                Done::CreatedDir(path) => undo(&|| fs::remove_dir(&path))
                    .err()
                    .map(|source| Leftover::Directory { path, source }),
                Done::Temp(path) => undo(&|| fs::remove_file(&path))
                    .err()
                    .map(|source| Leftover::TempFile { path, source }),
                Done::MovedAside { original, backup } => undo(&|| fs::rename(&backup, &original))
                    .err()
                    .map(|source| Leftover::NotRestored {
                        path: original,
                        backup,
                        source,
                    }),
                Done::Placed { target, new: true } => {
                    undo(&|| fs::remove_file(&target))
                        .err()
                        .map(|source| Leftover::NewFile {
                            path: target,
                            source,
                        })
                }
                Done::Placed { new: false, .. } => None,
            };
            leftovers.extend(leftover);
        }
        leftovers
    }

    /// Unlinks the backups; returns those that could not be unlinked.
    fn commit(self) -> Vec<PathBuf> {
        self.journal
            .into_iter()
            .filter_map(|done| match done {
                Done::MovedAside { backup, .. } => Some(backup),
                _ => None,
            })
            .filter(|backup| {
                fault::check(fault::Kind::Cleanup)
                    .and_then(|()| fs::remove_file(backup))
                    .is_err()
            })
            .collect()
    }
}

fn not_a_regular_file() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, "not a regular file")
}

fn parent(path: &Path) -> Result<&Path, Failure> {
    path.parent().ok_or_else(|| Failure {
        step: Step::Inspect,
        path: path.to_owned(),
        source: io::Error::new(
            io::ErrorKind::InvalidInput,
            "the path has no parent directory",
        ),
    })
}

/// Distinguishes the names this process picks; with the pid, they are unique
/// among live processes, and leftovers of dead ones are skipped.
static NEXT_NAME: AtomicU64 = AtomicU64::new(0);

/// How many taken names to skip before giving up.
const NAME_ATTEMPTS: u32 = 1000;

/// The longest part of the target's name kept in a temporary or backup name, so
/// the whole name stays under the usual 255-byte limit.
const MAX_NAME_PART: usize = 64;

fn side_name(dir: &Path, target: &Path, extension: &str) -> PathBuf {
    let name = target
        .file_name()
        .map(|name| name.to_string_lossy())
        .unwrap_or_default();
    let mut end = name.len().min(MAX_NAME_PART);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    let n = NEXT_NAME.fetch_add(1, Ordering::Relaxed);
    dir.join(format!(
        ".{}.code-commit-{}-{n}.{extension}",
        &name[..end],
        std::process::id()
    ))
}

/// Creates a new temporary file next to `target`, never opening an existing one.
fn create_temp(dir: &Path, target: &Path) -> io::Result<(PathBuf, fs::File)> {
    for _ in 0..NAME_ATTEMPTS {
        let path = side_name(dir, target, "tmp");
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(file) => return Ok((path, file)),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
            Err(err) => return Err(err),
        }
    }
    Err(names_exhausted())
}

/// A backup name next to `target` that nothing uses. Renaming onto it could race
/// with another process creating the same pid-tagged name; none does.
fn free_name(dir: &Path, target: &Path, extension: &str) -> io::Result<PathBuf> {
    for _ in 0..NAME_ATTEMPTS {
        let path = side_name(dir, target, extension);
        match fs::symlink_metadata(&path) {
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(path),
            Err(err) => return Err(err),
            Ok(_) => {}
        }
    }
    Err(names_exhausted())
}

fn names_exhausted() -> io::Error {
    io::Error::new(
        io::ErrorKind::AlreadyExists,
        "every temporary name tried is taken",
    )
}

/// The fault-injection point: in tests, the Nth forward step, undo or cleanup of
/// the current thread can be made to fail; otherwise every check passes.
mod fault {
    /// Which counter a check advances.
    #[derive(Debug, Clone, Copy)]
    pub(super) enum Kind {
        Step,
        Undo,
        Cleanup,
    }

    #[cfg(not(test))]
    #[inline]
    pub(super) fn check(_kind: Kind) -> std::io::Result<()> {
        Ok(())
    }

    #[cfg(test)]
    pub(super) use injected::*;

    #[cfg(test)]
    mod injected {
        use std::cell::RefCell;
        use std::io;

        use super::Kind;

        /// For each kind: how many checks ran, and which one fails (0-based).
        #[derive(Debug, Default, Clone, Copy)]
        pub(crate) struct Plan {
            pub counts: [usize; 3],
            pub fail: [Option<usize>; 3],
        }

        thread_local! {
            static PLAN: RefCell<Plan> = RefCell::new(Plan::default());
        }

        /// Replaces this thread's plan; returns the previous one.
        pub(crate) fn set(plan: Plan) -> Plan {
            PLAN.with(|p| p.replace(plan))
        }

        pub(crate) fn check(kind: Kind) -> io::Result<()> {
            PLAN.with(|p| {
                let mut plan = p.borrow_mut();
                let index = kind as usize;
                let n = plan.counts[index];
                plan.counts[index] += 1;
                if plan.fail[index] == Some(n) {
                    Err(io::Error::other(format!("injected fault at {kind:?} {n}")))
                } else {
                    Ok(())
                }
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::os::unix::fs::PermissionsExt;

    use super::fault::Plan;
    use super::*;

    /// Everything observable about a tree: kind, mode and content per path.
    fn snapshot(root: &Path) -> BTreeMap<String, (char, u32, Vec<u8>)> {
        fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, (char, u32, Vec<u8>)>) {
            for entry in fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                let meta = fs::symlink_metadata(&path).unwrap();
                let rel = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                let mode = meta.permissions().mode() & 0o7777;
                if meta.is_dir() {
                    out.insert(rel, ('d', mode, Vec::new()));
                    walk(root, &path, out);
                } else {
                    out.insert(rel, ('f', mode, fs::read(&path).unwrap()));
                }
            }
        }
        let mut out = BTreeMap::new();
        walk(root, root, &mut out);
        out
    }

    /// A tree with a script, nested files and an empty directory.
    fn fixture() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::write(root.join("run.sh"), "#!/bin/sh\necho old\n").unwrap();
        fs::set_permissions(root.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
        fs::create_dir_all(root.join("src/inner")).unwrap();
        fs::write(root.join("src/lib.rs"), "old lib\n").unwrap();
        fs::write(root.join("src/old.rs"), "to delete\n").unwrap();
        fs::set_permissions(root.join("src/old.rs"), fs::Permissions::from_mode(0o600)).unwrap();
        fs::write(root.join("gone.txt"), "").unwrap();
        fs::create_dir(root.join("empty")).unwrap();
        dir
    }

    /// Creates, replaces and deletes, with new files in nested new directories
    /// (two of them sharing a new directory) and an empty new file.
    fn changes(root: &Path) -> Vec<Change> {
        let write = |rel: &str, content: &str| Change::Write {
            rel: rel.to_owned(),
            abs: root.join(rel),
            content: content.as_bytes().to_vec(),
        };
        let delete = |rel: &str| Change::Delete {
            rel: rel.to_owned(),
            abs: root.join(rel),
        };
        vec![
            write("run.sh", "#!/bin/sh\necho new\n"),
            write("new/deep/er/a.rs", "a\n"),
            delete("src/old.rs"),
            write("new/deep/b.rs", "b\n"),
            write("src/lib.rs", "new lib\n"),
            write("src/inner/empty.txt", ""),
            write("empty/x/y.txt", "y\n"),
            delete("gone.txt"),
        ]
    }

    /// Runs `apply` under `plan`; returns the result and the counters it reached.
    fn apply_with(plan: Plan, changes: &[Change]) -> (Result<Applied, ApplyError>, Plan) {
        fault::set(plan);
        let result = apply(changes);
        let reached = fault::set(Plan::default());
        (result, reached)
    }

    fn fail_step(n: usize) -> Plan {
        Plan {
            fail: [Some(n), None, None],
            ..Plan::default()
        }
    }

    /// Counts the forward steps of a successful run of the mixed changes.
    fn step_count() -> usize {
        let dir = fixture();
        let (result, reached) = apply_with(Plan::default(), &changes(dir.path()));
        assert!(result.is_ok());
        reached.counts[0]
    }

    #[test]
    fn a_failure_at_every_step_leaves_the_tree_as_it_was() {
        let steps = step_count();
        // Inspect + 3 dirs + temp/write/sync/place for a new file, more for
        // replacements: the mix has well over 30 steps.
        assert!(steps > 30, "only {steps} steps");
        let mut failed_steps = HashSet::new();
        for n in 0..steps {
            let dir = fixture();
            let before = snapshot(dir.path());
            let (result, reached) = apply_with(fail_step(n), &changes(dir.path()));
            let err = result.expect_err("the injected fault must fail the apply");
            assert!(err.restored(), "step {n}: {err}");
            let ApplyError::RolledBack { step, source, .. } = &err else {
                panic!("step {n}: {err:?}");
            };
            assert!(source.to_string().contains("injected"), "step {n}: {err}");
            failed_steps.insert(*step);
            assert_eq!(
                reached.counts[0],
                n + 1,
                "no step runs after the failing one"
            );
            assert_eq!(
                snapshot(dir.path()),
                before,
                "tree changed after a fault at step {n}"
            );
        }
        for expected in [
            Step::Inspect,
            Step::CreateDir,
            Step::CreateTemp,
            Step::WriteTemp,
            Step::CopyPermissions,
            Step::SyncTemp,
            Step::MoveAside,
            Step::Place,
        ] {
            assert!(
                failed_steps.contains(&expected),
                "{expected:?} never failed"
            );
        }
        // One past the last step is never reached: the count is exact.
        let dir = fixture();
        let (result, _) = apply_with(fail_step(steps), &changes(dir.path()));
        assert!(result.is_ok());
    }

    #[test]
    fn success_lands_every_change_and_leaves_no_side_files() {
        let dir = fixture();
        let root = dir.path();
        let applied = apply(&changes(root)).unwrap();
        assert_eq!(
            applied.written,
            [
                "run.sh",
                "new/deep/er/a.rs",
                "new/deep/b.rs",
                "src/lib.rs",
                "src/inner/empty.txt",
                "empty/x/y.txt"
            ]
        );
        assert_eq!(
            applied.created,
            [
                "new/deep/er/a.rs",
                "new/deep/b.rs",
                "src/inner/empty.txt",
                "empty/x/y.txt"
            ]
        );
        assert_eq!(applied.deleted, ["src/old.rs", "gone.txt"]);
        assert!(applied.unremoved_backups.is_empty());
        let after = snapshot(root);
        let paths: Vec<&str> = after.keys().map(String::as_str).collect();
        assert_eq!(
            paths,
            [
                "empty",
                "empty/x",
                "empty/x/y.txt",
                "new",
                "new/deep",
                "new/deep/b.rs",
                "new/deep/er",
                "new/deep/er/a.rs",
                "run.sh",
                "src",
                "src/inner",
                "src/inner/empty.txt",
                "src/lib.rs",
            ]
        );
        assert_eq!(
            after["run.sh"],
            ('f', 0o755, b"#!/bin/sh\necho new\n".to_vec())
        );
        assert_eq!(after["src/inner/empty.txt"].2, b"");
    }

    #[test]
    fn a_failed_undo_is_reported_with_where_the_original_is() {
        let steps = step_count();
        // Fail the last step (placing the last new file); then fail each undo in
        // turn. Every failed undo is listed, and the tree is never silently wrong.
        let undos = {
            let dir = fixture();
            let (result, reached) = apply_with(fail_step(steps - 1), &changes(dir.path()));
            assert!(result.is_err());
            reached.counts[1]
        };
        assert!(undos > 10, "only {undos} undos");
        let mut saw_not_restored = false;
        for k in 0..undos {
            let dir = fixture();
            let plan = Plan {
                fail: [Some(steps - 1), Some(k), None],
                ..Plan::default()
            };
            let (result, _) = apply_with(plan, &changes(dir.path()));
            let err = result.unwrap_err();
            assert!(!err.restored(), "undo {k}: {err}");
            let ApplyError::RollbackIncomplete { leftovers, .. } = &err else {
                panic!("undo {k}: {err:?}");
            };
            // Later undos may fail as a consequence (a directory that is not empty
            // because a file in it could not be removed); the injected one is first.
            assert!(
                leftovers[0].to_string().contains("injected"),
                "undo {k}: {err}"
            );
            assert!(err.to_string().contains("rollback was incomplete"));
            if let Leftover::NotRestored { path, backup, .. } = &leftovers[0] {
                saw_not_restored = true;
                let original = snapshot(fixture().path());
                let rel = path.strip_prefix(dir.path()).unwrap().to_string_lossy();
                assert_eq!(fs::read(backup).unwrap(), original[rel.as_ref()].2);
            }
        }
        assert!(saw_not_restored);
    }

    #[test]
    fn a_backup_that_cannot_be_removed_is_reported_on_success() {
        let dir = fixture();
        let plan = Plan {
            fail: [None, None, Some(1)],
            ..Plan::default()
        };
        let (result, reached) = apply_with(plan, &changes(dir.path()));
        let applied = result.unwrap();
        // Two replacements and two deletes left four backups.
        assert_eq!(reached.counts[2], 4);
        assert_eq!(applied.unremoved_backups.len(), 1);
        let backup = &applied.unremoved_backups[0];
        assert!(backup.exists());
        let name = backup.file_name().unwrap().to_string_lossy();
        assert!(name.starts_with('.') && name.ends_with(".bak"), "{name}");
        assert!(name.contains(&format!(".code-commit-{}-", std::process::id())));
    }

    #[test]
    fn duplicate_targets_are_refused_before_anything_is_touched() {
        let dir = fixture();
        let before = snapshot(dir.path());
        let mut list = changes(dir.path());
        list.push(Change::Delete {
            rel: "./run.sh".to_owned(),
            abs: dir.path().join("./run.sh"),
        });
        let err = apply(&list).unwrap_err();
        assert!(matches!(&err, ApplyError::Duplicate { rel } if rel == "./run.sh"));
        assert!(err.restored());
        assert_eq!(snapshot(dir.path()), before);
    }

    #[test]
    fn side_names_are_recognizable_short_and_fresh() {
        let dir = tempfile::tempdir().unwrap();
        let long = "é".repeat(120);
        let target = dir.path().join(&long);
        let a = side_name(dir.path(), &target, "tmp");
        let b = side_name(dir.path(), &target, "tmp");
        assert_ne!(a, b);
        let name = a.file_name().unwrap().to_str().unwrap();
        assert!(name.len() < 120, "{name}");
        assert!(name.starts_with(".éé") && name.ends_with(".tmp"));
        // A taken name is skipped, never reused.
        let (temp, _) = create_temp(dir.path(), &target).unwrap();
        let next = free_name(dir.path(), &target, "bak").unwrap();
        assert_ne!(temp, next);
        assert!(!next.exists());
    }

    #[test]
    fn targets_that_are_not_regular_files_are_refused() {
        let dir = fixture();
        let before = snapshot(dir.path());
        let err = apply(&[
            Change::Write {
                rel: "src/lib.rs".to_owned(),
                abs: dir.path().join("src/lib.rs"),
                content: b"x".to_vec(),
            },
            Change::Write {
                rel: "empty".to_owned(),
                abs: dir.path().join("empty"),
                content: b"x".to_vec(),
            },
        ])
        .unwrap_err();
        assert!(
            matches!(&err, ApplyError::RolledBack { step: Step::Inspect, rel, .. } if rel == "empty")
        );
        assert_eq!(snapshot(dir.path()), before);
        let err = apply(&[Change::Delete {
            rel: "src".to_owned(),
            abs: dir.path().join("src"),
        }])
        .unwrap_err();
        assert!(matches!(
            &err,
            ApplyError::RolledBack {
                step: Step::Inspect,
                ..
            }
        ));
        assert_eq!(snapshot(dir.path()), before);
    }
}
