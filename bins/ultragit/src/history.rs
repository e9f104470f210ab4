//! `ultragit history <PATH> [<ANCHOR>]`: every annotation that touched a file
//! or one of its units, newest first, across renames
//! (`ultragit_read::history`). Output and errors as `ultragit deps`.

use std::path::Path;

use clap::Args;
use frontend::{CommandError, Context, Outcome};
use ultragit_read::GitReadPipeline;
use ultragit_read::history::{HISTORY_SCHEMA_V1, HistoryQuery, history, render};

use crate::deps::{OutputArgs, respond};
use crate::read::PathResolver;

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

const AFTER_HELP: &str = "\
The unit's \"why\" timeline: for each annotated commit that changed the file (renames \
followed by git's rename detection), newest first, the commit, its date and author, the \
region's intent, the constraints added or dropped since the previous annotation of the \
same unit, and its risk notes.

Examples:
  ultragit history src/wire.rs encode
  ultragit history src/wire.rs --format json

Exit status: 0 on success (also when no annotation touched the file), 1 when the file is \
not at HEAD or the repository cannot be read (with --format json the error is a JSON \
object on stdout), 2 on usage errors.";

/// Runs `ultragit history` from the directory `cwd`.
pub fn run(args: &HistoryArgs, cwd: &Path, ctx: &Context) -> Result<Outcome, CommandError> {
    let format = args.output.format;
    let answer = GitReadPipeline::open(cwd).and_then(|pipeline| {
        let mut query = HistoryQuery::file(PathResolver::new(&pipeline, cwd).resolve(&args.path));
        query.anchor = args.anchor.clone();
        let output = history(&pipeline, &query)?;
        Ok((render(&output, format), output.warnings))
    });
    respond(answer, format, HISTORY_SCHEMA_V1, ctx)
}
