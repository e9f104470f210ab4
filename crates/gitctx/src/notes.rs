//! Git notes under any ref, read in-process and written compare-and-swap.
//!
//! **Invariant:** a write never loses another writer's note. Each write reads the
//! notes ref, builds a new notes commit on top of it, and moves the ref only if it
//! still points where it was read (libgit2's `create_matching`, which takes the ref
//! lock and compares). Creating the ref is the same compare-and-swap, expecting
//! "absent" (the zero id) under the lock: libgit2's plain create checks for an
//! existing ref before it takes the lock, so two creators could both succeed and
//! the second would drop the first one's note. On a lost race it re-reads and tries again, with backoff and
//! jitter, a bounded number of times. Plain `git notes` takes the same lock and
//! compares the same way, so our writers and git's interleave safely.
//!
//! Notes trees may be flat (`<40 hex>`) or fanned out (`ab/<38 hex>`, as git does
//! once there are many notes); both are read, and a write goes where the tree
//! already puts that commit's fan-out directory.
//!
//! Reading many notes never starts a process: one tree lookup per commit.
//!
//! Merging another notes history into this ref (`ultragit sync`) and writing
//! many notes in one commit (`ultragit import`) are in `notes_merge`
//! ([`Notes::merge_from`], [`Notes::write_many`]).
//!
//! **Bounded.** Notes come from teammates and remotes, so they are untrusted
//! input: a note larger than [`MAX_NOTE_BYTES`] is never loaded (its size is
//! read from the object header first); [`Notes::read`] reports it as
//! [`Error::NoteTooLarge`], [`Notes::read_many`] lists it in
//! [`NotesRead::too_large`] so the caller can warn and go on.

use std::time::Duration;

use crate::error::{Error, Result, git, is_not_found};
use crate::oid::ObjectId;
use crate::repo::Repo;

/// How many times a write retries after losing a race before giving up.
pub(crate) const MAX_WRITE_ATTEMPTS: u32 = 200;

/// The largest note read (4 MiB); a larger one is skipped.
pub const MAX_NOTE_BYTES: u64 = 4 * 1024 * 1024;

/// What [`Notes::read_many`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NotesRead {
    /// The notes read, in the order asked.
    pub found: Vec<(ObjectId, String)>,
    /// Targets whose note exceeds [`MAX_NOTE_BYTES`], with its size; not read.
    pub too_large: Vec<(ObjectId, u64)>,
}

const NOTE_MODE: i32 = 0o100644;
const TREE_MODE: i32 = 0o040000;

/// One note: the annotated object and the blob that holds the note.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoteEntry {
    pub target: ObjectId,
    pub blob: ObjectId,
}

/// What a write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteOutcome {
    /// The notes commit the ref now points at.
    pub notes_commit: ObjectId,
    /// Attempts used (1 when nobody else was writing).
    pub attempts: u32,
}

/// The notes stored under one ref, e.g. `refs/notes/ultragit`.
#[derive(Debug)]
pub struct Notes<'r> {
    pub(crate) repo: &'r Repo,
    pub(crate) refname: String,
}

impl Repo {
    /// The notes under `notes_ref`: a full ref (`refs/notes/ultragit`) or a short
    /// name (`ultragit`, which means `refs/notes/ultragit`).
    pub fn notes(&self, notes_ref: &str) -> Result<Notes<'_>> {
        let refname = if notes_ref.starts_with("refs/") {
            notes_ref.to_owned()
        } else {
            format!("refs/notes/{notes_ref}")
        };
        if !git2::Reference::is_valid_name(&refname) {
            return Err(Error::InvalidInput {
                what: format!("notes ref '{notes_ref}'"),
                reason: "not a valid ref name".to_owned(),
            });
        }
        Ok(Notes {
            repo: self,
            refname,
        })
    }
}

impl Notes<'_> {
    /// The full ref name.
    pub fn refname(&self) -> &str {
        &self.refname
    }

    /// The notes commit the ref points at, `None` when the ref does not exist.
    pub fn tip(&self) -> Result<Option<ObjectId>> {
        Ok(self.tip_git()?.map(ObjectId::from_git))
    }

    pub(crate) fn tip_git(&self) -> Result<Option<git2::Oid>> {
        match self.repo.inner.refname_to_id(&self.refname) {
            Ok(id) => Ok(Some(id)),
            Err(err) if is_not_found(&err) => Ok(None),
            Err(err) => Err(git("reading the notes ref")(err)),
        }
    }

    pub(crate) fn tree(&self) -> Result<Option<git2::Tree<'_>>> {
        let Some(tip) = self.tip_git()? else {
            return Ok(None);
        };
        let commit = self
            .repo
            .inner
            .find_commit(tip)
            .map_err(git("reading the notes commit"))?;
        Ok(Some(commit.tree().map_err(git("reading the notes tree"))?))
    }

    /// Creates the notes ref with an empty notes commit when it does not exist yet.
    /// Returns `true` when it created it.
    pub fn ensure(&self) -> Result<bool> {
        if self.tip_git()?.is_some() {
            return Ok(false);
        }
        let repo = &self.repo.inner;
        let tree = repo
            .treebuilder(None)
            .and_then(|b| b.write())
            .map_err(git("writing an empty notes tree"))?;
        let tree = repo
            .find_tree(tree)
            .map_err(git("reading the notes tree"))?;
        let signature = signature(repo)?;
        let commit = repo
            .commit(
                None,
                &signature,
                &signature,
                "Notes initialized\n",
                &tree,
                &[],
            )
            .map_err(git("writing a notes commit"))?;
        match self.compare_and_swap(None, commit, "notes: initialize") {
            Ok(()) => Ok(true),
            // Someone else created it meanwhile: fine.
            Err(err) if is_race(&err) => Ok(false),
            Err(err) => Err(git("creating the notes ref")(err)),
        }
    }

    /// The note attached to `target`, if any (lossy UTF-8).
    pub fn read(&self, target: ObjectId) -> Result<Option<String>> {
        let Some(tree) = self.tree()? else {
            return Ok(None);
        };
        match self.read_in(&tree, target)? {
            None => Ok(None),
            Some(Ok(text)) => Ok(Some(text)),
            Some(Err(bytes)) => Err(Error::NoteTooLarge {
                target: target.to_hex(),
                bytes,
                limit: MAX_NOTE_BYTES,
            }),
        }
    }

    /// The notes of every target that has one, in the order asked. One notes tree
    /// is read; each target costs one tree lookup.
    pub fn read_many(&self, targets: &[ObjectId]) -> Result<NotesRead> {
        let mut out = NotesRead::default();
        let Some(tree) = self.tree()? else {
            return Ok(out);
        };
        for &target in targets {
            match self.read_in(&tree, target)? {
                None => {}
                Some(Ok(text)) => out.found.push((target, text)),
                Some(Err(bytes)) => out.too_large.push((target, bytes)),
            }
        }
        Ok(out)
    }

    /// The note of `target`: its text, or its size when over the limit.
    fn read_in(
        &self,
        tree: &git2::Tree<'_>,
        target: ObjectId,
    ) -> Result<Option<std::result::Result<String, u64>>> {
        let hex = target.to_hex();
        let Some(blob) = lookup(&self.repo.inner, tree, &hex)? else {
            return Ok(None);
        };
        read_blob(&self.repo.inner, blob).map(Some)
    }

    /// Every note under the ref, sorted by target id.
    pub fn list(&self) -> Result<Vec<NoteEntry>> {
        let Some(tree) = self.tree()? else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        collect(&self.repo.inner, &tree, String::new(), &mut out)?;
        out.sort_by_key(|e| e.target);
        Ok(out)
    }

    /// Attaches `text` to `target`, replacing any note it had. Compare-and-swap on
    /// the ref, retried on conflict (see the module docs).
    pub fn write(&self, target: ObjectId, text: &str) -> Result<WriteOutcome> {
        let repo = &self.repo.inner;
        let blob = repo.blob(text.as_bytes()).map_err(git("storing a note"))?;
        let message = format!("Notes added for {}\n", target.short());
        self.update(target, &message, |_| Ok(Some(Some(blob))))
            .map(|outcome| outcome.expect("a write always changes the tree"))
    }

    /// Writes the note of `target` that `decide` makes of the current one, in the
    /// same compare-and-swap as [`Notes::write`]: `decide` gets the note as of the
    /// notes commit the write builds on (`None` when there is none) and returns
    /// the new text, or `None` to leave the note as it is. After a lost race it
    /// is asked again with the then-current note, so nothing written meanwhile
    /// is overlooked — e.g. "only if absent" is `|current| current.is_none().then(…)`.
    /// Returns `None` when `decide` declined. A current note over
    /// [`MAX_NOTE_BYTES`] is [`Error::NoteTooLarge`].
    pub fn write_with(
        &self,
        target: ObjectId,
        decide: impl FnMut(Option<&str>) -> Option<String>,
    ) -> Result<Option<WriteOutcome>> {
        self.decide_write(target, "added", false, decide)
    }

    /// [`Notes::write_with`], where an empty text removes the note: `decide`
    /// gets the current text and answers `None` (leave it), `Some("")`
    /// (remove it) or `Some(text)`.
    pub fn write_or_remove_with(
        &self,
        target: ObjectId,
        decide: impl FnMut(Option<&str>) -> Option<String>,
    ) -> Result<Option<WriteOutcome>> {
        self.decide_write(target, "updated", true, decide)
    }

    /// The loop of [`Notes::write_with`] and [`Notes::write_or_remove_with`]:
    /// `empty_removes` says what an empty answer means.
    fn decide_write(
        &self,
        target: ObjectId,
        verb: &str,
        empty_removes: bool,
        mut decide: impl FnMut(Option<&str>) -> Option<String>,
    ) -> Result<Option<WriteOutcome>> {
        let message = format!("Notes {verb} for {}\n", target.short());
        self.update(target, &message, |tree| {
            let current = self.current_in(tree, target)?;
            match decide(current.as_deref()) {
                None => Ok(None),
                Some(text) if empty_removes && text.is_empty() => {
                    Ok(current.is_some().then_some(None))
                }
                Some(text) => {
                    let blob = self
                        .repo
                        .inner
                        .blob(text.as_bytes())
                        .map_err(git("storing a note"))?;
                    Ok(Some(Some(blob)))
                }
            }
        })
    }

    /// The text of `target`'s note in `tree` (`None`: no tree, or no note);
    /// a note over the size limit is an error.
    fn current_in(
        &self,
        tree: Option<&git2::Tree<'_>>,
        target: ObjectId,
    ) -> Result<Option<String>> {
        let Some(tree) = tree else {
            return Ok(None);
        };
        match self.read_in(tree, target)? {
            None => Ok(None),
            Some(Ok(text)) => Ok(Some(text)),
            Some(Err(bytes)) => Err(Error::NoteTooLarge {
                target: target.to_hex(),
                bytes,
                limit: MAX_NOTE_BYTES,
            }),
        }
    }

    /// The blob id of `target`'s note, without reading it (`None`: no note).
    pub fn blob_of(&self, target: ObjectId) -> Result<Option<ObjectId>> {
        let Some(tree) = self.tree()? else {
            return Ok(None);
        };
        Ok(locate(&self.repo.inner, &tree, &target.to_hex())?
            .map(|(_, blob)| ObjectId::from_git(blob)))
    }

    /// Removes the note of `target`. Returns `false` when there was none.
    pub fn remove(&self, target: ObjectId) -> Result<bool> {
        let message = format!("Notes removed for {}\n", target.short());
        Ok(self.update(target, &message, |_| Ok(Some(None)))?.is_some())
    }

    /// The write of one note, shared by the writes and remove. `change` gets
    /// the notes tree the new commit builds on and says what to do: `None`
    /// nothing, `Some(Some(blob))` set the note, `Some(None)` remove it.
    /// `Ok(None)` means nothing was written.
    fn update(
        &self,
        target: ObjectId,
        message: &str,
        mut change: impl FnMut(Option<&git2::Tree<'_>>) -> Result<Option<Option<git2::Oid>>>,
    ) -> Result<Option<WriteOutcome>> {
        let hex = target.to_hex();
        let (_, outcome) = self.commit_retrying(target, |tree| {
            let Some(blob) = change(tree)? else {
                return Ok(Attempt::Unchanged(()));
            };
            Ok(match upsert(&self.repo.inner, tree, &hex, blob)? {
                Some(tree) => Attempt::Commit {
                    tree,
                    message: message.to_owned(),
                    value: (),
                },
                None => Attempt::Unchanged(()),
            })
        })?;
        Ok(outcome)
    }

    /// The compare-and-swap loop every write shares. `build` gets the notes
    /// tree the new commit builds on (`None`: no notes commit yet) and says
    /// what to commit; the ref moves only if it still points at the commit
    /// that tree came from, else `build` runs again on the new tip after a
    /// backoff (jittered by `seed`). Returns `build`'s value, with where the
    /// ref now points when a commit was made. After `MAX_WRITE_ATTEMPTS` (200) lost
    /// races: [`Error::Locked`] when the ref's lock file is still there (a
    /// writer died holding it), else [`Error::Contended`].
    pub(crate) fn commit_retrying<T>(
        &self,
        seed: ObjectId,
        mut build: impl FnMut(Option<&git2::Tree<'_>>) -> Result<Attempt<T>>,
    ) -> Result<(T, Option<WriteOutcome>)> {
        let repo = &self.repo.inner;
        let signature = signature(repo)?;
        let mut backoff = Backoff::new(seed);
        for attempt in 1..=MAX_WRITE_ATTEMPTS {
            let tip = self.tip_git()?;
            let parent = tip
                .map(|id| repo.find_commit(id))
                .transpose()
                .map_err(git("reading the notes commit"))?;
            let old_tree = parent
                .as_ref()
                .map(git2::Commit::tree)
                .transpose()
                .map_err(git("reading the notes tree"))?;
            let (new_tree, message, value) = match build(old_tree.as_ref())? {
                Attempt::Unchanged(value) => return Ok((value, None)),
                Attempt::Commit {
                    tree,
                    message,
                    value,
                } => (tree, message, value),
            };
            let new_tree = repo
                .find_tree(new_tree)
                .map_err(git("reading the notes tree"))?;
            let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
            let commit = repo
                .commit(None, &signature, &signature, &message, &new_tree, &parents)
                .map_err(git("writing a notes commit"))?;
            match self.compare_and_swap(tip, commit, message.trim_end()) {
                Ok(()) => {
                    let outcome = WriteOutcome {
                        notes_commit: ObjectId::from_git(commit),
                        attempts: attempt,
                    };
                    return Ok((value, Some(outcome)));
                }
                Err(err) if is_race(&err) => backoff.wait(),
                Err(err) => return Err(git("updating the notes ref")(err)),
            }
        }
        let lock = self
            .repo
            .common_dir()
            .join(format!("{}.lock", self.refname));
        if lock.exists() {
            return Err(Error::Locked { path: lock });
        }
        Err(Error::Contended {
            refname: self.refname.clone(),
            attempts: MAX_WRITE_ATTEMPTS,
        })
    }
}

/// What one attempt of [`Notes::commit_retrying`] makes of the notes tree.
pub(crate) enum Attempt<T> {
    /// Nothing to write: the loop ends with this value.
    Unchanged(T),
    /// Commit `tree` with `message` on top of the tree the attempt was given,
    /// then end with `value`.
    Commit {
        tree: git2::Oid,
        message: String,
        value: T,
    },
}

impl Notes<'_> {
    /// Points the ref at `new` if it still points at `expected` (`None`: if it
    /// still does not exist). The comparison happens under the ref lock, for a
    /// missing ref too: libgit2's create without `force` checks that the ref is
    /// absent *before* taking the lock and then writes without comparing, so two
    /// writers that both found no ref could both "create" it and the second
    /// would silently drop the first one's note. The zero id as the expected
    /// value means "absent" in the locked comparison.
    pub(crate) fn compare_and_swap(
        &self,
        expected: Option<git2::Oid>,
        new: git2::Oid,
        message: &str,
    ) -> std::result::Result<(), git2::Error> {
        let expected = expected.unwrap_or(git2::Oid::ZERO_SHA1);
        self.repo
            .inner
            .reference_matching(&self.refname, new, true, expected, message)
            .map(drop)
    }
}

/// Lost races show up as: the ref moved or was created meanwhile (Modified), or
/// its lock file is held right now (Locked).
pub(crate) fn is_race(err: &git2::Error) -> bool {
    matches!(
        err.code(),
        git2::ErrorCode::Modified | git2::ErrorCode::Locked
    )
}

/// The identity recorded on notes commits: the repository's configured user, or a
/// fixed one when none is configured.
pub(crate) fn signature(repo: &git2::Repository) -> Result<git2::Signature<'static>> {
    match repo.signature() {
        Ok(sig) => Ok(sig.to_owned()),
        Err(_) => git2::Signature::now("ultragit", "ultragit@localhost")
            .map_err(git("making a notes signature")),
    }
}

/// The text of the note blob `blob` (lossy UTF-8), or its size when it is over
/// [`MAX_NOTE_BYTES`] (then it is not loaded: the size comes from the object
/// header).
pub(crate) fn read_blob(
    repo: &git2::Repository,
    blob: git2::Oid,
) -> Result<std::result::Result<String, u64>> {
    let odb = repo.odb().map_err(git("reading a note"))?;
    let (size, _) = odb.read_header(blob).map_err(git("reading a note"))?;
    if size as u64 > MAX_NOTE_BYTES {
        return Ok(Err(size as u64));
    }
    let blob = repo.find_blob(blob).map_err(git("reading a note"))?;
    Ok(Ok(String::from_utf8_lossy(blob.content()).into_owned()))
}

/// Finds the note blob for `hex` in a notes tree, flat or fanned out.
fn lookup(repo: &git2::Repository, tree: &git2::Tree<'_>, hex: &str) -> Result<Option<git2::Oid>> {
    Ok(locate(repo, tree, hex)?.map(|(_, blob)| blob))
}

/// Where the note of `hex` is in `tree` (its path and blob), following fan-out
/// directories.
pub(crate) fn locate(
    repo: &git2::Repository,
    tree: &git2::Tree<'_>,
    hex: &str,
) -> Result<Option<(String, git2::Oid)>> {
    if let Some(entry) = tree.get_name(hex)
        && entry.kind() == Some(git2::ObjectType::Blob)
    {
        return Ok(Some((hex.to_owned(), entry.id())));
    }
    let Some(sub) = fanout_dir(repo, tree, hex)? else {
        return Ok(None);
    };
    Ok(locate(repo, &sub, &hex[2..])?.map(|(rest, blob)| (format!("{}/{rest}", &hex[..2]), blob)))
}

/// The fan-out directory of `tree` that holds the notes of `hex` (named by its
/// first two digits), if the tree has one.
pub(crate) fn fanout_dir<'r>(
    repo: &'r git2::Repository,
    tree: &git2::Tree<'_>,
    hex: &str,
) -> Result<Option<git2::Tree<'r>>> {
    if hex.len() <= 2 {
        return Ok(None);
    }
    match tree.get_name(&hex[..2]) {
        Some(entry) if entry.kind() == Some(git2::ObjectType::Tree) => repo
            .find_tree(entry.id())
            .map(Some)
            .map_err(git("reading the notes tree")),
        _ => Ok(None),
    }
}

/// Returns the id of `tree` with the note for `hex` set to `blob` (or removed when
/// `blob` is `None`). `Ok(None)`: removal of a note that is not there.
fn upsert(
    repo: &git2::Repository,
    tree: Option<&git2::Tree<'_>>,
    hex: &str,
    blob: Option<git2::Oid>,
) -> Result<Option<git2::Oid>> {
    let mut builder = repo
        .treebuilder(tree)
        .map_err(git("building a notes tree"))?;
    let flat = tree.and_then(|t| t.get_name(hex)).is_some();
    let fanout = match tree {
        Some(tree) if !flat => fanout_dir(repo, tree, hex)?,
        _ => None,
    };
    let changed = if let Some(sub) = fanout {
        // This commit's fan-out directory exists: the note lives (or goes) there.
        let Some(new_sub) = upsert(repo, Some(&sub), &hex[2..], blob)? else {
            return Ok(None);
        };
        let new_sub_tree = repo
            .find_tree(new_sub)
            .map_err(git("reading the notes tree"))?;
        if new_sub_tree.is_empty() {
            builder
                .remove(&hex[..2])
                .map_err(git("building a notes tree"))?;
        } else {
            builder
                .insert(&hex[..2], new_sub, TREE_MODE)
                .map_err(git("building a notes tree"))?;
        }
        true
    } else {
        match blob {
            Some(blob) => {
                builder
                    .insert(hex, blob, NOTE_MODE)
                    .map_err(git("building a notes tree"))?;
                true
            }
            None if flat => {
                builder.remove(hex).map_err(git("building a notes tree"))?;
                true
            }
            None => false,
        }
    };
    if !changed {
        return Ok(None);
    }
    Ok(Some(builder.write().map_err(git("writing a notes tree"))?))
}

/// Walks a notes tree, joining fan-out directory names into full hex ids.
fn collect(
    repo: &git2::Repository,
    tree: &git2::Tree<'_>,
    prefix: String,
    out: &mut Vec<NoteEntry>,
) -> Result<()> {
    for entry in tree.iter() {
        let Ok(name) = entry.name() else { continue };
        let hex = format!("{prefix}{name}");
        match entry.kind() {
            Some(git2::ObjectType::Blob) if hex.len() == 40 => {
                if let Ok(target) = hex.parse::<ObjectId>() {
                    out.push(NoteEntry {
                        target,
                        blob: ObjectId::from_git(entry.id()),
                    });
                }
            }
            Some(git2::ObjectType::Tree)
                if hex.len() < 40 && name.bytes().all(|b| b.is_ascii_hexdigit()) =>
            {
                let sub = repo
                    .find_tree(entry.id())
                    .map_err(git("reading the notes tree"))?;
                collect(repo, &sub, hex, out)?;
            }
            // Anything else is not a note (git ignores it too).
            _ => {}
        }
    }
    Ok(())
}

/// Exponential backoff with jitter, without a random-number dependency: the jitter
/// comes from the clock and the target, which differ between racing writers.
pub(crate) struct Backoff {
    delay_micros: u64,
    seed: u64,
}

impl Backoff {
    pub(crate) fn new(target: ObjectId) -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let mut seed = u64::from(nanos) ^ u64::from(std::process::id()).rotate_left(32);
        for b in &target.as_bytes()[..8] {
            seed = seed.rotate_left(8) ^ u64::from(*b);
        }
        Backoff {
            delay_micros: 200,
            seed: seed | 1,
        }
    }

    pub(crate) fn wait(&mut self) {
        // xorshift64
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 7;
        self.seed ^= self.seed << 17;
        let jitter = self.seed % self.delay_micros.max(1);
        std::thread::sleep(Duration::from_micros(self.delay_micros / 2 + jitter));
        self.delay_micros = (self.delay_micros * 2).min(20_000);
    }
}
