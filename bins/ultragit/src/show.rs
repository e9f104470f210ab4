//! `ultragit show [REV] [--format pretty|json]`: a commit's annotation, for people
//! (pretty, the default) or as the stored `ultragit/v1` JSON (indented).
//!
//! A commit without a note is an error (exit 1) that says how to annotate it. A
//! note that is not a valid `ultragit/v1` document is an error too; its raw text
//! is printed on stdout so nothing is hidden (control characters escaped).

use crate::invocation::Invocation;
use clap::{Args, ValueEnum};
use frontend::{CommandError, ErrorKind, Outcome};
use gitctx::Repo;
use ultragit_notes::{NOTES_REF, show};
use ultragit_schema::Annotation;

/// The arguments of `ultragit show`.
#[derive(Debug, Args)]
#[command(after_long_help = AFTER_HELP)]
pub struct ShowArgs {
    /// The commit whose annotation to print
    #[arg(value_name = "REV", default_value = "HEAD")]
    rev: String,

    /// Output format: pretty for people, json for the note as stored (indented)
    #[arg(long, value_name = "FORMAT", value_enum, default_value_t = ShowFormat::Pretty)]
    format: ShowFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ShowFormat {
    Pretty,
    Json,
}

const AFTER_HELP: &str = "\
Examples:
  ultragit show
  ultragit show HEAD~2 --format json

Exit status: 0 when the annotation was printed; 1 when the commit has no annotation, \
its note is not a valid ultragit/v1 document (the raw note is printed on stdout), or \
the revision is unknown; 2 on usage errors.";

/// Prints the annotation of `args.rev` in the repository containing `cwd`.
pub fn run(args: &ShowArgs, at: &Invocation) -> Result<Outcome, CommandError> {
    let cwd = at.cwd();
    let repo = Repo::discover(cwd)?;
    let commit = repo.resolve_commit(&args.rev)?;
    let note = repo.notes(NOTES_REF).and_then(|notes| notes.read(commit))?;
    let Some(text) = note else {
        return Err(CommandError::new(
            ErrorKind::User,
            format!(
                "commit {} has no ultragit annotation (annotate it with `ultragit annotate --commit {}`)",
                commit.short(),
                args.rev
            ),
        ));
    };
    match Annotation::from_json(&text) {
        Ok(mut annotation) => {
            // Corrections not yet folded into the note are part of it.
            let record = repo.notes(ultragit_schema::pending::CORRECTIONS_REF)?;
            if record.tip()?.is_some()
                && let Some(pending) = record.read(commit)?
            {
                ultragit_schema::pending::join(
                    &mut annotation,
                    &ultragit_schema::pending::parse_record(&pending),
                );
            }
            Ok(Outcome::text(match args.format {
                ShowFormat::Pretty => show::render_pretty(&annotation),
                ShowFormat::Json => show::render_json(&annotation),
            }))
        }
        Err(err) => {
            // Shown as it is, except what a terminal would act on.
            let mut raw = safe_io::term::sanitize(&text).into_owned();
            if !raw.ends_with('\n') {
                raw.push('\n');
            }
            Err(CommandError::new(
                ErrorKind::User,
                format!(
                    "the note of commit {} is not a valid ultragit/v1 annotation ({}); its raw text is on stdout",
                    commit.short(),
                    err.reason()
                ),
            )
            .with_stdout(raw))
        }
    }
}
