//! `ultragit mcp [--repo DIR]`: the MCP server of `ultragit-mcp` on stdin and
//! stdout, for coding agents (Claude Code, Codex, any MCP client). The server is
//! scoped to the repository containing `--repo` (default: the current
//! directory). stdout carries JSON-RPC only; log lines go to stderr as
//! `ultragit mcp: …`. Exit 0 when the client closes the session (calls that
//! have not started by then are dropped), 1 when the directory is not in a
//! repository or the session fails.

use std::path::PathBuf;

use crate::invocation::Invocation;
use clap::Args;
use frontend::{CommandError, ErrorKind, Outcome};
use gitctx::Repo;
use ultragit_notes::correct;

/// The arguments of `ultragit mcp`.
#[derive(Debug, Args)]
#[command(after_long_help = AFTER_HELP)]
pub struct McpArgs {
    /// The repository to serve (any directory inside its working tree)
    #[arg(long, value_name = "DIR")]
    repo: Option<PathBuf>,
}

const AFTER_HELP: &str = "\
Tools: ultragit_read (paths, anchor or lines, max_tokens, min_confidence, tags), \
ultragit_deps (path, anchor), ultragit_history (path, anchor), ultragit_summary (path, \
max_tokens), ultragit_context_set (task, reasoning, dependencies, tags for the next \
commit), ultragit_flag (commit, file, anchor, reason) and ultragit_correct (commit, file, \
anchor, field, operation, value, reason). Corrections are recorded as GIT_AUTHOR_NAME \
<GIT_AUTHOR_EMAIL> when the server's environment sets them, else git config's user.name \
<user.email>.

Register it with an agent, e.g.:
  claude mcp add ultragit -- ultragit mcp
  codex mcp add ultragit -- ultragit mcp

Input is one JSON-RPC message per line (at most 16 MiB); malformed lines are answered \
with JSON-RPC errors (-32700, -32600) and the session goes on. When the client closes \
stdin, calls that have not started are dropped and the server exits once the running \
ones finish.

Exit status: 0 when the client ends the session, 1 when the directory is not in a \
repository or the session fails, 2 on usage errors.";

/// Serves the repository containing `args.repo` (or `cwd`) until the client
/// closes stdin.
pub fn run(args: &McpArgs, at: &Invocation) -> Result<Outcome, CommandError> {
    let cwd = at.cwd();
    let env = |name: &str| at.env(name);
    let ctx = at.ctx;
    let dir = args.repo.as_deref().unwrap_or(cwd);
    let repo = Repo::discover(dir).map_err(|err| {
        CommandError::from(err).with_hint(
            "start `ultragit mcp` inside a repository's working tree, or pass --repo DIR",
        )
    })?;
    let log: ultragit_mcp::LogSink = ctx.line_sink("ultragit mcp: ");
    let identity = [correct::GIT_AUTHOR_NAME, correct::GIT_AUTHOR_EMAIL]
        .into_iter()
        .filter_map(|name| Some((name.to_owned(), env(name)?)))
        .collect();
    let server = ultragit_mcp::Server::new(&repo)
        .with_log(log)
        .with_identity_env(identity);
    ctx.block_on(server.serve_stdio())?
        .map_err(|err| CommandError::from_error(ErrorKind::Internal, err))?;
    Ok(Outcome::nothing())
}
