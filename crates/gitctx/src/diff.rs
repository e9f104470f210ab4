//! Typed diffs: a commit against its first parent, the staged changes, or any two
//! revisions, optionally limited to some paths.
//!
//! Paths are repository-relative with `/` separators; bytes that are not UTF-8 are
//! replaced (lossy), as are line contents.

use std::fmt::Write as _;

use crate::error::{Result, git};
use crate::oid::ObjectId;
use crate::repo::{GITLINK_MODE, Repo};

/// What to compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffTarget<'a> {
    /// A commit against its first parent (a root commit against the empty tree).
    Commit(&'a str),
    /// The index against HEAD (against the empty tree when HEAD is unborn).
    Staged,
    /// The tree of `from` against the tree of `to`.
    Range { from: &'a str, to: &'a str },
    /// The index against the tree of a commit (`None`: the empty tree) — e.g. what
    /// `git commit --amend` would record, against HEAD's first parent.
    IndexAgainst(Option<&'a str>),
}

/// How to diff. `Default` is what `git diff` does: 3 context lines, renames found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffOptions {
    /// Only these paths (files, or directories and everything below). Literal, never
    /// globs. Empty means every path.
    pub paths: Vec<String>,
    /// Unchanged lines kept around each change.
    pub context_lines: u32,
    /// Pair deletions with additions of similar content as renames.
    pub detect_renames: bool,
    /// Keep hunks and lines. When false only file-level facts and line counts are
    /// filled in (cheaper for numstat-like summaries).
    pub hunks: bool,
}

impl Default for DiffOptions {
    fn default() -> Self {
        DiffOptions {
            paths: Vec::new(),
            context_lines: 3,
            detect_renames: true,
            hunks: true,
        }
    }
}

impl DiffOptions {
    /// Default options limited to `paths`.
    pub fn for_paths<I, S>(paths: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        DiffOptions {
            paths: paths.into_iter().map(Into::into).collect(),
            ..DiffOptions::default()
        }
    }
}

/// A whole diff.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diff {
    pub files: Vec<FileDiff>,
}

/// How a file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileStatus {
    Added,
    Deleted,
    Modified,
    Renamed,
    Copied,
    /// E.g. a file became a symlink.
    TypeChanged,
}

impl FileStatus {
    /// The one-letter code of `git diff --name-status`.
    pub fn letter(self) -> char {
        match self {
            FileStatus::Added => 'A',
            FileStatus::Deleted => 'D',
            FileStatus::Modified => 'M',
            FileStatus::Renamed => 'R',
            FileStatus::Copied => 'C',
            FileStatus::TypeChanged => 'T',
        }
    }
}

/// The kind of a tree entry on one side of a diff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileMode {
    Regular,
    Executable,
    Symlink,
    /// A gitlink: a submodule's commit.
    Submodule,
    Other(u32),
}

impl FileMode {
    fn from_raw(mode: u32) -> Option<FileMode> {
        match mode {
            0 => None,
            0o100644 => Some(FileMode::Regular),
            0o100755 => Some(FileMode::Executable),
            0o120000 => Some(FileMode::Symlink),
            GITLINK_MODE => Some(FileMode::Submodule),
            other => Some(FileMode::Other(other)),
        }
    }

    /// The octal mode git prints.
    pub(crate) fn octal(self) -> u32 {
        match self {
            FileMode::Regular => 0o100644,
            FileMode::Executable => 0o100755,
            FileMode::Symlink => 0o120000,
            FileMode::Submodule => GITLINK_MODE,
            FileMode::Other(mode) => mode,
        }
    }
}

/// One file's change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    /// The path before (absent for an added file).
    pub old_path: Option<String>,
    /// The path after (absent for a deleted file).
    pub new_path: Option<String>,
    pub status: FileStatus,
    /// git considers the content binary: no hunks, no line counts.
    pub binary: bool,
    pub old_mode: Option<FileMode>,
    pub new_mode: Option<FileMode>,
    pub old_id: Option<ObjectId>,
    pub new_id: Option<ObjectId>,
    pub additions: u32,
    pub deletions: u32,
    pub hunks: Vec<Hunk>,
}

impl FileDiff {
    /// The path the file has after the change (before it, for a deletion).
    pub fn path(&self) -> &str {
        self.new_path
            .as_deref()
            .or(self.old_path.as_deref())
            .unwrap_or_default()
    }

    /// True when either side is a submodule gitlink.
    pub fn is_submodule(&self) -> bool {
        self.old_mode == Some(FileMode::Submodule) || self.new_mode == Some(FileMode::Submodule)
    }

    /// Added plus deleted lines.
    pub fn changed_lines(&self) -> u32 {
        self.additions + self.deletions
    }
}

/// A hunk: one `@@` block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    pub old_start: u32,
    pub old_lines: u32,
    pub new_start: u32,
    pub new_lines: u32,
    /// The text after the closing `@@` (usually the enclosing function), trimmed.
    pub header: String,
    pub lines: Vec<DiffLine>,
}

/// Whether a line is kept, added or removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    Context,
    Added,
    Removed,
}

impl LineKind {
    /// The unified-diff prefix character.
    pub fn prefix(self) -> char {
        match self {
            LineKind::Context => ' ',
            LineKind::Added => '+',
            LineKind::Removed => '-',
        }
    }
}

/// One line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffLine {
    pub kind: LineKind,
    /// 1-based line number in the old file (absent for added lines).
    pub old_lineno: Option<u32>,
    /// 1-based line number in the new file (absent for removed lines).
    pub new_lineno: Option<u32>,
    /// The text without its line terminator.
    pub content: String,
    /// This is the last line of its file and has no newline at the end.
    pub missing_newline: bool,
}

/// `git diff --numstat` for one file: line counts are `None` for binary files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NumStat {
    pub path: String,
    pub old_path: Option<String>,
    pub additions: Option<u32>,
    pub deletions: Option<u32>,
}

impl Diff {
    /// Total added lines.
    pub fn additions(&self) -> u32 {
        self.files.iter().map(|f| f.additions).sum()
    }

    /// Total deleted lines.
    pub fn deletions(&self) -> u32 {
        self.files.iter().map(|f| f.deletions).sum()
    }

    /// The file whose new (or old) path is `path`.
    pub fn file(&self, path: &str) -> Option<&FileDiff> {
        self.files
            .iter()
            .find(|f| f.new_path.as_deref() == Some(path) || f.old_path.as_deref() == Some(path))
    }

    /// The numstat rows, in diff order. Renamed files report the new path and keep
    /// the old one in `old_path`.
    pub fn numstat(&self) -> Vec<NumStat> {
        self.files
            .iter()
            .map(|f| NumStat {
                path: f.path().to_owned(),
                old_path: match f.status {
                    FileStatus::Renamed | FileStatus::Copied => f.old_path.clone(),
                    _ => None,
                },
                additions: (!f.binary).then_some(f.additions),
                deletions: (!f.binary).then_some(f.deletions),
            })
            .collect()
    }

    /// The diff as unified-diff text, in the shape `git diff` prints (paths are not
    /// C-quoted).
    pub fn to_unified(&self) -> String {
        let mut out = String::new();
        for file in &self.files {
            file.write_unified(&mut out);
        }
        out
    }
}

impl FileDiff {
    /// Appends this file's unified diff to `out`.
    pub fn write_unified(&self, out: &mut String) {
        let old = self.old_path.as_deref().unwrap_or(self.path());
        let new = self.new_path.as_deref().unwrap_or(self.path());
        let _ = writeln!(out, "diff --git a/{old} b/{new}");
        match self.status {
            FileStatus::Added => {
                if let Some(mode) = self.new_mode {
                    let _ = writeln!(out, "new file mode {:o}", mode.octal());
                }
            }
            FileStatus::Deleted => {
                if let Some(mode) = self.old_mode {
                    let _ = writeln!(out, "deleted file mode {:o}", mode.octal());
                }
            }
            FileStatus::Renamed | FileStatus::Copied => {
                let verb = if self.status == FileStatus::Renamed {
                    "rename"
                } else {
                    "copy"
                };
                let _ = writeln!(out, "{verb} from {old}");
                let _ = writeln!(out, "{verb} to {new}");
            }
            FileStatus::Modified | FileStatus::TypeChanged => {}
        }
        if let (Some(a), Some(b)) = (self.old_mode, self.new_mode)
            && a != b
        {
            let _ = writeln!(out, "old mode {:o}", a.octal());
            let _ = writeln!(out, "new mode {:o}", b.octal());
        }
        let from = match self.status {
            FileStatus::Added => "/dev/null".to_owned(),
            _ => format!("a/{old}"),
        };
        let to = match self.status {
            FileStatus::Deleted => "/dev/null".to_owned(),
            _ => format!("b/{new}"),
        };
        if self.binary {
            let _ = writeln!(out, "Binary files {from} and {to} differ");
            return;
        }
        if self.hunks.is_empty() {
            return;
        }
        let _ = writeln!(out, "--- {from}");
        let _ = writeln!(out, "+++ {to}");
        for hunk in &self.hunks {
            let _ = write!(
                out,
                "@@ -{} +{} @@",
                range_text(hunk.old_start, hunk.old_lines),
                range_text(hunk.new_start, hunk.new_lines)
            );
            if !hunk.header.is_empty() {
                let _ = write!(out, " {}", hunk.header);
            }
            out.push('\n');
            for line in &hunk.lines {
                out.push(line.kind.prefix());
                out.push_str(&line.content);
                out.push('\n');
                if line.missing_newline {
                    out.push_str("\\ No newline at end of file\n");
                }
            }
        }
    }
}

fn tree_of<'r>(commit: &git2::Commit<'r>) -> Result<git2::Tree<'r>> {
    commit.tree().map_err(git("reading a tree"))
}

fn range_text(start: u32, lines: u32) -> String {
    if lines == 1 {
        start.to_string()
    } else {
        format!("{start},{lines}")
    }
}

impl Repo {
    /// Diffs `target` with `options`.
    pub fn diff(&self, target: DiffTarget<'_>, options: &DiffOptions) -> Result<Diff> {
        let mut opts = git_options(options);
        let repo = &self.inner;
        let mut diff = match target {
            DiffTarget::Commit(rev) => {
                let commit = self.find_commit(rev)?;
                let new = tree_of(&commit)?;
                let old = commit.parents().next().map(|p| tree_of(&p)).transpose()?;
                repo.diff_tree_to_tree(old.as_ref(), Some(&new), Some(&mut opts))
                    .map_err(git("diffing a commit"))?
            }
            DiffTarget::Staged => {
                let head = self.head()?.commit();
                let head = head.map(|id| self.find_commit_id(id)).transpose()?;
                self.diff_index_against(head.as_ref(), &mut opts)?
            }
            DiffTarget::IndexAgainst(base) => {
                let old = base.map(|rev| self.find_commit(rev)).transpose()?;
                self.diff_index_against(old.as_ref(), &mut opts)?
            }
            DiffTarget::Range { from, to } => {
                let old = tree_of(&self.find_commit(from)?)?;
                let new = tree_of(&self.find_commit(to)?)?;
                repo.diff_tree_to_tree(Some(&old), Some(&new), Some(&mut opts))
                    .map_err(git("diffing two revisions"))?
            }
        };
        if options.detect_renames {
            let mut find = git2::DiffFindOptions::new();
            find.renames(true);
            diff.find_similar(Some(&mut find))
                .map_err(git("finding renames"))?;
        }
        convert(&diff, options.hunks)
    }

    /// The index against `commit`'s tree (the empty tree without one).
    fn diff_index_against(
        &self,
        commit: Option<&git2::Commit<'_>>,
        opts: &mut git2::DiffOptions,
    ) -> Result<git2::Diff<'_>> {
        let old = commit.map(tree_of).transpose()?;
        let index = self.index()?;
        self.inner
            .diff_tree_to_index(old.as_ref(), Some(&index), Some(opts))
            .map_err(git("diffing the index"))
    }

    /// Shorthand for [`DiffTarget::Commit`].
    pub fn diff_commit(&self, rev: &str, options: &DiffOptions) -> Result<Diff> {
        self.diff(DiffTarget::Commit(rev), options)
    }

    /// Shorthand for [`DiffTarget::Staged`].
    pub fn diff_staged(&self, options: &DiffOptions) -> Result<Diff> {
        self.diff(DiffTarget::Staged, options)
    }

    /// Shorthand for [`DiffTarget::Range`].
    pub fn diff_revs(&self, from: &str, to: &str, options: &DiffOptions) -> Result<Diff> {
        self.diff(DiffTarget::Range { from, to }, options)
    }

    /// `git diff --numstat` for `target`: per-file added/deleted line counts.
    pub fn numstat(&self, target: DiffTarget<'_>, paths: &[String]) -> Result<Vec<NumStat>> {
        let options = DiffOptions {
            paths: paths.to_vec(),
            hunks: false,
            ..DiffOptions::default()
        };
        Ok(self.diff(target, &options)?.numstat())
    }
}

fn git_options(options: &DiffOptions) -> git2::DiffOptions {
    let mut opts = git2::DiffOptions::new();
    opts.context_lines(options.context_lines)
        .include_typechange(true)
        .disable_pathspec_match(true);
    for path in &options.paths {
        opts.pathspec(path.trim_end_matches('/'));
    }
    opts
}

fn convert(diff: &git2::Diff<'_>, with_hunks: bool) -> Result<Diff> {
    let mut files = Vec::with_capacity(diff.deltas().len());
    for idx in 0..diff.deltas().len() {
        let patch = git2::Patch::from_diff(diff, idx).map_err(git("building a patch"))?;
        let delta = match &patch {
            Some(patch) => patch.delta(),
            None => diff.get_delta(idx).expect("index is below the delta count"),
        };
        let status = match delta.status() {
            git2::Delta::Added | git2::Delta::Untracked => FileStatus::Added,
            git2::Delta::Deleted => FileStatus::Deleted,
            git2::Delta::Renamed => FileStatus::Renamed,
            git2::Delta::Copied => FileStatus::Copied,
            git2::Delta::Typechange => FileStatus::TypeChanged,
            _ => FileStatus::Modified,
        };
        let old_file = delta.old_file();
        let new_file = delta.new_file();
        let old_path = (status != FileStatus::Added)
            .then(|| old_file.path_bytes().map(lossy))
            .flatten();
        let new_path = (status != FileStatus::Deleted)
            .then(|| new_file.path_bytes().map(lossy))
            .flatten();
        let id = |f: &git2::DiffFile<'_>| {
            let id = ObjectId::from_git(f.id());
            (!id.is_zero()).then_some(id)
        };
        let mut file = FileDiff {
            old_path,
            new_path,
            status,
            binary: delta.flags().is_binary(),
            old_mode: FileMode::from_raw(u32::from(old_file.mode())),
            new_mode: FileMode::from_raw(u32::from(new_file.mode())),
            old_id: id(&old_file),
            new_id: id(&new_file),
            additions: 0,
            deletions: 0,
            hunks: Vec::new(),
        };
        if status == FileStatus::Added {
            file.old_mode = None;
        }
        if status == FileStatus::Deleted {
            file.new_mode = None;
        }
        if let Some(patch) = patch
            && !file.binary
        {
            let (_, additions, deletions) = patch.line_stats().map_err(git("counting lines"))?;
            file.additions = to_u32(additions);
            file.deletions = to_u32(deletions);
            if with_hunks {
                file.hunks = hunks(&patch)?;
            }
        }
        files.push(file);
    }
    Ok(Diff { files })
}

fn hunks(patch: &git2::Patch<'_>) -> Result<Vec<Hunk>> {
    let mut out = Vec::with_capacity(patch.num_hunks());
    for h in 0..patch.num_hunks() {
        let (hunk, line_count) = patch.hunk(h).map_err(git("reading a hunk"))?;
        let mut lines: Vec<DiffLine> = Vec::with_capacity(line_count);
        for l in 0..line_count {
            let line = patch.line_in_hunk(h, l).map_err(git("reading a line"))?;
            let kind = match line.origin() {
                ' ' => LineKind::Context,
                '+' => LineKind::Added,
                '-' => LineKind::Removed,
                // '=', '>' and '<' say the line before has no newline at end of file.
                _ => {
                    if let Some(last) = lines.last_mut() {
                        last.missing_newline = true;
                    }
                    continue;
                }
            };
            let mut content = line.content();
            if let Some(stripped) = content.strip_suffix(b"\n") {
                content = stripped;
            }
            lines.push(DiffLine {
                kind,
                old_lineno: line.old_lineno(),
                new_lineno: line.new_lineno(),
                content: lossy(content),
                missing_newline: false,
            });
        }
        out.push(Hunk {
            old_start: hunk.old_start(),
            old_lines: hunk.old_lines(),
            new_start: hunk.new_start(),
            new_lines: hunk.new_lines(),
            header: hunk_header_context(hunk.header()),
            lines,
        });
    }
    Ok(out)
}

/// `@@ -1,2 +1,3 @@ fn main() {` → `fn main() {`.
fn hunk_header_context(header: &[u8]) -> String {
    let text = lossy(header);
    let after = text
        .strip_prefix("@@")
        .and_then(|rest| rest.find("@@").map(|i| &rest[i + 2..]))
        .unwrap_or("");
    after.trim().to_owned()
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunk_context_is_extracted() {
        assert_eq!(
            hunk_header_context(b"@@ -1,2 +1,3 @@ fn main() {\n"),
            "fn main() {"
        );
        assert_eq!(hunk_header_context(b"@@ -1 +1 @@\n"), "");
    }

    #[test]
    fn unified_text_of_a_small_change() {
        let diff = Diff {
            files: vec![FileDiff {
                old_path: Some("a.txt".into()),
                new_path: Some("a.txt".into()),
                status: FileStatus::Modified,
                binary: false,
                old_mode: Some(FileMode::Regular),
                new_mode: Some(FileMode::Regular),
                old_id: None,
                new_id: None,
                additions: 1,
                deletions: 1,
                hunks: vec![Hunk {
                    old_start: 1,
                    old_lines: 1,
                    new_start: 1,
                    new_lines: 1,
                    header: String::new(),
                    lines: vec![
                        DiffLine {
                            kind: LineKind::Removed,
                            old_lineno: Some(1),
                            new_lineno: None,
                            content: "old".into(),
                            missing_newline: false,
                        },
                        DiffLine {
                            kind: LineKind::Added,
                            old_lineno: None,
                            new_lineno: Some(1),
                            content: "new".into(),
                            missing_newline: true,
                        },
                    ],
                }],
            }],
        };
        assert_eq!(
            diff.to_unified(),
            "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new\n\\ No newline at end of file\n"
        );
    }
}
