//! `ultragit-mcp`: ultragit as a Model Context Protocol server, so a coding
//! agent reads the recorded reasons behind code, and tells the writing agent
//! what its next commit is for, without shelling out. Built on `rmcp` (the
//! official Rust SDK), server side only; the transport is any byte stream pair,
//! stdio for `ultragit mcp`.
//!
//! ```no_run
//! # async fn serve() -> Result<(), ultragit_mcp::ServeError> {
//! let repo = gitctx::Repo::discover(".").expect("a repository");
//! ultragit_mcp::Server::new(&repo).serve_stdio().await
//! # }
//! ```
//!
//! The tools (`tool` says what a tool is, [`tools`] has the registry; each is an argument struct, a call
//! into a library and a rendering):
//! - `ultragit_read` (`read`): `paths`, `anchor` or `lines`, `max_tokens`,
//!   `min_confidence`, `tags` → `ultragit_read::GitReadPipeline`, in process.
//! - `ultragit_deps`, `ultragit_history`, `ultragit_summary` (`queries`): the
//!   reverse dependency index, a unit's "why" timeline, per-unit rollups →
//!   `ultragit_read::{deps, history, summary}`, in process.
//! - `ultragit_context_set` (`context`): `task`, `reasoning`, `dependencies`,
//!   `tags` for the next commit's annotation →
//!   `ultragit_annotate::author::set_pending`, the code path of
//!   `ultragit context set`.
//! - `ultragit_flag`, `ultragit_correct` (`correct`): a correction appended
//!   to a commit's note → `ultragit_annotate::correct`, the code path of
//!   `ultragit flag` and `ultragit correct`.
//!
//! - **Dependencies:** `ultragit-read` (read), `ultragit-annotate` (author
//!   context; it brings `llm` and `agent`, which the `ultragit` binary has
//!   anyway), `gitctx` (the repository), `rmcp` (protocol and stdio transport),
//!   `schemars` (input schemas), `tokio`.
//! - **Invariant:** nothing but JSON-RPC messages is written to the transport:
//!   this crate never prints; its log lines go to the [`LogSink`] the binary
//!   gives it, which writes them to stderr.
//! - **Invariant:** every tool has a strict input schema, generated from its
//!   argument type: `type: object`, `additionalProperties: false` (serde's
//!   `deny_unknown_fields`), its mandatory fields `required`, size bounds as
//!   `maxLength`/`maxItems` and enforced again in the tool.
//! - **Invariant:** every successful result carries both text content (the
//!   markdown rendering) and `structuredContent` (the JSON, an object).
//! - **Invariant:** a failing tool is a tool result with `isError: true`, never a
//!   protocol error: arguments that do not fit the schema, read's errors (with
//!   read's messages, e.g. `File not found: src/x.rs. Does it exist at HEAD?`,
//!   and its JSON error object as `structuredContent`), failures writing the
//!   context. Only requests that name no tool of ours, or cannot be parsed as a
//!   `tools/call` at all, get a JSON-RPC error (as the MCP specification asks).
//! - **Invariant:** no input panics the server: tools run on the blocking pool
//!   and a panic there becomes a tool error.
//! - **Invariant:** the server is scoped to one repository (the one it was
//!   started in): paths are repository-relative, `..`, absolute paths and
//!   empty components are refused before anything is read.

mod context;
mod correct;
mod queries;
mod read;
mod tool;
pub mod tools;

use std::path::PathBuf;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use tokio::io::{AsyncRead, AsyncWrite};

use crate::tool::ToolError;

/// Where the server's log lines go (the binary: stderr). Never stdout.
pub type LogSink = Arc<dyn Fn(&str) + Send + Sync>;

/// The repository a server serves: its working tree and its common git
/// directory (where `.git/ultragit/` lives, shared by worktrees).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scope {
    /// The top of the working tree.
    pub root: PathBuf,
    /// The common git directory.
    pub common_dir: PathBuf,
    /// `GIT_AUTHOR_NAME`/`GIT_AUTHOR_EMAIL` as the server's environment set
    /// them (the binary reads them; this crate never reads the environment):
    /// who corrections are recorded as, over the repository's `user.*`.
    pub identity: Vec<(String, String)>,
}

impl Scope {
    /// The scope of `repo`.
    pub(crate) fn of(repo: &gitctx::Repo) -> Scope {
        Scope {
            root: repo.root().to_owned(),
            common_dir: repo.common_dir(),
            identity: Vec::new(),
        }
    }

    /// The value of the identity variable `name`, when the server was given it.
    pub(crate) fn identity_env(&self, name: &str) -> Option<String> {
        self.identity
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.clone())
    }
}

/// Why serving stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The client never completed the `initialize` handshake.
    #[error("the MCP client did not initialize the session: {0}")]
    Initialize(String),
    /// The session's task failed.
    #[error("the MCP session ended abnormally: {0}")]
    Session(String),
}

/// The MCP server of one repository.
#[derive(Clone)]
pub struct Server {
    scope: Arc<Scope>,
    registry: Arc<tools::Registry>,
    log: LogSink,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("scope", &self.scope)
            .field("tools", &self.registry.names())
            .finish_non_exhaustive()
    }
}

/// What `initialize` tells the client about using the server.
const INSTRUCTIONS: &str = "ultragit records, per commit, why code exists (intent, constraints, \
semantic dependencies, risks) as git notes. Call ultragit_read before editing code to learn the \
reasons behind it (ultragit_summary to get oriented, ultragit_deps for what depends on a \
unit, ultragit_history for how its reasons changed); call ultragit_context_set before committing to tell the annotation what the \
commit is for; call ultragit_flag or ultragit_correct when code shows an annotation is wrong. Paths are relative to the repository root.";

impl Server {
    /// The server for `repo`, with every tool and no log.
    pub fn new(repo: &gitctx::Repo) -> Server {
        Server::for_scope(Scope::of(repo))
    }

    /// The server for `scope`, with every tool and no log.
    pub(crate) fn for_scope(scope: Scope) -> Server {
        Server {
            scope: Arc::new(scope),
            registry: Arc::new(tools::Registry::all()),
            log: Arc::new(|_: &str| {}),
        }
    }

    /// The same server, logging to `log`.
    pub fn with_log(mut self, log: LogSink) -> Server {
        self.log = log;
        self
    }

    /// The server with the author identity variables the binary read from its
    /// environment (`GIT_AUTHOR_NAME`, `GIT_AUTHOR_EMAIL`): who corrections are
    /// recorded as.
    pub fn with_identity_env(mut self, identity: Vec<(String, String)>) -> Server {
        Arc::make_mut(&mut self.scope).identity = identity;
        self
    }

    /// The repository served.
    #[cfg(test)]
    pub(crate) fn scope(&self) -> &Scope {
        &self.scope
    }

    /// The tools offered, in `tools/list` order.
    pub(crate) fn tools(&self) -> Vec<Tool> {
        self.registry.tools()
    }

    /// Runs the tool `name` on `arguments` as `tools/call` would, on the
    /// blocking pool. `None` when no tool has that name.
    pub(crate) async fn call(
        &self,
        name: &str,
        arguments: Option<serde_json::Map<String, serde_json::Value>>,
    ) -> Option<CallToolResult> {
        let run = self.registry.runner(name)?;
        let scope = Arc::clone(&self.scope);
        let arguments = arguments.unwrap_or_default();
        let outcome = tokio::task::spawn_blocking(move || run(&scope, arguments))
            .await
            .unwrap_or_else(|err| Err(ToolError::internal(name, &err)));
        match &outcome {
            Ok(_) => (self.log)(&format!("{name}: ok")),
            Err(err) => (self.log)(&format!("{name}: error: {}", err.message())),
        }
        Some(match outcome {
            Ok(output) => output.into_result(),
            Err(err) => err.into_result(),
        })
    }

    /// Serves one MCP session over `read`/`write` until the client closes it.
    pub(crate) async fn serve<R, W>(self, read: R, write: W) -> Result<(), ServeError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let log = Arc::clone(&self.log);
        log(&format!(
            "serving {} ({} tools)",
            self.scope.root.display(),
            self.registry.names().len()
        ));
        let running = ServiceExt::serve(self, (read, write))
            .await
            .map_err(|err| ServeError::Initialize(err.to_string()))?;
        let reason = running
            .waiting()
            .await
            .map_err(|err| ServeError::Session(err.to_string()))?;
        log(&format!("session ended ({reason:?})"));
        Ok(())
    }

    /// Serves one MCP session over this process's stdin and stdout.
    pub async fn serve_stdio(self) -> Result<(), ServeError> {
        let (stdin, stdout) = rmcp::transport::stdio();
        self.serve(stdin, stdout).await
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("ultragit", env!("CARGO_PKG_VERSION")).with_title("ultragit"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.registry.tool(name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        match self.call(&request.name, request.arguments).await {
            Some(result) => Ok(result.into()),
            None => {
                (self.log)(&format!("unknown tool {:?}", request.name));
                Err(ErrorData::invalid_params(
                    format!(
                        "Unknown tool '{}'. Available tools: {}",
                        request.name,
                        self.registry.names().join(", ")
                    ),
                    None,
                ))
            }
        }
    }
}

/// A text content block.
pub(crate) fn text_block(text: impl Into<String>) -> ContentBlock {
    ContentBlock::text(text.into())
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use testkit::TestRepo;

    use super::*;

    fn arguments(value: serde_json::Value) -> Option<serde_json::Map<String, serde_json::Value>> {
        value.as_object().cloned()
    }

    #[tokio::test]
    async fn calls_tools_in_the_repository() {
        let repo = TestRepo::new();
        repo.commit_file("src/lib.rs", "pub fn one() -> u32 {\n    1\n}\n", "Add one");
        let server = Server::new(&gitctx::Repo::discover(repo.path()).unwrap());
        assert_eq!(server.scope().root, repo.path().canonicalize().unwrap());

        let read = server
            .call(
                "ultragit_read",
                arguments(json!({"paths": ["src/lib.rs"], "anchor": "one"})),
            )
            .await
            .unwrap();
        assert_eq!(read.is_error, Some(false), "{read:?}");
        let structured = read.structured_content.unwrap();
        assert_eq!(structured["query"]["files"], json!(["src/lib.rs"]));
        assert_eq!(structured["regions"], json!([]));

        let set = server
            .call(
                "ultragit_context_set",
                arguments(json!({"dependencies": " probe.py "})),
            )
            .await
            .unwrap();
        assert_eq!(set.is_error, Some(false), "{set:?}");
        let common = server.scope().common_dir.clone();
        let pending = ultragit_annotate::author::read_context(
            &ultragit_annotate::author::pending_path(&common),
        )
        .unwrap()
        .unwrap();
        assert_eq!(pending.dependencies.as_deref(), Some("probe.py"));

        let missing = server.call("ultragit_read", None).await.unwrap();
        assert_eq!(missing.is_error, Some(true));
        assert!(server.call("ultragit_write", None).await.is_none());
    }
}
