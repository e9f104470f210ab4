//! Generated fixture repositories for benchmarks, cached under
//! `target/bench-fixtures/`.
//!
//! Generation is deterministic (a fixed-seed PRNG, pinned dates and identities), so
//! every machine measures the same history. A fixture directory is complete only
//! when its `.complete` marker exists; a half-written one is rebuilt.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use gitctx::GitCommand;

use crate::workspace_root;

/// The blame fixture: one ~8,000-line Rust file with a long history, in a
/// repository with other files and merges.
#[derive(Debug)]
pub struct BlameFixture {
    pub repo: PathBuf,
    pub file: &'static str,
    pub lines: u32,
    /// Commits that changed `file` (merges that brought changes in excluded).
    pub commits: u32,
}

/// Bumped whenever the generator changes, so stale fixtures are not reused.
const BLAME_VERSION: u32 = 3;
const INITIAL_LINES: usize = 1_600;
const COMMITS: usize = 1_600;
const INSERTS_PER_COMMIT: usize = 4;
const EDITS_PER_COMMIT: usize = 3;

/// Returns the blame fixture, generating it first if needed.
pub fn blame() -> Result<BlameFixture, String> {
    let dir = workspace_root()
        .join("target")
        .join("bench-fixtures")
        .join(format!("blame-v{BLAME_VERSION}"));
    let fixture = BlameFixture {
        repo: dir.clone(),
        file: "src/big.rs",
        lines: u32::try_from(INITIAL_LINES + COMMITS * INSERTS_PER_COMMIT).unwrap_or(u32::MAX),
        commits: u32::try_from(COMMITS + 1).unwrap_or(u32::MAX),
    };
    if dir.join(".complete").exists() {
        return Ok(fixture);
    }
    if dir.exists() {
        fs::remove_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    eprintln!(
        "generating {} ({} commits of {})…",
        dir.display(),
        fixture.commits,
        fixture.file
    );
    git(&dir, &["init", "--quiet", "--initial-branch=main"], None)?;
    import_history(&dir, fixture.file)?;
    git(&dir, &["reset", "--quiet", "--hard", "main"], None)?;
    git(&dir, &["gc", "--quiet"], None)?;
    fs::write(dir.join(".complete"), "").map_err(|e| e.to_string())?;
    Ok(fixture)
}

fn git(dir: &Path, args: &[&str], stdin: Option<Vec<u8>>) -> Result<(), String> {
    let mut cmd = hermetic(dir).args(args);
    if let Some(bytes) = stdin {
        cmd = cmd.stdin(bytes);
    }
    cmd.run().map(|_| ()).map_err(|e| e.to_string())
}

fn hermetic(dir: &Path) -> GitCommand {
    GitCommand::new(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
}

/// The history, streamed into `git fast-import` without holding it in memory.
///
/// Shaped like a real project's: besides the ~1,600 commits that change the big
/// file (a few edited lines and a few inserted ones each, anywhere in the file),
/// twice as many commits touch only other files (120 small files in a few
/// directories), and every 40th change to the big file happens on a short side
/// branch that is merged back with `--no-ff`, so blame has merges to traverse.
fn import_history(dir: &Path, file: &str) -> Result<(), String> {
    let mut child = hermetic(dir)
        .args(["fast-import", "--quiet"])
        .to_command()
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not start git fast-import: {e}"))?;
    let stdin = child.stdin.take().expect("stdin was piped");
    let mut history = History {
        out: std::io::BufWriter::new(stdin),
        rng: XorShift(0x9e37_79b9_7f4a_7c15),
        when: 1_700_000_000,
        next_mark: 1,
        file,
    };
    let result = history.write_all();
    drop(history);
    let output = child
        .wait_with_output()
        .map_err(|e| format!("waiting for git fast-import: {e}"))?;
    result?;
    if !output.status.success() {
        return Err(format!(
            "git fast-import failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(())
}

const OTHER_FILES: usize = 120;
const OTHER_COMMITS_PER_CHANGE: usize = 2;
const SIDE_BRANCH_EVERY: usize = 40;
const SIDE_BRANCH_CHANGES: usize = 4;

struct History<'a, W: std::io::Write> {
    out: W,
    rng: XorShift,
    when: i64,
    next_mark: usize,
    file: &'a str,
}

/// One file change of a commit.
enum Change<'a> {
    Big(&'a [String]),
    Other(String, String),
}

impl<W: std::io::Write> History<'_, W> {
    fn write_all(&mut self) -> Result<(), String> {
        let mut big: Vec<String> = (0..INITIAL_LINES)
            .map(|i| format!("    let v{i} = compute({i});"))
            .collect();
        let mut others: Vec<Vec<String>> = (0..OTHER_FILES)
            .map(|f| (0..40).map(|i| format!("line {i} of file {f}")).collect())
            .collect();
        let mut changes: Vec<Change<'_>> = vec![Change::Big(&big)];
        let initial: Vec<Change<'_>> = (0..OTHER_FILES)
            .map(|f| Change::Other(other_path(f), join(&others[f])))
            .collect();
        changes.extend(initial);
        let mut main = self.commit("initial version", None, None, &changes)?;
        let mut done = 0;
        while done < COMMITS {
            if done % SIDE_BRANCH_EVERY == SIDE_BRANCH_EVERY - 1 {
                // A short side branch changes the big file; main moves on with other
                // files meanwhile; then main merges the side branch.
                let mut side = main;
                for _ in 0..SIDE_BRANCH_CHANGES.min(COMMITS - done) {
                    side = self.change_big(&mut big, done, "side change", side)?;
                    done += 1;
                }
                main = self.touch_others(&mut others, main)?;
                main = self.commit(
                    "merge side branch",
                    Some(main),
                    Some(side),
                    &[Change::Big(&big)],
                )?;
            } else {
                main = self.change_big(&mut big, done, "change", main)?;
                done += 1;
                main = self.touch_others(&mut others, main)?;
            }
        }
        Ok(())
    }

    /// Like a real edit: one or two places in the file, each with a couple of
    /// rewritten lines and a few new ones next to them.
    fn mutate(&mut self, lines: &mut Vec<String>, commit: usize) {
        let spots = 1 + self.rng.below(2);
        for spot in 0..spots {
            let at = self.rng.below(lines.len());
            for edit in 0..EDITS_PER_COMMIT.min(lines.len() - at) {
                if self.rng.below(2) == 0 {
                    lines[at + edit] = format!("    let e{commit}_{spot}_{edit} = adjust({at});");
                }
            }
            for insert in 0..INSERTS_PER_COMMIT / spots {
                let line = format!("    let n{commit}_{spot}_{insert} = extend({at});");
                lines.insert((at + insert).min(lines.len()), line);
            }
        }
    }

    /// Changes the big file in one commit on top of `parent`.
    fn change_big(
        &mut self,
        big: &mut Vec<String>,
        n: usize,
        label: &str,
        parent: usize,
    ) -> Result<usize, String> {
        self.mutate(big, n);
        self.commit(
            &format!("{label} {n}"),
            Some(parent),
            None,
            &[Change::Big(big)],
        )
    }

    /// [`OTHER_COMMITS_PER_CHANGE`] commits on top of `parent` that touch only other
    /// files; returns the last.
    fn touch_others(&mut self, others: &mut [Vec<String>], parent: usize) -> Result<usize, String> {
        let mut tip = parent;
        for _ in 0..OTHER_COMMITS_PER_CHANGE {
            tip = self.touch_others_once(others, tip)?;
        }
        Ok(tip)
    }

    fn touch_others_once(
        &mut self,
        others: &mut [Vec<String>],
        parent: usize,
    ) -> Result<usize, String> {
        let count = 1 + self.rng.below(3);
        let mut changes = Vec::new();
        for _ in 0..count {
            let f = self.rng.below(others.len());
            let at = self.rng.below(others[f].len());
            let stamp = self.next_mark;
            others[f][at] = format!("edited in {stamp}");
            changes.push(Change::Other(other_path(f), join(&others[f])));
        }
        self.commit("maintenance", Some(parent), None, &changes)
    }

    fn commit(
        &mut self,
        message: &str,
        from: Option<usize>,
        merge: Option<usize>,
        changes: &[Change<'_>],
    ) -> Result<usize, String> {
        let mark = self.next_mark;
        self.next_mark += 1;
        self.when += 600;
        let when = self.when;
        let mut header = String::new();
        let _ = writeln!(header, "commit refs/heads/main");
        let _ = writeln!(header, "mark :{mark}");
        let _ = writeln!(header, "author Bench <bench@example.com> {when} +0000");
        let _ = writeln!(header, "committer Bench <bench@example.com> {when} +0000");
        let _ = writeln!(header, "data {}\n{message}", message.len());
        if let Some(from) = from {
            let _ = writeln!(header, "from :{from}");
        }
        if let Some(merge) = merge {
            let _ = writeln!(header, "merge :{merge}");
        }
        let io = |e: std::io::Error| format!("writing to git fast-import: {e}");
        self.out.write_all(header.as_bytes()).map_err(io)?;
        for change in changes {
            let (path, content) = match change {
                Change::Big(lines) => (self.file.to_owned(), join(lines)),
                Change::Other(path, content) => (path.clone(), content.clone()),
            };
            let data = format!("M 100644 inline {path}\ndata {}\n", content.len());
            self.out.write_all(data.as_bytes()).map_err(io)?;
            self.out.write_all(content.as_bytes()).map_err(io)?;
            self.out.write_all(b"\n").map_err(io)?;
        }
        self.out.write_all(b"\n").map_err(io)?;
        Ok(mark)
    }
}

fn other_path(f: usize) -> String {
    format!("src/module{}/file{f}.rs", f % 8)
}

fn join(lines: &[String]) -> String {
    let mut content = String::with_capacity(lines.len() * 32);
    for line in lines {
        content.push_str(line);
        content.push('\n');
    }
    content
}

/// A tiny deterministic PRNG (xorshift64); statistical quality is irrelevant here.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}
