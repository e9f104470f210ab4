//! What a failed run leaves in the working tree, and undoing it.
//!
//! Before a response's changes land, the session keeps what each path held
//! before the run (`Original`: its content and permissions, or that it did
//! not exist, with the directories a new file's path lacked). A run that fails
//! then either:
//!
//! - keeps its changes for review and says how to undo them ([`Kept`]):
//!   code-commit never stages, so a file that was as `HEAD` has it comes back
//!   with `git restore --source=HEAD --worktree -- <files>`, a file the run
//!   created goes with `rm -- <files>`, and a file that held changes git does
//!   not have (uncommitted edits, an untracked file) is named as such: git
//!   cannot give that content back; or
//! - with `--revert-on-failure`, puts back exactly what it changed
//!   (`revert`): each changed file gets its earlier content and permissions,
//!   each created file is removed, and so is each directory the run created
//!   once it is empty again. Nothing else in the tree is touched, however
//!   dirty.
//!
//! **Invariant:** reverting goes through [`crate::apply`], all or nothing,
//! through the project's directory handle: no write follows a symbolic link.

use std::collections::BTreeMap;
use std::io::Read as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use safe_io::Dir;

use crate::apply::{self, Change};
use crate::policy::Policy;

/// The largest file whose earlier content is kept for a revert: 32 MiB (as
/// large as the largest rollup, so beyond anything the model rewrites whole).
const ORIGINAL_LIMIT: u64 = 32 * 1024 * 1024;

/// What a path held before the run first changed it.
#[derive(Debug, Clone)]
enum Original {
    /// No file: the run created it. `new_dirs` are the directories on its
    /// path that did not exist either, deepest first.
    Absent { new_dirs: Vec<String> },
    /// A regular file with this content and these permission bits.
    File { content: Vec<u8>, mode: u32 },
    /// It could not be kept (too large, unreadable); it cannot be reverted.
    Unknown(String),
}

/// What every path a response was about to change held before the run: kept
/// the first time a response would change it.
#[derive(Debug, Default)]
pub(crate) struct Before(BTreeMap<String, Original>);

impl Before {
    /// Keeps what `rel` holds now below `root`, unless it was kept already.
    pub(crate) fn keep(&mut self, root: &Dir, rel: &str) {
        if !self.0.contains_key(rel) {
            self.0.insert(rel.to_owned(), capture(root, rel));
        }
    }

    /// How the files of `latest` (each changed path, with its content now;
    /// `None`: removed) can be undone, judged against what they held and
    /// against `HEAD`.
    pub(crate) fn kept(&self, policy: &Policy, latest: &BTreeMap<String, Option<String>>) -> Kept {
        let files = latest.iter().filter_map(|(rel, now)| {
            let way = match self.0.get(rel) {
                // A created file the run removed again is gone already.
                Some(Original::Absent { .. }) if now.is_none() => return None,
                Some(Original::Absent { .. }) => Way::Remove,
                Some(Original::File { content, .. })
                    if policy.head_content(rel).as_deref() == Some(content.as_slice()) =>
                {
                    Way::Restore
                }
                _ => Way::NotInGit,
            };
            Some((rel.clone(), way))
        });
        Kept {
            files: files.collect(),
        }
    }

    /// Puts back every path of `latest` as it was, all or nothing, then
    /// removes the directories the run created once they are empty.
    pub(crate) fn revert(&self, root: &Dir, latest: &BTreeMap<String, Option<String>>) -> Reverted {
        let mut out = Reverted::default();
        let mut changes = Vec::new();
        let mut modes = Vec::new();
        let mut new_dirs: Vec<&str> = Vec::new();
        for (rel, now) in latest {
            match self.0.get(rel) {
                Some(Original::File { content, mode }) => {
                    changes.push(Change::Write {
                        rel: rel.clone(),
                        content: content.clone(),
                    });
                    modes.push((rel, *mode));
                    out.restored.push(rel.clone());
                }
                Some(Original::Absent { new_dirs: dirs }) => {
                    new_dirs.extend(dirs.iter().map(String::as_str));
                    if now.is_some() && matches!(root.kind(rel), Ok(Some(_))) {
                        changes.push(Change::Delete { rel: rel.clone() });
                        out.removed.push(rel.clone());
                    }
                }
                Some(Original::Unknown(why)) => out.failed.push(format!("{rel}: {why}")),
                None => out
                    .failed
                    .push(format!("{rel}: its content before the run is unknown")),
            }
        }
        if let Err(err) = apply::apply(root, &changes) {
            out.failed.push(err.to_string());
            out.restored.clear();
            out.removed.clear();
            return out;
        }
        for (rel, mode) in modes {
            if let Err(why) = set_mode(root, rel, mode) {
                out.failed.push(format!(
                    "{rel}: its permissions could not be restored: {why}"
                ));
            }
        }
        // Deepest first; a directory something else now uses stays.
        new_dirs.sort_unstable_by_key(|d| std::cmp::Reverse(d.matches('/').count()));
        new_dirs.dedup();
        for dir in new_dirs {
            let _ = root.remove_dir(dir);
        }
        out
    }
}

/// Gives `rel` below `root` the permission bits `mode`.
fn set_mode(root: &Dir, rel: &str, mode: u32) -> Result<(), String> {
    let file = root.open_file(rel).map_err(|e| e.to_string())?;
    file.set_permissions(std::fs::Permissions::from_mode(mode))
        .map_err(|e| e.to_string())
}

/// What `rel` holds now, below `root`, before the run changes it.
fn capture(root: &Dir, rel: &str) -> Original {
    let file = match root.open_file(rel) {
        Ok(file) => file,
        Err(err) if err.is_not_found() => {
            return Original::Absent {
                new_dirs: missing_dirs(root, rel),
            };
        }
        Err(err) => return Original::Unknown(err.to_string()),
    };
    let mode = match file.metadata() {
        Ok(meta) => meta.permissions().mode(),
        Err(err) => return Original::Unknown(err.to_string()),
    };
    let mut content = Vec::new();
    match file.take(ORIGINAL_LIMIT + 1).read_to_end(&mut content) {
        Ok(n) if n as u64 > ORIGINAL_LIMIT => Original::Unknown(format!(
            "larger than {} MiB, too large to keep",
            ORIGINAL_LIMIT / (1024 * 1024)
        )),
        Ok(_) => Original::File { content, mode },
        Err(err) => Original::Unknown(err.to_string()),
    }
}

/// The directories on `rel`'s path that do not exist, deepest first.
fn missing_dirs(root: &Dir, rel: &str) -> Vec<String> {
    Path::new(rel)
        .ancestors()
        .skip(1)
        .filter(|dir| !dir.as_os_str().is_empty())
        .take_while(|dir| matches!(root.kind(dir), Ok(None)))
        .map(|dir| dir.to_string_lossy().into_owned())
        .collect()
}

/// How one file a failed run changed can be undone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way {
    /// It was as `HEAD` has it before the run: `git restore` brings it back.
    Restore,
    /// The run created it: removing it undoes that.
    Remove,
    /// Its content before the run is not in git (uncommitted changes,
    /// untracked, too large to compare): no command can give it back.
    NotInGit,
}

/// The changes a failed run left in the working tree (none of them staged):
/// each file, relative to the project, with how it can be undone, sorted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Kept {
    pub files: Vec<(String, Way)>,
}

impl Kept {
    /// The files that can be undone `way`, sorted.
    pub fn by(&self, way: Way) -> Vec<&str> {
        self.files
            .iter()
            .filter(|(_, w)| *w == way)
            .map(|(path, _)| path.as_str())
            .collect()
    }

    /// The shell commands that undo the changes, run in the project
    /// directory: `git restore --source=HEAD --worktree -- …` and `rm -- …`
    /// (paths quoted for a POSIX shell, and taken literally by git).
    pub fn commands(&self) -> Vec<String> {
        let words = |way, word: fn(&str) -> String| {
            self.by(way)
                .into_iter()
                .map(|p| shell_word(&word(p)))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let restore = words(Way::Restore, literal_pathspec);
        let remove = words(Way::Remove, str::to_owned);
        [
            ("git restore --source=HEAD --worktree -- ", restore),
            ("rm -- ", remove),
        ]
        .into_iter()
        .filter(|(_, paths)| !paths.is_empty())
        .map(|(command, paths)| format!("{command}{paths}"))
        .collect()
    }
}

/// What `--revert-on-failure` did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reverted {
    /// Files given back their content from before the run.
    pub restored: Vec<String>,
    /// Files the run created, removed.
    pub removed: Vec<String>,
    /// What could not be reverted, as `path: why` (the rest stands reverted
    /// only when this is empty: a failed revert changes nothing).
    pub failed: Vec<String>,
}

/// How a failed run left the working tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Undo {
    /// The changes are still there.
    Kept(Kept),
    /// `--revert-on-failure` put the files back.
    Reverted(Reverted),
}

/// `path` as a pathspec git takes literally (`:(literal)` when it holds
/// wildcard characters or starts with `:`).
fn literal_pathspec(path: &str) -> String {
    if path.starts_with(':') || path.contains(['*', '?', '[', '\\']) {
        format!(":(literal){path}")
    } else {
        path.to_owned()
    }
}

/// `word` quoted for a POSIX shell when it needs to be.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+@%=:,".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_quote_for_the_shell_and_keep_paths_literal() {
        let kept = Kept {
            files: vec![
                ("docs/it's.md".into(), Way::Restore),
                ("new file.txt".into(), Way::Remove),
                ("src/[x].rs".into(), Way::Restore),
                ("src/a.rs".into(), Way::Restore),
                ("src/b.rs".into(), Way::NotInGit),
            ],
        };
        assert_eq!(
            kept.commands(),
            [
                "git restore --source=HEAD --worktree -- 'docs/it'\\''s.md' ':(literal)src/[x].rs' src/a.rs",
                "rm -- 'new file.txt'",
            ]
        );
        assert_eq!(kept.by(Way::NotInGit), ["src/b.rs"]);
        assert!(Kept::default().commands().is_empty());
    }
}
