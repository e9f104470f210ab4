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

use crate::invocation::Invocation;
use clap::Args;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use frontend::{CommandError, Context, Outcome};
use ultragit_read::deps::{DEPS_SCHEMA_V1, DepsQuery, deps};
use ultragit_read::{Answer, Format, GitReadPipeline, ReadError};

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
    #[arg(long, value_name = "FORMAT", default_value = "markdown", value_parser = format_parser())]
    pub format: Format,
}

/// `markdown`, `json` or `pretty`, as a [`Format`] (`read`'s values).
pub fn format_parser() -> impl TypedValueParser<Value = Format> {
    PossibleValuesParser::new(["markdown", "json", "pretty"])
        .map(|s| Format::parse(&s).expect("one of the possible values"))
}

/// The `Exit status:` paragraph of the query commands' help, as a literal:
/// `$ok` says what is still a success, `$bad` what fails besides the
/// repository.
macro_rules! exit_status {
    ($ok:literal, $bad:literal) => {
        concat!(
            "Exit status: 0 on success (",
            $ok,
            "), 1 when ",
            $bad,
            " or the repository cannot be read (with --format json the error is a JSON \
             object on stdout), 2 on usage errors."
        )
    };
}
pub(crate) use exit_status;

const AFTER_HELP: &str = concat!(
    "\
Lists every annotated region whose semantic_dependencies point at the unit, newest \
annotated commit first: its file and anchor, the nature of the dependency, its intent \
and the commit. `Type::method` and `method` name the same unit. The answer comes from a \
reverse index under .git/ultragit/cache/deps/, updated from the notes that changed since \
it was built; deleting it is always safe. Dependencies recorded under the file's former \
names (before a rename git detects) count too, marked with the name they used; a name \
another file has today stays that file's.

Examples:
  ultragit deps src/wire.rs encode
  ultragit deps src/mqtt/client.rs Client::connect --format json

",
    exit_status!(
        "also when nothing depends on the unit",
        "the file is not at HEAD"
    )
);

/// Runs `ultragit deps` from the directory `cwd`.
pub fn run(args: &DepsArgs, at: &Invocation) -> Result<Outcome, CommandError> {
    Query::new(at, args.output.format, DEPS_SCHEMA_V1).answer(|pipeline, path| {
        let query = DepsQuery::new(path(&args.path), args.anchor.clone());
        deps(pipeline, &query)
    })
}

/// One query command as invoked: what `deps`, `history` and `summary` share.
pub struct Query<'a> {
    pub at: &'a Invocation<'a>,
    pub format: Format,
    /// The `$schema` of the command's output, used in its JSON errors too.
    pub schema: &'a str,
}

impl<'a> Query<'a> {
    pub fn new(at: &'a Invocation<'a>, format: Format, schema: &'a str) -> Query<'a> {
        Query { at, format, schema }
    }

    /// Opens the repository, runs `ask` with it and a function resolving PATH
    /// arguments as `read` does, and prints the answer (its rendering, and for
    /// markdown and pretty its warnings on stderr) or the failure (the JSON
    /// error object under `--format json`, else `error: …`).
    pub fn answer<A: Answer>(
        &self,
        ask: impl FnOnce(&GitReadPipeline, &dyn Fn(&str) -> String) -> Result<A, ReadError>,
    ) -> Result<Outcome, CommandError> {
        let cwd = self.at.cwd();
        let answer = GitReadPipeline::open(cwd).and_then(|pipeline| {
            let resolver = PathResolver::new(&pipeline, cwd);
            let answer = ask(&pipeline, &|arg: &str| resolver.resolve(arg))?;
            Ok((answer.render(self.format), answer.warnings().to_vec()))
        });
        self.respond(answer, self.at.ctx)
    }

    fn respond(
        &self,
        answer: Result<(String, Vec<String>), ReadError>,
        ctx: &Context,
    ) -> Result<Outcome, CommandError> {
        let (format, schema) = (self.format, self.schema);
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
}
