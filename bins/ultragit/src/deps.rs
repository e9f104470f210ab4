//! `ultragit deps <PATH> <ANCHOR>`: the annotated regions that declare a
//! semantic dependency on one unit, from the reverse dependency index
//! (`ultragit_read::deps`).
//!
//! Also what `history` and `summary` share with it: the `--format` option and
//! the way an answer or an error is printed, as `ultragit read` does — the
//! rendering on stdout and, for markdown and pretty, its warnings again on
//! stderr; a failure is `error: …` on stderr (exit 1) or, with `--format json`,
//! the JSON error object on stdout (exit 1, nothing on stderr). Paths are
//! resolved as `read` resolves them (repository-relative, or relative to the
//! current directory when that names a file at HEAD).

use std::path::Path;

use clap::Args;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use frontend::{CommandError, Context, Outcome};
use ultragit_read::deps::{DEPS_SCHEMA_V1, DepsQuery, deps, render};
use ultragit_read::{Format, GitReadPipeline, ReadError};

use crate::read::PathResolver;

/// The arguments of `ultragit deps`.
#[derive(Debug, Args)]
#[command(arg_required_else_help = true, after_long_help = AFTER_HELP)]
pub struct DepsArgs {
    /// The file of the unit (repository-relative, or relative to the current directory)
    #[arg(value_name = "PATH")]
    path: String,

    /// The unit: a function, type or other named unit (`connect`, `Client::connect`)
    #[arg(value_name = "ANCHOR")]
    anchor: String,

    #[command(flatten)]
    output: OutputArgs,
}

/// `--format`, shared by `deps`, `history` and `summary`.
#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Output format: markdown for models, json for programs, pretty for people
    #[arg(
        long,
        value_name = "FORMAT",
        default_value = "markdown",
        value_parser = PossibleValuesParser::new(["markdown", "json", "pretty"])
            .map(|s| Format::parse(&s).expect("one of the possible values"))
    )]
    pub format: Format,
}

const AFTER_HELP: &str = "\
Lists every annotated region whose semantic_dependencies point at the unit, newest \
annotated commit first: its file and anchor, the nature of the dependency, its intent \
and the commit. `Type::method` and `method` name the same unit. The answer comes from a \
reverse index under .git/ultragit/cache/deps/, updated from the notes that changed since \
it was built; deleting it is always safe.

Examples:
  ultragit deps src/wire.rs encode
  ultragit deps src/mqtt/client.rs Client::connect --format json

Exit status: 0 on success (also when nothing depends on the unit), 1 when the file is \
not at HEAD or the repository cannot be read (with --format json the error is a JSON \
object on stdout), 2 on usage errors.";

/// Runs `ultragit deps` from the directory `cwd`.
pub fn run(args: &DepsArgs, cwd: &Path, ctx: &Context) -> Result<Outcome, CommandError> {
    let format = args.output.format;
    let answer = GitReadPipeline::open(cwd).and_then(|pipeline| {
        let path = PathResolver::new(&pipeline, cwd).resolve(&args.path);
        let output = deps(&pipeline, &DepsQuery::new(path, args.anchor.clone()))?;
        Ok((render(&output, format), output.warnings))
    });
    respond(answer, format, DEPS_SCHEMA_V1, ctx)
}

/// Prints an answer (its rendering, and for markdown and pretty its warnings on
/// stderr) or a failure (the JSON error object with `schema` under `--format
/// json`, else `error: …`).
pub fn respond(
    answer: Result<(String, Vec<String>), ReadError>,
    format: Format,
    schema: &str,
    ctx: &Context,
) -> Result<Outcome, CommandError> {
    match answer {
        Ok((text, warnings)) => {
            if format != Format::Json {
                for warning in &warnings {
                    ctx.warn(warning);
                }
            }
            Ok(Outcome::text(text))
        }
        Err(err) if format == Format::Json => {
            let mut body = err.body();
            body.schema = schema.to_owned();
            Ok(Outcome::text(format!("{}\n", body.to_json())).failed())
        }
        Err(err) => Err(err.into()),
    }
}
