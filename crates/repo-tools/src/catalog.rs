//! The catalog (spec 002's `ToolCatalog` and `TOOL_DEFINITIONS`): the five tool
//! types, each binding one tool module — its name, description, argument schema
//! and `run` — to a workspace, in catalog order.
//!
//! What a tool does lives in its module; what the model sees of it is declared
//! there too, next to its arguments, and gathered here.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent::schema::Schema;
use agent::{NoArgs, Tool, ToolFailure, ToolLimits, ToolOutput, ToolRegistry, TypedTool};
use serde_json::Value;

use crate::{git_status_summary, list_files, read_file, repo_summary, search_files};

/// `git_status_summary` (spec 002) over one workspace.
#[derive(Debug, Clone)]
pub struct GitStatusSummary(PathBuf);

/// `repo_summary` over one workspace.
#[derive(Debug, Clone)]
pub struct RepoSummary(PathBuf);

/// `list_files` over one workspace.
#[derive(Debug, Clone)]
pub struct ListFiles(PathBuf);

/// `read_file` over one workspace.
#[derive(Debug, Clone)]
pub struct ReadFile(PathBuf);

/// `search_files` over one workspace.
#[derive(Debug, Clone)]
pub struct SearchFiles(PathBuf);

impl GitStatusSummary {
    /// The tool for the workspace at `workspace_root`.
    pub fn new(workspace_root: impl Into<PathBuf>) -> Self {
        GitStatusSummary(workspace_root.into())
    }
}

impl RepoSummary {
    /// The tool for the workspace at `workspace_root`.
    pub fn new(workspace_root: impl Into<PathBuf>) -> Self {
        RepoSummary(workspace_root.into())
    }
}

impl ListFiles {
    /// The tool for the workspace at `workspace_root`.
    pub fn new(workspace_root: impl Into<PathBuf>) -> Self {
        ListFiles(workspace_root.into())
    }
}

impl ReadFile {
    /// The tool for the workspace at `workspace_root`.
    pub fn new(workspace_root: impl Into<PathBuf>) -> Self {
        ReadFile(workspace_root.into())
    }
}

impl SearchFiles {
    /// The tool for the workspace at `workspace_root`.
    pub fn new(workspace_root: impl Into<PathBuf>) -> Self {
        SearchFiles(workspace_root.into())
    }
}

impl TypedTool for GitStatusSummary {
    type Args = git_status_summary::Args;
    fn name(&self) -> &str {
        git_status_summary::NAME
    }
    fn description(&self) -> &str {
        git_status_summary::DESCRIPTION
    }
    fn schema(&self) -> Schema {
        git_status_summary::schema()
    }
    fn run(&self, args: Self::Args, limits: &ToolLimits) -> Result<ToolOutput, ToolFailure> {
        git_status_summary::run(&self.0, args, limits)
    }
}

impl TypedTool for RepoSummary {
    type Args = NoArgs;
    fn name(&self) -> &str {
        repo_summary::NAME
    }
    fn description(&self) -> &str {
        repo_summary::DESCRIPTION
    }
    fn schema(&self) -> Schema {
        Schema::object()
    }
    fn run(&self, _: NoArgs, limits: &ToolLimits) -> Result<ToolOutput, ToolFailure> {
        repo_summary::run(&self.0, limits)
    }
}

impl TypedTool for ListFiles {
    type Args = list_files::Args;
    fn name(&self) -> &str {
        list_files::NAME
    }
    fn description(&self) -> &str {
        list_files::DESCRIPTION
    }
    fn schema(&self) -> Schema {
        list_files::schema()
    }
    fn run(&self, args: Self::Args, limits: &ToolLimits) -> Result<ToolOutput, ToolFailure> {
        list_files::run(&self.0, args, limits)
    }
}

impl TypedTool for ReadFile {
    type Args = read_file::Args;
    fn name(&self) -> &str {
        read_file::NAME
    }
    fn description(&self) -> &str {
        read_file::DESCRIPTION
    }
    fn schema(&self) -> Schema {
        read_file::schema()
    }
    fn run(&self, args: Self::Args, limits: &ToolLimits) -> Result<ToolOutput, ToolFailure> {
        read_file::run(&self.0, args, limits)
    }
}

impl TypedTool for SearchFiles {
    type Args = search_files::Args;
    fn name(&self) -> &str {
        search_files::NAME
    }
    fn description(&self) -> &str {
        search_files::DESCRIPTION
    }
    fn schema(&self) -> Schema {
        search_files::schema()
    }
    fn run(&self, args: Self::Args, limits: &ToolLimits) -> Result<ToolOutput, ToolFailure> {
        search_files::run(&self.0, args, limits)
    }
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
