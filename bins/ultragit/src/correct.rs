//! `ultragit flag` and `ultragit correct`: a person's correction of a
//! commit's annotation, appended to its note
//! (`ultragit_notes::correct`; the original annotation is never
//! rewritten). The author is named as git names a commit's author
//! (`GIT_AUTHOR_NAME`/`GIT_AUTHOR_EMAIL`, else `user.name`/`user.email`).
//!
//! Usage errors (a `--set` on a list field, `--anchor` without `--file`, no
//! `--reason`) exit 2; a commit without a note, a target that names no
//! region of it (the error lists the regions there are), an empty reason or a
//! change that changes nothing exit 1.

use crate::invocation::Invocation;
use clap::{ArgGroup, Args};
use frontend::{CommandError, ErrorKind, Outcome};
use gitctx::Repo;
use ultragit_notes::correct::{self, Change, CorrectError, Stored};
use ultragit_schema::{CorrectionField, CorrectionKind, CorrectionTarget};

/// The arguments of `ultragit flag`.
#[derive(Debug, Args)]
#[command(after_long_help = FLAG_HELP)]
pub struct FlagArgs {
    /// The commit whose annotation is doubtful
    #[arg(value_name = "COMMIT")]
    commit: String,

    /// Flag only the regions of this file (repository-relative, as the annotation names it)
    #[arg(long, value_name = "FILE")]
    file: Option<String>,

    /// Flag only this region of --file: its anchor, exactly as the annotation names it
    #[arg(long, value_name = "ANCHOR", requires = "file")]
    anchor: Option<String>,

    /// Why the annotation is doubtful (shown by `read` with the region)
    #[arg(long, value_name = "TEXT")]
    reason: String,

    /// Output format: text for people, json for the stored correction
    #[arg(long, value_name = "FORMAT", value_parser = FORMATS, default_value = "text")]
    format: String,
}

/// The arguments of `ultragit correct`.
#[derive(Debug, Args)]
#[command(
    after_long_help = CORRECT_HELP,
    group(ArgGroup::new("change").required(true).args(["set", "add", "remove"]))
)]
pub struct CorrectArgs {
    /// The commit whose annotation to correct
    #[arg(value_name = "COMMIT")]
    commit: String,

    /// The region's file (repository-relative, as the annotation names it)
    #[arg(long, value_name = "FILE")]
    file: String,

    /// The region's anchor, exactly as the annotation names it
    #[arg(long, value_name = "ANCHOR")]
    anchor: String,

    /// The field to correct: intent, reasoning, risk_notes (--set); constraints, tags (--add/--remove)
    #[arg(long, value_name = "FIELD", value_parser = clap::builder::PossibleValuesParser::new(CorrectionField::KNOWN))]
    field: String,

    /// Replace the text of the field with TEXT
    #[arg(long, value_name = "TEXT")]
    set: Option<String>,

    /// Add TEXT to the list field (a constraint added here is the author's)
    #[arg(long, value_name = "TEXT")]
    add: Option<String>,

    /// Remove the entry TEXT from the list field
    #[arg(long, value_name = "TEXT")]
    remove: Option<String>,

    /// Why the annotation was wrong (shown by `read` with the corrected text)
    #[arg(long, value_name = "TEXT")]
    reason: String,

    /// Output format: text for people, json for the stored correction
    #[arg(long, value_name = "FORMAT", value_parser = FORMATS, default_value = "text")]
    format: String,
}

/// The values of `--format`.
const FORMATS: [&str; 2] = ["text", "json"];

const FLAG_HELP: &str = "\
Marks a commit's annotation, or some of its regions, as doubtful. The flag is appended \
to the commit's note (the annotation itself is never changed) and travels with it \
through `ultragit sync`. `ultragit read` then halves the flagged regions' confidence \
and shows the flag and its reason with them.

Without --file and --anchor every region of the annotation is flagged; with --file \
alone, every region of that file. The author recorded is GIT_AUTHOR_NAME <GIT_AUTHOR_EMAIL> \
when set, else git config's user.name <user.email>.

Examples:
  ultragit flag HEAD~3 --file src/net.rs --anchor Client::connect --reason \"connect no longer retries\"
  ultragit flag 4f2a9c1 --reason \"annotated from the wrong diff\"

Exit status: 0 when the flag was stored; 1 when the commit has no annotation, no region \
matches (the error lists the regions there are), or the reason is empty; 2 on usage errors.";

const CORRECT_HELP: &str = "\
Corrects one field of one region of a commit's annotation. The correction is appended \
to the commit's note (the annotation itself is never changed, and nothing is ever \
removed) and travels with it through `ultragit sync`. `ultragit read` shows the \
corrected text, marked as corrected with the date, the author and the reason, and \
lists the corrections (with the replaced text) in its JSON.

Fields: intent, reasoning, risk_notes take --set TEXT; constraints and tags take \
--add TEXT or --remove TEXT (the entry's exact text). The author recorded is \
GIT_AUTHOR_NAME <GIT_AUTHOR_EMAIL> when set, else git config's user.name <user.email>.

Examples:
  ultragit correct HEAD~3 --file src/net.rs --anchor Client::connect --field intent \\
      --set \"Connects once; retrying is the caller's job.\" --reason \"retry moved to the probe\"
  ultragit correct 4f2a9c1 --file src/net.rs --anchor Client::send --field constraints \\
      --remove \"Returns the byte count, never an error.\" --reason \"send returns Result now\"

Exit status: 0 when the correction was stored; 1 when the commit has no annotation, the \
region does not exist (the error lists the regions there are), the change changes \
nothing, or the reason is empty; 2 on usage errors.";

/// Runs `ultragit flag` in the repository containing `cwd`.
pub fn flag(args: &FlagArgs, at: &Invocation) -> Result<Outcome, CommandError> {
    let cwd = at.cwd();
    let env = |name: &str| at.env(name);
    let repo = Repo::discover(cwd)?;
    let author = correct::git_identity(&repo, env).map_err(command_error)?;
    let target = CorrectionTarget {
        file: args.file.clone(),
        anchor: args.anchor.clone(),
    };
    let stored =
        correct::flag(&repo, &args.commit, target, &args.reason, &author).map_err(command_error)?;
    Ok(report(&stored, &args.format))
}

/// Runs `ultragit correct` in the repository containing `cwd`.
pub fn run(args: &CorrectArgs, at: &Invocation) -> Result<Outcome, CommandError> {
    let cwd = at.cwd();
    let env = |name: &str| at.env(name);
    let change = change(args)?;
    let repo = Repo::discover(cwd)?;
    let author = correct::git_identity(&repo, env).map_err(command_error)?;
    let target = CorrectionTarget::unit(&args.file, &args.anchor);
    let stored = correct::correct(&repo, &args.commit, target, &change, &args.reason, &author)
        .map_err(command_error)?;
    Ok(report(&stored, &args.format))
}

/// The change the flags ask for; a kind the field does not take is a usage
/// error.
fn change(args: &CorrectArgs) -> Result<Change, CommandError> {
    let field = CorrectionField::from(args.field.as_str());
    let (kind, flag, value) = match (&args.set, &args.add, &args.remove) {
        (Some(value), _, _) => (CorrectionKind::Set, "--set", value),
        (_, Some(value), _) => (CorrectionKind::Add, "--add", value),
        (_, _, Some(value)) => (CorrectionKind::Remove, "--remove", value),
        _ => return Err(CommandError::usage("give one of --set, --add or --remove")),
    };
    let list = field.is_list().unwrap_or(false);
    if list == (kind == CorrectionKind::Set) {
        let takes = if list { "--add or --remove" } else { "--set" };
        return Err(
            CommandError::usage(format!("--field {field} takes {takes}, not {flag}"))
                .with_usage_of("correct"),
        );
    }
    Ok(Change {
        field,
        kind,
        value: value.clone(),
    })
}

fn command_error(err: CorrectError) -> CommandError {
    match err {
        CorrectError::Git(err) => CommandError::from(err),
        CorrectError::Append(err) => CommandError::from_error(ErrorKind::Internal, err),
        other => CommandError::new(ErrorKind::User, other.to_string()),
    }
}

/// What was stored, for people or as JSON. Note text is escaped for the
/// terminal.
fn report(stored: &Stored, format: &str) -> Outcome {
    let text = match format {
        "json" => stored.to_json(),
        _ => stored.describe(),
    };
    Outcome::text(safe_io::term::sanitize(&text).into_owned() + "\n")
}
