//! `ultragit export [--since DATE] [-o FILE]` and `ultragit import FILE`:
//! annotations as JSON Lines (the format and the rules are
//! `ultragit_notes::transfer`'s).
//!
//! `export` writes to stdout, or to FILE (created or replaced atomically, never
//! through a symbolic link) and then prints a summary line. `import` reads FILE
//! (a regular file, at most 256 MiB), prints one summary line with its counts,
//! and a `warning:` line per skipped invalid line.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::invocation::Invocation;
use chrono::{DateTime, NaiveDate};
use clap::Args;
use frontend::{CommandError, ErrorKind, Outcome};
use gitctx::Repo;
use std::io::Read as _;
use ultragit_notes::transfer::{self, ExportOptions, IMPORT_LIMIT};

/// The arguments of `ultragit export`.
#[derive(Debug, Args)]
#[command(after_long_help = EXPORT_HELP)]
pub struct ExportArgs {
    /// Only commits committed on or after DATE (YYYY-MM-DD, UTC, or RFC 3339)
    #[arg(long, value_name = "DATE", value_parser = parse_date)]
    since: Option<i64>,

    /// Write to FILE instead of stdout (replaced atomically; a symbolic link there is replaced, not followed)
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

const EXPORT_HELP: &str = "\
Format: JSON Lines, newest commit first (committer date), one line per note:
  {\"commit\":\"<40 hex>\",\"note\":{...the ultragit/v1 annotation...}}
A note that is not a valid annotation is exported as raw text so nothing is lost:
  {\"commit\":\"<40 hex>\",\"malformed\":true,\"raw\":\"<note text>\"}
(with a warning; `ultragit import` skips such lines). Notes over 4 MiB are left out \
with a warning.

Examples:
  ultragit export -o notes.jsonl
  ultragit export --since 2024-06-01 > recent.jsonl

Exit status: 0 on success, 1 on failure, 2 on usage errors.";

/// The arguments of `ultragit import`.
#[derive(Debug, Args)]
#[command(after_long_help = IMPORT_HELP)]
pub struct ImportArgs {
    /// A file written by `ultragit export`
    #[arg(value_name = "FILE")]
    file: PathBuf,
}

const IMPORT_HELP: &str = "\
Each line's note is attached to its commit (matched by full commit id): a commit \
without a note gets it; a commit that has one gets both joined (the union of their \
regions and cross-cutting concerns, as `ultragit sync` does). Lines for commits this \
repository does not have are counted and skipped; invalid lines (not JSON, not a valid \
ultragit/v1 annotation, a note naming another commit, lines marked malformed) are \
skipped with a warning. All notes are written in one notes commit. The file is read up \
to 256 MiB.

Example:
  ultragit import notes.jsonl

Exit status: 0 when the file was read (even if lines were skipped); 1 when it cannot \
be read or the notes cannot be written; 2 on usage errors.";

/// `YYYY-MM-DD` (midnight UTC) or RFC 3339, as seconds since the epoch.
fn parse_date(text: &str) -> Result<i64, String> {
    if let Ok(date) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return Ok(date
            .and_hms_opt(0, 0, 0)
            .map_or(0, |t| t.and_utc().timestamp()));
    }
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.timestamp())
        .map_err(|_| {
            format!("'{text}' is not a date: use YYYY-MM-DD or RFC 3339 (2024-06-01T12:00:00Z)")
        })
}

/// Runs `ultragit export` in the repository containing `cwd`.
pub fn export(args: &ExportArgs, at: &Invocation) -> Result<Outcome, CommandError> {
    let cwd = at.cwd();
    let ctx = at.ctx;
    let repo = Repo::discover(cwd)?;
    let mut bytes = Vec::new();
    let report = transfer::export(&repo, &ExportOptions { since: args.since }, &mut bytes)?;
    for warning in &report.warnings {
        ctx.warn(warning);
    }
    let Some(path) = &args.output else {
        let text = String::from_utf8(bytes).map_err(|err| {
            CommandError::from_error(ErrorKind::Internal, err).context("export output")
        })?;
        return Ok(Outcome::text(text));
    };
    let (dir, name) = split(path)?;
    safe_io::fs::Dir::open(&dir)
        .and_then(|dir| dir.write(Path::new(&name), &bytes))
        .map_err(|err| {
            CommandError::from_error(ErrorKind::User, err)
                .context(format!("cannot write {}", path.display()))
        })?;
    let mut text = format!("exported {} notes to {}", report.exported, path.display());
    if report.malformed > 0 {
        let _ = write!(text, " ({} malformed, as raw text)", report.malformed);
    }
    if report.too_large > 0 {
        let _ = write!(text, "; {} over the size limit left out", report.too_large);
    }
    text.push('\n');
    Ok(Outcome::text(text))
}

/// The directory and file name of an output path.
fn split(path: &Path) -> Result<(PathBuf, String), CommandError> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|n| !n.is_empty())
        .ok_or_else(|| {
            CommandError::usage(format!(
                "'{}' is not a file name to write to",
                path.display()
            ))
        })?;
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok((dir, name.to_owned()))
}

/// Runs `ultragit import` in the repository containing `cwd`.
pub fn import(args: &ImportArgs, at: &Invocation) -> Result<Outcome, CommandError> {
    let cwd = at.cwd();
    let ctx = at.ctx;
    let repo = Repo::discover(cwd)?;
    let file = safe_io::fs::open_regular(&args.file, IMPORT_LIMIT).map_err(|err| {
        let hint = match err {
            safe_io::Error::TooLarge { .. } => {
                "split it, e.g. with `ultragit export --since`, and import the parts"
            }
            _ => "give the path of a file written by `ultragit export`",
        };
        CommandError::from_error(ErrorKind::User, err)
            .context(format!("cannot read {}", args.file.display()))
            .with_hint(hint)
    })?;
    let input = std::io::BufReader::with_capacity(64 * 1024, file.take(IMPORT_LIMIT));
    let report = transfer::import(&repo, input)?;
    for warning in &report.warnings {
        ctx.warn(warning);
    }
    Ok(Outcome::text(format!(
        "imported {}: {} added, {} merged with existing notes, {} unchanged, {} for unknown commits skipped, {} invalid skipped\n",
        args.file.display(),
        report.added,
        report.merged,
        report.unchanged,
        report.unknown_commits,
        report.invalid
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(parse_date("2024-01-01"), Ok(1_704_067_200));
        assert_eq!(parse_date("2024-01-01T01:00:00+01:00"), Ok(1_704_067_200));
        assert!(parse_date("yesterday").unwrap_err().contains("YYYY-MM-DD"));
    }
}
