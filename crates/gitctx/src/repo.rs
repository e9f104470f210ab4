//! Opening a repository, resolving revisions, commits and file contents.

use std::path::{Path, PathBuf};

use chrono::{DateTime, FixedOffset, TimeZone, Utc};

use crate::command::GitCommand;
use crate::error::{Error, Result, git, is_not_found};
use crate::oid::ObjectId;

/// An open repository with a working tree.
///
/// Not `Sync` (libgit2 handles are not); open one per thread.
pub struct Repo {
    pub(crate) inner: git2::Repository,
    root: PathBuf,
    git_dir: PathBuf,
    /// The line count of the last blob read whole ([`Repo::file_with_id_at`])
    /// or counted, so that blaming a file just read does not inflate it
    /// again to count its lines.
    last_count: std::cell::Cell<Option<(git2::Oid, u32)>>,
}

impl std::fmt::Debug for Repo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Repo")
            .field("root", &self.root)
            .field("git_dir", &self.git_dir)
            .finish()
    }
}

/// Where HEAD points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Head {
    /// On a branch with at least one commit.
    Branch { name: String, commit: ObjectId },
    /// Detached at a commit.
    Detached { commit: ObjectId },
    /// On a branch that has no commits yet.
    Unborn { name: String },
}

impl Head {
    /// The commit HEAD points at, if any.
    pub fn commit(&self) -> Option<ObjectId> {
        match self {
            Head::Branch { commit, .. } | Head::Detached { commit } => Some(*commit),
            Head::Unborn { .. } => None,
        }
    }

    /// The branch name (short form), `None` when detached.
    pub fn branch(&self) -> Option<&str> {
        match self {
            Head::Branch { name, .. } | Head::Unborn { name } => Some(name),
            Head::Detached { .. } => None,
        }
    }
}

/// A point in time as git records it: seconds since the epoch and the writer's
/// UTC offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GitTime {
    pub seconds: i64,
    pub offset_minutes: i32,
}

impl GitTime {
    /// The instant in UTC.
    pub fn to_utc(&self) -> DateTime<Utc> {
        Utc.timestamp_opt(self.seconds, 0)
            .single()
            .unwrap_or(DateTime::<Utc>::MIN_UTC)
    }

    /// The instant in the writer's own offset.
    pub fn to_fixed(&self) -> DateTime<FixedOffset> {
        let offset = FixedOffset::east_opt(self.offset_minutes * 60)
            .unwrap_or_else(|| FixedOffset::east_opt(0).expect("zero offset is valid"));
        self.to_utc().with_timezone(&offset)
    }

    /// RFC 3339 / ISO 8601 text in the writer's offset, e.g. `2024-01-01T12:00:00+02:00`.
    pub fn to_rfc3339(&self) -> String {
        self.to_fixed().to_rfc3339()
    }

    fn from_git(time: git2::Time) -> Self {
        GitTime {
            seconds: time.seconds(),
            offset_minutes: time.offset_minutes(),
        }
    }
}

/// An author or committer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Person {
    pub name: String,
    pub email: String,
    pub time: GitTime,
}

/// A commit's metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitInfo {
    pub id: ObjectId,
    /// The full message, exactly as stored (lossy UTF-8).
    pub message: String,
    /// The first paragraph's first line.
    pub summary: String,
    pub author: Person,
    pub committer: Person,
    pub parents: Vec<ObjectId>,
}

impl CommitInfo {
    /// True for a commit with more than one parent.
    pub fn is_merge(&self) -> bool {
        self.parents.len() > 1
    }
}

impl Repo {
    /// Finds the repository containing `path` (any subdirectory, linked worktrees
    /// included). Environment variables such as `GIT_DIR` are ignored.
    pub fn discover(path: impl AsRef<Path>) -> Result<Repo> {
        let path = path.as_ref();
        let inner = git2::Repository::discover(path).map_err(|e| open_error(path, e))?;
        Repo::from_git(inner)
    }

    /// Opens the repository whose working tree (or `.git` directory) is exactly
    /// `path`, without searching parent directories.
    pub fn open(path: impl AsRef<Path>) -> Result<Repo> {
        let path = path.as_ref();
        let inner = git2::Repository::open_ext(
            path,
            git2::RepositoryOpenFlags::NO_SEARCH,
            std::iter::empty::<&std::ffi::OsStr>(),
        )
        .map_err(|e| open_error(path, e))?;
        Repo::from_git(inner)
    }

    fn from_git(inner: git2::Repository) -> Result<Repo> {
        // libgit2 hashes every object it reads again to check its id (SHA-1
        // with collision detection: about 1 ms per 400 KB blob); git itself
        // does not on reads, and nothing here trusts an object's content for
        // being well-formed anyway (it is parsed as untrusted input). A read
        // at a carried HEAD reads several large blobs, so this is off, for
        // the process, once.
        static NO_HASH_CHECK: std::sync::Once = std::sync::Once::new();
        NO_HASH_CHECK.call_once(|| git2::opts::strict_hash_verification(false));
        let Some(workdir) = inner.workdir() else {
            return Err(Error::BareRepository {
                path: inner.path().to_path_buf(),
            });
        };
        let root = strip_trailing_separator(workdir);
        let git_dir = strip_trailing_separator(inner.path());
        Ok(Repo {
            inner,
            root,
            git_dir,
            last_count: std::cell::Cell::new(None),
        })
    }

    /// The working tree's top directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The repository's git directory (for a linked worktree, its private one).
    pub fn git_dir(&self) -> &Path {
        &self.git_dir
    }

    /// The directory shared by all worktrees (objects, refs, config).
    pub fn common_dir(&self) -> PathBuf {
        strip_trailing_separator(self.inner.commondir())
    }

    /// The directory git runs hooks from (`core.hooksPath` honoured), as git
    /// itself computes it.
    pub fn hooks_dir(&self) -> Result<PathBuf> {
        let text = self
            .git()
            .args(["rev-parse", "--path-format=absolute", "--git-path", "hooks"])
            .run_text()?;
        Ok(PathBuf::from(text.trim_end_matches(['\n', '\r'])))
    }

    /// A hardened git command that runs at the top of the working tree.
    pub fn git(&self) -> GitCommand {
        GitCommand::new(&self.root)
    }

    /// A porcelain git command run as the user would run it by hand, at the top
    /// of the working tree: `git commit`, whose hooks, signing, filters and
    /// identity the user expects exactly as when they type it.
    ///
    /// Why it exists: every other git process is hardened (see the module
    /// docs), and a hook started under that environment misbehaves —
    /// `GIT_LITERAL_PATHSPECS=1` makes a hook's `git diff --cached -- '*.rs'`
    /// match nothing, `GIT_OPTIONAL_LOCKS=0`, `GIT_TERMINAL_PROMPT=0`,
    /// `GIT_CONFIG_COUNT`, `LC_ALL=C`, `GIT_ATTR_SOURCE` and `GIT_PAGER` change
    /// what its own git commands do.
    ///
    /// What it does not harden: nothing of the environment is set, and all of
    /// it is inherited except `LOCATION_VARS` (`GIT_DIR`, `GIT_WORK_TREE`, …) (so the command acts on this
    /// repository, the one whose evidence was shown); the repository's hooks,
    /// attributes, filters and programs run. Only for commands that are meant
    /// to run the user's programs, never for reading evidence. Config added with
    /// [`GitCommand::config`] goes on the command line as `-c key=value`.
    pub fn user_command(&self) -> GitCommand {
        self.git().in_user_environment()
    }

    /// A hardened `git log` for the caller to add its format, revisions and
    /// paths to: it runs no textconv or external diff program, checks no
    /// signature, names paths unquoted (`core.quotePath=false`) and shows a
    /// rename as a deletion and an addition.
    pub fn log_command(&self) -> GitCommand {
        self.git().config("core.quotePath", "false").args([
            "log",
            "--no-textconv",
            "--no-ext-diff",
            "--no-show-signature",
            "--no-renames",
        ])
    }

    /// Where HEAD points.
    pub fn head(&self) -> Result<Head> {
        match self.inner.head() {
            Ok(reference) => {
                let commit = reference
                    .peel_to_commit()
                    .map_err(git("reading HEAD"))?
                    .id();
                let commit = ObjectId::from_git(commit);
                if self.inner.head_detached().map_err(git("reading HEAD"))? {
                    Ok(Head::Detached { commit })
                } else {
                    let name = reference.shorthand().unwrap_or("HEAD").to_owned();
                    Ok(Head::Branch { name, commit })
                }
            }
            Err(err) if err.code() == git2::ErrorCode::UnbornBranch || is_not_found(&err) => {
                let head = self
                    .inner
                    .find_reference("HEAD")
                    .map_err(git("reading HEAD"))?;
                let target =
                    String::from_utf8_lossy(head.symbolic_target_bytes().unwrap_or(b"HEAD"))
                        .into_owned();
                let name = target.strip_prefix("refs/heads/").unwrap_or(&target);
                Ok(Head::Unborn {
                    name: name.to_owned(),
                })
            }
            Err(err) => Err(git("reading HEAD")(err)),
        }
    }

    /// Resolves any revision (`HEAD~2`, a branch, a tag, a short hash) to the
    /// object it names, without peeling.
    pub fn resolve(&self, rev: &str) -> Result<ObjectId> {
        Ok(ObjectId::from_git(self.revparse(rev)?.id()))
    }

    /// Resolves a revision to a commit (peeling tags).
    pub fn resolve_commit(&self, rev: &str) -> Result<ObjectId> {
        Ok(ObjectId::from_git(self.find_commit(rev)?.id()))
    }

    pub(crate) fn revparse(&self, rev: &str) -> Result<git2::Object<'_>> {
        if rev.is_empty() || rev.starts_with('-') {
            return Err(Error::RevNotFound {
                rev: rev.to_owned(),
            });
        }
        self.inner.revparse_single(rev).map_err(|err| {
            match err.code() {
                git2::ErrorCode::Ambiguous => Error::AmbiguousRev {
                    rev: rev.to_owned(),
                },
                git2::ErrorCode::UnbornBranch => self.unborn_error(rev),
                git2::ErrorCode::NotFound | git2::ErrorCode::InvalidSpec => {
                    // "HEAD" on an unborn branch reports NotFound.
                    if rev == "HEAD" && matches!(self.head(), Ok(Head::Unborn { .. })) {
                        self.unborn_error(rev)
                    } else {
                        Error::RevNotFound {
                            rev: rev.to_owned(),
                        }
                    }
                }
                _ => git("resolving a revision")(err),
            }
        })
    }

    fn unborn_error(&self, rev: &str) -> Error {
        match self.head() {
            Ok(Head::Unborn { name }) => Error::UnbornHead { branch: name },
            _ => Error::RevNotFound {
                rev: rev.to_owned(),
            },
        }
    }

    pub(crate) fn find_commit(&self, rev: &str) -> Result<git2::Commit<'_>> {
        let object = self.revparse(rev)?;
        object.peel_to_commit().map_err(|err| {
            if err.code() == git2::ErrorCode::InvalidSpec || is_peel_error(&err) {
                Error::WrongObjectKind {
                    rev: rev.to_owned(),
                    expected: "commit",
                }
            } else {
                git("reading a commit")(err)
            }
        })
    }

    pub(crate) fn find_commit_id(&self, id: ObjectId) -> Result<git2::Commit<'_>> {
        self.inner.find_commit(id.to_git()).map_err(|err| {
            if is_not_found(&err) {
                Error::RevNotFound { rev: id.to_hex() }
            } else {
                git("reading a commit")(err)
            }
        })
    }

    /// A commit's metadata.
    pub fn commit_info(&self, rev: &str) -> Result<CommitInfo> {
        let commit = self.find_commit(rev)?;
        Ok(commit_info(&commit))
    }

    /// A commit's metadata, by id.
    pub fn commit_info_by_id(&self, id: ObjectId) -> Result<CommitInfo> {
        let commit = self.find_commit_id(id)?;
        Ok(commit_info(&commit))
    }

    /// True when `ancestor` is reachable from `descendant` (or equal to it).
    pub fn is_ancestor(&self, ancestor: ObjectId, descendant: ObjectId) -> Result<bool> {
        if ancestor == descendant {
            return Ok(true);
        }
        self.inner
            .graph_descendant_of(descendant.to_git(), ancestor.to_git())
            .map_err(git("walking history"))
    }

    /// The commits reachable from `rev`, newest first (topological then date
    /// order), at most `limit` of them.
    pub fn log(&self, rev: &str, limit: usize) -> Result<Vec<ObjectId>> {
        let start = self.find_commit(rev)?.id();
        let mut walk = self.inner.revwalk().map_err(git("walking history"))?;
        walk.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::TIME)
            .map_err(git("walking history"))?;
        walk.push(start).map_err(git("walking history"))?;
        let mut out = Vec::new();
        for id in walk.take(limit) {
            out.push(ObjectId::from_git(id.map_err(git("walking history"))?));
        }
        Ok(out)
    }

    /// The best common ancestor of two commits (`git merge-base a b`), `None`
    /// when their histories are unrelated.
    pub fn merge_base(&self, a: ObjectId, b: ObjectId) -> Result<Option<ObjectId>> {
        match self.inner.merge_base(a.to_git(), b.to_git()) {
            Ok(id) => Ok(Some(ObjectId::from_git(id))),
            Err(err) if is_not_found(&err) => Ok(None),
            Err(err) => Err(git("finding a merge base")(err)),
        }
    }

    /// The commits reachable from `to` but not from `from` (`git log from..to`;
    /// `None`: everything reachable from `to`), newest first, at most `limit`.
    pub fn log_range(&self, from: Option<&str>, to: &str, limit: usize) -> Result<Vec<ObjectId>> {
        let start = self.find_commit(to)?.id();
        let mut walk = self.inner.revwalk().map_err(git("walking history"))?;
        walk.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::TIME)
            .map_err(git("walking history"))?;
        walk.push(start).map_err(git("walking history"))?;
        if let Some(from) = from {
            let hide = self.find_commit(from)?.id();
            walk.hide(hide).map_err(git("walking history"))?;
        }
        let mut out = Vec::new();
        for id in walk.take(limit) {
            out.push(ObjectId::from_git(id.map_err(git("walking history"))?));
        }
        Ok(out)
    }

    /// The value of the gitattribute `name` for `path` (repository-relative), as
    /// `.gitattributes` files (the index's first, then the working tree's),
    /// `info/attributes` and the global attributes file set it.
    pub fn attribute(&self, path: &str, name: &str) -> Result<AttrValue> {
        let raw = self
            .inner
            .get_attr_bytes(Path::new(path), name, git2::AttrCheckFlags::INDEX_THEN_FILE)
            .map_err(git("reading gitattributes"))?;
        Ok(match git2::AttrValue::from_bytes(raw) {
            git2::AttrValue::True => AttrValue::Set,
            git2::AttrValue::False => AttrValue::Unset,
            git2::AttrValue::Unspecified => AttrValue::Unspecified,
            git2::AttrValue::String(text) => AttrValue::Value(text.to_owned()),
            git2::AttrValue::Bytes(bytes) => {
                AttrValue::Value(String::from_utf8_lossy(bytes).into_owned())
            }
        })
    }

    /// The commits reachable from `rev` (inclusive) that changed any of `paths`,
    /// newest first, each with the paths among `paths` it changed; at most
    /// `limit` commits. One `git log` process, whatever the number of paths.
    pub fn log_paths(
        &self,
        rev: &str,
        paths: &[String],
        limit: usize,
    ) -> Result<Vec<(ObjectId, Vec<String>)>> {
        if paths.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let start = self.resolve_commit(rev)?;
        let cmd = self
            .log_command()
            .args(["--format=%x00%H", "--name-only", "-z"])
            .arg(format!("--max-count={limit}"))
            .arg(start.to_hex())
            .arg("--")
            .args(paths);
        let output = cmd.run()?;
        // `\0<sha>\0\n<file>\0<file>\0\0<sha>…`: an empty field ends a commit's
        // file list, so the next field is a commit id even if a file is named
        // like one.
        let mut out: Vec<(ObjectId, Vec<String>)> = Vec::new();
        let mut expect_commit = true;
        // git puts a newline between the commit id and its first file name;
        // later names in the list come as they are.
        let mut first_name = false;
        for field in output.stdout.split(|&b| b == 0) {
            if field.is_empty() {
                expect_commit = true;
                continue;
            }
            if expect_commit {
                let id = String::from_utf8_lossy(field)
                    .trim()
                    .parse::<ObjectId>()
                    .map_err(|e| Error::Parse {
                        args: cmd.display_args(),
                        reason: e.to_string(),
                    })?;
                out.push((id, Vec::new()));
                expect_commit = false;
                first_name = true;
                continue;
            }
            let name = if std::mem::take(&mut first_name) {
                field.strip_prefix(b"\n").unwrap_or(field)
            } else {
                field
            };
            if let Some((_, files)) = out.last_mut() {
                files.push(String::from_utf8_lossy(name).into_owned());
            }
        }
        Ok(out)
    }

    /// The content of `path` in the tree of `rev`.
    pub fn file_at(&self, rev: &str, path: &str) -> Result<Vec<u8>> {
        Ok(self.file_with_id_at(rev, path)?.1)
    }

    /// The content of `path` in the tree of `rev` when it is at most `max`
    /// bytes (told from the object's header, before the content is read);
    /// `None` when it is larger.
    pub fn file_at_most(&self, rev: &str, path: &str, max: usize) -> Result<Option<Vec<u8>>> {
        let entry = self.entry_at(rev, path)?;
        let size = self
            .inner
            .odb()
            .and_then(|odb| odb.read_header(entry.id()))
            .map_err(git("reading a file"))?
            .0;
        if size > max {
            return Ok(None);
        }
        self.entry_blob(&entry, path, rev.to_owned()).map(Some)
    }

    /// The content of `path` in the tree of `rev` and its blob's id (what
    /// keys a cache of anything derived from the content alone).
    pub fn file_with_id_at(&self, rev: &str, path: &str) -> Result<(ObjectId, Vec<u8>)> {
        let entry = self.entry_at(rev, path)?;
        let bytes = self.entry_blob(&entry, path, rev.to_owned())?;
        self.last_count.set(Some((entry.id(), count_lines(&bytes))));
        Ok((ObjectId::from_git(entry.id()), bytes))
    }

    /// The number of lines of `path` in the tree of `rev` (as
    /// [`crate::blame`] counts them), without reading the blob again when it
    /// was the last one read or counted.
    pub(crate) fn line_count_at(&self, rev: &str, path: &str) -> Result<u32> {
        let entry = self.entry_at(rev, path)?;
        if entry.kind() == Some(git2::ObjectType::Blob)
            && let Some((id, count)) = self.last_count.get()
            && id == entry.id()
        {
            return Ok(count);
        }
        let count = count_lines(&self.entry_blob(&entry, path, rev.to_owned())?);
        self.last_count.set(Some((entry.id(), count)));
        Ok(count)
    }

    /// The tree entry of `path` in the tree of `rev`.
    fn entry_at(&self, rev: &str, path: &str) -> Result<git2::TreeEntry<'static>> {
        let tree = self
            .find_commit(rev)?
            .tree()
            .map_err(git("reading a tree"))?;
        tree.get_path(Path::new(path))
            .map_err(|err| not_found_or(err, path, rev.to_owned()))
    }

    /// The content of the blob `id`; `None` when the repository has no such
    /// blob (never written, or pruned).
    pub fn blob(&self, id: ObjectId) -> Result<Option<Vec<u8>>> {
        match self.inner.find_blob(id.to_git()) {
            Ok(blob) => Ok(Some(blob.content().to_vec())),
            Err(err) if is_not_found(&err) => Ok(None),
            Err(err) => Err(git("reading a file")(err)),
        }
    }

    /// The size in bytes of `path` in the tree of `rev`, from the object's
    /// header (the content is not read); `None` when it is not a file there.
    pub fn file_size_at(&self, rev: &str, path: &str) -> Result<Option<u64>> {
        Ok(self.blob_at(rev, path)?.map(|blob| blob.size))
    }

    /// The blob at `path` in the tree of `rev`, its size from the object's
    /// header (the content is not read); `None` when no blob is there.
    pub(crate) fn blob_at(&self, rev: &str, path: &str) -> Result<Option<BlobAt>> {
        let tree = self
            .find_commit(rev)?
            .tree()
            .map_err(git("reading a tree"))?;
        let entry = match tree.get_path(Path::new(path)) {
            Ok(entry) => entry,
            Err(err) if is_not_found(&err) => return Ok(None),
            Err(err) => return Err(git("reading a tree")(err)),
        };
        if entry.kind() != Some(git2::ObjectType::Blob) {
            return Ok(None);
        }
        let odb = self.inner.odb().map_err(git("reading a file"))?;
        let (size, _) = odb.read_header(entry.id()).map_err(git("reading a file"))?;
        Ok(Some(BlobAt {
            id: entry.id(),
            symlink: entry.filemode() == SYMLINK_MODE,
            size: size as u64,
        }))
    }

    /// The content of `path` in the tree of `rev`, or `None` when it does not exist.
    pub fn file_at_opt(&self, rev: &str, path: &str) -> Result<Option<Vec<u8>>> {
        match self.file_at(rev, path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(Error::PathNotFound { .. }) => Ok(None),
            Err(err) => Err(err),
        }
    }

    /// The staged content of `path` (stage 0 of the index), or `None` when the path
    /// is not in the index.
    pub fn file_in_index(&self, path: &str) -> Result<Option<Vec<u8>>> {
        let index = self.index()?;
        let Some(entry) = index.get_path(Path::new(path), 0) else {
            return Ok(None);
        };
        if entry.mode == GITLINK_MODE {
            return Err(Error::NotAFile {
                path: path.to_owned(),
                at: "the index".to_owned(),
            });
        }
        let blob = self
            .inner
            .find_blob(entry.id)
            .map_err(git("reading a staged file"))?;
        Ok(Some(blob.content().to_vec()))
    }

    /// The index entries (any stage, gitlinks included) at `dir` or below it,
    /// sorted: empty when git tracks nothing there. `dir` is relative to the top
    /// of the working tree, with `/` separators. Used to refuse writing into, or
    /// trusting, a directory that came with the repository.
    pub fn tracked_under(&self, dir: &str) -> Result<Vec<String>> {
        let dir = dir.trim_matches('/');
        let index = self.index()?;
        let mut paths: Vec<String> = index
            .iter()
            .map(|entry| String::from_utf8_lossy(&entry.path).into_owned())
            .filter(|path| {
                dir.is_empty()
                    || path == dir
                    || path
                        .strip_prefix(dir)
                        .is_some_and(|rest| rest.starts_with('/'))
            })
            .collect();
        paths.sort();
        paths.dedup();
        Ok(paths)
    }

    /// Reads `rel` in the working tree as untrusted input: no symbolic link
    /// below the top is followed, only a regular file is read, at most `limit`
    /// bytes (see `safe_io::fs`). `Ok(None)` when it does not exist.
    pub fn read_worktree_file(&self, rel: &str, limit: u64) -> Result<Option<Vec<u8>>> {
        Ok(safe_io::fs::read_within(&self.root, Path::new(rel), limit)?)
    }

    /// Every file path in the index (stage 0, submodule gitlinks excluded), sorted:
    /// what `git ls-files` lists.
    pub fn tracked_files(&self) -> Result<Vec<String>> {
        let index = self.index()?;
        let mut paths: Vec<String> = index
            .iter()
            .filter(|entry| entry.mode != GITLINK_MODE && (entry.flags >> 12) & 0x3 == 0)
            .map(|entry| String::from_utf8_lossy(&entry.path).into_owned())
            .collect();
        paths.sort();
        paths.dedup();
        Ok(paths)
    }

    /// True when `path` (relative to the working tree top) is ignored by the
    /// repository's ignore rules (`.gitignore` files, `info/exclude`,
    /// `core.excludesFile`) and not tracked.
    pub fn is_ignored(&self, path: &str) -> Result<bool> {
        if self.index()?.get_path(Path::new(path), 0).is_some() {
            return Ok(false);
        }
        self.inner
            .is_path_ignored(Path::new(path))
            .map_err(git("checking ignore rules"))
    }

    /// True when `path` (relative to the working tree top) matches the
    /// repository's ignore rules — every `.gitignore` on its way, negations
    /// included, `info/exclude` and `core.excludesFile` — whether or not the path
    /// is tracked.
    pub fn matches_ignore_rules(&self, path: &str) -> Result<bool> {
        self.inner
            .is_path_ignored(Path::new(path))
            .map_err(git("checking ignore rules"))
    }

    /// The index, re-read from disk if another process changed it since we last
    /// looked (libgit2 caches it per repository handle).
    pub(crate) fn index(&self) -> Result<git2::Index> {
        let mut index = self.inner.index().map_err(git("reading the index"))?;
        index.read(false).map_err(git("reading the index"))?;
        Ok(index)
    }

    fn entry_blob(&self, entry: &git2::TreeEntry<'_>, path: &str, at: String) -> Result<Vec<u8>> {
        if entry.kind() != Some(git2::ObjectType::Blob) {
            return Err(Error::NotAFile {
                path: path.to_owned(),
                at,
            });
        }
        let blob = self
            .inner
            .find_blob(entry.id())
            .map_err(git("reading a file"))?;
        Ok(blob.content().to_vec())
    }
}

/// The number of lines git sees in `content` (a last line without a newline counts).
pub fn count_lines(content: &[u8]) -> u32 {
    let newlines = content.iter().filter(|&&b| b == b'\n').count();
    let partial = usize::from(!content.is_empty() && !content.ends_with(b"\n"));
    u32::try_from(newlines + partial).unwrap_or(u32::MAX)
}

/// A gitattribute's state for one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttrValue {
    /// Nothing says anything about it.
    Unspecified,
    /// `name` (or `name=true`).
    Set,
    /// `-name` (or `name=false`).
    Unset,
    /// `name=value`.
    Value(String),
}

impl AttrValue {
    /// Set, or set to a value other than `false`.
    pub fn is_set(&self) -> bool {
        match self {
            AttrValue::Set => true,
            AttrValue::Value(v) => !v.eq_ignore_ascii_case("false") && v != "0",
            _ => false,
        }
    }
}

pub(crate) const GITLINK_MODE: u32 = 0o160000;

/// The tree-entry mode of a symbolic link.
const SYMLINK_MODE: i32 = 0o120_000;

/// A blob in a tree ([`Repo::blob_at`]).
pub(crate) struct BlobAt {
    pub(crate) id: git2::Oid,
    /// The entry is a symbolic link (the blob holds its target).
    pub(crate) symlink: bool,
    pub(crate) size: u64,
}

pub(crate) fn commit_info(commit: &git2::Commit<'_>) -> CommitInfo {
    let message = String::from_utf8_lossy(commit.message_bytes()).into_owned();
    let summary = String::from_utf8_lossy(commit.summary_bytes().unwrap_or_default()).into_owned();
    CommitInfo {
        id: ObjectId::from_git(commit.id()),
        message,
        summary,
        author: person(&commit.author()),
        committer: person(&commit.committer()),
        parents: commit.parent_ids().map(ObjectId::from_git).collect(),
    }
}

fn person(sig: &git2::Signature<'_>) -> Person {
    Person {
        name: String::from_utf8_lossy(sig.name_bytes()).into_owned(),
        email: String::from_utf8_lossy(sig.email_bytes()).into_owned(),
        time: GitTime::from_git(sig.when()),
    }
}

fn open_error(path: &Path, err: git2::Error) -> Error {
    match err.code() {
        git2::ErrorCode::NotFound => Error::NotARepository {
            path: path.to_path_buf(),
        },
        git2::ErrorCode::Owner => Error::UnsafeRepository {
            path: path.to_path_buf(),
        },
        _ => git("opening the repository")(err),
    }
}

fn not_found_or(err: git2::Error, path: &str, at: String) -> Error {
    if is_not_found(&err) {
        Error::PathNotFound {
            path: path.to_owned(),
            at,
        }
    } else {
        git("reading a tree")(err)
    }
}

fn is_peel_error(err: &git2::Error) -> bool {
    matches!(
        err.code(),
        git2::ErrorCode::Peel | git2::ErrorCode::NotFound | git2::ErrorCode::Invalid
    ) || err.class() == git2::ErrorClass::Object
}

/// libgit2 reports directories with a trailing separator; `components()` drops it
/// without touching non-UTF-8 bytes.
fn strip_trailing_separator(path: &Path) -> PathBuf {
    path.components().collect()
}
