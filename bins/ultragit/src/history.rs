//! `ultragit history <PATH> [<ANCHOR>]`: every annotation that touched a file
//! or one of its units, newest first, across renames
//! (`ultragit_read::history`). Output and errors as `ultragit deps`.

use crate::invocation::Invocation;
use clap::Args;
use frontend::{CommandError, Outcome};
use ultragit_read::history::{HISTORY_SCHEMA_V1, HistoryQuery, history};

use crate::deps::{OutputArgs, Query, exit_status};

/// The arguments of `ultragit history`.
#[derive(Debug, Args)]
#[command(arg_required_else_help = true, after_long_help = AFTER_HELP)]
pub struct HistoryArgs {
    /// The file (repository-relative, or relative to the current directory)
    #[arg(value_name = "PATH")]
    path: String,

    /// Only this unit of the file (`connect`, `Client::connect`)
    #[arg(value_name = "ANCHOR")]
    anchor: Option<String>,

    #[command(flatten)]
    output: OutputArgs,
}

const AFTER_HELP: &str = concat!(
    "\
The unit's \"why\" timeline: for each annotated commit that changed the file (renames \
followed by git's rename detection), newest first, the commit, its date and author, the \
region's intent, the constraints added or dropped since the previous annotation of the \
same unit, and its risk notes.

Examples:
  ultragit history src/wire.rs encode
  ultragit history src/wire.rs --format json

",
    exit_status!(
        "also when no annotation touched the file",
        "the file is not at HEAD"
    )
);

/// Runs `ultragit history` from the directory `cwd`.
pub fn run(args: &HistoryArgs, at: &Invocation) -> Result<Outcome, CommandError> {
    Query::new(at, args.output.format, HISTORY_SCHEMA_V1).answer(|pipeline, path| {
        let query = HistoryQuery {
            file: path(&args.path),
            anchor: args.anchor.clone(),
        };
        history(pipeline, &query)
    })
}
