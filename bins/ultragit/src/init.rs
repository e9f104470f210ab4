//! `ultragit init`: sets the repository up for ultragit (all the work is
//! `ultragit_annotate::setup::init`) and says what it did: the notes ref, the
//! state directory, the `post-commit` and `post-rewrite` hooks, notes
//! rewriting, the default settings and which model will annotate.
//!
//! The hook runs this very binary (`current_exe`, symlinks resolved), so the
//! repository keeps working with the build that set it up wherever `PATH` points.

use std::fmt::Write as _;

use clap::Args;
use frontend::{CommandError, Outcome};
use gitctx::Repo;
use ultragit_annotate::setup;
use ultragit_annotate::{NOTES_REF, ProviderFlags, Settings, author};

use crate::hooks;
use crate::invocation::Invocation;

/// The arguments of `ultragit init`.
#[derive(Debug, Args)]
#[command(after_long_help = AFTER_HELP)]
pub struct InitArgs {
    /// Also share annotations through a remote (as `ultragit sync --enable`)
    #[arg(long = "sync")]
    sync: bool,

    /// The remote for --sync (default: the current branch's upstream remote, else origin)
    #[arg(long, value_name = "REMOTE", requires = "sync")]
    remote: Option<String>,
}

const AFTER_HELP: &str = "\
What it does (running it again is harmless):
  - creates the notes ref refs/notes/ultragit and the directory .git/ultragit/;
  - installs a post-commit hook that starts `ultragit annotate --async` and, detached, \
`ultragit cache warm --background` (the blame cache carried forward to the new commit), \
and returns at once; an existing shell hook keeps its lines (the ultragit block is added after its \
#! line), a hook in another language is left alone and the line to add is printed;
  - installs a post-rewrite hook (same rules) that runs the hidden `ultragit rewritten` \
after `git commit --amend` and `git rebase`: a message-only amend or a reword copies the \
note, an amend that changes code keeps the original's regions and author context and \
annotates only its delta in the background, a squash or fixup gets a note synthesized \
from all of its sources; it never fails the git command;
  - sets notes.rewriteRef=refs/notes/ultragit, notes.rewrite.amend=true and \
notes.rewrite.rebase=true; notes.rewriteMode is left as it is (it applies to every notes \
ref, your own included): the hook writes the final note whatever git made of the copies;
  - writes the default [ultragit] settings that are not set yet;
  - with --sync [--remote R]: what `ultragit sync --enable R` does (fetch refspec for \
refs/notes/remotes/R/ultragit, ultragit.syncRemote=R, a pre-push hook that syncs \
the notes and never fails the push).

Exit status: 0 on success, 1 on failure, 2 on usage errors.";

/// Sets up the repository containing `cwd`.
pub fn run(args: &InitArgs, at: &Invocation) -> Result<Outcome, CommandError> {
    let cwd = at.cwd();
    let ctx = at.ctx;
    let repo = Repo::discover(cwd)?;
    let exe = hooks::ultragit_executable()?;
    let report = setup::init(&repo, &exe)?;
    let sync = if args.sync {
        let remote = match &args.remote {
            Some(remote) => remote.clone(),
            None => ultragit_annotate::sync::default_remote(&repo)?,
        };
        Some(ultragit_annotate::sync::enable(&repo, &remote, &exe)?)
    } else {
        None
    };

    let mut output = Outcome::nothing();
    let text = &mut output.stdout;
    let _ = writeln!(text, "ultragit is set up in {}", repo.root().display());
    let _ = writeln!(
        text,
        "  notes ref        {NOTES_REF} ({})",
        if report.notes_ref_created {
            "created"
        } else {
            "already there"
        }
    );
    let _ = writeln!(
        text,
        "  state directory  {}",
        author::state_dir(&repo.common_dir()).display()
    );
    hooks::describe_hook(
        text,
        ctx,
        "post-commit hook ",
        &report.hook_path,
        &report.hook,
        "add these lines to it so each commit is annotated",
    );
    hooks::describe_hook(
        text,
        ctx,
        "post-rewrite hook",
        &report.rewrite_hook_path,
        &report.rewrite_hook,
        "add these lines to it so amend and rebase keep the notes",
    );
    let _ = writeln!(
        text,
        "  notes rewriting  notes.rewriteRef={NOTES_REF}, {}",
        setup::REWRITE_CONFIG
            .iter()
            .map(|(key, value)| format!("{key}={value}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if report.config_written.is_empty() {
        let _ = writeln!(text, "  settings         [ultragit] already configured");
    } else {
        let _ = writeln!(
            text,
            "  settings         wrote the defaults of {}",
            report.config_written.join(", ")
        );
    }
    if let Some(sync) = &sync {
        text.push_str(&crate::sync::describe_enable(sync, ctx));
    }
    // Which model will annotate, so a missing key shows up now rather than in
    // .git/ultragit/failed.log after the next commit.
    match Settings::load(&repo, &ProviderFlags::default()) {
        Ok(Settings {
            provider,
            sources,
            warnings,
            ..
        }) => {
            for warning in &warnings {
                ctx.warn(warning);
            }
            let key = match &provider.api_key_env {
                Some(variable) => format!("key from ${variable}"),
                None => "no key".to_owned(),
            };
            let _ = writeln!(
                text,
                "  model            {}, {key}\n                 \x20                  (provider: {}, model: {}, URL: {}, key variable: {};\n                 \x20                   set with git config ultragit.provider, ultragit.model, ultragit.baseUrl, ultragit.apiKeyEnv)",
                provider.describe(),
                sources.kind,
                sources.model,
                sources.base_url,
                sources.api_key_env,
            );
        }
        Err(err) => ctx.warn(err),
    }
    Ok(output)
}
