//! `read_file`: a working-tree file of the workspace as line-numbered text
//! (`"{n}| {line}"`), optionally a line range, capped by lines and bytes.
//!
//! The file is streamed: only the lines shown are held in memory (of a line
//! longer than the byte cap, only what can be shown), the rest are counted so the
//! model learns the total and where to continue. Files over [`MAX_FILE_BYTES`] are
//! refused (`TOO_LARGE`).
//!
//! What may be read is `gate`'s rule, applied to where the path leads
//! once every symbolic link on its way is followed: not outside the workspace or
//! into `.git` (`INVALID_ARGUMENT`), not an untracked file git ignores (`IGNORED`,
//! naming the link's target when a link led there), only a regular file
//! (`NOT_A_FILE` for a directory, FIFO or device, which is never opened for a
//! blocking read).

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use agent::schema::Schema;
use agent::{ToolFailure, ToolLimits, ToolOutput, Truncation, TruncationLimit};
use serde::Deserialize;
use serde_json::json;

use crate::args;
use crate::cap;
use crate::codes;
use crate::gate::{Gate, Refusal};
use crate::paths::RelPath;
use crate::workspace;

/// The tool name.
pub(crate) const NAME: &str = "read_file";

/// The tool description.
pub(crate) const DESCRIPTION: &str = "Reads a text file of the workspace's working tree as numbered lines (\"{n}| {line}\"), optionally from start_line to end_line (1-based, inclusive). Long results are cut; the result then says the total line count and the start_line to ask for next. Untracked files git ignores are not shown.";

/// The highest line number the schema accepts.
pub(crate) const MAX_LINE_NUMBER: usize = 100_000_000;

/// The largest file read (a file may grow while it is read: no more than this is
/// read of it either).
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// How much of a file is checked for NUL bytes to tell binary from text.
pub(crate) const BINARY_PROBE: usize = 8 * 1024;

/// True when `probe` (the start of a file) holds a NUL byte: binary, as git judges.
pub(crate) fn looks_binary(probe: &[u8]) -> bool {
    probe[..probe.len().min(BINARY_PROBE)].contains(&0)
}

/// The arguments of `read_file`.
#[derive(Debug, Deserialize)]
pub struct Args {
    path: String,
    start_line: Option<usize>,
    end_line: Option<usize>,
}

/// The arguments' schema.
pub(crate) fn schema() -> Schema {
    let line = |what: &str| Schema::integer(1, MAX_LINE_NUMBER as u64).description(what);
    Schema::object()
        .required(
            "path",
            Schema::string()
                .min_length(1)
                .description("Workspace-relative file path. Accepts / or \\ as separator."),
        )
        .optional(
            "start_line",
            line("First line to show, 1-based (default: 1)."),
        )
        .optional(
            "end_line",
            line("Last line to show, inclusive (default: the end of the file, within the caps)."),
        )
}

/// Runs `read_file` over the workspace at `root`.
pub(crate) fn run(root: &Path, args: Args, limits: &ToolLimits) -> Result<ToolOutput, ToolFailure> {
    let rel = args::path("path", &args.path)?;
    let start = args.start_line.unwrap_or(1);
    let end = args.end_line;
    if let Some(end) = end
        && end < start
    {
        return Err(ToolFailure::invalid_argument(format!(
            "end_line {end} is before start_line {start}"
        )));
    }
    let root = workspace::canonical_root(root)?;
    let file = open(&root, &rel)?.take(MAX_FILE_BYTES);
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
            format!("'{rel}' is a binary file (it contains NUL bytes); read_file shows text only"),
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

/// Opens the regular file `rel` leads to, by `gate`'s rules: not
/// outside the workspace, not in `.git`, not an untracked file git ignores (also
/// when a link leads there), not a FIFO or a device, not over [`MAX_FILE_BYTES`].
fn open(root: &Path, rel: &RelPath) -> Result<File, ToolFailure> {
    let repo = match gitctx::Repo::discover(root) {
        Ok(repo) => Some(repo),
        // Outside any repository there are no ignore rules.
        Err(gitctx::Error::NotARepository { .. }) => None,
        Err(err) => return Err(workspace::git_failure(err)),
    };
    let mut gate = Gate::new(root, repo.as_ref())?;
    let target = gate
        .judge(rel, false)
        .map_err(|refusal| refusal.failure(rel))?;
    let not_a_file = |what: &str| {
        ToolFailure::new(
            codes::NOT_A_FILE,
            format!(
                "'{rel}' is {what}, not a regular file; list_files shows the files under a directory"
            ),
        )
    };
    if target.is_root() {
        return Err(not_a_file("a directory"));
    }
    let file = gate.open(&target).map_err(|err| match err {
        safe_io::Error::NotRegular { kind, .. } => not_a_file(kind.describe()),
        err if err.is_not_found() => Refusal::Missing.failure(rel),
        safe_io::Error::NotDirectory { .. } => Refusal::Missing.failure(rel),
        err => ToolFailure::internal(format!("cannot open '{rel}': {err}")),
    })?;
    let size = file
        .metadata()
        .map_err(|err| ToolFailure::internal(format!("cannot open '{rel}': {err}")))?
        .len();
    if size > MAX_FILE_BYTES {
        return Err(ToolFailure::new(
            codes::TOO_LARGE,
            format!(
                "'{rel}' has {size} bytes; read_file reads files of at most {MAX_FILE_BYTES} bytes"
            ),
        ));
    }
    Ok(file)
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
/// most `room` JSON bytes) and counting all. Memory stays within the caps: of a
/// line longer than `room`, only what can be shown is held.
/// `Ok(Err(()))` for a binary file.
fn read_lines(
    file: impl Read,
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
        let keep = if number + 1 < start { 0 } else { room + 1 };
        if read_line_capped(&mut reader, &mut line, keep)? == 0 {
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

/// Reads one line (through its `\n`) from `reader`, keeping at most `keep` of its
/// bytes in `line` and passing over the rest. Returns the bytes read: 0 at the end.
fn read_line_capped(
    reader: &mut impl BufRead,
    line: &mut Vec<u8>,
    keep: usize,
) -> io::Result<usize> {
    line.clear();
    let mut read = 0;
    loop {
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        if chunk.is_empty() {
            return Ok(read);
        }
        let (take, ended) = match chunk.iter().position(|&b| b == b'\n') {
            Some(at) => (at + 1, true),
            None => (chunk.len(), false),
        };
        let room = keep.saturating_sub(line.len());
        line.extend_from_slice(&chunk[..take.min(room)]);
        reader.consume(take);
        read += take;
        if ended {
            return Ok(read);
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &[u8], keep: usize) -> Vec<(usize, Vec<u8>)> {
        let mut reader = BufReader::with_capacity(4, text);
        let mut line = Vec::new();
        let mut out = Vec::new();
        loop {
            let read = read_line_capped(&mut reader, &mut line, keep).unwrap();
            if read == 0 {
                return out;
            }
            out.push((read, line.clone()));
        }
    }

    #[test]
    fn long_lines_are_passed_over_not_held() {
        assert_eq!(
            lines(b"abcdefghij\nxy\nlast", 3),
            [
                (11, b"abc".to_vec()),
                (3, b"xy\n".to_vec()),
                (4, b"las".to_vec())
            ]
        );
        assert_eq!(lines(b"\n\n", 0), [(1, vec![]), (1, vec![])]);
        assert_eq!(lines(b"", 10), []);
    }

    #[test]
    fn a_huge_line_is_cut_and_counted() {
        let text = format!("{}\nsecond\n", "x".repeat(3 * 1024 * 1024));
        let read = read_lines(text.as_bytes(), 1, None, 10, 100)
            .unwrap()
            .unwrap();
        assert!(read.cut_line);
        assert_eq!(read.total_lines, 2);
        assert!(read.text.len() <= 100, "{}", read.text.len());
        assert_eq!(read.next_start_line, 2);
    }
}
