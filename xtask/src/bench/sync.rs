//! `cargo xtask bench sync`: 10,000 notes travelling from one clone to another
//! through a bare remote on disk, against a plain `git fetch` of the same ref in
//! the same run.
//!
//! The fixture (`target/bench-fixtures/sync-v1`): a bare remote with 10,000
//! commits on `main` and an `ultragit/v1` note on each (one notes commit, as a
//! teammate's pushed notes would be), a clone of it without notes, and a copy
//! of that clone with 100 notes of its own on commits the remote annotated too
//! (different regions, so each needs the JSON-aware merge). Every run works on
//! fresh scratch copies of the remote and the clone, so nothing is fetched
//! from a warm object store, and each case is checked: after it, the clone
//! holds all 10,000 notes.
//!
//! Cases, interleaved run by run:
//! - `git fetch origin +refs/notes/ultragit:refs/notes/remotes/origin/ultragit`
//!   (the reference: moving the notes objects, nothing else);
//! - `ultragit sync` into the clone without notes: fetch, fast-forward, nothing
//!   to push;
//! - `ultragit sync` into the clone with 100 notes: fetch, a merge commit whose
//!   tree joins 9,900 notes taken as they are and 100 merged JSON documents,
//!   and the push of the result.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gitctx::{ObjectId, Repo, Resolution};
use ultragit_schema::{Annotation, AstAnchor, ContextLevel, LineRange, RegionAnnotation};

use super::{build_ultragit, fmt, report, row, succeed};
use crate::fixtures::{dir, hermetic, scratch_copy};

const VERSION: u32 = 1;
const NOTES: usize = 10_000;
const LOCAL_NOTES: usize = 100;
const RUNS: usize = 5;
const TRACKING: &str = "refs/notes/remotes/origin/ultragit";

struct Fixture {
    remote: PathBuf,
    clone: PathBuf,
    annotated: PathBuf,
}

pub(super) fn sync() -> Result<(), String> {
    let fixture = fixture()?;
    let ultragit = build_ultragit()?;
    let scratch = dir("sync-run");
    println!(
        "sync fixture: {} ({NOTES} commits with a note each on the remote; {LOCAL_NOTES} local notes on the same commits in the annotated clone)",
        fixture
            .remote
            .parent()
            .map_or(fixture.remote.clone(), Path::to_path_buf)
            .display()
    );
    let names = [
        "git fetch (notes ref into the tracking ref)",
        "ultragit sync (fast-forward, no local notes)",
        "ultragit sync (merge 100 + push)",
    ];
    let mut times: [Vec<Duration>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    let mut outputs = [0usize; 3];
    // One warm-up round, then RUNS measured ones, the order rotating.
    for round in 0..=RUNS {
        for k in 0..3 {
            let case = (round + k) % 3;
            let template = if case == 2 {
                &fixture.annotated
            } else {
                &fixture.clone
            };
            let clone = prepare(&fixture.remote, template, &scratch)?;
            let start = Instant::now();
            let mut cmd = match case {
                0 => {
                    let mut cmd = Command::new("git");
                    cmd.args([
                        "fetch",
                        "--quiet",
                        "origin",
                        &format!("+refs/notes/ultragit:{TRACKING}"),
                    ]);
                    cmd
                }
                _ => {
                    let mut cmd = Command::new(&ultragit);
                    cmd.arg("sync");
                    cmd
                }
            };
            cmd.current_dir(&clone)
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .stdin(Stdio::null());
            succeed(&mut cmd, &names[case], &names[case])?;
            let elapsed = start.elapsed();
            let count = notes_in(&clone, if case == 0 { TRACKING } else { "ultragit" })?;
            if count != NOTES {
                return Err(format!(
                    "{}: {count} notes arrived, not {NOTES}",
                    names[case]
                ));
            }
            outputs[case] = count;
            if round > 0 {
                times[case].push(elapsed);
            }
        }
    }
    let [fetch, ff, merge] = times;
    let rows = [
        row(names[0], fetch, outputs[0], "notes"),
        row(names[1], ff, outputs[1], "notes"),
        row(names[2], merge, outputs[2], "notes"),
    ];
    report(
        &format!("sync, {NOTES} notes from a bare remote on disk (release binary)"),
        &rows,
        0,
    );
    let overhead = rows[1].median.saturating_sub(rows[0].median);
    println!(
        "  ultragit's own time over the fetch (fast-forward): {}; with a merge and a push: {}",
        fmt(overhead),
        fmt(rows[2].median.saturating_sub(rows[0].median))
    );
    Ok(())
}

/// Fresh scratch copies of the remote and of `template` (a clone), the clone's
/// `origin` pointed at the copied remote. Returns the clone's path.
fn prepare(remote: &Path, template: &Path, scratch: &Path) -> Result<PathBuf, String> {
    let (remote_copy, clone_copy) = (scratch.join("remote.git"), scratch.join("clone"));
    scratch_copy(remote, &remote_copy)?;
    scratch_copy(template, &clone_copy)?;
    hermetic(&clone_copy)
        .args(["config", "remote.origin.url"])
        .arg(&remote_copy)
        .run()
        .map_err(|e| e.to_string())?;
    Ok(clone_copy)
}

fn notes_in(clone: &Path, refname: &str) -> Result<usize, String> {
    let repo = Repo::open(clone).map_err(|e| e.to_string())?;
    let notes = repo.notes(refname).map_err(|e| e.to_string())?;
    notes.list().map(|l| l.len()).map_err(|e| e.to_string())
}

/// The fixture, generated first if needed.
fn fixture() -> Result<Fixture, String> {
    let root = dir(&format!("sync-v{VERSION}"));
    let fixture = Fixture {
        remote: root.join("remote.git"),
        clone: root.join("clone"),
        annotated: root.join("clone-annotated"),
    };
    if root.join(".complete").exists() {
        return Ok(fixture);
    }
    if root.exists() {
        std::fs::remove_dir_all(&root).map_err(|e| format!("{}: {e}", root.display()))?;
    }
    std::fs::create_dir_all(&fixture.remote).map_err(|e| e.to_string())?;
    eprintln!("generating {} ({NOTES} annotated commits)…", root.display());
    let git = |dir: &Path, args: &[&str]| -> Result<String, String> {
        hermetic(dir)
            .args(args)
            .run_text()
            .map_err(|e| e.to_string())
    };
    git(
        &fixture.remote,
        &["init", "--quiet", "--bare", "--initial-branch=main"],
    )?;
    // The commits, through fast-import, their ids read back from its marks.
    let mut stream = String::new();
    for i in 1..=NOTES {
        let when = 1_700_000_000 + i64::try_from(i).unwrap_or(0) * 60;
        let _ = write!(
            stream,
            "commit refs/heads/main\nmark :{i}\nauthor Bench <bench@example.com> {when} +0000\ncommitter Bench <bench@example.com> {when} +0000\ndata 9\nchange {:02}\n",
            i % 100
        );
        let content = format!("version {i}\n");
        let _ = write!(
            stream,
            "M 100644 inline counter.txt\ndata {}\n{content}\n",
            content.len()
        );
    }
    let marks = root.join("marks");
    hermetic(&fixture.remote)
        .args(["fast-import", "--quiet"])
        .arg(format!("--export-marks={}", marks.display()))
        .stdin(stream)
        .run()
        .map_err(|e| e.to_string())?;
    let marks = std::fs::read_to_string(&marks).map_err(|e| e.to_string())?;
    let mut commits: Vec<(usize, String)> = marks
        .lines()
        .filter_map(|l| {
            let (mark, id) = l.split_once(' ')?;
            Some((mark.trim_start_matches(':').parse().ok()?, id.to_owned()))
        })
        .collect();
    commits.sort();
    let commits: Vec<String> = commits.into_iter().map(|(_, id)| id).collect();
    // One notes commit with a note on every commit.
    let mut notes = String::new();
    let _ = write!(
        notes,
        "commit refs/notes/ultragit\ncommitter Bench <bench@example.com> 1800000000 +0000\ndata 5\nnotes\n"
    );
    for (i, commit) in commits.iter().enumerate() {
        let text = annotation(commit, i, "remote");
        let _ = write!(notes, "N inline {commit}\ndata {}\n{text}\n", text.len());
    }
    hermetic(&fixture.remote)
        .args(["fast-import", "--quiet"])
        .stdin(notes)
        .run()
        .map_err(|e| e.to_string())?;
    git(&fixture.remote, &["gc", "--quiet"])?;
    // The clone: commits only (a clone does not fetch notes).
    let parent = root.clone();
    git(
        &parent,
        &[
            "clone",
            "--quiet",
            "--no-local",
            fixture.remote.to_str().ok_or("non-UTF-8 fixture path")?,
            "clone",
        ],
    )?;
    scratch_copy(&fixture.clone, &fixture.annotated)?;
    let repo = Repo::open(&fixture.annotated).map_err(|e| e.to_string())?;
    let local: Vec<(ObjectId, String)> = commits
        .iter()
        .take(LOCAL_NOTES)
        .enumerate()
        .map(|(i, commit)| {
            Ok((
                commit.parse().map_err(|_| format!("bad id {commit}"))?,
                annotation(commit, i, "local"),
            ))
        })
        .collect::<Result<_, String>>()?;
    repo.notes("ultragit")
        .and_then(|n| n.write_many(&local, |_, _, _| Resolution::Theirs))
        .map_err(|e| e.to_string())?;
    std::fs::write(root.join(".complete"), "").map_err(|e| e.to_string())?;
    Ok(fixture)
}

/// A small valid note: one region, its intent naming who wrote it.
fn annotation(commit: &str, i: usize, side: &str) -> String {
    let mut a = Annotation::new(
        commit,
        "2024-01-01T00:00:00Z",
        format!("Change {i}."),
        ContextLevel::Inferred,
    );
    a.regions.push(RegionAnnotation::new(
        "counter.txt",
        AstAnchor::new("config", "version"),
        LineRange::new(1, 1),
        format!("Records version {i} ({side})."),
    ));
    a.to_json()
}
