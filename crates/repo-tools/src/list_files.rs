//! `list_files`: the tracked files of the workspace (what `git ls-files` lists, from
//! the index), optionally under a path, capped with the total known.
//!
//! A listed path whose target `gate` refuses — a symbolic link (itself or
//! a directory on its way) leading outside the workspace, into `.git`, or to an
//! untracked file git ignores — is still listed, since git tracks it, and is also
//! named in `refused_links` with the reason: `read_file` refuses it and
//! `search_files` passes it over, so the model need not try. Only the paths shown
//! are checked.

use std::path::Path;

use agent::schema::Schema;
use agent::{ToolFailure, ToolLimits, ToolOutput};
use serde::Deserialize;
use serde_json::json;

use crate::args;
use crate::cap::{self, Budget};
use crate::gate::Gate;
use crate::paths::RelPath;
use crate::workspace::RepoView;

/// The tool name.
pub(crate) const NAME: &str = "list_files";

/// The tool description.
pub(crate) const DESCRIPTION: &str = "Lists the files git tracks in the workspace (from the index, sorted, workspace-relative), optionally only those under `path`. Reports the total, and says when the list was cut so you can pass a narrower path.";

/// The arguments of `list_files`.
#[derive(Debug, Deserialize)]
pub struct Args {
    path: Option<String>,
    max_entries: Option<usize>,
}

/// The arguments' schema.
pub(crate) fn schema() -> Schema {
    Schema::object()
        .optional("path", args::prefix_schema("list"))
        .optional(
            "max_entries",
            args::cap_schema("paths", ToolLimits::default().max_entries),
        )
}

/// Runs `list_files` over the workspace at `root`.
pub(crate) fn run(root: &Path, args: Args, limits: &ToolLimits) -> Result<ToolOutput, ToolFailure> {
    let prefix = args::prefix("path", args.path.as_deref())?;
    let max_entries = args::cap(args.max_entries, limits.max_entries);
    let view = RepoView::open(root)?;
    let matching: Vec<String> = view
        .tracked_files()?
        .into_iter()
        .filter(|path| prefix.contains(path))
        .collect();
    let total = matching.len();
    let skeleton = json!({
        "path": prefix.display(),
        "files": [],
        "total": usize::MAX,
        "refused_links": [],
    });
    let mut budget = Budget::new(max_entries, cap::room(limits, &skeleton));
    let mut gate = Gate::new(&view.root, Some(&view.repo))?;
    let mut files = Vec::new();
    let mut refused = Vec::new();
    let mut stop = None;
    for path in matching {
        let mark = refused_link(&mut gate, &path)
            .map(|reason| json!({"path": path.as_str(), "reason": reason}));
        let size = cap::json_len(&path) + mark.as_ref().map_or(0, |m| m.to_string().len() + 1);
        if let Err(limit) = budget.take(size) {
            stop = Some(limit);
            break;
        }
        files.push(path);
        refused.extend(mark);
    }
    let shown = files.len();
    let data = json!({
        "path": prefix.display(),
        "files": files,
        "total": total,
        "refused_links": refused,
    });
    let hint = format!(
        "{shown} of {total} files shown; pass a narrower path (a subdirectory of '{}') to see the rest",
        prefix.display()
    );
    Ok(budget.output(data, stop, limits, (shown, total), hint))
}

/// Why the tracked `path` is a link the other tools refuse to follow, if it is.
fn refused_link(gate: &mut Gate<'_>, path: &str) -> Option<&'static str> {
    let rel = RelPath::from_index(path)?;
    gate.judge(&rel, true).err()?.link_reason()
}
