//! `list_files`: the tracked files of the workspace (what `git ls-files` lists, from
//! the index), optionally under a path, capped with the total known.

use std::path::PathBuf;

use agent::{Tool, ToolFailure, ToolLimits, ToolOutput, Truncation, TruncationLimit};
use serde_json::{Value, json};

use crate::args::Args;
use crate::cap::{self, Budget};
use crate::workspace::RepoView;

/// The tool name.
pub const NAME: &str = "list_files";

/// The tool description.
pub const DESCRIPTION: &str = "Lists the files git tracks in the workspace (from the index, sorted, workspace-relative), optionally only those under `path`. Reports the total, and says when the list was cut so you can pass a narrower path.";

/// The `list_files` tool over one workspace.
#[derive(Debug, Clone)]
pub struct ListFiles {
    workspace_root: PathBuf,
}

impl ListFiles {
    /// The tool for the workspace at `workspace_root`.
    pub fn new(workspace_root: impl Into<PathBuf>) -> Self {
        ListFiles {
            workspace_root: workspace_root.into(),
        }
    }
}

impl Tool for ListFiles {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> Value {
        let max = ToolLimits::default().max_entries;
        json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "Workspace-relative directory (or file) to list under; default: the whole workspace. Accepts / or \\ as separator.",
                },
                "max_entries": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": max,
                    "description": format!("At most this many paths (default and maximum: {max})."),
                },
            },
            "required": [],
            "additionalProperties": false,
        })
    }

    fn call(&self, args: &Value, limits: &ToolLimits) -> Result<ToolOutput, ToolFailure> {
        let args = Args::new(args, &["path", "max_entries"])?;
        let prefix = args.prefix("path")?;
        let max_entries = args
            .count("max_entries", ToolLimits::default().max_entries)?
            .unwrap_or(limits.max_entries)
            .min(limits.max_entries);
        let view = RepoView::open(&self.workspace_root)?;
        let matching: Vec<String> = view
            .tracked_files()?
            .into_iter()
            .filter(|path| prefix.contains(path))
            .collect();
        let total = matching.len();
        let skeleton = json!({"path": prefix.display(), "files": [], "total": usize::MAX});
        let mut budget = Budget::new(max_entries, cap::room(limits, &skeleton));
        let mut files = Vec::new();
        let mut stop = None;
        for path in matching {
            if let Err(limit) = budget.take(cap::json_len(&path)) {
                stop = Some(limit);
                break;
            }
            files.push(path);
        }
        let shown = files.len();
        let data = json!({"path": prefix.display(), "files": files, "total": total});
        Ok(match stop {
            None => ToolOutput::complete(data),
            Some(limit) => ToolOutput::truncated(
                data,
                Truncation {
                    limit,
                    max: match limit {
                        TruncationLimit::Bytes => limits.max_bytes,
                        _ => max_entries,
                    },
                    total: Some(total),
                    shown,
                    hint: format!(
                        "{shown} of {total} files shown; pass a narrower path (a subdirectory of '{}') to see the rest",
                        prefix.display()
                    ),
                },
            ),
        })
    }
}
