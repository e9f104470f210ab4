//! `ultragit summary <PATH|DIR>`: what the annotations say about a file, unit
//! by unit, or about each annotated file of a directory, within
//! `--max-tokens` (`ultragit_read::summary`). Output and errors as `ultragit
//! deps`.

use std::path::Path;

use clap::Args;
use frontend::{CommandError, Context, Outcome};
use ultragit_read::GitReadPipeline;
use ultragit_read::summary::{SUMMARY_SCHEMA_V1, SummaryQuery, render, summary};

use crate::deps::{OutputArgs, respond};
use crate::read::PathResolver;

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

const AFTER_HELP: &str = "\
For a file, one rollup per unit: the latest intent, the constraints of every annotation \
(the author's first), the risk notes and how many annotations touched it. For a \
directory, the same for each of its files that has annotations.

Examples:
  ultragit summary src/wire.rs
  ultragit summary src/ --max-tokens 2000 --format json

Exit status: 0 on success, 1 when the path is neither a file at HEAD nor a directory \
with tracked files, or the repository cannot be read (with --format json the error is \
a JSON object on stdout), 2 on usage errors.";

/// Runs `ultragit summary` from the directory `cwd`.
pub fn run(args: &SummaryArgs, cwd: &Path, ctx: &Context) -> Result<Outcome, CommandError> {
    let format = args.output.format;
    let answer = GitReadPipeline::open(cwd).and_then(|pipeline| {
        let mut query = SummaryQuery::path(PathResolver::new(&pipeline, cwd).resolve(&args.path));
        query.max_tokens = args.max_tokens;
        let output = summary(&pipeline, &query, format)?;
        Ok((render(&output, format), output.warnings))
    });
    respond(answer, format, SUMMARY_SCHEMA_V1, ctx)
}
