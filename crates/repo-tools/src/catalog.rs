//! The catalog (spec 002's `ToolCatalog` and `TOOL_DEFINITIONS`): the five tool
//! types, each binding one tool module — its name, description, argument schema
//! and `run` — to a workspace, in catalog order.
//!
//! What a tool does lives in its module; what the model sees of it is declared
//! there too, next to its arguments, and gathered here.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent::schema::Schema;
use agent::{Tool, ToolFailure, ToolLimits, ToolOutput, ToolRegistry, TypedTool};
use serde_json::Value;

use crate::{git_status_summary, list_files, read_file, repo_summary, search_files};

/// Declares a tool type over one workspace that binds the tool module `$module`
/// (its `NAME`, `DESCRIPTION`, `Args`, `schema()` and `run`).
macro_rules! workspace_tool {
    ($(#[$doc:meta])* $tool:ident => $module:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        pub struct $tool(PathBuf);

        impl $tool {
            /// The tool for the workspace at `workspace_root`.
            pub fn new(workspace_root: impl Into<PathBuf>) -> Self {
                $tool(workspace_root.into())
            }
        }

        impl TypedTool for $tool {
            type Args = $module::Args;
            fn name(&self) -> &str {
                $module::NAME
            }
            fn description(&self) -> &str {
                $module::DESCRIPTION
            }
            fn schema(&self) -> Schema {
                $module::schema()
            }
            fn run(&self, args: Self::Args, limits: &ToolLimits) -> Result<ToolOutput, ToolFailure> {
                $module::run(&self.0, args, limits)
            }
        }
    };
}

workspace_tool! {
    /// `git_status_summary` (spec 002) over one workspace.
    GitStatusSummary => git_status_summary
}
workspace_tool! {
    /// `repo_summary` over one workspace.
    RepoSummary => repo_summary
}
workspace_tool! {
    /// `list_files` over one workspace.
    ListFiles => list_files
}
workspace_tool! {
    /// `read_file` over one workspace.
    ReadFile => read_file
}
workspace_tool! {
    /// `search_files` over one workspace.
    SearchFiles => search_files
}

/// The five tools over the workspace at `workspace_root`, in catalog order.
fn tools(workspace_root: &Path) -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(GitStatusSummary::new(workspace_root)),
        Arc::new(RepoSummary::new(workspace_root)),
        Arc::new(ListFiles::new(workspace_root)),
        Arc::new(ReadFile::new(workspace_root)),
        Arc::new(SearchFiles::new(workspace_root)),
    ]
}

/// The tool catalog (spec 002's `ToolCatalog`): a registry of the five tools over
/// the workspace at `workspace_root` (a directory inside a git working tree), with
/// the default [`ToolLimits`].
pub fn catalog(workspace_root: &Path) -> ToolRegistry {
    catalog_with_limits(workspace_root, ToolLimits::default())
}

/// [`catalog`] with explicit limits. Schemas keep the default limits as their
/// bounds; arguments above `limits` are lowered to them.
pub fn catalog_with_limits(workspace_root: &Path, limits: ToolLimits) -> ToolRegistry {
    let mut registry = ToolRegistry::new(limits);
    for tool in tools(workspace_root) {
        registry
            .register(tool)
            .expect("the catalog's tools have distinct names and strict schemas (tested)");
    }
    registry
}

/// The tool definitions (spec 002's `TOOL_DEFINITIONS`):
/// `[{"name", "description", "parameters"}, …]`, in catalog order. They do not
/// depend on any workspace.
pub fn definitions() -> Value {
    catalog(Path::new(".")).definitions()
}
