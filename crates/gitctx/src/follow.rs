//! A file's history across renames: the commits that changed it, newest
//! first, each with the file's path at that commit (`git log --follow`).

use crate::command::GitCommand;
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
    /// following renames (git's rename detection, `git log --follow`); at most
    /// `limit`. Merges are listed only when they changed the file against
    /// their first parent. One `git log` process.
    pub fn follow_file(&self, rev: &str, path: &str, limit: usize) -> Result<Vec<FileChange>> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let start = self.resolve_commit(rev)?;
        let cmd = self.log_files(
            start,
            limit,
            &["--follow", "--first-parent", "--name-status"],
            [path],
        );
        let output = cmd.run()?;
        parse(&output.stdout).map_err(|reason| Error::Parse {
            args: cmd.display_args(),
            reason,
        })
    }
}

impl Repo {
    /// `git log` from `start` restricted to `paths`: each commit as `\0<sha>`
    /// and then the files it changed, NUL-separated (`-z`), listed as
    /// `options` say (`--name-only`, `--name-status`, …); at most `limit`
    /// commits; no textconv, external diff or signature check.
    pub(crate) fn log_files<S: AsRef<std::ffi::OsStr>>(
        &self,
        start: ObjectId,
        limit: usize,
        options: &[&str],
        paths: impl IntoIterator<Item = S>,
    ) -> GitCommand {
        self.git()
            .config("core.quotePath", "false")
            .args([
                "log",
                "--no-textconv",
                "--no-ext-diff",
                "--no-show-signature",
                "--format=%x00%H",
                "-z",
            ])
            .args(options)
            .arg(format!("--max-count={limit}"))
            .arg(start.to_hex())
            .arg("--")
            .args(paths)
    }
}

/// `\0<sha>\0\n<status>\0<path>[\0<path>]\0\0<sha>…`: an empty field ends a
/// commit; a status `R…`/`C…` is followed by two paths (from, to).
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
        // Its changed file, if the commit shows one (a merge may not).
        let Some(status) = fields.next_if(|f| !f.is_empty()) else {
            continue;
        };
        let status = String::from_utf8_lossy(status).trim().to_owned();
        let first = fields
            .next()
            .map(|f| String::from_utf8_lossy(f).into_owned());
        let (path, from) = if status.starts_with('R') || status.starts_with('C') {
            let second = fields
                .next()
                .map(|f| String::from_utf8_lossy(f).into_owned());
            (second, first)
        } else {
            (first, None)
        };
        let path = path.ok_or_else(|| format!("no path after status {status:?}"))?;
        out.push(FileChange { commit, path, from });
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
        let changes = parse(raw.as_bytes()).unwrap();
        let got: Vec<(String, String, Option<String>)> = changes
            .into_iter()
            .map(|c| (c.commit.to_hex(), c.path, c.from))
            .collect();
        assert_eq!(
            got,
            [
                (a, "new.rs".to_owned(), None),
                (b, "new.rs".to_owned(), Some("old.rs".to_owned())),
                (c, "old.rs".to_owned(), None),
            ]
        );
        assert!(parse(b"\0not-a-sha\0").is_err());
        assert!(parse(b"").unwrap().is_empty());
    }
}
