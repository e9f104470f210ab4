//! `cargo xtask bench annotate`: our own time to annotate a commit, and the time
//! the `post-commit` hook holds up `git commit`.
//!
//! The model is `testkit`'s fake Chat Completions server on 127.0.0.1, which
//! answers at once from a script: one `get_diff` call, one turn with an
//! `emit_annotation` call per changed function, then the summary. What is left
//! of a run's time is ours (loopback HTTP and the fake's own JSON work included,
//! which only overstates it).
//!
//! 1. In-process, on a copy of the annotate fixture: `gather` + `triviality` +
//!    `annotate_commit` + `store`, each phase timed within the same runs; the
//!    notes ref is reset between runs (untimed), so every run annotates the same
//!    commit against the same history. `build_provider`, which the command does
//!    once, is timed on its own.
//! 2. The release binary, on another copy: `ultragit init`, the provider pointed
//!    at the fake through git config, then the installed `.git/hooks/post-commit`
//!    run directly (as git runs it after a commit) until it returns; and `git
//!    commit` of the same change with and without the hook, alternating. After
//!    each run with the hook, the detached annotation is awaited (its note must
//!    land) before the next run starts, so runs do not overlap.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gitctx::{GitCommand, ObjectId, Repo};
use llm::{ProviderConfig, ProviderKind};
use serde_json::json;
use testkit::{FAKE_MODEL, FakeLlm, Flavor, Reply, call};
use ultragit_annotate::{AnnotateConfig, NOTES_REF, annotate_commit, gather, store, triviality};

use super::{Case, build_ultragit, fmt, interleave, measure, report, row, succeed, verdict};
use crate::fixtures::{self, AnnotateFixture, scratch_copy};

const TOTAL_TARGET_MS: f64 = 100.0;
const HOOK_TARGET_MS: f64 = 50.0;
const RUNS: usize = 15;
/// The variable `ultragit.apiKeyEnv` names in the hook benchmark.
const KEY_ENV: &str = "ULTRAGIT_BENCH_API_KEY";
/// How long a detached annotation may take before the benchmark gives up.
const LAND_TIMEOUT: Duration = Duration::from_secs(60);
/// Left to a detached annotation after its note landed, to exit before the next
/// run.
const SETTLE: Duration = Duration::from_millis(100);

pub(super) fn annotate() -> Result<(), String> {
    let fixture = fixtures::annotate()?;
    println!(
        "annotate fixture: {} ({} Rust files of {} lines; {} commits before HEAD, {} of them \
         annotated; HEAD rewrites one function in each of {} files)",
        fixture.repo.display(),
        fixture.files,
        fixture.lines_per_file,
        fixture.history,
        fixture.notes,
        fixture.changed.len()
    );
    in_process(&fixture)?;
    hook(&fixture)
}

/// The fake model's turns for one annotation of HEAD.
fn script(fixture: &AnnotateFixture) -> Vec<Reply> {
    let emits = fixture
        .changed
        .iter()
        .enumerate()
        .map(|(i, unit)| {
            call(
                &format!("call_emit_{i}"),
                "emit_annotation",
                json!({
                    "file": unit.file,
                    "ast_anchor": {"type": "function", "name": unit.name, "signature": unit.signature},
                    "lines": {"start": unit.lines.0, "end": unit.lines.1},
                    "intent": format!("Rewrite {} with the shared mixing scheme.", unit.name),
                    "reasoning": "The old per-stage constants let nearby inputs collide.",
                    "constraints": [{
                        "text": format!("{} must depend only on `x`: callers memoise it.", unit.name),
                        "source": "inferred"
                    }],
                    "tags": ["performance"]
                }),
            )
        })
        .collect();
    vec![
        Reply::tool_calls(vec![call("call_diff", "get_diff", json!({}))]),
        Reply::tool_calls(emits),
        Reply::text("Rework one step of every stage to share the new mixing scheme."),
    ]
}

fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    fixtures::hermetic(dir)
        .args(args)
        .run_text()
        .map(|s| s.trim().to_owned())
        .map_err(|e| e.to_string())
}

/// Puts `refs/notes/ultragit` back where it was, forgetting the run's note.
fn reset_notes(dir: &Path, tip: &str) -> Result<(), String> {
    git(dir, &["update-ref", NOTES_REF, tip]).map(|_| ())
}

/// One in-process annotation, phase by phase.
struct Phases {
    gather: Duration,
    triviality: Duration,
    agent: Duration,
    store: Duration,
    total: Duration,
    recent: usize,
    regions: usize,
    note_bytes: usize,
    warnings: Vec<String>,
}

fn in_process(fixture: &AnnotateFixture) -> Result<(), String> {
    let dir = fixtures::dir("annotate-run");
    scratch_copy(&fixture.repo, &dir)?;
    let tip = git(&dir, &["rev-parse", NOTES_REF])?;
    let server = FakeLlm::start(Flavor::OpenAiChat, Vec::new());
    let mut provider_config = ProviderConfig::new(ProviderKind::OpenAiChat, FAKE_MODEL);
    provider_config.base_url = Some(server.base_url());
    let provider = llm::build_provider(provider_config.clone()).map_err(|e| e.to_string())?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("could not start a tokio runtime: {e}"))?;
    let config = AnnotateConfig::default();

    let one = |requests_before: usize| -> Result<(Phases, usize, usize), String> {
        for reply in script(fixture) {
            server.push(reply);
        }
        let start = Instant::now();
        let context = {
            let repo = Repo::discover(&dir).map_err(|e| e.to_string())?;
            gather(&repo, "HEAD", None, &config).map_err(|e| e.to_string())?
        };
        let gathered = Instant::now();
        if let Some(reason) = triviality(&context) {
            return Err(format!("the fixture's HEAD counts as trivial: {reason}"));
        }
        let checked = Instant::now();
        let annotated = runtime
            .block_on(annotate_commit(
                &context,
                provider.as_ref(),
                &config,
                &mut agent::NullSink,
            ))
            .map_err(|e| e.to_string())?;
        let agent_done = Instant::now();
        {
            let repo = Repo::discover(&dir).map_err(|e| e.to_string())?;
            store(&repo, &annotated.annotation).map_err(|e| e.to_string())?;
        }
        let stored = Instant::now();
        let requests = server.requests();
        let sent: usize = requests[requests_before..]
            .iter()
            .map(|r| r.body.len())
            .sum();
        if server.remaining() != 0 {
            return Err(format!(
                "the agent left {} of the fake's replies unused",
                server.remaining()
            ));
        }
        reset_notes(&dir, &tip)?;
        let phases = Phases {
            gather: gathered - start,
            triviality: checked - gathered,
            agent: agent_done - checked,
            store: stored - agent_done,
            total: stored - start,
            recent: context.recent_annotations.len(),
            regions: annotated.annotation.regions.len(),
            note_bytes: annotated.annotation.to_json().len(),
            warnings: annotated.warnings,
        };
        Ok((phases, requests.len() - requests_before, sent))
    };

    // One warm-up run fills the page cache and checks the case works at all.
    let (first, requests, sent) = one(0)?;
    let mut runs = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let before = server.requests().len();
        let (phases, n, _) = one(before)?;
        if n != requests || phases.regions != first.regions || phases.recent != first.recent {
            return Err("annotate: output changed between runs".to_owned());
        }
        runs.push(phases);
    }
    let times = |f: fn(&Phases) -> Duration| runs.iter().map(f).collect::<Vec<_>>();
    let mut rows = vec![
        row(
            "total: gather + triviality + agent + store",
            times(|p| p.total),
            first.regions,
            "regions",
        ),
        row(
            "gather (open, diff, outlines, recent notes)",
            times(|p| p.gather),
            first.recent,
            "recent notes",
        ),
        row("triviality", times(|p| p.triviality), 0, ""),
        row(
            "annotate_commit (agent loop over HTTP)",
            times(|p| p.agent),
            requests,
            "requests",
        ),
        row(
            "store (open, CAS note write)",
            times(|p| p.store),
            first.note_bytes,
            "bytes",
        ),
    ];
    rows.push(measure(Case {
        name: "build_provider (once per command)".to_owned(),
        runs: RUNS,
        unit: "provider",
        f: Box::new(|| {
            llm::build_provider(provider_config.clone())
                .map(|_| 1)
                .map_err(|e| e.to_string())
        }),
    })?);
    let changed = {
        let repo = Repo::discover(&dir).map_err(|e| e.to_string())?;
        gather(&repo, "HEAD", None, &config)
            .map_err(|e| e.to_string())?
            .changed_lines()
    };
    report(
        &format!(
            "annotate: in-process, HEAD ({} files, {changed} changed lines; the fake model on \
             127.0.0.1 answers at once)",
            fixture.changed.len()
        ),
        &rows,
        0,
    );
    println!(
        "  per run: {requests} HTTP requests to the fake (get_diff; {} emit_annotation calls in one \
         turn; the summary), {:.1} KiB of request bodies; {} regions stored",
        fixture.changed.len(),
        sent as f64 / 1024.0,
        first.regions
    );
    for warning in first.warnings.iter().take(3) {
        println!("  warning: {warning}");
    }
    let total = rows[0].median;
    println!(
        "  the model takes no time here, so the total is our own time (loopback HTTP and the \
         fake's JSON included); target under {TOTAL_TARGET_MS:.0} ms: {} ({})",
        fmt(total),
        verdict(total.as_secs_f64() * 1000.0 < TOTAL_TARGET_MS)
    );
    Ok(())
}

/// The environment every process of the hook benchmark runs with: no user or
/// system git config, a home of its own, the fake's key, no proxies.
fn hermetic(cmd: &mut Command, home: &Path) {
    cmd.env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env(KEY_ENV, "bench-key-not-a-secret")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for proxy in [
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ] {
        cmd.env_remove(proxy);
    }
}

/// The hook benchmark's repository, with `ultragit init` run and the provider
/// pointed at `server`.
struct HookRepo {
    dir: PathBuf,
    home: PathBuf,
    hook: PathBuf,
    notes_tip: String,
    failed_log: PathBuf,
}

impl HookRepo {
    fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(&self.dir);
        hermetic(&mut cmd, &self.home);
        cmd
    }

    fn git_commit(&self) -> Command {
        let mut cmd = GitCommand::new(&self.dir)
            .args([
                "commit",
                "--quiet",
                "--message",
                "Rework one step of every stage",
            ])
            .to_command();
        hermetic(&mut cmd, &self.home);
        cmd
    }

    fn head(&self) -> Result<String, String> {
        git(&self.dir, &["rev-parse", "HEAD"])
    }

    /// Waits for the note of `commit`; returns when it landed, counted from `since`.
    fn wait_for_note(&self, commit: &str, since: Instant) -> Result<Duration, String> {
        let id: ObjectId = commit
            .parse()
            .map_err(|_| format!("'{commit}' is not a commit id"))?;
        let failures = std::fs::read_to_string(&self.failed_log).unwrap_or_default();
        loop {
            let repo = Repo::open(&self.dir).map_err(|e| e.to_string())?;
            let note = repo
                .notes(NOTES_REF)
                .and_then(|notes| notes.read(id))
                .map_err(|e| e.to_string())?;
            if note.is_some() {
                return Ok(since.elapsed());
            }
            let now = std::fs::read_to_string(&self.failed_log).unwrap_or_default();
            if now.len() > failures.len() {
                return Err(format!(
                    "the detached annotation of {commit} failed: {}",
                    now[failures.len()..].trim()
                ));
            }
            if since.elapsed() > LAND_TIMEOUT {
                return Err(format!(
                    "the detached annotation of {commit} stored no note within {} s",
                    LAND_TIMEOUT.as_secs()
                ));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

fn skipped(reason: &str) {
    println!("\nannotate: post-commit hook (release ultragit)");
    println!("  {:<46} {reason}", ".git/hooks/post-commit");
    println!("  {:<46} {reason}", "git commit, with and without the hook");
}

fn hook(fixture: &AnnotateFixture) -> Result<(), String> {
    let exe = match build_ultragit() {
        Ok(exe) => exe,
        Err(reason) => {
            skipped(&reason);
            return Ok(());
        }
    };
    let root = fixtures::dir("annotate-hook");
    let dir = root.join("repo");
    let home = root.join("home");
    scratch_copy(&fixture.repo, &dir)?;
    std::fs::create_dir_all(&home).map_err(|e| format!("{}: {e}", home.display()))?;
    git(&dir, &["config", "user.name", "Bench"])?;
    git(&dir, &["config", "user.email", "bench@example.com"])?;
    let server = FakeLlm::start(Flavor::OpenAiChat, Vec::new());

    let mut init = Command::new(&exe);
    init.current_dir(&dir).arg("init");
    hermetic(&mut init, &home);
    succeed(
        init.stderr(Stdio::piped()),
        &exe.display(),
        &"ultragit init",
    )?;
    let repo = Repo::open(&dir).map_err(|e| e.to_string())?;
    let hook = repo
        .hooks_dir()
        .map_err(|e| e.to_string())?
        .join("post-commit");
    if !hook.exists() {
        return Err(format!("ultragit init installed no {}", hook.display()));
    }
    for (key, value) in [
        ("ultragit.provider", "openai-chat".to_owned()),
        ("ultragit.baseUrl", server.base_url()),
        ("ultragit.model", FAKE_MODEL.to_owned()),
        ("ultragit.apiKeyEnv", KEY_ENV.to_owned()),
    ] {
        git(&dir, &["config", key, &value])?;
    }
    let setup = HookRepo {
        notes_tip: git(&dir, &["rev-parse", NOTES_REF])?,
        failed_log: ultragit_annotate::author::state_dir(&repo.common_dir()).join("failed.log"),
        dir,
        home,
        hook,
    };
    drop(repo);

    // 1: the hook alone, run as git runs it after a commit.
    let script = script(fixture);
    let head = setup.head()?;
    let mut requests = Vec::new();
    let mut run_hook = || -> Result<(Duration, Duration), String> {
        let before = server.requests().len();
        for reply in script.clone() {
            server.push(reply);
        }
        let start = Instant::now();
        let status = setup
            .command(&setup.hook)
            .status()
            .map_err(|e| format!("could not run {}: {e}", setup.hook.display()))?;
        let returned = start.elapsed();
        if !status.success() {
            return Err(format!("the post-commit hook failed ({status})"));
        }
        let landed = setup.wait_for_note(&head, start)?;
        std::thread::sleep(SETTLE);
        requests.push(server.requests().len() - before);
        if server.remaining() != 0 {
            return Err(format!(
                "the detached annotation left {} of the fake's replies unused",
                server.remaining()
            ));
        }
        reset_notes(&setup.dir, &setup.notes_tip)?;
        Ok((returned, landed))
    };
    run_hook()?;
    let mut returned = Vec::new();
    let mut landed = Vec::new();
    for _ in 0..RUNS {
        let (r, l) = run_hook()?;
        returned.push(r);
        landed.push(l);
    }
    let per_run = requests.last().copied().unwrap_or(0);
    let rows = [
        row(".git/hooks/post-commit (until it returns)", returned, 0, ""),
        row(
            "  … until the detached note is stored",
            landed,
            per_run,
            "requests",
        ),
    ];
    report(
        &format!(
            "annotate: post-commit hook installed by `ultragit init` (release {}; provider \
             openai-chat → the fake on 127.0.0.1)",
            exe.display()
        ),
        &rows,
        0,
    );
    let hook_median = rows[0].median;
    println!(
        "  the annotation runs detached ({per_run} requests to the fake each time); target: the \
         hook returns under {HOOK_TARGET_MS:.0} ms: {} ({})",
        fmt(hook_median),
        verdict(hook_median.as_secs_f64() * 1000.0 < HOOK_TARGET_MS)
    );

    // 2: `git commit` of the same change with and without the hook.
    let base = git(&setup.dir, &["rev-parse", "HEAD~1"])?;
    git(&setup.dir, &["reset", "--quiet", "--soft", &base])?;
    let off = setup.hook.with_extension("bench-off");
    let commit = |with_hook: bool| -> Result<Duration, String> {
        if with_hook {
            for reply in script.clone() {
                server.push(reply);
            }
        } else {
            std::fs::rename(&setup.hook, &off).map_err(|e| format!("{}: {e}", off.display()))?;
        }
        let start = Instant::now();
        let status = setup
            .git_commit()
            .status()
            .map_err(|e| format!("could not run git commit: {e}"))?;
        let elapsed = start.elapsed();
        if !with_hook {
            std::fs::rename(&off, &setup.hook)
                .map_err(|e| format!("{}: {e}", setup.hook.display()))?;
        }
        if !status.success() {
            return Err(format!("git commit failed ({status})"));
        }
        if with_hook {
            setup.wait_for_note(&setup.head()?, start)?;
            std::thread::sleep(SETTLE);
            reset_notes(&setup.dir, &setup.notes_tip)?;
        }
        git(&setup.dir, &["reset", "--quiet", "--soft", &base])?;
        Ok(elapsed)
    };
    commit(false)?;
    commit(true)?;
    let (times, difference) = interleave(RUNS, || commit(false), || commit(true))?;
    let extra = difference * 1000.0;
    let [without, with] = times;
    let rows = [
        row("git commit (hook disabled)", without, 0, ""),
        row("git commit (ultragit post-commit hook)", with, 0, ""),
    ];
    report(
        &format!(
            "annotate: `git commit` of HEAD's change ({} files), alternating with and without the \
             hook",
            fixture.changed.len()
        ),
        &rows,
        0,
    );
    println!(
        "  the hook adds {extra:+.1} ms to git commit (median of paired differences); target \
         under {HOOK_TARGET_MS:.0} ms: {}",
        verdict(extra < HOOK_TARGET_MS)
    );
    Ok(())
}
