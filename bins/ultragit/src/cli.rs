//! The command line of `ultragit` and the dispatch to one module per command.

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use frontend::{CommandError, Context, Outcome};

use crate::invocation::Invocation;
use crate::{
    annotate, backfill, cache, context, correct, deps, doctor, history, init, mcp, read, remap,
    rewritten, show, summary, sync, transfer,
};

#[derive(Debug, Parser)]
#[command(
    name = "ultragit",
    version,
    about,
    long_about = LONG_ABOUT,
    after_long_help = AFTER_LONG_HELP,
    arg_required_else_help = true
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,

    /// Print the causes of an error (its full chain) on stderr
    #[arg(long, global = true)]
    debug: bool,
}

impl frontend::Cli for Cli {
    fn debug(&self) -> bool {
        self.debug
    }
}

const LONG_ABOUT: &str = "ultragit keeps the reasoning behind code next to the code: an LLM agent records, per commit, why each changed function, type or config block exists (intent, constraints, hidden dependencies, rejected alternatives, risks) as a JSON git note under refs/notes/ultragit, and `read` turns blame and those notes into scored, token-budgeted context for an agent about to edit the code — with no LLM on the read path.

Start with `ultragit init` in a repository: from then on every commit is annotated in the background.";

const AFTER_LONG_HELP: &str = "\
Environment:
  OPENAI_API_KEY, ANTHROPIC_API_KEY  the API key, by default; ultragit.apiKeyEnv names another variable
  ULTRAGIT_TASK, ULTRAGIT_REASONING, ULTRAGIT_DEPENDENCIES, ULTRAGIT_TAGS
                                     author context for the next annotation (see `ultragit context`)
  HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, NO_PROXY   proxies for the model's API

Exit status: 0 on success, 1 when the command fails (`error: ...` on stderr; --debug adds \
its causes), 2 on usage errors.";

#[derive(Debug, Subcommand)]
enum Command {
    /// Annotate a commit: an LLM agent records why each changed unit exists, as a git note
    Annotate(annotate::AnnotateArgs),
    /// Set the repository up: notes ref, post-commit and post-rewrite hooks, notes rewriting, defaults
    Init(init::InitArgs),
    /// Record, show or clear the author context the next annotation uses
    Context(context::ContextArgs),
    /// Print a commit's annotation
    Show(show::ShowArgs),
    /// Read the recorded reasons behind code: blame + notes, scored and trimmed to a budget
    Read(read::ReadArgs),
    /// List the annotated regions that depend on a unit (from the reverse dependency index)
    Deps(deps::DepsArgs),
    /// The "why" timeline of a file or unit: every annotation that touched it, across renames
    History(history::HistoryArgs),
    /// Roll up what the annotations say about a file's units, or a directory's files
    Summary(summary::SummaryArgs),
    /// Carry notes to the commits a server's rebase or squash merge made (matched by patch-id)
    Remap(remap::RemapArgs),
    /// Carry notes through amend and rebase (run by the post-rewrite hook; reads stdin)
    #[command(hide = true)]
    Rewritten(rewritten::RewrittenArgs),
    /// Check the set-up (hooks, rewrite config, notes, provider, sync, caches); --fix repairs the safe parts
    Doctor(doctor::DoctorArgs),
    /// Annotate existing history: the unannotated commits of a range, several at once
    Backfill(backfill::BackfillArgs),
    /// Share annotations through a git remote: fetch, merge (JSON-aware), push without force
    Sync(sync::SyncArgs),
    /// Write every annotation as JSON Lines (commit + note), newest first
    Export(transfer::ExportArgs),
    /// Attach the annotations of an `ultragit export` file, merging with existing ones
    Import(transfer::ImportArgs),
    /// Mark a commit's annotation (or some of its regions) as doubtful, with a reason
    Flag(correct::FlagArgs),
    /// Correct one field of one region of a commit's annotation, with a reason
    Correct(correct::CorrectArgs),
    /// Serve read and author context to coding agents over MCP (stdio)
    Mcp(mcp::McpArgs),
    /// Keep the blame and outline caches following the repository (run by the post-commit hook)
    Cache(cache::CacheArgs),
}

/// Runs the command `cli` names.
pub fn run(cli: Cli, ctx: &Context) -> Result<Outcome, CommandError> {
    // A vanished current directory: discovery from "." then fails with a clear
    // "Not a git repository" error.
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let at = &Invocation::new(cwd, ctx);
    match cli.command {
        Command::Annotate(args) => annotate::run(&args, at),
        Command::Init(args) => init::run(&args, at),
        Command::Context(args) => context::run(&args, at),
        Command::Show(args) => show::run(&args, at),
        Command::Read(args) => read::run(&args, at),
        Command::Deps(args) => deps::run(&args, at),
        Command::History(args) => history::run(&args, at),
        Command::Summary(args) => summary::run(&args, at),
        Command::Remap(args) => remap::run(&args, at),
        Command::Rewritten(args) => rewritten::run(&args, at, &mut std::io::stdin().lock()),
        Command::Doctor(args) => doctor::run(&args, at),
        Command::Backfill(args) => backfill::run(&args, at),
        Command::Sync(args) => sync::run(&args, at),
        Command::Export(args) => transfer::export(&args, at),
        Command::Import(args) => transfer::import(&args, at),
        Command::Flag(args) => correct::flag(&args, at),
        Command::Correct(args) => correct::run(&args, at),
        Command::Mcp(args) => mcp::run(&args, at),
        Command::Cache(args) => cache::run(&args, at),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn cli_definition_is_valid() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
