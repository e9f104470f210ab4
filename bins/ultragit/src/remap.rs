//! `ultragit remap [--onto REF] [--dry-run] [--format text|json]`: notes left on
//! commits a server rewrote (a forge's rebase or squash merge, a cherry-pick)
//! are carried to the commits on REF that make the same change
//! (`ultragit_notes::remap::remap`), and the post-commit path's cherry-pick
//! copy ([`after_cherry_pick`]).
//!
//! REF defaults to `origin/HEAD`; when it does not exist the error names
//! `--onto`. Nothing matched is not a failure (exit 0): every source without a
//! counterpart, and every ambiguous match (nothing written), is reported.

use crate::invocation::Invocation;
use clap::{Args, ValueEnum};
use frontend::{CommandError, Context, ErrorKind, Outcome};
use gitctx::{ObjectId, Repo};
use ultragit_notes::remap::{self, CherryPick, RemapOptions, RemapReport, Remapped};

/// The arguments of `ultragit remap`.
#[derive(Debug, Args)]
#[command(after_long_help = AFTER_HELP)]
pub struct RemapArgs {
    /// The ref whose commits receive the notes (where the server merged)
    #[arg(long, value_name = "REF", default_value = "origin/HEAD")]
    onto: String,

    /// Print what would be written; write nothing
    #[arg(long)]
    dry_run: bool,

    /// Output format: text for people, json for tools
    #[arg(long, value_name = "FORMAT", value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
}

const AFTER_HELP: &str = "\
Annotated commits that are not reachable from REF (the notes a forge's rebase or squash \
merge left behind) are matched to commits on REF that have no note yet:
  - by patch-id (the same change, perhaps at other lines: rebase merges, cherry-picks): \
the note is copied (provenance `amend`, derived_from the source);
  - by the combined diff of a chain of them (merge base to tip: squash merges): a squash \
note is synthesized from every commit of the chain (provenance `squash`, derived_from all).
No match: nothing is written. Two candidates for one source: nothing is written and it is \
reported. A commit that has a note is never changed, so running it again is harmless.

Bounds: only commits with notes are sources; candidates are REF's non-merge commits \
committed since the oldest source (less a day for clock skew), at most 20,000. Patch-ids of \
annotated commits are cached in .git/ultragit/patch-ids (safe to delete).

The original commits must be in this clone. CI recipe, in a job on the default branch \
after each merge (fetch the pull requests' heads so the original commits are there):
  git fetch origin '+refs/pull/*/head:refs/remotes/origin/pr/*'
  ultragit sync                    # the team's notes, including the branch's
  ultragit remap && ultragit sync  # carry them to the merged commits, share them

Examples:
  ultragit remap --dry-run
  ultragit remap --onto origin/main --format json

Exit status: 0 when the remap ran (whether or not anything matched); 1 when REF does \
not exist or git fails; 2 on usage errors.";

/// Runs `ultragit remap` in the repository containing `cwd`.
pub fn run(args: &RemapArgs, at: &Invocation) -> Result<Outcome, CommandError> {
    let cwd = at.cwd();
    let ctx = at.ctx;
    let repo = Repo::discover(cwd)?;
    let onto = repo.resolve_commit(&args.onto).map_err(|err| {
        CommandError::new(
            ErrorKind::User,
            format!(
                "'{}' does not exist here ({err}); name the branch the server merges into with \
                 --onto, e.g. --onto origin/main (or run `git remote set-head origin --auto`)",
                args.onto
            ),
        )
    })?;
    let options = RemapOptions {
        dry_run: args.dry_run,
        onto_name: args.onto.clone(),
    };
    let report = remap::remap(&repo, onto, &options)?;
    for remapped in report.copied.iter().chain(&report.synthesized) {
        for warning in &remapped.warnings {
            ctx.warn(warning);
        }
    }
    Ok(Outcome::text(match args.format {
        Format::Json => report.to_json(&args.onto, onto, args.dry_run) + "\n",
        Format::Text => render(&report, &args.onto, onto, args.dry_run),
    }))
}

/// At most this many commits are listed per line of the text report.
const LISTED: usize = 10;

fn render(report: &RemapReport, onto_name: &str, onto: ObjectId, dry_run: bool) -> String {
    let mut out = String::new();
    let (copy, synthesize) = if dry_run {
        ("would copy", "would synthesize")
    } else {
        ("copied", "synthesized")
    };
    for r in &report.copied {
        out.push_str(&format!(
            "{copy} the note of {} to {} (same {})\n",
            list(&r.sources),
            r.target.short(),
            r.how.as_str()
        ));
    }
    for r in &report.synthesized {
        out.push_str(&format!(
            "{synthesize} a squash note on {} from {} (their {})\n",
            r.target.short(),
            count_commits(r),
            r.how.as_str()
        ));
    }
    for a in &report.ambiguous {
        out.push_str(&format!(
            "ambiguous: {} matches {} commits on {onto_name} ({}); nothing written\n",
            list(&a.sources),
            a.candidates.len(),
            list(&a.candidates)
        ));
    }
    if !report.unmatched.is_empty() {
        out.push_str(&format!(
            "no counterpart on {onto_name}: {}\n",
            list(&report.unmatched)
        ));
    }
    if !report.unreadable.is_empty() {
        out.push_str(&format!(
            "skipped, note not readable: {}\n",
            list(&report.unreadable)
        ));
    }
    if !report.raced.is_empty() {
        out.push_str(&format!(
            "skipped, annotated meanwhile: {}\n",
            list(&report.raced)
        ));
    }
    out.push_str(&format!(
        "remap onto {onto_name} ({}): {} annotated {} not on it, {} {}, {} {}, {} ambiguous, {} unmatched{}\n",
        onto.short(),
        report.sources,
        if report.sources == 1 { "commit" } else { "commits" },
        report.copied.len(),
        copy,
        report.synthesized.len(),
        synthesize,
        report.ambiguous.len(),
        report.unmatched.len(),
        if dry_run { " (dry run: nothing written)" } else { "" }
    ));
    out
}

fn count_commits(r: &Remapped) -> String {
    let n = r.sources.len();
    format!(
        "{n} {}: {}",
        if n == 1 { "commit" } else { "commits" },
        list(&r.sources)
    )
}

/// Short ids, comma-separated, at most [`LISTED`] of them.
fn list(ids: &[ObjectId]) -> String {
    let mut text: Vec<String> = ids.iter().take(LISTED).map(|id| id.short()).collect();
    if ids.len() > LISTED {
        text.push(format!("and {} more", ids.len() - LISTED));
    }
    text.join(", ")
}

/// The post-commit path's cherry-pick copy: when `commit` was made by `git
/// cherry-pick` (HEAD's reflog) or carries the `-x` trailer and an annotated
/// commit has its patch-id, its note is copied and the model is not needed.
/// `None`: annotate as usual (not a cherry-pick, no match, a note exists
/// already, or the search failed — then with a warning).
pub fn after_cherry_pick(repo: &Repo, commit: ObjectId, ctx: &Context) -> Option<Outcome> {
    let attempt = || -> Result<CherryPick, ultragit_notes::NotesError> {
        if !remap::looks_cherry_picked(repo, commit)? {
            return Ok(CherryPick::NoMatch);
        }
        remap::cherry_pick(repo, commit, false)
    };
    match attempt() {
        Ok(CherryPick::Copied(copied)) => {
            for warning in &copied.warnings {
                ctx.warn(warning);
            }
            Some(Outcome::text(format!(
                "copied {}: cherry-picked from {} (same {}), no model call\n",
                commit.short(),
                list(&copied.sources),
                copied.how.as_str()
            )))
        }
        Ok(CherryPick::NoMatch | CherryPick::AlreadyAnnotated) => None,
        Err(err) => {
            ctx.warn(format!(
                "could not look for the note {} was cherry-picked with ({err}); annotating it instead",
                commit.short()
            ));
            None
        }
    }
}
