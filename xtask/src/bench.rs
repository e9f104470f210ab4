//! `cargo xtask bench [NAME]`: benchmarks with medians and ratios.
//!
//! Each benchmark measures a reference (plain `git` doing the same job) and our
//! code side by side, in the same run, and prints each median and its ratio to the
//! reference, with the design's targets next to the figures. Timing lives here and
//! only here: tests never assert on time, and neither do benchmarks — they report.
//!
//! - `blame`: `gitctx` blame (both engines) against `git blame --porcelain`. See
//!   [`blame`].
//! - `read`: `ultragit read` with an anchor and for a whole file, in-process and as
//!   the real binary, against `git blame --porcelain` over the same lines; the cost
//!   of `dependencies_on_this`; the git processes one read starts on a long and a
//!   short history (counted with a `git` shim first on `PATH`); then the
//!   `pulled` section. See [`read`]. With `--repo PATH --file F --anchor A
//!   --back N`, only the `pulled` section, on that repository.
//! - `pulled [--repo PATH --file F --anchor A --back N]`: `ultragit read` after
//!   others' commits — at HEAD, from the caches a read at the old HEAD
//!   (`HEAD~N`, first-parent steps) left, with the hook's `cache warm` first
//!   and without — and in a fresh `git clone --no-local` without a
//!   commit-graph and with one, against `git blame --porcelain -L` of the same
//!   lines (targets: 150 ms with the hook, 0.5x of a fresh blame without it,
//!   0.7x and 1.1x of plain blame in a fresh clone); on a generated
//!   merge-shaped history of 4,000 commits, or in clones of the repository at
//!   PATH (never modified; git/git: `--file diff.c --anchor builtin_diff
//!   --back 838`). See [`pulled`].
//! - `annotate`: the turns and input and output tokens per commit under 300
//!   changed lines against a scripted model that reads what it needs, then
//!   emits — before issue 17 (the release binary of `8431e9a^`, built once) and
//!   now (8k and 128k windows), against the targets (median turns <= 4, input
//!   tokens <= 6,000); our own time to annotate a 10-file, 300-line commit
//!   against a fake model that answers at once (in-process, phase by phase,
//!   with the HTTP requests per run); and the `post-commit` hook `ultragit init`
//!   installs: the time until it returns, what its blame-cache warm-up line
//!   adds, and `git commit` with it against without it (release binary). See
//!   [`annotate`].
//! - `commit-msg`: git-agent's context preparation (`commit_msg::prepare`) for a
//!   10,000-line staged change dominated by `package-lock.json`, against `git diff
//!   --cached` as a process, phase by phase; and the first request `generate`
//!   sends to a fake model: its size, the hand-written files with diff text in
//!   it, the lockfile's summary. See [`commit_msg`].
//! - `reply-memory`: the peak RSS of the release `git-agent commit-msg` process
//!   answering a valid reply, a 100 MB reply (with and without a
//!   `Content-Length`) and a 12 MB one (read, repaired, refused), measured with
//!   `getrusage(RUSAGE_CHILDREN)` in a helper process per run, against the
//!   design's 100 MB target. See [`reply_memory`].
//! - `backfill`: the release `ultragit backfill` over 200 commits against a fake
//!   model answering after 300 ms, concurrency 1 against 8 (target ≥ 6×), and
//!   with a model answering at once, our own time per commit (target < 30 ms).
//!   See [`backfill`].
//! - `sync`: `ultragit sync` bringing 10,000 notes from a bare remote on disk
//!   into a clone (fast-forward, and a merge of 100 local notes plus the push),
//!   against a plain `git fetch` of the same ref, on fresh copies each run. See
//!   [`sync`].
//! - `deps`: the reverse dependency index over 10,000 notes with dependencies:
//!   `ultragit deps` warm, after one new note and cold, and `read`'s
//!   `dependencies_on_this` over 10,000 notes against 500. See [`deps`].
//! - `history`: `ultragit history` of one unit on a merge-shaped history of
//!   about 2,000 commits with 1,000 notes on topic commits (warm, cold
//!   index, binary) against `git log --follow`, with a check that every
//!   annotated commit of the unit was found; also the last part of `read`.
//!   See [`history`].
//! - `delivery [--small | --repo PATH [--file F]...]`: how many of the active
//!   decisions (constraints, risk notes, dependencies) of each function at
//!   HEAD reach an agent within 400, 800 and 2,000 tokens and unbudgeted, and
//!   how many retired ones do, for `ultragit read` (release binary), `git log
//!   -L`, `git log -- PATH` and all the file's notes, against a gold set
//!   computed from git alone; on a generated corpus of about 3,000 commits, or
//!   on any clone with notes. See [`delivery`].
//!
//! This module holds what the benchmarks share: measuring cases (alone, in
//! interleaved pairs, or phase by phase by hand), the report table, and release
//! builds of the binaries.
//!
//! The numbers only mean something in a release build, so a debug build of xtask
//! re-runs itself with `cargo run --release`.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use gitctx::Repo;

use crate::cargo;

mod annotate;
mod backfill;
mod blame;
mod commit_msg;
mod corrections;
mod delivery;
mod deps;
mod history;
mod pulled;
mod read;
mod reply_memory;
mod sync;

const NAMES: &[&str] = &[
    "blame",
    "read",
    "pulled",
    "annotate",
    "commit-msg",
    "reply-memory",
    "backfill",
    "sync",
    "corrections",
    "deps",
    "history",
    "delivery",
];

pub fn run(args: &[String]) -> Result<(), String> {
    if let [flag, rest @ ..] = args
        && flag == read::READ_ONCE
    {
        return read::read_once(rest);
    }
    if let [flag, rest @ ..] = args
        && flag == reply_memory::PEAK_RSS
    {
        return reply_memory::peak_rss(rest);
    }
    let mut rest: &[String] = &[];
    let names: Vec<&str> = match args {
        // `read` runs the `pulled` section itself.
        [] => NAMES.iter().copied().filter(|&n| n != "pulled").collect(),
        [name, more @ ..] if name == "delivery" => {
            rest = more;
            vec!["delivery"]
        }
        // `read` with flags is its `pulled` section on another repository.
        [name, more @ ..] if name == "pulled" || (name == "read" && !more.is_empty()) => {
            rest = more;
            vec!["pulled"]
        }
        [name] if NAMES.contains(&name.as_str()) => vec![name.as_str()],
        _ => {
            return Err(format!(
                "usage: cargo xtask bench [NAME]   (names: {}; delivery takes [--small | --repo PATH [--file F]...]; \
                 read and pulled take {})",
                NAMES.join(", "),
                pulled::USAGE
            ));
        }
    };
    if cfg!(debug_assertions) {
        let status = cargo()
            .args([
                "run",
                "--quiet",
                "--release",
                "--package",
                "xtask",
                "--",
                "bench",
            ])
            .args(args)
            .status()
            .map_err(|e| format!("could not run cargo: {e}"))?;
        return if status.success() {
            Ok(())
        } else {
            Err("the release build of the benchmarks failed".to_owned())
        };
    }
    for name in names {
        match name {
            "blame" => blame::blame()?,
            "read" => read::read()?,
            "pulled" => pulled::pulled(rest)?,
            "annotate" => annotate::annotate()?,
            "commit-msg" => commit_msg::commit_msg()?,
            "reply-memory" => reply_memory::reply_memory()?,
            "backfill" => backfill::backfill()?,
            "sync" => sync::sync()?,
            "corrections" => corrections::corrections()?,
            "deps" => deps::deps()?,
            "history" => history::history_bench()?,
            "delivery" => delivery::delivery(rest)?,
            _ => unreachable!("names are checked above"),
        }
    }
    Ok(())
}

/// One measured case.
struct Case<'a> {
    name: String,
    runs: usize,
    /// What the number `f` returns counts (`entries`, `bytes`).
    unit: &'static str,
    f: Box<dyn FnMut() -> Result<usize, String> + 'a>,
}

struct Measured {
    name: String,
    runs: usize,
    unit: &'static str,
    median: Duration,
    min: Duration,
    output: usize,
}

/// A row from times measured by hand: their median and minimum.
fn row(name: &str, mut times: Vec<Duration>, output: usize, unit: &'static str) -> Measured {
    times.sort();
    Measured {
        name: name.to_owned(),
        runs: times.len(),
        unit,
        median: times[times.len() / 2],
        min: times[0],
        output,
    }
}

/// One phase of a run measured phase by phase: its name, its time in a run,
/// what it produced and what that number counts.
type Phase<'a, P> = (&'a str, fn(&P) -> Duration, usize, &'static str);

/// A row per phase, from its times over `runs`.
fn phase_rows<P>(runs: &[P], phases: &[Phase<'_, P>]) -> Vec<Measured> {
    phases
        .iter()
        .map(|&(name, time, output, unit)| row(name, runs.iter().map(time).collect(), output, unit))
        .collect()
}

fn measure(mut case: Case<'_>) -> Result<Measured, String> {
    // One warm-up run fills the page cache and checks the case works at all.
    let output = (case.f)()?;
    let mut times = Vec::with_capacity(case.runs);
    for _ in 0..case.runs {
        let start = Instant::now();
        let n = (case.f)()?;
        times.push(start.elapsed());
        if n != output {
            return Err(format!("{}: output changed between runs", case.name));
        }
    }
    Ok(row(&case.name, times, output, case.unit))
}

/// Runs `a` and `b` `runs` times in interleaved pairs (the order alternating), so
/// drift in the machine's load hits both alike; each returns the time it took.
/// Returns both series of times and the median of the pairs' differences
/// (`b - a`) in seconds.
fn interleave(
    runs: usize,
    mut a: impl FnMut() -> Result<Duration, String>,
    mut b: impl FnMut() -> Result<Duration, String>,
) -> Result<([Vec<Duration>; 2], f64), String> {
    let mut times: [Vec<Duration>; 2] = [Vec::new(), Vec::new()];
    let mut differences = Vec::with_capacity(runs);
    for i in 0..runs {
        let (ta, tb) = if i % 2 == 0 {
            let ta = a()?;
            (ta, b()?)
        } else {
            let tb = b()?;
            (a()?, tb)
        };
        times[0].push(ta);
        times[1].push(tb);
        differences.push(tb.as_secs_f64() - ta.as_secs_f64());
    }
    differences.sort_by(f64::total_cmp);
    Ok((times, differences[differences.len() / 2]))
}

/// Two cases measured in interleaved pairs (the order alternating), so drift in
/// the machine's load hits both alike. Returns both rows and the median of the
/// pairs' differences (`b - a`) in seconds. Both count rendered bytes.
fn measure_pair(
    names: [&str; 2],
    runs: usize,
    mut a: impl FnMut() -> Result<usize, String>,
    mut b: impl FnMut() -> Result<usize, String>,
) -> Result<([Measured; 2], f64), String> {
    let outputs = [a()?, b()?];
    /// One timed run of `f`, whose output must be `expected`.
    fn timed(
        f: &mut impl FnMut() -> Result<usize, String>,
        expected: usize,
        name: &str,
    ) -> Result<Duration, String> {
        let start = Instant::now();
        let n = f()?;
        let elapsed = start.elapsed();
        if n != expected {
            return Err(format!("{name}: output changed between runs"));
        }
        Ok(elapsed)
    }
    let (times, difference) = interleave(
        runs,
        || timed(&mut a, outputs[0], names[0]),
        || timed(&mut b, outputs[1], names[1]),
    )?;
    let [ta, tb] = times;
    Ok((
        [
            row(names[0], ta, outputs[0], "bytes"),
            row(names[1], tb, outputs[1], "bytes"),
        ],
        difference,
    ))
}

fn report(title: &str, rows: &[Measured], reference: usize) {
    println!("\n{title}");
    println!(
        "  {:<46} {:>4} {:>11} {:>11} {:>8}  output",
        "case", "runs", "median", "min", "ratio"
    );
    let base = rows[reference].median.as_secs_f64();
    for (i, row) in rows.iter().enumerate() {
        let ratio = row.median.as_secs_f64() / base;
        let note = if i == reference { " (reference)" } else { "" };
        let output = if row.unit.is_empty() {
            String::new()
        } else {
            format!("{} {}", row.output, row.unit)
        };
        println!(
            "  {:<46} {:>4} {:>11} {:>11} {:>7.2}x  {output}{note}",
            row.name,
            row.runs,
            fmt(row.median),
            fmt(row.min),
            ratio,
        );
    }
}

fn fmt(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms >= 1000.0 {
        format!("{:.2} s", ms / 1000.0)
    } else {
        format!("{ms:.1} ms")
    }
}

/// `git --version`, as git in `repo` answers it.
fn git_version(repo: &Repo) -> Result<String, String> {
    repo.git()
        .arg("--version")
        .run_text()
        .map_err(|e| e.to_string())
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "MISSED" }
}

/// Builds `target/release/ultragit` (`cargo build --release -p ultragit`) and
/// returns its path; `Err` says why the rows that need it are skipped.
fn build_ultragit() -> Result<PathBuf, String> {
    build_release("ultragit").map_err(|reason| format!("skipped: {reason}"))
}

/// Builds the release binary of `package` (`cargo build --release -p PACKAGE`,
/// whose binary has the package's name) and returns its path.
fn build_release(package: &str) -> Result<PathBuf, String> {
    let status = cargo()
        .args(["build", "--quiet", "--release", "--package", package])
        .status()
        .map_err(|e| format!("could not run cargo: {e}"))?;
    if !status.success() {
        return Err(format!(
            "`cargo build --release -p {package}` failed (see above)"
        ));
    }
    // The release xtask running this lives next to the release binaries.
    Ok(std::env::current_exe()
        .map_err(|e| format!("where is xtask? {e}"))?
        .with_file_name(format!("{package}{}", std::env::consts::EXE_SUFFIX)))
}

/// Runs `command` to its end and returns its output; an error names `program`
/// when it does not start, and `what` with its stderr when it fails.
fn succeed(
    command: &mut Command,
    program: &dyn std::fmt::Display,
    what: &dyn std::fmt::Display,
) -> Result<std::process::Output, String> {
    let out = command
        .output()
        .map_err(|e| format!("could not run {program}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{what} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(out)
}
