//! `cargo xtask bench pulled [--repo PATH --file F --anchor A --back N]`
//! (also a section of `bench read`): `ultragit read` after others' commits —
//! a pull, a checkout of a branch weeks ahead — each row next to `git blame
//! --porcelain -L` of the same lines at the same commit, measured in the
//! same run in interleaved rounds (the order rotating), medians reported.
//!
//! The history is the generated merge-shaped fixture ([`fixtures::pulled`]:
//! an old HEAD, then 3,000 commits of topics merged with `--no-ff`, a few
//! percent of them changing one big file, long-lived topics forked before
//! the old HEAD and merged after it), or with `--repo PATH` any clone: the
//! new HEAD is its HEAD, the old one `HEAD~N` (`--back N`, first-parent
//! steps), the file `--file F` and the function read `--anchor A` (git/git:
//! `--file diff.c --anchor builtin_diff --back 838`, 3,245 commits of which
//! 53 touch `diff.c`). The repository at PATH is never modified: everything
//! runs in `git clone --no-local` copies in a temporary directory, removed
//! at the end — one without a commit-graph (as a clone comes), and a copy
//! of it with one written as `ultragit init` would (`git commit-graph write
//! --reachable --changed-paths`, or `ultragit init` itself once its help
//! says it writes one). Every row runs the release `ultragit` binary, timed
//! from process start to exit.
//!
//! - After the pull (in the copy with the graph): `ultragit read F A` at the
//!   old HEAD fills the blame and outline caches, which are saved; then the
//!   new HEAD is checked out (hooks off), and each run starts from the saved
//!   caches. (a) "with the hook having run": `ultragit cache warm` (what the
//!   post-checkout and post-merge hooks run) before the timed read, target
//!   within [`HOOK_TARGET_MS`]; (b) "carried at read time": the read alone,
//!   target within [`CARRIED_TARGET_RATIO`] of a fresh `git blame -L` of the
//!   anchor. Before timing, each scenario's output is checked once against
//!   a read with the caches removed (the benchmark fails if they differ),
//!   and its `--verbose` `blame:` line is printed: whether it was carried,
//!   from where, over how many commits, and how many git blame processes ran.
//! - A fresh clone: plain `git blame --porcelain -L` of the anchor without
//!   the graph and with it; ultragit's own blame command line (options,
//!   environment and config as `gitctx` sets them) against the plain one,
//!   both ways; a cold read (caches removed before each run) against both
//!   plain blames (targets [`FRESH_NO_GRAPH_TARGET`] without the graph,
//!   [`FRESH_GRAPH_TARGET`] with it); and the whole-file cold read `ultragit
//!   read F` against a full `git blame --porcelain F` (target
//!   [`FRESH_GRAPH_TARGET`]), split into the blame alone (ultragit's command
//!   line) and the rest of the read (outline, notes).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use gitctx::{GitCommand, Repo};

use super::read::{GitShim, ReadCaches};
use super::{Measured, build_ultragit, fmt, report, row, succeed, verdict};
use crate::fixtures;

/// The flags, for the usage line.
pub(super) const USAGE: &str = "[--repo PATH --file F --anchor A --back N]";

const HOOK_TARGET_MS: f64 = 150.0;
const CARRIED_TARGET_RATIO: f64 = 0.5;
const FRESH_NO_GRAPH_TARGET: f64 = 0.7;
const FRESH_GRAPH_TARGET: f64 = 1.1;
/// Runs per row: a cold read of git/git's `diff.c` costs a second, so a
/// clone gets fewer than the generated fixture.
const FIXTURE_RUNS: usize = 7;
const REPO_RUNS: usize = 5;

/// `cargo xtask bench pulled [FLAGS]` (and `bench read FLAGS`): the generated
/// fixture without flags, the repository `--repo` names with them.
pub(super) fn pulled(args: &[String]) -> Result<(), String> {
    match Subject::parse(args)? {
        Some(subject) => run(&subject),
        None => generated(),
    }
}

/// The section on the generated fixture, as `bench read` runs it.
pub(super) fn generated() -> Result<(), String> {
    let fixture = fixtures::pulled()?;
    let about = format!(
        "generated: {} long-lived topics forked before the old HEAD and merged after it \
         ({} of them change {}), {} merges after it change {} on both sides, {} topic \
         commits merged after it change {}; {} notes",
        fixture.long_topics,
        fixture.long_topics_anchor,
        fixture.anchor,
        fixture.both_sides,
        fixture.file,
        fixture.anchor_commits,
        fixture.anchor,
        fixture.notes
    );
    let subject = Subject {
        source: fixture.repo.clone(),
        file: fixture.file.to_owned(),
        anchor: fixture.anchor.to_owned(),
        back: fixture.back,
        runs: FIXTURE_RUNS,
        about: Some(about),
    };
    let old = subject.rev_parse(&format!("HEAD~{}", subject.back))?;
    if old != fixture.old {
        return Err(format!(
            "the pulled fixture's HEAD~{} is {old}, its generator says {}",
            subject.back, fixture.old
        ));
    }
    run(&subject)
}

/// What is measured: a repository, never modified, and what to read in it.
struct Subject {
    source: PathBuf,
    file: String,
    anchor: String,
    /// First-parent steps from HEAD to the old HEAD.
    back: u32,
    runs: usize,
    /// What the generator knows of it.
    about: Option<String>,
}

impl Subject {
    /// `None` without arguments; every flag is required with the others.
    fn parse(args: &[String]) -> Result<Option<Subject>, String> {
        if args.is_empty() {
            return Ok(None);
        }
        let usage = || format!("usage: cargo xtask bench pulled {USAGE}");
        let (mut repo, mut file, mut anchor, mut back) = (None, None, None, None);
        let mut rest = args.iter();
        while let Some(flag) = rest.next() {
            let value = rest
                .next()
                .ok_or_else(|| format!("{flag} needs a value; {}", usage()))?;
            match flag.as_str() {
                "--repo" => repo = Some(PathBuf::from(value)),
                "--file" => file = Some(value.clone()),
                "--anchor" => anchor = Some(value.clone()),
                "--back" => {
                    let n = value
                        .parse::<u32>()
                        .ok()
                        .filter(|&n| n > 0)
                        .ok_or_else(|| format!("--back {value}: not a positive number"))?;
                    back = Some(n);
                }
                _ => return Err(format!("unknown flag {flag}; {}", usage())),
            }
        }
        match (repo, file, anchor, back) {
            (Some(source), Some(file), Some(anchor), Some(back)) => Ok(Some(Subject {
                source,
                file,
                anchor,
                back,
                runs: REPO_RUNS,
                about: None,
            })),
            _ => Err(format!(
                "--repo, --file, --anchor and --back go together; {}",
                usage()
            )),
        }
    }

    fn rev_parse(&self, rev: &str) -> Result<String, String> {
        git_text(
            &self.source,
            &["rev-parse", "--verify", &format!("{rev}^{{commit}}")],
        )
    }
}

/// The function's lines in `file` at `commit`, as `outline` (and so the
/// read) sees them.
fn anchor_lines(repo: &Path, commit: &str, file: &str, anchor: &str) -> Result<(u32, u32), String> {
    let repo = Repo::open(repo).map_err(|e| e.to_string())?;
    let bytes = repo.file_at(commit, file).map_err(|e| e.to_string())?;
    let units =
        outline::outline(file, &String::from_utf8_lossy(&bytes)).map_err(|e| e.to_string())?;
    units
        .iter()
        .find(|u| u.qualified_name == anchor)
        .map(|u| (u.lines.start, u.lines.end))
        .ok_or_else(|| format!("{file} at {} has no unit {anchor}", short(commit)))
}

fn run(subject: &Subject) -> Result<(), String> {
    // Everything is checked before anything is cloned.
    let new = subject.rev_parse("HEAD")?;
    let old = subject.rev_parse(&format!("HEAD~{}", subject.back))?;
    let (file, anchor) = (subject.file.as_str(), subject.anchor.as_str());
    let lines = anchor_lines(&subject.source, &new, file, anchor)?;
    let old_lines = anchor_lines(&subject.source, &old, file, anchor)?;
    println!(
        "\nread after others' commits: {} (HEAD {}; the old HEAD HEAD~{} = {})",
        subject.source.display(),
        short(&new),
        subject.back,
        short(&old)
    );
    let window = format!("{old}..{new}");
    let count = |extra: &[&str]| -> Result<String, String> {
        let mut args = vec!["rev-list", "--count"];
        args.extend_from_slice(extra);
        git_text(&subject.source, &args)
    };
    println!(
        "  between them: {} commits ({} merges, {} on the first-parent chain); \
         `git log OLD..NEW -- {file}` lists {}",
        count(&[window.as_str()])?,
        count(&["--merges", window.as_str()])?,
        count(&["--first-parent", window.as_str()])?,
        count(&[window.as_str(), "--", file])?,
    );
    println!(
        "  anchor {anchor}: lines {}-{} at HEAD ({} lines; {}-{} at the old HEAD); `git log \
         -L` of them lists {} commits between the two (merges not counted)",
        lines.0,
        lines.1,
        lines.1 - lines.0 + 1,
        old_lines.0,
        old_lines.1,
        anchor_log(&subject.source, &window, lines, file)?
    );
    if let Some(about) = &subject.about {
        println!("  {about}");
    }
    let exe = match build_ultragit() {
        Ok(exe) => exe,
        Err(reason) => {
            println!("  {reason}");
            return Ok(());
        }
    };
    let bench = Bench::prepare(subject, exe, new, old, lines)?;
    bench.after_pull()?;
    bench.fresh_clone()?;
    Ok(())
}

/// Commits `git log -L START,END:FILE` lists in `window` (merges not
/// counted, as `-L` shows them only when they changed the lines).
fn anchor_log(
    repo: &Path,
    window: &str,
    (start, end): (u32, u32),
    file: &str,
) -> Result<String, String> {
    let out = git_text(
        repo,
        &[
            "log",
            "--no-merges",
            "--format=%H",
            "--no-patch",
            &format!("-L{start},{end}:{file}"),
            window,
        ],
    )?;
    Ok(out.lines().filter(|l| l.len() == 40).count().to_string())
}

/// The clones a run measures in, and what it reads.
struct Bench<'a> {
    subject: &'a Subject,
    exe: PathBuf,
    /// Holds the clones and the saved caches; removed when dropped.
    scratch: tempfile::TempDir,
    /// A `git clone --no-local` of the subject: no commit-graph.
    plain: PathBuf,
    /// A copy of `plain` with a changed-path commit-graph.
    graphed: PathBuf,
    new: String,
    old: String,
    /// The anchor's lines at the new HEAD.
    lines: (u32, u32),
}

impl<'a> Bench<'a> {
    fn prepare(
        subject: &'a Subject,
        exe: PathBuf,
        new: String,
        old: String,
        lines: (u32, u32),
    ) -> Result<Bench<'a>, String> {
        let scratch = tempfile::Builder::new()
            .prefix("ultragit-bench-pulled-")
            .tempdir()
            .map_err(|e| format!("a temporary directory: {e}"))?;
        let plain = scratch.path().join("plain");
        let graphed = scratch.path().join("graphed");
        let started = Instant::now();
        let source = subject.source.to_string_lossy();
        git_text(
            scratch.path(),
            &[
                "clone",
                "--quiet",
                "--no-local",
                "--no-checkout",
                &source,
                "plain",
            ],
        )?;
        // A detached HEAD on no branch is not cloned: fetched by id.
        if git_text(&plain, &["cat-file", "-e", &format!("{new}^{{commit}}")]).is_err() {
            git_text(&plain, &["fetch", "--quiet", "origin", &new])?;
        }
        // Notes are not cloned by default; `ultragit sync` would fetch them.
        git_text(
            &plain,
            &["fetch", "--quiet", "origin", "+refs/notes/*:refs/notes/*"],
        )?;
        checkout(&plain, &new)?;
        let cloned = started.elapsed();
        if let Some(graph) = commit_graph(&plain) {
            return Err(format!(
                "the clone has a commit-graph ({}): the fresh-clone rows need one without",
                graph.display()
            ));
        }
        let copied = Command::new("cp")
            .arg("-a")
            .arg(&plain)
            .arg(&graphed)
            .status()
            .map_err(|e| format!("could not run cp: {e}"))?;
        if !copied.success() {
            return Err(format!(
                "cp -a {} {} failed",
                plain.display(),
                graphed.display()
            ));
        }
        let started = Instant::now();
        let how = write_graph(&exe, &graphed)?;
        let graph_time = started.elapsed();
        let graph = commit_graph(&graphed)
            .ok_or_else(|| format!("`{how}` wrote no commit-graph in {}", graphed.display()))?;
        println!(
            "  clones in {}: `git clone --no-local` ({}; no commit-graph: checked), and a copy \
             where `{how}` wrote {} ({})",
            scratch.path().display(),
            fmt(cloned),
            graph.strip_prefix(&graphed).unwrap_or(&graph).display(),
            fmt(graph_time)
        );
        Ok(Bench {
            subject,
            exe,
            scratch,
            plain,
            graphed,
            new,
            old,
            lines,
        })
    }

    fn file(&self) -> &str {
        &self.subject.file
    }

    fn anchor_args(&self) -> [&str; 2] {
        [self.file(), self.subject.anchor.as_str()]
    }

    /// (a) and (b): the read at the new HEAD from the caches a read at the
    /// old HEAD left, with the hook's warm-up first and without.
    fn after_pull(&self) -> Result<(), String> {
        let dir = self.graphed.as_path();
        let caches = caches_of(dir)?;
        let args = self.anchor_args();
        checkout(dir, &self.old)?;
        caches.clear()?;
        self.read(dir, &args, false)?;
        let saved = self.scratch.path().join("saved-caches");
        caches.save(&saved)?;
        checkout(dir, &self.new)?;
        caches.clear()?;
        let cold = self.read(dir, &args, true)?.stdout;
        let restore = || caches.restore(&saved);

        println!(
            "\nread after others' commits: `ultragit read {}` at HEAD, from the caches a read \
             at HEAD~{} left (in the clone with the commit-graph)",
            args.join(" "),
            self.subject.back
        );
        for hook in [true, false] {
            restore()?;
            let label = if hook {
                for line in self.warm(dir)?.lines() {
                    println!("  `ultragit cache warm`: {line}");
                }
                "(a) with the hook having run"
            } else {
                "(b) carried at read time"
            };
            let out = self.read(dir, &args, true)?;
            let equal = out.stdout == cold;
            println!(
                "  {label}: output equal to a read without the caches: {}; {}",
                if equal { "yes" } else { "NO" },
                blame_line(&out)
            );
            if !equal {
                return Err(format!(
                    "{label}: the read's output differs from one without the caches"
                ));
            }
        }

        let range = format!("{},{}", self.lines.0, self.lines.1);
        let mut warm_times = Vec::new();
        let (times, outputs) = {
            let mut reference = || timed(&mut plain_blame(dir, Some(&range), self.file()));
            let mut with_hook = || {
                restore()?;
                let started = Instant::now();
                self.warm(dir)?;
                warm_times.push(started.elapsed());
                timed(&mut self.read_command(dir, &args, false))
            };
            let mut carried = || {
                restore()?;
                timed(&mut self.read_command(dir, &args, false))
            };
            rounds(
                self.subject.runs,
                &mut [&mut reference, &mut with_hook, &mut carried],
            )?
        };
        // The warm-up round's warm-up is not a run.
        warm_times.remove(0);
        let rows = named_rows(
            [
                &format!("git blame --porcelain -L {range} (fresh)"),
                "(a) ultragit read, hook ran (binary)",
                "(b) ultragit read, carried at read (binary)",
            ],
            times,
            &outputs,
        );
        let mut all: Vec<Measured> = rows.into_iter().collect();
        all.push(row(
            "ultragit cache warm (the hook; not in (a))",
            warm_times,
            0,
            "",
        ));
        report(
            &format!(
                "read after others' commits: {} commits pulled, the caches from HEAD~{}",
                count_commits(dir, &self.old, &self.new)?,
                self.subject.back
            ),
            &all,
            0,
        );
        let base = all[0].median.as_secs_f64();
        let hook_ms = all[1].median.as_secs_f64() * 1000.0;
        let ratio = all[2].median.as_secs_f64() / base;
        println!(
            "  target: (a) within {HOOK_TARGET_MS:.0} ms: {} ({}); (b) within \
             {CARRIED_TARGET_RATIO:.1}x of a fresh git blame -L: {ratio:.3}x ({})",
            fmt(all[1].median),
            verdict(hook_ms <= HOOK_TARGET_MS),
            verdict(ratio <= CARRIED_TARGET_RATIO)
        );
        Ok(())
    }

    /// (c): a fresh clone, without the commit-graph and with it.
    fn fresh_clone(&self) -> Result<(), String> {
        let file = self.file();
        let args = self.anchor_args();
        let range = format!("{},{}", self.lines.0, self.lines.1);
        let (plain, graphed) = (self.plain.as_path(), self.graphed.as_path());
        let plain_caches = caches_of(plain)?;
        let graphed_caches = caches_of(graphed)?;
        for dir in [plain, graphed] {
            checkout(dir, &self.new)?;
        }
        let ours = ultragit_blame(graphed, Some(&range), &self.new, file);
        println!(
            "\nread in a fresh clone: ultragit's blame command line (gitctx's): {}",
            describe(&ours)
        );
        self.check_command_line(&args, &ours)?;

        let (times, outputs) = {
            let mut plain_l = || timed(&mut plain_blame(plain, Some(&range), file));
            let mut graphed_l = || timed(&mut plain_blame(graphed, Some(&range), file));
            let mut ours_plain =
                || timed(&mut ultragit_blame(plain, Some(&range), &self.new, file));
            let mut ours_graphed =
                || timed(&mut ultragit_blame(graphed, Some(&range), &self.new, file));
            let mut read_graphed = || {
                graphed_caches.clear()?;
                timed(&mut self.read_command(graphed, &args, false))
            };
            let mut read_plain = || {
                plain_caches.clear()?;
                timed(&mut self.read_command(plain, &args, false))
            };
            rounds(
                self.subject.runs,
                &mut [
                    &mut plain_l,
                    &mut graphed_l,
                    &mut ours_plain,
                    &mut ours_graphed,
                    &mut read_graphed,
                    &mut read_plain,
                ],
            )?
        };
        let rows = named_rows(
            [
                &format!("git blame --porcelain -L {range}, no graph"),
                &format!("git blame --porcelain -L {range}, graph"),
                "ultragit's blame command line, no graph",
                "ultragit's blame command line, graph",
                "ultragit read, cold, graph (binary)",
                "ultragit read, cold, no graph (binary)",
            ],
            times,
            &outputs,
        );
        report(
            &format!("read in a fresh clone: `ultragit read {}`", args.join(" ")),
            &rows,
            0,
        );
        let median = |i: usize| rows[i].median.as_secs_f64();
        let no_graph = median(4) / median(0);
        let graph = median(4) / median(1);
        println!(
            "  target: cold read with the graph within {FRESH_NO_GRAPH_TARGET:.1}x of plain git \
             blame -L without it: {no_graph:.3}x ({}); within {FRESH_GRAPH_TARGET:.1}x of plain \
             git blame -L with it: {graph:.3}x ({})",
            verdict(no_graph <= FRESH_NO_GRAPH_TARGET),
            verdict(graph <= FRESH_GRAPH_TARGET)
        );
        println!(
            "  ultragit's blame command line against plain git blame -L: {:.2}x without the \
             graph, {:.2}x with it",
            median(2) / median(0),
            median(3) / median(1)
        );

        // The whole file.
        let whole = [file];
        let (times, outputs) = {
            let mut full = || timed(&mut plain_blame(graphed, None, file));
            let mut blame = || timed(&mut ultragit_blame(graphed, None, &self.new, file));
            let mut read = || {
                graphed_caches.clear()?;
                timed(&mut self.read_command(graphed, &whole, false))
            };
            rounds(self.subject.runs, &mut [&mut full, &mut blame, &mut read])?
        };
        // Paired differences (the rounds run the cases back to back).
        let mut rest: Vec<f64> = times[2]
            .iter()
            .zip(&times[1])
            .map(|(read, blame)| read.as_secs_f64() - blame.as_secs_f64())
            .collect();
        rest.sort_by(f64::total_cmp);
        let rest = rest[rest.len() / 2];
        let rows = named_rows(
            [
                "git blame --porcelain (whole file), graph",
                "ultragit's blame command line, graph",
                "ultragit read, cold, graph (binary)",
            ],
            times,
            &outputs,
        );
        report(
            &format!("read in a fresh clone: `ultragit read {file}` (the whole file)"),
            &rows,
            0,
        );
        let ratio = rows[2].median.as_secs_f64() / rows[0].median.as_secs_f64();
        println!(
            "  split of the cold read: the blame alone {} (ultragit's command line), the rest \
             (outline, notes, rendering, the process) {:+.1} ms (median of paired differences)",
            fmt(rows[1].median),
            rest * 1000.0
        );
        println!(
            "  target: cold whole-file read within {FRESH_GRAPH_TARGET:.1}x of git blame \
             --porcelain with the graph: {ratio:.3}x ({})",
            verdict(ratio <= FRESH_GRAPH_TARGET)
        );
        Ok(())
    }

    /// Prints whether the cold read ran the blame command line measured as
    /// ultragit's (seen through a `git` shim first on `PATH`).
    fn check_command_line(&self, args: &[&str], ours: &Command) -> Result<(), String> {
        let dir = self.graphed.as_path();
        caches_of(dir)?.clear()?;
        let shim = GitShim::create()?;
        let mut read = Command::new(&self.exe);
        read.current_dir(dir).arg("read").args(args);
        let logged = shim.run(read)?;
        let blames: Vec<&String> = logged.iter().filter(|l| l.starts_with("blame ")).collect();
        let expected: Vec<String> = ours
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let expected = expected.join(" ");
        let same = blames.len() == 1 && *blames[0] == expected;
        println!(
            "  a cold read ran {} git blame process(es){}",
            blames.len(),
            if same {
                ": that command line".to_owned()
            } else {
                format!(
                    ", NOT the one measured: {}",
                    blames
                        .iter()
                        .map(|l| format!("`git {l}`"))
                        .collect::<Vec<_>>()
                        .join("; ")
                )
            }
        );
        Ok(())
    }

    /// `ultragit read ARGS` in `dir` (with `--verbose` when asked).
    fn read_command(&self, dir: &Path, args: &[&str], verbose: bool) -> Command {
        let mut command = Command::new(&self.exe);
        command.current_dir(dir).arg("read").args(args);
        if verbose {
            command.arg("--verbose");
        }
        command
    }

    fn read(&self, dir: &Path, args: &[&str], verbose: bool) -> Result<Output, String> {
        let mut command = self.read_command(dir, args, verbose);
        succeed(
            command.stdin(Stdio::null()),
            &self.exe.display(),
            &format!("ultragit read {}", args.join(" ")),
        )
    }

    /// `ultragit cache warm`, what the hooks run: what it said.
    fn warm(&self, dir: &Path) -> Result<String, String> {
        let out = succeed(
            Command::new(&self.exe)
                .current_dir(dir)
                .args(["cache", "warm"])
                .stdin(Stdio::null()),
            &self.exe.display(),
            &"ultragit cache warm",
        )?;
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }
}

fn caches_of(dir: &Path) -> Result<ReadCaches, String> {
    let repo = Repo::open(dir).map_err(|e| e.to_string())?;
    Ok(ReadCaches::of(&repo))
}

/// The first 12 digits of a commit id.
fn short(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}

/// The `blame:` line a `--verbose` read printed on stderr.
fn blame_line(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.find("blame: ").map(|at| &l[at..]))
        .collect();
    if lines.is_empty() {
        "no `blame:` line on stderr".to_owned()
    } else {
        lines.join("; ")
    }
}

/// The commit-graph git would read in `dir`, if any: a single file, or the
/// chain directory.
fn commit_graph(dir: &Path) -> Option<PathBuf> {
    let info = dir.join(".git/objects/info");
    [info.join("commit-graph"), info.join("commit-graphs")]
        .into_iter()
        .find(|p| p.exists())
}

/// Writes the commit-graph as `ultragit init` does: `ultragit init` itself
/// when its help says it writes one, else the command it is to run. Returns
/// what ran.
fn write_graph(exe: &Path, dir: &Path) -> Result<String, String> {
    let help = succeed(
        Command::new(exe).args(["init", "--help"]).current_dir(dir),
        &exe.display(),
        &"ultragit init --help",
    )?;
    if String::from_utf8_lossy(&help.stdout).contains("commit-graph") {
        succeed(
            Command::new(exe)
                .arg("init")
                .current_dir(dir)
                .stdin(Stdio::null()),
            &exe.display(),
            &"ultragit init",
        )?;
        return Ok("ultragit init".to_owned());
    }
    git_text(
        dir,
        &["commit-graph", "write", "--reachable", "--changed-paths"],
    )?;
    Ok("git commit-graph write --reachable --changed-paths".to_owned())
}

fn count_commits(dir: &Path, old: &str, new: &str) -> Result<String, String> {
    git_text(dir, &["rev-list", "--count", &format!("{old}..{new}")])
}

/// Checks out `commit` detached, with no hook (a post-checkout hook would
/// warm the caches the scenarios set up themselves).
fn checkout(dir: &Path, commit: &str) -> Result<(), String> {
    git_text(dir, &["checkout", "--quiet", "--force", "--detach", commit]).map(|_| ())
}

/// git as the user runs it (their config; hooks off), in `dir`: its stdout.
fn git_text(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = succeed(
        Command::new("git")
            .current_dir(dir)
            .args(["-c", "core.hooksPath=/dev/null"])
            .args(args)
            .stdin(Stdio::null()),
        &"git",
        &format!("git {}", args.join(" ")),
    )?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// Plain `git blame --porcelain [-L RANGE] HEAD -- FILE`, as typed.
fn plain_blame(dir: &Path, range: Option<&str>, file: &str) -> Command {
    let mut command = Command::new("git");
    command.current_dir(dir).args(["blame", "--porcelain"]);
    if let Some(range) = range {
        command.args(["-L", range]);
    }
    command.args(["HEAD", "--", file]);
    command
}

/// The blame `gitctx` runs for a read (see `gitctx::blame`): its options,
/// the commit by id, and the hardened environment and config
/// (`gitctx::command`).
fn ultragit_blame(dir: &Path, range: Option<&str>, commit: &str, file: &str) -> Command {
    let mut git = GitCommand::new(dir)
        .config("blame.ignoreRevsFile", "")
        .config("core.quotePath", "false")
        .args(["blame", "--porcelain", "--no-textconv"])
        .args(["--diff-algorithm=myers", "--indent-heuristic"]);
    if let Some(range) = range {
        git = git.arg("-L").arg(range);
    }
    git.args([commit, "--", file]).to_command()
}

/// A command line with the environment it sets: `VAR=value … git ARGS`.
fn describe(command: &Command) -> String {
    let mut env: Vec<String> = command
        .get_envs()
        .filter_map(|(k, v)| Some(format!("{}={}", k.to_string_lossy(), v?.to_string_lossy())))
        .collect();
    env.sort();
    let args: Vec<String> = command
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    format!("{} git {}", env.join(" "), args.join(" "))
}

/// One run of `command` to its end: the time from start to exit, and the
/// bytes it printed.
fn timed(command: &mut Command) -> Result<(Duration, usize), String> {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let out = command
        .output()
        .map_err(|e| format!("could not run {command:?}: {e}"))?;
    let elapsed = started.elapsed();
    if !out.status.success() {
        return Err(format!(
            "{command:?} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok((elapsed, out.stdout.len()))
}

/// One case of [`rounds`]: a run's time and the bytes it printed.
type Timed<'a> = dyn FnMut() -> Result<(Duration, usize), String> + 'a;

/// Runs every case once untimed (the page cache filled, the case checked),
/// then `runs` rounds of all of them, each round in an order rotated by one,
/// so drift in the machine's load hits every case alike. Each case does its
/// own untimed set-up and returns the time of what it measures and the bytes
/// it printed, which must not change between runs. Returns each case's
/// times and output.
fn rounds(
    runs: usize,
    cases: &mut [&mut Timed<'_>],
) -> Result<(Vec<Vec<Duration>>, Vec<usize>), String> {
    let mut outputs = Vec::with_capacity(cases.len());
    for case in cases.iter_mut() {
        outputs.push(case()?.1);
    }
    let mut times = vec![Vec::with_capacity(runs); cases.len()];
    for round in 0..runs {
        for k in 0..cases.len() {
            let i = (k + round) % cases.len();
            let (time, output) = cases[i]()?;
            if output != outputs[i] {
                return Err(format!(
                    "case {i}: output changed between runs ({output} bytes, then {})",
                    outputs[i]
                ));
            }
            times[i].push(time);
        }
    }
    Ok((times, outputs))
}

/// The rows of [`rounds`]' cases, named.
fn named_rows<const N: usize>(
    names: [&str; N],
    times: Vec<Vec<Duration>>,
    outputs: &[usize],
) -> [Measured; N] {
    let mut times = times.into_iter();
    std::array::from_fn(|i| {
        row(
            names[i],
            times.next().unwrap_or_default(),
            outputs[i],
            "bytes",
        )
    })
}
