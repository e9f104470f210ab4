//! `search_files`: a regular expression (the `regex` crate's syntax, linear time)
//! matched line by line over the workspace's tracked files, as they are in the
//! working tree.
//!
//! Binary files (NUL in the first 8 KiB), files over 1 MiB, and files that are
//! missing or not regular (a FIFO is never opened for a blocking read) are skipped
//! and counted; so are paths whose target `gate` refuses, as `read_file`
//! does: a symlink out of the workspace, into `.git`, or to an untracked file git
//! ignores (a tracked `envlink -> .env` is not searched), counted as unreadable. Each match's text is capped (a window around the match); matches
//! are capped in number and bytes, with the total always counted.

use std::path::Path;

use agent::schema::Schema;
use agent::{ToolFailure, ToolLimits, ToolOutput};
use regex::RegexBuilder;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::args;
use crate::cap::{self, Budget};
use crate::gate::Gate;
use crate::paths::RelPath;
use crate::read_file::{BINARY_PROBE, looks_binary};
use crate::workspace::RepoView;

/// The tool name.
pub(crate) const NAME: &str = "search_files";

/// The tool description.
pub(crate) const DESCRIPTION: &str = "Searches the files git tracks in the workspace for a regular expression (Rust regex syntax), line by line, optionally only under `path`. Returns {path, line, text} per matching line (long lines are shown around the match, cut ends marked …), the total number of matches, and counts of skipped files (binary, over 1 MiB, unreadable).";

/// Files larger than this are skipped.
pub(crate) const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// The most bytes of one matching line shown.
pub(crate) const MAX_TEXT_BYTES: usize = 240;

/// The longest pattern accepted, in characters.
pub(crate) const MAX_PATTERN_CHARS: usize = 1000;

/// The most memory a compiled pattern may take.
const REGEX_SIZE_LIMIT: usize = 1024 * 1024;

#[derive(Debug, Serialize)]
struct Match {
    path: String,
    line: usize,
    text: String,
}

#[derive(Debug, Default, Serialize)]
struct Skipped {
    binary: usize,
    too_large: usize,
    unreadable: usize,
}

/// The arguments of `search_files`.
#[derive(Debug, Deserialize)]
pub struct Args {
    pattern: String,
    path: Option<String>,
    max_results: Option<usize>,
    case_insensitive: Option<bool>,
}

/// The arguments' schema.
pub(crate) fn schema() -> Schema {
    Schema::object()
        .required(
            "pattern",
            Schema::string()
                .min_length(1)
                .max_length(MAX_PATTERN_CHARS as u64)
                .description("Regular expression (Rust regex syntax), matched against each line."),
        )
        .optional("path", args::prefix_schema("search"))
        .optional(
            "max_results",
            args::cap_schema("matches", ToolLimits::default().max_entries),
        )
        .optional(
            "case_insensitive",
            Schema::boolean().description("Match letters regardless of case (default: false)."),
        )
}

/// Runs `search_files` over the workspace at `root`.
pub(crate) fn run(root: &Path, args: Args, limits: &ToolLimits) -> Result<ToolOutput, ToolFailure> {
    let pattern = args.pattern.as_str();
    let prefix = args::prefix("path", args.path.as_deref())?;
    let max_results = args::cap(args.max_results, limits.max_entries).min(limits.max_lines);
    let regex = RegexBuilder::new(pattern)
        .case_insensitive(args.case_insensitive.unwrap_or(false))
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|err| {
            ToolFailure::invalid_argument(format!(
                "pattern is not a valid regular expression: {err}"
            ))
        })?;

    let view = RepoView::open(root)?;
    let skeleton = json!({
        "pattern": pattern,
        "path": prefix.display(),
        "matches": [],
        "total_matches": usize::MAX,
        "files_searched": usize::MAX,
        "files_skipped": {"binary": usize::MAX, "too_large": usize::MAX, "unreadable": usize::MAX},
    });
    let mut budget = Budget::new(max_results, cap::room(limits, &skeleton));
    let mut matches = Vec::new();
    let mut stop = None;
    let mut total = 0;
    let mut searched = 0;
    let mut skipped = Skipped::default();
    let mut gate = Gate::new(&view.root, Some(&view.repo))?;
    for path in view.tracked_files()? {
        if !prefix.contains(&path) {
            continue;
        }
        let Some(text) = load(&mut gate, &path, &mut skipped) else {
            continue;
        };
        searched += 1;
        for (index, line) in text.lines().enumerate() {
            let Some(found) = regex.find(line) else {
                continue;
            };
            total += 1;
            if stop.is_some() {
                continue;
            }
            let entry = Match {
                path: path.clone(),
                line: index + 1,
                text: window(line, found.start()),
            };
            let size = serde_json::to_string(&entry).map_or(usize::MAX, |s| s.len());
            match budget.take(size) {
                Ok(()) => matches.push(entry),
                Err(limit) => stop = Some(limit),
            }
        }
    }
    let shown = matches.len();
    let data = json!({
        "pattern": pattern,
        "path": prefix.display(),
        "matches": matches,
        "total_matches": total,
        "files_searched": searched,
        "files_skipped": skipped,
    });
    let hint = format!(
        "{shown} of {total} matches shown; pass a narrower path or a more specific pattern to see the rest"
    );
    Ok(budget.output(data, stop, limits, (shown, total), hint))
}

/// The text of the tracked file `path`, or `None` (counted in `skipped`) when it
/// is missing, not a regular file, binary or too large, or when the
/// `gate` refuses where it leads: outside the workspace, into
/// `.git`, or (through a link) to an untracked file git ignores. Refusals count
/// as unreadable.
fn load(gate: &mut Gate<'_>, path: &str, skipped: &mut Skipped) -> Option<String> {
    let Some(target) = RelPath::from_index(path).and_then(|rel| gate.judge(&rel, true).ok()) else {
        skipped.unreadable += 1;
        return None;
    };
    let bytes = match gate.read(&target, MAX_FILE_BYTES) {
        Ok(bytes) => bytes,
        Err(safe_io::Error::TooLarge { .. }) => {
            skipped.too_large += 1;
            return None;
        }
        Err(_) => {
            skipped.unreadable += 1;
            return None;
        }
    };
    if looks_binary(&bytes[..bytes.len().min(BINARY_PROBE)]) {
        skipped.binary += 1;
        return None;
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// `line`, or when it is longer than [`MAX_TEXT_BYTES`] a window of it around the
/// match at `at`, with `…` where it was cut.
fn window(line: &str, at: usize) -> String {
    if line.len() <= MAX_TEXT_BYTES {
        return line.to_owned();
    }
    let floor = |mut i: usize| {
        while !line.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let from = floor(at.saturating_sub(MAX_TEXT_BYTES / 3));
    let to = floor((from + MAX_TEXT_BYTES).min(line.len()));
    let mut out = String::with_capacity(to - from + 8);
    if from > 0 {
        out.push('…');
    }
    out.push_str(&line[from..to]);
    if to < line.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(pattern: &str, line: &str) -> usize {
        regex::Regex::new(pattern)
            .unwrap()
            .find(line)
            .unwrap()
            .start()
    }

    #[test]
    fn short_lines_are_whole_and_long_ones_are_windowed() {
        assert_eq!(
            window("fn main() {}", find("main", "fn main() {}")),
            "fn main() {}"
        );
        let long = format!("{}NEEDLE{}", "a".repeat(500), "b".repeat(500));
        let shown = window(&long, find("NEEDLE", &long));
        assert!(shown.starts_with('…') && shown.ends_with('…'), "{shown}");
        assert!(shown.contains("NEEDLE"));
        assert!(shown.len() <= MAX_TEXT_BYTES + 2 * '…'.len_utf8());
        let start = format!("NEEDLE{}", "é".repeat(300));
        let shown = window(&start, 0);
        assert!(shown.starts_with("NEEDLE") && shown.ends_with('…'));
    }
}
