//! A file's history across renames: the commits that changed it, newest
//! first, each with the file's path at that commit (`git log --follow`), and
//! the renames among a set of paths on every branch of a history
//! ([`Repo::renames_among`]).
//!
//! **Why both.** `git log --follow` keeps one "current name" for the whole
//! walk: in a history that merges topic branches, a rename met on one branch
//! renames the file for every commit walked after it, so commits of other
//! branches that changed the file under its newer name can be missed.
//! [`Repo::renames_among`] asks a different question — which renames among
//! these paths did any commit of the history make — which has no such state,
//! and lets a caller that already knows which commits matter (the notes
//! index does) chain the names itself.

use crate::error::{Error, Result};
use crate::oid::ObjectId;
use crate::repo::Repo;

/// One commit in a file's history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub commit: ObjectId,
    /// The file's path in that commit's tree (after a rename, the new name).
    pub path: String,
    /// The path it was renamed or copied from, when that commit did so.
    pub from: Option<String>,
}

impl Repo {
    /// The commits reachable from `rev` that changed `path`, newest first,
    /// following renames (git's rename detection, `git log --follow`), on
    /// every branch of the history (not only the first-parent chain); at
    /// most `limit`. Merges are not listed (git shows no diff for them). One
    /// `git log` process. In a history that merges topic branches, `--follow`
    /// can miss commits (see the module docs); [`Repo::renames_among`] does
    /// not.
    pub fn follow_file(&self, rev: &str, path: &str, limit: usize) -> Result<Vec<FileChange>> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let start = self.resolve_commit(rev)?;
        // `-M` after the builder's `--no-renames`: `--follow` needs renames.
        let cmd = self
            .log_command()
            .args(["-M", "--follow", "--format=%x00%H", "--name-status", "-z"])
            .arg(format!("--max-count={limit}"))
            .arg(start.to_hex())
            .arg("--")
            .arg(path);
        let output = cmd.run()?;
        parse(&output.stdout).map_err(|reason| Error::Parse {
            args: cmd.display_args(),
            reason,
        })
    }
}

/// One rename git's rename detection finds in one commit (against its
/// parent; merges are not looked at).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rename {
    pub commit: ObjectId,
    pub from: String,
    pub to: String,
}

/// The most paths given to one `git log` of [`Repo::renames_among`] (more are
/// looked at in several runs).
const PATHS_PER_RUN: usize = 1_000;

impl Repo {
    /// The renames whose source and destination are both among `paths` (or
    /// below a directory named there) that commits reachable from `rev`
    /// made, newest first: every commit of the history is looked at, on every
    /// branch (`--full-history`), not only those `git log --follow` would
    /// visit. Git's rename detection (`-M`, 50% similar) judges a pair; the
    /// diff is limited to `paths`, so a file renamed to a path not given is
    /// not a rename here (it was deleted, as far as these paths go). One
    /// `git log` process per 1,000 paths.
    pub fn renames_among(&self, rev: &str, paths: &[String]) -> Result<Vec<Rename>> {
        if paths.is_empty() {
            return Ok(Vec::new());
        }
        let start = self.resolve_commit(rev)?;
        let mut out: Vec<Rename> = Vec::new();
        for batch in paths.chunks(PATHS_PER_RUN) {
            // `-M` after the builder's `--no-renames`.
            let cmd = self
                .log_command()
                .args([
                    "-M",
                    "--full-history",
                    "--diff-filter=R",
                    "--format=%x00%H",
                    "--name-status",
                    "-z",
                ])
                .arg(start.to_hex())
                .arg("--")
                .args(batch);
            let output = cmd.run()?;
            let changes = parse(&output.stdout).map_err(|reason| Error::Parse {
                args: cmd.display_args(),
                reason,
            })?;
            out.extend(changes.into_iter().filter_map(|change| {
                Some(Rename {
                    commit: change.commit,
                    from: change.from?,
                    to: change.path,
                })
            }));
        }
        if paths.len() > PATHS_PER_RUN {
            // A rename between two batches' paths is found by neither: only
            // a run given both sees it. Rare enough (more than 1,000 names)
            // to say so rather than run every pair of batches.
            out.dedup();
        }
        Ok(out)
    }
}

/// `\0<sha>\0\n<status>\0<path>[\0<path>]\0<status>…\0\0<sha>…`: an empty
/// field ends a commit's entries; a status `R…`/`C…` is followed by two
/// paths (from, to). A commit shows no entry when its diff has none of the
/// paths (a merge), one with `--follow`, any number otherwise.
fn parse(stdout: &[u8]) -> std::result::Result<Vec<FileChange>, String> {
    let mut out: Vec<FileChange> = Vec::new();
    let mut fields = stdout.split(|&b| b == 0).peekable();
    while let Some(field) = fields.next() {
        if field.is_empty() {
            continue;
        }
        let text = String::from_utf8_lossy(field);
        let commit: ObjectId = text
            .trim()
            .parse()
            .map_err(|e| format!("expected a commit id, got {text:?}: {e}"))?;
        while let Some(status) = fields.next_if(|f| !f.is_empty()) {
            let status = String::from_utf8_lossy(status).trim().to_owned();
            let mut path = || {
                fields
                    .next()
                    .filter(|f| !f.is_empty())
                    .map(|f| String::from_utf8_lossy(f).into_owned())
                    .ok_or_else(|| format!("no path after status {status:?}"))
            };
            let first = path()?;
            let (path, from) = if status.starts_with('R') || status.starts_with('C') {
                (path()?, Some(first))
            } else {
                (first, None)
            };
            out.push(FileChange { commit, path, from });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_renames_and_plain_changes() {
        let [a, b, c] = ['1', '2', '3'].map(|digit| digit.to_string().repeat(40));
        let raw =
            format!("\0{a}\0\nM\0new.rs\0\0{b}\0\nR100\0old.rs\0new.rs\0\0{c}\0\nA\0old.rs\0");
        let [a2, b2, c2] = [a.clone(), b.clone(), c.clone()];
        let changes = parse(raw.as_bytes()).unwrap();
        let got: Vec<(String, String, Option<String>)> = changes
            .into_iter()
            .map(|c| (c.commit.to_hex(), c.path, c.from))
            .collect();
        assert_eq!(
            got,
            [
                (a2, "new.rs".to_owned(), None),
                (b2, "new.rs".to_owned(), Some("old.rs".to_owned())),
                (c2, "old.rs".to_owned(), None),
            ]
        );
        assert!(parse(b"\0not-a-sha\0").is_err());
        // Several renames in one commit, then a commit without entries.
        let raw = format!("\0{a}\0\nR100\0x\0x2\0R090\0y\0y2\0\0{b}\0\0{c}\0\nM\0z\0");
        let got: Vec<(String, String, Option<String>)> = parse(raw.as_bytes())
            .unwrap()
            .into_iter()
            .map(|c| (c.commit.to_hex(), c.path, c.from))
            .collect();
        assert_eq!(
            got,
            [
                (a.clone(), "x2".to_owned(), Some("x".to_owned())),
                (a.clone(), "y2".to_owned(), Some("y".to_owned())),
                (c, "z".to_owned(), None),
            ]
        );
        assert!(parse(format!("\0{a}\0\nR100\0x\0").as_bytes()).is_err());
        assert!(parse(b"").unwrap().is_empty());
    }
}
