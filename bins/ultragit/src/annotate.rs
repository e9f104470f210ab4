//! `ultragit annotate [--commit REV] [--sync|--async] [--squash-sources REV...]`:
//! the writing agent on one commit, its note stored under `refs/notes/ultragit`.
//!
//! **`--sync`** (the default): resolve the commit; resolve the configuration
//! (`ultragit_annotate::Settings`: the provider flags over the limits of
//! `.ultragit-config.toml` over `[ultragit]` git config); build the provider,
//! reading the key from the variable the configuration names; collect the author context (below); run
//! `ultragit_annotate::annotate_with` on the runner's tokio runtime; print
//! `annotated <sha>: N regions, M cross-cutting concerns (enhanced|inferred)`;
//! `declined <sha>: <why> (a note records it)` when the model found nothing to
//! record; `skipped <sha>: too large: … (a note records it)` past
//! `maxDiffLines` (no model call); or `skipped <sha>: <reason>` for a trivial
//! commit (no model call, no note). Any failure
//! once the commit is known is appended to `.git/ultragit/failed.log` (time, full
//! SHA, reason) before `error: …` is printed.
//!
//! **Author context**, in this order: the hidden `--context-file PATH` (how
//! `--async` hands over the context it claimed); else `context-<sha>.json` in
//! `.git/ultragit/` when a background run for this commit failed and left its
//! claimed context behind (so a retry still gets it); else
//! `pending-context.json`. The `ULTRAGIT_*` variables are laid over it (they win)
//! and `--squash-sources` fill `squash_sources`. The file used is removed once the
//! note is stored or the commit skipped, and kept when the annotation fails.
//!
//! **`--async`** (the `post-commit` hook's mode) must return within milliseconds
//! because git waits for the hook: it resolves the commit, claims the pending
//! context for it (`author::claim_pending`, so a context set for the next commit
//! meanwhile is not taken by this one), and starts
//! `<this binary> annotate --sync --commit <sha> [--context-file <claimed>]` plus
//! the flags given, in a new process group, stdin from `/dev/null`, stdout and
//! stderr appended to `.git/ultragit/annotate.log`. It does not wait and prints
//! nothing on success. During a rebase it does nothing: git runs `post-commit` for
//! every replayed commit, and `notes.rewriteRef` plus the `post-rewrite` hook
//! (set by `init`) carry the existing notes over when the rebase ends — a fresh,
//! possibly `inferred` annotation racing that copy would replace an `enhanced`
//! one. For the same reason it does nothing after `git commit --amend` (HEAD's
//! reflog entry says `commit (amend)`) when the `post-rewrite` hook is
//! installed: `ultragit rewritten` carries the note and annotates the delta.
//! The background run gets the hidden `--keep-existing`: a note that appears
//! on the commit while it runs (carried over, synced) is kept, never replaced
//! (`kept <sha>: …`).
//!
//! **`--delta-from OLD`** (hidden; started by `ultragit rewritten` after an
//! amend that changed code): annotates only the diff OLD→commit and merges it
//! into the commit's note (`Existing::Merge`), whose provenance (`amend`,
//! `derived_from = [OLD]`) stays.
//!
//! A missing API key is an error, except for a commit that needs no model: a
//! trivial one is skipped as usual, a too-large one gets its note
//! (`ultragit_annotate::annotate_without_model`).
//!
//! **Secrets:** the key is only ever in the provider's HTTP headers; the verbose
//! trace and every error message pass through the provider's redactor.

use std::ffi::OsString;
use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::invocation::Invocation;
use agent::{ConsoleSink, NullSink, TraceSink};
use clap::Args;
use frontend::provider::{ProviderError, ProviderRequest, connect, provider_config};
use frontend::{CommandError, Context, ErrorKind, Outcome};
use gitctx::{ObjectId, Repo};
use llm::{ProviderKind, defaults};
use ultragit_annotate::{
    AnnotateOptions, AuthorContext, Existing, ProviderFlags, Report, Settings, Trivial,
};
use ultragit_notes::{author, record_failure, setup};

use crate::context;

/// The arguments of `ultragit annotate`.
#[derive(Debug, Args)]
#[command(after_long_help = after_help())]
pub struct AnnotateArgs {
    /// The commit to annotate
    #[arg(long, value_name = "REV", default_value = "HEAD")]
    commit: String,

    /// Annotate now and wait for it (the default)
    #[arg(long, conflicts_with = "run_async")]
    sync: bool,

    /// Annotate in the background and return at once (what the post-commit hook runs)
    #[arg(long = "async", id = "run_async")]
    run_async: bool,

    /// The commits a squash combined (their annotations are taken into account)
    #[arg(long, value_name = "REV", num_args = 1.., value_delimiter = ',')]
    squash_sources: Vec<String>,

    #[command(flatten)]
    provider: ProviderArgs,

    /// Stream the agent's trace (model calls, tool calls) to stderr
    #[arg(long, short)]
    verbose: bool,

    /// The author context file to use instead of the pending one (--async hands
    /// over the context it claimed this way)
    #[arg(long, value_name = "PATH", hide = true)]
    context_file: Option<PathBuf>,

    /// Keep a note that appears on the commit while annotating (the background
    /// run --async starts)
    #[arg(long, hide = true)]
    keep_existing: bool,

    /// The most model calls for this commit, chunks included [default: ultragit.maxCalls, or no cap but maxAgentTurns per run]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    max_calls: Option<u32>,

    /// Annotate only the changes since this commit and merge them into the
    /// commit's note (an amend's delta; `ultragit rewritten` starts it)
    #[arg(long, value_name = "REV", hide = true, conflicts_with = "run_async")]
    delta_from: Option<String>,
}

/// Flags that override the provider configuration (`backfill` takes them too).
#[derive(Debug, Args)]
pub(crate) struct ProviderArgs {
    /// The API: openai-responses, openai-chat or anthropic [default: ultragit.provider, or openai-responses]
    #[arg(long, value_name = "API", value_parser = parse_provider)]
    provider: Option<String>,

    /// The model [default: ultragit.model, or the provider's default]
    #[arg(long, value_name = "MODEL")]
    model: Option<String>,

    /// The API's base URL, e.g. http://127.0.0.1:8080/v1 [default: ultragit.baseUrl, or the API's own]
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,

    #[arg(long, value_name = "VAR", help = format!(
        "The environment variable holding the API key; `none` for servers without keys [default: ultragit.apiKeyEnv, or {} / {}]",
        defaults::OPENAI_API_KEY,
        defaults::ANTHROPIC_API_KEY
    ))]
    api_key_env: Option<String>,
}

impl ProviderArgs {
    pub(crate) fn flags(&self) -> ProviderFlags {
        ProviderFlags {
            provider: self.provider.clone(),
            model: self.model.clone(),
            base_url: self.base_url.clone(),
            api_key_env: self.api_key_env.clone(),
        }
    }

    /// The flags again, for the background process.
    fn to_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        for (flag, value) in [
            ("--provider", &self.provider),
            ("--model", &self.model),
            ("--base-url", &self.base_url),
            ("--api-key-env", &self.api_key_env),
        ] {
            if let Some(value) = value {
                args.push(format!("{flag}={value}"));
            }
        }
        args
    }
}

fn parse_provider(text: &str) -> Result<String, String> {
    match ProviderKind::parse(text) {
        Some(kind) => Ok(kind.as_str().to_owned()),
        None => Err(format!(
            "expected one of {}",
            ProviderKind::NAMES.join(", ")
        )),
    }
}

/// The long help's epilogue (the defaults are `llm`'s).
fn after_help() -> String {
    format!(
        "\
Examples:
  ultragit annotate                        # HEAD, now
  ultragit annotate --commit HEAD~1 --verbose
  ultragit annotate --provider openai-chat --base-url http://127.0.0.1:8080/v1 --model qwen3 --api-key-env none

Configuration, highest precedence first: the flags; [ultragit.annotate] in \
.ultragit-config.toml at the top of the working tree, for the limits only (a file in the \
repository may not choose the provider, the model, the URL or the key: those keys are \
ignored there with a warning); git config [ultragit]:
  ultragit.provider   openai-responses (default), openai-chat (Ollama, vLLM, llama.cpp, \
LM Studio, OpenRouter) or anthropic
  ultragit.model      the model; default {openai_model} (OpenAI), {anthropic_model} (Anthropic)
  ultragit.baseUrl    the API's base URL; default the provider's own
  ultragit.apiKeyEnv  the NAME of the environment variable holding the key; default \
{openai_key} or {anthropic_key}; `none` or empty: no key
  ultragit.maxDiffLines, maxAgentTurns, maxTokensPerResponse, recentAnnotationsLimit, \
chunkSize, maxChunks, maxCalls   the agent's limits   [file: max_diff_lines, max_agent_turns, \
max_tokens_per_response, recent_annotations_limit, chunk_size, max_chunks, max_calls]; \
maxTokensPerResponse defaults to 4096 (within the window), maxChunks and maxCalls to no cap
  ultragit.contextWindow  the model's context window in tokens; default 128k for the \
GPT-4.x, GPT-5, o-series, Claude and Gemini families, 8192 for other (local) models; every \
request stays within it   [file: context_window]
  ultragit.largeCommits   chunk (default: a commit past maxDiffLines is annotated in chunks of \
chunkSize files) or skip (it gets a note saying so, no model call)   [file: large_commits]
  ultragit.docsPaths      path rules of documentation, separated by commas or spaces (`*.md`, \
`**/RelNotes/*`, `CHANGELOG*`; `**` spans folders, a rule without `/` matches the file name); a \
commit touching only such files is trivial; empty: none; default release notes, change logs \
and prose   [file: docs_paths, a list]
  ultragit.toolUse        auto (default: tools, or one structured prompt when the model does \
not support them), on, off   [file: tool_use]

Author context (makes the annotation `enhanced`): `ultragit context set`, or the \
environment variables ULTRAGIT_TASK, ULTRAGIT_REASONING, ULTRAGIT_DEPENDENCIES and \
ULTRAGIT_TAGS (comma-separated), which win over the context file. The context is \
consumed by the annotation that uses it.

Trivial commits (nothing changed, lockfiles only, whitespace only, binary files only, \
documentation only by ultragit.docsPaths, merges without changes of their own) are \
skipped without calling the model. A commit past maxDiffLines (with largeCommits = skip) \
is skipped too, and a note records it; neither needs an API key. When the model says \
there is nothing worth recording (a version bump, generated code), `declined` is printed \
and a short note records it; a model that answers nothing at all fails the commit. Failed \
annotations are listed in .git/ultragit/failed.log; --async writes its output to \
.git/ultragit/annotate.log. --verbose ends with the run's turns and input and output \
tokens (annotate.stats).

Exit status: 0 when the note was stored (a declined or too-large commit's short note \
included), the commit skipped as trivial, or (--async) the background annotation \
started; 1 on failure (listed in failed.log); 2 on usage errors.",
        openai_model = defaults::OPENAI_MODEL,
        anthropic_model = defaults::ANTHROPIC_MODEL,
        openai_key = defaults::OPENAI_API_KEY,
        anthropic_key = defaults::ANTHROPIC_API_KEY,
    )
}

/// Runs `ultragit annotate` in the repository containing `cwd`; `lookup` reads the
/// environment.
pub fn run(args: &AnnotateArgs, at: &Invocation) -> Result<Outcome, CommandError> {
    let cwd = at.cwd();
    let lookup = |name: &str| at.env(name);
    let ctx = at.ctx;
    let repo = Repo::discover(cwd)?;
    let commit = repo.resolve_commit(&args.commit)?;
    let result = if args.run_async {
        start_in_background(args, &repo, commit)
    } else {
        annotate_now(args, &repo, commit, &lookup, ctx)
    };
    result.map_err(
        |err| match record_failure(&repo, &commit.to_hex(), err.message()) {
            Ok(()) => err,
            Err(record) => err.map_message(|message| {
                format!("{message} (and it could not be recorded: {record})")
            }),
        },
    )
}

/// The annotation itself (`--sync`).
fn annotate_now(
    args: &AnnotateArgs,
    repo: &Repo,
    commit: ObjectId,
    lookup: &impl Fn(&str) -> Option<String>,
    ctx: &Context,
) -> Result<Outcome, CommandError> {
    let sha = commit.to_hex();
    let Settings {
        limits,
        provider: settings,
        warnings: config_warnings,
        ..
    } = Settings::load(repo, &args.provider.flags())?;
    let limits = ultragit_annotate::AnnotateConfig {
        max_calls: args.max_calls.or(limits.max_calls),
        ..limits
    };
    for warning in &config_warnings {
        ctx.warn(warning);
    }
    let request = ProviderRequest {
        kind: settings.kind,
        model: &settings.model,
        base_url: settings.base_url.as_deref(),
        api_key_env: settings.api_key_env.as_deref(),
    };
    let source = context_source(args, repo, &sha);
    if source.is_none()
        && args.squash_sources.is_empty()
        && args.delta_from.is_none()
        && let Some(outcome) = crate::remap::after_cherry_pick(repo, commit, ctx)
    {
        return Ok(outcome);
    }
    let config = match provider_config(&request, lookup) {
        Ok(config) => config,
        Err(err @ ProviderError::MissingKey { .. }) => {
            // A trivial or too-large commit needs no model, hence no key.
            let options = annotate_options(args, repo)?;
            if let Ok(Some(report)) = ultragit_annotate::annotate_without_model(
                repo.root(),
                &sha,
                None,
                &limits,
                &options,
            ) {
                return Ok(reported(report, commit, source.as_deref(), ctx));
            }
            return Err(CommandError::from(err).map_message(|message| {
                format!("{message} (or set ultragit.apiKeyEnv; `none` for a server without keys)")
            }));
        }
        Err(err) => return Err(err.into()),
    };
    let (provider, redactor) = connect(config, ctx)?;
    let author = author_context(args, repo, source.as_deref(), lookup)?;

    let mut trace: Box<dyn TraceSink> = if args.verbose {
        let stderr = std::io::stderr();
        let color = stderr.is_terminal();
        Box::new(ConsoleSink::new(stderr, color, redactor.clone()))
    } else {
        Box::new(NullSink)
    };
    let options = annotate_options(args, repo)?;
    let report = ctx
        .block_on(ultragit_annotate::annotate_with(
            repo.root(),
            &sha,
            author,
            provider.as_ref(),
            &limits,
            trace.as_mut(),
            &options,
        ))?
        .map_err(|err| {
            // Redacted here already: the message goes to failed.log too.
            CommandError::from(err)
                .context(format_args!("annotating {} failed", commit.short()))
                .redacted(&redactor)
        })?;

    let output = reported(report, commit, source.as_deref(), ctx);
    for problem in trace.problems() {
        ctx.warn(format!("trace: {problem}"));
    }
    Ok(output)
}

/// How to annotate and store: a delta (`--delta-from`), and what becomes of a
/// note the commit already has.
fn annotate_options(args: &AnnotateArgs, repo: &Repo) -> Result<AnnotateOptions, CommandError> {
    Ok(AnnotateOptions {
        base: args
            .delta_from
            .as_deref()
            .map(|rev| repo.resolve_commit(rev))
            .transpose()?,
        existing: if args.delta_from.is_some() {
            Existing::Merge
        } else if args.keep_existing {
            Existing::Keep
        } else {
            Existing::Replace
        },
    })
}

/// The output for `report`; the author context is consumed when it was
/// used (or the commit needed none).
fn reported(report: Report, commit: ObjectId, source: Option<&Path>, ctx: &Context) -> Outcome {
    match report {
        Report::Annotated {
            regions,
            cross_cutting,
            context_level,
            warnings,
            ..
        } => {
            for warning in &warnings {
                ctx.warn(warning);
            }
            let output = Outcome::text(format!(
                "annotated {}: {}, {} ({context_level})\n",
                commit.short(),
                count(regions, "region", "regions"),
                count(
                    cross_cutting,
                    "cross-cutting concern",
                    "cross-cutting concerns"
                ),
            ));
            consume(source, ctx);
            output
        }
        Report::Declined {
            reason, warnings, ..
        } => {
            for warning in &warnings {
                ctx.warn(warning);
            }
            consume(source, ctx);
            Outcome::text(format!(
                "declined {}: {} (a note records it)\n",
                commit.short(),
                safe_io::term::sanitize_line(&reason)
            ))
        }
        Report::TooLarge { reason, .. } => {
            consume(source, ctx);
            let reason = reason.strip_prefix("skipped as ").unwrap_or(&reason);
            Outcome::text(format!(
                "skipped {}: {reason} (a note records it)\n",
                commit.short()
            ))
        }
        Report::Skipped { reason, .. } => skipped(commit, reason, source, ctx),
        Report::Kept { .. } => {
            // The author context stays for a retry: the note that won may not
            // have used it.
            Outcome::text(format!(
                "kept {}: a note appeared on it while annotating; not replaced\n",
                commit.short()
            ))
        }
    }
}

/// The output for a trivial commit (its context is consumed too).
fn skipped(commit: ObjectId, reason: Trivial, source: Option<&Path>, ctx: &Context) -> Outcome {
    consume(source, ctx);
    Outcome::text(format!("skipped {}: {reason}\n", commit.short()))
}

/// Removes the author context file an annotation used.
fn consume(source: Option<&Path>, ctx: &Context) {
    if let Some(path) = source
        && let Err(err) = author::discard(path)
    {
        ctx.warn(format!(
            "the author context was used but could not be removed: {err}"
        ));
    }
}

/// The author context file this run uses (module docs), if any exists.
fn context_source(args: &AnnotateArgs, repo: &Repo, sha: &str) -> Option<PathBuf> {
    if let Some(path) = &args.context_file {
        return Some(path.clone());
    }
    let common = repo.common_dir();
    let claimed = author::claimed_path(&common, sha);
    if claimed.is_file() {
        return Some(claimed);
    }
    let pending = author::pending_path(&common);
    pending.is_file().then_some(pending)
}

/// The context file (if any), the environment over it, and the squash sources.
fn author_context(
    args: &AnnotateArgs,
    repo: &Repo,
    source: Option<&Path>,
    lookup: &impl Fn(&str) -> Option<String>,
) -> Result<Option<AuthorContext>, CommandError> {
    let from_file = match source {
        Some(path) => author::read_context(path)?,
        None => None,
    };
    let mut context = from_file
        .unwrap_or_default()
        .merged_with(context::from_env(lookup));
    if !args.squash_sources.is_empty() {
        context.squash_sources = Some(squash_sources(repo, &args.squash_sources)?);
    }
    Ok((!context.is_empty()).then_some(context))
}

/// Squash sources as full SHAs. A revision that does not resolve is kept only
/// when it is a full SHA already (a commit no longer in this repository).
fn squash_sources(repo: &Repo, revs: &[String]) -> Result<Vec<String>, CommandError> {
    let mut out: Vec<String> = Vec::new();
    for rev in revs.iter().map(|r| r.trim()).filter(|r| !r.is_empty()) {
        let sha = match repo.resolve_commit(rev) {
            Ok(id) => id.to_hex(),
            Err(_) if rev.len() == 40 && rev.bytes().all(|b| b.is_ascii_hexdigit()) => {
                rev.to_ascii_lowercase()
            }
            Err(err) => return Err(CommandError::from(err).context("--squash-sources")),
        };
        if !out.contains(&sha) {
            out.push(sha);
        }
    }
    Ok(out)
}

/// `--async`: hand the commit to a detached `annotate --sync` and return.
fn start_in_background(
    args: &AnnotateArgs,
    repo: &Repo,
    commit: ObjectId,
) -> Result<Outcome, CommandError> {
    if rebase_in_progress(repo) || amend_left_to_post_rewrite(repo, commit) {
        return Ok(Outcome::nothing());
    }
    let sha = commit.to_hex();
    let common = repo.common_dir();
    let claimed = match &args.context_file {
        Some(path) => Some(path.clone()),
        None => author::claim_pending(&common, &sha)?,
    };
    let mut extra: Vec<OsString> = vec!["--keep-existing".into()];
    if let Some(path) = &claimed {
        extra.push("--context-file".into());
        extra.push(path.into());
    }
    for source in &args.squash_sources {
        extra.push(format!("--squash-sources={source}").into());
    }
    extra.extend(args.provider.to_args().into_iter().map(OsString::from));
    if args.verbose {
        extra.push("--verbose".into());
    }
    if let Some(n) = args.max_calls {
        extra.push(format!("--max-calls={n}").into());
    }
    spawn_annotation(repo, commit, &extra)?;
    Ok(Outcome::nothing())
}

/// Starts `<this binary> annotate --sync --commit <commit> <extra…>` detached:
/// a new process group, stdin from `/dev/null`, stdout and stderr appended to
/// `.git/ultragit/annotate.log`. Does not wait.
pub(crate) fn spawn_annotation(
    repo: &Repo,
    commit: ObjectId,
    extra: &[OsString],
) -> Result<(), CommandError> {
    let sha = commit.to_hex();
    let state = author::state(&repo.common_dir())?;
    // Opened through the directory handle: never through a link.
    let open_log = || state.append("annotate.log");
    let mut log = open_log()?;
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let _ = writeln!(log, "{now} annotate {sha}");
    let exe = std::env::current_exe().map_err(|err| {
        CommandError::from_error(ErrorKind::Internal, err)
            .context("cannot find the ultragit executable")
    })?;

    let mut cmd = Command::new(exe);
    cmd.args(["annotate", "--sync", "--commit", &sha]);
    cmd.args(extra);
    cmd.current_dir(repo.root())
        .stdin(Stdio::null())
        .stdout(open_log()?)
        .stderr(log);
    detach(&mut cmd);
    cmd.spawn().map_err(|err| {
        CommandError::from_error(ErrorKind::Internal, err).context(format_args!(
            "cannot start the background annotation of {}",
            commit.short()
        ))
    })?;
    Ok(())
}

/// True when `commit` is HEAD and was just made by `git commit --amend` (HEAD's
/// reflog says `commit (amend)`) while the `post-rewrite` hook is installed: that
/// hook carries the note over and annotates only the amend's delta, so a fresh
/// annotation here would race it and replace the author's context.
fn amend_left_to_post_rewrite(repo: &Repo, commit: ObjectId) -> bool {
    let amended = repo.head().ok().and_then(|head| head.commit()) == Some(commit)
        && repo
            .reflog_message("HEAD", commit, 1)
            .ok()
            .flatten()
            .is_some_and(|message| message.starts_with("commit (amend)"));
    amended
        && repo
            .hooks_dir()
            .is_ok_and(|dir| setup::hook_installed(&dir, "post-rewrite"))
}

/// True while `git rebase` replays commits (either backend; `rebase-apply` without
/// `rebasing` is `git am`, whose commits are new).
pub(crate) fn rebase_in_progress(repo: &Repo) -> bool {
    let git_dir = repo.git_dir();
    git_dir.join("rebase-merge").is_dir() || git_dir.join("rebase-apply/rebasing").exists()
}

/// Puts the child in a process group of its own, so a terminal's signals (^C in
/// the shell that ran `git commit`) do not reach it.
#[cfg(unix)]
pub(crate) fn detach(cmd: &mut Command) {
    use std::os::unix::process::CommandExt as _;
    cmd.process_group(0);
}

#[cfg(not(unix))]
pub(crate) fn detach(_cmd: &mut Command) {}

/// `1 region`, `2 regions`.
pub(crate) fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_names() {
        assert_eq!(parse_provider("chat").unwrap(), "openai-chat");
        assert_eq!(parse_provider("anthropic").unwrap(), "anthropic");
        assert!(
            parse_provider("gemini")
                .unwrap_err()
                .contains("openai-responses")
        );
    }

    #[test]
    fn counts() {
        assert_eq!(count(1, "region", "regions"), "1 region");
        assert_eq!(count(0, "region", "regions"), "0 regions");
        assert_eq!(count(2, "region", "regions"), "2 regions");
    }
}
