//! Files under a trusted root, none of whose contents we trust.
//!
//! A [`Dir`] is an open directory handle. Everything below it is reached one
//! component at a time with `openat(…, O_NOFOLLOW)`, so:
//! - a symbolic link anywhere below the root is an [`Error::Symlink`], never
//!   followed (the root itself is the caller's trusted path and may contain
//!   links: `/tmp` on macOS, a user's symlinked checkout);
//! - reads accept regular files only ([`Error::NotRegular`] for FIFOs, sockets
//!   and devices, which are opened non-blocking so a FIFO cannot hang us) and
//!   stop at a byte limit ([`Error::TooLarge`]);
//! - writes create files with `O_NOFOLLOW | O_EXCL` relative to the directory
//!   handle and replace existing files by rename, so a planted symlink or a
//!   directory swapped for one after a check cannot send bytes elsewhere.
//!
//! Paths given to a [`Dir`] must be plain relative paths: `..`, absolute paths
//! and prefixes are [`Error::BadPath`].

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, Mode, OFlags};

/// The limit for configuration files ([`read_regular`], [`Dir::read`]): 1 MiB.
pub const CONFIG_LIMIT: u64 = 1024 * 1024;

/// What a directory entry is, without following it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    File,
    Dir,
    Symlink,
    Fifo,
    Socket,
    CharDevice,
    BlockDevice,
    Other,
}

impl FileKind {
    /// The kind `meta` (from `symlink_metadata`) describes, read from its mode
    /// bits as [`FileKind::of_raw`] does for a raw `stat`.
    fn of(meta: &std::fs::Metadata) -> FileKind {
        FileKind::of_raw(rustix::fs::FileType::from_raw_mode(meta.mode()))
    }

    fn of_raw(file_type: rustix::fs::FileType) -> FileKind {
        use rustix::fs::FileType as T;
        match file_type {
            T::RegularFile => FileKind::File,
            T::Directory => FileKind::Dir,
            T::Symlink => FileKind::Symlink,
            T::Fifo => FileKind::Fifo,
            T::Socket => FileKind::Socket,
            T::CharacterDevice => FileKind::CharDevice,
            T::BlockDevice => FileKind::BlockDevice,
            _ => FileKind::Other,
        }
    }

    /// "a regular file", "a FIFO", … for messages.
    pub fn describe(self) -> &'static str {
        match self {
            FileKind::File => "a regular file",
            FileKind::Dir => "a directory",
            FileKind::Symlink => "a symbolic link",
            FileKind::Fifo => "a FIFO",
            FileKind::Socket => "a socket",
            FileKind::CharDevice => "a character device",
            FileKind::BlockDevice => "a block device",
            FileKind::Other => "a special file",
        }
    }
}

/// Why a file could not be read or written safely.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{}: is a symbolic link; links inside the repository are never followed", path.display())]
    Symlink { path: PathBuf },
    #[error("{}: is {}, not a regular file", path.display(), kind.describe())]
    NotRegular { path: PathBuf, kind: FileKind },
    #[error("{}: is {}, not a directory", path.display(), kind.describe())]
    NotDirectory { path: PathBuf, kind: FileKind },
    #[error("{}: is larger than the limit of {limit} bytes", path.display())]
    TooLarge { path: PathBuf, limit: u64 },
    #[error("{}: must be a relative path inside the directory (no '..', not absolute)", path.display())]
    BadPath { path: PathBuf },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

impl Error {
    /// The path the error is about.
    pub fn path(&self) -> &Path {
        match self {
            Error::Symlink { path }
            | Error::NotRegular { path, .. }
            | Error::NotDirectory { path, .. }
            | Error::TooLarge { path, .. }
            | Error::BadPath { path }
            | Error::Io { path, .. } => path,
        }
    }

    /// True when the file (or a directory on the way) does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::Io { source, .. } if source.kind() == io::ErrorKind::NotFound)
    }

    fn io(path: PathBuf, source: impl Into<io::Error>) -> Error {
        Error::Io {
            path,
            source: source.into(),
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// An open directory; everything below it is reached without following links.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
}

const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// Non-blocking, so opening a FIFO never waits for a writer; no controlling
/// terminal from a tty device.
const READ_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::NOFOLLOW)
    .union(OFlags::NONBLOCK)
    .union(OFlags::NOCTTY)
    .union(OFlags::CLOEXEC);

const WRITE_FLAGS: OFlags = OFlags::WRONLY
    .union(OFlags::CREATE)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::NONBLOCK)
    .union(OFlags::NOCTTY)
    .union(OFlags::CLOEXEC);

fn file_mode() -> Mode {
    Mode::from_raw_mode(0o666)
}

fn dir_mode() -> Mode {
    Mode::from_raw_mode(0o777)
}

/// The normal components of a relative path (`.` skipped).
fn components(rel: &Path) -> Result<Vec<&OsStr>> {
    let mut out = Vec::new();
    for component in rel.components() {
        match component {
            Component::Normal(name) => out.push(name),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(Error::BadPath {
                    path: rel.to_path_buf(),
                });
            }
        }
    }
    Ok(out)
}

/// The components of a path naming a file: at least one.
fn file_components(rel: &Path) -> Result<(Vec<&OsStr>, &OsStr)> {
    let mut parts = components(rel)?;
    match parts.pop() {
        Some(last) => Ok((parts, last)),
        None => Err(Error::BadPath {
            path: rel.to_path_buf(),
        }),
    }
}

/// The metadata of the open `file` (at `path`), which must be a regular file.
fn regular_metadata(file: &File, path: &Path) -> Result<std::fs::Metadata> {
    let meta = file.metadata().map_err(|e| Error::io(path.to_owned(), e))?;
    match FileKind::of(&meta) {
        FileKind::File => Ok(meta),
        kind => Err(Error::NotRegular {
            path: path.to_owned(),
            kind,
        }),
    }
}

/// Reads at most `limit` bytes from `file`, failing past the limit.
fn read_bounded(mut file: File, path: &Path, limit: u64) -> Result<Vec<u8>> {
    let meta = regular_metadata(&file, path)?;
    if meta.len() > limit {
        return Err(Error::TooLarge {
            path: path.to_owned(),
            limit,
        });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    (&mut file)
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path.to_owned(), e))?;
    if bytes.len() as u64 > limit {
        // The file grew while we read it.
        return Err(Error::TooLarge {
            path: path.to_owned(),
            limit,
        });
    }
    Ok(bytes)
}

/// Reads a file at a path the user chose (symlinks in it are followed), as a
/// regular file of at most `limit` bytes. A FIFO, socket or device is
/// [`Error::NotRegular`] and never blocks.
pub fn read_regular(path: &Path, limit: u64) -> Result<Vec<u8>> {
    let flags = READ_FLAGS.difference(OFlags::NOFOLLOW);
    let fd =
        rustix::fs::open(path, flags, Mode::empty()).map_err(|e| Error::io(path.to_owned(), e))?;
    read_bounded(File::from(fd), path, limit)
}

/// Opens a file at a path the user chose (symlinks in it are followed) for
/// streaming: a regular file of at most `limit` bytes, like [`read_regular`]
/// but nothing is read yet. The caller reads it through `take(limit)`, so a
/// file that grows meanwhile is still read only up to the limit.
pub fn open_regular(path: &Path, limit: u64) -> Result<File> {
    let flags = READ_FLAGS.difference(OFlags::NOFOLLOW);
    let fd =
        rustix::fs::open(path, flags, Mode::empty()).map_err(|e| Error::io(path.to_owned(), e))?;
    let file = File::from(fd);
    let meta = regular_metadata(&file, path)?;
    if meta.len() > limit {
        return Err(Error::TooLarge {
            path: path.to_owned(),
            limit,
        });
    }
    Ok(file)
}

/// [`read_regular`], with `Ok(None)` when the file does not exist.
pub fn read_regular_optional(path: &Path, limit: u64) -> Result<Option<Vec<u8>>> {
    match read_regular(path, limit) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(err) if err.is_not_found() => Ok(None),
        Err(err) => Err(err),
    }
}

/// Reads `rel` below the trusted directory `root` without following any link
/// below it; `Ok(None)` when it does not exist.
pub fn read_within(root: &Path, rel: &Path, limit: u64) -> Result<Option<Vec<u8>>> {
    Dir::open(root)?.read_optional(rel, limit)
}

/// Opens the directory `path` (absolute), following symbolic links only
/// outside `confined` (the top of a working tree): once the walk reaches
/// `confined` or anything below it, no further link is followed. So a path the
/// user typed may go through their own links (`~/src -> /data/src`), but never
/// through a link inside the repository. `..` is applied lexically, before the
/// walk. `confined` must be the physical path (as `canonicalize` gives it).
pub fn open_dir_confined(path: &Path, confined: &Path) -> Result<Dir> {
    let mut normal = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                normal.pop();
            }
            Component::CurDir => {}
            other => normal.push(other),
        }
    }
    if !normal.is_absolute() {
        return Err(Error::BadPath {
            path: path.to_path_buf(),
        });
    }
    let mut physical = PathBuf::from("/");
    let mut inside: Option<Dir> = None;
    if physical.starts_with(confined) {
        inside = Some(Dir::open(&physical)?);
    }
    for component in normal.components() {
        let Component::Normal(name) = component else {
            continue;
        };
        if let Some(dir) = &inside {
            inside = Some(dir.child(name)?);
            continue;
        }
        let next = physical.join(name);
        physical = next.canonicalize().map_err(|e| Error::io(next, e))?;
        if physical.starts_with(confined) {
            inside = Some(Dir::open(&physical)?);
        }
    }
    match inside {
        Some(dir) => Ok(dir),
        None => Dir::open(physical),
    }
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl Dir {
    /// Opens the trusted directory `path` (links in it are followed: it is the
    /// caller's own path, e.g. the top of a working tree).
    pub fn open(path: impl Into<PathBuf>) -> Result<Dir> {
        let path = path.into();
        let flags = DIR_FLAGS.difference(OFlags::NOFOLLOW);
        let fd = rustix::fs::open(&path, flags, Mode::empty())
            .map_err(|e| Error::io(path.clone(), e))?;
        Ok(Dir { fd, path })
    }

    /// The directory's path as it was reached (for messages).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The error for a failed `openat` of `name` below this directory.
    fn classify(
        &self,
        name: &OsStr,
        path: PathBuf,
        err: rustix::io::Errno,
        want_dir: bool,
    ) -> Error {
        // ELOOP: the last component is a link (O_NOFOLLOW). ENOTDIR with
        // O_DIRECTORY: something else is there; say what.
        if err == rustix::io::Errno::LOOP || err == rustix::io::Errno::NOTDIR {
            match self.kind_of(name) {
                Ok(Some(FileKind::Symlink)) => return Error::Symlink { path },
                Ok(Some(kind)) if want_dir && kind != FileKind::Dir => {
                    return Error::NotDirectory { path, kind };
                }
                _ => {}
            }
        }
        Error::io(path, err)
    }

    /// What `name` (one component) is, without following it.
    fn kind_of(&self, name: &OsStr) -> io::Result<Option<FileKind>> {
        match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => Ok(Some(FileKind::of_raw(rustix::fs::FileType::from_raw_mode(
                stat.st_mode,
            )))),
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(err) => Err(err.into()),
        }
    }

    /// One directory below this one, not through a link.
    fn child(&self, name: &OsStr) -> Result<Dir> {
        let path = self.path.join(name);
        match rustix::fs::openat(&self.fd, name, DIR_FLAGS, Mode::empty()) {
            Ok(fd) => Ok(Dir { fd, path }),
            Err(err) => Err(self.classify(name, path, err, true)),
        }
    }

    fn walk(&self, parts: &[&OsStr]) -> Result<Option<Dir>> {
        let mut current: Option<Dir> = None;
        for name in parts {
            let next = current.as_ref().unwrap_or(self).child(name)?;
            current = Some(next);
        }
        Ok(current)
    }

    /// Calls `f` with the directory holding the last component of `rel`.
    fn in_parent<T>(&self, rel: &Path, f: impl FnOnce(&Dir, &OsStr) -> Result<T>) -> Result<T> {
        let (parents, last) = file_components(rel)?;
        match self.walk(&parents)? {
            Some(dir) => f(&dir, last),
            None => f(self, last),
        }
    }

    /// A duplicate handle on this directory.
    pub fn try_clone(&self) -> Result<Dir> {
        let fd = self
            .fd
            .try_clone()
            .map_err(|e| Error::io(self.path.clone(), e))?;
        Ok(Dir {
            fd,
            path: self.path.clone(),
        })
    }

    /// Opens the directory `rel` below this one.
    pub fn open_dir(&self, rel: impl AsRef<Path>) -> Result<Dir> {
        let parts = components(rel.as_ref())?;
        match self.walk(&parts)? {
            Some(dir) => Ok(dir),
            None => self.try_clone(),
        }
    }

    /// [`Dir::open_dir`], with `Ok(None)` when it does not exist.
    pub fn open_dir_optional(&self, rel: impl AsRef<Path>) -> Result<Option<Dir>> {
        match self.open_dir(rel) {
            Ok(dir) => Ok(Some(dir)),
            Err(err) if err.is_not_found() => Ok(None),
            Err(err) => Err(err),
        }
    }

    /// Creates the directories of `rel` that are missing and opens the last;
    /// an existing link on the way is an error, not followed.
    pub fn create_dir_all(&self, rel: impl AsRef<Path>) -> Result<Dir> {
        let parts = components(rel.as_ref())?;
        let mut current = self.try_clone()?;
        for name in parts {
            match rustix::fs::mkdirat(&current.fd, name, dir_mode()) {
                Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                Err(err) => return Err(Error::io(current.path.join(name), err)),
            }
            current = current.child(name)?;
        }
        Ok(current)
    }

    /// Creates the directory `rel` (its parents must exist): `Ok(None)` when
    /// something by that name already exists.
    pub fn create_dir(&self, rel: impl AsRef<Path>) -> Result<Option<Dir>> {
        self.in_parent(rel.as_ref(), |dir, name| {
            match rustix::fs::mkdirat(&dir.fd, name, dir_mode()) {
                Ok(()) => dir.child(name).map(Some),
                Err(rustix::io::Errno::EXIST) => Ok(None),
                Err(err) => Err(Error::io(dir.path.join(name), err)),
            }
        })
    }

    /// What `rel` is, without following it; `Ok(None)` when it does not exist.
    pub fn kind(&self, rel: impl AsRef<Path>) -> Result<Option<FileKind>> {
        let rel = rel.as_ref();
        let (parents, last) = file_components(rel)?;
        let parent = match self.walk(&parents) {
            Ok(dir) => dir,
            Err(err) if err.is_not_found() => return Ok(None),
            Err(err) => return Err(err),
        };
        let parent = parent.as_ref().unwrap_or(self);
        parent
            .kind_of(last)
            .map_err(|e| Error::io(self.path.join(rel), e))
    }

    /// Opens the regular file `rel` for reading (the caller bounds what it reads).
    pub fn open_file(&self, rel: impl AsRef<Path>) -> Result<File> {
        self.in_parent(rel.as_ref(), |dir, name| {
            let path = dir.path.join(name);
            let fd = rustix::fs::openat(&dir.fd, name, READ_FLAGS, Mode::empty())
                .map_err(|e| dir.classify(name, path.clone(), e, false))?;
            let file = File::from(fd);
            regular_metadata(&file, &path)?;
            Ok(file)
        })
    }

    /// Reads the regular file `rel`, at most `limit` bytes.
    pub fn read(&self, rel: impl AsRef<Path>, limit: u64) -> Result<Vec<u8>> {
        let rel = rel.as_ref();
        let file = self.open_file(rel)?;
        read_bounded(file, &self.path.join(rel), limit)
    }

    /// [`Dir::read`], with `Ok(None)` when the file does not exist.
    pub fn read_optional(&self, rel: impl AsRef<Path>, limit: u64) -> Result<Option<Vec<u8>>> {
        match self.read(rel, limit) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(err) if err.is_not_found() => Ok(None),
            Err(err) => Err(err),
        }
    }

    fn open_for_write(&self, rel: &Path, extra: OFlags) -> Result<File> {
        self.in_parent(rel, |dir, name| {
            let path = dir.path.join(name);
            let fd = rustix::fs::openat(&dir.fd, name, WRITE_FLAGS | extra, file_mode()).map_err(
                |e| match e {
                    // O_NONBLOCK | O_WRONLY on a FIFO without a reader.
                    rustix::io::Errno::NXIO => Error::NotRegular {
                        path: path.clone(),
                        kind: FileKind::Fifo,
                    },
                    other => dir.classify(name, path.clone(), other, false),
                },
            )?;
            let file = File::from(fd);
            regular_metadata(&file, &path)?;
            Ok(file)
        })
    }

    /// Creates the new file `rel` (an existing file or link of that name is
    /// an error: `AlreadyExists`).
    pub fn create_new(&self, rel: impl AsRef<Path>) -> Result<File> {
        self.open_for_write(rel.as_ref(), OFlags::EXCL)
    }

    /// Opens the regular file `rel` for appending, creating it if needed.
    pub fn append(&self, rel: impl AsRef<Path>) -> Result<File> {
        self.open_for_write(rel.as_ref(), OFlags::APPEND)
    }

    /// Writes `bytes` to `rel`, replacing any file (or link) of that name
    /// atomically: a temporary file created beside it is renamed over it, so
    /// the old one is never written through.
    pub fn write(&self, rel: impl AsRef<Path>, bytes: &[u8]) -> Result<()> {
        self.in_parent(rel.as_ref(), |dir, name| dir.write_here(name, bytes))
    }

    fn write_here(&self, name: &OsStr, bytes: &[u8]) -> Result<()> {
        let path = self.path.join(name);
        let (temp, mut file) = loop {
            let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
            let mut temp = OsString::from(".");
            temp.push(name);
            temp.push(format!(".{}.{n}.tmp", std::process::id()));
            match rustix::fs::openat(
                &self.fd,
                temp.as_os_str(),
                WRITE_FLAGS | OFlags::EXCL,
                file_mode(),
            ) {
                Ok(fd) => break (temp, File::from(fd)),
                Err(rustix::io::Errno::EXIST) => continue,
                Err(err) => return Err(Error::io(self.path.join(&temp), err)),
            }
        };
        let written = file.write_all(bytes).and_then(|()| file.flush());
        drop(file);
        let result = written
            .map_err(|e| Error::io(path.clone(), e))
            .and_then(|()| {
                rustix::fs::renameat(&self.fd, temp.as_os_str(), &self.fd, name)
                    .map_err(|e| Error::io(path.clone(), e))
            });
        if result.is_err() {
            let _ = rustix::fs::unlinkat(&self.fd, temp.as_os_str(), AtFlags::empty());
        }
        result
    }

    /// Renames `from` to `to`, both below this directory; neither is followed.
    pub fn rename(&self, from: impl AsRef<Path>, to: impl AsRef<Path>) -> Result<()> {
        let to = to.as_ref();
        self.in_parent(from.as_ref(), |from_dir, from_name| {
            self.in_parent(to, |to_dir, to_name| {
                rustix::fs::renameat(&from_dir.fd, from_name, &to_dir.fd, to_name)
                    .map_err(|e| Error::io(from_dir.path.join(from_name), e))
            })
        })
    }

    /// Removes the file (or link) `rel`: `Ok(false)` when it did not exist.
    pub fn remove_file(&self, rel: impl AsRef<Path>) -> Result<bool> {
        self.in_parent(rel.as_ref(), |dir, name| {
            match rustix::fs::unlinkat(&dir.fd, name, AtFlags::empty()) {
                Ok(()) => Ok(true),
                Err(rustix::io::Errno::NOENT) => Ok(false),
                Err(err) => Err(Error::io(dir.path.join(name), err)),
            }
        })
    }

    /// Removes the empty directory `rel` (never a link, never a non-empty
    /// directory): `Ok(false)` when it did not exist.
    pub fn remove_dir(&self, rel: impl AsRef<Path>) -> Result<bool> {
        self.in_parent(rel.as_ref(), |dir, name| {
            match rustix::fs::unlinkat(&dir.fd, name, AtFlags::REMOVEDIR) {
                Ok(()) => Ok(true),
                Err(rustix::io::Errno::NOENT) => Ok(false),
                Err(rustix::io::Errno::NOTDIR) => Err(Error::NotDirectory {
                    path: dir.path.join(name),
                    kind: dir.kind_of(name).ok().flatten().unwrap_or(FileKind::Other),
                }),
                Err(err) => Err(Error::io(dir.path.join(name), err)),
            }
        })
    }

    /// The entries of this directory (not `.` and `..`), with what each is.
    pub fn entries(&self) -> Result<Vec<(OsString, FileKind)>> {
        let fail = |e: rustix::io::Errno| Error::io(self.path.clone(), e);
        let mut dir = rustix::fs::Dir::read_from(&self.fd).map_err(fail)?;
        let mut out = Vec::new();
        while let Some(entry) = dir.read() {
            let entry = entry.map_err(fail)?;
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            let name = OsString::from(<OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(name));
            let kind = match entry.file_type() {
                rustix::fs::FileType::Unknown => self
                    .kind_of(&name)
                    .map_err(|e| Error::io(self.path.join(&name), e))?
                    .unwrap_or(FileKind::Other),
                other => FileKind::of_raw(other),
            };
            out.push((name, kind));
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }
}
