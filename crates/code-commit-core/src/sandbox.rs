//! The build sandbox: `build.sh` runs under a Landlock ruleset (Linux 5.13 and
//! later) that keeps the API key's location unreadable to it and its writes
//! inside the project.
//!
//! # What the build may do
//!
//! - **Read** every file on the system except below [`SandboxPolicy::deny_read`]
//!   (the directory the key file is in: `agent-config/`, or the user's
//!   `~/.config/code-commit/`). List every directory (names are not secret).
//! - **Write** (create, replace, remove, rename, truncate) only below
//!   [`SandboxPolicy::writable`]: the project directory, the temporary
//!   directory, the usual build caches and what the configuration adds (the
//!   binary fills the list), and the devices in `DEVICES`. Writes elsewhere
//!   fail with "Permission denied".
//! - Nothing else changes: network, processes and signals are not restricted by
//!   this ruleset. A Landlock-confined process cannot attach to (`ptrace`, or
//!   read `/proc/<pid>/mem` of) a process outside its domain. Reading another
//!   process's `/proc/<pid>/environ` is not covered by Landlock: the
//!   `code-commit` binary makes itself non-dumpable, which keeps its
//!   environment (where a key from a variable sits) from other processes of
//!   the same user. The build also starts without `CAP_SYS_PTRACE` in its
//!   bounding set, so a build running as root cannot attach to code-commit
//!   even without Landlock; root can still read a non-dumpable process's
//!   environment, so as root the key belongs in a key file.
//!
//! # How
//!
//! Landlock restricts the calling thread and everything it starts afterwards,
//! so the ruleset is applied on a thread of its own that only spawns `build.sh`
//! ([`crate::build::run_build`]); code-commit's other threads stay unrestricted.
//! No `unsafe`: the `landlock` crate makes the system calls.
//!
//! Landlock only grants; it cannot take a subdirectory back out of a granted
//! tree. So "everything but `agent-config/`" is granted as its complement: read
//! access on each sibling along the path from `/` down to the denied directory
//! (`/bin`, `/etc`, …, the project's `src/`, `target/`, `build.sh`, … but not
//! `agent-config`). Siblings are identified by inode, never followed through a
//! symbolic link, and a directory that was renamed (by a process a previous
//! build left behind) is still recognized.
//!
//! # The limitation, precisely
//!
//! Rules attach to the files and directories that exist when the sandbox is set
//! up. When a directory on the way to the denied one is expanded into its
//! siblings — with the key in `agent-config/`, that is the project root — an
//! entry the build creates *directly in it* (a new `target/` in a fresh clone,
//! `main.o` next to `main.c`) is writable but not readable during that build:
//! opening it for reading fails with "Permission denied". Files created inside
//! directories that existed before the build (`target/` once it exists, `src/`,
//! the temporary directory) are readable as usual. code-commit lists such new
//! entries after the build ([`crate::build::BuildResult::notes`]); when the build
//! failed and created some, it runs the build again, with them readable (at
//! most `MAX_SANDBOX_RERUNS` times: a Rust project in a fresh
//! clone needs two, for `Cargo.lock` and then `target/`).
//! The limitation disappears when the key lives outside the project (the user's
//! key file or an environment variable): then nothing inside the project is
//! denied and the project root is granted as a whole.
//!
//! The temporary directory has the same issue when the denied directory is
//! below it (a project under `/tmp`), so every build gets a private temporary
//! directory created just before it (`TMPDIR`, `TMP` and `TEMP` point there).
//!
//! When the kernel has no Landlock (or it is disabled), the build runs
//! unconfined and [`SandboxStatus::Unavailable`] says why; the protected-file
//! check of `protect` still runs.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Devices every build may read and write.
pub(crate) const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
];

/// Shared-memory and temporary trees every build may write, besides the
/// temporary directory the caller names.
pub(crate) const SHARED_WRITABLE: &[&str] = &["/dev/shm"];

/// What the build may and may not touch (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxPolicy {
    /// Directories (or files) the build must not read.
    pub deny_read: Vec<PathBuf>,
    /// Directory trees the build may write. Paths that do not exist are skipped.
    pub writable: Vec<PathBuf>,
    /// Device files the build may read and write.
    pub devices: Vec<PathBuf>,
}

impl SandboxPolicy {
    /// The policy for a build of `project`: `deny_read` kept from it, the
    /// project, `writable`, `SHARED_WRITABLE` and `DEVICES` granted.
    pub fn new(project: &Path, deny_read: Vec<PathBuf>, writable: Vec<PathBuf>) -> SandboxPolicy {
        let mut all = vec![project.to_path_buf()];
        all.extend(writable);
        all.extend(SHARED_WRITABLE.iter().map(PathBuf::from));
        all.dedup();
        SandboxPolicy {
            deny_read,
            writable: all,
            devices: DEVICES.iter().map(PathBuf::from).collect(),
        }
    }
}

/// How a build was confined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SandboxStatus {
    /// No sandbox was asked for.
    Off,
    /// Landlock enforced the policy (`partial` when the kernel's Landlock is
    /// older than the rules: e.g. without truncation control before Linux 6.2).
    Enforced {
        partial: bool,
        /// The locations kept unreadable.
        denied: Vec<PathBuf>,
    },
    /// The kernel has no usable Landlock; the build ran unconfined.
    Unavailable(String),
}

impl SandboxStatus {
    /// One line for people.
    pub fn describe(&self) -> String {
        match self {
            SandboxStatus::Off => "build sandbox: off (build_sandbox = false)".to_owned(),
            SandboxStatus::Enforced { partial, denied } => {
                let mut text = String::from("build sandbox: Landlock");
                if *partial {
                    text.push_str(" (partly: this kernel's Landlock lacks some controls)");
                }
                text.push_str("; build.sh may write only the project, the temporary directory and the build caches");
                if !denied.is_empty() {
                    let list: Vec<String> =
                        denied.iter().map(|p| p.display().to_string()).collect();
                    text.push_str(&format!(" and cannot read {}", list.join(", ")));
                }
                text
            }
            SandboxStatus::Unavailable(why) => format!(
                "build sandbox: unavailable ({why}); build.sh runs unconfined, and only the protected-file check guards the run"
            ),
        }
    }
}

/// Why the sandbox could not be set up.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct SandboxError(pub String);

/// A directory the build can write but whose new entries it cannot read (see
/// "The limitation"), with its entries before the build.
#[derive(Debug)]
pub(crate) struct Watched {
    pub path: PathBuf,
    pub before: BTreeSet<OsString>,
}

impl Watched {
    /// The entries that appeared since the sandbox was set up.
    pub(crate) fn new_entries(&self) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(&self.path) else {
            return Vec::new();
        };
        let mut out: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.file_name())
            .filter(|name| !self.before.contains(name))
            .map(|name| self.path.join(name))
            .collect();
        out.sort();
        out
    }
}

pub(crate) use imp::{prepare, restrict};

#[cfg(target_os = "linux")]
mod imp {
    use std::collections::{BTreeSet, HashSet};
    use std::ffi::OsString;
    use std::fs::File;
    use std::os::unix::fs::MetadataExt as _;
    use std::path::{Path, PathBuf};

    use landlock::{
        ABI, Access, AccessFs, BitFlags, LandlockStatus, PathBeneath, Ruleset, RulesetAttr,
        RulesetCreatedAttr, RulesetStatus,
    };
    use rustix::fs::{Mode, OFlags};

    use super::{SandboxError, SandboxPolicy, SandboxStatus, Watched};

    /// The Landlock version the rules are written for: 5 adds device ioctls to
    /// 4's truncation and 2's cross-directory renames. Newer kernels enforce it
    /// fully; older ones as much as they can (best effort).
    const ABI_USED: ABI = ABI::V5;

    /// The deepest expansion followed (a guard against pathological trees).
    const MAX_DEPTH: usize = 64;

    #[derive(Debug, Clone, Copy)]
    enum Grant {
        /// List directories (everything).
        List,
        /// Read and execute everything below a directory.
        ReadTree,
        /// Read and execute one file.
        ReadFile,
        /// Write below a directory.
        Write,
        /// Read and write one device.
        Device,
    }

    impl Grant {
        fn access(self) -> BitFlags<AccessFs> {
            let file = AccessFs::from_file(ABI_USED);
            match self {
                Grant::List => AccessFs::ReadDir.into(),
                Grant::ReadTree => AccessFs::from_read(ABI_USED),
                Grant::ReadFile => AccessFs::from_read(ABI_USED) & file,
                Grant::Write => AccessFs::from_write(ABI_USED),
                Grant::Device => {
                    (AccessFs::ReadFile
                        | AccessFs::WriteFile
                        | AccessFs::Truncate
                        | AccessFs::IoctlDev)
                        & file
                }
            }
        }
    }

    /// The opened rules, ready for [`restrict`] on the build's own thread.
    #[derive(Debug)]
    pub(crate) struct Rules {
        rules: Vec<(File, Grant)>,
        denied: Vec<PathBuf>,
    }

    type Key = (u64, u64);

    fn key(file: &File) -> std::io::Result<(Key, std::fs::FileType)> {
        let meta = file.metadata()?;
        Ok(((meta.dev(), meta.ino()), meta.file_type()))
    }

    fn open_path(path: &Path, follow: bool) -> std::io::Result<File> {
        let mut flags = OFlags::PATH | OFlags::CLOEXEC;
        if !follow {
            flags |= OFlags::NOFOLLOW;
        }
        Ok(File::from(rustix::fs::open(path, flags, Mode::empty())?))
    }

    struct Expansion<'a> {
        denied: HashSet<Key>,
        chain: HashSet<Key>,
        writable: &'a [PathBuf],
        project: &'a Path,
        rules: Vec<(File, Grant)>,
        watched: Vec<Watched>,
    }

    impl Expansion<'_> {
        /// Grants read access on every entry of `dir` except the denied ones,
        /// expanding the directories on the way to them.
        fn expand(&mut self, dir: &File, path: &Path, depth: usize) -> Result<(), SandboxError> {
            if depth > MAX_DEPTH {
                return Err(SandboxError(format!(
                    "{} is nested too deeply",
                    path.display()
                )));
            }
            let listing = rustix::fs::openat(
                dir,
                ".",
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|e| SandboxError(format!("cannot list {}: {e}", path.display())))?;
            let mut names = BTreeSet::new();
            let mut reader = rustix::fs::Dir::read_from(&listing)
                .map_err(|e| SandboxError(format!("cannot list {}: {e}", path.display())))?;
            while let Some(entry) = reader.read() {
                let entry = entry
                    .map_err(|e| SandboxError(format!("cannot list {}: {e}", path.display())))?;
                let name = entry.file_name().to_bytes();
                if name == b"." || name == b".." {
                    continue;
                }
                names.insert(OsString::from(
                    <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(name),
                ));
            }
            if path.starts_with(self.project) && self.writable.iter().any(|w| path.starts_with(w)) {
                self.watched.push(Watched {
                    path: path.to_path_buf(),
                    before: names.clone(),
                });
            }
            for name in names {
                let child_path = path.join(&name);
                // Not following: a link is governed by what it points to.
                let Ok(fd) = rustix::fs::openat(
                    dir,
                    name.as_os_str(),
                    OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                    Mode::empty(),
                ) else {
                    continue;
                };
                let file = File::from(fd);
                let Ok((id, kind)) = key(&file) else { continue };
                if kind.is_symlink() || self.denied.contains(&id) {
                    continue;
                }
                if kind.is_dir() && self.chain.contains(&id) {
                    self.expand(&file, &child_path, depth + 1)?;
                } else if kind.is_dir() {
                    self.rules.push((file, Grant::ReadTree));
                } else {
                    self.rules.push((file, Grant::ReadFile));
                }
            }
            Ok(())
        }
    }

    /// Opens every rule of `policy` (in the calling thread, before the build);
    /// also returns the directories whose new entries the build cannot read.
    pub(crate) fn prepare(
        policy: &SandboxPolicy,
        project: &Path,
    ) -> Result<(Rules, Vec<Watched>), SandboxError> {
        let mut denied = HashSet::new();
        let mut chain = HashSet::new();
        let mut denied_paths = Vec::new();
        for path in &policy.deny_read {
            let Ok(canonical) = std::fs::canonicalize(path) else {
                continue;
            };
            let file = open_path(&canonical, false)
                .map_err(|e| SandboxError(format!("cannot open {}: {e}", canonical.display())))?;
            let (id, _) = key(&file).map_err(|e| {
                SandboxError(format!("cannot inspect {}: {e}", canonical.display()))
            })?;
            denied.insert(id);
            for ancestor in canonical.ancestors().skip(1) {
                let file = open_path(ancestor, false).map_err(|e| {
                    SandboxError(format!("cannot open {}: {e}", ancestor.display()))
                })?;
                let (id, _) = key(&file).map_err(|e| {
                    SandboxError(format!("cannot inspect {}: {e}", ancestor.display()))
                })?;
                chain.insert(id);
            }
            denied_paths.push(canonical);
        }
        let project = std::fs::canonicalize(project).unwrap_or_else(|_| project.to_path_buf());
        let writable: Vec<PathBuf> = policy
            .writable
            .iter()
            .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()))
            .collect();
        let root = open_path(Path::new("/"), true)
            .map_err(|e| SandboxError(format!("cannot open /: {e}")))?;
        let mut expansion = Expansion {
            denied,
            chain,
            writable: &writable,
            project: &project,
            rules: Vec::new(),
            watched: Vec::new(),
        };
        if expansion.denied.is_empty() {
            expansion.rules.push((root, Grant::ReadTree));
        } else {
            expansion.expand(&root, Path::new("/"), 0)?;
            let list = open_path(Path::new("/"), true)
                .map_err(|e| SandboxError(format!("cannot open /: {e}")))?;
            expansion.rules.push((list, Grant::List));
        }
        let Expansion {
            mut rules, watched, ..
        } = expansion;
        for path in &writable {
            match open_path(path, true) {
                Ok(file) if key(&file).is_ok_and(|(_, kind)| kind.is_dir()) => {
                    rules.push((file, Grant::Write))
                }
                _ => {}
            }
        }
        for path in &policy.devices {
            if let Ok(file) = open_path(path, true) {
                rules.push((file, Grant::Device));
            }
        }
        Ok((
            Rules {
                rules,
                denied: denied_paths,
            },
            watched,
        ))
    }

    /// Restricts the calling thread (and what it starts afterwards) to `rules`.
    pub(crate) fn restrict(rules: Rules) -> Result<SandboxStatus, SandboxError> {
        // A process with CAP_SYS_PTRACE (root) may read the memory and the
        // environment of any process of its user, code-commit's included, even
        // from inside a Landlock domain; the build starts without it. Dropping
        // it needs CAP_SETPCAP, which only such a process has: elsewhere this
        // fails and there is nothing to drop.
        let _ = rustix::thread::remove_capability_from_bounding_set(
            rustix::thread::CapabilitySet::SYS_PTRACE,
        );
        let fail = |e: landlock::RulesetError| SandboxError(format!("Landlock: {e}"));
        let status = Ruleset::default()
            .handle_access(AccessFs::from_all(ABI_USED))
            .map_err(fail)?
            .create()
            .map_err(fail)?
            .add_rules(rules.rules.into_iter().map(|(file, grant)| {
                Ok::<_, landlock::RulesetError>(PathBeneath::new(file, grant.access()))
            }))
            .map_err(fail)?
            .restrict_self()
            .map_err(fail)?;
        Ok(match status.ruleset {
            RulesetStatus::FullyEnforced => SandboxStatus::Enforced {
                partial: false,
                denied: rules.denied,
            },
            RulesetStatus::PartiallyEnforced => SandboxStatus::Enforced {
                partial: true,
                denied: rules.denied,
            },
            RulesetStatus::NotEnforced => SandboxStatus::Unavailable(match status.landlock {
                LandlockStatus::NotEnabled => {
                    "this kernel has Landlock but it is not enabled; add landlock to the lsm= boot parameter".to_owned()
                }
                LandlockStatus::NotImplemented => {
                    "this kernel has no Landlock (it needs Linux 5.13 or later built with CONFIG_SECURITY_LANDLOCK)".to_owned()
                }
                _ => "Landlock did not enforce the rules".to_owned(),
            }),
        })
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use std::path::Path;

    use super::{SandboxError, SandboxPolicy, SandboxStatus, Watched};

    /// Nothing to open: there is no Landlock here.
    #[derive(Debug)]
    pub(crate) struct Rules;

    pub(crate) fn prepare(
        _policy: &SandboxPolicy,
        _project: &Path,
    ) -> Result<(Rules, Vec<Watched>), SandboxError> {
        Ok((Rules, Vec::new()))
    }

    pub(crate) fn restrict(_rules: Rules) -> Result<SandboxStatus, SandboxError> {
        Ok(SandboxStatus::Unavailable(
            "Landlock is Linux-only".to_owned(),
        ))
    }
}
