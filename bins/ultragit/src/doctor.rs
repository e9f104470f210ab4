//! `ultragit doctor [--format text|json] [--fix] [--online]`: the checks of
//! `ultragit_notes::doctor`, printed aligned for people or as JSON.
//!
//! The binary adds what only it can: whether the key's variable is set (the
//! key itself is never printed), the hook program (this very binary,
//! `current_exe` with links resolved, as `init` does) and, with `--online`,
//! one tiny request through the configured provider (`provider-online`, right
//! after `provider`): one attempt, no retries, 30 s at most, and the error
//! reported by class (refused key, unknown model or URL, rate limit,
//! connection, timeout, malformed reply). Without `--online` nothing goes over
//! the network.
//!
//! Exit status: 0 when no check failed (warnings do not count), 1 when one did.

use std::fmt::Write as _;
use std::time::Duration;

use crate::invocation::Invocation;
use clap::{Args, ValueEnum};
use frontend::provider::{ProviderRequest, connect, provider_config};
use frontend::{CommandError, Context, Outcome};
use gitctx::Repo;
use llm::{CompletionRequest, LlmError, Message};
use safe_io::term::sanitize_line;
use ultragit_annotate::{ProviderFlags, Settings};
use ultragit_notes::doctor::{self, Check, Inputs, Options, Report, Status};

/// The arguments of `ultragit doctor`.
#[derive(Debug, Args)]
#[command(after_long_help = AFTER_HELP)]
pub struct DoctorArgs {
    /// Output format: text (aligned, for people) or json ({"checks":[{"id","status","message","fix"}],"ok","fixed"})
    #[arg(long, value_name = "FORMAT", value_enum, default_value_t = DoctorFormat::Text)]
    format: DoctorFormat,

    /// Apply the safe repairs (hook blocks, rewrite config, notes ref, sync refspec, stale blame cache, commit-graph) and report them
    #[arg(long)]
    fix: bool,

    /// Also send one tiny request to the provider and report how it failed, if it did
    #[arg(long)]
    online: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum DoctorFormat {
    Text,
    Json,
}

const AFTER_HELP: &str = "\
Checks, each ok, warn or fail with the fix:
  hooks.post-commit, hooks.post-rewrite  the hook exists in git's hooks directory, holds the \
ultragit block, is executable, is not a link into the working tree, and the program it runs \
exists; its block warms the read caches (warn for an older block that does not)
  hooks.post-merge, hooks.post-checkout  the same (warn when missing: they only warm the \
read caches after a merge, a pull or a branch checkout)
  hooks.pre-push       the same, when notes sync is enabled (ultragit.syncRemote)
  rewrite-config       notes.rewriteRef covers refs/notes/ultragit; notes.rewrite.amend/rebase \
not false. The rewrite mode (notes.rewriteMode, GIT_NOTES_REWRITE_MODE) is reported, not \
required: it is yours, and the post-rewrite hook rewrites refs/notes/ultragit whatever it is \
(warn for a mode git does not know)
  notes-ref            refs/notes/ultragit exists
  malformed-notes      every note parses (count and first commits; notes over 4 MiB counted too)
  unreachable-notes    notes on commits no ref reaches (warn; fix: ultragit remap)
  provider             provider, model, base URL resolve and the key's variable is set (no network)
  provider-online      with --online: one tiny request through the provider
  sync                 with ultragit.syncRemote: the remote and its notes fetch refspec exist; \
no forced refspec overwrites local notes. Sync not enabled is ok (a note, not a warning)
  cache                size of .git/ultragit/ (its caches are always safe to delete) and of \
the blame cache, with its entries outside the kept window (commits not among the newest 20,000 \
reachable from HEAD or a branch; no read uses them)
  commit-graph         the commit-graph has changed-path Bloom filters, so git blame and \
git log -- PATH skip commits that do not touch the file (warn; fix: git commit-graph write \
--reachable --changed-paths); ok when core.commitGraph is false
  failures             commits in .git/ultragit/failed.log still without a note (warn)

--fix applies only safe repairs: it installs or repairs hook blocks (other hook lines are kept), \
sets notes.rewriteRef and notes.rewrite.* in .git/config (never notes.rewriteMode), creates the notes ref, adds the sync fetch refspec, and \
prunes the blame cache's entries outside the kept window, and writes a commit-graph with \
changed-path Bloom filters. \
It never deletes a note, a hook line or a config value; the report shows the state after it.

Exit status: 0 when no check failed (warnings included), 1 when one failed or the command \
could not run, 2 on usage errors.";

/// Runs the checks in the repository containing `cwd`; `lookup` reads the
/// environment.
pub fn run(args: &DoctorArgs, at: &Invocation) -> Result<Outcome, CommandError> {
    let cwd = at.cwd();
    let lookup = |name: &str| at.env(name);
    let ctx = at.ctx;
    let repo = Repo::discover(cwd)?;
    let exe = crate::hooks::ultragit_executable()?;
    let key_is_set = |name: &str| lookup(name).is_some_and(|value| !value.trim().is_empty());
    let rewrite_mode = lookup(doctor::REWRITE_MODE_ENV);
    let provider = |repo: &Repo| ultragit_annotate::provider_check(repo, &key_is_set);
    let inputs = Inputs {
        ultragit: &exe,
        provider: &provider,
        rewrite_mode_env: rewrite_mode.as_deref(),
    };
    let mut report = doctor::diagnose(&repo, &inputs, &Options { fix: args.fix });
    if args.online {
        report.insert_after("provider", online(&repo, &lookup, ctx));
    }
    let text = match args.format {
        DoctorFormat::Text => render_text(&report),
        DoctorFormat::Json => report.to_json(),
    };
    let outcome = Outcome::text(text);
    Ok(if report.ok() {
        outcome
    } else {
        outcome.failed()
    })
}

/// One line per check, the ids aligned; each fix on the line below; then what
/// `--fix` changed and a summary. Text from the repository is escaped.
fn render_text(report: &Report) -> String {
    let width = report.checks.iter().map(|c| c.id.len()).max().unwrap_or(0);
    let mut out = String::new();
    for check in &report.checks {
        let label = match check.status {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Fail => "FAIL",
        };
        let _ = writeln!(
            out,
            "{label:<4}  {:<width$}  {}",
            check.id,
            sanitize_line(&check.message)
        );
        if let Some(fix) = &check.fix {
            let _ = writeln!(
                out,
                "{:<4}  {:<width$}  fix: {}",
                "",
                "",
                sanitize_line(fix)
            );
        }
    }
    for change in &report.fixed {
        let _ = writeln!(out, "fixed: {}", sanitize_line(change));
    }
    let count = |status: Status| report.checks.iter().filter(|c| c.status == status).count();
    let (failed, warned) = (count(Status::Fail), count(Status::Warn));
    let _ = match (failed, warned) {
        (0, 0) => writeln!(out, "all {} checks passed", report.checks.len()),
        (0, w) => writeln!(
            out,
            "no check failed; {w} warning{}",
            if w == 1 { "" } else { "s" }
        ),
        (f, w) => writeln!(
            out,
            "{f} check{} failed, {w} warning{}",
            if f == 1 { "" } else { "s" },
            if w == 1 { "" } else { "s" }
        ),
    };
    out
}

/// `provider-online`: one tiny request, one attempt.
fn online(repo: &Repo, lookup: &impl Fn(&str) -> Option<String>, ctx: &Context) -> Check {
    const ID: &str = "provider-online";
    let settings = match Settings::load(repo, &ProviderFlags::default()) {
        Ok(settings) => settings.provider,
        Err(err) => return Check::fail(ID, format!("not tried: {err}")),
    };
    let request = ProviderRequest {
        kind: settings.kind,
        model: &settings.model,
        base_url: settings.base_url.as_deref(),
        api_key_env: settings.api_key_env.as_deref(),
    };
    let mut config = match provider_config(&request, lookup) {
        Ok(config) => config,
        Err(err) => return Check::fail(ID, format!("not tried: {err}")),
    };
    config.http.retry.max_attempts = 1;
    config.http.connect_timeout = Duration::from_secs(10);
    config.http.request_timeout = Duration::from_secs(30);
    config.http.overall_timeout = Duration::from_secs(30);
    let (provider, redactor) = match connect(config, ctx) {
        Ok(connected) => connected,
        Err(err) => return Check::fail(ID, format!("not tried: {err}")),
    };
    let request = CompletionRequest {
        messages: vec![Message::user("Reply with the single word: ok")],
        max_tokens: Some(16),
        ..CompletionRequest::default()
    };
    let target = format!("{} {}", provider.name(), provider.model());
    match ctx.block_on(provider.complete(&request)) {
        Ok(Ok(_)) => Check::ok(ID, format!("{target} answered a one-line request")),
        Ok(Err(err)) => {
            let (class, fix) = classify(&err);
            Check::fail(
                ID,
                format!("{target}: {class}: {}", redactor.redact(&err.to_string())),
            )
            .with_fix(fix)
        }
        Err(err) => Check::fail(ID, format!("not tried: {}", err.message())),
    }
}

/// The class of a provider error and what to do about it.
fn classify(err: &LlmError) -> (&'static str, &'static str) {
    let last = match err {
        LlmError::RetriesExhausted { last, .. } => last.as_ref(),
        other => other,
    };
    match (last, err.status()) {
        (_, Some(401 | 403)) => (
            "the key was refused",
            "check the key in the variable ultragit.apiKeyEnv names",
        ),
        (_, Some(404)) => (
            "the model or URL is unknown to the server",
            "check ultragit.model and ultragit.baseUrl",
        ),
        (_, Some(429)) => (
            "rate limited",
            "wait, or check the account's quota; annotations retry by themselves",
        ),
        (_, Some(400..=499)) => (
            "the server refused the request",
            "check ultragit.provider (the API kind) and ultragit.model",
        ),
        (_, Some(_)) => ("the server failed", "try again later"),
        (LlmError::Transport { .. }, _) => (
            "cannot connect",
            "check ultragit.baseUrl, the network and the proxy variables",
        ),
        (LlmError::Timeout { .. }, _) => (
            "no answer in time",
            "check ultragit.baseUrl and that the server is running",
        ),
        (LlmError::Malformed { .. } | LlmError::TooLarge { .. }, _) => (
            "the reply is not what the API returns",
            "check ultragit.provider matches the server behind ultragit.baseUrl",
        ),
        _ => (
            "the request failed",
            "check git config ultragit.provider, ultragit.model, ultragit.baseUrl",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_aligned_with_fixes_below() {
        let report = Report {
            checks: vec![
                Check::ok("notes-ref", "refs/notes/ultragit: 2 notes"),
                Check::fail("rewrite-config", "bad\u{1b}[31m mode").with_fix("git config x y"),
                Check::warn("cache", "big"),
            ],
            fixed: vec!["set x=y".to_owned()],
        };
        let text = render_text(&report);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "ok    notes-ref       refs/notes/ultragit: 2 notes"
        );
        assert_eq!(lines[1], "FAIL  rewrite-config  bad\\x1b[31m mode");
        assert_eq!(lines[2], "                      fix: git config x y");
        assert_eq!(lines[3], "warn  cache           big");
        assert_eq!(lines[4], "fixed: set x=y");
        assert_eq!(lines[5], "1 check failed, 1 warning");
    }

    #[test]
    fn error_classes() {
        let api = |status| LlmError::Api {
            provider: "openai-chat",
            status,
            message: "no".to_owned(),
        };
        assert_eq!(classify(&api(401)).0, "the key was refused");
        assert_eq!(
            classify(&api(404)).0,
            "the model or URL is unknown to the server"
        );
        let exhausted = LlmError::RetriesExhausted {
            provider: "openai-chat",
            attempts: 1,
            last: Box::new(api(429)),
        };
        assert_eq!(classify(&exhausted).0, "rate limited");
        let refused = LlmError::Transport {
            provider: "openai-chat",
            message: "refused".to_owned(),
        };
        assert_eq!(classify(&refused).0, "cannot connect");
    }
}
