//! The catalog (spec 002's `ToolCatalog` and `TOOL_DEFINITIONS`): the five
//! tools, each one [`ToolDef`] gathering its module's name, description,
//! argument schema and `run`, bound to a workspace in catalog order.
//!
//! What a tool does lives in its module; what the model sees of it is declared
//! there too, next to its arguments, and gathered here.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent::{Tool, ToolDef, ToolLimits, ToolRegistry};
use serde_json::Value;

use crate::{git_status_summary, list_files, read_file, repo_summary, search_files};

/// `git_status_summary` (spec 002), over the workspace it is bound to.
pub const GIT_STATUS_SUMMARY: ToolDef<PathBuf, git_status_summary::Args> = ToolDef {
    name: git_status_summary::NAME,
    description: git_status_summary::DESCRIPTION,
    schema: git_status_summary::schema,
    run: |root, args, limits| git_status_summary::run(root, args, limits),
};

/// `repo_summary`, over the workspace it is bound to.
pub const REPO_SUMMARY: ToolDef<PathBuf, repo_summary::Args> = ToolDef {
    name: repo_summary::NAME,
    description: repo_summary::DESCRIPTION,
    schema: repo_summary::schema,
    run: |root, args, limits| repo_summary::run(root, args, limits),
};

/// `list_files`, over the workspace it is bound to.
pub const LIST_FILES: ToolDef<PathBuf, list_files::Args> = ToolDef {
    name: list_files::NAME,
    description: list_files::DESCRIPTION,
    schema: list_files::schema,
    run: |root, args, limits| list_files::run(root, args, limits),
};

/// `read_file`, over the workspace it is bound to.
pub const READ_FILE: ToolDef<PathBuf, read_file::Args> = ToolDef {
    name: read_file::NAME,
    description: read_file::DESCRIPTION,
    schema: read_file::schema,
    run: |root, args, limits| read_file::run(root, args, limits),
};

/// `search_files`, over the workspace it is bound to.
pub const SEARCH_FILES: ToolDef<PathBuf, search_files::Args> = ToolDef {
    name: search_files::NAME,
    description: search_files::DESCRIPTION,
    schema: search_files::schema,
    run: |root, args, limits| search_files::run(root, args, limits),
};

/// The five tools over the workspace at `workspace_root`, in catalog order.
fn tools(workspace_root: &Path) -> Vec<Arc<dyn Tool>> {
    let root = workspace_root.to_path_buf();
    vec![
        Arc::new(GIT_STATUS_SUMMARY.bind(root.clone())),
        Arc::new(REPO_SUMMARY.bind(root.clone())),
        Arc::new(LIST_FILES.bind(root.clone())),
        Arc::new(READ_FILE.bind(root.clone())),
        Arc::new(SEARCH_FILES.bind(root)),
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
