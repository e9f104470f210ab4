//! A file's names across renames and its annotated commits in HEAD's history,
//! from the notes index ([`DepsIndex`]) — what `history`, `summary` and
//! `deps` share.
//!
//! **Which commits.** Every annotated commit HEAD's history holds whose note
//! has a region in the file (under today's name or a former one), on any
//! parent: a project that merges topic branches annotates commits that are
//! never on the first-parent chain. The index already knows which annotated
//! commits name which files, so nothing walks the file's unannotated history:
//! the candidates are the index's, and one in-process walk tells which of them
//! HEAD reaches ([`gitctx::Repo::unreachable_from`], which stops as soon as
//! everything left is decided). A note on a commit HEAD does not reach (an
//! unmerged branch, a commit rebased away) is counted as listed, not as in
//! the history.
//!
//! **Which names.** A former name is a path some note (or dependency) names
//! that no file has at HEAD, chained to the file by the renames git's rename
//! detection finds among those paths in HEAD's history, on every branch
//! ([`gitctx::Repo::renames_among`], one `git log` — started only when the
//! notes name a path that is gone at HEAD). A name another file has today
//! stays that file's. A path that was deleted, then created again by an
//! unrelated file, is one name: its notes count for today's file.

use std::collections::{HashMap, HashSet};

use gitctx::{ObjectId, Repo};

use crate::error::ReadError;
use crate::index::{Annotating, DepsIndex};

/// The paths among `paths` that no file has at `head`, each once, in order.
pub(crate) fn gone_at(repo: &Repo, head: &str, paths: &[&str]) -> Result<Vec<String>, ReadError> {
    let mut out: Vec<String> = Vec::new();
    for path in paths {
        if repo.file_size_at(head, path)?.is_none() && !out.iter().any(|p| p == path) {
            out.push((*path).to_owned());
        }
    }
    Ok(out)
}

/// The former names of the files `targets` names (files, or directories
/// whose files count), among `gone`: for each file today's name maps to the
/// gone paths that chain to it by renames, nearest first. One `git log`
/// (none when `gone` is empty).
pub(crate) fn former_names(
    repo: &Repo,
    head: &str,
    targets: &[String],
    gone: &[String],
) -> Result<HashMap<String, Vec<String>>, ReadError> {
    if gone.is_empty() || targets.is_empty() {
        return Ok(HashMap::new());
    }
    let mut pathspec: Vec<String> = gone.to_vec();
    pathspec.extend(targets.iter().cloned());
    let renames = repo.renames_among(head, &pathspec)?;
    let gone: HashSet<&str> = gone.iter().map(String::as_str).collect();
    // Every rename's destination that exists today starts a chain.
    let mut out: HashMap<String, Vec<String>> = HashMap::new();
    for start in renames.iter().map(|r| r.to.as_str()) {
        if gone.contains(start) || out.contains_key(start) {
            continue;
        }
        let mut names: Vec<String> = Vec::new();
        let mut frontier = vec![start];
        while let Some(to) = frontier.pop() {
            for rename in renames.iter().filter(|r| r.to == to) {
                let from = rename.from.as_str();
                if gone.contains(from) && from != start && !names.iter().any(|n| n == from) {
                    names.push(from.to_owned());
                    frontier.push(from);
                }
            }
        }
        out.insert(start.to_owned(), names);
    }
    out.retain(|_, names| !names.is_empty());
    Ok(out)
}

/// The names of `file` for its notes: today's, then its former names among
/// the paths the index's regions name.
pub(crate) fn names_of(
    repo: &Repo,
    head: &str,
    index: &DepsIndex,
    file: &str,
) -> Result<Vec<String>, ReadError> {
    let gone = gone_at(repo, head, &index.region_files())?;
    let mut names = vec![file.to_owned()];
    if let Some(former) = former_names(repo, head, &[file.to_owned()], &gone)?.remove(file) {
        names.extend(former);
    }
    Ok(names)
}

/// The annotated commits of one file that HEAD's history holds.
#[derive(Debug)]
pub(crate) struct InHistory<'i> {
    /// Newest commit first, each with its regions in the file.
    pub(crate) commits: Vec<Annotating<'i>>,
    /// How many annotated commits the index listed for the file's names
    /// (before asking which HEAD reaches).
    pub(crate) listed: usize,
}

/// The annotated commits whose regions name one of `names` (and, with
/// `anchors`, one of those units) that `head` reaches, newest first. One
/// in-process walk; no note is read.
pub(crate) fn in_history<'i>(
    repo: &Repo,
    head: ObjectId,
    index: &'i DepsIndex,
    names: &[String],
    anchors: &[&str],
) -> Result<InHistory<'i>, ReadError> {
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let listed = index.annotating(&names, anchors);
    let count = listed.len();
    let kept = reached(repo, head, listed)?;
    Ok(InHistory {
        commits: kept,
        listed: count,
    })
}

/// Those of `listed` that are commits here and that `head` reaches, in their
/// order.
pub(crate) fn reached<'i>(
    repo: &Repo,
    head: ObjectId,
    listed: Vec<Annotating<'i>>,
) -> Result<Vec<Annotating<'i>>, ReadError> {
    // A commit the index could not date was not in the repository when its
    // note was indexed; it may have been fetched since, so look again.
    let present: Vec<Annotating<'i>> = listed
        .into_iter()
        .filter(|a| a.commit_time.is_some() || repo.commit_info_by_id(a.commit).is_ok())
        .collect();
    let ids: Vec<ObjectId> = present.iter().map(|a| a.commit).collect();
    let outside: HashSet<ObjectId> = repo.unreachable_from(&ids, &[head])?.into_iter().collect();
    Ok(present
        .into_iter()
        .filter(|a| !outside.contains(&a.commit))
        .collect())
}
