//! The evidence a commit message is written from, gathered before the first
//! model call (spec 004 §6); [`crate::render`] renders it as prompt data
//! ([`render`] is re-exported here).
//!
//! Normal mode ([`Mode::Staged`]): the staged paths with status and statistics,
//! status diagnostics (paths with unstaged changes too), lockfile summaries,
//! submodule moves with their commit summaries, the staged diff fitted into the
//! budget ([`git_evidence::fit`]: every hand-written file gets its share), a focus diff
//! for the most changed files the budget cut, recent commit subjects as style
//! reference, and the previous HEAD commit as contrast when it is small: its
//! hand-written diff whole in [`SMALL_CONTRAST_BYTES`] ([`Prepared::contrast`];
//! a larger one is noise next to the staged change, and the model can still
//! read it with `git_head_show` and `git_diff_against_parent`).
//!
//! Amend mode ([`Mode::Amend`]): the original HEAD message (the anchor), HEAD's
//! metadata, HEAD against its first parent, the staged changes as diagnostics,
//! recent style commits, and — authoritative — the final amended result (the
//! index) against HEAD's first parent, fitted like the staged diff.
//!
//! Lockfiles are summarized as package version changes and generated files as
//! statistics ([`git_evidence::classify`]); they are never hidden: every changed path is
//! in the path list whatever happens to its diff text.

use std::fmt::Write as _;

use commit_text::TaskId;
use gitctx::{DiffOptions, DiffTarget, FileDiff, FileStatus, Head, ObjectId, Repo};
use lockfile_diff::{self as lockfile, LockSummary};

use git_evidence::Error;
use git_evidence::classify::{Class, classify};
use git_evidence::fit::{self, Fitted};

pub use crate::render::render;
pub use git_evidence::render::data;

/// Which commit message is being written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A new commit from the staged changes.
    Staged,
    /// The final message of `git commit --amend`.
    Amend,
}

impl Mode {
    /// `staged` or `amend`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Staged => "staged",
            Mode::Amend => "amend",
        }
    }
}

/// Normal mode shows the previous HEAD commit as contrast only when its
/// hand-written diff fits whole in this many bytes: 2 KiB. Amend mode always
/// shows HEAD (the commit being amended), fitted into
/// [`Limits::contrast_bytes`].
pub(crate) const SMALL_CONTRAST_BYTES: usize = 2 * 1024;

/// Sizes of the prepared context. The defaults keep the whole first request
/// (instructions, tools, guidance and this context) under 96 KiB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The whole rendered context, diff included.
    pub context_bytes: usize,
    /// Of that, at most this much for the focus diff.
    pub focus_bytes: usize,
    /// Amend mode: HEAD against its parent. (Normal mode's contrast, the
    /// previous HEAD, is shown only when small: [`SMALL_CONTRAST_BYTES`].)
    pub contrast_bytes: usize,
    /// Amend mode: the staged diff shown as diagnostics.
    pub staged_diagnostics_bytes: usize,
    /// Paths listed one by one; beyond this they are counted per directory.
    pub listed_paths: usize,
    /// Packages named per lockfile.
    pub lock_entries: usize,
    /// Recent commit subjects given as style reference.
    pub recent_commits: usize,
    /// Commit summaries per moved submodule.
    pub submodule_commits: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            context_bytes: 56 * 1024,
            focus_bytes: 8 * 1024,
            contrast_bytes: 6 * 1024,
            staged_diagnostics_bytes: 6 * 1024,
            listed_paths: 1000,
            lock_entries: 40,
            recent_commits: 10,
            submodule_commits: 20,
        }
    }
}

/// One changed path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathEntry {
    pub path: String,
    /// The old path of a rename or copy.
    pub old_path: Option<String>,
    /// `A`, `M`, `D`, `R`, `C` or `T`.
    pub status: char,
    pub additions: u32,
    pub deletions: u32,
    pub class: Class,
}

/// A submodule whose recorded commit moved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubmoduleMove {
    pub path: String,
    pub old: Option<ObjectId>,
    pub new: Option<ObjectId>,
    /// `subject` of each commit `old..new`, newest first, when the submodule is
    /// checked out and has both commits.
    pub commits: Vec<String>,
    /// Commits beyond the listed ones.
    pub more: usize,
    /// Why there are no summaries (not checked out, commits missing, moved back).
    pub note: Option<String>,
}

/// One set of changes as evidence: the paths, the summaries, the fitted diff.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    pub paths: Vec<PathEntry>,
    pub additions: u32,
    pub deletions: u32,
    pub lockfiles: Vec<LockSummary>,
    pub submodules: Vec<SubmoduleMove>,
    /// The diff of the hand-written files, fitted.
    pub diff: Fitted,
    /// More of the most changed files the fitted diff cut.
    pub focus: Option<String>,
    /// Small generated files' diffs, when the budget had room left.
    pub generated_diff: Option<String>,
}

impl Changes {
    /// True when every changed path is a lockfile.
    pub fn lockfile_only(&self) -> bool {
        !self.paths.is_empty()
            && self
                .paths
                .iter()
                .all(|p| matches!(p.class, Class::Lockfile(_)))
    }

    /// The paths, in order.
    pub fn path_names(&self) -> Vec<String> {
        self.paths.iter().map(|p| p.path.clone()).collect()
    }
}

/// A commit, briefly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitBrief {
    pub id: ObjectId,
    pub subject: String,
    pub author: String,
    /// `YYYY-MM-DD`.
    pub date: String,
}

/// A commit shown as contrast (normal mode) or as the commit being amended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeadCommit {
    pub brief: CommitBrief,
    /// The full message.
    pub message: String,
    pub parents: usize,
    /// Its paths against its first parent (statistics always complete).
    pub paths: Vec<PathEntry>,
    /// Its diff, fitted into the contrast budget.
    pub diff: Fitted,
}

/// Staged paths that are not the whole story (amend diagnostics, and normal-mode
/// status notes).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StagedDiagnostics {
    /// Staged paths (amend mode: what the amend adds to HEAD).
    pub paths: Vec<PathEntry>,
    /// Staged paths that have further, unstaged changes.
    pub partially_staged: Vec<String>,
    /// Untracked files (not part of any commit).
    pub untracked: usize,
    /// Amend mode: the staged diff against HEAD, fitted.
    pub diff: Option<Fitted>,
}

/// Everything prepared before the first model call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    pub mode: Mode,
    /// The branch, `None` when HEAD is detached.
    pub branch: Option<String>,
    /// No commit yet on this branch.
    pub unborn: bool,
    /// Normal mode: the staged changes. Amend mode: the final amended result
    /// against HEAD's first parent.
    pub changes: Changes,
    /// Normal mode: HEAD, the previous commit, its diff fitted into
    /// [`SMALL_CONTRAST_BYTES`] (shown as contrast only when whole there: see
    /// [`Prepared::contrast`]). Amend mode: HEAD, the commit being amended.
    pub head: Option<HeadCommit>,
    pub staged: StagedDiagnostics,
    pub recent: Vec<CommitBrief>,
    /// A task ID from the branch name, when recent subjects end with task IDs.
    pub task_id: Option<TaskId>,
}

impl Prepared {
    /// The paths guidance is resolved for: the staged paths (normal) or the final
    /// amended paths (amend); old paths of renames included.
    pub fn target_paths(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for p in &self.changes.paths {
            out.push(p.path.clone());
            if let Some(old) = &p.old_path {
                out.push(old.clone());
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// The HEAD commit the prompt shows: in amend mode the commit being
    /// amended; in normal mode the previous commit as contrast, only when its
    /// hand-written diff is whole within [`SMALL_CONTRAST_BYTES`] (a larger
    /// one is noise next to the staged change).
    pub fn contrast(&self) -> Option<&HeadCommit> {
        let head = self.head.as_ref()?;
        match self.mode {
            Mode::Amend => Some(head),
            Mode::Staged => head.diff.is_complete().then_some(head),
        }
    }

    /// The original message being amended.
    pub fn original_message(&self) -> Option<&str> {
        match self.mode {
            Mode::Amend => self.head.as_ref().map(|h| h.message.as_str()),
            Mode::Staged => None,
        }
    }
}

/// The tool that reads more of the main diff in each mode.
fn diff_tool(mode: Mode) -> &'static str {
    match mode {
        Mode::Staged => "git_staged_diff_for_paths",
        Mode::Amend => "git_final_amended_diff",
    }
}

/// Prepares the context for `mode` from the repository's index and history.
pub fn prepare(repo: &Repo, mode: Mode, limits: &Limits) -> Result<Prepared, Error> {
    let head = repo.head()?;
    let head_id = head.commit();
    if mode == Mode::Amend && head_id.is_none() {
        return Err(Error::NothingToAmend);
    }
    let status = repo.status(true)?;
    let partially_staged: Vec<String> = status
        .iter()
        .filter(|e| e.partially_staged())
        .map(|e| e.path.clone())
        .collect();
    let untracked = status.iter().filter(|e| e.worktree == Some('?')).count();

    let staged_diff = repo.diff(DiffTarget::Staged, &DiffOptions::default())?;
    if mode == Mode::Staged && staged_diff.files.is_empty() {
        return Err(Error::NothingStaged);
    }
    let recent_from = match (mode, head_id) {
        (_, None) => None,
        (Mode::Staged, Some(id)) => Some(id.to_hex()),
        (Mode::Amend, Some(id)) => {
            let info = repo.commit_info_by_id(id)?;
            info.parents.first().map(|p| p.to_hex())
        }
    };
    let recent = match &recent_from {
        Some(rev) => recent_commits(repo, rev, limits.recent_commits)?,
        None => Vec::new(),
    };
    let task_id = branch_task_id(head.branch(), &recent);

    let mut staged = StagedDiagnostics {
        paths: Vec::new(),
        partially_staged,
        untracked,
        diff: None,
    };
    let (main_diff, base, head_commit) = match mode {
        Mode::Staged => {
            let contrast = match head_id {
                Some(id) => Some(head_commit(repo, id, SMALL_CONTRAST_BYTES)?),
                None => None,
            };
            let base = head_id.map(|id| id.to_hex());
            (staged_diff, base, contrast)
        }
        Mode::Amend => {
            let id = head_id.ok_or(Error::NothingToAmend)?;
            let amended = head_commit(repo, id, limits.contrast_bytes)?;
            let parent = repo
                .commit_info_by_id(id)?
                .parents
                .first()
                .map(|p| p.to_hex());
            staged.paths = staged_diff
                .files
                .iter()
                .map(|f| path_entry(repo, f))
                .collect();
            let hand = handwritten(&staged_diff.files, &staged.paths);
            staged.diff = Some(fit::fit(
                &hand,
                limits.staged_diagnostics_bytes,
                Some("git_amend_delta"),
            ));
            let final_diff = repo.diff(
                DiffTarget::IndexAgainst(parent.as_deref()),
                &DiffOptions::default(),
            )?;
            (final_diff, parent, Some(amended))
        }
    };
    let changes = changes(repo, &main_diff, base.as_deref(), limits)?;
    let mut prepared = Prepared {
        mode,
        branch: head.branch().map(str::to_owned),
        unborn: matches!(head, Head::Unborn { .. }),
        changes,
        head: head_commit,
        staged,
        recent,
        task_id,
    };
    refit(&mut prepared, &main_diff, limits);
    Ok(prepared)
}

/// Sizes the main diff to what the rest of the context leaves of the budget.
/// `diff` is the diff `prepared.changes` was built from (same file order).
fn refit(prepared: &mut Prepared, diff: &gitctx::Diff, limits: &Limits) {
    // Measure everything but the diff sections.
    let mut probe = prepared.clone();
    probe.changes.diff = Fitted::default();
    probe.changes.focus = None;
    probe.changes.generated_diff = None;
    let rest = render(&probe).len();
    let room = limits.context_bytes.saturating_sub(rest).max(8 * 1024);
    fit_changes(
        &mut prepared.changes,
        diff,
        room,
        limits.focus_bytes,
        Some(diff_tool(prepared.mode)),
    );
}

/// Fills the diff sections of `changes` (built from `diff`, same file order)
/// within `room` bytes: the fitted hand-written diff, a focus diff of at most
/// `focus_bytes` when files were cut, and small generated diffs with what is
/// left. Cut markers name `tool` as the way to read more (none without tools).
pub(crate) fn fit_changes(
    changes: &mut Changes,
    diff: &gitctx::Diff,
    room: usize,
    focus_bytes: usize,
    tool: Option<&str>,
) {
    let hand = handwritten(&diff.files, &changes.paths);
    let first = fit::fit(&hand, room, tool);
    let (main, focus) = if first.is_complete() {
        (first, None)
    } else {
        let focus_room = focus_bytes.min(room / 4);
        let main = fit::fit(&hand, room - focus_room, tool);
        let focus = focus_text(&hand, &main, focus_room);
        (main, focus)
    };
    let used = main.text.len() + focus.as_ref().map_or(0, String::len);
    let generated_room = room.saturating_sub(used);
    changes.generated_diff = generated_text(&diff.files, &changes.paths, generated_room);
    changes.diff = main;
    changes.focus = focus;
}

/// The continuation of the most changed cut files, sharing `room`.
fn focus_text(files: &[&FileDiff], fitted: &Fitted, room: usize) -> Option<String> {
    if fitted.rest.is_empty() || room < fit::MIN_SHARE {
        return None;
    }
    let churn = |path: &str| {
        files
            .iter()
            .find(|f| f.path() == path)
            .map_or(0, |f| f.changed_lines())
    };
    let mut rest: Vec<&(String, String)> = fitted.rest.iter().collect();
    rest.sort_by(|a, b| churn(&b.0).cmp(&churn(&a.0)).then(a.0.cmp(&b.0)));
    rest.truncate(3);
    let share = room / rest.len();
    let mut out = String::new();
    for (path, tail) in rest {
        let (head, more) = fit::cut_at_line(tail, share);
        if head.is_empty() {
            continue;
        }
        let _ = writeln!(out, "--- continued: {path}");
        out.push_str(head);
        if !more.is_empty() {
            let _ = writeln!(
                out,
                "[… {} more lines of {path} not shown]",
                more.lines().count()
            );
        }
    }
    (!out.is_empty()).then_some(out)
}

/// Diffs of small generated files, smallest first, while they fit in `room`.
fn generated_text(files: &[FileDiff], paths: &[PathEntry], room: usize) -> Option<String> {
    if room < fit::MIN_SHARE {
        return None;
    }
    let mut generated: Vec<(usize, String)> = files
        .iter()
        .zip(paths)
        .filter(|(_, p)| matches!(p.class, Class::Generated(_)))
        .map(|(f, _)| {
            let text = fit::file_text(f);
            (text.len(), text)
        })
        .collect();
    generated.sort_by_key(|(len, _)| *len);
    let mut out = String::new();
    for (len, text) in generated {
        if out.len() + len > room {
            break;
        }
        out.push_str(&text);
    }
    (!out.is_empty()).then_some(out)
}

/// The hand-written files of a diff; `paths` holds their classes, in order.
pub(crate) fn handwritten<'a>(files: &'a [FileDiff], paths: &[PathEntry]) -> Vec<&'a FileDiff> {
    files
        .iter()
        .zip(paths)
        .filter(|(_, p)| p.class == Class::Handwritten)
        .map(|(f, _)| f)
        .collect()
}

fn status_letter(status: FileStatus) -> char {
    status.letter()
}

pub(crate) fn path_entry(repo: &Repo, file: &FileDiff) -> PathEntry {
    PathEntry {
        path: file.path().to_owned(),
        old_path: matches!(file.status, FileStatus::Renamed | FileStatus::Copied)
            .then(|| file.old_path.clone())
            .flatten(),
        status: status_letter(file.status),
        additions: file.additions,
        deletions: file.deletions,
        class: classify(repo, file),
    }
}

/// The evidence of one diff. `base` is the revision the diff's old side comes
/// from (`None`: the empty tree); the new side is the index.
pub(crate) fn changes(
    repo: &Repo,
    diff: &gitctx::Diff,
    base: Option<&str>,
    limits: &Limits,
) -> Result<Changes, Error> {
    changes_between(repo, diff, base, None, limits)
}

/// [`changes`] for any diff: `base` is the old side's revision (`None`: the
/// empty tree), `new` the new side's (`None`: the index).
pub(crate) fn changes_between(
    repo: &Repo,
    diff: &gitctx::Diff,
    base: Option<&str>,
    new: Option<&str>,
    limits: &Limits,
) -> Result<Changes, Error> {
    let paths: Vec<PathEntry> = diff.files.iter().map(|f| path_entry(repo, f)).collect();
    let mut lockfiles = Vec::new();
    let mut submodules = Vec::new();
    for (file, entry) in diff.files.iter().zip(&paths) {
        match &entry.class {
            Class::Lockfile(kind) => {
                let old = match (base, &file.old_path) {
                    (Some(rev), Some(old)) if file.status != FileStatus::Added => {
                        repo.file_at_opt(rev, old)?
                    }
                    _ => None,
                };
                let new_text = match (file.status, new) {
                    (FileStatus::Deleted, _) => None,
                    (_, Some(rev)) => repo.file_at_opt(rev, file.path())?,
                    (_, None) => repo.file_in_index(file.path())?,
                };
                let old = old.map(|b| String::from_utf8_lossy(&b).into_owned());
                let new = new_text.map(|b| String::from_utf8_lossy(&b).into_owned());
                lockfiles.push(lockfile::summarize(
                    file.path(),
                    *kind,
                    old.as_deref(),
                    new.as_deref(),
                ));
            }
            Class::Submodule => {
                submodules.push(submodule_move(repo, file, limits.submodule_commits));
            }
            _ => {}
        }
    }
    Ok(Changes {
        additions: diff.additions(),
        deletions: diff.deletions(),
        paths,
        lockfiles,
        submodules,
        diff: Fitted::default(),
        focus: None,
        generated_diff: None,
    })
}

fn submodule_move(repo: &Repo, file: &FileDiff, limit: usize) -> SubmoduleMove {
    let path = file.path().to_owned();
    let old = file.old_id.filter(|_| file.status != FileStatus::Added);
    let new = file.new_id.filter(|_| file.status != FileStatus::Deleted);
    let mut out = SubmoduleMove {
        path: path.clone(),
        old,
        new,
        commits: Vec::new(),
        more: 0,
        note: None,
    };
    let Some(new) = new else {
        out.note = Some("the submodule was removed".to_owned());
        return out;
    };
    let sub = match repo.open_submodule(&path) {
        Ok(Some(sub)) => sub,
        Ok(None) => {
            out.note = Some("not checked out here: no commit summaries".to_owned());
            return out;
        }
        Err(err) => {
            out.note = Some(format!("could not open it: {err}"));
            return out;
        }
    };
    let old_hex = old.map(|o| o.to_hex());
    match sub.log_range(old_hex.as_deref(), &new.to_hex(), limit + 1) {
        Ok(ids) => {
            if ids.is_empty() && old.is_some() {
                out.note = Some("moved back to an older commit".to_owned());
            }
            for id in ids.iter().take(limit) {
                if let Ok(info) = sub.commit_info_by_id(*id) {
                    out.commits.push(info.summary);
                }
            }
            if ids.len() > limit {
                // Count the rest cheaply, bounded.
                let all = sub
                    .log_range(old_hex.as_deref(), &new.to_hex(), 10_000)
                    .map_or(ids.len(), |v| v.len());
                out.more = all - limit;
            }
        }
        Err(_) => {
            out.note = Some("its commits are not in the local checkout (fetch it)".to_owned());
        }
    }
    out
}

pub(crate) fn recent_commits(
    repo: &Repo,
    rev: &str,
    limit: usize,
) -> Result<Vec<CommitBrief>, Error> {
    let ids = repo.log(rev, limit)?;
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        out.push(brief(&repo.commit_info_by_id(id)?));
    }
    Ok(out)
}

pub(crate) fn brief(info: &gitctx::CommitInfo) -> CommitBrief {
    CommitBrief {
        id: info.id,
        subject: info.summary.clone(),
        author: info.author.name.clone(),
        date: info.author.time.to_fixed().format("%Y-%m-%d").to_string(),
    }
}

pub(crate) fn head_commit(repo: &Repo, id: ObjectId, room: usize) -> Result<HeadCommit, Error> {
    let info = repo.commit_info_by_id(id)?;
    let diff = repo.diff(DiffTarget::Commit(&id.to_hex()), &DiffOptions::default())?;
    let paths: Vec<PathEntry> = diff.files.iter().map(|f| path_entry(repo, f)).collect();
    let hand = handwritten(&diff.files, &paths);
    Ok(HeadCommit {
        brief: brief(&info),
        message: info.message.clone(),
        parents: info.parents.len(),
        paths,
        diff: fit::fit(&hand, room, Some("git_diff_against_parent")),
    })
}

/// A task ID in the branch name (`feature/ABC-123-retry` → `ABC-123`), offered
/// only when the repository's recent subjects end with task IDs — the team's
/// convention — in the style the newest of them uses.
fn branch_task_id(branch: Option<&str>, recent: &[CommitBrief]) -> Option<TaskId> {
    let branch = branch?;
    let suffixes: Vec<TaskId> = recent
        .iter()
        .filter_map(|c| commit_text::task_id_suffix(&c.subject))
        .filter(|t| !t.id.starts_with('#'))
        .collect();
    if suffixes.len() < 2 {
        return None;
    }
    let id = find_task_id(branch)?;
    let style = &suffixes[0];
    let suffix = style.suffix.replacen(&style.id, &id, 1);
    Some(TaskId { id, suffix })
}

/// The first `ABC-123` in a branch name (case-insensitive, upper-cased).
fn find_task_id(branch: &str) -> Option<String> {
    let upper = branch.to_ascii_uppercase();
    let bytes = upper.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
        if starts_word && bytes[i].is_ascii_alphabetic() {
            let mut j = i;
            while j < bytes.len() && bytes[j].is_ascii_alphanumeric() {
                j += 1;
            }
            if j - i >= 2 && j < bytes.len() && bytes[j] == b'-' {
                let mut k = j + 1;
                while k < bytes.len() && bytes[k].is_ascii_digit() {
                    k += 1;
                }
                // `release-1.2` is a version, not a task.
                let version =
                    k + 1 < bytes.len() && bytes[k] == b'.' && bytes[k + 1].is_ascii_digit();
                let ends_word = (k == bytes.len() || !bytes[k].is_ascii_alphanumeric()) && !version;
                if k > j + 1 && ends_word {
                    return Some(upper[i..k].to_owned());
                }
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_ids_in_branch_names() {
        assert_eq!(
            find_task_id("feature/ABC-123-retry").as_deref(),
            Some("ABC-123")
        );
        assert_eq!(find_task_id("abc-42").as_deref(), Some("ABC-42"));
        assert_eq!(find_task_id("fix/proj2-7_x").as_deref(), Some("PROJ2-7"));
        assert_eq!(find_task_id("main"), None);
        assert_eq!(find_task_id("release-1.2"), None);
        assert_eq!(find_task_id("a-1"), None);
        assert_eq!(find_task_id("x/abc-12x"), None);
    }
}
