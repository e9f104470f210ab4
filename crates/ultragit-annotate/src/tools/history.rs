//! The history tools: `get_commit_info` (the annotated commit, or any commit
//! it reaches) and `get_recent_annotations` (earlier notes on the same files).

use super::*;

/// The arguments of `get_commit_info`.
#[derive(Debug, Deserialize)]
pub(super) struct CommitArgs {
    commit: Option<String>,
}

pub(super) const GET_COMMIT_INFO: ToolDef<Shared, CommitArgs> = ToolDef {
    name: "get_commit_info",
    description: "Returns the commit message, author, timestamp, parent SHAs, and any author-provided context (task, reasoning, dependencies, tags).",
    schema: || {
        Schema::object().optional(
            "commit",
            Schema::string().description(
                "Another commit (SHA or prefix) reachable from this one. Default: this one.",
            ),
        )
    },
    run: get_commit_info,
};

fn get_commit_info(
    shared: &Shared,
    args: CommitArgs,
    limits: &ToolLimits,
) -> Result<ToolOutput, ToolFailure> {
    let context = &shared.context;
    let Some(rev) = args
        .commit
        .as_deref()
        .map(str::trim)
        .filter(|c| !c.is_empty())
    else {
        return Ok(annotated_commit_info(context, limits));
    };
    if rev.starts_with('-') || rev.len() > 200 {
        return Err(ToolFailure::invalid_argument(format!(
            "'{rev}' is not a commit name"
        )));
    }
    let repo = open_repo(context)?;
    let annotated: gitctx::ObjectId = context
        .commit
        .sha
        .parse()
        .map_err(|_| ToolFailure::internal("the annotated commit has no valid id"))?;
    let id = repo.resolve_commit(rev).map_err(|_| {
        ToolFailure::new(
            "NOT_FOUND",
            format!("no commit named '{rev}' in this repository"),
        )
    })?;
    if id == annotated {
        return Ok(annotated_commit_info(context, limits));
    }
    let reachable = repo
        .is_ancestor(id, annotated)
        .map_err(|e| ToolFailure::internal(e.to_string()))?;
    if !reachable {
        return Err(ToolFailure::new(
            "NOT_REACHABLE",
            format!(
                "commit {} is not reachable from the annotated commit {}; only its ancestors can be described",
                &id.to_hex()[..12],
                &context.commit.sha[..12]
            ),
        ));
    }
    let info = repo
        .commit_info_by_id(id)
        .map_err(|e| ToolFailure::internal(e.to_string()))?;
    let parents: Vec<String> = info.parents.iter().map(|p| p.to_hex()).collect();
    let mut text = format!(
        "Commit: {}\nAuthor: {} <{}>\nDate: {}\nParents: {}\n\nMessage:\n{}\n",
        id.to_hex(),
        info.author.name,
        info.author.email,
        info.author.time.to_utc().to_rfc3339(),
        parents.join(", "),
        info.message.trim_end()
    );
    if let Ok(diff) = repo.diff_commit(&id.to_hex(), &gitctx::DiffOptions::default()) {
        text.push_str(&format!("\nFiles changed ({}):\n", diff.files.len()));
        for file in diff.files.iter().take(limits.max_entries.min(50)) {
            text.push_str(&format!(
                "  {} (+{} -{})\n",
                file.path(),
                file.additions,
                file.deletions
            ));
        }
    }
    Ok(capped(
        "info",
        text,
        json!({"commit": id.to_hex()}),
        limits,
        |_| {
            "the description was cut; call get_commit_info again only if you need the rest"
                .to_owned()
        },
    ))
}

/// The annotated commit's description, cut to the room left (a long message
/// or author context can be larger than the window).
fn annotated_commit_info(context: &AnnotationContext, limits: &ToolLimits) -> ToolOutput {
    capped("info", commit_text(context), json!({}), limits, |n| {
        format!(
            "the description was cut after {} lines to fit the context window",
            n - 1
        )
    })
}

/// The annotated commit as `get_commit_info` and the first message show it:
/// SHA, author, date, parents, message, author context or squash sources, and
/// the files left out (binary, submodules).
pub(crate) fn commit_text(context: &AnnotationContext) -> String {
    let commit = &context.commit;
    let parents = if commit.parent_shas.is_empty() {
        "(none: root commit)".to_owned()
    } else {
        commit.parent_shas.join(", ")
    };
    let mut text = format!(
        "Commit: {}\nAuthor: {}\nDate: {}\nParents: {parents}\n\nMessage:\n{}\n",
        commit.sha,
        commit.author,
        commit.timestamp.to_rfc3339(),
        commit.message.trim_end()
    );
    if let Some(author) = context.author_context.as_ref().filter(|a| a.has_context()) {
        text.push_str("\nAuthor-provided context:\n");
        let field = |label: &str, value: Option<&str>| {
            value
                .filter(|v| !v.trim().is_empty())
                .map(|v| format!("  {label}: {v}\n"))
                .unwrap_or_default()
        };
        text.push_str(&field("Task", author.task.as_deref()));
        text.push_str(&field("Reasoning", author.reasoning.as_deref()));
        text.push_str(&field("Dependencies", author.dependencies.as_deref()));
        if let Some(tags) = author.tags.as_ref().filter(|t| !t.is_empty()) {
            text.push_str(&format!("  Tags: {}\n", tags.join(", ")));
        }
    }
    if let Some(sources) = context
        .author_context
        .as_ref()
        .and_then(|a| a.squash_sources.as_ref())
        .filter(|s| !s.is_empty())
    {
        text.push_str(&format!("\nSquashed from: {}\n", sources.join(", ")));
    }
    if !context.skipped.is_empty() {
        text.push_str(&format!(
            "\nNot annotated (binary or submodule): {}\n",
            context.skipped.join(", ")
        ));
    }
    text
}

/// The arguments of `get_recent_annotations`.
#[derive(Debug, Deserialize)]
pub(super) struct RecentArgs {
    file: String,
    n: Option<usize>,
}

pub(super) const GET_RECENT_ANNOTATIONS: ToolDef<Shared, RecentArgs> = ToolDef {
    name: "get_recent_annotations",
    description: "Returns Ultragit annotations from the most recent N commits that touched the given file. Use this to discover existing annotations and create related_annotations links.",
    schema: || {
        Schema::object()
            .required("file", Schema::string().description("Relative file path."))
            .optional(
                "n",
                Schema::integer(1, 50)
                    .description("Maximum number of recent annotations to return. Default: 5."),
            )
    },
    run: get_recent_annotations,
};

fn get_recent_annotations(
    shared: &Shared,
    args: RecentArgs,
    limits: &ToolLimits,
) -> Result<ToolOutput, ToolFailure> {
    let file = clean_path("file", &args.file)?;
    let n = args.n.unwrap_or(5);
    let found: Vec<Value> = shared
        .context
        .recent_annotations
        .iter()
        .filter(|e| e.annotation.regions.iter().any(|r| r.file == file))
        .take(n)
        .map(|e| {
            let regions: Vec<&RegionAnnotation> = e
                .annotation
                .regions
                .iter()
                .filter(|r| r.file == file)
                .collect();
            json!({
                "commit": e.commit_sha,
                "timestamp": e.annotation.timestamp,
                "summary": e.annotation.summary,
                "regions": regions,
            })
        })
        .collect();
    if found.is_empty() {
        return Ok(ToolOutput::complete(json!({
            "annotations": [],
            "note": format!("No recent annotations touch {file}."),
        })));
    }
    // At most the budget's share (spec 000: 2,000 tokens), whole entries.
    let room = limits
        .max_bytes
        .min(shared.budget.recent as usize * 4)
        .saturating_sub(TRUNCATION_OVERHEAD);
    let total = found.len();
    let mut kept = Vec::new();
    let mut bytes = 0;
    for entry in found {
        bytes += entry.to_string().len();
        if bytes > room {
            break;
        }
        kept.push(entry);
    }
    let shown = kept.len();
    let data = json!({"annotations": kept});
    if shown == total {
        return Ok(ToolOutput::complete(data));
    }
    Ok(ToolOutput::truncated(
        data,
        Truncation {
            limit: TruncationLimit::Bytes,
            max: room,
            total: Some(total),
            shown,
            hint: format!(
                "the newest {shown} of {total} fit the recent-annotations budget; call get_recent_annotations with file={file} and n={shown} or fewer"
            ),
        },
    ))
}
