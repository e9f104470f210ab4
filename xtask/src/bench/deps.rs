//! `cargo xtask bench deps`: the reverse dependency index over 10,000 notes,
//! each declaring dependencies.
//!
//! Fixtures (`target/bench-fixtures/deps-v3-10000` and `deps-v3-500`): 50
//! Rust files of 20 functions each, added by the first commit; then one empty
//! commit per note, a minute apart, and 20 spare commits without one. Every
//! annotated commit's note has one region (a function of one file) declaring
//! three semantic dependencies on functions of other files, spread
//! deterministically over the 1,000 functions (30 on `src/m00.rs` `f00`, the
//! unit queried, over 10,000 notes; 2 over 500). The
//! whole history and the one notes commit are streamed into one `git
//! fast-import`.
//!
//! Cases (medians; the binary is the release `ultragit`):
//! - `ultragit deps src/m00.rs f00` with the index up to date (warm; target
//!   ≤ 50 ms);
//! - the index update after one new note, in-process (`DepsIndex::open`,
//!   target ≤ 20 ms) and as `ultragit deps` (the process included);
//! - the cold build (no index file), in-process and as `ultragit deps`;
//! - one journal fold, in-process: the update that takes the journal past its
//!   64 steps and writes a new base (timed once, from a cold build, with one
//!   note written and removed alternately);
//! - `read`'s `dependencies_on_this` over 10,000 notes and over 500 (the
//!   difference of interleaved reads with and without it, `depsScanLimit`
//!   unset against 0);
//! - the target, "`dependencies_on_this` over 10,000 notes no slower than over
//!   500 today": "today" is the code before the index, which dated every
//!   annotated commit, read and parsed the notes of the 500 most recent and
//!   matched their dependencies ([`scan_recent`], the same work in-process).
//!   It is timed on the 500-note repository (what "over 500" meant) and on
//!   the 10,000-note one (where dating every commit costs more), and the cost
//!   through the index over 10,000 notes is judged against the smaller of the
//!   two, with no slack.
//!
//! The fixture is copied to a scratch directory first: the update case writes
//! notes.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gitctx::{ObjectId, Repo};
use serde_json::json;
use ultragit_read::{DepsIndex, GitReadPipeline, NOTES_REF, ReadConfig, ReadPipeline, ReadQuery};

use super::{build_ultragit, fmt, measure_pair, report, row, succeed, verdict};
use crate::fixtures::{dir, hermetic, scratch_copy};

const FILES: usize = 50;
const FUNCTIONS: usize = 20;
const SPARE: usize = 20;
const RUNS: usize = 15;

pub(super) fn deps() -> Result<(), String> {
    let big = fixture(10_000)?;
    let small = fixture(500)?;
    let ultragit = build_ultragit()?;
    let work = dir("deps-run");
    scratch_copy(&big, &work)?;
    println!(
        "deps fixture: {} (10,000 annotated commits, 3 dependencies each, over {} functions)",
        big.display(),
        FILES * FUNCTIONS
    );
    let deps_args = ["deps", "src/m00.rs", "f00", "--format", "json"];
    let run_deps = || -> Result<usize, String> {
        let out = succeed(
            Command::new(&ultragit)
                .args(deps_args)
                .current_dir(&work)
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .stdin(Stdio::null()),
            &"ultragit deps",
            &"ultragit deps",
        )?;
        let value: serde_json::Value =
            serde_json::from_slice(&out.stdout).map_err(|e| format!("deps output: {e}"))?;
        Ok(value["dependents"].as_array().map_or(0, Vec::len))
    };
    let repo = Repo::open(&work).map_err(|e| e.to_string())?;
    let index_file = DepsIndex::path(&repo);
    let open_index = || -> Result<usize, String> {
        let index = DepsIndex::open(&repo, NOTES_REF).map_err(|e| e.to_string())?;
        Ok(index.annotated_commits())
    };

    // Cold: no index file, in-process and as the binary.
    let remove = || std::fs::remove_file(&index_file).or_else(ignore_missing);
    let mut cold = Vec::new();
    let mut cold_bin = Vec::new();
    let mut indexed = 0;
    for _ in 0..5 {
        remove()?;
        let start = Instant::now();
        indexed = open_index()?;
        cold.push(start.elapsed());
        remove()?;
        let start = Instant::now();
        run_deps()?;
        cold_bin.push(start.elapsed());
    }

    // Warm: the index is up to date.
    let mut warm = Vec::new();
    let dependents = run_deps()?;
    for _ in 0..RUNS {
        let start = Instant::now();
        run_deps()?;
        warm.push(start.elapsed());
    }

    // One new note on a spare commit, then the update (in-process and as the
    // binary, alternately); the note is removed again, untimed.
    let spare = spare_commits(&repo)?;
    let notes = repo.notes(NOTES_REF).map_err(|e| e.to_string())?;
    let mut update = Vec::new();
    let mut update_bin = Vec::new();
    for (i, commit) in spare.iter().enumerate().take(2 * 10) {
        notes
            .write(*commit, &note(&commit.to_hex(), 10_000 + i))
            .map_err(|e| e.to_string())?;
        let start = Instant::now();
        if i % 2 == 0 {
            open_index()?;
            update.push(start.elapsed());
        } else {
            run_deps()?;
            update_bin.push(start.elapsed());
        }
        notes.remove(*commit).map_err(|e| e.to_string())?;
        open_index()?;
    }

    // One fold: from a cold build, one note written and removed alternately,
    // each an update that adds a journal step, until the journal is folded
    // into a new base (it is then gone).
    let journal = index_file.with_file_name("journal.json");
    remove()?;
    open_index()?;
    let mut fold = None;
    let mut steps = 0;
    let mut stepping = Vec::new();
    while fold.is_none() && steps < 4 * 64 {
        let commit = spare[0];
        if steps % 2 == 0 {
            notes
                .write(commit, &note(&commit.to_hex(), 20_000))
                .map_err(|e| e.to_string())?;
        } else {
            notes.remove(commit).map_err(|e| e.to_string())?;
        }
        let had_journal = journal.exists();
        let start = Instant::now();
        open_index()?;
        let took = start.elapsed();
        steps += 1;
        if had_journal && !journal.exists() {
            fold = Some(took);
        } else {
            stepping.push(took);
        }
    }
    if steps % 2 == 1 {
        notes.remove(spare[0]).map_err(|e| e.to_string())?;
        open_index()?;
    }
    let fold = fold.ok_or("the journal was never folded")?;

    let rows = [
        row(
            "ultragit deps, index up to date",
            warm,
            dependents,
            "dependents",
        ),
        row(
            "index update after one new note (in-process)",
            update,
            indexed,
            "notes",
        ),
        row(
            "ultragit deps after one new note",
            update_bin,
            dependents,
            "dependents",
        ),
        row("cold index build (in-process)", cold, indexed, "notes"),
        row(
            "ultragit deps, no index (cold)",
            cold_bin,
            dependents,
            "dependents",
        ),
    ];
    report(
        "deps over 10,000 annotated commits (release binary; ratio to the warm deps)",
        &rows,
        0,
    );
    println!(
        "  targets: deps warm ≤ 50 ms: {}; index update after one new note ≤ 20 ms: {}",
        verdict(rows[0].median <= Duration::from_millis(50)),
        verdict(rows[1].median <= Duration::from_millis(20)),
    );
    let stepping = row("", stepping, 0, "");
    println!(
        "  journal fold (update {steps}, past 64 steps, a new base written): {} once; the {} updates before it: median {}",
        fmt(fold),
        stepping.runs,
        fmt(stepping.median)
    );

    // read's dependencies_on_this over 10,000 notes against over 500.
    let mut costs = Vec::new();
    for (label, fixture) in [("10,000 notes", &work), ("500 notes", &small)] {
        let pipeline = |limit: Option<u32>| -> Result<GitReadPipeline, String> {
            let repo = Repo::open(fixture).map_err(|e| e.to_string())?;
            let config = ReadConfig {
                deps_scan_limit: limit,
                ..ReadConfig::default()
            };
            Ok(GitReadPipeline::with_config(repo, config))
        };
        let (without, with) = (pipeline(Some(0))?, pipeline(None)?);
        let query = ReadQuery::file("src/m00.rs").with_anchor("f00");
        let run = |p: &GitReadPipeline| -> Result<usize, String> {
            let out = p.execute(&query).map_err(|e| e.to_string())?;
            Ok(out.dependencies_on_this.len())
        };
        let (rows, extra) = measure_pair(
            [
                &format!("read, {label}, depsScanLimit = 0"),
                &format!("read, {label}, dependencies_on_this (index)"),
            ],
            RUNS,
            || run(&without),
            || run(&with),
        )?;
        report(&format!("read's dependencies_on_this, {label}"), &rows, 0);
        println!(
            "  dependencies_on_this adds {} ({} entries)",
            fmt(Duration::from_secs_f64(extra.max(0.0))),
            rows[1].output
        );
        costs.push(extra);
    }
    // For information: the index's cost grows with the notes it holds (it
    // is decoded whole).
    println!(
        "  through the index, 10,000 notes against 500: {} against {}",
        fmt(Duration::from_secs_f64(costs[0].max(0.0))),
        fmt(Duration::from_secs_f64(costs[1].max(0.0)))
    );

    // "Today", the reference: what read did before the index, on the
    // 500-note repository and on the 10,000-note one.
    let small_repo = Repo::open(&small).map_err(|e| e.to_string())?;
    let mut references = Vec::new();
    for (label, repo) in [("500", &small_repo), ("10,000", &repo)] {
        let mut times = Vec::new();
        let mut found = 0;
        for _ in 0..RUNS {
            let start = Instant::now();
            found = scan_recent(repo, "src/m00.rs", "f00", OLD_SCAN_LIMIT)?;
            times.push(start.elapsed());
        }
        references.push(row(
            &format!("old scan of the 500 newest, {label} notes"),
            times,
            found,
            "dependencies",
        ));
    }
    report(
        "read's dependencies_on_this before the index (in-process)",
        &references,
        0,
    );
    let reference = references
        .iter()
        .map(|r| r.median.as_secs_f64())
        .fold(f64::INFINITY, f64::min);
    let cost = costs[0].max(0.0);
    println!(
        "  target: 10,000 notes through the index no slower than the old scan over 500 (the smaller reference): {} ({} against {}, ratio {:.2})",
        verdict(cost <= reference),
        fmt(Duration::from_secs_f64(cost)),
        fmt(Duration::from_secs_f64(reference)),
        cost / reference
    );
    Ok(())
}

/// The window the read pipeline scanned before the index (its default
/// `depsScanLimit`).
const OLD_SCAN_LIMIT: usize = 500;

/// What `read`'s `dependencies_on_this` did before the index: date every
/// annotated commit, read and parse the notes of the `limit` most recent, and
/// count the dependencies on `file` `anchor` (exactly or unqualified).
fn scan_recent(repo: &Repo, file: &str, anchor: &str, limit: usize) -> Result<usize, String> {
    let notes = repo.notes(NOTES_REF).map_err(|e| e.to_string())?;
    let mut dated: Vec<(i64, ObjectId)> = notes
        .list()
        .map_err(|e| e.to_string())?
        .iter()
        .filter_map(|entry| {
            let info = repo.commit_info_by_id(entry.target).ok()?;
            Some((info.committer.time.seconds, entry.target))
        })
        .collect();
    dated.sort_by(|a, b| b.cmp(a));
    dated.truncate(limit);
    let recent: Vec<ObjectId> = dated.into_iter().map(|(_, id)| id).collect();
    let read = notes.read_many(&recent).map_err(|e| e.to_string())?;
    let mut found = 0;
    for (_, text) in &read.found {
        let Some(annotation) = ultragit_schema::Annotation::from_json(text)
            .ok()
            .filter(|a| a.timestamp_utc().is_some())
        else {
            continue;
        };
        found += annotation
            .regions
            .iter()
            .flat_map(|r| &r.semantic_dependencies)
            .filter(|d| {
                d.file == file
                    && matches!(
                        outline::match_name(&d.anchor, anchor),
                        Some(outline::MatchKind::Exact | outline::MatchKind::Unqualified)
                    )
            })
            .count();
    }
    Ok(found)
}

fn ignore_missing(err: std::io::Error) -> Result<(), String> {
    if err.kind() == std::io::ErrorKind::NotFound {
        Ok(())
    } else {
        Err(err.to_string())
    }
}

/// The commits without a note (the spare ones), newest first.
fn spare_commits(repo: &Repo) -> Result<Vec<ObjectId>, String> {
    let annotated: std::collections::HashSet<ObjectId> = repo
        .notes(NOTES_REF)
        .and_then(|n| n.list())
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|e| e.target)
        .collect();
    let log = repo.log("HEAD", SPARE + 2).map_err(|e| e.to_string())?;
    Ok(log
        .into_iter()
        .filter(|c| !annotated.contains(c))
        .take(SPARE)
        .collect())
}

/// `src/mNN.rs` and `fNN` of unit `u` (0..1000).
fn unit(u: usize) -> (String, String) {
    (
        format!("src/m{:02}.rs", u / FUNCTIONS % FILES),
        format!("f{:02}", u % FUNCTIONS),
    )
}

/// The note of the `i`th annotated commit: one region, three dependencies.
fn note(commit: &str, i: usize) -> String {
    let units = FILES * FUNCTIONS;
    let own = i % units;
    let (file, anchor) = unit(own);
    let dependencies: Vec<serde_json::Value> = [1, 2, 3]
        .iter()
        .map(|k| {
            let (file, anchor) = unit((i * 3 + k * 331) % units);
            json!({"file": file, "anchor": anchor, "nature": format!("calls it (dependency {k} of change {i})")})
        })
        .collect();
    json!({
        "$schema": "ultragit/v1",
        "commit": commit,
        "timestamp": "2024-01-01T00:00:00Z",
        "summary": format!("Change {i}."),
        "context_level": "enhanced",
        "regions": [{
            "file": file,
            "ast_anchor": {"type": "function", "name": anchor},
            "lines": {"start": 1, "end": 3},
            "intent": format!("Does step {i}."),
            "constraints": [],
            "semantic_dependencies": dependencies
        }],
        "cross_cutting": [],
        "provenance": {"operation": "initial", "original_annotations_preserved": false}
    })
    .to_string()
}

/// The fixture with `notes` annotated commits, generated first if needed.
fn fixture(notes: usize) -> Result<PathBuf, String> {
    let root = dir(&format!("deps-v3-{notes}"));
    if root.join(".git/bench-complete").exists() {
        return Ok(root);
    }
    if root.exists() {
        std::fs::remove_dir_all(&root).map_err(|e| format!("{}: {e}", root.display()))?;
    }
    std::fs::create_dir_all(&root).map_err(|e| e.to_string())?;
    eprintln!("generating {} ({notes} annotated commits)…", root.display());
    let git = |args: &[&str]| hermetic(&root).args(args).run().map_err(|e| e.to_string());
    git(&["init", "--quiet", "--initial-branch=main"])?;
    hermetic(&root)
        .args(["fast-import", "--quiet"])
        .stdin(stream(notes))
        .run()
        .map_err(|e| e.to_string())?;
    git(&["reset", "--quiet", "--hard", "main"])?;
    git(&["gc", "--quiet"])?;
    std::fs::write(root.join(".git/bench-complete"), "").map_err(|e| e.to_string())?;
    Ok(root)
}

/// The fast-import stream: the files, one empty commit per note and the spare
/// ones (marks `:1`…), then the notes commit naming commits by mark.
fn stream(notes: usize) -> String {
    let mut out = String::new();
    let header = |out: &mut String, refname: &str, mark: usize, when: usize, message: &str| {
        let _ = write!(
            out,
            "commit {refname}\nmark :{mark}\ncommitter Bench <bench@example.com> {} +0000\ndata {}\n{message}\n",
            1_700_000_000 + when * 60,
            message.len()
        );
    };
    header(&mut out, "refs/heads/main", 1, 0, "Add the sources");
    for f in 0..FILES {
        let text: String = (0..FUNCTIONS)
            .map(|g| format!("pub fn f{g:02}(x: u32) -> u32 {{\n    x + {g}\n}}\n\n"))
            .collect();
        let _ = write!(
            out,
            "M 100644 inline src/m{f:02}.rs\ndata {}\n{text}\n",
            text.len()
        );
    }
    for i in 1..=notes + SPARE {
        header(
            &mut out,
            "refs/heads/main",
            i + 1,
            i,
            &format!("change {i}"),
        );
    }
    header(
        &mut out,
        NOTES_REF,
        notes + SPARE + 2,
        notes + SPARE + 1,
        "notes",
    );
    for i in 1..=notes {
        // The note names its commit by mark: fast-import fills the id in the
        // tree, and the note's own "commit" field is only informative here.
        let text = note(&format!(":{}", i + 1), i);
        let _ = write!(out, "N inline :{}\ndata {}\n{text}\n", i + 1, text.len());
    }
    out
}
