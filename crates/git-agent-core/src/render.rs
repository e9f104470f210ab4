//! The prepared evidence of a commit or squash message rendered as the data
//! block of its task prompt: the path lists, lockfile summaries, submodule
//! moves and fitted diff sections (`render_paths`, `render_details`) and
//! the commit message's whole `<prepared_context>` ([`render`]). Repository
//! text goes through [`git_evidence::render::data`].

use std::fmt::Write as _;

use git_evidence::classify::Class;
use git_evidence::fit::{self, Fitted};
use git_evidence::render::data;
use gitctx::ObjectId;

use crate::context::{Changes, Limits, Mode, PathEntry, Prepared};

pub(crate) fn write_paths(out: &mut String, paths: &[PathEntry], limit: usize) {
    for p in paths.iter().take(limit) {
        let name = match &p.old_path {
            Some(old) => format!("{old} -> {}", p.path),
            None => p.path.clone(),
        };
        let stats = if p.class == Class::Binary {
            "binary".to_owned()
        } else {
            format!("+{} -{}", p.additions, p.deletions)
        };
        let label = p.class.label();
        if label.is_empty() || p.class == Class::Binary {
            let _ = writeln!(out, "{} {stats} {}", p.status, data(&name));
        } else {
            let _ = writeln!(out, "{} {stats} {} [{label}]", p.status, data(&name));
        }
    }
    if paths.len() > limit {
        let mut dirs: std::collections::BTreeMap<String, (usize, u32, u32)> = Default::default();
        for p in &paths[limit..] {
            let dir = p.path.rsplit_once('/').map_or(".", |(d, _)| d).to_owned();
            let e = dirs.entry(dir).or_default();
            e.0 += 1;
            e.1 += p.additions;
            e.2 += p.deletions;
        }
        let _ = writeln!(out, "[{} more paths, by directory:]", paths.len() - limit);
        for (dir, (n, a, d)) in dirs {
            let _ = writeln!(out, "  {} {n} files +{a} -{d}", data(&dir));
        }
    }
}

pub(crate) fn write_diff_section(out: &mut String, tag: &str, fitted: &Fitted) {
    let whole = fitted
        .shown
        .iter()
        .filter(|(_, s)| *s == fit::Shown::Whole)
        .count();
    let cut: Vec<&str> = fitted
        .shown
        .iter()
        .filter(|(_, s)| matches!(s, fit::Shown::Cut { .. }))
        .map(|(p, _)| p.as_str())
        .collect();
    let omitted: Vec<&str> = fitted
        .shown
        .iter()
        .filter(|(_, s)| *s == fit::Shown::Omitted)
        .map(|(p, _)| p.as_str())
        .collect();
    let _ = writeln!(
        out,
        "<{tag} files_whole=\"{whole}\" files_cut=\"{}\" files_omitted=\"{}\">",
        cut.len(),
        omitted.len()
    );
    if !omitted.is_empty() {
        let _ = writeln!(
            out,
            "[diff text omitted for lack of room (see the path list for their statistics): {}]",
            data(&omitted.join(", "))
        );
    }
    out.push_str(&data(&fitted.text));
    let _ = writeln!(out, "</{tag}>");
}

/// The path list of `changes` in a `<tag>` section: every path, its status,
/// statistics and kind.
pub(crate) fn render_paths(out: &mut String, changes: &Changes, paths_tag: &str) {
    let limits = Limits::default();
    let _ = writeln!(
        out,
        "<{paths_tag} files=\"{}\" additions=\"{}\" deletions=\"{}\">",
        changes.paths.len(),
        changes.additions,
        changes.deletions
    );
    write_paths(out, &changes.paths, limits.listed_paths);
    let _ = writeln!(out, "</{paths_tag}>");
}

/// Lockfile summaries, submodule moves and the diff sections of `changes`.
pub(crate) fn render_details(out: &mut String, changes: &Changes, diff_tag: &str) {
    let limits = Limits::default();
    if !changes.lockfiles.is_empty() {
        let _ = writeln!(out, "<lockfiles>");
        for lock in &changes.lockfiles {
            out.push_str(&data(&lock.render(limits.lock_entries)));
            if !out.ends_with('\n') {
                out.push('\n');
            }
        }
        let _ = writeln!(out, "</lockfiles>");
    }

    if !changes.submodules.is_empty() {
        let _ = writeln!(out, "<submodules>");
        for sub in &changes.submodules {
            let short = |id: Option<ObjectId>| id.map_or("(none)".to_owned(), |i| i.short());
            let _ = writeln!(
                out,
                "{}: {} -> {}",
                data(&sub.path),
                short(sub.old),
                short(sub.new)
            );
            if let Some(note) = &sub.note {
                let _ = writeln!(out, "  ({note})");
            }
            for subject in &sub.commits {
                let _ = writeln!(out, "  - {}", data(subject));
            }
            if sub.more > 0 {
                let _ = writeln!(out, "  [… {} more commits]", sub.more);
            }
        }
        let _ = writeln!(out, "</submodules>");
    }

    write_diff_section(out, diff_tag, &changes.diff);
    if let Some(focus) = &changes.focus {
        let _ = writeln!(out, "<focus_diff>");
        out.push_str(&data(focus));
        let _ = writeln!(out, "</focus_diff>");
    }
    if let Some(generated) = &changes.generated_diff {
        let _ = writeln!(out, "<generated_diff>");
        out.push_str(&data(generated));
        let _ = writeln!(out, "</generated_diff>");
    }
}

/// Renders the prepared context as the data block of the task prompt.
pub fn render(prepared: &Prepared) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<prepared_context mode=\"{}\">",
        prepared.mode.as_str()
    );
    let branch = prepared.branch.as_deref().unwrap_or("(detached HEAD)");
    let _ = writeln!(
        out,
        "Branch: {}{}",
        data(branch),
        if prepared.unborn {
            " (no commits yet: this is the root commit)"
        } else {
            ""
        }
    );
    if let Some(task) = &prepared.task_id {
        let _ = writeln!(
            out,
            "Task ID from the branch name: {} (recent subjects end with task IDs like \"{}\")",
            task.id,
            task.suffix.trim()
        );
    }
    let changes = &prepared.changes;
    let (paths_tag, diff_tag) = match prepared.mode {
        Mode::Staged => ("staged_paths", "staged_diff"),
        Mode::Amend => ("final_paths", "final_amended_diff"),
    };

    if prepared.mode == Mode::Amend
        && let Some(head) = &prepared.head
    {
        let _ = writeln!(
            out,
            "<original_message commit=\"{}\">",
            head.brief.id.short()
        );
        out.push_str(&data(head.message.trim_end()));
        out.push('\n');
        let _ = writeln!(out, "</original_message>");
    }

    render_paths(&mut out, changes, paths_tag);
    if !prepared.staged.partially_staged.is_empty() || prepared.staged.untracked > 0 {
        let _ = writeln!(out, "<status_notes>");
        if !prepared.staged.partially_staged.is_empty() {
            let _ = writeln!(
                out,
                "These paths also have unstaged changes, which are NOT part of this commit: {}",
                data(&prepared.staged.partially_staged.join(", "))
            );
        }
        if prepared.staged.untracked > 0 {
            let _ = writeln!(
                out,
                "{} untracked file(s) exist; they are NOT part of this commit.",
                prepared.staged.untracked
            );
        }
        let _ = writeln!(out, "</status_notes>");
    }

    render_details(&mut out, changes, diff_tag);

    if prepared.mode == Mode::Amend {
        let staged = &prepared.staged;
        let _ = writeln!(
            out,
            "<staged_changes files=\"{}\" note=\"diagnostic only: what this amend adds on top of HEAD\">",
            staged.paths.len()
        );
        write_paths(&mut out, &staged.paths, 200);
        if let Some(diff) = &staged.diff
            && !diff.text.is_empty()
        {
            out.push_str(&data(&diff.text));
        }
        let _ = writeln!(out, "</staged_changes>");
    }

    if let Some(head) = prepared.contrast() {
        let tag = match prepared.mode {
            Mode::Staged => "previous_head",
            Mode::Amend => "head_commit",
        };
        let note = match prepared.mode {
            Mode::Staged => "contrast only: already committed, not part of this commit",
            Mode::Amend => "the commit being amended, against its first parent (diagnostic)",
        };
        let _ = writeln!(
            out,
            "<{tag} commit=\"{}\" date=\"{}\" note=\"{note}\">",
            head.brief.id.short(),
            head.brief.date
        );
        if prepared.mode == Mode::Staged {
            let _ = writeln!(out, "Subject: {}", data(&head.brief.subject));
        }
        write_paths(&mut out, &head.paths, 200);
        if !head.diff.text.is_empty() {
            out.push_str(&data(&head.diff.text));
        }
        let _ = writeln!(out, "</{tag}>");
    }

    if !prepared.recent.is_empty() {
        let _ = writeln!(
            out,
            "<recent_commits note=\"style reference only, newest first\">"
        );
        for c in &prepared.recent {
            let _ = writeln!(out, "{} {}", c.id.short(), data(&c.subject));
        }
        let _ = writeln!(out, "</recent_commits>");
    }
    let _ = writeln!(out, "</prepared_context>");
    out
}
