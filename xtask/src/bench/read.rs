//! `cargo xtask bench read`: `ultragit read` against `git blame --porcelain` on
//! the read fixtures — in-process and as the binary, cold and warm blame cache —
//! the cost of `dependencies_on_this`, the git processes one read starts, and
//! reads after 1 and 20 new commits whose blame is carried forward from the
//! cache a read at the older HEAD left (with their git processes); reads
//! after others' commits — 3,000 of them, merged topics — and in a fresh
//! clone ([`super::pulled`]); then `history` on a merge-shaped history
//! ([`super::history`]).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use gitctx::Repo;
use ultragit_read::{Format, GitReadPipeline, ReadConfig, ReadPipeline, ReadQuery, render};

use super::blame::git_blame;
use super::{
    Case, build_ultragit, fmt, git_version, measure, measure_pair, report, row, succeed, verdict,
};
use crate::fixtures;

/// The hidden `bench --read-once DIR FILE [ANCHOR]`: one read through the library,
/// in a process of its own, so the read benchmark can count the git processes the
/// library starts even before the `ultragit` binary has a `read` command.
pub(super) const READ_ONCE: &str = "--read-once";

pub(super) fn read_once(args: &[String]) -> Result<(), String> {
    let (dir, file, anchor) = match args {
        [dir, file] => (dir, file, None),
        [dir, file, anchor] => (dir, file, Some(anchor)),
        _ => {
            return Err(format!(
                "usage: cargo xtask bench {READ_ONCE} DIR FILE [ANCHOR]"
            ));
        }
    };
    let pipeline = GitReadPipeline::open(dir).map_err(|e| e.to_string())?;
    let mut query = ReadQuery::file(file.as_str());
    if let Some(anchor) = anchor {
        query = query.with_anchor(anchor.as_str());
    }
    let output = pipeline.execute(&query).map_err(|e| e.to_string())?;
    render(&output, Format::Markdown, false);
    Ok(())
}

const RATIO_TARGET: f64 = 1.2;
const ANCHOR_TARGET_MS: f64 = 500.0;
const DEPS_TARGET_MS: f64 = 50.0;
const DEPS_SCAN_LIMIT: u32 = 500;

/// `ultragit read` against `git blame --porcelain` over the same lines, on a
/// generated ~8,000-line file whose ~1,700 changes are all annotated: with
/// the blame and outline caches emptied before each run (cold, the first
/// read of the file) and with them filled (warm, a later read of the same
/// lines).
pub(super) fn read() -> Result<(), String> {
    let fixture = fixtures::read()?;
    let small = fixtures::read_small()?;
    let repo = Repo::open(&fixture.repo).map_err(|e| e.to_string())?;
    let git_version = git_version(&repo)?;
    describe_fixture("read fixture", &fixture);
    describe_fixture("small read fixture", &small);
    println!("{}", git_version.trim());
    let (start, end) = anchor_range(&repo, &fixture)?;
    println!(
        "anchor: {} (lines {start}-{end} at HEAD; changed by {} commits, the first one included)",
        fixture.anchor, fixture.anchor_commits
    );
    let binary = build_ultragit();
    let pipeline = GitReadPipeline::open(&fixture.repo).map_err(|e| e.to_string())?;
    let anchor_args = [fixture.file, fixture.anchor.as_str()];
    let whole_args = [fixture.file];
    let queries = [
        (
            ReadQuery::file(fixture.file).with_anchor(fixture.anchor.as_str()),
            Some((start, end)),
            &anchor_args[..],
            10,
        ),
        (ReadQuery::file(fixture.file), None, &whole_args[..], 5),
    ];

    // 1 and 2: the anchor query and the whole file. "cold": the blame and
    // outline caches emptied before each run (the first read of the file);
    // "warm": the caches left as the previous run filled them (a later read
    // of the same lines).
    let caches = ReadCaches::of(&repo);
    let clear = || caches.clear();
    for (query, lines, args, runs) in &queries {
        clear()?;
        let output = pipeline.execute(query).map_err(|e| e.to_string())?;
        let mut rows = vec![measure(git_blame(&repo, fixture.file, *lines, *runs))?];
        let mut labels = Vec::new();
        for warm in [false, true] {
            let temperature = if warm { "warm" } else { "cold" };
            rows.push(measure(Case {
                name: format!("ultragit read, in-process, {temperature} cache"),
                runs: *runs,
                unit: "bytes",
                f: Box::new(|| {
                    if !warm {
                        clear()?;
                    }
                    let output = pipeline.execute(query).map_err(|e| e.to_string())?;
                    Ok(render(&output, Format::Markdown, false).len())
                }),
            })?);
            labels.push(format!("in-process {temperature}"));
            if let Ok(exe) = &binary {
                let mut case = binary_case(exe, &fixture.repo, args, *runs);
                case.name = format!("ultragit read (binary), {temperature} cache");
                let mut inner = case.f;
                case.f = Box::new(move || {
                    if !warm {
                        clear()?;
                    }
                    inner()
                });
                rows.push(measure(case)?);
                labels.push(format!("binary {temperature}"));
            }
        }
        report(
            &format!("read: `ultragit read {}`", args.join(" ")),
            &rows,
            0,
        );
        if let Err(reason) = &binary {
            println!("  {:<46} {reason}", "ultragit read (binary)");
        }
        describe_output(&output, query.anchor.as_deref())?;
        let base = rows[0].median.as_secs_f64();
        let mut verdicts = Vec::new();
        for (row, label) in rows[1..].iter().zip(&labels) {
            let ratio = row.median.as_secs_f64() / base;
            verdicts.push(format!(
                "{label} {ratio:.2}x ({})",
                verdict(ratio <= RATIO_TARGET)
            ));
        }
        let mut target = format!(
            "  target: within {RATIO_TARGET:.1}x of git blame: {}",
            verdicts.join(", ")
        );
        if query.anchor.is_some() {
            let times: Vec<String> = rows[1..]
                .iter()
                .zip(&labels)
                .map(|(row, label)| {
                    let ms = row.median.as_secs_f64() * 1000.0;
                    format!(
                        "{label} {} ({})",
                        fmt(row.median),
                        verdict(ms < ANCHOR_TARGET_MS)
                    )
                })
                .collect();
            target.push_str(&format!(
                "; under {ANCHOR_TARGET_MS:.0} ms: {}",
                times.join(", ")
            ));
        }
        println!("{target}");
    }
    clear()?;

    // 3: the dependency scan, as the difference of interleaved pairs of runs with
    // and without it (blame dominates each run; pairing cancels its drift). Once on
    // the anchor query, once on a file with a short history, whose cheap blame
    // leaves the scan's cost visible.
    let limited = |limit: u32| -> Result<GitReadPipeline, String> {
        let repo = Repo::open(&fixture.repo).map_err(|e| e.to_string())?;
        let config = ReadConfig {
            deps_scan_limit: Some(limit),
            ..ReadConfig::default()
        };
        // Without the blame cache, as the scan was first measured.
        Ok(GitReadPipeline::with_config(repo, config).with_blame_cache(None))
    };
    let without = limited(0)?;
    let with = limited(DEPS_SCAN_LIMIT)?;
    let scanned = DEPS_SCAN_LIMIT.min(fixture.notes);
    let cheap = ReadQuery::file(fixture.other_file());
    for (query, runs) in [(&queries[0].0, 15), (&cheap, 30)] {
        let dependencies = with
            .execute(query)
            .map_err(|e| e.to_string())?
            .dependencies_on_this
            .len();
        let run = |pipeline: &GitReadPipeline| -> Result<usize, String> {
            let output = pipeline.execute(query).map_err(|e| e.to_string())?;
            Ok(render(&output, Format::Markdown, false).len())
        };
        let (rows, extra) = measure_pair(
            [
                "deps_scan_limit = 0",
                &format!("deps_scan_limit = {DEPS_SCAN_LIMIT}"),
            ],
            runs,
            || run(&without),
            || run(&with),
        )?;
        let subject = match &query.anchor {
            Some(anchor) => format!("{} {anchor}", query.files[0]),
            None => query.files[0].clone(),
        };
        report(
            &format!("read: dependencies_on_this, in-process `ultragit read {subject}`"),
            &rows,
            0,
        );
        println!(
            "  dependencies_on_this over the {scanned} most recent annotated commits: \
             {:+.1} ms (median of paired differences; {dependencies} entries found); \
             target under {DEPS_TARGET_MS:.0} ms: {}",
            extra * 1000.0,
            verdict(extra * 1000.0 < DEPS_TARGET_MS)
        );
    }

    // 4: processes per read.
    processes(&fixture, &small, binary.as_deref().ok())?;

    // 5: reads after new commits, their blame carried from the cache warmed
    // at the older HEAD.
    match &binary {
        Ok(exe) => carried(&fixture, exe, (start, end))?,
        Err(reason) => println!("\nread after new commits: {reason}"),
    }

    // 6: reads after others' commits (a pull, a checkout weeks ahead) and
    // in a fresh clone, on a merge-shaped history.
    super::pulled::generated()?;

    // 7: `history` of a unit on a merge-shaped history.
    super::history::history_bench()
}

const CARRIED_TARGET_MS: f64 = 150.0;
const CARRIED_RUNS: usize = 9;
const CARRIED_MAX_PROCESSES: usize = 2;

/// `ultragit read FILE ANCHOR` (the binary) after 1 and after 20 new commits
/// that change the file away from the anchor (a line inserted at its top, a
/// line appended), each run starting from the blame and outline caches as a
/// read at the older HEAD left them; against `git blame -L` over the anchor at the new HEAD.
/// The commits are made in a detached worktree of the fixture, removed at the
/// end. Also the git processes one such read starts (through the shim), and
/// whether its output equals a read without the cache.
fn carried(fixture: &fixtures::ReadFixture, exe: &Path, anchor: (u32, u32)) -> Result<(), String> {
    let worktree = Worktree::add(&fixture.repo)?;
    let dir = worktree.dir.as_path();
    let repo = Repo::open(dir).map_err(|e| e.to_string())?;
    let caches = ReadCaches::of(&repo);
    let args = [fixture.file, fixture.anchor.as_str()];
    let read = |command: &mut Command| -> Result<Vec<u8>, String> {
        let out = succeed(
            command.current_dir(dir).arg("read").args(args),
            &exe.display(),
            &format!("ultragit read {}", args.join(" ")),
        )?;
        Ok(out.stdout)
    };
    // The caches (blame and outline) as a read at the older HEAD leaves
    // them, kept aside.
    let saved = fixtures::dir("read-carry-cache");
    caches.clear()?;
    read(&mut Command::new(exe))?;
    remove_dir_if_present(&saved)?;
    caches.save(&saved)?;
    let restore = || caches.restore(&saved);

    println!(
        "\nread: `ultragit read {}` (binary) after new commits that change the file away from \
         the anchor, the blame and outline caches as a read at the older HEAD left them",
        args.join(" ")
    );
    let shim = GitShim::create()?;
    let mut verdicts = Vec::new();
    for commits in [1usize, 20] {
        let mut times = Vec::with_capacity(CARRIED_RUNS);
        let mut output = Vec::new();
        for run in 0..=CARRIED_RUNS {
            worktree.reset()?;
            restore()?;
            worktree.commit_elsewhere(fixture.file, commits, run)?;
            let started = Instant::now();
            let out = read(&mut Command::new(exe))?;
            let elapsed = started.elapsed();
            // The first run checks the answer and is not timed.
            if run == 0 {
                caches.clear()?;
                let cold = read(&mut Command::new(exe))?;
                println!(
                    "  after {commits:>2}: output equal to a read without the cache: {}",
                    if out == cold { "yes" } else { "NO" }
                );
                if out != cold {
                    return Err(format!(
                        "a carried read after {commits} commits differs from a cold one"
                    ));
                }
                output = out;
                continue;
            }
            if out.len() != output.len() {
                return Err("ultragit read: output changed between runs".to_owned());
            }
            times.push(elapsed);
        }
        let blame = git_blame(
            &repo,
            fixture.file,
            Some(shifted(anchor, commits)),
            CARRIED_RUNS,
        );
        let rows = [
            measure(blame)?,
            row(
                &format!("ultragit read (binary), {commits} new commit(s)"),
                times,
                output.len(),
                "bytes",
            ),
        ];
        report(
            &format!("read after {commits} new commit(s), blame carried forward"),
            &rows,
            0,
        );
        let ms = rows[1].median.as_secs_f64() * 1000.0;

        // The processes of one carried read, through the shim (whose `git` is
        // another program, so the cache is warmed through it too).
        worktree.reset()?;
        caches.clear()?;
        shim.run({
            let mut c = Command::new(exe);
            c.current_dir(dir).arg("read").args(args);
            c
        })?;
        worktree.commit_elsewhere(fixture.file, commits, CARRIED_RUNS + 1)?;
        let logged = shim.run({
            let mut c = Command::new(exe);
            c.current_dir(dir).arg("read").args(args);
            c
        })?;
        // Sorted by what they are for: blame (the blame of unknown lines;
        // `git diff-tree`, which carrying ran before it diffed in-process) is
        // what the target bounds; gitctx also asks `git --version` once per
        // program run, before its first git process (to choose how it keeps
        // attributes out).
        let subcommand = |line: &String| line.split(' ').next().unwrap_or("").to_owned();
        let for_blame = logged
            .iter()
            .filter(|l| matches!(subcommand(l).as_str(), "blame" | "diff-tree"))
            .count();
        let version = logged
            .iter()
            .filter(|l| subcommand(l) == "--version")
            .count();
        let other = logged.len() - for_blame - version;
        println!(
            "  git processes of one carried read: {} in all ({}): {for_blame} for blame (git blame, \
             git diff-tree) — target at most {CARRIED_MAX_PROCESSES}: {}; {version} `git --version` \
             (gitctx asks it once per program run); {other} other",
            logged.len(),
            logged
                .iter()
                .map(|l| l.split(' ').take(2).collect::<Vec<_>>().join(" "))
                .collect::<Vec<_>>()
                .join("; "),
            verdict(for_blame <= CARRIED_MAX_PROCESSES)
        );
        verdicts.push(format!(
            "{commits} commit(s) {} ({})",
            fmt(rows[1].median),
            verdict(ms <= CARRIED_TARGET_MS)
        ));
    }
    println!(
        "  target: carried reads within {CARRIED_TARGET_MS:.0} ms (binary, median): {}",
        verdicts.join(", ")
    );
    remove_dir_if_present(&saved)?;
    drop(worktree);
    Ok(())
}

/// The anchor's lines after `commits` changes of [`Worktree::commit_elsewhere`]
/// (one line inserted at the top by every even-numbered one).
fn shifted((start, end): (u32, u32), commits: usize) -> (u32, u32) {
    let inserted = u32::try_from(commits.div_ceil(2)).unwrap_or(0);
    (start + inserted, end + inserted)
}

/// A detached worktree of the fixture at its HEAD, removed when dropped.
struct Worktree {
    fixture: PathBuf,
    dir: PathBuf,
    base: String,
}

impl Worktree {
    fn add(fixture: &Path) -> Result<Worktree, String> {
        let dir = fixtures::dir("read-carry-worktree");
        let git = |args: &[&str]| -> Result<String, String> {
            let out = succeed(
                Command::new("git").current_dir(fixture).args(args),
                &"git",
                &format!("git {}", args.join(" ")),
            )?;
            Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
        };
        if dir.exists() {
            let _ = git(&["worktree", "remove", "--force", &dir.to_string_lossy()]);
            remove_dir_if_present(&dir)?;
            git(&["worktree", "prune"])?;
        }
        let base = git(&["rev-parse", "HEAD"])?;
        git(&[
            "worktree",
            "add",
            "--quiet",
            "--detach",
            &dir.to_string_lossy(),
            &base,
        ])?;
        Ok(Worktree {
            fixture: fixture.to_path_buf(),
            dir,
            base,
        })
    }

    fn git(&self, args: &[&str]) -> Result<(), String> {
        succeed(
            Command::new("git")
                .current_dir(&self.dir)
                .args([
                    "-c",
                    "user.name=bench",
                    "-c",
                    "user.email=bench@example.com",
                ])
                .args(["-c", "core.hooksPath=/dev/null"])
                .args(args),
            &"git",
            &format!("git {}", args.join(" ")),
        )
        .map(|_| ())
    }

    /// Back to the fixture's HEAD.
    fn reset(&self) -> Result<(), String> {
        self.git(&["checkout", "--quiet", "--force", "--detach", &self.base])
    }

    /// `commits` commits changing `file` away from the functions: even ones
    /// insert a comment line at its top, odd ones append one. `run` makes
    /// each run's commits new objects.
    fn commit_elsewhere(&self, file: &str, commits: usize, run: usize) -> Result<(), String> {
        let path = self.dir.join(file);
        for k in 0..commits {
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let line = format!("// carried: run {run}, commit {k}\n");
            let text = if k % 2 == 0 {
                format!("{line}{text}")
            } else {
                format!("{text}{line}")
            };
            std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
            self.git(&[
                "commit",
                "--quiet",
                "--no-verify",
                "-am",
                &format!("carried {run} {k}"),
            ])?;
        }
        Ok(())
    }
}

impl Drop for Worktree {
    fn drop(&mut self) {
        let _ = Command::new("git")
            .current_dir(&self.fixture)
            .args(["worktree", "remove", "--force"])
            .arg(&self.dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// Copies the files below `from` to `to` (created).
fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    let io = |p: &Path, e: std::io::Error| format!("{}: {e}", p.display());
    std::fs::create_dir_all(to).map_err(|e| io(to, e))?;
    for entry in std::fs::read_dir(from).map_err(|e| io(from, e))? {
        let entry = entry.map_err(|e| io(from, e))?;
        let target = to.join(entry.file_name());
        let kind = entry.file_type().map_err(|e| io(&entry.path(), e))?;
        if kind.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target).map_err(|e| io(&target, e))?;
        }
    }
    Ok(())
}

fn describe_fixture(label: &str, fixture: &fixtures::ReadFixture) {
    println!(
        "{label}: {} ({}: {} lines, {} functions; {} commits, {} of them change the file, \
         {} notes)",
        fixture.repo.display(),
        fixture.file,
        fixture.lines,
        fixture.functions,
        fixture.total_commits,
        fixture.file_commits,
        fixture.notes
    );
}

/// The anchor's lines at HEAD, from the outline the read pipeline uses.
fn anchor_range(repo: &Repo, fixture: &fixtures::ReadFixture) -> Result<(u32, u32), String> {
    let bytes = repo
        .file_at("HEAD", fixture.file)
        .map_err(|e| e.to_string())?;
    let units = outline::outline(fixture.file, &String::from_utf8_lossy(&bytes))
        .map_err(|e| e.to_string())?;
    let unit = units
        .iter()
        .find(|u| u.qualified_name == fixture.anchor)
        .ok_or_else(|| format!("{} has no unit {}", fixture.file, fixture.anchor))?;
    Ok((unit.lines.start, unit.lines.end))
}

/// What a read returned, so a broken fixture or pipeline shows; a read that finds
/// no annotation at all is an error, not a figure.
fn describe_output(output: &ultragit_read::ReadOutput, anchor: Option<&str>) -> Result<(), String> {
    let stats = &output.stats;
    if stats.annotations_found == 0 {
        return Err(format!(
            "the read found no annotation in {} commits: the fixture's notes were not read",
            stats.commits_examined
        ));
    }
    let others = match anchor {
        Some(anchor) => {
            let n = output
                .regions
                .iter()
                .filter(|r| r.region.ast_anchor.name != anchor)
                .count();
            format!(" ({n} of other functions)")
        }
        None => String::new(),
    };
    println!(
        "  returned {} regions{others}; {} commits examined, {} annotations found, {} related \
         followed, {} dependencies_on_this, {} cross-cutting",
        stats.regions_returned,
        stats.commits_examined,
        stats.annotations_found,
        stats.related_hops,
        output.dependencies_on_this.len(),
        output.cross_cutting.len()
    );
    for warning in output.warnings.iter().take(3) {
        println!("  warning: {warning}");
    }
    Ok(())
}

fn binary_case<'a>(exe: &'a Path, dir: &'a Path, args: &'a [&'a str], runs: usize) -> Case<'a> {
    Case {
        name: "ultragit read (binary)".to_owned(),
        runs,
        unit: "bytes",
        f: Box::new(move || {
            let mut read = Command::new(exe);
            read.current_dir(dir).arg("read").args(args);
            let out = succeed(
                read.stdin(Stdio::null()),
                &exe.display(),
                &format!("ultragit read {}", args.join(" ")),
            )?;
            Ok(out.stdout.len())
        }),
    }
}

/// The git processes one read starts, on the full fixture and on the small one:
/// the design wants them equal (the count must not grow with history). The
/// binary is counted when it has `read`; the library always, through a helper
/// process (`bench --read-once`).
fn processes(
    full: &fixtures::ReadFixture,
    small: &fixtures::ReadFixture,
    binary: Option<&Path>,
) -> Result<(), String> {
    let shim = GitShim::create()?;
    let xtask = std::env::current_exe().map_err(|e| format!("where is xtask? {e}"))?;
    println!(
        "\nread: git processes per read ({} notes vs {} notes; a `git` shim first on PATH logs them; \
         both fixtures queried for {})",
        full.notes, small.notes, full.anchor
    );
    println!(
        "  {:<46} {:>6} {:>6}  verdict (target: does not grow with history)",
        "read", "full", "small"
    );
    let queries: [&[&str]; 2] = [&[full.file, full.anchor.as_str()], &[full.file]];
    for args in queries {
        // Each reader runs in the fixture: (name, program, arguments before the query).
        let mut readers: Vec<(String, &Path, &[&str])> = Vec::new();
        if let Some(exe) = binary {
            readers.push((
                format!("ultragit read {} (binary)", args.join(" ")),
                exe,
                &["read"],
            ));
        }
        readers.push((
            format!("library, {} (helper process)", args.join(" ")),
            &xtask,
            &["bench", READ_ONCE, "."],
        ));
        for (name, program, before) in readers {
            let command = |dir: &Path| {
                let mut cmd = Command::new(program);
                cmd.current_dir(dir).args(before).args(args);
                cmd
            };
            clear_read_caches(&full.repo)?;
            clear_read_caches(&small.repo)?;
            let on_full = shim.run(command(&full.repo))?;
            let on_small = shim.run(command(&small.repo))?;
            let warm = shim.run(command(&full.repo))?.len();
            let equal = on_full.len() == on_small.len();
            let mut commands: Vec<&str> = on_full
                .iter()
                .map(|line| line.split(' ').next().unwrap_or(""))
                .collect();
            commands.sort_unstable();
            commands.dedup();
            println!(
                "  {name:<46} {:>6} {:>6}  {} ({}) — git {}; again with the cache filled: {warm}",
                on_full.len(),
                on_small.len(),
                if equal { "equal" } else { "NOT equal" },
                verdict(equal),
                commands.join(", ")
            );
        }
    }
    if binary.is_none() {
        println!(
            "  {:<46} skipped: the ultragit binary has no read command yet",
            "ultragit read (binary)"
        );
    }
    Ok(())
}

/// Empties the default blame and outline caches of the repository at `dir`.
fn clear_read_caches(dir: &Path) -> Result<(), String> {
    let repo = Repo::open(dir).map_err(|e| e.to_string())?;
    ReadCaches::of(&repo).clear()
}

/// The caches a read fills (blame and outline; not the deps index, which
/// the read's notes keep up to date and the deps benchmark measures): what
/// a cold read starts without, and what a carried read starts from.
pub(super) struct ReadCaches {
    blame: PathBuf,
    outline: PathBuf,
}

impl ReadCaches {
    pub(super) fn of(repo: &Repo) -> ReadCaches {
        ReadCaches {
            blame: GitReadPipeline::default_blame_cache(repo)
                .dir()
                .to_path_buf(),
            outline: GitReadPipeline::default_outline_cache(repo)
                .dir()
                .to_path_buf(),
        }
    }

    pub(super) fn clear(&self) -> Result<(), String> {
        remove_dir_if_present(&self.blame)?;
        remove_dir_if_present(&self.outline)
    }

    /// Copies both caches below `to`.
    pub(super) fn save(&self, to: &Path) -> Result<(), String> {
        copy_tree(&self.blame, &to.join("blame"))?;
        copy_tree(&self.outline, &to.join("outline"))
    }

    /// Puts back what [`ReadCaches::save`] copied below `from`.
    pub(super) fn restore(&self, from: &Path) -> Result<(), String> {
        self.clear()?;
        copy_tree(&from.join("blame"), &self.blame)?;
        copy_tree(&from.join("outline"), &self.outline)
    }
}

fn remove_dir_if_present(dir: &Path) -> Result<(), String> {
    match std::fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("{}: {e}", dir.display())),
    }
}

/// A directory with a `git` script that logs its arguments and runs the real git.
pub(super) struct GitShim {
    log: PathBuf,
    /// `PATH` with the shim first.
    path: std::ffi::OsString,
}

impl GitShim {
    pub(super) fn create() -> Result<GitShim, String> {
        // Resolved before PATH changes, so the shim cannot find itself.
        let found = Command::new("sh")
            .args(["-c", "command -v git"])
            .output()
            .map_err(|e| format!("could not run sh: {e}"))?;
        let real = String::from_utf8_lossy(&found.stdout).trim().to_owned();
        if !found.status.success() || !real.starts_with('/') {
            return Err(format!("could not find git on PATH (got {real:?})"));
        }
        let root = fixtures::dir("git-shim");
        let io = |e: std::io::Error| format!("{}: {e}", root.display());
        if root.exists() {
            std::fs::remove_dir_all(&root).map_err(io)?;
        }
        let bin = root.join("bin");
        std::fs::create_dir_all(&bin).map_err(io)?;
        let log = root.join("git.log");
        let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
        let script = format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> {}\nexec {} \"$@\"\n",
            quote(&log.to_string_lossy()),
            quote(&real)
        );
        let shim = bin.join("git");
        std::fs::write(&shim, script).map_err(io)?;
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).map_err(io)?;
        let inherited = std::env::var_os("PATH").unwrap_or_default();
        let path =
            std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&inherited)))
                .map_err(|e| format!("could not build PATH: {e}"))?;
        Ok(GitShim { log, path })
    }

    /// Runs `command` with the shim first on PATH; returns the git command lines
    /// it started.
    pub(super) fn run(&self, mut command: Command) -> Result<Vec<String>, String> {
        std::fs::write(&self.log, "").map_err(|e| format!("{}: {e}", self.log.display()))?;
        command
            .env("PATH", &self.path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let shown = format!("{command:?}");
        succeed(&mut command, &shown, &shown)?;
        let log = std::fs::read_to_string(&self.log)
            .map_err(|e| format!("{}: {e}", self.log.display()))?;
        Ok(log.lines().map(str::to_owned).collect())
    }
}
