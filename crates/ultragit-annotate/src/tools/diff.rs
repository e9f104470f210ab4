//! The diff tools: `get_diff` (the run's files, or a per-file summary) and
//! `get_diff_for_file`, and the diff text the first message shares with them.

use super::*;

/// One file's diff with the commit's line numbers in front of every kept or added
/// line, so regions can be given in the commit's coordinates.
fn render_file_diff(diff: &gitctx::FileDiff) -> String {
    let status = status_word(diff.status);
    let mut out = format!(
        "=== {} ({status}, +{} -{}) ===\n",
        diff.path(),
        diff.additions,
        diff.deletions
    );
    if diff.status == gitctx::FileStatus::Renamed
        && let Some(old) = &diff.old_path
    {
        out.push_str(&format!("renamed from {old}\n"));
    }
    for hunk in &diff.hunks {
        out.push_str(&format!(
            "@@ -{},{} +{},{} @@ {}\n",
            hunk.old_start, hunk.old_lines, hunk.new_start, hunk.new_lines, hunk.header
        ));
        for line in &hunk.lines {
            let number = line
                .new_lineno
                .map(|n| format!("{n:>5}"))
                .unwrap_or_else(|| "     ".to_owned());
            out.push_str(&format!(
                "{number} {}{}\n",
                line.kind.prefix(),
                line.content
            ));
        }
    }
    out
}

/// How a file changed, in the words the diff headers use.
pub(crate) fn status_word(status: gitctx::FileStatus) -> &'static str {
    match status {
        gitctx::FileStatus::Added => "new file",
        gitctx::FileStatus::Deleted => "deleted",
        gitctx::FileStatus::Renamed => "renamed",
        gitctx::FileStatus::Copied => "copied",
        gitctx::FileStatus::TypeChanged => "type changed",
        gitctx::FileStatus::Modified => "modified",
    }
}

/// The per-file summary `get_diff` gives for oversized diffs (spec 000 "Diff
/// summarization").
pub(crate) fn diff_summary(context: &AnnotationContext, files: &[String]) -> String {
    let mut diffs: Vec<&gitctx::FileDiff> =
        files.iter().filter_map(|f| context.diff_for(f)).collect();
    diffs.sort_by_key(|d| std::cmp::Reverse(d.changed_lines()));
    let lines: u32 = diffs.iter().map(|d| d.changed_lines()).sum();
    let mut out = format!(
        "This commit modifies {} files with {} lines changed.\nTop files by change size:\n",
        diffs.len(),
        thousands(u64::from(lines))
    );
    for diff in diffs.iter().take(40) {
        out.push_str(&format!(
            "  {}: +{} -{}\n",
            diff.path(),
            diff.additions,
            diff.deletions
        ));
    }
    if diffs.len() > 40 {
        out.push_str(&format!("  … and {} more files\n", diffs.len() - 40));
    }
    out.push_str(
        "\nUse get_file_content(path) to examine specific files,\nor get_diff_for_file(path) to see the diff for a single file.\n",
    );
    out
}

pub(super) const GET_DIFF: ToolDef<Shared, NoArgs> = ToolDef {
    name: "get_diff",
    description: "Returns the unified diff for this commit, organized by file with line numbers.",
    schema: Schema::object,
    run: get_diff,
};

fn get_diff(shared: &Shared, _: NoArgs, limits: &ToolLimits) -> Result<ToolOutput, ToolFailure> {
    let context = &shared.context;
    let scope = &shared.scope;
    let (text, starts) = scope_diff(context, &scope.files);
    if scope.summarize_diff || agent::estimate_tokens(&text) > shared.budget.diff {
        return Ok(ToolOutput::complete(
            json!({"summary": diff_summary(context, &scope.files)}),
        ));
    }
    Ok(capped(
        "diff",
        text,
        json!({"files": scope.files}),
        limits,
        |line| {
            // The file the cut falls in, and the line of its own diff.
            let index = starts.partition_point(|(_, start)| *start <= line).max(1) - 1;
            let (path, start) = &starts[index];
            let rest: Vec<&str> = starts[index + 1..]
                .iter()
                .map(|(p, _)| p.as_str())
                .collect();
            let mut hint = format!(
                "the diff was cut; call get_diff_for_file with path={path} and offset={}",
                line - start + 1
            );
            if !rest.is_empty() {
                hint.push_str(&format!(", then for: {}", rest.join(", ")));
            }
            hint
        },
    ))
}

/// The diff of `files` as `get_diff` shows it, with the first line (1-based)
/// of each file's part.
pub(crate) fn scope_diff(
    context: &AnnotationContext,
    files: &[String],
) -> (String, Vec<(String, usize)>) {
    let mut text = String::new();
    let mut starts = Vec::new();
    let mut line = 1;
    for path in files {
        if let Some(diff) = context.diff_for(path) {
            let part = render_file_diff(diff);
            starts.push((path.clone(), line));
            line += part.lines().count();
            text.push_str(&part);
        }
    }
    (text, starts)
}

pub(super) const GET_DIFF_FOR_FILE: ToolDef<Shared, PathArgs> = ToolDef {
    name: "get_diff_for_file",
    description: "Returns the diff of a single file of this commit, with line numbers.",
    schema: PathArgs::schema,
    run: get_diff_for_file,
};

fn get_diff_for_file(
    shared: &Shared,
    args: PathArgs,
    limits: &ToolLimits,
) -> Result<ToolOutput, ToolFailure> {
    let path = args.path()?;
    let Some(diff) = shared.context.diff_for(&path) else {
        return Err(ToolFailure::new(
            "NOT_IN_COMMIT",
            format!(
                "'{path}' is not among the text files this commit changes: {}",
                shared.context.paths().join(", ")
            ),
        ));
    };
    let from = args.from();
    let rendered = render_file_diff(diff);
    let text: String = rendered
        .lines()
        .skip(from - 1)
        .map(|l| format!("{l}\n"))
        .collect();
    Ok(capped(
        "diff",
        text,
        json!({"path": path, "offset": from, "lines": rendered.lines().count()}),
        limits,
        |n| {
            format!(
                "the diff was cut; call get_diff_for_file with path={path} and offset={}",
                from + n - 1
            )
        },
    ))
}
