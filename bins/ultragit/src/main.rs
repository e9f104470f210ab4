//! `ultragit`: records why code exists as git notes, and reads it back for agents.
//!
//! A thin front end: `main` hands the command line to `frontend::run` (parsing,
//! printing, the error shape and exit codes are the same in all three binaries);
//! [`cli`] defines the arguments and calls one module per command:
//!
//! - `ultragit annotate [--commit REV] [--sync|--async] [--squash-sources REV...]`
//!   (spec 000, [`annotate`]): the writing agent on one commit, its note stored
//!   under `refs/notes/ultragit`; `--async` is the `post-commit` hook's mode.
//!   Provider flags `--provider --model --base-url --api-key-env` override the
//!   `[ultragit]` configuration.
//! - `ultragit backfill [RANGE] [--since DATE] [--max-commits N] [--paths P…]
//!   [--concurrency N] [--shard I/N] [--dry-run]` ([`backfill`]): the unannotated
//!   commits of existing history, several at once, resumable.
//! - `ultragit init` ([`init`]): notes ref, `.git/ultragit/`, the `post-commit`,
//!   `post-rewrite`, `post-merge` and `post-checkout` hooks, notes rewriting,
//!   default configuration, and a commit-graph with changed-path Bloom filters
//!   (unless `--no-commit-graph`).
//! - `ultragit rewritten amend|rebase` (hidden, [`rewritten`]): the
//!   `post-rewrite` hook's command; carries notes through amend, rebase, squash.
//! - `ultragit context set|show|clear` ([`context`]): the author context the next
//!   annotation consumes (also the `ULTRAGIT_*` environment variables).
//! - `ultragit show [REV] [--format pretty|json]` ([`show`]): a commit's annotation.
//! - `ultragit sync [REMOTE] [--enable]` ([`sync`]): notes fetched into a
//!   tracking ref, merged JSON-aware, pushed without force; `--enable` (and
//!   `init --sync`) adds the fetch refspec and a `pre-push` hook.
//! - `ultragit export [--since DATE] [-o FILE]`, `ultragit import FILE`
//!   ([`transfer`]): annotations as JSON Lines.
//! - `ultragit read [OPTIONS] <PATH>... [<ANCHOR>]` (spec 003): blame and the
//!   ultragit notes of the code in scope, scored and token-budgeted, rendered as
//!   markdown (default), JSON or plain text by `ultragit-read`. How positionals
//!   split into paths and an anchor, and how paths are resolved, is in [`read`].
//!   Warnings are part of the rendered output and, for markdown and pretty, are
//!   also printed on stderr as `warning: …`.
//! - `ultragit deps <PATH> <ANCHOR>` ([`deps`]), `ultragit history <PATH>
//!   [<ANCHOR>]` ([`history`]), `ultragit summary <PATH|DIR> [--max-tokens N]`
//!   ([`summary`]), each with `--format markdown|json|pretty`: the regions
//!   depending on a unit (reverse dependency index), a unit's annotations across
//!   renames, per-unit rollups; output and errors as `read`'s (the JSON error
//!   object carries the command's own `$schema`).
//! - `ultragit doctor [--format text|json] [--fix] [--online]` ([`doctor`]):
//!   hooks, rewrite config, notes (malformed, unreachable), provider, sync and
//!   cache checks, each ok/warn/fail with its fix; `--fix` applies the safe
//!   repairs; exit 1 when a check fails.
//! - `ultragit remap [--onto REF] [--dry-run] [--format text|json]` ([`remap`]):
//!   notes of commits a server rebased or squash-merged carried to the commits
//!   on REF (default `origin/HEAD`) that make the same change. A cherry-picked
//!   commit gets its original's note on the post-commit path (no model call).
//! - `ultragit flag <COMMIT> [--file F [--anchor A]] --reason TEXT` and
//!   `ultragit correct <COMMIT> --file F --anchor A --field FIELD
//!   (--set|--add|--remove) TEXT --reason TEXT` ([`correct`]): corrections
//!   appended to a commit's note; `read` shows them.
//! - `ultragit cache warm [--background]` ([`cache`]): prunes the blame cache
//!   and carries its blame forward to HEAD; every hook `init` installs, and a
//!   successful `sync`, start it detached.
//! - `ultragit mcp [--repo DIR]` ([`mcp`]): the MCP server (`ultragit-mcp`) on
//!   stdio: `ultragit_read`, `ultragit_deps`, `ultragit_history`,
//!   `ultragit_summary`, `ultragit_context_set`, `ultragit_flag`,
//!   `ultragit_correct`; JSON-RPC only on stdout.
//!
//! Environment: the variable the provider configuration names holds the API key
//! (`OPENAI_API_KEY` or `ANTHROPIC_API_KEY` by default); `ULTRAGIT_TASK`,
//! `ULTRAGIT_REASONING`, `ULTRAGIT_DEPENDENCIES`, `ULTRAGIT_TAGS` add author
//! context; `HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`, `NO_PROXY` set proxies. The
//! names are constants in `frontend::env`; only this binary reads them.
//!
//! Exit status (`frontend`'s table): 0 on success (a skipped trivial commit
//! included); 1 when the command fails (`error: …` on stderr, `caused by: …`
//! lines with `--debug`, `hint: …` lines; or with `read --format json` the spec's
//! JSON error object on stdout); 2 on usage errors (clap), including `ultragit`
//! without arguments (for `read --format json`, with the JSON error object on
//! stdout too). Output to a closed pipe (`ultragit read … | head`) is not a
//! failure: exit 0. The hidden `--generate KIND` flag (shell completions for
//! `make install`) is handled by the runner before clap so it stays out of
//! `--help`.

mod annotate;
mod backfill;
mod cache;
mod cli;
mod context;
mod correct;
mod deps;
mod doctor;
mod history;
mod hooks;
mod init;
mod invocation;
mod mcp;
mod read;
mod remap;
mod rewritten;
mod show;
mod summary;
mod sync;
mod transfer;

fn main() -> std::process::ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // `read --format json` answers even its usage errors in JSON (see `read`).
    if let Some(err) = read::json_usage_error::<cli::Cli>(&args) {
        return frontend::run(args, |_: read::AnyArgs, _| Err(err));
    }
    frontend::run(args, cli::run)
}
