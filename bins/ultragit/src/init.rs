//! `ultragit init`: sets the repository up for ultragit (all the work is
//! `ultragit_notes::setup::init`) and says what it did: the notes ref, the
//! state directory, the hooks (`post-commit`, `post-rewrite`, `post-merge`,
//! `post-checkout`), notes rewriting, the default settings, the commit-graph
//! (written with changed-path Bloom filters unless `--no-commit-graph`) and
//! which model will annotate.
//!
//! The hooks run this very binary (`current_exe`, symlinks resolved), so the
//! repository keeps working with the build that set it up wherever `PATH` points.

use std::fmt::Write as _;

use clap::Args;
use frontend::{CommandError, Outcome};
use gitctx::Repo;
use ultragit_annotate::{ProviderFlags, Settings};
use ultragit_notes::setup::{self, CommitGraphChange};
use ultragit_notes::{NOTES_REF, author};

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

    /// Do not write a commit-graph with changed-path Bloom filters
    #[arg(long)]
    no_commit_graph: bool,
}

const AFTER_HELP: &str = "\
What it does (running it again is harmless):
  - creates the notes ref refs/notes/ultragit and the directory .git/ultragit/;
  - installs a post-commit hook that starts `ultragit annotate --async` and, detached, \
`ultragit cache warm --background` (the read caches carried forward to the new commit), \
and returns at once; an existing shell hook keeps its lines (the ultragit block is added after its \
#! line), a hook in another language is left alone and the line to add is printed;
  - installs a post-rewrite hook (same rules) that runs the hidden `ultragit rewritten` \
after `git commit --amend` and `git rebase`: a message-only amend or a reword copies the \
note, an amend that changes code keeps the original's regions and author context and \
annotates only its delta in the background, a squash or fixup gets a note synthesized \
from all of its sources; then it starts the same detached warm-up; it never fails the git command;
  - installs post-merge and post-checkout hooks (same rules) that start the detached \
warm-up after a merge or `git pull` (not a squash merge) and after a branch checkout that \
moved HEAD (not `git checkout -- FILE`), so the first read after pulling others' commits \
is warm; a warm-up that finds another one running skips (a lock in .git/ultragit/cache/);
  - writes a commit-graph with changed-path Bloom filters (`git commit-graph write \
--reachable --changed-paths`) when the repository has none: `git blame` and `git log -- PATH`, \
which a read runs when its caches miss, then skip the commits that do not touch the file; \
git gc and git maintenance keep the filters when they rewrite the graph. Not with \
--no-commit-graph, nor when core.commitGraph is false;
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
    let options = setup::InitOptions {
        no_commit_graph: args.no_commit_graph,
    };
    let report = setup::init(&repo, &exe, &options)?;
    let sync = if args.sync {
        let remote = match &args.remote {
            Some(remote) => remote.clone(),
            None => ultragit_notes::sync::default_remote(&repo)?,
        };
        Some(ultragit_notes::sync::enable(&repo, &remote, &exe)?)
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
    for hook in &report.hooks {
        let so_that = setup::hook_spec(hook.name).map_or("", |spec| spec.so_that);
        hooks::describe_hook(
            text,
            ctx,
            &hook_label(hook.name),
            &hook.path,
            &hook.change,
            &format!("add these lines to it so {so_that}"),
        );
    }
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
    describe_commit_graph(text, ctx, &report.commit_graph);
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

/// The report's label of a hook, 17 columns as `post-rewrite hook` (the
/// widest): `post-commit hook `, and `post-checkout    ` where "hook" does
/// not fit.
fn hook_label(name: &str) -> String {
    let label = format!("{name} hook");
    let label = if label.len() <= LABEL_WIDTH {
        label
    } else {
        name.to_owned()
    };
    format!("{label:<LABEL_WIDTH$}")
}

/// The width of the hooks' labels.
const LABEL_WIDTH: usize = 17;

/// The commit-graph line: what was done and why it matters.
fn describe_commit_graph(text: &mut String, ctx: &frontend::Context, change: &CommitGraphChange) {
    // Its value starts in the column of `notes ref        `'s.
    let label = "commit-graph    ";
    let _ = match change {
        CommitGraphChange::Written { elapsed } => writeln!(
            text,
            "  {label} wrote one with changed-path Bloom filters ({:.1} s): git blame and \
             git log -- PATH, which a read runs when its caches miss, skip the commits that do \
             not touch the file; git gc and git maintenance keep the filters when they rewrite it",
            elapsed.as_secs_f64()
        ),
        CommitGraphChange::AlreadyThere => writeln!(
            text,
            "  {label} has changed-path Bloom filters already (left as it is)"
        ),
        CommitGraphChange::NoCommits => writeln!(
            text,
            "  {label} none: no commits yet; run ultragit init again (or git commit-graph \
             write --reachable --changed-paths) once there is history"
        ),
        CommitGraphChange::Disabled => writeln!(
            text,
            "  {label} not written: core.commitGraph is false, so git would not read it \
             (your setting is left as it is)"
        ),
        CommitGraphChange::Skipped => {
            writeln!(text, "  {label} left as it is (--no-commit-graph)")
        }
        CommitGraphChange::Failed { reason } => {
            ctx.warn(format!(
                "could not write a commit-graph ({reason}); the rest of init is done, \
                 run `git commit-graph write --reachable --changed-paths` later"
            ));
            writeln!(text, "  {label} not written (see the warning)")
        }
    };
}
