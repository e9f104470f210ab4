//! Blame: which commit last touched which lines, in the commit's own coordinates and
//! in today's.
//!
//! Two engines produce the same entries:
//! - [`BlameEngine::Cli`] runs `git blame --porcelain -L START,END… REV -- PATH`
//!   (one process per call, whatever the history length or the number of
//!   ranges) and parses its output. Its diff is Myers with the indent
//!   heuristic whatever the configuration says (`DIFF_OPTIONS`), so its
//!   answer depends only on the history;
//! - [`BlameEngine::Libgit2`] uses libgit2's blame in-process.
//!
//! The CLI engine is the default because it is much faster on long histories.
//! libgit2's blame is kept so the choice stays measured: `cargo xtask bench
//! blame` times both on a generated repository (`src/big.rs`, 8,000 lines
//! changed by 1,601 of ~4,900 commits, merges included, edits clustered like
//! real ones, packed like a clone). Last recorded (2-core machine, git 2.47.3,
//! median of 10 runs for git and the CLI engine and 3 for libgit2; runs vary
//! by about ±10%):
//!
//! | range | `git blame --porcelain` | CLI engine | libgit2 engine |
//! |---|---|---|---|
//! | 315 lines (`-L 4000,4314`) | 1.01 s | 0.96 s (0.95×) | 2.63 s (2.59×) |
//! | whole file | 1.01 s | 1.15 s (1.13×) | 3.00 s (2.96×) |
//!
//! [`Repo::blame_cached`] answers the same through an on-disk cache
//! ([`crate::blame_cache`]).

use std::collections::HashMap;
use std::path::Path;

use crate::error::{Error, Result, git};
use crate::oid::ObjectId;
use crate::repo::Repo;

/// The diff options every `git blame` here runs with: Myers with the indent
/// heuristic, git's defaults, said on the command line so that no
/// configuration changes them — not `diff.algorithm` (git 2.47's blame
/// ignores it, later ones honour it, wherever git finds it:
/// `GIT_CONFIG_GLOBAL`, an include), not `diff.indentHeuristic`, not a diff
/// driver's algorithm. So the toolkit's blame of a commit is the same on
/// every machine and with every git, and a diff made with the same options
/// pairs lines exactly as the blame does (what `blame_carry` relies on).
/// `--diff-algorithm` reaches blame through git's diff options, which every
/// git since 1.8.2 parses.
pub(crate) const DIFF_OPTIONS: [&str; 2] = ["--diff-algorithm=myers", "--indent-heuristic"];

/// Which implementation computes the blame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BlameEngine {
    /// `git blame --porcelain` (the default: fastest, see the module docs).
    #[default]
    Cli,
    /// libgit2's in-process blame.
    Libgit2,
}

/// What to blame.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BlameOptions {
    /// The revision whose file is blamed; `None` means HEAD.
    pub rev: Option<String>,
    /// 1-based inclusive line range; `None` means the whole file.
    pub lines: Option<(u32, u32)>,
    pub engine: BlameEngine,
}

/// A run of consecutive lines that one commit last touched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlameEntry {
    pub commit: ObjectId,
    /// The file's path in `commit` (differs from today's after a rename).
    pub original_path: String,
    /// First line in the commit's own version of the file (1-based).
    pub original_start: u32,
    /// Last line in the commit's own version of the file (inclusive).
    pub original_end: u32,
    /// First line in the blamed revision's file (1-based).
    pub final_start: u32,
    /// Last line in the blamed revision's file (inclusive).
    pub final_end: u32,
    /// The commit is a boundary (a root commit): git could not look further back.
    pub boundary: bool,
}

impl BlameEntry {
    /// Number of lines in the entry.
    pub fn len(&self) -> u32 {
        self.final_end + 1 - self.final_start
    }

    /// Never true: an entry covers at least one line.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Maps a line of the commit's own version to today's line, if it survives in
    /// this entry.
    pub fn to_final(&self, original_line: u32) -> Option<u32> {
        (self.original_start..=self.original_end)
            .contains(&original_line)
            .then(|| self.final_start + (original_line - self.original_start))
    }
}

impl Repo {
    /// Blames `path` (repository-relative) as `options` say.
    ///
    /// Checked before anything runs, with typed errors: the revision resolves to a
    /// commit, the path is a file there, and the range fits the file. An empty file
    /// blames to no entries.
    pub fn blame(&self, path: &str, options: &BlameOptions) -> Result<Vec<BlameEntry>> {
        let Some(target) = self.blame_target(path, options)? else {
            return Ok(Vec::new());
        };
        let entries = self.blame_ranges(
            target.commit,
            path,
            &[(target.start, target.end)],
            options.engine,
        )?;
        Ok(merge_adjacent(entries))
    }

    /// Resolves and checks what [`Repo::blame`] is asked; `None` for an empty
    /// file.
    pub(crate) fn blame_target(
        &self,
        path: &str,
        options: &BlameOptions,
    ) -> Result<Option<BlameTarget>> {
        let rev = options.rev.as_deref().unwrap_or("HEAD");
        let commit = self.resolve_commit(rev)?;
        let len = self
            .line_count_at(&commit.to_hex(), path)
            .map_err(|err| match err {
                Error::PathNotFound { path, .. } => Error::PathNotFound {
                    path,
                    at: rev.to_owned(),
                },
                Error::NotAFile { path, .. } => Error::NotAFile {
                    path,
                    at: rev.to_owned(),
                },
                other => other,
            })?;
        let (start, end) = match options.lines {
            Some((start, end)) => {
                if start == 0 || start > end || end > len {
                    return Err(Error::InvalidLineRange {
                        path: path.to_owned(),
                        start,
                        end,
                        len,
                    });
                }
                (start, end)
            }
            None if len == 0 => return Ok(None),
            None => (1, len),
        };
        Ok(Some(BlameTarget {
            commit,
            start,
            end,
            len,
        }))
    }

    /// Blames the disjoint, sorted `ranges` of `path` at `commit`: one process
    /// for the CLI engine whatever the number of ranges.
    pub(crate) fn blame_ranges(
        &self,
        commit: ObjectId,
        path: &str,
        ranges: &[(u32, u32)],
        engine: BlameEngine,
    ) -> Result<Vec<BlameEntry>> {
        match engine {
            BlameEngine::Cli => self.blame_cli(commit, path, ranges),
            BlameEngine::Libgit2 => {
                let mut entries = Vec::new();
                for &(start, end) in ranges {
                    entries.extend(self.blame_libgit2(commit, path, start, end)?);
                }
                Ok(entries)
            }
        }
    }

    fn blame_cli(
        &self,
        commit: ObjectId,
        path: &str,
        ranges: &[(u32, u32)],
    ) -> Result<Vec<BlameEntry>> {
        let mut cmd = self
            .git()
            // A configured ignore-revs file (possibly missing) must not change or
            // break our answer.
            .config("blame.ignoreRevsFile", "")
            .config("core.quotePath", "false")
            // No textconv: a `diff=` attribute must not run a program (the
            // attributes are neutralised too, see `command`).
            .args(["blame", "--porcelain", "--no-textconv"])
            .args(DIFF_OPTIONS);
        for (start, end) in ranges {
            cmd = cmd.arg("-L").arg(format!("{start},{end}"));
        }
        let cmd = cmd.arg(commit.to_hex()).arg("--").arg(path);
        let output = cmd.run()?;
        parse_porcelain(&output.stdout).map_err(|reason| Error::Parse {
            args: cmd.display_args(),
            reason,
        })
    }

    fn blame_libgit2(
        &self,
        commit: ObjectId,
        path: &str,
        start: u32,
        end: u32,
    ) -> Result<Vec<BlameEntry>> {
        let mut opts = git2::BlameOptions::new();
        opts.newest_commit(commit.to_git())
            .min_line(start as usize)
            .max_line(end as usize);
        let blame = self
            .inner
            .blame_file(Path::new(path), Some(&mut opts))
            .map_err(git("blaming a file"))?;
        let mut entries = Vec::with_capacity(blame.len());
        for hunk in blame.iter() {
            let lines = u32::try_from(hunk.lines_in_hunk()).unwrap_or(u32::MAX);
            if lines == 0 {
                continue;
            }
            let final_start = u32::try_from(hunk.final_start_line()).unwrap_or(u32::MAX);
            let original_start = u32::try_from(hunk.orig_start_line()).unwrap_or(u32::MAX);
            entries.push(BlameEntry {
                commit: ObjectId::from_git(hunk.final_commit_id()),
                original_path: hunk
                    .path()
                    .map(|p| p.to_string_lossy().into_owned())
                    .unwrap_or_else(|| path.to_owned()),
                original_start,
                original_end: original_start + lines - 1,
                final_start,
                final_end: final_start + lines - 1,
                boundary: hunk.is_boundary(),
            });
        }
        Ok(entries)
    }
}

/// A checked blame request: the commit, the range, and the file's length.
pub(crate) struct BlameTarget {
    pub(crate) commit: ObjectId,
    pub(crate) start: u32,
    pub(crate) end: u32,
    pub(crate) len: u32,
}

/// Joins entries that continue each other (same commit and path, consecutive in
/// both coordinate systems), so both engines report the same runs.
pub(crate) fn merge_adjacent(mut entries: Vec<BlameEntry>) -> Vec<BlameEntry> {
    entries.sort_by_key(|e| e.final_start);
    let mut out: Vec<BlameEntry> = Vec::with_capacity(entries.len());
    for entry in entries {
        if let Some(last) = out.last_mut()
            && last.commit == entry.commit
            && last.original_path == entry.original_path
            && last.final_end + 1 == entry.final_start
            && last.original_end + 1 == entry.original_start
        {
            last.final_end = entry.final_end;
            last.original_end = entry.original_end;
            continue;
        }
        out.push(entry);
    }
    out
}

/// Parses `git blame --porcelain` output.
///
/// Each group starts with `SHA ORIG FINAL COUNT`; later lines of the group repeat
/// `SHA ORIG FINAL`. Commit details (`author …`, `filename …`, `boundary`) appear
/// the first time a commit is seen; `filename` also whenever it changes. Content
/// lines start with a tab and are skipped.
pub(crate) fn parse_porcelain(output: &[u8]) -> std::result::Result<Vec<BlameEntry>, String> {
    struct Group {
        commit: ObjectId,
        original_start: u32,
        final_start: u32,
        count: u32,
        path: Option<String>,
    }
    let mut entries = Vec::new();
    let mut paths: HashMap<ObjectId, String> = HashMap::new();
    let mut boundaries: HashMap<ObjectId, bool> = HashMap::new();
    let mut current: Option<Group> = None;

    let finish = |group: Group,
                  paths: &HashMap<ObjectId, String>,
                  boundaries: &HashMap<ObjectId, bool>,
                  entries: &mut Vec<BlameEntry>|
     -> std::result::Result<(), String> {
        let path = match group.path {
            Some(path) => path,
            None => paths
                .get(&group.commit)
                .cloned()
                .ok_or_else(|| format!("no filename for commit {}", group.commit))?,
        };
        // The line after the group must still be a `u32`, so that no entry's
        // arithmetic (`len`, merging) can overflow.
        let end = |start: u32| {
            start
                .checked_add(group.count)
                .map(|after| after - 1)
                .ok_or_else(|| format!("line numbers out of range in a group of {}", group.commit))
        };
        entries.push(BlameEntry {
            commit: group.commit,
            original_path: path,
            original_start: group.original_start,
            original_end: end(group.original_start)?,
            final_start: group.final_start,
            final_end: end(group.final_start)?,
            boundary: boundaries.get(&group.commit).copied().unwrap_or(false),
        });
        Ok(())
    };

    let mut last_commit: Option<ObjectId> = None;
    for raw in output.split(|&b| b == b'\n') {
        if raw.is_empty() || raw[0] == b'\t' {
            continue;
        }
        let line = String::from_utf8_lossy(raw);
        let mut words = line.splitn(2, ' ');
        let first = words.next().unwrap_or_default();
        let rest = words.next().unwrap_or_default();
        if first.len() == 40 && first.bytes().all(|b| b.is_ascii_hexdigit()) {
            let commit: ObjectId = first.parse().map_err(|e| format!("{e}"))?;
            let nums: Vec<&str> = rest.split(' ').collect();
            let parse = |s: &str| {
                s.parse::<u32>()
                    .map_err(|_| format!("bad line number in header '{line}'"))
            };
            match nums.as_slice() {
                [orig, fin, count] => {
                    if let Some(group) = current.take() {
                        finish(group, &paths, &boundaries, &mut entries)?;
                    }
                    let count = parse(count)?;
                    if count == 0 {
                        return Err(format!("empty group in header '{line}'"));
                    }
                    current = Some(Group {
                        commit,
                        original_start: parse(orig)?,
                        final_start: parse(fin)?,
                        count,
                        path: None,
                    });
                }
                [_, _] => {}
                _ => return Err(format!("malformed header '{line}'")),
            }
            last_commit = Some(commit);
            continue;
        }
        match first {
            "filename" => {
                let path = unquote_c_style(rest);
                if let Some(commit) = last_commit {
                    paths.entry(commit).or_insert_with(|| path.clone());
                }
                if let Some(group) = current.as_mut() {
                    group.path = Some(path);
                }
            }
            "boundary" => {
                if let Some(commit) = last_commit {
                    boundaries.insert(commit, true);
                }
            }
            _ => {}
        }
    }
    if let Some(group) = current.take() {
        finish(group, &paths, &boundaries, &mut entries)?;
    }
    Ok(entries)
}

/// Undoes git's C-style quoting of a path (`"a\tb\303\251"`); returns unquoted
/// text as is.
pub(crate) fn unquote_c_style(text: &str) -> String {
    let Some(inner) = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) else {
        return text.to_owned();
    };
    let mut bytes = Vec::with_capacity(inner.len());
    let mut chars = inner.bytes().peekable();
    while let Some(b) = chars.next() {
        if b != b'\\' {
            bytes.push(b);
            continue;
        }
        match chars.next() {
            Some(b'n') => bytes.push(b'\n'),
            Some(b't') => bytes.push(b'\t'),
            Some(b'r') => bytes.push(b'\r'),
            Some(b'a') => bytes.push(0x07),
            Some(b'b') => bytes.push(0x08),
            Some(b'f') => bytes.push(0x0c),
            Some(b'v') => bytes.push(0x0b),
            Some(d @ b'0'..=b'7') => {
                let mut value = u32::from(d - b'0');
                for _ in 0..2 {
                    match chars.peek() {
                        Some(&n @ b'0'..=b'7') => {
                            value = value * 8 + u32::from(n - b'0');
                            chars.next();
                        }
                        _ => break,
                    }
                }
                bytes.push(u8::try_from(value).unwrap_or(b'?'));
            }
            Some(other) => bytes.push(other),
            None => bytes.push(b'\\'),
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "1111111111111111111111111111111111111111";
    const B: &str = "2222222222222222222222222222222222222222";

    #[test]
    fn parses_groups_and_remembers_filenames() {
        let out = format!(
            "{A} 1 1 2\nauthor X\nfilename src/a.rs\n\tline one\n{A} 2 2\n\tline two\n\
             {B} 5 3 1\nauthor Y\nboundary\nfilename old/a.rs\n\tline three\n\
             {A} 7 4 1\n\tline four\n"
        );
        let entries = parse_porcelain(out.as_bytes()).unwrap();
        assert_eq!(entries.len(), 3);
        assert_eq!(entries[0].commit.to_hex(), A);
        assert_eq!((entries[0].original_start, entries[0].original_end), (1, 2));
        assert_eq!((entries[0].final_start, entries[0].final_end), (1, 2));
        assert_eq!(entries[0].original_path, "src/a.rs");
        assert!(!entries[0].boundary);
        assert_eq!(entries[1].original_path, "old/a.rs");
        assert!(entries[1].boundary);
        assert_eq!((entries[1].original_start, entries[1].final_start), (5, 3));
        assert_eq!(entries[2].original_path, "src/a.rs");
        assert_eq!(entries[2].to_final(7), Some(4));
        assert_eq!(entries[2].to_final(8), None);
    }

    #[test]
    fn content_lines_that_look_like_headers_are_ignored() {
        let out = format!("{A} 1 1 1\nfilename f\n\t{B} 1 1 1\n");
        let entries = parse_porcelain(out.as_bytes()).unwrap();
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].commit.to_hex(), A);
    }

    #[test]
    fn malformed_output_is_an_error_not_a_panic() {
        assert!(parse_porcelain(format!("{A} x 1 1\n").as_bytes()).is_err());
        assert!(parse_porcelain(format!("{A} 1 1 0\n").as_bytes()).is_err());
        assert!(parse_porcelain(format!("{A} 1 1 1\n").as_bytes()).is_err());
        assert_eq!(parse_porcelain(b"").unwrap(), vec![]);
    }

    #[test]
    fn unquotes_c_style_paths() {
        for (quoted, path) in [
            ("plain.rs", "plain.rs"),
            ("\"caf\\303\\251.rs\"", "café.rs"),
            ("\"a\\tb\\\"c\\\\\"", "a\tb\"c\\"),
        ] {
            assert_eq!(unquote_c_style(quoted), path);
        }
    }

    #[test]
    fn counts_lines_like_git() {
        let cases: [(&[u8], u32); 5] =
            [(b"", 0), (b"a", 1), (b"a\n", 1), (b"a\nb", 2), (b"\n\n", 2)];
        for (text, lines) in cases {
            assert_eq!(crate::repo::count_lines(text), lines, "{text:?}");
        }
    }
}

/// Property tests of the porcelain parser: `git blame` output carries file
/// content and file names from the repository, so whatever it holds, parsing
/// never panics and what it returns stays within what the input describes.
#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    const A: &str = "1111111111111111111111111111111111111111";
    const B: &str = "2222222222222222222222222222222222222222";

    /// Parses `output` and checks every entry it returns, and what is built on
    /// them, against the input.
    fn exercise(output: &[u8]) {
        let Ok(entries) = parse_porcelain(output) else {
            return;
        };
        let headers = output
            .split(|&b| b == b'\n')
            .filter(|l| l.len() >= 40)
            .count();
        assert!(
            entries.len() <= headers,
            "{} entries from {headers} header lines",
            entries.len()
        );
        for entry in &entries {
            assert!(entry.original_start <= entry.original_end);
            assert!(entry.final_start <= entry.final_end);
            assert!(entry.original_path.len() <= output.len());
            assert_eq!(
                entry.len(),
                entry.original_end - entry.original_start + 1,
                "both sides of an entry have its length"
            );
            assert_eq!(
                entry.to_final(entry.original_start),
                Some(entry.final_start)
            );
            assert_eq!(entry.to_final(entry.original_end), Some(entry.final_end));
        }
        let merged = merge_adjacent(entries.clone());
        assert!(merged.len() <= entries.len());
        let lines = |es: &[BlameEntry]| es.iter().map(|e| u64::from(e.len())).sum::<u64>();
        assert_eq!(lines(&merged), lines(&entries));
    }

    /// One line of porcelain: headers with any numbers, commit details, quoted
    /// and unquoted file names, content lines (a tab, then anything).
    fn porcelain_line() -> impl Strategy<Value = String> {
        let sha = prop_oneof![Just(A), Just(B)];
        let number = prop_oneof![0u32..5, any::<u32>(), Just(u32::MAX), Just(u32::MAX - 1)];
        prop_oneof![
            (sha.clone(), number.clone(), number.clone(), number.clone())
                .prop_map(|(s, o, f, c)| format!("{s} {o} {f} {c}")),
            (sha.clone(), number.clone(), number).prop_map(|(s, o, f)| format!("{s} {o} {f}")),
            (sha, "[ 0-9a-z-]{0,12}").prop_map(|(s, rest)| format!("{s} {rest}")),
            "filename [^\n]{0,20}".prop_map(String::from),
            "filename \"([^\"\\\\\n]|\\\\[0-7]{1,3}|\\\\[ntrabfv\"\\\\]|\\\\)*\"?"
                .prop_map(String::from),
            Just("boundary".to_owned()),
            Just("author X".to_owned()),
            "\t[^\n]{0,30}".prop_map(String::from),
            "[^\n]{0,30}".prop_map(String::from),
        ]
    }

    /// How git quotes a path (`core.quotePath`): the bytes `unquote_c_style`
    /// must give back.
    fn quote(bytes: &[u8]) -> String {
        let mut out = String::from("\"");
        for &b in bytes {
            match b {
                b'"' => out.push_str("\\\""),
                b'\\' => out.push_str("\\\\"),
                b'\n' => out.push_str("\\n"),
                b'\t' => out.push_str("\\t"),
                0x20..=0x7e => out.push(char::from(b)),
                _ => out.push_str(&format!("\\{b:03o}")),
            }
        }
        out.push('"');
        out
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..1024)) {
            exercise(&bytes);
        }

        #[test]
        fn porcelain_shaped_output_never_panics(lines in prop::collection::vec(porcelain_line(), 0..24)) {
            exercise(lines.join("\n").as_bytes());
        }

        #[test]
        fn unquoting_never_grows_the_text(text in any::<String>()) {
            prop_assert!(unquote_c_style(&text).len() <= text.len());
            let quoted = format!("\"{text}\"");
            prop_assert!(unquote_c_style(&quoted).len() <= quoted.len());
        }

        #[test]
        fn unquoting_undoes_gits_quoting(name in any::<String>()) {
            prop_assert_eq!(unquote_c_style(&quote(name.as_bytes())), name);
        }
    }

    /// Line numbers so large that the entry's end would not fit a `u32` are an
    /// error, not an overflow (a debug build panicked on them).
    #[test]
    fn line_numbers_past_u32_are_errors() {
        for header in [
            format!("{A} {} 1 2", u32::MAX),
            format!("{A} 1 {} 2", u32::MAX),
            format!("{A} 1 {} 1", u32::MAX),
            format!("{A} 2 2 {}", u32::MAX),
        ] {
            let out = format!("{header}\nfilename f\n\tx\n");
            assert!(parse_porcelain(out.as_bytes()).is_err(), "{header}");
        }
        let out = format!("{A} {m} {m} 1\nfilename f\n\tx\n", m = u32::MAX - 1);
        let entries = parse_porcelain(out.as_bytes()).unwrap();
        assert_eq!(entries[0].len(), 1);
    }

    #[test]
    fn large_adversarial_output_stays_linear() {
        let mut output = Vec::new();
        for n in 0..200_000u32 {
            output.extend_from_slice(format!("{A} {} {} 1\n", n + 1, n + 1).as_bytes());
            if n == 0 {
                output.extend_from_slice(b"filename f\n");
            }
            output.extend_from_slice(b"\t@@ -1 +1 @@\n");
        }
        let entries = parse_porcelain(&output).unwrap();
        assert_eq!(entries.len(), 200_000);
        assert_eq!(merge_adjacent(entries).len(), 1);
        for marker in ["filename ", "\t", "boundary\n", "\"", "\\"] {
            let text = marker.repeat(1024 * 1024 / marker.len());
            exercise(text.as_bytes());
        }
        let long_name = format!("{A} 1 1 1\nfilename \"{}\"\n", "\\303\\251".repeat(100_000));
        let entries = parse_porcelain(long_name.as_bytes()).unwrap();
        assert_eq!(entries[0].original_path, "é".repeat(100_000));
    }
}
