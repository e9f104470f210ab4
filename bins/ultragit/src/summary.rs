//! `ultragit summary <PATH|DIR>`: what the annotations say about a file, unit
//! by unit, or about each annotated file of a directory, within
//! `--max-tokens` (`ultragit_read::summary`). Output and errors as `ultragit
//! deps`.

use crate::invocation::Invocation;
use clap::Args;
use frontend::{CommandError, Outcome};
use ultragit_read::summary::{SUMMARY_SCHEMA_V1, SummaryQuery, summary};

use crate::deps::{OutputArgs, Query, exit_status};

/// The arguments of `ultragit summary`.
#[derive(Debug, Args)]
#[command(arg_required_else_help = true, after_long_help = AFTER_HELP)]
pub struct SummaryArgs {
    /// A file or a directory (repository-relative, or relative to the current directory; `.` for all)
    #[arg(value_name = "PATH|DIR")]
    path: String,

    /// Token budget for the output (in the chosen format); the least annotated units go first
    #[arg(long, value_name = "N")]
    max_tokens: Option<u32>,

    #[command(flatten)]
    output: OutputArgs,
}

const AFTER_HELP: &str = concat!(
    "\
For a file, one rollup per unit: the latest intent, the constraints of every annotation \
(the author's first), the risk notes and how many annotations touched it. For a \
directory, the same for each of its files that has annotations.

Examples:
  ultragit summary src/wire.rs
  ultragit summary src/ --max-tokens 2000 --format json

",
    exit_status!(
        "also when nothing is annotated",
        "the path is neither a file at HEAD nor a directory with tracked files,"
    )
);

/// Runs `ultragit summary` from the directory `cwd`.
pub fn run(args: &SummaryArgs, at: &Invocation) -> Result<Outcome, CommandError> {
    let format = args.output.format;
    Query::new(at, format, SUMMARY_SCHEMA_V1).answer(|pipeline, path| {
        let query = SummaryQuery {
            path: path(&args.path),
            max_tokens: args.max_tokens,
        };
        summary(pipeline, &query, format)
    })
}
