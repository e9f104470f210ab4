//! `cargo xtask bench [NAME]`: benchmarks with medians and ratios.
//!
//! Each benchmark measures a reference (plain `git` doing the same job) and our
//! code side by side, in the same run, and prints each median and its ratio to the
//! reference. Timing lives here and only here: tests never assert on time.
//!
//! The numbers only mean something in a release build, so a debug build of xtask
//! re-runs itself with `cargo run --release`.

use std::time::{Duration, Instant};

use gitctx::{BlameEngine, BlameOptions, Repo};

use crate::{cargo, fixtures};

const NAMES: &[&str] = &["blame"];

pub fn run(args: &[String]) -> Result<(), String> {
    let names: Vec<&str> = match args {
        [] => NAMES.to_vec(),
        [name] if NAMES.contains(&name.as_str()) => vec![name.as_str()],
        _ => {
            return Err(format!(
                "usage: cargo xtask bench [NAME]   (names: {})",
                NAMES.join(", ")
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
            "blame" => blame()?,
            _ => unreachable!("names are checked above"),
        }
    }
    Ok(())
}

/// One measured case.
struct Case<'a> {
    name: String,
    runs: usize,
    f: Box<dyn FnMut() -> Result<usize, String> + 'a>,
}

struct Measured {
    name: String,
    runs: usize,
    median: Duration,
    min: Duration,
    output: usize,
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
    times.sort();
    Ok(Measured {
        name: case.name,
        runs: case.runs,
        median: times[times.len() / 2],
        min: times[0],
        output,
    })
}

fn report(title: &str, rows: &[Measured], reference: usize) {
    println!("\n{title}");
    println!(
        "  {:<46} {:>4} {:>11} {:>11} {:>8}  entries",
        "case", "runs", "median", "min", "ratio"
    );
    let base = rows[reference].median.as_secs_f64();
    for (i, row) in rows.iter().enumerate() {
        let ratio = row.median.as_secs_f64() / base;
        let note = if i == reference { " (reference)" } else { "" };
        println!(
            "  {:<46} {:>4} {:>11} {:>11} {:>7.2}x  {}{}",
            row.name,
            row.runs,
            fmt(row.median),
            fmt(row.min),
            ratio,
            row.output,
            note
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

/// `gitctx` blame, both engines, against `git blame --porcelain` on the same range,
/// on a generated file of ~8,000 lines with 1,600 commits.
fn blame() -> Result<(), String> {
    let fixture = fixtures::blame()?;
    let repo = Repo::open(&fixture.repo).map_err(|e| e.to_string())?;
    let git_version = repo
        .git()
        .arg("--version")
        .run_text()
        .map_err(|e| e.to_string())?;
    println!(
        "blame fixture: {} ({}: {} lines, {} commits; {})",
        fixture.repo.display(),
        fixture.file,
        fixture.lines,
        fixture.commits,
        git_version.trim()
    );
    let mid = fixture.lines / 2;
    let ranges = [
        (Some((mid, mid + 314)), "a 315-line range"),
        (None, "whole file"),
    ];
    for (lines, label) in ranges {
        let range_arg = lines.map(|(s, e)| format!("{s},{e}"));
        let mut rows = Vec::new();
        rows.push(measure(Case {
            name: match &range_arg {
                Some(r) => format!("git blame --porcelain -L {r}"),
                None => "git blame --porcelain".to_owned(),
            },
            runs: 10,
            f: Box::new(|| {
                let mut cmd = repo.git().args(["blame", "--porcelain"]);
                if let Some(r) = &range_arg {
                    cmd = cmd.arg("-L").arg(r);
                }
                let out = cmd
                    .args(["HEAD", "--", fixture.file])
                    .run()
                    .map_err(|e| e.to_string())?;
                // Count groups the way we do, so the columns are comparable.
                Ok(out
                    .stdout
                    .split(|&b| b == b'\n')
                    .filter(|l| {
                        l.len() > 41
                            && l[40] == b' '
                            && l.iter().filter(|&&c| c == b' ').count() == 3
                    })
                    .count())
            }),
        })?);
        for (engine, runs) in [(BlameEngine::Cli, 10), (BlameEngine::Libgit2, 3)] {
            let options = BlameOptions {
                rev: None,
                lines,
                engine,
            };
            let repo = &repo;
            let file = fixture.file;
            rows.push(measure(Case {
                name: format!("gitctx blame ({engine:?})"),
                runs,
                f: Box::new(move || {
                    repo.blame(file, &options)
                        .map(|entries| entries.len())
                        .map_err(|e| e.to_string())
                }),
            })?);
        }
        report(&format!("blame, {label}"), &rows, 0);
    }
    Ok(())
}
