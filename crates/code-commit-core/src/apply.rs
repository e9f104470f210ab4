//! Applying a verified set of whole-file changes, all or nothing.
//!
//! The changes reaching [`apply`] have been parsed and verified already (safe
//! relative paths, nothing protected, no symlinks on the way, deletes target
//! existing regular files). This module only makes them land together, and
//! re-checks on the way what it relies on: between the policy's check and the
//! write, something (a process an earlier build left running) may have swapped a
//! directory for a symbolic link.
//!
//! - **Invariant:** no write ever goes through a symbolic link. Every directory
//!   is reached from the project's [`Dir`] handle one component at a time without
//!   following links (`openat` with `O_NOFOLLOW`), and every file operation
//!   (create, rename, unlink) is made relative to the handle of the directory
//!   that holds it. A directory swapped for a link after it was opened keeps
//!   receiving the changes in the real directory it was; a link met on the way
//!   fails the change, and everything is rolled back.
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
//!   rollback. That removal is the one operation made by path rather than through
//!   a handle (`safe-io` has no `rmdir` relative to a handle yet): it can only
//!   remove an empty directory.
//! - Permission bits are carried over to replacements; ownership and extended
//!   attributes are not (the file is rewritten by the current user). New files and
//!   directories get the default permissions (the process umask applies). A file
//!   the current user cannot read cannot be replaced (its permissions are read
//!   through an open handle).
//! - Two changes to the same path are refused before anything is touched.

use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::fs::{self, File};
use std::io::{self, Write as _};
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};

use safe_io::{Dir, FileKind};

/// One verified change to the working tree, relative to the project directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Replace the file at `rel` with `content`, creating it (and any missing
    /// parent directories) if it does not exist.
    Write {
        /// The path relative to the project directory, `/`-separated.
        rel: String,
        /// The complete new content.
        content: Vec<u8>,
    },
    /// Remove the existing regular file at `rel`.
    Delete {
        /// The path relative to the project directory, `/`-separated.
        rel: String,
    },
}

impl Change {
    /// The path relative to the project directory.
    pub fn rel(&self) -> &str {
        match self {
            Change::Write { rel, .. } | Change::Delete { rel } => rel,
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

/// The components of a change's path: plain names only, at least one.
fn components(rel: &str) -> Option<Vec<&OsStr>> {
    let mut out = Vec::new();
    for component in Path::new(rel).components() {
        match component {
            Component::Normal(name) => out.push(name),
            Component::CurDir => {}
            _ => return None,
        }
    }
    (!out.is_empty()).then_some(out)
}

/// Applies every change below `root`, in order, or none of them (see the module
/// invariants).
pub fn apply(root: &Dir, changes: &[Change]) -> Result<Applied, ApplyError> {
    let mut seen = HashSet::new();
    let mut parsed = Vec::with_capacity(changes.len());
    for change in changes {
        let Some(parts) = components(change.rel()) else {
            return Err(ApplyError::RolledBack {
                rel: change.rel().to_owned(),
                path: root.path().join(change.rel()),
                step: Step::Validate,
                source: io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "not a plain relative path inside the project",
                ),
            });
        };
        if !seen.insert(parts.clone()) {
            return Err(ApplyError::Duplicate {
                rel: change.rel().to_owned(),
            });
        }
        parsed.push(parts);
    }

    let mut tx = Transaction {
        root,
        journal: Vec::new(),
    };
    let mut applied = Applied::default();
    for (change, parts) in changes.iter().zip(&parsed) {
        let outcome = match change {
            Change::Write { rel, content } => tx.write(parts, content).map(|created| {
                applied.written.push(rel.clone());
                if created {
                    applied.created.push(rel.clone());
                }
            }),
            Change::Delete { rel } => tx.delete(parts).map(|()| applied.deleted.push(rel.clone())),
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

/// A `safe-io` error as an I/O error, keeping the kind where there is one.
fn io_error(err: safe_io::Error) -> io::Error {
    match err {
        safe_io::Error::Io { source, .. } => source,
        other => io::Error::new(io::ErrorKind::InvalidInput, other.to_string()),
    }
}

/// Something done that the rollback must undo. Each entry holds the handle of
/// the directory it happened in.
#[derive(Debug)]
enum Done {
    /// A directory that did not exist, `name` in `parent`.
    CreatedDir { parent: Rc<Dir>, name: OsString },
    /// A temporary file that is not in place yet.
    Temp { dir: Rc<Dir>, name: OsString },
    /// The original `name` moved to `backup`, both in `dir`.
    MovedAside {
        dir: Rc<Dir>,
        name: OsString,
        backup: OsString,
    },
    /// New content renamed onto `name`. When it replaced a file, the
    /// `MovedAside` just before it restores the original over it; when `new`, the
    /// file must be removed.
    Placed {
        dir: Rc<Dir>,
        name: OsString,
        new: bool,
    },
}

/// The journal of one [`apply`] call.
#[derive(Debug)]
struct Transaction<'r> {
    root: &'r Dir,
    journal: Vec<Done>,
}

/// What is at a change's target before it is written.
enum Found {
    /// A regular file, with its permissions, in this directory.
    File(Rc<Dir>, fs::Permissions),
    /// Nothing: the directory holding it exists (the first handle) up to the
    /// component at this index; the rest must be created.
    Missing(Rc<Dir>, usize),
}

impl Transaction<'_> {
    fn display(&self, parts: &[&OsStr]) -> PathBuf {
        let mut path = self.root.path().to_path_buf();
        path.extend(parts);
        path
    }

    /// Walks to the directory holding `parts`' last component without following
    /// links, and looks at what is there.
    fn inspect(&self, parts: &[&OsStr]) -> io::Result<Found> {
        let (last, parents) = parts.split_last().expect("components are never empty");
        let mut dir = Rc::new(self.root.try_clone().map_err(io_error)?);
        for (i, name) in parents.iter().enumerate() {
            match dir.open_dir_optional(name).map_err(io_error)? {
                Some(next) => dir = Rc::new(next),
                None => return Ok(Found::Missing(dir, i)),
            }
        }
        match dir.kind(last).map_err(io_error)? {
            None => Ok(Found::Missing(dir, parents.len())),
            Some(FileKind::File) => {
                let file = dir.open_file(last).map_err(io_error)?;
                let permissions = file.metadata()?.permissions();
                Ok(Found::File(dir, permissions))
            }
            Some(_) => Err(not_a_regular_file()),
        }
    }

    /// Writes `content` to `parts`; returns whether the file is new.
    fn write(&mut self, parts: &[&OsStr], content: &[u8]) -> Result<bool, Failure> {
        let target = self.display(parts);
        let last = *parts.last().expect("components are never empty");
        let found = step(Step::Inspect, &target, || self.inspect(parts))?;
        let (dir, original) = match found {
            Found::File(dir, permissions) => (dir, Some(permissions)),
            Found::Missing(dir, from) => (
                self.create_missing_dirs(dir, &parts[from..parts.len() - 1])?,
                None,
            ),
        };

        let dir_path = dir.path().to_path_buf();
        let (temp, mut file) = step(Step::CreateTemp, &dir_path, || create_temp(&dir, last))?;
        let temp_path = dir.path().join(&temp);
        let temp_index = self.journal.len();
        self.journal.push(Done::Temp {
            dir: Rc::clone(&dir),
            name: temp.clone(),
        });
        step(Step::WriteTemp, &temp_path, || file.write_all(content))?;
        if let Some(permissions) = &original {
            step(Step::CopyPermissions, &temp_path, || {
                file.set_permissions(permissions.clone())
            })?;
        }
        step(Step::SyncTemp, &temp_path, || file.sync_all())?;
        drop(file);

        if original.is_some() {
            self.move_aside(&dir, last, &target)?;
        }
        step(Step::Place, &target, || {
            dir.rename(&temp, last).map_err(io_error)
        })?;
        // The temporary name is gone; undoing the placement replaces its entry.
        self.journal.remove(temp_index);
        self.journal.push(Done::Placed {
            dir,
            name: last.to_owned(),
            new: original.is_none(),
        });
        Ok(original.is_none())
    }

    /// Moves the regular file `parts` aside, to be unlinked on commit.
    fn delete(&mut self, parts: &[&OsStr]) -> Result<(), Failure> {
        let target = self.display(parts);
        let found = step(Step::Inspect, &target, || self.inspect(parts))?;
        let Found::File(dir, _) = found else {
            return Err(Failure {
                step: Step::Inspect,
                path: target,
                source: io::Error::new(io::ErrorKind::NotFound, "the file does not exist"),
            });
        };
        self.move_aside(
            &dir,
            parts.last().expect("components are never empty"),
            &target,
        )
    }

    fn move_aside(&mut self, dir: &Rc<Dir>, name: &OsStr, target: &Path) -> Result<(), Failure> {
        let backup = step(Step::MoveAside, target, || {
            let backup = free_name(dir, name, "bak")?;
            dir.rename(name, &backup).map_err(io_error)?;
            Ok(backup)
        })?;
        self.journal.push(Done::MovedAside {
            dir: Rc::clone(dir),
            name: name.to_owned(),
            backup,
        });
        Ok(())
    }

    /// Creates `missing` below `dir`, outermost first; returns the innermost.
    fn create_missing_dirs(
        &mut self,
        mut dir: Rc<Dir>,
        missing: &[&OsStr],
    ) -> Result<Rc<Dir>, Failure> {
        for name in missing {
            let path = dir.path().join(name);
            let created = step(Step::CreateDir, &path, || {
                dir.create_dir(name).map_err(io_error)?.ok_or_else(|| {
                    io::Error::new(
                        io::ErrorKind::AlreadyExists,
                        "something by this name appeared",
                    )
                })
            })?;
            self.journal.push(Done::CreatedDir {
                parent: Rc::clone(&dir),
                name: (*name).to_owned(),
            });
            dir = Rc::new(created);
        }
        Ok(dir)
    }

    /// Undoes the journal in reverse order; returns what could not be undone.
    fn roll_back(self) -> Vec<Leftover> {
        let mut leftovers = Vec::new();
        for done in self.journal.into_iter().rev() {
            let undo = |op: &dyn Fn() -> io::Result<()>| {
                fault::check(fault::Kind::Undo).and_then(|()| op())
            };
            let leftover = match done {
                Done::CreatedDir { parent, name } => {
                    let path = parent.path().join(&name);
                    undo(&|| remove_created_dir(&parent, &name))
                        .err()
                        .map(|source| Leftover::Directory { path, source })
                }
                Done::Temp { dir, name } => {
                    undo(&|| dir.remove_file(&name).map(drop).map_err(io_error))
                        .err()
                        .map(|source| Leftover::TempFile {
                            path: dir.path().join(&name),
                            source,
                        })
                }
                Done::MovedAside { dir, name, backup } => {
                    undo(&|| dir.rename(&backup, &name).map_err(io_error))
                        .err()
                        .map(|source| Leftover::NotRestored {
                            path: dir.path().join(&name),
                            backup: dir.path().join(&backup),
                            source,
                        })
                }
                Done::Placed {
                    dir,
                    name,
                    new: true,
                } => undo(&|| dir.remove_file(&name).map(drop).map_err(io_error))
                    .err()
                    .map(|source| Leftover::NewFile {
                        path: dir.path().join(&name),
                        source,
                    }),
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
                Done::MovedAside { dir, backup, .. } => {
                    let removed = fault::check(fault::Kind::Cleanup)
                        .and_then(|()| dir.remove_file(&backup).map_err(io_error));
                    removed.is_err().then(|| dir.path().join(&backup))
                }
                _ => None,
            })
            .collect()
    }
}

/// Removes the empty directory `name` that this call created in `parent`,
/// relative to `parent`'s handle (`rmdir` removes nothing but an empty
/// directory, and never follows a link).
fn remove_created_dir(parent: &Dir, name: &OsStr) -> io::Result<()> {
    parent.remove_dir(name).map(|_| ()).map_err(io_error)
}

fn not_a_regular_file() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, "not a regular file")
}

/// Distinguishes the names this process picks; with the pid, they are unique
/// among live processes, and leftovers of dead ones are skipped.
static NEXT_NAME: AtomicU64 = AtomicU64::new(0);

/// How many taken names to skip before giving up.
const NAME_ATTEMPTS: u32 = 1000;

/// The longest part of the target's name kept in a temporary or backup name, so
/// the whole name stays under the usual 255-byte limit.
const MAX_NAME_PART: usize = 64;

fn side_name(target: &OsStr, extension: &str) -> OsString {
    let name = target.to_string_lossy();
    let mut end = name.len().min(MAX_NAME_PART);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    let n = NEXT_NAME.fetch_add(1, Ordering::Relaxed);
    OsString::from(format!(
        ".{}.code-commit-{}-{n}.{extension}",
        &name[..end],
        std::process::id()
    ))
}

/// Creates a new temporary file in `dir` next to `target`, never opening an
/// existing file or link.
fn create_temp(dir: &Dir, target: &OsStr) -> io::Result<(OsString, File)> {
    for _ in 0..NAME_ATTEMPTS {
        let name = side_name(target, "tmp");
        match dir.create_new(&name) {
            Ok(file) => return Ok((name, file)),
            Err(safe_io::Error::Io { source, .. })
                if source.kind() == io::ErrorKind::AlreadyExists => {}
            Err(err) => return Err(io_error(err)),
        }
    }
    Err(names_exhausted())
}

/// A backup name in `dir` next to `target` that nothing uses. Renaming onto it
/// could race with another process creating the same pid-tagged name; none does.
fn free_name(dir: &Dir, target: &OsStr, extension: &str) -> io::Result<OsString> {
    for _ in 0..NAME_ATTEMPTS {
        let name = side_name(target, extension);
        if dir.kind(&name).map_err(io_error)?.is_none() {
            return Ok(name);
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

        /// Something run at a chosen step.
        type Hook = Box<dyn FnOnce()>;

        thread_local! {
            static PLAN: RefCell<Plan> = RefCell::new(Plan::default());
            static HOOK: RefCell<Option<(usize, Hook)>> = RefCell::new(None);
        }

        /// Runs `hook` just before forward step `n` (0-based) of this thread:
        /// the moment to swap something on disk behind the transaction's back.
        pub(crate) fn before_step(n: usize, hook: impl FnOnce() + 'static) {
            HOOK.with(|h| *h.borrow_mut() = Some((n, Box::new(hook))));
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
                if matches!(kind, Kind::Step) {
                    let due = HOOK.with(|h| {
                        let mut h = h.borrow_mut();
                        match h.take() {
                            Some((at, hook)) if at == n => Some(hook),
                            other => {
                                *h = other;
                                None
                            }
                        }
                    });
                    if let Some(hook) = due {
                        hook();
                    }
                }
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
mod tests;
