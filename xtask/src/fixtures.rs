//! Generated fixture repositories for benchmarks, cached under
//! `target/bench-fixtures/`: the blame fixture (a long history of one big file),
//! the read fixtures (the same shape with an `ultragit/v1` note on every change)
//! the annotate fixture (a 10-file, 300-line commit on a short annotated
//! history; `fixtures/annotate.rs`), the commit-msg fixture (a staged
//! 10,000-line change, 70% of it a package-lock.json; `fixtures/commit_msg.rs`),
//! the merge-shaped history (topic branches merged with `--no-ff`, a
//! rename, 1,000 notes on topic commits only; `fixtures/merge_history.rs`)
//! and the pulled history (an old HEAD, then 3,000 commits of topics merged
//! with `--no-ff` that change a big file a few percent of the time;
//! `fixtures/pulled.rs`).
//!
//! Generation is deterministic (a fixed-seed PRNG, pinned dates and identities), so
//! every machine measures the same history. A fixture directory is complete only
//! when its `.complete` marker exists; a half-written one is rebuilt.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use gitctx::GitCommand;
use ultragit_schema::{
    Annotation, AstAnchor, Constraint, ConstraintSource, ContextLevel, CrossCuttingConcern,
    LineRange, RegionAnnotation, RelatedAnnotation, SemanticDependency, ValidationContext,
};

use crate::workspace_root;

mod annotate;
mod commit_msg;
mod merge_history;
mod pulled;

pub use annotate::{AnnotateFixture, annotate, scratch_copy};
pub use commit_msg::{CommitMsgFixture, LOCKFILE, commit_msg};
pub use merge_history::merge_history;
pub use pulled::pulled;

use testkit::fast_import::{self, Commit, push_note};

/// Who makes every generated fixture commit (fast-import's default is
/// testkit's author; the fixtures keep their own, so their ids stay as they
/// were).
const IDENTITY: &str = "Bench <bench@example.com>";

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
const BLAME_VERSION: u32 = 4;
const INITIAL_LINES: usize = 1_600;
const COMMITS: usize = 1_600;
const INSERTS_PER_COMMIT: usize = 4;
const EDITS_PER_COMMIT: usize = 3;

/// Returns the blame fixture, generating it first if needed.
pub fn blame() -> Result<BlameFixture, String> {
    let dir = dir(&format!("blame-v{BLAME_VERSION}"));
    let fixture = BlameFixture {
        repo: dir.clone(),
        file: "src/big.rs",
        lines: u32::try_from(INITIAL_LINES + COMMITS * INSERTS_PER_COMMIT).unwrap_or(u32::MAX),
        commits: u32::try_from(COMMITS + 1).unwrap_or(u32::MAX),
    };
    if dir.join(".complete").exists() {
        return Ok(fixture);
    }
    start_generating(
        &dir,
        &format!("{} commits of {}", fixture.commits, fixture.file),
    )?;
    import_history(&dir, fixture.file)?;
    git(&dir, &["reset", "--quiet", "--hard", "main"], None)?;
    // As for the read fixture: fast-import stores the big file's versions whole;
    // recompute the deltas as a clone would.
    git(&dir, &["repack", "-a", "-d", "-f", "--quiet"], None)?;
    git(&dir, &["gc", "--quiet"], None)?;
    fs::write(dir.join(".complete"), "").map_err(|e| e.to_string())?;
    Ok(fixture)
}

/// `target/bench-fixtures/NAME`: where fixtures and the benchmarks' scratch
/// copies live.
pub fn dir(name: &str) -> PathBuf {
    workspace_root()
        .join("target")
        .join("bench-fixtures")
        .join(name)
}

/// Empties `dir` and starts the repository of a fixture there, saying what it
/// will hold.
fn start_generating(dir: &Path, what: &str) -> Result<(), String> {
    if dir.exists() {
        fs::remove_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    eprintln!("generating {} ({what})…", dir.display());
    git(dir, &["init", "--quiet", "--initial-branch=main"], None)
}

fn git(dir: &Path, args: &[&str], stdin: Option<Vec<u8>>) -> Result<(), String> {
    let mut cmd = hermetic(dir).args(args);
    if let Some(bytes) = stdin {
        cmd = cmd.stdin(bytes);
    }
    cmd.run().map(|_| ()).map_err(|e| e.to_string())
}

/// git in `dir` with no user or system config.
pub fn hermetic(dir: &Path) -> GitCommand {
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
    let mut child = fast_import::spawn(hermetic(dir), Stdio::null())?;
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
    let finished = fast_import::finish(child);
    result?;
    finished
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
        let files: Vec<(String, String)> = changes
            .iter()
            .map(|change| match change {
                Change::Big(lines) => (self.file.to_owned(), join(lines)),
                Change::Other(path, content) => (path.clone(), content.clone()),
            })
            .collect();
        let mut text = String::new();
        Commit::main(self.when, message)
            .by(IDENTITY)
            .marked(mark)
            .parents(from, merge)
            .push(&mut text, &files);
        self.out
            .write_all(text.as_bytes())
            .map_err(|e| format!("writing to git fast-import: {e}"))?;
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
pub(crate) struct XorShift(pub(crate) u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The read fixture: one Rust file of ~250 functions and ~8,000 lines whose every
/// change is annotated under `refs/notes/ultragit`, in a repository with other
/// files and merges.
#[derive(Debug)]
pub struct ReadFixture {
    pub repo: PathBuf,
    pub file: &'static str,
    /// Lines of `file` at HEAD.
    pub lines: u32,
    pub functions: u32,
    /// Commits that changed `file` (the first one included, merges excluded).
    pub file_commits: u32,
    /// Every commit reachable from HEAD.
    pub total_commits: u32,
    /// Notes under `refs/notes/ultragit`: one per commit that changed `file`.
    pub notes: u32,
    /// A function that exists since the first commit and was changed often: of the
    /// functions in the middle fifth of the file, the one with the most changes.
    pub anchor: String,
    /// Commits that changed `anchor` (the first one included).
    pub anchor_commits: u32,
}

/// Bumped whenever the read generator changes, so stale fixtures are not reused.
const READ_VERSION: u32 = 2;
/// Annotated changes of the engine file in the full fixture and in the small one
/// (the small one measures whether a read's process count grows with history).
const READ_CHANGES: usize = 1_700;
const READ_SMALL_CHANGES: usize = 300;
const ENGINE_FILE: &str = "src/engine.rs";
const FUNCTIONS: usize = 250;
/// A function body stops growing here: later changes also delete statements.
const MAX_STATEMENTS: usize = 28;
const ENGINE_HEADER: &[&str] = &[
    "//! The engine: a pipeline of numbered stages over a `u32` state.",
    "//!",
    "//! Each stage mixes its input with its own constants and calls other stages.",
    "",
];
/// Every change of the engine file happens on its own hour; notes are written two
/// minutes after their commit, so their timestamps are one hour apart too.
const START: i64 = 1_700_000_000;
const HOUR: i64 = 3_600;

/// The full read fixture (~1,700 annotated changes), generated first if needed.
pub fn read() -> Result<ReadFixture, String> {
    read_fixture("read", READ_CHANGES)
}

/// The same generator with 300 annotated changes.
pub fn read_small() -> Result<ReadFixture, String> {
    read_fixture("read-small", READ_SMALL_CHANGES)
}

fn read_fixture(name: &str, changes: usize) -> Result<ReadFixture, String> {
    let dir = dir(&format!("{name}-v{READ_VERSION}"));
    let marker = dir.join(".complete");
    // The marker holds the fixture's shape, so a cached fixture needs no scan.
    if let Ok(text) = fs::read_to_string(&marker)
        && let Some(fixture) = ReadFixture::from_marker(&dir, &text)
    {
        return Ok(fixture);
    }
    start_generating(
        &dir,
        &format!("{changes} annotated changes of {ENGINE_FILE}"),
    )?;
    let shape = import_read_history(&dir, changes)?;
    git(&dir, &["reset", "--quiet", "--hard", "main"], None)?;
    // fast-import deltifies a blob only against the blob written just before it
    // (here another file's), so the engine's versions are stored whole; blame then
    // inflates ~1,700 whole 300 KB blobs and takes twice as long as in any packed
    // repository. Recompute the deltas, as a clone or `gc --aggressive` would.
    git(&dir, &["repack", "-a", "-d", "-f", "--quiet"], None)?;
    git(&dir, &["gc", "--quiet"], None)?;
    let fixture = ReadFixture {
        repo: dir,
        file: ENGINE_FILE,
        lines: shape.lines,
        functions: u32::try_from(FUNCTIONS).expect("a few hundred functions"),
        file_commits: shape.notes,
        total_commits: shape.total_commits,
        notes: shape.notes,
        anchor: shape.anchor,
        anchor_commits: shape.anchor_commits,
    };
    fs::write(&marker, fixture.marker_text()).map_err(|e| format!("{}: {e}", marker.display()))?;
    Ok(fixture)
}

impl ReadFixture {
    /// One of the other files: a short history, so blaming it is cheap.
    pub fn other_file(&self) -> String {
        other_path(0)
    }

    fn marker_text(&self) -> String {
        format!(
            "lines={}\nfile_commits={}\ntotal_commits={}\nnotes={}\nanchor={}\nanchor_commits={}\n",
            self.lines,
            self.file_commits,
            self.total_commits,
            self.notes,
            self.anchor,
            self.anchor_commits
        )
    }

    fn from_marker(dir: &Path, text: &str) -> Option<ReadFixture> {
        let value = |key: &str| {
            text.lines()
                .find_map(|line| line.strip_prefix(key)?.strip_prefix('='))
        };
        let number = |key: &str| value(key)?.parse::<u32>().ok();
        Some(ReadFixture {
            repo: dir.to_path_buf(),
            file: ENGINE_FILE,
            lines: number("lines")?,
            functions: u32::try_from(FUNCTIONS).ok()?,
            file_commits: number("file_commits")?,
            total_commits: number("total_commits")?,
            notes: number("notes")?,
            anchor: value("anchor")?.to_owned(),
            anchor_commits: number("anchor_commits")?,
        })
    }
}

/// What the generator made.
struct ReadShape {
    lines: u32,
    notes: u32,
    total_commits: u32,
    anchor: String,
    anchor_commits: u32,
}

/// The history and its notes, in one `git fast-import` stream.
///
/// Like the blame fixture's: besides the changes of the engine file, twice as many
/// commits touch only other files, and every 40th change happens on a short side
/// branch merged back with `--no-ff`. Each change edits one or two functions (a few
/// statements rewritten, a few inserted, some deleted once a body is long). Every
/// commit that changes the engine file — the merges excepted, which bring no line of
/// their own — gets an `ultragit/v1` note; the notes are one commit on
/// `refs/notes/ultragit` at the end of the stream, after `get-mark` has told us the
/// commits' ids (fast-import answers on its stdout).
fn import_read_history(dir: &Path, changes: usize) -> Result<ReadShape, String> {
    let mut child = fast_import::spawn(hermetic(dir), Stdio::piped())?;
    let stdin = child.stdin.take().expect("stdin was piped");
    let stdout = child.stdout.take().expect("stdout was piped");
    let mut history = ReadHistory {
        out: std::io::BufWriter::new(stdin),
        answers: std::io::BufReader::new(stdout),
        rng: XorShift(0x2545_f491_4f6c_dd1d),
        next_mark: 1,
        next_statement: 0,
        commits: 0,
        functions: Vec::new(),
        annotated: Vec::new(),
    };
    let result = history.write_all(changes);
    drop(history);
    fast_import::finish(child)?;
    result
}

/// One function of the engine file.
struct Function {
    /// The statements between `let mut acc = …;` and the final `acc`.
    statements: Vec<String>,
    /// Index into `annotated` of the last commit that changed it.
    last_change: Option<usize>,
    /// Commits that changed it.
    changes: u32,
}

/// A commit that changed the engine file; its note is written at the end.
struct Annotated {
    mark: usize,
    when: i64,
    regions: Vec<RegionPlan>,
    side_branch: bool,
}

/// What the note says about one changed function.
struct RegionPlan {
    function: usize,
    /// The function's lines in this commit's version of the file.
    lines: (u32, u32),
    /// A function this change made it call: its semantic dependency.
    calls: Option<usize>,
    /// Index into `annotated` of the previous change of this function.
    related: Option<usize>,
    /// Picks the wording.
    flavor: usize,
}

struct ReadHistory<W: std::io::Write, R: std::io::BufRead> {
    out: W,
    answers: R,
    rng: XorShift,
    next_mark: usize,
    /// Makes every generated statement unique, so an edit always changes a line.
    next_statement: usize,
    /// Commits written to `refs/heads/main` (merged branches included).
    commits: u32,
    functions: Vec<Function>,
    annotated: Vec<Annotated>,
}

impl<W: std::io::Write, R: std::io::BufRead> ReadHistory<W, R> {
    fn write_all(&mut self, changes: usize) -> Result<ReadShape, String> {
        self.functions = (0..FUNCTIONS)
            .map(|f| {
                let count = 10 + self.rng.below(11);
                let statements = (0..count)
                    .map(|_| {
                        let call = (self.rng.below(6) == 0).then(|| self.other_function(f));
                        self.statement(f, call)
                    })
                    .collect();
                Function {
                    statements,
                    last_change: None,
                    changes: 0,
                }
            })
            .collect();
        let mut others: Vec<Vec<String>> = (0..OTHER_FILES)
            .map(|f| (0..40).map(|i| format!("line {i} of file {f}")).collect())
            .collect();

        let (engine, ranges) = self.render_engine();
        check_outline(&engine, &ranges)?;
        let mut files = vec![(ENGINE_FILE.to_owned(), engine)];
        files.extend((0..OTHER_FILES).map(|f| (other_path(f), join(&others[f]))));
        let mut main = self.commit(START, "Add the engine and its modules", None, None, &files)?;
        let all: Vec<RegionPlan> = (0..FUNCTIONS)
            .map(|function| RegionPlan {
                function,
                lines: ranges[function],
                calls: None,
                related: None,
                flavor: self.rng.below(64),
            })
            .collect();
        self.record(main, START, all, false);

        let mut done = 0;
        while done < changes {
            if done % SIDE_BRANCH_EVERY == SIDE_BRANCH_EVERY - 1 {
                let mut side = main;
                let mut hour = 0;
                for _ in 0..SIDE_BRANCH_CHANGES.min(changes - done) {
                    done += 1;
                    hour = done;
                    side = self.change_engine(done, side, true)?;
                }
                let base = START + HOUR * hour as i64;
                main = self.touch_others(&mut others, main, base)?;
                let (engine, _) = self.render_engine();
                main = self.commit(
                    base + 3_000,
                    "Merge the side branch",
                    Some(main),
                    Some(side),
                    &[(ENGINE_FILE.to_owned(), engine)],
                )?;
            } else {
                done += 1;
                main = self.change_engine(done, main, false)?;
                main = self.touch_others(&mut others, main, START + HOUR * done as i64)?;
            }
        }
        let (engine, ranges) = self.render_engine();
        check_outline(&engine, &ranges)?;

        let ids = self.resolve_marks()?;
        let notes_when = START + HOUR * (changes as i64 + 1);
        self.write_notes(&ids, notes_when)?;

        // The anchor: of the functions in the middle fifth of the file, the one
        // changed most often (the first of equals).
        let middle = FUNCTIONS * 2 / 5..FUNCTIONS * 3 / 5;
        let anchor = middle
            .clone()
            .max_by_key(|&f| (self.functions[f].changes, std::cmp::Reverse(f)))
            .expect("the middle fifth is not empty");
        Ok(ReadShape {
            lines: u32::try_from(engine.lines().count()).expect("a few thousand lines"),
            notes: u32::try_from(self.annotated.len()).expect("a few thousand notes"),
            total_commits: self.commits,
            anchor: function_name(anchor),
            anchor_commits: self.functions[anchor].changes,
        })
    }

    /// One change of the engine file (`n`: its number, which is also its hour) on
    /// top of `parent`: one or two functions edited like real work.
    fn change_engine(&mut self, n: usize, parent: usize, side: bool) -> Result<usize, String> {
        let count = if self.rng.below(3) == 0 { 2 } else { 1 };
        let mut changed: Vec<(usize, Option<usize>)> = Vec::new();
        while changed.len() < count {
            // A quarter of the changes go to a few hot functions, as in real code.
            let f = if self.rng.below(4) == 0 {
                10 * self.rng.below(FUNCTIONS / 10) + 4
            } else {
                self.rng.below(FUNCTIONS)
            };
            if changed.iter().all(|&(g, _)| g != f) {
                let calls = self.mutate(f);
                changed.push((f, calls));
            }
        }
        let (engine, ranges) = self.render_engine();
        let names: Vec<String> = changed.iter().map(|&(f, _)| function_name(f)).collect();
        let verb = if side { "Experiment with" } else { "Rework" };
        let message = format!("{verb} {} (change {n})", names.join(" and "));
        let when = START + HOUR * n as i64;
        let mark = self.commit(
            when,
            &message,
            Some(parent),
            None,
            &[(ENGINE_FILE.to_owned(), engine)],
        )?;
        let regions = changed
            .into_iter()
            .map(|(function, calls)| RegionPlan {
                function,
                lines: ranges[function],
                calls,
                related: self.functions[function].last_change,
                flavor: self.rng.below(64),
            })
            .collect();
        self.record(mark, when, regions, side);
        Ok(mark)
    }

    fn record(&mut self, mark: usize, when: i64, regions: Vec<RegionPlan>, side_branch: bool) {
        let index = self.annotated.len();
        for region in &regions {
            let function = &mut self.functions[region.function];
            function.last_change = Some(index);
            function.changes += 1;
        }
        self.annotated.push(Annotated {
            mark,
            when,
            regions,
            side_branch,
        });
    }

    /// Edits function `f` in place: a few statements rewritten, a few inserted
    /// together (sometimes a call to another function, which is returned), and
    /// some deleted once the body is long.
    fn mutate(&mut self, f: usize) -> Option<usize> {
        for _ in 0..1 + self.rng.below(3) {
            let len = self.functions[f].statements.len();
            let at = self.rng.below(len);
            self.functions[f].statements[at] = self.statement(f, None);
        }
        let calls = (self.rng.below(3) == 0).then(|| self.other_function(f));
        let inserted = 1 + self.rng.below(3);
        let at = self.rng.below(self.functions[f].statements.len() + 1);
        for i in 0..inserted {
            let line = self.statement(f, calls.filter(|_| i == 0));
            self.functions[f].statements.insert(at + i, line);
        }
        if self.rng.below(4) == 0 {
            let at = self.rng.below(self.functions[f].statements.len());
            self.functions[f].statements.remove(at);
        }
        while self.functions[f].statements.len() > MAX_STATEMENTS {
            let at = self.rng.below(self.functions[f].statements.len());
            self.functions[f].statements.remove(at);
        }
        calls
    }

    /// Another function than `f`; the hot ones are called more often.
    fn other_function(&mut self, f: usize) -> usize {
        loop {
            let g = if self.rng.below(2) == 0 {
                10 * self.rng.below(FUNCTIONS / 10) + 4
            } else {
                self.rng.below(FUNCTIONS)
            };
            if g != f {
                return g;
            }
        }
    }

    /// One line of a function body: a statement over `acc`, or a call to `call`.
    fn statement(&mut self, f: usize, call: Option<usize>) -> String {
        let u = self.next_statement;
        self.next_statement += 1;
        let (a, b) = (self.rng.below(1 << 16) | 1, 1 + self.rng.below(31));
        if let Some(g) = call {
            return format!(
                "    acc = acc.wrapping_add({}(acc >> {b}) ^ {u});",
                function_name(g)
            );
        }
        match self.rng.below(8) {
            0 => format!("    acc = acc.wrapping_mul({a}).rotate_left({b}) ^ {u};"),
            1 => format!("    acc ^= (acc >> {b}).wrapping_add({u});"),
            2 => format!("    if acc % {a} == {b} {{ acc = acc.wrapping_add({u}); }}"),
            3 => format!("    let t{u} = acc.count_ones() + {a}; acc = acc.wrapping_sub(t{u});"),
            4 => format!("    debug_assert!(acc != {u}, \"stage {f}: degenerate state\");"),
            5 => format!("    acc = acc.saturating_sub({a}).max({u});"),
            6 => format!("    acc = if acc > {a} {{ acc - {b} }} else {{ acc + {u} }};"),
            _ => format!("    // Step {u}: keep the low {b} bits stable, callers mask them."),
        }
    }

    /// The engine file and each function's line range (1-based, inclusive, from
    /// its doc comment to its closing brace, as `outline` reports it).
    fn render_engine(&self) -> (String, Vec<(u32, u32)>) {
        let mut text = String::with_capacity(FUNCTIONS * 36 * 56);
        let mut line = 0u32;
        let mut push = |text: &mut String, s: &str| {
            text.push_str(s);
            text.push('\n');
            line += 1;
            line
        };
        for header in ENGINE_HEADER {
            push(&mut text, header);
        }
        let mut ranges = Vec::with_capacity(FUNCTIONS);
        for (f, function) in self.functions.iter().enumerate() {
            let start = push(&mut text, &format!("/// Stage {f}: {}.", purpose(f)));
            push(
                &mut text,
                "/// The result depends only on `x`; callers memoise it.",
            );
            push(&mut text, &format!("{} {{", signature(f)));
            push(
                &mut text,
                &format!("    let mut acc = x ^ {};", 0x9e37 * (f + 1)),
            );
            for statement in &function.statements {
                push(&mut text, statement);
            }
            push(&mut text, "    acc");
            let end = push(&mut text, "}");
            push(&mut text, "");
            ranges.push((start, end));
        }
        (text, ranges)
    }

    /// [`OTHER_COMMITS_PER_CHANGE`] commits on top of `parent` that touch only
    /// other files, 20 minutes apart after `base`; returns the last.
    fn touch_others(
        &mut self,
        others: &mut [Vec<String>],
        parent: usize,
        base: i64,
    ) -> Result<usize, String> {
        let mut tip = parent;
        for i in 0..OTHER_COMMITS_PER_CHANGE {
            let mut changes = Vec::new();
            for _ in 0..1 + self.rng.below(3) {
                let f = self.rng.below(others.len());
                let at = self.rng.below(others[f].len());
                others[f][at] = format!("edited in {}", self.next_mark);
                changes.push((other_path(f), join(&others[f])));
            }
            let when = base + 1_200 * (i as i64 + 1);
            tip = self.commit(when, "Maintenance", Some(tip), None, &changes)?;
        }
        Ok(tip)
    }

    fn commit(
        &mut self,
        when: i64,
        message: &str,
        from: Option<usize>,
        merge: Option<usize>,
        files: &[(String, String)],
    ) -> Result<usize, String> {
        let mark = self.next_mark;
        self.next_mark += 1;
        self.commits += 1;
        let mut text = String::new();
        Commit::main(when, message)
            .by(IDENTITY)
            .marked(mark)
            .parents(from, merge)
            .push(&mut text, files);
        self.write(text.as_bytes())?;
        Ok(mark)
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.out
            .write_all(bytes)
            .map_err(|e| format!("writing to git fast-import: {e}"))
    }

    /// The commit id of every annotated commit.
    fn resolve_marks(&mut self) -> Result<Vec<String>, String> {
        let marks: Vec<usize> = self.annotated.iter().map(|a| a.mark).collect();
        fast_import::get_marks(&mut self.out, &mut self.answers, &marks)
    }

    /// One commit on `refs/notes/ultragit` with every note (fast-import fans the
    /// notes tree out by itself). A few notes are checked against the schema first.
    fn write_notes(&mut self, ids: &[String], when: i64) -> Result<(), String> {
        let mark = self.next_mark;
        self.next_mark += 1;
        let mut header = String::new();
        Commit::notes(when)
            .by(IDENTITY)
            .marked(mark)
            .push_header(&mut header);
        self.write(header.as_bytes())?;
        let checked = [0, 1, 2, ids.len() / 2, ids.len() - 2, ids.len() - 1];
        for (i, id) in ids.iter().enumerate() {
            let json = self.annotation(i, ids).to_json();
            if checked.contains(&i) {
                check_note(&json, id)?;
            }
            let mut note = String::new();
            push_note(&mut note, &format!(":{}", self.annotated[i].mark), &json);
            self.write(note.as_bytes())?;
        }
        self.write(b"\n")?;
        self.out
            .flush()
            .map_err(|e| format!("writing to git fast-import: {e}"))
    }

    /// The `ultragit/v1` note of annotated commit `i`.
    fn annotation(&self, i: usize, ids: &[String]) -> Annotation {
        let commit = &self.annotated[i];
        let names: Vec<String> = commit
            .regions
            .iter()
            .map(|r| function_name(r.function))
            .collect();
        let first = commit.regions.first().map_or(0, |r| r.flavor);
        let timestamp = chrono::DateTime::from_timestamp(commit.when + 120, 0)
            .expect("the fixture's dates are in range")
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let summary = if i == 0 {
            format!("Add the engine: {FUNCTIONS} stages over a u32 state.")
        } else {
            format!(
                "Rework {}: adjust the mixing constants and add a normalisation step.",
                names.join(" and ")
            )
        };
        let level = if first % 4 == 3 {
            ContextLevel::Inferred
        } else {
            ContextLevel::Enhanced
        };
        let mut annotation = Annotation::new(ids[i].clone(), timestamp, summary, level);
        if first.is_multiple_of(3) && i > 0 {
            annotation.task = Some(format!("Tune the {} stage", names[0]));
        }
        if commit.side_branch && first.is_multiple_of(2) {
            annotation
                .summary
                .push_str(" Tried on a side branch first.");
        }
        annotation.regions = commit
            .regions
            .iter()
            .map(|plan| region(plan, i, ids))
            .collect();
        if names.len() == 2 && first % 2 == 1 {
            annotation.cross_cutting.push(CrossCuttingConcern {
                description: format!(
                    "{} and {} must keep the same rounding: their results are compared.",
                    names[0], names[1]
                ),
                regions: names.iter().map(|n| format!("{ENGINE_FILE}:{n}")).collect(),
                nature: "shared invariant".to_owned(),
            });
        }
        annotation
    }
}

/// The note's region for one changed function.
fn region(plan: &RegionPlan, i: usize, ids: &[String]) -> RegionAnnotation {
    let name = function_name(plan.function);
    let mut anchor = AstAnchor::new("function", name.clone());
    anchor.signature = Some(signature(plan.function));
    let intent = if i == 0 {
        format!("Stage {}: {}.", plan.function, purpose(plan.function))
    } else {
        match (plan.calls, plan.flavor % 4) {
            (Some(g), _) => format!(
                "Fold {} into {name} so both stages share one normalisation.",
                function_name(g)
            ),
            (None, 0) => format!("Retune {name}'s mixing constants so nearby inputs diverge."),
            (None, 1) => format!("Clamp {name}'s state so later stages never see zero."),
            (None, 2) => {
                format!("Make {name} cheaper on the hot path without changing its result.")
            }
            (None, _) => format!("Guard {name} against the degenerate state found in testing."),
        }
    };
    let lines = LineRange::new(plan.lines.0, plan.lines.1);
    let mut region = RegionAnnotation::new(ENGINE_FILE, anchor, lines, intent);
    let constraint = match plan.flavor % 3 {
        0 => format!("{name} must depend only on `x`: callers memoise it."),
        1 => format!("{name} must never return 0: the next stage divides by it."),
        _ => format!("Keep {name}'s low 8 bits stable: persisted checksums use them."),
    };
    let source = if plan.flavor.is_multiple_of(5) {
        ConstraintSource::Inferred
    } else {
        ConstraintSource::Author
    };
    region.constraints.push(Constraint::new(constraint, source));
    if plan.flavor % 4 == 1 {
        region.reasoning = Some(
            "A lookup table was considered and rejected: it costs a cache miss per call."
                .to_owned(),
        );
    }
    if plan.flavor % 8 == 2 {
        region.tags.push("performance".to_owned());
    }
    if plan.flavor % 16 == 5 {
        region.risk_notes = Some(format!("Changing {name} changes every persisted checksum."));
    }
    if let Some(g) = plan.calls {
        let callee = function_name(g);
        region.semantic_dependencies.push(SemanticDependency {
            file: ENGINE_FILE.to_owned(),
            anchor: callee.clone(),
            nature: format!("calls {callee} and relies on its result never being 0"),
        });
    }
    if let Some(previous) = plan.related {
        region.related_annotations.push(RelatedAnnotation {
            commit: ids[previous].clone(),
            anchor: name,
            relationship: if plan.flavor.is_multiple_of(2) {
                "extends"
            } else {
                "revises"
            }
            .to_owned(),
        });
    }
    region
}

fn function_name(f: usize) -> String {
    format!("f_{f:03}")
}

fn signature(f: usize) -> String {
    format!("pub fn {}(x: u32) -> u32", function_name(f))
}

fn purpose(f: usize) -> &'static str {
    const PURPOSES: &[&str] = &[
        "mix the input with the stage constants",
        "normalise the state before the next stage",
        "fold the checksum of the previous stages",
        "spread the high bits over the low ones",
        "clamp the state away from its degenerate values",
    ];
    PURPOSES[f % PURPOSES.len()]
}

/// The generator's line ranges and signatures must be the ones `outline` finds,
/// or the notes would describe the wrong lines.
fn check_outline(text: &str, ranges: &[(u32, u32)]) -> Result<(), String> {
    let units = outline::outline(ENGINE_FILE, text).map_err(|e| e.to_string())?;
    if units.len() != ranges.len() {
        return Err(format!(
            "outline finds {} units in the generated engine file, the generator made {}",
            units.len(),
            ranges.len()
        ));
    }
    for (f, (unit, &(start, end))) in units.iter().zip(ranges).enumerate() {
        let expected = (function_name(f), signature(f), start, end);
        let found = (
            unit.qualified_name.clone(),
            unit.signature.clone(),
            unit.lines.start,
            unit.lines.end,
        );
        if expected != found {
            return Err(format!(
                "the generator's unit {expected:?} is {found:?} for outline"
            ));
        }
    }
    Ok(())
}

/// A generated note must parse and validate as `ultragit/v1`.
fn check_note(json: &str, commit: &str) -> Result<(), String> {
    let parsed = Annotation::from_json(json)
        .map_err(|e| format!("a generated note does not parse: {e}\n{json}"))?;
    let context = ValidationContext {
        expected_commit: Some(commit),
        commit_files: None,
    };
    let problems = parsed.validate(&context);
    if let Some(problem) = problems.first() {
        return Err(format!("a generated note is invalid: {problem}\n{json}"));
    }
    if parsed.to_json() != json {
        return Err(format!("a generated note does not round-trip:\n{json}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use testkit::{DeliverySpec, generate_delivery};
    use ultragit_schema::Annotation;

    use super::*;

    /// `git cat-file --batch` of `objects` (`rev:path` or ids): each one's
    /// content, in order.
    fn cat_all(repo: &Path, objects: &[String]) -> Vec<String> {
        let input: String = objects.iter().map(|o| format!("{o}\n")).collect();
        let out = hermetic(repo)
            .args(["cat-file", "--batch"])
            .stdin(input.into_bytes())
            .run_text()
            .expect("git cat-file --batch");
        let mut rest = out.as_str();
        let mut contents = Vec::new();
        for object in objects {
            let (header, after) = rest.split_once('\n').expect("a batch header");
            let size: usize = header
                .rsplit(' ')
                .next()
                .and_then(|s| s.parse().ok())
                .unwrap_or_else(|| panic!("{object}: {header}"));
            contents.push(after[..size].to_owned());
            rest = &after[size + 1..];
        }
        contents
    }

    /// The delivery corpus of testkit, checked with the product's own
    /// readers (testkit cannot depend on them): every note is a valid
    /// `ultragit/v1` annotation of its commit whose corrections are usable,
    /// and `outline` sees every function as a unit with the lines its
    /// region names, at the note's commit and at HEAD.
    #[test]
    fn the_delivery_corpus_reads_with_the_schema_and_outline() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let corpus = generate_delivery(&dir.path().join("repo"), &DeliverySpec::small())
            .expect("the small corpus generates");
        let repo = &corpus.repo;
        let list = hermetic(repo)
            .args(["notes", "--ref=ultragit", "list"])
            .run_text()
            .expect("git notes list");
        let pairs: Vec<(String, String)> = list
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(blob, commit)| (blob.to_owned(), commit.to_owned()))
            .collect();
        assert_eq!(pairs.len(), corpus.notes);
        let blobs: Vec<String> = pairs.iter().map(|p| p.0.clone()).collect();
        let mut wanted: Vec<(String, String, String, u32, u32)> = Vec::new();
        for ((_, commit), text) in pairs.iter().zip(cat_all(repo, &blobs)) {
            let note = Annotation::from_json(&text).expect("a note parses");
            let context = ValidationContext {
                expected_commit: Some(commit),
                commit_files: None,
            };
            let problems = note.validate(&context);
            assert!(problems.is_empty(), "{problems:?}\n{text}");
            for correction in &note.corrections {
                assert_eq!(correction.problems(), Vec::<String>::new(), "{text}");
                assert!(
                    note.regions.iter().any(|r| correction.target.covers(r)),
                    "{text}"
                );
            }
            for region in &note.regions {
                wanted.push((
                    commit.clone(),
                    region.file.clone(),
                    region.ast_anchor.name.clone(),
                    region.lines.start,
                    region.lines.end,
                ));
            }
        }
        let objects: Vec<String> = wanted
            .iter()
            .map(|(commit, file, ..)| format!("{commit}:{file}"))
            .collect();
        for (text, (commit, file, name, start, end)) in cat_all(repo, &objects).iter().zip(&wanted)
        {
            let units = outline::outline(file, text).expect("outline parses the file");
            let unit = units
                .iter()
                .find(|u| u.qualified_name == *name)
                .unwrap_or_else(|| panic!("outline finds no {name} in {commit}:{file}"));
            assert_eq!(
                (unit.lines.start, unit.lines.end),
                (*start, *end),
                "{name} in {commit}:{file}"
            );
            assert_eq!(unit.signature, format!("pub fn {name}(x: u64) -> u64"));
        }
        let mut at_head: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for (file, name) in &corpus.units {
            at_head.entry(file).or_default().push(name.clone());
        }
        for (file, names) in at_head {
            let text = fs::read_to_string(repo.join(file)).expect("a unit's file");
            let units = outline::outline(file, &text).expect("outline parses the file");
            let found: Vec<String> = units.iter().map(|u| u.qualified_name.clone()).collect();
            assert_eq!(found, names, "the units of {file}");
        }
    }
}
