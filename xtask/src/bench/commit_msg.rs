//! `cargo xtask bench commit-msg`: git-agent's context preparation for a
//! 10,000-line staged change dominated by a lockfile, and the first request it
//! sends.
//!
//! The design's target: under 150 ms; every hand-written file visible to the
//! model in the first request; the initial prompt under 96 KiB; the lockfile
//! summarized as package version changes rather than hidden.
//!
//! 1. `commit_msg::prepare` in-process — open, status, staged diff, lockfile
//!    summaries, classification, fitting, guidance, prompt layers, tool registry —
//!    against `git diff --cached` and `git diff --cached --stat` as processes on
//!    the same repository; then phase by phase: each run times the whole of
//!    `prepare`, then `Repo::discover`, `context::prepare`, the task prompt and
//!    the tool registry in turn (what is left is guidance and the other layers),
//!    and again the biggest parts of `context::prepare` (status, the staged diff,
//!    the lockfile summary), each on a repository opened for it so none profits
//!    from another's caches.
//! 2. `commit_msg::generate` once against `testkit`'s fake Responses server on
//!    127.0.0.1, which answers at once with a valid message: the first request's
//!    body — its size, the hand-written files with diff text in it (`+++ b/<path>`
//!    in the decoded `input` texts), the lockfile's summary.
//!
//! Everything runs on the cached fixture itself: preparing and generating are
//! read-only toward the repository, and the index is compared byte for byte
//! before and after.

use std::path::Path;
use std::time::{Duration, Instant};

use git_agent_core::commit_msg::{self, Options, Request};
use git_agent_core::context::{self, Limits, Mode};
use git_agent_core::fit::Shown;
use git_agent_core::{prompt, tools};
use gitctx::{DiffOptions, DiffTarget, GitCommand, Repo};
use llm::{ProviderConfig, ProviderKind};
use lockfile_diff::{self as lockfile, LockKind};
use serde_json::Value;
use testkit::{FakeLlm, Flavor, Reply};

use super::{Case, fmt, measure, phase_rows, report, verdict};
use crate::fixtures::{self, CommitMsgFixture, LOCKFILE};

const PREPARE_TARGET_MS: f64 = 150.0;
const REQUEST_TARGET_KIB: f64 = 96.0;
const RUNS: usize = 15;
/// The fake model's answer: valid as it stands, so one request is all it takes.
const REPLY: &str = "chore: bump dependencies and update modules";

pub(super) fn commit_msg() -> Result<(), String> {
    let fixture = fixtures::commit_msg()?;
    let index_path = fixture.repo.join(".git").join("index");
    let index = std::fs::read(&index_path).map_err(|e| format!("{}: {e}", index_path.display()))?;
    let staged = staged_shape(&fixture)?;
    describe(&fixture, &staged)?;
    let patch_bytes = preparation(&fixture, &staged)?;
    let unchanged = || -> Result<(), String> {
        let now =
            std::fs::read(&index_path).map_err(|e| format!("{}: {e}", index_path.display()))?;
        if now != index {
            return Err(format!(
                "the benchmark changed {}: preparing or generating wrote to the index",
                index_path.display()
            ));
        }
        Ok(())
    };
    first_request(&fixture, patch_bytes, &unchanged)
}

fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    GitCommand::new(dir)
        .args(args)
        .run_text()
        .map_err(|e| e.to_string())
}

/// The staged change as `git diff --cached --numstat` sees it.
struct Staged {
    files: usize,
    lock: (u32, u32),
    handwritten: (u32, u32),
    /// Fewest and most changed lines of one hand-written file.
    per_file: (u32, u32),
}

impl Staged {
    fn lock_lines(&self) -> u32 {
        self.lock.0 + self.lock.1
    }

    fn handwritten_lines(&self) -> u32 {
        self.handwritten.0 + self.handwritten.1
    }

    fn total(&self) -> u32 {
        self.lock_lines() + self.handwritten_lines()
    }
}

/// Checks the fixture's state — the staged files and only they are changed, the
/// working tree matching the index — and counts its changed lines.
fn staged_shape(fixture: &CommitMsgFixture) -> Result<Staged, String> {
    let regenerate = format!("delete {} to regenerate it", fixture.repo.display());
    let mut expected: Vec<&str> = fixture.handwritten.iter().map(String::as_str).collect();
    expected.push(LOCKFILE);
    expected.sort_unstable();
    let status = git(
        &fixture.repo,
        &["status", "--porcelain=v1", "--untracked-files=all"],
    )?;
    let mut listed = Vec::new();
    for line in status.lines() {
        match line.strip_prefix("M  ") {
            Some(path) => listed.push(path),
            None => {
                return Err(format!(
                    "the commit-msg fixture is not as generated (`git status` says {line:?}); \
                     {regenerate}"
                ));
            }
        }
    }
    listed.sort_unstable();
    if listed != expected {
        return Err(format!(
            "the commit-msg fixture stages {} files, expected {} ({}); {regenerate}",
            listed.len(),
            expected.len(),
            expected.join(", ")
        ));
    }
    let numstat = git(&fixture.repo, &["diff", "--cached", "--numstat"])?;
    let mut staged = Staged {
        files: 0,
        lock: (0, 0),
        handwritten: (0, 0),
        per_file: (u32::MAX, 0),
    };
    for line in numstat.lines() {
        let mut fields = line.splitn(3, '\t');
        let (Some(added), Some(deleted), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        else {
            return Err(format!("git diff --numstat printed {line:?}"));
        };
        let parse = |n: &str| {
            n.parse::<u32>()
                .map_err(|_| format!("git diff --numstat printed {line:?}"))
        };
        let (added, deleted) = (parse(added)?, parse(deleted)?);
        staged.files += 1;
        if path == LOCKFILE {
            staged.lock = (added, deleted);
        } else {
            staged.handwritten.0 += added;
            staged.handwritten.1 += deleted;
            staged.per_file.0 = staged.per_file.0.min(added + deleted);
            staged.per_file.1 = staged.per_file.1.max(added + deleted);
        }
    }
    let share = f64::from(staged.lock_lines()) / f64::from(staged.total().max(1));
    if staged.files != expected.len()
        || !(9_000..=11_000).contains(&staged.total())
        || !(0.6..=0.8).contains(&share)
        || staged.per_file.0 == 0
    {
        return Err(format!(
            "the commit-msg fixture's staged change is not the intended shape ({} files, {} changed \
             lines, {:.0}% in {LOCKFILE}); {regenerate}",
            staged.files,
            staged.total(),
            share * 100.0
        ));
    }
    Ok(staged)
}

fn describe(fixture: &CommitMsgFixture, staged: &Staged) -> Result<(), String> {
    let repo = Repo::open(&fixture.repo).map_err(|e| e.to_string())?;
    let lock = repo
        .file_in_index(LOCKFILE)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("{LOCKFILE} is not in the fixture's index"))?;
    let git_version = git(&fixture.repo, &["--version"])?;
    let tracked = git(&fixture.repo, &["ls-files"])?.lines().count();
    println!(
        "commit-msg fixture: {} ({} commits, {} with Conventional-Commit subjects; {tracked} \
         tracked files; {})",
        fixture.repo.display(),
        fixture.history,
        fixture.conventional,
        git_version.trim()
    );
    println!(
        "  {LOCKFILE} (lockfileVersion 3): {} → {} entries in `packages`, {} lines ({:.0} KiB) in \
         the index",
        fixture.packages_before,
        fixture.packages_after,
        lock.iter().filter(|&&b| b == b'\n').count(),
        lock.len() as f64 / 1024.0
    );
    let share = |lines: u32| f64::from(lines) * 100.0 / f64::from(staged.total());
    println!(
        "  staged, not committed: {} files, {} changed lines",
        staged.files,
        staged.total()
    );
    println!(
        "    {LOCKFILE}: +{} -{} ({} lines, {:.1}%: {} entries bumped, {} added, {} removed)",
        staged.lock.0,
        staged.lock.1,
        staged.lock_lines(),
        share(staged.lock_lines()),
        fixture.bumped,
        fixture.added,
        fixture.removed
    );
    println!(
        "    {} hand-written files (src/<area>/<name>.ts): +{} -{} ({} lines, {:.1}%; {}–{} per \
         file)",
        fixture.handwritten.len(),
        staged.handwritten.0,
        staged.handwritten.1,
        staged.handwritten_lines(),
        share(staged.handwritten_lines()),
        staged.per_file.0,
        staged.per_file.1
    );
    Ok(())
}

/// The size of a request's prompt layers (instructions and messages), which
/// must not change between runs.
fn prompt_bytes(request: &Request) -> usize {
    request.task.system.len()
        + request
            .task
            .messages
            .iter()
            .map(|m| m.text().len())
            .sum::<usize>()
}

fn git_case<'a>(dir: &'a Path, args: &'a [&'a str]) -> Case<'a> {
    Case {
        name: format!("git {} (process)", args.join(" ")),
        runs: RUNS,
        unit: "bytes",
        f: Box::new(move || {
            GitCommand::new(dir)
                .args(args)
                .run()
                .map(|out| out.stdout.len())
                .map_err(|e| e.to_string())
        }),
    }
}

/// Measurement 1: the whole preparation against git, then phase by phase.
/// Returns the size of the full staged patch.
fn preparation(fixture: &CommitMsgFixture, staged: &Staged) -> Result<usize, String> {
    let root = fixture.repo.as_path();
    let options = Options::default();
    let mut rows = vec![
        measure(git_case(root, &["diff", "--cached"]))?,
        measure(git_case(root, &["diff", "--cached", "--stat"]))?,
    ];
    rows.push(measure(Case {
        name: "git_agent_core::commit_msg::prepare".to_owned(),
        runs: RUNS,
        unit: "prompt bytes",
        f: Box::new(|| {
            commit_msg::prepare(root, &options)
                .map(|request| prompt_bytes(&request))
                .map_err(|e| e.to_string())
        }),
    })?);
    report(
        &format!(
            "commit-msg: context preparation for the staged change ({} files, {} changed lines)",
            staged.files,
            staged.total()
        ),
        &rows,
        0,
    );
    let total = &rows[2];
    println!(
        "  target: prepare under {PREPARE_TARGET_MS:.0} ms: {} median, {} min ({})",
        fmt(total.median),
        fmt(total.min),
        verdict(total.median.as_secs_f64() * 1000.0 < PREPARE_TARGET_MS)
    );
    phases(root, &options)?;
    Ok(rows[0].output)
}

/// One run: the whole of prepare, then its phases, the "of which" ones each on
/// a repository opened for it.
struct Phases {
    total: Duration,
    discover: Duration,
    context: Duration,
    status: Duration,
    staged_diff: Duration,
    lockfile: Duration,
    task_prompt: Duration,
    registry: Duration,
    /// What each phase produced, which must not change between runs.
    outputs: [usize; 7],
}

impl Phases {
    /// The whole prepare minus its top-level phases, in seconds (negative when
    /// the machine's noise outweighs it).
    fn rest(&self) -> f64 {
        self.total.as_secs_f64()
            - (self.discover + self.context + self.task_prompt + self.registry).as_secs_f64()
    }
}

fn one_phase_run(root: &Path, options: &Options) -> Result<Phases, String> {
    let open = || Repo::discover(root).map_err(|e| e.to_string());
    let err = |e: git_agent_core::Error| e.to_string();
    let git_err = |e: gitctx::Error| e.to_string();

    let start = Instant::now();
    let request = commit_msg::prepare(root, options).map_err(err)?;
    let total = start.elapsed();

    let start = Instant::now();
    let repo = open()?;
    let discover = start.elapsed();

    let start = Instant::now();
    let prepared = context::prepare(&repo, Mode::Staged, &Limits::default()).map_err(err)?;
    let context = start.elapsed();

    let start = Instant::now();
    let text = prompt::task_prompt(&prepared, None);
    let task_prompt = start.elapsed();

    let start = Instant::now();
    let registry = tools::registry(repo.root(), Mode::Staged);
    let registry_time = start.elapsed();
    drop(repo);

    let repo = open()?;
    let start = Instant::now();
    let status = repo.status(true).map_err(git_err)?;
    let status_time = start.elapsed();

    let repo = open()?;
    let start = Instant::now();
    let diff = repo
        .diff(DiffTarget::Staged, &DiffOptions::default())
        .map_err(git_err)?;
    let staged_diff = start.elapsed();

    let repo = open()?;
    let start = Instant::now();
    let old = repo.file_at_opt("HEAD", LOCKFILE).map_err(git_err)?;
    let new = repo.file_in_index(LOCKFILE).map_err(git_err)?;
    let old = old.map(|b| String::from_utf8_lossy(&b).into_owned());
    let new = new.map(|b| String::from_utf8_lossy(&b).into_owned());
    let summary = lockfile::summarize(LOCKFILE, LockKind::Npm, old.as_deref(), new.as_deref());
    let lockfile = start.elapsed();

    Ok(Phases {
        total,
        discover,
        context,
        status: status_time,
        staged_diff,
        lockfile,
        task_prompt,
        registry: registry_time,
        outputs: [
            prompt_bytes(&request),
            prepared.changes.paths.len(),
            status.len(),
            diff.files.len(),
            summary.package_count(),
            text.len(),
            registry.names().len(),
        ],
    })
}

fn phases(root: &Path, options: &Options) -> Result<(), String> {
    // One warm-up run fills the page cache and checks the phases work at all.
    let first = one_phase_run(root, options)?;
    let mut runs = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let run = one_phase_run(root, options)?;
        if run.outputs != first.outputs {
            return Err("commit-msg phases: output changed between runs".to_owned());
        }
        runs.push(run);
    }
    let [
        prompt,
        paths,
        entries,
        files,
        packages,
        prompt_len,
        tool_count,
    ] = first.outputs;
    let rows = phase_rows(
        &runs,
        &[
            (
                "commit_msg::prepare (whole)",
                |p| p.total,
                prompt,
                "prompt bytes",
            ),
            ("Repo::discover", |p| p.discover, 0, ""),
            (
                "context::prepare (all the git work)",
                |p| p.context,
                paths,
                "paths",
            ),
            (
                "  of which Repo::status (untracked included)",
                |p| p.status,
                entries,
                "entries",
            ),
            (
                "  of which Repo::diff (staged, every file)",
                |p| p.staged_diff,
                files,
                "files",
            ),
            (
                "  of which lockfile::summarize (blobs read)",
                |p| p.lockfile,
                packages,
                "packages",
            ),
            (
                "prompt::task_prompt (renders the context)",
                |p| p.task_prompt,
                prompt_len,
                "bytes",
            ),
            ("tools::registry", |p| p.registry, tool_count, "tools"),
        ],
    );
    report(
        "commit-msg: prepare, phase by phase (each run: the whole, then its phases; \
         \"of which\" each on a repository of its own)",
        &rows,
        0,
    );
    let mut rest: Vec<f64> = runs.iter().map(Phases::rest).collect();
    rest.sort_by(f64::total_cmp);
    let rest = rest[rest.len() / 2] * 1000.0;
    println!(
        "  the rest (guidance::resolve, the other prompt layers, the rules): {rest:.1} ms (median \
         over runs of the whole minus its top-level phases{})",
        if rest < 0.0 {
            "; below zero: lost in the runs' noise"
        } else {
            ""
        }
    );
    Ok(())
}

/// Every string value in `value`, depth first.
fn strings<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

/// Measurement 2: the first request `generate` sends.
/// `index_unchanged` fails when the fixture's index is no longer what it was
/// before the benchmark started.
fn first_request(
    fixture: &CommitMsgFixture,
    patch_bytes: usize,
    index_unchanged: &dyn Fn() -> Result<(), String>,
) -> Result<(), String> {
    let request =
        commit_msg::prepare(&fixture.repo, &Options::default()).map_err(|e| e.to_string())?;
    let server = FakeLlm::start(Flavor::OpenAiResponses, vec![Reply::text(REPLY)]);
    let provider = llm::build_provider(ProviderConfig {
        base_url: Some(server.base_url()),
        ..ProviderConfig::new(ProviderKind::OpenAiResponses, "bench-model")
    })
    .map_err(|e| e.to_string())?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("could not start a tokio runtime: {e}"))?;
    let start = Instant::now();
    let generated = runtime
        .block_on(commit_msg::generate(
            &request,
            provider.as_ref(),
            &mut agent::NullSink,
        ))
        .map_err(|e| format!("generate against the fake model failed: {e}"))?;
    let took = start.elapsed();

    let requests = server.requests();
    if requests.len() != 1 || server.remaining() != 0 {
        return Err(format!(
            "generate sent {} requests to the fake (expected 1, answered at once)",
            requests.len()
        ));
    }
    let first = &requests[0];
    if first.path != Flavor::OpenAiResponses.path() {
        return Err(format!("the first request went to {}", first.path));
    }
    let body: Value = serde_json::from_slice(&first.body)
        .map_err(|e| format!("the first request's body is not JSON: {e}"))?;
    let input = body
        .get("input")
        .and_then(Value::as_array)
        .ok_or("the first request's body has no `input` array")?;
    let mut texts = Vec::new();
    input.iter().for_each(|item| strings(item, &mut texts));
    let text = texts.join("\n");
    if !text.contains("<prepared_context") {
        return Err("the first request's input holds no prepared context".to_owned());
    }
    let instructions = body
        .get("instructions")
        .and_then(Value::as_str)
        .map_or(0, str::len);
    let tools = body.get("tools").and_then(Value::as_array);
    let tools_bytes = tools.map_or(0, |t| serde_json::to_string(t).map_or(0, |json| json.len()));

    let visible = fixture
        .handwritten
        .iter()
        .filter(|path| text.contains(&format!("+++ b/{path}\n")))
        .count();
    let missing: Vec<&str> = fixture
        .handwritten
        .iter()
        .filter(|path| !text.contains(&format!("+++ b/{path}\n")))
        .map(String::as_str)
        .collect();
    let fitted = &request.prepared.changes.diff.shown;
    let count = |f: fn(&Shown) -> bool| fitted.iter().filter(|(_, s)| f(s)).count();
    let focus = request
        .prepared
        .changes
        .focus
        .as_deref()
        .map_or(0, |f| f.matches("--- continued: ").count());

    let header = format!("{LOCKFILE} (npm):");
    let summary: Vec<&str> = text
        .find(&header)
        .map(|at| {
            text[at..]
                .lines()
                .take_while(|l| !l.starts_with("</lockfiles>"))
                .collect()
        })
        .unwrap_or_default();
    let summarized = summary.iter().any(|l| l.contains('→'));
    let lock_diff_sent = text.contains(&format!("+++ b/{LOCKFILE}"));

    let kib = |bytes: usize| bytes as f64 / 1024.0;
    let body_kib = kib(first.body.len());
    println!(
        "\ncommit-msg: the first request (generate against the fake Responses server on \
         127.0.0.1, which answers at once; {} for the whole call)",
        fmt(took)
    );
    println!(
        "  request body: {body_kib:.1} KiB of JSON (instructions {:.1} KiB, input {:.1} KiB in {} \
         items, {} tools {:.1} KiB)",
        kib(instructions),
        kib(text.len()),
        input.len(),
        tools.map_or(0, Vec::len),
        kib(tools_bytes)
    );
    println!(
        "  the full staged patch (git diff --cached): {:.1} KiB, for contrast ({:.1}x the request)",
        kib(patch_bytes),
        kib(patch_bytes) / body_kib
    );
    println!(
        "  hand-written files with diff text (+++ b/<path>): {visible}/{} (the fitted diff shows \
         {} whole, {} cut, {} omitted; a focus diff continues {focus})",
        fixture.handwritten.len(),
        count(|s| *s == Shown::Whole),
        count(|s| matches!(s, Shown::Cut { .. })),
        count(|s| *s == Shown::Omitted)
    );
    if !missing.is_empty() {
        println!("    without diff text: {}", missing.join(", "));
    }
    println!(
        "  {LOCKFILE}: its diff text {} in the request; the summary:",
        if lock_diff_sent { "IS" } else { "is not" }
    );
    if summary.is_empty() {
        println!("    (none: no line starts with {header:?})");
    }
    for line in summary.iter().take(4) {
        let short: String = line.chars().take(110).collect();
        let more = if short.len() < line.len() { " …" } else { "" };
        println!("    {short}{more}");
    }
    println!(
        "  reply: {:?} after {} step(s), {} tool call(s)",
        generated.message, generated.steps, generated.tool_calls
    );
    index_unchanged()?;
    println!("  the fixture's index is unchanged, byte for byte, after every run above");
    println!(
        "  target: every hand-written file visible in the first request: {visible}/{} ({})",
        fixture.handwritten.len(),
        verdict(visible == fixture.handwritten.len())
    );
    println!(
        "  target: first request under {REQUEST_TARGET_KIB:.0} KiB: {body_kib:.1} KiB ({})",
        verdict(body_kib < REQUEST_TARGET_KIB)
    );
    println!(
        "  target: lockfile summarized as package version changes, not hidden: {} ({})",
        if summarized {
            "summary with old → new versions"
        } else {
            "no summary with versions"
        },
        verdict(summarized)
    );
    Ok(())
}
