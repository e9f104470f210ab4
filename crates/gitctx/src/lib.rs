//! `gitctx`: every git access of the toolkit.
//!
//! Repository discovery, commits, typed diffs, file contents at a revision or in the
//! index, blame (with an optional on-disk cache, [`blame_cache`], whose blame at an
//! ancestor is carried forward to a newer commit, [`blame_carry`]), notes, tags,
//! config, submodule gitlinks and the URLs `.gitmodules` declares — with plain
//! types out.
//! Patch-ids ([`PatchId`]) tell a cherry-picked or rebased commit from its
//! original, in two processes for any number of commits;
//! [`Repo::unreachable_from_refs`], [`Repo::commits_since`] and
//! [`Repo::reflog_message`] choose the commits to compare (unreachable from
//! refs, committed since a date, what a reflog says).
//! [`Notes::changes_between`] lists the notes that differ between two notes
//! commits, so caches derived from notes update with what changed;
//! [`Repo::follow_file`] lists a file's commits across renames (one `git log
//! --follow`), and [`Repo::renames_among`] the renames among a set of paths
//! that any commit of a history made, on every branch (one `git log`).
//! [`Repo::commit_graph`] tells whether the repository's commit-graph has
//! changed-path Bloom filters (from the files' headers), and
//! [`Repo::write_commit_graph`] writes one that has ([`commit_graph`]); with
//! any commit-graph, the reachability walks ([`Repo::unreachable_from`],
//! [`Repo::unreachable_from_refs`]) are `git rev-list`'s, which reads commits
//! from the graph.
//!
//! - **Dependencies:** `safe-io` only among our crates. `git2` (libgit2, built without network
//!   features) for object, diff, index, notes, ref and config access; the `git`
//!   executable for blame (faster on long histories, see [`BlameEngine`]), for
//!   reachability where a commit-graph is (see above) and for
//!   anything a caller must run exactly as git would (commits, spec-fixed status
//!   commands).
//! - **API boundary:** no `git2` type appears in the public API. Ids are
//!   [`ObjectId`], times [`GitTime`], errors [`Error`].
//! - **Invariant:** every `git` process is hardened ([`GitCommand`]): fixed locale, no
//!   optional locks, `core.fsmonitor` off, inherited `GIT_*` location variables
//!   removed, paths after `--`, and no program the repository configured runs
//!   (attributes read from the empty tree, `GIT_PAGER=cat`, `--no-textconv`);
//!   only `git commit` keeps the user's programs. A caller that needs its own
//!   `git log` starts from [`Repo::log_command`], which carries the log flags.
//! - **Invariant:** the working tree is untrusted input: its files are read
//!   bounded and never through a link ([`Repo::read_worktree_file`], through
//!   `safe-io`), notes over [`MAX_NOTE_BYTES`] are not loaded, the blame
//!   cache follows no link below its directory, and a committed `.gitmodules`
//!   is read by git with includes off and bounded ([`Repo::submodule_urls`]).
//! - **Config:** read in-process by libgit2 from git's standard places
//!   ([`Repo::config_get`]); the files `GIT_CONFIG_GLOBAL` and
//!   `GIT_CONFIG_SYSTEM` name (and `GIT_CONFIG_NOSYSTEM`) reach only the git
//!   processes, which they pass through to. So no answer that must agree with
//!   a git process depends on a value libgit2 reads: blame's diff options are
//!   fixed on its command line and on the diffs it is carried through
//!   ([`blame_carry`]), never read from the configuration.
//! - **Invariant:** errors are classified from libgit2 error codes, exit statuses and
//!   checks made before a command runs — never by reading git's English stderr.
//! - **Invariant:** notes writes are compare-and-swap on the notes ref and retried
//!   ([`Notes::write`]), every write through one loop (read the tip, build the tree,
//!   commit, compare-and-swap, back off); no concurrent writer's note is ever lost. Merging a fetched
//!   notes history ([`Notes::merge_from`]) is a union, a merge commit or a fast-forward
//!   moved the same way: it never removes a local note, nor replaces one with a note
//!   that is not a regular file, too large or refused by the caller; the local notes
//!   ref is never force-updated.
//! - The library never prints and never reads configuration from the environment; the
//!   only environment access is listing inherited `GIT_*` names so child processes can
//!   drop them, and finding `git` on `PATH` to name it in the blame cache's key.

mod blame;
pub mod blame_cache;
pub mod blame_carry;
mod command;
mod commit;
pub mod commit_graph;
pub mod diff;
mod error;
mod follow;
mod history;
mod known;
mod notes;
mod notes_diff;
mod notes_merge;
mod oid;
mod patch_id;
mod refs;
mod repo;
mod status;
mod submodule;

pub use blame::{BlameEngine, BlameEntry, BlameOptions};
pub use blame_cache::{BlameCache, CacheOutcome, CacheUsage, WarmReport};
pub use blame_carry::{CarryWalk, CostStop};
pub use command::{GitCommand, prefetch_git_version};
pub use commit::CommitRun;
pub use commit_graph::CommitGraph;
pub use diff::{
    Diff, DiffLine, DiffOptions, DiffTarget, FileDiff, FileMode, FileStatus, Hunk, LineKind,
    NumStat,
};
pub use error::{Error, Result, Source};
pub use follow::{FileChange, Rename};
pub use notes::{MAX_NOTE_BYTES, NoteEntry, Notes, NotesRead, WriteOutcome};
pub use notes_diff::NoteChange;
pub use notes_merge::{MergeKind, MergeReport, Refusal, Resolution, Written};
pub use oid::{ObjectId, ParseObjectIdError};
pub use patch_id::PatchId;
pub use refs::{Bump, Gitlink, RemoteHead, SemverTag, Tag, Version};
pub use repo::{AttrValue, CommitInfo, GitTime, Head, Person, Repo, count_lines};
pub use status::StatusEntry;
