//! `read_file`: a working-tree file of the workspace as line-numbered text
//! (`"{n}| {line}"`), optionally a line range, capped by lines and bytes.
//!
//! The file is streamed: only the lines shown are held in memory, the rest are
//! counted so the model learns the total and where to continue.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::PathBuf;

use agent::{Tool, ToolFailure, ToolLimits, ToolOutput, Truncation, TruncationLimit};
use serde_json::{Value, json};

use crate::args::Args;
use crate::cap;
use crate::codes;
use crate::paths::{self, RelPath, ResolveError};
use crate::workspace;

/// The tool name.
pub const NAME: &str = "read_file";

/// The tool description.
pub const DESCRIPTION: &str = "Reads a text file of the workspace's working tree as numbered lines (\"{n}| {line}\"), optionally from start_line to end_line (1-based, inclusive). Long results are cut; the result then says the total line count and the start_line to ask for next. Untracked files git ignores are not shown.";

/// The highest line number the schema accepts.
pub const MAX_LINE_NUMBER: usize = 100_000_000;

/// How much of a file is checked for NUL bytes to tell binary from text.
pub const BINARY_PROBE: usize = 8 * 1024;

/// True when `probe` (the start of a file) holds a NUL byte: binary, as git judges.
pub(crate) fn looks_binary(probe: &[u8]) -> bool {
    probe[..probe.len().min(BINARY_PROBE)].contains(&0)
}

/// The `read_file` tool over one workspace.
#[derive(Debug, Clone)]
pub struct ReadFile {
    workspace_root: PathBuf,
}

impl ReadFile {
    /// The tool for the workspace at `workspace_root`.
    pub fn new(workspace_root: impl Into<PathBuf>) -> Self {
        ReadFile {
            workspace_root: workspace_root.into(),
        }
    }
}

impl Tool for ReadFile {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> Value {
        let line = |what: &str| {
            json!({
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_LINE_NUMBER,
                "description": what,
            })
        };
        json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "minLength": 1,
                    "description": "Workspace-relative file path. Accepts / or \\ as separator.",
                },
                "start_line": line("First line to show, 1-based (default: 1)."),
                "end_line": line("Last line to show, inclusive (default: the end of the file, within the caps)."),
            },
            "required": ["path"],
            "additionalProperties": false,
        })
    }

    fn call(&self, args: &Value, limits: &ToolLimits) -> Result<ToolOutput, ToolFailure> {
        let args = Args::new(args, &["path", "start_line", "end_line"])?;
        let rel = paths::normalize(args.required_str("path")?)
            .map_err(|err| ToolFailure::invalid_argument(format!("path: {err}")))?;
        let start = args.count("start_line", MAX_LINE_NUMBER)?.unwrap_or(1);
        let end = args.count("end_line", MAX_LINE_NUMBER)?;
        if let Some(end) = end
            && end < start
        {
            return Err(ToolFailure::invalid_argument(format!(
                "end_line {end} is before start_line {start}"
            )));
        }
        let root = workspace::canonical_root(&self.workspace_root)?;
        let file = open(&root, &rel)?;
        let skeleton = json!({
            "path": rel.as_str(),
            "start_line": start,
            "end_line": usize::MAX,
            "total_lines": usize::MAX,
            "next_start_line": usize::MAX,
            "text": "",
        });
        let room = cap::room(limits, &skeleton);
        let read = read_lines(file, start, end, limits.max_lines, room)
            .map_err(|err| ToolFailure::internal(format!("cannot read '{rel}': {err}")))?;
        let read = read.map_err(|()| {
            ToolFailure::new(
                codes::NOT_TEXT,
                format!(
                    "'{rel}' is a binary file (it contains NUL bytes); read_file shows text only"
                ),
            )
        })?;
        if start > read.total_lines && !(start == 1 && read.total_lines == 0) {
            return Err(ToolFailure::invalid_argument(format!(
                "start_line {start} is past the end of '{rel}' ({} lines)",
                read.total_lines
            )));
        }
        let mut data = json!({
            "path": rel.as_str(),
            "start_line": start,
            "end_line": read.last_shown,
            "total_lines": read.total_lines,
            "text": read.text,
        });
        let Some(limit) = read.stop else {
            return Ok(ToolOutput::complete(data));
        };
        let next = read.next_start_line;
        data["next_start_line"] = json!(next);
        let wanted = end.unwrap_or(read.total_lines).min(read.total_lines) + 1 - start;
        let mut hint = format!(
            "lines {start}-{} of {} shown; call read_file again with start_line {next} to continue",
            read.last_shown.unwrap_or(start),
            read.total_lines
        );
        if read.cut_line {
            hint.push_str(&format!(
                " (line {} is longer than the byte cap and was cut)",
                next - 1
            ));
        }
        Ok(ToolOutput::truncated(
            data,
            Truncation {
                limit,
                max: match limit {
                    TruncationLimit::Lines => limits.max_lines,
                    _ => limits.max_bytes,
                },
                total: Some(wanted),
                shown: read.shown,
                hint,
            },
        ))
    }
}

/// Opens the regular file `rel` leads to.
fn open(root: &std::path::Path, rel: &RelPath) -> Result<File, ToolFailure> {
    let path = paths::resolve(root, rel).map_err(|err| match err {
        ResolveError::Missing(_) => ToolFailure::new(
            codes::NOT_FOUND,
            format!("'{rel}' does not exist; list_files shows the tracked files"),
        ),
        ResolveError::Escapes(_) => ToolFailure::invalid_argument(format!("path: {err}")),
        ResolveError::Io { .. } => ToolFailure::internal(err.to_string()),
    })?;
    let not_a_file = || {
        ToolFailure::new(
            codes::NOT_A_FILE,
            format!("'{rel}' is not a regular file; list_files shows the files under a directory"),
        )
    };
    let metadata =
        std::fs::metadata(&path).map_err(|err| ToolFailure::internal(format!("'{rel}': {err}")))?;
    if !metadata.is_file() {
        return Err(not_a_file());
    }
    refuse_ignored(&path, rel)?;
    File::open(&path).map_err(|err| ToolFailure::internal(format!("cannot open '{rel}': {err}")))
}

/// Untracked files git ignores (`.env`, credentials, build output) are not read:
/// they are what a repository keeps out of history, often on purpose.
fn refuse_ignored(path: &std::path::Path, rel: &RelPath) -> Result<(), ToolFailure> {
    let Ok(repo) = gitctx::Repo::discover(path.parent().unwrap_or(path)) else {
        return Ok(()); // outside any repository there are no ignore rules
    };
    let Ok(top) = repo.root().canonicalize() else {
        return Ok(());
    };
    let Ok(inside) = path.strip_prefix(&top) else {
        return Ok(());
    };
    let Some(repo_path) = crate::paths::slash_path(inside) else {
        return Ok(());
    };
    match repo.is_ignored(&repo_path) {
        Ok(true) => Err(ToolFailure::new(
            codes::IGNORED,
            format!(
                "'{rel}' is ignored by git and not tracked; read_file does not show ignored files"
            ),
        )),
        Ok(false) => Ok(()),
        Err(err) => Err(ToolFailure::internal(format!("'{rel}': {err}"))),
    }
}

/// What [`read_lines`] read.
#[derive(Debug, Default)]
struct Lines {
    text: String,
    shown: usize,
    last_shown: Option<usize>,
    total_lines: usize,
    /// Why the range was not shown whole.
    stop: Option<TruncationLimit>,
    next_start_line: usize,
    /// The last line shown was itself cut to fit the byte cap.
    cut_line: bool,
}

/// Reads `file`, keeping lines `start..=end` (at most `max_lines` of them, in at
/// most `room` JSON bytes) and counting all.
/// `Ok(Err(()))` for a binary file.
fn read_lines(
    file: File,
    start: usize,
    end: Option<usize>,
    max_lines: usize,
    room: usize,
) -> io::Result<Result<Lines, ()>> {
    let mut probe = Vec::with_capacity(BINARY_PROBE);
    let mut file = file;
    (&mut file)
        .take(BINARY_PROBE as u64)
        .read_to_end(&mut probe)?;
    if looks_binary(&probe) {
        return Ok(Err(()));
    }
    let mut reader = BufReader::new(io::Cursor::new(probe).chain(file));
    let end = end.unwrap_or(usize::MAX);
    let mut out = Lines::default();
    let mut used = 0;
    let mut line = Vec::new();
    let mut number = 0;
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            out.total_lines = number;
            return Ok(Ok(out));
        }
        number += 1;
        if number < start {
            continue;
        }
        if number > end {
            break;
        }
        if out.shown == max_lines {
            out.stop = Some(TruncationLimit::Lines);
            out.next_start_line = number;
            break;
        }
        let content = line.strip_suffix(b"\n").unwrap_or(&line);
        let numbered = format!("{number}| {}\n", String::from_utf8_lossy(content));
        let size = cap::json_len(&numbered) - 2;
        if used + size > room {
            out.stop = Some(TruncationLimit::Bytes);
            out.next_start_line = number;
            if out.shown == 0 {
                // Not even this one line fits: show what does, move past it.
                out.text.push_str(cap::cut_json(&numbered, room));
                out.shown = 1;
                out.last_shown = Some(number);
                out.next_start_line = number + 1;
                out.cut_line = true;
            }
            break;
        }
        used += size;
        out.text.push_str(&numbered);
        out.shown += 1;
        out.last_shown = Some(number);
    }
    out.total_lines = number + count_lines(&mut reader)?;
    Ok(Ok(out))
}

/// The lines left in `reader` (a last line without a newline counts).
fn count_lines(reader: &mut impl BufRead) -> io::Result<usize> {
    let mut lines = 0;
    let mut last = None;
    loop {
        let chunk = reader.fill_buf()?;
        if chunk.is_empty() {
            break;
        }
        lines += chunk.iter().filter(|&&b| b == b'\n').count();
        last = chunk.last().copied();
        let n = chunk.len();
        reader.consume(n);
    }
    Ok(lines + usize::from(last.is_some_and(|b| b != b'\n')))
}
