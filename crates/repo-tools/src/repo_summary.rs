//! `repo_summary`: a one-call overview of the workspace's repository — root, HEAD,
//! `origin/HEAD`, latest semver tag, tracked-file counts by top-level directory and
//! by extension, top-level entries, recent commits, and whether there are
//! submodules (`.gitmodules`).
//!
//! Everything is read in-process through `gitctx` (libgit2); no git process runs.
//! Counts and entries describe the workspace (which may be a subdirectory of the
//! working tree); each list is capped, and the first list that was cut is named in
//! the truncation.
//!
//! No file is read and no link is followed: counts come from the index,
//! top-level entries are listed as they are on disk (a symlink as `symlink`, a
//! FIFO as `other`), and `.gitmodules` counts only as a regular file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use agent::schema::Schema;
use agent::{NoArgs, ToolFailure, ToolLimits, ToolOutput, Truncation, TruncationLimit};
use gitctx::Head;
use serde_json::{Value, json};

use crate::workspace::{RepoView, git_failure};

/// The tool name.
pub(crate) const NAME: &str = "repo_summary";

/// The tool description.
pub(crate) const DESCRIPTION: &str = "Summarizes the workspace's git repository: root, HEAD (branch or detached commit with its subject), origin/HEAD, latest semver tag, tracked-file counts by top-level directory and by extension, top-level entries, the 5 most recent commits, and whether .gitmodules exists. Takes no arguments.";

/// Recent commits listed.
pub(crate) const RECENT_COMMITS: usize = 5;

/// Entries per list (counts by directory, by extension, top-level entries); never
/// more than the registry's `max_entries`. A summary stays small; `list_files`
/// gives the detail.
pub(crate) const SUMMARY_ENTRIES: usize = 50;

/// `repo_summary` takes no arguments.
pub(crate) type Args = NoArgs;

/// The argument schema: an empty object.
pub(crate) fn schema() -> Schema {
    Schema::object()
}

/// Runs `repo_summary` over the workspace at `root`.
pub(crate) fn run(root: &Path, _: Args, limits: &ToolLimits) -> Result<ToolOutput, ToolFailure> {
    let view = RepoView::open(root)?;
    let repo = &view.repo;
    let cap = SUMMARY_ENTRIES.min(limits.max_entries);
    let mut cut: Option<Truncation> = None;
    // `total` is the length of the whole list, of which `items` may hold only
    // the start.
    let mut capped = |name: &str, mut items: Vec<Value>, total: usize| -> Vec<Value> {
        if total > cap {
            if cut.is_none() {
                cut = Some(Truncation {
                    limit: TruncationLimit::Entries,
                    max: cap,
                    total: Some(total),
                    shown: cap,
                    hint: format!(
                        "{name} lists the first {cap} of {total}; use list_files with a path prefix for the rest"
                    ),
                });
            }
            items.truncate(cap);
        }
        items
    };

    let head = repo.head().map_err(git_failure)?;
    let head_commit = match head.commit() {
        Some(id) => Some(repo.commit_info_by_id(id).map_err(git_failure)?),
        None => None,
    };
    let head_value = json!({
        "branch": head.branch(),
        "detached": matches!(head, Head::Detached { .. }),
        "unborn": matches!(head, Head::Unborn { .. }),
        "commit": head_commit.as_ref().map(|c| c.id.short()),
        "subject": head_commit.as_ref().map(|c| c.summary.clone()),
    });
    let origin_head = repo
        .origin_head()
        .map_err(git_failure)?
        .map(|remote| remote.shorthand);
    let (latest_tag, recent) = if head.commit().is_some() {
        let tag = repo
            .latest_semver_tag("HEAD")
            .map_err(git_failure)?
            .map(|tag| tag.tag.name);
        let mut recent = Vec::new();
        for id in repo.log("HEAD", RECENT_COMMITS).map_err(git_failure)? {
            let info = repo.commit_info_by_id(id).map_err(git_failure)?;
            recent.push(json!({"commit": id.short(), "subject": info.summary}));
        }
        (tag, recent)
    } else {
        (None, Vec::new())
    };

    let files = view.tracked_files()?;
    let counts = Counts::of(&files);
    let by_dir: Vec<Value> = sorted_counts(counts.by_dir)
        .into_iter()
        .map(|(name, n)| json!({"directory": name, "files": n}))
        .collect();
    let by_dir_total = by_dir.len();
    let by_dir = capped("files_by_top_level_directory", by_dir, by_dir_total);
    let by_ext: Vec<Value> = sorted_counts(counts.by_ext)
        .into_iter()
        .map(|(ext, n)| {
            let ext = (!ext.is_empty()).then_some(ext);
            json!({"extension": ext, "files": n})
        })
        .collect();
    let by_ext_total = by_ext.len();
    let by_ext = capped("files_by_extension", by_ext, by_ext_total);
    let (entries, total_entries) = top_level_entries(&view.root, cap)?;
    let entries = capped("top_level_entries", entries, total_entries);

    let data = json!({
        "repository_root": view.top.to_string_lossy(),
        "workspace": if view.prefix.is_empty() { "." } else { view.prefix.as_str() },
        "head": head_value,
        "origin_head": origin_head,
        "latest_semver_tag": latest_tag,
        "tracked_files": files.len(),
        "files_at_top_level": counts.at_top,
        "files_by_top_level_directory": by_dir,
        "files_by_extension": by_ext,
        "top_level_entries": entries,
        "recent_commits": recent,
        "has_gitmodules": has_gitmodules(&view.top),
    });
    Ok(match cut {
        Some(truncation) => ToolOutput::truncated(data, truncation),
        None => ToolOutput::complete(data),
    })
}

/// Tracked files counted by top-level directory and by extension.
#[derive(Debug, Default)]
struct Counts {
    at_top: usize,
    by_dir: BTreeMap<String, usize>,
    /// The empty key counts files without an extension.
    by_ext: BTreeMap<String, usize>,
}

impl Counts {
    fn of(files: &[String]) -> Counts {
        let mut counts = Counts::default();
        for file in files {
            match file.split_once('/') {
                Some((dir, _)) => *counts.by_dir.entry(dir.to_owned()).or_default() += 1,
                None => counts.at_top += 1,
            }
            let name = file.rsplit('/').next().unwrap_or(file);
            let ext = Path::new(name)
                .extension()
                .map(|e| e.to_string_lossy().into_owned())
                .unwrap_or_default();
            *counts.by_ext.entry(ext).or_default() += 1;
        }
        counts
    }
}

/// Most files first, then by name.
fn sorted_counts(counts: BTreeMap<String, usize>) -> Vec<(String, usize)> {
    let mut list: Vec<(String, usize)> = counts.into_iter().collect();
    list.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    list
}

/// True when the top of the working tree holds a regular `.gitmodules` file. A
/// symlink by that name is not followed (git itself refuses one), so it cannot
/// tell whether some file outside exists.
fn has_gitmodules(top: &Path) -> bool {
    safe_io::Dir::open(top)
        .and_then(|dir| dir.kind(".gitmodules"))
        .is_ok_and(|kind| kind == Some(safe_io::FileKind::File))
}

/// The entries of the workspace root on disk (tracked or not), `.git` left out,
/// sorted by name, with their total. Nothing is followed: a symlink is listed as
/// `symlink`, a FIFO as `other`. Only the first `keep` names are held, however
/// many the directory has.
fn top_level_entries(root: &Path, keep: usize) -> Result<(Vec<Value>, usize), ToolFailure> {
    let read = std::fs::read_dir(root)
        .map_err(|err| ToolFailure::internal(format!("cannot list {}: {err}", root.display())))?;
    let mut entries: BTreeSet<(String, &str)> = BTreeSet::new();
    let mut total = 0;
    for entry in read {
        let entry = entry.map_err(|err| {
            ToolFailure::internal(format!("cannot list {}: {err}", root.display()))
        })?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.eq_ignore_ascii_case(".git") {
            continue;
        }
        let kind = match entry.file_type() {
            Ok(t) if t.is_symlink() => "symlink",
            Ok(t) if t.is_dir() => "dir",
            Ok(t) if t.is_file() => "file",
            _ => "other",
        };
        total += 1;
        entries.insert((name, kind));
        if entries.len() > keep {
            entries.pop_last();
        }
    }
    let entries = entries
        .into_iter()
        .map(|(name, kind)| json!({"name": name, "kind": kind}))
        .collect();
    Ok((entries, total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_directory_and_extension() {
        let files: Vec<String> = [
            "Cargo.toml",
            "README",
            "src/a.rs",
            "src/b.rs",
            "docs/x.md",
            ".gitignore",
            "src/deep/c.RS",
        ]
        .map(String::from)
        .to_vec();
        let counts = Counts::of(&files);
        assert_eq!(counts.at_top, 3);
        assert_eq!(
            sorted_counts(counts.by_dir),
            [("src".to_owned(), 3), ("docs".to_owned(), 1)]
        );
        assert_eq!(
            sorted_counts(counts.by_ext),
            [
                ("".to_owned(), 2),
                ("rs".to_owned(), 2),
                ("RS".to_owned(), 1),
                ("md".to_owned(), 1),
                ("toml".to_owned(), 1),
            ]
        );
    }
}
