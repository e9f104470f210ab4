//! `ultragit-mcp`: ultragit as a Model Context Protocol server, so a coding
//! agent reads the recorded reasons behind code, and tells the writing agent
//! what its next commit is for, without shelling out. Built on `rmcp` (the
//! official Rust SDK), server side only, over newline-delimited JSON-RPC on a
//! byte stream pair (stdio for `ultragit mcp`) framed by this crate: `framing`
//! reads lines under a cap, `jsonrpc` judges each line before rmcp sees it,
//! `transport` hands rmcp the good ones and answers the rest.
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
//!   `ultragit_notes::author::set_pending`, the code path of
//!   `ultragit context set`.
//! - `ultragit_flag`, `ultragit_correct` (`correct`): a correction appended
//!   to a commit's note → `ultragit_notes::correct`, the code path of
//!   `ultragit flag` and `ultragit correct`.
//!
//! - **Dependencies:** `ultragit-read` (read, deps, history, summary),
//!   `ultragit-notes` (author context, corrections), `ultragit-schema`,
//!   `gitctx` (the repository), `tool-def` (the tool declaration and its
//!   schema subset), never `llm` or `agent`; `rmcp` (the protocol, its
//!   message types and its stdio pipes), `tokio`.
//! - **Invariant:** nothing but JSON-RPC messages is written to the transport,
//!   one per line, through one writer (our error replies and rmcp's never
//!   interleave): this crate never prints; its log lines go to the [`LogSink`]
//!   the binary gives it, which writes them to stderr.
//! - **Invariant:** every line but blank ones and well-formed notifications
//!   and responses (which JSON-RPC never answers) gets a reply, and after an
//!   error the session goes on: a line that cannot be parsed (not UTF-8, nested deeper
//!   than 64 levels, not JSON, longer than 16 MiB) gets `-32700` with
//!   `"id": null`; JSON that is not a request, notification or response
//!   (`[]`, `42`, `"jsonrpc": "1.0"`, no `method`, a non-string `method`,
//!   non-object `params`) gets `-32600`, with the request's `id` when it can
//!   be read, else `null`; a request before `initialize` gets `-32600`
//!   "server not initialized: send `initialize` first" (but `ping`, and the
//!   requests of MCP's per-request lifecycle, which carry the protocol
//!   version in `_meta`, are rmcp's to answer);
//!   `initialize` or `tools/call` params rmcp cannot read get `-32602`; an
//!   unknown method `-32601`. Notifications and responses before
//!   `initialize` are ignored (rmcp would end the session on them).
//! - **Invariant:** input is bounded: a line is held only up to 16 MiB (a
//!   longer one is discarded as it streams past), and nesting is counted by a
//!   linear scan before any parser recurses.
//! - **Invariant:** when the client closes stdin, no call starts any more: at
//!   most a few calls run at once (the machine's parallelism, 2 to 8); calls
//!   waiting for a slot and requests read but not yet taken are dropped and
//!   never answered; running ones finish (each tool is one library call, not
//!   interruptible part-way) and their replies are written; then the session
//!   ends and the process exits.
//! - **Invariant:** every tool is declared the one way ([`tool_def::ToolDef`],
//!   as the writer's, git-agent's and the repo tools are) with a strict input
//!   schema table: `type: object`, `additionalProperties: false` (and serde's
//!   `deny_unknown_fields`), its mandatory fields `required`, size bounds as
//!   `maxLength`/`maxItems`; arguments are checked against it before the tool
//!   runs, and the sizes again in bytes in the tool.
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
mod framing;
mod jsonrpc;
mod queries;
mod read;
mod tool;
pub mod tools;
mod transport;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::Semaphore;

use crate::tool::ToolError;
use crate::transport::{CANCELLED, Stop};

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
    calls: Arc<Calls>,
}

/// The tool calls of one session: how many may run at once, and whether the
/// client is still there to want them.
#[derive(Debug)]
struct Calls {
    /// One permit per call that may run (tools run on the blocking pool,
    /// which would otherwise start every queued call at once).
    slots: Semaphore,
    /// Fired when the client closes stdin: calls waiting for a slot are
    /// dropped, and none starts after it.
    stop: Stop,
    /// How many calls were dropped that way (waiting for a slot, or read
    /// but not yet handed to the service).
    cancelled: Arc<AtomicUsize>,
}

impl Calls {
    fn new() -> Calls {
        Calls {
            slots: Semaphore::new(call_slots()),
            stop: Stop::new(),
            cancelled: Arc::new(AtomicUsize::new(0)),
        }
    }
}

/// How many tool calls run at once: the machine's parallelism, from 2 to 8
/// (git and file work is CPU- and disk-bound; more only adds contention, e.g.
/// corrections of one note retrying their compare-and-swap).
fn call_slots() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 8))
}

/// Why [`Server::call`] returned no result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NoResult {
    /// No tool has the name.
    UnknownTool,
    /// The call was abandoned (the client cancelled it or closed the
    /// session) before it started.
    Cancelled,
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
            calls: Arc::new(Calls::new()),
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
    /// blocking pool, once a slot is free. A call still waiting when
    /// `abandoned` resolves or the session's client goes away never starts.
    pub(crate) async fn call(
        &self,
        name: &str,
        arguments: Option<serde_json::Map<String, serde_json::Value>>,
        abandoned: impl Future<Output = ()>,
    ) -> Result<CallToolResult, NoResult> {
        let run = self.registry.runner(name).ok_or(NoResult::UnknownTool)?;
        let calls = &self.calls;
        let slot = tokio::select! {
            biased;
            () = calls.stop.wait() => None,
            () = abandoned => None,
            slot = calls.slots.acquire() => slot.ok(),
        };
        let Some(_slot) = slot else {
            calls.cancelled.fetch_add(1, Ordering::Relaxed);
            return Err(NoResult::Cancelled);
        };
        let scope = Arc::clone(&self.scope);
        let stop = calls.stop.clone();
        let arguments = arguments.unwrap_or_default();
        // Checked again on the blocking thread: the client may have gone
        // while the task waited for one.
        let outcome =
            tokio::task::spawn_blocking(move || (!stop.fired()).then(|| run(&scope, arguments)))
                .await
                .unwrap_or_else(|err| Some(Err(ToolError::internal(name, &err))));
        let Some(outcome) = outcome else {
            calls.cancelled.fetch_add(1, Ordering::Relaxed);
            return Err(NoResult::Cancelled);
        };
        match &outcome {
            Ok(_) => (self.log)(&format!("{name}: ok")),
            Err(err) => (self.log)(&format!("{name}: error: {}", err.message())),
        }
        Ok(match outcome {
            Ok(output) => output.into_result(),
            Err(err) => err.into_result(),
        })
    }

    /// Serves one MCP session over `read`/`write` until the client closes
    /// `read`; calls that have not started by then are dropped.
    pub(crate) async fn serve<R, W>(mut self, read: R, write: W) -> Result<(), ServeError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        self.calls = Arc::new(Calls::new());
        let calls = Arc::clone(&self.calls);
        let log = Arc::clone(&self.log);
        log(&format!(
            "serving {} ({} tools)",
            self.scope.root.display(),
            self.registry.names().len()
        ));
        let (transport, reader) = transport::line_transport(
            read,
            write,
            calls.stop.clone(),
            Arc::clone(&calls.cancelled),
            Arc::clone(&log),
        );
        let reading = tokio::spawn(reader);
        let served = Self::run_session(self, transport).await;
        // However the session ended, nothing more starts.
        calls.stop.fire();
        reading.abort();
        let cancelled = calls.cancelled.load(Ordering::Relaxed);
        if cancelled > 0 {
            log(&format!(
                "{cancelled} queued calls dropped: the client closed the session"
            ));
        }
        served
    }

    async fn run_session<W>(self, transport: transport::LineTransport<W>) -> Result<(), ServeError>
    where
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let log = Arc::clone(&self.log);
        let running = ServiceExt::serve(self, transport)
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
        let (stdin, stdout) = rmcp::transport::stdio_pipes();
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
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let abandoned = context.ct.cancelled();
        match self.call(&request.name, request.arguments, abandoned).await {
            Ok(result) => Ok(result.into()),
            // Never written (see `transport::CANCELLED`).
            Err(NoResult::Cancelled) => Err(ErrorData::new(
                CANCELLED,
                "the call was cancelled before it started",
                None,
            )),
            Err(NoResult::UnknownTool) => {
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

    /// `server.call(name, arguments)` that nobody abandons.
    async fn call(
        server: &Server,
        name: &str,
        arguments: Option<serde_json::Map<String, serde_json::Value>>,
    ) -> Result<CallToolResult, NoResult> {
        server.call(name, arguments, std::future::pending()).await
    }

    #[tokio::test]
    async fn calls_tools_in_the_repository() {
        let repo = TestRepo::new();
        repo.commit_file("src/lib.rs", "pub fn one() -> u32 {\n    1\n}\n", "Add one");
        let server = Server::new(&gitctx::Repo::discover(repo.path()).unwrap());
        assert_eq!(server.scope().root, repo.path().canonicalize().unwrap());

        let read = call(
            &server,
            "ultragit_read",
            arguments(json!({"paths": ["src/lib.rs"], "anchor": "one"})),
        )
        .await
        .unwrap();
        assert_eq!(read.is_error, Some(false), "{read:?}");
        let structured = read.structured_content.unwrap();
        assert_eq!(structured["query"]["files"], json!(["src/lib.rs"]));
        assert_eq!(structured["regions"], json!([]));

        let set = call(
            &server,
            "ultragit_context_set",
            arguments(json!({"dependencies": " probe.py "})),
        )
        .await
        .unwrap();
        assert_eq!(set.is_error, Some(false), "{set:?}");
        let common = server.scope().common_dir.clone();
        let pending =
            ultragit_notes::author::read_context(&ultragit_notes::author::pending_path(&common))
                .unwrap()
                .unwrap();
        assert_eq!(pending.dependencies.as_deref(), Some("probe.py"));

        let missing = call(&server, "ultragit_read", None).await.unwrap();
        assert_eq!(missing.is_error, Some(true));
        assert_eq!(
            call(&server, "ultragit_write", None).await.unwrap_err(),
            NoResult::UnknownTool
        );
    }

    #[tokio::test]
    async fn calls_that_have_not_started_are_dropped_when_the_client_goes() {
        let repo = TestRepo::new();
        repo.commit_file("src/lib.rs", "pub fn one() -> u32 {\n    1\n}\n", "Add one");
        let server = Server::new(&gitctx::Repo::discover(repo.path()).unwrap());
        let read = || arguments(json!({"paths": ["src/lib.rs"]}));
        let slots = u32::try_from(call_slots()).unwrap();

        // Every slot taken, as by running calls: the next call waits.
        let running = server.calls.slots.acquire_many(slots).await.unwrap();
        let waiting = tokio::spawn({
            let server = server.clone();
            let args = read();
            async move { call(&server, "ultragit_read", args).await }
        });
        server.calls.stop.fire();
        assert_eq!(waiting.await.unwrap().unwrap_err(), NoResult::Cancelled);
        // Slots free again, but the client is gone: nothing starts.
        drop(running);
        assert_eq!(
            call(&server, "ultragit_read", read()).await.unwrap_err(),
            NoResult::Cancelled
        );
        assert_eq!(server.calls.cancelled.load(Ordering::Relaxed), 2);

        // A call its client cancels while it waits never starts either.
        let server = Server::new(&gitctx::Repo::discover(repo.path()).unwrap());
        let _running = server.calls.slots.acquire_many(slots).await.unwrap();
        let cancelled = server
            .call("ultragit_read", read(), std::future::ready(()))
            .await;
        assert_eq!(cancelled.unwrap_err(), NoResult::Cancelled);
    }
}
