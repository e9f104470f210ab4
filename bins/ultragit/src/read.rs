//! `ultragit read [OPTIONS] <PATH>... [<ANCHOR>]` (spec 003 §3.1): the arguments,
//! and how they become a [`ReadQuery`] for `ultragit-read`.
//!
//! **Positional arguments.** Clap cannot tell `<PATH>... [<ANCHOR>]` apart, so
//! they arrive as one list and are split here:
//! - with `--anchor NAME`, every positional is a PATH;
//! - without it, a single positional is always a PATH; with two or more, the last
//!   is the ANCHOR when it is not a file at HEAD (after the path resolution
//!   below), and a PATH otherwise. One refinement: a last argument containing `/`
//!   is always a PATH, since no anchor has one (`ultragit read a.rs src/typo.rs`
//!   then says the file is missing instead of looking for an anchor `src/typo.rs`).
//!
//! `--lines` with an anchor is a usage error: through `--anchor` clap reports it;
//! for a positional anchor, known only once HEAD has been looked at, [`run`]
//! returns a usage error (printed like clap's, exit 2) that names the argument
//! taken as the anchor (so a mistyped path is recognisable as such).
//!
//! **Paths.** The spec's paths are repository-relative. In addition, when the
//! command runs in a subdirectory of the working tree, a path is first taken
//! relative to the current directory: if `<cwd>/<path>` is a file at HEAD, its
//! repository-relative path is used (a user in `src/` can type `lib.rs`). If it is
//! not, the path as given, repository-relative, is used when that is a file at
//! HEAD; otherwise a `<cwd>/<path>` present in the working tree only is named (so
//! the error says which file is missing at HEAD), else the path as given. An
//! absolute path inside the working tree is made repository-relative.
//!
//! Syntax errors in option values (`--lines 20:10`, `--since 2025-13-45`,
//! `--min-confidence 2`, `--max-regions 0`) are clap usage errors; everything the
//! pipeline finds out (a missing file, an unknown anchor, lines past the end) is
//! a [`ReadError`]: `error: …` on stderr (exit 1) or, with `--format json`, the
//! spec's JSON error object on stdout (exit 1, nothing on stderr).
//!
//! **Usage errors under `--format json`.** A program asking for JSON gets JSON
//! for every failure: a usage error (clap's, or the positional ANCHOR with
//! `--lines`) also prints the spec's error object on stdout — code
//! `invalid_line_range` for `--lines`, `invalid_since` for `--since`,
//! `invalid_argument` otherwise — with the usual message on stderr and exit 2.
//! Clap's errors happen before any command runs, so `main` asks
//! [`json_usage_error`] first: it looks for `read … --format json` in the raw
//! arguments and, when clap rejects them, hands back that error.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use crate::invocation::Invocation;
use clap::Args;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::error::{ContextKind, ContextValue};
use frontend::{CommandError, Outcome};
use ultragit_read::{
    BlameRoute, ContextLevelFilter, Format, GitReadPipeline, LineRange, ReadError, ReadErrorBody,
    ReadQuery, SinceFilter,
};
use ultragit_schema::ReadErrorCode;

/// The arguments of `ultragit read`.
#[derive(Debug, Args)]
#[command(
    override_usage = "ultragit read [OPTIONS] <PATH>... [<ANCHOR>]",
    arg_required_else_help = true,
    after_long_help = AFTER_HELP
)]
pub struct ReadArgs {
    /// Files to read, then optionally the ANCHOR (e.g. `connect`, `Client::connect`)
    ///
    /// The ANCHOR is a named unit, resolved with tree-sitter. Without --anchor, the
    /// last of two or more arguments is the ANCHOR when it is not a file at HEAD
    /// and has no `/`; a single argument is always a PATH. Paths are repository-relative, or relative
    /// to the current directory when that names a file.
    #[arg(value_name = "PATH", required = true, num_args = 1..)]
    targets: Vec<String>,

    /// Restrict to a line range (1-based, inclusive); exclusive with an anchor
    #[arg(long, value_name = "START:END", value_parser = parse_lines_arg, conflicts_with = "anchor")]
    lines: Option<LineRange>,

    /// The ANCHOR, as an option: every positional argument is then a PATH
    #[arg(long, value_name = "NAME")]
    anchor: Option<String>,

    /// Only annotations of commits made at or after this date (ISO 8601) or commit
    #[arg(long, value_name = "DATE|COMMIT", value_parser = parse_since_arg)]
    since: Option<SinceFilter>,

    /// Only regions with one of these tags (comma-separated)
    #[arg(long, value_name = "TAG,...", value_delimiter = ',')]
    tags: Option<Vec<String>>,

    /// Only annotations of this context level
    #[arg(
        long,
        value_name = "LEVEL",
        default_value = "all",
        value_parser = PossibleValuesParser::new(["enhanced", "inferred", "all"])
            .map(|s| s.parse::<ContextLevelFilter>().expect("one of the possible values"))
    )]
    context_level: ContextLevelFilter,

    /// Drop regions scoring below this confidence (0 to 1)
    #[arg(long, value_name = "F", default_value_t = 0.0, value_parser = parse_confidence)]
    min_confidence: f64,

    /// Hops of related annotations to follow (0: direct only)
    #[arg(long, value_name = "N", default_value_t = 1)]
    depth: u32,

    /// Cap on returned regions [default: ultragit.defaultMaxRegions, 20]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    max_regions: Option<u32>,

    /// Output format: markdown for models, json for programs, pretty for people
    #[arg(
        long,
        value_name = "FORMAT",
        default_value = "markdown",
        value_parser = PossibleValuesParser::new(["markdown", "json", "pretty"])
            .map(|s| Format::parse(&s).expect("one of the possible values"))
    )]
    format: Format,

    /// Include every field, even empty ones (and the confidence factors); on
    /// stderr, how each file's blame was found (carried from the cache or
    /// blamed by git)
    #[arg(short = 'v', long)]
    verbose: bool,

    /// Token budget for the output (in the chosen format); trims when exceeded
    #[arg(long, value_name = "N")]
    max_tokens: Option<u32>,
}

const AFTER_HELP: &str = "\
Examples:
  ultragit read src/mqtt/client.rs connect
  ultragit read src/mqtt/client.rs --lines 10:20 --format json
  ultragit read src/a.rs src/b.rs --max-tokens 2000

Positional arguments: with --anchor, every argument is a PATH. Without it, a single \
argument is a PATH, and with two or more the last is the ANCHOR unless it is a file at \
HEAD or contains a `/`. Paths are repository-relative; in a subdirectory, a path \
relative to the current directory is used first when it names a file (in src/, \
`lib.rs` means src/lib.rs).

Exit status: 0 on success (also when no annotation matches), 1 when the read fails \
(with --format json the error is a JSON object on stdout), 2 on usage errors.";

/// What a successful read prints.
#[derive(Debug)]
struct Rendered {
    /// The rendered output, for stdout.
    text: String,
    /// Warnings to repeat on stderr (none for JSON: they are in the document).
    warnings: Vec<String>,
    /// With `--verbose`: how each file's blame was found, for stderr.
    routes: Vec<String>,
}

/// Why a read failed.
#[derive(Debug)]
enum Failure {
    /// A usage error clap could not see (exit 2).
    Usage(String),
    /// The read pipeline failed (exit 1).
    Read(ReadError),
}

impl From<ReadError> for Failure {
    fn from(err: ReadError) -> Self {
        Failure::Read(err)
    }
}

/// Runs `ultragit read` from the directory `cwd`: the rendered output, its
/// warnings on stderr (markdown and pretty), or the failure in the format asked
/// for.
pub fn run(args: &ReadArgs, at: &Invocation) -> Result<Outcome, CommandError> {
    let cwd = at.cwd();
    let ctx = at.ctx;
    match read(args, cwd) {
        Ok(rendered) => {
            for warning in &rendered.warnings {
                ctx.warn(warning);
            }
            for route in &rendered.routes {
                ctx.progress(format!("blame: {route}"));
            }
            Ok(Outcome::text(rendered.text))
        }
        Err(Failure::Usage(message)) if args.format == Format::Json => {
            let body = ReadErrorBody::new(ReadErrorCode::InvalidArgument, message.clone());
            Err(CommandError::usage(message).with_stdout(format!("{}\n", body.to_json())))
        }
        Err(Failure::Usage(message)) => Err(CommandError::usage(message).with_usage_of("read")),
        Err(Failure::Read(err)) if args.format == Format::Json => {
            Ok(Outcome::text(format!("{}\n", err.body().to_json())).failed())
        }
        Err(Failure::Read(err)) => Err(err.into()),
    }
}

/// For `ultragit read … --format json` with arguments `C` (the whole command
/// line's parser) rejects: the usage error with the spec's JSON error object
/// for stdout (module docs). `None` for any other command line, and for
/// `--help` or `--version`.
pub fn json_usage_error<C: clap::Parser>(args: &[OsString]) -> Option<CommandError> {
    if !asks_for_json_read(args) {
        return None;
    }
    let err = C::try_parse_from(args).err()?;
    if !err.use_stderr() {
        return None;
    }
    let argument = match err.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(arg)) => arg.clone(),
        _ => String::new(),
    };
    let code = if argument.starts_with("--lines") {
        ReadErrorCode::InvalidLineRange
    } else if argument.starts_with("--since") {
        ReadErrorCode::InvalidSince
    } else {
        ReadErrorCode::InvalidArgument
    };
    let rendered = err.to_string();
    let message = rendered
        .lines()
        .next()
        .unwrap_or_default()
        .trim_start_matches("error: ")
        .to_owned();
    let body = ReadErrorBody::new(code, message.clone());
    Some(CommandError::usage(message).with_stdout(format!("{}\n", body.to_json())))
}

/// Any command line at all: how `main` hands [`json_usage_error`]'s error to
/// the runner, which prints it in the one shape and exits with its code.
#[derive(Debug, clap::Parser)]
#[command(
    name = "ultragit",
    disable_help_flag = true,
    disable_version_flag = true
)]
pub struct AnyArgs {
    #[arg(num_args = 0.., allow_hyphen_values = true, trailing_var_arg = true)]
    args: Vec<OsString>,
}

impl frontend::Cli for AnyArgs {
    fn debug(&self) -> bool {
        self.args.iter().any(|a| a == "--debug")
    }
}

/// `ultragit [--debug] read … --format json` (or `--format=json`).
fn asks_for_json_read(args: &[OsString]) -> bool {
    let mut rest = args
        .iter()
        .skip(1)
        .map(|a| a.to_str().unwrap_or_default())
        .skip_while(|a| *a == "--debug");
    if rest.next() != Some("read") {
        return false;
    }
    let rest: Vec<&str> = rest.take_while(|a| *a != "--").collect();
    rest.windows(2).any(|w| w == ["--format", "json"]) || rest.contains(&"--format=json")
}

/// Runs the read for `args` from the directory `cwd` and renders the output.
fn read(args: &ReadArgs, cwd: &Path) -> Result<Rendered, Failure> {
    let pipeline = GitReadPipeline::open(cwd)?;
    let resolver = PathResolver::new(&pipeline, cwd);
    let (files, anchor) = split_targets(args, &resolver)?;
    let query = ReadQuery {
        files,
        anchor,
        lines: args.lines,
        since: args.since.clone(),
        tags: args.tags.as_ref().and_then(|tags| {
            let tags: Vec<String> = tags
                .iter()
                .map(|t| t.trim().to_owned())
                .filter(|t| !t.is_empty())
                .collect();
            (!tags.is_empty()).then_some(tags)
        }),
        context_level: args.context_level,
        min_confidence: args.min_confidence,
        depth: args.depth,
        max_regions: args.max_regions,
        max_tokens: args.max_tokens,
        verbose: args.verbose,
        format: args.format,
    };
    let (output, routes) = pipeline.execute_traced(&query)?;
    let routes = if args.verbose {
        routes.iter().map(BlameRoute::describe).collect()
    } else {
        Vec::new()
    };
    let text = ultragit_read::render(&output, args.format, args.verbose);
    let warnings = match args.format {
        Format::Json => Vec::new(),
        Format::Markdown | Format::Pretty => output.warnings,
    };
    Ok(Rendered {
        text,
        warnings,
        routes,
    })
}

/// The positionals as (repository-relative paths, anchor), per the module docs.
fn split_targets(
    args: &ReadArgs,
    resolver: &PathResolver<'_>,
) -> Result<(Vec<String>, Option<String>), Failure> {
    let targets = &args.targets;
    if let Some(anchor) = &args.anchor {
        let files = targets.iter().map(|t| resolver.resolve(t)).collect();
        return Ok((files, Some(anchor.clone())));
    }
    let mut files: Vec<String> = targets.iter().map(|t| resolver.resolve(t)).collect();
    let last_is_anchor = files.len() >= 2
        && targets.last().is_some_and(|last| !last.contains('/'))
        && files
            .last()
            .is_some_and(|last| !resolver.exists_at_head(last));
    if !last_is_anchor {
        return Ok((files, None));
    }
    files.pop();
    let anchor = targets.last().expect("two or more targets").clone();
    if args.lines.is_some() {
        return Err(Failure::Usage(format!(
            "the argument '--lines <START:END>' cannot be used with an ANCHOR \
             ('{anchor}' is not a file at HEAD, so it was taken as the ANCHOR)"
        )));
    }
    Ok((files, Some(anchor)))
}

/// Turns PATH arguments into repository-relative paths (module docs, "Paths").
pub(crate) struct PathResolver<'p> {
    pipeline: &'p GitReadPipeline,
    /// The working tree's top and the current directory, symlinks resolved.
    root: PathBuf,
    cwd: PathBuf,
}

impl<'p> PathResolver<'p> {
    pub(crate) fn new(pipeline: &'p GitReadPipeline, cwd: &Path) -> PathResolver<'p> {
        let canonical = |path: &Path| path.canonicalize().unwrap_or_else(|_| path.to_owned());
        PathResolver {
            pipeline,
            root: canonical(pipeline.repo().root()),
            cwd: canonical(cwd),
        }
    }

    fn exists_at_head(&self, path: &str) -> bool {
        self.pipeline.file_exists_at_head(path)
    }

    pub(crate) fn resolve(&self, arg: &str) -> String {
        let from_cwd = self.relative_to_cwd(arg);
        if Path::new(arg).is_absolute() {
            return from_cwd.unwrap_or_else(|| arg.to_owned());
        }
        let as_given = tidy(arg);
        let Some(from_cwd) = from_cwd.filter(|c| *c != as_given) else {
            return as_given;
        };
        if self.exists_at_head(&from_cwd) {
            from_cwd
        } else if self.exists_at_head(&as_given) {
            as_given
        } else if self.cwd.join(arg).is_file() {
            from_cwd
        } else {
            as_given
        }
    }

    /// `<cwd>/<arg>` relative to the working tree's top, when it lies inside it.
    fn relative_to_cwd(&self, arg: &str) -> Option<String> {
        let joined = lexical_normal(&self.cwd.join(arg));
        // Resolve symlinks in the directories (e.g. an absolute path through a
        // symlinked /tmp), not in the file itself.
        let joined = match (joined.parent(), joined.file_name()) {
            (Some(parent), Some(name)) => parent
                .canonicalize()
                .map(|p| p.join(name))
                .unwrap_or(joined),
            _ => joined,
        };
        let rel = joined.strip_prefix(&self.root).ok()?;
        let parts: Vec<&str> = rel
            .components()
            .map(|c| match c {
                Component::Normal(part) => part.to_str(),
                _ => None,
            })
            .collect::<Option<_>>()?;
        (!parts.is_empty()).then(|| parts.join("/"))
    }
}

/// `./src//lib.rs` → `src/lib.rs` (`..` is left alone: it names nothing in a tree).
fn tidy(path: &str) -> String {
    let parts: Vec<&str> = path
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    if parts.is_empty() {
        path.to_owned()
    } else {
        parts.join("/")
    }
}

/// Removes `.` and resolves `..` without touching the file system.
fn lexical_normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

fn parse_lines_arg(text: &str) -> Result<LineRange, String> {
    ultragit_read::parse_lines(text).map_err(|err| err.to_string())
}

fn parse_since_arg(text: &str) -> Result<SinceFilter, String> {
    SinceFilter::parse(text).map_err(|err| err.to_string())
}

fn parse_confidence(text: &str) -> Result<f64, String> {
    let value: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a number"))?;
    if (0.0..=1.0).contains(&value) {
        Ok(value)
    } else {
        Err(format!("must be between 0 and 1, not {value}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tidies_and_normalizes_paths() {
        assert_eq!(tidy("./src//lib.rs"), "src/lib.rs");
        assert_eq!(tidy("src/./a.rs"), "src/a.rs");
        assert_eq!(tidy("../a.rs"), "../a.rs");
        assert_eq!(
            lexical_normal(Path::new("/r/src/../lib/./a.rs")),
            PathBuf::from("/r/lib/a.rs")
        );
    }

    #[test]
    fn confidence_is_between_zero_and_one() {
        assert_eq!(parse_confidence("0.5"), Ok(0.5));
        assert_eq!(parse_confidence("1"), Ok(1.0));
        assert!(parse_confidence("1.5").is_err());
        assert!(parse_confidence("NaN").is_err());
        assert!(parse_confidence("x").is_err());
    }
}
