//! `cargo xtask bench annotate`: the turns and tokens the writing agent
//! spends per commit, before issue 17 and now; our own time to annotate a
//! commit; and the time the `post-commit` hook holds up `git commit`.
//!
//! 0. Turns and tokens: nine commits of 14 to 243 changed lines (one to three
//!    rewritten functions in generated Rust files; each checked to be under 300
//!    changed lines) annotated against a scripted fake model that reads what it
//!    needs, then emits, deciding from the conversation alone: without the
//!    commit message it calls `get_commit_info`, without a diff `get_diff` (one
//!    file at a time when the diff was summarized for the budget), then the
//!    commit's lookups — six of the nine look something up first, as the
//!    transcripts did: an outline, the whole file, or a function's callers
//!    (`search_code`, or before that tool existed another file's outline) —
//!    then it emits every changed function with the summary in one reply, and
//!    answers with the summary if asked again. Input tokens are request bytes
//!    / 4, output tokens reply bytes / 4, turns the requests per commit.
//!    - *Before:* the release binary of `8431e9a^`, the parent of the commit
//!      that grounded the first turn (its first message was one sentence, it
//!      had no context window and no `search_code`, and a reply that emitted
//!      never ended the run), built once from that commit's source (`git
//!      archive` into `target/bench-baseline/`, `cargo build --release
//!      --locked` into this workspace's `target/`, the binary kept as
//!      `target/bench-baseline/ultragit-<id>`), run as `ultragit annotate` on
//!      each commit against the same fake. The same model plays the old flow:
//!      its first two turns go to `get_commit_info` and `get_diff`, as in the
//!      transcripts. Not measured (with the reason) when that commit is not in
//!      the clone's history or does not build.
//!    - *Now:* `annotate_commit` in-process with the default window of an
//!      unknown (local) model, 8,192 tokens, and with 128k.
//!
//!    Targets for today's code (issue 17): median turns <= 4, median input
//!    tokens <= 6,000. The token target is judged on the 128k series, the
//!    transcripts' setting: in an 8k window the spec's diff budget (half of
//!    what the prompt and tools leave, about 2,000 tokens) holds only the
//!    smaller diffs, and the model reads larger ones per file on a second
//!    turn; that series is reported beside it.
//!
//! The model is `testkit`'s fake Chat Completions server on 127.0.0.1, which
//! answers at once. In parts 1 and 2 it plays a script: one `get_diff` call,
//! one turn with an `emit_annotation` call per changed function, then the
//! summary. What is left of a run's time is ours (loopback HTTP and the fake's
//! own JSON work included, which only overstates it).
//!
//! 1. In-process, on a copy of the annotate fixture: `gather` + `triviality` +
//!    `annotate_commit` + `store`, each phase timed within the same runs; the
//!    notes ref is reset between runs (untimed), so every run annotates the same
//!    commit against the same history. `build_provider`, which the command does
//!    once, is timed on its own.
//! 2. The release binary, on another copy: `ultragit init`, the provider pointed
//!    at the fake through git config, then the installed `.git/hooks/post-commit`
//!    run directly (as git runs it after a commit) until it returns; the same
//!    hook against a copy without its blame-cache warm-up line (`ultragit cache
//!    warm --background … &`), alternating, for what that line adds (issue 19:
//!    at most 5 ms); and `git commit` of the same change with and without the
//!    hook, alternating. After each run with the hook, the detached annotation
//!    is awaited (its note must land) before the next run starts, so runs do not
//!    overlap.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gitctx::{GitCommand, ObjectId, Repo};
use llm::{ProviderConfig, ProviderKind};
use serde_json::json;
use testkit::{FAKE_MODEL, FakeLlm, Flavor, Reply, call};
use ultragit_annotate::{AnnotateConfig, annotate_commit, gather, triviality};
use ultragit_notes::{NOTES_REF, store};

use super::{
    Case, build_ultragit, fmt, interleave, measure, phase_rows, report, row, succeed, verdict,
};
use crate::fixtures::{self, AnnotateFixture, scratch_copy};

const TOTAL_TARGET_MS: f64 = 100.0;
const HOOK_TARGET_MS: f64 = 50.0;
/// Issue 19's bound on what the blame-cache warm-up line adds to the hook.
const WARM_TARGET_MS: f64 = 5.0;
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
    turns_and_tokens()?;
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
        // The emissions and the summary in one reply: accepted, they end the run.
        Reply::tool_calls(emits)
            .with_text("Rework one step of every stage to share the new mixing scheme."),
    ]
}

/// `annotate_commit` of `context` on `runtime`, without a trace.
fn annotate_once(
    runtime: &tokio::runtime::Runtime,
    context: &ultragit_annotate::AnnotationContext,
    provider: &dyn llm::LlmProvider,
    config: &AnnotateConfig,
) -> Result<ultragit_annotate::Annotated, String> {
    runtime
        .block_on(annotate_commit(
            context,
            provider,
            config,
            &mut agent::NullSink,
        ))
        .map_err(|e| e.to_string())
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
        if let Some(reason) = triviality(&context, &config) {
            return Err(format!("the fixture's HEAD counts as trivial: {reason}"));
        }
        let checked = Instant::now();
        let annotated = annotate_once(&runtime, &context, provider.as_ref(), &config)?;
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
    let mut rows = phase_rows(
        &runs,
        &[
            (
                "total: gather + triviality + agent + store",
                |p| p.total,
                first.regions,
                "regions",
            ),
            (
                "gather (open, diff, outlines, recent notes)",
                |p| p.gather,
                first.recent,
                "recent notes",
            ),
            ("triviality", |p| p.triviality, 0, ""),
            (
                "annotate_commit (agent loop over HTTP)",
                |p| p.agent,
                requests,
                "requests",
            ),
            (
                "store (open, CAS note write)",
                |p| p.store,
                first.note_bytes,
                "bytes",
            ),
        ],
    );
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
        failed_log: ultragit_notes::author::state_dir(&repo.common_dir()).join("failed.log"),
        dir,
        home,
        hook,
    };
    drop(repo);

    // 1: the hook alone, run as git runs it after a commit.
    let script = script(fixture);
    let head = setup.head()?;
    let requests = std::cell::Cell::new(0);
    let run_hook = |hook: &Path| -> Result<(Duration, Duration), String> {
        let before = server.requests().len();
        for reply in script.clone() {
            server.push(reply);
        }
        let start = Instant::now();
        let status = setup
            .command(hook)
            .status()
            .map_err(|e| format!("could not run {}: {e}", hook.display()))?;
        let returned = start.elapsed();
        if !status.success() {
            return Err(format!("the post-commit hook failed ({status})"));
        }
        let landed = setup.wait_for_note(&head, start)?;
        std::thread::sleep(SETTLE);
        requests.set(server.requests().len() - before);
        if server.remaining() != 0 {
            return Err(format!(
                "the detached annotation left {} of the fake's replies unused",
                server.remaining()
            ));
        }
        reset_notes(&setup.dir, &setup.notes_tip)?;
        Ok((returned, landed))
    };
    run_hook(&setup.hook)?;
    let mut returned = Vec::new();
    let mut landed = Vec::new();
    for _ in 0..RUNS {
        let (r, l) = run_hook(&setup.hook)?;
        returned.push(r);
        landed.push(l);
    }
    let per_run = requests.get();
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

    // 1b: what the blame-cache warm-up line adds to the hook: the installed
    // hook against a copy without that line, alternating.
    let installed = std::fs::read_to_string(&setup.hook)
        .map_err(|e| format!("{}: {e}", setup.hook.display()))?;
    let (warm, cold): (Vec<&str>, Vec<&str>) = installed
        .lines()
        .partition(|line| line.contains(" cache warm "));
    if warm.len() != 1 {
        return Err(format!(
            "the installed hook has {} `cache warm` lines, not one:\n{installed}",
            warm.len()
        ));
    }
    let no_warm = setup.hook.with_extension("bench-no-warm");
    std::fs::write(&no_warm, cold.join("\n") + "\n")
        .map_err(|e| format!("{}: {e}", no_warm.display()))?;
    std::fs::set_permissions(
        &no_warm,
        std::fs::metadata(&setup.hook)
            .map_err(|e| format!("{}: {e}", setup.hook.display()))?
            .permissions(),
    )
    .map_err(|e| format!("{}: {e}", no_warm.display()))?;
    let (times, difference) = interleave(
        RUNS,
        || run_hook(&no_warm).map(|(returned, _)| returned),
        || run_hook(&setup.hook).map(|(returned, _)| returned),
    )?;
    report_without_and_with(
        &format!(
            "annotate: the post-commit hook's blame-cache warm-up (`{}`), alternating with and \
             without it",
            warm[0].trim()
        ),
        [
            "post-commit without the cache warm line",
            "post-commit as installed (with it)",
        ],
        times,
    );
    let warm_ms = difference * 1000.0;
    println!(
        "  the warm-up line adds {warm_ms:+.1} ms to the hook (median of paired differences); \
         target (issue 19) at most {WARM_TARGET_MS:.0} ms: {}",
        verdict(warm_ms <= WARM_TARGET_MS)
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
    report_without_and_with(
        &format!(
            "annotate: `git commit` of HEAD's change ({} files), alternating with and without the \
             hook",
            fixture.changed.len()
        ),
        [
            "git commit (hook disabled)",
            "git commit (ultragit post-commit hook)",
        ],
        times,
    );
    println!(
        "  the hook adds {extra:+.1} ms to git commit (median of paired differences); target \
         under {HOOK_TARGET_MS:.0} ms: {}",
        verdict(extra < HOOK_TARGET_MS)
    );
    Ok(())
}

/// Reports the times [`interleave`] took of one thing without and with an
/// addition (`names` in that order), the one without as the reference.
fn report_without_and_with(title: &str, names: [&str; 2], times: [Vec<Duration>; 2]) {
    let [without, with] = times;
    let rows = [row(names[0], without, 0, ""), row(names[1], with, 0, "")];
    report(title, &rows, 0);
}

/// Changed lines of the commits `turns_and_tokens` annotates (each under 300,
/// checked on the commits themselves).
const CHANGE_SIZES: &[usize] = &[12, 20, 36, 52, 70, 96, 130, 180, 250];
/// Issue 17's bound: the targets hold for commits under this many changed lines.
const CHANGED_LINES_BOUND: u32 = 300;
/// The targets of issue 17 for commits under 300 changed lines.
const TURNS_TARGET: f64 = 4.0;
const INPUT_TOKENS_TARGET: f64 = 6_000.0;
/// The writing agent before issue 17's grounded first turn: the parent of the
/// commit that introduced it (8431e9a, "ground the first turn and keep every
/// request within the context window"). Its first message was one sentence,
/// it had no context window, no `search_code`, and no run ended on the reply
/// that emitted.
const BASELINE_REV: &str = "8431e9a^";

/// One function of a generated source file.
struct Func {
    name: String,
    body: Vec<String>,
}

/// A generated Rust file: its functions, each a doc line, a signature, a body
/// and a closing brace, with a blank line between them.
struct Source {
    path: String,
    funcs: Vec<Func>,
}

impl Source {
    /// The text, and each function's lines (1-based, inclusive).
    fn render(&self) -> (String, Vec<(u32, u32)>) {
        let mut text = String::from("//! Mixing stages of the tuned hash.\n\n");
        let mut line = 3;
        let mut spans = Vec::new();
        for func in &self.funcs {
            let start = line;
            text.push_str(&format!("/// Mixes `x` for the {} stage.\n", func.name));
            text.push_str(&format!("pub fn {}(x: u64) -> u64 {{\n", func.name));
            for body in &func.body {
                text.push_str(body);
                text.push('\n');
            }
            text.push_str("}\n\n");
            line += 3 + func.body.len() as u32;
            spans.push((start, line - 1));
            line += 1;
        }
        (text, spans)
    }
}

/// `n` lines of a function body, varied by `seed`.
fn body(n: usize, seed: usize) -> Vec<String> {
    let mut lines: Vec<String> = (0..n.saturating_sub(1))
        .map(|i| {
            let k = seed * 31 + i * 7;
            format!(
                "    let v{i} = x.wrapping_mul(0x{:x}).rotate_left({}) ^ 0x{:x};",
                0x9e37_79b9_u64.wrapping_mul(k as u64 + 1) & 0xffff_ffff,
                k % 63 + 1,
                (k as u64).wrapping_mul(0x85eb_ca6b) & 0xffff_ffff
            )
        })
        .collect();
    let sum: Vec<String> = (0..n.saturating_sub(1).min(4))
        .map(|i| format!("v{i}"))
        .collect();
    lines.push(if sum.is_empty() {
        "    x".to_owned()
    } else {
        format!("    {}", sum.join(" ^ "))
    });
    lines
}

/// What the scripted model looks up on a commit before it emits, beyond the
/// commit and its diff (the transcripts read outlines, whole files and, to
/// find a caller, more outlines).
#[derive(Debug, Clone)]
enum Lookup {
    /// `get_ast_outline` of a file.
    Outline(String),
    /// `get_file_content` of a file.
    File(String),
    /// Who calls a function: `search_code` for its name where the tool
    /// exists; before it did, the outline of another file (`fallback`).
    Callers { name: String, fallback: String },
}

/// The scripted model's plan for the commit being annotated: what it looks
/// up, then the units it emits (`emit_annotation` arguments).
#[derive(Debug, Clone, Default)]
struct Plan {
    lookups: Vec<Lookup>,
    emits: Vec<serde_json::Value>,
}

/// The plan of the commit being annotated, and the output tokens of every
/// reply the model gave, in the order of the server's requests.
#[derive(Default)]
struct ModelState {
    plan: Plan,
    output_tokens: Vec<u64>,
}

type Shared = std::sync::Arc<std::sync::Mutex<ModelState>>;

/// Estimated tokens of a reply: its text and its calls' names and arguments.
fn reply_tokens(text: &str, calls: &[(&str, &serde_json::Value)]) -> u64 {
    let bytes = text.len()
        + calls
            .iter()
            .map(|(name, args)| name.len() + args.to_string().len())
            .sum::<usize>();
    bytes.div_ceil(4) as u64
}

/// A model that reads what it needs, then emits (issue 17's transcripts),
/// deciding from the conversation alone, so it plays the old flow and the new
/// one alike:
/// 1. without the commit message in the conversation it calls
///    `get_commit_info`, alone (the old flow's first turn);
/// 2. without a diff, `get_diff` — or, when the diff was summarized for the
///    budget, `get_diff_for_file` for each file (the old flow's second turn);
/// 3. then each lookup of the commit's plan, one per turn;
/// 4. then every emission in one reply, with the summary as its text;
/// 5. asked again after that (the old flow sends the results back), the
///    summary.
fn scripted_model(state: Shared) -> impl Fn(&testkit::RecordedRequest) -> Reply + Send + Sync {
    move |request| {
        let body = request.json();
        // The conversation only: the tool definitions name every tool.
        let conversation = body["messages"].to_string();
        let offered = |tool: &str| {
            body["tools"]
                .as_array()
                .is_some_and(|tools| tools.iter().any(|t| t.to_string().contains(tool)))
        };
        let mut state = state.lock().unwrap_or_else(|p| p.into_inner());
        let summary = "Retune the mixing stages to the shared scheme.";
        let (text, calls): (&str, Vec<(String, &str, serde_json::Value)>) =
            if conversation.contains("\"call_emit_0\"") {
                (summary, Vec::new())
            } else if !conversation.contains("Message:") {
                ("", vec![("call_info".into(), "get_commit_info", json!({}))])
            } else if !conversation.contains("@@ -") {
                let summarized = conversation.contains("get_diff_for_file");
                let asked = conversation.contains("\"call_diff\"");
                if summarized && (asked || conversation.contains("diff budget")) {
                    let files: Vec<(String, &str, serde_json::Value)> = (0..3)
                        .map(|f| format!("src/stage{f}.rs"))
                        .filter(|path| conversation.contains(&format!("{path} (")))
                        .map(|path| {
                            (
                                format!("call_{path}"),
                                "get_diff_for_file",
                                json!({"path": path}),
                            )
                        })
                        .collect();
                    ("", files)
                } else {
                    ("", vec![("call_diff".into(), "get_diff", json!({}))])
                }
            } else if let Some((k, lookup)) = state
                .plan
                .lookups
                .iter()
                .enumerate()
                .find(|(k, _)| !conversation.contains(&format!("\"call_look_{k}\"")))
            {
                let id = format!("call_look_{k}");
                let call = match lookup {
                    Lookup::Outline(path) => (id, "get_ast_outline", json!({"path": path})),
                    Lookup::File(path) => (id, "get_file_content", json!({"path": path})),
                    Lookup::Callers { name, .. } if offered("search_code") => {
                        (id, "search_code", json!({"pattern": format!("{name}(")}))
                    }
                    Lookup::Callers { fallback, .. } => {
                        (id, "get_ast_outline", json!({"path": fallback}))
                    }
                };
                ("", vec![call])
            } else {
                let emits = state
                    .plan
                    .emits
                    .iter()
                    .enumerate()
                    .map(|(i, unit)| (format!("call_emit_{i}"), "emit_annotation", unit.clone()))
                    .collect();
                (summary, emits)
            };
        let tokens = reply_tokens(
            text,
            &calls
                .iter()
                .map(|(_, name, args)| (*name, args))
                .collect::<Vec<_>>(),
        );
        state.output_tokens.push(tokens);
        if calls.is_empty() {
            return Reply::text(text);
        }
        let reply = Reply::tool_calls(
            calls
                .into_iter()
                .map(|(id, name, args)| call(&id, name, args))
                .collect(),
        );
        if text.is_empty() {
            reply
        } else {
            reply.with_text(text)
        }
    }
}

/// One commit of the turns-and-tokens benchmark.
struct BenchCommit {
    sha: String,
    changed_lines: u32,
    plan: Plan,
}

/// The commits: nine rewrites of one to three functions in generated Rust
/// files, of 14 to 243 changed lines, each with its plan.
fn bench_commits(repo: &testkit::TestRepo) -> Result<Vec<BenchCommit>, String> {
    let mut sources: Vec<Source> = (0..3)
        .map(|f| Source {
            path: format!("src/stage{f}.rs"),
            funcs: (0..8)
                .map(|g| Func {
                    name: format!("mix_{f}_{g}"),
                    body: body(12 + (g * 5) % 17, f * 100 + g),
                })
                .collect(),
        })
        .collect();
    for source in &sources {
        repo.write(&source.path, source.render().0);
    }
    repo.commit_all("Add the mixing stages");
    let mut commits = Vec::new();
    for (c, &size) in CHANGE_SIZES.iter().enumerate() {
        // Rewrite one function per 60 changed lines (at most three), spread
        // over the files.
        let count = size.div_ceil(60).min(3);
        let mut touched = Vec::new();
        for k in 0..count {
            let file = (c + k) % sources.len();
            let func = (c * 3 + k) % sources[file].funcs.len();
            let old = sources[file].funcs[func].body.len();
            let new = (size / count).saturating_sub(old).max(2);
            sources[file].funcs[func].body = body(new, 1_000 + c * 10 + k);
            touched.push((file, func));
        }
        let mut emits = Vec::new();
        for (file, func) in &touched {
            let (text, spans) = sources[*file].render();
            repo.write(&sources[*file].path, text);
            let name = &sources[*file].funcs[*func].name;
            let (start, end) = spans[*func];
            emits.push(json!({
                "file": sources[*file].path,
                "ast_anchor": {"type": "function", "name": name, "signature": format!("pub fn {name}(x: u64) -> u64")},
                "lines": {"start": start, "end": end},
                "intent": format!("Retune {name} to the shared mixing scheme so nearby inputs stop colliding."),
                "constraints": [{"text": format!("{name} must stay a pure function of x: callers memoise it."), "source": "inferred"}],
                "tags": ["hashing"]
            }));
        }
        // Six of the nine commits look something up before emitting, as the
        // transcripts did: an outline, the whole file, who calls the function.
        let (first_file, first_func) = touched[0];
        let path = sources[first_file].path.clone();
        let other = sources[(first_file + 1) % sources.len()].path.clone();
        let callers = Lookup::Callers {
            name: sources[first_file].funcs[first_func].name.clone(),
            fallback: other,
        };
        let lookups = match c {
            1 | 8 => vec![Lookup::Outline(path)],
            2 | 7 => vec![callers],
            4 => vec![Lookup::Outline(path), callers],
            5 => vec![Lookup::File(path)],
            _ => Vec::new(),
        };
        let sha = repo.commit_all(&format!(
            "Retune {} mixing stages\n\nThe old per-stage constants let nearby inputs collide.",
            touched.len()
        ));
        commits.push(BenchCommit {
            sha,
            changed_lines: 0,
            plan: Plan { lookups, emits },
        });
    }
    let git = Repo::discover(repo.path()).map_err(|e| e.to_string())?;
    for commit in &mut commits {
        let context = gather(&git, &commit.sha, None, &AnnotateConfig::default())
            .map_err(|e| e.to_string())?;
        commit.changed_lines = context.changed_lines();
        if commit.changed_lines >= CHANGED_LINES_BOUND {
            return Err(format!(
                "bench commit {} has {} changed lines, not under {CHANGED_LINES_BOUND}",
                &commit.sha[..12],
                commit.changed_lines
            ));
        }
    }
    Ok(commits)
}

/// What one series measured, per commit.
struct Series {
    label: String,
    turns: Vec<f64>,
    input: Vec<f64>,
    output: Vec<f64>,
    /// Whether the targets apply (the series of today's code).
    judged: bool,
    /// Why the input-token target does not apply to this series of today's
    /// code, if it does not (the turns target always does).
    tokens_unjudged: Option<&'static str>,
}

impl Series {
    /// A series without commits yet.
    fn new(label: String, judged: bool) -> Series {
        Series {
            label,
            turns: Vec::new(),
            input: Vec::new(),
            output: Vec::new(),
            judged,
            tokens_unjudged: None,
        }
    }

    /// Adds one commit: a turn per request, input tokens as the requests'
    /// bytes / 4, and the output tokens of the replies.
    fn record(&mut self, requests: &[testkit::RecordedRequest], output: &[u64]) {
        self.turns.push(requests.len() as f64);
        self.input.push(
            requests
                .iter()
                .map(|r| r.body.len().div_ceil(4))
                .sum::<usize>() as f64,
        );
        self.output.push(output.iter().sum::<u64>() as f64);
    }
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[sorted.len() / 2]
}

/// Median turns and input and output tokens per commit under 300 changed
/// lines, against the scripted model (input tokens: request bytes / 4, what the
/// model reads; output tokens: its replies' bytes / 4): before issue 17 (the
/// release binary of [`BASELINE_REV`]) and now (in-process, with a local
/// model's default window and with 128k).
fn turns_and_tokens() -> Result<(), String> {
    let repo = testkit::TestRepo::new();
    let commits = bench_commits(&repo)?;
    let server = FakeLlm::start(Flavor::OpenAiChat, Vec::new());
    let state: Shared = Default::default();
    server.respond_with(scripted_model(state.clone()));
    // Each commit's requests and the output tokens of their replies.
    let take = |before: usize| -> (Vec<testkit::RecordedRequest>, Vec<u64>) {
        let requests = server.requests()[before..].to_vec();
        let state = state.lock().unwrap_or_else(|p| p.into_inner());
        let output = state.output_tokens[before..].to_vec();
        (requests, output)
    };
    let set_plan = |plan: &Plan| {
        state.lock().unwrap_or_else(|p| p.into_inner()).plan = plan.clone();
    };
    let mut series = Vec::new();
    match baseline_binary() {
        Ok((exe, sha)) => {
            let mut before = Series::new(
                format!("before: {BASELINE_REV} ({}, release binary)", &sha[..9]),
                false,
            );
            for commit in &commits {
                set_plan(&commit.plan);
                let first = server.requests().len();
                let mut cmd = Command::new(&exe);
                cmd.args([
                    "annotate",
                    "--commit",
                    &commit.sha,
                    "--provider",
                    "openai-chat",
                ])
                .arg(format!("--base-url={}", server.base_url()))
                .args(["--model", FAKE_MODEL, "--api-key-env", "none"])
                .current_dir(repo.path());
                testkit::isolate(&mut cmd);
                let out = succeed(&mut cmd, &exe.display(), &"the baseline's annotate")?;
                let stdout = String::from_utf8_lossy(&out.stdout);
                if !stdout.starts_with("annotated") {
                    return Err(format!("the baseline did not annotate: {stdout}"));
                }
                // Every commit is annotated against the same history.
                repo.git(&["update-ref", "-d", NOTES_REF]);
                let (requests, output) = take(first);
                before.record(&requests, &output);
            }
            series.push(before);
        }
        Err(reason) => {
            println!("\nannotate: the baseline ({BASELINE_REV}) is not measured: {reason}")
        }
    }
    let provider = {
        let mut config = ProviderConfig::new(ProviderKind::OpenAiChat, FAKE_MODEL);
        config.base_url = Some(server.base_url());
        llm::build_provider(config).map_err(|e| e.to_string())?
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("could not start a tokio runtime: {e}"))?;
    // The token target is the transcripts' (a hosted model with a large
    // window). An 8k window is reported too, not judged on tokens: the spec's
    // diff budget there (half of what the prompt and tools leave, about 2,000
    // tokens) is smaller than the diffs of the larger commits, which the model
    // then reads per file on a second turn.
    for (label, window, tokens_unjudged) in [
        (
            "now: a local model's default window (8,192 tokens)",
            None,
            Some(
                "the spec's diff budget in an 8k window (about 2,000 tokens) holds only the \
                 smaller diffs; the target is for the transcripts' large-window models",
            ),
        ),
        (
            "now: a 128k window (the transcripts' hosted models)",
            Some(128_000),
            None,
        ),
    ] {
        let config = AnnotateConfig {
            context_window: window,
            ..AnnotateConfig::default()
        };
        let mut now = Series::new(label.to_owned(), true);
        now.tokens_unjudged = tokens_unjudged;
        for (c, commit) in commits.iter().enumerate() {
            set_plan(&commit.plan);
            let first = server.requests().len();
            let context = {
                let git = Repo::discover(repo.path()).map_err(|e| e.to_string())?;
                gather(&git, &commit.sha, None, &config).map_err(|e| e.to_string())?
            };
            let annotated = annotate_once(&runtime, &context, provider.as_ref(), &config)
                .map_err(|e| format!("annotating commit {c}: {e}"))?;
            if annotated.annotation.regions.len() != commit.plan.emits.len() {
                return Err(format!(
                    "commit {c}: {} regions stored, {} expected ({:?})",
                    annotated.annotation.regions.len(),
                    commit.plan.emits.len(),
                    annotated.warnings
                ));
            }
            let (requests, output) = take(first);
            if requests.len() as u32 != annotated.turns {
                return Err(format!(
                    "commit {c}: {} requests for {} turns",
                    requests.len(),
                    annotated.turns
                ));
            }
            now.record(&requests, &output);
        }
        series.push(now);
    }
    print_turns_and_tokens(&commits, &series);
    Ok(())
}

/// The release binary of the writing agent before issue 17 ([`BASELINE_REV`]),
/// and that commit's full id. Built once: its source is taken with `git
/// archive` into `target/bench-baseline/src-<id>/` and built with `cargo build
/// --release --offline -p ultragit` into this workspace's own `target/` (the
/// registry dependencies they share are compiled once), and the binary is
/// copied to `target/bench-baseline/ultragit-<id>`, which later runs reuse;
/// `target/release/ultragit` is removed, so the next build of today's binary
/// links it again.
///
/// Both trees have crates of the same names at the same relative paths, and
/// cargo names a path crate's artifacts after its name, version and path
/// relative to the workspace: built as they are, each tree would take the
/// other's artifacts for its own. So the extracted workspace's version is set
/// to [`BASELINE_VERSION`] first (its crates' requirements on each other still
/// match), which gives its crates artifacts of their own. `Err` says why the
/// binary is not available (a shallow clone, a failed build).
fn baseline_binary() -> Result<(PathBuf, String), String> {
    let root = crate::workspace_root();
    let sha = GitCommand::new(&root)
        .args([
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{BASELINE_REV}^{{commit}}"),
        ])
        .run_text()
        .map(|s| s.trim().to_owned())
        .map_err(|_| format!("{BASELINE_REV} is not in this clone's history"))?;
    let dir = root.join("target/bench-baseline");
    let exe = dir.join(format!("ultragit-{}", &sha[..12]));
    if exe.is_file() {
        return Ok((exe, sha));
    }
    let src = dir.join(format!("src-{}", &sha[..12]));
    if !src.join("Cargo.toml").is_file() {
        std::fs::create_dir_all(&src).map_err(|e| format!("{}: {e}", src.display()))?;
        let mut archive = GitCommand::new(&root)
            .args(["archive", "--format=tar", &sha])
            .to_command();
        let mut archive = archive
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("could not run git archive: {e}"))?;
        let tar = Command::new("tar")
            .arg("-x")
            .arg("-C")
            .arg(&src)
            .stdin(archive.stdout.take().ok_or("git archive has no stdout")?)
            .status()
            .map_err(|e| format!("could not run tar: {e}"))?;
        let archived = archive
            .wait()
            .map_err(|e| format!("git archive failed: {e}"))?;
        if !tar.success() || !archived.success() {
            return Err(format!("could not extract {sha} into {}", src.display()));
        }
    }
    set_workspace_version(&src.join("Cargo.toml"))?;
    println!(
        "\nannotate: building the baseline ({BASELINE_REV} = {}) in release mode, once …",
        &sha[..12]
    );
    let status = crate::cargo()
        .args([
            "build",
            "--quiet",
            "--release",
            "--offline",
            "--package",
            "ultragit",
        ])
        .arg("--manifest-path")
        .arg(src.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(root.join("target"))
        .status()
        .map_err(|e| format!("could not run cargo: {e}"))?;
    if !status.success() {
        return Err(format!(
            "the release build of {BASELINE_REV} failed (see above)"
        ));
    }
    let built = root
        .join("target/release")
        .join(format!("ultragit{}", std::env::consts::EXE_SUFFIX));
    std::fs::copy(&built, &exe).map_err(|e| format!("{}: {e}", exe.display()))?;
    std::fs::remove_file(&built).map_err(|e| format!("{}: {e}", built.display()))?;
    Ok((exe, sha))
}

/// The version the extracted baseline workspace is given (see
/// [`baseline_binary`]): the same major and minor as ours, so the crates'
/// requirements on each other (`^0.1.0`) still hold.
const BASELINE_VERSION: &str = "0.1.999";

/// Sets `[workspace.package]`'s version in `manifest` to [`BASELINE_VERSION`].
fn set_workspace_version(manifest: &Path) -> Result<(), String> {
    let text =
        std::fs::read_to_string(manifest).map_err(|e| format!("{}: {e}", manifest.display()))?;
    let mut section = "";
    let mut set = false;
    let lines: Vec<String> = text
        .lines()
        .map(|line| {
            if line.starts_with('[') {
                section = line.trim();
            } else if section == "[workspace.package]" && line.starts_with("version") {
                set = true;
                return format!("version = \"{BASELINE_VERSION}\"");
            }
            line.to_owned()
        })
        .collect();
    if !set {
        return Err(format!(
            "{} has no [workspace.package] version to set",
            manifest.display()
        ));
    }
    std::fs::write(manifest, lines.join("\n") + "\n")
        .map_err(|e| format!("{}: {e}", manifest.display()))
}

/// The figures, series by series, and the verdicts on today's.
fn print_turns_and_tokens(commits: &[BenchCommit], series: &[Series]) {
    let lookups = commits
        .iter()
        .filter(|c| !c.plan.lookups.is_empty())
        .count();
    println!(
        "\nannotate: turns and tokens per commit ({} commits of {} changed lines, all under \
         {CHANGED_LINES_BOUND}; a scripted fake model that reads what it needs, then emits — \
         {lookups} of them look up an outline, a file or a function's callers first; input \
         tokens = request bytes / 4, output tokens = reply bytes / 4)",
        commits.len(),
        commits
            .iter()
            .map(|c| c.changed_lines.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!(
        "  {:<56} {:>6} {:>13} {:>14}",
        "median per commit", "turns", "input tokens", "output tokens"
    );
    for s in series {
        println!(
            "  {:<56} {:>6.0} {:>13} {:>14}",
            s.label,
            median(&s.turns),
            thousands(median(&s.input)),
            thousands(median(&s.output))
        );
    }
    for s in series {
        let list = |values: &[f64]| {
            values
                .iter()
                .map(|v| format!("{v:.0}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        println!(
            "  {}: turns [{}]; input tokens [{}]",
            s.label,
            list(&s.turns),
            list(&s.input)
        );
    }
    if let Some(before) = series.iter().find(|s| !s.judged) {
        for now in series.iter().filter(|s| s.judged) {
            println!(
                "  {} against before: median turns {:.0} → {:.0}, median input tokens {} → {} \
                 ({:.0}% less)",
                now.label,
                median(&before.turns),
                median(&now.turns),
                thousands(median(&before.input)),
                thousands(median(&now.input)),
                100.0 * (1.0 - median(&now.input) / median(&before.input))
            );
        }
    }
    // The medians of the commits that emit at once and of those that look
    // something up first: the median of all falls on one side or the other.
    for s in series {
        let split = |looked: bool| -> Vec<f64> {
            commits
                .iter()
                .zip(&s.input)
                .filter(|(c, _)| c.plan.lookups.is_empty() != looked)
                .map(|(_, tokens)| *tokens)
                .collect()
        };
        let (at_once, looked) = (split(false), split(true));
        println!(
            "  {}: median input tokens of the {} commits that emit at once {}, of the {} that \
             look something up first {}",
            s.label,
            at_once.len(),
            thousands(median(&at_once)),
            looked.len(),
            thousands(median(&looked))
        );
    }
    for now in series.iter().filter(|s| s.judged) {
        let (turns, input) = (median(&now.turns), median(&now.input));
        let tokens = match now.tokens_unjudged {
            None => format!(
                "(target <= {}): {}",
                thousands(INPUT_TOKENS_TARGET),
                verdict(input <= INPUT_TOKENS_TARGET)
            ),
            Some(why) => format!("(not judged: {why})"),
        };
        println!(
            "  {}: median turns {turns:.0} (target <= {TURNS_TARGET:.0}): {}; median input \
             tokens {} {tokens}",
            now.label,
            verdict(turns <= TURNS_TARGET),
            thousands(input),
        );
    }
}

/// `12,345`.
fn thousands(n: f64) -> String {
    ultragit_annotate::tools::thousands(n.round() as u64)
}
